/* Two-input broadcasting kernels: arithmetic, Pow, Mod, PRelu, comparisons, logic and bit ops.
 * Integer arithmetic wraps (computed unsigned); integer division or remainder by zero gives 0. */
#include "kernels_cpu/elementwise/elementwise.h"
#include "kernels_cpu/common/opaque.h"
#include "kernels_cpu/common/half.h"

#include <string.h>
#include <tgmath.h>

/* ---- Add, Sub, Mul, Div */

#define U(v) ((EW_UWIDE(__typeof__(v)))(v))
#define WRAP(T, e) ((T)(e))

EW_FOR_FLOAT(EW_BINARY_SAME, add, x + y)
EW_FOR_INT(EW_BINARY_SAME, add, WRAP(__typeof__(x), U(x) + U(y)))
EW_FOR_FLOAT(EW_BINARY_SAME, sub, x - y)
EW_FOR_INT(EW_BINARY_SAME, sub, WRAP(__typeof__(x), U(x) - U(y)))
EW_FOR_FLOAT(EW_BINARY_SAME, mul, x * y)
EW_FOR_INT(EW_BINARY_SAME, mul, WRAP(__typeof__(x), U(x) * U(y)))
EW_FOR_FLOAT(EW_BINARY_SAME, div, x / y)
/* C division truncates toward zero, as the reference does; MIN / -1 wraps to MIN */
EW_FOR_SINT(EW_BINARY_SAME, div,
            (y == 0 ? 0 : y == -1 ? WRAP(__typeof__(x), 0 - U(x)) : (__typeof__(x))(x / y)))
EW_FOR_UINT(EW_BINARY_SAME, div, (y == 0 ? 0 : (__typeof__(x))(x / y)))

/* float16 with contiguous or scalar operands: converted a block at a time with the vector
 * conversions (kernels_cpu/common/half.h), computed in float; other strides take the loop above */
#define HALF_BINARY(name, OP)                                                                      \
    static void name##_f16_fast(void *ctx, int64_t n, char *const *p, const int64_t *s) {          \
        if ((s[1] != 0 && s[1] != 1) || (s[2] != 0 && s[2] != 1)) {                                \
            name##_ONYX_FLOAT16(ctx, n, p, s);                                                     \
            return;                                                                                \
        }                                                                                          \
        enum { BLOCK = 512 };                                                                      \
        uint16_t *o = (uint16_t *)p[0];                                                            \
        const uint16_t *a = (const uint16_t *)p[1], *b = (const uint16_t *)p[2];                   \
        float fa[BLOCK] __attribute__((aligned(64))), fb[BLOCK] __attribute__((aligned(64)));      \
        const float sa = cpu_fp16_to_float(a[0]), sb = cpu_fp16_to_float(b[0]);                   \
        for (int64_t i0 = 0; i0 < n; i0 += BLOCK) {                                                \
            int64_t m = n - i0 < BLOCK ? n - i0 : BLOCK;                                           \
            if (s[1]) cpu_fp16_to_float_n(a + i0, fa, m);                                          \
            else for (int64_t i = 0; i < m; i++) fa[i] = sa;                                       \
            if (s[2]) cpu_fp16_to_float_n(b + i0, fb, m);                                          \
            else for (int64_t i = 0; i < m; i++) fb[i] = sb;                                       \
            CPU_SIMD for (int64_t i = 0; i < m; i++) fa[i] = fa[i] OP fb[i];                       \
            cpu_float_to_fp16_n(fa, o + i0, m);                                                    \
        }                                                                                          \
    }
HALF_BINARY(add, +)
HALF_BINARY(sub, -)
HALF_BINARY(mul, *)
HALF_BINARY(div, /)

