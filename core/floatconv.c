/* Small float formats described by (exponent bits, mantissa bits, bias, special-value style) and
 * one encoder/decoder pair for all of them, exact in double arithmetic. */
#include "core/floatconv.h"

#include <math.h>
#include <string.h>

typedef enum special {
    SP_IEEE,  /* all-ones exponent: Inf (mantissa 0) and NaN (e5m2, half, bfloat16) */
    SP_FN,    /* no Inf; S.1111.111 is NaN (e4m3fn) */
    SP_UZ,    /* no Inf, no -0; 0x80 is the only NaN (e4m3fnuz, e5m2fnuz) */
    SP_NONE,  /* no Inf, no NaN: overflow saturates (float4 e2m1, float6 e2m3 and e3m2) */
} special;

typedef struct format {
    int ebits, mbits, bias;
    special sp;
    uint32_t max_code; /* largest finite magnitude */
    uint32_t nan_code; /* quiet NaN, positive */
} format;

static const format F_E4M3FN = {4, 3, 7, SP_FN, 0x7E, 0x7F};
static const format F_E4M3FNUZ = {4, 3, 8, SP_UZ, 0x7F, 0x80};
static const format F_E5M2 = {5, 2, 15, SP_IEEE, 0x7B, 0x7E};
static const format F_E5M2FNUZ = {5, 2, 16, SP_UZ, 0x7F, 0x80};
static const format F_E2M1 = {2, 1, 1, SP_NONE, 0x7, 0};
static const format F_E2M3 = {2, 3, 1, SP_NONE, 0x1F, 0}; /* largest 7.5 */
static const format F_E3M2 = {3, 2, 3, SP_NONE, 0x1F, 0}; /* largest 28 */
static const format F_FP16 = {5, 10, 15, SP_IEEE, 0x7BFF, 0x7E00};
static const format F_BF16 = {8, 7, 127, SP_IEEE, 0x7F7F, 0x7FC0};

static const format *format_of(onyx_dtype d) {
    switch (d) {
    case ONYX_FLOAT8E4M3FN: return &F_E4M3FN;
    case ONYX_FLOAT8E4M3FNUZ: return &F_E4M3FNUZ;
    case ONYX_FLOAT8E5M2: return &F_E5M2;
    case ONYX_FLOAT8E5M2FNUZ: return &F_E5M2FNUZ;
    case ONYX_FLOAT4E2M1: return &F_E2M1;
    case ONYX_FLOAT6E2M3: return &F_E2M3;
    case ONYX_FLOAT6E3M2: return &F_E3M2;
    default: return NULL;
    }
}

bool floatconv_is_small_float(onyx_dtype d) {
    return format_of(d) != NULL || d == ONYX_FLOAT8E8M0;
}

static uint32_t encode(const format *f, double x, bool saturate) {
    uint32_t sign_bit = 1u << (f->ebits + f->mbits);
    bool neg = signbit(x) != 0;
    uint32_t sign = neg ? sign_bit : 0;
    if (isnan(x)) {
        switch (f->sp) {
        case SP_UZ: return f->nan_code;
        /* ml_dtypes (the reference's float4 and float6) maps NaN to -0 and -NaN to +0 */
        case SP_NONE: return neg ? 0 : sign_bit;
        default: return f->nan_code | sign;
        }
    }
    uint32_t overflow;
    if (saturate || f->sp == SP_NONE) overflow = f->max_code | sign;
    else if (f->sp == SP_IEEE) overflow = (((1u << f->ebits) - 1) << f->mbits) | sign;
    else overflow = f->nan_code | (f->sp == SP_FN ? sign : 0);
    double a = fabs(x);
    if (isinf(a)) return overflow;
    if (a == 0) return f->sp == SP_UZ ? 0 : sign;
    int k;
    (void)frexp(a, &k); /* a = m * 2^k, m in [0.5, 1): floor(log2 a) = k - 1 */
    int emin = 1 - f->bias;
    int e = k - 1 < emin ? emin : k - 1;
    if (e > f->bias + 2) return overflow; /* far beyond every format's range; keeps ldexp tame */
    double r = nearbyint(ldexp(a, f->mbits - e)); /* default rounding mode: nearest even */
    uint32_t one = 1u << f->mbits;
    if (r >= 2.0 * one) {
        r = one;
        e++;
    }
    uint32_t q = (uint32_t)r;
    uint32_t code;
    if (q < one) code = q; /* subnormal (or zero) */
    else code = ((uint32_t)(e + f->bias) << f->mbits) | (q - one);
    if (code > f->max_code) return overflow;
    if (code == 0 && f->sp == SP_UZ) return 0;
    return code | sign;
}

uint8_t floatconv_encode(onyx_dtype d, double x, bool saturate) {
    const format *f = format_of(d);
    return f ? (uint8_t)encode(f, x, saturate) : 0;
}

static double decode(const format *f, uint32_t code) {
    uint32_t sign_bit = 1u << (f->ebits + f->mbits);
    uint32_t emask = (1u << f->ebits) - 1, mmask = (1u << f->mbits) - 1;
    uint32_t mag = code & (sign_bit - 1);
    bool neg = (code & sign_bit) != 0;
    uint32_t be = mag >> f->mbits, m = mag & mmask;
    switch (f->sp) {
    case SP_UZ:
        if (code == sign_bit) return NAN;
        break;
    case SP_FN:
        if (mag == (sign_bit - 1)) return neg ? -NAN : NAN;
        break;
    case SP_IEEE:
        if (be == emask) {
            if (m) return neg ? -NAN : NAN;
            return neg ? -INFINITY : INFINITY;
        }
        break;
    case SP_NONE: break;
    }
    double v = be == 0 ? ldexp((double)m, 1 - f->bias - f->mbits)
                       : ldexp((double)(m | (1u << f->mbits)), (int)be - f->bias - f->mbits);
    return neg ? -v : v;
}

float floatconv_decode(onyx_dtype d, uint8_t code) {
    if (d == ONYX_FLOAT8E8M0) return code == 0xFF ? NAN : ldexpf(1.0f, (int)code - 127);
    const format *f = format_of(d);
    return f ? (float)decode(f, code) : NAN;
}

uint8_t floatconv_to_e8m0(float x, bool saturate, floatconv_round mode) {
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    uint32_t exponent = (bits >> 23) & 0xFF;
    if (exponent == 0xFF) return 0xFF;
    bool round_up = false;
    if (mode == FLOATCONV_NEAREST) {
        /* the reference's guard/round/sticky rule, including its use of "exponent > 0" as lsb */
        bool g = (bits & 0x400000) != 0, r = (bits & 0x200000) != 0, s = (bits & 0x1FFFFF) != 0;
        round_up = g && (r || s || exponent > 0);
    } else if (mode == FLOATCONV_UP) {
        round_up = (bits & 0x7FFFFF) != 0;
    }
    if (round_up && saturate && exponent == 0xFE) round_up = false;
    return (uint8_t)(exponent + (round_up ? 1 : 0));
}

uint16_t floatconv_double_to_fp16(double x) { return (uint16_t)encode(&F_FP16, x, false); }

uint16_t floatconv_double_to_bf16(double x) { return (uint16_t)encode(&F_BF16, x, false); }
