// ggml.c - the core: errors, fp16, time, type/op information, contexts and their arenas,
// tensors, views, element access and names. Graphs live in ggml-graph.c, op constructors in
// ops/, kernels in cpu/.

#define _GNU_SOURCE
#include "ggml-impl.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

// ---------------------------------------------------------------------------------------------
// errors

static _Thread_local char ggml_x_err_msg[1024];
static _Thread_local bool ggml_x_err_set;
static _Thread_local uint64_t ggml_x_err_serial; // messages recorded on this thread so far
static _Thread_local bool ggml_x_thread_recoverable;
static atomic_bool ggml_x_default_recoverable;

struct ggml_context {
    size_t mem_size;
    void * mem_buffer;
    bool   mem_buffer_owned;
    bool   no_alloc;
    bool   recoverable;
    int    n_objects;

    struct ggml_object * objects_begin;
    struct ggml_object * objects_end;
};

_Noreturn void ggml_x_assert_fail(const char * file, int line, const char * expr) {
    fflush(stdout);
    fprintf(stderr, "ggml: internal invariant violated at %s:%d: %s\n", file, line, expr);
    fflush(stderr);
    abort();
}

bool ggml_x_recoverable(const struct ggml_context * ctx) {
    if (atomic_load_explicit(&ggml_x_default_recoverable, memory_order_relaxed) || ggml_x_thread_recoverable) {
        return true;
    }
    return ctx != NULL && ctx->recoverable;
}

void ggml_x_error(const struct ggml_context * ctx, const char * fmt, ...) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(ggml_x_err_msg, sizeof(ggml_x_err_msg), fmt, args);
    va_end(args);
    ggml_x_err_set = true;
    ggml_x_err_serial++;
    if (!ggml_x_recoverable(ctx)) {
        fflush(stdout);
        fprintf(stderr, "ggml: %s\n", ggml_x_err_msg);
        fflush(stderr);
        abort();
    }
}

void ggml_x_set_recoverable(struct ggml_context * ctx, bool recoverable) {
    if (ctx != NULL) {
        ctx->recoverable = recoverable;
    }
}

bool ggml_x_get_recoverable(const struct ggml_context * ctx) {
    return ctx != NULL && ctx->recoverable;
}

void ggml_x_set_thread_recoverable(bool recoverable) {
    ggml_x_thread_recoverable = recoverable;
}

bool ggml_x_get_thread_recoverable(void) {
    return ggml_x_thread_recoverable;
}

void ggml_x_set_default_recoverable(bool recoverable) {
    atomic_store(&ggml_x_default_recoverable, recoverable);
}

bool ggml_x_get_default_recoverable(void) {
    return atomic_load(&ggml_x_default_recoverable);
}

const char * ggml_x_last_error(void) {
    return ggml_x_err_set ? ggml_x_err_msg : NULL;
}

uint64_t ggml_x_error_serial(void) {
    return ggml_x_err_serial;
}

void ggml_x_clear_error(void) {
    ggml_x_err_set = false;
    ggml_x_err_msg[0] = '\0';
}

const char * ggml_x_shape_str(const struct ggml_tensor * t, char * buf, size_t size) {
    if (t == NULL) {
        snprintf(buf, size, "(null)");
    } else {
        snprintf(buf, size, "[%lld,%lld,%lld,%lld]", (long long) t->ne[0], (long long) t->ne[1],
                 (long long) t->ne[2], (long long) t->ne[3]);
    }
    return buf;
}

// ---------------------------------------------------------------------------------------------
// fp16

float ggml_x_fp16_table[1 << 16];
static pthread_once_t ggml_x_tables_once = PTHREAD_ONCE_INIT;

static float ggml_x_fp16_bits_to_fp32(uint16_t h) {
    const uint32_t sign = (uint32_t) (h & 0x8000) << 16;
    const uint32_t exp  = (h >> 10) & 0x1f;
    const uint32_t man  = h & 0x3ff;
    uint32_t bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else {
            // subnormal: value = man * 2^-24, exact in fp32
            float v = (float) man * 5.9604644775390625e-8f;
            memcpy(&bits, &v, sizeof(bits));
            bits |= sign;
        }
    } else if (exp == 31) {
        // inf, or nan made quiet (as the hardware conversions do)
        bits = sign | 0x7f800000u | (man << 13) | (man != 0 ? 0x400000u : 0);
    } else {
        bits = sign | ((exp + 112) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof(f));
    return f;
}

ggml_fp16_t ggml_x_fp32_to_fp16(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof(x));
    const uint32_t sign = (x >> 16) & 0x8000;
    const uint32_t absx = x & 0x7fffffffu;
    uint16_t h;
    if (absx >= 0x7f800000u) {
        // inf or nan (keep nan quiet and non-zero)
        h = (uint16_t) (sign | 0x7c00 | (absx > 0x7f800000u ? (0x200 | ((absx >> 13) & 0x3ff)) : 0));
    } else if (absx >= 0x477ff000u) {
        // rounds to >= 65536: overflow to infinity
        h = (uint16_t) (sign | 0x7c00);
    } else if (absx < 0x38800000u) {
        // below the smallest normal fp16 (2^-14): subnormal or zero, round to nearest even
        if (absx < 0x33000000u) {
            h = (uint16_t) sign; // < 2^-25 rounds to zero
        } else {
            const uint32_t e = absx >> 23;
            const uint32_t m = (absx & 0x7fffff) | 0x800000;
            const uint32_t shift = 126 - e; // 14..24
            uint32_t q = m >> shift;
            const uint32_t rem = m & ((1u << shift) - 1);
            const uint32_t half = 1u << (shift - 1);
            if (rem > half || (rem == half && (q & 1))) {
                q++;
            }
            h = (uint16_t) (sign | q);
        }
    } else {
        // normal: rebias exponent and round mantissa to 10 bits, nearest even
        uint32_t v = absx - (112u << 23);
        const uint32_t rem = v & 0x1fff;
        v >>= 13;
        if (rem > 0x1000 || (rem == 0x1000 && (v & 1))) {
            v++;
        }
        h = (uint16_t) (sign | v);
    }
    ggml_fp16_t r;
    memcpy(&r, &h, sizeof(r));
    return r;
}

static void ggml_x_init_tables_once(void) {
    for (uint32_t i = 0; i < (1u << 16); i++) {
        ggml_x_fp16_table[i] = ggml_x_fp16_bits_to_fp32((uint16_t) i);
    }
}

void ggml_x_init_tables(void) {
    pthread_once(&ggml_x_tables_once, ggml_x_init_tables_once);
}

float ggml_fp16_to_fp32(ggml_fp16_t x) {
    uint16_t bits;
    memcpy(&bits, &x, sizeof(bits));
    return ggml_x_fp16_bits_to_fp32(bits);
}

ggml_fp16_t ggml_fp32_to_fp16(float x) {
    return ggml_x_fp32_to_fp16(x);
}

