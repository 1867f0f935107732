/* The 8-bit product of CPUs without VNNI (i8_gemm_avx2.h), summing as onnxruntime 1.32's MLAS
 * sums on such a CPU, so that onyx's results there are onnxruntime's there.
 *
 * What MLAS does on AVX2 without VNNI (platform.cpp, qgemm.h, qgemm_kernel_avx2.cpp,
 * x86_64/QgemmU8X8KernelAvx2.S, QgemvU8S8KernelAvx2.S):
 * - u8 A x s8 B (MlasGemmU8S8DispatchAvx2, and the M = 1 kernel MlasGemvU8S8KernelAvx2): A and B
 *   are multiplied as stored, zero points applied afterwards through row and column sums. Four
 *   bytes of A's row (k = 4q .. 4q + 3, zeros past K) are broadcast, vpmaddubsw multiplies them
 *   by B's bytes and adds each pair of products, (k = 2p, 2p + 1), saturating that pair's sum to
 *   int16; vpmaddwd by ones then adds the two pairs of a quad into int32, exactly. So a pair
 *   saturates where a[2p] b[2p] + a[2p+1] b[2p+1] leaves [-32768, 32767]: possible only with
 *   large weights (255 * 127 * 2 = 64770), and what quantize_static's reduce_range (7-bit
 *   weights: 255 * 63 * 2 = 32130) exists to avoid. The pairing does not depend on MLAS's K
 *   blocking (its strides are multiples of 4). It does not widen to int16 to avoid saturation.
 * - u8 A x u8 B (MlasGemmU8U8DispatchAvx2): A widened to int16 when packed, B with vpmovzxbw,
 *   vpmaddwd: exact.
 * - s8 A (s8 or u8 B): AVX2 without AVX-VNNI-INT8 has no kernel, MLAS takes its portable
 *   MlasGemmQuantDispatchDefault, int32 products: exact.
 * VNNI (vpdpbusd) adds the four products of a quad in int32 without the int16 step: the same
 * result wherever no pair saturates, which is why oneDNN's VNNI kernels and onnxruntime's agree
 * bit for bit there, and oneDNN's own AVX2 int8 kernels (which also saturate in vpmaddubsw, but
 * after moving s8 sources by 128 and with their own K order for convolutions) are not used.
 *
 * Here: B packed once per constant into panels of 16 columns; a tile of up to 4 rows x 16
 * columns keeps 8 ymm int32 accumulators. Saturating (u8 x s8): a step is 4 k of B's bytes per
 * column and vpmaddubsw + vpmaddwd(1), as MLAS. Exact (every other pairing): a step is 2 k,
 * both sides widened to int16 (A per call, B at packing), vpmaddwd. */
#include "kernels_cpu/common/i8_gemm_avx2.h"

#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "kernels_cpu/common/blas.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define I8AVX2_X86 1
#endif

#define PANEL 16     /* columns of a packed panel: two ymm of 8 int32 */
#define TILE_ROWS 4  /* 4 rows x 2 halves: 8 accumulators, with B's 2, A's 1 and 2 temporaries */
#define STEP_BYTES 4 /* what one broadcast of A covers: 4 k as bytes, 2 k as int16 */
#define ALIGN64(x) (((x) + 63) / 64 * 64)

cpu_i8_path cpu_i8_choose(void) {
    const char *force = getenv("ONYX_I8");
    if (force && strcmp(force, "ref") == 0) return CPU_I8_REF;
    if (force && strcmp(force, "avx2") == 0) return i8avx2_supported() ? CPU_I8_AVX2 : CPU_I8_REF;
    if (cpu_int8_exact()) return CPU_I8_ONEDNN;
    return i8avx2_supported() ? CPU_I8_AVX2 : CPU_I8_REF;
}

bool i8avx2_supported(void) {
#if defined(I8AVX2_X86)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
#else
    return false;
#endif
}

/* k values per step: 4 bytes, or 2 int16 */
static int64_t per_step(bool sat) { return sat ? 4 : 2; }
static int64_t steps_of(int64_t k, bool sat) { return (k + per_step(sat) - 1) / per_step(sat); }

