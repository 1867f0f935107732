/* The 8-bit product with a constant B on oneDNN's int8 matmul primitive (i8_matmul.h), or on
 * CPUs without VNNI the AVX2 kernels (i8_gemm_avx2.c: P = A B as stored, then the same pass).
 *
 * The primitive computes P = U B8 with U uint8 [m, k] and B8 int8 [k, n], dst int32, and nothing
 * else: with a source zero point, or an int8 source (whose compensation oneDNN applies), oneDNN
 * 3.2's brgemm matmul finishes the sums in float, which is inexact past 2^24 (measured here:
 * off by a few units at K = 3071 with large values). Without either it stays in int32 and
 * wraps, as the reference does. So U is A (uint8) or A + 128 (int8 A, moved in scratch), B8 is B
 * or B - 128 (uint8 B, moved once at prepare), and our pass over the result adds the rest, per
 * element in 32-bit wrapping arithmetic:
 *   (A - za)(B - zb) = (U - zu)(B8 - zb8) = P - zu colsum(B8)[j] - zb8[j] rowsum(U - zu)[i]
 * with zu = za (+ 128) and zb8 = zb (- 128); on the AVX2 path U = A and B8 = B, unmoved (its
 * u8 x s8 sums saturate as onnxruntime's do on raw A and B). The same pass scales the sums to float for the
 * ops that want that. Against dnnl_gemm_u8s8s32, which packs B on every call (2 threads, this
 * Xeon with AVX-512 VNNI, BERT-base's K x N; ranges over runs on a shared machine): M 12:
 * 768x768 0.03-0.04 ms vs 0.08-0.21, 768x3072 0.14-0.18 vs 0.29-0.40; M 128: 768x768 0.32-0.35
 * vs 0.40-0.58, 3072x768 0.68-1.75 vs 0.82-2.26. */
#include "kernels_cpu/common/i8_matmul.h"

#include <stdlib.h>
#include <string.h>

#include "core/exec_run.h"
#include "core/parallel.h"
#include "kernels_cpu/common/blas.h"
#include "kernels_cpu/common/cpu_types.h"
#include "kernels_cpu/common/dnnl_util.h"
#include "kernels_cpu/common/i8_gemm_avx2.h"
#include "kernels_cpu/common/requant.h"

static size_t align64(size_t b) { return (b + 63) / 64 * 64; }

/* ---- B packed once: everything the packed bytes depend on is in the key */

typedef struct pack_key {
    char tag[8];                 /* the rep's cache is shared with other kernels */
    const void *data;            /* the constant's buffer (stable while the rep lives) */
    int32_t dtype;
    cpu_dnnl_layout user, wei;   /* B as stored and the primitive's layout */
} pack_key;

typedef struct pack_ctx {
    const tensor *b;
    const_dnnl_memory_desc_t user, wei;
    int64_t k, n;
    bool transposed; /* B stored [n, k] */
} pack_ctx;

/* The object: B8 in the primitive's layout, then colsum(B8) at align64(layout size). */
static onyx_status pack_make(void *ctx, void **obj) {
    const pack_ctx *x = ctx;
    onyx_status st = ONYX_OK;
    int8_t *tmp = NULL;
    size_t bytes = align64(dnnl_memory_desc_get_size(x->wei));
    char *buf = cpu_dnnl_alloc(bytes + (size_t)x->n * sizeof(int32_t));
    if (!buf) return onyx_oom("packed matrix B");
    const int8_t *b8 = x->b->data;
    if (x->b->dtype == ONYX_UINT8) {
        if (!(tmp = malloc((size_t)(x->k * x->n)))) {
            st = onyx_oom("packed matrix B");
            goto done;
        }
        const uint8_t *src = x->b->data;
        for (int64_t i = 0; i < x->k * x->n; i++) tmp[i] = (int8_t)(src[i] ^ 0x80);
        b8 = tmp;
    }
    uint32_t *colsum = (uint32_t *)(buf + bytes); /* wrapping, as every sum here */
    for (int64_t j = 0; j < x->n; j++) colsum[j] = 0;
    for (int64_t p = 0; p < x->k; p++)
        for (int64_t j = 0; j < x->n; j++)
            colsum[j] += (uint32_t)(int32_t)b8[x->transposed ? j * x->k + p : p * x->n + j];
    CHECK(cpu_dnnl_reorder_once(x->user, b8, x->wei, buf));
    *obj = buf;
    buf = NULL;
done:
    free(tmp);
    free(buf);
    return st;
}

