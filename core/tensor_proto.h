/* Decoding of serialized ONNX values: TensorProto (every dtype, every storage form, external
 * data), SparseTensorProto (densified), and onnx-data's SequenceProto / OptionalProto. */
#ifndef ONYX_CORE_TENSOR_PROTO_H
#define ONYX_CORE_TENSOR_PROTO_H

#include "onnx.pb-c.h"
#include "core/pool.h"
#include "core/value.h"

/* Decodes `tp` into *out. With a pool the storage (and each string) comes from it and the tensor
 * does not own it (freed with the pool); with `p` NULL the storage is heap-owned (owns set;
 * tensor_release frees it). External data is read relative to `base_dir` (NULL refuses it).
 * Failures are ONYX_ERR_INVALID_MODEL (malformed), ONYX_ERR_IO (external files),
 * ONYX_ERR_UNSUPPORTED (rank above ONYX_MAX_RANK, segments) or ONYX_ERR_NO_MEMORY, with a message
 * naming the tensor. *out is written only on success. */
onyx_status tensor_proto_decode(const Onnx__TensorProto *tp, const char *base_dir, pool *p,
                                tensor *out);

/* The dense form of a SparseTensorProto (zeros, or "" for strings, where no value is given).
 * Storage as tensor_proto_decode. */
onyx_status tensor_proto_decode_sparse(const Onnx__SparseTensorProto *sp, const char *base_dir,
                                       pool *p, tensor *out);

/* onnx-data values, heap-owned. `out` must be a fresh value (kind NONE); on failure it is left
 * cleared. */
onyx_status tensor_proto_sequence(const Onnx__SequenceProto *sp, const char *base_dir,
                                  onyx_value *out);
onyx_status tensor_proto_optional(const Onnx__OptionalProto *op, const char *base_dir,
                                  onyx_value *out);

#endif
