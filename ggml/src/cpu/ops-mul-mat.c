// ops-mul-mat.c - matrix products: MUL_MAT and MUL_MAT_ID.
//
// dst[i0, i1, i2, i3] = dot(src0 row (i0, i2 / r2, i3 / r3), src1 row (i1, i2, i3)), where
// r2 = ne12/ne02 and r3 = ne13/ne03 broadcast the weights over the batch dims.
//
// The kernels work in two phases:
//   1. src1 rows (F32, any strides) are converted to the weight type's vec_dot_type into the work
//      buffer, split across threads by rows; skipped when src1 already has the vec_dot_type with
//      contiguous rows. All threads then meet at ggml_cpu_barrier.
//   2. each thread computes parts of dst with the type's vec_dot (or the level's SIMD dot
//      products of gemm.h: F32/F16 rows, and int8 matrix-vector kernels that get src1 prepared
//      in their own layout in phase 1), tiling the loops (blocks of src0 rows x src1 columns) so
//      that weights are reused from cache. MUL_MAT gives each thread a contiguous range of src0
//      rows, and threads that run out steal the back half of the others' (mm_range), so a thread
//      that gets less CPU time computes fewer rows; the packed GEMMs and MUL_MAT_ID hand out
//      chunks from a counter (mm_next_chunk).
// Every dst element is one vec_dot call over the same inputs whatever the thread count, so the
// results do not depend on the number of threads.
//
// Phase 2 is organised around "column sets": up to MM_MAX_COLS src1 columns that use the same
// weight matrix. A strategy function computes a range of src0 rows for such a set; the baseline
// is mm_rows_cols_generic (vec_dot per element). With more than one src1 column and a
// multi-column dot product for the weight type at the active level (quants-simd.h
// ggml_x_vec_dot_cols_t: the k-quants' VNNI kernels of quants-kq-cols-avx512.c on q8_K rows,
// Q4_0/Q8_0's of qgemv-avx512.c on their prepared rows), mm_rows_cols_multi decodes each weight
// row once per group of up to 8 columns instead of once per column.
//
// MUL_MAT with enough src1 columns per weight matrix (MM_GEMM_MIN_N_*) instead uses the packed
// GEMMs of gemm.h: phase 1 then packs src1 into the micro-kernel layout (F32 for F32/F16
// weights, q8_0/q8_K for Q4_0/Q8_0/Q4_K), and phase 2 hands out chunks of weight rows (or
// whole batches) to the threads. As in the reference, F16 weights see src1 rounded to F16 on both
// paths (the GEMM packs the rounded values as F32).
//
// Weights repacked in a CPU_REPACK buffer (repack.c: groups of 8 interleaved rows) take their own
// path (mm_rp_forward): phase 1 prepares every src1 column once (ggml_x_rp_prep, in sets of 8
// columns), phase 2 gives each thread a contiguous range of whole row groups to walk, the idle
// ones stealing the back of the others' (mm_range), and each group is read once for all
// columns: the level's rp_* kernel computes 8 rows x up to 8 columns per call (the AVX-512
// VNNI level's rp16_* kernels 16 rows, two groups in 512-bit vectors, bit for bit the same
// results), and a group stays in L1 while it is multiplied by every column set in turn; the rows
// after the last whole group are plain and use
// the type's vec_dot. With more than MM_RP_MAX_COLS (with the 16-row kernels MM_RP16_MAX_COLS)
// columns per weight matrix, when the int8 GEMM handles the type, chunks of rows are unpacked
// into thread scratch and multiplied there.
// src1 must be F32.

#include "../ggml-impl.h"
#include "cpu/ops.h"
#include "cpu/traits.h"
#include "cpu/gemm.h"
#include "cpu/repack.h"
#include "cpu/quants-simd.h"

#include <math.h>
#include <stdlib.h>

#define MM_BLK_ROWS 16 // src0 rows per tile
#define MM_BLK_COLS 4  // src1 columns per tile
#define MM_MAX_COLS 64 // columns per column set
#define MM_ALIGN    64

// smallest src1 column count per weight matrix that uses the packed GEMMs (below it, packing
// the weights costs more than the dot products lose; measured with 4096 x 4096 weights)
#define MM_GEMM_MIN_N_F32 10
#define MM_GEMM_MIN_N_F16 14
#define MM_GEMM_MIN_N_Q   6
// Q4_K weights (not repacked) where the level has their multi-column dot product: up to 16
// columns it beat the int8 GEMM (TinyLlama-shaped layer, 2 threads: 8 columns 1885 against
// 4450 us, 16 columns 3700 against 5030 us; tools/bench/bench-cols.c buft=cpu)
#define MM_GEMM_MIN_N_Q_COLS 17

static inline size_t mm_align(size_t n) {
    return (n + MM_ALIGN - 1) & ~(size_t) (MM_ALIGN - 1);
}

static inline char * mm_align_ptr(void * p) {
    return (char *) (((uintptr_t) p + MM_ALIGN - 1) & ~(uintptr_t) (MM_ALIGN - 1));
}

// contiguous range [*r0, *r1) of n items for thread ith of nth
static void mm_split(int64_t n, int ith, int nth, int64_t * r0, int64_t * r1) {
    const int64_t dr = (n + nth - 1) / nth;
    *r0 = GGML_X_MIN(dr * ith, n);
    *r1 = GGML_X_MIN(*r0 + dr, n);
}

// Dynamic scheduling: work is cut into chunks (several per thread); thread ith first takes chunk
// ith, then claims further chunks from a counter shared through the work buffer's first cache
// line. A thread that gets less CPU time (other processes on the machine) then simply takes fewer
// chunks. The counter is set by thread 0 before the node's first barrier. Which thread computes
// a chunk never changes the result.
#define MM_CHUNKS_PER_THREAD 4

static inline int64_t * mm_counter(const struct ggml_cpu_ctx * cc) {
    return (int64_t *) mm_align_ptr(cc->wdata);
}

static inline void mm_counter_init(const struct ggml_cpu_ctx * cc) {
    if (cc->ith == 0) {
        __atomic_store_n(mm_counter(cc), (int64_t) cc->nth, __ATOMIC_RELAXED);
    }
}

static inline int64_t mm_next_chunk(const struct ggml_cpu_ctx * cc, int64_t * next) {
    if (*next < 0) {
        *next = 0;
        return cc->ith;
    }
    return __atomic_fetch_add(mm_counter(cc), 1, __ATOMIC_RELAXED);
}

// Ranges: the schedule of row walks that stream weights (the repack kernels, rows of plain
// weights). Thread t owns a contiguous range of items (row groups or rows; an equal share) and
// takes pieces from its front; a thread whose range is empty steals the back half of the largest
// remaining range and walks that the same way (so it can be stolen from in turn). A thread's
// weight stream is then contiguous, apart from the few steals: the kernels' far prefetch, which
// runs past the end of a piece, lands in the thread's own next piece. (Chunks handed out from
// one counter put the prefetch past every chunk's end into another thread's chunk: at 2 threads a
// 2048 x 2048 Q4_0 mat-vec in CPU_REPACK read about 60 % of the read bandwidth with 18 chunks,
// 75 % with 6; the TinyLlama-shaped layer went from 0.78 to 0.90 with ranges.) A thread that gets
// less CPU time has the end of its range taken by the others.
// A range is one 64-bit word, [lo, hi) as lo | hi << 32, in a cache line of its own after the
// counter's (mm_sched_end: the node's data after them); every change is a compare-and-swap, and
// an item, once taken, is never in a range again (so a stale word never matches).

// Units a thread takes from its range at a time (one compare-and-swap each; with 8 columns a
// piece of one row pair costs about a microsecond, and pieces of 4 measured a little faster in
// the TinyLlama-shaped np8 decode).
#define MM_RANGE_PIECE 4

static inline uint64_t * mm_range(const struct ggml_cpu_ctx * cc, int t) {
    return (uint64_t *) (mm_align_ptr(cc->wdata) + (size_t) (1 + t) * MM_ALIGN);
}

