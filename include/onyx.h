/* onyx — a native ONNX inference engine. This is the whole public C API.
 *
 * Conventions
 * - Every fallible call returns an onyx_status. ONYX_OK is 0. On failure a message saying what
 *   failed and where is available from onyx_last_error() on the same thread, until the next
 *   failing call on that thread.
 * - Out-params are written only on success. Each out-param's owner is stated where it is declared.
 * - Every *_free function accepts NULL.
 * - Threads: a prepared model (rep) may be run from any number of threads at once
 *   (onyx_rep_run, onyx_rep_run_with_options), with the same or different input shapes; each
 *   run has working memory of its own, and a new input shape is planned while other runs go on.
 *   The rep's other functions (io info) are safe alongside runs; onyx_rep_free only once no run
 *   is in progress. A model, a value and an options object may be used from one thread at a time
 *   (onyx_run_options_set_terminate excepted); distinct objects from distinct threads. Inputs
 *   are only read by a run, so several runs may share them.
 */
#ifndef ONYX_H
#define ONYX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define ONYX_API __attribute__((visibility("default")))
#else
#define ONYX_API
#endif

/* ---------------------------------------------------------------- status */

typedef enum onyx_status {
    ONYX_OK = 0,
    ONYX_ERR_INVALID_ARGUMENT = 1, /* a caller's argument is wrong (NULL, unknown name, bad dtype) */
    ONYX_ERR_INVALID_MODEL = 2,    /* the model bytes or graph are malformed or inconsistent */
    ONYX_ERR_UNSUPPORTED = 3,      /* valid ONNX that onyx does not implement (op, type, device) */
    ONYX_ERR_NO_MEMORY = 4,        /* an allocation failed or a size overflowed */
    ONYX_ERR_IO = 5,               /* a file could not be opened or read */
    ONYX_ERR_SHAPE = 6,            /* input shapes or types do not fit the model or the op */
    ONYX_ERR_RUNTIME = 7,          /* a kernel failed on its data (index out of range, …) */
    ONYX_ERR_DEVICE = 8,           /* the device is unknown or not usable */
    ONYX_ERR_TERMINATED = 9,       /* the run was terminated through its run options */
    ONYX_ERR_TIMEOUT = 10,         /* the run's deadline passed before it finished */
    ONYX_ERR_LIMIT = 11,           /* the run went past a cap of its run options (iterations) */
} onyx_status;

/* Short name of a status ("ONYX_ERR_SHAPE"). Static string. */
ONYX_API const char *onyx_status_name(onyx_status status);

/* The message of the last failure on this thread ("" when none). Borrowed; valid until the next
 * onyx call on this thread. */
ONYX_API const char *onyx_last_error(void);

/* ---------------------------------------------------------------- element types */

/* Numbered as onnx.TensorProto.DataType. */
typedef enum onyx_dtype {
    ONYX_UNDEFINED = 0,
    ONYX_FLOAT = 1,
    ONYX_UINT8 = 2,
    ONYX_INT8 = 3,
    ONYX_UINT16 = 4,
    ONYX_INT16 = 5,
    ONYX_INT32 = 6,
    ONYX_INT64 = 7,
    ONYX_STRING = 8,
    ONYX_BOOL = 9,
    ONYX_FLOAT16 = 10,
    ONYX_DOUBLE = 11,
    ONYX_UINT32 = 12,
    ONYX_UINT64 = 13,
    ONYX_COMPLEX64 = 14,
    ONYX_COMPLEX128 = 15,
    ONYX_BFLOAT16 = 16,
    ONYX_FLOAT8E4M3FN = 17,
    ONYX_FLOAT8E4M3FNUZ = 18,
    ONYX_FLOAT8E5M2 = 19,
    ONYX_FLOAT8E5M2FNUZ = 20,
    ONYX_UINT4 = 21,
    ONYX_INT4 = 22,
    ONYX_FLOAT4E2M1 = 23,
    ONYX_FLOAT8E8M0 = 24,
    ONYX_UINT2 = 25,
    ONYX_INT2 = 26,
    ONYX_FLOAT6E2M3 = 27,
    ONYX_FLOAT6E3M2 = 28,
} onyx_dtype;

#define ONYX_DTYPE_COUNT 29

/* Lower-case ONNX name of a dtype ("float", "int64", "float8e4m3fn"); "undefined" if unknown. */
ONYX_API const char *onyx_dtype_name(onyx_dtype dtype);

/* Bits per element (1 for bool is stored as 8; 4 for int4/uint4/float4e2m1; 2 for int2/uint2;
 * 6 for float6e2m3/float6e3m2; sizeof(char *) * 8 for string). 0 for an unknown dtype. Sub-byte
 * tensors are packed as ONNX's raw_data packs them: element i in bits [i*b, (i+1)*b) of the
 * little-endian bit stream, so a 6-bit element may straddle two bytes. */
ONYX_API size_t onyx_dtype_bits(onyx_dtype dtype);

/* ---------------------------------------------------------------- values */

