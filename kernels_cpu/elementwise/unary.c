/* One-input elementwise kernels: math functions, Sign/Round/Erf, IsInf/IsNaN (float8 too), Not,
 * BitwiseNot and Clip. Float16/bfloat16 compute in float; integer negation wraps. */
#include "kernels_cpu/elementwise/elementwise.h"

#include <float.h>
#include <tgmath.h>

#include "core/floatconv.h"
#include "kernels_cpu/common/vmath.h"

#define U(v) ((EW_UWIDE(__typeof__(v)))(v))
#define WRAP(v, e) ((__typeof__(v))(e))

#define UNARY_FLOAT_OP(name, EXPR)                                                                 \
    EW_FOR_FLOAT(EW_UNARY_SAME, name, EXPR)                                                        \
    static const cpu_ew_table name##_table = {EW_FOR_FLOAT(EW_ENTRY, name)};                       \
    onyx_status cpu_##name(const kernel_call *c) { return cpu_ew_run(c, name##_table, 0, 1, NULL); }

UNARY_FLOAT_OP(reciprocal, 1 / x)
UNARY_FLOAT_OP(sqrt, sqrt(x))
/* Float Exp, Log and Erf on the vector math over contiguous runs (libm's do not vectorize). The
 * parentheses around the member keep <tgmath.h>'s exp/log/erf macros off it. */
#define UNARY_VM_LOOP(name, fn)                                                                    \
    static void name##_vm(void *ctx, int64_t n, char *const *p, const int64_t *s) {                \
        if (s[1] == 1) (cpu_vmath_get()->fn)((const float *)p[1], (float *)p[0], n);               \
        else name##_ONYX_FLOAT(ctx, n, p, s);                                                      \
    }
#define UNARY_VM_OP(name, EXPR)                                                                    \
    EW_FOR_FLOAT(EW_UNARY_SAME, name, EXPR)                                                        \
    UNARY_VM_LOOP(name, name)                                                                      \
    static const cpu_ew_table name##_table = {                                                     \
        [ONYX_FLOAT] = name##_vm, [ONYX_DOUBLE] = name##_ONYX_DOUBLE, EW_FOR_HALF(EW_ENTRY, name)}; \
    onyx_status cpu_##name(const kernel_call *c) { return cpu_ew_run(c, name##_table, 0, 1, NULL); }

UNARY_VM_OP(exp, exp(x))
UNARY_VM_OP(log, log(x))
UNARY_FLOAT_OP(floor, floor(x))
UNARY_FLOAT_OP(ceil, ceil(x))
UNARY_FLOAT_OP(round, nearbyint(x)) /* the default rounding mode: half to even */
UNARY_FLOAT_OP(sin, sin(x))
UNARY_FLOAT_OP(cos, cos(x))
UNARY_FLOAT_OP(tan, tan(x))
UNARY_FLOAT_OP(asin, asin(x))
UNARY_FLOAT_OP(acos, acos(x))
UNARY_FLOAT_OP(atan, atan(x))
UNARY_FLOAT_OP(sinh, sinh(x))
UNARY_FLOAT_OP(cosh, cosh(x))
UNARY_FLOAT_OP(asinh, asinh(x))
UNARY_FLOAT_OP(acosh, acosh(x))
UNARY_FLOAT_OP(atanh, atanh(x))

EW_FOR_FLOAT(EW_UNARY_SAME, neg, -x)
EW_FOR_SINT(EW_UNARY_SAME, neg, WRAP(x, 0 - U(x)))
static const cpu_ew_table neg_table = {EW_FOR_FLOAT(EW_ENTRY, neg) EW_FOR_SINT(EW_ENTRY, neg)};
onyx_status cpu_neg(const kernel_call *c) { return cpu_ew_run(c, neg_table, 0, 1, NULL); }

EW_FOR_FLOAT(EW_UNARY_SAME, abs, fabs(x))
EW_FOR_SINT(EW_UNARY_SAME, abs, (x < 0 ? WRAP(x, 0 - U(x)) : x))
EW_FOR_UINT(EW_UNARY_SAME, abs, x)
static const cpu_ew_table abs_table = {EW_FOR_NUMERIC(EW_ENTRY, abs)};
onyx_status cpu_abs(const kernel_call *c) { return cpu_ew_run(c, abs_table, 0, 1, NULL); }

