// testbackend.h - a second backend for multi-backend tests on a CPU-only machine (test code,
// not part of the library; the C tests link testbackend.c, the Go tests wrap it).
//
// The "Test" backend computes on the CPU, but its memory is not host memory:
//   * its buffer type ("Test", alignment 32, is_host false) hands out buffers whose base
//     address is a reserved, inaccessible address range; the bytes live in a separate host
//     allocation, and set_tensor/get_tensor/cpy_tensor/clear translate the tensor addresses.
//     Any code that dereferences tensor->data of a Test tensor directly crashes, so everything
//     must go through the backend interface;
//   * get_alloc_size adds 32 bytes of padding per tensor (exercises alloc sizes != nbytes);
//   * graph_compute copies each node's sources (and the node's current bytes) into host
//     scratch memory, runs the node on an internal CPU backend and writes the result back. It
//     fails (returns false) when a node or a source is not in a Test buffer;
//   * supports_op is the CPU backend's, minus the ops rejected with testbackend_reject_op;
//   * set/get/cpy_tensor_async are implemented (synchronously) and counted.
//
// The backend is not registered by default: testbackend_register() adds it to the registry as
// "Test" (params: "threads=N", the thread count of the internal CPU backend; default 1).
//
// Counters are process-wide and updated atomically (see struct testbackend_stats).

#ifndef GGML_TESTBACKEND_H
#define GGML_TESTBACKEND_H

#include "ggml.h"
#include "ggml-backend.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// A new Test backend whose internal CPU backend uses n_threads threads (< 1: 1). Free it with
// ggml_backend_free. NULL when out of memory.
ggml_backend_t testbackend_init(int n_threads);

// true for backends made by testbackend_init
bool testbackend_is(ggml_backend_t backend);

// the Test buffer type (one static object)
ggml_backend_buffer_type_t testbackend_buffer_type(void);

// make supports_op of this backend reject (reject = true) or accept again (false) an op
void testbackend_reject_op(ggml_backend_t backend, enum ggml_op op, bool reject);

// register "Test" in the backend registry (once; later calls do nothing)
void testbackend_register(void);

struct testbackend_stats {
    int64_t n_set;            // set_tensor calls on Test buffers
    int64_t n_get;            // get_tensor calls on Test buffers
    int64_t n_cpy;            // cpy_tensor calls that copied Test -> Test directly
    int64_t n_set_async;      // set_tensor_async calls
    int64_t n_get_async;      // get_tensor_async calls
    int64_t n_cpy_async;      // cpy_tensor_async calls that copied
    int64_t n_graph_compute;  // graph_compute calls
    int64_t n_nodes;          // nodes computed (views excluded)
    int64_t n_buffers;        // Test buffers alive
    int64_t n_buffer_resets;  // reset calls on Test buffers
};

void testbackend_get_stats(struct testbackend_stats * stats);
void testbackend_reset_stats(void); // zero every counter except n_buffers

#ifdef __cplusplus
}
#endif

#endif // GGML_TESTBACKEND_H
