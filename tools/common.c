/* Helpers shared by the onyx tools: element conversion, formatting, deterministic inputs, files. */
#include "tools/common.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double tool_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

const char *tool_kind_name(onyx_value_kind kind) {
    switch (kind) {
    case ONYX_VALUE_TENSOR: return "tensor";
    case ONYX_VALUE_SEQUENCE: return "sequence";
    case ONYX_VALUE_OPTIONAL: return "optional";
    case ONYX_VALUE_MAP: return "map";
    default: return "none";
    }
}

/* ---------------------------------------------------------------- small float formats */

float tool_fp16_to_float(uint16_t h) {
    unsigned e = (h >> 10) & 0x1f, m = h & 0x3ff;
    float v;
    if (e == 0) v = ldexpf((float)m, -24);
    else if (e == 31) v = m ? NAN : INFINITY;
    else v = ldexpf((float)(m | 0x400), (int)e - 25);
    return (h & 0x8000) ? -v : v;
}

float tool_bf16_to_float(uint16_t b) {
    uint32_t x = (uint32_t)b << 16;
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}

uint16_t tool_float_to_fp16(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) return sign | 0x7e00;
    /* 65520 is the midpoint between the largest half (65504) and 65536; ties go to even = inf. */
    if (ax >= 0x477ff000u) return sign | 0x7c00;
    if (ax < 0x38800000u) {
        /* Subnormal half: scaling by 2^24 is exact and nearbyintf rounds half to even. A result
         * of 1024 is exactly the encoding of the smallest normal. */
        float r = nearbyintf(fabsf(f) * 0x1p24f);
        return sign | (uint16_t)r;
    }
    uint32_t h = ((((ax >> 23) - 127 + 15) << 10) | ((ax & 0x7fffffu) >> 13));
    uint32_t rem = ax & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) h++; /* a carry into the exponent is right */
    return sign | (uint16_t)h;
}

uint16_t tool_float_to_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40);
    x += 0x7fffu + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

double tool_float8_to_double(onyx_dtype dtype, uint8_t b) {
    int s = b >> 7;
    double v;
    switch (dtype) {
    case ONYX_FLOAT8E4M3FN: {
        int e = (b >> 3) & 0xf, m = b & 7;
        if (e == 15 && m == 7) return NAN;
        v = e == 0 ? ldexp(m, -9) : ldexp(8 + m, e - 10);
        break;
    }
    case ONYX_FLOAT8E4M3FNUZ: {
        int e = (b >> 3) & 0xf, m = b & 7;
        if (b == 0x80) return NAN;
        v = e == 0 ? ldexp(m, -10) : ldexp(8 + m, e - 11);
        break;
    }
    case ONYX_FLOAT8E5M2: {
        int e = (b >> 2) & 0x1f, m = b & 3;
        if (e == 31) return m ? NAN : (s ? -INFINITY : INFINITY);
        v = e == 0 ? ldexp(m, -16) : ldexp(4 + m, e - 17);
        break;
    }
    case ONYX_FLOAT8E5M2FNUZ: {
        int e = (b >> 2) & 0x1f, m = b & 3;
        if (b == 0x80) return NAN;
        v = e == 0 ? ldexp(m, -17) : ldexp(4 + m, e - 18);
        break;
    }
    case ONYX_FLOAT8E8M0:
        /* Unsigned power of two; 0xff is the only NaN. */
        return b == 0xff ? NAN : ldexp(1.0, (int)b - 127);
    default: return NAN;
    }
    return s ? -v : v;
}

double tool_float4_to_double(uint8_t nibble) {
    int e = (nibble >> 1) & 3, m = nibble & 1;
    double v = e == 0 ? 0.5 * m : ldexp(2 + m, e - 2);
    return (nibble & 8) ? -v : v;
}

