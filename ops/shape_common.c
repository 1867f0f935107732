/* Reading axis lists, slice bounds, pads and depth/space attributes and inputs for the shape ops'
 * inference (and, for axes, their kernels); the rules themselves are geometry/'s. */
#include "ops/shape_common.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "geometry/axes.h"
#include "geometry/depth_space.h"
#include "geometry/pads.h"
#include "geometry/slice.h"

_Static_assert(GEOM_MAX_RANK == ONYX_MAX_RANK, "geometry's rank bound is the core's");

onyx_status ops_axis(int64_t axis, int rank, const char *what, int *out) {
    geom_msg m;
    GEOM_TRY(m, geom_axis(axis, rank, what, out, &m));
    return ONYX_OK;
}

onyx_status ops_norm_axes(const int64_t *axes, size_t n, int rank, int *out, const char *what) {
    geom_msg m;
    GEOM_TRY(m, geom_axes(axes, n, rank, what, out, &m));
    return ONYX_OK;
}

onyx_status ops_read_ints(const tensor *t, int input, int64_t *out, size_t cap, size_t *n) {
    if (t->dtype != ONYX_INT64 && t->dtype != ONYX_INT32)
        return onyx_error(ONYX_ERR_SHAPE, "input %d has type %s, expected int64 or int32", input,
                          onyx_dtype_name(t->dtype));
    if (t->rank > 1)
        return onyx_error(ONYX_ERR_SHAPE, "input %d has rank %d, expected a 1-D tensor", input,
                          t->rank);
    if (t->numel > (int64_t)cap)
        return onyx_error(ONYX_ERR_SHAPE, "input %d has %" PRId64 " values, expected at most %zu",
                          input, t->numel, cap);
    for (int64_t i = 0; i < t->numel; i++) out[i] = tensor_get_i64(t, i);
    *n = (size_t)t->numel;
    return ONYX_OK;
}

/* Copies an INTS attribute into out[cap]; absent gives 0 values. */
static onyx_status attr_ints_into(const graph_node *n, const char *name, int64_t *out, size_t cap,
                                  size_t *count) {
    const int64_t *v;
    size_t k = attr_ints(n, name, &v);
    if (k > cap)
        return onyx_error(ONYX_ERR_INVALID_MODEL,
                          "attribute %s has %zu values, expected at most %zu", name, k, cap);
    if (k) memcpy(out, v, k * sizeof *v);
    *count = k;
    return ONYX_OK;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

onyx_status ops_slice_resolve(const graph_node *n, int rank, const int64_t *dims,
                              const tensor *starts, const tensor *ends, const tensor *axes,
                              const tensor *steps, geom_slice *out) {
    enum { R = ONYX_MAX_RANK };
    int64_t st[R], en[R], ax[R], sp[R];
    size_t ns, ne, na = 0, np = 0;
    bool have_axes, have_steps = false;
    if (n->version < 10) {
        TRY(attr_ints_into(n, "starts", st, R, &ns));
        TRY(attr_ints_into(n, "ends", en, R, &ne));
        TRY(attr_ints_into(n, "axes", ax, R, &na));
        have_axes = node_attr(n, "axes") != NULL;
    } else {
        if (!starts || !ends)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "input %d (%s) is missing", starts ? 2 : 1,
                              starts ? "ends" : "starts");
        TRY(ops_read_ints(starts, 1, st, R, &ns));
        TRY(ops_read_ints(ends, 2, en, R, &ne));
        have_axes = axes != NULL;
        if (axes) TRY(ops_read_ints(axes, 3, ax, R, &na));
        have_steps = steps != NULL;
        if (steps) TRY(ops_read_ints(steps, 4, sp, R, &np));
    }
    if (ns != ne)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "starts has %zu values but ends has %zu", ns, ne);
    if (have_axes && na != ns)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "axes has %zu values, expected %zu like starts",
                          na, ns);
    if (have_steps && np != ns)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "steps has %zu values, expected %zu like starts",
                          np, ns);
    if (!have_axes) {
        if (ns > (size_t)rank)
            return onyx_error(ONYX_ERR_INVALID_MODEL,
                              "starts has %zu values, more than the rank %d", ns, rank);
        for (size_t i = 0; i < ns; i++) ax[i] = (int64_t)i;
    }
    int iax[R];
    TRY(ops_norm_axes(ax, ns, rank, iax, "axes"));
    out->rank = rank;
    for (int k = 0; k < rank; k++) {
        out->in[k] = dims[k];
        out->start[k] = 0;
        out->step[k] = 1;
        out->len[k] = dims[k];
    }
    for (size_t i = 0; i < ns; i++) {
        int k = iax[i];
        int64_t step = have_steps ? sp[i] : 1, d = dims[k];
        if (step == 0) return onyx_error(ONYX_ERR_INVALID_MODEL, "steps[%zu] is 0", i);
        out->step[k] = step;
        if (d < 0) {
            out->len[k] = -1;
            continue;
        }
        geom_slice_axis(st[i], en[i], step, d, &out->start[k], &out->len[k]);
    }
    return ONYX_OK;
}

