// rowconv.h - small helpers shared by the CPU kernel families (cpy, binary, get_rows, norm,
// ...): thread split of rows, row addressing, the common "F32 in, same-shape F32 out" support
// check, converting one row of any float-like type (F32, F16, quantized with type traits) to F32
// and back, and per-thread scratch carving.
//
// A row is ne[0] elements of a tensor starting at a given byte address, with element stride nb0.
// F32 and F16 rows may have any stride. Quantized rows must be dense (nb0 == block size in bytes)
// and are handled a whole number of blocks at a time; their conversion functions come from the
// type traits, so a quantized type is usable exactly when its traits provide them.

#ifndef GGML_X_CPU_ROWCONV_H
#define GGML_X_CPU_ROWCONV_H

#include "../ggml-impl.h"
#include "ops.h"
#include "traits.h"

#include <string.h>

// contiguous range [*r0, *r1) of n items for thread ith of nth
static inline void rowconv_split(int64_t n, int ith, int nth, int64_t * r0, int64_t * r1) {
    const int64_t per = (n + nth - 1) / nth;
    *r0 = GGML_X_MIN(per * ith, n);
    *r1 = GGML_X_MIN(*r0 + per, n);
}

// as rowconv_split, with part boundaries on multiples of `align` (e.g. 16 floats, a cache line,
// so that threads splitting one row do not write to the same line)
static inline void rowconv_split_aligned(int64_t n, int ith, int nth, int64_t align, int64_t * r0, int64_t * r1) {
    const int64_t units = (n + align - 1) / align;
    rowconv_split(units, ith, nth, r0, r1);
    *r0 = GGML_X_MIN(*r0 * align, n);
    *r1 = GGML_X_MIN(*r1 * align, n);
}

static inline bool rowconv_is_int(enum ggml_type type) {
    return type == GGML_TYPE_I8 || type == GGML_TYPE_I16 || type == GGML_TYPE_I32;
}

static inline bool rowconv_is_quant(enum ggml_type type) {
    return ggml_x_type_valid(type) && ggml_x_cpu_type_traits(type)->is_quantized;
}

static inline size_t rowconv_type_size(enum ggml_type type) {
    return ggml_x_cpu_type_traits(type)->type_size;
}

static inline int64_t rowconv_blck(enum ggml_type type) {
    return ggml_x_cpu_type_traits(type)->blck_size;
}

// can rows of this type with element stride nb0 be converted to F32?
static inline bool rowconv_can_load(enum ggml_type type, size_t nb0) {
    if (type == GGML_TYPE_F32 || type == GGML_TYPE_F16) {
        return true;
    }
    if (!rowconv_is_quant(type)) {
        return false;
    }
    const ggml_type_traits_t * tr = ggml_x_cpu_type_traits(type);
    return tr->to_float != NULL && nb0 == tr->type_size;
}

// can rows of this type with element stride nb0 and row length ne0 be written from F32?
static inline bool rowconv_can_store(enum ggml_type type, size_t nb0, int64_t ne0) {
    if (type == GGML_TYPE_F32 || type == GGML_TYPE_F16) {
        return true;
    }
    if (!rowconv_is_quant(type)) {
        return false;
    }
    const ggml_type_traits_t * tr = ggml_x_cpu_type_traits(type);
    return tr->from_float != NULL && nb0 == tr->type_size && ne0 % tr->blck_size == 0;
}

// y[0..n) = row x converted to F32 (quantized: n a multiple of the block size, x dense)
static inline void rowconv_load(float * y, const char * x, size_t nb0, enum ggml_type type, int64_t n) {
    switch (type) {
        case GGML_TYPE_F32:
            if (nb0 == sizeof(float)) {
                if ((const void *) y != (const void *) x) {
                    memmove(y, x, (size_t) n * sizeof(float));
                }
            } else {
                for (int64_t i = 0; i < n; i++) {
                    y[i] = *(const float *) (x + i * nb0);
                }
            }
            break;
        case GGML_TYPE_F16:
            for (int64_t i = 0; i < n; i++) {
                y[i] = GGML_FP16_TO_FP32(*(const ggml_fp16_t *) (x + i * nb0));
            }
            break;
        default:
            ggml_x_cpu_type_traits(type)->to_float(x, y, (int) n);
            break;
    }
}

