/* CPU kernel of Unique: items (elements, or slices along an axis) sorted by value with their
 * index as tie-break, grouped, then emitted in sorted or first-occurrence order. Its outputs are
 * sized here (KF_DYNAMIC_OUTPUT), so it allocates its work arrays as it runs. */
#include <stdlib.h>
#include <string.h>

#include "ops/shape_common.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/cpu_types.h"
#include "kernels_cpu/common/move.h"

typedef struct items {
    const tensor *x;
    int64_t outer, count, inner; /* item i is x[o, i, k] for o < outer, k < inner */
} items;

/* -1, 0, 1 for elements a and b of x; NaN sorts after every number and equals NaN. */
static int cmp_elem(const tensor *x, int64_t a, int64_t b) {
#define CMP(va, vb) ((va) < (vb) ? -1 : (va) > (vb) ? 1 : 0)
#define FCMP(va, vb) ((va) != (va) ? ((vb) != (vb) ? 0 : 1) : (vb) != (vb) ? -1 : CMP(va, vb))
    switch (x->dtype) {
#define CASE(D, T)                                                                                 \
    case D: {                                                                                      \
        T va = ((const T *)x->data)[a], vb = ((const T *)x->data)[b];                              \
        return FCMP(va, vb);                                                                       \
    }
        CPU_FOR_NUMERIC_BOOL(CASE)
#undef CASE
    case ONYX_FLOAT16:
    case ONYX_BFLOAT16: {
        uint16_t ha = ((const uint16_t *)x->data)[a], hb = ((const uint16_t *)x->data)[b];
        float va = x->dtype == ONYX_FLOAT16 ? fp16_to_float(ha) : bf16_to_float(ha);
        float vb = x->dtype == ONYX_FLOAT16 ? fp16_to_float(hb) : bf16_to_float(hb);
        return FCMP(va, vb);
    }
    case ONYX_COMPLEX64:
    case ONYX_COMPLEX128: {
        /* lexicographic on (real, imaginary), as numpy sorts complex numbers */
        for (int part = 0; part < 2; part++) {
            double va = x->dtype == ONYX_COMPLEX64 ? ((const float *)x->data)[2 * a + part]
                                                   : ((const double *)x->data)[2 * a + part];
            double vb = x->dtype == ONYX_COMPLEX64 ? ((const float *)x->data)[2 * b + part]
                                                   : ((const double *)x->data)[2 * b + part];
            int r = FCMP(va, vb);
            if (r) return r;
        }
        return 0;
    }
    case ONYX_STRING: {
        const char *sa = ((char *const *)x->data)[a], *sb = ((char *const *)x->data)[b];
        int r = strcmp(sa ? sa : "", sb ? sb : "");
        return CMP(r, 0);
    }
    default: return 0;
    }
#undef FCMP
#undef CMP
}

static int cmp_items(const items *it, int64_t a, int64_t b) {
    for (int64_t o = 0; o < it->outer; o++)
        for (int64_t k = 0; k < it->inner; k++) {
            int64_t base = o * it->count * it->inner + k;
            int r = cmp_elem(it->x, base + a * it->inner, base + b * it->inner);
            if (r) return r;
        }
    return 0;
}

static int by_value_then_index(const void *pa, const void *pb, void *ctx) {
    int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
    int r = cmp_items(ctx, a, b);
    return r ? r : (a < b ? -1 : a > b);
}

/* Makes output o (when requested) an int64 vector of n values copied from v. */
static onyx_status put_int64(const kernel_call *c, int o, const int64_t *v, int64_t n) {
    if (o >= c->n_out || !c->out[o]) return ONYX_OK;
    TRY(value_alloc_tensor(c->out[o], ONYX_INT64, 1, &n));
    if (n) memcpy(c->out[o]->t.data, v, (size_t)n * sizeof *v);
    return ONYX_OK;
}

onyx_status cpu_unique_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    bool sorted = attr_int(c->node, "sorted", 1) != 0, flat = !node_attr(c->node, "axis");
    int axis = 0;
    items it = {x, 1, x->numel, 1};
    if (!flat) {
        TRY(ops_axis(attr_int(c->node, "axis", 0), x->rank, "axis", &axis));
        it.count = x->dims[axis];
        for (int k = 0; k < axis; k++) it.outer *= x->dims[k];
        for (int k = axis + 1; k < x->rank; k++) it.inner *= x->dims[k];
    }
    int64_t n = it.count;
    /* six work arrays of n entries, carved from the run's scratch */
    if ((uint64_t)n > SIZE_MAX / (6 * sizeof(int64_t)) - 1) return onyx_oom("Unique work arrays");
    size_t per = (size_t)(n > 0 ? n : 1);
    void *mem;
    TRY(kernel_scratch(c, 6 * per * sizeof(int64_t), &mem));
    int64_t *order = mem, *group = order + per, *first = group + per, *counts = first + per,
            *rank_of = counts + per, *inverse = rank_of + per;
    onyx_status st = ONYX_OK;
    for (int64_t i = 0; i < n; i++) order[i] = i;
    qsort_r(order, (size_t)n, sizeof *order, by_value_then_index, &it);
    /* groups in sorted order; each group's first member is its first occurrence */
    int64_t k = 0;
    for (int64_t s = 0; s < n; s++) {
        if (s == 0 || cmp_items(&it, order[s - 1], order[s]) != 0) {
            first[k] = order[s];
            counts[k++] = 0;
        }
        group[order[s]] = k - 1;
        counts[k - 1]++;
    }
    /* output position of each group: sorted order, or by first occurrence */
    for (int64_t g = 0; g < k; g++) rank_of[g] = g;
    if (!sorted) {
        int64_t pos = 0;
        for (int64_t i = 0; i < n; i++)
            if (first[group[i]] == i) rank_of[group[i]] = pos++;
        int64_t *f = order, *cn = inverse; /* reuse as scratch for the reordering */
        for (int64_t g = 0; g < k; g++) {
            f[rank_of[g]] = first[g];
            cn[rank_of[g]] = counts[g];
        }
        memcpy(first, f, (size_t)k * sizeof *first);
        memcpy(counts, cn, (size_t)k * sizeof *counts);
    }
    for (int64_t i = 0; i < n; i++) inverse[i] = rank_of[group[i]];

    int64_t dims[ONYX_MAX_RANK];
    int rank = 1;
    dims[0] = k;
    if (!flat) {
        rank = x->rank;
        for (int d = 0; d < rank; d++) dims[d] = d == axis ? k : x->dims[d];
    }
    CHECK(value_alloc_tensor(c->out[0], x->dtype, rank, dims));
    tensor *y = &c->out[0]->t;
    if (y->numel > 0) {
        size_t es = cpu_move_esize(x), row = (size_t)it.inner * es;
        cpu_move_begin(y);
        for (int64_t o = 0; o < it.outer; o++)
            for (int64_t g = 0; g < k; g++)
                memcpy((char *)y->data + (size_t)(o * k + g) * row,
                       (const char *)x->data + (size_t)(o * n + first[g]) * row, row);
        CHECK(cpu_move_end(y));
    }
    CHECK(put_int64(c, 1, first, k));
    CHECK(put_int64(c, 2, inverse, n));
    CHECK(put_int64(c, 3, counts, k));
done:
    return st;
}
