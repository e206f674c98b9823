// ops-common.h - helpers shared by the op constructors in ggml/src/ops/*.c: argument checks
// with readable messages and the creation of result tensors (new tensor, or inplace view).
//
// Every public constructor validates its arguments with GGML_X_CHECK (see ggml-impl.h): in the
// default mode a failure prints the message and aborts, in recoverable mode the constructor
// returns NULL and the message is kept for ggml_x_last_error(). Messages start with the name of
// the public function and carry the offending shapes/values.

#ifndef GGML_OPS_COMMON_H
#define GGML_OPS_COMMON_H

#include "../ggml-impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

// "[ne0,ne1,ne2,ne3]" of a tensor, valid until the end of the full expression that uses it
struct x_shape_buf {
    char s[96];
};

static inline struct x_shape_buf x_shape(const struct ggml_tensor * t) {
    struct x_shape_buf b;
    if (t == NULL) {
        snprintf(b.s, sizeof(b.s), "(null)");
    } else {
        snprintf(b.s, sizeof(b.s), "[%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 "]",
                 t->ne[0], t->ne[1], t->ne[2], t->ne[3]);
    }
    return b;
}

#define X_SHAPE(t) (x_shape(t).s)

// name of a type for messages (tolerates invalid values)
static inline const char * x_type_name(enum ggml_type type) {
    if (!ggml_x_type_valid(type)) {
        return "invalid";
    }
    const char * name = ggml_type_name(type);
    return name ? name : "?";
}

// --- argument checks (each returns NULL from the calling constructor on failure) -------------

#define X_CHECK_CTX(ctx, fn) \
    GGML_X_CHECK((ctx), (ctx) != NULL, "%s: ctx is NULL", (fn))

#define X_CHECK_TENSOR(ctx, fn, t) \
    GGML_X_CHECK((ctx), (t) != NULL, "%s: tensor argument '%s' is NULL", (fn), #t)

#define X_CHECK_TYPE(ctx, fn, type) \
    GGML_X_CHECK((ctx), ggml_x_type_valid(type), "%s: invalid type %d", (fn), (int) (type))

// every t1->ne[i] is a multiple of t0->ne[i] (t0 can be tiled to t1's shape)
static inline bool x_can_repeat(const struct ggml_tensor * t0, const struct ggml_tensor * t1) {
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        if (t0->ne[i] == 0) {
            if (t1->ne[i] != 0) {
                return false;
            }
        } else if (t1->ne[i] % t0->ne[i] != 0) {
            return false;
        }
    }
    return true;
}

// dense rows: dimension 0 has unit stride and dimensions 1..3 are packed one after the other
static inline bool x_is_padded_1d(const struct ggml_tensor * t) {
    return t->nb[0] == ggml_type_size(t->type) &&
           t->nb[2] == t->nb[1] * (size_t) t->ne[1] &&
           t->nb[3] == t->nb[2] * (size_t) t->ne[2];
}

// dims 2..3 of big are multiples of small's (zero only with zero): mul_mat and out_prod
static inline bool x_broadcasts_23(const struct ggml_tensor * small, const struct ggml_tensor * big) {
    for (int i = 2; i < GGML_MAX_DIMS; i++) {
        if (small->ne[i] == 0 ? big->ne[i] != 0 : big->ne[i] % small->ne[i] != 0) {
            return false;
        }
    }
    return true;
}

