//go:build cuda && cgo

package cuda

// The libraries to link are named in link_nvidia.go (the real CUDA runtime) and link_emu.go
// (the host emulator of cuda/emu, build tags cuda,cudaemu).

/*
#cgo CFLAGS: -I${SRCDIR}/../ggml/include
#include <stdio.h>
#include <stdlib.h>
#include "ggml-cuda.h"

#define CUDA_GO_MSG_SIZE 512

// The C library keeps error messages per OS thread (ggml_x_last_error) and a goroutine may
// move to another thread between two cgo calls, so each shim clears the message, makes the call
// and copies the message into msg (empty when there is none) within one C call.
static void cuda_go_take_error(char * msg) {
    const char * e = ggml_x_last_error();
    snprintf(msg, CUDA_GO_MSG_SIZE, "%s", e != NULL ? e : "");
    ggml_x_clear_error();
}

static ggml_backend_t cuda_go_init(int device, char * msg) {
    ggml_x_clear_error();
    ggml_backend_t b = ggml_backend_cuda_init(device);
    cuda_go_take_error(msg);
    return b;
}

static ggml_backend_buffer_type_t cuda_go_buffer_type(int device, char * msg) {
    ggml_x_clear_error();
    ggml_backend_buffer_type_t t = ggml_backend_cuda_buffer_type(device);
    cuda_go_take_error(msg);
    return t;
}

static ggml_backend_buffer_type_t cuda_go_host_buffer_type(char * msg) {
    ggml_x_clear_error();
    ggml_backend_buffer_type_t t = ggml_backend_cuda_host_buffer_type();
    cuda_go_take_error(msg);
    return t;
}

// split: NULL, or GGML_CUDA_MAX_DEVICES shares
static ggml_backend_buffer_type_t cuda_go_split_buffer_type(const float * split, char * msg) {
    ggml_x_clear_error();
    ggml_backend_buffer_type_t t = ggml_backend_cuda_split_buffer_type(split);
    cuda_go_take_error(msg);
    return t;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	// also links in the C library (ggml core, CPU backend, registry) the CUDA library needs
	"github.com/ggml-go/ggml"
)

// maxDevices is the largest number of CUDA devices the backend uses (GGML_CUDA_MAX_DEVICES).
const maxDevices = C.GGML_CUDA_MAX_DEVICES

// cmsg is the buffer the shims copy the C library's error message into.
type cmsg [C.CUDA_GO_MSG_SIZE]C.char

func (m *cmsg) ptr() *C.char { return &m[0] }

// or returns the message, or fallback when the C library recorded none.
func (m *cmsg) or(fallback string) string {
	if s := C.GoString(&m[0]); s != "" {
		return s
	}
	return fallback
}

func init() {
	C.ggml_x_backend_cuda_register()
}

// Register registers every CUDA device as backend "CUDA<i>" (done at package initialisation;
// calling it again does nothing).
func Register() {
	C.ggml_x_backend_cuda_register()
}

// DeviceCount returns the number of CUDA devices (0 without a device or driver).
func DeviceCount() int {
	return int(C.ggml_backend_cuda_get_device_count())
}

// DeviceDescription returns the name and compute capability of device i ("" when there is no
// such device).
func DeviceDescription(i int) string {
	var buf [256]C.char
	C.ggml_backend_cuda_get_device_description(C.int(i), &buf[0], C.size_t(len(buf)))
	return C.GoString(&buf[0])
}

// DeviceMemory returns the free and total memory of device i in bytes (0, 0 when there is no
// such device).
func DeviceMemory(i int) (free, total uint64) {
	var f, t C.size_t
	C.ggml_backend_cuda_get_device_memory(C.int(i), &f, &t)
	return uint64(f), uint64(t)
}

// Probe creates and frees a backend on device i, reporting why it cannot be used.
func Probe(i int) error {
	if i < 0 || i >= DeviceCount() {
		return fmt.Errorf("cuda: no device %d (%d present)", i, DeviceCount())
	}
	var msg cmsg
	b := C.cuda_go_init(C.int(i), msg.ptr())
	if b == nil {
		return fmt.Errorf("cuda: device %d: %s", i, msg.or("ggml_backend_cuda_init failed"))
	}
	defer C.ggml_backend_free(b)
	if !bool(C.ggml_backend_is_cuda(b)) {
		return errors.New("cuda: backend is not a CUDA backend")
	}
	return nil
}

// BufferTypeNames returns the names of the buffer types of device i: device memory, pinned
// host memory and the split type ("CUDA<i>", "CUDA_Host", "CUDA_Split").
func BufferTypeNames(i int) ([]string, error) {
	if i < 0 || i >= DeviceCount() {
		return nil, fmt.Errorf("cuda: no device %d (%d present)", i, DeviceCount())
	}
	bufts := []C.ggml_backend_buffer_type_t{
		C.ggml_backend_cuda_buffer_type(C.int(i)),
		C.ggml_backend_cuda_host_buffer_type(),
		C.ggml_backend_cuda_split_buffer_type((*C.float)(unsafe.Pointer(nil))),
	}
	names := make([]string, 0, len(bufts))
	for _, b := range bufts {
		if b == nil {
			return nil, errors.New("cuda: buffer type unavailable")
		}
		names = append(names, C.GoString(C.ggml_backend_buft_name(b)))
	}
	return names, nil
}

// devErr is the *ggml.Error of a failed call of op on device i.
func devErr(op string, i int, msg string) error {
	return &ggml.Error{Op: "cuda." + op, Shapes: fmt.Sprintf("device %d", i), Msg: msg}
}

// NewBackend creates a backend on device i (ggml_backend_cuda_init): one stream and one cuBLAS
// handle, computing graphs whose tensors are in the device's memory (BufferType(i), the
// backend's default buffer type) or, as MUL_MAT weights, in a SplitBufferType buffer. It is
// the backend ggml.InitBackend("CUDA<i>") creates. Close it when done.
//
// Failures (no such device, device initialisation) are returned as a *ggml.Error naming the
// device and carrying the C library's reason.
func NewBackend(i int) (*ggml.Backend, error) {
	var msg cmsg
	b := C.cuda_go_init(C.int(i), msg.ptr())
	if b == nil {
		return nil, devErr("NewBackend", i, msg.or("ggml_backend_cuda_init failed"))
	}
	gb, err := ggml.WrapBackend(unsafe.Pointer(b))
	if err != nil {
		C.ggml_backend_free(b)
		return nil, err
	}
	return gb, nil
}

// BufferType returns the buffer type of device i's memory, "CUDA<i>"
// (ggml_backend_cuda_buffer_type). Tensors in its buffers are computed on by NewBackend(i);
// their data is read and written through copies (Tensor.SetFloat32, Tensor.Float32, ...), not
// by the CPU. The type is static: Close does nothing. It returns a *ggml.Error when there is no
// device i.
func BufferType(i int) (*ggml.BufferType, error) {
	var msg cmsg
	t := C.cuda_go_buffer_type(C.int(i), msg.ptr())
	if t == nil {
		return nil, devErr("BufferType", i, msg.or("ggml_backend_cuda_buffer_type failed"))
	}
	return ggml.WrapBufferType(unsafe.Pointer(t)), nil
}

// HostBufferType returns the buffer type of pinned (page-locked) host memory, "CUDA_Host"
// (ggml_backend_cuda_host_buffer_type). Its buffers are host memory: the CPU backend computes on
// them, and copies between them and device memory are faster than from ordinary memory — use it
// for tensors that move between the CPU and the devices, e.g. as the CPU's buffer type in a
// ggml.Scheduler. The type is static: Close does nothing. It returns a *ggml.Error when no CUDA
// device is present.
func HostBufferType() (*ggml.BufferType, error) {
	const op = "cuda.HostBufferType"
	if DeviceCount() == 0 {
		return nil, &ggml.Error{Op: op, Msg: "no CUDA device"}
	}
	var msg cmsg
	t := C.cuda_go_host_buffer_type(msg.ptr())
	if t == nil {
		return nil, &ggml.Error{Op: op, Msg: msg.or("ggml_backend_cuda_host_buffer_type failed")}
	}
	return ggml.WrapBufferType(unsafe.Pointer(t)), nil
}

// SplitBufferType returns a buffer type, "CUDA_Split", whose buffers store the rows of each
// tensor across the devices (ggml_backend_cuda_split_buffer_type): split[d] is device d's
// share of the rows (normalised; devices past the end of split get none), and a nil or empty
// split shares them in proportion to the devices' memory. It is meant for the 2D weights of
// matrix multiplications: a CUDA backend computes MUL_MAT with such weights as its first operand
// (each device multiplies its rows), and no other op reads them. Tensors in a split buffer must
// be contiguous 2D matrices (quantized types: rows of a multiple of 32 elements); their data is
// read and written with copies (Tensor.SetFloat32, SetBytes, ...).
//
// The C library keeps one buffer type per distinct split for the life of the process; Close
// does nothing. SplitBufferType returns a *ggml.Error when no device is present, split has more
// entries than there are devices, an entry is negative or not finite, or every entry is zero.
func SplitBufferType(split []float32) (*ggml.BufferType, error) {
	const op = "cuda.SplitBufferType"
	n := DeviceCount()
	shapes := fmt.Sprintf("split=%v", split)
	if n == 0 {
		return nil, &ggml.Error{Op: op, Shapes: shapes, Msg: "no CUDA device"}
	}
	if len(split) > n {
		return nil, &ggml.Error{Op: op, Shapes: shapes,
			Msg: fmt.Sprintf("%d shares for %d device(s)", len(split), n)}
	}
	var shares *C.float
	var cs [maxDevices]C.float
	if len(split) > 0 {
		var sum float32
		for d, v := range split {
			if !(v >= 0) || math.IsInf(float64(v), 0) {
				return nil, &ggml.Error{Op: op, Shapes: shapes,
					Msg: fmt.Sprintf("share of device %d is %v: shares must be finite and non-negative", d, v)}
			}
			sum += v
			cs[d] = C.float(v)
		}
		if sum == 0 {
			return nil, &ggml.Error{Op: op, Shapes: shapes,
				Msg: "every share is zero (pass nil to split in proportion to device memory)"}
		}
		if math.IsInf(float64(sum), 0) {
			return nil, &ggml.Error{Op: op, Shapes: shapes, Msg: "the shares' sum overflows float32"}
		}
		shares = &cs[0]
	}
	var msg cmsg
	t := C.cuda_go_split_buffer_type(shares, msg.ptr())
	if t == nil {
		return nil, &ggml.Error{Op: op, Shapes: shapes, Msg: msg.or("ggml_backend_cuda_split_buffer_type failed")}
	}
	return ggml.WrapBufferType(unsafe.Pointer(t)), nil
}
