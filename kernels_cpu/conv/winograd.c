#include "kernels_cpu/conv/winograd.h"

#include <immintrin.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "core/parallel.h"

/* The scratch of one work item (transformed inputs and products), in eighths of a core's L2:
 * 3/8 (768 KB of this Xeon's 2 MB) beside the weights of one position and 64 output channels,
 * 5/8 where an item holds all of an image's tiles (see cpu_wino_plan_make). */
#define SLOT_EIGHTHS 3
#define WIDE_SLOT_EIGHTHS 5

static int64_t l2_bytes(void) {
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return l2 > 0 ? l2 : 1024 * 1024;
}

/* Output channels a packed weight row holds (four vectors), and tiles a product call takes (six
 * rows of four accumulators: 24 of the 32 vector registers). */
#define OB 64
#define ROWS 6

/* Tiles (2x2 output blocks, over the batch) each transformed weight must serve: with fewer,
 * reading the weights, 16/9 as many bytes as the direct kernels read, costs what the FMAs save.
 * At 2 threads against oneDNN's: ResNet's 56x56 and 28x28 layers (784 and 196 tiles) 1.4-1.6x,
 * its 14x14 ones (49 tiles, 4 MB of transformed weights read once, WIDE_SLOT_EIGHTHS) 1.1-1.3x,
 * its 7x7 ones (16) slower. */
#define MIN_TILES 40

#define WT __attribute__((target("avx512f,avx2,fma")))
#define WI WT static inline __attribute__((always_inline))

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool cpu_wino_takes(const geom_window *g) {
    if (g->nsp != 2 || g->transposed || g->group != 1 || g->c % 16 || g->m % 16 || g->c <= 0 ||
        g->m <= 0 || g->n <= 0)
        return false;
    for (int i = 0; i < 2; i++)
        if (g->k[i] != 3 || g->stride[i] != 1 || g->dil[i] != 1 || g->pad_b[i] < 0 ||
            g->pad_b[i] > 2 || g->pad_e[i] < 0 || g->pad_e[i] > 2 || g->out[i] < 2)
            return false;
    int64_t tiles = g->n * ceil_div(g->out[0], 2) * ceil_div(g->out[1], 2);
    return tiles >= MIN_TILES && __builtin_cpu_supports("avx512f") &&
           __builtin_cpu_supports("fma");
}

void cpu_wino_plan_make(const geom_window *g, int threads, cpu_wino_plan *pl) {
    memset(pl, 0, sizeof *pl);
    pl->n = g->n;
    pl->h = g->in[0];
    pl->w = g->in[1];
    pl->c = g->c;
    pl->m = g->m;
    pl->oh = g->out[0];
    pl->ow = g->out[1];
    pl->pad_t = g->pad_b[0];
    pl->pad_l = g->pad_b[1];
    pl->tiles_h = ceil_div(pl->oh, 2);
    pl->tiles_w = ceil_div(pl->ow, 2);
    pl->tiles = pl->tiles_h * pl->tiles_w;
    pl->slots = threads < 1 ? 1 : threads;
    /* Transformed weights larger than the L2 (ResNet's 14x14 layers: 4 MB) are read once per
     * image: each item takes all the tiles of an image for a part of the output channels, as
     * wide as the slots allow, where that fits WIDE_SLOT_EIGHTHS of the L2. Otherwise tiles in
     * blocks that fit SLOT_EIGHTHS of it, all the output channels per item unless that leaves
     * fewer than two items a thread (then halves of them, multiples of OB, until it does or
     * they are OB wide). */
    const int64_t l2 = l2_bytes();
    if (16 * pl->c * pl->m * (int64_t)sizeof(float) > l2) {
        for (int64_t part = pl->m;; part = ceil_div(ceil_div(part, 2), OB) * OB) {
            int64_t items = pl->n * ceil_div(pl->m, part);
            if (items >= pl->slots && items % pl->slots == 0 &&
                16 * pl->tiles * (pl->c + part) * (int64_t)sizeof(float) <=
                    l2 * WIDE_SLOT_EIGHTHS / 8) {
                pl->part = part;
                pl->parts = ceil_div(pl->m, part);
                pl->block = pl->tiles;
                pl->blocks = 1;
                break;
            }
            if (part <= OB) break;
        }
    }
    if (pl->blocks == 0) {
        pl->part = pl->m;
        for (;;) {
            int64_t per_tile = 16 * (pl->c + pl->part) * (int64_t)sizeof(float);
            int64_t block = l2 * SLOT_EIGHTHS / 8 / per_tile;
            if (block < ROWS) block = ROWS;
            if (block > pl->tiles) block = pl->tiles;
            pl->blocks = ceil_div(pl->tiles, block);
            /* items in multiples of the slots, so that no thread is left with one more */
            if (pl->n == 1 && pl->blocks > 1)
                pl->blocks = ceil_div(pl->blocks, pl->slots) * pl->slots;
            pl->block = ceil_div(pl->tiles, pl->blocks); /* the same work in every item */
            pl->blocks = ceil_div(pl->tiles, pl->block);
            pl->parts = ceil_div(pl->m, pl->part);
            if (pl->n * pl->blocks * pl->parts >= 2 * pl->slots || pl->part <= OB) break;
            pl->part = ceil_div(ceil_div(pl->part, 2), OB) * OB;
        }
    }
    size_t bytes = (size_t)16 * (size_t)pl->block * (size_t)(pl->c + pl->part) * sizeof(float);
    pl->slot_bytes = (bytes + 63) / 64 * 64;
}

