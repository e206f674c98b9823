//go:build cuda && cgo

package cuda

// The libraries to link are named in link_nvidia.go (the real CUDA runtime) and link_emu.go
// (the host emulator of cuda/emu, build tags cuda,cudaemu).

/*
#cgo CFLAGS: -I${SRCDIR}/../ggml/include
#include <stdlib.h>
#include "ggml-cuda.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	// the C library (ggml core, CPU backend, registry) the CUDA library links against
	_ "github.com/ggml-go/ggml"
)

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
	b := C.ggml_backend_cuda_init(C.int(i))
	if b == nil {
		return fmt.Errorf("cuda: ggml_backend_cuda_init(%d) failed", i)
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
