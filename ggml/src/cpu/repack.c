// repack.c - the CPU_REPACK buffer type (ggml_x_backend_cpu_repack_buffer_type): Q4_0, Q8_0, Q4_K
// and Q6_K weight matrices stored interleaved by groups of 8 rows, so that MUL_MAT's repack
// kernels stream one contiguous run of memory per group and compute 8 rows x up to 8 src1
// columns in one pass over the weights.
//
// Layout. A tensor is repacked when it is not a view, its type is Q4_0, Q8_0, Q4_K or Q6_K, it is
// 2-D (ne2 = ne3 = 1) with contiguous rows and has at least 8 rows (ggml_x_rp_layout_of). It then
// occupies the same ggml_nbytes bytes as in a CPU buffer, but rows 0 .. 8*G-1 (G = ne1 / 8 whole
// groups) are rearranged; the last ne1 % 8 rows stay in the plain layout at their usual offsets.
// Group g occupies bytes [g*8*row_size, (g+1)*8*row_size), one sequential stream: its blocks in
// runs of 4 (the last run may be shorter); a run of n blocks b0..b0+n-1 starts at b0*8*bs and
// holds (QB = 16 quant bytes per Q4_0 block, 32 per Q8_0 block):
//   n * 8*QB bytes: the quant bytes, block after block; a block's 8*QB bytes are chunks of 32:
//                   chunk c holds quant bytes 4c..4c+3 of rows 0..7 (row r at 4r). One 256-bit
//                   load is one byte quad per row (lane = row; the AVX2 and the AVX-512 VNNI
//                   kernels both work on 256-bit vectors);
//   n * 16 bytes:   per block the 8 rows' fp16 scales (row r at 2r).
// A run of 4 is 576 (Q4_0) or 1088 (Q8_0) bytes, so when the group starts 64-byte aligned (rows
// of a multiple of 4 blocks) no vector load crosses a cache line.
// Q4_K (ne0 a multiple of QK_K): super-block b of the group's 8 rows takes 8 * 144 = 1152 bytes
// at b*1152, a header of 128 bytes then the quant bytes:
//   [0, 16)     the 8 rows' fp16 d (row r at 2r);   [16, 32) their fp16 dmin (row r at 16 + 2r);
//   [32, 128)   the 12 packed 6-bit scale/min bytes: byte i of row r at 32 + 8i + r, so that one
//               256-bit load holds bytes i..i+3 of all 8 rows and the scales and mins of the 8
//               sub-blocks are unpacked for 8 rows at once;
//   [128, 1152) the 128 quant bytes in 32-byte chunks: chunk c holds bytes 4c..4c+3 of rows 0..7
//               (row r at 4r), as for Q4_0.
// Q6_K (ne0 a multiple of QK_K): super-block b of the group's 8 rows takes 8 * 210 = 1680 bytes
// at b*1680, a header of 144 bytes then the quant bytes in two halves of 768 (QK_K/2 elements):
//   [0, 16)     the 8 rows' fp16 d (row r at 2r);
//   [16, 144)   the 16 int8 scales: scale s of row r at 16 + 8s + r (one 8-byte load: 8 rows);
//   [144 + 768n, ...) half n: for c = 0..7, 96 bytes: 32-byte chunks of ql bytes 64n + 4c..+3,
//               of ql bytes 64n + 32 + 4c..+3 and of qh bytes 32n + 4c..+3 (row r at 4r in each),
//               so one step of the kernel has the low bits and the high bits of the same 16
//               elements of every row (elements 128n + 32f + 4c..+3, f = 0..3) in three loads.
// The rearrangement is a permutation of byte positions (no byte changes value), so set_tensor and
// get_tensor with any offset and size map each byte to its place (ggml_x_rp_pack / _unpack),
// get_tensor returns exactly the bytes that were set, clear (memset of the whole buffer) and raw
// copies between identically repacked tensors stay correct. Tensors that are not repackable are
// stored plainly in the same buffer and behave as in the CPU buffer.
//
// Readers. Only MUL_MAT reading the repacked tensor itself as src0 (with F32 src1) understands
// the layout (ops-mul-mat.c). The CPU engine refuses, with an error message through
// ggml_x_error, any graph where another op (GET_ROWS, CPY, MUL_MAT_ID, ...) or a view reads
// a repacked tensor (ggml_x_rp_reads_packed), instead of computing garbage. The buffer type is
// not host memory (is_host false), so callers go through get/set_tensor, which convert.
//
// Activations are prepared once per src1 column (ggml_x_rp_prep; column sets, repack.h) from the
// reference's q8_0 quantization, so the integer dot products are the ones of the plain path; the
// per-row float sums run in block order, so results match the plain path to float rounding and
// do not depend on the thread count.
//
// Buffers of 2 MiB and more are 2 MiB aligned and madvise(MADV_HUGEPAGE)d (ggml_x_host_alloc, as
// every CPU buffer): the kernels stream the weights with a compute load close to the memory time,
// and 4 KiB pages (TLB misses, nested paging in a VM) cost up to half the bandwidth in
// measurements (issue 17).

