/* Schema of MelWeightMatrix: the [dft_length/2 + 1, num_mel_bins] matrix of triangular filters
 * that maps a linear-frequency spectrum onto the mel scale. */
#include "ops/signal/signal_common.h"

#include <inttypes.h>

static onyx_status mel_infer(infer_ctx *c) {
    for (int i = 0; i < 5; i++) TRY(infer_need_tensor(c, i));
    for (int i = 0; i < 3; i++) TRY(infer_dtype_in(c, i, DT_BIT(ONYX_INT32) | DT_BIT(ONYX_INT64)));
    for (int i = 3; i < 5; i++) TRY(infer_dtype_in(c, i, DT_FLOATS));
    int64_t dt = attr_int(c->node, "output_datatype", ONYX_FLOAT);
    if (dt < 0 || dt > 31 ||
        !dtype_in((onyx_dtype)dt, DT_INTS | DT_FLOATS))
        return onyx_error(ONYX_ERR_INVALID_MODEL,
                          "output_datatype %" PRId64 " is not an integer or float type", dt);
    const tensor *bins = c->in_value ? c->in_value[0] : NULL;
    const tensor *len = c->in_value ? c->in_value[1] : NULL;
    int64_t dims[2] = {-1, -1};
    if (len) {
        TRY(ops_scalar_int(len, "dft_length", &dims[0]));
        if (dims[0] < 1 || dims[0] > ((int64_t)1 << 40))
            return onyx_error(ONYX_ERR_SHAPE, "dft_length is %" PRId64 ", expected > 0", dims[0]);
        dims[0] = dims[0] / 2 + 1;
    }
    if (bins) {
        TRY(ops_scalar_int(bins, "num_mel_bins", &dims[1]));
        if (dims[1] < 1 || dims[1] > ((int64_t)1 << 30))
            return onyx_error(ONYX_ERR_SHAPE, "num_mel_bins is %" PRId64 ", expected > 0",
                              dims[1]);
    }
    type_set_tensor(&c->out[0], (onyx_dtype)dt, 2, dims);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"output_datatype", ATTR_INT}, {NULL, 0}};

const op_schema op_MelWeightMatrix[] = {
    {"", "MelWeightMatrix", 17, 5, 5, 1, 1, attrs, mel_infer, 0}, OP_END};
