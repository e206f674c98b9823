// host-alloc.h - host memory for the CPU buffer types (cpu/buffer.c, cpu/repack.c).

#ifndef GGML_X_CPU_HOST_ALLOC_H
#define GGML_X_CPU_HOST_ALLOC_H

#include <stddef.h>

// host memory for a CPU buffer of size bytes, released with free(): align-aligned; from 2 MiB
// on, 2 MiB aligned and hinted to transparent huge pages. NULL when out of memory.
void * ggml_x_host_alloc(size_t size, size_t align);

#endif // GGML_X_CPU_HOST_ALLOC_H