#include "cpu/repack.h"
#include "cpu/gemm.h"
#include "ggml-backend-impl.h"
#include "cpu/host-alloc.h"
#include "ggml-quants.h"
#include "cpu/traits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RP_ALIGN 64
#define RP_K4_HDR 128   // Q4_K: header bytes of an 8-row super-block (before the quant bytes)
#define RP_K6_HDR 144   // Q6_K: the same

// an allocation failure is not a programming error: print it (and record it when recoverable)
static void rp_soft_error(const char * msg, size_t size) {
    if (ggml_x_recoverable(NULL)) {
        ggml_x_error(NULL, "%s (%zu bytes)", msg, size);
    } else {
        fprintf(stderr, "%s (%zu bytes)\n", msg, size);
    }
}

// ---------------------------------------------------------------------------------------------
// layout

bool ggml_x_rp_layout_of(const struct ggml_tensor * t, struct ggml_x_rp_layout * l) {
    if (t == NULL || (t->type != GGML_TYPE_Q4_0 && t->type != GGML_TYPE_Q8_0 && t->type != GGML_TYPE_Q4_K &&
                      t->type != GGML_TYPE_Q6_K)) {
        return false;
    }
    const int64_t qk = t->type == GGML_TYPE_Q4_K || t->type == GGML_TYPE_Q6_K ? QK_K : QK8_0;
    const size_t bs = t->type == GGML_TYPE_Q4_0 ? sizeof(block_q4_0) :
                      t->type == GGML_TYPE_Q8_0 ? sizeof(block_q8_0) :
                      t->type == GGML_TYPE_Q4_K ? sizeof(block_q4_K) : sizeof(block_q6_K);
    if (t->ne[0] <= 0 || t->ne[0] % qk != 0 || t->ne[1] < GGML_X_RP_ROWS || t->ne[2] != 1 || t->ne[3] != 1) {
        return false;
    }
    const size_t row_size = bs * (size_t) (t->ne[0] / qk);
    if (t->nb[0] != bs || t->nb[1] != row_size) {
        return false;
    }
    if (l != NULL) {
        l->type     = t->type;
        l->bs       = bs;
        l->nblk     = t->ne[0] / qk;
        l->row_size = row_size;
        l->ngroups  = t->ne[1] / GGML_X_RP_ROWS;
        l->packed   = (size_t) l->ngroups * GGML_X_RP_ROWS * row_size;
    }
    return true;
}

static bool rp_in_repack_buffer(const struct ggml_tensor * t) {
    return t->buffer != NULL && t->buffer->buft == ggml_x_backend_cpu_repack_buffer_type();
}

bool ggml_x_rp_is_packed(const struct ggml_tensor * t, struct ggml_x_rp_layout * l) {
    return t != NULL && t->view_src == NULL && rp_in_repack_buffer(t) && ggml_x_rp_layout_of(t, l);
}

bool ggml_x_rp_reads_packed(const struct ggml_tensor * t) {
    if (t == NULL) {
        return false;
    }
    const struct ggml_tensor * base = t->view_src != NULL ? t->view_src : t;
    return ggml_x_rp_is_packed(base, NULL);
}

