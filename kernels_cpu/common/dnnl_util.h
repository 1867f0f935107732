/* oneDNN glue shared by the CPU kernels that use it: the process's one CPU engine, a stream per
 * thread, status translation, plain memory descriptors and execution under the rep's threads. */
#ifndef ONYX_KERNELS_CPU_DNNL_UTIL_H
#define ONYX_KERNELS_CPU_DNNL_UTIL_H

#include <dnnl.h>

#include "core/status.h"

/* The CPU engine, created on first use (thread-safe) and kept for the life of the process. */
onyx_status cpu_dnnl_engine(dnnl_engine_t *out);

/* ONYX_OK for dnnl_success; otherwise an error saying `what` failed and oneDNN's reason
 * (unimplemented configurations come back as ONYX_ERR_UNSUPPORTED). */
onyx_status cpu_dnnl_check(dnnl_status_t s, const char *what);

/* A dense row-major descriptor of `dims` (what onyx tensors are). */
onyx_status cpu_dnnl_md_plain(dnnl_memory_desc_t *md, int rank, const int64_t *dims,
                              dnnl_data_type_t dt);

/* The channel-blocked descriptor (nCw16c, nChw16c, nCdhw16c) of `dims`, rank 3 to 5: the layout
 * of tensors the fusion pass marks opaque (core/fuse.h) when their channels are a multiple of 16. */
onyx_status cpu_dnnl_md_blocked(dnnl_memory_desc_t *md, int rank, const int64_t *dims,
                                dnnl_data_type_t dt);

/* A memory object for `md` without a buffer (handles are set per run). */
onyx_status cpu_dnnl_memory(dnnl_memory_t *out, const dnnl_memory_desc_t *md);

/* Runs `prim` on the calling thread's stream with `threads` OpenMP threads and waits for it. */
onyx_status cpu_dnnl_execute(dnnl_primitive_t prim, int nargs, const dnnl_exec_arg_t *args,
                             int threads);

/* oneDNN sizes its parallel work when a primitive is created: create primitives under the thread
 * count they will run with. Sets the calling thread's OpenMP count (threads > 0) and returns the
 * previous one for cpu_dnnl_threads_restore. */
int cpu_dnnl_threads_set(int threads);
void cpu_dnnl_threads_restore(int saved);

/* Buffer aligned for oneDNN (64 bytes), size rounded up; NULL on failure. Free with free(). */
void *cpu_dnnl_alloc(size_t size);

#endif
