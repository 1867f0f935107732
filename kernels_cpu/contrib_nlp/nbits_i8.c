/* MatMulNBits at accuracy_level 4 as an int8 GEMM on a repacked weight (see nbits_i8.h). Per
 * block of K, a tile of R rows x 16 columns sums code x int8 activation products in int32 lanes
 * (one lane a column), then adds scale_b * scale_a * (sum - zp * sum of the block's activations)
 * to float accumulators: dot(a, code - zp) = dot(a, code) - zp * sum(a). Every int32 sum and
 * its float conversion is exact (|sum| <= 15 * 127 * block < 2^24 for blocks up to 8192); the
 * only rounding is the activations' quantization and the float accumulation over blocks. */
#include "kernels_cpu/contrib_nlp/nbits_i8.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "kernels_cpu/common/cpu_types.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define NBI8_X86 1
#endif

#define ALIGN64(x) (((x) + 63) / 64 * 64)
/* The tiles' loops over rows and halves, unrolled so that their accumulators live in registers
 * (-O2 leaves them as arrays on the stack otherwise). */
#define UNROLL _Pragma("GCC unroll 8")
/* Rows of A (as int8) quantized and walked together: within a core's L2 with the group's codes. */
#define A_CHUNK_BYTES ((size_t)256 << 10)
/* Rows of one tile: the VNNI tile keeps 2 x 8 zmm accumulators; AVX2 has 16 ymm registers for
 * two halves of 16 columns, so 2 rows. */
#define VNNI_ROWS 8
#define AVX2_ROWS 2

int nbi8_fits(const nb_weight *w) {
    return w->bits == 4 && !w->zp_f && w->block % 8 == 0 && w->block <= 8192;
}

void nbi8_free(nbi8_pack *p) {
    if (!p) return;
    free(p->codes);
    free(p->scale);
    free(p->zp);
    free(p);
}

typedef struct pack_job {
    const nb_weight *w;
    nbi8_pack *p;
} pack_job;

static void pack_groups(void *ctx, int64_t b, int64_t e) {
    const pack_job *j = ctx;
    const nb_weight *w = j->w;
    nbi8_pack *p = j->p;
    const int64_t steps = p->block / 8, gbytes = p->k_blocks * p->block * 8;
    for (int64_t g = b; g < e; g++) {
        uint8_t *dst = p->codes + g * gbytes;
        memset(dst, 0, (size_t)gbytes);
        for (int c = 0; c < NBI8_COLS; c++) {
            const int64_t n = g * NBI8_COLS + c;
            const int64_t t0 = (g * p->k_blocks) * NBI8_COLS + c;
            if (n >= w->n) {
                for (int64_t kb = 0; kb < p->k_blocks; kb++) {
                    p->scale[t0 + kb * NBI8_COLS] = 0;
                    if (p->zp) p->zp[t0 + kb * NBI8_COLS] = 0;
                }
                continue;
            }
            for (int64_t kb = 0; kb < p->k_blocks; kb++) {
                const uint8_t *blk = w->b + (n * w->k_blocks + kb) * w->blob;
                uint8_t *d = dst + kb * steps * 64 + c * 4;
                for (int64_t s = 0; s < steps; s++) {
                    /* bytes b0..b3 hold elements 0..7 low nibble first; lane byte i gets
                     * elements i and 4 + i */
                    const unsigned b0 = blk[4 * s], b1 = blk[4 * s + 1], b2 = blk[4 * s + 2],
                                   b3 = blk[4 * s + 3];
                    uint8_t *o = d + s * 64;
                    o[0] = (uint8_t)((b0 & 15) | (b2 & 15) << 4);
                    o[1] = (uint8_t)((b0 >> 4) | (b2 & 0xF0));
                    o[2] = (uint8_t)((b1 & 15) | (b3 & 15) << 4);
                    o[3] = (uint8_t)((b1 >> 4) | (b3 & 0xF0));
                }
                p->scale[t0 + kb * NBI8_COLS] = w->scale[n * w->k_blocks + kb];
                if (p->zp) p->zp[t0 + kb * NBI8_COLS] = w->zp_u8[n * w->k_blocks + kb];
            }
        }
    }
}

