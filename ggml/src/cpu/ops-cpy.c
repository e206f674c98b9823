// ops-cpy.c - DUP, CPY and CONT: copy src0 into dst element by element in logical order.
//
// Source and destination may have different shapes (same element count) and any strides:
// element k of the source in logical order (i0 fastest) lands on element k of the destination.
// The work is split over destination rows; each destination row is the flat range
// [ir*ne0, (ir+1)*ne0) of the logical order, collected from one or more source row segments.
//
// Same type: byte copies (memcpy for dense rows; quantized types as whole blocks, which needs
// dense rows, i.e. nb0 == block size). Different types: the row is converted to F32 and then to
// the destination type; sources F32, F16 or quantized (through traits to_float), destinations
// F32, F16 or quantized (through traits from_float, dense rows). Integer types copy only to
// their own type.
//
// CPY: src0 = the source, src1 = the destination tensor; dst is a view of src1 (same data).
//
// Fast paths for F32/F16 on both sides (e.g. writing a KV cache): both contiguous: one flat
// conversion split over the threads; same shape (any strides, e.g. a transposed view): elements
// correspond by index, so the copy runs along the longest dimension, in chunks converted by the
// SIMD row conversions, without flat-index arithmetic per element.

#include "quants-simd.h"

#include "../ggml-impl.h"
#include "rowconv.h"

static bool dup_supports(const struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    if (src == NULL || !ggml_x_type_valid(src->type) || !ggml_x_type_valid(dst->type)) {
        return false;
    }
    if (ggml_nelements(src) != ggml_nelements(dst)) {
        return false;
    }
    if (src->type == dst->type) {
        if (!rowconv_is_quant(src->type)) {
            return true;
        }
        const size_t ts = rowconv_type_size(src->type);
        const int64_t bs = rowconv_blck(src->type);
        return src->nb[0] == ts && dst->nb[0] == ts && src->ne[0] % bs == 0 && dst->ne[0] % bs == 0;
    }
    if (!rowconv_can_load(src->type, src->nb[0]) || !rowconv_can_store(dst->type, dst->nb[0], dst->ne[0])) {
        return false;
    }
    // a quantized source is decoded block by block
    return !rowconv_is_quant(src->type) ||
           (src->ne[0] % rowconv_blck(src->type) == 0 && rowconv_blck(src->type) <= 256);
}

static size_t dup_work_size(const struct ggml_tensor * dst, int n_threads) {
    const struct ggml_tensor * src = dst->src[0];
    if (src->type == dst->type) {
        return 0;
    }
    return rowconv_work_size(dst->ne[0], n_threads);
}

// position of flat element k of t: row pointer and offset j0 within the row
static inline const char * dup_locate(const struct ggml_tensor * t, int64_t k, int64_t * j0) {
    const int64_t ne0 = t->ne[0];
    int64_t r = k / ne0;
    *j0 = k - r * ne0;
    const int64_t j1 = r % t->ne[1];
    r /= t->ne[1];
    const int64_t j2 = r % t->ne[2];
    const int64_t j3 = r / t->ne[2];
    return (const char *) t->data + j1 * t->nb[1] + j2 * t->nb[2] + j3 * t->nb[3];
}

// copy n elements of the same type from the source's flat position k into the row d
// (element stride dnb0); elements are es bytes, or blocks for quantized types
static void dup_bytes_range(const struct ggml_tensor * src, int64_t k, char * d, size_t dnb0, int64_t n) {
    const enum ggml_type type = src->type;
    const size_t es = rowconv_type_size(type);
    const int64_t bs = rowconv_blck(type);
    const size_t snb0 = src->nb[0];
    while (n > 0) {
        int64_t j0;
        const char * s = dup_locate(src, k, &j0);
        const int64_t seg = GGML_X_MIN(n, src->ne[0] - j0);
        if (bs > 1) {
            // whole blocks: all segment boundaries are block aligned (both ne0 are multiples of bs)
            memcpy(d, s + (j0 / bs) * es, (size_t) (seg / bs) * es);
            d += (seg / bs) * es;
        } else if (snb0 == es && dnb0 == es) {
            memcpy(d, s + j0 * es, (size_t) seg * es);
            d += seg * es;
        } else {
            s += j0 * snb0;
            switch (es) {
                case 4:
                    for (int64_t i = 0; i < seg; i++) {
                        *(uint32_t *) (d + i * dnb0) = *(const uint32_t *) (s + i * snb0);
                    }
                    break;
                case 2:
                    for (int64_t i = 0; i < seg; i++) {
                        *(uint16_t *) (d + i * dnb0) = *(const uint16_t *) (s + i * snb0);
                    }
                    break;
                default:
                    for (int64_t i = 0; i < seg; i++) {
                        memcpy(d + i * dnb0, s + i * snb0, es);
                    }
                    break;
            }
            d += seg * dnb0;
        }
        k += seg;
        n -= seg;
    }
}

