/* Backend internals: the devices' registry entries (core/device_registry.h) and priority lists, the
 * TEST device and the CUDA plugin's entry points, and the public options objects' contents. */
#ifndef ONYX_BACKEND_H
#define ONYX_BACKEND_H

#include "core/device_registry.h"
#include "core/exec_run.h"

/* Adds the devices' entries to the registry (core/device_registry.h), once; every function here
 * that names or parses devices calls it first. */
void backend_register_devices(void);
/* device_parse after the entries are added. */
onyx_status backend_device_parse(const char *text, device_kind *kind, int *index);
/* The operations of a usable device (registered for device_ops_of on first call), or NULL. */
const device_ops *backend_device_ops(device_kind kind, int index);

/* True when some kernel serves the node's op and version on one of the session's devices,
 * whatever the dtype (used by is_compatible before types are known). */
bool backend_has_kernel(const graph_node *node, const exec_env *env);

/* The entries of the CUDA device (backend/cuda_plugin.c) and of the TEST device
 * (backend/test_device.c); the CPU's is in backend/device.c. */
extern const device_entry cuda_device_entry;
extern const device_entry test_device_entry;

/* Fills the environment's device order and device tables: `device` then the CPU, or the CPU
 * first where cpu_first. */
onyx_status backend_devices(exec_env *env, device_kind device, int index, bool cpu_first);

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
    bool winograd;      /* config optimization.winograd */
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
