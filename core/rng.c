/* numpy's legacy RandomState in C: MT19937 seeded like RandomState(int), random_sample,
 * the polar-method standard_normal and binomial (inversion / BTPE), draw for draw. */
#include "core/rng.h"

#include <math.h>
#include <stdatomic.h>
#include <time.h>

#define MT_N 624
#define MT_M 397
#define MT_MATRIX_A 0x9908b0dfu
#define MT_UPPER 0x80000000u
#define MT_LOWER 0x7fffffffu

void rng_seed(rng *r, uint32_t seed) {
    /* RandomState(int) uses the reference init_genrand, not init_by_array. */
    r->mt[0] = seed;
    for (uint32_t i = 1; i < MT_N; i++)
        r->mt[i] = 1812433253u * (r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) + i;
    r->pos = MT_N;
    r->has_gauss = false;
    r->gauss = 0.0;
}

void rng_seed_random(rng *r) {
    static atomic_uint_fast64_t counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    x ^= (atomic_fetch_add(&counter, 1) + 1) * 0x9e3779b97f4a7c15ull;
    /* splitmix64 finalizer: nearby clocks and counters give unrelated seeds */
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    rng_seed(r, (uint32_t)(x ^ (x >> 32)));
}

static void mt_refill(rng *r) {
    uint32_t *k = r->mt;
    int i;
    uint32_t y;
    for (i = 0; i < MT_N - MT_M; i++) {
        y = (k[i] & MT_UPPER) | (k[i + 1] & MT_LOWER);
        k[i] = k[i + MT_M] ^ (y >> 1) ^ ((0u - (y & 1u)) & MT_MATRIX_A);
    }
    for (; i < MT_N - 1; i++) {
        y = (k[i] & MT_UPPER) | (k[i + 1] & MT_LOWER);
        k[i] = k[i + MT_M - MT_N] ^ (y >> 1) ^ ((0u - (y & 1u)) & MT_MATRIX_A);
    }
    y = (k[MT_N - 1] & MT_UPPER) | (k[0] & MT_LOWER);
    k[MT_N - 1] = k[MT_M - 1] ^ (y >> 1) ^ ((0u - (y & 1u)) & MT_MATRIX_A);
    r->pos = 0;
}

