/* Schema of Col2Im: sums sliding blocks [N, C*prod(block), L] back into an image [N, C, image].
 * Its kernels get the window from the plan (core/op_params.h): the forward window of the blocks
 * over the image (input dims the image's, kernel the block's, output dims the block counts), which
 * needs image_shape and block_shape known (constants, or each run's values). */
#include "ops/shape_common.h"
#include "ops/spatial.h"

static onyx_status col2im_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, DT_NUMERIC));
    TRY(infer_dtype_in(c, 1, DT_BIT(ONYX_INT64)));
    TRY(infer_dtype_in(c, 2, DT_BIT(ONYX_INT64)));
    const type_info *x = c->in[0];
    int xr = x->kind == ONYX_VALUE_TENSOR ? x->rank : -1;
    if (xr >= 0 && xr != 3)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has rank %d, expected 3 "
                          "(N, C*prod(block_shape), L)", xr);
    const tensor *img = ops_value(c, 1), *blk = ops_value(c, 2);
    int64_t dims[2 + SPATIAL_MAX_DIMS];
    dims[0] = xr == 3 ? x->dims[0] : -1;
    dims[1] = -1;
    if (!img || !blk) {
        int nd = -1;
        const type_info *it = c->in[1];
        if (it->kind == ONYX_VALUE_TENSOR && it->rank == 1 && it->dims[0] >= 0) {
            if (it->dims[0] < 1 || it->dims[0] > SPATIAL_MAX_DIMS)
                return onyx_error(ONYX_ERR_SHAPE, "input 1 (image_shape) has %lld values, "
                                  "expected 1..%d", (long long)it->dims[0], SPATIAL_MAX_DIMS);
            nd = (int)it->dims[0];
        }
        if (nd >= 0) {
            for (int i = 1; i < nd + 2; i++) dims[i] = -1;
            type_set_tensor(&c->out[0], x->dtype, nd + 2, dims);
        } else {
            type_set_tensor(&c->out[0], x->dtype, -1, NULL);
        }
        return ONYX_OK;
    }
    int64_t image[ONYX_MAX_RANK], block[ONYX_MAX_RANK];
    size_t ni, nb;
    TRY(ops_read_ints(img, 1, image, ONYX_MAX_RANK, &ni));
    TRY(ops_read_ints(blk, 2, block, ONYX_MAX_RANK, &nb));
    if (ni != nb || ni < 1 || ni > SPATIAL_MAX_DIMS)
        return onyx_error(ONYX_ERR_SHAPE, "image_shape has %zu values and block_shape %zu, "
                          "expected the same count in 1..%d", ni, nb, SPATIAL_MAX_DIMS);
    spatial_params p;
    TRY(spatial_parse(c->node, (int)ni, block, &p));
    int64_t bvol, nblocks, cols[SPATIAL_MAX_DIMS];
    for (size_t i = 0; i < ni; i++)
        if (image[i] < 1)
            return onyx_error(ONYX_ERR_SHAPE, "image_shape[%zu] is %lld, expected >= 1", i,
                              (long long)image[i]);
    TRY(spatial_resolve(&p, image, cols));
    /* block dims are 1..2^30 each and the image is unchecked data: the products may overflow */
    if (!shape_numel((int)ni, block, &bvol) || !shape_numel((int)ni, cols, &nblocks))
        return onyx_error(ONYX_ERR_SHAPE, "block_shape or the sliding block count is too large");
    if (xr == 3) {
        if (x->dims[1] >= 0 && x->dims[1] % bvol != 0)
            return onyx_error(ONYX_ERR_SHAPE, "input 0 dim 1 is %lld, expected a multiple of "
                              "prod(block_shape) = %lld", (long long)x->dims[1], (long long)bvol);
        if (x->dims[2] >= 0 && x->dims[2] != nblocks)
            return onyx_error(ONYX_ERR_SHAPE, "input 0 dim 2 is %lld, expected %lld sliding "
                              "blocks", (long long)x->dims[2], (long long)nblocks);
        dims[1] = x->dims[1] >= 0 ? x->dims[1] / bvol : -1;
    }
    for (size_t i = 0; i < ni; i++) dims[2 + i] = image[i];
    type_set_tensor(&c->out[0], x->dtype, (int)ni + 2, dims);
    geom_window w; /* over the image [N, C, image...], one window per block */
    spatial_pool_window(&p, dims, cols, &w);
    infer_set_window(c, &w);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"dilations", ATTR_INTS}, {"pads", ATTR_INTS},
                                  {"strides", ATTR_INTS}, {NULL, 0}};

const op_schema op_Col2Im[] = {
    {"", "Col2Im", 18, 3, 3, 1, 1, attrs, col2im_infer, OP_GEOMETRY},
    OP_END,
};
