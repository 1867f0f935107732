/* Schema of Resize (v10 scales only; v11 roi/scales/sizes; v18 axes, antialias, aspect policy;
 * v19 half_pixel_symmetric), and the plan Resize and Upsample share: per-axis output size,
 * scale and roi, resolved once for inference and kernel alike. */
#include "ops/signal/signal_common.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "geometry/axes.h"

onyx_status ops_scalar_int(const tensor *t, const char *what, int64_t *out) {
    if (t->dtype != ONYX_INT64 && t->dtype != ONYX_INT32)
        return onyx_error(ONYX_ERR_SHAPE, "%s has type %s, expected int32 or int64", what,
                          onyx_dtype_name(t->dtype));
    if (t->numel != 1)
        return onyx_error(ONYX_ERR_SHAPE, "%s has %" PRId64 " values, expected one", what,
                          t->numel);
    *out = tensor_get_i64(t, 0);
    return ONYX_OK;
}

static int pick(const char *s, const char *const *names, int count) {
    for (int i = 0; i < count; i++)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

onyx_status ops_resize_attrs(const graph_node *n, ops_resize_plan *p) {
    memset(p, 0, sizeof *p);
    bool upsample = strcmp(n->op_type, "Upsample") == 0;
    const char *mode = attr_string(n, "mode", "nearest");
    if (strcmp(mode, "nearest") == 0) p->mode = OPS_RZ_NEAREST;
    else if (strcmp(mode, "linear") == 0 || (upsample && strcmp(mode, "bilinear") == 0))
        p->mode = OPS_RZ_LINEAR;
    else if (!upsample && n->version >= 11 && strcmp(mode, "cubic") == 0) p->mode = OPS_RZ_CUBIC;
    else
        return onyx_error(ONYX_ERR_INVALID_MODEL, "mode '%s' is not one of nearest, linear%s",
                          mode, upsample || n->version < 11 ? "" : ", cubic");
    p->cubic_a = -0.75f;
    if (upsample || n->version < 11) {
        /* before v11 coordinates were x/scale and nearest took floor (ceil when shrinking) */
        p->coord = OPS_RZ_ASYMMETRIC;
        p->nearest = OPS_RZ_SIMPLE;
        return ONYX_OK;
    }
    static const char *const coords[] = {"half_pixel",   "pytorch_half_pixel",   "align_corners",
                                         "asymmetric",   "tf_half_pixel_for_nn", "tf_crop_and_resize",
                                         "half_pixel_symmetric"};
    const char *cm = attr_string(n, "coordinate_transformation_mode", "half_pixel");
    p->coord = pick(cm, coords, 7);
    if (p->coord < 0 || (p->coord == OPS_RZ_TF_HALF_PIXEL_FOR_NN && n->version >= 13) ||
        (p->coord == OPS_RZ_HALF_PIXEL_SYMMETRIC && n->version < 19))
        return onyx_error(ONYX_ERR_INVALID_MODEL,
                          "coordinate_transformation_mode '%s' is not supported by Resize-%d", cm,
                          n->version);
    static const char *const nearests[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                           "ceil"};
    const char *nm = attr_string(n, "nearest_mode", "round_prefer_floor");
    p->nearest = pick(nm, nearests, 4);
    if (p->nearest < 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL,
                          "nearest_mode '%s' is not one of round_prefer_floor, round_prefer_ceil, "
                          "floor, ceil",
                          nm);
    p->cubic_a = attr_float(n, "cubic_coeff_a", -0.75f);
    p->exclude_outside = attr_int(n, "exclude_outside", 0) != 0;
    p->extrapolation = attr_float(n, "extrapolation_value", 0.0f);
    if (n->version >= 18) {
        p->antialias = attr_int(n, "antialias", 0) != 0;
        if (p->antialias && p->mode == OPS_RZ_NEAREST)
            return onyx_error(ONYX_ERR_INVALID_MODEL,
                              "antialias is only defined for linear and cubic modes");
    }
    return ONYX_OK;
}

/* Axes attribute (v18) normalized; without it every axis, in order. */
static onyx_status resize_axes(const graph_node *n, int rank, int *axes, int *count) {
    const int64_t *ax = NULL;
    size_t na = n->version >= 18 && strcmp(n->op_type, "Resize") == 0 ? attr_ints(n, "axes", &ax) : 0;
    if (na == 0) {
        for (int i = 0; i < rank; i++) axes[i] = i;
        *count = rank;
        return ONYX_OK;
    }
    /* any unusable axes list is a malformed attribute here, out-of-range axes included */
    geom_msg m;
    if (geom_axes(ax, na, rank, "axes", axes, &m) != ONYX_OK)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "%s", m.text);
    *count = (int)na;
    return ONYX_OK;
}

