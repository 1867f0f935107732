/* Schema of RegexFullMatch: whether each string matches an RE2 pattern as a whole. */
#include "ops/schema.h"

static onyx_status regex_full_match_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, DT_BIT(ONYX_STRING)));
    if (!node_attr(c->node, "pattern"))
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute 'pattern' is missing");
    const type_info *x = c->in[0];
    type_set_tensor(&c->out[0], ONYX_BOOL, x->rank, x->rank >= 0 ? x->dims : NULL);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"pattern", ATTR_STRING}, {NULL, 0}};

const op_schema op_RegexFullMatch[] = {
    {"", "RegexFullMatch", 20, 1, 1, 1, 1, attrs, regex_full_match_infer, 0}, OP_END};
