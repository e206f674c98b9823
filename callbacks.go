//go:build cgo

package ggml

// Every function C calls back into lives in this file (the //export functions), together with
// the cgo.Handle bookkeeping. The C halves are in csrc/trampolines.c: a Go-implemented buffer
// type or buffer is a C object whose vtable holds GGML_CALL trampolines and whose context
// pointer holds a cgo.Handle of the Go object; custom ops and eval callbacks carry a handle in
// their userdata. A file with //export functions may only declare in its preamble, so the
// definitions stay in C files.
//
// A callback never lets a Go panic cross into C: buffer callbacks turn it into an error
// recorded on the calling thread (ggml_x_error; in recoverable mode the C call that led to the
// callback then reports it to its Go caller), custom ops and eval callbacks record it in their
// Go state, and the compute that ran them returns it as an error.

/*
#include <stdlib.h>
#include "trampolines.h"
#include "goexports.h"
*/
import "C"

import (
	"fmt"
	"runtime/cgo"
	"runtime/debug"
	"sync/atomic"
	"unsafe"
)

// liveHandles counts the cgo.Handles created by this package and not yet deleted.
var liveHandles atomic.Int64

// newHandle creates a handle for a Go object referenced from C.
func newHandle(v any) cgo.Handle {
	liveHandles.Add(1)
	liveInc("cgo handle")
	return cgo.NewHandle(v)
}

// deleteHandle releases a handle made by newHandle.
func deleteHandle(h cgo.Handle) {
	h.Delete()
	liveHandles.Add(-1)
	liveDec("cgo handle")
}

// LiveHandles returns the number of cgo handles this package holds for Go objects referenced
// from C (Go buffer types and buffers, custom ops, callbacks in progress). Handles are released
// when the C object is freed: a buffer when it is freed, a buffer type when it was closed and
// its last buffer freed, a custom op when its context is closed. Tests record the value at the
// start and check that it returns to it.
func LiveHandles() int {
	return int(liveHandles.Load())
}

// setCError records msg as the calling thread's C error (see ggml_go_set_error).
func setCError(msg string) {
	cs := C.CString(msg)
	C.ggml_go_set_error(cs)
	C.free(unsafe.Pointer(cs))
}

// recoverToC is deferred by the buffer callbacks: a panic becomes a C error of the thread.
func recoverToC(what string) {
	if r := recover(); r != nil {
		setCError(fmt.Sprintf("%s: Go callback panicked: %v", what, r))
	}
}

// unknownName is returned by name callbacks that fail (C memory, never freed).
var unknownName = C.CString("?")

func bufTypeOf(h C.uintptr_t) *goBufType {
	return cgo.Handle(h).Value().(*goBufType)
}

func bufferOf(h C.uintptr_t) *goBuffer {
	return cgo.Handle(h).Value().(*goBuffer)
}

// goBytes views n bytes of C memory at p as a slice (valid during the callback only).
func goBytes(p unsafe.Pointer, n C.size_t) []byte {
	if p == nil || n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(p), int(n))
}

// buffer types (ggml_backend_buffer_type_i)

//export goBuftGetName
func goBuftGetName(h C.uintptr_t) (name *C.char) {
	name = unknownName
	defer recoverToC("buffer type get_name")
	return bufTypeOf(h).cname
}

//export goBuftAllocBuffer
func goBuftAllocBuffer(h C.uintptr_t, size C.size_t) (bh C.uintptr_t) {
	defer recoverToC("buffer type alloc_buffer")
	st := bufTypeOf(h)
	impl, err := allocGuarded(st.impl, uint64(size))
	st.mu.Lock()
	st.allocErr = err
	st.mu.Unlock()
	if err != nil {
		setCError(fmt.Sprintf("%s: alloc_buffer(%d): %v", C.GoString(st.cname), uint64(size), err))
		return 0
	}
	if impl == nil {
		setCError(fmt.Sprintf("%s: alloc_buffer(%d) returned no buffer", C.GoString(st.cname), uint64(size)))
		return 0
	}
	return C.uintptr_t(st.addBuffer(impl, uint64(size)))
}

// allocGuarded calls impl.Alloc, returning a panic in it as a *PanicError that keeps the
// panic's value (the Go wrappers that allocate hand it to their caller: withAllocErr).
func allocGuarded(impl BufferTypeImpl, size uint64) (b BufferImpl, err error) {
	defer func() {
		if r := recover(); r != nil {
			b, err = nil, &PanicError{Op: "BufferTypeImpl.Alloc", Thread: -1, Value: r, Stack: debug.Stack()}
		}
	}()
	return impl.Alloc(size)
}

//export goBuftGetAlignment
func goBuftGetAlignment(h C.uintptr_t) (align C.size_t) {
	align = 1
	defer recoverToC("buffer type get_alignment")
	if a := bufTypeOf(h).impl.Alignment(); a > 0 {
		align = C.size_t(a)
	}
	return align
}

//export goBuftGetAllocSize
func goBuftGetAllocSize(h C.uintptr_t, t *C.struct_ggml_tensor) (size C.size_t) {
	size = C.ggml_nbytes(t)
	defer recoverToC("buffer type get_alloc_size")
	return C.size_t(bufTypeOf(h).impl.AllocSize(tensorFromC(t)))
}