onyx_status ops_pads_resolve(const graph_node *n, int rank, const int64_t *dims,
                             const tensor *pads, const tensor *axes, geom_pads *out) {
    enum { R = ONYX_MAX_RANK };
    int64_t p[2 * R], ax[R];
    size_t np, na = 0;
    TRY(ops_pad_mode(n, &out->mode));
    if (n->version < 11) {
        TRY(attr_ints_into(n, n->version < 2 ? "paddings" : "pads", p, 2 * R, &np));
    } else {
        if (!pads) return onyx_error(ONYX_ERR_INVALID_MODEL, "input 1 (pads) is missing");
        TRY(ops_read_ints(pads, 1, p, 2 * R, &np));
    }
    if (axes) TRY(ops_read_ints(axes, 3, ax, R, &na));
    geom_msg m;
    GEOM_TRY(m, geom_pads_place(p, np, axes ? ax : NULL, axes ? na : 0, rank, out->begin,
                                out->end, &m));
    out->rank = rank;
    for (int k = 0; k < rank; k++) {
        int64_t d = dims[k];
        out->in[k] = d;
        out->out[k] = out->at[k] = out->crop[k] = out->kept[k] = -1;
        if (d < 0) continue;
        if (geom_pad_dim(d, out->begin[k], out->end[k], &out->out[k], &m) != ONYX_OK)
            return onyx_error(ONYX_ERR_SHAPE, "axis %d: %s", k, m.text);
        geom_pad_interior(d, out->begin[k], out->end[k], &out->at[k], &out->crop[k],
                          &out->kept[k]);
    }
    return ONYX_OK;
}

onyx_status ops_pad_mode(const graph_node *n, int *mode) {
    const char *m = attr_string(n, "mode", "constant");
    static const char *const names[] = {[GEOM_PAD_CONSTANT] = "constant",
                                        [GEOM_PAD_REFLECT] = "reflect", [GEOM_PAD_EDGE] = "edge",
                                        [GEOM_PAD_WRAP] = "wrap"};
    int count = n->version >= 19 ? 4 : 3;
    for (int i = 0; i < count; i++)
        if (strcmp(m, names[i]) == 0) {
            *mode = i;
            return ONYX_OK;
        }
    return onyx_error(ONYX_ERR_INVALID_MODEL, "mode '%s' is not one of constant, reflect, edge%s",
                      m, count == 4 ? ", wrap" : "");
}

onyx_status ops_depth_space_plan(const graph_node *n, bool to_space, const int64_t *in_dims,
                                 geom_blocks *out) {
    int64_t b = attr_int(n, "blocksize", 0);
    /* DepthToSpace has had a mode since 11, SpaceToDepth since 28; before, both are DCR */
    const char *mode = n->version >= (to_space ? 11 : 28) ? attr_string(n, "mode", "DCR") : "DCR";
    bool crd = strcmp(mode, "CRD") == 0;
    if (!crd && strcmp(mode, "DCR") != 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "mode '%s' is not DCR or CRD", mode);
    geom_msg m;
    GEOM_TRY(m, geom_depth_space(to_space, crd, b, in_dims, out->view, out->perm, out->out, &m));
    memcpy(out->in, in_dims, sizeof out->in);
    return ONYX_OK;
}

void ops_set_slice(infer_ctx *c, const geom_slice *s) {
    if (!c->params) return;
    c->params->kind = OP_PARAMS_SLICE;
    c->params->u.slice = *s;
}

void ops_set_pads(infer_ctx *c, const geom_pads *p) {
    if (!c->params) return;
    c->params->kind = OP_PARAMS_PADS;
    c->params->u.pads = *p;
}

void ops_set_blocks(infer_ctx *c, const geom_blocks *b) {
    if (!c->params) return;
    c->params->kind = OP_PARAMS_BLOCKS;
    c->params->u.blocks = *b;
}

bool ops_dims_product(const int64_t *dims, int from, int to, int64_t *out) {
    int64_t p = 1;
    bool unknown = false;
    for (int k = from; k < to; k++) {
        if (dims[k] == 0) {
            *out = 0;
            return true;
        }
        if (dims[k] < 0) unknown = true;
    }
    if (unknown) {
        *out = -1;
        return true;
    }
    for (int k = from; k < to; k++) {
        if (p > INT64_MAX / dims[k]) return false;
        p *= dims[k];
    }
    *out = p;
    return true;
}

void ops_shape_range(const graph_node *n, int rank, int *start, int *end) {
    int64_t s = 0, e = rank;
    if (n->version >= 15) {
        s = attr_int(n, "start", 0);
        e = attr_int(n, "end", rank);
    }
    if (s < 0) s += rank;
    if (e < 0) e += rank;
    s = clamp64(s, 0, rank);
    e = clamp64(e, 0, rank);
    *start = (int)s;
    *end = (int)(e < s ? s : e);
}

