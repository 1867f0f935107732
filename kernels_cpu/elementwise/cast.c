/* Cast and CastLike between every ONNX element type. Each source type is read in blocks into a
 * canonical double / int64 / uint64 buffer and written from it to the target type, so the
 * conversion count is (sources + 3 x targets) instead of sources x targets. Strings are parsed
 * (strtod/strtoll; "INF", "-INF", "NaN" in any case) and printed like numpy's str(). */
#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/floatconv.h"
#include "core/parallel.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/cpu_types.h"
#include "kernels_cpu/common/half.h"

/* Elements per block: a multiple of 8 so packed outputs (2, 4 or 6 bits) split on whole bytes. */
#define BLK 1024

typedef enum canon_kind { K_F64, K_I64, K_U64 } canon_kind;

typedef union canon {
    double f[BLK];
    int64_t i[BLK];
    uint64_t u[BLK];
} canon;

typedef struct cast_ctx {
    bool saturate;
    floatconv_round mode;
} cast_ctx;

typedef void (*read_fn)(const void *src, int64_t start, int64_t n, canon *b);
typedef void (*write_fn)(const cast_ctx *cc, const canon *b, int64_t start, int64_t n, void *dst);

/* ---- scalar conversions that never hit C's undefined float->int cases */

/* NaN and out-of-range give INT64_MIN, as x86's conversion (and so numpy) does. */
static inline int64_t f64_to_i64(double x) {
    if (!(x > -9223372036854775808.0 && x < 9223372036854775808.0)) return INT64_MIN;
    return (int64_t)x;
}
/* Negative values wrap through int64 (numpy: -1.0 -> 2^64-1). */
static inline uint64_t f64_to_u64(double x) {
    if (x >= 0 && x < 18446744073709551616.0) return (uint64_t)x;
    return (uint64_t)f64_to_i64(x);
}
/* Floats to the 4- and 2-bit integers as ml_dtypes (onnx's reference) converts them: toward zero,
 * and 0 for NaN, the infinities and whatever lies outside [lo, hi] once truncated (-9.0 and 8.0
 * give int4 0, -8.9 gives -8). The spec leaves it undefined; integer sources wrap instead. */
static inline int64_t f64_to_narrow(double x, double lo, double hi) {
    double t = trunc(x);
    return t >= lo && t <= hi ? (int64_t)t : 0;
}
/* One rounding from double; the float path is exact whenever x is a float already. */
static inline uint16_t f64_to_fp16(double x) {
    float f = (float)x;
    return ((double)f == x || isnan(x)) ? cpu_float_to_fp16(f) : floatconv_double_to_fp16(x);
}
static inline uint16_t f64_to_bf16(double x) {
    float f = (float)x;
    return ((double)f == x || isnan(x)) ? cpu_float_to_bf16(f) : floatconv_double_to_bf16(x);
}

/* ---- readers: source -> canonical */

#define DEC(d) (double)floatconv_decode(d, v)
#define READ(DT, T, FIELD, EXPR)                                                                   \
    static void read_##DT(const void *src, int64_t start, int64_t n, canon *b) {                   \
        const T *s = (const T *)src + start;                                                       \
        for (int64_t k = 0; k < n; k++) {                                                          \
            T v = s[k];                                                                            \
            b->FIELD[k] = EXPR;                                                                    \
        }                                                                                          \
    }
