/* CPU kernels of ScatterElements (and the older Scatter) and ScatterND: the data copied, then
 * updates written (or reduced: add, mul, max, min) at checked indices, in index order so that
 * repeated indices behave as the reference does. */
#include <inttypes.h>
#include <string.h>

#include "ops/shape_common.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/cpu_types.h"
#include "kernels_cpu/common/move.h"

enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN };

static onyx_status read_reduction(const graph_node *n, onyx_dtype dt, int *red) {
    const char *r = n->version >= 16 ? attr_string(n, "reduction", "none") : "none";
    static const char *const names[] = {"none", "add", "mul", "max", "min"};
    int count = n->version >= 18 ? 5 : 3;
    *red = -1;
    for (int i = 0; i < count; i++)
        if (strcmp(r, names[i]) == 0) *red = i;
    if (*red < 0) return onyx_error(ONYX_ERR_INVALID_MODEL, "reduction '%s' is not known", r);
    if (*red != RED_NONE && !dtype_in(dt, DT_NUMERIC | DT_BIT(ONYX_BOOL)))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "reduction '%s' of %s", r, onyx_dtype_name(dt));
    return ONYX_OK;
}

/* Integers reduce in uint64 (wrapping, no signed overflow); floats natively. */
#define RED_INT(D, T)                                                                              \
    case D: {                                                                                      \
        T *d = dst;                                                                                \
        const T *s = src;                                                                          \
        for (int64_t i = 0; i < n; i++) {                                                          \
            T a = d[i], b = s[i];                                                                  \
            switch (red) {                                                                         \
            case RED_ADD: d[i] = (T)((uint64_t)a + (uint64_t)b); break;                            \
            case RED_MUL: d[i] = (T)((uint64_t)a * (uint64_t)b); break;                            \
            case RED_MAX: d[i] = a > b ? a : b; break;                                             \
            default: d[i] = a < b ? a : b;                                                         \
            }                                                                                      \
        }                                                                                          \
        break;                                                                                     \
    }
#define RED_FLOAT(D, T)                                                                            \
    case D: {                                                                                      \
        T *d = dst;                                                                                \
        const T *s = src;                                                                          \
        for (int64_t i = 0; i < n; i++) d[i] = (T)reduce_f(d[i], s[i], red);                       \
        break;                                                                                     \
    }

static double reduce_f(double a, double b, int red) {
    switch (red) {
    case RED_ADD: return a + b;
    case RED_MUL: return a * b;
    case RED_MAX: return a > b ? a : b;
    default: return a < b ? a : b;
    }
}

/* dst[i] (op) src[i] for n elements of dtype dt. */
static void reduce_into(onyx_dtype dt, int red, void *dst, const void *src, int64_t n, size_t es) {
    if (red == RED_NONE) {
        memcpy(dst, src, (size_t)n * es);
        return;
    }
    switch (dt) {
        CPU_FOR_INTS(RED_INT)
        CPU_FOR_FLOATS(RED_FLOAT)
    case ONYX_FLOAT16:
    case ONYX_BFLOAT16: {
        uint16_t *d = dst;
        const uint16_t *s = src;
        bool half = dt == ONYX_FLOAT16;
        for (int64_t i = 0; i < n; i++) {
            float a = half ? fp16_to_float(d[i]) : bf16_to_float(d[i]);
            float b = half ? fp16_to_float(s[i]) : bf16_to_float(s[i]);
            float r = (float)reduce_f(a, b, red);
            d[i] = half ? float_to_fp16(r) : float_to_bf16(r);
        }
        break;
    }
    case ONYX_BOOL: {
        uint8_t *d = dst;
        const uint8_t *s = src;
        for (int64_t i = 0; i < n; i++)
            d[i] = (red == RED_ADD || red == RED_MAX) ? (d[i] || s[i]) : (d[i] && s[i]);
        break;
    }
    default: break; /* read_reduction refused the rest */
    }
}

/* Updates are read with the data's element size: they must have its type. */
static onyx_status check_updates(const tensor *x, const tensor *upd) {
    if (upd->dtype != x->dtype)
        return onyx_error(ONYX_ERR_SHAPE, "updates have type %s, expected %s like data",
                          onyx_dtype_name(upd->dtype), onyx_dtype_name(x->dtype));
    return ONYX_OK;
}

/* Writes n updates at y[off..]: strings get copies, the rest goes through reduce_into. */
static onyx_status put(tensor *y, int red, int64_t off, const tensor *upd, int64_t from, int64_t n,
                       size_t es) {
    if (y->dtype == ONYX_STRING) {
        char *const *s = upd->data;
        for (int64_t i = 0; i < n; i++) {
            const char *v = s[from + i] ? s[from + i] : "";
            TRY(tensor_set_string(y, off + i, v, strlen(v)));
        }
        return ONYX_OK;
    }
    reduce_into(y->dtype, red, (char *)y->data + (size_t)off * es,
                (const char *)upd->data + (size_t)from * es, n, es);
    return ONYX_OK;
}

