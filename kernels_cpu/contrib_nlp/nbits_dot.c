/* The inner loops of MatMulNBits on packed weights (see nbits_dot.h): the float dot products are
 * AVX-512 intrinsics for 4-bit codes and plain C over 16-byte runs of codes otherwise (built for
 * AVX-512 and AVX2 by CPU_CLONES), the int8 ones AVX-512 VNNI intrinsics; chosen at run time. */
#include "kernels_cpu/contrib_nlp/nbits_dot.h"

#include <math.h>
#include <string.h>

#include "kernels_cpu/common/cpu_types.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define NB_X86 1
#endif

#define LANES 16

static inline int64_t kp_of(const nb_weight *w) { return w->k_blocks * w->block; }

void nb_deinterleave(const nb_weight *w, const float *a, int64_t rows, float *out) {
    const int64_t kp = kp_of(w), per = 8 / w->bits, stream = kp / per;
    for (int64_t r = 0; r < rows; r++) {
        const float *ar = a + r * w->k;
        float *o = out + r * kp;
        for (int64_t t = 0; t < per; t++)
            for (int64_t j = 0; j < stream; j++) {
                int64_t e = per * j + t;
                o[t * stream + j] = e < w->k ? ar[e] : 0.0f;
            }
    }
}

/* The float dot of R rows with column n where blob is a multiple of 16: the codes of each 16
 * bytes unpacked once as (code - zp) * scale and multiplied into every row's 16 lanes; BITS and R
 * constant, so the unpacked codes and the accumulators stay in registers. */
static inline __attribute__((always_inline)) void dot_f32_runs(const nb_weight *w, int64_t n,
                                                               const float *ad, float *y,
                                                               int64_t ldy, const int BITS,
                                                               const int R) {
    const int per = 8 / BITS;
    const unsigned mask = (1u << BITS) - 1;
    const int64_t kp = kp_of(w), stream = kp / per, blob = w->blob;
    const uint8_t *col = w->b + n * w->k_blocks * blob;
    float acc[NB_ROWS][LANES];
    memset(acc, 0, sizeof acc);
    for (int64_t kb = 0; kb < w->k_blocks; kb++) {
        const float s = w->scale[n * w->k_blocks + kb], z = nb_zp(w, n * w->k_blocks + kb);
        for (int64_t c = kb * blob; c < (kb + 1) * blob; c += LANES) {
            float wv[4][LANES];
            for (int t = 0; t < per; t++) {
                CPU_SIMD for (int l = 0; l < LANES; l++)
                    wv[t][l] = ((float)((col[c + l] >> (t * BITS)) & mask) - z) * s;
            }
            for (int r = 0; r < R; r++)
                for (int t = 0; t < per; t++) {
                    const float *a = ad + r * kp + t * stream + c;
                    CPU_SIMD for (int l = 0; l < LANES; l++) acc[r][l] += wv[t][l] * a[l];
                }
        }
    }
    for (int r = 0; r < R; r++) {
        float sum = 0;
        for (int l = 0; l < LANES; l++) sum += acc[r][l];
        y[r * ldy] = sum;
    }
}

#define DOT_F32(BITS, R)                                                                           \
    CPU_CLONES static void dot_f32_##BITS##_##R(const nb_weight *w, int64_t n, const float *ad,   \
                                                float *y, int64_t ldy) {                           \
        dot_f32_runs(w, n, ad, y, ldy, BITS, R);                                                   \
    }
#define DOT_F32_ROWS(BITS) DOT_F32(BITS, 1) DOT_F32(BITS, 2) DOT_F32(BITS, 3) DOT_F32(BITS, 4)
DOT_F32_ROWS(2)
DOT_F32_ROWS(4)
DOT_F32_ROWS(8)

typedef void (*dot_f32_fn)(const nb_weight *, int64_t, const float *, float *, int64_t);
static const dot_f32_fn dot_f32_table[3][NB_ROWS] = {
    {dot_f32_2_1, dot_f32_2_2, dot_f32_2_3, dot_f32_2_4},
    {dot_f32_4_1, dot_f32_4_2, dot_f32_4_3, dot_f32_4_4},
    {dot_f32_8_1, dot_f32_8_2, dot_f32_8_3, dot_f32_8_4},
};