void nbi8_unpack_codes(const nbi8_pack *p, uint8_t *b) {
    const int64_t steps = p->block / 8, gbytes = p->k_blocks * p->block * 8, blob = p->block / 2;
    for (int64_t n = 0; n < p->n; n++) {
        const int64_t g = n / NBI8_COLS, c = n % NBI8_COLS;
        for (int64_t kb = 0; kb < p->k_blocks; kb++) {
            const uint8_t *d = p->codes + g * gbytes + kb * steps * 64 + c * 4;
            uint8_t *blk = b + (n * p->k_blocks + kb) * blob;
            for (int64_t s = 0; s < steps; s++) { /* pack_groups' shuffle undone */
                const uint8_t *o = d + s * 64;
                blk[4 * s] = (uint8_t)((o[0] & 15) | (o[1] & 15) << 4);
                blk[4 * s + 1] = (uint8_t)((o[2] & 15) | (o[3] & 15) << 4);
                blk[4 * s + 2] = (uint8_t)((o[0] >> 4) | (o[1] & 0xF0));
                blk[4 * s + 3] = (uint8_t)((o[2] >> 4) | (o[3] & 0xF0));
            }
        }
    }
}

void nbi8_dequant_column(const nbi8_pack *p, int64_t n, float *out) {
    const int64_t steps = p->block / 8, g = n / NBI8_COLS, c = n % NBI8_COLS;
    const uint8_t *col = p->codes + g * p->k_blocks * p->block * 8 + c * 4;
    for (int64_t kb = 0; kb < p->k_blocks; kb++) {
        const int64_t t = (g * p->k_blocks + kb) * NBI8_COLS + c, e0 = kb * p->block;
        const float s = p->scale[t], z = p->zp ? (float)p->zp[t] : 8.0f;
        for (int64_t st = 0; st < steps; st++) {
            /* lane byte i: element 8st+i in the low nibble, 8st+4+i in the high one */
            const uint8_t *o = col + (kb * steps + st) * 64;
            for (int i = 0; i < 8; i++) {
                const int64_t e = e0 + 8 * st + i;
                if (e < p->k) out[e] = ((float)(i < 4 ? o[i] & 15 : o[i - 4] >> 4) - z) * s;
            }
        }
    }
}

onyx_status nbi8_pack_make(const nb_weight *w, nbi8_pack **out) {
    nbi8_pack *p = calloc(1, sizeof *p);
    if (!p) return onyx_oom("MatMulNBits int8 weight");
    p->k = w->k, p->n = w->n, p->block = w->block, p->k_blocks = w->k_blocks;
    p->groups = (w->n + NBI8_COLS - 1) / NBI8_COLS;
    const size_t tables = (size_t)(p->groups * p->k_blocks * NBI8_COLS);
    p->codes = aligned_alloc(64, ALIGN64((size_t)(p->groups * p->k_blocks * p->block * 8)));
    p->scale = aligned_alloc(64, ALIGN64(tables * sizeof(float)));
    if (w->zp_u8) p->zp = aligned_alloc(64, ALIGN64(tables));
    if (!p->codes || !p->scale || (w->zp_u8 && !p->zp)) {
        nbi8_free(p);
        return onyx_oom("MatMulNBits int8 weight");
    }
    pack_job j = {w, p};
    parallel_for(p->groups, 1 + (1 << 16) / (p->k_blocks * p->block * 8), pack_groups, &j);
    *out = p;
    return ONYX_OK;
}