// scalar row conversions: the reference the SIMD rows of the CPU backend (cpu/convert.c, behind
// the public ggml_fp16_to_fp32_row / ggml_fp32_to_fp16_row) match bit for bit
void ggml_x_fp16_to_fp32_row_scalar(const ggml_fp16_t * GGML_RESTRICT x, float * GGML_RESTRICT y, int n) {
    for (int i = 0; i < n; i++) {
        y[i] = ggml_fp16_to_fp32(x[i]);
    }
}

void ggml_x_fp32_to_fp16_row_scalar(const float * GGML_RESTRICT x, ggml_fp16_t * GGML_RESTRICT y, int n) {
    for (int i = 0; i < n; i++) {
        y[i] = ggml_x_fp32_to_fp16(x[i]);
    }
}

// ---------------------------------------------------------------------------------------------
// time

static int64_t ggml_x_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void ggml_time_init(void) {
    ggml_x_init_tables();
}

int64_t ggml_time_ms(void) {
    return ggml_x_now_ns() / 1000000;
}

int64_t ggml_time_us(void) {
    return ggml_x_now_ns() / 1000;
}

int64_t ggml_cycles(void) {
    return (int64_t) clock();
}

int64_t ggml_cycles_per_ms(void) {
    return CLOCKS_PER_SEC / 1000;
}

// ---------------------------------------------------------------------------------------------
// type and op information

static const ggml_type_traits_t * ggml_x_traits_or_null(enum ggml_type type) {
    return ggml_x_type_valid(type) ? ggml_x_type_traits(type) : NULL;
}

GGML_CALL int64_t ggml_nelements(const struct ggml_tensor * tensor) {
    return tensor->ne[0] * tensor->ne[1] * tensor->ne[2] * tensor->ne[3];
}

GGML_CALL int64_t ggml_nrows(const struct ggml_tensor * tensor) {
    return tensor->ne[1] * tensor->ne[2] * tensor->ne[3];
}

GGML_CALL size_t ggml_nbytes(const struct ggml_tensor * tensor) {
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        if (tensor->ne[i] <= 0) {
            return 0;
        }
    }
    const size_t blck = (size_t) ggml_blck_size(tensor->type);
    size_t nbytes;
    if (blck == 1) {
        nbytes = ggml_type_size(tensor->type);
        for (int i = 0; i < GGML_MAX_DIMS; i++) {
            nbytes += (size_t) (tensor->ne[i] - 1) * tensor->nb[i];
        }
    } else {
        nbytes = (size_t) tensor->ne[0] * tensor->nb[0] / (blck ? blck : 1);
        for (int i = 1; i < GGML_MAX_DIMS; i++) {
            nbytes += (size_t) (tensor->ne[i] - 1) * tensor->nb[i];
        }
    }
    return nbytes;
}

size_t ggml_nbytes_pad(const struct ggml_tensor * tensor) {
    return GGML_PAD(ggml_nbytes(tensor), GGML_MEM_ALIGN);
}

GGML_CALL int ggml_blck_size(enum ggml_type type) {
    const ggml_type_traits_t * t = ggml_x_traits_or_null(type);
    return t ? t->blck_size : 0;
}

GGML_CALL size_t ggml_type_size(enum ggml_type type) {
    const ggml_type_traits_t * t = ggml_x_traits_or_null(type);
    return t ? t->type_size : 0;
}

GGML_CALL size_t ggml_row_size(enum ggml_type type, int64_t ne) {
    const ggml_type_traits_t * t = ggml_x_traits_or_null(type);
    if (t == NULL || t->blck_size == 0) {
        return 0;
    }
    return t->type_size * (size_t) ne / (size_t) t->blck_size;
}

double ggml_type_sizef(enum ggml_type type) {
    const ggml_type_traits_t * t = ggml_x_traits_or_null(type);
    return t ? (double) t->type_size / (double) t->blck_size : 0.0;
}

GGML_CALL const char * ggml_type_name(enum ggml_type type) {
    const ggml_type_traits_t * t = ggml_x_traits_or_null(type);
    return t ? t->type_name : "NONE";
}

GGML_CALL bool ggml_is_quantized(enum ggml_type type) {
    const ggml_type_traits_t * t = ggml_x_traits_or_null(type);
    return t ? t->is_quantized : false;
}

static const char * const ggml_x_op_names[GGML_OP_COUNT] = {
    "NONE", "DUP", "ADD", "ADD1", "ACC", "SUB", "MUL", "DIV", "SQR", "SQRT", "LOG", "SUM",
    "SUM_ROWS", "MEAN", "ARGMAX", "REPEAT", "REPEAT_BACK", "CONCAT", "SILU_BACK", "NORM",
    "RMS_NORM", "RMS_NORM_BACK", "GROUP_NORM", "MUL_MAT", "MUL_MAT_ID", "OUT_PROD", "SCALE", "SET",
    "CPY", "CONT", "RESHAPE", "VIEW", "PERMUTE", "TRANSPOSE", "GET_ROWS", "GET_ROWS_BACK", "DIAG",
    "DIAG_MASK_INF", "DIAG_MASK_ZERO", "SOFT_MAX", "SOFT_MAX_BACK", "ROPE", "ROPE_BACK", "ALIBI",
    "CLAMP", "CONV_TRANSPOSE_1D", "IM2COL", "CONV_TRANSPOSE_2D", "POOL_1D", "POOL_2D", "UPSCALE",
    "PAD", "ARGSORT", "LEAKY_RELU", "FLASH_ATTN", "FLASH_FF", "FLASH_ATTN_BACK", "WIN_PART",
    "WIN_UNPART", "GET_REL_POS", "ADD_REL_POS", "UNARY", "MAP_UNARY", "MAP_BINARY",
    "MAP_CUSTOM1_F32", "MAP_CUSTOM2_F32", "MAP_CUSTOM3_F32", "MAP_CUSTOM1", "MAP_CUSTOM2",
    "MAP_CUSTOM3", "CROSS_ENTROPY_LOSS", "CROSS_ENTROPY_LOSS_BACK",
};

static const char * const ggml_x_op_symbols[GGML_OP_COUNT] = {
    "none", "x", "x+y", "x+y", "view(x,nb,offset)+=y->x", "x-y", "x*y", "x/y", "x^2", "√x",
    "log(x)", "Σx", "Σx_k", "Σx/n", "argmax(x)", "repeat(x)", "repeat_back(x)", "concat(x, y)",
    "silu_back(x)", "norm(x)", "rms_norm(x)", "rms_norm_back(x)", "group_norm(x)", "X*Y", "X[i]*Y",
    "X×Y", "x*v", "y-\\>view(x)", "x-\\>y", "cont(x)", "reshape(x)", "view(x)", "permute(x)",
    "transpose(x)", "get_rows(x)", "get_rows_back(x)", "diag(x)", "diag_mask_inf(x)",
    "diag_mask_zero(x)", "soft_max(x)", "soft_max_back(x)", "rope(x)", "rope_back(x)", "alibi(x)",
    "clamp(x)", "conv_transpose_1d(x)", "im2col(x)", "conv_transpose_2d(x)", "pool_1d(x)",
    "pool_2d(x)", "upscale(x)", "pad(x)", "argsort(x)", "leaky_relu(x)", "flash_attn(x)",
    "flash_ff(x)", "flash_attn_back(x)", "win_part(x)", "win_unpart(x)", "get_rel_pos(x)",
    "add_rel_pos(x)", "unary(x)", "f(x)", "f(x,y)", "custom_f32(x)", "custom_f32(x,y)",
    "custom_f32(x,y,z)", "custom(x)", "custom(x,y)", "custom(x,y,z)", "cross_entropy_loss(x,y)",
    "cross_entropy_loss_back(x,y)",
};