static void pack_release(void *obj) { free(obj); }

/* ---- B packed once for the AVX2 kernels: the packed panels, then colsum(B) at align64 */

typedef struct avx2_key {
    char tag[8];
    const void *data;
    int32_t dtype;
    bool a_signed, transposed; /* the packing depends on A's type (saturating or not) */
    int64_t k, n;
} avx2_key;

typedef struct avx2_ctx {
    const tensor *b;
    int64_t k, n;
    bool a_signed, transposed;
} avx2_ctx;

static onyx_status avx2_make(void *ctx, void **obj) {
    const avx2_ctx *x = ctx;
    const bool b_signed = x->b->dtype == ONYX_INT8;
    size_t bytes = align64(i8avx2_pack_bytes(x->k, x->n, x->a_signed, b_signed));
    char *buf = cpu_dnnl_alloc(bytes + (size_t)x->n * sizeof(int32_t));
    if (!buf) return onyx_oom("packed matrix B");
    i8avx2_pack(x->b->data, b_signed, x->transposed, x->k, x->n, x->a_signed, buf,
                (uint32_t *)(buf + bytes));
    *obj = buf;
    return ONYX_OK;
}

static onyx_status build_avx2(const kernel_prep *kp, const tensor *b, bool transposed,
                              cpu_i8mm *p) {
    avx2_key key;
    memset(&key, 0, sizeof key); /* padding bytes are part of the key */
    memcpy(key.tag, "i8avx2", 7);
    key.data = b->data;
    key.dtype = (int32_t)b->dtype;
    key.a_signed = p->a_signed;
    key.transposed = transposed;
    key.k = p->k;
    key.n = p->n;
    avx2_ctx ctx = {b, p->k, p->n, p->a_signed, transposed};
    void *obj = NULL;
    TRY(kernel_shared(kp, &key, sizeof key, avx2_make, pack_release, &ctx, &obj));
    p->avx2 = true;
    p->packed = obj;
    p->colsum = (const int32_t *)((const char *)obj +
                                  align64(i8avx2_pack_bytes(p->k, p->n, p->a_signed, p->b_signed)));
    return ONYX_OK;
}

/* ---- prepare */

void cpu_i8mm_release(cpu_i8mm *p) {
    if (!p) return;
    if (p->prim) dnnl_primitive_destroy(p->prim);
    dnnl_memory_desc_t all[] = {p->md_src, p->md_wei, p->md_dst, p->md_pad};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i]) dnnl_memory_desc_destroy(all[i]);
    free(p); /* packed and colsum belong to the rep's shared cache */
}

/* A [rows, cols] matrix: dense row-major (dnnl_ab), stored transposed (dnnl_ba), or any layout. */
static onyx_status md_2d(dnnl_memory_desc_t *md, int64_t rows, int64_t cols, dnnl_data_type_t dt,
                         dnnl_format_tag_t tag) {
    dnnl_dims_t d = {rows, cols};
    return cpu_dnnl_check(dnnl_memory_desc_create_with_tag(md, 2, d, dt, tag), "describing a matrix");
}