double tool_float6_to_double(onyx_dtype dtype, uint8_t code) {
    double v;
    if (dtype == ONYX_FLOAT6E2M3) {
        int e = (code >> 3) & 3, m = code & 7; /* bias 1 */
        v = e == 0 ? ldexp(m, -3) : ldexp(8 + m, e - 4);
    } else {
        int e = (code >> 2) & 7, m = code & 3; /* bias 3 */
        v = e == 0 ? ldexp(m, -4) : ldexp(4 + m, e - 5);
    }
    return (code & 0x20) ? -v : v;
}

/* ---------------------------------------------------------------- dtype classes */

bool tool_dtype_is_floating(onyx_dtype d) {
    switch (d) {
    case ONYX_FLOAT:
    case ONYX_DOUBLE:
    case ONYX_FLOAT16:
    case ONYX_BFLOAT16:
    case ONYX_FLOAT8E4M3FN:
    case ONYX_FLOAT8E4M3FNUZ:
    case ONYX_FLOAT8E5M2:
    case ONYX_FLOAT8E5M2FNUZ:
    case ONYX_FLOAT8E8M0:
    case ONYX_FLOAT4E2M1:
    case ONYX_FLOAT6E2M3:
    case ONYX_FLOAT6E3M2: return true;
    default: return false;
    }
}

bool tool_dtype_is_complex(onyx_dtype d) { return d == ONYX_COMPLEX64 || d == ONYX_COMPLEX128; }

bool tool_dtype_is_integer(onyx_dtype d) {
    switch (d) {
    case ONYX_INT8:
    case ONYX_INT16:
    case ONYX_INT32:
    case ONYX_INT64:
    case ONYX_UINT8:
    case ONYX_UINT16:
    case ONYX_UINT32:
    case ONYX_UINT64:
    case ONYX_INT4:
    case ONYX_UINT4:
    case ONYX_INT2:
    case ONYX_UINT2: return true;
    default: return false;
    }
}

/* Packed sub-byte element i as its raw (unsigned) bit pattern: bits [i*b, (i+1)*b) of the
 * little-endian bit stream (a 6-bit element may span two bytes). */
static unsigned subbyte_bits(onyx_dtype d, const void *data, int64_t i) {
    const uint8_t *p = data;
    unsigned b = (unsigned)onyx_dtype_bits(d);
    uint64_t at = (uint64_t)i * b;
    unsigned v = p[at / 8];
    if (at % 8 + b > 8) v |= (unsigned)p[at / 8 + 1] << 8;
    return (v >> (at % 8)) & ((1u << b) - 1);
}

/* Signed value of a packed int4/int2 element. */
static int subbyte_signed(onyx_dtype d, unsigned bits) {
    if (d == ONYX_INT4) return bits >= 8 ? (int)bits - 16 : (int)bits;
    if (d == ONYX_INT2) return bits >= 2 ? (int)bits - 4 : (int)bits;
    return (int)bits;
}

double tool_elem_double(onyx_dtype d, const void *data, int64_t i) {
    switch (d) {
    case ONYX_FLOAT: return ((const float *)data)[i];
    case ONYX_DOUBLE: return ((const double *)data)[i];
    case ONYX_FLOAT16: return tool_fp16_to_float(((const uint16_t *)data)[i]);
    case ONYX_BFLOAT16: return tool_bf16_to_float(((const uint16_t *)data)[i]);
    case ONYX_FLOAT8E4M3FN:
    case ONYX_FLOAT8E4M3FNUZ:
    case ONYX_FLOAT8E5M2:
    case ONYX_FLOAT8E5M2FNUZ:
    case ONYX_FLOAT8E8M0: return tool_float8_to_double(d, ((const uint8_t *)data)[i]);
    case ONYX_FLOAT4E2M1: return tool_float4_to_double((uint8_t)subbyte_bits(d, data, i));
    case ONYX_FLOAT6E2M3:
    case ONYX_FLOAT6E3M2: return tool_float6_to_double(d, (uint8_t)subbyte_bits(d, data, i));
    case ONYX_INT8: return ((const int8_t *)data)[i];
    case ONYX_INT16: return ((const int16_t *)data)[i];
    case ONYX_INT32: return ((const int32_t *)data)[i];
    case ONYX_INT64: return (double)((const int64_t *)data)[i];
    case ONYX_UINT8: return ((const uint8_t *)data)[i];
    case ONYX_UINT16: return ((const uint16_t *)data)[i];
    case ONYX_UINT32: return ((const uint32_t *)data)[i];
    case ONYX_UINT64: return (double)((const uint64_t *)data)[i];
    case ONYX_BOOL: return ((const uint8_t *)data)[i] != 0;
    case ONYX_INT4:
    case ONYX_UINT4:
    case ONYX_INT2:
    case ONYX_UINT2: return subbyte_signed(d, subbyte_bits(d, data, i));
    default: return NAN;
    }
}

