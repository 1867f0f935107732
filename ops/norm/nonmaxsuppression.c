/* Schema of NonMaxSuppression: per batch and class, greedy selection of boxes by decreasing
 * score that overlap no selected box by more than iou_threshold. The number of selected boxes is
 * known only at run time. */
#include "ops/shape_common.h"

/* Optional scalar input i (a [1] tensor is accepted too) of a dtype in mask. */
static onyx_status check_scalar(infer_ctx *c, int i, dtype_mask mask) {
    if (i >= c->n_in || !c->in[i]) return ONYX_OK;
    TRY(infer_dtype_in(c, i, mask));
    const type_info *t = c->in[i];
    if (t->rank > 1 || (t->rank == 1 && t->dims[0] > 1))
        return onyx_error(ONYX_ERR_SHAPE, "input %d has rank %d, expected a scalar", i, t->rank);
    return ONYX_OK;
}

static onyx_status nms_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, DT_BIT(ONYX_FLOAT)));
    TRY(infer_dtype_in(c, 1, DT_BIT(ONYX_FLOAT)));
    TRY(check_scalar(c, 2, DT_BIT(ONYX_INT64)));
    TRY(check_scalar(c, 3, DT_BIT(ONYX_FLOAT)));
    TRY(check_scalar(c, 4, DT_BIT(ONYX_FLOAT)));
    int64_t cpb = attr_int(c->node, "center_point_box", 0);
    if (cpb != 0 && cpb != 1)
        return onyx_error(ONYX_ERR_INVALID_MODEL,
                          "attribute center_point_box is %lld, expected 0 or 1", (long long)cpb);
    const type_info *b = c->in[0], *s = c->in[1];
    if (b->rank >= 0 && (b->rank != 3 || (b->dims[2] >= 0 && b->dims[2] != 4)))
        return onyx_error(ONYX_ERR_SHAPE,
                          "input 0 (boxes) has rank %d, expected [batches, boxes, 4]", b->rank);
    if (s->rank >= 0 && s->rank != 3)
        return onyx_error(ONYX_ERR_SHAPE,
                          "input 1 (scores) has rank %d, expected [batches, classes, boxes]",
                          s->rank);
    if (b->rank == 3 && s->rank == 3) {
        if (b->dims[0] >= 0 && s->dims[0] >= 0 && b->dims[0] != s->dims[0])
            return onyx_error(ONYX_ERR_SHAPE, "boxes have %lld batches but scores %lld",
                              (long long)b->dims[0], (long long)s->dims[0]);
        if (b->dims[1] >= 0 && s->dims[2] >= 0 && b->dims[1] != s->dims[2])
            return onyx_error(ONYX_ERR_SHAPE, "boxes have %lld boxes per batch but scores %lld",
                              (long long)b->dims[1], (long long)s->dims[2]);
    }
    int64_t dims[2] = {-1, 3};
    type_set_tensor(&c->out[0], ONYX_INT64, 2, dims);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"center_point_box", ATTR_INT}, {NULL, 0}};

const op_schema op_NonMaxSuppression[] = {
    {"", "NonMaxSuppression", 10, 2, 5, 1, 1, attrs, nms_infer, 0},
    {"", "NonMaxSuppression", 11, 2, 5, 1, 1, attrs, nms_infer, 0},
    OP_END,
};
