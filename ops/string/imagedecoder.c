/* Schema of ImageDecoder: an encoded image (bytes) decoded to height x width x channels uint8;
 * the size is read from the image itself. */
#include <string.h>

#include "ops/schema.h"

static onyx_status image_decoder_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, DT_BIT(ONYX_UINT8)));
    const char *fmt = attr_string(c->node, "pixel_format", "RGB");
    int64_t dims[3] = {-1, -1, 3};
    if (strcmp(fmt, "Grayscale") == 0) dims[2] = 1;
    else if (strcmp(fmt, "RGB") != 0 && strcmp(fmt, "BGR") != 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL,
                          "pixel_format is '%s', expected RGB, BGR or Grayscale", fmt);
    type_set_tensor(&c->out[0], ONYX_UINT8, 3, dims);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"pixel_format", ATTR_STRING}, {NULL, 0}};

const op_schema op_ImageDecoder[] = {
    {"", "ImageDecoder", 20, 1, 1, 1, 1, attrs, image_decoder_infer, 0}, OP_END};