/* ONYX_ERR_UNSUPPORTED (message set) for what oneDNN does not take: the caller clears it. */
static onyx_status build(const kernel_prep *kp, int64_t m, const tensor *b, bool transposed,
                         cpu_i8mm *p) {
    onyx_status st = ONYX_OK;
    dnnl_engine_t eng;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_memory_desc_t b_user = NULL, b_any = NULL;
    const int64_t k = p->k, n = p->n;
    CHECK(cpu_dnnl_engine(&eng));
    CHECK(md_2d(&p->md_src, m, k, dnnl_u8, dnnl_ab));
    CHECK(md_2d(&b_user, k, n, dnnl_s8, transposed ? dnnl_ba : dnnl_ab));
    CHECK(md_2d(&b_any, k, n, dnnl_s8, dnnl_format_tag_any));
    CHECK(md_2d(&p->md_dst, m, n, dnnl_s32, dnnl_ab));
    CHECK(cpu_dnnl_attr(&attr));
    CHECK(cpu_dnnl_check(dnnl_guard_matmul_pd(&pd, eng, p->md_src, b_any, NULL, p->md_dst, attr),
                         "creating the int8 product"));
    const char *impl = NULL;
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    if (impl && !strncmp(impl, "ref", 3)) { /* slower than the plain loop's fallback */
        st = onyx_error(ONYX_ERR_UNSUPPORTED, "no optimized int8 matmul for this product");
        goto done;
    }
    const_dnnl_memory_desc_t wei = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    if (!wei) {
        st = onyx_error(ONYX_ERR_RUNTIME, "oneDNN: the int8 product has no weights descriptor");
        goto done;
    }
    CHECK(cpu_dnnl_check(dnnl_memory_desc_clone(&p->md_wei, wei), "copying matrix B's layout"));
    p->pad_size = cpu_dnnl_scratchpad(pd, &p->md_pad);
    if (p->pad_size == SIZE_MAX) {
        p->pad_size = 0;
        st = onyx_oom("int8 matmul scratchpad descriptor");
        goto done;
    }
    CHECK(cpu_dnnl_check(dnnl_guard_primitive_create(&p->prim, pd), "creating the int8 product"));
    pack_key key;
    memset(&key, 0, sizeof key); /* padding bytes are part of the key */
    memcpy(key.tag, "i8mmB", 6);
    key.data = b->data;
    key.dtype = (int32_t)b->dtype;
    if (!cpu_dnnl_layout_of(b_user, &key.user) || !cpu_dnnl_layout_of(p->md_wei, &key.wei)) {
        st = onyx_error(ONYX_ERR_UNSUPPORTED, "oneDNN: matrix B's layout is not a blocked one");
        goto done;
    }
    pack_ctx ctx = {b, b_user, p->md_wei, k, n, transposed};
    void *obj = NULL;
    CHECK(kernel_shared(kp, &key, sizeof key, pack_make, pack_release, &ctx, &obj));
    p->packed = obj;
    p->colsum =
        (const int32_t *)((const char *)obj + align64(dnnl_memory_desc_get_size(p->md_wei)));
done:
    if (attr) dnnl_primitive_attr_destroy(attr);
    if (pd) dnnl_primitive_desc_destroy(pd);
    if (b_user) dnnl_memory_desc_destroy(b_user);
    if (b_any) dnnl_memory_desc_destroy(b_any);
    return st;
}

onyx_status cpu_i8mm_prepare(const kernel_prep *kp, int64_t m, bool a_signed, const tensor *b,
                             bool b_transposed, cpu_i8mm **out) {
    *out = NULL;
    if (!b || b->rank != 2 || (b->dtype != ONYX_INT8 && b->dtype != ONYX_UINT8) || !b->data)
        return ONYX_OK;
    const int64_t k = b->dims[b_transposed ? 1 : 0], n = b->dims[b_transposed ? 0 : 1];
    /* oneDNN takes dims below 2^31 (dnnl_util.c); the products stay within int64 */
    const cpu_i8_path path = cpu_i8_choose();
    if (m <= 0 || k <= 0 || n <= 0 || m > INT32_MAX || k > INT32_MAX || n > INT32_MAX ||
        path == CPU_I8_REF)
        return ONYX_OK;
    cpu_i8mm *p = calloc(1, sizeof *p);
    if (!p) return onyx_oom("int8 matmul state");
    p->m = m;
    p->k = k;
    p->n = n;
    p->a_signed = a_signed;
    p->b_signed = b->dtype == ONYX_INT8;
    onyx_status st;
    size_t t = 0;
    if (path == CPU_I8_AVX2) { /* A and B as they are */
        st = build_avx2(kp, b, b_transposed, p);
        if (st == ONYX_OK) {
            size_t zb = (size_t)n * sizeof(int32_t),
                   sa = i8avx2_scratch_bytes(m, k, a_signed, p->b_signed);
            p->off_zb = t;
            t += align64(zb);
            p->off_u = t; /* A staged for the kernels */
            t += align64(sa);
            p->scratch_bytes = t + 64;
        }
    } else if ((st = build(kp, m, b, b_transposed, p)) == ONYX_OK) {
        p->a_shift = a_signed ? 128 : 0;
        p->b_shift = p->b_signed ? 0 : 128;
        size_t u = a_signed ? (size_t)(m * k) : 0, zb = (size_t)n * sizeof(int32_t);
        if (u > SIZE_MAX / 4 || p->pad_size > SIZE_MAX / 4) {
            st = onyx_oom("int8 matmul scratch");
        } else {
            p->off_u = t;
            t += align64(u);
            p->off_zb = t;
            t += align64(zb);
            p->off_pad = t;
            t += align64(p->pad_size);
            p->scratch_bytes = t + 64;
        }
    }
    if (st != ONYX_OK) {
        cpu_i8mm_release(p);
        if (st == ONYX_ERR_NO_MEMORY) return st;
        onyx_error_clear(); /* what oneDNN refuses goes to the caller's own loop */
        return ONYX_OK;
    }
    *out = p;
    return ONYX_OK;
}

