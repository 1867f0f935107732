// The oneDNN shim behind dnnl_guard.h: no C++ exception escapes oneDNN's C API into the C library,
// and no JIT code is generated without room left for it.
#include "kernels_cpu/common/dnnl_guard.h"

#include <sys/mman.h>

#include <atomic>
#include <new>

namespace {

// Whether DNNL_GUARD_HEADROOM bytes of address space can still be mapped (RLIMIT_AS, a full
// address space). Nothing is touched, so nothing is committed.
bool headroom() {
    void *p = mmap(nullptr, DNNL_GUARD_HEADROOM, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED) return false;
    munmap(p, DNNL_GUARD_HEADROOM);
    return true;
}

template <typename F> dnnl_status_t guarded(F &&f) {
    try {
        return f();
    } catch (const std::bad_alloc &) {
        return dnnl_out_of_memory;
    } catch (...) {
        return dnnl_runtime_error;
    }
}

// sgemm generates its kernels on its first call; later calls only allocate packing buffers, which
// oneDNN checks.
std::atomic<bool> sgemm_ready{false};

} // namespace

extern "C" dnnl_status_t dnnl_guard_engine_create(dnnl_engine_t *engine, dnnl_engine_kind_t kind,
                                                  size_t index) {
    return guarded([&] { return dnnl_engine_create(engine, kind, index); });
}

extern "C" dnnl_status_t dnnl_guard_stream_create(dnnl_stream_t *stream, dnnl_engine_t engine,
                                                  unsigned flags) {
    return guarded([&] { return dnnl_stream_create(stream, engine, flags); });
}

extern "C" dnnl_status_t dnnl_guard_memory_create(dnnl_memory_t *memory, const_dnnl_memory_desc_t md,
                                                  dnnl_engine_t engine, void *handle) {
    return guarded([&] { return dnnl_memory_create(memory, md, engine, handle); });
}

extern "C" dnnl_status_t dnnl_guard_convolution_pd(
    dnnl_primitive_desc_t *pd, dnnl_engine_t engine, dnnl_prop_kind_t prop, dnnl_alg_kind_t alg,
    const_dnnl_memory_desc_t src, const_dnnl_memory_desc_t weights, const_dnnl_memory_desc_t bias,
    const_dnnl_memory_desc_t dst, const dnnl_dims_t strides, const dnnl_dims_t dilates,
    const dnnl_dims_t padding_l, const dnnl_dims_t padding_r, const_dnnl_primitive_attr_t attr) {
    if (!headroom()) return dnnl_out_of_memory;
    return guarded([&] {
        return dnnl_convolution_forward_primitive_desc_create(pd, engine, prop, alg, src, weights,
                                                              bias, dst, strides, dilates,
                                                              padding_l, padding_r, attr);
    });
}

extern "C" dnnl_status_t dnnl_guard_deconvolution_pd(
    dnnl_primitive_desc_t *pd, dnnl_engine_t engine, dnnl_prop_kind_t prop, dnnl_alg_kind_t alg,
    const_dnnl_memory_desc_t src, const_dnnl_memory_desc_t weights, const_dnnl_memory_desc_t bias,
    const_dnnl_memory_desc_t dst, const dnnl_dims_t strides, const dnnl_dims_t dilates,
    const dnnl_dims_t padding_l, const dnnl_dims_t padding_r, const_dnnl_primitive_attr_t attr) {
    if (!headroom()) return dnnl_out_of_memory;
    return guarded([&] {
        return dnnl_deconvolution_forward_primitive_desc_create(pd, engine, prop, alg, src,
                                                                weights, bias, dst, strides,
                                                                dilates, padding_l, padding_r,
                                                                attr);
    });
}

extern "C" dnnl_status_t dnnl_guard_next_impl(dnnl_primitive_desc_t pd) {
    return guarded([&] { return dnnl_primitive_desc_next_impl(pd); });
}

extern "C" dnnl_status_t dnnl_guard_matmul_pd(dnnl_primitive_desc_t *pd, dnnl_engine_t engine,
                                              const_dnnl_memory_desc_t src,
                                              const_dnnl_memory_desc_t weights,
                                              const_dnnl_memory_desc_t bias,
                                              const_dnnl_memory_desc_t dst,
                                              const_dnnl_primitive_attr_t attr) {
    if (!headroom()) return dnnl_out_of_memory;
    return guarded([&] {
        return dnnl_matmul_primitive_desc_create(pd, engine, src, weights, bias, dst, attr);
    });
}

extern "C" dnnl_status_t dnnl_guard_pooling_pd(
    dnnl_primitive_desc_t *pd, dnnl_engine_t engine, dnnl_prop_kind_t prop, dnnl_alg_kind_t alg,
    const_dnnl_memory_desc_t src, const_dnnl_memory_desc_t dst, const dnnl_dims_t strides,
    const dnnl_dims_t kernel, const dnnl_dims_t dilation, const dnnl_dims_t padding_l,
    const dnnl_dims_t padding_r, const_dnnl_primitive_attr_t attr) {
    if (!headroom()) return dnnl_out_of_memory;
    return guarded([&] {
        return dnnl_pooling_forward_primitive_desc_create(pd, engine, prop, alg, src, dst, strides,
                                                          kernel, dilation, padding_l, padding_r,
                                                          attr);
    });
}

extern "C" dnnl_status_t dnnl_guard_reorder_pd(dnnl_primitive_desc_t *pd,
                                               const_dnnl_memory_desc_t src,
                                               dnnl_engine_t src_engine,
                                               const_dnnl_memory_desc_t dst,
                                               dnnl_engine_t dst_engine,
                                               const_dnnl_primitive_attr_t attr) {
    if (!headroom()) return dnnl_out_of_memory;
    return guarded([&] {
        return dnnl_reorder_primitive_desc_create(pd, src, src_engine, dst, dst_engine, attr);
    });
}

extern "C" dnnl_status_t dnnl_guard_primitive_create(dnnl_primitive_t *prim,
                                                     const_dnnl_primitive_desc_t pd) {
    if (!headroom()) return dnnl_out_of_memory;
    return guarded([&] { return dnnl_primitive_create(prim, pd); });
}

extern "C" dnnl_status_t dnnl_guard_execute_wait(const_dnnl_primitive_t prim, dnnl_stream_t stream,
                                                 int nargs, const dnnl_exec_arg_t *args) {
    return guarded([&] {
        dnnl_status_t r = dnnl_primitive_execute(prim, stream, nargs, args);
        return r == dnnl_success ? dnnl_stream_wait(stream) : r;
    });
}

extern "C" dnnl_status_t dnnl_guard_sgemm(char transa, char transb, dnnl_dim_t m, dnnl_dim_t n,
                                          dnnl_dim_t k, float alpha, const float *a, dnnl_dim_t lda,
                                          const float *b, dnnl_dim_t ldb, float beta, float *c,
                                          dnnl_dim_t ldc) {
    if (!sgemm_ready.load(std::memory_order_acquire) && !headroom()) return dnnl_out_of_memory;
    dnnl_status_t r = guarded([&] {
        return dnnl_sgemm(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    });
    if (r == dnnl_success) sgemm_ready.store(true, std::memory_order_release);
    return r;
}
