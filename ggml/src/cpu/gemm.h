// gemm.h - packed, cache-blocked matrix products for MUL_MAT and OUT_PROD (internal).
//
// Shapes follow ggml_mul_mat: the weights W have M rows of K elements (row i0 contiguous), the
// activations X have N rows ("columns" of the product) of K elements, and the result is
// D[i1][i0] = dot(W row i0, X row i1), stored with i0 contiguous.
//
// Two families, each with SIMD variants selected at run time by the CPU level
// (cpu-features.h; GGML_X_CPU_LEVEL lowers it):
//
//   * float GEMM (gemm.c, gemm-avx2.c, gemm-avx512.c): W is F32 or F16, X is F32 (rounded to
//     F16 precision for F16 weights, as the reference's F16 dot products see it). W is packed
//     into panels of MR rows ([k][MR] floats, F16 converted on the fly) and X into panels of NR
//     columns ([k][NR] floats); a register-blocked micro-kernel computes MR x NR tiles.
//     Every result element is one fused multiply-add chain over k in increasing order, so the
//     result does not depend on the tiling or on the thread count.
//
//   * int8 GEMM (qgemm.c, qgemm-avx2.c, qgemm-avx512.c): W is Q4_0, Q8_0 or Q4_K, X is
//     quantized once to q8_0 / q8_K. W panels of R rows hold the weights as unsigned bytes in
//     groups of 4 consecutive k (the vpdpbusd / vpmaddubsw layout) with per-block scales; X
//     panels of C columns hold the int8 activations with their scales and block sums.
//
// Also here: SIMD dot products of F32 and F16 rows, and int8 matrix-vector kernels
// (qgemv-avx2.c, qgemv-avx512.c), used by MUL_MAT for matrix-vector products and small batches.

#ifndef GGML_X_GEMM_H
#define GGML_X_GEMM_H

#include "../ggml-impl.h"
#include "cpu/cpu-features.h"
#include "cpu/quants-simd.h"

