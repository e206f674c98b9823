// test-core.c - contexts, arenas, tensors, views and strides, names, element access, graphs.

#include "ggml.h"
#include "testing.h"

#include <string.h>

static struct ggml_context * new_ctx(size_t mem, bool no_alloc) {
    struct ggml_init_params p = { .mem_size = mem, .mem_buffer = NULL, .no_alloc = no_alloc };
    return ggml_init(p);
}

static void test_context_arena(void) {
    struct ggml_context * ctx = new_ctx(16 * ggml_tensor_overhead() + 4096, false);
    T_CHECK(ctx != NULL);
    T_CHECK(ggml_used_mem(ctx) == 0);
    struct ggml_tensor * t = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 8, 4);
    T_CHECK(t != NULL && t->data != NULL);
    T_CHECK(ggml_used_mem(ctx) == ggml_tensor_overhead() + 128);
    T_CHECK(ggml_get_mem_size(ctx) >= 4096);
    T_CHECK(ggml_get_max_tensor_size(ctx) == 128);
    T_CHECK(!ggml_get_no_alloc(ctx));
    ggml_set_no_alloc(ctx, true);
    struct ggml_tensor * u = ggml_new_tensor_1d(ctx, GGML_TYPE_F16, 1000);
    T_CHECK(u != NULL && u->data == NULL);
    ggml_free(ctx);

    // caller-provided arena
    static char buf[8192] __attribute__((aligned(64)));
    struct ggml_init_params p = { .mem_size = sizeof(buf), .mem_buffer = buf, .no_alloc = false };
    ctx = ggml_init(p);
    T_CHECK(ggml_get_mem_buffer(ctx) == buf);
    t = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 4);
    T_CHECK((char *) t->data > buf && (char *) t->data < buf + sizeof(buf));
    ggml_free(ctx);
}

static void test_tensor_layout(void) {
    struct ggml_context * ctx = new_ctx(1 << 20, false);
    struct ggml_tensor * t = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 5, 4, 3, 2);
    T_CHECK(t->nb[0] == 4 && t->nb[1] == 20 && t->nb[2] == 80 && t->nb[3] == 240);
    T_CHECK(ggml_nelements(t) == 120 && ggml_nrows(t) == 24 && ggml_nbytes(t) == 480);
    T_CHECK(ggml_is_contiguous(t) && !ggml_is_transposed(t) && !ggml_is_permuted(t));
    T_CHECK(ggml_n_dims(t) == 4);
    struct ggml_tensor * f16 = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 7, 3);
    T_CHECK(ggml_nbytes(f16) == 42 && ggml_element_size(f16) == 2);
    T_CHECK(ggml_row_size(GGML_TYPE_Q4_0, 64) == 36);
    T_CHECK(ggml_blck_size(GGML_TYPE_Q4_K) == 256 && ggml_type_size(GGML_TYPE_Q4_K) == 144);
    T_CHECK(strcmp(ggml_type_name(GGML_TYPE_Q6_K), "q6_K") == 0);
    T_CHECK(strcmp(ggml_op_name(GGML_OP_MUL_MAT), "MUL_MAT") == 0);
    T_CHECK(strcmp(ggml_unary_op_name(GGML_UNARY_OP_GELU_QUICK), "GELU_QUICK") == 0);
    T_CHECK(ggml_is_quantized(GGML_TYPE_Q8_0) && !ggml_is_quantized(GGML_TYPE_F16));
    struct ggml_tensor * s = ggml_new_f32(ctx, 2.5f);
    T_CHECK(ggml_is_scalar(s) && ggml_get_f32_1d(s, 0) == 2.5f);
    ggml_free(ctx);
}

