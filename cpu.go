//go:build cgo

package ggml

/*
#include "ggml.h"
*/
import "C"

// CPUFeatureSet lists the instruction-set features of the running machine and build options
// the C library reports (ggml_cpu_has_*).
type CPUFeatureSet struct {
	AVX, AVXVNNI, AVX2, AVX512, AVX512VBMI, AVX512VNNI bool
	FMA, F16C, SSE3, SSSE3                             bool
	NEON, ARMFMA, FP16VA                               bool
	Metal, WasmSIMD, BLAS, CuBLAS, CLBlast, GPUBLAS    bool
	VSX                                                bool
}

// CPUFeatures queries the C library (ggml_cpu_has_avx and friends).
func CPUFeatures() CPUFeatureSet {
	return CPUFeatureSet{
		AVX:        C.ggml_cpu_has_avx() != 0,
		AVXVNNI:    C.ggml_cpu_has_avx_vnni() != 0,
		AVX2:       C.ggml_cpu_has_avx2() != 0,
		AVX512:     C.ggml_cpu_has_avx512() != 0,
		AVX512VBMI: C.ggml_cpu_has_avx512_vbmi() != 0,
		AVX512VNNI: C.ggml_cpu_has_avx512_vnni() != 0,
		FMA:        C.ggml_cpu_has_fma() != 0,
		F16C:       C.ggml_cpu_has_f16c() != 0,
		SSE3:       C.ggml_cpu_has_sse3() != 0,
		SSSE3:      C.ggml_cpu_has_ssse3() != 0,
		NEON:       C.ggml_cpu_has_neon() != 0,
		ARMFMA:     C.ggml_cpu_has_arm_fma() != 0,
		FP16VA:     C.ggml_cpu_has_fp16_va() != 0,
		Metal:      C.ggml_cpu_has_metal() != 0,
		WasmSIMD:   C.ggml_cpu_has_wasm_simd() != 0,
		BLAS:       C.ggml_cpu_has_blas() != 0,
		CuBLAS:     C.ggml_cpu_has_cublas() != 0,
		CLBlast:    C.ggml_cpu_has_clblast() != 0,
		GPUBLAS:    C.ggml_cpu_has_gpublas() != 0,
		VSX:        C.ggml_cpu_has_vsx() != 0,
	}
}

// ThreadsCreated returns the number of CPU worker threads the C library has created since the
// process started (ggml_x_threads_created); thread pools are persistent, so it grows only when
// a backend is created or resized.
func ThreadsCreated() int64 {
	return int64(C.ggml_x_threads_created())
}

// TimeMicros returns the C library's monotonic clock in microseconds (ggml_time_us).
func TimeMicros() int64 {
	return int64(C.ggml_time_us())
}
