// conform-shim.c - runs the op-conformance harness (../shared/conformance, which computes on
// ggml_backend_cpu_init()) on an RPC device instead: linked with -Wl,--wrap=ggml_backend_cpu_init
// and -Wl,--wrap=ggml_backend_cpu_set_n_threads, each backend the harness creates is our RPC
// client talking, through a socket pair, to our RPC server serving a real CPU backend on a
// thread of this process (scripts/conformance-rpc.sh, make conformance-rpc).

#include "ggml-backend.h"
#include "ggml-rpc.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

ggml_backend_t __real_ggml_backend_cpu_init(void);
ggml_backend_t __wrap_ggml_backend_cpu_init(void);
void __wrap_ggml_backend_cpu_set_n_threads(ggml_backend_t backend, int n_threads);
void __real_ggml_backend_cpu_set_n_threads(ggml_backend_t backend, int n_threads);

struct served {
    ggml_backend_t cpu;
    int fd;
};

static void * serve(void * arg) {
    struct served * s = arg;
    char why[256];
    if (ggml_x_rpc_serve_fd(s->cpu, s->fd, NULL, why, sizeof(why)) != 0) {
        fprintf(stderr, "rpc-conform-shim: the server closed the connection: %s\n", why);
    }
    close(s->fd);
    ggml_backend_free(s->cpu);
    free(s);
    return NULL;
}

ggml_backend_t __wrap_ggml_backend_cpu_init(void) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        return NULL;
    }
    struct served * s = malloc(sizeof(*s));
    s->cpu = __real_ggml_backend_cpu_init();
    s->fd = sv[1];
    const char * threads = getenv("CONFORM_THREADS");
    __real_ggml_backend_cpu_set_n_threads(s->cpu, threads ? atoi(threads) : 2);
    pthread_t th;
    pthread_create(&th, NULL, serve, s);
    pthread_detach(th);
    return ggml_x_backend_rpc_init_fd(sv[0], "in-process", NULL);
}

void __wrap_ggml_backend_cpu_set_n_threads(ggml_backend_t backend, int n_threads) {
    (void) backend; // the server's CPU backend has its threads already
    (void) n_threads;
}