// row y (element stride nb0) = x[0..n) converted from F32
static inline void rowconv_store(char * y, size_t nb0, enum ggml_type type, const float * x, int64_t n) {
    switch (type) {
        case GGML_TYPE_F32:
            if (nb0 == sizeof(float)) {
                if ((const void *) y != (const void *) x) {
                    memmove(y, x, (size_t) n * sizeof(float));
                }
            } else {
                for (int64_t i = 0; i < n; i++) {
                    *(float *) (y + i * nb0) = x[i];
                }
            }
            break;
        case GGML_TYPE_F16:
            for (int64_t i = 0; i < n; i++) {
                *(ggml_fp16_t *) (y + i * nb0) = GGML_FP32_TO_FP16(x[i]);
            }
            break;
        default:
            ggml_x_cpu_type_traits(type)->from_float(x, y, (int) n);
            break;
    }
}

// per-thread scratch: `floats` floats for thread ith, slices rounded to a cache line
static inline size_t rowconv_slice_bytes(int64_t floats) {
    return GGML_PAD((size_t) floats * sizeof(float) + 64, 64);
}

static inline float * rowconv_slice(const struct ggml_cpu_ctx * cc, int64_t floats) {
    const size_t slice = rowconv_slice_bytes(floats);
    char * base = (char *) cc->wdata;
    // align the start of the scratch to 64 bytes (the slice size includes room for it)
    const uintptr_t mis = (uintptr_t) base % 64;
    if (mis != 0) {
        base += 64 - mis;
    }
    return (float *) (base + slice * (size_t) cc->ith);
}

static inline size_t rowconv_work_size(int64_t floats, int n_threads) {
    return rowconv_slice_bytes(floats) * (size_t) (n_threads < 1 ? 1 : n_threads) + 64;
}

// unravel a flat row index ir into (i1, i2, i3) for a tensor with ne1, ne2 rows
static inline void rowconv_unravel(int64_t ir, int64_t ne1, int64_t ne2, int64_t * i1, int64_t * i2, int64_t * i3) {
    *i3 = ir / (ne1 * ne2);
    ir -= *i3 * ne1 * ne2;
    *i2 = ir / ne1;
    *i1 = ir - *i2 * ne1;
}

// byte address of row (i1, i2, i3) of t
static inline char * rowconv_row(const struct ggml_tensor * t, int64_t i1, int64_t i2, int64_t i3) {
    return (char *) t->data + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}

// byte address of row ir of t, rows numbered over t's own dims 1..3
static inline char * rowconv_row_flat(const struct ggml_tensor * t, int64_t ir) {
    int64_t i1, i2, i3;
    rowconv_unravel(ir, t->ne[1], t->ne[2], &i1, &i2, &i3);
    return rowconv_row(t, i1, i2, i3);
}

// dst and src[0] are both F32 and have the same shape (the usual element-wise support check)
static inline bool rowconv_f32_same_shape(const struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    return src0 != NULL && src0->type == GGML_TYPE_F32 && dst->type == GGML_TYPE_F32 &&
           ggml_are_same_shape(src0, dst);
}

// element i0 of a row of the F32 tensor t (row from rowconv_row / rowconv_row_flat)
#define ROWCONV_F32_AT(t, i0, row) (*(float *) ((row) + (i0) * (t)->nb[0]))

// the two-operand gradient kernels (SILU_BACK, RMS_NORM_BACK, SOFT_MAX_BACK): src0 and src1 are F32
// of dst's shape, dst F32
static inline bool rowconv_back_pair_supports(const struct ggml_tensor * dst) {
    const struct ggml_tensor * b = dst->src[1];
    return rowconv_f32_same_shape(dst) && b != NULL && b->type == GGML_TYPE_F32 && ggml_are_same_shape(b, dst);
}

// a type whose elements can be moved as bytes (valid, not quantized): REPEAT, CONCAT
static inline bool rowconv_is_movable(enum ggml_type type) {
    return ggml_x_type_valid(type) && !rowconv_is_quant(type);
}

// copy n elements of es bytes from s (stride snb0) to d (stride dnb0): REPEAT, CONCAT
static inline void rowconv_copy_elems(char * d, size_t dnb0, const char * s, size_t snb0, size_t es, int64_t n) {
    if (snb0 == es && dnb0 == es) {
        memcpy(d, s, (size_t) n * es);
        return;
    }
    switch (es) {
        case 4:
            for (int64_t i = 0; i < n; i++) *(uint32_t *) (d + i * dnb0) = *(const uint32_t *) (s + i * snb0);
            break;
        case 2:
            for (int64_t i = 0; i < n; i++) *(uint16_t *) (d + i * dnb0) = *(const uint16_t *) (s + i * snb0);
            break;
        default:
            for (int64_t i = 0; i < n; i++) memcpy(d + i * dnb0, s + i * snb0, es);
            break;
    }
}

#endif // GGML_X_CPU_ROWCONV_H