typedef enum onyx_value_kind {
    ONYX_VALUE_NONE = 0, /* not yet set / unknown */
    ONYX_VALUE_TENSOR = 1,
    ONYX_VALUE_SEQUENCE = 2,
    ONYX_VALUE_OPTIONAL = 3,
    ONYX_VALUE_MAP = 4,
} onyx_value_kind;

typedef struct onyx_value onyx_value;

/* A tensor holding a copy of `data` (`nbytes` must equal the packed size of the shape; `data` may
 * be NULL only when that size is 0). Not for strings. Caller owns *out; free with onyx_value_free. */
ONYX_API onyx_status onyx_value_new_tensor(onyx_dtype dtype, size_t rank, const int64_t *dims,
                                           const void *data, size_t nbytes, onyx_value **out);

/* A tensor that borrows `data` (no copy): the caller keeps `data` alive and unchanged for the
 * value's lifetime. Used to pass inputs without copying. Caller owns *out. */
ONYX_API onyx_status onyx_value_wrap_tensor(onyx_dtype dtype, size_t rank, const int64_t *dims,
                                            void *data, size_t nbytes, onyx_value **out);

/* A string tensor holding copies of the `count` NUL-terminated strings (count = product of dims).
 * Caller owns *out. */
ONYX_API onyx_status onyx_value_new_string_tensor(size_t rank, const int64_t *dims,
                                                  const char *const *strings, onyx_value **out);

/* A sequence taking ownership of `items` (each a value; on failure the caller keeps them).
 * `elem_dtype` is the tensor element type of an empty sequence (ONYX_UNDEFINED if unknown).
 * Caller owns *out. */
ONYX_API onyx_status onyx_value_new_sequence(onyx_dtype elem_dtype, size_t count,
                                             onyx_value *const *items, onyx_value **out);

/* An optional taking ownership of `item`, or an empty optional when `item` is NULL.
 * Caller owns *out. */
ONYX_API onyx_status onyx_value_new_optional(onyx_value *item, onyx_value **out);

/* A map (the items of ai.onnx.ml ZipMap's output, DictVectorizer's input) taking ownership of
 * `keys` and `values`: 1-D tensors of one length, keys int64, int32 or string. On failure the
 * caller keeps them. Caller owns *out. */
ONYX_API onyx_status onyx_value_new_map(onyx_value *keys, onyx_value *values, onyx_value **out);

/* A tensor in device memory (CUDA) gives its block to onyx's cache for the next device tensor of
 * its size, without waiting for the device: work you queued on its memory must have ended. */
ONYX_API void onyx_value_free(onyx_value *value);
/* Frees `count` values and the array holding them (as returned by the run functions). */
ONYX_API void onyx_values_free(onyx_value **values, size_t count);

ONYX_API onyx_value_kind onyx_value_kind_of(const onyx_value *value);

/* ---- tensors in device memory
 * A run takes inputs in the memory of the session's device as they are (no copy to and from the
 * host), and returns outputs there when asked (onyx_run_options_set_output_device). */

/* A tensor that borrows `data` in `device`'s memory ("CUDA", "CUDA:0", "TEST"; for CUDA a pointer
 * from cudaMalloc of the current GPU): the caller keeps it alive and unchanged while the value
 * lives, and does not write it during a run that reads it. Numbers and bool only. A device not
 * usable here is ONYX_ERR_DEVICE. Caller owns *out. */
ONYX_API onyx_status onyx_value_wrap_device_tensor(const char *device, onyx_dtype dtype,
                                                   size_t rank, const int64_t *dims, void *data,
                                                   size_t nbytes, onyx_value **out);
/* A copy of tensor `value` in `device`'s memory ("CPU" to bring one back). Caller owns *out. */
ONYX_API onyx_status onyx_value_copy_to_device(const onyx_value *value, const char *device,
                                               onyx_value **out);
/* "CPU", "CUDA" or "TEST": whose memory onyx_tensor_data points into. NULL when not a tensor. */
ONYX_API const char *onyx_tensor_device(const onyx_value *value);

/* Tensor accessors (value must be a tensor; else dtype UNDEFINED, rank 0, data NULL). Borrowed
 * pointers, valid while the value lives. Sub-byte types are packed (low bits first); bool is one
 * byte per element; strings: data is an array of `numel` NUL-terminated char pointers. */
ONYX_API onyx_dtype onyx_tensor_dtype(const onyx_value *value);
ONYX_API size_t onyx_tensor_rank(const onyx_value *value);
ONYX_API const int64_t *onyx_tensor_dims(const onyx_value *value);
ONYX_API int64_t onyx_tensor_numel(const onyx_value *value);
ONYX_API void *onyx_tensor_data(const onyx_value *value);
ONYX_API size_t onyx_tensor_nbytes(const onyx_value *value);

/* All of a tensor's accessors in one call (bindings pay per call: Python's ctypes about a
 * microsecond each). Pointers borrowed as above. */
typedef struct onyx_tensor_info {
    onyx_dtype dtype;
    size_t rank;
    const int64_t *dims;
    int64_t numel;
    void *data;
    size_t nbytes;
    const char *device; /* as onyx_tensor_device */
} onyx_tensor_info;

