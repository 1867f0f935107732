/* Writing a model as onyx runs it: every graph after the rewrites of a session's level, as an ONNX
 * file that onyx loads back to the same computation (onnxruntime's optimized_model_filepath). */
#ifndef ONYX_CORE_MODEL_WRITE_H
#define ONYX_CORE_MODEL_WRITE_H

#include <stddef.h>

#include "core/graph.h"
#include "core/optimize.h"

typedef struct model_write_options {
    const char *path;          /* the model file, replaced if it exists */
    const char *external_name; /* NULL or "": every initializer inline; else the file, beside
                                  `path`, that initializers of external_min_bytes and more go to */
    size_t external_min_bytes;
} model_write_options;

/* Writes m with each of its graphs rewritten by the rules `opt` runs (its observer is not called).
 * The ai.onnx opset is the model's, raised where a rewrite made a newer op; where the raise would
 * change how another node reads, the newer ops go under their ai.onyx names instead (ops/
 * registry.c). Ops of other domains the rewrites made are imported at version 1. Refused, naming
 * the node, attribute or file, and nothing written: a node that would read as another version of
 * its op under the written opset (a newer op without an ai.onyx name),
 * an attribute onyx keeps in a form ONNX cannot hold (sparse tensors densified, type protos), a
 * model past protobuf's 2 GiB with its initializers inline, an external data name that is not a
 * plain relative path, and files that cannot be written (ONYX_ERR_IO). */
onyx_status model_write_optimized(const model *m, const op_registry *ops,
                                  const optimize_options *opt, const model_write_options *w);

#endif
