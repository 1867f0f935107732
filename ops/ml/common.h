/* What the ai.onnx.ml op schemas share: their type sets and the [N, C] reading of their input. */
#ifndef ONYX_OPS_ML_COMMON_H
#define ONYX_OPS_ML_COMMON_H

#include "ops/schema.h"

#define ML_DOMAIN "ai.onnx.ml"
/* float, double, int64, int32: the numeric inputs most ai.onnx.ml ops take. */
#define ML_DT_NUMERIC (DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE) | DT_BIT(ONYX_INT64) | DT_BIT(ONYX_INT32))

/* The batch size N and feature count C of an input read as [N, C] (a 1-D input is one row; -1
 * where unknown). Fails for ranks above 2. */
onyx_status ml_rows_cols(const infer_ctx *c, int input, int64_t *rows, int64_t *cols);

/* Count and type (int64 or string) of a classifier's labels, from the attribute pair `ints` /
 * `strings` of which exactly one must be non-empty. */
onyx_status ml_class_labels(const graph_node *n, const char *ints, const char *strings,
                            int64_t *count, onyx_dtype *dt);

#endif