// where the scale (2 bytes) and the quant bytes of block b of row r of group g start
static inline size_t rp_scale_pos(const struct ggml_x_rp_layout * l, size_t g, size_t r, size_t b) {
    const size_t qb = l->bs - 2, b0 = b / 4 * 4;
    const size_t nin = GGML_X_MIN((size_t) l->nblk - b0, (size_t) 4);
    return g * GGML_X_RP_ROWS * l->row_size + b0 * GGML_X_RP_ROWS * l->bs + nin * GGML_X_RP_ROWS * qb + (b - b0) * 16 + 2*r;
}

static inline size_t rp_quant_pos(const struct ggml_x_rp_layout * l, size_t g, size_t r, size_t b) {
    const size_t qb = l->bs - 2, b0 = b / 4 * 4;
    return g * GGML_X_RP_ROWS * l->row_size + b0 * GGML_X_RP_ROWS * l->bs + (b - b0) * GGML_X_RP_ROWS * qb + 4*r;
}

// Q4_K: where byte t (0..143) of row r's super-block lands in the group's 8-row super-block
static inline size_t rp_k4_pos(size_t r, size_t t) {
    if (t < 4) {
        return (t < 2 ? 0 : 16) + 2*r + (t & 1);           // d, dmin
    }
    if (t < 16) {
        return 32 + 8*(t - 4) + r;                         // the 12 packed scale/min bytes
    }
    const size_t i = t - 16;
    return RP_K4_HDR + (i / 4) * 32 + 4*r + i % 4;         // quant byte quads
}

// Q6_K: where byte t (0..209) of row r's super-block (ql[128], qh[64], scales[16], d) lands in
// the group's 8-row super-block
static inline size_t rp_k6_pos(size_t r, size_t t) {
    if (t < 128) {                                         // ql: half n, chunk c, low/high 32
        const size_t n = t / 64, i = t % 64;
        return RP_K6_HDR + 768*n + 96*((i % 32) / 4) + 32*(i / 32) + 4*r + i % 4;
    }
    if (t < 192) {                                         // qh
        const size_t n = (t - 128) / 32, i = (t - 128) % 32;
        return RP_K6_HDR + 768*n + 96*(i / 4) + 64 + 4*r + i % 4;
    }
    if (t < 208) {
        return 16 + 8*(t - 192) + r;                       // scales
    }
    return 2*r + (t - 208);                                // d
}

// interleaved position of original byte o (o < l->packed)
static inline size_t rp_pos(const struct ggml_x_rp_layout * l, size_t o) {
    const size_t row = o / l->row_size;
    const size_t q   = o % l->row_size;
    const size_t g = row / GGML_X_RP_ROWS, r = row % GGML_X_RP_ROWS;
    const size_t b = q / l->bs, t = q % l->bs;
    if (l->type == GGML_TYPE_Q4_K || l->type == GGML_TYPE_Q6_K) {
        return g * GGML_X_RP_ROWS * l->row_size + b * GGML_X_RP_ROWS * l->bs +
               (l->type == GGML_TYPE_Q4_K ? rp_k4_pos(r, t) : rp_k6_pos(r, t));
    }
    if (t < 2) {
        return rp_scale_pos(l, g, r, b) + t;
    }
    const size_t i = t - 2;
    return rp_quant_pos(l, g, r, b) + (i / 4) * 32 + i % 4;
}