static const char * const ggml_x_unary_op_names[GGML_UNARY_OP_COUNT] = {
    "ABS", "SGN", "NEG", "STEP", "TANH", "ELU", "RELU", "GELU", "GELU_QUICK", "SILU",
};

GGML_CALL const char * ggml_op_name(enum ggml_op op) {
    return ((int) op >= 0 && op < GGML_OP_COUNT) ? ggml_x_op_names[op] : "INVALID";
}

const char * ggml_op_symbol(enum ggml_op op) {
    return ((int) op >= 0 && op < GGML_OP_COUNT) ? ggml_x_op_symbols[op] : "invalid";
}

const char * ggml_unary_op_name(enum ggml_unary_op op) {
    return ((int) op >= 0 && op < GGML_UNARY_OP_COUNT) ? ggml_x_unary_op_names[op] : "INVALID";
}

GGML_CALL enum ggml_unary_op ggml_get_unary_op(const struct ggml_tensor * tensor) {
    return (enum ggml_unary_op) tensor->op_params[0];
}

GGML_CALL const char * ggml_op_desc(const struct ggml_tensor * t) {
    if (t->op == GGML_OP_UNARY) {
        return ggml_unary_op_name(ggml_get_unary_op(t));
    }
    return ggml_op_name(t->op);
}

GGML_CALL size_t ggml_element_size(const struct ggml_tensor * tensor) {
    return ggml_type_size(tensor->type);
}

enum ggml_type ggml_ftype_to_ggml_type(enum ggml_ftype ftype) {
    switch (ftype) {
        case GGML_FTYPE_ALL_F32:              return GGML_TYPE_F32;
        case GGML_FTYPE_MOSTLY_F16:           return GGML_TYPE_F16;
        case GGML_FTYPE_MOSTLY_Q4_0:          return GGML_TYPE_Q4_0;
        case GGML_FTYPE_MOSTLY_Q4_1:          return GGML_TYPE_Q4_1;
        case GGML_FTYPE_MOSTLY_Q5_0:          return GGML_TYPE_Q5_0;
        case GGML_FTYPE_MOSTLY_Q5_1:          return GGML_TYPE_Q5_1;
        case GGML_FTYPE_MOSTLY_Q8_0:          return GGML_TYPE_Q8_0;
        case GGML_FTYPE_MOSTLY_Q2_K:          return GGML_TYPE_Q2_K;
        case GGML_FTYPE_MOSTLY_Q3_K:          return GGML_TYPE_Q3_K;
        case GGML_FTYPE_MOSTLY_Q4_K:          return GGML_TYPE_Q4_K;
        case GGML_FTYPE_MOSTLY_Q5_K:          return GGML_TYPE_Q5_K;
        case GGML_FTYPE_MOSTLY_Q6_K:          return GGML_TYPE_Q6_K;
        case GGML_FTYPE_MOSTLY_IQ2_XXS:       return GGML_TYPE_IQ2_XXS;
        case GGML_FTYPE_MOSTLY_IQ2_XS:        return GGML_TYPE_IQ2_XS;
        case GGML_FTYPE_UNKNOWN:
        case GGML_FTYPE_MOSTLY_Q4_1_SOME_F16: break;
    }
    return GGML_TYPE_COUNT;
}

GGML_CALL bool ggml_is_transposed(const struct ggml_tensor * tensor) {
    return tensor->nb[0] > tensor->nb[1];
}

GGML_CALL bool ggml_is_contiguous(const struct ggml_tensor * tensor) {
    const size_t ts = ggml_type_size(tensor->type);
    const int64_t bs = ggml_blck_size(tensor->type);
    return tensor->nb[0] == ts &&
           bs > 0 &&
           tensor->nb[1] == tensor->nb[0] * (size_t) (tensor->ne[0] / bs) &&
           tensor->nb[2] == tensor->nb[1] * (size_t) tensor->ne[1] &&
           tensor->nb[3] == tensor->nb[2] * (size_t) tensor->ne[2];
}

GGML_CALL bool ggml_is_permuted(const struct ggml_tensor * tensor) {
    return tensor->nb[0] > tensor->nb[1] || tensor->nb[1] > tensor->nb[2] || tensor->nb[2] > tensor->nb[3];
}

bool ggml_is_scalar(const struct ggml_tensor * tensor) {
    return tensor->ne[0] == 1 && tensor->ne[1] == 1 && tensor->ne[2] == 1 && tensor->ne[3] == 1;
}

bool ggml_is_vector(const struct ggml_tensor * tensor) {
    return tensor->ne[1] == 1 && tensor->ne[2] == 1 && tensor->ne[3] == 1;
}

bool ggml_is_matrix(const struct ggml_tensor * tensor) {
    return tensor->ne[2] == 1 && tensor->ne[3] == 1;
}

bool ggml_is_3d(const struct ggml_tensor * tensor) {
    return tensor->ne[3] == 1;
}

int ggml_n_dims(const struct ggml_tensor * tensor) {
    for (int i = GGML_MAX_DIMS - 1; i >= 1; i--) {
        if (tensor->ne[i] > 1) {
            return i + 1;
        }
    }
    return 1;
}

bool ggml_are_same_shape(const struct ggml_tensor * t0, const struct ggml_tensor * t1) {
    return t0->ne[0] == t1->ne[0] && t0->ne[1] == t1->ne[1] && t0->ne[2] == t1->ne[2] && t0->ne[3] == t1->ne[3];
}

size_t ggml_tensor_overhead(void) {
    return GGML_OBJECT_SIZE + GGML_TENSOR_SIZE;
}

// ---------------------------------------------------------------------------------------------
// contexts

struct ggml_context * ggml_init(struct ggml_init_params params) {
    ggml_x_init_tables();

