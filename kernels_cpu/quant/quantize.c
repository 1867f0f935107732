/* CPU kernels of QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear over every quantized
 * type (8/16-bit ints, packed int4/int2, float8, packed float6/float4) in chunks: each chunk is
 * loaded as double, computed, and stored, so the type switches run per chunk, not per element. */
#include <math.h>
#include <pthread.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "core/floatconv.h"
#include "core/parallel.h"
#include "ops/quant/quant_common.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/cpu_types.h"
#include "kernels_cpu/common/dyn_q8.h"
#include "kernels_cpu/common/opaque.h"

/* Elements per chunk; a multiple of 8 so that chunks own whole bytes of packed outputs. */
#define CHUNK 256
/* Chunks per parallel task. */
#define GRAIN_CHUNKS 16

static bool is_subbyte(onyx_dtype d) { return dtype_in(d, DT_SUBBYTE); }

/* Element i of a packed 2-, 4- or 6-bit tensor (its code), sign-extended for int4/int2. */
static int subbyte_get(onyx_dtype d, const void *p, int64_t i) {
    int bits = dtype_packed_bits(d);
    unsigned v = dtype_packed_get(p, i, (unsigned)bits);
    if ((d == ONYX_INT4 || d == ONYX_INT2) && (v >> (bits - 1))) return (int)v - (1 << bits);
    return (int)v;
}

/* Sets element i of a packed tensor to code v. */
static void subbyte_set(onyx_dtype d, void *p, int64_t i, unsigned v) {
    dtype_packed_set(p, i, (unsigned)dtype_packed_bits(d), v);
}

/* n elements from element off of any numeric or quantized type, as double (exact). */
static void load(onyx_dtype d, const void *p, int64_t off, int64_t n, double *out) {
    switch (d) {
#define CASE(D, T)                                                                                 \
    case D: for (int64_t i = 0; i < n; i++) out[i] = (double)((const T *)p)[off + i]; break;
        CPU_FOR_NUMERIC(CASE)
#undef CASE
    case ONYX_FLOAT16:
        for (int64_t i = 0; i < n; i++) out[i] = cpu_fp16_to_float(((const uint16_t *)p)[off + i]);
        break;
    case ONYX_BFLOAT16:
        for (int64_t i = 0; i < n; i++) out[i] = cpu_bf16_to_float(((const uint16_t *)p)[off + i]);
        break;
    case ONYX_FLOAT4E2M1: case ONYX_FLOAT6E2M3: case ONYX_FLOAT6E3M2:
        for (int64_t i = 0; i < n; i++)
            out[i] = floatconv_decode(d, (uint8_t)subbyte_get(d, p, off + i));
        break;
    case ONYX_INT4: case ONYX_UINT4: case ONYX_INT2: case ONYX_UINT2:
        for (int64_t i = 0; i < n; i++) out[i] = subbyte_get(d, p, off + i);
        break;
    default: /* float8 */
        for (int64_t i = 0; i < n; i++) out[i] = floatconv_decode(d, ((const uint8_t *)p)[off + i]);
        break;
    }
}

/* v rounded to the precision of type d (float, double, float16, bfloat16). */
static double round_to(onyx_dtype d, double v) {
    switch (d) {
    case ONYX_FLOAT: return (double)(float)v;
    case ONYX_FLOAT16: return fp16_to_float(floatconv_double_to_fp16(v));
    case ONYX_BFLOAT16: return bf16_to_float(floatconv_double_to_bf16(v));
    default: return v;
    }
}

/* Integer range of an integer quantized type. */
static void int_range(onyx_dtype d, double *lo, double *hi) {
    switch (d) {
    case ONYX_INT8: *lo = -128, *hi = 127; break;
    case ONYX_UINT8: *lo = 0, *hi = 255; break;
    case ONYX_INT16: *lo = -32768, *hi = 32767; break;
    case ONYX_UINT16: *lo = 0, *hi = 65535; break;
    case ONYX_INT4: *lo = -8, *hi = 7; break;
    case ONYX_UINT4: *lo = 0, *hi = 15; break;
    case ONYX_INT2: *lo = -2, *hi = 1; break;
    default: *lo = 0, *hi = 3; break; /* UINT2 */
    }
}

/* One Quantize/Dequantize job: x viewed through the layout, scale and zero point. */
typedef struct q_job {
    const tensor *x, *s, *z;
    tensor *y;
    quant_layout l;
    onyx_dtype prec;   /* QuantizeLinear: precision of x / scale */
    bool saturate;
} q_job;

/* Calls fn on the pieces of [b, e) that stay within one row of the layout: fn(job, idx, n, scale
 * index of the first element, whether the scale index steps with the element (blocked)). */
