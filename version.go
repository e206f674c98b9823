//go:build cgo

package ggml

/*
#include "ggml.h"
*/
import "C"

import "fmt"

// String returns the C library's name of the type (ggml_type_name), e.g. "q4_0".
func (t Type) String() string {
	if t < 0 || t >= Type(C.GGML_TYPE_COUNT) {
		return fmt.Sprintf("Type(%d)", int32(t))
	}
	name := C.ggml_type_name(C.enum_ggml_type(t))
	if name == nil {
		return fmt.Sprintf("Type(%d)", int32(t))
	}
	return C.GoString(name)
}

// tensorNbytes creates a context, a tensor of the given type and shape in it, and returns
// ggml_nbytes of the tensor (used by the smoke test).
func tensorNbytes(t Type, ne ...int64) (uint64, error) {
	if len(ne) < 1 || len(ne) > 4 {
		return 0, fmt.Errorf("ggml: tensorNbytes: %d dimensions", len(ne))
	}
	params := C.struct_ggml_init_params{
		mem_size:   C.size_t(C.ggml_tensor_overhead() * 4),
		mem_buffer: nil,
		no_alloc:   C.bool(true),
	}
	ctx := C.ggml_init(params)
	if ctx == nil {
		return 0, fmt.Errorf("ggml: ggml_init failed")
	}
	defer C.ggml_free(ctx)
	var cne [4]C.int64_t
	for i, n := range ne {
		cne[i] = C.int64_t(n)
	}
	tensor := C.ggml_new_tensor(ctx, C.enum_ggml_type(t), C.int(len(ne)), &cne[0])
	if tensor == nil {
		return 0, fmt.Errorf("ggml: ggml_new_tensor failed")
	}
	return uint64(C.ggml_nbytes(tensor)), nil
}