/* NaN keeps NaN and zeros keep their sign bit, like numpy.sign */
EW_FOR_FLOAT(EW_UNARY_SAME, sign, (x > 0 ? (__typeof__(x))1 : x < 0 ? (__typeof__(x))-1 : x))
EW_FOR_SINT(EW_UNARY_SAME, sign, (__typeof__(x))((x > 0) - (x < 0)))
EW_FOR_UINT(EW_UNARY_SAME, sign, (__typeof__(x))(x > 0))
static const cpu_ew_table sign_table = {EW_FOR_NUMERIC(EW_ENTRY, sign)};
onyx_status cpu_sign(const kernel_call *c) { return cpu_ew_run(c, sign_table, 0, 1, NULL); }

/* Erf-9 takes integers: erf in double, truncated back (|erf| <= 1, so no overflow) */
EW_FOR_FLOAT(EW_UNARY_SAME, erf, erf(x))
EW_FOR_INT(EW_UNARY_SAME, erf, (__typeof__(x))erf((double)x))
UNARY_VM_LOOP(erf, erf)
static const cpu_ew_table erf_table = {[ONYX_FLOAT] = erf_vm, [ONYX_DOUBLE] = erf_ONYX_DOUBLE,
                                       EW_FOR_HALF(EW_ENTRY, erf) EW_FOR_INT(EW_ENTRY, erf)};
onyx_status cpu_erf(const kernel_call *c) { return cpu_ew_run(c, erf_table, 0, 1, NULL); }

/* ---- IsNaN, IsInf: float8 types decode exactly to float first */

#define LD_E4M3FN(v) floatconv_decode(ONYX_FLOAT8E4M3FN, v)
#define LD_E4M3FNUZ(v) floatconv_decode(ONYX_FLOAT8E4M3FNUZ, v)
#define LD_E5M2(v) floatconv_decode(ONYX_FLOAT8E5M2, v)
#define LD_E5M2FNUZ(v) floatconv_decode(ONYX_FLOAT8E5M2FNUZ, v)
#define FOR_FLOAT8(X, ...)                                                                         \
    X(ONYX_FLOAT8E4M3FN, uint8_t, float, LD_E4M3FN, EW_ID, __VA_ARGS__)                            \
    X(ONYX_FLOAT8E4M3FNUZ, uint8_t, float, LD_E4M3FNUZ, EW_ID, __VA_ARGS__)                        \
    X(ONYX_FLOAT8E5M2, uint8_t, float, LD_E5M2, EW_ID, __VA_ARGS__)                                \
    X(ONYX_FLOAT8E5M2FNUZ, uint8_t, float, LD_E5M2FNUZ, EW_ID, __VA_ARGS__)

EW_FOR_FLOAT(EW_UNARY_BOOL, isnan, isnan(x))
FOR_FLOAT8(EW_UNARY_BOOL, isnan, isnan(x))
static const cpu_ew_table isnan_table = {EW_FOR_FLOAT(EW_ENTRY, isnan) FOR_FLOAT8(EW_ENTRY, isnan)};
onyx_status cpu_isnan(const kernel_call *c) { return cpu_ew_run(c, isnan_table, 0, 1, NULL); }

/* ctx: detect flags {positive, negative} */
#define IS_INF(x) (isinf(x) && ((const bool *)ctx)[(x) > 0 ? 0 : 1])
EW_FOR_FLOAT(EW_UNARY_BOOL, isinf, IS_INF(x))
FOR_FLOAT8(EW_UNARY_BOOL, isinf, IS_INF(x))
static const cpu_ew_table isinf_table = {EW_FOR_FLOAT(EW_ENTRY, isinf) FOR_FLOAT8(EW_ENTRY, isinf)};
onyx_status cpu_isinf(const kernel_call *c) {
    bool detect[2] = {attr_int(c->node, "detect_positive", 1) != 0,
                      attr_int(c->node, "detect_negative", 1) != 0};
    return cpu_ew_run(c, isinf_table, 0, 1, detect);
}

