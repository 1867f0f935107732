// CUDA one-input elementwise ops: float math and activations (float16/bfloat16 computed in
// float), the integer forms of Abs/Neg/Sign/Relu, IsNaN/IsInf, Not, BitwiseNot and Clip.
#include <float.h>
#include <string.h>

#include "kernels_cuda/elementwise/ew.cuh"

namespace {

// float and double overloads of the libm functions, so one functor body serves both.
#define EW_MATH1(name)                                                                             \
    __device__ __forceinline__ float m_##name(float x) { return name##f(x); }                      \
    __device__ __forceinline__ double m_##name(double x) { return name(x); }
EW_MATH1(fabs)
EW_MATH1(exp)
EW_MATH1(expm1)
EW_MATH1(log)
EW_MATH1(log1p)
EW_MATH1(sqrt)
EW_MATH1(floor)
EW_MATH1(ceil)
EW_MATH1(rint)
EW_MATH1(sin)
EW_MATH1(cos)
EW_MATH1(tan)
EW_MATH1(asin)
EW_MATH1(acos)
EW_MATH1(atan)
EW_MATH1(sinh)
EW_MATH1(cosh)
EW_MATH1(asinh)
EW_MATH1(acosh)
EW_MATH1(atanh)
EW_MATH1(erf)
EW_MATH1(erfc)
EW_MATH1(tanh)
#undef EW_MATH1

// e^-x overflowing to inf still gives the right 0.
template <class C> __device__ __forceinline__ C sigmoid(C x) { return C(1) / (C(1) + m_exp(-x)); }
template <class C> __device__ __forceinline__ C softplus(C x) {
    return (x > C(0) ? x : C(0)) + m_log1p(m_exp(-m_fabs(x)));
}

#define EW_FLOAT_OP(name, expr)                                                                    \
    struct op_##name : simple_op<op_##name> {                                                      \
        template <class C> __device__ __forceinline__ C operator()(C x) const { return expr; }     \
    };
EW_FLOAT_OP(exp, m_exp(x))
EW_FLOAT_OP(log, m_log(x))
EW_FLOAT_OP(sqrt, m_sqrt(x))
EW_FLOAT_OP(reciprocal, C(1) / x)
EW_FLOAT_OP(floor, m_floor(x))
EW_FLOAT_OP(ceil, m_ceil(x))
EW_FLOAT_OP(round, m_rint(x)) // the default rounding mode: half to even
EW_FLOAT_OP(sin, m_sin(x))
EW_FLOAT_OP(cos, m_cos(x))
EW_FLOAT_OP(tan, m_tan(x))
EW_FLOAT_OP(asin, m_asin(x))
EW_FLOAT_OP(acos, m_acos(x))
EW_FLOAT_OP(atan, m_atan(x))
EW_FLOAT_OP(sinh, m_sinh(x))
EW_FLOAT_OP(cosh, m_cosh(x))
EW_FLOAT_OP(asinh, m_asinh(x))
EW_FLOAT_OP(acosh, m_acosh(x))
EW_FLOAT_OP(atanh, m_atanh(x))
EW_FLOAT_OP(erf, m_erf(x))
EW_FLOAT_OP(tanh, m_tanh(x))
EW_FLOAT_OP(sigmoid, sigmoid(x))
EW_FLOAT_OP(softplus, softplus(x))
EW_FLOAT_OP(softsign, x / (C(1) + m_fabs(x)))
EW_FLOAT_OP(mish, x *m_tanh(softplus(x)))
EW_FLOAT_OP(hardswish, x *(x / C(6) + C(0.5) < C(0)   ? C(0)
                           : x / C(6) + C(0.5) > C(1) ? C(1)
                                                      : x / C(6) + C(0.5)))
#undef EW_FLOAT_OP

