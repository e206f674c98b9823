//go:build metal && cgo && metalemu

package metal

// With the build tag metalemu the package links the emulator build of the backend (`make
// metal-emu`: the same host code built with GCC's Objective-C against GNUstep and the fake
// Metal objects of metal/emu, every kernel compiled as C++ and run on the CPU), for testing
// without a Mac: `go test -tags 'metal metalemu'` (make test-metal-emu).

/*
#cgo LDFLAGS: -L${SRCDIR}/../build/metal-emu -lggml-metal -lgnustep-base -lobjc -lstdc++ -lm -pthread
*/
import "C"