// work bytes of the counter and the ranges (with the alignment slack)
static inline size_t mm_sched_size(int n_threads) {
    return (size_t) (2 + n_threads) * MM_ALIGN;
}

// the node's work data after the counter and the ranges
static inline char * mm_sched_end(const struct ggml_cpu_ctx * cc) {
    return mm_align_ptr(cc->wdata) + (size_t) (1 + cc->nth) * MM_ALIGN;
}

static inline uint64_t mm_range_word(int64_t lo, int64_t hi) {
    return (uint64_t) lo | ((uint64_t) hi << 32);
}

// thread ith's share of n items in whole units; published by the node's next barrier
static void mm_range_init(const struct ggml_cpu_ctx * cc, int64_t n, int64_t unit) {
    const int64_t per = ((n + unit - 1) / unit + cc->nth - 1) / cc->nth * unit;
    const int64_t lo = GGML_X_MIN(n, per * cc->ith);
    __atomic_store_n(mm_range(cc, cc->ith), mm_range_word(lo, GGML_X_MIN(n, lo + per)), __ATOMIC_RELAXED);
}

// the first piece of at most `piece` items of the thread's range into [*i0, *i1); false: empty
static bool mm_range_front(uint64_t * r, int64_t piece, int64_t * i0, int64_t * i1) {
    uint64_t w = __atomic_load_n(r, __ATOMIC_RELAXED);
    for (;;) {
        const int64_t lo = (int64_t) (uint32_t) w, hi = (int64_t) (w >> 32);
        if (lo >= hi) {
            return false;
        }
        const int64_t e = GGML_X_MIN(hi, lo + piece);
        if (__atomic_compare_exchange_n(r, &w, mm_range_word(e, hi), false, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
            *i0 = lo;
            *i1 = e;
            return true;
        }
    }
}

// the back half (whole units; all of it when a unit or less is left) of the largest other range
// becomes the thread's range; false: every range is empty
static bool mm_range_steal(const struct ggml_cpu_ctx * cc, int64_t unit) {
    for (;;) {
        int victim = -1;
        int64_t most = 0;
        uint64_t vw = 0;
        for (int t = 0; t < cc->nth; t++) {
            const uint64_t w = __atomic_load_n(mm_range(cc, t), __ATOMIC_RELAXED);
            const int64_t left = (int64_t) (w >> 32) - (int64_t) (uint32_t) w;
            if (t != cc->ith && left > most) {
                victim = t;
                most = left;
                vw = w;
            }
        }
        if (victim < 0) {
            return false;
        }
        const int64_t lo = (int64_t) (uint32_t) vw, hi = (int64_t) (vw >> 32);
        const int64_t take = most <= unit ? most : GGML_X_MAX(unit, most / 2 / unit * unit);
        if (__atomic_compare_exchange_n(mm_range(cc, victim), &vw, mm_range_word(lo, hi - take), false,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
            __atomic_store_n(mm_range(cc, cc->ith), mm_range_word(hi - take, hi), __ATOMIC_RELAXED);
            return true;
        }
    }
}

// the thread's next piece [*i0, *i1) (from its range, else stolen); false: all items are taken
static bool mm_range_next(const struct ggml_cpu_ctx * cc, int64_t piece, int64_t unit, int64_t * i0, int64_t * i1) {
    while (!mm_range_front(mm_range(cc, cc->ith), piece, i0, i1)) {
        if (!mm_range_steal(cc, unit)) {
            return false;
        }
    }
    return true;
}

// chunk size: a multiple of unit, about MM_CHUNKS_PER_THREAD chunks per thread
static int64_t mm_chunk_size(int64_t n, int nth, int64_t unit) {
    const int64_t want = (n + (int64_t) nth * MM_CHUNKS_PER_THREAD - 1) / ((int64_t) nth * MM_CHUNKS_PER_THREAD);
    return GGML_X_MAX(unit, (want + unit - 1) / unit * unit);
}

static size_t mm_row_size(enum ggml_type type, int64_t ne) {
    const ggml_type_traits_t * tt = ggml_x_cpu_type_traits(type);
    return tt->type_size * (size_t) (ne / tt->blck_size);
}

// ---------------------------------------------------------------------------------------------
// src1 conversion (phase 1)

// How src1 is fed to vec_dot. direct: src1 rows are used in place (src1 has the vec_dot_type
// with contiguous rows); otherwise they are converted into the work buffer.
struct mm_src1 {
    enum ggml_type vd_type;  // vec_dot_type of the weights
    bool   direct;
    bool   gather;           // src1 rows are not contiguous F32: gather into a float row first
    size_t row_size;         // bytes of one converted row
    int64_t ne10, ne11, ne12, ne13;
    ggml_vec_dot_t    dot;   // weight row . converted src1 row
    ggml_x_vec_dot_cols_t dotc; // multi-column dot product (quants-simd.h); NULL: none
    ggml_from_float_t conv;  // F32 row -> converted row (NULL: F32 copy)
};

// the dot product of weights of type wtype used on the dot-product path, and the type src1 rows
// are fed to it in
static ggml_vec_dot_t mm_dot_for(enum ggml_type wtype, enum ggml_type * act_type) {
    const struct ggml_x_gemm_kernels * k = ggml_x_gemm_kernels_active();
    if (wtype == GGML_TYPE_F32 && k->dot_f32 != NULL) {
        *act_type = GGML_TYPE_F32;
        return k->dot_f32;
    }
    if (wtype == GGML_TYPE_F16 && k->dot_f16 != NULL) {
        *act_type = GGML_TYPE_F16;
        return k->dot_f16;
    }
    const ggml_type_traits_t * tw = ggml_x_cpu_type_traits(wtype);
    *act_type = tw->vec_dot_type;
    return tw->vec_dot;
}

static bool mm_src1_plan(const struct ggml_tensor * w, const struct ggml_tensor * b, struct mm_src1 * p) {
    const ggml_type_traits_t * tw = ggml_x_cpu_type_traits(w->type);
    if (tw == NULL) {
        return false;
    }
    p->dot  = mm_dot_for(w->type, &p->vd_type);
    p->ne10 = b->ne[0];
    p->ne11 = b->ne[1];
    p->ne12 = b->ne[2];
    p->ne13 = b->ne[3];
    p->direct   = b->type == p->vd_type && b->nb[0] == ggml_x_cpu_type_traits(b->type)->type_size;
    p->gather   = !(b->type == GGML_TYPE_F32 && b->nb[0] == sizeof(float));
    p->row_size = mm_row_size(p->vd_type, p->ne10);
    p->conv     = p->vd_type == GGML_TYPE_F32 ? NULL : ggml_x_cpu_type_traits(p->vd_type)->from_float;

    // multi-column dot products on vec_dot_type rows: for several columns (ne11 > 1) they
    // decode each weight block once per column set; a single column keeps the type's vec_dot
    // (measured as fast or faster for one column) or the int8 matrix-vector kernels where the
    // level has one for the type. Not while a test runs MUL_MAT at a lower level than the quant
    // kernels' (ggml_x_gemm_testing_set_level). The choice depends on the node only, never on
    // the thread count.
    const struct ggml_x_gemm_kernels * k = ggml_x_gemm_kernels_active();
    p->dotc = k->level == ggml_x_cpu_level() && p->ne11 > 1 ?
        ggml_x_quant_dot_cols(ggml_x_quant_kernels_active(), w->type) : NULL;

    // int8 matrix-vector kernels: F32 src1 rows prepared in their own layout
    if (b->type == GGML_TYPE_F32 && k->qgemv_prep_size != NULL && p->dotc == NULL) {
        ggml_from_float_t prep = NULL;
        ggml_vec_dot_t dot = NULL;
        ggml_x_vec_dot_cols_t dotc = NULL; // several prepared rows at once
        switch (w->type) {
            case GGML_TYPE_Q4_0: prep = k->qgemv_prep_q4_0; dot = k->qgemv_q4_0; dotc = k->qgemv_cols_q4_0; break;
            case GGML_TYPE_Q8_0: prep = k->qgemv_prep_q8_0; dot = k->qgemv_q8_0; dotc = k->qgemv_cols_q8_0; break;
            case GGML_TYPE_Q4_K: prep = k->qgemv_prep_q4_K; dot = k->qgemv_q4_K; break;
            default: break;
        }
        if (prep != NULL && dot != NULL) {
            p->direct   = false;
            p->dot      = dot;
            p->conv     = prep;
            p->row_size = mm_align(k->qgemv_prep_size(w->type, p->ne10));
            p->dotc     = p->ne11 > 1 ? dotc : NULL;
        }
    }
    return true;
}

static size_t mm_src1_work_size(const struct mm_src1 * p, int n_threads) {
    if (p->direct) {
        return mm_sched_size(n_threads);
    }
    size_t size = mm_sched_size(n_threads) + mm_align(p->row_size * (size_t) (p->ne11 * p->ne12 * p->ne13));
    if (p->gather) {
        size += (size_t) n_threads * mm_align((size_t) p->ne10 * sizeof(float));
    }
    return size;
}

// read element i0 of a src1 row as float (F32 or F16; only used on the gather path)
static inline float mm_load(enum ggml_type type, const char * p) {
    return type == GGML_TYPE_F16 ? GGML_FP16_TO_FP32(*(const ggml_fp16_t *) p) : *(const float *) p;
}

// Phase 1. Returns the base of the converted rows (row (i11, i12, i13) at index
// i11 + ne11*(i12 + ne12*i13)), or NULL when src1 is used in place. Ends with a barrier when it
// converted anything.
static const char * mm_convert_src1(const struct ggml_cpu_ctx * cc, const struct ggml_tensor * b,
                                    const struct mm_src1 * p) {
    if (p->direct) {
        return NULL;
    }
    char * base = mm_sched_end(cc);
    const size_t conv_size = mm_align(p->row_size * (size_t) (p->ne11 * p->ne12 * p->ne13));
    float * tmp = (float *) (base + conv_size + (size_t) cc->ith * mm_align((size_t) p->ne10 * sizeof(float)));

    const int64_t nr = p->ne11 * p->ne12 * p->ne13;
    int64_t ir0, ir1;
    mm_split(nr, cc->ith, cc->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        const int64_t i13 = ir / (p->ne11 * p->ne12);
        const int64_t i12 = (ir / p->ne11) % p->ne12;
        const int64_t i11 = ir % p->ne11;
        const char * src = (const char *) b->data + i11*b->nb[1] + i12*b->nb[2] + i13*b->nb[3];
        char * out = base + (size_t) ir * p->row_size;
        const float * row = (const float *) src;
        if (p->gather) {
            for (int64_t i10 = 0; i10 < p->ne10; i10++) {
                tmp[i10] = mm_load(b->type, src + i10*b->nb[0]);
            }
            row = tmp;
        }
        if (p->conv == NULL) {
            memcpy(out, row, (size_t) p->ne10 * sizeof(float));
        } else {
            p->conv(row, out, (int) p->ne10);
        }
    }
    ggml_cpu_barrier(cc);
    return base;
}

// pointer to src1 row (i11, i12, i13) as vec_dot sees it
static inline const char * mm_src1_row(const struct ggml_tensor * b, const struct mm_src1 * p, const char * conv,
                                       int64_t i11, int64_t i12, int64_t i13) {
    if (conv == NULL) {
        return (const char *) b->data + i11*b->nb[1] + i12*b->nb[2] + i13*b->nb[3];
    }
    return conv + (size_t) (i11 + p->ne11*(i12 + p->ne12*i13)) * p->row_size;
}

// ---------------------------------------------------------------------------------------------
// phase 2 strategies

// A set of src1 columns that share one weight matrix.
struct mm_cols {
    int n;
    const void * b[MM_MAX_COLS]; // vec_dot-ready src1 rows
    char * d[MM_MAX_COLS];       // dst element of src0 row 0 for each column
};

struct mm_weights {
    const char * a;     // row 0 of the weight matrix
    size_t nb1;         // byte stride between its rows
    size_t d_nb0;       // byte stride between dst elements along i0
    int k;              // row length (ne00)
    ggml_vec_dot_t dot;
    ggml_x_vec_dot_cols_t dotc;
};

typedef void (*mm_strategy_t)(const struct mm_weights * w, int64_t ir0, int64_t ir1, const struct mm_cols * c);

// baseline: one vec_dot per element, tiles of MM_BLK_ROWS rows x MM_BLK_COLS columns
static void mm_rows_cols_generic(const struct mm_weights * w, int64_t ir0, int64_t ir1, const struct mm_cols * c) {
    for (int64_t ib = ir0; ib < ir1; ib += MM_BLK_ROWS) {
        const int64_t ie = GGML_X_MIN(ib + MM_BLK_ROWS, ir1);
        for (int jb = 0; jb < c->n; jb += MM_BLK_COLS) {
            const int je = GGML_X_MIN(jb + MM_BLK_COLS, c->n);
            for (int64_t ir = ib; ir < ie; ir++) {
                const char * arow = w->a + (size_t) ir * w->nb1;
                const size_t doff = (size_t) ir * w->d_nb0;
                for (int j = jb; j < je; j++) {
                    float s;
                    w->dot(w->k, &s, arow, c->b[j]);
                    *(float *) (c->d[j] + doff) = s;
                }
            }
        }
    }
}

// multi-column dot products: each weight row is decoded once per group of MM_DOTC_COLS columns
// (their activation rows stay in L1/L2); tiles of MM_BLK_ROWS rows keep a row tile in cache
// for the next group. Every element is computed as by dotc with the column alone, so the
// column grouping (and hence the thread split) does not change results.
#define MM_DOTC_COLS 8

static void mm_rows_cols_multi(const struct mm_weights * w, int64_t ir0, int64_t ir1, const struct mm_cols * c) {
    float s[MM_DOTC_COLS];
    for (int64_t ib = ir0; ib < ir1; ib += MM_BLK_ROWS) {
        const int64_t ie = GGML_X_MIN(ib + MM_BLK_ROWS, ir1);
        for (int jb = 0; jb < c->n; jb += MM_DOTC_COLS) {
            const int nc = GGML_X_MIN(MM_DOTC_COLS, c->n - jb);
            for (int64_t ir = ib; ir < ie; ir++) {
                w->dotc(w->k, s, w->a + (size_t) ir * w->nb1, &c->b[jb], nc);
                const size_t doff = (size_t) ir * w->d_nb0;
                for (int j = 0; j < nc; j++) {
                    *(float *) (c->d[jb + j] + doff) = s[j];
                }
            }
        }
    }
}

static mm_strategy_t mm_pick_strategy(const struct ggml_tensor * w, const struct mm_src1 * p) {
    (void) w;
    return p->dotc != NULL ? mm_rows_cols_multi : mm_rows_cols_generic;
}

// ---------------------------------------------------------------------------------------------
// supports / work size (shared by MUL_MAT and MUL_MAT_ID)

static bool mm_supports_types(const struct ggml_tensor * w, const struct ggml_tensor * b, const struct ggml_tensor * dst) {
    if (dst->type != GGML_TYPE_F32 || !ggml_x_type_valid(w->type) || !ggml_x_type_valid(b->type)) {
        return false;
    }
    const ggml_type_traits_t * tw = ggml_x_cpu_type_traits(w->type);
    if (tw->vec_dot == NULL || !ggml_x_type_valid(tw->vec_dot_type)) {
        return false;
    }
    const ggml_type_traits_t * tv = ggml_x_cpu_type_traits(tw->vec_dot_type);
    // weights: rows must be contiguous whole blocks
    if (w->nb[0] != tw->type_size || w->ne[0] % tw->blck_size != 0 || w->ne[0] % tv->blck_size != 0) {
        return false;
    }
    if (w->ne[0] > INT32_MAX) {
        return false;
    }
    if (b->type == tw->vec_dot_type) {
        // used in place when its rows are contiguous; otherwise only F32/F16 can be gathered
        if (b->nb[0] == tv->type_size) {
            return true;
        }
        return (b->type == GGML_TYPE_F32 || b->type == GGML_TYPE_F16);
    }
    if (b->type != GGML_TYPE_F32) {
        return false;
    }
    return tw->vec_dot_type == GGML_TYPE_F32 || tv->from_float != NULL;
}

// ---------------------------------------------------------------------------------------------
// MUL_MAT

static bool mul_mat_supports(const struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    if (a == NULL || b == NULL) {
        return false;
    }
    if (a->ne[0] != b->ne[0] || a->ne[2] == 0 || a->ne[3] == 0 ||
        b->ne[2] % a->ne[2] != 0 || b->ne[3] % a->ne[3] != 0) {
        return false;
    }
    if (dst->ne[0] != a->ne[1] || dst->ne[1] != b->ne[1] || dst->ne[2] != b->ne[2] || dst->ne[3] != b->ne[3]) {
        return false;
    }
    if (ggml_x_rp_reads_packed(a)) {
        // repacked weights: the tensor itself (not a view), F32 src1
        if (!ggml_x_rp_is_packed(a, NULL) || b->type != GGML_TYPE_F32) {
            return false;
        }
    }
    return mm_supports_types(a, b, dst);
}

// ---------------------------------------------------------------------------------------------
// MUL_MAT through the packed GEMMs (gemm.h)

enum mm_gemm_kind { MM_GEMM_NONE, MM_GEMM_F, MM_GEMM_Q };

struct mm_gemm_plan {
    enum mm_gemm_kind kind;
    int64_t m, n, k, nbatch;   // rows of W, src1 columns, row length, batches (ne12*ne13)
    int     panel;             // src1 columns per X panel (phase 1 work unit)
    int     row_unit;          // W rows per panel (phase 2 split unit)
    size_t  xpack;             // X pack bytes of one batch (aligned)
    size_t  thread;            // per-thread scratch: packing buffer, float row, q8 row (aligned)
    size_t  scratch_off;       // offset of the float row in a thread's scratch
    size_t  q8_off;            // offset of the q8 row
    bool    packed;            // W is repacked (CPU_REPACK): row chunks are unpacked first
    struct ggml_x_rp_layout rp;
    int64_t rchunk_max;        // rows per chunk at most (packed W)
    size_t  unpack_off;        // offset of the unpacked rows in a thread's scratch
};

// rows of repacked weights unpacked at a time for the GEMM
#define MM_RP_UNPACK_ROWS 64
// src1 columns up to which weights in CPU_REPACK take the repack kernels (sets of
// GGML_X_RP_COLS columns, each weight group read once for all of them); more columns (prompts)
// take the int8 GEMM on unpacked rows. At 9-16 columns (batched decode of that many sequences)
// the GEMM path's unpacking cost about 2x the 8-row repack kernels (np16 28-75 vs 83 tok/s on
// the TinyLlama-shaped Q4_0 model), so the switch is well above one column set. With the 16-row
// kernels (AVX-512 VNNI) the repack path costs about half the GEMM's at 65 columns and the same
// at 256 (TinyLlama-shaped Q4_0, Q8_0, Q4_K layers, 2 threads: tools/bench/bench-cols.c), so
// the switch moves there.
#define MM_RP_MAX_COLS   (8 * GGML_X_RP_COLS)
#define MM_RP16_MAX_COLS (32 * GGML_X_RP_COLS)

static enum mm_gemm_kind mm_gemm_kind(const struct ggml_tensor * a, const struct ggml_tensor * b,
                                      const struct ggml_tensor * dst) {
    const int mode = ggml_x_gemm_testing_mode();
    if (mode == 1 || dst->nb[0] != sizeof(float)) {
        return MM_GEMM_NONE;
    }
    const int64_t n = b->ne[1];
    if ((a->type == GGML_TYPE_F32 || a->type == GGML_TYPE_F16) && ggml_x_gemm_f_supported(a->type)) {
        // src1: F32 (any strides) or F16 (F16 weights), gathered to F32 rows
        if (mode == 2 || n >= (a->type == GGML_TYPE_F16 ? MM_GEMM_MIN_N_F16 : MM_GEMM_MIN_N_F32)) {
            return MM_GEMM_F;
        }
        return MM_GEMM_NONE;
    }
    if (ggml_x_qgemm_supported(a->type)) {
        const enum ggml_type vd = ggml_x_cpu_type_traits(a->type)->vec_dot_type;
        const bool b_ok = b->type == GGML_TYPE_F32 || (b->type == vd && b->nb[0] == ggml_x_cpu_type_traits(vd)->type_size);
        // Q4_K with the level's multi-column dot product (quants-kq-cols-avx512.c: each
        // super-block decoded once for 8 columns) stays on it for longer
        const bool cols = a->type == GGML_TYPE_Q4_K && ggml_x_gemm_kernels_active()->level == ggml_x_cpu_level() &&
                          ggml_x_quant_dot_cols(ggml_x_quant_kernels_active(), a->type) != NULL;
        if (b_ok && (mode == 2 || n >= (cols ? MM_GEMM_MIN_N_Q_COLS : MM_GEMM_MIN_N_Q))) {
            return MM_GEMM_Q;
        }
    }
    return MM_GEMM_NONE;
}

static bool mm_gemm_plan(const struct ggml_tensor * dst, struct mm_gemm_plan * g) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    memset(g, 0, sizeof(*g));
    g->packed = ggml_x_rp_is_packed(a, &g->rp);
    // Q6_K's 16-row kernel serves decode batches; where prefill hands over to the GEMM stays
    // where the 8-row kernel had it (not measured for Q6_K)
    const int64_t rp_max = ggml_x_rp16_kernel_of(ggml_x_gemm_kernels_active(), a->type) != NULL &&
        a->type != GGML_TYPE_Q6_K ? MM_RP16_MAX_COLS : MM_RP_MAX_COLS;
    if (g->packed && b->ne[1] <= rp_max) {
        return false; // the repack kernels
    }
    g->kind = mm_gemm_kind(a, b, dst);
    if (g->kind == MM_GEMM_NONE) {
        return false;
    }
    const struct ggml_x_gemm_kernels * kr = ggml_x_gemm_kernels_active();
    g->m = a->ne[1];
    g->n = b->ne[1];
    g->k = a->ne[0];
    g->nbatch = b->ne[2] * b->ne[3];
    size_t pack;
    size_t q8 = 0;
    if (g->kind == MM_GEMM_F) {
        g->panel    = kr->nr;
        g->row_unit = kr->mr;
        g->xpack    = mm_align(ggml_x_gemm_f_xpack_size(g->n, g->k));
        pack        = ggml_x_gemm_f_thread_size(g->k);
    } else {
        g->panel    = kr->qc;
        g->row_unit = kr->qr;
        g->xpack    = mm_align(ggml_x_qgemm_xpack_size(a->type, g->n, g->k));
        pack        = ggml_x_qgemm_thread_size(a->type, g->k);
        q8          = mm_row_size(ggml_x_cpu_type_traits(a->type)->vec_dot_type, g->k);
    }
    if (g->kind == MM_GEMM_F && a->type == GGML_TYPE_F16) {
        q8 = (size_t) g->k * sizeof(ggml_fp16_t); // src1 rows rounded to F16
    }
    g->scratch_off = mm_align(pack);
    g->q8_off      = g->scratch_off + mm_align((size_t) g->k * sizeof(float));
    g->thread      = g->q8_off + mm_align(q8);
    if (g->packed) {
        g->rchunk_max = (MM_RP_UNPACK_ROWS + g->row_unit - 1) / g->row_unit * g->row_unit;
        g->unpack_off = g->thread;
        g->thread    += mm_align((size_t) g->rchunk_max * g->rp.row_size);
    }
    return true;
}

static size_t mm_gemm_work_size(const struct mm_gemm_plan * g, int n_threads) {
    return 2 * MM_ALIGN + (size_t) g->nbatch * g->xpack + (size_t) n_threads * g->thread;
}

// Phase 1: packs every src1 column of every batch; work units are (batch, X panel).
static void mm_gemm_pack_src1(const struct ggml_cpu_ctx * cc, const struct ggml_tensor * a,
                              const struct ggml_tensor * b, const struct mm_gemm_plan * g,
                              char * xbase, char * tscratch) {
    const int64_t ne12 = b->ne[2];
    const int64_t np = (g->n + g->panel - 1) / g->panel;
    float * rowbuf = (float *) (tscratch + g->scratch_off);
    void * q8buf = tscratch + g->q8_off;
    const bool f32_rows = b->type == GGML_TYPE_F32 && b->nb[0] == sizeof(float);
    const ggml_from_float_t quantize = g->kind == MM_GEMM_Q ?
        ggml_x_cpu_type_traits(ggml_x_cpu_type_traits(a->type)->vec_dot_type)->from_float : NULL;

    int64_t u0, u1;
    mm_split(g->nbatch * np, cc->ith, cc->nth, &u0, &u1);
    for (int64_t u = u0; u < u1; u++) {
        const int64_t bi = u / np, p = u % np;
        const int64_t i12 = bi % ne12, i13 = bi / ne12;
        char * xp = xbase + (size_t) bi * g->xpack;
        const int64_t j1 = GGML_X_MIN(g->n, (p + 1) * g->panel);
        for (int64_t j = p * g->panel; j < j1; j++) {
            const char * src = (const char *) b->data + j*b->nb[1] + i12*b->nb[2] + i13*b->nb[3];
            if (g->kind == MM_GEMM_Q && b->type != GGML_TYPE_F32) {
                // already in the vec_dot type with contiguous rows
                ggml_x_qgemm_pack_x(a->type, src, j, g->k, xp);
                continue;
            }
            const float * row = (const float *) src;
            if (!f32_rows) {
                for (int64_t i10 = 0; i10 < g->k; i10++) {
                    rowbuf[i10] = mm_load(b->type, src + i10*b->nb[0]);
                }
                row = rowbuf;
            }
            if (g->kind == MM_GEMM_F) {
                if (a->type == GGML_TYPE_F16 && b->type == GGML_TYPE_F32) {
                    ggml_fp32_to_fp16_row(row, (ggml_fp16_t *) q8buf, (int) g->k);
                    ggml_fp16_to_fp32_row((const ggml_fp16_t *) q8buf, rowbuf, (int) g->k);
                    row = rowbuf;
                }
                ggml_x_gemm_f_pack_x(row, j, g->k, (float *) xp);
            } else {
                quantize(row, q8buf, (int) g->k);
                ggml_x_qgemm_pack_x(a->type, q8buf, j, g->k, xp);
            }
        }
    }
}

static void mm_gemm_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst, const struct mm_gemm_plan * g) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    char * xbase = mm_align_ptr(cc->wdata) + MM_ALIGN; // after the scheduling counter
    char * tscratch = xbase + (size_t) g->nbatch * g->xpack + (size_t) cc->ith * g->thread;

    mm_counter_init(cc);
    mm_gemm_pack_src1(cc, a, b, g, xbase, tscratch);
    ggml_cpu_barrier(cc);

    if (g->m == 0 || g->n == 0) {
        return;
    }
    const int64_t ne12 = b->ne[2];
    const int64_t r2 = ne12 / a->ne[2];
    const int64_t r3 = b->ne[3] / a->ne[3];
    const int64_t ldd = (int64_t) (dst->nb[1] / sizeof(float));

    // work units: whole batches when there are enough of them, else chunks of rows of every batch
    const bool by_batch = g->nbatch >= 2 * (int64_t) cc->nth && !g->packed;
    int64_t rchunk = by_batch ? g->m : mm_chunk_size(g->m, cc->nth, g->row_unit);
    if (g->packed) {
        rchunk = GGML_X_MIN(rchunk, g->rchunk_max);
    }
    const int64_t nrc = (g->m + rchunk - 1) / rchunk;
    const int64_t units = g->nbatch * nrc;
    int64_t next = -1;
    for (int64_t u = mm_next_chunk(cc, &next); u < units; u = mm_next_chunk(cc, &next)) {
        const int64_t bi = u / nrc;
        const int64_t i0 = (u % nrc) * rchunk;
        const int64_t i1 = GGML_X_MIN(g->m, i0 + rchunk);
        const int64_t i12 = bi % ne12, i13 = bi / ne12;
        const char * w = (const char *) a->data + (i12 / r2)*a->nb[2] + (i13 / r3)*a->nb[3];
        const char * xp = xbase + (size_t) bi * g->xpack;
        float * d = (float *) ((char *) dst->data + i12*dst->nb[2] + i13*dst->nb[3]);
        if (g->packed) {
            // unpack rows [i0, i1) and multiply them as rows [0, i1 - i0)
            char * rows = tscratch + g->unpack_off;
            ggml_x_rp_unpack(&g->rp, (const char *) a->data, rows, (size_t) i0 * g->rp.row_size,
                             (size_t) (i1 - i0) * g->rp.row_size);
            ggml_x_qgemm_compute(a->type, rows, g->rp.row_size, 0, i1 - i0, g->n, g->k, xp, d + i0, ldd, tscratch);
        } else if (g->kind == MM_GEMM_F) {
            ggml_x_gemm_f_compute(a->type, w, a->nb[1], i0, i1, g->n, g->k, (const float *) xp, d, ldd, tscratch);
        } else {
            ggml_x_qgemm_compute(a->type, w, a->nb[1], i0, i1, g->n, g->k, xp, d, ldd, tscratch);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// MUL_MAT of repacked weights (repack.h)

struct mm_rp_plan {
    struct ggml_x_rp_layout l;
    ggml_x_rp_kernel_t kern;
    ggml_x_rp16_kernel_t kern16; // two groups at once (NULL: none)
    int64_t n;       // src1 columns (all batches: the weights are 2-D)
    size_t  set;     // bytes of one prepared column set (GGML_X_RP_COLS columns)
    size_t  tmp;     // per-thread F32 row (src1 rows not contiguous)
};

static bool mm_rp_plan(const struct ggml_tensor * dst, struct mm_rp_plan * p) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    if (!ggml_x_rp_is_packed(a, &p->l) || b->type != GGML_TYPE_F32) {
        return false;
    }
    const struct ggml_x_gemm_kernels * k = ggml_x_gemm_kernels_active();
    p->kern = ggml_x_rp_kernel_of(k, p->l.type);
    p->kern16 = ggml_x_rp16_kernel_of(k, p->l.type);
    p->n    = b->ne[1] * b->ne[2] * b->ne[3];
    p->set  = mm_align(ggml_x_rp_set_size(a->ne[0]));
    p->tmp  = b->nb[0] == sizeof(float) ? 0 : mm_align((size_t) b->ne[0] * sizeof(float));
    return true;
}

// work: the schedule (mm_range), the prepared column sets, then each thread's F32 row
static size_t mm_rp_work_size(const struct mm_rp_plan * p, int n_threads) {
    const size_t nsets = (size_t) ((p->n + GGML_X_RP_COLS - 1) / GGML_X_RP_COLS);
    return mm_sched_size(n_threads) + nsets * p->set + (size_t) n_threads * p->tmp;
}

// smallest column set that the 16-row kernels (two weight streams) take (see mm_rp_forward);
// GGML_X_RP16_MIN overrides it for every type (measurements; read once)
static int mm_rp16_min_cols(enum ggml_type type) {
    static int env = -1; // -1: not read yet, 0: unset
    int e = __atomic_load_n(&env, __ATOMIC_RELAXED);
    if (e < 0) {
        const char * v = getenv("GGML_X_RP16_MIN");
        e = v != NULL && atoi(v) > 0 ? atoi(v) : 0;
        __atomic_store_n(&env, e, __ATOMIC_RELAXED);
    }
    if (e > 0) {
        return e;
    }
    return type == GGML_TYPE_Q6_K ? 2 : 1;
}

// blocks per piece of a column that phase 1 of mm_rp_forward prepares (a multiple of 16: the
// per-block scales of a set's columns then fill whole cache lines)
#define MM_RP_PREP_BLOCKS 16

// dst column pointers of src1 columns j0 .. j0+nc-1 (all batches counted as columns)
static inline void mm_rp_dst_cols(const struct ggml_tensor * dst, int64_t j0, int nc, int64_t ne11, int64_t ne12,
                                  char ** dcol) {
    if (j0 + nc <= ne11) {
        // all in the first matrix of the batch (decode: always): no divisions (three per column
        // and row pair; measured at 8 columns, mul_mat_forward's own share of the CPU went from
        // 2.6 % to 1.2 % without them)
        for (int j = 0; j < nc; j++) {
            dcol[j] = (char *) dst->data + (j0 + j)*dst->nb[1];
        }
        return;
    }
    for (int j = 0; j < nc; j++) {
        const int64_t ic = j0 + j;
        const int64_t i11 = ic % ne11, i12 = (ic / ne11) % ne12, i13 = ic / (ne11 * ne12);
        dcol[j] = (char *) dst->data + i11*dst->nb[1] + i12*dst->nb[2] + i13*dst->nb[3];
    }
}

// out[j*rows + r] (j < nc, r < rows) to rows g*8 .. g*8+rows-1 of the dst columns dcol
static inline void mm_rp_store(const struct ggml_tensor * dst, char * const * dcol, const float * out, int nc, int rows,
                               int64_t g) {
    for (int j = 0; j < nc; j++) {
        char * d = dcol[j] + (size_t) (g * GGML_X_RP_ROWS) * dst->nb[0];
        if (dst->nb[0] == sizeof(float)) {
            // constant sizes: inline vector stores
            if (rows > GGML_X_RP_ROWS) {
                memcpy(d, out + j*rows, 2 * GGML_X_RP_ROWS * sizeof(float));
            } else {
                memcpy(d, out + j*rows, GGML_X_RP_ROWS * sizeof(float));
            }
            continue;
        }
        for (int r = 0; r < rows; r++) {
            *(float *) (d + (size_t) r * dst->nb[0]) = out[j*rows + r];
        }
    }
}

// the dst lines mm_rp_store will write, fetched for writing while the kernel computes
static inline void mm_rp_prefetch_dst(const struct ggml_tensor * dst, char * const * dcol, int nc, int rows, int64_t g) {
    if (dst->nb[0] != sizeof(float)) {
        return;
    }
    for (int j = 0; j < nc; j++) {
        const char * d = dcol[j] + (size_t) (g * GGML_X_RP_ROWS) * sizeof(float);
        __builtin_prefetch(d, 1, 3);
        __builtin_prefetch(d + (size_t) rows * sizeof(float) - 1, 1, 3);
    }
}

static void mm_rp_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst, const struct mm_rp_plan * p) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    const int64_t k = a->ne[0];
    const int64_t ne11 = b->ne[1], ne12 = b->ne[2];
    char * xbase = mm_sched_end(cc);
    const int64_t nsets = (p->n + GGML_X_RP_COLS - 1) / GGML_X_RP_COLS;
    float * tmp = (float *) (xbase + (size_t) nsets * p->set + (size_t) cc->ith * p->tmp);

    // phase 1: every src1 column prepared once. Q4_0/Q8_0: in pieces of whole runs of
    // MM_RP_PREP_BLOCKS blocks, piece-major (thread ith takes the same blocks of every column), so
    // that no two threads write the same cache line of a set (its per-block scales of all
    // columns share lines) and one column keeps every thread busy; Q4_K and Q6_K: by columns.
    const int64_t ngroups = p->l.ngroups;
    const int min16 = mm_rp16_min_cols(p->l.type);
    const bool use16 = p->kern16 != NULL && GGML_X_MIN(p->n, (int64_t) GGML_X_RP_COLS) >= min16;
    const int64_t unit = use16 ? 2 : 1; // the 16-row kernels take groups in pairs
    mm_range_init(cc, ngroups, unit); // for phase 2, published by the barrier below
    const bool by_blocks = p->l.type != GGML_TYPE_Q4_K && p->l.type != GGML_TYPE_Q6_K;
    const int64_t nblk = p->l.nblk;
    const int64_t per = by_blocks ? GGML_X_MAX((int64_t) MM_RP_PREP_BLOCKS,
        ((nblk + cc->nth - 1) / cc->nth + MM_RP_PREP_BLOCKS - 1) / MM_RP_PREP_BLOCKS * MM_RP_PREP_BLOCKS) : nblk;
    const int64_t npiece = (nblk + per - 1) / per;
    int64_t u0, u1;
    mm_split(p->n * npiece, cc->ith, cc->nth, &u0, &u1);
    for (int64_t u = u0; u < u1; u++) {
        const int64_t ic = u % p->n, piece = u / p->n;
        const int64_t b0 = piece * per, b1 = GGML_X_MIN(nblk, b0 + per);
        const int64_t qk = k / nblk; // elements per block
        const int64_t i11 = ic % ne11, i12 = (ic / ne11) % ne12, i13 = ic / (ne11 * ne12);
        const char * src = (const char *) b->data + i11*b->nb[1] + i12*b->nb[2] + i13*b->nb[3];
        const float * row = (const float *) src;
        if (p->tmp != 0) {
            for (int64_t i = b0 * qk; i < b1 * qk; i++) {
                tmp[i] = *(const float *) (src + i*b->nb[0]);
            }
            row = tmp;
        }
        const int64_t set0 = ic / GGML_X_RP_COLS * GGML_X_RP_COLS;
        uint8_t * set = (uint8_t *) xbase + (size_t) (ic / GGML_X_RP_COLS) * p->set;
        const int nc = (int) GGML_X_MIN((int64_t) GGML_X_RP_COLS, p->n - set0);
        if (by_blocks) {
            ggml_x_rp_prep_blocks(p->l.type, row, k, b0, b1, set, (int) (ic - set0), nc);
        } else {
            ggml_x_rp_prep(p->l.type, row, k, set, (int) (ic - set0), nc);
        }
    }
    ggml_cpu_barrier(cc);

    // phase 2: the threads' ranges of whole groups (mm_range), piece by piece; the plain rows
    // after the last whole group (if any) by the last thread first
    const int64_t ne01 = a->ne[1];
    // The 16-row kernels for column sets of at least mm_rp16_min_cols columns: they read two
    // weight streams at once (the two groups). With the prefetch of each stream placed in the
    // next pair (repack-avx512.c) and a contiguous walk per thread, they beat the 8-row kernel's
    // one stream for Q4_0 and Q8_0 from one column on (4096 x 4096 Q4_0, one column: 1 thread
    // 355-410 -> 293-376 us, 2 threads 195-210 -> 175-180 us; Q8_0 1 thread 660-750 -> 570-630
    // us; tools/bench/bench-matvec.c), at half the instructions per weight; Q4_K's from one
    // column too since its prefetch follows the pairs (repack-avx512.c); Q6_K's from 2 columns
    // (with one, 2 threads: 80-81 % of the read bandwidth against 83-85 % for the 8-row kernel).
    // Each pair is walked over all its blocks, even when 8 columns of activations outgrow L1
    // (K > 2048): a walk of 8 pairs at a time in slices of 16 KiB of activations, which kept
    // them in L1, measured slower once the prefetches followed the pairs (they then fetched the
    // pair's next slice, not the next pair's): Q4_0 8 columns, tools/bench/bench-matvec.c, 1 / 2
    // threads, sliced -> whole: K = 4096 663 / 394 -> 547-565 / 326-330 us, K = 5632 (M = 2048)
    // 432-438 / 241-258 -> 368-382 / 198-208 us, K = 11008 1553 / 925 -> 1485 / 798 us; Q8_0 8
    // columns K = 4096 849 / 445 -> 709 / 407 us. Activations missing L1 come from L2, whose
    // bandwidth is far above what these kernels read.
    const ggml_vec_dot_t tail_dot = ggml_x_cpu_type_traits(a->type)->vec_dot;
    char * dcol[GGML_X_RP_COLS];
    float out[GGML_X_RP_COLS * 2 * GGML_X_RP_ROWS];
    const size_t gs = GGML_X_RP_ROWS * p->l.row_size; // bytes of one group
    if (cc->ith == cc->nth - 1 && ne01 > ngroups * GGML_X_RP_ROWS) {
        for (int64_t j0 = 0; j0 < p->n; j0 += GGML_X_RP_COLS) {
            const int nc = (int) GGML_X_MIN((int64_t) GGML_X_RP_COLS, p->n - j0);
            const uint8_t * set = (const uint8_t *) xbase + (size_t) (j0 / GGML_X_RP_COLS) * p->set;
            mm_rp_dst_cols(dst, j0, nc, ne11, ne12, dcol);
            for (int64_t ir = ngroups * GGML_X_RP_ROWS; ir < ne01; ir++) {
                const char * row = (const char *) a->data + (size_t) ir * p->l.row_size;
                for (int j = 0; j < nc; j++) {
                    tail_dot((int) k, (float *) (dcol[j] + ir*dst->nb[0]), row, ggml_x_rp_set_q8(set, k, j));
                }
            }
        }
    }
    int64_t g, g1;
    while (mm_range_next(cc, MM_RANGE_PIECE * unit, unit, &g, &g1)) {
        // a group (or pair) is multiplied by every column set in turn while it is in L1
        for (; g < g1; ) {
            const uint8_t * grp = (const uint8_t *) a->data + (size_t) g * gs;
            const int rows = use16 && g + 1 < g1 ? 2 * GGML_X_RP_ROWS : GGML_X_RP_ROWS;
            for (int64_t j0 = 0; j0 < p->n; j0 += GGML_X_RP_COLS) {
                const int nc = (int) GGML_X_MIN((int64_t) GGML_X_RP_COLS, p->n - j0);
                const uint8_t * set = (const uint8_t *) xbase + (size_t) (j0 / GGML_X_RP_COLS) * p->set;
                mm_rp_dst_cols(dst, j0, nc, ne11, ne12, dcol);
                mm_rp_prefetch_dst(dst, dcol, nc, rows, g);
                if (rows > GGML_X_RP_ROWS && nc >= min16) {
                    p->kern16(p->l.nblk, nc, grp, gs, set, out);
                } else if (rows > GGML_X_RP_ROWS) { // a pair by the 8-row kernel (out[j*16 + r])
                    float o8[GGML_X_RP_COLS * GGML_X_RP_ROWS];
                    for (int h = 0; h < 2; h++) {
                        p->kern(p->l.nblk, nc, grp + (size_t) h * gs, set, o8);
                        for (int j = 0; j < nc; j++) {
                            memcpy(out + j*rows + h*GGML_X_RP_ROWS, o8 + j*GGML_X_RP_ROWS, GGML_X_RP_ROWS * sizeof(float));
                        }
                    }
                } else {
                    p->kern(p->l.nblk, nc, grp, set, out);
                }
                mm_rp_store(dst, dcol, out, nc, rows, g);
            }
            g += rows / GGML_X_RP_ROWS;
        }
    }
}