// pack (to_packed) or unpack one whole block whose original bytes start at o (o % bs == 0)
static inline void rp_block(const struct ggml_x_rp_layout * l, char * packed, char * plain, size_t o, bool to_packed) {
    const size_t row = o / l->row_size;
    const size_t g = row / GGML_X_RP_ROWS, r = row % GGML_X_RP_ROWS;
    const size_t b = (o % l->row_size) / l->bs;
    if (l->type == GGML_TYPE_Q4_K) {
        char * kb = packed + g * GGML_X_RP_ROWS * l->row_size + b * GGML_X_RP_ROWS * l->bs;
        for (size_t t = 0; t < 16; t++) {
            char * p = kb + rp_k4_pos(r, t);
            if (to_packed) {
                *p = plain[t];
            } else {
                plain[t] = *p;
            }
        }
        for (size_t c = 0; c < QK_K / 8; c++) {
            char * p = kb + RP_K4_HDR + 32*c + 4*r;
            if (to_packed) {
                memcpy(p, plain + 16 + 4*c, 4);
            } else {
                memcpy(plain + 16 + 4*c, p, 4);
            }
        }
        return;
    }
    if (l->type == GGML_TYPE_Q6_K) {
        char * kb = packed + g * GGML_X_RP_ROWS * l->row_size + b * GGML_X_RP_ROWS * l->bs;
        for (size_t t = 0; t < 192; t += 4) {              // ql and qh: quads stay together
            char * p = kb + rp_k6_pos(r, t);
            if (to_packed) {
                memcpy(p, plain + t, 4);
            } else {
                memcpy(plain + t, p, 4);
            }
        }
        for (size_t t = 192; t < sizeof(block_q6_K); t++) {
            char * p = kb + rp_k6_pos(r, t);
            if (to_packed) {
                *p = plain[t];
            } else {
                plain[t] = *p;
            }
        }
        return;
    }
    char * sp = packed + rp_scale_pos(l, g, r, b);
    char * qp = packed + rp_quant_pos(l, g, r, b);
    const size_t nq = (l->bs - 2) / 4;       // quads of quant bytes
    if (to_packed) {
        memcpy(sp, plain, 2);
        for (size_t c = 0; c < nq; c++) {
            memcpy(qp + 32*c, plain + 2 + 4*c, 4);
        }
    } else {
        memcpy(plain, sp, 2);
        for (size_t c = 0; c < nq; c++) {
            memcpy(plain + 2 + 4*c, qp + 32*c, 4);
        }
    }
}

static void rp_convert(const struct ggml_x_rp_layout * l, char * base, char * plain, size_t off, size_t size, bool to_packed) {
    size_t o = off;
    const size_t end = off + size;
    while (o < end) {
        if (o >= l->packed) {
            if (to_packed) {
                memcpy(base + o, plain + (o - off), end - o);
            } else {
                memcpy(plain + (o - off), base + o, end - o);
            }
            return;
        }
        if ((o % l->row_size) % l->bs == 0 && o + l->bs <= end) {
            rp_block(l, base, plain + (o - off), o, to_packed);
            o += l->bs;
            continue;
        }
        const size_t p = rp_pos(l, o);
        if (to_packed) {
            base[p] = plain[o - off];
        } else {
            plain[o - off] = base[p];
        }
        o++;
    }
}

void ggml_x_rp_pack(const struct ggml_x_rp_layout * l, char * base, const char * src, size_t off, size_t size) {
    rp_convert(l, base, (char *) src, off, size, true);
}

void ggml_x_rp_unpack(const struct ggml_x_rp_layout * l, const char * base, char * dst, size_t off, size_t size) {
    rp_convert(l, (char *) base, dst, off, size, false);
}

// ---------------------------------------------------------------------------------------------
// the buffer type

// layout and offset (relative to the repacked tensor's start) of an access to tensor t, which may
// be a view of a repacked tensor; false: plain memory
static bool rp_access(const struct ggml_tensor * t, size_t offset, struct ggml_x_rp_layout * l,
                      char ** base, size_t * off) {
    const struct ggml_tensor * src = t->view_src != NULL ? t->view_src : t;
    if (!ggml_x_rp_layout_of(src, l)) {
        return false;
    }
    *base = (char *) src->data;
    *off  = (size_t) ((const char *) t->data - (const char *) src->data) + offset;
    return true;
}

GGML_CALL static const char * rp_buffer_get_name(ggml_backend_buffer_t buffer) {
    GGML_UNUSED(buffer);
    return "CPU_REPACK";
}

GGML_CALL static void * rp_buffer_get_base(ggml_backend_buffer_t buffer) {
    return buffer->context;
}

GGML_CALL static void rp_buffer_free_buffer(ggml_backend_buffer_t buffer) {
    free(buffer->context);
}

