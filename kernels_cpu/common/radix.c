#include "kernels_cpu/common/radix.h"

void cpu_radix_sort(uint32_t *key, uint32_t *idx, uint32_t *tk, uint32_t *ti, size_t n,
                    uint32_t *count) {
    if (n < 2) return;
    if (n <= 32) { /* insertion sort, stable */
        for (size_t i = 1; i < n; i++) {
            uint32_t k = key[i], v = idx[i];
            size_t j = i;
            while (j > 0 && key[j - 1] > k) key[j] = key[j - 1], idx[j] = idx[j - 1], j--;
            key[j] = k, idx[j] = v;
        }
        return;
    }
    uint32_t *sk = key, *si = idx, *dk = tk, *di = ti;
    for (int shift = 0; shift < 32; shift += 11) {
        memset(count, 0, CPU_RADIX_COUNTS * sizeof *count);
        for (size_t i = 0; i < n; i++) count[(sk[i] >> shift) & 2047]++;
        if (count[(sk[0] >> shift) & 2047] == n) continue;
        uint32_t sum = 0;
        for (int d = 0; d < CPU_RADIX_COUNTS; d++) {
            uint32_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) {
            uint32_t p = count[(sk[i] >> shift) & 2047]++;
            dk[p] = sk[i], di[p] = si[i];
        }
        uint32_t *t = sk;
        sk = dk, dk = t;
        t = si, si = di, di = t;
    }
    if (sk != key) {
        memcpy(key, sk, n * sizeof *key);
        memcpy(idx, si, n * sizeof *idx);
    }
}