size_t cpu_wino_weights_bytes(int64_t c, int64_t m) {
    return (size_t)16 * (size_t)ceil_div(m, OB) * (size_t)c * OB * sizeof(float);
}

/* u[p][o / OB][c][o % OB] = (G g G^T)[p] for the 3x3 kernel g of output o and input c, with
 * G = [1 0 0; 1/2 1/2 1/2; 1/2 -1/2 1/2; 0 0 1]; the columns past m are zeros. */
void cpu_wino_pack(const float *w, int64_t c, int64_t m, float *u) {
    int64_t nb = ceil_div(m, OB);
    memset(u, 0, cpu_wino_weights_bytes(c, m));
    for (int64_t o = 0; o < m; o++)
        for (int64_t i = 0; i < c; i++) {
            const float *g = w + (o * c + i) * 9;
            float t[4][3], r[4][4];
            for (int j = 0; j < 3; j++) {
                t[0][j] = g[j];
                t[1][j] = 0.5f * (g[j] + g[3 + j] + g[6 + j]);
                t[2][j] = 0.5f * (g[j] - g[3 + j] + g[6 + j]);
                t[3][j] = g[6 + j];
            }
            for (int k = 0; k < 4; k++) {
                r[k][0] = t[k][0];
                r[k][1] = 0.5f * (t[k][0] + t[k][1] + t[k][2]);
                r[k][2] = 0.5f * (t[k][0] - t[k][1] + t[k][2]);
                r[k][3] = t[k][2];
            }
            for (int p = 0; p < 16; p++)
                u[((p * nb + o / OB) * c + i) * OB + o % OB] = r[p / 4][p % 4];
        }
}

bool cpu_wino_epilogue_takes(fuse_kind kind) {
    return kind == FUSE_RELU || kind == FUSE_CLIP || kind == FUSE_LINEAR || kind == FUSE_SUM;
}

/* ---- products: out[r][0, 16 nv) = sum over k of v[r][k] * u[k][0, 16 nv), r < nr */

WI void product_rows(const float *v, int64_t ldv, const float *u, int64_t k, float *out,
                     int64_t ldo, int nr, int nv) {
    __m512 acc[ROWS][4];
#pragma GCC unroll 6
    for (int r = 0; r < nr; r++)
#pragma GCC unroll 4
        for (int j = 0; j < nv; j++) acc[r][j] = _mm512_setzero_ps();
    for (int64_t i = 0; i < k; i++) {
        __m512 b[4];
#pragma GCC unroll 4
        for (int j = 0; j < nv; j++) b[j] = _mm512_load_ps(u + i * OB + 16 * j);
#pragma GCC unroll 6
        for (int r = 0; r < nr; r++) {
            __m512 a = _mm512_set1_ps(v[r * ldv + i]);
#pragma GCC unroll 4
            for (int j = 0; j < nv; j++) acc[r][j] = _mm512_fmadd_ps(a, b[j], acc[r][j]);
        }
    }
#pragma GCC unroll 6
    for (int r = 0; r < nr; r++)
#pragma GCC unroll 4
        for (int j = 0; j < nv; j++) _mm512_storeu_ps(out + r * ldo + 16 * j, acc[r][j]);
}

typedef void (*product_fn)(const float *v, int64_t ldv, const float *u, int64_t k, float *out,
                           int64_t ldo);

#define PRODUCT(R, NV)                                                                           \
    WT static void product_##R##_##NV(const float *v, int64_t ldv, const float *u, int64_t k,     \
                                      float *out, int64_t ldo) {                                  \
        product_rows(v, ldv, u, k, out, ldo, R, NV);                                              \
    }