static bool present(const tensor *t) { return t && t->numel > 0; }

/* Output size for one scaled dim: floor(scale * dim), refused when it leaves int64. */
static onyx_status scaled_dim(int64_t dim, double scale, int axis, int64_t *out) {
    if (dim < 0) {
        *out = -1;
        return ONYX_OK;
    }
    double v = floor(scale * (double)dim);
    if (!(v < 4e15))
        return onyx_error(ONYX_ERR_SHAPE, "scale %g on axis %d gives an output dim too large",
                          scale, axis);
    *out = (int64_t)v;
    return ONYX_OK;
}

onyx_status ops_resize_plan_make(const graph_node *n, int rank, const int64_t *dims,
                                 const tensor *roi, const tensor *scales, const tensor *sizes,
                                 ops_resize_plan *p) {
    TRY(ops_resize_attrs(n, p));
    if (rank < 1 || rank > ONYX_MAX_RANK)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has rank %d, expected at least 1", rank);
    p->rank = rank;
    int axes[ONYX_MAX_RANK], na = 0;
    TRY(resize_axes(n, rank, axes, &na));
    for (int i = 0; i < rank; i++) {
        p->in_dims[i] = dims[i];
        p->out_dims[i] = dims[i];
        p->scale[i] = 1.0;
        p->roi_lo[i] = 0.0;
        p->roi_hi[i] = 1.0;
    }
    bool upsample = strcmp(n->op_type, "Upsample") == 0;
    double sc[ONYX_MAX_RANK];
    bool have_scales = false;
    if (upsample && n->version < 9) {
        if (n->version < 7) {
            if (rank != 4)
                return onyx_error(ONYX_ERR_SHAPE, "Upsample-1 needs a 4-D input, got rank %d",
                                  rank);
            sc[0] = sc[1] = 1.0;
            sc[2] = attr_float(n, "height_scale", 1.0f);
            sc[3] = attr_float(n, "width_scale", 1.0f);
        } else {
            const float *f;
            size_t k = attr_floats(n, "scales", &f);
            if (k != (size_t)rank)
                return onyx_error(ONYX_ERR_INVALID_MODEL,
                                  "attribute scales has %zu values, expected %d (the rank)", k,
                                  rank);
            for (int i = 0; i < rank; i++) sc[i] = f[i];
        }
        have_scales = true;
    } else if (present(scales)) {
        if (scales->dtype != ONYX_FLOAT || scales->rank != 1)
            return onyx_error(ONYX_ERR_SHAPE, "scales must be a 1-D float tensor, got %s of rank %d",
                              onyx_dtype_name(scales->dtype), scales->rank);
        if (scales->numel != na)
            return onyx_error(ONYX_ERR_SHAPE, "scales has %" PRId64 " values, expected %d", scales->numel,
                              na);
        for (int i = 0; i < na; i++) sc[i] = ((const float *)scales->data)[i];
        have_scales = true;
        if (present(sizes))
            return onyx_error(ONYX_ERR_INVALID_MODEL,
                              "scales and sizes are both given; expected exactly one");
    }
    if (have_scales) {
        for (int i = 0; i < na; i++) {
            int a = axes[i];
            if (!(sc[i] > 0) || isinf(sc[i]))
                return onyx_error(ONYX_ERR_INVALID_MODEL, "scale %g on axis %d, expected > 0",
                                  sc[i], a);
            p->scale[a] = sc[i];
            TRY(scaled_dim(dims[a], sc[i], a, &p->out_dims[a]));
        }
    } else if (present(sizes)) {
        if (sizes->dtype != ONYX_INT64 || sizes->rank != 1)
            return onyx_error(ONYX_ERR_SHAPE, "sizes must be a 1-D int64 tensor, got %s of rank %d",
                              onyx_dtype_name(sizes->dtype), sizes->rank);
        if (sizes->numel != na)
            return onyx_error(ONYX_ERR_SHAPE, "sizes has %" PRId64 " values, expected %d", sizes->numel,
                              na);
        const char *policy =
            n->version >= 18 ? attr_string(n, "keep_aspect_ratio_policy", "stretch") : "stretch";
        int pol = strcmp(policy, "stretch") == 0      ? 0
                  : strcmp(policy, "not_larger") == 0  ? 1
                  : strcmp(policy, "not_smaller") == 0 ? 2
                                                      : -1;
        if (pol < 0)
            return onyx_error(ONYX_ERR_INVALID_MODEL,
                              "keep_aspect_ratio_policy '%s' is not one of stretch, not_larger, "
                              "not_smaller",
                              policy);
        bool unknown = false;
        double keep = 0;
        for (int i = 0; i < na; i++) {
            int a = axes[i];
            int64_t s = ((const int64_t *)sizes->data)[i];
            if (s < 0 || s > ((int64_t)1 << 50))
                return onyx_error(ONYX_ERR_INVALID_MODEL, "sizes[%d] = %" PRId64 " is out of range",
                                  i, s);
            if (dims[a] < 0) {
                unknown = true;
                p->out_dims[a] = pol ? -1 : s;
                continue;
            }
            if (dims[a] == 0 && s != 0)
                return onyx_error(ONYX_ERR_SHAPE, "axis %d is empty, cannot resize it to %" PRId64,
                                  a, s);
            p->out_dims[a] = s;
            p->scale[a] = dims[a] ? (double)s / (double)dims[a] : 1.0;
            if (i == 0 || (pol == 1 && p->scale[a] < keep) || (pol == 2 && p->scale[a] > keep))
                keep = p->scale[a];
        }
        if (pol) {
            for (int i = 0; i < na; i++) {
                int a = axes[i];
                if (unknown) {
                    p->out_dims[a] = -1;
                    continue;
                }
                p->scale[a] = keep;
                double v = keep * (double)dims[a] + 0.5;
                if (!(v < 4e15))
                    return onyx_error(ONYX_ERR_SHAPE,
                                      "keep_aspect_ratio_policy gives axis %d a size too large", a);
                p->out_dims[a] = (int64_t)v;
            }
        }
    } else {
        return onyx_error(ONYX_ERR_INVALID_MODEL, "neither scales nor sizes is given");
    }
    if (p->coord == OPS_RZ_TF_CROP_AND_RESIZE && present(roi)) {
        if (roi->numel != 2 * (int64_t)na || roi->rank != 1)
            return onyx_error(ONYX_ERR_SHAPE, "roi has %" PRId64 " values, expected %d (2 x %d axes)",
                              roi->numel, 2 * na, na);
        if (!dtype_is_float(roi->dtype))
            return onyx_error(ONYX_ERR_SHAPE, "roi has type %s, expected a float type",
                              onyx_dtype_name(roi->dtype));
        for (int i = 0; i < na; i++) {
            p->roi_lo[axes[i]] = tensor_get_f64(roi, i);
            p->roi_hi[axes[i]] = tensor_get_f64(roi, na + i);
        }
    }
    for (int a = 0; a < rank; a++) {
        /* An antialiased filter widens by 1/scale: refuse the scales whose filter would not fit
         * (the kernel converts its width to an integer). Empty outputs need no filter. */
        double reach = p->mode == OPS_RZ_LINEAR ? 1 : 2;
        if (p->antialias && p->mode != OPS_RZ_NEAREST && p->scale[a] < 1 && p->out_dims[a] != 0 &&
            !(reach / p->scale[a] < OPS_RZ_MAX_TAPS / 2 - 1))
            return onyx_error(ONYX_ERR_INVALID_MODEL,
                              "scale %g on axis %d is too small for antialias: its filter would "
                              "span %g input elements, more than %d",
                              p->scale[a], a, 2 * reach / p->scale[a], OPS_RZ_MAX_TAPS);
        bool same = p->out_dims[a] == dims[a] && fabs(p->scale[a] - 1.0) <= 1e-9;
        if (p->coord == OPS_RZ_TF_CROP_AND_RESIZE)
            same = same && fabs(p->roi_lo[a]) <= 1e-9 && fabs(p->roi_hi[a] - 1.0) <= 1e-9;
        p->active[a] = !same;
        if (p->active[a] && dims[a] == 0 && p->out_dims[a] > 0)
            return onyx_error(ONYX_ERR_SHAPE, "axis %d is empty, cannot resize it to %" PRId64, a,
                              p->out_dims[a]);
    }
    return ONYX_OK;
}

