/* Schema of StringNormalizer: drops stopword elements of a [C] or [1, C] string tensor and
 * changes case; how many elements stay is known only from the data. */
#include <string.h>

#include "ops/schema.h"

static onyx_status string_normalizer_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, DT_BIT(ONYX_STRING)));
    const char *action = attr_string(c->node, "case_change_action", "NONE");
    if (strcmp(action, "NONE") != 0 && strcmp(action, "LOWER") != 0 &&
        strcmp(action, "UPPER") != 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL,
                          "case_change_action is '%s', expected NONE, LOWER or UPPER", action);
    const type_info *x = c->in[0];
    if (x->rank < 0) {
        type_set_tensor(&c->out[0], ONYX_STRING, -1, NULL);
        return ONYX_OK;
    }
    if (x->rank != 1 && x->rank != 2)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has rank %d, expected [C] or [1, C]", x->rank);
    if (x->rank == 2 && x->dims[0] != 1 && x->dims[0] != -1) {
        char buf[64];
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has shape %s, expected [C] or [1, C]",
                          shape_str(x->rank, x->dims, buf, sizeof buf));
    }
    int64_t dims[2] = {1, -1};
    if (x->rank == 1) type_set_tensor(&c->out[0], ONYX_STRING, 1, dims + 1);
    else type_set_tensor(&c->out[0], ONYX_STRING, 2, dims);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"case_change_action", ATTR_STRING},
                                  {"is_case_sensitive", ATTR_INT},
                                  {"locale", ATTR_STRING},
                                  {"stopwords", ATTR_STRINGS},
                                  {NULL, 0}};

const op_schema op_StringNormalizer[] = {
    {"", "StringNormalizer", 10, 1, 1, 1, 1, attrs, string_normalizer_infer, 0}, OP_END};