#define PRODUCTS(R) PRODUCT(R, 1) PRODUCT(R, 2) PRODUCT(R, 3) PRODUCT(R, 4)
PRODUCTS(1)
PRODUCTS(2)
PRODUCTS(3)
PRODUCTS(4)
PRODUCTS(5)
PRODUCTS(6)
#define ROW_OF(R) {product_##R##_1, product_##R##_2, product_##R##_3, product_##R##_4}
static const product_fn products[ROWS][4] = {ROW_OF(1), ROW_OF(2), ROW_OF(3),
                                             ROW_OF(4), ROW_OF(5), ROW_OF(6)};

/* ---- one work item: tiles [t0, t0 + nt) of image `img`, output channels [o0, o1) */

typedef struct wino_job {
    const cpu_wino_plan *pl;
    const float *x, *u;
    const cpu_wino_epilogue *ep;
    float *y;
    char *scratch;
    atomic_llong next;
    int64_t items;
} wino_job;

/* v[p][t][c] = (B^T d B)[p] for the 4x4 input block d of tile t, per 16 channels, with
 * B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]; inputs outside X are zeros. */
WT static void transform_inputs(const cpu_wino_plan *pl, const float *x, int64_t t0, int64_t nt,
                                float *v) {
    const int64_t C = pl->c, ld = pl->block * C;
    const __m512 zero = _mm512_setzero_ps();
    for (int64_t t = 0; t < nt; t++) {
        int64_t ty = (t0 + t) / pl->tiles_w, tx = (t0 + t) % pl->tiles_w;
        int64_t y0 = ty * 2 - pl->pad_t, x0 = tx * 2 - pl->pad_l;
        int64_t at[4][4]; /* element offsets into X, -1 outside it */
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++)
                at[i][j] = y0 + i >= 0 && y0 + i < pl->h && x0 + j >= 0 && x0 + j < pl->w
                               ? ((y0 + i) * pl->w + x0 + j) * C
                               : -1;
        float *vt = v + t * C;
        for (int64_t c = 0; c < C; c += 16) {
            __m512 d[4][4], s[4][4];
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++)
                    d[i][j] = at[i][j] >= 0 ? _mm512_loadu_ps(x + at[i][j] + c) : zero;
            for (int j = 0; j < 4; j++) {
                s[0][j] = _mm512_sub_ps(d[0][j], d[2][j]);
                s[1][j] = _mm512_add_ps(d[1][j], d[2][j]);
                s[2][j] = _mm512_sub_ps(d[2][j], d[1][j]);
                s[3][j] = _mm512_sub_ps(d[1][j], d[3][j]);
            }
            for (int i = 0; i < 4; i++) {
                float *vp = vt + (int64_t)(i * 4) * ld + c;
                _mm512_storeu_ps(vp, _mm512_sub_ps(s[i][0], s[i][2]));
                _mm512_storeu_ps(vp + ld, _mm512_add_ps(s[i][1], s[i][2]));
                _mm512_storeu_ps(vp + 2 * ld, _mm512_sub_ps(s[i][2], s[i][1]));
                _mm512_storeu_ps(vp + 3 * ld, _mm512_sub_ps(s[i][1], s[i][3]));
            }
        }
    }
}

/* The bias and the chain's steps on 16 outputs of channels [o, o + 16) at pixel offset `at`
 * (elements into Y and the addend). */
WI __m512 epilogue(const cpu_wino_epilogue *ep, __m512 v, int64_t o, int64_t at) {
    if (ep->bias) v = _mm512_add_ps(v, _mm512_loadu_ps(ep->bias + o));
    for (int i = 0; i < ep->n_ops; i++) {
        const fuse_op *op = &ep->ops[i];
        switch (op->kind) {
        case FUSE_RELU:
            if (op->alpha == 0.f) v = _mm512_max_ps(v, _mm512_setzero_ps());
            else
                v = _mm512_mask_mul_ps(v, _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ),
                                       v, _mm512_set1_ps(op->alpha));
            break;
        case FUSE_CLIP:
            v = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(op->alpha)),
                              _mm512_set1_ps(op->beta));
            break;
        case FUSE_LINEAR: v = _mm512_mul_ps(v, _mm512_set1_ps(op->alpha)); break;
        case FUSE_SUM: v = _mm512_add_ps(v, _mm512_loadu_ps(ep->addend + at + o)); break;
        default: break;
        }
    }
    return v;
}

/* y's 2x2 block of tile t from its 16 products (prod[p][t][o - o0]), with
 * A^T = [1 1 1 0; 0 1 -1 -1], then the epilogue. */