    struct ggml_context * ctx = calloc(1, sizeof(struct ggml_context));
    if (ctx == NULL) {
        ggml_x_error(NULL, "ggml_init: out of memory allocating a context");
        return NULL;
    }
    // a caller-provided arena is used as is; an owned one is rounded up to the alignment
    const size_t mem_size = params.mem_buffer ? params.mem_size : GGML_PAD(params.mem_size, GGML_MEM_ALIGN);
    ctx->mem_size = mem_size;
    ctx->no_alloc = params.no_alloc;
    if (params.mem_buffer != NULL) {
        ctx->mem_buffer = params.mem_buffer;
    } else if (mem_size > 0) {
        void * buf = NULL;
        if (posix_memalign(&buf, 64, mem_size) != 0) {
            buf = NULL;
        }
        if (buf == NULL) {
            free(ctx);
            ggml_x_error(NULL, "ggml_init: cannot allocate an arena of %zu bytes", mem_size);
            return NULL;
        }
        ctx->mem_buffer = buf;
        ctx->mem_buffer_owned = true;
    }
    if (((uintptr_t) ctx->mem_buffer) % GGML_MEM_ALIGN != 0) {
        free(ctx);
        ggml_x_error(NULL, "ggml_init: mem_buffer %p is not aligned to %d bytes", params.mem_buffer, GGML_MEM_ALIGN);
        return NULL;
    }
    return ctx;
}

void ggml_free(struct ggml_context * ctx) {
    if (ctx == NULL) {
        return;
    }
    if (ctx->mem_buffer_owned) {
        free(ctx->mem_buffer);
    }
    free(ctx);
}

size_t ggml_used_mem(const struct ggml_context * ctx) {
    return ctx->objects_end == NULL ? 0 : ctx->objects_end->offs + ctx->objects_end->size;
}

bool ggml_get_no_alloc(struct ggml_context * ctx) {
    return ctx->no_alloc;
}

void ggml_set_no_alloc(struct ggml_context * ctx, bool no_alloc) {
    ctx->no_alloc = no_alloc;
}

void * ggml_get_mem_buffer(const struct ggml_context * ctx) {
    return ctx->mem_buffer;
}

size_t ggml_get_mem_size(const struct ggml_context * ctx) {
    return ctx->mem_size;
}

size_t ggml_get_max_tensor_size(const struct ggml_context * ctx) {
    size_t max_size = 0;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        const size_t n = ggml_nbytes(t);
        if (n > max_size) {
            max_size = n;
        }
    }
    return max_size;
}

static struct ggml_object * ggml_x_new_object(struct ggml_context * ctx, enum ggml_object_type type, size_t size) {
    const size_t cur_end = ggml_used_mem(ctx);
    const size_t size_needed = GGML_PAD(size, GGML_MEM_ALIGN);
    if (size_needed < size || cur_end + GGML_OBJECT_SIZE + size_needed > ctx->mem_size ||
        cur_end + GGML_OBJECT_SIZE + size_needed < cur_end) {
        ggml_x_error(ctx, "ggml_new_object: not enough space in the context's arena (needed %zu, available %zu)",
                     cur_end + GGML_OBJECT_SIZE + size_needed, ctx->mem_size);
        return NULL;
    }
    struct ggml_object * obj = (struct ggml_object *) ((char *) ctx->mem_buffer + cur_end);
    memset(obj, 0, sizeof(*obj));
    obj->offs = cur_end + GGML_OBJECT_SIZE;
    obj->size = size_needed;
    obj->next = NULL;
    obj->type = type;
    if (ctx->objects_end != NULL) {
        ctx->objects_end->next = obj;
    } else {
        ctx->objects_begin = obj;
    }
    ctx->objects_end = obj;
    ctx->n_objects++;
    return obj;
}

void * ggml_x_ctx_alloc(struct ggml_context * ctx, enum ggml_object_type type, size_t size) {
    if (ctx == NULL) {
        ggml_x_error(NULL, "ggml_x_ctx_alloc: NULL context");
        return NULL;
    }
    struct ggml_object * obj = ggml_x_new_object(ctx, type, size);
    return obj ? (char *) ctx->mem_buffer + obj->offs : NULL;
}

// ---------------------------------------------------------------------------------------------
// tensors

static void ggml_x_set_dense_strides(struct ggml_tensor * t) {
    t->nb[0] = ggml_type_size(t->type);
    t->nb[1] = t->nb[0] * (size_t) (t->ne[0] / ggml_blck_size(t->type));
    for (int i = 2; i < GGML_MAX_DIMS; i++) {
        t->nb[i] = t->nb[i - 1] * (size_t) t->ne[i - 1];
    }
}

struct ggml_tensor * ggml_x_new_tensor_impl(struct ggml_context * ctx, enum ggml_type type, int n_dims,
                                            const int64_t * ne, struct ggml_tensor * view_src, size_t view_offs) {
    if (ctx == NULL) {
        ggml_x_error(NULL, "ggml_new_tensor: NULL context");
        return NULL;
    }
    GGML_X_CHECK(ctx, ggml_x_type_valid(type), "ggml_new_tensor: invalid type %d", (int) type);
    GGML_X_CHECK(ctx, n_dims >= 1 && n_dims <= GGML_MAX_DIMS, "ggml_new_tensor: n_dims %d not in 1..%d", n_dims, GGML_MAX_DIMS);
    GGML_X_CHECK(ctx, ne != NULL, "ggml_new_tensor: NULL shape");

    int64_t shape[GGML_MAX_DIMS] = { 1, 1, 1, 1 };
    for (int i = 0; i < n_dims; i++) {
        GGML_X_CHECK(ctx, ne[i] >= 0, "ggml_new_tensor: ne[%d] = %lld is negative", i, (long long) ne[i]);
        shape[i] = ne[i];
    }
    const int blck = ggml_blck_size(type);
    GGML_X_CHECK(ctx, shape[0] % blck == 0, "ggml_new_tensor: ne[0] = %lld is not a multiple of the %s block size %d",
                 (long long) shape[0], ggml_type_name(type), blck);

    // size of the data, checked for overflow
    size_t data_size = ggml_row_size(type, shape[0]);
    for (int i = 1; i < GGML_MAX_DIMS; i++) {
        if (shape[i] != 0 && data_size > SIZE_MAX / (size_t) shape[i]) {
            ggml_x_error(ctx, "ggml_new_tensor: size of a %s tensor [%lld,%lld,%lld,%lld] overflows",
                         ggml_type_name(type), (long long) shape[0], (long long) shape[1], (long long) shape[2], (long long) shape[3]);
            return NULL;
        }
        data_size *= (size_t) shape[i];
    }

    if (view_src != NULL && view_src->view_src != NULL) {
        view_offs += view_src->view_offs;
        view_src = view_src->view_src;
    }
    if (view_src != NULL) {
        const size_t src_size = ggml_nbytes(view_src);
        GGML_X_CHECK(ctx, view_offs <= src_size && data_size <= src_size - view_offs,
                     "ggml_view: view of %zu bytes at offset %zu exceeds the %zu bytes of tensor '%s'",
                     data_size, view_offs, src_size, view_src->name);
    }

    void * data = view_src != NULL && view_src->data != NULL ? (char *) view_src->data + view_offs : NULL;
    const bool alloc_data = view_src == NULL && !ctx->no_alloc && ctx->mem_buffer != NULL;

    struct ggml_object * obj = ggml_x_new_object(ctx, GGML_OBJECT_TENSOR, GGML_TENSOR_SIZE + (alloc_data ? data_size : 0));
    if (obj == NULL) {
        return NULL;
    }
    struct ggml_tensor * t = (struct ggml_tensor *) ((char *) ctx->mem_buffer + obj->offs);
    memset(t, 0, sizeof(*t));
    t->type = type;
    t->backend = GGML_BACKEND_CPU;
    t->buffer = view_src != NULL ? view_src->buffer : NULL;
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        t->ne[i] = shape[i];
    }
    ggml_x_set_dense_strides(t);
    t->op = GGML_OP_NONE;
    t->view_src = view_src;
    t->view_offs = view_offs;
    t->data = alloc_data ? (void *) (t + 1) : data;
    return t;
}

