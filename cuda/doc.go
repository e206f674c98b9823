// Package cuda links the CUDA backend (build/cuda/libggml-cuda.a, built by `make cuda`) into a
// Go program built with `-tags cuda`, and registers every CUDA device in the backend registry as
// "CUDA<i>". Import it for its side effect and use ggml.InitBackend("CUDA0"), the scheduler, or
// ggml.Backends() to list devices:
//
//	import _ "github.com/ggml-go/ggml/cuda"
//
// or use it directly: NewBackend(i) for a backend on device i, BufferType(i) for device memory,
// HostBufferType for pinned host memory (usable by the CPU backend, faster copies to and from
// the devices) and SplitBufferType to spread the rows of 2D weights over several devices.
//
// With the build tags `cuda cudaemu` the package links the CPU emulator build of the backend
// instead (`make cuda-emu`; see cuda/emu/README.md): slow, for testing without a GPU.
//
// Without the cuda tag the package is empty.
package cuda