READ(ONYX_FLOAT, float, f, v)
READ(ONYX_DOUBLE, double, f, v)
READ(ONYX_FLOAT16, uint16_t, f, cpu_fp16_to_float(v))
READ(ONYX_BFLOAT16, uint16_t, f, cpu_bf16_to_float(v))
READ(ONYX_FLOAT8E4M3FN, uint8_t, f, DEC(ONYX_FLOAT8E4M3FN))
READ(ONYX_FLOAT8E4M3FNUZ, uint8_t, f, DEC(ONYX_FLOAT8E4M3FNUZ))
READ(ONYX_FLOAT8E5M2, uint8_t, f, DEC(ONYX_FLOAT8E5M2))
READ(ONYX_FLOAT8E5M2FNUZ, uint8_t, f, DEC(ONYX_FLOAT8E5M2FNUZ))
READ(ONYX_FLOAT8E8M0, uint8_t, f, DEC(ONYX_FLOAT8E8M0))
READ(ONYX_BOOL, uint8_t, i, v != 0)
#define READ_INT(DT, T) READ(DT, T, i, v)
#define READ_UINT(DT, T) READ(DT, T, u, v)
CPU_FOR_SINTS(READ_INT)
CPU_FOR_UINTS(READ_UINT)

/* packed types: element j holds bits [j*bits, (j+1)*bits) of the little-endian bit stream */
#define READ_PACKED(DT, BITS, FIELD, EXPR)                                                         \
    static void read_##DT(const void *src, int64_t start, int64_t n, canon *b) {                   \
        for (int64_t k = 0; k < n; k++) {                                                          \
            unsigned v = dtype_packed_get(src, start + k, BITS);                                   \
            b->FIELD[k] = EXPR;                                                                    \
        }                                                                                          \
    }
READ_PACKED(ONYX_INT4, 4, i, (int64_t)(v ^ 8u) - 8)
READ_PACKED(ONYX_UINT4, 4, u, v)
READ_PACKED(ONYX_INT2, 2, i, (int64_t)(v ^ 2u) - 2)
READ_PACKED(ONYX_UINT2, 2, u, v)
READ_PACKED(ONYX_FLOAT4E2M1, 4, f, (double)floatconv_decode(ONYX_FLOAT4E2M1, (uint8_t)v))
READ_PACKED(ONYX_FLOAT6E2M3, 6, f, (double)floatconv_decode(ONYX_FLOAT6E2M3, (uint8_t)v))
READ_PACKED(ONYX_FLOAT6E3M2, 6, f, (double)floatconv_decode(ONYX_FLOAT6E3M2, (uint8_t)v))

#define R(DT) [DT] = read_##DT
#define R_NATIVE(DT, T) R(DT),
static const read_fn readers[ONYX_DTYPE_COUNT] = {
    CPU_FOR_INTS(R_NATIVE) R(ONYX_FLOAT), R(ONYX_DOUBLE), R(ONYX_FLOAT16), R(ONYX_BFLOAT16),
    R(ONYX_FLOAT8E4M3FN), R(ONYX_FLOAT8E4M3FNUZ), R(ONYX_FLOAT8E5M2), R(ONYX_FLOAT8E5M2FNUZ),
    R(ONYX_FLOAT8E8M0), R(ONYX_BOOL), R(ONYX_INT4), R(ONYX_UINT4), R(ONYX_INT2), R(ONYX_UINT2),
    R(ONYX_FLOAT4E2M1), R(ONYX_FLOAT6E2M3), R(ONYX_FLOAT6E3M2)};
#undef R

static canon_kind kind_of(onyx_dtype d) {
    if (dtype_in(d, DT_SINTS | DT_BIT(ONYX_BOOL) | DT_BIT(ONYX_INT4) | DT_BIT(ONYX_INT2)))
        return K_I64;
    if (dtype_in(d, DT_UINTS | DT_BIT(ONYX_UINT4) | DT_BIT(ONYX_UINT2))) return K_U64;
    return K_F64;
}

/* ---- writers: canonical -> target. Per target: from double (F), int64 (I), uint64 (U). */

