//go:build darwin && metal && cgo && !metalemu

package metal

// On macOS cgo compiles ggml-metal.m and ggml-metal-ops.m (manual retain/release: -fno-objc-arc)
// and links Apple's frameworks.

/*
#cgo CFLAGS: -fno-objc-arc -I${SRCDIR} -I${SRCDIR}/../ggml/src
#cgo LDFLAGS: -framework Foundation -framework Metal -framework MetalKit
*/
import "C"
