#include "geometry/nbits.h"

#include <string.h>

onyx_status geom_nbits_of(int64_t k, int64_t n, int64_t bits, int64_t block, geom_nbits *g,
                          geom_msg *msg) {
    memset(g, 0, sizeof *g);
    if (k <= 0 || n <= 0)
        return geom_fail(msg, ONYX_ERR_INVALID_MODEL,
                         "attributes K (%lld) and N (%lld) must be positive", (long long)k,
                         (long long)n);
    if (bits != 2 && bits != 4 && bits != 8)
        return geom_fail(msg, ONYX_ERR_UNSUPPORTED, "bits=%lld is not supported (2, 4 or 8)",
                         (long long)bits);
    if (block < 16 || (block & (block - 1)) != 0)
        return geom_fail(msg, ONYX_ERR_INVALID_MODEL, "block_size %lld is not a power of 2 >= 16",
                         (long long)block);
    if (k > INT32_MAX || n > INT32_MAX || block > (1 << 20))
        return geom_fail(msg, ONYX_ERR_UNSUPPORTED,
                         "K (%lld), N (%lld) or block_size (%lld) is past what onyx supports "
                         "(2^31 - 1, 2^31 - 1, 2^20)",
                         (long long)k, (long long)n, (long long)block);
    g->k = k, g->n = n, g->bits = bits, g->block = block;
    g->k_blocks = (k + block - 1) / block;
    g->blob = block * bits / 8;
    g->zp_bytes = (g->k_blocks * bits + 7) / 8;
    return ONYX_OK;
}
