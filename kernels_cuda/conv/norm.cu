// BatchNormalization (inference) and LRN on CUDA, as kernels_cpu/norm/batch.c and lrn.c compute
// them: per-channel y = x * a + b with a, b folded in double; LRN over a channel window.
#include <math.h>
#include <stdlib.h>

extern "C" {
#include "core/fuse_chain.h"
}
#include "kernels_cuda/common.cuh"
#include "kernels_cuda/conv/family.h"

namespace {

/* ------------------------------------------------------------------ BatchNormalization */

// A parameter element of any float type, as double (opset 15 lets scale/bias and mean/var have
// types of their own).
__device__ __forceinline__ double load_any(const void *p, onyx_dtype dt, int64_t i) {
    switch (dt) {
    case ONYX_DOUBLE: return ((const double *)p)[i];
    case ONYX_FLOAT16: return (double)__half2float(((const __half *)p)[i]);
    case ONYX_BFLOAT16: return (double)__bfloat162float(((const __nv_bfloat16 *)p)[i]);
    default: return (double)((const float *)p)[i];
    }
}

struct bn_params {
    const void *p[4]; // scale, bias, mean, var
    onyx_dtype dt[4];
};

// a = scale / sqrt(var + eps), b = bias - mean * a, in double and then rounded once to C.
template <typename C>
__global__ void bn_fold_kernel(bn_params prm, double eps, C *a, C *b, int64_t nch) {
    CUDA_GRID_LOOP(ch, nch) {
        double m = load_any(prm.p[2], prm.dt[2], ch), v = load_any(prm.p[3], prm.dt[3], ch);
        double ac = load_any(prm.p[0], prm.dt[0], ch) / sqrt(v + eps);
        a[ch] = (C)ac;
        b[ch] = (C)(load_any(prm.p[1], prm.dt[1], ch) - m * ac);
    }
}

// relu: a Relu after it, fused (core/fuse_device.c); NaN stays NaN, as ONNX's Relu
template <typename T>
__global__ void bn_apply_kernel(const T *x, T *y, const typename compute<T>::type *a,
                                const typename compute<T>::type *b, int64_t nch, int64_t inner,
                                int64_t n, bool relu) {
    CUDA_GRID_LOOP(i, n) {
        int64_t ch = (i / inner) % nch;
        auto v = to_compute(x[i]) * a[ch] + b[ch];
        if (relu && v < 0) v = 0;
        y[i] = from_compute<T>(v);
    }
}

struct bn_launch {
    template <typename T>
    static onyx_status run(const kernel_call *c, const tensor *x, tensor *y, const bn_params &prm,
                           double eps, int64_t nch, int64_t inner, bool relu) {
        typedef typename compute<T>::type C;
        C *ab;
        TRY(cuda_scratch(c, 2 * (size_t)nch * sizeof(C), (void **)&ab));
        cudaStream_t st = cuda_stream(c);
        bn_fold_kernel<C><<<cuda_blocks(nch), CUDA_THREADS, 0, st>>>(prm, eps, ab, ab + nch, nch);
        TRY(cuda_launched("BatchNormalization parameters"));
        bn_apply_kernel<T><<<cuda_blocks(x->numel), CUDA_THREADS, 0, st>>>(
            cuda_data<T>(x), cuda_data<T>(y), ab, ab + nch, nch, inner, x->numel, relu);
        return cuda_launched("BatchNormalization");
    }
};

// Inference only: v14+ by attribute; before, when no statistics output is asked for (as
// kernels_cpu/norm/batch.c decides).
bool bn_inference(const graph_node *n) {
    if (n->version >= 14 && attr_int(n, "training_mode", 0) != 0) return false;
    for (int o = 1; o < n->n_outputs; o++)
        if (n->outputs[o] >= 0) return false;
    return true;
}

/* ------------------------------------------------------------------ LRN */

template <typename T>
__global__ void lrn_kernel(const T *x, T *y, int64_t ch, int64_t inner, int64_t before,
                           int64_t after, typename compute<T>::type an,
                           typename compute<T>::type bias, typename compute<T>::type beta,
                           int64_t n) {
    typedef typename compute<T>::type C;
    CUDA_GRID_LOOP(i, n) {
        int64_t j = i % inner, nc = i / inner, c = nc % ch, base = (nc - c) * inner + j;
        int64_t lo = c - before < 0 ? 0 : c - before;
        int64_t hi = c + after >= ch ? ch - 1 : c + after;
        C acc = C(0);
        for (int64_t k = lo; k <= hi; k++) {
            C v = to_compute(x[base + k * inner]);
            acc += v * v;
        }
        y[i] = from_compute<T>(to_compute(x[i]) / pow(bias + an * acc, beta));
    }
}

struct lrn_launch {
    template <typename T>
    static onyx_status run(const kernel_call *c, const tensor *x, tensor *y, int64_t ch,
                           int64_t inner, int64_t size, double an, double bias, double beta) {
        typedef typename compute<T>::type C;
        lrn_kernel<T><<<cuda_blocks(x->numel), CUDA_THREADS, 0, cuda_stream(c)>>>(
            cuda_data<T>(x), cuda_data<T>(y), ch, inner, (size - 1) / 2, size / 2, (C)an,
            (C)bias, (C)beta, x->numel);
        return cuda_launched("LRN");
    }
};

bool static_float(const type_info *t) {
    if (!t || t->kind != ONYX_VALUE_TENSOR || !dtype_in(t->dtype, DT_FLOATS) || t->rank < 0)
        return false;
    for (int d = 0; d < t->rank; d++)
        if (t->dims[d] < 0) return false;
    return true;
}

} // namespace