static size_t mul_mat_work_size(const struct ggml_tensor * dst, int n_threads) {
    struct mm_gemm_plan g;
    if (mm_gemm_plan(dst, &g)) {
        return mm_gemm_work_size(&g, n_threads);
    }
    struct mm_rp_plan rp;
    if (mm_rp_plan(dst, &rp)) {
        return mm_rp_work_size(&rp, n_threads);
    }
    struct mm_src1 p;
    if (!mm_src1_plan(dst->src[0], dst->src[1], &p)) {
        return 0;
    }
    return mm_src1_work_size(&p, n_threads);
}

static void mul_mat_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];

    struct mm_gemm_plan g;
    if (mm_gemm_plan(dst, &g)) {
        mm_gemm_forward(cc, dst, &g);
        return;
    }
    struct mm_rp_plan rp;
    if (mm_rp_plan(dst, &rp)) {
        mm_rp_forward(cc, dst, &rp);
        return;
    }

    struct mm_src1 p;
    mm_src1_plan(a, b, &p);
    const int64_t ne01 = a->ne[1];
    const int64_t ne11 = b->ne[1], ne12 = b->ne[2], ne13 = b->ne[3];
    const int64_t r2 = ne12 / a->ne[2];
    const int64_t r3 = ne13 / a->ne[3];
    const int64_t ncols = ne11 * ne12 * ne13;
    // split by src0 rows when there are enough of them (or few columns), else by columns.
    // One src1 column per weight matrix (attention over a KV cache, a matrix per head): the
    // traversal follows the memory order of the matrices: separate matrices (V) are split by
    // columns, so each thread reads whole matrices in order; matrices whose rows interleave
    // (K: the heads of one cache row side by side) are walked row by row across all of them
    // (mm_interleaved_rows).
    const bool per_matrix = ne11 == 1 && ncols >= cc->nth && ne01 > 1;
    const bool interleaved = per_matrix && a->nb[2] < a->nb[1];
    const bool by_rows = (ne01 >= (int64_t) cc->nth * MM_BLK_ROWS || ncols < cc->nth) &&
                         !(per_matrix && !interleaved && a->nb[2] >= (size_t) ne01 * a->nb[1]);
    // by rows: the threads' ranges of rows (mm_range) in tiles of MM_BLK_ROWS, taken in pieces
    const int64_t piece = MM_RANGE_PIECE * MM_BLK_ROWS;
    if (by_rows) {
        mm_range_init(cc, ne01, MM_BLK_ROWS);
    }
    const char * conv = mm_convert_src1(cc, b, &p);
    if (by_rows && conv == NULL && cc->nth > 1) {
        ggml_cpu_barrier(cc); // the ranges are set
    }
    if (ne01 == 0 || ncols == 0) {
        return;
    }

    const mm_strategy_t strategy = mm_pick_strategy(a, &p);
    struct mm_weights w;
    w.nb1   = a->nb[1];
    w.d_nb0 = dst->nb[0];
    w.k     = (int) a->ne[0];
    w.dot   = p.dot;
    w.dotc  = p.dotc;

    if (interleaved && by_rows) {
        // rows outer, columns (matrices) inner
        int64_t ib, ie;
        while (mm_range_next(cc, piece, MM_BLK_ROWS, &ib, &ie)) {
            for (int64_t ir = ib; ir < ie; ir++) {
                const char * arow = (const char *) a->data + ir*a->nb[1];
                char * drow = (char *) dst->data + ir*dst->nb[0];
                // matrix (i12 / r2, i13 / r3) counted along, no division per element
                for (int64_t i13 = 0, i03 = 0, k3 = 0; i13 < ne13; i13++) {
                    for (int64_t i12 = 0, i02 = 0, k2 = 0; i12 < ne12; i12++) {
                        p.dot((int) a->ne[0], (float *) (drow + i12*dst->nb[2] + i13*dst->nb[3]),
                              arow + i02*a->nb[2] + i03*a->nb[3], mm_src1_row(b, &p, conv, 0, i12, i13));
                        if (++k2 == r2) {
                            k2 = 0;
                            i02++;
                        }
                    }
                    if (++k3 == r3) {
                        k3 = 0;
                        i03++;
                    }
                }
            }
        }
        return;
    }

    // rows: pieces of the threads' ranges of rows (all columns); columns: a static range of
    // columns (all rows)
    int64_t ic0 = 0, ic1 = ncols;
    if (!by_rows) {
        mm_split(ncols, cc->ith, cc->nth, &ic0, &ic1);
    }
    int64_t ir0 = 0, ir1 = ne01;
    for (bool more = by_rows ? mm_range_next(cc, piece, MM_BLK_ROWS, &ir0, &ir1) : true; more;
         more = by_rows && mm_range_next(cc, piece, MM_BLK_ROWS, &ir0, &ir1)) {
        struct mm_cols cols;
        int64_t ic = ic0;
        while (ic < ic1) {
            const int64_t i13 = ic / (ne11 * ne12);
            const int64_t i12 = (ic / ne11) % ne12;
            const int64_t i11 = ic % ne11;
            // columns of this batch, at most MM_MAX_COLS
            const int64_t n = GGML_X_MIN(GGML_X_MIN(ne11 - i11, ic1 - ic), (int64_t) MM_MAX_COLS);
            w.a = (const char *) a->data + (i12 / r2)*a->nb[2] + (i13 / r3)*a->nb[3];
            cols.n = (int) n;
            for (int64_t j = 0; j < n; j++) {
                cols.b[j] = mm_src1_row(b, &p, conv, i11 + j, i12, i13);
                cols.d[j] = (char *) dst->data + (i11 + j)*dst->nb[1] + i12*dst->nb[2] + i13*dst->nb[3];
            }
            strategy(&w, ir0, ir1, &cols);
            ic += n;
        }
    }
}