/* ONYX_ERR_INVALID_ARGUMENT, *info untouched, when value is no tensor. */
ONYX_API onyx_status onyx_tensor_get_info(const onyx_value *value, onyx_tensor_info *info);

/* `count` values (a run's outputs) in one call, for bindings: described in 64-bit words, and the
 * data of each host tensor of at most copy_limit bytes (strings excepted) copied into `bytes`.
 * Per value, depth first:
 *   tensor:   1, dtype, rank, dims[rank], offset, nbytes  (offset: where in `bytes` its data
 *             starts, a multiple of 8; -1 when not copied: read that tensor with the accessors)
 *   sequence: 2, length, each item      optional: 3, 0 | 1, the item if 1
 *   map:      4, keys, values           anything else: 0
 *   map rows: 5 (ONYX_EXPORT_MAP_ROWS), length, keys, values: a sequence of length >= 1 maps
 *             (ZipMap's rows) whose keys are equal host tensors of one fixed-width dtype (the
 *             same contents) and whose values are host tensors of one fixed-width dtype and as
 *             many elements, described as one map: keys the 1-D tensor [n], values a 2-D tensor
 *             [length, n] whose row i is map i's values; both copied whatever copy_limit is
 * *words_used / *bytes_used are the sizes the description needs; when one is past its capacity
 * the output is incomplete (nothing is written past a capacity): call again with that room. */
#define ONYX_EXPORT_MAP_ROWS 5
ONYX_API onyx_status onyx_values_export(const onyx_value *const *values, size_t count,
                                        int64_t *words, size_t word_capacity, size_t *words_used,
                                        void *bytes, size_t byte_capacity, size_t copy_limit,
                                        size_t *bytes_used);

/* Sequence accessors. Items are borrowed, valid while the sequence lives. */
ONYX_API size_t onyx_sequence_length(const onyx_value *value);
ONYX_API const onyx_value *onyx_sequence_at(const onyx_value *value, size_t index);
/* Element dtype recorded for a sequence (useful when it is empty). */
ONYX_API onyx_dtype onyx_sequence_elem_dtype(const onyx_value *value);

/* Optional accessors. The element is borrowed; NULL when empty. */
ONYX_API bool onyx_optional_has_value(const onyx_value *value);
ONYX_API const onyx_value *onyx_optional_value(const onyx_value *value);

/* Map accessors: the keys and the values, 1-D tensors of one length (borrowed, valid while the
 * map lives); NULL when `value` is not a map. */
ONYX_API const onyx_value *onyx_map_keys(const onyx_value *value);
ONYX_API const onyx_value *onyx_map_values(const onyx_value *value);

/* A deep copy. Caller owns *out. */
ONYX_API onyx_status onyx_value_clone(const onyx_value *value, onyx_value **out);

/* Reads a serialized TensorProto, SequenceProto or OptionalProto (`kind` says which; the .pb files
 * of the ONNX test data). Tensor external data is resolved relative to `base_dir` (NULL: refused).
 * Caller owns *out. */
ONYX_API onyx_status onyx_value_from_pb(onyx_value_kind kind, const void *bytes, size_t size,
                                        const char *base_dir, onyx_value **out);
ONYX_API onyx_status onyx_value_load_pb(onyx_value_kind kind, const char *path, onyx_value **out);

/* ---------------------------------------------------------------- models */

typedef struct onyx_model onyx_model;

/* Loads and validates a model. External data is read relative to the file's folder.
 * Caller owns *out; free with onyx_model_free. */
ONYX_API onyx_status onyx_model_load_file(const char *path, onyx_model **out);

/* Same from memory (the bytes are not retained). `base_dir` is the folder external data is
 * relative to, or NULL to refuse external data. Caller owns *out. */
ONYX_API onyx_status onyx_model_load_buffer(const void *bytes, size_t size, const char *base_dir,
                                            onyx_model **out);

ONYX_API void onyx_model_free(onyx_model *model);

/* Description of a graph input or output. All pointers are borrowed from the model (or rep) and
 * valid while it lives. */
typedef struct onyx_io_info {
    const char *name;
    onyx_value_kind kind;      /* tensor, sequence, optional (NONE if the model does not say) */
    onyx_dtype dtype;          /* tensor element type (of the innermost tensor for seq/optional) */
    int64_t rank;              /* -1 when the rank is unknown */
    const int64_t *dims;       /* rank entries; -1 for a dim that is not a fixed number */
    const char *const *dim_params; /* rank entries; symbolic name or NULL */
} onyx_io_info;

ONYX_API size_t onyx_model_input_count(const onyx_model *model);
ONYX_API size_t onyx_model_output_count(const onyx_model *model);
/* Graph inputs exclude initializers. Index out of range: ONYX_ERR_INVALID_ARGUMENT. */
ONYX_API onyx_status onyx_model_input(const onyx_model *model, size_t index, onyx_io_info *out);
ONYX_API onyx_status onyx_model_output(const onyx_model *model, size_t index, onyx_io_info *out);