#define WRITE(DT, T, F, I, U)                                                                      \
    static void wf_##DT(const cast_ctx *cc, const canon *b, int64_t start, int64_t n, void *dst) { \
        (void)cc;                                                                                  \
        T *d = (T *)dst + start;                                                                   \
        for (int64_t k = 0; k < n; k++) {                                                          \
            double x = b->f[k];                                                                    \
            d[k] = (T)(F);                                                                         \
        }                                                                                          \
    }                                                                                              \
    static void wi_##DT(const cast_ctx *cc, const canon *b, int64_t start, int64_t n, void *dst) { \
        (void)cc;                                                                                  \
        T *d = (T *)dst + start;                                                                   \
        for (int64_t k = 0; k < n; k++) {                                                          \
            int64_t x = b->i[k];                                                                   \
            d[k] = (T)(I);                                                                         \
        }                                                                                          \
    }                                                                                              \
    static void wu_##DT(const cast_ctx *cc, const canon *b, int64_t start, int64_t n, void *dst) { \
        (void)cc;                                                                                  \
        T *d = (T *)dst + start;                                                                   \
        for (int64_t k = 0; k < n; k++) {                                                          \
            uint64_t x = b->u[k];                                                                  \
            d[k] = (T)(U);                                                                         \
        }                                                                                          \
    }

/* ints wrap (discarding high bits, as the spec says for integer targets) */
#define WRITE_SINT(DT, T) WRITE(DT, T, f64_to_i64(x), (uint64_t)x, x)
#define WRITE_UINT(DT, T) WRITE(DT, T, f64_to_u64(x), (uint64_t)x, x)
CPU_FOR_SINTS(WRITE_SINT)
CPU_FOR_UINTS(WRITE_UINT)
WRITE(ONYX_FLOAT, float, x, x, x)
WRITE(ONYX_DOUBLE, double, x, x, x)
WRITE(ONYX_BOOL, uint8_t, x != 0, x != 0, x != 0)
WRITE(ONYX_FLOAT16, uint16_t, f64_to_fp16(x), f64_to_fp16((double)x), f64_to_fp16((double)x))
WRITE(ONYX_BFLOAT16, uint16_t, f64_to_bf16(x), f64_to_bf16((double)x), f64_to_bf16((double)x))
#define ENC(DT, v) floatconv_encode(DT, (double)(v), cc->saturate)
#define WRITE_F8(DT) WRITE(DT, uint8_t, ENC(DT, x), ENC(DT, x), ENC(DT, x))
WRITE_F8(ONYX_FLOAT8E4M3FN)
WRITE_F8(ONYX_FLOAT8E4M3FNUZ)
WRITE_F8(ONYX_FLOAT8E5M2)
WRITE_F8(ONYX_FLOAT8E5M2FNUZ)
/* e8m0 rounds from float32, as the reference (to_float8e8m0) does */
#define E8M0(v) floatconv_to_e8m0((float)(v), cc->saturate, cc->mode)
WRITE(ONYX_FLOAT8E8M0, uint8_t, E8M0(x), E8M0(x), E8M0(x))

/* Packed targets: the block owns whole bytes (BLK and `start` are multiples of 8), which it
 * clears and then fills. */
#define WRITE_PACKED_ONE(DT, BITS, FIELD, VAR_T, NAME, CODE)                                       \
    static void NAME##_##DT(const cast_ctx *cc, const canon *b, int64_t start, int64_t n,          \
                            void *dst) {                                                           \
        (void)cc;                                                                                  \
        memset((uint8_t *)dst + start / 8 * BITS, 0, (size_t)((n * BITS + 7) / 8));                \
        for (int64_t k = 0; k < n; k++) {                                                          \
            VAR_T x = b->FIELD[k];                                                                 \
            dtype_packed_set(dst, start + k, BITS, (unsigned)(CODE));                              \
        }                                                                                          \
    }
#define WRITE_PACKED(DT, BITS, F, I, U)                                                            \
    WRITE_PACKED_ONE(DT, BITS, f, double, wf, F)                                                   \
    WRITE_PACKED_ONE(DT, BITS, i, int64_t, wi, I)                                                  \
    WRITE_PACKED_ONE(DT, BITS, u, uint64_t, wu, U)
