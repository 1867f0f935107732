// CUDA two-input (and variadic) broadcasting ops: arithmetic, Pow, Mod, PRelu, Max/Min/Sum/Mean,
// comparisons, logic and bit ops. Integer arithmetic wraps; integer division or remainder by zero
// gives 0, as on the CPU.
#include <string.h>

#include "kernels_cuda/elementwise/ew.cuh"

namespace {

template <class C> using is_fp = std::is_floating_point<C>;

struct op_add : simple_op<op_add> {
    template <class C> __device__ __forceinline__ C operator()(C x, C y) const {
        if constexpr (is_fp<C>::value) return x + y;
        else return (C)((uwide<C>)x + (uwide<C>)y);
    }
};
struct op_sub : simple_op<op_sub> {
    template <class C> __device__ __forceinline__ C operator()(C x, C y) const {
        if constexpr (is_fp<C>::value) return x - y;
        else return (C)((uwide<C>)x - (uwide<C>)y);
    }
};
struct op_mul : simple_op<op_mul> {
    template <class C> __device__ __forceinline__ C operator()(C x, C y) const {
        if constexpr (is_fp<C>::value) return x * y;
        else return (C)((uwide<C>)x * (uwide<C>)y);
    }
};
// C division truncates toward zero, as the reference does; MIN / -1 wraps to MIN.
struct op_div : simple_op<op_div> {
    template <class C> __device__ __forceinline__ C operator()(C x, C y) const {
        if constexpr (is_fp<C>::value) return x / y;
        else if constexpr (std::is_signed<C>::value)
            return y == 0 ? C(0) : y == C(-1) ? (C)(uwide<C>(0) - (uwide<C>)x) : (C)(x / y);
        else return y == 0 ? C(0) : (C)(x / y);
    }
};

// Floats take fmod whatever the attribute says (the reference does); signed integers take the
// divisor's sign (Python's %) unless fmod=1; unsigned ones agree in both modes.
struct op_mod {
    static constexpr bool bool_out = false;
    bool fmod_mode;
    static op_mod make(const graph_node *n) { return {attr_int(n, "fmod", 0) != 0}; }
    template <class C> __device__ __forceinline__ C operator()(C x, C y) const {
        if constexpr (std::is_same<C, float>::value) return fmodf(x, y);
        else if constexpr (std::is_same<C, double>::value) return fmod(x, y);
        else if constexpr (std::is_signed<C>::value) {
            if (y == 0 || y == C(-1)) return C(0);
            int64_t r = (int64_t)x % (int64_t)y;
            if (!fmod_mode && r != 0 && ((r < 0) != (y < 0))) r += y;
            return (C)r;
        } else {
            return y == 0 ? C(0) : (C)(x % y);
        }
    }
};

// numpy's minimum/maximum propagate NaN from either side.
struct op_max : simple_op<op_max> {
    template <class C> __device__ __forceinline__ C operator()(C x, C y) const {
        if constexpr (is_fp<C>::value) return x != x ? x : x > y ? x : y;
        else return x > y ? x : y;
    }
};
struct op_min : simple_op<op_min> {
    template <class C> __device__ __forceinline__ C operator()(C x, C y) const {
        if constexpr (is_fp<C>::value) return x != x ? x : x < y ? x : y;
        else return x < y ? x : y;
    }
};
// Mean's last fold: the sum rounded to the storage type, then divided by the count (the CPU's
// two passes, in one).
template <class T> struct op_mean_last {
    int64_t count;
    template <class C> __device__ __forceinline__ C operator()(C x, C y) const {
        C s = to_compute(from_compute<T>(x + y));
        return s / (C)count;
    }
};

struct op_prelu : simple_op<op_prelu> {
    template <class C> __device__ __forceinline__ C operator()(C x, C y) const {
        if constexpr (is_fp<C>::value) return x < C(0) ? x * y : x;
        else if constexpr (std::is_signed<C>::value)
            return x < 0 ? (C)((uwide<C>)x * (uwide<C>)y) : x;
        else return x;
    }
};

enum { CMP_EQ, CMP_LT, CMP_LE, CMP_GT, CMP_GE };
// One functor for the five comparisons (the kind is the node's, the same for every thread), so
// each element type is compiled once rather than five times.
struct op_cmp {
    static constexpr bool bool_out = true;
    int kind;
    static op_cmp make(const graph_node *n) {
        const char *o = n->op_type;
        return {strcmp(o, "Equal") == 0            ? CMP_EQ
                : strcmp(o, "Less") == 0           ? CMP_LT
                : strcmp(o, "LessOrEqual") == 0    ? CMP_LE
                : strcmp(o, "Greater") == 0        ? CMP_GT
                                                   : CMP_GE};
    }
    template <class C> __device__ __forceinline__ bool operator()(C x, C y) const {
        switch (kind) {
        case CMP_EQ: return x == y;
        case CMP_LT: return x < y;
        case CMP_LE: return x <= y;
        case CMP_GT: return x > y;
        default: return x >= y;
        }
    }
};

enum { BIT_AND, BIT_OR, BIT_XOR };
// On bool (And/Or/Xor) and on integers (BitwiseAnd/Or/Xor); the kind is the node's, read once.
struct op_bits {
    static constexpr bool bool_out = false;
    int kind;
    static op_bits make(const graph_node *n) {
        const char *o = n->op_type;
        bool is_and = strcmp(o, "And") == 0 || strcmp(o, "BitwiseAnd") == 0;
        bool is_or = strcmp(o, "Or") == 0 || strcmp(o, "BitwiseOr") == 0;
        return {is_and ? BIT_AND : is_or ? BIT_OR : BIT_XOR};
    }
    template <class C> __device__ __forceinline__ C operator()(C x, C y) const {
        return kind == BIT_AND ? (C)(x & y) : kind == BIT_OR ? (C)(x | y) : (C)(x ^ y);
    }
};

// Unsigned only; shifting by the width or more shifts every bit out (undefined in C).
struct op_bitshift {
    static constexpr bool bool_out = false;
    bool left;
    static op_bitshift make(const graph_node *n) {
        return {strcmp(attr_string(n, "direction", ""), "LEFT") == 0};
    }
    template <class C> __device__ __forceinline__ C operator()(C x, C y) const {
        if (y >= (C)(sizeof(C) * 8)) return C(0);
        return left ? (C)((uwide<C>)x << y) : (C)(x >> y);
    }
};

// ---- Pow: base T, exponent of any numeric type (read by its dtype at run time, a branch that
// is the same for every thread), result T.

enum { PX_FLOAT, PX_DOUBLE, PX_INT, PX_U64 };
struct pow_exp {
    double d;  // PX_FLOAT (a float, float16 or bfloat16 value) and PX_DOUBLE
    int64_t i; // PX_INT (every signed type and the unsigned ones below 64 bits); PX_U64's bits
    int kind;
};
struct pow_ld {
    const void *p;
    int dtype;
    __device__ __forceinline__ pow_exp operator[](int64_t i) const {
        switch (dtype) {
        case ONYX_FLOAT: return {(double)((const float *)p)[i], 0, PX_FLOAT};
        case ONYX_FLOAT16: return {(double)__half2float(((const __half *)p)[i]), 0, PX_FLOAT};
        case ONYX_BFLOAT16:
            return {(double)__bfloat162float(((const __nv_bfloat16 *)p)[i]), 0, PX_FLOAT};
        case ONYX_DOUBLE: return {((const double *)p)[i], 0, PX_DOUBLE};
        case ONYX_INT8: return {0, ((const int8_t *)p)[i], PX_INT};
        case ONYX_INT16: return {0, ((const int16_t *)p)[i], PX_INT};
        case ONYX_INT32: return {0, ((const int32_t *)p)[i], PX_INT};
        case ONYX_INT64: return {0, ((const int64_t *)p)[i], PX_INT};
        case ONYX_UINT8: return {0, ((const uint8_t *)p)[i], PX_INT};
        case ONYX_UINT16: return {0, ((const uint16_t *)p)[i], PX_INT};
        case ONYX_UINT32: return {0, ((const uint32_t *)p)[i], PX_INT};
        default: return {0, (int64_t)((const uint64_t *)p)[i], PX_U64};
        }
    }
};

// Integer powers by squaring, wrapping like repeated multiplication.
__device__ __forceinline__ int64_t ipow_u(int64_t x, uint64_t e) {
    uint64_t r = 1, b = (uint64_t)x;
    while (e) {
        if (e & 1) r *= b;
        b *= b;
        e >>= 1;
    }
    return (int64_t)r;
}
// Negative exponents give the truncated 1/x^e: 0 except for bases 1 and -1.
__device__ __forceinline__ int64_t ipow_s(int64_t x, int64_t e) {
    if (e >= 0) return ipow_u(x, (uint64_t)e);
    if (x == 1) return 1;
    if (x == -1) return (e & 1) ? -1 : 1;
    return 0;
}
// A float power truncated to int64 like numpy's astype: NaN and out of range give INT64_MIN.
// The CPU's pow is correctly rounded, so integer results come out exact there; the GPU's is
// within 2 ulp, which truncated 9^0.5 to 2. So whole exponents with results below 2^53 are
// computed exactly, and other results within a few ulp of an integer are taken as that integer
// (an integer base to a dyadic power is an integer or irrational, and no irrational came that
// close in the tests).
__device__ __forceinline__ int64_t ipow_f(int64_t x, double e) {
    double r = pow((double)x, e);
    if (e >= 0 && e < 9.2e18 && e == floor(e) && fabs(r) < 9007199254740992.0)
        return ipow_u(x, (uint64_t)e);
    double k = rint(r);
    if (fabs(r) < 9007199254740992.0 && fabs(r - k) <= fabs(k) * 0x1p-50) r = k;
    if (!(r > -9223372036854775808.0 && r < 9223372036854775808.0)) return INT64_MIN;
    return (int64_t)r;
}

struct op_pow : simple_op<op_pow> {
    template <class C> __device__ __forceinline__ C operator()(C x, pow_exp e) const {
        if constexpr (is_fp<C>::value) {
            // float ^ float in float (what numpy does for float32); everything else in double
            if constexpr (std::is_same<C, float>::value) {
                if (e.kind == PX_FLOAT) {
                    float y = (float)e.d;
                    return y == 2.0f ? x * x : powf(x, y);
                }
            }
            double y = e.kind == PX_INT   ? (double)e.i
                       : e.kind == PX_U64 ? (double)(uint64_t)e.i
                                          : e.d;
            if (y == 2.0) return x * x;
            return (C)pow((double)x, y);
        } else {
            if (e.kind == PX_FLOAT || e.kind == PX_DOUBLE) return (C)ipow_f((int64_t)x, e.d);
            if (e.kind == PX_U64) return (C)ipow_u((int64_t)x, (uint64_t)e.i);
            return (C)ipow_s((int64_t)x, e.i);
        }
    }
};

// ---- runs

template <class Op, dtype_mask M> onyx_status run_binary(const kernel_call *c) {
    const tensor *a = kernel_input(c, 0), *b = kernel_input(c, 1);
    tensor *y = kernel_output(c, 0);
    if (!a || !b || !y)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "%s: an input or output is missing",
                          c->node->op_type);
    const Op op = Op::make(c->node);
    return dispatch<M>(a->dtype, [&](auto t) -> onyx_status {
        typedef typename decltype(t)::type T;
        typedef typename std::conditional<Op::bool_out, bool, T>::type TO;
        return map2<TO>(c, op, y, a, ld<T>{cuda_data<T>(a)}, b, ld<T>{cuda_data<T>(b)});
    });
}