/* IR version and the opset version imported for `domain` ("" or "ai.onnx" for the default
 * domain); 0 when the domain is not imported. */
ONYX_API int64_t onyx_model_ir_version(const onyx_model *model);
ONYX_API int64_t onyx_model_opset(const onyx_model *model, const char *domain);

/* ---------------------------------------------------------------- model metadata */

/* What a model says about itself: the ModelProto's producer, domain, version, doc string and
 * metadata_props (onnxruntime's ModelMetadata), its main graph's name and doc string, its opset
 * imports, and counts of its main graph's nodes by op. Read straight from a file or from bytes
 * (only the headers are walked: neither the graph nor the weights are loaded, so it is cheap for a
 * model of any size), or from a loaded model. */
typedef struct onyx_model_metadata onyx_model_metadata;

/* ONYX_ERR_IO when the file cannot be read, ONYX_ERR_INVALID_MODEL when the bytes are not a
 * ModelProto. Caller owns *out; free with onyx_model_metadata_free. */
ONYX_API onyx_status onyx_model_metadata_read_file(const char *path, onyx_model_metadata **out);
ONYX_API onyx_status onyx_model_metadata_read_buffer(const void *bytes, size_t size,
                                                     onyx_model_metadata **out);
/* The metadata of a loaded model (everything the file readers give). Caller owns *out. */
ONYX_API onyx_status onyx_model_get_metadata(const onyx_model *model, onyx_model_metadata **out);
ONYX_API void onyx_model_metadata_free(onyx_model_metadata *metadata);

/* Strings are borrowed, valid while the metadata lives; "" when the model does not say (and for a
 * NULL metadata). */
ONYX_API int64_t onyx_model_metadata_ir_version(const onyx_model_metadata *metadata);
ONYX_API const char *onyx_model_metadata_producer_name(const onyx_model_metadata *metadata);
ONYX_API const char *onyx_model_metadata_producer_version(const onyx_model_metadata *metadata);
ONYX_API const char *onyx_model_metadata_domain(const onyx_model_metadata *metadata);
ONYX_API int64_t onyx_model_metadata_model_version(const onyx_model_metadata *metadata);
ONYX_API const char *onyx_model_metadata_doc_string(const onyx_model_metadata *metadata);
ONYX_API const char *onyx_model_metadata_graph_name(const onyx_model_metadata *metadata);
ONYX_API const char *onyx_model_metadata_graph_doc_string(const onyx_model_metadata *metadata);

/* metadata_props, in the model's order. Index out of range: ONYX_ERR_INVALID_ARGUMENT. */
ONYX_API size_t onyx_model_metadata_prop_count(const onyx_model_metadata *metadata);
ONYX_API onyx_status onyx_model_metadata_prop(const onyx_model_metadata *metadata, size_t index,
                                              const char **key, const char **value);
/* The value of `key` (the last entry when the model repeats it); NULL when absent. */
ONYX_API const char *onyx_model_metadata_lookup(const onyx_model_metadata *metadata,
                                                const char *key);

/* Opset imports in the model's order; the default domain is "" (as ONNX writes it). */
ONYX_API size_t onyx_model_metadata_opset_count(const onyx_model_metadata *metadata);
ONYX_API onyx_status onyx_model_metadata_opset(const onyx_model_metadata *metadata, size_t index,
                                               const char **domain, int64_t *version);

/* The main graph's nodes and initializers (subgraphs not counted), and its distinct ops, most
 * frequent first (ties by domain, then op type): each op's domain ("" for ai.onnx), type and
 * number of nodes. */
ONYX_API size_t onyx_model_metadata_node_count(const onyx_model_metadata *metadata);
ONYX_API size_t onyx_model_metadata_initializer_count(const onyx_model_metadata *metadata);
ONYX_API size_t onyx_model_metadata_op_count(const onyx_model_metadata *metadata);
ONYX_API onyx_status onyx_model_metadata_op(const onyx_model_metadata *metadata, size_t index,
                                            const char **domain, const char **op_type,
                                            size_t *count);

/* ---------------------------------------------------------------- devices */

/* True when `device` ("CPU", "CUDA", "CUDA:1") names a device that is usable on this machine. */
ONYX_API bool onyx_supports_device(const char *device);

/* ---------------------------------------------------------------- prepare and run */

typedef struct onyx_rep onyx_rep;

/* ---- session options: opaque, so that options can be added without breaking binaries built
 * against an older header. Set what differs from the defaults, then onyx_prepare_session. */
typedef struct onyx_session_options onyx_session_options;

/* Graph optimizations at prepare (as onnxruntime's GraphOptimizationLevel). */
typedef enum onyx_optimization_level {
    ONYX_OPT_NONE = 0,  /* run the graph as written */
    ONYX_OPT_BASIC = 1, /* fold constant subgraphs (shape computations, weight transposes) */
    ONYX_OPT_ALL = 2,   /* also fuse (conv + batch norm / activations / add) and keep tensors
                           between convolutions channels last, as oneDNN computes them (the
                           default) */
} onyx_optimization_level;

