/* Schema of StringSplit: each string split on a delimiter (or runs of whitespace) into a padded
 * extra last axis, plus the count of parts; the padded width is known only from the data. */
#include "ops/schema.h"

static onyx_status string_split_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, DT_BIT(ONYX_STRING)));
    const type_info *x = c->in[0];
    if (x->rank < 0) {
        type_set_tensor(&c->out[0], ONYX_STRING, -1, NULL);
        if (c->n_out > 1) type_set_tensor(&c->out[1], ONYX_INT64, -1, NULL);
        return ONYX_OK;
    }
    if (x->rank + 1 > ONYX_MAX_RANK)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has rank %d; the output would need rank %d, "
                          "more than the %d supported", x->rank, x->rank + 1, ONYX_MAX_RANK);
    int64_t dims[ONYX_MAX_RANK];
    bool empty = false;
    for (int k = 0; k < x->rank; k++) {
        dims[k] = x->dims[k];
        empty |= x->dims[k] == 0;
    }
    /* with no element to split the widest split is 0 wide; otherwise it depends on the data */
    dims[x->rank] = empty ? 0 : -1;
    type_set_tensor(&c->out[0], ONYX_STRING, x->rank + 1, dims);
    if (c->n_out > 1) type_set_tensor(&c->out[1], ONYX_INT64, x->rank, x->dims);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"delimiter", ATTR_STRING}, {"maxsplit", ATTR_INT}, {NULL, 0}};

const op_schema op_StringSplit[] = {
    {"", "StringSplit", 20, 1, 1, 1, 2, attrs, string_split_infer, 0}, OP_END};