// y[0..n) = the source's elements from flat position k on, converted to F32
static void dup_gather_f32(const struct ggml_tensor * src, int64_t k, float * y, int64_t n) {
    const enum ggml_type type = src->type;
    const int64_t bs = rowconv_blck(type);
    const size_t es = rowconv_type_size(type);
    while (n > 0) {
        int64_t j0;
        const char * s = dup_locate(src, k, &j0);
        const int64_t seg = GGML_X_MIN(n, src->ne[0] - j0);
        if (bs == 1) {
            rowconv_load(y, s + j0 * src->nb[0], src->nb[0], type, seg);
        } else if (j0 % bs == 0 && seg % bs == 0) {
            rowconv_load(y, s + (j0 / bs) * es, es, type, seg);
        } else {
            // partial blocks: decode each touched block and keep the wanted part
            float tmp[256]; // the largest block (k-quants) holds 256 elements
            int64_t done = 0;
            while (done < seg) {
                const int64_t jj = j0 + done;
                const int64_t b = jj / bs;
                const int64_t off = jj - b * bs;
                const int64_t take = GGML_X_MIN(seg - done, bs - off);
                rowconv_load(tmp, s + b * es, es, type, bs);
                memcpy(y + done, tmp + off, (size_t) take * sizeof(float));
                done += take;
            }
        }
        y += seg;
        k += seg;
        n -= seg;
    }
}

static inline bool dup_is_f(enum ggml_type t) {
    return t == GGML_TYPE_F32 || t == GGML_TYPE_F16;
}

// n elements from s (type st, byte stride ss) to d (type dt, byte stride ds), F32/F16
static void dup_run_f(char * d, size_t ds, enum ggml_type dt, const char * s, size_t ss, enum ggml_type st, int64_t n) {
    const size_t ses = st == GGML_TYPE_F32 ? 4 : 2, des = dt == GGML_TYPE_F32 ? 4 : 2;
    if (st == dt && ss == ses && ds == des) {
        memcpy(d, s, (size_t) n * ses);
        return;
    }
    if (st == dt) {
        for (int64_t i = 0; i < n; i++) {
            if (ses == 4) {
                *(uint32_t *) (d + i * ds) = *(const uint32_t *) (s + i * ss);
            } else {
                *(uint16_t *) (d + i * ds) = *(const uint16_t *) (s + i * ss);
            }
        }
        return;
    }
    if (ss == ses && ds == des) {
        if (st == GGML_TYPE_F32) {
            ggml_x_fp32_to_fp16_row_simd((const float *) s, (ggml_fp16_t *) d, (int) n);
        } else {
            ggml_x_fp16_to_fp32_row_simd((const ggml_fp16_t *) s, (float *) d, (int) n);
        }
        return;
    }
    // strided: gather a chunk into a dense buffer, convert it, scatter it
    enum { CH = 256 };
    float f[CH];
    ggml_fp16_t h[CH];
    for (int64_t c = 0; c < n; c += CH) {
        const int64_t m = GGML_X_MIN((int64_t) CH, n - c);
        const char * sc = s + c * ss;
        char * dc = d + c * ds;
        if (st == GGML_TYPE_F32) {
            const float * sf = (const float *) sc;
            if (ss != sizeof(float)) {
                for (int64_t i = 0; i < m; i++) f[i] = *(const float *) (sc + i * ss);
                sf = f;
            }
            ggml_fp16_t * hd = ds == sizeof(ggml_fp16_t) ? (ggml_fp16_t *) dc : h;
            ggml_x_fp32_to_fp16_row_simd(sf, hd, (int) m);
            if (hd == h) {
                // scattered stores (a transposed V cache: one cache line per element); the
                // lines are requested ahead so that their misses overlap
                for (int64_t i = 0; i < m; i++) {
                    __builtin_prefetch(dc + (i + 24) * ds, 1, 0);
                    *(ggml_fp16_t *) (dc + i * ds) = h[i];
                }
            }
        } else {
            const ggml_fp16_t * sh = (const ggml_fp16_t *) sc;
            if (ss != sizeof(ggml_fp16_t)) {
                for (int64_t i = 0; i < m; i++) h[i] = *(const ggml_fp16_t *) (sc + i * ss);
                sh = h;
            }
            float * fd = ds == sizeof(float) ? (float *) dc : f;
            ggml_x_fp16_to_fp32_row_simd(sh, fd, (int) m);
            if (fd == f) {
                for (int64_t i = 0; i < m; i++) *(float *) (dc + i * ds) = f[i];
            }
        }
    }
}