static void for_pieces(const q_job *j, int64_t b, int64_t e,
                       void (*fn)(const q_job *, int64_t, int64_t, int64_t, bool)) {
    const quant_layout *l = &j->l;
    for (int64_t idx = b; idx < e;) {
        int64_t r = idx / l->inner, i0 = idx % l->inner;
        int64_t n = e - idx;
        if (n > l->inner - i0) n = l->inner - i0;
        int64_t o = r / l->D, a = r % l->D;
        fn(j, idx, n, quant_scale_index(l, o, a, i0), l->block > 0);
        idx += n;
    }
}

/* scale (or zero point) values of a piece: one value repeated, or n consecutive ones */
static void load_param(const tensor *t, int64_t si, bool step, int64_t n, double *out) {
    if (step) {
        load(t->dtype, t->data, si, n, out);
        return;
    }
    double v;
    load(t->dtype, t->data, si, 1, &v);
    for (int64_t i = 0; i < n; i++) out[i] = v;
}

/* ---- QuantizeLinear */

/* The common case in float: float x and scale, one scale per piece, 8/16-bit integer output.
 * Values are clamped to a small range first, so that adding and subtracting 1.5 * 2^23 rounds
 * them to the nearest even integer (NaN lands on the low end, as in the double path). */
#define DEFINE_Q_FAST(NAME, T)                                                                     \
    CPU_CLONES static void NAME(const float *x, float s, float z, float lo, float hi, T *y, int64_t n) {     \
        const float vlo = lo - z - 1, vhi = hi - z + 1, magic = 12582912.0f;                      \
        CPU_SIMD for (int64_t i = 0; i < n; i++) {                                                 \
            float v = x[i] / s;                                                                    \
            v = v > vlo ? v : vlo;                                                                 \
            v = v < vhi ? v : vhi;                                                                 \
            v = (v + magic) - magic + z;                                                           \
            v = v > lo ? v : lo;                                                                   \
            y[i] = (T)(v < hi ? v : hi);                                                           \
        }                                                                                          \
    }
DEFINE_Q_FAST(q_fast_s8, int8_t)
DEFINE_Q_FAST(q_fast_u8, uint8_t)
DEFINE_Q_FAST(q_fast_s16, int16_t)
DEFINE_Q_FAST(q_fast_u16, uint16_t)

/* Whether job j is the common case (float x and scale, 8/16-bit integer output). */
static bool q_fast_applies(const q_job *j) {
    onyx_dtype yd = j->y->dtype;
    return j->x->dtype == ONYX_FLOAT && j->s->dtype == ONYX_FLOAT && j->prec == ONYX_FLOAT &&
           (yd == ONYX_INT8 || yd == ONYX_UINT8 || yd == ONYX_INT16 || yd == ONYX_UINT16);
}

/* The common case: n elements of x quantized by scale and zero point si into y, of j's output
 * type. */
static void q_fast_into(const q_job *j, const float *x, void *y, int64_t n, int64_t si) {
    onyx_dtype yd = j->y->dtype;
    float s = ((const float *)j->s->data)[si];
    double z = 0, lo, hi;
    if (j->z) load(j->z->dtype, j->z->data, si, 1, &z);
    int_range(yd, &lo, &hi);
    switch (yd) {
    case ONYX_INT8: q_fast_s8(x, s, (float)z, (float)lo, (float)hi, y, n); break;
    case ONYX_UINT8: q_fast_u8(x, s, (float)z, (float)lo, (float)hi, y, n); break;
    case ONYX_INT16: q_fast_s16(x, s, (float)z, (float)lo, (float)hi, y, n); break;
    default: q_fast_u16(x, s, (float)z, (float)lo, (float)hi, y, n); break;
    }
}

static bool q_fast(const q_job *j, int64_t idx, int64_t n, int64_t si) {
    if (!q_fast_applies(j)) return false;
    q_fast_into(j, (const float *)j->x->data + idx,
                (char *)j->y->data + (size_t)idx * dtype_size(j->y->dtype), n, si);
    return true;
}

