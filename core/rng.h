/* Seeded random numbers that reproduce numpy's legacy RandomState bit for bit (MT19937 with
 * numpy's seeding, random_sample, standard_normal by the polar method, binomial), because the
 * reference data of ONNX's random ops (Dropout, Bernoulli, Random*) was drawn with it. */
#ifndef ONYX_CORE_RNG_H
#define ONYX_CORE_RNG_H

#include <stdbool.h>
#include <stdint.h>

typedef struct rng {
    uint32_t mt[624];
    int pos;
    bool has_gauss;   /* the polar method makes normals in pairs; the second waits here */
    double gauss;
} rng;

/* numpy.random.RandomState(seed) for 0 <= seed < 2^32. */
void rng_seed(rng *r, uint32_t seed);
/* Seeded from the clock and a counter, for ops without a seed attribute. */
void rng_seed_random(rng *r);
uint32_t rng_u32(rng *r);
/* RandomState.random_sample(): uniform in [0, 1) with 53 random bits. */
double rng_uniform(rng *r);
/* RandomState.standard_normal(). */
double rng_normal(rng *r);
/* RandomState.binomial(n, p). */
int64_t rng_binomial(rng *r, int64_t n, double p);

#endif