/* Input i's value, or NULL when absent or not known; *empty when it is known to be empty. */
static const tensor *opt_input(const infer_ctx *c, int i, bool *empty, bool *unknown) {
    *empty = true;
    if (i >= c->n_in || !c->in[i]) return NULL;
    const type_info *t = c->in[i];
    const tensor *v = c->in_value ? c->in_value[i] : NULL;
    if (v) {
        *empty = v->numel == 0;
        return v;
    }
    if (t->kind == ONYX_VALUE_TENSOR && t->rank == 1 && t->dims[0] == 0) return NULL;
    *empty = false;
    *unknown = true;
    return NULL;
}

static onyx_status resize_infer(infer_ctx *c) {
    TRY(infer_need_tensor(c, 0));
    const type_info *x = c->in[0];
    ops_resize_plan p;
    TRY(ops_resize_attrs(c->node, &p));
    bool unknown = x->rank < 0, e1, e2, e3;
    const tensor *roi = NULL, *scales, *sizes = NULL;
    if (c->node->version < 11) {
        TRY(infer_need_tensor(c, 1));
        scales = opt_input(c, 1, &e1, &unknown);
    } else {
        bool roi_unknown = false; /* roi never changes the output shape */
        roi = opt_input(c, 1, &e1, &roi_unknown);
        scales = opt_input(c, 2, &e2, &unknown);
        sizes = opt_input(c, 3, &e3, &unknown);
        if (c->n_in > 1 && c->in[1] && c->in[1]->kind == ONYX_VALUE_TENSOR &&
            c->in[1]->dtype != ONYX_UNDEFINED)
            TRY(infer_dtype_in(c, 1, DT_FLOATS));
    }
    if (unknown) {
        type_set_tensor(&c->out[0], x->dtype, x->rank, NULL);
        return ONYX_OK;
    }
    TRY(ops_resize_plan_make(c->node, x->rank, x->dims, roi, scales, sizes, &p));
    type_set_tensor(&c->out[0], x->dtype, x->rank, p.out_dims);
    return ONYX_OK;
}