const struct ggml_cpu_op ggml_cpu_op_mul_mat = {
    .forward   = mul_mat_forward,
    .supports  = mul_mat_supports,
    .work_size = mul_mat_work_size,
};

// ---------------------------------------------------------------------------------------------
// MUL_MAT_ID
//
// src0 = ids (I32 [n_ids, n_rows, ...]), src1 = b, src[2 + e] = as[e]; i32[0] = id, i32[1] = n_as.
// For each src1 row i1: e = ids[id, i1]; dst row i1 = as[e] x (src1 row i1). An expert index
// outside [0, n_as) gives a zero row.

static bool mul_mat_id_supports(const struct ggml_tensor * dst) {
    const struct ggml_tensor * ids = dst->src[0];
    const struct ggml_tensor * b   = dst->src[1];
    const int32_t id   = ggml_x_get_op_params_i32(dst, 0);
    const int32_t n_as = ggml_x_get_op_params_i32(dst, 1);
    if (ids == NULL || b == NULL || ids->type != GGML_TYPE_I32) {
        return false;
    }
    if (n_as < 1 || n_as > GGML_MAX_SRC - 2 || id < 0 || id >= ids->ne[0]) {
        return false;
    }
    if (ids->ne[1] != b->ne[1] || ids->ne[2] == 0 || ids->ne[3] == 0) {
        return false;
    }
    const struct ggml_tensor * a0 = dst->src[2];
    if (a0 == NULL) {
        return false;
    }
    for (int e = 0; e < n_as; e++) {
        const struct ggml_tensor * ae = dst->src[2 + e];
        if (ae == NULL || ae->type != a0->type) {
            return false;
        }
        for (int d = 0; d < GGML_MAX_DIMS; d++) {
            if (ae->ne[d] != a0->ne[d]) {
                return false;
            }
        }
        if (ae->nb[0] != a0->nb[0]) {
            return false;
        }
    }
    if (a0->ne[0] != b->ne[0] || a0->ne[2] == 0 || a0->ne[3] == 0 ||
        b->ne[2] % a0->ne[2] != 0 || b->ne[3] % a0->ne[3] != 0) {
        return false;
    }
    if (dst->ne[0] != a0->ne[1] || dst->ne[1] != b->ne[1] || dst->ne[2] != b->ne[2] || dst->ne[3] != b->ne[3]) {
        return false;
    }
    return mm_supports_types(a0, b, dst);
}