struct ggml_tensor * ggml_new_tensor(struct ggml_context * ctx, enum ggml_type type, int n_dims, const int64_t * ne) {
    return ggml_x_new_tensor_impl(ctx, type, n_dims, ne, NULL, 0);
}

struct ggml_tensor * ggml_new_tensor_1d(struct ggml_context * ctx, enum ggml_type type, int64_t ne0) {
    return ggml_new_tensor(ctx, type, 1, &ne0);
}

struct ggml_tensor * ggml_new_tensor_2d(struct ggml_context * ctx, enum ggml_type type, int64_t ne0, int64_t ne1) {
    const int64_t ne[2] = { ne0, ne1 };
    return ggml_new_tensor(ctx, type, 2, ne);
}

struct ggml_tensor * ggml_new_tensor_3d(struct ggml_context * ctx, enum ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2) {
    const int64_t ne[3] = { ne0, ne1, ne2 };
    return ggml_new_tensor(ctx, type, 3, ne);
}

struct ggml_tensor * ggml_new_tensor_4d(struct ggml_context * ctx, enum ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    const int64_t ne[4] = { ne0, ne1, ne2, ne3 };
    return ggml_new_tensor(ctx, type, 4, ne);
}

struct ggml_tensor * ggml_new_i32(struct ggml_context * ctx, int32_t value) {
    GGML_X_CHECK(ctx, ctx != NULL && !ctx->no_alloc, "ggml_new_i32: needs a context that allocates data");
    struct ggml_tensor * t = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 1);
    return t ? ggml_set_i32(t, value) : NULL;
}

struct ggml_tensor * ggml_new_f32(struct ggml_context * ctx, float value) {
    GGML_X_CHECK(ctx, ctx != NULL && !ctx->no_alloc, "ggml_new_f32: needs a context that allocates data");
    struct ggml_tensor * t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1);
    return t ? ggml_set_f32(t, value) : NULL;
}

struct ggml_tensor * ggml_dup_tensor(struct ggml_context * ctx, const struct ggml_tensor * src) {
    GGML_X_CHECK(ctx, src != NULL, "ggml_dup_tensor: NULL tensor");
    return ggml_new_tensor(ctx, src->type, GGML_MAX_DIMS, src->ne);
}

static void ggml_x_copy_name_with_suffix(struct ggml_tensor * t, const struct ggml_tensor * src, const char * suffix) {
    ggml_format_name(t, "%s%s", src->name, suffix);
}

struct ggml_tensor * ggml_view_tensor(struct ggml_context * ctx, struct ggml_tensor * src) {
    GGML_X_CHECK(ctx, src != NULL, "ggml_view_tensor: NULL tensor");
    struct ggml_tensor * t = ggml_x_new_tensor_impl(ctx, src->type, GGML_MAX_DIMS, src->ne, src, 0);
    if (t == NULL) {
        return NULL;
    }
    ggml_x_copy_name_with_suffix(t, src, " (view)");
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        t->nb[i] = src->nb[i];
    }
    return t;
}

struct ggml_tensor * ggml_get_first_tensor(const struct ggml_context * ctx) {
    for (struct ggml_object * obj = ctx->objects_begin; obj != NULL; obj = obj->next) {
        if (obj->type == GGML_OBJECT_TENSOR) {
            return (struct ggml_tensor *) ((char *) ctx->mem_buffer + obj->offs);
        }
    }
    return NULL;
}

struct ggml_tensor * ggml_get_next_tensor(const struct ggml_context * ctx, struct ggml_tensor * tensor) {
    struct ggml_object * obj = (struct ggml_object *) ((char *) tensor - GGML_OBJECT_SIZE);
    for (obj = obj->next; obj != NULL; obj = obj->next) {
        if (obj->type == GGML_OBJECT_TENSOR) {
            return (struct ggml_tensor *) ((char *) ctx->mem_buffer + obj->offs);
        }
    }
    return NULL;
}

struct ggml_tensor * ggml_get_tensor(struct ggml_context * ctx, const char * name) {
    if (ctx == NULL || name == NULL) {
        return NULL;
    }
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        if (strcmp(t->name, name) == 0) {
            return t;
        }
    }
    return NULL;
}

// ---------------------------------------------------------------------------------------------
// element access (host memory only)

static bool ggml_x_check_host_data(const struct ggml_tensor * t, const char * fn) {
    if (t == NULL) {
        ggml_x_error(NULL, "%s: NULL tensor", fn);
        return false;
    }
    if (t->data == NULL) {
        ggml_x_error(NULL, "%s: tensor '%s' has no data", fn, t->name);
        return false;
    }
    if (t->type != GGML_TYPE_F32 && t->type != GGML_TYPE_F16 && t->type != GGML_TYPE_I8 &&
        t->type != GGML_TYPE_I16 && t->type != GGML_TYPE_I32) {
        ggml_x_error(NULL, "%s: element access is not supported for type %s", fn, ggml_type_name(t->type));
        return false;
    }
    return true;
}

static double ggml_x_read_elem(const struct ggml_tensor * t, const char * p) {
    switch (t->type) {
        case GGML_TYPE_F32: { float v; memcpy(&v, p, sizeof(v)); return v; }
        case GGML_TYPE_F16: { ggml_fp16_t v; memcpy(&v, p, sizeof(v)); return ggml_fp16_to_fp32(v); }
        case GGML_TYPE_I8:  { int8_t v; memcpy(&v, p, sizeof(v)); return v; }
        case GGML_TYPE_I16: { int16_t v; memcpy(&v, p, sizeof(v)); return v; }
        case GGML_TYPE_I32: { int32_t v; memcpy(&v, p, sizeof(v)); return v; }
        default: return 0.0;
    }
}

static void ggml_x_write_elem_i32(const struct ggml_tensor * t, char * p, int32_t value) {
    switch (t->type) {
        case GGML_TYPE_F32: { float v = (float) value; memcpy(p, &v, sizeof(v)); break; }
        case GGML_TYPE_F16: { ggml_fp16_t v = ggml_fp32_to_fp16((float) value); memcpy(p, &v, sizeof(v)); break; }
        case GGML_TYPE_I8:  { int8_t v = (int8_t) value; memcpy(p, &v, sizeof(v)); break; }
        case GGML_TYPE_I16: { int16_t v = (int16_t) value; memcpy(p, &v, sizeof(v)); break; }
        case GGML_TYPE_I32: { memcpy(p, &value, sizeof(value)); break; }
        default: break;
    }
}