/* Blocks of fewer than 16 bytes (4-bit codes in blocks of 16, 2-bit in blocks of 16 or 32): one
 * element at a time. */
static void dot_f32_small(const nb_weight *w, int64_t n, const float *ad, int64_t rows, float *y,
                          int64_t ldy) {
    const int bits = (int)w->bits, per = 8 / bits;
    const unsigned mask = (1u << bits) - 1;
    const int64_t kp = kp_of(w), stream = kp / per;
    const uint8_t *col = w->b + n * w->k_blocks * w->blob;
    for (int64_t r = 0; r < rows; r++) {
        float sum = 0;
        for (int64_t kb = 0; kb < w->k_blocks; kb++) {
            const float s = w->scale[n * w->k_blocks + kb], z = nb_zp(w, n * w->k_blocks + kb);
            for (int64_t j = kb * w->blob; j < (kb + 1) * w->blob; j++)
                for (int t = 0; t < per; t++)
                    sum += ((float)((col[j] >> (t * bits)) & mask) - z) * s *
                           ad[r * kp + t * stream + j];
        }
        y[r * ldy] = sum;
    }
}

#if defined(NB_X86)
/* 4-bit codes with AVX-512 intrinsics: the C loops above come out of GCC narrow and spilled
 * (1.3 GB/s of codes here); 16 bytes widened to 16 int32 lanes, nibbles split, (code - zp) *
 * scale, and one FMA per row and nibble into accumulators held in registers. */
__attribute__((target("avx512f"))) static inline __attribute__((always_inline)) void
dot4_avx512_rows(const nb_weight *w, int64_t n, const float *ad, float *y, int64_t ldy,
                 const int R) {
    const int64_t kp = kp_of(w), stream = kp / 2, blob = w->blob;
    const uint8_t *col = w->b + n * w->k_blocks * blob;
    const __m512i m15 = _mm512_set1_epi32(15);
    __m512 acc[NB_ROWS];
    for (int r = 0; r < R; r++) acc[r] = _mm512_setzero_ps();
    for (int64_t kb = 0; kb < w->k_blocks; kb++) {
        const __m512 s = _mm512_set1_ps(w->scale[n * w->k_blocks + kb]),
                     z = _mm512_set1_ps(nb_zp(w, n * w->k_blocks + kb));
        for (int64_t c = kb * blob; c < (kb + 1) * blob; c += LANES) {
            __m512i b = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(col + c)));
            __m512 lo = _mm512_mul_ps(
                _mm512_sub_ps(_mm512_cvtepi32_ps(_mm512_and_si512(b, m15)), z), s);
            __m512 hi = _mm512_mul_ps(
                _mm512_sub_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32(b, 4)), z), s);
            for (int r = 0; r < R; r++) {
                acc[r] = _mm512_fmadd_ps(lo, _mm512_loadu_ps(ad + r * kp + c), acc[r]);
                acc[r] = _mm512_fmadd_ps(hi, _mm512_loadu_ps(ad + r * kp + stream + c), acc[r]);
            }
        }
    }
    for (int r = 0; r < R; r++) y[r * ldy] = _mm512_reduce_add_ps(acc[r]);
}

__attribute__((target("avx512f"))) static void dot4_avx512(const nb_weight *w, int64_t n,
                                                           const float *ad, int64_t rows,
                                                           float *y, int64_t ldy) {
    switch (rows) {
    case 1: dot4_avx512_rows(w, n, ad, y, ldy, 1); return;
    case 2: dot4_avx512_rows(w, n, ad, y, ldy, 2); return;
    case 3: dot4_avx512_rows(w, n, ad, y, ldy, 3); return;
    default: dot4_avx512_rows(w, n, ad, y, ldy, 4); return;
    }
}