GGML_CALL static void rp_buffer_set_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor,
                                           const void * data, size_t offset, size_t size) {
    GGML_UNUSED(buffer);
    struct ggml_x_rp_layout l;
    char * base;
    size_t off;
    if (rp_access(tensor, offset, &l, &base, &off)) {
        ggml_x_rp_pack(&l, base, (const char *) data, off, size);
    } else {
        memcpy((char *) tensor->data + offset, data, size);
    }
}

GGML_CALL static void rp_buffer_get_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor * tensor,
                                           void * data, size_t offset, size_t size) {
    GGML_UNUSED(buffer);
    struct ggml_x_rp_layout l;
    char * base;
    size_t off;
    if (rp_access(tensor, offset, &l, &base, &off)) {
        ggml_x_rp_unpack(&l, base, (char *) data, off, size);
    } else {
        memcpy(data, (const char *) tensor->data + offset, size);
    }
}

// dst is in this buffer: from host memory through the layout; between two repack tensors of the
// same layout, raw; anything else through get/set (false)
GGML_CALL static bool rp_buffer_cpy_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor * src,
                                           struct ggml_tensor * dst) {
    const struct ggml_tensor * sbase = src->view_src != NULL ? src->view_src : src;
    ggml_backend_buffer_t sbuf = sbase->buffer;
    if (sbuf == NULL) {
        return false;
    }
    if (ggml_backend_buffer_is_host(sbuf)) {
        rp_buffer_set_tensor(buffer, dst, src->data, 0, ggml_nbytes(src));
        return true;
    }
    if (sbuf->buft == buffer->buft) {
        struct ggml_x_rp_layout ls, ld;
        char * bs = NULL, * bd = NULL;
        size_t os = 0, od = 0;
        const bool ps = rp_access(src, 0, &ls, &bs, &os);
        const bool pd = rp_access(dst, 0, &ld, &bd, &od);
        if (!ps && !pd) {
            memcpy(dst->data, src->data, ggml_nbytes(src));
            return true;
        }
        if (ps && pd && os == 0 && od == 0 && src->view_src == NULL && dst->view_src == NULL &&
            memcmp(&ls, &ld, sizeof(ls)) == 0) {
            memcpy(dst->data, src->data, ggml_nbytes(src));
            return true;
        }
    }
    return false;
}

GGML_CALL static void rp_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value) {
    // a permutation of bytes: every byte value stays the same
    memset(buffer->context, value, buffer->size);
}

static const struct ggml_backend_buffer_i rp_buffer_iface = {
    /* .get_name    = */ rp_buffer_get_name,
    /* .free_buffer = */ rp_buffer_free_buffer,
    /* .get_base    = */ rp_buffer_get_base,
    /* .init_tensor = */ NULL,
    /* .set_tensor  = */ rp_buffer_set_tensor,
    /* .get_tensor  = */ rp_buffer_get_tensor,
    /* .cpy_tensor  = */ rp_buffer_cpy_tensor,
    /* .clear       = */ rp_buffer_clear,
    /* .reset       = */ NULL,
};

GGML_CALL static const char * rp_buft_get_name(ggml_backend_buffer_type_t buft) {
    GGML_UNUSED(buft);
    return "CPU_REPACK";
}

GGML_CALL static ggml_backend_buffer_t rp_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size) {
    if (size > SIZE_MAX - RP_ALIGN) {
        rp_soft_error("ggml_x_backend_cpu_repack_buffer_type: buffer size too large", size);
        return NULL;
    }
    // large buffers get transparent huge pages, which the kernels' streaming reads need
    // (ggml_x_host_alloc)
    void * data = ggml_x_host_alloc(size, RP_ALIGN);
    if (data == NULL) {
        rp_soft_error("ggml_x_backend_cpu_repack_buffer_type: failed to allocate a buffer", size);
        return NULL;
    }
    ggml_backend_buffer_t buffer = ggml_backend_buffer_init(buft, rp_buffer_iface, data, size);
    if (buffer == NULL) {
        free(data);
    }
    return buffer;
}

GGML_CALL static size_t rp_buft_get_alignment(ggml_backend_buffer_type_t buft) {
    GGML_UNUSED(buft);
    return RP_ALIGN;
}