onyx_status ops_split_sizes(const graph_node *n, int n_out, int64_t dim, const tensor *split,
                            int64_t *sizes) {
    size_t ns = 0;
    bool given = false;
    if (split && split->numel > 0) { /* an empty split tensor is taken as no split, as ORT does */
        if (split->numel != n_out)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "split has %" PRId64 " sizes for %d outputs",
                              split->numel, n_out);
        TRY(ops_read_ints(split, 1, sizes, (size_t)n_out, &ns));
        given = true;
    } else if (n->version < 13 && node_attr(n, "split")) {
        const int64_t *v;
        ns = attr_ints(n, "split", &v);
        if (ns != (size_t)n_out)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "split has %zu sizes for %d outputs", ns,
                              n_out);
        if (ns) memcpy(sizes, v, ns * sizeof *v);
        given = true;
    }
    if (given) {
        int64_t sum = 0;
        for (size_t i = 0; i < ns; i++) {
            if (sizes[i] < 0 || sizes[i] > INT64_MAX - sum)
                return onyx_error(ONYX_ERR_INVALID_MODEL, "split[%zu] = %" PRId64 " is invalid", i,
                                  sizes[i]);
            sum += sizes[i];
        }
        if (dim >= 0 && sum != dim)
            return onyx_error(ONYX_ERR_SHAPE,
                              "split sizes add up to %" PRId64 ", expected the axis size %" PRId64,
                              sum, dim);
        return ONYX_OK;
    }
    bool ceil_parts = n->version >= 18;
    if (ceil_parts && node_attr(n, "num_outputs")) {
        int64_t num = attr_int(n, "num_outputs", 0);
        if (num != n_out)
            return onyx_error(ONYX_ERR_INVALID_MODEL,
                              "num_outputs is %" PRId64 " but the node has %d outputs", num, n_out);
    }
    if (n_out < 1) return onyx_error(ONYX_ERR_INVALID_MODEL, "split has no outputs");
    if (dim < 0) {
        for (int i = 0; i < n_out; i++) sizes[i] = -1;
        return ONYX_OK;
    }
    if (!ceil_parts) {
        if (dim % n_out != 0)
            return onyx_error(ONYX_ERR_SHAPE,
                              "axis size %" PRId64 " does not split into %d equal parts", dim,
                              n_out);
        for (int i = 0; i < n_out; i++) sizes[i] = dim / n_out;
        return ONYX_OK;
    }
    /* v18: parts of ceil(dim / n), the last one smaller */
    int64_t chunk = dim / n_out + (dim % n_out != 0);
    int64_t last = dim - chunk * (n_out - 1);
    if (last < 0)
        return onyx_error(ONYX_ERR_SHAPE,
                          "axis size %" PRId64 " does not split into %d parts of %" PRId64, dim,
                          n_out, chunk);
    for (int i = 0; i < n_out; i++) sizes[i] = i == n_out - 1 ? last : chunk;
    return ONYX_OK;
}

onyx_status ops_range_count(const tensor *start, const tensor *limit, const tensor *delta,
                            int64_t *count) {
    const tensor *in[3] = {start, limit, delta};
    for (int i = 0; i < 3; i++) {
        if (in[i]->numel != 1)
            return onyx_error(ONYX_ERR_SHAPE,
                              "input %d has %" PRId64 " elements, expected a scalar", i,
                              in[i]->numel);
        if (in[i]->dtype != start->dtype)
            return onyx_error(ONYX_ERR_SHAPE, "input %d has type %s, expected %s like input 0", i,
                              onyx_dtype_name(in[i]->dtype), onyx_dtype_name(start->dtype));
    }
    if (dtype_is_int(start->dtype)) {
        int64_t s = tensor_get_i64(start, 0), l = tensor_get_i64(limit, 0),
                d = tensor_get_i64(delta, 0);
        if (d == 0) return onyx_error(ONYX_ERR_RUNTIME, "delta is 0");
        /* unsigned differences: limit - start may not fit in int64 */
        uint64_t span = 0, step;
        if (d > 0) {
            if (l > s) span = (uint64_t)l - (uint64_t)s;
            step = (uint64_t)d;
        } else {
            if (l < s) span = (uint64_t)s - (uint64_t)l;
            step = 0 - (uint64_t)d;
        }
        uint64_t n = span ? (span - 1) / step + 1 : 0;
        if (n > (uint64_t)INT64_MAX) return onyx_error(ONYX_ERR_SHAPE, "range is too long");
        *count = (int64_t)n;
        return ONYX_OK;
    }
    double s = tensor_get_f64(start, 0), l = tensor_get_f64(limit, 0), d = tensor_get_f64(delta, 0);
    if (d == 0) return onyx_error(ONYX_ERR_RUNTIME, "delta is 0");
    double n = ceil((l - s) / d);
    if (n != n || n >= 9.2e18)
        return onyx_error(ONYX_ERR_SHAPE, "range from %g to %g by %g has no finite length", s, l,
                          d);
    *count = n > 0 ? (int64_t)n : 0;
    return ONYX_OK;
}