uint32_t rng_u32(rng *r) {
    if (r->pos >= MT_N) mt_refill(r);
    uint32_t y = r->mt[r->pos++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

double rng_uniform(rng *r) {
    uint32_t a = rng_u32(r) >> 5, b = rng_u32(r) >> 6;
    return (a * 67108864.0 + b) / 9007199254740992.0;
}

double rng_normal(rng *r) {
    if (r->has_gauss) {
        r->has_gauss = false;
        double g = r->gauss;
        r->gauss = 0.0;
        return g;
    }
    double x1, x2, r2;
    do {
        x1 = 2.0 * rng_uniform(r) - 1.0;
        x2 = 2.0 * rng_uniform(r) - 1.0;
        r2 = x1 * x1 + x2 * x2;
    } while (r2 >= 1.0 || r2 == 0.0);
    double f = sqrt(-2.0 * log(r2) / r2);
    r->gauss = f * x1;
    r->has_gauss = true;
    return f * x2;
}

/* Inversion for small n*p (p <= 0.5): walks the pmf from 0, restarting past a far bound. */
static int64_t binomial_inversion(rng *r, int64_t n, double p) {
    double q = 1.0 - p;
    double qn = exp((double)n * log(q));
    double np = (double)n * p;
    double bnd = np + 10.0 * sqrt(np * q + 1);
    int64_t bound = (double)n < bnd ? n : (int64_t)bnd;
    int64_t x = 0;
    double px = qn;
    double u = rng_uniform(r);
    while (u > px) {
        x++;
        if (x > bound) {
            x = 0;
            px = qn;
            u = rng_uniform(r);
        } else {
            u -= px;
            px = ((double)(n - x + 1) * p * px) / ((double)x * q);
        }
    }
    return x;
}

/* Stirling-series tail of log(k!) - used by the BTPE final acceptance test. */
static double btpe_stirling(double v) {
    double v2 = v * v;
    return (13680. - (462. - (132. - (99. - 140. / v2) / v2) / v2) / v2) / v / 166320.;
}

/* BTPE (Kachitvichyanukul & Schmeiser 1988) for n*p > 30, p <= 0.5, in numpy's exact order of
 * draws and floating-point operations so that results match bit for bit. */
static int64_t binomial_btpe(rng *rg, int64_t n, double p) {
    double r = p < 1.0 - p ? p : 1.0 - p;
    double q = 1.0 - r;
    double fm = (double)n * r + r;
    int64_t m = (int64_t)floor(fm);
    double p1 = floor(2.195 * sqrt((double)n * r * q) - 4.6 * q) + 0.5;
    double xm = (double)m + 0.5;
    double xl = xm - p1, xr = xm + p1;
    double c = 0.134 + 20.5 / (15.3 + (double)m);
    double a = (fm - xl) / (fm - xl * r);
    double laml = a * (1.0 + a / 2.0);
    a = (xr - fm) / (xr * q);
    double lamr = a * (1.0 + a / 2.0);
    double p2 = p1 * (1.0 + 2.0 * c);
    double p3 = p2 + c / laml;
    double p4 = p3 + c / lamr;
    double nrq = (double)n * r * q;

    for (;;) {
        double u = rng_uniform(rg) * p4;
        double v = rng_uniform(rg);
        if (u <= p1) {
            /* triangular region: accepted outright */
            return (int64_t)floor(xm - p1 * v + u);
        }
        int64_t y;
        if (u <= p2) {
            double x = xl + (u - p1) / c;
            v = v * c + 1.0 - fabs((double)m - x + 0.5) / p1;
            if (v > 1.0) continue;
            y = (int64_t)floor(x);
        } else if (u <= p3) {
            double yy = floor(xl + log(v) / laml);
            if (v == 0.0 || yy < 0) continue;
            y = (int64_t)yy;
            v = v * (u - p2) * laml;
        } else {
            double yy = floor(xr - log(v) / lamr);
            if (v == 0.0 || yy > (double)n) continue;
            y = (int64_t)yy;
            v = v * (u - p3) * lamr;
        }
        int64_t k = y > m ? y - m : m - y;
        if (k <= 20 || (double)k >= nrq / 2.0 - 1) {
            /* explicit pmf ratio f(y)/f(m) */
            double s = r / q;
            double aa = s * (double)(n + 1);
            double F = 1.0;
            if (m < y) {
                for (int64_t i = m + 1; i <= y; i++) F *= (aa / (double)i - s);
            } else if (m > y) {
                for (int64_t i = y + 1; i <= m; i++) F /= (aa / (double)i - s);
            }
            if (v > F) continue;
            return y;
        }
        double kd = (double)k;
        double rho = (kd / nrq) * ((kd * (kd / 3.0 + 0.625) + 0.16666666666666666) / nrq + 0.5);
        double t = (double)(-k * k) / (2 * nrq);
        double A = log(v);
        if (A < t - rho) return y;
        if (A > t + rho) continue;
        double x1 = (double)(y + 1), f1 = (double)(m + 1), z = (double)(n + 1 - m),
               w = (double)(n - y + 1);
        if (A > (xm * log(f1 / x1) + ((double)(n - m) + 0.5) * log(z / w) +
                 (double)(y - m) * log(w * r / (x1 * q)) + btpe_stirling(f1) + btpe_stirling(z) +
                 btpe_stirling(x1) + btpe_stirling(w)))
            continue;
        return y;
    }
}

int64_t rng_binomial(rng *r, int64_t n, double p) {
    /* numpy's legacy path has no shortcut for n == 0 or p == 0: inversion still draws once */
    if (p <= 0.5) {
        if (p * (double)n <= 30.0) return binomial_inversion(r, n, p);
        return binomial_btpe(r, n, p);
    }
    double q = 1.0 - p;
    if (q * (double)n <= 30.0) return n - binomial_inversion(r, n, q);
    return n - binomial_btpe(r, n, q);
}