GGML_CALL static bool rp_buft_supports_backend(ggml_backend_buffer_type_t buft, ggml_backend_t backend) {
    GGML_UNUSED(buft);
    return ggml_backend_is_cpu(backend);
}

GGML_CALL static bool rp_buft_is_host(ggml_backend_buffer_type_t buft) {
    GGML_UNUSED(buft);
    return false; // the memory is not in the ggml layout
}

GGML_CALL ggml_backend_buffer_type_t ggml_x_backend_cpu_repack_buffer_type(void) {
    static struct ggml_backend_buffer_type rp_buft = {
        /* .iface = */ {
            /* .get_name         = */ rp_buft_get_name,
            /* .alloc_buffer     = */ rp_buft_alloc_buffer,
            /* .get_alignment    = */ rp_buft_get_alignment,
            /* .get_alloc_size   = */ NULL, // ggml_nbytes: the repacked bytes take the same room
            /* .supports_backend = */ rp_buft_supports_backend,
            /* .is_host          = */ rp_buft_is_host,
        },
        /* .context = */ NULL,
    };
    return &rp_buft;
}

bool ggml_x_backend_cpu_repack_has_kernel(enum ggml_type type) {
    struct ggml_x_gemm_kernels scalar;
    ggml_x_gemm_kernels_for_level(GGML_X_CPU_SCALAR, &scalar);
    const ggml_x_rp_kernel_t k = ggml_x_rp_kernel_of(ggml_x_gemm_kernels_active(), type);
    return k != NULL && k != ggml_x_rp_kernel_of(&scalar, type);
}

// ---------------------------------------------------------------------------------------------
// activation preparation

static size_t rp_al(size_t n) {
    return (n + RP_ALIGN - 1) & ~(size_t) (RP_ALIGN - 1);
}

size_t ggml_x_rp_set_dx_off(int64_t k) {
    return (size_t) (k / QK8_0) * GGML_X_RP_COLS * QK8_0;
}

size_t ggml_x_rp_set_corr_off(int64_t k) {
    return ggml_x_rp_set_dx_off(k) + rp_al((size_t) (k / QK8_0) * GGML_X_RP_COLS * sizeof(float));
}

static size_t rp_set_q8_off(int64_t k) {
    return ggml_x_rp_set_corr_off(k) + rp_al((size_t) (k / QK8_0) * GGML_X_RP_COLS * sizeof(int32_t));
}

// room for a plain q8_0 row or (k a multiple of QK_K) a plain q8_K row
static size_t rp_q8_row(int64_t k) {
    const size_t q80 = (size_t) (k / QK8_0) * sizeof(block_q8_0);
    const size_t q8k = (size_t) (k / QK_K) * sizeof(block_q8_K);
    return rp_al(q80 > q8k ? q80 : q8k);
}

size_t ggml_x_rp_set_size(int64_t k) {
    return rp_set_q8_off(k) + GGML_X_RP_COLS * rp_q8_row(k);
}

const void * ggml_x_rp_set_q8(const uint8_t * set, int64_t k, int j) {
    return set + rp_set_q8_off(k) + (size_t) j * rp_q8_row(k);
}

// k-quant weights (Q4_K, Q6_K): the q8_K quantization's bytes and scale, and in the corrections
// region per super-block and column Q4_K's 8 sums of the sub-blocks of 32 (its mins go by those)
// or Q6_K's 16 sums of 16 (the q8_K bsums: its - 32 goes by scale groups of 16)
static void rp_prep_kq(enum ggml_type wtype, const float * x, int64_t k, uint8_t * set, int j, int nc) {
    const int64_t nsb = k / QK_K;
    block_q8_K * q = (block_q8_K *) (set + rp_set_q8_off(k) + (size_t) j * rp_q8_row(k));
    float * dx = (float *) (set + ggml_x_rp_set_dx_off(k));
    int16_t * bsum = (int16_t *) (set + ggml_x_rp_set_corr_off(k));
    ggml_x_cpu_type_traits(GGML_TYPE_Q8_K)->from_float(x, q, (int) k);
    for (int64_t b = 0; b < nsb; b++) {
        memcpy(set + (size_t) (b * nc + j) * QK_K, q[b].qs, QK_K);
        dx[b * nc + j] = q[b].d;
        if (wtype == GGML_TYPE_Q6_K) {
            memcpy(bsum + (b * nc + j) * (QK_K / 16), q[b].bsums, sizeof(q[b].bsums));
            continue;
        }
        int16_t * bs = bsum + (b * nc + j) * (QK_K / 32);
        for (int s = 0; s < QK_K / 32; s++) {
            bs[s] = (int16_t) (q[b].bsums[2*s] + q[b].bsums[2*s + 1]);
        }
    }
}