onyx_status run_pow(const kernel_call *c) {
    const tensor *a = kernel_input(c, 0), *b = kernel_input(c, 1);
    tensor *y = kernel_output(c, 0);
    if (!a || !b || !y)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "Pow: an input or output is missing");
    if (!dtype_in(b->dtype, DT_NUMERIC))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "Pow: exponent type %d on CUDA", (int)b->dtype);
    const op_pow op = op_pow();
    const pow_ld lb = {b->data, (int)b->dtype};
    return dispatch<DT_FLOATS | DT_BIT(ONYX_INT32) | DT_BIT(ONYX_INT64)>(
        a->dtype, [&](auto t) -> onyx_status {
            typedef typename decltype(t)::type T;
            return map2<T>(c, op, y, a, ld<T>{cuda_data<T>(a)}, b, lb);
        });
}

// Max, Min, Sum, Mean: out = op(in0, in1), then out = op(out, ink); one input is copied.
template <class Op, dtype_mask M, bool MEAN> onyx_status run_variadic(const kernel_call *c) {
    const tensor *x0 = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    if (!x0 || !y)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "%s: input or output 0 is missing",
                          c->node->op_type);
    for (int k = 1; k < c->n_in; k++)
        if (!kernel_input(c, k) || kernel_input(c, k)->dtype != x0->dtype)
            return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "%s: input %d is missing or of "
                              "another type", c->node->op_type, k);
    if (c->n_in == 1) return copy_through(c, x0, y);
    const Op op = Op();
    return dispatch<M>(x0->dtype, [&](auto t) -> onyx_status {
        typedef typename decltype(t)::type T;
        for (int k = 1; k < c->n_in; k++) {
            const tensor *a = k == 1 ? x0 : y, *b = kernel_input(c, k);
            ld<T> la{cuda_data<T>(a)}, lb{cuda_data<T>(b)};
            onyx_status st;
            if constexpr (MEAN) {
                if (k == c->n_in - 1) {
                    st = map2<T>(c, op_mean_last<T>{c->n_in}, y, a, la, b, lb);
                    if (st != ONYX_OK) return st;
                    continue;
                }
            }
            st = map2<T>(c, op, y, a, la, b, lb);
            if (st != ONYX_OK) return st;
        }
        return ONYX_OK;
    });
}