// Ops that also take integers: signed ones wrap like the CPU (negating MIN gives MIN).
struct op_abs : simple_op<op_abs> {
    template <class C> __device__ __forceinline__ C operator()(C x) const {
        if constexpr (std::is_floating_point<C>::value) return m_fabs(x);
        else if constexpr (std::is_signed<C>::value)
            return x < 0 ? (C)(uwide<C>(0) - (uwide<C>)x) : x;
        else return x;
    }
};
struct op_neg : simple_op<op_neg> {
    template <class C> __device__ __forceinline__ C operator()(C x) const {
        if constexpr (std::is_floating_point<C>::value) return -x;
        else return (C)(uwide<C>(0) - (uwide<C>)x);
    }
};
// NaN keeps NaN and zeros keep their sign, like numpy.sign.
struct op_sign : simple_op<op_sign> {
    template <class C> __device__ __forceinline__ C operator()(C x) const {
        if constexpr (std::is_floating_point<C>::value) return x > 0 ? C(1) : x < 0 ? C(-1) : x;
        else if constexpr (std::is_signed<C>::value) return (C)((x > 0) - (x < 0));
        else return (C)(x > 0);
    }
};
struct op_relu : simple_op<op_relu> {
    template <class C> __device__ __forceinline__ C operator()(C x) const {
        if constexpr (std::is_floating_point<C>::value) return x < C(0) ? C(0) : x;
        else return x > 0 ? x : C(0);
    }
};
struct op_bitwise_not : simple_op<op_bitwise_not> {
    template <class C> __device__ __forceinline__ C operator()(C x) const { return (C)~x; }
};
struct op_not : simple_pred<op_not> {
    __device__ __forceinline__ bool operator()(bool x) const { return !x; }
};
struct op_isnan : simple_pred<op_isnan> {
    template <class C> __device__ __forceinline__ bool operator()(C x) const { return x != x; }
};

struct op_isinf {
    static constexpr bool bool_out = true;
    bool pos, neg;
    static op_isinf make(const graph_node *n) {
        return {attr_int(n, "detect_positive", 1) != 0, attr_int(n, "detect_negative", 1) != 0};
    }
    template <class C> __device__ __forceinline__ bool operator()(C x) const {
        return isinf(x) && (x > 0 ? pos : neg);
    }
};

// ---- activations with attributes (defaults as the CPU kernels read them)

struct op_leakyrelu {
    static constexpr bool bool_out = false;
    float a;
    static op_leakyrelu make(const graph_node *n) { return {attr_float(n, "alpha", 0.01f)}; }
    template <class C> __device__ __forceinline__ C operator()(C x) const {
        return x * (x < C(0) ? (C)a : C(1));
    }
};
struct op_elu {
    static constexpr bool bool_out = false;
    float a;
    static op_elu make(const graph_node *n) { return {attr_float(n, "alpha", 1.0f)}; }
    template <class C> __device__ __forceinline__ C operator()(C x) const {
        return x < C(0) ? (C)a * m_expm1(x) : x;
    }
};
struct op_celu {
    static constexpr bool bool_out = false;
    float a;
    static op_celu make(const graph_node *n) { return {attr_float(n, "alpha", 1.0f)}; }
    template <class C> __device__ __forceinline__ C operator()(C x) const {
        return x < C(0) ? (C)a * m_expm1(x / (C)a) : x;
    }
};
struct op_selu {
    static constexpr bool bool_out = false;
    float a, g;
    static op_selu make(const graph_node *n) {
        bool v1 = n->version < 6; // v1's defaults were rounded
        return {attr_float(n, "alpha", v1 ? 1.6732f : 1.67326319217681884765625f),
                attr_float(n, "gamma", v1 ? 1.0507f : 1.05070102214813232421875f)};
    }
    template <class C> __device__ __forceinline__ C operator()(C x) const {
        return (C)g * (x <= C(0) ? (C)a * m_expm1(x) : x);
    }
};
struct op_gelu {
    static constexpr bool bool_out = false;
    bool tanh_form;
    static op_gelu make(const graph_node *n) {
        return {strcmp(attr_string(n, "approximate", "none"), "tanh") == 0};
    }
    template <class C> __device__ __forceinline__ C operator()(C x) const {
        // 1 + erf z for negative z is erfc(-z), without the cancellation that loses the tail
        if (!tanh_form) return C(0.5) * x * m_erfc(x * C(-0.70710678118654752440));
        // 0.5 * (1 + tanh(z)) is sigmoid(2z), without the cancellation for negative z
        const C k = C(1.5957691216057307117597842397375); // 2 * sqrt(2 / pi)
        return x * sigmoid(k * (x + C(0.044715) * x * x * x));
    }
};
struct op_hardsigmoid {
    static constexpr bool bool_out = false;
    float a, b;
    static op_hardsigmoid make(const graph_node *n) {
        return {attr_float(n, "alpha", 0.2f), attr_float(n, "beta", 0.5f)};
    }
    template <class C> __device__ __forceinline__ C operator()(C x) const {
        C v = (C)a * x + (C)b;
        return v < C(0) ? C(0) : v > C(1) ? C(1) : v;
    }
};
struct op_swish {
    static constexpr bool bool_out = false;
    float a;
    static op_swish make(const graph_node *n) { return {attr_float(n, "alpha", 1.0f)}; }
    template <class C> __device__ __forceinline__ C operator()(C x) const {
        return x * sigmoid((C)a * x);
    }
};
struct op_thresholdedrelu {
    static constexpr bool bool_out = false;
    float a;
    static op_thresholdedrelu make(const graph_node *n) { return {attr_float(n, "alpha", 1.0f)}; }
    template <class C> __device__ __forceinline__ C operator()(C x) const {
        return x > (C)a ? x : C(0);
    }
};
struct op_shrink {
    static constexpr bool bool_out = false;
    float l, b;
    static op_shrink make(const graph_node *n) {
        return {attr_float(n, "lambd", 0.5f), attr_float(n, "bias", 0.0f)};
    }
    template <class C> __device__ __forceinline__ C operator()(C x) const {
        const C lc = (C)l, bc = (C)b;
        return x < -lc ? x + bc : x > lc ? x - bc : C(0);
    }
};