static const attr_spec attrs_10[] = {{"mode", ATTR_STRING}, {NULL, 0}};
static const attr_spec attrs_11[] = {{"mode", ATTR_STRING},
                                     {"coordinate_transformation_mode", ATTR_STRING},
                                     {"nearest_mode", ATTR_STRING},
                                     {"cubic_coeff_a", ATTR_FLOAT},
                                     {"exclude_outside", ATTR_INT},
                                     {"extrapolation_value", ATTR_FLOAT},
                                     {NULL, 0}};
static const attr_spec attrs_18[] = {{"mode", ATTR_STRING},
                                     {"coordinate_transformation_mode", ATTR_STRING},
                                     {"nearest_mode", ATTR_STRING},
                                     {"cubic_coeff_a", ATTR_FLOAT},
                                     {"exclude_outside", ATTR_INT},
                                     {"extrapolation_value", ATTR_FLOAT},
                                     {"antialias", ATTR_INT},
                                     {"axes", ATTR_INTS},
                                     {"keep_aspect_ratio_policy", ATTR_STRING},
                                     {NULL, 0}};

const op_schema op_Resize[] = {{"", "Resize", 10, 2, 2, 1, 1, attrs_10, resize_infer, 0},
                               {"", "Resize", 11, 3, 4, 1, 1, attrs_11, resize_infer, 0},
                               {"", "Resize", 13, 1, 4, 1, 1, attrs_11, resize_infer, 0},
                               {"", "Resize", 18, 1, 4, 1, 1, attrs_18, resize_infer, 0},
                               {"", "Resize", 19, 1, 4, 1, 1, attrs_18, resize_infer, 0},
                               OP_END};
