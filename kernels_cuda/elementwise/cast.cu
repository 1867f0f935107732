// CUDA Cast and CastLike between the float, integer and bool types (as the CPU kernel converts:
// through double / int64 / uint64), and Where.
#include "kernels_cuda/elementwise/ew.cuh"

namespace {

#define CAST_TYPES (DT_NUMERIC | DT_BIT(ONYX_BOOL))

// NaN and out-of-range give INT64_MIN, as x86's conversion (and so numpy, and the CPU) does.
__device__ __forceinline__ int64_t f64_to_i64(double x) {
    if (!(x > -9223372036854775808.0 && x < 9223372036854775808.0)) return INT64_MIN;
    return (int64_t)x;
}
// Negative values wrap through int64 (numpy: -1.0 -> 2^64-1).
__device__ __forceinline__ uint64_t f64_to_u64(double x) {
    if (x >= 0 && x < 18446744073709551616.0) return (uint64_t)x;
    return (uint64_t)f64_to_i64(x);
}

// The CPU's canonical value of a source element: double for floats, int64 for signed integers
// and bool, uint64 for unsigned integers (C is the loader's compute type).
template <class C> __device__ __forceinline__ auto canonical(C v) {
    if constexpr (std::is_same<C, bool>::value) return (int64_t)(v ? 1 : 0);
    else if constexpr (std::is_floating_point<C>::value) return (double)v;
    else if constexpr (std::is_signed<C>::value) return (int64_t)v;
    else return (uint64_t)v;
}

// Canonical value to target D: integers wrap (the high bits dropped, as the spec says), floats
// round once to nearest even, bool is != 0 (NaN is true).
template <class D, class K> __device__ __forceinline__ D cast_to(K x) {
    if constexpr (std::is_same<D, bool>::value) return x != 0;
    else if constexpr (std::is_same<D, __half>::value) return __double2half((double)x);
    else if constexpr (std::is_same<D, __nv_bfloat16>::value) return __double2bfloat16((double)x);
    else if constexpr (std::is_floating_point<D>::value) return (D)x;
    else if constexpr (std::is_same<K, double>::value)
        return std::is_signed<D>::value ? (D)f64_to_i64(x) : (D)f64_to_u64(x);
    else return (D)(uint64_t)x;
}

template <class D, class S> __device__ __forceinline__ void cast_loop(D *y, const S *x, int64_t n) {
    const ld<S> l{x};
    CUDA_GRID_LOOP(i, n) y[i] = cast_to<D>(canonical(l[i]));
}

// One kernel per target; the source type is a switch outside the loop.
template <class D>
__global__ void __launch_bounds__(CUDA_THREADS) k_cast(D *y, const void *x, int from, int64_t n) {
    switch (from) {
#define CAST_CASE(DT)                                                                              \
    case DT: cast_loop(y, (const dtype_type<DT>::type *)x, n); break;
        CAST_CASE(ONYX_FLOAT)
        CAST_CASE(ONYX_DOUBLE)
        CAST_CASE(ONYX_FLOAT16)
        CAST_CASE(ONYX_BFLOAT16)
        CAST_CASE(ONYX_INT8)
        CAST_CASE(ONYX_INT16)
        CAST_CASE(ONYX_INT32)
        CAST_CASE(ONYX_INT64)
        CAST_CASE(ONYX_UINT8)
        CAST_CASE(ONYX_UINT16)
        CAST_CASE(ONYX_UINT32)
        CAST_CASE(ONYX_UINT64)
        CAST_CASE(ONYX_BOOL)
#undef CAST_CASE
    default: break;
    }
}

// Cast and CastLike (whose input 1 only gives the type, which is the output's).
onyx_status run_cast(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    if (!x || !y) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "%s: input or output 0 is missing",
                                    c->node->op_type);
    if (x->numel != y->numel)
        return onyx_error(ONYX_ERR_SHAPE, "%s: output has %lld elements, input %lld",
                          c->node->op_type, (long long)y->numel, (long long)x->numel);
    if (!dtype_in(x->dtype, CAST_TYPES))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "%s: from type %d on CUDA", c->node->op_type,
                          (int)x->dtype);
    if (x->dtype == y->dtype) return copy_through(c, x, y);
    if (x->numel == 0) return ONYX_OK;
    return dispatch<CAST_TYPES>(y->dtype, [&](auto t) -> onyx_status {
        typedef typename decltype(t)::type D;
        k_cast<D><<<cuda_blocks(x->numel), CUDA_THREADS, 0, cuda_stream(c)>>>(
            cuda_data<D>(y), x->data, (int)x->dtype, x->numel);
        return cuda_launched(c->node->op_type);
    });
}