size_t i8avx2_pack_bytes(int64_t k, int64_t n, bool a_signed, bool b_signed) {
    const int64_t panels = (n + PANEL - 1) / PANEL;
    return (size_t)panels * (size_t)steps_of(k, i8avx2_saturates(a_signed, b_signed)) * PANEL *
           STEP_BYTES;
}

static int32_t b_at(const void *b, bool b_signed, bool transposed, int64_t k, int64_t n,
                    int64_t p, int64_t j) {
    const int64_t at = transposed ? j * k + p : p * n + j;
    return b_signed ? (int32_t)((const int8_t *)b)[at] : (int32_t)((const uint8_t *)b)[at];
}

void i8avx2_pack(const void *b, bool b_signed, bool transposed, int64_t k, int64_t n,
                 bool a_signed, void *dst, uint32_t *colsum) {
    const bool sat = i8avx2_saturates(a_signed, b_signed);
    const int64_t steps = steps_of(k, sat), ps = per_step(sat), panels = (n + PANEL - 1) / PANEL;
    /* [panel][step][column of 16][ps values], zeros past K and N */
    for (int64_t pn = 0; pn < panels; pn++)
        for (int64_t s = 0; s < steps; s++)
            for (int64_t c = 0; c < PANEL; c++)
                for (int64_t q = 0; q < ps; q++) {
                    const int64_t j = pn * PANEL + c, p = s * ps + q,
                                  at = ((pn * steps + s) * PANEL + c) * ps + q;
                    const int32_t v = j < n && p < k ? b_at(b, b_signed, transposed, k, n, p, j) : 0;
                    if (sat) ((int8_t *)dst)[at] = (int8_t)v;
                    else ((int16_t *)dst)[at] = (int16_t)v;
                }
    if (!colsum) return;
    for (int64_t j = 0; j < n; j++) {
        uint32_t s = 0;
        for (int64_t p = 0; p < k; p++) s += (uint32_t)b_at(b, b_signed, transposed, k, n, p, j);
        colsum[j] = s;
    }
}

size_t i8avx2_scratch_bytes(int64_t m, int64_t k, bool a_signed, bool b_signed) {
    return ALIGN64((size_t)m * (size_t)steps_of(k, i8avx2_saturates(a_signed, b_signed)) *
                   STEP_BYTES) + 64;
}

#if defined(I8AVX2_X86)

#define AVX2_TARGET __attribute__((target("avx2")))
#define UNROLL _Pragma("GCC unroll 8")

/* One tile: rows x 16 columns of panel bp into c (ldc), only the first `cols` columns stored. */
AVX2_TARGET static inline __attribute__((always_inline)) void
tile(const uint8_t *a, int64_t lda, const uint8_t *bp, int64_t steps, int rows, bool sat,
     int32_t *c, int64_t ldc, int64_t cols) {
    __m256i acc[TILE_ROWS][2];
    const __m256i ones = _mm256_set1_epi16(1);
    UNROLL for (int r = 0; r < rows; r++) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
    for (int64_t s = 0; s < steps; s++) {
        const __m256i b0 = _mm256_load_si256((const __m256i *)(bp + s * 64)),
                      b1 = _mm256_load_si256((const __m256i *)(bp + s * 64 + 32));
        UNROLL for (int r = 0; r < rows; r++) {
            int32_t q;
            memcpy(&q, a + r * lda + s * STEP_BYTES, sizeof q);
            const __m256i av = _mm256_set1_epi32(q);
            __m256i t0, t1;
            if (sat) { /* pairs saturated to int16, then the two pairs of the quad in int32 */
                t0 = _mm256_madd_epi16(_mm256_maddubs_epi16(av, b0), ones);
                t1 = _mm256_madd_epi16(_mm256_maddubs_epi16(av, b1), ones);
            } else {
                t0 = _mm256_madd_epi16(av, b0);
                t1 = _mm256_madd_epi16(av, b1);
            }
            acc[r][0] = _mm256_add_epi32(acc[r][0], t0);
            acc[r][1] = _mm256_add_epi32(acc[r][1], t1);
        }
    }
    UNROLL for (int r = 0; r < rows; r++) {
        int32_t *y = c + r * ldc;
        if (cols == PANEL) {
            _mm256_storeu_si256((__m256i *)y, acc[r][0]);
            _mm256_storeu_si256((__m256i *)(y + 8), acc[r][1]);
        } else {
            int32_t tmp[PANEL];
            _mm256_storeu_si256((__m256i *)tmp, acc[r][0]);
            _mm256_storeu_si256((__m256i *)(tmp + 8), acc[r][1]);
            memcpy(y, tmp, (size_t)cols * sizeof *y);
        }
    }
}