// The strided window of ggml_acc / ggml_set: b's elements placed in a's data at
// offset + i0*esize + i1*nb1 + i2*nb2 + i3*nb3. Checks the shared preconditions (a dense, a of a
// non-block type, the strides/offset fit the int32 op_params and are multiples of the element
// size, b not larger than a, the window inside a). Returns a, or NULL after reporting.
static inline struct ggml_tensor * x_check_window(struct ggml_context * ctx, const char * fn,
                                                  struct ggml_tensor * a, struct ggml_tensor * b,
                                                  size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    GGML_X_CHECK(ctx, ggml_is_contiguous(a), "%s: a must be contiguous (a %s)", fn, X_SHAPE(a));
    GGML_X_CHECK(ctx, ggml_blck_size(a->type) == 1, "%s: a has a block type (%s)", fn, x_type_name(a->type));
    const size_t es = ggml_type_size(a->type);
    GGML_X_CHECK(ctx, nb1 <= INT32_MAX && nb2 <= INT32_MAX && nb3 <= INT32_MAX && offset <= INT32_MAX,
                 "%s: nb1 (%zu), nb2 (%zu), nb3 (%zu) and offset (%zu) must fit in int32", fn, nb1, nb2, nb3, offset);
    GGML_X_CHECK(ctx, nb1 % es == 0 && nb2 % es == 0 && nb3 % es == 0 && offset % es == 0,
                 "%s: nb1 (%zu), nb2 (%zu), nb3 (%zu) and offset (%zu) must be multiples of the element size (%zu)",
                 fn, nb1, nb2, nb3, offset, es);
    GGML_X_CHECK(ctx, ggml_nelements(b) <= ggml_nelements(a),
                 "%s: b has more elements than a (a %s, b %s)", fn, X_SHAPE(a), X_SHAPE(b));
    if (ggml_nelements(b) > 0) {
        const size_t strides[GGML_MAX_DIMS] = { es, nb1, nb2, nb3 };
        size_t end = offset + es; // offset <= INT32_MAX: no overflow
        bool overflow = false;
        for (int i = 0; i < GGML_MAX_DIMS; i++) {
            size_t step;
            overflow = overflow || __builtin_mul_overflow((size_t) (b->ne[i] - 1), strides[i], &step);
            overflow = overflow || __builtin_add_overflow(end, step, &end);
        }
        GGML_X_CHECK(ctx, !overflow && end <= ggml_nbytes(a),
                     "%s: the window (b %s, nb1 %zu, nb2 %zu, nb3 %zu, offset %zu) does not lie inside a (%s, %zu bytes)",
                     fn, X_SHAPE(b), nb1, nb2, nb3, offset, X_SHAPE(a), ggml_nbytes(a));
    }
    return a;
}

// --- result tensors --------------------------------------------------------------------------

// A helper of the core (tensor creation, views, reshapes) failed and, the context being
// recoverable, returned NULL: record its message again, prefixed by the constructor's name.
static inline void x_report_inner(struct ggml_context * ctx, const char * fn) {
    const char * e = ggml_x_last_error();
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", e ? e : "could not create the result tensor");
    const size_t n = strlen(fn);
    if (strncmp(buf, fn, n) == 0 && buf[n] == ':') {
        ggml_x_error(ctx, "%s", buf);
    } else {
        ggml_x_error(ctx, "%s: %s", fn, buf);
    }
}

// pass t through; when it is NULL, re-report the inner error under fn
static inline struct ggml_tensor * x_checked(struct ggml_context * ctx, const char * fn, struct ggml_tensor * t) {
    if (t == NULL) {
        x_report_inner(ctx, fn);
    }
    return t;
}

// new result tensor of op (type, 4-d shape ne) with sources srcs[0..n_srcs-1]
static inline struct ggml_tensor * x_op_new(struct ggml_context * ctx, const char * fn, enum ggml_op op,
                                            enum ggml_type type, const int64_t ne[GGML_MAX_DIMS],
                                            int n_srcs, struct ggml_tensor * const * srcs) {
    return x_checked(ctx, fn, ggml_x_new_op_tensor(ctx, op, type, ne, n_srcs, srcs));
}

// inplace result of op: a view of a
static inline struct ggml_tensor * x_op_view(struct ggml_context * ctx, const char * fn, enum ggml_op op,
                                             struct ggml_tensor * a, int n_srcs, struct ggml_tensor * const * srcs) {
    return x_checked(ctx, fn, ggml_x_new_op_view(ctx, op, a, n_srcs, srcs));
}

// result with a's type and shape: a view of a when inplace, else a new tensor
static inline struct ggml_tensor * x_op_like(struct ggml_context * ctx, const char * fn, enum ggml_op op,
                                             struct ggml_tensor * a, bool inplace,
                                             int n_srcs, struct ggml_tensor * const * srcs) {
    if (inplace) {
        return x_op_view(ctx, fn, op, a, n_srcs, srcs);
    }
    return x_op_new(ctx, fn, op, a->type, a->ne, n_srcs, srcs);
}

// the gradient ops of two same-shape F32 operands (x and the output gradient): silu_back,
// rms_norm_back, soft_max_back
static inline struct ggml_tensor * x_back_pair(struct ggml_context * ctx, const char * fn, enum ggml_op op,
                                               struct ggml_tensor * a, struct ggml_tensor * b, bool inplace) {
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    X_CHECK_TENSOR(ctx, fn, b);
    GGML_X_CHECK(ctx, ggml_are_same_shape(a, b), "%s: a and b must have the same shape (a %s, b %s)", fn,
                 X_SHAPE(a), X_SHAPE(b));
    GGML_X_CHECK(ctx, a->type == GGML_TYPE_F32 && b->type == GGML_TYPE_F32, "%s: a and b must be F32 (got %s, %s)",
                 fn, x_type_name(a->type), x_type_name(b->type));
    struct ggml_tensor * srcs[2] = { a, b };
    return x_op_like(ctx, fn, op, a, inplace, 2, srcs);
}

#endif // GGML_OPS_COMMON_H
