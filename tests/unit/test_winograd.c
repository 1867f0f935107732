/* Winograd F(2x2, 3x3) (kernels_cpu/conv/winograd.c) on its own: which convolutions it takes,
 * how its plans cut the work, and its outputs against a direct convolution in double for every
 * epilogue step it applies (bias, Relu and LeakyRelu, Clip, a constant factor, a residual sum
 * into Y's own buffer), pads 0 to 2, odd sizes, batch 2, output channels off its 64-wide blocks,
 * one and two slots. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels_cpu/conv/winograd.h"

static geom_window window(int64_t n, int64_t c, int64_t m, int64_t h, int64_t w, int64_t pad) {
    geom_window g = {.nsp = 2, .n = n, .c = c, .m = m, .group = 1};
    int64_t in[2] = {h, w};
    for (int i = 0; i < 2; i++) {
        g.in[i] = in[i];
        g.k[i] = 3;
        g.stride[i] = 1;
        g.dil[i] = 1;
        g.pad_b[i] = g.pad_e[i] = pad;
        g.out[i] = in[i] + 2 * pad - 2;
    }
    return g;
}

static bool has_avx512(void) { return __builtin_cpu_supports("avx512f"); }

static void test_takes_only_its_convolutions(void **state) {
    (void)state;
    if (!has_avx512()) skip(); /* it takes nothing without AVX-512 */
    geom_window g = window(1, 64, 64, 56, 56, 1);
    assert_true(cpu_wino_takes(&g));
    geom_window k = g;
    k.stride[0] = 2;
    assert_false(cpu_wino_takes(&k));
    k = g;
    k.dil[1] = 2;
    assert_false(cpu_wino_takes(&k));
    k = g;
    k.group = 2;
    assert_false(cpu_wino_takes(&k));
    k = g;
    k.k[0] = 5;
    assert_false(cpu_wino_takes(&k));
    k = g;
    k.pad_e[1] = 3;
    assert_false(cpu_wino_takes(&k));
    k = window(1, 24, 64, 56, 56, 1); /* input channels off the 16 grid */
    assert_false(cpu_wino_takes(&k));
    k = window(1, 512, 512, 7, 7, 1); /* 16 tiles: too few for its weights */
    assert_false(cpu_wino_takes(&k));
    k = window(4, 512, 512, 7, 7, 1); /* 64 over the batch */
    assert_true(cpu_wino_takes(&k));
}

static void test_plans_cover_the_work(void **state) {
    (void)state;
    const int64_t shapes[][3] = {{64, 64, 56}, {128, 128, 28}, {256, 256, 14}, {48, 80, 17}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int threads = 1; threads <= 4; threads++) {
            geom_window g = window(1, shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][2], 1);
            cpu_wino_plan pl;
            cpu_wino_plan_make(&g, threads, &pl);
            /* every tile and output channel in exactly one item, none empty */
            assert_true(pl.block * pl.blocks >= pl.tiles);
            assert_true(pl.block * (pl.blocks - 1) < pl.tiles);
            assert_true(pl.part % 16 == 0 && pl.part * pl.parts >= pl.m);
            assert_true(pl.part * (pl.parts - 1) < pl.m);
            assert_int_equal(pl.slots, threads);
            assert_true(pl.slot_bytes % 64 == 0 && pl.slot_bytes <= 2 * 1024 * 1024);
        }
    /* 4 MB of transformed weights: an item takes every tile of the image */
    geom_window g = window(1, 256, 256, 14, 14, 1);
    cpu_wino_plan pl;
    cpu_wino_plan_make(&g, 2, &pl);
    assert_int_equal(pl.blocks, 1);
    assert_int_equal(pl.parts, 2);
}

static float frand(uint32_t *s) {
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xffff) / 32768.0f - 1.0f;
}

