// autodiff.h - internal contract between autodiff.c (graph API, the reference's backward passes)
// and autodiff-extra.c (gradients beyond the reference: MEAN, NORM, GELU, CONCAT, CLAMP, ...).

#ifndef GGML_X_AUTODIFF_H
#define GGML_X_AUTODIFF_H

#include "ggml-impl.h"
#include "ggml-backend.h"

struct x_ptr_map;

// state of one ggml_build_backward_expand
struct x_grad_state {
    struct ggml_context * ctx;
    struct x_ptr_map * zero;    // gradient tensors that are zero when the backward graph starts
    struct x_ptr_map * touched; // tensors whose gradient received a contribution
};

// Is src's gradient still the zero it started as (no contribution yet)? Keyed by the tensor, not
// by the gradient: a first contribution may itself be a zero-table tensor that is not zero,
// such as the loss's gradient (1) handed on by a pass-through op.
bool x_grad_is_zero(const struct x_grad_state * st, const struct ggml_tensor * src);
// src->grad += g (g of src's shape or element count); false after reporting when g is NULL
bool x_grad_add(struct x_grad_state * st, struct ggml_tensor * src, struct ggml_tensor * g);
// src->grad -= g
bool x_grad_sub(struct x_grad_state * st, struct ggml_tensor * src, struct ggml_tensor * g);
// t itself when contiguous, else a contiguous copy
struct ggml_tensor * x_dense(struct x_grad_state * st, struct ggml_tensor * t);
// g summed over the broadcast tiles down to like's shape (g when the shapes agree)
struct ggml_tensor * x_reduce_to(struct x_grad_state * st, struct ggml_tensor * g, const struct ggml_tensor * like);

// backward of ops the reference does not differentiate (autodiff-extra.c); reports the op as
// not differentiable when it is none of them
bool x_backward_extra(struct x_grad_state * st, struct ggml_tensor * t, struct ggml_tensor * g);
bool x_backward_unary_extra(struct x_grad_state * st, struct ggml_tensor * t, struct ggml_tensor * g);

#endif // GGML_X_AUTODIFF_H
