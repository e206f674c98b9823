//go:build cuda && cgo

package tests

// In a `cuda` build (a GPU) or a `cuda cudaemu` build (the CUDA emulator of cuda/emu), the cuda
// package registers CUDA0, CUDA1, ... and TestOpsEveryBackend runs the op table on them.
import _ "github.com/ggml-go/ggml/cuda"
