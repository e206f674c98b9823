// Package cuda links the CUDA backend (build/cuda/libggml-cuda.a, built by `make cuda`) into a
// Go program built with `-tags cuda`, and registers every CUDA device in the backend registry as
// "CUDA<i>": import it for its side effect and use ggml.InitBackend("CUDA0"), the scheduler, or
// ggml.Backends() to list devices.
//
//	import _ "github.com/ggml-go/ggml/cuda"
//
// Without the cuda tag the package is empty.
package cuda