//export goBuftSupportsBackend
func goBuftSupportsBackend(h C.uintptr_t, b C.ggml_backend_t) (ok C.bool) {
	defer recoverToC("buffer type supports_backend")
	return C.bool(bufTypeOf(h).impl.SupportsBackend(borrowedBackend(b)))
}

//export goBuftIsHost
func goBuftIsHost(h C.uintptr_t) (ok C.bool) {
	defer recoverToC("buffer type is_host")
	return C.bool(bufTypeOf(h).impl.IsHost())
}

// buffers (ggml_backend_buffer_i)

//export goBufferGetName
func goBufferGetName(h C.uintptr_t) (name *C.char) {
	name = unknownName
	defer recoverToC("buffer get_name")
	return bufferOf(h).bt.cname
}

//export goBufferFreeBuffer
func goBufferFreeBuffer(h C.uintptr_t) {
	b := bufferOf(h)
	defer b.bt.removeBuffer(cgo.Handle(h))
	defer recoverToC("buffer free_buffer")
	b.impl.Free()
}

//export goBufferGetBase
func goBufferGetBase(h C.uintptr_t) (base C.uintptr_t) {
	defer recoverToC("buffer get_base")
	return C.uintptr_t(bufferOf(h).impl.Base())
}

//export goBufferInitTensor
func goBufferInitTensor(h C.uintptr_t, t *C.struct_ggml_tensor) {
	defer recoverToC("buffer init_tensor")
	if err := bufferOf(h).impl.InitTensor(tensorFromC(t)); err != nil {
		setCError(fmt.Sprintf("init_tensor %s: %v", cTensorLabel(t), err))
	}
}

//export goBufferSetTensor
func goBufferSetTensor(h C.uintptr_t, t *C.struct_ggml_tensor, data unsafe.Pointer, off, size C.size_t) {
	defer recoverToC("buffer set_tensor")
	if err := bufferOf(h).impl.SetTensor(tensorFromC(t), goBytes(data, size), uint64(off)); err != nil {
		setCError(fmt.Sprintf("set_tensor %s: %v", cTensorLabel(t), err))
	}
}

//export goBufferGetTensor
func goBufferGetTensor(h C.uintptr_t, t *C.struct_ggml_tensor, data unsafe.Pointer, off, size C.size_t) {
	defer recoverToC("buffer get_tensor")
	if err := bufferOf(h).impl.GetTensor(tensorFromC(t), goBytes(data, size), uint64(off)); err != nil {
		setCError(fmt.Sprintf("get_tensor %s: %v", cTensorLabel(t), err))
	}
}

//export goBufferCpyTensor
func goBufferCpyTensor(h C.uintptr_t, src, dst *C.struct_ggml_tensor) (ok C.bool) {
	defer recoverToC("buffer cpy_tensor")
	return C.bool(bufferOf(h).impl.CopyTensor(tensorFromC(src), tensorFromC(dst)))
}

//export goBufferClear
func goBufferClear(h C.uintptr_t, v C.uint8_t) {
	defer recoverToC("buffer clear")
	if err := bufferOf(h).impl.Clear(byte(v)); err != nil {
		setCError(fmt.Sprintf("clear: %v", err))
	}
}

//export goBufferReset
func goBufferReset(h C.uintptr_t) {
	defer recoverToC("buffer reset")
	bufferOf(h).impl.Reset()
}

// custom ops and eval callbacks

//export goCustom
func goCustom(h C.uintptr_t, dst, a, b, c *C.struct_ggml_tensor, ith, nth C.int) {
	v, ok := customOps.Load(h)
	if !ok {
		return // the context was closed: nothing to run (cannot happen through the API)
	}
	op := v.(*customOp)
	defer func() {
		if r := recover(); r != nil {
			op.recordPanic(r, int(ith), C.GoString(&dst.name[0]))
		}
	}()
	op.fn(tensorFromC(dst), tensorFromC(a), tensorFromC(b), tensorFromC(c), int(ith), int(nth))
}

//export goEvalCallback
func goEvalCallback(h C.uintptr_t, i C.int, t1, t2 *C.struct_ggml_tensor) (cont C.bool) {
	st := cgo.Handle(h).Value().(*evalState)
	defer func() {
		if r := recover(); r != nil {
			st.panicked = fmt.Sprintf("CompareBackends callback panicked at node %d: %v", int(i), r)
			cont = false
		}
	}()
	return C.bool(st.fn(int(i), tensorFromC(t1), tensorFromC(t2)))
}

// cTensorLabel names a C tensor for messages: `"name" [ne0,ne1,ne2,ne3] type`.
func cTensorLabel(t *C.struct_ggml_tensor) string {
	if t == nil {
		return "nil tensor"
	}
	return fmt.Sprintf("%q [%d %d %d %d] %s", C.GoString(&t.name[0]), int64(t.ne[0]), int64(t.ne[1]), int64(t.ne[2]), int64(t.ne[3]), Type(t._type))
}