void cpu_i8mm_unfork(cpu_i8mm_mem *f) {
    if (!f) return;
    dnnl_memory_t all[] = {f->src, f->wei, f->dst, f->pad};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i]) dnnl_memory_destroy(all[i]);
    free(f);
}

onyx_status cpu_i8mm_fork(const cpu_i8mm *p, cpu_i8mm_mem **out) {
    cpu_i8mm_mem *f = calloc(1, sizeof *f);
    if (!f) return onyx_oom("int8 matmul working state");
    onyx_status st = ONYX_OK;
    f->p = p;
    if (p->avx2) { /* no primitive: nothing of its own */
        *out = f;
        return ONYX_OK;
    }
    CHECK(cpu_dnnl_memory(&f->src, p->md_src));
    CHECK(cpu_dnnl_memory(&f->wei, p->md_wei));
    CHECK(cpu_dnnl_memory(&f->dst, p->md_dst));
    if (p->pad_size) CHECK(cpu_dnnl_memory(&f->pad, p->md_pad));
    *out = f;
    f = NULL;
done:
    cpu_i8mm_unfork(f);
    return st;
}

/* ---- run */

typedef struct fix_job {
    const cpu_i8mm *p;
    const cpu_i8mm_call *x;
    const int32_t *zb8;          /* [n], or NULL when B's zero point (moved) is 0 everywhere */
} fix_job;

/* sum_p a[p] in A's type, wrapping */
static uint32_t row_sum(const void *a, int64_t k, bool s8) {
    uint32_t s = 0;
    if (s8) {
        const int8_t *v = a;
        CPU_SIMD_SUM(s) for (int64_t p = 0; p < k; p++) s += (uint32_t)(int32_t)v[p];
    } else {
        const uint8_t *v = a;
        CPU_SIMD_SUM(s) for (int64_t p = 0; p < k; p++) s += (uint32_t)v[p];
    }
    return s;
}

/* Row sums s, the row starting at element `at` of the 8-bit result. The pointers are local and
 * restrict: through x, a byte store could change x->mult, and GCC left the per-column loop
 * scalar (a fifth of ConvNeXt's per-channel run). */
CPU_CLONES static void requant_row(const cpu_i8mm_call *x, const int32_t *restrict s, int64_t at,
                                   int64_t n) {
    const int32_t zp = x->qz, lo = x->q_signed ? -128 : 0, hi = x->q_signed ? 127 : 255;
    const float *restrict mult = x->mult;
    const float mu = mult[0];
    if (x->q_signed) {
        int8_t *restrict q = (int8_t *)x->q + at;
        if (x->mult_cols) {
            CPU_SIMD for (int64_t c = 0; c < n; c++)
                q[c] = (int8_t)q8_saturate((float)s[c] * mult[c], zp, lo, hi);
        } else {
            CPU_SIMD for (int64_t c = 0; c < n; c++)
                q[c] = (int8_t)q8_saturate((float)s[c] * mu, zp, lo, hi);
        }
    } else {
        uint8_t *restrict q = (uint8_t *)x->q + at;
        if (x->mult_cols) {
            CPU_SIMD for (int64_t c = 0; c < n; c++)
                q[c] = (uint8_t)q8_saturate((float)s[c] * mult[c], zp, lo, hi);
        } else {
            CPU_SIMD for (int64_t c = 0; c < n; c++)
                q[c] = (uint8_t)q8_saturate((float)s[c] * mu, zp, lo, hi);
        }
    }
}

