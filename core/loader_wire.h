/* The protobuf wire format walked without protobuf-c (core/loader_wire.c): nesting bounded before
 * protobuf-c's recursive unpack sees the bytes, a model split so that each initializer is
 * unpacked on its own, and whole files read. What the loader (core/loader.c), the tensor decoder
 * (core/tensor_proto.c) and the backend's readers of ONNX bytes start with. */
#ifndef ONYX_CORE_LOADER_WIRE_H
#define ONYX_CORE_LOADER_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
#include "onnx.pb-c.h"

/* Deepest message nesting accepted in any protobuf onyx reads. protobuf-c unpacks recursively
 * without a limit, so deeper input is refused before it gets there. A subgraph level costs three
 * messages (GraphProto > NodeProto > AttributeProto). */
#define LOADER_MAX_NESTING 100

/* Walks the protobuf wire format of a message of type `desc` without recursion and refuses
 * nesting deeper than LOADER_MAX_NESTING or malformed framing (ONYX_ERR_INVALID_MODEL; `what`
 * names the message in the error, e.g. "ONNX ModelProto"). */
onyx_status loader_check_wire(const ProtobufCMessageDescriptor *desc, const void *bytes,
                              size_t size, const char *what);

/* The main graph's initializers cut out of a serialized ModelProto: protobuf-c unpacks the rest
 * (the skeleton: nodes, names, types, small), and each initializer is unpacked on its own with
 * its raw_data left in place in the bytes. Loading then copies each weight once, into the
 * model, and the bytes behind the initializer being decoded are no longer needed. */
typedef struct loader_slice {
    size_t offset, size; /* a TensorProto's message bytes */
} loader_slice;

typedef struct loader_split {
    uint8_t *skeleton; /* malloc'ed: the ModelProto without graph.initializer */
    size_t skeleton_size;
    loader_slice *inits; /* malloc'ed, in file order */
    size_t n_inits;
} loader_split;

/* Splits bytes that loader_check_wire accepted. *split is all zero (nothing to free) when the
 * bytes do not split simply: no initializer, or not exactly one graph field (protobuf merges
 * repeated message fields; the whole unpack handles that). Fails only for lack of memory. */
onyx_status loader_split_model(const void *bytes, size_t size, loader_split *split);
void loader_split_free(loader_split *split);

/* Unpacks initializer `slice` of bytes: every field by protobuf-c but raw_data, which points into
 * `bytes` (so the bytes must outlive *out). Free with loader_tensor_free. */
onyx_status loader_tensor_unpack(const void *bytes, loader_slice slice, Onnx__TensorProto **out);
void loader_tensor_free(Onnx__TensorProto *tp);

/* Reads a whole file. On success *bytes (malloc'ed; caller frees) holds *size bytes and, when
 * `dir` is not NULL, *dir the file's folder (malloc'ed; "." for a bare file name). ONYX_ERR_IO. */
onyx_status loader_read_file(const char *path, void **bytes, size_t *size, char **dir);

#endif