bool tool_elem_int_equal(onyx_dtype d, const void *a, const void *b, int64_t i) {
    switch (d) {
    case ONYX_BOOL: return (((const uint8_t *)a)[i] != 0) == (((const uint8_t *)b)[i] != 0);
    case ONYX_INT4:
    case ONYX_UINT4:
    case ONYX_INT2:
    case ONYX_UINT2: return subbyte_bits(d, a, i) == subbyte_bits(d, b, i);
    default: {
        size_t size = onyx_dtype_bits(d) / 8;
        return size > 0 && memcmp((const char *)a + (size_t)i * size,
                                  (const char *)b + (size_t)i * size, size) == 0;
    }
    }
}

const char *tool_format_elem(onyx_dtype d, const void *data, int64_t i, char *buf, size_t cap) {
    switch (d) {
    case ONYX_INT8:
    case ONYX_INT16:
    case ONYX_INT32:
    case ONYX_INT4:
    case ONYX_INT2:
    case ONYX_UINT8:
    case ONYX_UINT16:
    case ONYX_UINT32:
    case ONYX_UINT4:
    case ONYX_UINT2: snprintf(buf, cap, "%.0f", tool_elem_double(d, data, i)); break;
    case ONYX_INT64: snprintf(buf, cap, "%" PRId64, ((const int64_t *)data)[i]); break;
    case ONYX_UINT64: snprintf(buf, cap, "%" PRIu64, ((const uint64_t *)data)[i]); break;
    case ONYX_BOOL: snprintf(buf, cap, "%s", ((const uint8_t *)data)[i] ? "true" : "false"); break;
    case ONYX_STRING: {
        const char *s = ((char *const *)data)[i];
        if (!s) snprintf(buf, cap, "(null)");
        else snprintf(buf, cap, "\"%.40s%s\"", s, strlen(s) > 40 ? "..." : "");
        break;
    }
    case ONYX_COMPLEX64: {
        const float *c = (const float *)data + 2 * i;
        snprintf(buf, cap, "(%.7g%+.7gj)", c[0], c[1]);
        break;
    }
    case ONYX_COMPLEX128: {
        const double *c = (const double *)data + 2 * i;
        snprintf(buf, cap, "(%.10g%+.10gj)", c[0], c[1]);
        break;
    }
    case ONYX_DOUBLE: snprintf(buf, cap, "%.17g", ((const double *)data)[i]); break;
    default:
        if (tool_dtype_is_floating(d)) snprintf(buf, cap, "%.9g", tool_elem_double(d, data, i));
        else snprintf(buf, cap, "?");
        break;
    }
    return buf;
}

/* ---------------------------------------------------------------- shapes */

const char *tool_format_dims(int64_t rank, const int64_t *dims, const char *const *dim_params,
                             char *buf, size_t cap) {
    size_t len = 0;
    if (cap == 0) return buf;
    buf[0] = '\0';
    if (rank < 0) {
        snprintf(buf, cap, "[?]");
        return buf;
    }
    len += (size_t)snprintf(buf + len, cap - len, "[");
    for (int64_t k = 0; k < rank && len < cap; k++) {
        const char *sep = k ? "," : "";
        if (dim_params && dim_params[k])
            len += (size_t)snprintf(buf + len, cap - len, "%s%s", sep, dim_params[k]);
        else if (!dims || dims[k] < 0) len += (size_t)snprintf(buf + len, cap - len, "%s?", sep);
        else len += (size_t)snprintf(buf + len, cap - len, "%s%" PRId64, sep, dims[k]);
    }
    if (len < cap) snprintf(buf + len, cap - len, "]");
    return buf;
}

