/* Schema of ReverseSequence: per batch entry, the first sequence_lens[b] steps along the time
 * axis reversed; time_axis and batch_axis are 0 and 1 in either order. */
#include "ops/shape_common.h"

#include <inttypes.h>

static onyx_status reverse_sequence_infer(infer_ctx *c) {
    TRY(infer_need_tensor(c, 0));
    TRY(infer_dtype_in(c, 1, DT_BIT(ONYX_INT64)));
    int64_t t = attr_int(c->node, "time_axis", 0), b = attr_int(c->node, "batch_axis", 1);
    if (!((t == 0 && b == 1) || (t == 1 && b == 0)))
        return onyx_error(ONYX_ERR_INVALID_MODEL,
                          "time_axis %" PRId64 " and batch_axis %" PRId64 " must be 0 and 1", t, b);
    const type_info *x = c->in[0], *lens = c->in[1];
    if (x->rank >= 0 && x->rank < 2)
        return onyx_error(ONYX_ERR_SHAPE, "input has rank %d, expected >= 2", x->rank);
    if (lens->rank >= 0 && lens->rank != 1)
        return onyx_error(ONYX_ERR_SHAPE, "sequence_lens has rank %d, expected 1", lens->rank);
    if (x->rank >= 2 && lens->rank == 1 && x->dims[b] >= 0 && lens->dims[0] >= 0 &&
        x->dims[b] != lens->dims[0])
        return onyx_error(ONYX_ERR_SHAPE,
                          "sequence_lens has %" PRId64 " values for a batch of %" PRId64,
                          lens->dims[0], x->dims[b]);
    return infer_same_as_input(c, 0, 0);
}

static const attr_spec attrs[] = {{"time_axis", ATTR_INT}, {"batch_axis", ATTR_INT}, {NULL, 0}};

/* 28 only adds bfloat16 to the input types, which every version here already moves. */
const op_schema op_ReverseSequence[] = {
    {"", "ReverseSequence", 10, 2, 2, 1, 1, attrs, reverse_sequence_infer, 0},
    {"", "ReverseSequence", 28, 2, 2, 1, 1, attrs, reverse_sequence_infer, 0}, OP_END};