#define HALF_TABLE(name)                                                                           \
    {EW_FOR_REAL(EW_ENTRY, name)[ONYX_FLOAT16] = name##_f16_fast,                                  \
     [ONYX_BFLOAT16] = name##_ONYX_BFLOAT16, EW_FOR_INT(EW_ENTRY, name)}
static const cpu_ew_table add_table = HALF_TABLE(add);
static const cpu_ew_table sub_table = HALF_TABLE(sub);
static const cpu_ew_table mul_table = HALF_TABLE(mul);
static const cpu_ew_table div_table = HALF_TABLE(div);

onyx_status cpu_add(const kernel_call *c) { return cpu_ew_run(c, add_table, 0, 2, NULL); }
onyx_status cpu_sub(const kernel_call *c) { return cpu_ew_run(c, sub_table, 0, 2, NULL); }
onyx_status cpu_mul(const kernel_call *c) {
    if (c->state) /* cpu_opaque_prepare */
        return cpu_opaque_mul(kernel_input(c, 0), kernel_input(c, 1), kernel_output(c, 0));
    return cpu_ew_run(c, mul_table, 0, 2, NULL);
}
onyx_status cpu_div(const kernel_call *c) { return cpu_ew_run(c, div_table, 0, 2, NULL); }

/* ---- Mod */

/* Remainder with the divisor's sign (Python's %), for every signed width via int64. */
static inline int64_t py_mod(int64_t x, int64_t y) {
    if (y == 0 || y == -1) return 0;
    int64_t r = x % y;
    return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
}
static inline int64_t c_mod(int64_t x, int64_t y) { return (y == 0 || y == -1) ? 0 : x % y; }

/* Python's float % as numpy computes it (Mod-28's fmod=0): fmod's remainder moved by one divisor
 * where its sign is not the divisor's, and a zero remainder given the divisor's sign. That covers
 * Mod-28's edges: a zero divisor or an infinite x keep fmod's NaN, an infinite divisor leaves a
 * finite x of its sign and gives the divisor itself otherwise. Half types come here as float. */
#define DEFINE_PY_FMOD(N, T)                                                                       \
    static inline T N(T x, T y) {                                                                  \
        T r = fmod(x, y);                                                                          \
        if (y == 0) return r;                                                                      \
        if (r == 0) return copysign((T)0, y);                                                      \
        return (r < 0) != (y < 0) ? r + y : r;                                                     \
    }
DEFINE_PY_FMOD(py_fmodf, float)
DEFINE_PY_FMOD(py_fmodd, double)
#define PY_FMOD(x, y) _Generic((x), float: py_fmodf, default: py_fmodd)((x), (y))

EW_FOR_FLOAT(EW_BINARY_SAME, fmod, fmod(x, y))
EW_FOR_SINT(EW_BINARY_SAME, fmod, (__typeof__(x))c_mod(x, y))
EW_FOR_UINT(EW_BINARY_SAME, fmod, (y == 0 ? 0 : (__typeof__(x))(x % y)))
EW_FOR_FLOAT(EW_BINARY_SAME, pymod, PY_FMOD(x, y))
EW_FOR_SINT(EW_BINARY_SAME, pymod, (__typeof__(x))py_mod(x, y))

static const cpu_ew_table fmod_table = {EW_FOR_NUMERIC(EW_ENTRY, fmod)};
/* for unsigned types both modes agree */
static const cpu_ew_table pymod_table = {EW_FOR_FLOAT(EW_ENTRY, pymod) EW_FOR_UINT(EW_ENTRY, fmod)
                                         EW_FOR_SINT(EW_ENTRY, pymod)};

onyx_status cpu_mod(const kernel_call *c) {
    bool fmod_mode = attr_int(c->node, "fmod", 0) != 0;
    const tensor *a = kernel_input(c, 0);
    /* before version 28 fmod=0 was not defined for floats (the schema refuses it too) */
    if (!fmod_mode && c->node->version < 28 && a && dtype_is_float(a->dtype))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "Mod-%d: fmod=0 takes integer inputs, got %s",
                          c->node->version, onyx_dtype_name(a->dtype));
    return cpu_ew_run(c, fmod_mode ? fmod_table : pymod_table, 0, 2, NULL);
}

/* ---- Pow: base type T, exponent type T1, result T */

/* Integer powers by squaring, wrapping like repeated multiplication. Negative exponents give
 * the truncated 1/x^e: 0 except for bases 1 and -1. */
static int64_t ipow_u(int64_t x, uint64_t e) {
    uint64_t r = 1, b = (uint64_t)x;
    while (e) {
        if (e & 1) r *= b;
        b *= b;
        e >>= 1;
    }
    return (int64_t)r;
}
static int64_t ipow_s(int64_t x, int64_t e) {
    if (e >= 0) return ipow_u(x, (uint64_t)e);
    if (x == 1) return 1;
    if (x == -1) return (e & 1) ? -1 : 1;
    return 0;
}
/* A float power truncated to int64 like numpy's astype: NaN and out-of-range become INT64_MIN
 * (what x86's conversion yields) instead of undefined behaviour. */
