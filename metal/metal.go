//go:build metal && cgo && (darwin || metalemu)

package metal

// The libraries to link are named in link_darwin.go (Apple's frameworks; cgo compiles the
// Objective-C files of this directory) and link_emu.go (the emulator build of metal/emu,
// build tags metal,metalemu).

/*
#cgo CFLAGS: -I${SRCDIR}/../ggml/include
#include <stdio.h>
#include <stdlib.h>
#include "ggml-metal.h"

#define METAL_GO_MSG_SIZE 512

// The C library keeps error messages per OS thread and a goroutine may move to another thread
// between two cgo calls, so the shim clears the message, makes the call and copies the message
// into msg (empty when there is none) within one C call.
static ggml_backend_t metal_go_init(char * msg) {
    ggml_x_clear_error();
    ggml_backend_t b = ggml_backend_metal_init();
    const char * e = ggml_x_last_error();
    snprintf(msg, METAL_GO_MSG_SIZE, "%s", e != NULL ? e : "");
    ggml_x_clear_error();
    return b;
}
*/
import "C"

import (
	"fmt"
	"unsafe"

	// also links in the C library (ggml core, CPU backend, registry) the Metal host code needs
	"github.com/ggml-go/ggml"
)

func init() {
	setSource()
	C.ggml_x_backend_metal_register()
}

// setSource hands the embedded kernel source to the C library (it keeps a copy).
func setSource() {
	src := Source()
	cs := C.CBytes([]byte(src))
	defer C.free(cs)
	C.ggml_x_metal_set_source((*C.char)(cs), C.size_t(len(src)))
}

// Register registers the default Metal device as backend "Metal" (done at package
// initialisation; calling it again does nothing; without a device nothing is registered).
func Register() {
	C.ggml_x_backend_metal_register()
}

// MaxCommandBuffers is the largest number of command buffers SetCommandBuffers accepts.
const MaxCommandBuffers = C.GGML_METAL_MAX_COMMAND_BUFFERS

// NewBackend creates a backend on the system's default Metal device (ggml_backend_metal_init):
// the embedded kernels are compiled for the device, and graphs whose tensors are in Metal
// buffers (BufferType, the backend's default buffer type) are computed on it. It is the backend
// ggml.InitBackend("Metal") creates. Close it when done.
//
// Failures (no device, kernels that do not compile) are returned as a *ggml.Error carrying the
// C library's reason.
func NewBackend() (*ggml.Backend, error) {
	var msg [C.METAL_GO_MSG_SIZE]C.char
	b := C.metal_go_init(&msg[0])
	if b == nil {
		reason := C.GoString(&msg[0])
		if reason == "" {
			reason = "ggml_backend_metal_init failed (no Metal device?)"
		}
		return nil, &ggml.Error{Op: "metal.NewBackend", Msg: reason}
	}
	gb, err := ggml.WrapBackend(unsafe.Pointer(b))
	if err != nil {
		C.ggml_backend_free(b)
		return nil, err
	}
	return gb, nil
}

// IsMetal reports whether b is a Metal backend.
func IsMetal(b *ggml.Backend) bool {
	if b == nil {
		return false
	}
	return bool(C.ggml_backend_is_metal(C.ggml_backend_t(b.Native())))
}

// BufferType returns the buffer type "Metal" (ggml_backend_metal_buffer_type): page-aligned
// host memory wrapped for the GPU, so both the Metal and the CPU backend compute on its
// buffers. The type is static: Close does nothing.
func BufferType() *ggml.BufferType {
	return ggml.WrapBufferType(unsafe.Pointer(C.ggml_backend_metal_buffer_type()))
}

// SupportsFamily reports whether b's device belongs to Apple GPU family n (MTLGPUFamilyApple<n>;
// 7 and later have the SIMD-group reductions the matrix, softmax and RMS-norm kernels need).
// It panics with a *ggml.Error when b is not a Metal backend.
func SupportsFamily(b *ggml.Backend, n int) bool {
	if !IsMetal(b) {
		panic(&ggml.Error{Op: "metal.SupportsFamily", Msg: "not a Metal backend (create it with metal.NewBackend)"})
	}
	return bool(C.ggml_backend_metal_supports_family(C.ggml_backend_t(b.Native()), C.int(n)))
}

// SetCommandBuffers sets the number of command buffers b splits a graph into
// (ggml_backend_metal_set_n_cb), 1..MaxCommandBuffers. It panics with a *ggml.Error when b is
// not a Metal backend or n is out of range.
func SetCommandBuffers(b *ggml.Backend, n int) {
	const op = "metal.SetCommandBuffers"
	if !IsMetal(b) {
		panic(&ggml.Error{Op: op, Msg: "not a Metal backend (create it with metal.NewBackend)"})
	}
	if n < 1 || n > MaxCommandBuffers {
		panic(&ggml.Error{Op: op, Shapes: fmt.Sprintf("n=%d", n),
			Msg: fmt.Sprintf("the number of command buffers must be 1..%d", MaxCommandBuffers)})
	}
	C.ggml_backend_metal_set_n_cb(C.ggml_backend_t(b.Native()), C.int(n))
}
