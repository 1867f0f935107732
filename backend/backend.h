/* Backend internals: device strings and priority lists, whether a device is usable, kernel
 * selection in one device's table (the executor walks the session's devices, the CPU last), the
 * TEST device and the CUDA plugin's entry points, and the public options objects' contents. */
#ifndef ONYX_BACKEND_H
#define ONYX_BACKEND_H

#include "core/exec.h"

/* Parses "CPU", "CUDA", "CUDA:N", "TEST" (case-insensitive); NULL is CPU, "" is refused. */
onyx_status device_parse(const char *text, device_kind *kind, int *index);
/* True when the device can run kernels on this machine. */
bool device_usable(device_kind kind, int index);
/* The operations of a usable device (registered for device_ops_of on first call), or NULL. */
const device_ops *backend_device_ops(device_kind kind, int index);

/* The kernel for a node in `device`'s table (no fallback: the executor walks the session's
 * devices). NULL with a message naming device, op, version and dtype when none fits. */
const kernel *backend_select(const graph_node *node, int n_in, const type_info *const *in_type,
                             device_kind device);

/* True when some kernel serves the node's op and version on one of the session's devices,
 * whatever the dtype (used by is_compatible before types are known). */
bool backend_has_kernel(const graph_node *node, const exec_env *env);

/* Memory of the CPU (backend/device.c) and of the TEST device (backend/test_device.c). */
extern const device_ops cpu_device_ops;
extern const device_ops test_device_ops;
/* The TEST device's kernels: wrappers of a subset of the CPU's. */
const kernel *test_kernel_table(size_t *count);

/* Fills the environment's device order and device tables: `device` then the CPU, or the CPU
 * first where cpu_first. */
onyx_status backend_devices(exec_env *env, device_kind device, int index, bool cpu_first);

/* The CUDA part, loaded on first use (backend/cuda_plugin.c): usable GPUs (0 without the plugin,
 * a driver or a device) and its kernel table (empty without the plugin). */
int cuda_device_count(void);
const kernel *cuda_kernel_table(size_t *count);
const device_ops *cuda_device_ops(void); /* NULL without the plugin */

/* The public options objects (include/onyx.h). */
typedef struct session_example {
    char *name;     /* NULL: the graph input after the previous example's */
    type_info type;
} session_example;

struct onyx_session_options {
    device_kind device; /* the device of the priority list other than the CPU, or CPU */
    int device_index;
    bool cpu_first;     /* the list names the CPU before that device */
    int threads;
    onyx_optimization_level optimization;
    bool blocked_layouts;
    bool half_as_float; /* config optimization.float16_as_float32 */
    bool bf16;          /* config optimization.bfloat16 (opt-in) */
    bool device_graphs; /* config device.graphs */
    bool allow_spinning; /* config session.intra_op.allow_spinning */
    int64_t spin_us;     /* config onyx.intra_op.spin_us */
    int64_t doze_us;     /* config onyx.intra_op.doze_us */
    size_t memory_limit;
    char *profile_path; /* NULL: off */
    char *optimized_path;     /* the model as the session runs it goes there; NULL: off */
    char *optimized_external; /* its initializers' file; NULL: inline */
    size_t optimized_external_min;
    char *newer_opsets; /* config onyx.allow_newer_opsets: domains vouched for past onyx's
                           newest opset, comma-separated; NULL: none */
    exec_log log;
    int n_examples;
    session_example *examples;
};

struct onyx_run_options {
    atomic_bool terminate;
    double timeout;     /* seconds, 0: none */
    int64_t max_iterations;
    char *tag;
    device_kind output_device;
    int output_device_index;
};

/* Parses a comma-separated device priority list: the device other than the CPU it names (CPU if
 * none), and whether the CPU comes before it. The CPU is the last fallback of every list. */
onyx_status device_parse_list(const char *text, device_kind *kind, int *index, bool *cpu_first);

#endif