template <class Op, dtype_mask M> onyx_status run_unary(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    if (!x || !y) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "%s: input or output 0 is missing",
                                    c->node->op_type);
    const Op op = Op::make(c->node);
    return dispatch<M>(x->dtype, [&](auto t) -> onyx_status {
        typedef typename decltype(t)::type T;
        typedef typename std::conditional<Op::bool_out, bool, T>::type TO;
        return map1(c, op, cuda_data<TO>(y), ld<T>{cuda_data<T>(x)}, x->numel);
    });
}

bool sup_unary(const kernel_prep *p) { return tensors_ok(p, 1, true); }

bool sup_celu(const kernel_prep *p) {
    return tensors_ok(p, 1, true) && attr_float(p->node, "alpha", 1.0f) != 0;
}

// ---- Clip: max then min like numpy.clip (lo > hi gives hi everywhere, NaN stays NaN)

template <class C> struct op_clip {
    C lo, hi;
    bool has_lo, has_hi;
    __device__ __forceinline__ C operator()(C v) const {
        if (has_lo && v < lo) v = lo;
        if (has_hi && v > hi) v = hi;
        return v;
    }
};

// A bound as the kernel compares it: stored in the input's type first, as the CPU does.
template <class T> typename compute<T>::type host_compute(T v) {
    return (typename compute<T>::type)v;
}
template <> float host_compute<__half>(__half v) { return __half2float(v); }
template <> float host_compute<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }

template <class T> T host_from_float(float f) { return (T)f; }
template <> __half host_from_float<__half>(float f) { return __float2half_rn(f); }
template <> __nv_bfloat16 host_from_float<__nv_bfloat16>(float f) { return __float2bfloat16_rn(f); }

onyx_status run_clip(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    if (!x || !y) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "Clip: input or output 0 is missing");
    return dispatch<DT_NUMERIC>(x->dtype, [&](auto t) -> onyx_status {
        typedef typename decltype(t)::type T;
        typedef typename compute<T>::type C;
        op_clip<C> op{C(0), C(0), false, false};
        if (c->node->version < 11) {
            if constexpr (std::is_floating_point<C>::value) {
                op.lo = host_compute(host_from_float<T>(attr_float(c->node, "min", -FLT_MAX)));
                op.hi = host_compute(host_from_float<T>(attr_float(c->node, "max", FLT_MAX)));
                op.has_lo = op.has_hi = true;
            } else {
                return onyx_error(ONYX_ERR_UNSUPPORTED, "Clip-%d on integers", c->node->version);
            }
        } else {
            for (int i = 1; i <= 2; i++) {
                const tensor *b = kernel_input(c, i);
                if (!b || b->numel == 0) continue;
                if (b->numel != 1 || b->dtype != x->dtype || b->device != DEVICE_CPU)
                    return onyx_error(ONYX_ERR_SHAPE, "Clip: input %d is not one host %d element",
                                      i, (int)x->dtype);
                C v = host_compute(*(const T *)b->data);
                if (i == 1) op.lo = v, op.has_lo = true;
                else op.hi = v, op.has_hi = true;
            }
        }
        return map1(c, op, cuda_data<T>(y), ld<T>{cuda_data<T>(x)}, x->numel);
    });
}

// A shape that is known and holds at most one element.
bool at_most_one(const type_info *t) {
    int64_t n = 1;
    for (int d = 0; d < t->rank; d++) {
        if (t->dims[d] < 0) return false;
        n *= t->dims[d];
    }
    return n <= 1;
}

