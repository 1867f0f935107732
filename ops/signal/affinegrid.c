/* Schema of AffineGrid: theta [N, 2, 3] (2-D) or [N, 3, 4] (3-D) and size [N, C, H, W] or
 * [N, C, D, H, W] give the sampling grid [N, H, W, 2] or [N, D, H, W, 3] for GridSample. */
#include "ops/schema.h"

#include <inttypes.h>

static onyx_status affinegrid_infer(infer_ctx *c) {
    TRY(infer_need_tensor(c, 0));
    TRY(infer_need_tensor(c, 1));
    TRY(infer_dtype_in(c, 0, DT_FLOATS));
    TRY(infer_dtype_in(c, 1, DT_BIT(ONYX_INT64)));
    const type_info *th = c->in[0];
    if (th->rank >= 0) {
        if (th->rank != 3)
            return onyx_error(ONYX_ERR_SHAPE, "theta has rank %d, expected 3", th->rank);
        if (th->dims[1] >= 0 && th->dims[2] >= 0 &&
            !((th->dims[1] == 2 && th->dims[2] == 3) || (th->dims[1] == 3 && th->dims[2] == 4)))
            return onyx_error(ONYX_ERR_SHAPE, "theta is [N, %" PRId64 ", %" PRId64
                              "], expected [N, 2, 3] or [N, 3, 4]",
                              th->dims[1], th->dims[2]);
    }
    const tensor *size = c->in_value ? c->in_value[1] : NULL;
    if (!size) {
        int r = th->rank == 3 && th->dims[1] >= 0 ? (int)th->dims[1] + 2 : -1;
        type_set_tensor(&c->out[0], th->dtype, r, NULL);
        if (r > 0) c->out[0].dims[r - 1] = r - 2;
        return ONYX_OK;
    }
    if (size->rank != 1 || (size->numel != 4 && size->numel != 5))
        return onyx_error(ONYX_ERR_SHAPE, "size has %" PRId64 " values, expected 4 or 5",
                          size->numel);
    int sp = (int)size->numel - 2;
    const int64_t *s = size->data;
    for (int i = 0; i < size->numel; i++)
        if (s[i] < 0 || (i >= 2 && s[i] == 0) || s[i] > ((int64_t)1 << 40))
            return onyx_error(ONYX_ERR_SHAPE, "size[%d] = %" PRId64 " is out of range", i, s[i]);
    if (th->rank == 3 && th->dims[1] >= 0 && th->dims[1] != sp)
        return onyx_error(ONYX_ERR_SHAPE, "theta is for %" PRId64 "-D, size for %d-D",
                          th->dims[1], sp);
    if (th->rank == 3 && th->dims[0] >= 0 && th->dims[0] != s[0])
        return onyx_error(ONYX_ERR_SHAPE, "theta has batch %" PRId64 ", size says %" PRId64,
                          th->dims[0], s[0]);
    int64_t dims[6];
    dims[0] = s[0];
    for (int i = 0; i < sp; i++) dims[1 + i] = s[2 + i];
    dims[1 + sp] = sp;
    type_set_tensor(&c->out[0], th->dtype, sp + 2, dims);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"align_corners", ATTR_INT}, {NULL, 0}};

const op_schema op_AffineGrid[] = {{"", "AffineGrid", 20, 2, 2, 1, 1, attrs, affinegrid_infer, 0},
                                   OP_END};