// F32/F16 -> F32/F16, same shape: runs along the longest dimension, the other three split
static void dup_same_shape_f(const struct ggml_tensor * cc_src, struct ggml_tensor * dst, int ith, int nth) {
    const struct ggml_tensor * src = cc_src;
    int in = 0;
    for (int d = 1; d < 4; d++) {
        if (dst->ne[d] > dst->ne[in]) {
            in = d;
        }
    }
    int od[3], k = 0;
    for (int d = 0; d < 4; d++) {
        if (d != in) {
            od[k++] = d;
        }
    }
    const int64_t n0 = dst->ne[od[0]], n1 = dst->ne[od[1]], n2 = dst->ne[od[2]];
    const int64_t rows = n0 * n1 * n2, len = dst->ne[in];
    if (rows < nth) {
        // fewer runs than threads (e.g. one column of a transposed cache): split each run
        for (int64_t r = 0; r < rows; r++) {
            const int64_t j0 = r % n0, j1 = (r / n0) % n1, j2 = r / (n0 * n1);
            int64_t e0, e1;
            rowconv_split(len, ith, nth, &e0, &e1);
            const char * s = (const char *) src->data + j0 * src->nb[od[0]] + j1 * src->nb[od[1]] +
                             j2 * src->nb[od[2]] + e0 * src->nb[in];
            char * d = (char *) dst->data + j0 * dst->nb[od[0]] + j1 * dst->nb[od[1]] + j2 * dst->nb[od[2]] +
                       e0 * dst->nb[in];
            if (e1 > e0) {
                dup_run_f(d, dst->nb[in], dst->type, s, src->nb[in], src->type, e1 - e0);
            }
        }
        return;
    }
    int64_t r0, r1;
    rowconv_split(rows, ith, nth, &r0, &r1);
    if (r0 >= r1) {
        return;
    }
    int64_t j0 = r0 % n0, j1 = (r0 / n0) % n1, j2 = r0 / (n0 * n1);
    for (int64_t r = r0; r < r1; r++) {
        const char * s = (const char *) src->data + j0 * src->nb[od[0]] + j1 * src->nb[od[1]] + j2 * src->nb[od[2]];
        char * d = (char *) dst->data + j0 * dst->nb[od[0]] + j1 * dst->nb[od[1]] + j2 * dst->nb[od[2]];
        dup_run_f(d, dst->nb[in], dst->type, s, src->nb[in], src->type, len);
        if (++j0 == n0) {
            j0 = 0;
            if (++j1 == n1) {
                j1 = 0;
                j2++;
            }
        }
    }
}

// A transposing copy within one type of 4 or 2 bytes, or from F32 to F16: dst dense along dim
// 0, src dense along another dim q (a transposed or permuted view, e.g. the weights the
// backward pass of MUL_MAT transposes, or the new values written into a transposed V cache).
// Copied in 32 x 32 tiles, so that the cache lines read from src are all used before they are
// evicted, instead of one line per element, and each line of dst is written by one thread.
// Returns false when it does not apply.
static bool dup_transpose_tiled(const struct ggml_tensor * src, struct ggml_tensor * dst, int ith, int nth) {
    const size_t es = ggml_type_size(dst->type);
    const bool to_f16 = src->type == GGML_TYPE_F32 && dst->type == GGML_TYPE_F16;
    const size_t ses = ggml_type_size(src->type);
    // (one value per row of dst, e.g. the V store of one token, is cheaper as a strided run)
    if (!(src->type == dst->type || (to_f16 && dst->ne[0] > 1)) || (es != 4 && es != 2) || dst->nb[0] != es || src->nb[0] == ses ||
        src->data == dst->data) {
        return false;
    }
    int q = -1;
    for (int d = 1; d < 4 && q < 0; d++) {
        if (src->nb[d] == ses && src->ne[d] > 1) {
            q = d;
        }
    }
    if (q < 0) {
        return false;
    }
    int od[2], k = 0;
    for (int d = 1; d < 4; d++) {
        if (d != q) {
            od[k++] = d;
        }
    }
    enum { TB = 32 };
    const int64_t n0 = dst->ne[0], nq = dst->ne[q];
    const int64_t t0 = (n0 + TB - 1) / TB, tq = (nq + TB - 1) / TB;
    const int64_t ntiles = dst->ne[od[0]] * dst->ne[od[1]] * t0 * tq;
    const size_t snb0 = src->nb[0];
    int64_t ta, tb;
    rowconv_split(ntiles, ith, nth, &ta, &tb);
    for (int64_t t = ta; t < tb; t++) {
        int64_t r = t;
        const int64_t ti0 = r % t0;
        r /= t0;
        const int64_t tiq = r % tq;
        r /= tq;
        const int64_t j0 = r % dst->ne[od[0]], j1 = r / dst->ne[od[0]];
        const char * sb = (const char *) src->data + j0 * src->nb[od[0]] + j1 * src->nb[od[1]];
        char * db = (char *) dst->data + j0 * dst->nb[od[0]] + j1 * dst->nb[od[1]];
        const int64_t i0a = ti0 * TB, i0b = GGML_X_MIN(i0a + TB, n0);
        const int64_t iqa = tiq * TB, iqb = GGML_X_MIN(iqa + TB, nq);
        for (int64_t iq = iqa; iq < iqb; iq++) {
            char * drow = db + iq * dst->nb[q];
            const char * scol = sb + iq * ses;
            if (to_f16) {
                float f[TB];
                for (int64_t i0 = i0a; i0 < i0b; i0++) {
                    f[i0 - i0a] = *(const float *) (scol + i0 * snb0);
                }
                ggml_x_fp32_to_fp16_row_simd(f, (ggml_fp16_t *) drow + i0a, (int) (i0b - i0a));
            } else if (es == 4) {
                for (int64_t i0 = i0a; i0 < i0b; i0++) {
                    ((uint32_t *) drow)[i0] = *(const uint32_t *) (scol + i0 * snb0);
                }
            } else {
                for (int64_t i0 = i0a; i0 < i0b; i0++) {
                    ((uint16_t *) drow)[i0] = *(const uint16_t *) (scol + i0 * snb0);
                }
            }
        }
    }
    return true;
}