bool sup_clip(const kernel_prep *p) {
    if (!tensors_ok(p, 1, true)) return false;
    for (int i = 1; i < p->n_in; i++) {
        const type_info *t = p->in_type[i];
        if (!t) continue;
        if (i > 2 || t->kind != ONYX_VALUE_TENSOR || t->dtype != p->in_type[0]->dtype ||
            t->rank < 0 || !at_most_one(t))
            return false;
    }
    return true;
}

#define FL DT_FLOATS
#define UN(op, M) run_unary<op, M>
// Every elementwise kernel sizes and broadcasts its tensors at run (plan_init): a device
// plan may give it values whose shapes only the run knows.
#define RS KF_RUN_SHAPES
const kernel entries[] = {
    // domain, op, versions, device, dtypes, flags, prepare, run, release, fork, unfork,
    // supports, host_inputs
    {"", "Abs", 1, 13, DEVICE_CUDA, DT_NUMERIC, RS, NULL, UN(op_abs, DT_NUMERIC), NULL, NULL, NULL, sup_unary, 0},
    {"", "Neg", 1, 13, DEVICE_CUDA, FL | DT_SINTS, RS, NULL, UN(op_neg, FL | DT_SINTS), NULL, NULL, NULL, sup_unary, 0},
    {"", "Sign", 9, 13, DEVICE_CUDA, DT_NUMERIC, RS, NULL, UN(op_sign, DT_NUMERIC), NULL, NULL, NULL, sup_unary, 0},
    {"", "Relu", 1, 14, DEVICE_CUDA, FL | DT_SINTS, RS, NULL, UN(op_relu, FL | DT_SINTS), NULL, NULL, NULL, sup_unary, 0},
    {"", "Reciprocal", 1, 13, DEVICE_CUDA, FL, RS, NULL, UN(op_reciprocal, FL), NULL, NULL, NULL, sup_unary, 0},
    {"", "Sqrt", 1, 13, DEVICE_CUDA, FL, RS, NULL, UN(op_sqrt, FL), NULL, NULL, NULL, sup_unary, 0},
    {"", "Exp", 1, 13, DEVICE_CUDA, FL, RS, NULL, UN(op_exp, FL), NULL, NULL, NULL, sup_unary, 0},
    {"", "Log", 1, 13, DEVICE_CUDA, FL, RS, NULL, UN(op_log, FL), NULL, NULL, NULL, sup_unary, 0},
    {"", "Floor", 1, 13, DEVICE_CUDA, FL, RS, NULL, UN(op_floor, FL), NULL, NULL, NULL, sup_unary, 0},
    {"", "Ceil", 1, 13, DEVICE_CUDA, FL, RS, NULL, UN(op_ceil, FL), NULL, NULL, NULL, sup_unary, 0},
    {"", "Round", 11, 22, DEVICE_CUDA, FL, RS, NULL, UN(op_round, FL), NULL, NULL, NULL, sup_unary, 0},
    {"", "Erf", 9, 13, DEVICE_CUDA, FL, RS, NULL, UN(op_erf, FL), NULL, NULL, NULL, sup_unary, 0},
    {"", "Sin", 7, 22, DEVICE_CUDA, FL, RS, NULL, UN(op_sin, FL), NULL, NULL, NULL, sup_unary, 0},
    {"", "Cos", 7, 22, DEVICE_CUDA, FL, RS, NULL, UN(op_cos, FL), NULL, NULL, NULL, sup_unary, 0},
    {"", "Tan", 7, 22, DEVICE_CUDA, FL, RS, NULL, UN(op_tan, FL), NULL, NULL, NULL, sup_unary, 0},
    {"", "Asin", 7, 22, DEVICE_CUDA, FL, RS, NULL, UN(op_asin, FL), NULL, NULL, NULL, sup_unary, 0},
    {"", "Acos", 7, 22, DEVICE_CUDA, FL, RS, NULL, UN(op_acos, FL), NULL, NULL, NULL, sup_unary, 0},
    {"", "Atan", 7, 22, DEVICE_CUDA, FL, RS, NULL, UN(op_atan, FL), NULL, NULL, NULL, sup_unary, 0},
    {"", "Sinh", 9, 22, DEVICE_CUDA, FL, RS, NULL, UN(op_sinh, FL), NULL, NULL, NULL, sup_unary, 0},
    {"", "Cosh", 9, 22, DEVICE_CUDA, FL, RS, NULL, UN(op_cosh, FL), NULL, NULL, NULL, sup_unary, 0},
    {"", "Asinh", 9, 22, DEVICE_CUDA, FL, RS, NULL, UN(op_asinh, FL), NULL, NULL, NULL, sup_unary, 0},
    {"", "Acosh", 9, 22, DEVICE_CUDA, FL, RS, NULL, UN(op_acosh, FL), NULL, NULL, NULL, sup_unary, 0},
    {"", "Atanh", 9, 22, DEVICE_CUDA, FL, RS, NULL, UN(op_atanh, FL), NULL, NULL, NULL, sup_unary, 0},
    {"", "IsNaN", 9, 20, DEVICE_CUDA, FL, RS, NULL, UN(op_isnan, FL), NULL, NULL, NULL, sup_unary, 0},
    {"", "IsInf", 10, 20, DEVICE_CUDA, FL, RS, NULL, UN(op_isinf, FL), NULL, NULL, NULL, sup_unary, 0},
    {"", "Not", 1, 1, DEVICE_CUDA, DT_BIT(ONYX_BOOL), RS, NULL, UN(op_not, DT_BIT(ONYX_BOOL)), NULL, NULL, NULL, sup_unary, 0},
    {"", "BitwiseNot", 18, 18, DEVICE_CUDA, DT_INTS, RS, NULL, UN(op_bitwise_not, DT_INTS), NULL, NULL, NULL, sup_unary, 0},
    {"", "Sigmoid", 1, 13, DEVICE_CUDA, FL, RS, NULL, UN(op_sigmoid, FL), NULL, NULL, NULL, sup_unary, 0},
    {"", "Tanh", 1, 13, DEVICE_CUDA, FL, RS, NULL, UN(op_tanh, FL), NULL, NULL, NULL, sup_unary, 0},
    {"", "LeakyRelu", 1, 16, DEVICE_CUDA, FL, RS, NULL, UN(op_leakyrelu, FL), NULL, NULL, NULL, sup_unary, 0},
    {"", "Elu", 1, 22, DEVICE_CUDA, FL, RS, NULL, UN(op_elu, FL), NULL, NULL, NULL, sup_unary, 0},
    {"", "Selu", 1, 22, DEVICE_CUDA, FL, RS, NULL, UN(op_selu, FL), NULL, NULL, NULL, sup_unary, 0},
    {"", "Celu", 12, 12, DEVICE_CUDA, FL, RS, NULL, UN(op_celu, FL), NULL, NULL, NULL, sup_celu, 0},
    {"", "Gelu", 20, 20, DEVICE_CUDA, FL, RS, NULL, UN(op_gelu, FL), NULL, NULL, NULL, sup_unary, 0},
    {"", "HardSigmoid", 1, 22, DEVICE_CUDA, FL, RS, NULL, UN(op_hardsigmoid, FL), NULL, NULL, NULL, sup_unary, 0},
    {"", "HardSwish", 14, 22, DEVICE_CUDA, FL, RS, NULL, UN(op_hardswish, FL), NULL, NULL, NULL, sup_unary, 0},
    {"", "Mish", 18, 22, DEVICE_CUDA, FL, RS, NULL, UN(op_mish, FL), NULL, NULL, NULL, sup_unary, 0},
    {"", "Softplus", 1, 22, DEVICE_CUDA, FL, RS, NULL, UN(op_softplus, FL), NULL, NULL, NULL, sup_unary, 0},
    {"", "Softsign", 1, 22, DEVICE_CUDA, FL, RS, NULL, UN(op_softsign, FL), NULL, NULL, NULL, sup_unary, 0},
    {"", "Swish", 24, 24, DEVICE_CUDA, FL, RS, NULL, UN(op_swish, FL), NULL, NULL, NULL, sup_unary, 0},
    {"", "ThresholdedRelu", 10, 22, DEVICE_CUDA, FL, RS, NULL, UN(op_thresholdedrelu, FL), NULL, NULL, NULL, sup_unary, 0},
    {"", "Shrink", 9, 9, DEVICE_CUDA, FL, RS, NULL, UN(op_shrink, FL), NULL, NULL, NULL, sup_unary, 0},
    {"", "Clip", 1, 6, DEVICE_CUDA, FL, RS, NULL, run_clip, NULL, NULL, NULL, sup_unary, 0},
    {"", "Clip", 11, 13, DEVICE_CUDA, DT_NUMERIC, RS, NULL, run_clip, NULL, NULL, NULL, sup_clip, 6},
};
#undef UN
#undef FL
#undef RS

} // namespace

const kernel *ew_unary_entries(size_t *count) {
    *count = sizeof entries / sizeof entries[0];
    return entries;
}
