// ggml-quants.c - quantized types (placeholder until the quantization work lands: no kernels,
// quantize functions report the type as unsupported).

#include "ggml-quants.h"

void ggml_x_quants_fill_traits(ggml_type_traits_t traits[GGML_TYPE_COUNT]) {
    (void) traits;
}

size_t ggml_quantize_chunk(enum ggml_type type, const float * src, void * dst,
        int start, int nrows, int n_per_row, int64_t * hist, const float * imatrix) {
    (void) src; (void) dst; (void) start; (void) nrows; (void) n_per_row; (void) hist; (void) imatrix;
    ggml_x_error(NULL, "ggml_quantize_chunk: type %d is not supported yet", (int) type);
    return 0;
}