static void q_chunk(const q_job *j, int64_t idx, int64_t n, int64_t si, bool step) {
    double xv[CHUNK], sv[CHUNK], zv[CHUNK];
    onyx_dtype yd = j->y->dtype, p = j->prec;
    load(j->x->dtype, j->x->data, idx, n, xv);
    load_param(j->s, si, step, n, sv);
    if (j->z) load_param(j->z, si, step, n, zv);
    else for (int64_t i = 0; i < n; i++) zv[i] = 0;
    for (int64_t i = 0; i < n; i++) xv[i] = round_to(p, round_to(p, xv[i]) / round_to(p, sv[i]));
    if (floatconv_is_small_float(yd)) {
        /* onnx adds a zero point for float4 and float6 only (float8's must be 0), in numpy's
         * promotion of the quotient's type with theirs: float16 sums in float32. Without one
         * nothing is added (-0 stays -0). */
        bool packed = is_subbyte(yd), add = packed && j->z;
        onyx_dtype sum = p == ONYX_FLOAT16 ? ONYX_FLOAT : p;
        for (int64_t i = 0; i < n; i++) {
            double v = add ? round_to(sum, xv[i] + zv[i]) : xv[i];
            uint8_t code = floatconv_encode(yd, v, j->saturate);
            if (packed) subbyte_set(yd, j->y->data, idx + i, code);
            else ((uint8_t *)j->y->data)[idx + i] = code;
        }
        return;
    }
    double lo, hi;
    int_range(yd, &lo, &hi);
    for (int64_t i = 0; i < n; i++) {
        double v = nearbyint(xv[i]) + zv[i]; /* the default rounding mode: half to even */
        /* NaN lands on the low end, as numpy's cast to int32 then clip gives */
        xv[i] = v != v ? lo : v < lo ? lo : v > hi ? hi : v;
    }
    switch (yd) {
#define CASE(D, T)                                                                                 \
    case D: for (int64_t i = 0; i < n; i++) ((T *)j->y->data)[idx + i] = (T)xv[i]; break;
        CASE(ONYX_INT8, int8_t) CASE(ONYX_UINT8, uint8_t) CASE(ONYX_INT16, int16_t)
        CASE(ONYX_UINT16, uint16_t)
#undef CASE
    default:
        for (int64_t i = 0; i < n; i++) subbyte_set(yd, j->y->data, idx + i, (unsigned)(int)xv[i]);
        break;
    }
}

static void q_piece(const q_job *j, int64_t idx, int64_t n, int64_t si, bool step) {
    if (!step && q_fast(j, idx, n, si)) return;
    for (int64_t o = 0; o < n; o += CHUNK)
        q_chunk(j, idx + o, n - o < CHUNK ? n - o : CHUNK, step ? si + o : si, step);
}

static void q_task(void *ctx, int64_t b, int64_t e) {
    const q_job *j = ctx;
    int64_t n = j->x->numel;
    int64_t lo = b * CHUNK, hi = e * CHUNK < n ? e * CHUNK : n;
    for_pieces(j, lo, hi, q_piece);
}

/* Shared input checks: layout of scale and zero point against x. */
static onyx_status q_setup(const kernel_call *c, q_job *j) {
    j->x = kernel_input(c, 0);
    j->s = kernel_input(c, 1);
    j->z = kernel_input(c, 2);
    j->y = kernel_output(c, 0);
    if (!j->x || !j->s || !j->y) return onyx_error(ONYX_ERR_SHAPE, "x and scale are required");
    TRY(quant_layout_of(j->x->rank, j->x->dims, j->s->rank, j->s->dims,
                        attr_int(c->node, "axis", 1), attr_int(c->node, "block_size", 0),
                        "scale (input 1)", &j->l));
    if (j->z && !shape_equal(j->z->rank, j->z->dims, j->s->rank, j->s->dims) &&
        !(j->z->numel == 1 && j->s->numel == 1))
        return onyx_error(ONYX_ERR_SHAPE, "zero point (input 2) and scale (input 1) have "
                          "different shapes");
    if (j->y->numel != j->x->numel)
        return onyx_error(ONYX_ERR_SHAPE, "output has %lld elements, expected %lld",
                          (long long)j->y->numel, (long long)j->x->numel);
    return ONYX_OK;
}

static void run_chunks(q_job *j, void (*task)(void *, int64_t, int64_t)) {
    int64_t chunks = (j->x->numel + CHUNK - 1) / CHUNK;
    parallel_for(chunks, GRAIN_CHUNKS, task, j);
}

/* ---- QuantizeLinear into the opaque layout (channels last, core/fuse.h): a network's input,
 * or a float step's output (DenseNet's pre-activation BatchNorm and ReLU), quantized by one scale
 * straight into the layout the next conv reads, so that the conv does not reorder it; the same
 * bytes as the plain layout's q_fast. Three channels (an image): each task quantizes a run of
 * pixels channel by channel and interleaves them by vector permutes. */

/* Pixels per task of three channels. */
#define LAST_PIXELS 1024

/* Where each byte of three vectors of 64 interleaved pixels comes from: a pixel's channel 0 and
 * 1 from a two-table byte permute of rows 0 and 1 (from01: the pixel, 64 past it for row 1),
 * its channel 2 (the bits of is2) from a permute of row 2 (from2). */