onyx_status cpu_scatter_elements_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0), *idx = kernel_input(c, 1), *upd = kernel_input(c, 2);
    tensor *y = kernel_output(c, 0);
    int red;
    TRY(read_reduction(c->node, x->dtype, &red));
    TRY(check_updates(x, upd));
    int axis;
    TRY(ops_axis(attr_int(c->node, "axis", 0), x->rank, "axis", &axis));
    if (!shape_equal(idx->rank, idx->dims, upd->rank, upd->dims))
        return onyx_error(ONYX_ERR_SHAPE, "updates and indices have different shapes");
    if (idx->rank != x->rank)
        return onyx_error(ONYX_ERR_SHAPE, "indices have rank %d, expected %d like data",
                          idx->rank, x->rank);
    for (int k = 0; k < x->rank; k++)
        if (k != axis && idx->dims[k] > x->dims[k])
            return onyx_error(ONYX_ERR_SHAPE,
                              "indices dim %d is %" PRId64 ", larger than the data's %" PRId64, k,
                              idx->dims[k], x->dims[k]);
    TRY(cpu_check_indices(idx, x->dims[axis], "indices"));
    TRY(tensor_copy_data(y, x));
    int64_t st[ONYX_MAX_RANK], cnt[ONYX_MAX_RANK] = {0};
    cpu_strides(x->rank, x->dims, st);
    size_t es = cpu_move_esize(x);
    for (int64_t e = 0; e < idx->numel; e++) {
        int64_t off = 0;
        for (int k = 0; k < x->rank; k++) {
            int64_t i = cnt[k];
            if (k == axis) {
                i = cpu_index_at(idx, e);
                if (i < 0) i += x->dims[axis];
            }
            off += i * st[k];
        }
        TRY(put(y, red, off, upd, e, 1, es));
        for (int k = x->rank - 1; k >= 0; k--) {
            if (++cnt[k] < idx->dims[k]) break;
            cnt[k] = 0;
        }
    }
    return ONYX_OK;
}

onyx_status cpu_scatter_nd_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0), *idx = kernel_input(c, 1), *upd = kernel_input(c, 2);
    tensor *y = kernel_output(c, 0);
    int red;
    TRY(read_reduction(c->node, x->dtype, &red));
    TRY(check_updates(x, upd));
    /* inference checks the tuple length only when both ranks are known before the run */
    if (idx->rank < 1 || idx->dims[idx->rank - 1] > x->rank)
        return onyx_error(ONYX_ERR_SHAPE, "indices of rank %d do not index data of rank %d",
                          idx->rank, x->rank);
    int q = idx->rank, m = (int)idx->dims[q - 1];
    int64_t st[ONYX_MAX_RANK], slice = 1, tuples = 1;
    cpu_strides(x->rank, x->dims, st);
    for (int k = m; k < x->rank; k++) slice *= x->dims[k];
    for (int k = 0; k < q - 1; k++) tuples *= idx->dims[k];
    if (upd->numel != tuples * slice)
        return onyx_error(ONYX_ERR_SHAPE, "updates has %" PRId64 " elements, expected %" PRId64,
                          upd->numel, tuples * slice);
    TRY(cpu_check_tuples(idx, m, x->dims));
    TRY(tensor_copy_data(y, x));
    size_t es = cpu_move_esize(x);
    for (int64_t t = 0; t < tuples; t++) {
        int64_t off = 0;
        for (int k = 0; k < m; k++) {
            int64_t v = cpu_index_at(idx, t * m + k);
            off += (v < 0 ? v + x->dims[k] : v) * st[k];
        }
        TRY(put(y, red, off, upd, t * slice, slice, es));
    }
    return ONYX_OK;
}

/* TensorScatter: the cache copied, then each batch entry's update rows written from its write
 * index on along the sequence axis (wrapping in circular mode). */
onyx_status cpu_tensor_scatter_run(const kernel_call *c) {
    const tensor *past = kernel_input(c, 0), *upd = kernel_input(c, 1), *wi = kernel_input(c, 2);
    tensor *y = kernel_output(c, 0);
    int r = past->rank, axis;
    TRY(ops_axis(attr_int(c->node, "axis", -2), r, "axis", &axis));
    TRY(check_updates(past, upd));
    /* inference compares the two shapes only when both are known before the run */
    bool fits = axis > 0 && upd->rank == r;
    for (int k = 0; fits && k < r; k++)
        fits = k == axis || upd->dims[k] == past->dims[k];
    if (!fits) {
        char a[160], b[160];
        return onyx_error(ONYX_ERR_SHAPE, "update of shape %s does not fit past_cache of shape %s "
                          "along axis %d", shape_str(upd->rank, upd->dims, a, sizeof a),
                          shape_str(r, past->dims, b, sizeof b), axis);
    }
    bool circular = strcmp(attr_string(c->node, "mode", "linear"), "circular") == 0;
    int64_t batch = past->dims[0], outer = 1, inner = 1;
    int64_t max_len = past->dims[axis], len = upd->dims[axis];
    for (int k = 0; k < axis; k++) outer *= past->dims[k];
    for (int k = axis + 1; k < r; k++) inner *= past->dims[k];
    if (wi && wi->numel != batch)
        return onyx_error(ONYX_ERR_SHAPE,
                          "write_indices has %" PRId64 " values, expected the batch size %" PRId64,
                          wi->numel, batch);
    for (int64_t b = 0; b < batch; b++) {
        int64_t w = wi ? tensor_get_i64(wi, b) : 0;
        if (w < 0 || (!circular && (w > max_len || len > max_len - w)))
            return onyx_error(ONYX_ERR_RUNTIME,
                              "write_indices[%" PRId64 "] = %" PRId64 " puts %" PRId64
                              " rows past the cache length %" PRId64,
                              b, w, len, max_len);
    }
    TRY(tensor_copy_data(y, past));
    if (y->numel == 0 || upd->numel == 0) return ONYX_OK;
    size_t es = cpu_move_esize(past);
    int64_t per_batch = outer / batch;
    for (int64_t o = 0; o < outer; o++) {
        int64_t w = wi ? tensor_get_i64(wi, o / per_batch) : 0;
        for (int64_t s = 0; s < len; s++) {
            int64_t at = circular ? (w % max_len + s % max_len) % max_len : w + s;
            TRY(put(y, RED_NONE, (o * max_len + at) * inner, upd, (o * len + s) * inner, inner,
                    es));
        }
    }
    return ONYX_OK;
}
