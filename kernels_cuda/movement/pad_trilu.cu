// Pad (constant, reflect, edge, wrap; negative pads crop; the pads and mode the node's schema
// resolved for the plan, core/op_params.h) and Trilu on CUDA: one thread per output element, each
// reading the input element its coordinates map to.
#include <string.h>

#include "kernels_cuda/movement/movement.cuh"

namespace {

// ---------------------------------------------------------------- Pad

struct pad_params {
    int rank, mode;
    int64_t ydims[CUDA_MAX_RANK];
    int64_t xst[CUDA_MAX_RANK];
    int64_t lo[CUDA_MAX_RANK];   // where the (cropped) input starts in the output
    int64_t len[CUDA_MAX_RANK];  // its length after cropping
    int64_t crop[CUDA_MAX_RANK]; // input elements cropped at the start
};

// Interior coordinate that interior-relative coordinate x (outside [0, n)) reads, as the CPU.
__device__ __forceinline__ int64_t source_index(int mode, int64_t x, int64_t n) {
    if (mode == GEOM_PAD_EDGE) return x < 0 ? 0 : x >= n ? n - 1 : x;
    if (mode == GEOM_PAD_WRAP) return ((x % n) + n) % n;
    if (n == 1) return 0;
    int64_t period = 2 * (n - 1), m = (x < 0 ? -x : x) % period;
    return m >= n ? period - m : m;
}

template <typename T, typename I>
__device__ __forceinline__ void pad_body(T *__restrict__ y, const T *__restrict__ x,
                                         const pad_params &p, T value, I n) {
    for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (I)gridDim.x * blockDim.x) {
        I rem = i;
        int64_t off = 0;
        bool inside = true;
        for (int k = p.rank - 1; k >= 0; k--) {
            I d = (I)p.ydims[k];
            I q = rem / d;
            int64_t xk = (int64_t)(rem - q * d) - p.lo[k];
            rem = q;
            if (xk < 0 || xk >= p.len[k]) {
                if (p.mode == GEOM_PAD_CONSTANT) {
                    inside = false;
                    break;
                }
                xk = source_index(p.mode, xk, p.len[k]);
            }
            off += (p.crop[k] + xk) * p.xst[k];
        }
        y[i] = inside ? x[off] : value;
    }
}

template <typename T>
__global__ void pad_kernel(T *__restrict__ y, const T *__restrict__ x, pad_params p, T value,
                           int64_t n) {
    if (n <= INT32_MAX) pad_body<T, uint32_t>(y, x, p, value, (uint32_t)n);
    else pad_body<T, int64_t>(y, x, p, value, n);
}

struct pad_launch {
    template <typename T>
    static onyx_status run(const kernel_call *c, const tensor *x, tensor *y, const pad_params *p,
                           const unsigned char *value) {
        T v;
        memcpy(&v, value, sizeof v);
        pad_kernel<T><<<cuda_blocks(y->numel), CUDA_THREADS, 0, cuda_stream(c)>>>(
            (T *)y->data, (const T *)x->data, *p, v, y->numel);
        return cuda_launched("Pad");
    }
};

// A number as one element of dtype d, as the CPU's cpu_scalar_from_double (Pad before v11).
bool scalar_from_double(onyx_dtype d, double v, unsigned char *out) {
    int64_t i = v != v                        ? 0
                : v >= 9223372036854775807.0  ? INT64_MAX
                : v <= -9223372036854775808.0 ? INT64_MIN
                                              : (int64_t)v;
    switch (d) {
#define CASE(D, T, SRC)                                                                            \
    case D: {                                                                                      \
        T x = (T)SRC;                                                                              \
        memcpy(out, &x, sizeof x);                                                                 \
        return true;                                                                               \
    }
        CASE(ONYX_FLOAT, float, v)
        CASE(ONYX_DOUBLE, double, v)
        CASE(ONYX_INT8, int8_t, i)
        CASE(ONYX_INT16, int16_t, i)
        CASE(ONYX_INT32, int32_t, i)
        CASE(ONYX_INT64, int64_t, i)
        CASE(ONYX_UINT8, uint8_t, i)
        CASE(ONYX_UINT16, uint16_t, i)
        CASE(ONYX_UINT32, uint32_t, i)
        CASE(ONYX_UINT64, uint64_t, i)
#undef CASE
    case ONYX_BOOL: *out = v != 0; return true;
    case ONYX_FLOAT16: {
        __half h = __float2half_rn((float)v);
        memcpy(out, &h, sizeof h);
        return true;
    }
    case ONYX_BFLOAT16: {
        __nv_bfloat16 h = __float2bfloat16_rn((float)v);
        memcpy(out, &h, sizeof h);
        return true;
    }
    default: return false;
    }
}

} // namespace

bool mv_pad_supports(const kernel_prep *p) {
    const type_info *x = p->in_type[0];
    if (!mv_ranks_ok(p) || !mv_size_ok(x->dtype)) return false;
    if (p->node->version < 11) {
        unsigned char v[16];
        return scalar_from_double(x->dtype, 0.0, v);
    }
    const type_info *cv = p->n_in > 2 ? p->in_type[2] : NULL;
    return !cv || cv->dtype == x->dtype;
}