static int64_t ipow_f(int64_t x, double e) {
    double r = pow((double)x, e);
    if (!(r > -9223372036854775808.0 && r < 9223372036854775808.0)) return INT64_MIN;
    return (int64_t)r;
}
/* float ^ float in float (what numpy does for float32); everything else in double */
static double fpow_d(double x, double y) { return pow(x, y); }
static float fpow_f(float x, float y) { return powf(x, y); }
#define FPOW(x, y)                                                                                 \
    _Generic((x), float: _Generic((y), float: fpow_f, default: fpow_d), default: fpow_d)((x), (y))
#define IPOW(x, y)                                                                                 \
    _Generic((y), float: ipow_f, double: ipow_f, uint64_t: ipow_u, default: ipow_s)((x), (y))

#define POW_LOOP(DTY, STY, CTY, LDY, STOY, DTX, STX, CTX, LDX, STOX, EXPR)                         \
    static void pow_##DTX##_##DTY(void *ctx, int64_t n, char *const *p, const int64_t *s) {        \
        (void)ctx;                                                                                 \
        STX *o = (STX *)p[0];                                                                      \
        const STX *a = (const STX *)p[1];                                                          \
        const STY *b = (const STY *)p[2];                                                          \
        if (s[2] == 0) {                                                                           \
            CTY y = LDY(b[0]);                                                                     \
            if ((CTX)0.5 != 0 && (double)y == 2.0) { /* float x^2, as in norm decompositions */    \
                for (int64_t i = 0; i < n; i++) {                                                  \
                    CTX x = LDX(a[i * s[1]]);                                                      \
                    o[i] = STOX((CTX)(x * x));                                                     \
                }                                                                                  \
                return;                                                                            \
            }                                                                                      \
            for (int64_t i = 0; i < n; i++) {                                                      \
                CTX x = LDX(a[i * s[1]]);                                                          \
                o[i] = STOX(EXPR);                                                                 \
            }                                                                                      \
            return;                                                                                \
        }                                                                                          \
        for (int64_t i = 0; i < n; i++) {                                                          \
            CTX x = LDX(a[i * s[1]]);                                                              \
            CTY y = LDY(b[i * s[2]]);                                                              \
            o[i] = STOX(EXPR);                                                                     \
        }                                                                                          \
    }
/* one base type against every exponent type */
#define POW_FLOAT_BASE(DTX, STX, CTX, LDX, STOX, ...)                                              \
    EW_FOR_NUMERIC(POW_LOOP, DTX, STX, CTX, LDX, STOX, (CTX)FPOW(x, y))
#define POW_INT_BASE(DTX, STX, CTX, LDX, STOX, ...)                                                \
    EW_FOR_NUMERIC(POW_LOOP, DTX, STX, CTX, LDX, STOX, (CTX)IPOW((int64_t)x, y))
/* The base types, listed apart from EW_FOR_* because the exponent loop inside uses those (a
 * macro cannot expand inside its own expansion). */
#define POW_FLOATS(X)                                                                              \
    X(ONYX_FLOAT, float, float, EW_ID, EW_ID) X(ONYX_DOUBLE, double, double, EW_ID, EW_ID)         \
    X(ONYX_FLOAT16, uint16_t, float, cpu_fp16_to_float, cpu_float_to_fp16)                         \
    X(ONYX_BFLOAT16, uint16_t, float, cpu_bf16_to_float, cpu_float_to_bf16)
#define POW_INTS(X)                                                                                \
    X(ONYX_INT32, int32_t, int32_t, EW_ID, EW_ID) X(ONYX_INT64, int64_t, int64_t, EW_ID, EW_ID)
POW_FLOATS(POW_FLOAT_BASE)
POW_INTS(POW_INT_BASE)

#define POW_ENTRY(DTY, STY, CTY, LDY, STOY, DTX, ...) [DTY] = pow_##DTX##_##DTY,
#define POW_ROW(DTX, STX, CTX, LDX, STOX, ...) [DTX] = {EW_FOR_NUMERIC(POW_ENTRY, DTX)},
static const cpu_ew_table pow_table[ONYX_DTYPE_COUNT] = {POW_FLOATS(POW_ROW) POW_INTS(POW_ROW)};