/* Rows [b, e) of the result: the zero-point terms, then float scaling or requantization where
 * asked. */
CPU_CLONES static void fix_rows(void *ctx, int64_t b, int64_t e) {
    const fix_job *j = ctx;
    const cpu_i8mm *p = j->p;
    const cpu_i8mm_call *x = j->x;
    const int64_t n = p->n, k = p->k;
    const uint32_t *cs = (const uint32_t *)p->colsum, *zb8 = (const uint32_t *)j->zb8;
    for (int64_t i = b; i < e; i++) {
        uint32_t za = (uint32_t)x->za[x->za_rows ? i : 0];
        uint32_t zu = za + (uint32_t)p->a_shift;
        /* rowsum(A - za) = rowsum(U - zu) */
        uint32_t rs = zb8 ? row_sum((const char *)x->a + i * k, k, p->a_signed) - za * (uint32_t)k
                          : 0;
        uint32_t *acc = (uint32_t *)x->y + i * n;
        if (zb8) {
            CPU_SIMD for (int64_t c = 0; c < n; c++) acc[c] = acc[c] - zu * cs[c] - rs * zb8[c];
        } else {
            CPU_SIMD for (int64_t c = 0; c < n; c++) acc[c] = acc[c] - zu * cs[c];
        }
        if (x->c_add) {
            const uint32_t *cr = (const uint32_t *)x->c_add + i * x->c_rs;
            const int64_t ccs = x->c_cs;
            if (ccs == 1) {
                CPU_SIMD for (int64_t c = 0; c < n; c++) acc[c] += cr[c];
            } else {
                const uint32_t c0 = cr[0];
                CPU_SIMD for (int64_t c = 0; c < n; c++) acc[c] += c0;
            }
        }
        if (!x->mult) continue;
        if (x->q) {
            requant_row(x, (const int32_t *)acc, i * n, n);
            continue;
        }
        /* in place: each int32 is read before its float is written */
        float *y = (float *)x->y + i * n;
        const int32_t *s = (const int32_t *)acc;
        if (x->mult_cols && x->bias) {
            CPU_SIMD for (int64_t c = 0; c < n; c++) {
                float v = (float)s[c] * x->mult[c];
                y[c] = v + x->bias[c];
            }
        } else if (x->mult_cols) {
            CPU_SIMD for (int64_t c = 0; c < n; c++) y[c] = (float)s[c] * x->mult[c];
        } else if (x->bias) {
            const float mu = x->mult[0];
            CPU_SIMD for (int64_t c = 0; c < n; c++) {
                float v = (float)s[c] * mu;
                y[c] = v + x->bias[c];
            }
        } else {
            const float mu = x->mult[0];
            CPU_SIMD for (int64_t c = 0; c < n; c++) y[c] = (float)s[c] * mu;
        }
    }
}

static onyx_status bind(dnnl_memory_t mem, const void *ptr) {
    return cpu_dnnl_check(dnnl_memory_set_data_handle(mem, (void *)ptr), "binding a matrix");
}

/* P = U B8 on the primitive into x->y. */
static onyx_status run_onednn(const cpu_i8mm_mem *f, const cpu_i8mm_call *x, char *sb) {
    const cpu_i8mm *p = f->p;
    const void *u = x->a;
    if (p->a_signed) { /* int8 A as uint8 A + 128: the only source oneDNN keeps exact */
        uint8_t *dst = (uint8_t *)(sb + p->off_u);
        const uint8_t *src = x->a;
        const int64_t cnt = p->m * p->k;
        CPU_SIMD for (int64_t i = 0; i < cnt; i++) dst[i] = src[i] ^ 0x80;
        u = dst;
    }
    TRY(bind(f->src, u));
    TRY(bind(f->wei, p->packed));
    TRY(bind(f->dst, x->y));
    dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, f->src}, {DNNL_ARG_WEIGHTS, f->wei},
                               {DNNL_ARG_DST, f->dst}};
    int nargs = 3;
    if (p->pad_size) {
        TRY(bind(f->pad, sb + p->off_pad));
        args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, f->pad};
    }
    return cpu_dnnl_execute(p->prim, nargs, args);
}

