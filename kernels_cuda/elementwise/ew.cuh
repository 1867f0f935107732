// Shared pieces of the CUDA elementwise kernels: dtype dispatch, element loaders, broadcast plans
// and the generic launches (one templated kernel per arity) that every op's functor goes through.
#ifndef ONYX_KERNELS_CUDA_ELEMENTWISE_EW_CUH
#define ONYX_KERNELS_CUDA_ELEMENTWISE_EW_CUH

#include <stdint.h>
#include <type_traits>

#include "kernels_cuda/common.cuh"

// The family's parts, each its own translation unit so that they compile in parallel; the family
// function (elementwise.cu) joins their tables.
const kernel *ew_unary_entries(size_t *count);
const kernel *ew_binary_entries(size_t *count);
const kernel *ew_cast_entries(size_t *count);

namespace {

template <class T> struct tag { typedef T type; };

// Calls f(tag<T>()) with T the element type of d when d is in the mask M; only those types are
// instantiated. bool is C++ bool (one byte), read through ld<bool> below.
template <dtype_mask M, class F> onyx_status dispatch(onyx_dtype d, F &&f) {
#define EW_CASE(D)                                                                                 \
    case D:                                                                                        \
        if constexpr ((M & DT_BIT(D)) != 0) { return f(tag<dtype_type<D>::type>()); }             \
        else { break; }
    switch (d) {
        EW_CASE(ONYX_FLOAT)
        EW_CASE(ONYX_DOUBLE)
        EW_CASE(ONYX_FLOAT16)
        EW_CASE(ONYX_BFLOAT16)
        EW_CASE(ONYX_INT8)
        EW_CASE(ONYX_INT16)
        EW_CASE(ONYX_INT32)
        EW_CASE(ONYX_INT64)
        EW_CASE(ONYX_UINT8)
        EW_CASE(ONYX_UINT16)
        EW_CASE(ONYX_UINT32)
        EW_CASE(ONYX_UINT64)
        EW_CASE(ONYX_BOOL)
    default: break;
    }
#undef EW_CASE
    return onyx_error(ONYX_ERR_UNSUPPORTED, "element type %d is not supported by this CUDA kernel",
                      (int)d);
}

// Unsigned type at least as wide as int, for integer arithmetic that wraps instead of
// overflowing a signed type (what the CPU kernels do).
template <class T> struct uwide_t {
    typedef typename std::conditional<(sizeof(T) > 4), uint64_t, uint32_t>::type type;
};
template <class T> using uwide = typename uwide_t<T>::type;

// Element i of a tensor in its compute type (float for the 16-bit floats).
template <class T> struct ld {
    const T *p;
    __device__ __forceinline__ typename compute<T>::type operator[](int64_t i) const {
        return to_compute(p[i]);
    }
};
// A bool is read as a byte != 0: a stored 2 must not be undefined behaviour.
template <> struct ld<bool> {
    const bool *p;
    __device__ __forceinline__ bool operator[](int64_t i) const {
        return reinterpret_cast<const uint8_t *>(p)[i] != 0;
    }
};

// Functor bases: bool_out says the op yields bool whatever its input type; make builds the
// functor from the node's attributes (none here).
template <class F> struct simple_op {
    static constexpr bool bool_out = false;
    static F make(const graph_node *) { return F(); }
};
template <class F> struct simple_pred {
    static constexpr bool bool_out = true;
    static F make(const graph_node *) { return F(); }
};

// ---- broadcast plans

enum { M_SAME, M_SCALAR_A, M_SCALAR_B, M_BCAST };

// How a launch indexes its inputs: all the output's shape (SAME), one a scalar and the other the
// output's shape (two-input ops), or general broadcasting over the collapsed dims in b. General
// broadcasting uses 32-bit index math (64-bit division costs much more, at run time and in
// compile time), so it takes outputs of at most INT32_MAX elements: supports declines larger.
struct plan {
    int mode;
    cuda_bcast b;
};

// Numpy broadcasting of in[0..n) to out. Output dims of 1 are dropped and neighbours that every
// input walks contiguously are merged ([N,C,H,W] + [1,C,1,1] -> [N,C,HW]), so the per-element
// index math touches as few dims as possible. False when more than CUDA_MAX_RANK dims remain or
// the output is too large for general broadcasting.
static inline bool plan_init(plan *p, const tensor *out, const tensor *const *in, int n) {
    p->b.rank = 0;
    bool same = true;
    for (int k = 0; k < n; k++) same = same && in[k]->numel == out->numel;
    if (same) {
        p->mode = M_SAME;
        return true;
    }
    if (n == 2 && in[0]->numel == 1 && in[1]->numel == out->numel) {
        p->mode = M_SCALAR_A;
        return true;
    }
    if (n == 2 && in[1]->numel == 1 && in[0]->numel == out->numel) {
        p->mode = M_SCALAR_B;
        return true;
    }
    p->mode = M_BCAST;
    if (out->numel > INT32_MAX) return false;
    int64_t dims[ONYX_MAX_RANK], st[3][ONYX_MAX_RANK], acc[3] = {1, 1, 1};
    int r = 0; // collected innermost first
    for (int d = out->rank - 1; d >= 0; d--) {
        int64_t s[3] = {0, 0, 0};
        for (int k = 0; k < n; k++) {
            int j = d - (out->rank - in[k]->rank);
            if (j >= 0 && in[k]->dims[j] != 1) {
                s[k] = acc[k];
                acc[k] *= in[k]->dims[j];
            }
        }
        if (out->dims[d] == 1) continue;
        bool merge = r > 0;
        for (int k = 0; k < n && merge; k++) merge = s[k] == st[k][r - 1] * dims[r - 1];
        if (merge) {
            dims[r - 1] *= out->dims[d];
            continue;
        }
        dims[r] = out->dims[d];
        for (int k = 0; k < 3; k++) st[k][r] = s[k];
        r++;
    }
    if (r > CUDA_MAX_RANK) return false;
    p->b.rank = r;
    for (int d = 0; d < CUDA_MAX_RANK; d++) {
        p->b.dims[d] = d < r ? dims[r - 1 - d] : 1;
        for (int k = 0; k < 3; k++) p->b.stride[k][d] = d < r ? st[k][r - 1 - d] : 0;
    }
    return true;
}

// Offsets of output element i in the first N inputs (plan mode M_BCAST, rank >= 1). The
// outermost dim needs no division: what is left of i is its index.
template <int N, class I>
__device__ __forceinline__ void bcast_offsets(const cuda_bcast &b, I i, I (&off)[N]) {
#pragma unroll
    for (int k = 0; k < N; k++) off[k] = 0;
    for (int d = b.rank - 1; d > 0; d--) {
        I dim = (I)b.dims[d];
        I q = i / dim;
        I r = i - q * dim;
#pragma unroll
        for (int k = 0; k < N; k++) off[k] += r * (I)b.stride[k][d];
        i = q;
    }
#pragma unroll
    for (int k = 0; k < N; k++) off[k] += i * (I)b.stride[k][0];
}

// ---- kernels

template <class TO, class L, class Op>
__global__ void __launch_bounds__(CUDA_THREADS) k_map1(Op op, TO *y, L x, int64_t n) {
    CUDA_GRID_LOOP(i, n) y[i] = from_compute<TO>(op(x[i]));
}

template <class Op>
__global__ void __launch_bounds__(CUDA_THREADS)
    k_map1_f4(Op op, float4 *y, const float4 *x, int64_t n4) {
    CUDA_GRID_LOOP(i, n4) {
        float4 v = x[i];
        v.x = op(v.x);
        v.y = op(v.y);
        v.z = op(v.z);
        v.w = op(v.w);
        y[i] = v;
    }
}

// y may be a's buffer (variadic folds): each element is read before it is written. Outside
// M_BCAST each input is the output's shape (step 1) or a scalar (step 0).
template <class TO, class LA, class LB, class Op>
__global__ void __launch_bounds__(CUDA_THREADS)
    k_map2(Op op, TO *y, LA a, LB b, int64_t n, plan p) {
    if (p.mode != M_BCAST) {
        const int64_t sa = p.mode != M_SCALAR_A, sb = p.mode != M_SCALAR_B;
        CUDA_GRID_LOOP(i, n) y[i] = from_compute<TO>(op(a[i * sa], b[i * sb]));
    } else {
        CUDA_GRID_LOOP(i, n) {
            uint32_t o[2];
            bcast_offsets<2, uint32_t>(p.b, (uint32_t)i, o);
            y[i] = from_compute<TO>(op(a[o[0]], b[o[1]]));
        }
    }
}

// float operands and result, no general broadcast, 16-byte aligned, numel % 4 == 0.
template <class Op>
__global__ void __launch_bounds__(CUDA_THREADS)
    k_map2_f4(Op op, float4 *y, const float *a, const float *b, int64_t n4, int mode) {
    const float4 *a4 = reinterpret_cast<const float4 *>(a);
    const float4 *b4 = reinterpret_cast<const float4 *>(b);
    if (mode == M_SAME) {
        CUDA_GRID_LOOP(i, n4) {
            float4 u = a4[i], v = b4[i];
            y[i] = make_float4(op(u.x, v.x), op(u.y, v.y), op(u.z, v.z), op(u.w, v.w));
        }
    } else if (mode == M_SCALAR_A) {
        const float s = a[0];
        CUDA_GRID_LOOP(i, n4) {
            float4 v = b4[i];
            y[i] = make_float4(op(s, v.x), op(s, v.y), op(s, v.z), op(s, v.w));
        }
    } else {
        const float s = b[0];
        CUDA_GRID_LOOP(i, n4) {
            float4 u = a4[i];
            y[i] = make_float4(op(u.x, s), op(u.y, s), op(u.z, s), op(u.w, s));
        }
    }
}

// 16-bit floats eight at a time: 16-byte loads and stores (two-byte ones leave much of the
// memory bandwidth unused).
template <class T> struct alignas(16) pack16 {
    T v[16 / sizeof(T)];
};

template <class T> struct is_half16 {
    static constexpr bool value =
        std::is_same<T, __half>::value || std::is_same<T, __nv_bfloat16>::value;
};

template <class T, class Op>
__global__ void __launch_bounds__(CUDA_THREADS)
    k_map1_h8(Op op, pack16<T> *y, const pack16<T> *x, int64_t nv) {
    CUDA_GRID_LOOP(i, nv) {
        pack16<T> a = x[i];
#pragma unroll
        for (int j = 0; j < 8; j++) a.v[j] = from_compute<T>(op(to_compute(a.v[j])));
        y[i] = a;
    }
}

// Modes as k_map2_f4's.
template <class T, class Op>
__global__ void __launch_bounds__(CUDA_THREADS)
    k_map2_h8(Op op, pack16<T> *y, const T *a, const T *b, int64_t nv, int mode) {
    const pack16<T> *a8 = reinterpret_cast<const pack16<T> *>(a);
    const pack16<T> *b8 = reinterpret_cast<const pack16<T> *>(b);
    if (mode == M_SAME) {
        CUDA_GRID_LOOP(i, nv) {
            pack16<T> u = a8[i], v = b8[i];
#pragma unroll
            for (int j = 0; j < 8; j++)
                u.v[j] = from_compute<T>(op(to_compute(u.v[j]), to_compute(v.v[j])));
            y[i] = u;
        }
    } else if (mode == M_SCALAR_A) {
        const auto s = to_compute(a[0]);
        CUDA_GRID_LOOP(i, nv) {
            pack16<T> v = b8[i];
#pragma unroll
            for (int j = 0; j < 8; j++) v.v[j] = from_compute<T>(op(s, to_compute(v.v[j])));
            y[i] = v;
        }
    } else {
        const auto s = to_compute(b[0]);
        CUDA_GRID_LOOP(i, nv) {
            pack16<T> u = a8[i];
#pragma unroll
            for (int j = 0; j < 8; j++) u.v[j] = from_compute<T>(op(to_compute(u.v[j]), s));
            y[i] = u;
        }
    }
}

// ---- launches

static inline bool aligned16(const void *p) { return ((uintptr_t)p & 15) == 0; }

template <class TO, class L, class Op>
onyx_status map1(const kernel_call *c, const Op &op, TO *y, L x, int64_t n) {
    if (n == 0) return ONYX_OK;
    cudaStream_t s = cuda_stream(c);
    if constexpr (std::is_same<TO, float>::value && std::is_same<L, ld<float>>::value) {
        if ((n & 3) == 0 && aligned16(y) && aligned16(x.p)) {
            k_map1_f4<<<cuda_blocks(n >> 2), CUDA_THREADS, 0, s>>>(
                op, reinterpret_cast<float4 *>(y), reinterpret_cast<const float4 *>(x.p), n >> 2);
            return cuda_launched(c->node->op_type);
        }
    }
    if constexpr (is_half16<TO>::value && std::is_same<L, ld<TO>>::value) {
        if ((n & 7) == 0 && aligned16(y) && aligned16(x.p)) {
            k_map1_h8<<<cuda_blocks(n >> 3), CUDA_THREADS, 0, s>>>(
                op, reinterpret_cast<pack16<TO> *>(y), reinterpret_cast<const pack16<TO> *>(x.p),
                n >> 3);
            return cuda_launched(c->node->op_type);
        }
    }
    k_map1<<<cuda_blocks(n), CUDA_THREADS, 0, s>>>(op, y, x, n);
    return cuda_launched(c->node->op_type);
}

// out = op(a, b) with a and b broadcast to out's shape; la and lb load their elements.
template <class TO, class LA, class LB, class Op>
onyx_status map2(const kernel_call *c, const Op &op, tensor *out, const tensor *a, LA la,
                 const tensor *b, LB lb) {
    int64_t n = out->numel;
    if (n == 0) return ONYX_OK;
    plan p;
    const tensor *in[2] = {a, b};
    if (!plan_init(&p, out, in, 2))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "%s: broadcast beyond %d dims or 2^31 elements "
                          "on CUDA", c->node->op_type, CUDA_MAX_RANK);
    TO *y = cuda_data<TO>(out);
    cudaStream_t s = cuda_stream(c);
    if constexpr (std::is_same<TO, float>::value && std::is_same<LA, ld<float>>::value &&
                  std::is_same<LB, ld<float>>::value) {
        if (p.mode != M_BCAST && (n & 3) == 0 && aligned16(y) &&
            (p.mode == M_SCALAR_A || aligned16(la.p)) && (p.mode == M_SCALAR_B || aligned16(lb.p))) {
            k_map2_f4<<<cuda_blocks(n >> 2), CUDA_THREADS, 0, s>>>(
                op, reinterpret_cast<float4 *>(y), la.p, lb.p, n >> 2, p.mode);
            return cuda_launched(c->node->op_type);
        }
    }
    if constexpr (is_half16<TO>::value && std::is_same<LA, ld<TO>>::value &&
                  std::is_same<LB, ld<TO>>::value) {
        if (p.mode != M_BCAST && (n & 7) == 0 && aligned16(y) &&
            (p.mode == M_SCALAR_A || aligned16(la.p)) &&
            (p.mode == M_SCALAR_B || aligned16(lb.p))) {
            k_map2_h8<<<cuda_blocks(n >> 3), CUDA_THREADS, 0, s>>>(
                op, reinterpret_cast<pack16<TO> *>(y), la.p, lb.p, n >> 3, p.mode);
            return cuda_launched(c->node->op_type);
        }
    }
    k_map2<<<cuda_blocks(n), CUDA_THREADS, 0, s>>>(op, y, la, lb, n, p);
    return cuda_launched(c->node->op_type);
}