void ggml_x_rp_prep(enum ggml_type wtype, const float * x, int64_t k, uint8_t * set, int j, int nc) {
    if (wtype == GGML_TYPE_Q4_K || wtype == GGML_TYPE_Q6_K) {
        rp_prep_kq(wtype, x, k, set, j, nc);
        return;
    }
    ggml_x_rp_prep_blocks(wtype, x, k, 0, k / QK8_0, set, j, nc);
}

void ggml_x_rp_prep_blocks(enum ggml_type wtype, const float * x, int64_t k, int64_t b0, int64_t b1, uint8_t * set,
                           int j, int nc) {
    block_q8_0 * q = (block_q8_0 *) (set + rp_set_q8_off(k) + (size_t) j * rp_q8_row(k));
    float * dx = (float *) (set + ggml_x_rp_set_dx_off(k));
    int32_t * corr = (int32_t *) (set + ggml_x_rp_set_corr_off(k));
    // q8_0 blocks are quantized independently: a piece gives the bytes of the whole row's
    ggml_x_cpu_type_traits(GGML_TYPE_Q8_0)->from_float(x + b0 * QK8_0, q + b0, (int) ((b1 - b0) * QK8_0));
    const int32_t off = wtype == GGML_TYPE_Q4_0 ? -8 : -128;
    for (int64_t b = b0; b < b1; b++) {
        int32_t s = 0;
        for (int i = 0; i < QK8_0; i++) {
            s += q[b].qs[i];
        }
        memcpy(set + (size_t) (b * nc + j) * QK8_0, q[b].qs, QK8_0);
        dx[b * nc + j]   = GGML_FP16_TO_FP32(q[b].d);
        corr[b * nc + j] = off * s;
    }
}

// ---------------------------------------------------------------------------------------------
// scalar kernels (every level; the reference for the SIMD ones)

static void rp_kernel_scalar(int64_t nblk, int ncols, const uint8_t * grp, const uint8_t * set, float * out,
                             bool q4) {
    const size_t bs = q4 ? sizeof(block_q4_0) : sizeof(block_q8_0);
    const int64_t k = nblk * QK8_0;
    for (int j = 0; j < ncols; j++) {
        const block_q8_0 * y = (const block_q8_0 *) ggml_x_rp_set_q8(set, k, j);
        for (int r = 0; r < GGML_X_RP_ROWS; r++) {
            float sum = 0.0f;
            for (int64_t b = 0; b < nblk; b++) {
                const int64_t b0 = b / 4 * 4, nin = GGML_X_MIN(nblk - b0, (int64_t) 4);
                const uint8_t * run = grp + (size_t) b0 * GGML_X_RP_ROWS * bs;
                const uint8_t * blk = run + (size_t) (b - b0) * GGML_X_RP_ROWS * (bs - 2);
                ggml_fp16_t dh;
                memcpy(&dh, run + (size_t) nin * GGML_X_RP_ROWS * (bs - 2) + (size_t) (b - b0) * 16 + 2*r, sizeof(dh));
                int32_t isum = 0;
                if (q4) {
                    for (int i = 0; i < 16; i++) {
                        const uint8_t v = blk[(i / 4) * 32 + 4*r + i % 4];
                        isum += ((int32_t) (v & 15) - 8) * y[b].qs[i] + ((int32_t) (v >> 4) - 8) * y[b].qs[i + 16];
                    }
                } else {
                    for (int i = 0; i < 32; i++) {
                        isum += (int32_t) (int8_t) blk[(i / 4) * 32 + 4*r + i % 4] * y[b].qs[i];
                    }
                }
                sum += (float) isum * (GGML_FP16_TO_FP32(dh) * GGML_FP16_TO_FP32(y[b].d));
            }
            out[j*GGML_X_RP_ROWS + r] = sum;
        }
    }
}