static bool has_avx512(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f");
}
#endif

void nb_dot_f32(const nb_weight *w, int64_t n, const float *ad, int64_t rows, float *y,
                int64_t ldy) {
#if defined(NB_X86)
    if (w->bits == 4 && w->blob % LANES == 0 && has_avx512()) {
        dot4_avx512(w, n, ad, rows, y, ldy);
        return;
    }
#endif
    if (w->blob % LANES != 0) {
        dot_f32_small(w, n, ad, rows, y, ldy);
        return;
    }
    int bi = w->bits == 2 ? 0 : w->bits == 4 ? 1 : 2;
    dot_f32_table[bi][rows - 1](w, n, ad, y, ldy);
}

/* One block's codes, (code - z) * s: a loop per code width, each over whole bytes so that the
 * compiler vectorizes it (prefill dequantizes every column of B per call). */
static void dequant_block(int bits, const uint8_t *p, int64_t bytes, float z, float s, float *o) {
    switch (bits) {
    case 4:
        CPU_SIMD for (int64_t j = 0; j < bytes; j++) {
            o[2 * j] = ((float)(p[j] & 15) - z) * s;
            o[2 * j + 1] = ((float)(p[j] >> 4) - z) * s;
        }
        return;
    case 8: CPU_SIMD for (int64_t j = 0; j < bytes; j++) o[j] = ((float)p[j] - z) * s; return;
    default: /* 2 */
        CPU_SIMD for (int64_t j = 0; j < bytes; j++)
            for (int t = 0; t < 4; t++) o[4 * j + t] = ((float)((p[j] >> (2 * t)) & 3) - z) * s;
        return;
    }
}

void nb_dequant_column(const nb_weight *w, int64_t n, float *w_out) {
    const int bits = (int)w->bits, per = 8 / bits;
    const unsigned mask = (1u << bits) - 1;
    const uint8_t *col = w->b + n * w->k_blocks * w->blob;
    for (int64_t kb = 0; kb < w->k_blocks; kb++) {
        const float s = w->scale[n * w->k_blocks + kb], z = nb_zp(w, n * w->k_blocks + kb);
        const int64_t e0 = kb * w->block, cnt = w->k - e0 < w->block ? w->k - e0 : w->block;
        const uint8_t *p = col + kb * w->blob;
        if (cnt == w->block) { /* whole blocks; the last one may stop short of K */
            dequant_block(bits, p, w->blob, z, s, w_out + e0);
            continue;
        }
        for (int64_t i = 0; i < cnt; i++)
            w_out[e0 + i] = ((float)((p[i / per] >> ((i % per) * bits)) & mask) - z) * s;
    }
}

void nb_quantize_rows(const nb_weight *w, const float *a, int64_t rows, int8_t *q, float *qscale,
                      int32_t *qsum) {
    const int64_t kp = kp_of(w), per = 8 / w->bits, stream = kp / per;
    for (int64_t r = 0; r < rows; r++) {
        const float *ar = a + r * w->k;
        for (int64_t kb = 0; kb < w->k_blocks; kb++) {
            const int64_t e0 = kb * w->block, cnt = w->k - e0 < w->block ? w->k - e0 : w->block;
            float amax = 0;
            for (int64_t i = 0; i < cnt; i++) amax = fmaxf(amax, fabsf(ar[e0 + i]));
            const float s = amax / 127.0f, inv = amax > 0 ? 127.0f / amax : 0.0f;
            int32_t sum = 0;
            for (int64_t i = 0; i < w->block; i++) {
                int32_t v = i < cnt ? (int32_t)nearbyintf(ar[e0 + i] * inv) : 0;
                int64_t e = e0 + i;
                q[r * kp + (e % per) * stream + e / per] = (int8_t)v;
                sum += v;
            }
            qscale[r * w->k_blocks + kb] = s;
            qsum[r * w->k_blocks + kb] = sum;
        }
    }
}

#if defined(NB_X86) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define NB_VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

