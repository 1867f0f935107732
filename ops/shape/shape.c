/* Schema of Shape: the input's dims as an int64 vector; v15 slices them with start/end. */
#include "ops/shape_common.h"

static onyx_status shape_infer(infer_ctx *c) {
    TRY(infer_need_tensor(c, 0));
    int rank = c->in[0]->rank;
    int64_t len = -1;
    if (rank >= 0) {
        int s, e;
        ops_shape_range(c->node, rank, &s, &e);
        len = e - s;
    }
    type_set_tensor(&c->out[0], ONYX_INT64, 1, &len);
    return ONYX_OK;
}

static const attr_spec shape_attrs_15[] = {{"start", ATTR_INT}, {"end", ATTR_INT}, {NULL, 0}};

#define SHAPE_V(v, attrs)                                                                          \
    { "", "Shape", v, 1, 1, 1, 1, attrs, shape_infer, OP_SHAPE_ONLY }
const op_schema op_Shape[] = {SHAPE_V(1, NULL),
                              SHAPE_V(13, NULL),
                              SHAPE_V(15, shape_attrs_15),
                              SHAPE_V(19, shape_attrs_15),
                              SHAPE_V(21, shape_attrs_15),
                              SHAPE_V(23, shape_attrs_15),
                              SHAPE_V(24, shape_attrs_15),
                              SHAPE_V(25, shape_attrs_15),
                              OP_END};
