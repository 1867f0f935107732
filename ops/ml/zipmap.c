/* Schema of ai.onnx.ml ZipMap: X [N, C] float → a sequence of N maps from the C class labels
 * (int64 or string) to the row's scores. */
#include <stdlib.h>

#include "ops/ml/common.h"

static onyx_status zipmap_infer(infer_ctx *c) {
    TRY(infer_dtype_in(c, 0, DT_BIT(ONYX_FLOAT)));
    int64_t rows, cols, labels;
    onyx_dtype key_dt;
    TRY(ml_rows_cols(c, 0, &rows, &cols));
    TRY(ml_class_labels(c->node, "classlabels_int64s", "classlabels_strings", &labels, &key_dt));
    if (cols >= 0 && cols != labels)
        return onyx_error(ONYX_ERR_SHAPE, "X has %lld columns for %lld class labels", (long long)cols,
                          (long long)labels);
    type_info *map = calloc(1, sizeof *map), *value = calloc(1, sizeof *value);
    if (!map || !value) {
        free(map);
        free(value);
        return onyx_oom("ZipMap type");
    }
    type_init(map);
    map->kind = ONYX_VALUE_MAP;
    map->dtype = key_dt;
    type_init(value);
    type_set_tensor(value, ONYX_FLOAT, 0, NULL);
    map->elem = value;
    type_init(&c->out[0]);
    c->out[0].kind = ONYX_VALUE_SEQUENCE;
    c->out[0].elem = map;
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"classlabels_int64s", ATTR_INTS}, {"classlabels_strings", ATTR_STRINGS},
                                  {NULL, 0}};

const op_schema op_ZipMap[] = {{ML_DOMAIN, "ZipMap", 1, 1, 1, 1, 1, attrs, zipmap_infer, 0}, OP_END};