typedef struct {
    uint8_t from01[3][64], from2[3][64];
    uint64_t is2[3];
} interleave_tables;

static void interleave_tables_init(interleave_tables *t) {
    memset(t, 0, sizeof *t);
    for (int k = 0; k < 192; k++) {
        int p = k / 3, ch = k % 3;
        t->from01[k / 64][k % 64] = (uint8_t)(ch == 1 ? 64 + p : p);
        t->from2[k / 64][k % 64] = (uint8_t)p;
        if (ch == 2) t->is2[k / 64] |= (uint64_t)1 << (k % 64);
    }
}

/* Three rows of n bytes (an image's RGB channels) interleaved pixel by pixel. (The compiler
 * vectorizes no stores of three bytes; byte by byte this cost twice the conv's own reorder.) */
static void interleave3(const interleave_tables *t, const uint8_t *r0, const uint8_t *r1,
                        const uint8_t *r2, int64_t n, uint8_t *out) {
    (void)t;
    for (int64_t i = 0; i < n; i++) {
        out[3 * i] = r0[i];
        out[3 * i + 1] = r1[i];
        out[3 * i + 2] = r2[i];
    }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* The same with AVX-512 VBMI, 64 pixels into three vectors by the tables' permutes. */
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) static void
interleave3_vbmi(const interleave_tables *t, const uint8_t *r0, const uint8_t *r1,
                 const uint8_t *r2, int64_t n, uint8_t *out) {
    __m512i i01[3], i2[3];
    for (int v = 0; v < 3; v++) {
        i01[v] = _mm512_loadu_si512(t->from01[v]);
        i2[v] = _mm512_loadu_si512(t->from2[v]);
    }
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m512i a = _mm512_loadu_si512(r0 + i), b = _mm512_loadu_si512(r1 + i),
                c = _mm512_loadu_si512(r2 + i);
        for (int v = 0; v < 3; v++)
            _mm512_storeu_si512(out + 3 * i + 64 * v,
                                _mm512_mask_blend_epi8(t->is2[v],
                                                       _mm512_permutex2var_epi8(a, i01[v], b),
                                                       _mm512_permutexvar_epi8(i2[v], c)));
    }
    interleave3(t, r0 + i, r1 + i, r2 + i, n - i, out + 3 * i);
}
#define HAVE_VBMI_INTERLEAVE 1
#endif

/* The prepared state of a QuantizeLinear with an opaque output: this CPU's interleave and its
 * tables, made once per process (owning nothing per rep, so cpu_opaque_release releases it). */
typedef struct {
    void (*interleave)(const interleave_tables *, const uint8_t *, const uint8_t *,
                       const uint8_t *, int64_t, uint8_t *);
    interleave_tables tables;
} q_last_kit;

static q_last_kit last_kit;
static pthread_once_t last_kit_once = PTHREAD_ONCE_INIT;

static void make_last_kit(void) {
    last_kit.interleave = interleave3;
#ifdef HAVE_VBMI_INTERLEAVE
    if (__builtin_cpu_supports("avx512vbmi")) last_kit.interleave = interleave3_vbmi;
#endif
    interleave_tables_init(&last_kit.tables);
}

typedef struct {
    const q_job *j;
    const q_last_kit *kit;
    int64_t sp, runs; /* pixels and runs of pixels per image */
} q_last_job;

/* A network's RGB input: runs of LAST_PIXELS pixels, quantized channel by channel and
 * interleaved. */
static void q_last_task(void *ctx, int64_t b, int64_t e) {
    const q_last_job *l = ctx;
    const float *x = l->j->x->data;
    uint8_t *y = l->j->y->data, rows[3][LAST_PIXELS];
    for (int64_t t = b; t < e; t++) {
        int64_t n = t / l->runs, s0 = t % l->runs * LAST_PIXELS;
        int64_t np = l->sp - s0 < LAST_PIXELS ? l->sp - s0 : LAST_PIXELS;
        const float *xs = x + n * 3 * l->sp + s0;
        for (int ch = 0; ch < 3; ch++) q_fast_into(l->j, xs + ch * l->sp, rows[ch], np, 0);
        l->kit->interleave(&l->kit->tables, rows[0], rows[1], rows[2], np,
                           y + (n * l->sp + s0) * 3);
    }
}

/* Any other channel count in two passes: the tensor quantized as it is stored (NCHW, one
 * contiguous stream), then each image's [C, pixels] bytes transposed in 16x16 blocks. (Runs of
 * pixels quantized channel by channel straight into the layout read C strided streams and
 * stored bytes C apart: 5x the plain QuantizeLinear's time, 12 of DenseNet int8's 21 ms.) */