onyx_status cpu_pow(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0), *y = kernel_input(c, 1);
    if (!x || !y) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "input %d is missing", x ? 1 : 0);
    if ((unsigned)x->dtype >= ONYX_DTYPE_COUNT)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "input 0 has unknown type %d", (int)x->dtype);
    if ((unsigned)y->dtype >= ONYX_DTYPE_COUNT || !pow_table[x->dtype][y->dtype])
        return onyx_error(ONYX_ERR_UNSUPPORTED, "Pow of %s base and %s exponent is not supported",
                          onyx_dtype_name(x->dtype), onyx_dtype_name(y->dtype));
    return cpu_ew_run(c, pow_table[x->dtype], 1, 2, NULL);
}

/* ---- PRelu: slope broadcast into X */

EW_FOR_FLOAT(EW_BINARY_SAME, prelu, (x < 0 ? x * y : x))
EW_FOR_SINT(EW_BINARY_SAME, prelu, (x < 0 ? WRAP(__typeof__(x), U(x) * U(y)) : x))
EW_FOR_UINT(EW_BINARY_SAME, prelu, ((void)y, x))
static const cpu_ew_table prelu_table = {EW_FOR_NUMERIC(EW_ENTRY, prelu)};

onyx_status cpu_prelu(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0), *slope = kernel_input(c, 1);
    if (x && slope && c->node->version < 7 && x->rank >= 2 && slope->rank == 1 &&
        slope->dims[0] > 1 && slope->dims[0] == x->dims[1]) {
        /* Caffe2-era PRelu: a 1-D slope runs along the channel dim */
        tensor view = *slope;
        view.rank = x->rank - 1;
        view.dims[0] = slope->dims[0];
        for (int d = 1; d < view.rank; d++) view.dims[d] = 1;
        tensor *out = kernel_output(c, 0);
        cpu_bcast_fn fn = (unsigned)x->dtype < ONYX_DTYPE_COUNT ? prelu_table[x->dtype] : NULL;
        if (!out || !fn || slope->dtype != x->dtype)
            return onyx_error(ONYX_ERR_UNSUPPORTED, "PRelu of %s with a %s slope is not supported",
                              onyx_dtype_name(x->dtype), onyx_dtype_name(slope->dtype));
        cpu_bcast_iter it;
        const tensor *in[2] = {x, &view};
        TRY(cpu_bcast_init_tensors(&it, out, 2, in));
        const void *ptr[2] = {x->data, slope->data};
        cpu_bcast_run(&it, out->data, ptr, fn, NULL, false);
        return ONYX_OK;
    }
    return cpu_ew_run(c, prelu_table, 0, 2, NULL);
}

/* ---- comparisons (bool out) */

EW_FOR_NUMERIC(EW_BINARY_BOOL, eq, x == y)
EW_FOR_BOOL(EW_BINARY_BOOL, eq, x == y)
EW_FOR_NUMERIC(EW_BINARY_BOOL, lt, x < y)
EW_FOR_NUMERIC(EW_BINARY_BOOL, le, x <= y)
EW_FOR_NUMERIC(EW_BINARY_BOOL, gt, x > y)
EW_FOR_NUMERIC(EW_BINARY_BOOL, ge, x >= y)

static void eq_ONYX_STRING(void *ctx, int64_t n, char *const *p, const int64_t *s) {
    (void)ctx;
    uint8_t *o = (uint8_t *)p[0];
    char *const *a = (char *const *)p[1], *const *b = (char *const *)p[2];
    for (int64_t i = 0; i < n; i++) o[i] = strcmp(a[i * s[1]], b[i * s[2]]) == 0;
}

static const cpu_ew_table eq_table = {EW_FOR_NUMERIC(EW_ENTRY, eq) EW_FOR_BOOL(EW_ENTRY, eq)
                                      [ONYX_STRING] = eq_ONYX_STRING};
static const cpu_ew_table lt_table = {EW_FOR_NUMERIC(EW_ENTRY, lt)};
static const cpu_ew_table le_table = {EW_FOR_NUMERIC(EW_ENTRY, le)};
static const cpu_ew_table gt_table = {EW_FOR_NUMERIC(EW_ENTRY, gt)};
static const cpu_ew_table ge_table = {EW_FOR_NUMERIC(EW_ENTRY, ge)};

