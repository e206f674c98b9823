// ops-argsort.c - ARGSORT: per row of an F32 tensor, the I32 indices that sort it ascending or
// descending. Stable (equal values keep their index order), O(n log n): a bottom-up merge sort of
// (value, index) pairs in the work buffer, with insertion-sorted runs to start. Rows are split
// across threads; each thread owns a slice of the work buffer.

#include "../ggml-impl.h"
#include "rowconv.h"

struct argsort_item {
    float   v;
    int32_t i;
};

#define ARGSORT_RUN 16

static size_t argsort_slice_size(int64_t n) {
    return ((size_t) n * 2 * sizeof(struct argsort_item) + 63) & ~(size_t) 63;
}

// does b go strictly before a?
static inline bool argsort_before(float b, float a, bool desc) {
    return desc ? b > a : b < a;
}

static void argsort_insertion(struct argsort_item * x, int64_t n, bool desc) {
    for (int64_t i = 1; i < n; i++) {
        const struct argsort_item t = x[i];
        int64_t j = i;
        while (j > 0 && argsort_before(t.v, x[j - 1].v, desc)) {
            x[j] = x[j - 1];
            j--;
        }
        x[j] = t;
    }
}

// sorts x[0..n); tmp has room for n items; returns the array that holds the result
static struct argsort_item * argsort_sort(struct argsort_item * x, struct argsort_item * tmp, int64_t n, bool desc) {
    for (int64_t i = 0; i < n; i += ARGSORT_RUN) {
        argsort_insertion(x + i, GGML_X_MIN(ARGSORT_RUN, n - i), desc);
    }
    struct argsort_item * src = x;
    struct argsort_item * dst = tmp;
    for (int64_t w = ARGSORT_RUN; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            const int64_t mid = GGML_X_MIN(lo + w, n);
            const int64_t hi = GGML_X_MIN(lo + 2 * w, n);
            int64_t a = lo, b = mid, k = lo;
            while (a < mid && b < hi) {
                // take from the right run only if it goes strictly before: keeps ties stable
                if (argsort_before(src[b].v, src[a].v, desc)) {
                    dst[k++] = src[b++];
                } else {
                    dst[k++] = src[a++];
                }
            }
            while (a < mid) {
                dst[k++] = src[a++];
            }
            while (b < hi) {
                dst[k++] = src[b++];
            }
        }
        struct argsort_item * t = src;
        src = dst;
        dst = t;
    }
    return src;
}

static bool argsort_supports(const struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    if (src0 == NULL || src0->type != GGML_TYPE_F32 || dst->type != GGML_TYPE_I32) {
        return false;
    }
    if (src0->ne[0] > INT32_MAX) {
        return false;
    }
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        if (dst->ne[i] != src0->ne[i]) {
            return false;
        }
    }
    return true;
}

static size_t argsort_work_size(const struct ggml_tensor * dst, int n_threads) {
    return (size_t) n_threads * argsort_slice_size(dst->src[0]->ne[0]);
}

static void argsort_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const bool desc = ggml_x_get_op_params_i32(dst, 0) == GGML_SORT_DESC;
    const int64_t ne0 = src0->ne[0], ne1 = src0->ne[1], ne2 = src0->ne[2];
    const int64_t nr = ne1 * ne2 * src0->ne[3];
    const size_t snb0 = src0->nb[0], dnb0 = dst->nb[0];

    struct argsort_item * x = (struct argsort_item *) ((char *) cc->wdata + (size_t) cc->ith * argsort_slice_size(ne0));
    struct argsort_item * tmp = x + ne0;

    for (int64_t ir = cc->ith; ir < nr; ir += cc->nth) {
        const int64_t i1 = ir % ne1, i2 = (ir / ne1) % ne2, i3 = ir / (ne1 * ne2);
        const char * srow = rowconv_row(src0, i1, i2, i3);
        char * drow = rowconv_row(dst, i1, i2, i3);

        for (int64_t i0 = 0; i0 < ne0; i0++) {
            x[i0].v = *(const float *) (srow + i0 * snb0);
            x[i0].i = (int32_t) i0;
        }
        const struct argsort_item * sorted = argsort_sort(x, tmp, ne0, desc);
        for (int64_t i0 = 0; i0 < ne0; i0++) {
            *(int32_t *) (drow + i0 * dnb0) = sorted[i0].i;
        }
    }
}

const struct ggml_cpu_op ggml_cpu_op_argsort = {
    .forward   = argsort_forward,
    .supports  = argsort_supports,
    .work_size = argsort_work_size,
};
