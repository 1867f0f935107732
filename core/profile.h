/* Per-node timings of the runs of a rep, written as a Chrome trace: the JSON array of complete
 * ("ph":"X") events that onnxruntime's enable_profiling writes, one per node run and one per
 * model run, so the same viewers (chrome://tracing, Perfetto) and scripts read both. */
#ifndef ONYX_CORE_PROFILE_H
#define ONYX_CORE_PROFILE_H

#include "core/kernel.h"

typedef struct profiler profiler;

/* A profiler writing to `path` (copied), which is created now with an empty trace:
 * ONYX_ERR_IO when it cannot be written. */
onyx_status profiler_create(const char *path, profiler **out);
/* Writes what is left (profiler_flush) and frees. */
void profiler_free(profiler *p);

/* Records one node's run: [start_ns, end_ns] on CLOCK_MONOTONIC, with the shapes of its inputs
 * and outputs as they were. Safe from concurrent runs. Failures to record are dropped: profiling
 * never fails a run. */
void profiler_node(profiler *p, const graph_node *node, const kernel *k, int n_in,
                   onyx_value *const *in, int n_out, onyx_value *const *out, int64_t start_ns,
                   int64_t end_ns, const char *tag);
/* Records one run of the whole model. */
void profiler_run(profiler *p, int64_t start_ns, int64_t end_ns, const char *tag);

/* Writes the events recorded so far to the trace file and starts over. *path: the file. */
onyx_status profiler_flush(profiler *p, const char **path);

#endif