nbi8_isa nbi8_choose(void) {
#if defined(NBI8_X86)
    __builtin_cpu_init();
    const char *force = getenv("ONYX_NBITS_I8");
    const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (force && strcmp(force, "avx2") == 0) return avx2 ? NBI8_AVX2 : NBI8_NONE;
    if (__builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl"))
        return NBI8_VNNI;
    return avx2 ? NBI8_AVX2 : NBI8_NONE;
#else
    return NBI8_NONE;
#endif
}

/* ---- activations: per row, kp = k_blocks * block int8 codes (zeros past K), then per block the
 * scale sa and sa * (sum of the block's codes) */

typedef struct qrows {
    const int8_t *q;
    const float *sa, *sas;
    int64_t kp, kb;
} qrows;

CPU_CLONES static void quantize_row(const float *a, int64_t k, int64_t block, int64_t k_blocks,
                                    int8_t *q, float *sa, float *sas) {
    for (int64_t kb = 0; kb < k_blocks; kb++) {
        const int64_t e0 = kb * block, cnt = k - e0 < block ? k - e0 : block;
        const float *ab = a + e0;
        float amax = 0, nonfinite = 0;
        /* comparisons, not fmaxf: GCC calls fmaxf one element at a time */
        CPU_PRAGMA(omp simd reduction(max : amax) reduction(+ : nonfinite))
        for (int64_t i = 0; i < cnt; i++) {
            const float v = fabsf(ab[i]);
            amax = v > amax ? v : amax;
            nonfinite += ab[i] * 0.0f;
        }
        int8_t *qb = q + e0;
        if (nonfinite != 0) {
            /* a NaN or infinity in the block has no int8 code: the row's outputs become NaN
             * rather than a finite guess */
            memset(qb, 0, (size_t)block);
            sa[kb] = sas[kb] = NAN;
            continue;
        }
        const float inv = amax > 0 ? 127.0f / amax : 0.0f;
        int32_t sum = 0;
        CPU_SIMD_SUM(sum) for (int64_t i = 0; i < cnt; i++) {
            const int32_t v = (int32_t)nearbyintf(ab[i] * inv);
            qb[i] = (int8_t)v;
            sum += v;
        }
        for (int64_t i = cnt; i < block; i++) qb[i] = 0;
        sa[kb] = amax / 127.0f;
        sas[kb] = sa[kb] * (float)sum;
    }
}

/* ---- the tiles */

#if defined(NBI8_X86)
#define VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

/* R rows (qr's rows r0..r0+R) x group g into y (rows ldy apart, from column 16 g). */
VNNI_TARGET static inline __attribute__((always_inline)) void
tile_vnni(const nbi8_pack *p, int64_t g, const qrows *qr, int64_t r0, float *y, int64_t ldy,
          const int R) {
    const int64_t steps = p->block / 8, nkb = p->k_blocks;
    const uint8_t *codes = p->codes + g * nkb * p->block * 8;
    const float *sb = p->scale + g * nkb * NBI8_COLS;
    const uint8_t *zp = p->zp ? p->zp + g * nkb * NBI8_COLS : NULL;
    const __m512i low = _mm512_set1_epi8(0x0F);
    const __m512 mid = _mm512_set1_ps(8.0f);
    __m512 acc[VNNI_ROWS];
    UNROLL for (int r = 0; r < R; r++) acc[r] = _mm512_setzero_ps();
    for (int64_t kb = 0; kb < nkb; kb++) {
        __m512i isum[VNNI_ROWS];
        UNROLL for (int r = 0; r < R; r++) isum[r] = _mm512_setzero_si512();
        const int8_t *qk = qr->q + (r0 * qr->kp) + kb * p->block;
        for (int64_t s = 0; s < steps; s++, codes += 64, qk += 8) {
            const __m512i b = _mm512_load_si512((const void *)codes);
            const __m512i lo = _mm512_and_si512(b, low);
            const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(b, 4), low);
            UNROLL for (int r = 0; r < R; r++) {
                int32_t a0, a1;
                memcpy(&a0, qk + r * qr->kp, 4);
                memcpy(&a1, qk + r * qr->kp + 4, 4);
                isum[r] = _mm512_dpbusd_epi32(isum[r], lo, _mm512_set1_epi32(a0));
                isum[r] = _mm512_dpbusd_epi32(isum[r], hi, _mm512_set1_epi32(a1));
            }
        }
        const __m512 s = _mm512_load_ps(sb + kb * NBI8_COLS);
        const __m512 z = zp ? _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(
                                  _mm_load_si128((const __m128i *)(zp + kb * NBI8_COLS))))
                            : mid;
        UNROLL for (int r = 0; r < R; r++) {
            const int64_t i = (r0 + r) * qr->kb + kb;
            __m512 t = _mm512_mul_ps(_mm512_cvtepi32_ps(isum[r]), _mm512_set1_ps(qr->sa[i]));
            t = _mm512_fnmadd_ps(z, _mm512_set1_ps(qr->sas[i]), t);
            acc[r] = _mm512_fmadd_ps(t, s, acc[r]);
        }
    }
    const int64_t cols = p->n - g * NBI8_COLS < NBI8_COLS ? p->n - g * NBI8_COLS : NBI8_COLS;
    UNROLL for (int r = 0; r < R; r++) {
        float *yr = y + r * ldy + g * NBI8_COLS;
        if (cols == NBI8_COLS) {
            _mm512_storeu_ps(yr, acc[r]);
        } else {
            float tmp[NBI8_COLS];
            _mm512_storeu_ps(tmp, acc[r]);
            memcpy(yr, tmp, (size_t)cols * sizeof(float));
        }
    }
}

