/* Type and shape inference helpers that every op file shares: presence/kind checks, numpy
 * broadcasting over partially known shapes, axis normalization and dtype constraints; and the
 * geometry a schema hands its kernels (core/op_params.h). */
#include "ops/schema.h"

#include <stdio.h>

#include "geometry/axes.h"
#include "geometry/broadcast.h"
#include "geometry/matmul.h"

static const char *kind_name(onyx_value_kind k) {
    switch (k) {
    case ONYX_VALUE_NONE: return "unknown";
    case ONYX_VALUE_TENSOR: return "tensor";
    case ONYX_VALUE_SEQUENCE: return "sequence";
    case ONYX_VALUE_OPTIONAL: return "optional";
    case ONYX_VALUE_MAP: return "map";
    }
    return "?";
}

onyx_status infer_need_tensor(infer_ctx *c, int i) {
    if (i < 0 || i >= c->n_in || !c->in[i])
        return onyx_error(ONYX_ERR_INVALID_MODEL, "input %d: expected a tensor, got none", i);
    /* kind NONE is a value whose type is only known at run time (e.g. a Loop output): it may
     * be a tensor, and reads as one of unknown dtype and rank */
    if (c->in[i]->kind != ONYX_VALUE_TENSOR && c->in[i]->kind != ONYX_VALUE_NONE)
        return onyx_error(ONYX_ERR_SHAPE, "input %d: expected a tensor, got a %s", i,
                          kind_name(c->in[i]->kind));
    return ONYX_OK;
}

onyx_status infer_same_as_input(infer_ctx *c, int out, int in) {
    if (out < 0 || out >= c->n_out)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "output %d: expected at most %d outputs", out,
                          c->n_out);
    if (in < 0 || in >= c->n_in || !c->in[in])
        return onyx_error(ONYX_ERR_INVALID_MODEL, "input %d: expected a value, got none", in);
    type_release(&c->out[out]);
    return type_copy(&c->out[out], c->in[in]);
}

onyx_status infer_broadcast(infer_ctx *c, int first, int count, int *rank, int64_t *dims) {
    int r = 0;
    int64_t acc[ONYX_MAX_RANK];
    bool unknown_rank = false;
    for (int i = first; i < first + count; i++) {
        if (i >= c->n_in || !c->in[i]) continue;
        TRY(infer_need_tensor(c, i));
        if (c->in[i]->rank < 0) unknown_rank = true;
        else if (c->in[i]->rank > r) r = c->in[i]->rank;
    }
    if (unknown_rank) {
        *rank = -1;
        return ONYX_OK;
    }
    for (int k = 0; k < r; k++) acc[k] = 1;
    for (int i = first; i < first + count; i++) {
        if (i >= c->n_in || !c->in[i]) continue;
        const type_info *t = c->in[i];
        int off = r - t->rank;
        for (int k = 0; k < t->rank; k++) {
            if (!geom_broadcast_dim(acc[off + k], t->dims[k], &acc[off + k])) {
                char a[160], b[160];
                return onyx_error(ONYX_ERR_SHAPE,
                                  "input %d has shape %s, which does not broadcast with %s "
                                  "(dim %d: %lld vs %lld)",
                                  i, shape_str(t->rank, t->dims, a, sizeof a),
                                  shape_str(r, acc, b, sizeof b), off + k, (long long)t->dims[k],
                                  (long long)acc[off + k]);
            }
        }
    }
    *rank = r;
    for (int k = 0; k < r; k++) dims[k] = acc[k];
    return ONYX_OK;
}

onyx_status infer_axis(infer_ctx *c, int64_t axis, int rank, int *out) {
    (void)c;
    geom_msg m;
    GEOM_TRY(m, geom_axis(axis, rank, "axis", out, &m));
    return ONYX_OK;
}

onyx_status infer_same_dtypes(infer_ctx *c, int first, int count) {
    int ref = -1;
    for (int i = first; i < first + count && i < c->n_in; i++) {
        if (!c->in[i]) continue;
        TRY(infer_need_tensor(c, i));
        if (c->in[i]->dtype == ONYX_UNDEFINED) continue; /* not known before run time */
        if (ref < 0) {
            ref = i;
            continue;
        }
        if (c->in[i]->dtype != c->in[ref]->dtype)
            return onyx_error(ONYX_ERR_SHAPE, "input %d has type %s, expected %s like input %d", i,
                              onyx_dtype_name(c->in[i]->dtype), onyx_dtype_name(c->in[ref]->dtype),
                              ref);
    }
    return ONYX_OK;
}

onyx_status infer_dtype_in(infer_ctx *c, int i, dtype_mask mask) {
    TRY(infer_need_tensor(c, i));
    onyx_dtype d = c->in[i]->dtype;
    if (d != ONYX_UNDEFINED && !dtype_in(d, mask)) {
        char list[400];
        size_t n = 0;
        list[0] = 0;
        for (int k = 1; k < ONYX_DTYPE_COUNT && n + 20 < sizeof list; k++) {
            if (!dtype_in((onyx_dtype)k, mask)) continue;
            n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "",
                                  onyx_dtype_name((onyx_dtype)k));
        }
        return onyx_error(ONYX_ERR_SHAPE, "input %d has type %s, expected one of: %s", i,
                          onyx_dtype_name(d), list);
    }
    return ONYX_OK;
}

void infer_set_window(infer_ctx *c, const geom_window *w) {
    if (!c->params) return;
    c->params->kind = OP_PARAMS_WINDOW;
    c->params->u.window = *w;
}

static bool dims_known(int rank, const int64_t *dims) {
    for (int i = 0; i < rank; i++)
        if (dims[i] < 0) return false;
    return true;
}

onyx_status infer_set_matmul(infer_ctx *c, int ra, const int64_t *a, int rb, const int64_t *b) {
    if (!c->params || ra < 0 || rb < 0 || !dims_known(ra, a) || !dims_known(rb, b)) return ONYX_OK;
    geom_msg m;
    GEOM_TRY(m, geom_matmul_plan(ra, a, rb, b, &c->params->u.matmul, &m));
    c->params->kind = OP_PARAMS_MATMUL;
    return ONYX_OK;
}

onyx_status infer_kernel_axis(infer_ctx *c, int64_t axis, int rank, int *out) {
    TRY(infer_axis(c, axis, rank, out));
    if (c->params) {
        c->params->kind = OP_PARAMS_AXES;
        geom_axis_set_one(rank, *out, &c->params->u.axes);
    }
    return ONYX_OK;
}

void infer_set_attention(infer_ctx *c, const geom_attention *d) {
    if (!c->params) return;
    c->params->kind = OP_PARAMS_ATTENTION;
    c->params->u.attention = *d;
}

void infer_set_axes(infer_ctx *c, int rank, const bool *mask) {
    if (!c->params) return;
    c->params->kind = OP_PARAMS_AXES;
    geom_axis_set_mask(rank, mask, &c->params->u.axes);
}