/* Log severities, as onnxruntime's (0 verbose … 4 fatal). */
typedef enum onyx_log_level {
    ONYX_LOG_VERBOSE = 0,
    ONYX_LOG_INFO = 1,
    ONYX_LOG_WARNING = 2,
    ONYX_LOG_ERROR = 3,
    ONYX_LOG_FATAL = 4,
} onyx_log_level;

/* Receives log lines at or above the options' level; may be called from any thread that
 * prepares or runs. `message` is valid for the call only. */
typedef void (*onyx_log_fn)(void *user, onyx_log_level level, const char *message);

/* Defaults: device CPU, all cores, ONYX_OPT_ALL, no profiling, logging off, no memory limit.
 * Caller owns *out; free with onyx_session_options_free. */
ONYX_API onyx_status onyx_session_options_create(onyx_session_options **out);
ONYX_API void onyx_session_options_free(onyx_session_options *options);

/* Devices in priority order, comma-separated ("CUDA:0,CPU"). Each node runs on the first device
 * with a kernel for it; the CPU is always the last resort even when not listed. A device that is
 * not usable here is ONYX_ERR_DEVICE at prepare; an empty or unknown name ("CPU:1", "CUDA:-1"),
 * or two devices besides the CPU ("CUDA:0,CUDA:1", "TEST,CUDA"), is ONYX_ERR_DEVICE here. */
ONYX_API onyx_status onyx_session_options_set_devices(onyx_session_options *options,
                                                      const char *devices);
/* Threads per run (0: all cores, that is the CPUs this process may run on: its affinity mask).
 * A count past those CPUs is clamped to them at prepare, with a warning to the log callback:
 * onyx's threads are the workers of one thread pool (TBB's), which share a kernel's loops
 * between them, so more than the CPUs only time-slice them (and tens of thousands exhaust the
 * process). Negative: ONYX_ERR_INVALID_ARGUMENT. */
ONYX_API onyx_status onyx_session_options_set_threads(onyx_session_options *options, int threads);
ONYX_API onyx_status onyx_session_options_set_optimization(onyx_session_options *options,
                                                           onyx_optimization_level level);
/* Profiling: when `trace_path` is not NULL, every run records per-node timings, written as a
 * Chrome trace (the JSON of onnxruntime's enable_profiling) to `trace_path` by
 * onyx_rep_end_profiling or when the rep is freed. NULL turns it off; "" is
 * ONYX_ERR_INVALID_ARGUMENT. The file is created (an empty trace) at prepare: a path that cannot
 * be written is ONYX_ERR_IO there. */
ONYX_API onyx_status onyx_session_options_set_profiling(onyx_session_options *options,
                                                        const char *trace_path);
/* At prepare, writes the model as this session runs it to `path` (NULL turns it off; "" is
 * ONYX_ERR_INVALID_ARGUMENT): every graph after the rewrites of the session's optimization level,
 * as an ONNX model that onyx loads back to the same computation (onnxruntime's
 * SessionOptions.optimized_model_filepath). Fused ops are standard ONNX ops where a rewrite made
 * one (at the model's ai.onnx opset, raised where a rewrite made a newer op and every other node
 * still reads as the same version), onnxruntime's com.microsoft ops for quantized units, and
 * onyx's own in the ai.onyx domain, which only onyx reads: LookupTable, and Gelu, Swish and
 * LayerNormalization where the model's opset predates them and a raise would change other
 * nodes (ai.onyx's name for each stands for ai.onnx's Gelu-20, Swish-24,
 * LayerNormalization-17). Initializers of
 * `external_min_bytes` bytes and more go to `external_file` (NULL or "": all inline), a name
 * relative to the model's folder; strings stay inline. Existing files are replaced. Prepare fails
 * with ONYX_ERR_IO when a file cannot be written, ONYX_ERR_INVALID_ARGUMENT for an external name
 * that is absolute or leaves the folder, and ONYX_ERR_UNSUPPORTED naming the node or attribute
 * when the rewritten graph cannot be written as ONNX that reads the same; nothing is written
 * then. */
ONYX_API onyx_status onyx_session_options_set_optimized_model(onyx_session_options *options,
                                                              const char *path,
                                                              const char *external_file,
                                                              size_t external_min_bytes);
/* Logging: lines at `level` and above go to `fn` (NULL: logging off). */
ONYX_API onyx_status onyx_session_options_set_log(onyx_session_options *options,
                                                  onyx_log_level level, onyx_log_fn fn,
                                                  void *user);
/* Refuses, at prepare and when a new input shape is planned, a plan whose working memory per run
 * (its arena) exceeds `bytes` (0: no limit): ONYX_ERR_NO_MEMORY, naming both sizes. */
ONYX_API onyx_status onyx_session_options_set_memory_limit(onyx_session_options *options,
                                                           size_t bytes);
/* An input example: binds the symbolic dims of input `input_name` (NULL: the graph input after
 * the previous example's) so that kernels and memory are planned at prepare. Only the example's
 * type and shape are kept. */