static void dup_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    const enum ggml_type dtype = dst->type;

    if (dup_is_f(src->type) && dup_is_f(dtype)) {
        if (ggml_is_contiguous(src) && ggml_is_contiguous(dst)) {
            // flat, in cache-line sized units per thread
            int64_t u0, u1;
            rowconv_split((ggml_nelements(dst) + 31) / 32, cc->ith, cc->nth, &u0, &u1);
            u0 = GGML_X_MIN(u0 * 32, ggml_nelements(dst));
            u1 = GGML_X_MIN(u1 * 32, ggml_nelements(dst));
            const size_t ses = ggml_type_size(src->type), des = ggml_type_size(dtype);
            if (u1 > u0 && !(dst->data == src->data && src->type == dtype)) {
                dup_run_f((char *) dst->data + u0 * des, des, dtype, (const char *) src->data + u0 * ses, ses,
                          src->type, u1 - u0);
            }
            return;
        }
        if (ggml_are_same_shape(src, dst)) {
            if (dup_transpose_tiled(src, dst, cc->ith, cc->nth)) {
                return;
            }
            dup_same_shape_f(src, dst, cc->ith, cc->nth);
            return;
        }
    }

    // same type, both dense: one memcpy per thread
    if (src->type == dtype && ggml_is_contiguous(src) && ggml_is_contiguous(dst)) {
        const size_t es = rowconv_type_size(dtype);
        const int64_t nunits = (int64_t) (ggml_nbytes(dst) / es);
        int64_t u0, u1;
        rowconv_split(nunits, cc->ith, cc->nth, &u0, &u1);
        if (u1 > u0 && dst->data != src->data) {
            memcpy((char *) dst->data + u0 * es, (const char *) src->data + u0 * es, (size_t) (u1 - u0) * es);
        }
        return;
    }

    const int64_t ne0 = dst->ne[0], ne1 = dst->ne[1], ne2 = dst->ne[2];
    const int64_t nr = ggml_nrows(dst);
    int64_t ir0, ir1;
    rowconv_split(nr, cc->ith, cc->nth, &ir0, &ir1);

    float * buf = src->type == dtype ? NULL : rowconv_slice(cc, ne0);

    for (int64_t ir = ir0; ir < ir1; ir++) {
        int64_t i1, i2, i3;
        rowconv_unravel(ir, ne1, ne2, &i1, &i2, &i3);
        char * d = rowconv_row(dst, i1, i2, i3);
        if (src->type == dtype) {
            dup_bytes_range(src, ir * ne0, d, dst->nb[0], ne0);
        } else if (dtype == GGML_TYPE_F32 && dst->nb[0] == sizeof(float)) {
            dup_gather_f32(src, ir * ne0, (float *) d, ne0);
        } else {
            dup_gather_f32(src, ir * ne0, buf, ne0);
            rowconv_store(d, dst->nb[0], dtype, buf, ne0);
        }
    }
}

const struct ggml_cpu_op ggml_cpu_op_dup = {
    .forward = dup_forward, .supports = dup_supports, .work_size = dup_work_size,
};

const struct ggml_cpu_op ggml_cpu_op_cpy = {
    .forward = dup_forward, .supports = dup_supports, .work_size = dup_work_size,
};

const struct ggml_cpu_op ggml_cpu_op_cont = {
    .forward = dup_forward, .supports = dup_supports, .work_size = dup_work_size,
};