onyx_status cpu_equal(const kernel_call *c) { return cpu_ew_run(c, eq_table, 0, 2, NULL); }
onyx_status cpu_less(const kernel_call *c) { return cpu_ew_run(c, lt_table, 0, 2, NULL); }
onyx_status cpu_less_equal(const kernel_call *c) { return cpu_ew_run(c, le_table, 0, 2, NULL); }
onyx_status cpu_greater(const kernel_call *c) { return cpu_ew_run(c, gt_table, 0, 2, NULL); }
onyx_status cpu_greater_equal(const kernel_call *c) { return cpu_ew_run(c, ge_table, 0, 2, NULL); }

/* ---- And, Or, Xor on bool */

EW_FOR_BOOL(EW_BINARY_BOOL, and, x & y)
EW_FOR_BOOL(EW_BINARY_BOOL, or, x | y)
EW_FOR_BOOL(EW_BINARY_BOOL, xor, x ^ y)
static const cpu_ew_table and_table = {EW_FOR_BOOL(EW_ENTRY, and)};
static const cpu_ew_table or_table = {EW_FOR_BOOL(EW_ENTRY, or)};
static const cpu_ew_table xor_table = {EW_FOR_BOOL(EW_ENTRY, xor)};

onyx_status cpu_and(const kernel_call *c) { return cpu_ew_run(c, and_table, 0, 2, NULL); }
onyx_status cpu_or(const kernel_call *c) { return cpu_ew_run(c, or_table, 0, 2, NULL); }
onyx_status cpu_xor(const kernel_call *c) { return cpu_ew_run(c, xor_table, 0, 2, NULL); }

/* ---- BitShift and Bitwise And/Or/Xor (all ints) */

/* A shift by a negative amount or by the width or more is undefined in C. Version 28 defines it:
 * every bit goes, leaving the sign fill alone (-1 for a negative x shifted right, else 0). A
 * negative amount read as uint64 is huge, so one compare catches both. */
#define BITS(x) (sizeof(x) * 8)
#define SHIFT_OUT(x, y) ((uint64_t)(y) >= BITS(x))
EW_FOR_INT(EW_BINARY_SAME, shl, (SHIFT_OUT(x, y) ? 0 : (__typeof__(x))(U(x) << y)))
EW_FOR_UINT(EW_BINARY_SAME, shr, (SHIFT_OUT(x, y) ? 0 : (__typeof__(x))(x >> y)))
/* GCC shifts a negative signed value arithmetically (the sign fill version 28 asks for); by
 * width - 1 it is the fill alone */
EW_FOR_SINT(EW_BINARY_SAME, shr,
            (__typeof__(x))(x >> (SHIFT_OUT(x, y) ? BITS(x) - 1 : (uint64_t)y)))
EW_FOR_INT(EW_BINARY_SAME, band, (__typeof__(x))(x & y))
EW_FOR_INT(EW_BINARY_SAME, bor, (__typeof__(x))(x | y))
EW_FOR_INT(EW_BINARY_SAME, bxor, (__typeof__(x))(x ^ y))
static const cpu_ew_table shl_table = {EW_FOR_INT(EW_ENTRY, shl)};
static const cpu_ew_table shr_table = {EW_FOR_INT(EW_ENTRY, shr)};
static const cpu_ew_table band_table = {EW_FOR_INT(EW_ENTRY, band)};
static const cpu_ew_table bor_table = {EW_FOR_INT(EW_ENTRY, bor)};
static const cpu_ew_table bxor_table = {EW_FOR_INT(EW_ENTRY, bxor)};

onyx_status cpu_bitshift(const kernel_call *c) {
    const char *dir = attr_string(c->node, "direction", "");
    bool left = strcmp(dir, "LEFT") == 0;
    if (!left && strcmp(dir, "RIGHT") != 0)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute direction is '%s', expected "
                          "\"LEFT\" or \"RIGHT\"", dir);
    const tensor *x = kernel_input(c, 0);
    if (c->node->version < 28 && x && dtype_in(x->dtype, DT_SINTS))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "BitShift-%d takes unsigned types, got %s "
                          "(signed ones came in version 28)", c->node->version,
                          onyx_dtype_name(x->dtype));
    return cpu_ew_run(c, left ? shl_table : shr_table, 0, 2, NULL);
}
onyx_status cpu_bitwise_and(const kernel_call *c) { return cpu_ew_run(c, band_table, 0, 2, NULL); }
onyx_status cpu_bitwise_or(const kernel_call *c) { return cpu_ew_run(c, bor_table, 0, 2, NULL); }
onyx_status cpu_bitwise_xor(const kernel_call *c) { return cpu_ew_run(c, bxor_table, 0, 2, NULL); }