// float8, float6, 4- and 2-bit types, strings and complex stay on the CPU (saturate and round_mode
// only matter for float8 targets), so Cast-28 (the float6 types added) runs here as Cast-25.
bool sup_cast(const kernel_prep *p) {
    return tensors_ok(p, 1, false) && dtype_in(p->in_type[0]->dtype, CAST_TYPES) &&
           dtype_in(p->out_type[0].dtype, CAST_TYPES);
}

// ---- Where: pure selection, so one kernel per element size serves every type.

template <class T>
__global__ void __launch_bounds__(CUDA_THREADS)
    k_where(T *y, ld<bool> cond, const T *a, const T *b, int64_t n, plan p) {
    if (p.mode == M_SAME) {
        CUDA_GRID_LOOP(i, n) y[i] = cond[i] ? a[i] : b[i];
    } else {
        CUDA_GRID_LOOP(i, n) {
            uint32_t o[3];
            bcast_offsets<3, uint32_t>(p.b, (uint32_t)i, o);
            y[i] = cond[o[0]] ? a[o[1]] : b[o[2]];
        }
    }
}

template <class T> onyx_status launch_where(const kernel_call *c, const tensor *const *in,
                                            tensor *y) {
    plan p;
    if (!plan_init(&p, y, in, 3))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "Where: broadcast beyond %d dims or 2^31 "
                          "elements on CUDA", CUDA_MAX_RANK);
    k_where<T><<<cuda_blocks(y->numel), CUDA_THREADS, 0, cuda_stream(c)>>>(
        cuda_data<T>(y), ld<bool>{cuda_data<bool>(in[0])}, cuda_data<T>(in[1]),
        cuda_data<T>(in[2]), y->numel, p);
    return cuda_launched("Where");
}

onyx_status run_where(const kernel_call *c) {
    const tensor *in[3] = {kernel_input(c, 0), kernel_input(c, 1), kernel_input(c, 2)};
    tensor *y = kernel_output(c, 0);
    if (!in[0] || !in[1] || !in[2] || !y)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "Where: an input or output is missing");
    if (y->numel == 0) return ONYX_OK;
    if (in[1]->dtype == ONYX_STRING)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "Where: strings on CUDA");
    switch (dtype_size(in[1]->dtype)) {
    case 1: return launch_where<uint8_t>(c, in, y);
    case 2: return launch_where<uint16_t>(c, in, y);
    case 4: return launch_where<uint32_t>(c, in, y);
    case 8: return launch_where<uint64_t>(c, in, y);
    default:
        return onyx_error(ONYX_ERR_UNSUPPORTED, "Where: element type %d on CUDA",
                          (int)in[1]->dtype);
    }
}

bool sup_where(const kernel_prep *p) {
    if (!tensors_ok(p, 3, false) || !plan_fits(p, 3)) return false;
    onyx_dtype d = p->in_type[1]->dtype;
    if (p->in_type[0]->dtype != ONYX_BOOL || p->in_type[2]->dtype != d) return false;
    if (d == ONYX_STRING || d == ONYX_COMPLEX64 || d == ONYX_COMPLEX128) return false;
    size_t s = dtype_size(d);
    return s == 1 || s == 2 || s == 4 || s == 8;
}

const kernel entries[] = {
    // domain, op, versions, device, dtypes, flags, prepare, run, release, fork, unfork,
    // supports, host_inputs
    {"", "Cast", 1, 28, DEVICE_CUDA, CAST_TYPES, 0, NULL, run_cast, NULL, NULL, NULL, sup_cast, 0},
    {"", "CastLike", 15, 25, DEVICE_CUDA, CAST_TYPES, 0, NULL, run_cast, NULL, NULL, NULL, sup_cast, 0},
    {"", "Where", 9, 16, DEVICE_CUDA, DT_BIT(ONYX_BOOL), 0, NULL, run_where, NULL, NULL, NULL, sup_where, 0},
};

} // namespace

const kernel *ew_cast_entries(size_t *count) {
    *count = sizeof entries / sizeof entries[0];
    return entries;
}