WRITE_PACKED(ONYX_INT4, 4, f64_to_narrow(x, -8, 7), x, x)
WRITE_PACKED(ONYX_UINT4, 4, f64_to_narrow(x, 0, 15), x, x)
WRITE_PACKED(ONYX_INT2, 2, f64_to_narrow(x, -2, 1), x, x)
WRITE_PACKED(ONYX_UINT2, 2, f64_to_narrow(x, 0, 3), x, x)
#define WRITE_PACKED_FLOAT(DT, BITS) WRITE_PACKED(DT, BITS, ENC(DT, x), ENC(DT, x), ENC(DT, x))
WRITE_PACKED_FLOAT(ONYX_FLOAT4E2M1, 4)
WRITE_PACKED_FLOAT(ONYX_FLOAT6E2M3, 6)
WRITE_PACKED_FLOAT(ONYX_FLOAT6E3M2, 6)

#define TARGETS(X)                                                                                 \
    X(ONYX_INT8) X(ONYX_INT16) X(ONYX_INT32) X(ONYX_INT64) X(ONYX_UINT8) X(ONYX_UINT16)            \
    X(ONYX_UINT32) X(ONYX_UINT64) X(ONYX_FLOAT) X(ONYX_DOUBLE) X(ONYX_BOOL) X(ONYX_FLOAT16)        \
    X(ONYX_BFLOAT16) X(ONYX_FLOAT8E4M3FN) X(ONYX_FLOAT8E4M3FNUZ) X(ONYX_FLOAT8E5M2)                \
    X(ONYX_FLOAT8E5M2FNUZ) X(ONYX_FLOAT8E8M0) X(ONYX_INT4) X(ONYX_UINT4) X(ONYX_INT2)              \
    X(ONYX_UINT2) X(ONYX_FLOAT4E2M1) X(ONYX_FLOAT6E2M3) X(ONYX_FLOAT6E3M2)
#define WF(DT) [DT] = wf_##DT,
#define WI(DT) [DT] = wi_##DT,
#define WU(DT) [DT] = wu_##DT,
static const write_fn writers[3][ONYX_DTYPE_COUNT] = {
    [K_F64] = {TARGETS(WF)}, [K_I64] = {TARGETS(WI)}, [K_U64] = {TARGETS(WU)}};

/* ---- direct loops for the pairs models cast most, skipping the canonical buffer; each gives
 * exactly what the read/write pair would */

typedef void (*direct_fn)(const void *src, int64_t start, int64_t n, void *dst);

#define DIRECT(S, ST, D, DT, EXPR)                                                                 \
    static void direct_##S##_##D(const void *src, int64_t start, int64_t n, void *dst) {           \
        const ST *s = (const ST *)src + start;                                                     \
        DT *d = (DT *)dst + start;                                                                 \
        CPU_SIMD for (int64_t k = 0; k < n; k++) {                                                 \
            ST v = s[k];                                                                           \
            d[k] = (DT)(EXPR);                                                                     \
        }                                                                                          \
    }
