// repack.h - the CPU_REPACK buffer type: Q4_0 / Q8_0 / Q4_K / Q6_K weights stored interleaved by
// groups of 8 rows, read only by MUL_MAT's repack kernels (internal; the layout: repack.c).

#ifndef GGML_X_REPACK_H
#define GGML_X_REPACK_H

#include "../ggml-impl.h"

#ifdef __cplusplus
extern "C" {
#endif

#define GGML_X_RP_ROWS 8   // rows per interleaved group
#define GGML_X_RP_COLS 8   // src1 columns one kernel call computes

// Where a repacked tensor's bytes live. A tensor is repacked when it is not a view, its buffer
// has the repack buffer type, its type is Q4_0, Q8_0, Q4_K or Q6_K, it is 2-D (ne2 = ne3 = 1) with
// contiguous rows and at least 8 rows.
struct ggml_x_rp_layout {
    enum ggml_type type;
    size_t  bs;        // bytes of one block (18, 34; Q4_K: 144, Q6_K: 210, a super-block)
    int64_t nblk;      // blocks (Q4_K: super-blocks) per row
    size_t  row_size;  // bytes of one row
    int64_t ngroups;   // whole groups of 8 rows; rows ngroups*8.. stay in the plain layout
    size_t  packed;    // bytes of the interleaved part (ngroups * 8 * row_size)
};

// the layout a tensor of this shape/type gets in a repack buffer; false: stored plainly
bool ggml_x_rp_layout_of(const struct ggml_tensor * t, struct ggml_x_rp_layout * l);

// is the tensor's own memory interleaved (t is the repacked tensor itself, not a view)?
bool ggml_x_rp_is_packed(const struct ggml_tensor * t, struct ggml_x_rp_layout * l);

// does reading t (or, for a view, its source) read interleaved memory?
bool ggml_x_rp_reads_packed(const struct ggml_tensor * t);

// original byte range [off, off + size) of the tensor  <->  its interleaved storage at base
void ggml_x_rp_pack(const struct ggml_x_rp_layout * l, char * base, const char * src, size_t off, size_t size);
void ggml_x_rp_unpack(const struct ggml_x_rp_layout * l, const char * base, char * dst, size_t off, size_t size);

// Prepared activations: a "column set" of up to GGML_X_RP_COLS src1 columns of k elements for
// weights of type wtype (Q4_0 / Q8_0; the k-quants below), 64-byte aligned,
// ggml_x_rp_set_size(k) bytes, so that a kernel reaches every column of a block through one
// pointer and constant offsets:
// With nc columns in the set (1..8, the same for every column prepared into it; the slots are
// packed by nc so that one column's bytes stay dense):
//   [0, 32*nc*nblk)       per block, per column j: its 32 int8 (q8_0 quantization) at 32j
//   [dx_off, ...)         per block (nc floats), per column: the float scale of the q8_0 block
//   [corr_off, ...)       per block (nc int32), per column: -8 (Q4_0) or -128 (Q8_0) times the sum of
//                         the block's int8 (the offset of unsigned weights: Q4_0 nibbles, Q8_0 + 128)
//   [q8_off, ...)         per column: the row as plain block_q8_0 (the reference's quantization,
//                         for the type's vec_dot on the plain tail rows)
// Q4_K weights (nblk super-blocks of QK_K) use the same regions as the q8_K quantization:
//   [0, ...)              per super-block, per column j: its 256 int8 at 256j
//   [dx_off, ...)         per super-block, per column: the float scale d of the q8_K block
//   [corr_off, ...)       per super-block, per column: 8 int16, the sums of the 8 sub-blocks of 32
//   [q8_off, ...)         per column: the row as plain block_q8_K
// Q6_K weights: the same, except [corr_off, ...) holds per super-block, per column 16 int16, the
// sums of the 16 groups of 16 (block_q8_K bsums).
// Slots of columns that were not prepared are never read.
size_t ggml_x_rp_set_size(int64_t k);
size_t ggml_x_rp_set_dx_off(int64_t k);
size_t ggml_x_rp_set_corr_off(int64_t k);
// column j's plain q8_0 row in a set
const void * ggml_x_rp_set_q8(const uint8_t * set, int64_t k, int j);
// prepares F32 row x (k elements) as column j of a set of nc columns
void ggml_x_rp_prep(enum ggml_type wtype, const float * x, int64_t k, uint8_t * set, int j, int nc);
// the same for blocks b0..b1-1 only (Q4_0 / Q8_0; x is still the whole row): pieces prepared
// separately give the bytes of ggml_x_rp_prep
void ggml_x_rp_prep_blocks(enum ggml_type wtype, const float * x, int64_t k, int64_t b0, int64_t b1, uint8_t * set,
                           int j, int nc);

// *v = the value of the environment variable name (a byte count), if it is set: the kernels'
// tunable distances and sizes, read when a level's kernel table is set up (relaxed atomic store,
// as tables may be set up while kernels run)
void ggml_x_rp_setting(size_t * v, const char * name);

// Kernel: out[j*8 + r] = dot(row r of the group at grp, column j of set) for j < ncols (1..8,
// the set's column count), nblk blocks per row.
typedef void (*ggml_x_rp_kernel_t)(int64_t nblk, int ncols, const uint8_t * grp, const uint8_t * set, float * out);

// Two groups at once: out[j*16 + r] = dot(row r of the 16 rows (the group at grp, then the one
// at grp + gs), column j of set) for j < ncols (1..8).
typedef void (*ggml_x_rp16_kernel_t)(int64_t nblk, int ncols, const uint8_t * grp, size_t gs, const uint8_t * set,
                                     float * out);

void ggml_x_rp_kernel_q4_0_scalar(int64_t nblk, int ncols, const uint8_t * grp, const uint8_t * set, float * out);
void ggml_x_rp_kernel_q8_0_scalar(int64_t nblk, int ncols, const uint8_t * grp, const uint8_t * set, float * out);
void ggml_x_rp_kernel_q4_K_scalar(int64_t nblk, int ncols, const uint8_t * grp, const uint8_t * set, float * out);
void ggml_x_rp_kernel_q6_K_scalar(int64_t nblk, int ncols, const uint8_t * grp, const uint8_t * set, float * out);

// the kernel of a repacked type in a level's kernel table (gemm.h); NULL: not a repacked type
struct ggml_x_gemm_kernels;
ggml_x_rp_kernel_t ggml_x_rp_kernel_of(const struct ggml_x_gemm_kernels * k, enum ggml_type type);
// its 16-row kernel; NULL: none at this level
ggml_x_rp16_kernel_t ggml_x_rp16_kernel_of(const struct ggml_x_gemm_kernels * k, enum ggml_type type);

#ifdef __cplusplus
}
#endif

#endif // GGML_X_REPACK_H