static void test_views_and_strides(void) {
    struct ggml_context * ctx = new_ctx(1 << 20, false);
    struct ggml_tensor * a = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 4, 3, 2);
    for (int i = 0; i < 24; i++) {
        ggml_set_f32_1d(a, i, (float) i);
    }
    struct ggml_tensor * t = ggml_transpose(ctx, a);
    T_CHECK(t->ne[0] == 3 && t->ne[1] == 4 && t->nb[0] == 16 && t->nb[1] == 4);
    T_CHECK(ggml_is_transposed(t) && !ggml_is_contiguous(t));
    T_CHECK(ggml_get_f32_nd(t, 2, 1, 1, 0) == ggml_get_f32_nd(a, 1, 2, 1, 0));
    T_CHECK(t->view_src == a && t->data == a->data);

    struct ggml_tensor * p = ggml_permute(ctx, a, 2, 0, 1, 3); // axis i of a goes to position axes[i]
    T_CHECK(p->ne[2] == 4 && p->ne[0] == 3 && p->ne[1] == 2);
    T_CHECK(ggml_get_f32_nd(p, 1, 1, 3, 0) == ggml_get_f32_nd(a, 3, 1, 1, 0));

    struct ggml_tensor * v = ggml_view_2d(ctx, a, 2, 3, a->nb[1], 2 * sizeof(float));
    T_CHECK(v->ne[0] == 2 && v->ne[1] == 3 && v->nb[1] == 16 && v->view_offs == 8);
    T_CHECK(ggml_get_f32_nd(v, 1, 2, 0, 0) == 11.0f);
    // a view of a view resolves to the root with the offsets added
    struct ggml_tensor * vv = ggml_view_1d(ctx, v, 1, sizeof(float));
    T_CHECK(vv->view_src == a && vv->view_offs == 12 && ggml_get_f32_1d(vv, 0) == 3.0f);

    struct ggml_tensor * r = ggml_reshape_2d(ctx, a, 6, 4);
    T_CHECK(r->ne[0] == 6 && r->nb[1] == 24 && r->data == a->data && r->op == GGML_OP_RESHAPE);
    T_CHECK(strcmp(r->name, " (reshaped)") == 0 || strstr(r->name, "(reshaped)") != NULL);

    // out-of-bounds views and bad reshapes are rejected in recoverable mode
    ggml_x_set_recoverable(ctx, true);
    ggml_x_clear_error();
    T_CHECK(ggml_view_1d(ctx, a, 25, 0) == NULL);
    T_CHECK(ggml_x_last_error() != NULL && strstr(ggml_x_last_error(), "ggml_view_1d") != NULL);
    T_CHECK(ggml_view_2d(ctx, a, 4, 3, 64, 0) == NULL);
    T_CHECK(ggml_reshape_2d(ctx, a, 5, 5) == NULL);
    T_CHECK(ggml_reshape_1d(ctx, t, 24) == NULL); // not contiguous
    T_CHECK(ggml_permute(ctx, a, 0, 0, 1, 2) == NULL);
    T_CHECK(ggml_new_tensor_1d(ctx, GGML_TYPE_Q4_0, 33) == NULL); // not a block multiple
    T_CHECK(ggml_new_tensor_1d(ctx, (enum ggml_type) 4, 32) == NULL); // retired type id
    ggml_free(ctx);
}

static void test_arena_full_is_recoverable(void) {
    struct ggml_context * ctx = new_ctx(ggml_tensor_overhead() + 64, false);
    ggml_x_set_recoverable(ctx, true);
    T_CHECK(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 16) != NULL);
    ggml_x_clear_error();
    T_CHECK(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 16) == NULL);
    T_CHECK(ggml_x_last_error() != NULL);
    ggml_free(ctx);
}

static void test_names_and_lookup(void) {
    struct ggml_context * ctx = new_ctx(1 << 16, true);
    struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    struct ggml_tensor * b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    ggml_set_name(a, "alpha");
    ggml_format_name(b, "beta_%d", 7);
    T_CHECK(strcmp(ggml_get_name(b), "beta_7") == 0);
    T_CHECK(ggml_get_tensor(ctx, "alpha") == a && ggml_get_tensor(ctx, "beta_7") == b);
    T_CHECK(ggml_get_tensor(ctx, "gamma") == NULL);
    T_CHECK(ggml_get_first_tensor(ctx) == a && ggml_get_next_tensor(ctx, a) == b && ggml_get_next_tensor(ctx, b) == NULL);
    char longname[200];
    memset(longname, 'x', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = 0;
    ggml_set_name(a, longname);
    T_CHECK(strlen(a->name) == GGML_MAX_NAME - 1);
    ggml_free(ctx);
}

static void test_fp16(void) {
    const float vals[] = { 0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f, 0.33325195f };
    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        T_CHECK(ggml_fp16_to_fp32(ggml_fp32_to_fp16(vals[i])) == vals[i]);
    }
    // round to nearest even: 1 + 2^-11 is halfway between 1 and 1 + 2^-10 -> 1
    T_CHECK(ggml_fp16_to_fp32(ggml_fp32_to_fp16(1.0f + 1.0f / 2048)) == 1.0f);
    T_CHECK(ggml_fp16_to_fp32(ggml_fp32_to_fp16(1.0f + 3.0f / 2048)) == 1.0f + 2.0f / 1024);
    T_CHECK(isinf(ggml_fp16_to_fp32(ggml_fp32_to_fp16(70000.0f))));
    T_CHECK(isnan(ggml_fp16_to_fp32(ggml_fp32_to_fp16(NAN))));
    // every fp16 value converts back to itself
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        ggml_fp16_t x = (ggml_fp16_t) h;
        float f = ggml_fp16_to_fp32(x);
        if (!isnan(f) && ggml_fp32_to_fp16(f) != x) {
            bad++;
        }
    }
    T_CHECK_MSG(bad == 0, "%d fp16 values do not round-trip", bad);
}