#define DIRECT_PAIRS(X)                                                                            \
    X(ONYX_FLOAT, float, ONYX_FLOAT16, uint16_t, cpu_float_to_fp16(v))                             \
    X(ONYX_FLOAT16, uint16_t, ONYX_FLOAT, float, cpu_fp16_to_float(v))                             \
    X(ONYX_FLOAT, float, ONYX_BFLOAT16, uint16_t, cpu_float_to_bf16(v))                            \
    X(ONYX_BFLOAT16, uint16_t, ONYX_FLOAT, float, cpu_bf16_to_float(v))                            \
    X(ONYX_FLOAT, float, ONYX_DOUBLE, double, v)                                                   \
    X(ONYX_DOUBLE, double, ONYX_FLOAT, float, v)                                                   \
    X(ONYX_FLOAT, float, ONYX_INT64, int64_t, f64_to_i64(v))                                       \
    X(ONYX_FLOAT, float, ONYX_INT32, int32_t, f64_to_i64(v))                                       \
    X(ONYX_INT64, int64_t, ONYX_FLOAT, float, v)                                                   \
    X(ONYX_INT32, int32_t, ONYX_FLOAT, float, v)                                                   \
    X(ONYX_UINT8, uint8_t, ONYX_FLOAT, float, v)                                                   \
    X(ONYX_INT64, int64_t, ONYX_INT32, int32_t, (uint64_t)v)                                       \
    X(ONYX_INT32, int32_t, ONYX_INT64, int64_t, v)                                                 \
    X(ONYX_INT64, int64_t, ONYX_DOUBLE, double, v)                                                 \
    X(ONYX_BOOL, uint8_t, ONYX_FLOAT, float, v != 0)                                               \
    X(ONYX_FLOAT, float, ONYX_BOOL, uint8_t, v != 0)                                               \
    X(ONYX_BOOL, uint8_t, ONYX_INT64, int64_t, v != 0)                                             \
    X(ONYX_INT64, int64_t, ONYX_BOOL, uint8_t, v != 0)
DIRECT_PAIRS(DIRECT)

static void direct_f32_f16(const void *src, int64_t start, int64_t n, void *dst) {
    cpu_float_to_fp16_n((const float *)src + start, (uint16_t *)dst + start, n);
}
static void direct_f16_f32(const void *src, int64_t start, int64_t n, void *dst) {
    cpu_fp16_to_float_n((const uint16_t *)src + start, (float *)dst + start, n);
}

static direct_fn direct_for(onyx_dtype from, onyx_dtype to) {
    if (from == ONYX_FLOAT && to == ONYX_FLOAT16) return direct_f32_f16;
    if (from == ONYX_FLOAT16 && to == ONYX_FLOAT) return direct_f16_f32;
#define CASE(S, ST, D, DT, EXPR)                                                                   \
    if (from == S && to == D) return direct_##S##_##D;
    DIRECT_PAIRS(CASE)
#undef CASE
    return NULL;
}

/* ---- numeric -> numeric, in parallel blocks */

typedef struct block_job {
    const cast_ctx *cc;
    read_fn read;
    write_fn write;
    direct_fn direct; /* when set, used instead of read + write */
    const void *src;
    void *dst;
    int64_t numel;
} block_job;

static void run_blocks(void *arg, int64_t begin, int64_t end) {
    const block_job *job = arg;
    canon buf;
    for (int64_t blk = begin; blk < end; blk++) {
        int64_t start = blk * BLK;
        int64_t n = job->numel - start < BLK ? job->numel - start : BLK;
        if (job->direct) {
            job->direct(job->src, start, n, job->dst);
            continue;
        }
        job->read(job->src, start, n, &buf);
        job->write(job->cc, &buf, start, n, job->dst);
    }
}

/* ---- strings */

/* Strings -> numbers: what the target's canonical form wants. Garbage parses as 0. */
static void parse_string(const char *s, canon_kind kind, onyx_dtype to, canon *b, int64_t k) {
    char *end;
    if (to == ONYX_BOOL) {
        while (isspace((unsigned char)*s)) s++;
        if (strncasecmp(s, "true", 4) == 0) b->i[k] = 1;
        else if (strncasecmp(s, "false", 5) == 0) b->i[k] = 0;
        else b->i[k] = strtod(s, NULL) != 0;
        return;
    }
    if (kind == K_F64) {
        b->f[k] = strtod(s, NULL);
        return;
    }
    /* integers parse exactly when they can, else through double ("100.5" -> 100) */
    if (kind == K_U64 && strchr(s, '-') == NULL) {
        uint64_t u = strtoull(s, &end, 10);
        while (isspace((unsigned char)*end)) end++;
        b->u[k] = (*end == 0 && end != s) ? u : f64_to_u64(strtod(s, NULL));
        return;
    }
    int64_t v = strtoll(s, &end, 10);
    while (isspace((unsigned char)*end)) end++;
    if (*end != 0 || end == s) v = f64_to_i64(strtod(s, NULL));
    if (kind == K_U64) b->u[k] = (uint64_t)v;
    else b->i[k] = v;
}

