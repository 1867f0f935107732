/* oneDNN glue shared by the CPU kernels that use it: the process's one CPU engine, a stream per
 * thread, status translation, plain memory descriptors and execution. oneDNN (3.x, TBB runtime)
 * runs on the thread count of the TBB arena the caller is in: the rep's, set around prepare and
 * run by parallel_within (core/parallel.h). Memory descriptors are handles (dnnl_memory_desc_t):
 * whoever creates or clones one destroys it with dnnl_memory_desc_destroy. */
#ifndef ONYX_KERNELS_CPU_DNNL_UTIL_H
#define ONYX_KERNELS_CPU_DNNL_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#include <oneapi/dnnl/dnnl.h>

#include "core/status.h"
#include "kernels_cpu/common/dnnl_guard.h" /* the oneDNN calls that allocate */

/* The CPU engine, created on first use (thread-safe) and kept for the life of the process. */
onyx_status cpu_dnnl_engine(dnnl_engine_t *out);

/* ONYX_OK for dnnl_success; otherwise an error saying `what` failed and oneDNN's reason
 * (unimplemented configurations come back as ONYX_ERR_UNSUPPORTED). */
onyx_status cpu_dnnl_check(dnnl_status_t s, const char *what);

/* A dense row-major descriptor of `dims` (what onyx tensors are); caller destroys *md. */
onyx_status cpu_dnnl_md_plain(dnnl_memory_desc_t *md, int rank, const int64_t *dims,
                              dnnl_data_type_t dt);

/* The channels-last descriptor (nwc, nhwc, ndhwc: [N, spatial..., C] in memory) of the logical
 * dims `dims` ([N, C, spatial...]), rank 3 to 5: the layout of tensors the fusion pass marks
 * opaque (core/fuse.h), the one oneDNN's brgemm convolution kernels take. Caller destroys *md. */
onyx_status cpu_dnnl_md_channels_last(dnnl_memory_desc_t *md, int rank, const int64_t *dims,
                                      dnnl_data_type_t dt);

/* Appends the fusion pass's post-ops (core/fuse.h) to po, in order: activations as eltwise
 * post-ops, an addend as a sum post-op. BatchNormalization and per-channel Mul / Add are skipped:
 * the kernel folds them into its weights and bias. */
struct fuse_chain;
onyx_status cpu_dnnl_post_ops(const struct fuse_chain *chain, dnnl_post_ops_t po);
/* The same for the chain's first n ops (the rest applied by the kernel: post_vmath.h). */
onyx_status cpu_dnnl_post_ops_n(const struct fuse_chain *chain, int n, dnnl_post_ops_t po);

/* Primitive attributes in the user scratchpad mode (caller destroys). oneDNN's default mode keeps a
 * scratchpad per primitive, tied to the thread that created it; with the user mode a primitive
 * runs on any thread, concurrently, with the scratchpad each call passes (DNNL_ARG_SCRATCHPAD),
 * which the kernels take from their run's kernel_scratch. Every primitive the kernels create uses
 * these. */
onyx_status cpu_dnnl_attr(dnnl_primitive_attr_t *out);

/* The scratchpad a primitive made under cpu_dnnl_attr needs: its size in bytes, and in *md a copy
 * of its descriptor (caller destroys), NULL when the size is 0. On failure to copy, returns
 * SIZE_MAX and *md is NULL. */
size_t cpu_dnnl_scratchpad(const_dnnl_primitive_desc_t pd, dnnl_memory_desc_t *md);

/* A reorder primitive from `from` to `to` under cpu_dnnl_attr; *pad its scratchpad descriptor
 * (caller destroys; NULL when none), *pad_size its size (0: none). */
onyx_status cpu_dnnl_reorder(const_dnnl_memory_desc_t from, const_dnnl_memory_desc_t to,
                             dnnl_primitive_t *prim, dnnl_memory_desc_t *pad, size_t *pad_size);

/* Reorders `src` (laid out as `from`) into `dst` (as `to`) once: a reorder primitive, its
 * scratchpad and memories made for this call and freed after it (packing constant weights). */
onyx_status cpu_dnnl_reorder_once(const_dnnl_memory_desc_t from, const void *src,
                                  const_dnnl_memory_desc_t to, void *dst);

/* A memory object for `md` without a buffer (handles are set per run). Memory objects are bound
 * to buffers per call, so concurrent runs must not share them: each run context (kernel fork)
 * has its own. */
onyx_status cpu_dnnl_memory(dnnl_memory_t *out, const_dnnl_memory_desc_t md);

/* Runs `prim` on the calling thread's stream, on the threads of the caller's TBB arena, and waits
 * for it. oneDNN sizes its parallel work when a primitive is created: primitives are created
 * and run under the same count (the rep's: prepare and run are both inside parallel_within). */
onyx_status cpu_dnnl_execute(dnnl_primitive_t prim, int nargs, const dnnl_exec_arg_t *args);

/* A memory descriptor's layout as plain bytes, for cache keys: descriptors are handles, which two
 * plans asking for the same layout do not share. What oneDNN's queries give of a blocked layout,
 * all there is to a float or bfloat16 one (the extra flags they do not give only mark int8
 * weights, and the size shows the data those add). Entries past ndims and inner_nblks are zero;
 * no padding bytes. */
typedef struct cpu_dnnl_layout {
    int32_t ndims, inner_nblks, data_type, format_kind;
    int64_t offset0, size;
    dnnl_dims_t dims, padded_dims, padded_offsets, strides, inner_blks, inner_idxs;
} cpu_dnnl_layout;

/* *out (zeroed first) from md; false when md is not a blocked layout (the details of others are
 * not queryable). */
bool cpu_dnnl_layout_of(const_dnnl_memory_desc_t md, cpu_dnnl_layout *out);

/* Buffer aligned for oneDNN (64 bytes), size rounded up; NULL on failure. Free with free(). */
void *cpu_dnnl_alloc(size_t size);

#endif