VNNI_TARGET static void tiles_vnni(const nbi8_pack *p, int64_t g, const qrows *qr, int64_t r0,
                                   int64_t rows, float *y, int64_t ldy) {
    for (; rows >= VNNI_ROWS; rows -= VNNI_ROWS, r0 += VNNI_ROWS)
        tile_vnni(p, g, qr, r0, y + r0 * ldy, ldy, VNNI_ROWS);
    switch (rows) {
    case 1: tile_vnni(p, g, qr, r0, y + r0 * ldy, ldy, 1); break;
    case 2: tile_vnni(p, g, qr, r0, y + r0 * ldy, ldy, 2); break;
    case 3: tile_vnni(p, g, qr, r0, y + r0 * ldy, ldy, 3); break;
    case 4: tile_vnni(p, g, qr, r0, y + r0 * ldy, ldy, 4); break;
    case 5: tile_vnni(p, g, qr, r0, y + r0 * ldy, ldy, 5); break;
    case 6: tile_vnni(p, g, qr, r0, y + r0 * ldy, ldy, 6); break;
    case 7: tile_vnni(p, g, qr, r0, y + r0 * ldy, ldy, 7); break;
    default: break;
    }
}

#define AVX2_TARGET __attribute__((target("avx2,fma")))

/* The VNNI tile with AVX2: each 64 bytes as two halves of 8 columns; vpmaddubsw multiplies
 * unsigned codes by signed activations and adds pairs into int16, which cannot saturate here:
 * codes <= 15 and |a| <= 128 give pairs within 2 * 15 * 128 = 3840, and the low and high
 * nibbles' pairs added within 7680; vpmaddwd by ones then sums pairs into int32. */
AVX2_TARGET static inline __attribute__((always_inline)) void
tile_avx2(const nbi8_pack *p, int64_t g, const qrows *qr, int64_t r0, float *y, int64_t ldy,
          const int R) {
    const int64_t steps = p->block / 8, nkb = p->k_blocks;
    const uint8_t *codes = p->codes + g * nkb * p->block * 8;
    const float *sb = p->scale + g * nkb * NBI8_COLS;
    const uint8_t *zp = p->zp ? p->zp + g * nkb * NBI8_COLS : NULL;
    const __m256i low = _mm256_set1_epi8(0x0F), ones = _mm256_set1_epi16(1);
    const __m256 mid = _mm256_set1_ps(8.0f);
    __m256 acc[AVX2_ROWS][2];
    UNROLL for (int r = 0; r < R; r++) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
    for (int64_t kb = 0; kb < nkb; kb++) {
        __m256i isum[AVX2_ROWS][2];
        UNROLL for (int r = 0; r < R; r++) isum[r][0] = isum[r][1] = _mm256_setzero_si256();
        const int8_t *qk = qr->q + (r0 * qr->kp) + kb * p->block;
        for (int64_t s = 0; s < steps; s++, codes += 64, qk += 8) {
            __m256i a0[AVX2_ROWS], a1[AVX2_ROWS];
            UNROLL for (int r = 0; r < R; r++) {
                int32_t v0, v1;
                memcpy(&v0, qk + r * qr->kp, 4);
                memcpy(&v1, qk + r * qr->kp + 4, 4);
                a0[r] = _mm256_set1_epi32(v0);
                a1[r] = _mm256_set1_epi32(v1);
            }
            UNROLL for (int h = 0; h < 2; h++) {
                const __m256i b = _mm256_load_si256((const __m256i *)(codes + 32 * h));
                const __m256i lo = _mm256_and_si256(b, low);
                const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(b, 4), low);
                UNROLL for (int r = 0; r < R; r++) {
                    __m256i pr = _mm256_add_epi16(_mm256_maddubs_epi16(lo, a0[r]),
                                                  _mm256_maddubs_epi16(hi, a1[r]));
                    isum[r][h] = _mm256_add_epi32(isum[r][h], _mm256_madd_epi16(pr, ones));
                }
            }
        }
        UNROLL for (int h = 0; h < 2; h++) {
            const __m256 s = _mm256_load_ps(sb + kb * NBI8_COLS + 8 * h);
            const __m256 z =
                zp ? _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(
                         _mm_loadl_epi64((const __m128i *)(zp + kb * NBI8_COLS + 8 * h))))
                   : mid;
            UNROLL for (int r = 0; r < R; r++) {
                const int64_t i = (r0 + r) * qr->kb + kb;
                __m256 t =
                    _mm256_mul_ps(_mm256_cvtepi32_ps(isum[r][h]), _mm256_set1_ps(qr->sa[i]));
                t = _mm256_fnmadd_ps(z, _mm256_set1_ps(qr->sas[i]), t);
                acc[r][h] = _mm256_fmadd_ps(t, s, acc[r][h]);
            }
        }
    }
    const int64_t cols = p->n - g * NBI8_COLS < NBI8_COLS ? p->n - g * NBI8_COLS : NBI8_COLS;
    UNROLL for (int r = 0; r < R; r++) {
        float tmp[NBI8_COLS];
        _mm256_storeu_ps(tmp, acc[r][0]);
        _mm256_storeu_ps(tmp + 8, acc[r][1]);
        memcpy(y + r * ldy + g * NBI8_COLS, tmp, (size_t)cols * sizeof(float));
    }
}

