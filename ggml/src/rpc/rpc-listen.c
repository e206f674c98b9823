// rpc-listen.c - ggml_backend_rpc_start_server: a TCP listener serving one connection at a time
// (ggml-rpc.h). Go programs use cmd/ggml-rpc-server instead, which adds TLS and a token.

#define _GNU_SOURCE
#include "ggml-rpc.h"
#include "../ggml-impl.h"

#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

void ggml_backend_rpc_start_server(ggml_backend_t backend, const char * endpoint, const char * cache_dir, size_t free_mem,
                                   size_t total_mem) {
    char host[256];
    const char * colon = endpoint ? strrchr(endpoint, ':') : NULL;
    if (colon == NULL || (size_t) (colon - endpoint) >= sizeof(host)) {
        ggml_x_error(NULL, "ggml_backend_rpc_start_server: endpoint '%s' is not host:port", endpoint ? endpoint : "(null)");
        return;
    }
    memcpy(host, endpoint, (size_t) (colon - endpoint));
    host[colon - endpoint] = 0;
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE };
    struct addrinfo * res = NULL;
    if (getaddrinfo(host[0] ? host : NULL, colon + 1, &hints, &res) != 0 || res == NULL) {
        ggml_x_error(NULL, "ggml_backend_rpc_start_server: cannot resolve '%s'", endpoint);
        return;
    }
    int fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, res->ai_protocol);
    int one = 1;
    if (fd >= 0) {
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    }
    if (fd < 0 || bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, 1) != 0) {
        ggml_x_error(NULL, "ggml_backend_rpc_start_server: cannot listen on %s", endpoint);
        if (fd >= 0) {
            close(fd);
        }
        freeaddrinfo(res);
        return;
    }
    freeaddrinfo(res);
    if (strcmp(host, "127.0.0.1") != 0 && strcmp(host, "localhost") != 0 && strcmp(host, "::1") != 0) {
        fprintf(stderr, "ggml-rpc: WARNING: serving %s beyond this machine without encryption or authentication; "
                        "use it only on a trusted network\n", endpoint);
    }
    struct ggml_x_rpc_server_params p = ggml_x_rpc_server_default_params();
    p.cache_dir = cache_dir;
    p.free_mem = free_mem;
    p.total_mem = total_mem;
    p.verbose = true;
    for (;;) {
        int c = accept(fd, NULL, NULL);
        if (c < 0) {
            continue;
        }
        ggml_x_rpc_serve_fd(backend, c, &p, NULL, 0);
        close(c);
    }
}