onyx_status cpu_i8mm_run(const cpu_i8mm_mem *f, const cpu_i8mm_call *x) {
    const cpu_i8mm *p = f->p;
    char *sb = (char *)(((uintptr_t)x->scratch + 63) & ~(uintptr_t)63);
    /* B's zero point as moved with B; NULL where it is 0 for every column */
    int32_t *zb8 = (int32_t *)(sb + p->off_zb);
    bool any = false;
    for (int64_t j = 0; j < p->n; j++) {
        int32_t z = x->zb ? x->zb[x->zb_cols ? j : 0] : 0;
        zb8[j] = z - p->b_shift;
        any |= zb8[j] != 0;
    }
    if (p->avx2)
        i8avx2_gemm(p->packed, x->a, p->a_signed, p->b_signed, p->m, p->k, p->n, x->y, p->n,
                    sb + p->off_u);
    else
        TRY(run_onednn(f, x, sb));
    fix_job j = {p, x, any ? zb8 : NULL};
    parallel_for(p->m, 32768 / (p->n + (any ? p->k : 0) + 1) + 1, fix_rows, &j);
    return ONYX_OK;
}

/* ---- a forked kernel's state: A's rows times a constant B */

typedef struct rows_state {
    cpu_i8mm *mm;                    /* NULL: no fast path, the kernel's own loops */
    onyx_dtype a_dtype;
    int a_rank;
    int64_t a_dims[ONYX_MAX_RANK];
    const void *b_data;              /* the constant it packed */
} rows_state;

typedef struct rows_fork {
    const rows_state *s;
    cpu_i8mm_mem *f;
} rows_fork;

static bool q8(onyx_dtype d) { return d == ONYX_INT8 || d == ONYX_UINT8; }

onyx_status cpu_i8mm_rows_prepare(const kernel_prep *p, int a_in, int b_in, bool a_float,
                                  void **state) {
    rows_state *s = calloc(1, sizeof *s);
    if (!s) return onyx_oom("int8 matmul state");
    const type_info *A = p->n_in > a_in ? p->in_type[a_in] : NULL;
    const tensor *B = p->n_in > b_in ? p->in_value[b_in] : NULL;
    if (A && A->kind == ONYX_VALUE_TENSOR && type_is_static(A) && A->rank >= 1 &&
        (a_float ? A->dtype == ONYX_FLOAT : q8(A->dtype)) && B && B->rank == 2 &&
        q8(B->dtype) && A->dims[A->rank - 1] == B->dims[0]) {
        int64_t m = 1;
        for (int i = 0; i < A->rank - 1; i++) m *= A->dims[i];
        onyx_status st = cpu_i8mm_prepare(p, m, A->dtype == ONYX_INT8, B, false, &s->mm);
        if (st != ONYX_OK) {
            free(s);
            return st;
        }
        s->a_dtype = A->dtype;
        s->a_rank = A->rank;
        memcpy(s->a_dims, A->dims, sizeof(int64_t) * (size_t)A->rank);
        s->b_data = B->data;
    }
    *state = s;
    return ONYX_OK;
}

void cpu_i8mm_rows_release(void *state) {
    rows_state *s = state;
    if (!s) return;
    cpu_i8mm_release(s->mm);
    free(s);
}

onyx_status cpu_i8mm_rows_fork(const void *state, void **out) {
    const rows_state *s = state;
    rows_fork *f = calloc(1, sizeof *f);
    if (!f) return onyx_oom("int8 matmul working state");
    f->s = s;
    if (s && s->mm) {
        onyx_status st = cpu_i8mm_fork(s->mm, &f->f);
        if (st != ONYX_OK) {
            free(f);
            return st;
        }
    }
    *out = f;
    return ONYX_OK;
}

void cpu_i8mm_rows_unfork(void *fork) {
    rows_fork *f = fork;
    if (!f) return;
    cpu_i8mm_unfork(f->f);
    free(f);
}

const cpu_i8mm_mem *cpu_i8mm_rows_for(const kernel_call *c, const tensor *a, const tensor *b) {
    const rows_fork *f = c->state;
    const rows_state *s = f ? f->s : NULL;
    if (!s || !f->f || a->dtype != s->a_dtype || a->rank != s->a_rank ||
        memcmp(a->dims, s->a_dims, sizeof(int64_t) * (size_t)a->rank) || b->data != s->b_data)
        return NULL;
    return f->f;
}