ONYX_API onyx_status onyx_session_options_add_example(onyx_session_options *options,
                                                      const char *input_name,
                                                      const onyx_value *example);
/* Named settings for what is not worth a function of its own, as onnxruntime's session config
 * entries. This list is the one place the keys are documented; every key onyx reads is here.
 *
 *   key                              values                 default   meaning
 *   optimization.blocked_layouts     "0" | "1"              "1"       at ONYX_OPT_ALL, tensors
 *       passed only between convolutions (and the channel Concats, poolings and
 *       squeeze-and-excitation steps between them) stay channels last, as oneDNN computes them;
 *       "0": plain layouts between them. The name is from when that layout was oneDNN's
 *       channel-blocked one.
 *   optimization.float16_as_float32  "0" | "1"              "1"       at ONYX_OPT_ALL, in a
 *       session whose devices are the CPU (and TEST) alone, float16 ops run as their float twins
 *       with Casts where float16 enters and leaves (as onnxruntime's CPU provider does: x86 has no
 *       float16 arithmetic); "0": op by op in float16.
 *   optimization.bfloat16            "0" | "1"              "0"       "1": the CPU's float
 *       convolutions and products with constant weights may compute in bfloat16 (float
 *       accumulation, outputs, bias and post-ops), where oneDNN has a fast bfloat16 kernel. An
 *       opt-in: answers differ from float32 by bfloat16's rounding.
 *   optimization.winograd            "0" | "1"              "1"       the CPU's float 3x3
 *       convolutions of stride 1 between channels-last tensors (at ONYX_OPT_ALL), with constant
 *       weights and outputs of 14x14 or more, compute by Winograd F(2x2, 3x3): up to 2.25x fewer
 *       multiplications, sums rounded about as a direct convolution's; "0": oneDNN's direct
 *       kernels.
 *   device.graphs                    "0" | "1"              "1"       a plan on a device with
 *       graphs (CUDA; TEST plans as one) replays its consecutive device steps as one captured
 *       graph from a run context's second run; "0": each step is launched one by one.
 *   session.intra_op.allow_spinning  "0" | "1"              "1"       onnxruntime's key; "0": a
 *       rep's threads sleep as soon as a run ends (the two keys below are then not used).
 *   onyx.intra_op.spin_us            0 to 10000000 (us)     20000     after a run (and after each
 *   onyx.intra_op.doze_us            0 to 10000000 (us)     0         parallel step of one) a rep's
 *       threads spin spin_us, then doze doze_us (sleep in 0.5 ms naps, looking for work after
 *       each), then sleep until work comes. A request within the spin starts on running threads,
 *       one within the doze waits at most a nap for them. Parallel work starting anywhere
 *       (another rep's too) ends the spin and the doze. A run that handed the threads no
 *       parallel work leaves them asleep. Decimal digits only. A run alone in the
 *       process keeps the rep's worker threads off the CPU its caller runs on (their affinity).
 *   onyx.allow_newer_opsets          domains, comma-sep.    ""        a model importing one of
 *       these domains ("ai.onnx" for the default one) at an opset past the newest onyx implements
 *       is prepared anyway, its nodes run as the newest versions onyx implements, and the log
 *       warns: the caller vouches that none of its ops changed meaning. Without it such a model
 *       is refused (ONYX_ERR_UNSUPPORTED, naming the domain and both opsets).
 *
 * Any other key (onnxruntime's included), and a value outside the ones above, is
 * ONYX_ERR_INVALID_ARGUMENT naming the key. Setting a key again replaces its value.
 *
 * Not session config, listed here so that every setting has one home:
 *   - the Python binding (backend/python/onyx) passes SessionOptions.add_session_config_entry
 *     keys above to this function; onnxruntime's own keys outside onyx's namespaces
 *     (optimization.*, device.*, onyx.*) and a few inside them are accepted there without
 *     effect. Its RunOptions.add_run_config_entry takes "onyx.timeout" (seconds, as
 *     onyx_run_options_set_timeout) and "onyx.max_iterations" (as
 *     onyx_run_options_set_max_iterations); other onyx.* run keys are refused. With
 *     SessionOptions.optimized_model_filepath it reads onnxruntime's
 *     session.optimized_model_external_initializers_file_name and
 *     session.optimized_model_external_initializers_min_size_in_bytes (default 1024) and passes
 *     them to onyx_session_options_set_optimized_model.
 *   - environment: ONYX_CUDA_LIB, the path of the CUDA plugin libonyx_cuda.so, tried first
 *     (then the one beside libonyx or the program holding it, then the loader's search path);
 *     ONYX_CUDA_ATTENTION (naming "pipe", "p16" or both), variants of the CUDA tensor-core
 *     attention kernel for a GPU run to choose between (off by default); ONYX_LIB (Python), the
 *     libonyx to load when the package bundles none. */
ONYX_API onyx_status onyx_session_options_set_config(onyx_session_options *options,
                                                     const char *key, const char *value);

/* Resolves opsets, types and shapes, chooses kernels and plans memory. The rep keeps what it
 * needs from the model: the model may be freed afterwards. `options` may be NULL for the
 * defaults and may be freed after the call. Caller owns *out; free with onyx_rep_free. */