static void ggml_x_write_elem_f32(const struct ggml_tensor * t, char * p, float value) {
    switch (t->type) {
        case GGML_TYPE_F32: { memcpy(p, &value, sizeof(value)); break; }
        case GGML_TYPE_F16: { ggml_fp16_t v = ggml_fp32_to_fp16(value); memcpy(p, &v, sizeof(v)); break; }
        case GGML_TYPE_I8:  { int8_t v = (int8_t) value; memcpy(p, &v, sizeof(v)); break; }
        case GGML_TYPE_I16: { int16_t v = (int16_t) value; memcpy(p, &v, sizeof(v)); break; }
        case GGML_TYPE_I32: { int32_t v = (int32_t) value; memcpy(p, &v, sizeof(v)); break; }
        default: break;
    }
}

// byte address of element (i0, i1, i2, i3), or NULL when out of range
static char * ggml_x_elem_ptr(const struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3, const char * fn) {
    if (i0 < 0 || i0 >= t->ne[0] || i1 < 0 || i1 >= t->ne[1] || i2 < 0 || i2 >= t->ne[2] || i3 < 0 || i3 >= t->ne[3]) {
        ggml_x_error(NULL, "%s: index [%lld,%lld,%lld,%lld] out of range for shape [%lld,%lld,%lld,%lld]", fn,
                     (long long) i0, (long long) i1, (long long) i2, (long long) i3,
                     (long long) t->ne[0], (long long) t->ne[1], (long long) t->ne[2], (long long) t->ne[3]);
        return NULL;
    }
    return (char *) t->data + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}

// flat index in logical order -> element address
static char * ggml_x_elem_ptr_1d(const struct ggml_tensor * t, int64_t i, const char * fn) {
    if (i < 0 || i >= ggml_nelements(t)) {
        ggml_x_error(NULL, "%s: index %lld out of range for %lld elements", fn, (long long) i, (long long) ggml_nelements(t));
        return NULL;
    }
    const int64_t i0 = i % t->ne[0];
    const int64_t i1 = (i / t->ne[0]) % t->ne[1];
    const int64_t i2 = (i / (t->ne[0] * t->ne[1])) % t->ne[2];
    const int64_t i3 = i / (t->ne[0] * t->ne[1] * t->ne[2]);
    return ggml_x_elem_ptr(t, i0, i1, i2, i3, fn);
}

struct ggml_tensor * ggml_set_zero(struct ggml_tensor * tensor) {
    if (tensor == NULL) {
        ggml_x_error(NULL, "ggml_set_zero: NULL tensor");
        return NULL;
    }
    if (tensor->data == NULL) {
        return tensor;
    }
    if (ggml_is_contiguous(tensor)) {
        memset(tensor->data, 0, ggml_nbytes(tensor));
        return tensor;
    }
    const size_t row = ggml_row_size(tensor->type, tensor->ne[0]);
    for (int64_t i3 = 0; i3 < tensor->ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < tensor->ne[2]; i2++) {
            for (int64_t i1 = 0; i1 < tensor->ne[1]; i1++) {
                char * p = (char *) tensor->data + i1 * tensor->nb[1] + i2 * tensor->nb[2] + i3 * tensor->nb[3];
                if (tensor->nb[0] == ggml_type_size(tensor->type)) {
                    memset(p, 0, row);
                } else {
                    for (int64_t i0 = 0; i0 < tensor->ne[0]; i0++) {
                        memset(p + i0 * tensor->nb[0], 0, ggml_type_size(tensor->type));
                    }
                }
            }
        }
    }
    return tensor;
}

struct ggml_tensor * ggml_set_i32(struct ggml_tensor * tensor, int32_t value) {
    if (!ggml_x_check_host_data(tensor, "ggml_set_i32")) {
        return NULL;
    }
    const int64_t n = ggml_nelements(tensor);
    for (int64_t i = 0; i < n; i++) {
        ggml_x_write_elem_i32(tensor, ggml_x_elem_ptr_1d(tensor, i, "ggml_set_i32"), value);
    }
    return tensor;
}

struct ggml_tensor * ggml_set_f32(struct ggml_tensor * tensor, float value) {
    if (!ggml_x_check_host_data(tensor, "ggml_set_f32")) {
        return NULL;
    }
    const int64_t n = ggml_nelements(tensor);
    for (int64_t i = 0; i < n; i++) {
        ggml_x_write_elem_f32(tensor, ggml_x_elem_ptr_1d(tensor, i, "ggml_set_f32"), value);
    }
    return tensor;
}

int32_t ggml_get_i32_1d(const struct ggml_tensor * tensor, int i) {
    if (!ggml_x_check_host_data(tensor, "ggml_get_i32_1d")) {
        return 0;
    }
    const char * p = ggml_x_elem_ptr_1d(tensor, i, "ggml_get_i32_1d");
    return p ? (int32_t) ggml_x_read_elem(tensor, p) : 0;
}

void ggml_set_i32_1d(const struct ggml_tensor * tensor, int i, int32_t value) {
    if (!ggml_x_check_host_data(tensor, "ggml_set_i32_1d")) {
        return;
    }
    char * p = ggml_x_elem_ptr_1d(tensor, i, "ggml_set_i32_1d");
    if (p) {
        ggml_x_write_elem_i32(tensor, p, value);
    }
}

int32_t ggml_get_i32_nd(const struct ggml_tensor * tensor, int i0, int i1, int i2, int i3) {
    if (!ggml_x_check_host_data(tensor, "ggml_get_i32_nd")) {
        return 0;
    }
    const char * p = ggml_x_elem_ptr(tensor, i0, i1, i2, i3, "ggml_get_i32_nd");
    return p ? (int32_t) ggml_x_read_elem(tensor, p) : 0;
}

void ggml_set_i32_nd(const struct ggml_tensor * tensor, int i0, int i1, int i2, int i3, int32_t value) {
    if (!ggml_x_check_host_data(tensor, "ggml_set_i32_nd")) {
        return;
    }
    char * p = ggml_x_elem_ptr(tensor, i0, i1, i2, i3, "ggml_set_i32_nd");
    if (p) {
        ggml_x_write_elem_i32(tensor, p, value);
    }
}

float ggml_get_f32_1d(const struct ggml_tensor * tensor, int i) {
    if (!ggml_x_check_host_data(tensor, "ggml_get_f32_1d")) {
        return 0.0f;
    }
    const char * p = ggml_x_elem_ptr_1d(tensor, i, "ggml_get_f32_1d");
    return p ? (float) ggml_x_read_elem(tensor, p) : 0.0f;
}

