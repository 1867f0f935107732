/* Schema of RoiAlign: bilinear-sampled average or max pooling of regions of interest. */
#include <string.h>

#include "ops/schema.h"

#define ROI_T (DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE) | DT_BIT(ONYX_FLOAT16))

static onyx_status roialign_infer(infer_ctx *c) {
    const graph_node *n = c->node;
    dtype_mask t = ROI_T | (n->version >= 22 ? DT_BIT(ONYX_BFLOAT16) : 0);
    TRY(infer_dtype_in(c, 0, t));
    TRY(infer_dtype_in(c, 1, t));
    TRY(infer_same_dtypes(c, 0, 2));
    TRY(infer_dtype_in(c, 2, DT_BIT(ONYX_INT64)));
    const char *mode = attr_string(n, "mode", "avg");
    if (strcmp(mode, "avg") && strcmp(mode, "max"))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute mode is '%s', expected avg or max",
                          mode);
    const char *ctm = attr_string(n, "coordinate_transformation_mode", "half_pixel");
    if (strcmp(ctm, "half_pixel") && strcmp(ctm, "output_half_pixel"))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute coordinate_transformation_mode is "
                          "'%s', expected half_pixel or output_half_pixel", ctm);
    int64_t oh = attr_int(n, "output_height", 1), ow = attr_int(n, "output_width", 1);
    int64_t sr = attr_int(n, "sampling_ratio", 0);
    if (oh < 1 || ow < 1 || oh > ((int64_t)1 << 30) || ow > ((int64_t)1 << 30))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "output_height/output_width are %lld/%lld, "
                          "expected >= 1", (long long)oh, (long long)ow);
    if (sr < 0 || sr > ((int64_t)1 << 20))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute sampling_ratio is %lld, expected "
                          "0 to %lld", (long long)sr, (long long)1 << 20);
    const type_info *x = c->in[0], *r = c->in[1], *b = c->in[2];
    int64_t dims[4] = {-1, -1, oh, ow};
    if (x->kind == ONYX_VALUE_TENSOR && x->rank >= 0) {
        if (x->rank != 4)
            return onyx_error(ONYX_ERR_SHAPE, "input 0 has rank %d, expected 4", x->rank);
        dims[1] = x->dims[1];
    }
    if (r->kind == ONYX_VALUE_TENSOR && r->rank >= 0) {
        if (r->rank != 2 || (r->dims[1] >= 0 && r->dims[1] != 4))
            return onyx_error(ONYX_ERR_SHAPE, "input 1 (rois) must be [num_rois, 4]");
        dims[0] = r->dims[0];
    }
    if (b->kind == ONYX_VALUE_TENSOR && b->rank >= 0) {
        if (b->rank != 1)
            return onyx_error(ONYX_ERR_SHAPE, "input 2 (batch_indices) has rank %d, expected 1",
                              b->rank);
        if (dims[0] >= 0 && b->dims[0] >= 0 && b->dims[0] != dims[0])
            return onyx_error(ONYX_ERR_SHAPE, "input 2 (batch_indices) has %lld values, expected "
                              "%lld (one per roi)", (long long)b->dims[0], (long long)dims[0]);
        if (dims[0] < 0) dims[0] = b->dims[0];
    }
    type_set_tensor(&c->out[0], x->dtype, 4, dims);
    return ONYX_OK;
}

static const attr_spec attrs10[] = {{"mode", ATTR_STRING}, {"output_height", ATTR_INT},
                                    {"output_width", ATTR_INT}, {"sampling_ratio", ATTR_INT},
                                    {"spatial_scale", ATTR_FLOAT}, {NULL, 0}};
static const attr_spec attrs16[] = {{"mode", ATTR_STRING}, {"output_height", ATTR_INT},
                                    {"output_width", ATTR_INT}, {"sampling_ratio", ATTR_INT},
                                    {"spatial_scale", ATTR_FLOAT},
                                    {"coordinate_transformation_mode", ATTR_STRING}, {NULL, 0}};

const op_schema op_RoiAlign[] = {
    {"", "RoiAlign", 10, 3, 3, 1, 1, attrs10, roialign_infer, 0},
    {"", "RoiAlign", 16, 3, 3, 1, 1, attrs16, roialign_infer, 0},
    {"", "RoiAlign", 22, 3, 3, 1, 1, attrs16, roialign_infer, 0},
    OP_END,
};