/* One tile of 1 to 4 rows, each row count (and the saturating choice) compiled as a constant. */
AVX2_TARGET static void tile_any(const uint8_t *a, int64_t lda, const uint8_t *bp, int64_t steps,
                                 int rows, bool sat, int32_t *c, int64_t ldc, int64_t cols) {
#define TILE_CASE(R)                                                                    \
    case R:                                                                             \
        if (sat) tile(a, lda, bp, steps, R, true, c, ldc, cols);                        \
        else tile(a, lda, bp, steps, R, false, c, ldc, cols);                           \
        break;
    switch (rows) {
        TILE_CASE(1)
        TILE_CASE(2)
        TILE_CASE(3)
        TILE_CASE(4)
    }
#undef TILE_CASE
}

typedef struct gemm_job {
    const uint8_t *a, *b;
    int64_t lda, steps, m, n, row_blocks;
    bool sat;
    int32_t *c;
    int64_t ldc;
} gemm_job;

/* Tiles [b, e): panel-major, so that consecutive tiles of a task share B's panel in cache. */
static void gemm_tiles(void *ctx, int64_t b, int64_t e) {
    const gemm_job *j = ctx;
    for (int64_t t = b; t < e; t++) {
        const int64_t rb = t % j->row_blocks, pn = t / j->row_blocks, r0 = rb * TILE_ROWS,
                      j0 = pn * PANEL;
        const int64_t rows = j->m - r0 < TILE_ROWS ? j->m - r0 : TILE_ROWS,
                      cols = j->n - j0 < PANEL ? j->n - j0 : PANEL;
        tile_any(j->a + r0 * j->lda, j->lda, j->b + pn * j->steps * PANEL * STEP_BYTES, j->steps,
                 (int)rows, j->sat, j->c + r0 * j->ldc + j0, j->ldc, cols);
    }
}

#endif

/* A's rows in the kernel's form: bytes (saturating) or int16, zeros up to the step. */
static void stage_a(const void *a, bool a_signed, bool sat, int64_t m, int64_t k, int64_t steps,
                    uint8_t *dst) {
    const int64_t lda = steps * STEP_BYTES;
    for (int64_t i = 0; i < m; i++) {
        uint8_t *row = dst + i * lda;
        if (sat) {
            memcpy(row, (const uint8_t *)a + i * k, (size_t)k);
            memset(row + k, 0, (size_t)(lda - k));
            continue;
        }
        int16_t *w = (int16_t *)row;
        if (a_signed) {
            const int8_t *s = (const int8_t *)a + i * k;
            for (int64_t p = 0; p < k; p++) w[p] = s[p];
        } else {
            const uint8_t *s = (const uint8_t *)a + i * k;
            for (int64_t p = 0; p < k; p++) w[p] = s[p];
        }
        for (int64_t p = k; p < steps * 2; p++) w[p] = 0;
    }
}

void i8avx2_gemm(const void *packed, const void *a, bool a_signed, bool b_signed, int64_t m,
                 int64_t k, int64_t n, int32_t *c, int64_t ldc, void *scratch) {
    const bool sat = i8avx2_saturates(a_signed, b_signed);
    const int64_t steps = steps_of(k, sat);
    uint8_t *as = (uint8_t *)(((uintptr_t)scratch + 63) & ~(uintptr_t)63);
    stage_a(a, a_signed, sat, m, k, steps, as);
#if defined(I8AVX2_X86)
    gemm_job j = {as, packed, steps * STEP_BYTES, steps, m, n, (m + TILE_ROWS - 1) / TILE_ROWS,
                  sat, c, ldc};
    const int64_t tiles = j.row_blocks * ((n + PANEL - 1) / PANEL);
    /* a tile is 4 x 16 x steps multiply-adds of 4 bytes: about 2^15 steps' worth per task */
    parallel_for(tiles, 1 + (1 << 13) / (steps + 1), gemm_tiles, &j);
#else
    (void)packed;
    (void)n;
    (void)c;
    (void)ldc;
#endif
}