typedef struct {
    const q_job *j;
    uint8_t *q;          /* the quantized tensor, NCHW */
    int64_t c, sp, runs; /* channels, pixels and runs of T_PIXELS pixels per image */
} q_two_pass_job;

/* Pixels per transposing task. */
#define T_PIXELS 256

static void q_plain_task(void *ctx, int64_t b, int64_t e) {
    const q_two_pass_job *t = ctx;
    int64_t n = t->j->x->numel, lo = b * CHUNK, hi = e * CHUNK < n ? e * CHUNK : n;
    q_fast_into(t->j, (const float *)t->j->x->data + lo, t->q + lo, hi - lo, 0);
}

/* 16 rows of 16 bytes, src's rows ss apart, into dst's 16 rows ds apart: dst row j gets byte j
 * of every src row. Four rounds of interleaves, of 8, 16, 32 and 64 bits. */
#if defined(__x86_64__)
static void transpose16(const uint8_t *src, int64_t ss, uint8_t *dst, int64_t ds) {
    __m128i r[16], a[16], b[16], c[16];
    for (int i = 0; i < 16; i++) r[i] = _mm_loadu_si128((const __m128i *)(src + i * ss));
    for (int p = 0; p < 8; p++) { /* a[h + p]: columns h..h+7 of rows 2p, 2p+1 */
        a[p] = _mm_unpacklo_epi8(r[2 * p], r[2 * p + 1]);
        a[8 + p] = _mm_unpackhi_epi8(r[2 * p], r[2 * p + 1]);
    }
    for (int h = 0; h < 16; h += 8)
        for (int q = 0; q < 4; q++) { /* b[g + q]: columns g..g+3 of rows 4q..4q+3 */
            b[h + q] = _mm_unpacklo_epi16(a[h + 2 * q], a[h + 2 * q + 1]);
            b[h + 4 + q] = _mm_unpackhi_epi16(a[h + 2 * q], a[h + 2 * q + 1]);
        }
    for (int g = 0; g < 16; g += 4)
        for (int s = 0; s < 2; s++) { /* c[k + s]: columns k, k+1 of rows 8s..8s+7 */
            c[g + s] = _mm_unpacklo_epi32(b[g + 2 * s], b[g + 2 * s + 1]);
            c[g + 2 + s] = _mm_unpackhi_epi32(b[g + 2 * s], b[g + 2 * s + 1]);
        }
    for (int k = 0; k < 16; k += 2) {
        _mm_storeu_si128((__m128i *)(dst + k * ds), _mm_unpacklo_epi64(c[k], c[k + 1]));
        _mm_storeu_si128((__m128i *)(dst + (k + 1) * ds), _mm_unpackhi_epi64(c[k], c[k + 1]));
    }
}
#else
static void transpose16(const uint8_t *src, int64_t ss, uint8_t *dst, int64_t ds) {
    for (int j = 0; j < 16; j++)
        for (int i = 0; i < 16; i++) dst[j * ds + i] = src[i * ss + j];
}
#endif

static void q_transpose_task(void *ctx, int64_t b, int64_t e) {
    const q_two_pass_job *t = ctx;
    const int64_t c = t->c, sp = t->sp;
    for (int64_t task = b; task < e; task++) {
        int64_t n = task / t->runs, p0 = task % t->runs * T_PIXELS;
        int64_t p1 = sp - p0 < T_PIXELS ? sp : p0 + T_PIXELS;
        const uint8_t *q = t->q + n * c * sp;
        uint8_t *y = (uint8_t *)t->j->y->data + n * c * sp;
        int64_t pf = p0 + (p1 - p0) / 16 * 16, cf = c / 16 * 16; /* ends of the full blocks */
        for (int64_t p = p0; p < pf; p += 16)
            for (int64_t ch = 0; ch < cf; ch += 16)
                transpose16(q + ch * sp + p, sp, y + p * c + ch, c);
        for (int64_t p = p0; p < p1; p++) /* the edges */
            for (int64_t ch = p < pf ? cf : 0; ch < c; ch++) y[p * c + ch] = q[ch * sp + p];
    }
}

/* The rule of the prepare: a chain of layouts alone with X plain; an opaque Y of 8 bits from
 * float X by one float scale (and zero point), in float precision: the case q_fast takes. */
