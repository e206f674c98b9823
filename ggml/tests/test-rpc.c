// test-rpc.c - the RPC backend's C API (ggml-rpc.h): a server thread serving the CPU backend on
// 127.0.0.1 (ggml_x_rpc_serve_fd on accepted sockets), a client through the upstream-named
// endpoint API (ggml_backend_rpc_init, the registry entry RPC[host:port], buffer type, device
// memory), a graph computed remotely and compared with the CPU; a malformed request closes its
// connection and the server keeps serving.

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-rpc.h"
#include "testing.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int listen_fd = -1;
static char endpoint[64];

static void * serve(void * arg) {
    (void) arg;
    ggml_backend_t cpu = ggml_backend_cpu_init();
    for (;;) {
        int c = accept(listen_fd, NULL, NULL);
        if (c < 0) {
            break;
        }
        ggml_x_rpc_serve_fd(cpu, c, NULL, NULL, 0);
        close(c);
    }
    ggml_backend_free(cpu);
    return NULL;
}

static void start_server(void) {
    listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = 0 };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    T_CHECK(bind(listen_fd, (struct sockaddr *) &a, sizeof(a)) == 0);
    T_CHECK(listen(listen_fd, 4) == 0);
    socklen_t len = sizeof(a);
    getsockname(listen_fd, (struct sockaddr *) &a, &len);
    snprintf(endpoint, sizeof(endpoint), "127.0.0.1:%d", ntohs(a.sin_port));
    pthread_t th;
    pthread_create(&th, NULL, serve, NULL);
    pthread_detach(th);
}

static void compute(ggml_backend_t b, float * out) {
    struct ggml_init_params ip = { .mem_size = 16 * ggml_tensor_overhead() + ggml_graph_overhead(), .no_alloc = true };
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * w = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 32, 8);
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 32, 2);
    struct ggml_tensor * y = ggml_soft_max(ctx, ggml_mul_mat(ctx, w, x));
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, y);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, b);
    T_CHECK(buf != NULL);
    float wv[32 * 8], xv[32 * 2];
    for (int i = 0; i < 32 * 8; i++) wv[i] = sinf(0.1f * i);
    for (int i = 0; i < 32 * 2; i++) xv[i] = cosf(0.2f * i);
    ggml_backend_tensor_set(w, wv, 0, sizeof(wv));
    ggml_backend_tensor_set(x, xv, 0, sizeof(xv));
    T_CHECK(ggml_backend_graph_compute(b, g));
    ggml_backend_tensor_get(y, out, 0, 16 * sizeof(float));
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
}

static void test_endpoint_api(void) {
    ggml_backend_t rpc = ggml_backend_rpc_init(endpoint);
    T_CHECK_MSG(rpc != NULL, "%s", ggml_x_last_error());
    if (rpc == NULL) {
        return;
    }
    T_CHECK(ggml_backend_is_rpc(rpc));
    char name[96];
    snprintf(name, sizeof(name), "RPC[%s]", endpoint);
    T_CHECK(strcmp(ggml_backend_name(rpc), name) == 0);
    T_CHECK(ggml_backend_reg_find_by_name(name) != SIZE_MAX);
    T_CHECK(ggml_backend_rpc_buffer_type(endpoint) == ggml_backend_get_default_buffer_type(rpc));
    size_t free_mem = 0, total = 0;
    ggml_backend_rpc_get_device_memory(endpoint, &free_mem, &total);
    T_CHECK(total > 0 && free_mem <= total);

    ggml_backend_t cpu = ggml_backend_cpu_init();
    float got[16], want[16];
    compute(rpc, got);
    compute(cpu, want);
    for (int i = 0; i < 16; i++) {
        T_CHECK(got[i] == want[i]);
    }
    ggml_backend_free(cpu);
    ggml_backend_free(rpc);
}

static void test_malformed_request_closes_connection_only(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    socklen_t len = sizeof(a);
    getsockname(listen_fd, (struct sockaddr *) &a, &len);
    T_CHECK(connect(fd, (struct sockaddr *) &a, sizeof(a)) == 0);
    const unsigned char junk[] = { 0x0f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }; // DEVICE_COUNT first, absurd size
    T_CHECK(write(fd, junk, sizeof(junk)) == (ssize_t) sizeof(junk));
    char c;
    T_CHECK(read(fd, &c, 1) == 0); // closed, no reply
    close(fd);
    // the server still serves: a fresh backend through the registry entry works
    char name[96];
    snprintf(name, sizeof(name), "RPC[%s]", endpoint);
    // (by index: init_backend_from_str would split the name at the port's ':')
    ggml_backend_t rpc = ggml_backend_reg_init_backend(ggml_backend_reg_find_by_name(name), NULL);
    T_CHECK(rpc != NULL && ggml_backend_is_rpc(rpc));
    if (rpc != NULL) {
        float got[16];
        compute(rpc, got);
        ggml_backend_free(rpc);
    }
}

int main(void) {
    ggml_x_set_default_recoverable(true);
    start_server();
    T_RUN(test_endpoint_api);
    T_RUN(test_malformed_request_closes_connection_only);
    return T_SUMMARY();
}