const char *tool_format_index(size_t rank, const int64_t *dims, int64_t i, char *buf, size_t cap) {
    int64_t idx[64];
    if (rank > 64) rank = 64;
    for (size_t k = rank; k-- > 0;) {
        int64_t d = dims[k] > 0 ? dims[k] : 1;
        idx[k] = i % d;
        i /= d;
    }
    return tool_format_dims((int64_t)rank, idx, NULL, buf, cap);
}

/* ---------------------------------------------------------------- inputs */

onyx_status tool_make_input(onyx_dtype dtype, int64_t rank, const int64_t *dims, onyx_value **out) {
    int64_t shape[64];
    int64_t n = 1;
    if (rank < 0 || rank > 64) return ONYX_ERR_UNSUPPORTED;
    for (int64_t k = 0; k < rank; k++) {
        shape[k] = dims && dims[k] >= 0 ? dims[k] : 1;
        if (shape[k] > 0 && n > INT64_MAX / shape[k]) return ONYX_ERR_NO_MEMORY;
        n *= shape[k];
    }
    if (n > ((int64_t)1 << 31)) return ONYX_ERR_NO_MEMORY; /* a generated input, not a real one */
    if (dtype == ONYX_STRING) {
        const char **strings = calloc((size_t)n + 1, sizeof *strings);
        if (!strings) return ONYX_ERR_NO_MEMORY;
        for (int64_t i = 0; i < n; i++) strings[i] = "";
        onyx_status st = onyx_value_new_string_tensor((size_t)rank, shape, strings, out);
        free(strings);
        return st;
    }
    size_t bits = onyx_dtype_bits(dtype);
    if (bits == 0) return ONYX_ERR_UNSUPPORTED;
    size_t nbytes = ((size_t)n * bits + 7) / 8;
    unsigned char *data = calloc(nbytes ? nbytes : 1, 1);
    if (!data) return ONYX_ERR_NO_MEMORY;
    bool arange = dtype == ONYX_FLOAT || dtype == ONYX_DOUBLE || dtype == ONYX_FLOAT16 ||
                  dtype == ONYX_BFLOAT16;
    for (int64_t i = 0; arange && i < n; i++) {
        /* arange(n) / n in float64, then cast, as numpy does it. */
        double v = (double)i / (double)n;
        switch (dtype) {
        case ONYX_FLOAT: ((float *)data)[i] = (float)v; break;
        case ONYX_DOUBLE: ((double *)data)[i] = v; break;
        case ONYX_FLOAT16: ((uint16_t *)data)[i] = tool_float_to_fp16((float)v); break;
        case ONYX_BFLOAT16: ((uint16_t *)data)[i] = tool_float_to_bf16((float)v); break;
        default: break;
        }
    }
    onyx_status st = onyx_value_new_tensor(dtype, (size_t)rank, shape, data, nbytes, out);
    free(data);
    return st;
}

/* ---------------------------------------------------------------- files */

int tool_read_file(const char *path, char **data, size_t *size) {
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int err = 0;
    if (!f) return errno ? errno : EIO;
    for (;;) {
        if (len + 1 >= cap) {
            size_t ncap = cap ? cap * 2 : 65536;
            char *nb = realloc(buf, ncap);
            if (!nb) {
                err = ENOMEM;
                break;
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0) {
            if (ferror(f)) err = EIO;
            break;
        }
    }
    fclose(f);
    if (err) {
        free(buf);
        return err;
    }
    buf[len] = '\0';
    *data = buf;
    *size = len;
    return 0;
}