static size_t mul_mat_id_work_size(const struct ggml_tensor * dst, int n_threads) {
    struct mm_src1 p;
    if (!mm_src1_plan(dst->src[2], dst->src[1], &p)) {
        return 0;
    }
    return mm_src1_work_size(&p, n_threads);
}

static inline int32_t mm_expert(const struct ggml_tensor * ids, int32_t id, int64_t i11, int64_t i12, int64_t i13) {
    const char * p = (const char *) ids->data + id*ids->nb[0] + i11*ids->nb[1] +
                     (i12 % ids->ne[2])*ids->nb[2] + (i13 % ids->ne[3])*ids->nb[3];
    return *(const int32_t *) p;
}

static void mul_mat_id_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_tensor * ids = dst->src[0];
    const struct ggml_tensor * b   = dst->src[1];
    const struct ggml_tensor * a0  = dst->src[2];
    const int32_t id   = ggml_x_get_op_params_i32(dst, 0);
    const int32_t n_as = ggml_x_get_op_params_i32(dst, 1);

    struct mm_src1 p;
    mm_src1_plan(a0, b, &p);
    const char * conv = mm_convert_src1(cc, b, &p);

    const int64_t ne01 = a0->ne[1];
    const int64_t ne11 = b->ne[1], ne12 = b->ne[2], ne13 = b->ne[3];
    const int64_t r2 = ne12 / a0->ne[2];
    const int64_t r3 = ne13 / a0->ne[3];
    const int64_t ncols = ne11 * ne12 * ne13;
    if (ne01 == 0 || ncols == 0) {
        return;
    }

    const mm_strategy_t strategy = mm_pick_strategy(a0, &p);
    struct mm_weights w;
    w.nb1   = a0->nb[1];
    w.d_nb0 = dst->nb[0];
    w.k     = (int) a0->ne[0];
    w.dot   = p.dot;
    w.dotc  = p.dotc;

    int64_t ir0 = 0, ir1 = ne01, ic0 = 0, ic1 = ncols;
    if (ne01 >= (int64_t) cc->nth * MM_BLK_ROWS || ncols < cc->nth) {
        mm_split(ne01, cc->ith, cc->nth, &ir0, &ir1);
    } else {
        mm_split(ncols, cc->ith, cc->nth, &ic0, &ic1);
    }
    if (ir0 >= ir1 || ic0 >= ic1) {
        return;
    }

    // columns with an out-of-range expert: zero rows
    for (int64_t ic = ic0; ic < ic1; ic++) {
        const int64_t i13 = ic / (ne11 * ne12);
        const int64_t i12 = (ic / ne11) % ne12;
        const int64_t i11 = ic % ne11;
        const int32_t e = mm_expert(ids, id, i11, i12, i13);
        if (e < 0 || e >= n_as) {
            char * d = (char *) dst->data + i11*dst->nb[1] + i12*dst->nb[2] + i13*dst->nb[3];
            for (int64_t ir = ir0; ir < ir1; ir++) {
                *(float *) (d + ir*dst->nb[0]) = 0.0f;
            }
        }
    }

    // per batch and expert, the columns of this thread that use it
    struct mm_cols cols;
    for (int64_t bstart = ic0; bstart < ic1; ) {
        const int64_t i13 = bstart / (ne11 * ne12);
        const int64_t i12 = (bstart / ne11) % ne12;
        const int64_t i11s = bstart % ne11;
        const int64_t i11e = GGML_X_MIN(ne11, i11s + (ic1 - bstart));
        for (int32_t e = 0; e < n_as; e++) {
            const struct ggml_tensor * ae = dst->src[2 + e];
            w.a = (const char *) ae->data + (i12 / r2)*ae->nb[2] + (i13 / r3)*ae->nb[3];
            w.nb1 = ae->nb[1];
            cols.n = 0;
            for (int64_t i11 = i11s; i11 < i11e; i11++) {
                if (mm_expert(ids, id, i11, i12, i13) != e) {
                    continue;
                }
                cols.b[cols.n] = mm_src1_row(b, &p, conv, i11, i12, i13);
                cols.d[cols.n] = (char *) dst->data + i11*dst->nb[1] + i12*dst->nb[2] + i13*dst->nb[3];
                cols.n++;
                if (cols.n == MM_MAX_COLS) {
                    strategy(&w, ir0, ir1, &cols);
                    cols.n = 0;
                }
            }
            if (cols.n > 0) {
                strategy(&w, ir0, ir1, &cols);
            }
        }
        bstart += i11e - i11s;
    }
}

const struct ggml_cpu_op ggml_cpu_op_mul_mat_id = {
    .forward   = mul_mat_id_forward,
    .supports  = mul_mat_id_supports,
    .work_size = mul_mat_id_work_size,
};
