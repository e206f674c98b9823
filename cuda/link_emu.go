//go:build cuda && cgo && cudaemu

package cuda

// With the build tag cudaemu the package links the host emulator build of the backend
// (`make cuda-emu`: every kernel compiled as C++ and run on the CPU by cuda/emu), for testing
// without a GPU: `go test -tags 'cuda cudaemu'` (make test-cuda-emu).

/*
#cgo LDFLAGS: -L${SRCDIR}/../build/cuda-emu -lggml-cuda -lstdc++ -lm -pthread
*/
import "C"
