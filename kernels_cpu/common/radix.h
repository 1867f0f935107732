/* Stable sorts of 32-bit keys with a payload (NonMaxSuppression's scores, TopK's rows): LSD radix
 * in 11-bit digits, linear in the count where a comparison sort or a heap is not. */
#ifndef ONYX_KERNELS_CPU_COMMON_RADIX_H
#define ONYX_KERNELS_CPU_COMMON_RADIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The counting table cpu_radix_sort needs, in entries. */
#define CPU_RADIX_COUNTS 2048

/* Sorts (key[i], idx[i]) by key ascending, equal keys keeping their order; tk and ti are
 * temporaries of n entries. Digits that every key shares cost one counting pass. */
void cpu_radix_sort(uint32_t *key, uint32_t *idx, uint32_t *tk, uint32_t *ti, size_t n,
                    uint32_t *count);

/* A key whose ascending order is f's descending order (or ascending, when !descending): -0 and +0
 * equal, every NaN first (nan_first) or last. */
static inline uint32_t cpu_f32_order_key(float f, bool descending, bool nan_first) {
    if (f != f) return nan_first ? 0 : UINT32_MAX;
    if (f == 0) f = 0; /* -0 -> +0 */
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    uint32_t up = (u & 0x80000000u) ? ~u : u | 0x80000000u; /* ascending with f */
    /* no number maps to 0 or UINT32_MAX (only NaN bit patterns would), so NaN stays apart */
    return descending ? ~up : up;
}

#endif