bool cpu_quantizelinear_takes_chain(const kernel_prep *p) {
    const fuse_chain *f = p->fused;
    if (!f || !f->opaque_out0) return !f || (cpu_chain_layout_only(f) && !f->opaque_in0);
    if (!cpu_chain_layout_only(f) || f->opaque_in0 || p->n_in < 2 || !p->in_type[0] ||
        !p->in_type[1] || p->n_out < 1)
        return false;
    const type_info *x = p->in_type[0], *s = p->in_type[1];
    const type_info *z = p->n_in > 2 ? p->in_type[2] : NULL;
    int64_t s_numel, z_numel = 1;
    bool one_scale = type_is_static(s) && shape_numel(s->rank, s->dims, &s_numel) &&
                     s_numel == 1 &&
                     (!z || (type_is_static(z) && shape_numel(z->rank, z->dims, &z_numel) &&
                             z_numel == 1 && z->dtype == p->out_type[0].dtype));
    int64_t prec = attr_int(p->node, "precision", 0);
    return one_scale && x->dtype == ONYX_FLOAT && s->dtype == ONYX_FLOAT &&
           (prec == 0 || prec == ONYX_FLOAT) && attr_int(p->node, "block_size", 0) == 0 &&
           (p->out_type[0].dtype == ONYX_UINT8 || p->out_type[0].dtype == ONYX_INT8);
}

onyx_status cpu_quantizelinear_prepare(const kernel_prep *p, void **state) {
    *state = NULL;
    if (!cpu_quantizelinear_takes_chain(p))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "QuantizeLinear writes an opaque output only "
                          "from a plain float input by one float scale into 8 bits, and takes "
                          "no other chain");
    if (p->fused && p->fused->opaque_out0) {
        pthread_once(&last_kit_once, make_last_kit);
        *state = &last_kit;
    }
    return ONYX_OK;
}

onyx_status cpu_quantizelinear_run(const kernel_call *c) {
    q_job j = {0};
    TRY(q_setup(c, &j));
    onyx_dtype xd = j.x->dtype, sd = j.s->dtype;
    int64_t prec = attr_int(c->node, "precision", 0);
    /* The division's precision: the attribute, else numpy's promotion of x and scale (what the
     * onnx reference computes): int32 x gives double, mixed float types give float. */
    if (prec) j.prec = (onyx_dtype)prec;
    else if (xd == ONYX_INT32 || sd == ONYX_INT32) j.prec = ONYX_DOUBLE;
    else if (xd == sd || sd == ONYX_FLOAT8E8M0) j.prec = xd;
    else j.prec = ONYX_FLOAT;
    j.saturate = attr_int(c->node, "saturate", 1) != 0;
    if (j.z && j.z->dtype != j.y->dtype)
        return onyx_error(ONYX_ERR_SHAPE, "zero point has type %s, output %s",
                          onyx_dtype_name(j.z->dtype), onyx_dtype_name(j.y->dtype));
    if (is_subbyte(j.y->dtype)) memset(j.y->data, 0, j.y->nbytes);
    if (c->state) {
        if (!q_fast_applies(&j) || j.l.block > 0 || j.s->numel != 1 || j.x->rank < 3 ||
            dtype_size(j.y->dtype) != 1)
            return onyx_error(ONYX_ERR_RUNTIME, "QuantizeLinear into the opaque layout takes "
                              "float x by one float scale into 8 bits");
        int64_t ch = j.x->dims[1], sp = 1;
        for (int i = 2; i < j.x->rank; i++) sp *= j.x->dims[i];
        if (j.x->numel == 0) return ONYX_OK;
        if (ch == 3) {
            q_last_job l = {.j = &j, .kit = c->state, .sp = sp};
            l.runs = (sp + LAST_PIXELS - 1) / LAST_PIXELS;
            int64_t per_task = 3 * LAST_PIXELS; /* elements */
            parallel_for(j.x->dims[0] * l.runs, (GRAIN_CHUNKS * CHUNK + per_task - 1) / per_task,
                         q_last_task, &l);
            return ONYX_OK;
        }
        q_two_pass_job t = {.j = &j, .c = ch, .sp = sp, .runs = (sp + T_PIXELS - 1) / T_PIXELS};
        TRY(kernel_scratch(c, (size_t)j.x->numel, (void **)&t.q));
        parallel_for((j.x->numel + CHUNK - 1) / CHUNK, GRAIN_CHUNKS, q_plain_task, &t);
        int64_t per_task = ch * T_PIXELS;
        parallel_for(j.x->dims[0] * t.runs, (GRAIN_CHUNKS * CHUNK + per_task - 1) / per_task,
                     q_transpose_task, &t);
        return ONYX_OK;
    }
    run_chunks(&j, q_task);
    return ONYX_OK;
}

/* ---- DequantizeLinear: (x - zero point) * scale in float, as onnx's reference */