void ggml_x_rp_kernel_q4_0_scalar(int64_t nblk, int ncols, const uint8_t * grp, const uint8_t * set, float * out) {
    rp_kernel_scalar(nblk, ncols, grp, set, out, true);
}

void ggml_x_rp_kernel_q8_0_scalar(int64_t nblk, int ncols, const uint8_t * grp, const uint8_t * set, float * out) {
    rp_kernel_scalar(nblk, ncols, grp, set, out, false);
}

// k-quants (Q4_K, Q6_K): each super-block of each row gathered back into its plain block
// (rp_block) and dotted with the reference, so the result is the reference's to the last bit
static void rp_kernel_kq_scalar(enum ggml_type type, ggml_vec_dot_t ref, int64_t nblk, int ncols, const uint8_t * grp,
                                const uint8_t * set, float * out) {
    const int64_t k = nblk * QK_K;
    const size_t bs = type == GGML_TYPE_Q4_K ? sizeof(block_q4_K) : sizeof(block_q6_K);
    const struct ggml_x_rp_layout l = { type, bs, nblk, bs * (size_t) nblk, 1, GGML_X_RP_ROWS * bs * (size_t) nblk };
    for (int j = 0; j < ncols; j++) {
        const block_q8_K * y = (const block_q8_K *) ggml_x_rp_set_q8(set, k, j);
        for (int r = 0; r < GGML_X_RP_ROWS; r++) {
            float sum = 0.0f;
            for (int64_t b = 0; b < nblk; b++) {
                uint8_t blk[sizeof(block_q6_K) > sizeof(block_q4_K) ? sizeof(block_q6_K) : sizeof(block_q4_K)];
                rp_block(&l, (char *) grp, (char *) blk, (size_t) r * l.row_size + (size_t) b * bs, false);
                float v;
                ref(QK_K, &v, blk, &y[b]);
                sum += v;
            }
            out[j*GGML_X_RP_ROWS + r] = sum;
        }
    }
}

void ggml_x_rp_kernel_q4_K_scalar(int64_t nblk, int ncols, const uint8_t * grp, const uint8_t * set, float * out) {
    rp_kernel_kq_scalar(GGML_TYPE_Q4_K, ggml_x_vec_dot_q4_K_q8_K_ref, nblk, ncols, grp, set, out);
}

void ggml_x_rp_kernel_q6_K_scalar(int64_t nblk, int ncols, const uint8_t * grp, const uint8_t * set, float * out) {
    rp_kernel_kq_scalar(GGML_TYPE_Q6_K, ggml_x_vec_dot_q6_K_q8_K_ref, nblk, ncols, grp, set, out);
}

void ggml_x_rp_setting(size_t * v, const char * name) {
    const char * e = getenv(name);
    if (e != NULL) {
        __atomic_store_n(v, (size_t) strtoul(e, NULL, 10), __ATOMIC_RELAXED);
    }
}

ggml_x_rp_kernel_t ggml_x_rp_kernel_of(const struct ggml_x_gemm_kernels * k, enum ggml_type type) {
    switch (type) {
        case GGML_TYPE_Q4_0: return k->rp_q4_0;
        case GGML_TYPE_Q8_0: return k->rp_q8_0;
        case GGML_TYPE_Q4_K: return k->rp_q4_K;
        case GGML_TYPE_Q6_K: return k->rp_q6_K;
        default:             return NULL;
    }
}

ggml_x_rp16_kernel_t ggml_x_rp16_kernel_of(const struct ggml_x_gemm_kernels * k, enum ggml_type type) {
    switch (type) {
        case GGML_TYPE_Q4_0: return k->rp16_q4_0;
        case GGML_TYPE_Q8_0: return k->rp16_q8_0;
        case GGML_TYPE_Q4_K: return k->rp16_q4_K;
        case GGML_TYPE_Q6_K: return k->rp16_q6_K;
        default:             return NULL;
    }
}