#ifdef __cplusplus
extern "C" {
#endif

// ---------------------------------------------------------------------------------------------
// float GEMM kernels of one level

// c[j*ldc + i] (i < MR, j < nr) = (acc ? c[j*ldc + i] : 0) + sum_k a[k*MR + i] * b[k*NR + j]
// (a: packed W panel, b: packed X panel, 1 <= nr <= NR; rows i >= n_rows are not stored)
typedef void (*ggml_x_gemm_micro_t)(int64_t kc, const float * a, const float * b, float * c, int64_t ldc,
                                    int nr, int n_rows, bool acc);

// Packs rows [0, n_rows) (n_rows <= MR) of W (row stride nb1 bytes), elements [k0, k0 + kc),
// into a[k*MR + i]; rows n_rows..MR-1 are zero.
typedef void (*ggml_x_gemm_pack_a_t)(const void * w, size_t nb1, int n_rows, int64_t k0, int64_t kc, float * a);

struct ggml_x_gemm_kernels {
    enum ggml_x_cpu_level level;
    int mr, nr;                         // micro-tile: W rows x X columns
    ggml_x_gemm_micro_t  micro;
    ggml_x_gemm_pack_a_t pack_a_f32;
    ggml_x_gemm_pack_a_t pack_a_f16;
    // vec_dot-style dot products of two F32 rows / two F16 rows (F32 sums); NULL: none
    ggml_vec_dot_t       dot_f32;
    ggml_vec_dot_t       dot_f16;

    // int8 GEMM (NULL when the level has none)
    int qr, qc;                         // W rows per panel, X columns per panel
    bool q8_signed;                     // Q8_0 weights packed signed (true) or +128 (false)
    // d[j*ldd + i] = dot over all blocks of W panel row i and X panel column j (i < n_rows, j < ncols)
    void (*qmicro_q4_0)(int nblk, const void * wp, const void * xp, float * d, int64_t ldd, int ncols, int n_rows);
    void (*qmicro_q8_0)(int nblk, const void * wp, const void * xp, float * d, int64_t ldd, int ncols, int n_rows);
    void (*qmicro_q4_K)(int nblk, const void * wp, const void * xp, float * d, int64_t ldd, int ncols, int n_rows);
    // optional fast W panel packer for full panels (n_rows == qr); false: not handled here
    bool (*qpack_w)(enum ggml_type wtype, const char * w, size_t nb1, int64_t nblk, void * out);

    // int8 matrix-vector kernels (NULL: none). An F32 activation row of k elements is prepared
    // once by qgemv_prep_* into qgemv_prep_size(type, k) bytes (64-byte aligned); then
    // qgemv_*(k, &s, weight row, prepared row) computes one dot product (vec_dot signature).
    size_t (*qgemv_prep_size)(enum ggml_type wtype, int64_t k);
    ggml_from_float_t qgemv_prep_q4_0, qgemv_prep_q8_0, qgemv_prep_q4_K;
    ggml_vec_dot_t    qgemv_q4_0, qgemv_q8_0, qgemv_q4_K;
    // the same for several prepared rows at once (ggml_x_vec_dot_cols_t; NULL: none)
    ggml_x_vec_dot_cols_t qgemv_cols_q4_0, qgemv_cols_q8_0;

    // kernels of weights repacked in CPU_REPACK buffers (repack.h): 8 rows x 1..8 columns
    // (repack.c: scalar at every level; repack-avx2.c, repack-avx512.c)
    void (*rp_q4_0)(int64_t nblk, int ncols, const uint8_t * grp, const uint8_t * set, float * out);
    void (*rp_q8_0)(int64_t nblk, int ncols, const uint8_t * grp, const uint8_t * set, float * out);
    void (*rp_q4_K)(int64_t nblk, int ncols, const uint8_t * grp, const uint8_t * set, float * out);
    void (*rp_q6_K)(int64_t nblk, int ncols, const uint8_t * grp, const uint8_t * set, float * out);
    // 16 rows (the groups at grp and grp + gs) x 1..8 columns at once (ggml_x_rp16_kernel_t;
    // NULL: none, MUL_MAT takes the 8-row kernels)
    void (*rp16_q4_0)(int64_t nblk, int ncols, const uint8_t * grp, size_t gs, const uint8_t * set, float * out);
    void (*rp16_q8_0)(int64_t nblk, int ncols, const uint8_t * grp, size_t gs, const uint8_t * set, float * out);
    void (*rp16_q4_K)(int64_t nblk, int ncols, const uint8_t * grp, size_t gs, const uint8_t * set, float * out);
    void (*rp16_q6_K)(int64_t nblk, int ncols, const uint8_t * grp, size_t gs, const uint8_t * set, float * out);
};

// kernels of exactly `level`; false (and the scalar kernels) when this CPU cannot run it
bool ggml_x_gemm_kernels_for_level(enum ggml_x_cpu_level level, struct ggml_x_gemm_kernels * k);

// the kernels MUL_MAT uses (of ggml_x_cpu_level(), unless a test changed them)
const struct ggml_x_gemm_kernels * ggml_x_gemm_kernels_active(void);

// level files (x86-64 only)
void ggml_x_gemm_kernels_avx2(struct ggml_x_gemm_kernels * k);
void ggml_x_gemm_kernels_avx512(struct ggml_x_gemm_kernels * k);
void ggml_x_qgemm_kernels_avx2(struct ggml_x_gemm_kernels * k);
void ggml_x_qgemm_kernels_vnni(struct ggml_x_gemm_kernels * k);
void ggml_x_qgemv_kernels_avx2(struct ggml_x_gemm_kernels * k);
void ggml_x_qgemv_kernels_vnni(struct ggml_x_gemm_kernels * k);
void ggml_x_rp_kernels_avx2(struct ggml_x_gemm_kernels * k);
void ggml_x_rp_kernels_vnni(struct ggml_x_gemm_kernels * k);

// ---------------------------------------------------------------------------------------------
// testing hooks (not thread-safe: call while no graph is being computed)

// use the kernels of `level` (a level this CPU runs) from now on; false otherwise
bool ggml_x_gemm_testing_set_level(enum ggml_x_cpu_level level);
// MUL_MAT strategies: 0 = automatic, 1 = always the dot-product path, 2 = GEMM whenever the
// types allow it (any batch size)
void ggml_x_gemm_testing_set_mode(int mode);
int  ggml_x_gemm_testing_mode(void);

// ---------------------------------------------------------------------------------------------
// float GEMM driver (gemm.c), used by ops-mul-mat.c

// does the float GEMM handle weights of this type (F32, F16) with the active kernels?
bool ggml_x_gemm_f_supported(enum ggml_type wtype);

// X panel bytes for n columns of k elements
size_t ggml_x_gemm_f_xpack_size(int64_t n, int64_t k);
// per-thread scratch bytes of ggml_x_gemm_f_compute
size_t ggml_x_gemm_f_thread_size(int64_t k);

// Stores F32 row `row` (k elements) as column j of a batch's X pack (ggml_x_gemm_f_xpack_size
// bytes). Columns of a partial last panel that are never stored are never read.
void ggml_x_gemm_f_pack_x(const float * row, int64_t j, int64_t k, float * xp);

// D rows [i0, i1) (multiples of MR except i1 == m) for all n columns.
// w: row 0 of W (type wtype, row stride w_nb1), xp: packed X, d: result (column stride ldd floats),
// scratch: ggml_x_gemm_f_thread_size(k) bytes, 64-byte aligned.
void ggml_x_gemm_f_compute(enum ggml_type wtype, const void * w, size_t w_nb1, int64_t i0, int64_t i1,
                           int64_t n, int64_t k, const float * xp, float * d, int64_t ldd, void * scratch);

// The same product with W given transposed (OUT_PROD's first operand): element (row i, k) at
// w + i*esize + k*w_ldk bytes (esize: 4 for F32, 2 for F16), i.e. the rows of one k adjacent.
void ggml_x_gemm_f_compute_at(enum ggml_type wtype, const void * w, size_t w_ldk, int64_t i0, int64_t i1,
                              int64_t n, int64_t k, const float * xp, float * d, int64_t ldd, void * scratch);

// Stores F32 columns [j0, j0 + ncols) of X into a batch's X pack, X given by strides: element
// (column j, k) at x + j*nb_col + k*nb_k bytes (OUT_PROD's second operand has its columns
// adjacent for each k).
void ggml_x_gemm_f_pack_x_strided(const char * x, size_t nb_col, size_t nb_k, int64_t j0, int64_t ncols, int64_t k,
                                  float * xp);

// ---------------------------------------------------------------------------------------------
// int8 GEMM driver (qgemm.c)

// does the int8 GEMM handle weights of this type with the active kernels?
bool ggml_x_qgemm_supported(enum ggml_type wtype);
// bytes of the X pack of n columns, k elements
size_t ggml_x_qgemm_xpack_size(enum ggml_type wtype, int64_t n, int64_t k);
size_t ggml_x_qgemm_thread_size(enum ggml_type wtype, int64_t k);
// stores column j (one vec_dot_type row, i.e. q8_0 or q8_K blocks) into the X pack
void ggml_x_qgemm_pack_x(enum ggml_type wtype, const void * q8row, int64_t j, int64_t k, void * xp);
void ggml_x_qgemm_compute(enum ggml_type wtype, const void * w, size_t w_nb1, int64_t i0, int64_t i1,
                          int64_t n, int64_t k, const void * xp, float * d, int64_t ldd, void * scratch);

#ifdef __cplusplus
}
#endif

#endif // GGML_X_GEMM_H
