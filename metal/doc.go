// Package metal links the Metal backend (Apple GPUs) into a Go program built with `-tags metal`
// on macOS, and registers it in the backend registry as "Metal". Import it for its side effect
// and use ggml.InitBackend("Metal") or the scheduler:
//
//	import _ "github.com/ggml-go/ggml/metal"
//
// or use it directly: NewBackend for a backend on the system's default GPU, BufferType for its
// buffers (host memory shared with the GPU, so the CPU backend computes on them too).
//
// On macOS cgo compiles the Objective-C host (ggml-metal.m, ggml-metal-ops.m) with the
// frameworks Metal and Foundation; the kernels (the .metal files, one op family each) are
// embedded in the binary and compiled by the device at initialisation, so no files are needed
// next to the program.
//
// With the build tags `metal metalemu` on Linux the package links the emulator build instead
// (`make metal-emu`; see metal/emu/README.md): the same host code and kernels, run on the CPU
// against a fake of the Metal objects, for testing without a Mac.
//
// Without the metal tag the package is empty.
package metal
