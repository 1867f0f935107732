/* oneDNN's C entry points that allocate, behind a C++ shim (dnnl_guard.cc): a std::bad_alloc (or
 * any other exception) thrown inside oneDNN comes back as dnnl_out_of_memory (dnnl_runtime_error)
 * instead of unwinding through C frames, which aborts the process. The calls that may generate
 * JIT code (primitive descriptor and primitive creation, the first sgemm) first check that some
 * address space is left: oneDNN dereferences a failed JIT code buffer instead of reporting it. Same arguments and results as
 * the dnnl_ functions they wrap (oneDNN 3.x: one primitive-descriptor constructor per kind). */
#ifndef ONYX_KERNELS_CPU_DNNL_GUARD_H
#define ONYX_KERNELS_CPU_DNNL_GUARD_H

#include <oneapi/dnnl/dnnl.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Address space that must be free before oneDNN generates code (its JIT buffers and the tables
 * it builds on the way are far smaller). */
#define DNNL_GUARD_HEADROOM ((size_t)32 << 20)

dnnl_status_t dnnl_guard_engine_create(dnnl_engine_t *engine, dnnl_engine_kind_t kind, size_t index);
dnnl_status_t dnnl_guard_stream_create(dnnl_stream_t *stream, dnnl_engine_t engine, unsigned flags);
dnnl_status_t dnnl_guard_memory_create(dnnl_memory_t *memory, const_dnnl_memory_desc_t md,
                                       dnnl_engine_t engine, void *handle);
dnnl_status_t dnnl_guard_convolution_pd(dnnl_primitive_desc_t *pd, dnnl_engine_t engine,
                                        dnnl_prop_kind_t prop, dnnl_alg_kind_t alg,
                                        const_dnnl_memory_desc_t src,
                                        const_dnnl_memory_desc_t weights,
                                        const_dnnl_memory_desc_t bias,
                                        const_dnnl_memory_desc_t dst, const dnnl_dims_t strides,
                                        const dnnl_dims_t dilates, const dnnl_dims_t padding_l,
                                        const dnnl_dims_t padding_r,
                                        const_dnnl_primitive_attr_t attr);
dnnl_status_t dnnl_guard_deconvolution_pd(dnnl_primitive_desc_t *pd, dnnl_engine_t engine,
                                          dnnl_prop_kind_t prop, dnnl_alg_kind_t alg,
                                          const_dnnl_memory_desc_t src,
                                          const_dnnl_memory_desc_t weights,
                                          const_dnnl_memory_desc_t bias,
                                          const_dnnl_memory_desc_t dst, const dnnl_dims_t strides,
                                          const dnnl_dims_t dilates, const dnnl_dims_t padding_l,
                                          const dnnl_dims_t padding_r,
                                          const_dnnl_primitive_attr_t attr);
/* Moves pd to oneDNN's next implementation of the same primitive (dnnl_last_impl_reached where
 * none is left). */
dnnl_status_t dnnl_guard_next_impl(dnnl_primitive_desc_t pd);
dnnl_status_t dnnl_guard_matmul_pd(dnnl_primitive_desc_t *pd, dnnl_engine_t engine,
                                   const_dnnl_memory_desc_t src, const_dnnl_memory_desc_t weights,
                                   const_dnnl_memory_desc_t bias, const_dnnl_memory_desc_t dst,
                                   const_dnnl_primitive_attr_t attr);
dnnl_status_t dnnl_guard_pooling_pd(dnnl_primitive_desc_t *pd, dnnl_engine_t engine,
                                    dnnl_prop_kind_t prop, dnnl_alg_kind_t alg,
                                    const_dnnl_memory_desc_t src, const_dnnl_memory_desc_t dst,
                                    const dnnl_dims_t strides, const dnnl_dims_t kernel,
                                    const dnnl_dims_t dilation, const dnnl_dims_t padding_l,
                                    const dnnl_dims_t padding_r, const_dnnl_primitive_attr_t attr);
dnnl_status_t dnnl_guard_reorder_pd(dnnl_primitive_desc_t *pd, const_dnnl_memory_desc_t src,
                                    dnnl_engine_t src_engine, const_dnnl_memory_desc_t dst,
                                    dnnl_engine_t dst_engine, const_dnnl_primitive_attr_t attr);
dnnl_status_t dnnl_guard_primitive_create(dnnl_primitive_t *prim, const_dnnl_primitive_desc_t pd);
/* dnnl_primitive_execute, then dnnl_stream_wait when it succeeded. */
dnnl_status_t dnnl_guard_execute_wait(const_dnnl_primitive_t prim, dnnl_stream_t stream, int nargs,
                                      const dnnl_exec_arg_t *args);
dnnl_status_t dnnl_guard_sgemm(char transa, char transb, dnnl_dim_t m, dnnl_dim_t n, dnnl_dim_t k,
                               float alpha, const float *a, dnnl_dim_t lda, const float *b,
                               dnnl_dim_t ldb, float beta, float *c, dnnl_dim_t ldc);

#ifdef __cplusplus
}
#endif

#endif