/* True when text `s` reads back as the value x of type `d`. */
static bool reads_back(const char *s, double x, onyx_dtype d) {
    double p = strtod(s, NULL);
    switch (d) {
    case ONYX_DOUBLE: return p == x;
    case ONYX_FLOAT: return (float)p == (float)x;
    case ONYX_FLOAT16: return floatconv_double_to_fp16(p) == floatconv_double_to_fp16(x);
    case ONYX_BFLOAT16: return floatconv_double_to_bf16(p) == floatconv_double_to_bf16(x);
    case ONYX_FLOAT8E8M0: return p == x;
    default: return floatconv_encode(d, p, false) == floatconv_encode(d, x, false);
    }
}

/* numpy's str() of a float scalar: the shortest digits that read back, positional when
 * 1e-4 <= |x| < cutoff (1e3 for half, 1e6 for float, 1e16 for double), else d.ddde+XX. */
static void format_float(char *out, size_t cap, double x, onyx_dtype d) {
    if (isnan(x)) {
        snprintf(out, cap, "nan");
        return;
    }
    if (isinf(x)) {
        snprintf(out, cap, x < 0 ? "-inf" : "inf");
        return;
    }
    if (x == 0) {
        snprintf(out, cap, signbit(x) ? "-0.0" : "0.0");
        return;
    }
    char sci[64];
    for (int p = 1; p <= 17; p++) {
        snprintf(sci, sizeof sci, "%.*e", p - 1, x);
        if (reads_back(sci, x, d)) break;
    }
    /* sci is [-]d[.ddd]e(+|-)XX: split into digits and exponent */
    const char *m = sci;
    bool neg = *m == '-';
    if (neg) m++;
    char digits[32];
    int nd = 0;
    for (; *m && *m != 'e'; m++)
        if (isdigit((unsigned char)*m) && nd < 31) digits[nd++] = *m;
    while (nd > 1 && digits[nd - 1] == '0') nd--;
    digits[nd] = 0;
    int exp10 = atoi(m + 1);
    double cutoff = d == ONYX_DOUBLE ? 1e16 : d == ONYX_FLOAT16 ? 1e3 : 1e6;
    double a = fabs(x);
    size_t n = 0;
    if (neg) out[n++] = '-';
    if (a >= 1e-4 && a < cutoff) {
        if (exp10 >= 0) {
            for (int i = 0; i <= exp10; i++) out[n++] = i < nd ? digits[i] : '0';
            out[n++] = '.';
            if (nd > exp10 + 1)
                for (int i = exp10 + 1; i < nd; i++) out[n++] = digits[i];
            else out[n++] = '0';
        } else {
            out[n++] = '0';
            out[n++] = '.';
            for (int i = 0; i < -exp10 - 1; i++) out[n++] = '0';
            for (int i = 0; i < nd; i++) out[n++] = digits[i];
        }
        out[n] = 0;
    } else {
        out[n++] = digits[0];
        if (nd > 1) {
            out[n++] = '.';
            for (int i = 1; i < nd; i++) out[n++] = digits[i];
        }
        snprintf(out + n, cap - n, "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
    }
}

static onyx_status cast_to_string(const tensor *in, tensor *out) {
    char text[96];
    if (in->dtype == ONYX_STRING) {
        char *const *s = in->data;
        for (int64_t k = 0; k < in->numel; k++) TRY(tensor_set_string(out, k, s[k], strlen(s[k])));
        return ONYX_OK;
    }
    read_fn read = readers[in->dtype];
    if (!read)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "cast from %s to string",
                          onyx_dtype_name(in->dtype));
    canon_kind kind = kind_of(in->dtype);
    canon buf;
    for (int64_t start = 0; start < in->numel; start += BLK) {
        int64_t n = in->numel - start < BLK ? in->numel - start : BLK;
        read(in->data, start, n, &buf);
        for (int64_t k = 0; k < n; k++) {
            if (in->dtype == ONYX_BOOL) snprintf(text, sizeof text, buf.i[k] ? "True" : "False");
            else if (kind == K_I64) snprintf(text, sizeof text, "%lld", (long long)buf.i[k]);
            else if (kind == K_U64)
                snprintf(text, sizeof text, "%llu", (unsigned long long)buf.u[k]);
            else format_float(text, sizeof text, buf.f[k], in->dtype);
            TRY(tensor_set_string(out, start + k, text, strlen(text)));
        }
    }
    return ONYX_OK;
}

