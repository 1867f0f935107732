/* The model loader: ONNX bytes (protobuf) -> the graph IR of graph.h, validated (names, order,
 * opsets, schemas' arity and attribute types, nesting depth). The wire-format walks it starts
 * with are core/loader_wire.h's. */
#ifndef ONYX_CORE_LOADER_H
#define ONYX_CORE_LOADER_H

#include "core/op_schema.h"
#include "onnx.pb-c.h"

/* The newest IR version onyx reads (onnx 1.23's). */
#define LOADER_MAX_IR_VERSION 14

/* Opset versions accepted in opset_import (past the newest a domain has, prepare refuses them). */
#define LOADER_MAX_OPSET 1000

/* Loads a serialized ModelProto, resolving nodes against the schemas of `ops`. `base_dir` is the
 * folder external data is relative to (NULL refuses external data). Caller owns *out (refs 1);
 * free with model_release. */
onyx_status model_load_bytes(const op_registry *ops, const void *bytes, size_t size,
                             const char *base_dir, model **out);
/* The same taking ownership of `bytes` (malloc'd), which are freed whatever the outcome; their
 * pages go back to the system as the initializers are read from them, so a file's bytes need not
 * live beside the model's copy of its weights. */
onyx_status model_load_owned_bytes(const op_registry *ops, void *bytes, size_t size,
                                   const char *base_dir, model **out);

/* Builds the IR from an unpacked ModelProto (not retained). Same ownership as model_load_bytes. */
onyx_status model_from_proto(const op_registry *ops, const Onnx__ModelProto *mp,
                             const char *base_dir, model **out);

#endif