static void test_graph_building_order(void) {
    struct ggml_context * ctx = new_ctx(1 << 20, true);
    struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    struct ggml_tensor * b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    ggml_set_name(a, "a");
    ggml_set_name(b, "b");
    // build nodes by hand so this test depends on the core only
    struct ggml_tensor * c = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    c->op = GGML_OP_ADD; c->src[0] = a; c->src[1] = b;
    struct ggml_tensor * d = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    d->op = GGML_OP_MUL; d->src[0] = c; d->src[1] = a;
    struct ggml_tensor * e = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    e->op = GGML_OP_SUB; e->src[0] = d; e->src[1] = c;

    struct ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, e);
    T_CHECK(g->n_nodes == 3 && g->n_leafs == 2);
    T_CHECK(g->nodes[0] == c && g->nodes[1] == d && g->nodes[2] == e);
    T_CHECK(g->leafs[0] == a && g->leafs[1] == b);
    ggml_build_forward_expand(g, e); // idempotent
    T_CHECK(g->n_nodes == 3);
    T_CHECK(ggml_graph_get_tensor(g, "a") == a);

    struct ggml_cgraph view = ggml_graph_view(g, 1, 3);
    T_CHECK(view.n_nodes == 2 && view.nodes[0] == d);

    struct ggml_cgraph * g2 = ggml_graph_dup(ctx, g);
    T_CHECK(g2->n_nodes == 3 && g2->nodes[2] == e && g2->n_leafs == 2);
    ggml_build_forward_expand(g2, e);
    T_CHECK(g2->n_nodes == 3);
    ggml_graph_clear(g2);
    T_CHECK(g2->n_nodes == 0);
    ggml_build_forward_expand(g2, d);
    T_CHECK(g2->n_nodes == 2);

    // right-to-left visits later sources first
    struct ggml_cgraph * g3 = ggml_new_graph_custom(ctx, 16, false);
    g3->order = GGML_CGRAPH_EVAL_ORDER_RIGHT_TO_LEFT;
    ggml_build_forward_expand(g3, e);
    T_CHECK(g3->n_nodes == 3 && g3->leafs[0] == b && g3->nodes[0] == c);

    // a graph that is too small fails cleanly in recoverable mode
    struct ggml_cgraph * tiny = ggml_new_graph_custom(ctx, 2, false);
    ggml_x_set_thread_recoverable(true);
    ggml_x_clear_error();
    ggml_build_forward_expand(tiny, e);
    T_CHECK(ggml_x_last_error() != NULL);
    ggml_x_set_thread_recoverable(false);
    T_CHECK(ggml_graph_overhead() > GGML_DEFAULT_GRAPH_SIZE * sizeof(void *) * 2);
    ggml_free(ctx);
}

static void test_deep_graph(void) {
    const int n = 20000;
    struct ggml_context * ctx = new_ctx((size_t) (n + 4) * ggml_tensor_overhead() + ggml_graph_overhead_custom(n + 4, false), true);
    struct ggml_tensor * cur = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1);
    for (int i = 0; i < n; i++) {
        struct ggml_tensor * nx = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1);
        nx->op = GGML_OP_SQR;
        nx->src[0] = cur;
        cur = nx;
    }
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, n + 4, false);
    ggml_build_forward_expand(g, cur);
    T_CHECK(g->n_nodes == n && g->n_leafs == 1 && g->nodes[n - 1] == cur);
    ggml_free(ctx);
}

int main(void) {
    T_RUN(test_context_arena);
    T_RUN(test_tensor_layout);
    T_RUN(test_views_and_strides);
    T_RUN(test_arena_full_is_recoverable);
    T_RUN(test_names_and_lookup);
    T_RUN(test_fp16);
    T_RUN(test_graph_building_order);
    T_RUN(test_deep_graph);
    return T_SUMMARY();
}
