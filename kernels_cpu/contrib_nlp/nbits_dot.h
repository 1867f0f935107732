/* The inner loops of MatMulNBits on its packed weights (kernels_cpu/contrib_nlp/nbits_dot.c): dot
 * products of a few activation rows with columns of 2/4/8-bit codes unpacked in registers, in
 * float or (accuracy_level 4) in int8 with VNNI, and a column dequantized to float for the
 * many-row path. */
#ifndef ONYX_KERNELS_CPU_NBITS_DOT_H
#define ONYX_KERNELS_CPU_NBITS_DOT_H

#include <stdbool.h>
#include <stdint.h>

/* Most rows one call of a dot kernel takes (its accumulators stay in registers). */
#define NB_ROWS 4

/* One MatMulNBits weight: N columns of K codes in blocks of `block` along K, each block `blob`
 * bytes of codes packed low bits first, with a float scale and a zero point per block (zp_u8:
 * integer zero points, one byte a block; else zp_f floats; both NULL: the midpoint). */
typedef struct nb_weight {
    int64_t k, n, bits, block, k_blocks, blob;
    const uint8_t *b;
    const float *scale;
    const uint8_t *zp_u8;
    const float *zp_f;
} nb_weight;

/* Zero point of block i (a column's k_blocks blocks after another). */
static inline float nb_zp(const nb_weight *w, int64_t i) {
    return w->zp_u8 ? (float)w->zp_u8[i] : w->zp_f ? w->zp_f[i] : (float)(1 << (w->bits - 1));
}

/* Activations laid out for the dot kernels: a column's codes are one stream of k_blocks*blob
 * bytes, byte j holding elements per*j + t (t < per = 8/bits) at bits t*bits; a row is reordered
 * so that element per*j + t sits at t*(kp/per) + j (kp = k_blocks*block, K padded with zeros): a
 * vector of bytes then meets per contiguous vectors of activations. `a` [rows, k], `out`
 * [rows, kp]. */
void nb_deinterleave(const nb_weight *w, const float *a, int64_t rows, float *out);

/* y[r * ldy] = sum over K of a_r . column n (r < rows <= NB_ROWS), in float; `ad` as
 * nb_deinterleave makes it, rows apart by k_blocks*block. */
void nb_dot_f32(const nb_weight *w, int64_t n, const float *ad, int64_t rows, float *y,
                int64_t ldy);

/* Activations quantized per block to int8 for accuracy_level 4: q [rows, kp] in
 * nb_deinterleave's order, one scale (max |a| / 127) and one code sum per block of each row
 * ([rows, k_blocks]). `a` [rows, k]. */
void nb_quantize_rows(const nb_weight *w, const float *a, int64_t rows, int8_t *q, float *qscale,
                      int32_t *qsum);

/* Whether nb_dot_i8 runs here: 4-bit codes in blocks of 32 or more, and AVX-512 VNNI. */
bool nb_i8_available(const nb_weight *w);

/* nb_dot_f32 with the int8 activations of nb_quantize_rows: int8 x code products summed in
 * int32 per block (VNNI), then scaled. */
void nb_dot_i8(const nb_weight *w, int64_t n, const int8_t *q, const float *qscale,
               const int32_t *qsum, int64_t rows, float *y, int64_t ldy);

/* Column n dequantized into w_out[k] (code - zero point) * scale. */
void nb_dequant_column(const nb_weight *w, int64_t n, float *w_out);

#endif