onyx_status mv_pad_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    // the pads as the node's schema resolved them for the plan; inputs 1 and 3 stay on the host
    // for that inference, which a run whose pads are not constant does again
    const geom_pads *pd;
    TRY(kernel_pads(c->params, &pd));
    int r = x->rank, mode = pd->mode;
    bool fits = r <= CUDA_MAX_RANK && pd->rank == r && y->rank == r;
    for (int k = 0; k < r && fits; k++)
        fits = x->dims[k] == pd->in[k] && y->dims[k] == pd->out[k];
    if (!fits) return onyx_error(ONYX_ERR_RUNTIME, "Pad: the plan's pads are for other dims");
    size_t es = dtype_size(x->dtype);
    unsigned char value[16];
    memset(value, 0, sizeof value);
    if (mode == GEOM_PAD_CONSTANT) {
        if (c->node->version < 11) {
            if (!scalar_from_double(x->dtype, attr_float(c->node, "value", 0.0f), value))
                return onyx_error(ONYX_ERR_UNSUPPORTED, "Pad: a value of type %d", (int)x->dtype);
        } else {
            const tensor *v = kernel_input(c, 2);
            if (v && v->numel > 0) {
                if (v->dtype != x->dtype || v->device != DEVICE_CPU)
                    return onyx_error(ONYX_ERR_SHAPE, "Pad: constant_value has type %d, "
                                      "expected %d", (int)v->dtype, (int)x->dtype);
                memcpy(value, v->data, es);
            }
        }
    }
    if (y->numel == 0) return ONYX_OK;
    pad_params p;
    memset(&p, 0, sizeof p);
    p.rank = r;
    p.mode = mode;
    mv_strides(r, x->dims, p.xst);
    bool empty = false;
    for (int k = 0; k < r; k++) {
        p.ydims[k] = y->dims[k];
        p.lo[k] = pd->at[k];
        p.crop[k] = pd->crop[k];
        p.len[k] = pd->kept[k];
        if (p.len[k] <= 0) empty = true;
    }
    if (empty) {
        if (mode != GEOM_PAD_CONSTANT)
            return onyx_error(ONYX_ERR_RUNTIME, "Pad: cannot pad an empty input in this mode");
        for (int k = 0; k < r; k++) p.len[k] = 0; /* every element is the value */
    }
    return mv_by_size<pad_launch>(es, c, x, y, (const pad_params *)&p,
                                  (const unsigned char *)value);
}

// ---------------------------------------------------------------- Trilu

namespace {

template <typename T, typename I>
__device__ __forceinline__ void trilu_body(T *__restrict__ y, const T *__restrict__ x, I rows,
                                           I cols, int64_t k, bool upper, I n) {
    for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (I)gridDim.x * blockDim.x) {
        I q = i / cols;
        int64_t j = (int64_t)(i - q * cols), edge = (int64_t)(q % rows) + k;
        bool keep = upper ? j >= edge : j <= edge; /* upper keeps j >= i + k, lower j <= i + k */
        y[i] = keep ? x[i] : T();
    }
}

template <typename T>
__global__ void trilu_kernel(T *__restrict__ y, const T *__restrict__ x, int64_t rows,
                             int64_t cols, int64_t k, bool upper, int64_t n) {
    if (n <= INT32_MAX)
        trilu_body<T, uint32_t>(y, x, (uint32_t)rows, (uint32_t)cols, k, upper, (uint32_t)n);
    else
        trilu_body<T, int64_t>(y, x, rows, cols, k, upper, n);
}

struct trilu_launch {
    template <typename T>
    static onyx_status run(const kernel_call *c, const tensor *x, tensor *y, int64_t rows,
                           int64_t cols, int64_t k, bool upper) {
        trilu_kernel<T><<<cuda_blocks(y->numel), CUDA_THREADS, 0, cuda_stream(c)>>>(
            (T *)y->data, (const T *)x->data, rows, cols, k, upper, y->numel);
        return cuda_launched("Trilu");
    }
};

} // namespace

bool mv_trilu_supports(const kernel_prep *p) {
    const type_info *x = p->in_type[0];
    return mv_ranks_ok(p) && mv_size_ok(x->dtype) && x->rank >= 2;
}

onyx_status mv_trilu_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0), *kt = kernel_input(c, 1);
    tensor *y = kernel_output(c, 0);
    bool upper = attr_int(c->node, "upper", 1) != 0;
    if (x->rank < 2) return onyx_error(ONYX_ERR_SHAPE, "Trilu: input has rank %d", x->rank);
    if (y->numel != x->numel || y->dtype != x->dtype)
        return onyx_error(ONYX_ERR_SHAPE, "Trilu: output does not match the input");
    int64_t k = 0;
    if (kt && kt->numel > 0) {
        size_t n;
        TRY(mv_read_ints(kt, 1, &k, 1, &n));
    }
    int64_t rows = x->dims[x->rank - 2], cols = x->dims[x->rank - 1];
    if (y->numel == 0) return ONYX_OK;
    /* past these bounds every row is all kept or all cleared: clamping avoids i + k overflow */
    int64_t bound = rows + cols + 1;
    k = k < -bound ? -bound : k > bound ? bound : k;
    return mv_by_size<trilu_launch>(dtype_size(x->dtype), c, x, y, rows, cols, k, upper);
}