/* The common case: 8/16/32-bit integers with one float scale per piece into float. */
#define DEFINE_DQ_FAST(NAME, T)                                                                    \
    CPU_CLONES static void NAME(const T *x, float z, float s, float *y, int64_t n) {                         \
        CPU_SIMD for (int64_t i = 0; i < n; i++) y[i] = ((float)x[i] - z) * s;                    \
    }
DEFINE_DQ_FAST(dq_fast_s8, int8_t)
DEFINE_DQ_FAST(dq_fast_u8, uint8_t)
DEFINE_DQ_FAST(dq_fast_s16, int16_t)
DEFINE_DQ_FAST(dq_fast_u16, uint16_t)
DEFINE_DQ_FAST(dq_fast_s32, int32_t)

static bool dq_fast(const q_job *j, int64_t idx, int64_t n, int64_t si) {
    onyx_dtype xd = j->x->dtype;
    if (j->s->dtype != ONYX_FLOAT || j->y->dtype != ONYX_FLOAT) return false;
    float s = ((const float *)j->s->data)[si], *y = (float *)j->y->data + idx;
    double z = 0;
    if (j->z) load(j->z->dtype, j->z->data, si, 1, &z);
    const void *x = j->x->data;
    switch (xd) {
    case ONYX_INT8: dq_fast_s8((const int8_t *)x + idx, (float)z, s, y, n); return true;
    case ONYX_UINT8: dq_fast_u8((const uint8_t *)x + idx, (float)z, s, y, n); return true;
    case ONYX_INT16: dq_fast_s16((const int16_t *)x + idx, (float)z, s, y, n); return true;
    case ONYX_UINT16: dq_fast_u16((const uint16_t *)x + idx, (float)z, s, y, n); return true;
    case ONYX_INT32:
        if (j->z) return false; /* numpy computes float32 - int32 in double: dq_chunk */
        dq_fast_s32((const int32_t *)x + idx, 0.0f, s, y, n);
        return true;
    default: return false;
    }
}

static void dq_chunk(const q_job *j, int64_t idx, int64_t n, int64_t si, bool step) {
    double xv[CHUNK], sv[CHUNK], zv[CHUNK];
    float yv[CHUNK];
    onyx_dtype xd = j->x->dtype;
    load(xd, j->x->data, idx, n, xv);
    load_param(j->s, si, step, n, sv);
    /* float8 and float4 zero points are 0 by definition: not subtracted; onnx's reference does
     * subtract float6 ones (in float32) */
    bool use_z = j->z && !dtype_in(xd, DT_FLOAT8S | DT_BIT(ONYX_FLOAT4E2M1));
    if (use_z) load_param(j->z, si, step, n, zv);
    if (xd == ONYX_INT32 && use_z) {
        /* int32 zero points promote the arithmetic to double (numpy), rounded once at the end */
        for (int64_t i = 0; i < n; i++) {
            double v = ((double)(float)xv[i] - zv[i]) * sv[i];
            onyx_dtype yd = j->y->dtype;
            uint16_t *h = (uint16_t *)j->y->data + idx;
            if (yd == ONYX_FLOAT) ((float *)j->y->data)[idx + i] = (float)v;
            else if (yd == ONYX_FLOAT16) h[i] = floatconv_double_to_fp16(v);
            else h[i] = floatconv_double_to_bf16(v);
        }
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        float dx = (float)xv[i] - (use_z ? (float)zv[i] : 0.0f);
        yv[i] = dx * (float)sv[i];
    }
    uint16_t *h16 = (uint16_t *)j->y->data + idx;
    switch (j->y->dtype) {
    case ONYX_FLOAT: memcpy((float *)j->y->data + idx, yv, (size_t)n * sizeof *yv); break;
    case ONYX_FLOAT16:
        for (int64_t i = 0; i < n; i++) h16[i] = cpu_float_to_fp16(yv[i]);
        break;
    default:
        for (int64_t i = 0; i < n; i++) h16[i] = cpu_float_to_bf16(yv[i]);
        break;
    }
}

static void dq_piece(const q_job *j, int64_t idx, int64_t n, int64_t si, bool step) {
    if (!step && dq_fast(j, idx, n, si)) return;
    for (int64_t o = 0; o < n; o += CHUNK)
        dq_chunk(j, idx + o, n - o < CHUNK ? n - o : CHUNK, step ? si + o : si, step);
}

static void dq_task(void *ctx, int64_t b, int64_t e) {
    const q_job *j = ctx;
    int64_t n = j->x->numel;
    int64_t lo = b * CHUNK, hi = e * CHUNK < n ? e * CHUNK : n;
    for_pieces(j, lo, hi, dq_piece);
}