// ---- supports helpers

// Inputs [0, n_in) present as tensors of rank <= CUDA_MAX_RANK (with input 0's dtype when
// same_dtype), outputs of rank <= CUDA_MAX_RANK.
static inline bool tensors_ok(const kernel_prep *p, int n_in, bool same_dtype) {
    if (p->n_in < n_in) return false;
    for (int i = 0; i < n_in; i++) {
        const type_info *t = p->in_type[i];
        if (!t || t->kind != ONYX_VALUE_TENSOR || t->rank < 0 || t->rank > CUDA_MAX_RANK)
            return false;
        if (same_dtype && t->dtype != p->in_type[0]->dtype) return false;
    }
    for (int o = 0; o < p->n_out; o++) {
        const type_info *t = &p->out_type[o];
        if (t->kind != ONYX_VALUE_TENSOR || t->rank < 0 || t->rank > CUDA_MAX_RANK) return false;
    }
    return true;
}

static inline int64_t type_numel(const type_info *t) {
    int64_t n = 1;
    for (int d = 0; d < t->rank; d++) n *= t->dims[d] < 0 ? 0 : t->dims[d];
    return n;
}

// Whether plan_init takes these shapes: past INT32_MAX output elements only inputs of the
// output's size (or, with two inputs, a scalar) index without the 32-bit broadcast math.
static inline bool plan_fits(const kernel_prep *p, int n_in) {
    int64_t n = type_numel(&p->out_type[0]);
    if (n <= INT32_MAX) return true;
    for (int i = 0; i < n_in; i++) {
        int64_t m = type_numel(p->in_type[i]);
        if (m != n && !(n_in == 2 && m == 1)) return false;
    }
    return true;
}

// Opset < 7 two-input ops with broadcast=1 use the legacy axis-aligned broadcast: CPU only.
static inline bool legacy_broadcast(const kernel_prep *p) {
    return p->node->version < 7 && attr_int(p->node, "broadcast", 0) != 0;
}

// Output 0 takes input 0's data unchanged (one-input variadic ops, same-type casts).
static inline onyx_status copy_through(const kernel_call *c, const tensor *x, tensor *y) {
    if (x->data == y->data || x->nbytes == 0) return ONYX_OK;
    return cuda_status(cudaMemcpyAsync(y->data, x->data, x->nbytes, cudaMemcpyDeviceToDevice,
                                       cuda_stream(c)),
                       c->node->op_type);
}

} // namespace

#endif