bool cuda_batchnorm_supports(const kernel_prep *p) {
    const graph_node *n = p->node;
    if (!bn_inference(n) || p->n_in < 5) return false;
    // per-element statistics (spatial = 0 before v9) stay on the CPU
    if (n->version < 9 && attr_int(n, "spatial", 1) == 0) return false;
    const type_info *x = p->in_type[0];
    if (!static_float(x) || x->rank < 2) return false;
    for (int i = 1; i < 5; i++) {
        const type_info *t = p->in_type[i];
        if (!static_float(t)) return false;
        int64_t cnt = 1;
        for (int d = 0; d < t->rank; d++) cnt *= t->dims[d];
        if (cnt != x->dims[1]) return false;
    }
    return true;
}

// kernel.takes_chain of BatchNormalization: a Relu after it alone (core/fuse_device.c).
bool cuda_batchnorm_takes_chain(const kernel_prep *p) {
    const fuse_chain *f = p->fused;
    return f->n == 1 && f->ops[0].kind == FUSE_RELU && f->ops[0].alpha == 0 && !f->n_pre &&
           !f->attention;
}

// The state of a BatchNormalization with a Relu after it (core/fuse_device.c); NULL without.
onyx_status cuda_batchnorm_prepare(const kernel_prep *p, void **state) {
    *state = NULL;
    if (!p->fused) return ONYX_OK;
    if (!cuda_batchnorm_takes_chain(p))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "BatchNormalization: only a Relu after it");
    bool *relu = (bool *)malloc(sizeof *relu);
    if (!relu) return onyx_error(ONYX_ERR_NO_MEMORY, "BatchNormalization: out of memory");
    *relu = true;
    *state = relu;
    return ONYX_OK;
}

void cuda_batchnorm_release(void *state) { free(state); }

onyx_status cuda_batchnorm_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    if (x->rank < 2)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has rank %d, expected at least 2", x->rank);
    bn_params prm;
    int64_t nch = x->dims[1];
    for (int i = 0; i < 4; i++) {
        const tensor *t = kernel_input(c, i + 1);
        if (!t) return onyx_error(ONYX_ERR_SHAPE, "input %d is missing", i + 1);
        if (t->numel != nch)
            return onyx_error(ONYX_ERR_SHAPE, "input %d has %lld elements, expected %lld", i + 1,
                              (long long)t->numel, (long long)nch);
        prm.p[i] = t->data;
        prm.dt[i] = t->dtype;
    }
    if (x->numel == 0) return ONYX_OK;
    int64_t inner = x->numel / (x->dims[0] * nch);
    double eps = attr_float(c->node, "epsilon", 1e-5f);
    bool relu = c->state && *(const bool *)c->state;
    CUDA_DISPATCH_FLOATS(x->dtype, bn_launch, c, x, y, prm, eps, nch, inner, relu)
    return onyx_error(ONYX_ERR_UNSUPPORTED, "BatchNormalization: type %d on CUDA", (int)x->dtype);
}

bool cuda_lrn_supports(const kernel_prep *p) {
    const type_info *x = p->in_type[0];
    return static_float(x) && x->rank >= 2 && attr_int(p->node, "size", 0) > 0;
}

onyx_status cuda_lrn_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    if (x->rank < 2)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 has rank %d, expected at least 2", x->rank);
    int64_t size = attr_int(c->node, "size", 0);
    if (size <= 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute size is %lld, expected > 0",
                          (long long)size);
    if (x->numel == 0) return ONYX_OK;
    int64_t ch = x->dims[1], inner = x->numel / (x->dims[0] * ch);
    // ONNX divides alpha by the window size (as the CPU kernel does)
    double an = attr_float(c->node, "alpha", 1e-4f) / (double)size;
    double bias = attr_float(c->node, "bias", 1.0f), beta = attr_float(c->node, "beta", 0.75f);
    CUDA_DISPATCH_FLOATS(x->dtype, lrn_launch, c, x, y, ch, inner, size, an, bias, beta)
    return onyx_error(ONYX_ERR_UNSUPPORTED, "LRN: type %d on CUDA", (int)x->dtype);
}