void ggml_set_f32_1d(const struct ggml_tensor * tensor, int i, float value) {
    if (!ggml_x_check_host_data(tensor, "ggml_set_f32_1d")) {
        return;
    }
    char * p = ggml_x_elem_ptr_1d(tensor, i, "ggml_set_f32_1d");
    if (p) {
        ggml_x_write_elem_f32(tensor, p, value);
    }
}

float ggml_get_f32_nd(const struct ggml_tensor * tensor, int i0, int i1, int i2, int i3) {
    if (!ggml_x_check_host_data(tensor, "ggml_get_f32_nd")) {
        return 0.0f;
    }
    const char * p = ggml_x_elem_ptr(tensor, i0, i1, i2, i3, "ggml_get_f32_nd");
    return p ? (float) ggml_x_read_elem(tensor, p) : 0.0f;
}

void ggml_set_f32_nd(const struct ggml_tensor * tensor, int i0, int i1, int i2, int i3, float value) {
    if (!ggml_x_check_host_data(tensor, "ggml_set_f32_nd")) {
        return;
    }
    char * p = ggml_x_elem_ptr(tensor, i0, i1, i2, i3, "ggml_set_f32_nd");
    if (p) {
        ggml_x_write_elem_f32(tensor, p, value);
    }
}

void * ggml_get_data(const struct ggml_tensor * tensor) {
    return tensor ? tensor->data : NULL;
}

float * ggml_get_data_f32(const struct ggml_tensor * tensor) {
    if (tensor == NULL || tensor->type != GGML_TYPE_F32) {
        ggml_x_error(NULL, "ggml_get_data_f32: tensor is %s, not f32", tensor ? ggml_type_name(tensor->type) : "NULL");
        return NULL;
    }
    return (float *) tensor->data;
}

// ---------------------------------------------------------------------------------------------
// names

const char * ggml_get_name(const struct ggml_tensor * tensor) {
    return tensor->name;
}

struct ggml_tensor * ggml_set_name(struct ggml_tensor * tensor, const char * name) {
    if (tensor == NULL) {
        ggml_x_error(NULL, "ggml_set_name: NULL tensor");
        return NULL;
    }
    snprintf(tensor->name, sizeof(tensor->name), "%s", name ? name : "");
    return tensor;
}

struct ggml_tensor * ggml_format_name(struct ggml_tensor * tensor, const char * fmt, ...) {
    if (tensor == NULL) {
        ggml_x_error(NULL, "ggml_format_name: NULL tensor");
        return NULL;
    }
    va_list args;
    va_start(args, fmt);
    vsnprintf(tensor->name, sizeof(tensor->name), fmt, args);
    va_end(args);
    return tensor;
}

// ---------------------------------------------------------------------------------------------
// op results (used by the constructors in ops/)

static void ggml_x_set_srcs(struct ggml_tensor * t, int n_srcs, struct ggml_tensor * const * srcs) {
    for (int i = 0; i < n_srcs && i < GGML_MAX_SRC; i++) {
        t->src[i] = srcs[i];
    }
}

struct ggml_tensor * ggml_x_new_op_tensor(struct ggml_context * ctx, enum ggml_op op, enum ggml_type type,
                                          const int64_t ne[GGML_MAX_DIMS], int n_srcs, struct ggml_tensor * const * srcs) {
    GGML_ASSERT(n_srcs >= 0 && n_srcs <= GGML_MAX_SRC);
    struct ggml_tensor * t = ggml_new_tensor(ctx, type, GGML_MAX_DIMS, ne);
    if (t == NULL) {
        return NULL;
    }
    t->op = op;
    ggml_x_set_srcs(t, n_srcs, srcs);
    return ggml_x_grad_attach(ctx, t) ? t : NULL;
}

struct ggml_tensor * ggml_x_new_op_view(struct ggml_context * ctx, enum ggml_op op, struct ggml_tensor * a,
                                        int n_srcs, struct ggml_tensor * const * srcs) {
    GGML_ASSERT(n_srcs >= 0 && n_srcs <= GGML_MAX_SRC);
    struct ggml_tensor * t = ggml_view_tensor(ctx, a);
    if (t == NULL) {
        return NULL;
    }
    t->op = op;
    ggml_x_set_srcs(t, n_srcs, srcs);
    return ggml_x_grad_attach(ctx, t) ? t : NULL;
}

// ---------------------------------------------------------------------------------------------
// views, reshapes, permutations

// the byte range [view_offs, view_offs + extent) a strided view touches must lie inside its root
static bool ggml_x_view_in_bounds(struct ggml_context * ctx, const char * fn, const struct ggml_tensor * a,
                                  const int64_t * ne, const size_t * nb, size_t offset) {
    const struct ggml_tensor * root = a->view_src ? a->view_src : a;
    const size_t base = (a->view_src ? a->view_offs : 0) + offset;
    size_t extent = 0;
    bool empty = false;
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        if (ne[i] == 0) {
            empty = true;
        }
    }
    if (!empty) {
        extent = nb[0] * (size_t) (ne[0] / ggml_blck_size(a->type) - 1) + ggml_type_size(a->type);
        for (int i = 1; i < GGML_MAX_DIMS; i++) {
            extent += (size_t) (ne[i] - 1) * nb[i];
        }
    }
    const size_t root_size = ggml_nbytes(root);
    if (base > root_size || extent > root_size - base) {
        ggml_x_error(ctx, "%s: view [%lld,%lld,%lld,%lld] with strides [%zu,%zu,%zu,%zu] at offset %zu "
                     "exceeds the %zu bytes of '%s'", fn, (long long) ne[0], (long long) ne[1], (long long) ne[2],
                     (long long) ne[3], nb[0], nb[1], nb[2], nb[3], offset, root_size, root->name);
        return false;
    }
    return true;
}

static struct ggml_tensor * ggml_x_view_impl(struct ggml_context * ctx, const char * fn, struct ggml_tensor * a,
                                             int n_dims, const int64_t * ne, const size_t * nb_in, size_t offset) {
    GGML_X_CHECK(ctx, a != NULL, "%s: NULL tensor", fn);
    int64_t shape[GGML_MAX_DIMS] = { 1, 1, 1, 1 };
    for (int i = 0; i < n_dims; i++) {
        GGML_X_CHECK(ctx, ne[i] >= 0, "%s: ne[%d] = %lld is negative", fn, i, (long long) ne[i]);
        shape[i] = ne[i];
    }
    const int blck = ggml_blck_size(a->type);
    GGML_X_CHECK(ctx, shape[0] % blck == 0, "%s: ne0 = %lld is not a multiple of the %s block size %d", fn,
                 (long long) shape[0], ggml_type_name(a->type), blck);
    size_t nb[GGML_MAX_DIMS];
    nb[0] = ggml_type_size(a->type);
    nb[1] = nb_in && n_dims > 1 ? nb_in[0] : nb[0] * (size_t) (shape[0] / blck);
    nb[2] = nb_in && n_dims > 2 ? nb_in[1] : nb[1] * (size_t) shape[1];
    nb[3] = nb_in && n_dims > 3 ? nb_in[2] : nb[2] * (size_t) shape[2];
    if (!ggml_x_view_in_bounds(ctx, fn, a, shape, nb, offset)) {
        return NULL;
    }
    // create with a zero-size check (strided extent verified above), then set the strides
    struct ggml_tensor * root = a->view_src ? a->view_src : a;
    const size_t root_offs = (a->view_src ? a->view_offs : 0) + offset;
    struct ggml_tensor * t = ggml_x_new_tensor_impl(ctx, a->type, 1, (const int64_t[]) { 0 }, root, root_offs);
    if (t == NULL) {
        return NULL;
    }
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        t->ne[i] = shape[i];
        t->nb[i] = nb[i];
    }
    ggml_x_copy_name_with_suffix(t, a, " (view)");
    t->op = GGML_OP_VIEW;
    t->src[0] = a;
    ggml_x_set_op_params(t, &offset, sizeof(offset));
    return ggml_x_grad_attach(ctx, t) ? t : NULL;
}