bool sup_binary(const kernel_prep *p) {
    return tensors_ok(p, 2, true) && !legacy_broadcast(p) && plan_fits(p, 2);
}

// Opset < 7 PRelu may run a 1-D slope along the channel dim (Caffe2): CPU only.
bool sup_prelu(const kernel_prep *p) { return p->node->version >= 7 && sup_binary(p); }

bool sup_pow(const kernel_prep *p) {
    return tensors_ok(p, 2, false) && !legacy_broadcast(p) && plan_fits(p, 2) &&
           dtype_in(p->in_type[1]->dtype, DT_NUMERIC);
}

bool sup_bitshift(const kernel_prep *p) {
    const char *d = attr_string(p->node, "direction", "");
    return sup_binary(p) && (strcmp(d, "LEFT") == 0 || strcmp(d, "RIGHT") == 0);
}

bool sup_variadic(const kernel_prep *p) {
    return p->n_in >= 1 && tensors_ok(p, p->n_in, true) && plan_fits(p, p->n_in);
}

#define NUM DT_NUMERIC
#define FL DT_FLOATS
#define BOOLS DT_BIT(ONYX_BOOL)
#define BIN(op, M) run_binary<op, M>
// Every elementwise kernel sizes and broadcasts its tensors at run (plan_init): a device
// plan may give it values whose shapes only the run knows.
#define RS KF_RUN_SHAPES
const kernel entries[] = {
    // domain, op, versions, device, dtypes, flags, prepare, run, release, fork, unfork,
    // supports, host_inputs
    {"", "Add", 1, 14, DEVICE_CUDA, NUM, RS, NULL, BIN(op_add, NUM), NULL, NULL, NULL, sup_binary, 0},
    {"", "Sub", 1, 14, DEVICE_CUDA, NUM, RS, NULL, BIN(op_sub, NUM), NULL, NULL, NULL, sup_binary, 0},
    {"", "Mul", 1, 14, DEVICE_CUDA, NUM, RS, NULL, BIN(op_mul, NUM), NULL, NULL, NULL, sup_binary, 0},
    {"", "Div", 1, 14, DEVICE_CUDA, NUM, RS, NULL, BIN(op_div, NUM), NULL, NULL, NULL, sup_binary, 0},
    {"", "Pow", 1, 15, DEVICE_CUDA, FL | DT_BIT(ONYX_INT32) | DT_BIT(ONYX_INT64), RS, NULL, run_pow, NULL, NULL, NULL, sup_pow, 0},
    {"", "Mod", 10, 13, DEVICE_CUDA, NUM, RS, NULL, BIN(op_mod, NUM), NULL, NULL, NULL, sup_binary, 0},
    {"", "PRelu", 1, 16, DEVICE_CUDA, NUM, RS, NULL, BIN(op_prelu, NUM), NULL, NULL, NULL, sup_prelu, 0},
    {"", "Max", 1, 13, DEVICE_CUDA, NUM, RS, NULL, run_variadic<op_max, NUM, false>, NULL, NULL, NULL, sup_variadic, 0},
    {"", "Min", 1, 13, DEVICE_CUDA, NUM, RS, NULL, run_variadic<op_min, NUM, false>, NULL, NULL, NULL, sup_variadic, 0},
    {"", "Sum", 1, 13, DEVICE_CUDA, FL, RS, NULL, run_variadic<op_add, FL, false>, NULL, NULL, NULL, sup_variadic, 0},
    {"", "Mean", 1, 13, DEVICE_CUDA, FL, RS, NULL, run_variadic<op_add, FL, true>, NULL, NULL, NULL, sup_variadic, 0},
    {"", "Equal", 1, 19, DEVICE_CUDA, NUM | BOOLS, RS, NULL, BIN(op_cmp, NUM | BOOLS), NULL, NULL, NULL, sup_binary, 0},
    {"", "Less", 1, 13, DEVICE_CUDA, NUM, RS, NULL, BIN(op_cmp, NUM | BOOLS), NULL, NULL, NULL, sup_binary, 0},
    {"", "LessOrEqual", 12, 16, DEVICE_CUDA, NUM, RS, NULL, BIN(op_cmp, NUM | BOOLS), NULL, NULL, NULL, sup_binary, 0},
    {"", "Greater", 1, 13, DEVICE_CUDA, NUM, RS, NULL, BIN(op_cmp, NUM | BOOLS), NULL, NULL, NULL, sup_binary, 0},
    {"", "GreaterOrEqual", 12, 16, DEVICE_CUDA, NUM, RS, NULL, BIN(op_cmp, NUM | BOOLS), NULL, NULL, NULL, sup_binary, 0},
    {"", "And", 1, 7, DEVICE_CUDA, BOOLS, RS, NULL, BIN(op_bits, BOOLS), NULL, NULL, NULL, sup_binary, 0},
    {"", "Or", 1, 7, DEVICE_CUDA, BOOLS, RS, NULL, BIN(op_bits, BOOLS), NULL, NULL, NULL, sup_binary, 0},
    {"", "Xor", 1, 7, DEVICE_CUDA, BOOLS, RS, NULL, BIN(op_bits, BOOLS), NULL, NULL, NULL, sup_binary, 0},
    {"", "BitShift", 11, 11, DEVICE_CUDA, DT_UINTS, RS, NULL, BIN(op_bitshift, DT_UINTS), NULL, NULL, NULL, sup_bitshift, 0},
    {"", "BitwiseAnd", 18, 18, DEVICE_CUDA, DT_INTS, RS, NULL, BIN(op_bits, DT_INTS), NULL, NULL, NULL, sup_binary, 0},
    {"", "BitwiseOr", 18, 18, DEVICE_CUDA, DT_INTS, RS, NULL, BIN(op_bits, DT_INTS), NULL, NULL, NULL, sup_binary, 0},
    {"", "BitwiseXor", 18, 18, DEVICE_CUDA, DT_INTS, RS, NULL, BIN(op_bits, DT_INTS), NULL, NULL, NULL, sup_binary, 0},
};
#undef BIN
#undef BOOLS
#undef FL
#undef RS
#undef NUM

} // namespace

const kernel *ew_binary_entries(size_t *count) {
    *count = sizeof entries / sizeof entries[0];
    return entries;
}
