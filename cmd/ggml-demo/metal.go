//go:build metal

package main

// Builds with -tags metal (macOS; on Linux with -tags 'metal metalemu', the emulator) link the
// Metal backend: importing the package registers the default GPU as backend "Metal", for
// -backend Metal.
import _ "github.com/ggml-go/ggml/metal"