/* ---- Not, BitwiseNot */

EW_FOR_BOOL(EW_UNARY_BOOL, not, !x)
static const cpu_ew_table not_table = {EW_FOR_BOOL(EW_ENTRY, not)};
onyx_status cpu_not(const kernel_call *c) { return cpu_ew_run(c, not_table, 0, 1, NULL); }

EW_FOR_INT(EW_UNARY_SAME, bnot, (__typeof__(x))~x)
static const cpu_ew_table bnot_table = {EW_FOR_INT(EW_ENTRY, bnot)};
onyx_status cpu_bitwise_not(const kernel_call *c) { return cpu_ew_run(c, bnot_table, 0, 1, NULL); }

/* ---- Clip: bounds are optional scalars of the input's storage type (NULL: unbounded) */

typedef struct clip_bounds {
    const void *lo, *hi;
} clip_bounds;

/* max then min, like numpy.clip: lo > hi gives hi everywhere, NaN stays NaN */
#define CLIP_LOOP(DT, ST, CT, LD, STO, ...)                                                        \
    static void clip_##DT(void *ctx, int64_t n, char *const *p, const int64_t *s) {                \
        const clip_bounds *b = ctx;                                                                \
        ST *o = (ST *)p[0];                                                                        \
        const ST *a = (const ST *)p[1];                                                            \
        bool has_lo = b->lo != NULL, has_hi = b->hi != NULL;                                       \
        CT lo = has_lo ? LD(*(const ST *)b->lo) : 0, hi = has_hi ? LD(*(const ST *)b->hi) : 0;     \
        for (int64_t i = 0; i < n; i++) {                                                          \
            CT v = LD(a[i * s[1]]);                                                                \
            if (has_lo && v < lo) v = lo;                                                          \
            if (has_hi && v > hi) v = hi;                                                          \
            o[i] = STO(v);                                                                         \
        }                                                                                          \
    }
EW_FOR_NUMERIC(CLIP_LOOP)
static const cpu_ew_table clip_table = {EW_FOR_NUMERIC(EW_ENTRY, clip)};

/* Stores an attribute bound (Clip-1/6 take float types only) in the input's storage type. */
typedef union bound_store {
    float f;
    double d;
    uint16_t h;
} bound_store;

static onyx_status attr_bound(onyx_dtype dt, double v, bound_store *out) {
    switch (dt) {
    case ONYX_FLOAT: out->f = (float)v; return ONYX_OK;
    case ONYX_DOUBLE: out->d = v; return ONYX_OK;
    case ONYX_FLOAT16: out->h = float_to_fp16((float)v); return ONYX_OK;
    case ONYX_BFLOAT16: out->h = float_to_bf16((float)v); return ONYX_OK;
    default:
        return onyx_error(ONYX_ERR_UNSUPPORTED, "Clip with attribute bounds on %s",
                          onyx_dtype_name(dt));
    }
}

onyx_status cpu_clip(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    if (!x) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "input 0 is missing");
    clip_bounds b = {NULL, NULL};
    bound_store lo, hi;
    if (c->node->version < 11) {
        TRY(attr_bound(x->dtype, attr_float(c->node, "min", -FLT_MAX), &lo));
        TRY(attr_bound(x->dtype, attr_float(c->node, "max", FLT_MAX), &hi));
        b.lo = &lo;
        b.hi = &hi;
    } else {
        for (int i = 1; i <= 2 && i < c->n_in; i++) {
            const tensor *t = kernel_input(c, i);
            if (!t || t->numel == 0) continue;
            if (t->numel != 1 || t->dtype != x->dtype)
                return onyx_error(ONYX_ERR_SHAPE, "input %d (%s) is %s with %lld elements, "
                                  "expected one %s", i, i == 1 ? "min" : "max",
                                  onyx_dtype_name(t->dtype), (long long)t->numel,
                                  onyx_dtype_name(x->dtype));
            if (i == 1) b.lo = t->data;
            else b.hi = t->data;
        }
    }
    return cpu_ew_run(c, clip_table, 0, 1, &b);
}