static onyx_status cast_from_string(const cast_ctx *cc, const tensor *in, tensor *out) {
    canon_kind kind = kind_of(out->dtype);
    if (out->dtype == ONYX_BOOL) kind = K_I64;
    write_fn write = writers[kind][out->dtype];
    if (!write)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "cast from string to %s",
                          onyx_dtype_name(out->dtype));
    canon buf;
    char *const *s = in->data;
    for (int64_t start = 0; start < in->numel; start += BLK) {
        int64_t n = in->numel - start < BLK ? in->numel - start : BLK;
        for (int64_t k = 0; k < n; k++) parse_string(s[start + k], kind, out->dtype, &buf, k);
        write(cc, &buf, start, n, out->data);
    }
    return ONYX_OK;
}

/* ---- entry points */

static floatconv_round round_mode(const graph_node *n) {
    const char *m = attr_string(n, "round_mode", "up");
    if (strcasecmp(m, "down") == 0) return FLOATCONV_DOWN;
    if (strcasecmp(m, "nearest") == 0) return FLOATCONV_NEAREST;
    return FLOATCONV_UP;
}

static onyx_status cast_run(const kernel_call *c) {
    const tensor *in = kernel_input(c, 0);
    tensor *out = kernel_output(c, 0);
    if (!in || !out)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "%s is missing", in ? "output 0" : "input 0");
    if (in->numel != out->numel)
        return onyx_error(ONYX_ERR_SHAPE, "output has %lld elements, expected the input's %lld",
                          (long long)out->numel, (long long)in->numel);
    if ((unsigned)in->dtype >= ONYX_DTYPE_COUNT || (unsigned)out->dtype >= ONYX_DTYPE_COUNT)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "cast between unknown types %d and %d",
                          (int)in->dtype, (int)out->dtype);
    cast_ctx cc = {attr_int(c->node, "saturate", 1) != 0, round_mode(c->node)};
    if (out->dtype == ONYX_STRING) return cast_to_string(in, out);
    if (in->dtype == ONYX_STRING) return cast_from_string(&cc, in, out);
    if (in->dtype == out->dtype) return out->data == in->data ? ONYX_OK : tensor_copy_data(out, in);
    read_fn read = readers[in->dtype];
    write_fn write = writers[kind_of(in->dtype)][out->dtype];
    if (!read || !write)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "cast from %s to %s is not supported",
                          onyx_dtype_name(in->dtype), onyx_dtype_name(out->dtype));
    block_job job = {&cc, read, write, direct_for(in->dtype, out->dtype), in->data, out->data,
                     in->numel};
    int64_t blocks = (in->numel + BLK - 1) / BLK;
    parallel_for(blocks, 32, run_blocks, &job);
    return ONYX_OK;
}

onyx_status cpu_cast(const kernel_call *c) { return cast_run(c); }

onyx_status cpu_castlike(const kernel_call *c) { return cast_run(c); }
