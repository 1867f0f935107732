/* Schema of ai.onyx LookupTable, onyx's own op (no model writes it; core/rules/qdq_table.c makes it
 * of a QDQ unit that is a function of one 8-bit tensor): Y[i] = T[X[i]], X int8/uint8 (its byte
 * is the index), T the 256 results of that type in byte order, Y of T's type and X's shape. */
#include "ops/contrib_quant/cq_infer.h"

static onyx_status lookup_infer(infer_ctx *c) {
    TRY(cq_infer_quantized(c, 0, ONYX_UNDEFINED, "X"));
    TRY(cq_infer_quantized(c, 1, ONYX_UNDEFINED, "T"));
    const type_info *t = c->in[1];
    if (t->rank >= 0) {
        int64_t n = 1;
        for (int d = 0; d < t->rank; d++) n = t->dims[d] < 0 || n < 0 ? -1 : n * t->dims[d];
        if (n >= 0 && n != 256)
            return onyx_error(ONYX_ERR_SHAPE, "input 1 (T) has %lld elements, expected 256",
                              (long long)n);
    }
    TRY(infer_same_as_input(c, 0, 0));
    c->out[0].dtype = t->dtype;
    return ONYX_OK;
}

const op_schema op_LookupTable[] = {
    {"ai.onyx", "LookupTable", 1, 2, 2, 1, 1, NULL, lookup_infer, 0},
    OP_END,
};
