/* Schema of Tile: the input repeated along every axis (repeats input, v6+) or along one axis
 * (v1: tiles and axis inputs). */
#include "ops/shape_common.h"

#include <inttypes.h>

static onyx_status tile_infer(infer_ctx *c) {
    TRY(infer_need_tensor(c, 0));
    const type_info *x = c->in[0];
    int nin = c->node->version < 6 ? 3 : 2;
    for (int i = 1; i < nin; i++) {
        TRY(infer_dtype_in(c, i, DT_BIT(ONYX_INT64)));
        if (!ops_value(c, i) || x->rank < 0) {
            type_set_tensor(&c->out[0], x->dtype, x->rank, NULL);
            return ONYX_OK;
        }
    }
    int64_t reps[ONYX_MAX_RANK], dims[ONYX_MAX_RANK];
    for (int k = 0; k < x->rank; k++) reps[k] = 1;
    if (nin == 3) {
        const tensor *tiles = ops_value(c, 1), *ax = ops_value(c, 2);
        if (tiles->numel != 1 || ax->numel != 1)
            return onyx_error(ONYX_ERR_SHAPE, "tiles and axis must be scalars");
        int axis;
        TRY(infer_axis(c, tensor_get_i64(ax, 0), x->rank, &axis));
        reps[axis] = tensor_get_i64(tiles, 0);
    } else {
        size_t n;
        TRY(ops_read_ints(ops_value(c, 1), 1, reps, ONYX_MAX_RANK, &n));
        if (n != (size_t)x->rank)
            return onyx_error(ONYX_ERR_SHAPE, "repeats has %zu values, expected the rank %d", n,
                              x->rank);
    }
    for (int k = 0; k < x->rank; k++) {
        if (reps[k] < 0)
            return onyx_error(ONYX_ERR_SHAPE, "repeat %" PRId64 " on axis %d is negative", reps[k],
                              k);
        int64_t d = x->dims[k];
        if (d < 0)
            dims[k] = -1;
        else if (reps[k] > 0 && d > INT64_MAX / reps[k])
            return onyx_error(ONYX_ERR_SHAPE, "tiled size overflows on axis %d", k);
        else
            dims[k] = d * reps[k];
    }
    type_set_tensor(&c->out[0], x->dtype, x->rank, dims);
    return ONYX_OK;
}

const op_schema op_Tile[] = {{"", "Tile", 1, 3, 3, 1, 1, NULL, tile_infer, 0},
                             {"", "Tile", 6, 2, 2, 1, 1, NULL, tile_infer, 0},
                             {"", "Tile", 13, 2, 2, 1, 1, NULL, tile_infer, 0},
                             OP_END};
