/* Schema of DeformConv: a 2-D convolution whose taps sample the input at learned offsets. Its
 * kernels get the convolution's window from the plan (core/op_params.h). */
#include "ops/shape_common.h"
#include "ops/spatial.h"

#define DEFORM_T (DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE) | DT_BIT(ONYX_FLOAT16))

static bool known(const type_info *t) { return t && t->kind == ONYX_VALUE_TENSOR && t->rank >= 0; }

static onyx_status shape_err(int i, const char *what, int64_t got, int64_t want) {
    return onyx_error(ONYX_ERR_SHAPE, "input %d (%s) has %lld where %lld is expected", i, what,
                      (long long)got, (long long)want);
}

static onyx_status deformconv_infer(infer_ctx *c) {
    const graph_node *n = c->node;
    dtype_mask t = DEFORM_T | (n->version >= 22 ? DT_BIT(ONYX_BFLOAT16) : 0);
    for (int i = 0; i < 5; i++)
        if (i < 3 || ops_has_input(c, i)) TRY(infer_dtype_in(c, i, t));
    TRY(infer_same_dtypes(c, 0, 5));
    const type_info *x = c->in[0], *w = c->in[1], *off = c->in[2];
    int64_t group = attr_int(n, "group", 1), og = attr_int(n, "offset_group", 1);
    if (group < 1 || og < 1)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "group %lld and offset_group %lld must be >= 1",
                          (long long)group, (long long)og);
    int64_t dims[4] = {-1, -1, -1, -1};
    if (known(x) && x->rank != 4)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "input 0 has rank %d; only 2-D DeformConv "
                          "(rank 4) is supported", x->rank);
    if (known(w) && w->rank != 4)
        return onyx_error(ONYX_ERR_SHAPE, "input 1 (W) has rank %d, expected 4", w->rank);
    if (known(off) && off->rank != 4)
        return onyx_error(ONYX_ERR_SHAPE, "input 2 (offset) has rank %d, expected 4", off->rank);
    if (known(x)) dims[0] = x->dims[0];
    if (known(w)) {
        dims[1] = w->dims[0];
        if (w->dims[0] >= 0 && w->dims[0] % group != 0)
            return onyx_error(ONYX_ERR_SHAPE, "W has %lld output channels, not a multiple of "
                              "group %lld", (long long)w->dims[0], (long long)group);
        int64_t cin;
        if (known(x) && x->dims[1] >= 0 && w->dims[1] >= 0 &&
            (__builtin_mul_overflow(w->dims[1], group, &cin) || x->dims[1] != cin))
            return onyx_error(ONYX_ERR_SHAPE, "input 0 has %lld channels, expected W's %lld "
                              "times group %lld", (long long)x->dims[1], (long long)w->dims[1],
                              (long long)group);
    }
    if (known(x) && x->dims[1] >= 0 && x->dims[1] % og != 0)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has %lld channels, not a multiple of "
                          "offset_group %lld", (long long)x->dims[1], (long long)og);
    if (known(w) && w->dims[2] >= 0 && w->dims[3] >= 0) {
        spatial_params p;
        TRY(spatial_parse(n, 2, w->dims + 2, &p));
        /* kernel dims are at most 2^30 each; offset_group is any int64 */
        int64_t mc, oc2;
        if (__builtin_mul_overflow(og, p.kernel[0] * p.kernel[1], &mc) ||
            __builtin_mul_overflow(mc, 2, &oc2))
            return onyx_error(ONYX_ERR_INVALID_MODEL, "offset_group %lld is too large",
                              (long long)og);
        if (known(off) && off->dims[1] >= 0 && off->dims[1] != oc2)
            return shape_err(2, "offset channels", off->dims[1], oc2);
        if (ops_has_input(c, 4) && known(c->in[4]) && c->in[4]->rank == 4 &&
            c->in[4]->dims[1] >= 0 && c->in[4]->dims[1] != mc)
            return shape_err(4, "mask channels", c->in[4]->dims[1], mc);
        if (known(x)) {
            TRY(spatial_resolve(&p, x->dims + 2, dims + 2));
            for (int i = 0; i < 2 && known(off); i++)
                if (off->dims[2 + i] >= 0 && dims[2 + i] >= 0 && off->dims[2 + i] != dims[2 + i])
                    return shape_err(2, "offset spatial dim", off->dims[2 + i], dims[2 + i]);
            geom_window win;
            spatial_pool_window(&p, x->dims, dims + 2, &win);
            win.m = w->dims[0]; /* a convolution's: W's output channels in groups */
            win.group = group;
            infer_set_window(c, &win);
        }
    }
    if (ops_has_input(c, 3) && known(c->in[3]) &&
        (c->in[3]->rank != 1 || (dims[1] >= 0 && c->in[3]->dims[0] >= 0 &&
                                 c->in[3]->dims[0] != dims[1])))
        return onyx_error(ONYX_ERR_SHAPE, "input 3 (B) must be 1-D with one value per output "
                          "channel");
    type_set_tensor(&c->out[0], x->dtype, 4, dims);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"dilations", ATTR_INTS}, {"group", ATTR_INT},
                                  {"kernel_shape", ATTR_INTS}, {"offset_group", ATTR_INT},
                                  {"pads", ATTR_INTS}, {"strides", ATTR_INTS}, {NULL, 0}};

const op_schema op_DeformConv[] = {
    {"", "DeformConv", 19, 3, 5, 1, 1, attrs, deformconv_infer, OP_GEOMETRY},
    {"", "DeformConv", 22, 3, 5, 1, 1, attrs, deformconv_infer, OP_GEOMETRY},
    OP_END,
};
