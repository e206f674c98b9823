//go:build cgo

// Package membw measures how fast this machine reads memory: the limit that a memory-bound
// computation (a decode step reading every weight once) is compared with.
//
// The probe sums a buffer of its own, 2 MiB aligned and advised into huge pages on Linux (as the
// library's CPU buffers are), with one C loop per thread over a contiguous share. It is the same
// read as the C benchmarks' probe (tools/bench/benchutil.h), so figures compare across them.
package membw

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

typedef unsigned long long membw_v __attribute__((vector_size(32)));

// the sum of n 32-byte vectors (n a multiple of 4; unsigned, so that it may wrap), four
// independent accumulators; compiled for AVX2 where the CPU has it (two 128-bit halves otherwise)
#define MEMBW_SUM_BODY                                  \
    const membw_v * v = (const membw_v *) p;            \
    membw_v a = { 0 }, b = { 0 }, c = { 0 }, d = { 0 }; \
    for (size_t i = 0; i < n; i += 4) {                 \
        a += v[i];                                      \
        b += v[i + 1];                                  \
        c += v[i + 2];                                  \
        d += v[i + 3];                                  \
    }                                                   \
    const membw_v s = a + b + c + d;                    \
    return s[0] + s[1] + s[2] + s[3];

static unsigned long long membw_sum_generic(const void * p, size_t n) {
    MEMBW_SUM_BODY
}

#if defined(__x86_64__)
__attribute__((target("avx2")))
static unsigned long long membw_sum_avx2(const void * p, size_t n) {
    MEMBW_SUM_BODY
}
#endif

static unsigned long long membw_sum(const void * p, size_t n) {
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx2")) {
        return membw_sum_avx2(p, n);
    }
#endif
    return membw_sum_generic(p, n);
}

static void * membw_alloc(size_t bytes) {
    const size_t huge = (size_t) 2 << 20;
    void * p = aligned_alloc(huge, bytes);
    if (p == NULL) {
        return NULL;
    }
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    madvise(p, bytes, MADV_HUGEPAGE);
#endif
    memset(p, 1, bytes);
    return p;
}

*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"
)

// Probe is a buffer that ReadGBs reads. Close frees it.
type Probe struct {
	p     unsafe.Pointer
	bytes int
	sink  uint64
}

// New allocates a probe of at least bytes bytes (rounded up to 2 MiB; use several times the
// last-level cache, e.g. 256 MiB) and writes every byte once.
func New(bytes int) (*Probe, error) {
	const huge = 2 << 20
	if bytes <= 0 {
		return nil, errors.New("membw: the probe needs a positive size")
	}
	bytes = (bytes + huge - 1) / huge * huge
	p := C.membw_alloc(C.size_t(bytes))
	if p == nil {
		return nil, fmt.Errorf("membw: cannot allocate %d MiB for the bandwidth probe", bytes>>20)
	}
	return &Probe{p: p, bytes: bytes}, nil
}

// ReadGBs reads the whole buffer once with threads threads, each a contiguous share, and
// returns the rate in GB/s (1e9 bytes per second).
func (pr *Probe) ReadGBs(threads int) float64 {
	if pr == nil || pr.p == nil {
		panic("membw: ReadGBs on a closed probe")
	}
	threads = max(1, threads)
	const unit = 32 * 4 // bytes per step of membw_sum
	share := pr.bytes / threads / unit * unit
	sums := make([]uint64, threads)
	var wg sync.WaitGroup
	start := time.Now()
	for t := 0; t < threads; t++ {
		wg.Add(1)
		go func(t int) {
			defer wg.Done()
			base := unsafe.Add(pr.p, t*share)
			sums[t] = uint64(C.membw_sum(base, C.size_t(share/32)))
		}(t)
	}
	wg.Wait()
	sec := time.Since(start).Seconds()
	for _, s := range sums {
		pr.sink += s
	}
	return float64(share*threads) / sec * 1e-9
}

// Close frees the buffer; idempotent.
func (pr *Probe) Close() {
	if pr != nil && pr.p != nil {
		C.free(pr.p)
		pr.p = nil
	}
}