WT static void transform_outputs(const wino_job *j, int64_t img, int64_t t0, int64_t nt,
                                 int64_t o0, int64_t o1, const float *prod) {
    const cpu_wino_plan *pl = j->pl;
    const int64_t ld = pl->block * pl->part, M = pl->m;
    float *y = j->y + img * pl->oh * pl->ow * M;
    int64_t ybase = img * pl->oh * pl->ow * M; /* the addend is stored like Y */
    for (int64_t t = 0; t < nt; t++) {
        int64_t ty = (t0 + t) / pl->tiles_w, tx = (t0 + t) % pl->tiles_w;
        int64_t oy = ty * 2, ox = tx * 2;
        bool right = ox + 1 < pl->ow, below = oy + 1 < pl->oh;
        const float *pt = prod + t * pl->part;
        for (int64_t o = o0; o < o1; o += 16) {
            __m512 m[16];
            for (int p = 0; p < 16; p++) m[p] = _mm512_loadu_ps(pt + p * ld + (o - o0));
            __m512 r0[4], r1[4];
            for (int k = 0; k < 4; k++) {
                r0[k] = _mm512_add_ps(_mm512_add_ps(m[k], m[4 + k]), m[8 + k]);
                r1[k] = _mm512_sub_ps(_mm512_sub_ps(m[4 + k], m[8 + k]), m[12 + k]);
            }
            int64_t at = (oy * pl->ow + ox) * M;
            __m512 v = _mm512_add_ps(_mm512_add_ps(r0[0], r0[1]), r0[2]);
            _mm512_storeu_ps(y + at + o, epilogue(j->ep, v, o, ybase + at));
            if (right) {
                v = _mm512_sub_ps(_mm512_sub_ps(r0[1], r0[2]), r0[3]);
                _mm512_storeu_ps(y + at + M + o, epilogue(j->ep, v, o, ybase + at + M));
            }
            if (below) {
                int64_t at2 = at + pl->ow * M;
                v = _mm512_add_ps(_mm512_add_ps(r1[0], r1[1]), r1[2]);
                _mm512_storeu_ps(y + at2 + o, epilogue(j->ep, v, o, ybase + at2));
                if (right) {
                    v = _mm512_sub_ps(_mm512_sub_ps(r1[1], r1[2]), r1[3]);
                    _mm512_storeu_ps(y + at2 + M + o, epilogue(j->ep, v, o, ybase + at2 + M));
                }
            }
        }
    }
}

static void run_item(wino_job *j, int64_t item, float *slot) {
    const cpu_wino_plan *pl = j->pl;
    int64_t b = item % pl->blocks, q = item / pl->blocks % pl->parts;
    int64_t img = item / pl->blocks / pl->parts;
    int64_t t0 = b * pl->block, nt = pl->tiles - t0 < pl->block ? pl->tiles - t0 : pl->block;
    int64_t o0 = q * pl->part, o1 = o0 + pl->part < pl->m ? o0 + pl->part : pl->m;
    float *v = slot, *prod = slot + 16 * pl->block * pl->c;
    const int64_t C = pl->c, nb = ceil_div(pl->m, OB);
    transform_inputs(pl, j->x + img * pl->h * pl->w * C, t0, nt, v);
    for (int p = 0; p < 16; p++) {
        const float *vp = v + p * pl->block * C;
        float *pp = prod + p * pl->block * pl->part;
        for (int64_t o = o0; o < o1; o += OB) {
            int nv = (int)((o1 - o < OB ? o1 - o : OB) / 16);
            const float *up = j->u + ((p * nb + o / OB) * C) * OB;
            for (int64_t r = 0; r < nt; r += ROWS) {
                int nr = (int)(nt - r < ROWS ? nt - r : ROWS);
                products[nr - 1][nv - 1](vp + r * C, C, up, C, pp + r * pl->part + (o - o0),
                                         pl->part);
            }
        }
    }
    transform_outputs(j, img, t0, nt, o0, o1, prod);
}

/* One slot's worker: items taken in turn from the shared count until none is left. */
static void run_slot(void *ctx, int64_t begin, int64_t end) {
    wino_job *j = ctx;
    (void)end;
    float *slot = (float *)(j->scratch + (size_t)begin * j->pl->slot_bytes);
    for (;;) {
        int64_t item = atomic_fetch_add(&j->next, 1);
        if (item >= j->items) break;
        run_item(j, item, slot);
    }
}

void cpu_wino_run(const cpu_wino_plan *pl, const float *x, const float *u,
                  const cpu_wino_epilogue *ep, float *y, void *scratch) {
    wino_job j = {.pl = pl, .x = x, .u = u, .ep = ep, .y = y, .scratch = scratch,
                  .items = pl->n * pl->blocks * pl->parts};
    atomic_init(&j.next, 0);
    int64_t slots = pl->slots < j.items ? pl->slots : j.items;
    parallel_for(slots, 1, run_slot, &j);
}
