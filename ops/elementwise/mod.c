/* Schema of Mod: broadcasting remainder, C-style (fmod=1) or with the divisor's sign (fmod=0).
 * Before version 28 fmod=0 took integers only; version 28 defines it for floats too. */
#include "ops/elementwise/infer_elementwise.h"

static onyx_status mod_infer(infer_ctx *c) {
    int64_t fmod = attr_int(c->node, "fmod", 0);
    if (fmod != 0 && fmod != 1)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute fmod is %lld, expected 0 or 1",
                          (long long)fmod);
    if (c->node->version < 28 && fmod == 0 && c->n_in > 0 && c->in[0] &&
        dtype_is_float(c->in[0]->dtype))
        return onyx_error(ONYX_ERR_INVALID_MODEL,
                          "Mod-%d: fmod=0 takes integer inputs, got %s (set fmod=1 for floats)",
                          c->node->version, onyx_dtype_name(c->in[0]->dtype));
    dtype_mask m = DT_NUMERIC;
    if (c->node->version < 13) m &= ~DT_BIT(ONYX_BFLOAT16); /* bfloat16 came in version 13 */
    return infer_ew_nary(c, m, ONYX_UNDEFINED);
}

static const attr_spec attrs[] = {{"fmod", ATTR_INT}, {NULL, 0}};

const op_schema op_Mod[] = {{"", "Mod", 10, 2, 2, 1, 1, attrs, mod_infer, 0},
                            {"", "Mod", 13, 2, 2, 1, 1, attrs, mod_infer, 0},
                            {"", "Mod", 28, 2, 2, 1, 1, attrs, mod_infer, 0},
                            OP_END};