AVX2_TARGET static void tiles_avx2(const nbi8_pack *p, int64_t g, const qrows *qr, int64_t r0,
                                   int64_t rows, float *y, int64_t ldy) {
    for (; rows >= AVX2_ROWS; rows -= AVX2_ROWS, r0 += AVX2_ROWS)
        tile_avx2(p, g, qr, r0, y + r0 * ldy, ldy, AVX2_ROWS);
    if (rows == 1) tile_avx2(p, g, qr, r0, y + r0 * ldy, ldy, 1);
}
#endif

/* ---- the driver: rows in chunks whose int8 copy stays in L2, each chunk quantized (in parallel
 * over rows) and then multiplied in parallel over groups of columns */

typedef struct mm_job {
    const nbi8_pack *p;
    nbi8_isa isa;
    const float *a;
    int64_t r0, rows;
    qrows qr;
    float *y;
} mm_job;

static void quantize_rows(void *ctx, int64_t b, int64_t e) {
    const mm_job *j = ctx;
    const nbi8_pack *p = j->p;
    for (int64_t r = b; r < e; r++)
        quantize_row(j->a + (j->r0 + r) * p->k, p->k, p->block, p->k_blocks,
                     (int8_t *)j->qr.q + r * j->qr.kp, (float *)j->qr.sa + r * p->k_blocks,
                     (float *)j->qr.sas + r * p->k_blocks);
}

static void multiply_groups(void *ctx, int64_t b, int64_t e) {
    const mm_job *j = ctx;
    float *y = j->y + j->r0 * j->p->n;
    for (int64_t g = b; g < e; g++) {
#if defined(NBI8_X86)
        if (j->isa == NBI8_VNNI) tiles_vnni(j->p, g, &j->qr, 0, j->rows, y, j->p->n);
        else tiles_avx2(j->p, g, &j->qr, 0, j->rows, y, j->p->n);
#else
        (void)y;
#endif
    }
}

static int64_t chunk_rows(const nbi8_pack *p, int64_t m) {
    int64_t c = (int64_t)(A_CHUNK_BYTES / (size_t)(p->k_blocks * p->block));
    c = c / VNNI_ROWS * VNNI_ROWS;
    if (c < VNNI_ROWS) c = VNNI_ROWS;
    return c < m ? c : m;
}

size_t nbi8_scratch_bytes(const nbi8_pack *p, int64_t m) {
    const size_t rows = (size_t)chunk_rows(p, m);
    return ALIGN64(rows * (size_t)(p->k_blocks * p->block)) +
           2 * ALIGN64(rows * (size_t)p->k_blocks * sizeof(float));
}

void nbi8_matmul(const nbi8_pack *p, nbi8_isa isa, const float *a, int64_t m, float *y,
                 void *scratch) {
    const int64_t kp = p->k_blocks * p->block, chunk = chunk_rows(p, m);
    char *buf = scratch;
    int8_t *q = (int8_t *)buf;
    float *sa = (float *)(buf + ALIGN64((size_t)(chunk * kp)));
    float *sas = (float *)((char *)sa + ALIGN64((size_t)(chunk * p->k_blocks) * sizeof(float)));
    for (int64_t r0 = 0; r0 < m; r0 += chunk) {
        const int64_t rows = m - r0 < chunk ? m - r0 : chunk;
        mm_job j = {p, isa, a, r0, rows, {q, sa, sas, kp, p->k_blocks}, y};
        parallel_for(rows, 1 + (1 << 14) / p->k, quantize_rows, &j);
        /* a group is rows x kp x 16 products: about 2^16 of them per task at the least */
        parallel_for(p->groups, 1 + (1 << 16) / (rows * kp * NBI8_COLS), multiply_groups, &j);
    }
}