struct ggml_tensor * ggml_view_1d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, size_t offset) {
    const int64_t ne[1] = { ne0 };
    return ggml_x_view_impl(ctx, "ggml_view_1d", a, 1, ne, NULL, offset);
}

struct ggml_tensor * ggml_view_2d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1,
                                  size_t nb1, size_t offset) {
    const int64_t ne[2] = { ne0, ne1 };
    const size_t nb[1] = { nb1 };
    return ggml_x_view_impl(ctx, "ggml_view_2d", a, 2, ne, nb, offset);
}

struct ggml_tensor * ggml_view_3d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2,
                                  size_t nb1, size_t nb2, size_t offset) {
    const int64_t ne[3] = { ne0, ne1, ne2 };
    const size_t nb[2] = { nb1, nb2 };
    return ggml_x_view_impl(ctx, "ggml_view_3d", a, 3, ne, nb, offset);
}

struct ggml_tensor * ggml_view_4d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3,
                                  size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    const int64_t ne[4] = { ne0, ne1, ne2, ne3 };
    const size_t nb[3] = { nb1, nb2, nb3 };
    return ggml_x_view_impl(ctx, "ggml_view_4d", a, 4, ne, nb, offset);
}

static struct ggml_tensor * ggml_x_reshape_impl(struct ggml_context * ctx, const char * fn, struct ggml_tensor * a,
                                                int n_dims, const int64_t * ne) {
    GGML_X_CHECK(ctx, a != NULL, "%s: NULL tensor", fn);
    char sa[96];
    GGML_X_CHECK(ctx, ggml_is_contiguous(a), "%s: tensor %s %s is not contiguous", fn, a->name, ggml_x_shape_str(a, sa, sizeof(sa)));
    int64_t n = 1;
    for (int i = 0; i < n_dims; i++) {
        GGML_X_CHECK(ctx, ne[i] >= 0, "%s: ne[%d] = %lld is negative", fn, i, (long long) ne[i]);
        n *= ne[i];
    }
    GGML_X_CHECK(ctx, n == ggml_nelements(a), "%s: %lld elements cannot be reshaped from %s to %lld elements",
                 fn, (long long) ggml_nelements(a), ggml_x_shape_str(a, sa, sizeof(sa)), (long long) n);
    struct ggml_tensor * t = ggml_x_new_tensor_impl(ctx, a->type, n_dims, ne, a, 0);
    if (t == NULL) {
        return NULL;
    }
    ggml_x_copy_name_with_suffix(t, a, " (reshaped)");
    t->op = GGML_OP_RESHAPE;
    t->src[0] = a;
    return ggml_x_grad_attach(ctx, t) ? t : NULL;
}

struct ggml_tensor * ggml_reshape(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    GGML_X_CHECK(ctx, b != NULL, "ggml_reshape: NULL shape tensor");
    return ggml_x_reshape_impl(ctx, "ggml_reshape", a, GGML_MAX_DIMS, b->ne);
}

struct ggml_tensor * ggml_reshape_1d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0) {
    const int64_t ne[1] = { ne0 };
    return ggml_x_reshape_impl(ctx, "ggml_reshape_1d", a, 1, ne);
}

struct ggml_tensor * ggml_reshape_2d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1) {
    const int64_t ne[2] = { ne0, ne1 };
    return ggml_x_reshape_impl(ctx, "ggml_reshape_2d", a, 2, ne);
}

struct ggml_tensor * ggml_reshape_3d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2) {
    const int64_t ne[3] = { ne0, ne1, ne2 };
    return ggml_x_reshape_impl(ctx, "ggml_reshape_3d", a, 3, ne);
}

struct ggml_tensor * ggml_reshape_4d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    const int64_t ne[4] = { ne0, ne1, ne2, ne3 };
    return ggml_x_reshape_impl(ctx, "ggml_reshape_4d", a, 4, ne);
}

struct ggml_tensor * ggml_permute(struct ggml_context * ctx, struct ggml_tensor * a, int axis0, int axis1, int axis2, int axis3) {
    GGML_X_CHECK(ctx, a != NULL, "ggml_permute: NULL tensor");
    const int axes[4] = { axis0, axis1, axis2, axis3 };
    bool seen[4] = { false, false, false, false };
    for (int i = 0; i < 4; i++) {
        GGML_X_CHECK(ctx, axes[i] >= 0 && axes[i] < GGML_MAX_DIMS && !seen[axes[i]],
                     "ggml_permute: axes (%d,%d,%d,%d) are not a permutation of 0..3", axis0, axis1, axis2, axis3);
        seen[axes[i]] = true;
    }
    struct ggml_tensor * t = ggml_view_tensor(ctx, a);
    if (t == NULL) {
        return NULL;
    }
    ggml_x_copy_name_with_suffix(t, a, " (permuted)");
    for (int i = 0; i < 4; i++) {
        t->ne[axes[i]] = a->ne[i];
        t->nb[axes[i]] = a->nb[i];
    }
    t->op = GGML_OP_PERMUTE;
    t->src[0] = a;
    for (int i = 0; i < 4; i++) {
        t->op_params[i] = axes[i];
    }
    return ggml_x_grad_attach(ctx, t) ? t : NULL;
}

struct ggml_tensor * ggml_transpose(struct ggml_context * ctx, struct ggml_tensor * a) {
    GGML_X_CHECK(ctx, a != NULL, "ggml_transpose: NULL tensor");
    struct ggml_tensor * t = ggml_view_tensor(ctx, a);
    if (t == NULL) {
        return NULL;
    }
    ggml_x_copy_name_with_suffix(t, a, " (transposed)");
    t->ne[0] = a->ne[1];
    t->ne[1] = a->ne[0];
    t->nb[0] = a->nb[1];
    t->nb[1] = a->nb[0];
    t->op = GGML_OP_TRANSPOSE;
    t->src[0] = a;
    return ggml_x_grad_attach(ctx, t) ? t : NULL;
}