ONYX_API onyx_status onyx_prepare_session(const onyx_model *model,
                                          const onyx_session_options *options, onyx_rep **out);

/* onyx_prepare_session, the rep taking over the caller's reference to the model: the caller
 * does not use or free `model` after the call, whether it succeeds or not. Where the rep is then
 * the model's only holder and the session computes on the CPU alone, a float weight that a
 * kernel keeps packed (MatMul's and Gemm's B) is held once, as packed: the model's own copy is
 * handed back to the system after packing and rebuilt from the packed one if something else
 * comes to read it. A model's peak memory is then about its weights once, not twice. */
ONYX_API onyx_status onyx_prepare_session_owning(onyx_model *model,
                                                 const onyx_session_options *options,
                                                 onyx_rep **out);

ONYX_API void onyx_rep_free(onyx_rep *rep);

/* Writes the profile recorded so far (onyx_session_options_set_profiling) to its trace file and
 * starts a new one. *path (may be NULL) receives the file's path: borrowed, valid while the rep
 * lives. ONYX_ERR_INVALID_ARGUMENT when profiling is off. */
ONYX_API onyx_status onyx_rep_end_profiling(onyx_rep *rep, const char **path);

ONYX_API size_t onyx_rep_input_count(const onyx_rep *rep);
ONYX_API size_t onyx_rep_output_count(const onyx_rep *rep);
ONYX_API onyx_status onyx_rep_input(const onyx_rep *rep, size_t index, onyx_io_info *out);
ONYX_API onyx_status onyx_rep_output(const onyx_rep *rep, size_t index, onyx_io_info *out);

/* Runs the prepared model. `inputs` are borrowed for the call. With `input_names` NULL, inputs
 * are the graph inputs in order; otherwise each is matched by name (every graph input must be
 * given). On success *outputs is a new array of *output_count values, one per graph output in
 * order; caller owns them: free with onyx_values_free(*outputs, *output_count). Each output's
 * storage is its own (shared with no input, no other output and nothing of the rep): bindings may
 * hand it to their caller as it is, writable, and it outlives the rep. */
ONYX_API onyx_status onyx_rep_run(onyx_rep *rep, size_t input_count,
                                  const char *const *input_names,
                                  const onyx_value *const *inputs, size_t *output_count,
                                  onyx_value ***outputs);

/* ---- run options: per run, opaque like the session options. One run options object may be
 * shared by several runs (terminating it stops them all). */
typedef struct onyx_run_options onyx_run_options;

/* Defaults: no deadline, no cap. Caller owns *out; free with onyx_run_options_free (not while a
 * run uses it). */
ONYX_API onyx_status onyx_run_options_create(onyx_run_options **out);
ONYX_API void onyx_run_options_free(onyx_run_options *options);
/* Terminate: while set, runs using these options stop at their next step or loop iteration
 * with ONYX_ERR_TERMINATED (within milliseconds; the rep stays usable). Safe to call from any
 * thread while runs are going on; clear it to run again with the same options. */
ONYX_API onyx_status onyx_run_options_set_terminate(onyx_run_options *options, bool terminate);
/* A time limit per run, from the run's start (0: none): past it the run stops with
 * ONYX_ERR_TIMEOUT. Negative, NaN or over 1e9 seconds: ONYX_ERR_INVALID_ARGUMENT. */
ONYX_API onyx_status onyx_run_options_set_timeout(onyx_run_options *options, double seconds);
/* Cap on Loop/Scan iterations and on the items a run puts in one sequence (0: none): a model
 * going past it stops with ONYX_ERR_LIMIT. Negative: ONYX_ERR_INVALID_ARGUMENT. */
ONYX_API onyx_status onyx_run_options_set_max_iterations(onyx_run_options *options,
                                                         int64_t iterations);
/* A tag for this run's log lines and profile events (copied; NULL clears it). At most
 * ONYX_RUN_TAG_MAX bytes (a profile event is one bounded line): longer is
 * ONYX_ERR_INVALID_ARGUMENT. */
#define ONYX_RUN_TAG_MAX 256
ONYX_API onyx_status onyx_run_options_set_tag(onyx_run_options *options, const char *tag);
/* Where the run's outputs are wanted ("CPU" default, "CUDA", "TEST"): outputs that the session
 * computes on that device are returned in its memory (onyx_tensor_device says where each output
 * is), so that data can stay on the GPU between runs; outputs computed on the CPU come back
 * there. A device the session does not use is the CPU here; a GPU other than the session's
 * ("CUDA:1" for a session on CUDA:0) is ONYX_ERR_DEVICE at run. */
ONYX_API onyx_status onyx_run_options_set_output_device(onyx_run_options *options,
                                                        const char *device);

/* onyx_rep_run under run options (NULL: none). */
ONYX_API onyx_status onyx_rep_run_with_options(onyx_rep *rep, const onyx_run_options *options,
                                               size_t input_count,
                                               const char *const *input_names,
                                               const onyx_value *const *inputs,
                                               size_t *output_count, onyx_value ***outputs);