/* y = the epilogue's steps over a direct convolution of x (channels last) in double. */
static void reference(const geom_window *g, const float *x, const float *w, const float *bias,
                      const cpu_wino_epilogue *ep, const float *addend, double *y) {
    int64_t oh = g->out[0], ow = g->out[1];
    for (int64_t n = 0; n < g->n; n++)
        for (int64_t i = 0; i < oh; i++)
            for (int64_t j = 0; j < ow; j++)
                for (int64_t o = 0; o < g->m; o++) {
                    double s = bias ? bias[o] : 0.0;
                    for (int a = 0; a < 3; a++)
                        for (int b = 0; b < 3; b++) {
                            int64_t yy = i + a - g->pad_b[0], xx = j + b - g->pad_b[1];
                            if (yy < 0 || yy >= g->in[0] || xx < 0 || xx >= g->in[1]) continue;
                            const float *px = x + ((n * g->in[0] + yy) * g->in[1] + xx) * g->c;
                            for (int64_t c = 0; c < g->c; c++)
                                s += (double)px[c] * w[((o * g->c + c) * 3 + a) * 3 + b];
                        }
                    int64_t at = ((n * oh + i) * ow + j) * g->m + o;
                    for (int k = 0; k < ep->n_ops; k++) {
                        const fuse_op *op = &ep->ops[k];
                        if (op->kind == FUSE_RELU) s = s < 0 ? s * op->alpha : s;
                        if (op->kind == FUSE_CLIP) s = fmin(fmax(s, op->alpha), op->beta);
                        if (op->kind == FUSE_LINEAR) s *= op->alpha;
                        if (op->kind == FUSE_SUM) s += addend[at];
                    }
                    y[at] = s;
                }
}

static void check(int64_t n, int64_t c, int64_t m, int64_t h, int64_t w, int64_t pad,
                  const fuse_op *ops, int n_ops, int threads) {
    geom_window g = window(n, c, m, h, w, pad);
    int64_t xn = n * h * w * c, yn = n * g.out[0] * g.out[1] * m, wn = m * c * 9;
    float *x = malloc((size_t)xn * sizeof *x), *wt = malloc((size_t)wn * sizeof *wt);
    float *bias = malloc((size_t)m * sizeof *bias), *y = malloc((size_t)yn * sizeof *y);
    float *addend = malloc((size_t)yn * sizeof *addend);
    double *want = malloc((size_t)yn * sizeof *want);
    float *u = aligned_alloc(64, cpu_wino_weights_bytes(c, m));
    assert_true(x && wt && bias && y && addend && want && u);
    uint32_t seed = 7;
    for (int64_t i = 0; i < xn; i++) x[i] = frand(&seed);
    for (int64_t i = 0; i < wn; i++) wt[i] = frand(&seed) / sqrtf((float)(c * 9));
    for (int64_t i = 0; i < m; i++) bias[i] = 0.1f * frand(&seed);
    for (int64_t i = 0; i < yn; i++) addend[i] = frand(&seed);
    cpu_wino_epilogue ep = {bias, ops, n_ops, NULL};
    reference(&g, x, wt, bias, &ep, addend, want);
    cpu_wino_pack(wt, c, m, u);
    cpu_wino_plan pl;
    cpu_wino_plan_make(&g, threads, &pl);
    void *scratch = aligned_alloc(64, (size_t)pl.slots * pl.slot_bytes);
    assert_non_null(scratch);
    memcpy(y, addend, (size_t)yn * sizeof *y); /* the sum reads Y's own buffer, as in place */
    ep.addend = y;
    cpu_wino_run(&pl, x, u, &ep, y, scratch);
    double worst = 0.0;
    for (int64_t i = 0; i < yn; i++) worst = fmax(worst, fabs(y[i] - want[i]));
    assert_true(worst < 1e-5); /* outputs of about 1: float rounding, not a wrong tap */
    free(scratch);
    free(u);
    free(want);
    free(addend);
    free(y);
    free(bias);
    free(wt);
    free(x);
}

static void test_outputs_match_a_direct_convolution(void **state) {
    (void)state;
    if (!has_avx512()) skip();
    const fuse_op relu = {.kind = FUSE_RELU}, leaky = {.kind = FUSE_RELU, .alpha = 0.1f};
    const fuse_op clip = {.kind = FUSE_CLIP, .alpha = -0.5f, .beta = 0.75f};
    const fuse_op half = {.kind = FUSE_LINEAR, .alpha = 0.5f}, sum = {.kind = FUSE_SUM};
    const fuse_op residual[] = {sum, relu}, scaled[] = {half, leaky}, clipped[] = {clip};
    check(1, 32, 64, 16, 16, 1, residual, 2, 2);
    check(2, 16, 80, 15, 13, 0, scaled, 2, 2);  /* half tiles at the edges, 64 + 16 channels */
    check(1, 48, 48, 11, 17, 2, clipped, 1, 1); /* one slot */
    check(1, 192, 192, 14, 14, 1, residual, 2, 2); /* the wide plan: an image's tiles an item */
    check(1, 16, 16, 9, 9, 1, NULL, 0, 3);         /* no epilogue steps, three slots */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_takes_only_its_convolutions),
        cmocka_unit_test(test_plans_cover_the_work),
        cmocka_unit_test(test_outputs_match_a_direct_convolution),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