/* 4-bit codes, blob a multiple of 16: 64 bytes of a column (4, 2 or 1/k of a block) at a time,
 * low and high nibbles against the even and odd int8 activations (vpdpbusd: unsigned codes times
 * signed activations, four products a lane), each lane's int32 sum scaled by its block's
 * scale_b * scale_a; zero points as zp * scale_b * scale_a * (the block's activation sum). */
NB_VNNI_TARGET static void dot_i8_vnni(const nb_weight *w, int64_t n, const int8_t *q,
                                       const float *qscale, const int32_t *qsum, int64_t rows,
                                       float *y, int64_t ldy) {
    const int64_t kp = kp_of(w), stream = kp / 2, blob = w->blob, nkb = w->k_blocks;
    const uint8_t *col = w->b + n * nkb * blob;
    const float *sb = w->scale + n * nkb;
    const __m512i low = _mm512_set1_epi8(0x0F);
    /* lane l of a 64-byte step lies in block (4 l) / blob of the step's first block */
    const int64_t step_blocks = blob >= 64 ? 1 : 64 / blob, steps_per_block = blob >= 64 ? blob / 64 : 1;
    int32_t lane_blk[16];
    for (int l = 0; l < 16; l++) lane_blk[l] = blob >= 64 ? 0 : (int32_t)(4 * l / blob);
    const __m512i lane_idx = _mm512_loadu_si512(lane_blk);
    for (int64_t r = 0; r < rows; r++) {
        const int8_t *qe = q + r * kp, *qo = qe + stream;
        const float *sa = qscale + r * nkb;
        const int32_t *qs = qsum + r * nkb;
        __m512 acc = _mm512_setzero_ps();
        float corr = 0;
        for (int64_t kb = 0; kb < nkb; kb += step_blocks) {
            const int64_t nb = nkb - kb < step_blocks ? nkb - kb : step_blocks;
            float f[16];
            for (int64_t i = 0; i < nb; i++) {
                f[i] = sb[kb + i] * sa[kb + i];
                corr += f[i] * nb_zp(w, n * nkb + kb + i) * (float)qs[kb + i];
            }
            for (int64_t i = nb; i < 16; i++) f[i] = 0;
            const __m512 fac = _mm512_permutexvar_ps(lane_idx, _mm512_loadu_ps(f));
            __m512i isum = _mm512_setzero_si512();
            const int64_t j0 = kb * blob, bytes = nb * blob;
            for (int64_t s = 0; s < steps_per_block; s++) {
                const int64_t j = j0 + s * 64, left = bytes - s * 64;
                const __mmask64 m = left >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << left) - 1);
                __m512i b = _mm512_maskz_loadu_epi8(m, col + j);
                __m512i lo = _mm512_and_si512(b, low);
                __m512i hi = _mm512_and_si512(_mm512_srli_epi16(b, 4), low);
                isum = _mm512_dpbusd_epi32(isum, lo, _mm512_maskz_loadu_epi8(m, qe + j));
                isum = _mm512_dpbusd_epi32(isum, hi, _mm512_maskz_loadu_epi8(m, qo + j));
            }
            acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), fac, acc);
        }
        y[r * ldy] = _mm512_reduce_add_ps(acc) - corr;
    }
}
#define HAVE_VNNI_PATH 1
#endif

bool nb_i8_available(const nb_weight *w) {
#ifdef HAVE_VNNI_PATH
    __builtin_cpu_init();
    return w->bits == 4 && w->blob % 16 == 0 && __builtin_cpu_supports("avx512vnni") &&
           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
#else
    (void)w;
    return false;
#endif
}

void nb_dot_i8(const nb_weight *w, int64_t n, const int8_t *q, const float *qscale,
               const int32_t *qsum, int64_t rows, float *y, int64_t ldy) {
#ifdef HAVE_VNNI_PATH
    dot_i8_vnni(w, n, q, qscale, qsum, rows, y, ldy);
#else
    (void)w, (void)n, (void)q, (void)qscale, (void)qsum, (void)rows, (void)y, (void)ldy;
#endif
}
