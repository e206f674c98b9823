//go:build metal && cgo && (darwin || metalemu)

package tests

// In a `metal` build on macOS or a `metal metalemu` build (the Metal emulator of metal/emu),
// the metal package registers Metal and TestOpsEveryBackend runs the op table on it.
import _ "github.com/ggml-go/ggml/metal"