onyx_status cpu_dequantizelinear_run(const kernel_call *c) {
    q_job j = {0};
    TRY(q_setup(c, &j));
    if (j.z && j.z->dtype != j.x->dtype)
        return onyx_error(ONYX_ERR_SHAPE, "zero point has type %s, expected x's type %s",
                          onyx_dtype_name(j.z->dtype), onyx_dtype_name(j.x->dtype));
    onyx_dtype yd = j.y->dtype;
    if (yd != ONYX_FLOAT && yd != ONYX_FLOAT16 && yd != ONYX_BFLOAT16)
        return onyx_error(ONYX_ERR_SHAPE, "output type %s, expected float, float16 or bfloat16",
                          onyx_dtype_name(yd));
    run_chunks(&j, dq_task);
    return ONYX_OK;
}

/* ---- DynamicQuantizeLinear: uint8 with scale (max(0, max x) - min(0, min x)) / 255, in float
 * arithmetic step by step as onnx's reference. Both passes vectorize (the range in
 * kernels_cpu/common/dyn_q8.c, in one call below 2^16 elements, else in 64 parts over the
 * threads; the quantizing CPU_CLONES): a BERT-base at sequence 128 quantizes 49 activations a
 * run, 31 ms of 89 with the scalar loops (nearbyintf is a libm call in the x86-64 baseline). NaN
 * is left out of the range and quantizes to 0. */

typedef struct dq_range {
    const float *x;
    int64_t n;
    int parts; /* RANGE_PARTS for a range worth threads, else 1 */
    float mn[64], mx[64];
    float scale, zp;
    uint8_t *y;
} dq_range;

#define RANGE_PARTS 64

static void range_task(void *ctx, int64_t b, int64_t e) {
    dq_range *r = ctx;
    for (int64_t p = b; p < e; p++) {
        int64_t lo = r->n * p / r->parts, hi = r->n * (p + 1) / r->parts;
        cpu_dyn_q8_range(r->x + lo, hi - lo, &r->mn[p], &r->mx[p]);
    }
}

/* round(clamp(x / scale, -zp, 255 - zp)) + zp, which is clamp(round(x / scale) + zp, 0, 255)
 * for an integer zp in [0, 255] as rounding is monotonic and keeps integers; clamped first, the
 * value is small enough for the 1.5 * 2^23 trick to round it half to even in any vector width. */
CPU_CLONES static void dyn_task(void *ctx, int64_t b, int64_t e) {
    const dq_range *r = ctx;
    const float *x = r->x;
    uint8_t *y = r->y;
    const float scale = r->scale, zp = r->zp, lo = -zp, hi = 255.0f - zp, magic = 12582912.0f;
    CPU_SIMD for (int64_t i = b; i < e; i++) {
        float v = x[i] / scale;
        v = v < lo ? lo : v; /* NaN stays NaN */
        v = v > hi ? hi : v;
        v = (v + magic) - magic + zp;
        y[i] = (uint8_t)(int32_t)(v != v ? 0.0f : v);
    }
}

onyx_status cpu_dynamicquantizelinear_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0), *ys = kernel_output(c, 1), *yz = kernel_output(c, 2);
    if (!x || x->dtype != ONYX_FLOAT)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 must be a float tensor");
    if ((y && y->numel != x->numel) || (ys && ys->numel != 1) || (yz && yz->numel != 1))
        return onyx_error(ONYX_ERR_SHAPE, "outputs do not have the expected sizes");
    dq_range r = {.x = x->data, .n = x->numel, .parts = x->numel >= (1 << 16) ? RANGE_PARTS : 1,
                  .y = y ? y->data : NULL};
    parallel_for(r.parts, 1, range_task, &r);
    float mn = 0, mx = 0;
    for (int p = 0; p < r.parts; p++) {
        mn = r.mn[p] < mn ? r.mn[p] : mn;
        mx = r.mx[p] > mx ? r.mx[p] : mx;
    }
    r.scale = (mx == mn ? 1.0f : mx - mn) / 255.0f;
    float zp = 0.0f - mn / r.scale;
    /* -inf in x makes the scale infinite and -inf / inf NaN (once cast to uint8: UB); onnx's
     * reference clamps with Python's max(0, min(255, zp)), which gives 255 for NaN */
    zp = zp != zp ? 255 : zp < 0 ? 0 : zp > 255 ? 255 : zp;
    r.zp = nearbyintf(zp);
    if (y) parallel_for(x->numel, 1 << 14, dyn_task, &r);
    if (ys) *(float *)ys->data = r.scale;
    if (yz) *(uint8_t *)yz->data = (uint8_t)r.zp;
    return ONYX_OK;
}
