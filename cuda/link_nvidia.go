//go:build cuda && cgo && !cudaemu

package cuda

// The static library comes from `make cuda`; cudart and cuBLAS from the CUDA installation
// (default /usr/local/cuda; `make` passes CGO_LDFLAGS with -L$(CUDA_HOME)/lib64 for others).
// libcuda is linked through the toolkit's stub when the driver's library is not installed.

/*
#cgo LDFLAGS: -L${SRCDIR}/../build/cuda -lggml-cuda -L/usr/local/cuda/lib64 -L/usr/local/cuda/lib64/stubs -lcublas -lcudart -lcuda -lstdc++ -lm -ldl -lrt -pthread
*/
import "C"