/* onyx_rep_run_with_options with some outputs written into the caller's memory (onnxruntime's
 * IOBinding of outputs): output `target_names[k]` goes into `targets[k]`, a tensor of numbers of
 * the output's element type and shape in CPU memory (onyx_value_wrap_tensor over the caller's
 * buffer, which the run writes) or in a device's (onyx_value_copy_to_device's, or an output a
 * run left there). Its entry in *outputs is NULL; the others are as onyx_rep_run's. An output
 * is computed straight in its target when the run makes it in the target's memory (a device's:
 * with that device as the options' output device) and the target overlaps no input; a target that is exactly an input's memory is written in place only where the node
 * making the output declares that safe: GroupQueryAttention's present_key / present_value over
 * its past_key / past_value, one buffer of the cache's capacity bound as both (onnxruntime-genai's
 * past_present_share_buffer), which the run appends to in place. Other overlaps with inputs are
 * computed apart and copied into the target after the run. Targets that overlap each other, an
 * unknown name or a name given twice: ONYX_ERR_INVALID_ARGUMENT; an output of another type or
 * shape than its target: ONYX_ERR_SHAPE (the target's contents are then unspecified, as after
 * any failed run that writes in place). */
ONYX_API onyx_status onyx_rep_run_into(onyx_rep *rep, const onyx_run_options *options,
                                       size_t input_count, const char *const *input_names,
                                       const onyx_value *const *inputs, size_t target_count,
                                       const char *const *target_names,
                                       onyx_value *const *targets, size_t *output_count,
                                       onyx_value ***outputs);

/* Room for onyx_values_export's description, as onyx_rep_run_export takes it. */
typedef struct onyx_export_room {
    int64_t *words;
    size_t word_capacity;
    void *bytes;
    size_t byte_capacity;
    size_t copy_limit;
    size_t words_used, bytes_used; /* set by the call */
} onyx_export_room;

/* A run in one foreign call, for bindings: host tensors given as records of 64-bit words (per
 * input: dtype, rank, dims[rank], data address, nbytes; the data lent for the call, as
 * onyx_value_wrap_tensor), run under `options` (NULL: none), outputs exported into `room` as
 * onyx_values_export does. When the description fits and holds every output's data, the outputs
 * are freed here and *outputs is NULL (*output_count still their number); else the caller reads
 * them (onyx_values_export again with more room, the accessors) and frees them. At most 64 inputs. */
ONYX_API onyx_status onyx_rep_run_export(onyx_rep *rep, const onyx_run_options *options,
                                         size_t input_count, const char *const *input_names,
                                         const int64_t *inputs, onyx_export_room *room,
                                         size_t *output_count, onyx_value ***outputs);

/* Load + prepare + run in one call on a serialized ModelProto, prepared under `options` (NULL:
 * the defaults) as onyx_prepare_session does; external data is refused. Ownership as
 * onyx_rep_run. */
ONYX_API onyx_status onyx_run_model(const void *model_bytes, size_t size,
                                    const onyx_session_options *options, size_t input_count,
                                    const onyx_value *const *inputs, size_t *output_count,
                                    onyx_value ***outputs);

/* Describes an expected output of run_node: its element type and, when rank >= 0, its shape. */
typedef struct onyx_output_info {
    onyx_dtype dtype;
    int64_t rank; /* -1: unknown */
    const int64_t *dims;
} onyx_output_info;

/* Runs one node: `node_bytes` is a serialized NodeProto; its inputs are `inputs` in order (an
 * empty input name in the node means an omitted optional input and takes no entry).
 * `outputs_info` (may be NULL) gives types of the outputs; `opset_version` is the ai.onnx opset
 * to resolve the node against (0: the newest onyx knows, negative: ONYX_ERR_INVALID_ARGUMENT;
 * other domains use their newest).
 * Bytes that are not a NodeProto give ONYX_ERR_INVALID_MODEL. Ownership of the outputs as
 * onyx_rep_run. */
ONYX_API onyx_status onyx_run_node(const void *node_bytes, size_t size, int64_t opset_version,
                                   const char *device, size_t input_count,
                                   const onyx_value *const *inputs, size_t outputs_info_count,
                                   const onyx_output_info *outputs_info, size_t *output_count,
                                   onyx_value ***outputs);

/* ONYX_OK when a session on `device` would prepare the model: every opset it imports is one onyx
 * implements, every node has the schema of the version it asks for and a kernel for `device` (or
 * the CPU fallback) that takes its types and attributes. It prepares the model to find out (what
 * prepare refuses, it refuses), without running it. Otherwise ONYX_ERR_UNSUPPORTED (or the
 * status prepare gives), and onyx_last_error() says why, naming the first node that does not
 * fit. */
ONYX_API onyx_status onyx_is_compatible(const onyx_model *model, const char *device);

/* The library version ("0.2.0"). */
ONYX_API const char *onyx_version(void);

#ifdef __cplusplus
}
#endif
#endif /* ONYX_H */
