/* CPU kernels of Conv and ConvTranspose. float runs on oneDNN primitives built once per input
 * shape (in prepare when shapes are static), with constant weights reordered once into the
 * primitive's layout and the fusion pass's post-ops (core/fuse.h) applied. Convs compute in the
 * channels-last layout (n..c: oneDNN 3's brgemm kernels take only that one) whenever oneDNN has a
 * kernel for them there; tensors the fusion pass marks opaque (passed only between these
 * kernels) are stored that way, so chains of convs reorder only at their edges. Per-channel steps
 * and a Relu before a conv (pre-ops) are applied on the way into its channels-last input.
 * float16/bfloat16 run the same primitives on float copies; double runs im2col/col2im around
 * BLAS. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/exec_run.h"
#include "core/fuse_chain.h"
#include "core/parallel.h"
#include "kernels_cpu/common/blas.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/cpu_types.h"
#include "kernels_cpu/common/half.h"
#include "kernels_cpu/common/dnnl_util.h"
#include "kernels_cpu/common/post_vmath.h"
#include "kernels_cpu/conv/winograd.h"

/* Input shapes whose primitives are kept (a rep run with a few shapes in turn). */
#define CONV_CACHE 4

/* Scratchpads of a primitive set: the convolution and its reorders. */
enum { PAD_PRIM, PAD_WREORDER, PAD_SRC, PAD_DST, PAD_ADD, PAD_COUNT };

/* One primitive for one input shape: what is built once and then only read (primitives, weights
 * and bias prepared from constants, descriptors), shared by concurrent runs. A run binds buffers
 * through memory objects of its own (conv_mems, in its fork) and takes its working buffers from
 * its scratch at the offsets below. */
typedef struct conv_prim {
    bool used;
    int rank;
    int64_t xdims[ONYX_MAX_RANK], wdims[ONYX_MAX_RANK];
    geom_window g;
    int64_t xn, wn, yn;              /* element counts of X, W, Y */
    dnnl_primitive_t prim, wreorder; /* wreorder: ONNX weights -> primitive layout, or NULL */
    /* constant weights in the primitive's layout (the rep's, shared by every plan: kernel_shared),
     * or NULL */
    const void *wbuf;
    bool wready;                     /* wbuf holds the constant weights */
    bool wbuf_own;                   /* wbuf is this prim's (no rep cache around the prepare) */
    float *bbuf;                     /* constant bias as float (folded, converted), or NULL */
    bool bready;                     /* bbuf holds the constant bias */
    bool has_bias;                   /* the primitive takes a bias */
    bool bias_own;                   /* a bias of our own (folded or converted): bbuf or scratch */
    bool wei_own;                    /* non-constant weights reordered per run into scratch */
    /* ConvTranspose whose output starts before its natural first pixel (negative begin pads,
     * which oneDNN refuses): the primitive writes a staging buffer with begin pads 0 and run()
     * places it `shift` pixels in, bias around it */
    bool staged;
    int64_t stage_dims[ONYX_MAX_RANK], shift[GEOM_WINDOW_MAX_SPATIAL];
    /* layout changes between the tensors as stored and as the primitive computes them */
    dnnl_primitive_t reo_src, reo_dst, reo_add;
    /* pre-ops: applied on the way into the src copy when that is X channels last (pre_direct),
     * else into a pre-op copy ahead of the usual path; pixel by pixel where X is stored
     * channels last (pre_rows: an opaque X), plane by plane where it is plain */
    bool pre_direct, pre_copy, pre_rows, src_copy, dst_copy;
    /* the chain's op vmath applies to the primitive's output (post_vmath.h), or -1 */
    int tail;
    /* Winograd instead of a primitive (winograd.h): its plan, the chain's ops [wino_op0, tail or
     * n) in its epilogue, its scratch at off_wino; wbuf holds the transformed weights */
    bool wino;
    cpu_wino_plan wplan;
    int wino_op0;
    /* descriptors of the memories a run binds (owned: destroyed by prim_release; NULL where the
     * prim has none) */
    dnnl_memory_desc_t md_src, md_wei, md_bias, md_dst, md_wuser, md_src_user, md_dst_user,
        md_add_user, md_pad[PAD_COUNT];
    size_t pad_size[PAD_COUNT];
    /* byte offsets of a run's buffers in its scratch (64-byte aligned), and the total */
    size_t off_src, off_dst, off_pre, off_pad, off_hx, off_hw, off_hy, off_stage, off_bias,
        off_wei, off_wino, scratch_bytes;
} conv_prim;

/* The memory objects one run context binds to a prim's buffers (NULL where the prim has none). */
typedef struct conv_mems {
    dnnl_memory_t src, wei, bias, dst, wuser, src_user, dst_user, add_user, pad[PAD_COUNT];
} conv_mems;

typedef struct conv_state {
    bool transpose;
    onyx_dtype dtype;
    bool has_bias;
    fuse_chain chain;
    int sum_input;                   /* fused node input added by a sum post-op, or -1 */
    float *bn_mul, *bn_add;          /* folded BatchNormalization per output channel, or NULL */
    /* pre-ops (fuse_chain.pre): x -> x * pre_mul[c] + pre_add[c], then (pre_act) a leaky Relu
     * with slope pre_alpha, per input channel */
    float *pre_mul, *pre_add;
    int64_t pre_c;
    bool pre_act;
    float pre_alpha;
    bool bf16;                       /* the session lets float convs compute in bfloat16 */
    conv_prim prepared;              /* built in prepare when shapes are static (used: valid) */
} conv_state;

/* A run context's part: memories for the prepared prim, and prims of its own for shapes that
 * prepare did not know (a few kept, as a rep may run a few shapes in turn). */
typedef struct conv_fork {
    const conv_state *s;
    conv_mems prepared;
    conv_prim cache[CONV_CACHE];
    conv_mems cache_mems[CONV_CACHE];
    int next;
} conv_fork;

static bool is_half(onyx_dtype d) { return d == ONYX_FLOAT16 || d == ONYX_BFLOAT16; }

static void to_float(onyx_dtype d, const void *x, float *y, int64_t n) {
    if (is_half(d))
        cpu_half_to_float_n(d, x, y, n);
    else
        memcpy(y, x, (size_t)n * sizeof *y);
}

static void from_float(onyx_dtype d, const float *x, void *y, int64_t n) {
    cpu_float_to_half_n(d, x, y, n);
}

static void prim_release(conv_prim *p) {
    dnnl_primitive_t prims[] = {p->prim, p->wreorder, p->reo_src, p->reo_dst, p->reo_add};
    for (size_t i = 0; i < sizeof prims / sizeof prims[0]; i++)
        if (prims[i]) dnnl_primitive_destroy(prims[i]);
    dnnl_memory_desc_t mds[] = {p->md_src, p->md_wei, p->md_bias, p->md_dst, p->md_wuser,
                                p->md_src_user, p->md_dst_user, p->md_add_user};
    for (size_t i = 0; i < sizeof mds / sizeof mds[0]; i++)
        if (mds[i]) dnnl_memory_desc_destroy(mds[i]);
    for (int i = 0; i < PAD_COUNT; i++)
        if (p->md_pad[i]) dnnl_memory_desc_destroy(p->md_pad[i]);
    if (p->wbuf_own) free((void *)p->wbuf); /* else it belongs to the rep's shared cache */
    free(p->bbuf);
    memset(p, 0, sizeof *p);
}

static void mems_release(conv_mems *m) {
    dnnl_memory_t all[] = {m->src, m->wei, m->bias, m->dst, m->wuser, m->src_user, m->dst_user,
                           m->add_user};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i]) dnnl_memory_destroy(all[i]);
    for (int i = 0; i < PAD_COUNT; i++)
        if (m->pad[i]) dnnl_memory_destroy(m->pad[i]);
    memset(m, 0, sizeof *m);
}

/* The memory objects prim p binds (p built, with a primitive). */
static onyx_status mems_create(const conv_prim *p, conv_mems *m) {
    onyx_status st = ONYX_OK;
    memset(m, 0, sizeof *m);
    CHECK(cpu_dnnl_memory(&m->src, p->md_src));
    CHECK(cpu_dnnl_memory(&m->dst, p->md_dst));
    CHECK(cpu_dnnl_memory(&m->wei, p->md_wei));
    if (p->has_bias) CHECK(cpu_dnnl_memory(&m->bias, p->md_bias));
    if (p->wreorder) CHECK(cpu_dnnl_memory(&m->wuser, p->md_wuser));
    if (p->reo_src) CHECK(cpu_dnnl_memory(&m->src_user, p->md_src_user));
    if (p->reo_dst) CHECK(cpu_dnnl_memory(&m->dst_user, p->md_dst_user));
    if (p->reo_add) CHECK(cpu_dnnl_memory(&m->add_user, p->md_add_user));
    for (int i = 0; i < PAD_COUNT; i++)
        if (p->pad_size[i]) CHECK(cpu_dnnl_memory(&m->pad[i], p->md_pad[i]));
done:
    if (st != ONYX_OK) mems_release(m);
    return st;
}

/* Runs `prim` on `n` args plus its scratchpad (when it has one) at `pad`. */
static onyx_status execute(dnnl_primitive_t prim, dnnl_exec_arg_t *args, int n, dnnl_memory_t pm,
                           void *pad) {
    if (pm) {
        TRY(cpu_dnnl_check(dnnl_memory_set_data_handle(pm, pad), "binding the scratchpad"));
        args[n++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, pm};
    }
    return cpu_dnnl_execute(prim, n, args);
}

void cpu_conv_release(void *state) {
    conv_state *s = state;
    if (!s) return;
    prim_release(&s->prepared);
    free(s->bn_mul);
    free(s->bn_add);
    free(s->pre_mul);
    free(s->pre_add);
    free(s);
}

void cpu_conv_unfork(void *fork) {
    conv_fork *f = fork;
    if (!f) return;
    mems_release(&f->prepared);
    for (int i = 0; i < CONV_CACHE; i++) {
        mems_release(&f->cache_mems[i]);
        prim_release(&f->cache[i]);
    }
    free(f);
}

onyx_status cpu_conv_fork(const void *state, void **out) {
    const conv_state *s = state;
    conv_fork *f = calloc(1, sizeof *f);
    if (!f) return onyx_oom("convolution working state");
    f->s = s;
    if (s->prepared.prim) {
        onyx_status st = mems_create(&s->prepared, &f->prepared);
        if (st != ONYX_OK) {
            free(f);
            return st;
        }
    }
    *out = f;
    return ONYX_OK;
}

/* ------------------------------------------------------------------ building a primitive */

/* Descriptors of the weights: the logical [G,] O, I, k... dims oneDNN wants, with the strides
 * ONNX stores them in (Conv: [M, C/G, k...]; ConvTranspose: [C, M/G, k...]) as float, and in
 * format "any" of type any_dt for the primitive. Caller destroys both (neither made on failure). */
static onyx_status weights_md(const conv_state *s, const geom_window *g, dnnl_data_type_t any_dt,
                              dnnl_memory_desc_t *user, dnnl_memory_desc_t *any) {
    dnnl_dims_t dims, strides;
    int nd = 0;
    int64_t kp = 1;
    for (int i = 0; i < g->nsp; i++) kp *= g->k[i];
    int64_t og = g->m / g->group, ig = g->c / g->group;
    bool grouped = g->group > 1;
    if (grouped) dims[nd++] = g->group;
    dims[nd++] = og;
    dims[nd++] = ig;
    for (int i = 0; i < g->nsp; i++) dims[nd++] = g->k[i];
    int64_t st = 1;
    for (int i = g->nsp - 1; i >= 0; i--) {
        strides[nd - g->nsp + i] = st;
        st *= g->k[i];
    }
    int o = grouped ? 1 : 0, in = o + 1;
    if (!s->transpose) {
        strides[in] = kp;
        strides[o] = ig * kp;
    } else {
        strides[o] = kp;
        strides[in] = og * kp;
    }
    if (grouped) strides[0] = og * ig * kp;
    TRY(cpu_dnnl_check(dnnl_memory_desc_create_with_strides(user, nd, dims, dnnl_f32, strides),
                       "describing the weights"));
    onyx_status r = cpu_dnnl_check(dnnl_memory_desc_create_with_tag(any, nd, dims, any_dt,
                                                                     dnnl_format_tag_any),
                                   "describing the weights");
    if (r != ONYX_OK) {
        dnnl_memory_desc_destroy(*user);
        *user = NULL;
    }
    return r;
}

/* W as float in ONNX layout with BatchNormalization folded in (caller frees). */
static onyx_status folded_weights(const conv_state *s, const conv_prim *p, const tensor *w,
                                  float **out) {
    float *f = malloc((size_t)(p->wn > 0 ? p->wn : 1) * sizeof *f);
    if (!f) return onyx_oom("convolution weights");
    to_float(s->dtype, w->data, f, p->wn);
    if (s->bn_mul) {
        int64_t per = p->wn / p->g.m;
        for (int64_t m = 0; m < p->g.m; m++)
            for (int64_t i = 0; i < per; i++) f[m * per + i] *= s->bn_mul[m];
    }
    *out = f;
    return ONYX_OK;
}

/* Puts float weights `f` (ONNX layout) into `to` in the primitive's layout (the reorder's
 * scratchpad at pad). */
static onyx_status place_weights(const conv_prim *p, const conv_mems *m, const float *f, void *to,
                                 void *pad) {
    if (!p->wreorder) {
        memcpy(to, f, (size_t)p->wn * sizeof *f);
        return ONYX_OK;
    }
    TRY(cpu_dnnl_check(dnnl_memory_set_data_handle(m->wuser, (void *)f), "binding weights"));
    TRY(cpu_dnnl_check(dnnl_memory_set_data_handle(m->wei, to), "binding weights"));
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_FROM, m->wuser}, {DNNL_ARG_TO, m->wei}};
    return execute(p->wreorder, args, 2, m->pad[PAD_WREORDER], pad);
}

/* The bias as float with BatchNormalization folded in, into out[m]. */
static void fold_bias(const conv_state *s, const conv_prim *p, const tensor *b, float *out) {
    for (int64_t m = 0; m < p->g.m; m++) {
        float v = 0.f;
        if (b) to_float(s->dtype, (const char *)b->data + (size_t)m * dtype_size(s->dtype), &v, 1);
        out[m] = s->bn_mul ? v * s->bn_mul[m] + s->bn_add[m] : v;
    }
}

/* Whether a tensor may be kept in the layout opaque tensors are: channels last (core/fuse.h). */
static bool opaque_fits(onyx_dtype dt, int rank, int64_t channels) {
    return dt == ONYX_FLOAT && rank >= 3 && rank <= 5 && channels > 0;
}

static onyx_status md_last(dnnl_memory_desc_t *md, int rank, const int64_t *dims,
                           dnnl_data_type_t dt) {
    return cpu_dnnl_md_channels_last(md, rank, dims, dt);
}

static onyx_status md_any_of(dnnl_memory_desc_t *md, int rank, const int64_t *dims,
                             dnnl_data_type_t dt) {
    dnnl_dims_t d;
    for (int i = 0; i < rank; i++) d[i] = dims[i];
    return cpu_dnnl_check(dnnl_memory_desc_create_with_tag(md, rank, d, dt, dnnl_format_tag_any),
                          "describing a tensor");
}

static onyx_status md_any(dnnl_memory_desc_t *md, int rank, const int64_t *dims) {
    return md_any_of(md, rank, dims, dnnl_f32);
}

/* The descriptor of a tensor as stored: channels last when opaque (and it fits) or when `last`
 * (read or written through a Transpose from or to channels last: the same memory), else plain.
 * Caller destroys *md. */
static onyx_status md_stored(dnnl_memory_desc_t *md, bool opaque, bool last, onyx_dtype dt,
                             int rank, const int64_t *dims) {
    if ((opaque && opaque_fits(dt, rank, dims[1])) || last)
        return md_last(md, rank, dims, dnnl_f32);
    return cpu_dnnl_md_plain(md, rank, dims, dnnl_f32);
}

/* X's dims as the convolution sees them: [N, C, spatial...] also when X is stored channels
 * last ([N, spatial..., C]). A rank unknown at prepare (-1) gives none. */
static void conv_x_dims(bool last, int rank, const int64_t *dims, int64_t *out) {
    if (rank <= 0) return;
    memcpy(out, dims, sizeof(int64_t) * (size_t)rank);
    if (!last || rank < 3) return;
    out[1] = dims[rank - 1];
    for (int i = 2; i < rank; i++) out[i] = dims[i - 1];
}

static onyx_status run_reorder(dnnl_primitive_t r, dnnl_memory_t from, const void *from_ptr,
                               dnnl_memory_t to, void *to_ptr, dnnl_memory_t pm, void *pad) {
    TRY(cpu_dnnl_check(dnnl_memory_set_data_handle(from, (void *)from_ptr), "binding a reorder"));
    TRY(cpu_dnnl_check(dnnl_memory_set_data_handle(to, to_ptr), "binding a reorder"));
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
    return execute(r, args, 2, pm, pad);
}

/* Adds a region of `bytes` to a scratch layout; false on overflow. */
static bool region(size_t *total, size_t *off, size_t bytes) {
    bytes = (bytes + 63) / 64 * 64;
    if (bytes > SIZE_MAX / 4 || *total > SIZE_MAX / 4 - bytes) return false;
    *off = *total;
    *total += bytes;
    return true;
}

/* ---- constant weights, reordered (and BatchNormalization-folded) once per rep: the plans of
 * other input shapes ask with the same key and get the same buffer, so a new shape reorders no
 * weights. The key names all the bytes depend on: the weights' buffer (stable while the rep
 * lives), their type, the ONNX and the primitive's layouts, and the folded per-channel
 * multipliers themselves (so two fusion chains share only when they fold to the same values). */

typedef struct wkey_head {
    char tag[8];                     /* the rep's cache is shared with other kernels */
    const void *data;
    int32_t dtype, transpose;
    int64_t wn, folded;              /* elements of W; multipliers that follow the header (0: none) */
    cpu_dnnl_layout user, wei;
} wkey_head;

typedef struct wpack_ctx {
    const conv_state *s;
    const conv_prim *p;
    const tensor *w;
} wpack_ctx;

static onyx_status wpack_make(void *ctx, void **obj) {
    const wpack_ctx *x = ctx;
    const conv_prim *p = x->p;
    onyx_status st = ONYX_OK;
    float *wtmp = NULL;
    void *wpad = NULL, *buf = NULL;
    conv_mems wm = {0};
    if (!(buf = cpu_dnnl_alloc(dnnl_memory_desc_get_size(p->md_wei)))) {
        st = onyx_oom("convolution weights");
        goto done;
    }
    CHECK(folded_weights(x->s, p, x->w, &wtmp));
    if (p->wreorder) {
        /* the reorder's memories and scratchpad for this one call */
        CHECK(cpu_dnnl_memory(&wm.wuser, p->md_wuser));
        CHECK(cpu_dnnl_memory(&wm.wei, p->md_wei));
        if (p->pad_size[PAD_WREORDER]) {
            CHECK(cpu_dnnl_memory(&wm.pad[PAD_WREORDER], p->md_pad[PAD_WREORDER]));
            if (!(wpad = cpu_dnnl_alloc(p->pad_size[PAD_WREORDER]))) {
                st = onyx_oom("convolution weights reorder");
                goto done;
            }
        }
    }
    CHECK(place_weights(p, &wm, wtmp, buf, wpad));
    *obj = buf;
    buf = NULL;
done:
    free(buf);
    free(wtmp);
    free(wpad);
    mems_release(&wm);
    return st;
}

static void wpack_release(void *obj) { free(obj); }

/* p's constant weights w made by make(ctx) (into an aligned buffer freed with free), from the
 * rep's cache under a key of `tag` and the layouts (user, wei: where the key cannot name them,
 * NULL, a buffer of p's own), made there on first use. */
static onyx_status cached_weights(const kernel_prep *kp, const conv_state *s, conv_prim *p,
                                  const tensor *w, const char *tag, const cpu_dnnl_layout *user,
                                  const cpu_dnnl_layout *wei,
                                  onyx_status (*make)(void *ctx, void **obj), void *ctx) {
    int64_t folded = s->bn_mul ? p->g.m : 0;
    size_t size = sizeof(wkey_head) + (size_t)folded * sizeof(float);
    wkey_head *key = calloc(1, size); /* zeroed: padding bytes are part of the key */
    if (!key) return onyx_oom("convolution weights key");
    strncpy(key->tag, tag, sizeof key->tag - 1);
    key->data = w->data;
    key->dtype = (int32_t)s->dtype;
    key->transpose = s->transpose;
    key->wn = p->wn;
    key->folded = folded;
    if (user) key->user = *user;
    if (wei) key->wei = *wei;
    if (folded) memcpy(key + 1, s->bn_mul, (size_t)folded * sizeof(float));
    void *obj = NULL;
    onyx_status st;
    if (user && wei && kp->env && kp->env->shared) {
        st = kernel_shared(kp, key, size, make, wpack_release, ctx, &obj);
    } else { /* a prepare outside a rep, or an unnamed layout: weights of its own */
        st = make(ctx, &obj);
        p->wbuf_own = st == ONYX_OK;
    }
    free(key);
    if (st == ONYX_OK) p->wbuf = obj;
    return st;
}

/* p's constant weights w (ONNX layout wuser) in the primitive's layout. */
static onyx_status shared_weights(const kernel_prep *kp, const conv_state *s, conv_prim *p,
                                  const_dnnl_memory_desc_t wuser, const tensor *w) {
    cpu_dnnl_layout user, wei;
    bool named = cpu_dnnl_layout_of(wuser, &user) && cpu_dnnl_layout_of(p->md_wei, &wei);
    wpack_ctx ctx = {s, p, w};
    return cached_weights(kp, s, p, w, "convW", named ? &user : NULL, named ? &wei : NULL,
                          wpack_make, &ctx);
}

/* ---- Winograd (winograd.h) in place of a primitive, for the float 3x3 convolutions it takes
 * between tensors stored channels last, with constant weights */

static bool folds(fuse_kind k);

/* The index of the chain's first op not folded into the weights and bias. */
static int first_unfolded(const fuse_chain *fc) {
    int i = 0;
    while (i < fc->n && folds(fc->ops[i].kind)) i++;
    return i;
}

static bool wino_fits(const kernel_prep *kp, const conv_state *s, const geom_window *g,
                      const tensor *w_const) {
    const fuse_chain *fc = &s->chain;
    if (!kp || !kp->env || !kp->env->winograd || !w_const || s->transpose ||
        s->dtype != ONYX_FLOAT || s->bf16 || s->pre_mul || fc->x_scale)
        return false;
    if (!(fc->opaque_in0 || fc->x_channels_last) || !(fc->opaque_out0 || fc->y_channels_last) ||
        (s->sum_input >= 0 && !fc->opaque_addend) || !cpu_wino_takes(g))
        return false;
    int tail = cpu_post_vmath_tail(fc);
    for (int i = first_unfolded(fc); i < (tail >= 0 ? tail : fc->n); i++)
        if (!cpu_wino_epilogue_takes(fc->ops[i].kind)) return false;
    return true;
}

/* wpack_make's counterpart: the weights transformed for Winograd. */
static onyx_status wino_pack_make(void *ctx, void **obj) {
    const wpack_ctx *x = ctx;
    float *f = NULL;
    TRY(folded_weights(x->s, x->p, x->w, &f));
    void *u = cpu_dnnl_alloc(cpu_wino_weights_bytes(x->p->g.c, x->p->g.m));
    if (u) cpu_wino_pack(f, x->p->g.c, x->p->g.m, u);
    free(f);
    if (!u) return onyx_oom("convolution weights (Winograd)");
    *obj = u;
    return ONYX_OK;
}

/* p's transformed constant weights (the layout is Winograd's own: named by the tag alone). */
static onyx_status wino_weights(const kernel_prep *kp, const conv_state *s, conv_prim *p,
                                const tensor *w) {
    static const cpu_dnnl_layout none;
    wpack_ctx ctx = {s, p, w};
    return cached_weights(kp, s, p, w, "convWg", &none, &none, wino_pack_make, &ctx);
}

/* p (its geometry set) as a Winograd convolution: plan, bias, scratch, weights. */
static onyx_status build_wino(const kernel_prep *kp, const conv_state *s, conv_prim *p,
                              const tensor *w, const tensor *b, bool b_const) {
    p->wino = true;
    p->tail = cpu_post_vmath_tail(&s->chain);
    p->wino_op0 = first_unfolded(&s->chain);
    cpu_wino_plan_make(&p->g, parallel_threads(), &p->wplan);
    p->has_bias = s->has_bias || s->bn_mul;
    p->bias_own = s->bn_mul != NULL;
    if (p->bias_own && (b_const || !s->has_bias)) {
        if (!(p->bbuf = malloc((size_t)p->g.m * sizeof *p->bbuf)))
            return onyx_oom("convolution bias");
        fold_bias(s, p, b, p->bbuf);
        p->bready = true;
    }
    size_t t = 0;
    bool ok = region(&t, &p->off_wino, (size_t)p->wplan.slots * p->wplan.slot_bytes);
    ok &= region(&t, &p->off_bias, p->bias_own && !p->bready ? (size_t)p->g.m * sizeof(float) : 0);
    if (!ok) return onyx_oom("convolution buffers");
    p->scratch_bytes = t;
    TRY(wino_weights(kp, s, p, w));
    p->wready = true;
    return ONYX_OK;
}

/* Destroys *md (when there is one) and clears it. */
static void md_drop(dnnl_memory_desc_t *md) {
    if (*md) dnnl_memory_desc_destroy(*md);
    *md = NULL;
}

/* Hands *md over to its new owner, clearing it. */
static dnnl_memory_desc_t md_take(dnnl_memory_desc_t *md) {
    dnnl_memory_desc_t r = *md;
    *md = NULL;
    return r;
}

/* A copy of pd's descriptor `what` (the pd's own lives only as long as the pd); caller destroys. */
static onyx_status md_of(dnnl_memory_desc_t *out, const_dnnl_primitive_desc_t pd,
                         dnnl_query_t what) {
    *out = NULL;
    const_dnnl_memory_desc_t q = dnnl_primitive_desc_query_md(pd, what, 0);
    if (!q) return onyx_error(ONYX_ERR_RUNTIME, "oneDNN: the convolution has no descriptor %d",
                              (int)what);
    return cpu_dnnl_check(dnnl_memory_desc_clone(out, q), "copying a descriptor");
}

/* oneDNN 3.2 prefers its brgemm depthwise kernel (brdgmm_dw) for channels-last depthwise
 * convolutions, but at batch 1 and 2 threads its older direct one (jit_dw) is as fast or faster on
 * every depthwise conv of EfficientNet-B0, 20-25 % faster on the 5x5 ones (Xeon, 2 threads,
 * `make bench-conv-impls`): *pd moves to jit_dw where oneDNN has it for this description (asked in
 * a second descriptor: walking the first past its end would lose it). */
static onyx_status prefer_jit_dw(dnnl_primitive_desc_t *pd, dnnl_engine_t eng,
                                 const_dnnl_memory_desc_t src, const_dnnl_memory_desc_t wei,
                                 const_dnnl_memory_desc_t bias, const_dnnl_memory_desc_t dst,
                                 const dnnl_dims_t strides, const dnnl_dims_t dil,
                                 const dnnl_dims_t pl, const dnnl_dims_t pr,
                                 const_dnnl_primitive_attr_t attr) {
    const char *impl = NULL;
    dnnl_primitive_desc_query(*pd, dnnl_query_impl_info_str, 0, &impl);
    if (!impl || strncmp(impl, "brdgmm_dw", 9) != 0) return ONYX_OK;
    dnnl_primitive_desc_t alt = NULL;
    TRY(cpu_dnnl_check(dnnl_guard_convolution_pd(&alt, eng, dnnl_forward_inference,
                                                 dnnl_convolution_direct, src, wei, bias, dst,
                                                 strides, dil, pl, pr, attr),
                       "creating the convolution"));
    do {
        impl = NULL;
        dnnl_primitive_desc_query(alt, dnnl_query_impl_info_str, 0, &impl);
    } while (impl && !strncmp(impl, "brdgmm_dw", 9) && dnnl_guard_next_impl(alt) == dnnl_success);
    if (impl && !strncmp(impl, "jit_dw", 6)) {
        dnnl_primitive_desc_destroy(*pd);
        *pd = alt;
    } else {
        dnnl_primitive_desc_destroy(alt);
    }
    return ONYX_OK;
}

/* kp: the prepare asking (constant weights go through its rep's cache), NULL at run. */
#define CONV_MAX_PAD 65536

static onyx_status build_prim(const kernel_prep *kp, const conv_state *s, const geom_window *win,
                              conv_prim *p, int rank, const int64_t *xdims, const int64_t *wdims,
                              const tensor *w_const, const tensor *b, bool b_const) {
    onyx_status st = ONYX_OK;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_post_ops_t po = NULL;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_engine_t eng;
    /* the descriptors of one attempt (dropped before a retry and at the end; the ones p keeps
     * are taken from here) */
    dnnl_memory_desc_t src_md = NULL, dst_md = NULL, wuser_md = NULL, wany_md = NULL,
                       bias_md = NULL, src_st = NULL, dst_st = NULL, add_st = NULL;
    dnnl_memory_desc_t *const attempt[] = {&src_md, &dst_md, &wuser_md, &wany_md,
                                           &bias_md, &src_st, &dst_st, &add_st};
    memset(p, 0, sizeof *p);
    CHECK(cpu_dnnl_engine(&eng));
    p->rank = rank;
    memcpy(p->xdims, xdims, sizeof(int64_t) * (size_t)rank);
    memcpy(p->wdims, wdims, sizeof(int64_t) * (size_t)rank);
    /* the plan's window (core/op_params.h), resolved for these dims */
    bool fits = win->nsp == rank - 2 && win->n == xdims[0] && win->c == xdims[1];
    for (int i = 0; i < win->nsp && fits; i++) fits = win->in[i] == xdims[2 + i];
    if (!fits) {
        st = onyx_error(ONYX_ERR_RUNTIME, "the plan's convolution window is for other input dims");
        goto done;
    }
    p->g = *win;
    geom_window *g = &p->g;
    int64_t ydims[ONYX_MAX_RANK];
    geom_window_out_dims(g, ydims);
    if (!shape_numel(rank, xdims, &p->xn) || !shape_numel(rank, wdims, &p->wn) ||
        !shape_numel(rank, ydims, &p->yn)) {
        st = onyx_error(ONYX_ERR_SHAPE, "convolution sizes overflow");
        goto done;
    }
    /* oneDNN 2.6 miscomputed (and corrupted its heap on) dims and pads of 2^31 and more: found by
     * fuzzing, a pad of INT32_MAX; not known fixed since. No real convolution comes near. */
    for (int i = 0; i < rank; i++)
        if (xdims[i] > INT32_MAX || wdims[i] > INT32_MAX || ydims[i] > INT32_MAX) {
            st = onyx_error(ONYX_ERR_UNSUPPORTED, "convolution dim %d of %" PRId64 " (input), %" PRId64
                            " (weights), %" PRId64 " (output): oneDNN takes dims below 2^31", i,
                            xdims[i], wdims[i], ydims[i]);
            goto done;
        }
    /* oneDNN 2.6 also took seconds per million padded positions to plan a convolution (16 s for
     * a pad of 2^20, found by fuzzing), and a reference kernel runs over every padded position:
     * pads are bounded well above any real model's. */
    for (int i = 0; i < g->nsp; i++)
        if (llabs(g->pad_b[i]) > CONV_MAX_PAD || llabs(g->pad_e[i]) > CONV_MAX_PAD) {
            st = onyx_error(ONYX_ERR_UNSUPPORTED, "convolution pads %" PRId64 " / %" PRId64
                            " on spatial axis %d: onyx takes pads up to %d", g->pad_b[i],
                            g->pad_e[i], i, CONV_MAX_PAD);
            goto done;
        }
    p->used = true;
    if (p->yn == 0 || p->xn == 0) goto done; /* nothing to convolve: run() fills bias or nothing */
    if (g->nsp > 3) {
        st = onyx_error(ONYX_ERR_UNSUPPORTED, "float convolutions with %d spatial dims (oneDNN "
                        "takes 1 to 3)", g->nsp);
        goto done;
    }
    if (wino_fits(kp, s, g, w_const)) {
        st = build_wino(kp, s, p, w_const, b, b_const);
        goto done;
    }
    bool force_plain = false, no_bf16 = false, last_io = false, last_tried = false;
retry:;
    /* Compute channels last whenever the output channels allow it: oneDNN 3's brgemm kernels
     * (the fast ones for every regular conv, 1x1 or wider) take only that layout, and they run
     * about twice as fast as its plain (im2col + gemm) ones, which is worth a reorder at the
     * edges of a chain. Below 64 output channels off the 16 grid a conv stored plain stays plain
     * (not worth the copies); one stored opaque computes so anyway. X goes in channels last too,
     * also a plain one of few channels (a first layer: oneDNN 3 has no kernel from a plain X to
     * a channels-last Y but the reference one; the reorder of 3 channels is cheap). */
    int64_t cg = g->c / g->group, mg = g->m / g->group;
    const fuse_chain *fc = &s->chain;
    bool nxc = !force_plain && !s->transpose && s->dtype == ONYX_FLOAT &&
               (g->m % 16 == 0 || g->m >= 64 || fc->opaque_out0) &&
               (g->group == 1 || (cg % 16 == 0 && mg % 16 == 0) || (cg == 1 && mg == 1));
    /* not channels last: a float conv lets oneDNN choose the layouts (its channels-last kernels
     * take channel splits others do not) and reorders to them */
    bool any = !nxc && !s->transpose && s->dtype == ONYX_FLOAT;
    /* bfloat16 where the session allows it: X and W converted on their way in (W once), Y and
     * the post-ops in float; a conv oneDNN has no fast bfloat16 kernel for stays float, and so
     * does a first layer (fewer than 16 input channels) */
    bool bf16 = s->bf16 && !no_bf16 && !last_io && s->dtype == ONYX_FLOAT && !s->pre_mul &&
                ((nxc && g->c >= 16) || any);
    dnnl_data_type_t xdt = bf16 ? dnnl_bf16 : dnnl_f32;
    CHECK(md_stored(&src_st, fc->opaque_in0, fc->x_channels_last, s->dtype, rank, xdims));
    if (nxc) CHECK(md_last(&src_md, rank, xdims, xdt));
    else if (any && last_io) CHECK(md_stored(&src_md, false, true, s->dtype, rank, xdims));
    else if (any) CHECK(md_any_of(&src_md, rank, xdims, xdt));
    else CHECK(cpu_dnnl_md_plain(&src_md, rank, xdims, dnnl_f32));
    bool staged = false;
    for (int i = 0; i < g->nsp; i++) {
        p->shift[i] = g->pad_b[i] < 0 ? -g->pad_b[i] : 0;
        staged |= p->shift[i] > 0;
    }
    memcpy(p->stage_dims, ydims, sizeof(int64_t) * (size_t)rank);
    int64_t stage_n = 0;
    if (staged) {
        for (int i = 0; i < g->nsp; i++) p->stage_dims[2 + i] -= p->shift[i];
        if (!shape_numel(rank, p->stage_dims, &stage_n)) {
            st = onyx_oom("transposed convolution staging");
            goto done;
        }
    }
    p->staged = staged;
    if (nxc) CHECK(md_last(&dst_md, rank, ydims, dnnl_f32));
    else if (any && last_io) CHECK(md_stored(&dst_md, false, true, s->dtype, rank, ydims));
    else if (any) CHECK(md_any(&dst_md, rank, ydims));
    else CHECK(cpu_dnnl_md_plain(&dst_md, rank, p->stage_dims, dnnl_f32));
    CHECK(md_stored(&dst_st, fc->opaque_out0, fc->y_channels_last, s->dtype, rank, ydims));
    CHECK(md_stored(&add_st, s->chain.opaque_addend, false, s->dtype, rank, ydims));
    /* the primitive's weights in bfloat16 with X (converted once, by the weights' reorder) */
    CHECK(weights_md(s, g, bf16 ? dnnl_bf16 : dnnl_f32, &wuser_md, &wany_md));
    bool has_bias = s->has_bias || s->bn_mul;
    if (has_bias) CHECK(cpu_dnnl_md_plain(&bias_md, 1, &g->m, dnnl_f32));
    dnnl_dims_t strides, dil, pl, pr;
    for (int i = 0; i < g->nsp; i++) {
        strides[i] = g->stride[i];
        dil[i] = g->dil[i] - 1;
        pl[i] = g->pad_b[i] + p->shift[i];
        pr[i] = g->pad_e[i];
    }
    CHECK(cpu_dnnl_attr(&attr));
    /* an exp-based activation last: vmath applies it to the primitive's output (post_vmath.h) */
    p->tail = s->transpose ? -1 : cpu_post_vmath_conv_tail(&s->chain);
    if (s->chain.n > 0) {
        CHECK(cpu_dnnl_check(dnnl_post_ops_create(&po), "creating post-ops"));
        CHECK(cpu_dnnl_post_ops_n(&s->chain, p->tail >= 0 ? p->tail : s->chain.n, po));
        CHECK(cpu_dnnl_check(dnnl_primitive_attr_set_post_ops(attr, po), "setting post-ops"));
    }
    /* oneDNN 3 checks the description as it creates the primitive descriptor: invalid
     * arguments are the description's fault, reported as such and not retried */
    if (!s->transpose) {
        dnnl_status_t made = dnnl_guard_convolution_pd(
            &pd, eng, dnnl_forward_inference,
            dnnl_convolution_direct, src_md, wany_md,
            has_bias ? bias_md : NULL, dst_md, strides, dil, pl, pr, attr);
        if (made == dnnl_invalid_arguments)
            CHECK(cpu_dnnl_check(made, "describing the convolution"));
        if (made != dnnl_success && (bf16 || last_io)) pd = NULL; /* retried below */
        else CHECK(cpu_dnnl_check(made, "creating the convolution"));
        if (pd && nxc && !bf16 && cg == 1 && mg == 1)
            CHECK(prefer_jit_dw(&pd, eng, src_md, wany_md, has_bias ? bias_md : NULL, dst_md,
                                strides, dil, pl, pr, attr));
    } else {
        dnnl_status_t made = dnnl_guard_deconvolution_pd(
            &pd, eng, dnnl_forward_inference, dnnl_deconvolution_direct, src_md, wany_md,
            has_bias ? bias_md : NULL, dst_md, strides, dil, pl, pr, attr);
        CHECK(cpu_dnnl_check(made, made == dnnl_invalid_arguments
                                       ? "describing the transposed convolution"
                                       : "creating the transposed convolution"));
    }
    /* some channel splits have no channels-last kernel and land on the reference one, which is
     * orders of magnitude slower: then compute in the plain layout; likewise bfloat16 without a
     * kernel (or a slow one): then in float. A grouped conv
     * whose layouts oneDNN chose lands on im2col + GEMM where its groups are narrow (ShuffleNet's
     * first, 6 channels a group in: 215 us): channels last has direct kernels for it (51 us),
     * tried once, kept unless they are no better. */
    const char *impl = NULL;
    if (pd) dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    bool im2col = impl && strstr(impl, "gemm");
    bool try_last = any && !last_tried && g->group > 1 && im2col;
    bool drop_last = last_io && (!pd || !impl || im2col || !strncmp(impl, "ref", 3));
    if (!pd || ((nxc || bf16) && impl && !strncmp(impl, "ref", 3)) || try_last || drop_last) {
        if (pd) dnnl_primitive_desc_destroy(pd);
        pd = NULL;
        if (try_last) last_io = last_tried = true;
        else if (drop_last) last_io = false;
        else if (bf16) no_bf16 = true;
        else force_plain = true;
        if (po) dnnl_post_ops_destroy(po);
        po = NULL;
        dnnl_primitive_attr_destroy(attr);
        attr = NULL;
        for (size_t i = 0; i < sizeof attempt / sizeof attempt[0]; i++) md_drop(attempt[i]);
        goto retry;
    }
    if (any) { /* the layouts oneDNN chose */
        md_drop(&src_md);
        md_drop(&dst_md);
        CHECK(md_of(&src_md, pd, dnnl_query_src_md));
        CHECK(md_of(&dst_md, pd, dnnl_query_dst_md));
    }
    if (!dnnl_memory_desc_equal(src_st, src_md)) {
        CHECK(cpu_dnnl_reorder(src_st, src_md, &p->reo_src, &p->md_pad[PAD_SRC],
                               &p->pad_size[PAD_SRC]));
        p->md_src_user = md_take(&src_st);
        p->src_copy = true;
    }
    if (s->pre_mul) {
        if (g->c != s->pre_c || g->n * g->c <= 0) {
            st = onyx_error(ONYX_ERR_SHAPE, "convolution pre-ops were made for %lld input "
                            "channels, X has %lld", (long long)s->pre_c, (long long)g->c);
            goto done;
        }
        /* X channels last: the pre-ops write it there directly, as the reorder would (or, X
         * stored so already, as the copy of it) */
        p->pre_rows = fc->opaque_in0;
        p->pre_direct = nxc;
        p->src_copy |= p->pre_direct;
        p->pre_copy = !p->pre_direct;
    }
    if (!p->staged && !dnnl_memory_desc_equal(dst_st, dst_md)) {
        CHECK(cpu_dnnl_reorder(dst_md, dst_st, &p->reo_dst, &p->md_pad[PAD_DST],
                               &p->pad_size[PAD_DST]));
        p->md_dst_user = md_take(&dst_st);
        p->dst_copy = true;
    }
    if (s->sum_input >= 0 && !dnnl_memory_desc_equal(add_st, dst_md)) {
        CHECK(cpu_dnnl_reorder(add_st, dst_md, &p->reo_add, &p->md_pad[PAD_ADD],
                               &p->pad_size[PAD_ADD]));
        p->md_add_user = md_take(&add_st);
    }
    CHECK(cpu_dnnl_check(dnnl_guard_primitive_create(&p->prim, pd), "creating the primitive"));
    CHECK(md_of(&p->md_wei, pd, dnnl_query_weights_md));
    size_t prim_pad = cpu_dnnl_scratchpad(pd, &p->md_pad[PAD_PRIM]);
    if (prim_pad == SIZE_MAX) {
        st = onyx_oom("convolution scratchpad descriptor");
        goto done;
    }
    p->pad_size[PAD_PRIM] = prim_pad;
    p->md_src = md_take(&src_md);
    p->md_dst = md_take(&dst_md);
    p->has_bias = has_bias;
    if (has_bias) p->md_bias = md_take(&bias_md);
    bool same_layout = dnnl_memory_desc_equal(p->md_wei, wuser_md);
    if (!same_layout) {
        CHECK(cpu_dnnl_reorder(wuser_md, p->md_wei, &p->wreorder, &p->md_pad[PAD_WREORDER],
                               &p->pad_size[PAD_WREORDER]));
        p->md_wuser = md_take(&wuser_md);
    }
    /* W as ONNX stores it: p's when reordered, else still the attempt's (the same layout) */
    const_dnnl_memory_desc_t wuser = p->md_wuser ? p->md_wuser : wuser_md;
    size_t wbytes = dnnl_memory_desc_get_size(p->md_wei);
    /* the constant weights are reordered once per rep (shared_weights below), read by every run;
     * other weights are reordered per run into scratch when the primitive wants another layout */
    if (w_const && !kp) {
        st = onyx_error(ONYX_ERR_RUNTIME, "constant convolution weights outside a prepare");
        goto done;
    }
    p->wei_own = !w_const && p->wreorder;
    /* a bias of our own: BatchNormalization's shift folded in, or float copies of half values;
     * made here when constant, else per run in scratch */
    p->bias_own = has_bias && (s->bn_mul || is_half(s->dtype));
    if (p->bias_own && (b_const || !s->has_bias)) {
        if (!(p->bbuf = malloc((size_t)g->m * sizeof *p->bbuf))) {
            st = onyx_oom("convolution bias");
            goto done;
        }
        fold_bias(s, p, b, p->bbuf);
        p->bready = true;
    }
    /* a run's buffers in its scratch */
    size_t pad = 0, t = 0;
    for (int i = 0; i < PAD_COUNT; i++)
        if (p->pad_size[i] > pad) pad = p->pad_size[i];
    bool half = is_half(s->dtype), ok = true;
    ok &= region(&t, &p->off_src, p->src_copy ? dnnl_memory_desc_get_size(p->md_src) : 0);
    ok &= region(&t, &p->off_dst, p->dst_copy ? dnnl_memory_desc_get_size(p->md_dst) : 0);
    ok &= region(&t, &p->off_pre, p->pre_copy ? (size_t)p->xn * sizeof(float) : 0);
    ok &= region(&t, &p->off_pad, pad);
    ok &= region(&t, &p->off_hx, half ? (size_t)p->xn * sizeof(float) : 0);
    /* float weights made per run: half ones converted, or scaled by X's scale (the chain's
     * x_scale: the constant weights times input 4 per input channel, reordered from there) */
    bool own_w = (half && !w_const) || s->chain.x_scale;
    ok &= region(&t, &p->off_hw, own_w ? (size_t)p->wn * sizeof(float) : 0);
    ok &= region(&t, &p->off_hy, half ? (size_t)p->yn * sizeof(float) : 0);
    ok &= region(&t, &p->off_stage, (size_t)stage_n * sizeof(float));
    ok &= region(&t, &p->off_bias, p->bias_own && !p->bready ? (size_t)g->m * sizeof(float) : 0);
    ok &= region(&t, &p->off_wei, p->wei_own ? wbytes : 0);
    if (!ok) {
        st = onyx_oom("convolution buffers");
        goto done;
    }
    p->scratch_bytes = t;
    if (w_const) {
        CHECK(shared_weights(kp, s, p, wuser, w_const));
        p->wready = true;
    }
done:
    for (size_t i = 0; i < sizeof attempt / sizeof attempt[0]; i++) md_drop(attempt[i]);
    if (po) dnnl_post_ops_destroy(po);
    if (attr) dnnl_primitive_attr_destroy(attr);
    if (pd) dnnl_primitive_desc_destroy(pd);
    if (st != ONYX_OK) prim_release(p);
    return st;
}

/* ------------------------------------------------------------------ prepare */

static bool folds(fuse_kind k) {
    return k == FUSE_BATCHNORM || k == FUSE_SCALE || k == FUSE_SHIFT;
}

/* Folds the leading per-channel affine steps (BatchNormalization, constant Mul and Add) of
 * ops[0..n) into factors over m channels, *mul and *add (allocated here): v * mul + add. The
 * steps after them are left to the caller (`*rest`: the index of the first). */
static onyx_status fold_affine(const fuse_op *ops, int n, int64_t m, float **mul_out,
                               float **add_out, int *rest) {
    int i = 0;
    for (; i < n; i++) {
        const fuse_op *op = &ops[i];
        if (!folds(op->kind)) break;
        const tensor *k = op->kind == FUSE_SHIFT ? op->bias : op->scale;
        bool fits = op->kind == FUSE_BATCHNORM
                        ? op->scale->numel == m && op->bias->numel == m && op->mean->numel == m &&
                              op->var->numel == m
                        : k->numel == 1 || k->numel == m;
        if (m < 0 || !fits)
            return onyx_error(ONYX_ERR_RUNTIME, "fused per-channel step %d does not fit the "
                              "convolution's %lld channels", i, (long long)m);
        float *fm = *mul_out, *fa = *add_out;
        if (!fm) {
            *mul_out = fm = malloc((size_t)m * sizeof(float));
            *add_out = fa = malloc((size_t)m * sizeof(float));
            if (!fm || !fa) return onyx_oom("folded per-channel steps");
            for (int64_t c = 0; c < m; c++) {
                fm[c] = 1.f;
                fa[c] = 0.f;
            }
        }
        const float *kv = k->data;
        for (int64_t c = 0; c < m; c++) {
            double mul = 1.0, add = 0.0;
            if (op->kind == FUSE_BATCHNORM) {
                const float *sc = op->scale->data, *bi = op->bias->data, *mu = op->mean->data,
                            *va = op->var->data;
                mul = sc[c] / sqrt((double)va[c] + op->epsilon);
                add = bi[c] - mu[c] * mul;
            } else if (op->kind == FUSE_SCALE) {
                mul = kv[k->numel == 1 ? 0 : c];
            } else {
                add = kv[k->numel == 1 ? 0 : c];
            }
            fm[c] = (float)(fm[c] * mul);
            fa[c] = (float)(fa[c] * mul + add);
        }
    }
    *rest = i;
    return ONYX_OK;
}

/* Copies the fusion chain, folds its leading per-channel affine steps into y = conv(x) * bn_mul
 * + bn_add, and its pre-ops into pre_mul, pre_add and the activation (c: X's channels). */
static onyx_status take_chain(conv_state *s, const fuse_chain *chain, int64_t m, int64_t c) {
    s->sum_input = -1;
    if (!chain) return ONYX_OK;
    s->chain = *chain;
    int rest = 0;
    TRY(fold_affine(chain->ops, chain->n, m, &s->bn_mul, &s->bn_add, &rest));
    for (int i = rest; i < chain->n; i++) {
        if (folds(chain->ops[i].kind))
            return onyx_error(ONYX_ERR_RUNTIME, "fused per-channel step %d follows a "
                              "non-linear one", i);
        if (chain->ops[i].kind == FUSE_SUM) s->sum_input = chain->ops[i].input;
    }
    if (chain->n_pre == 0) return ONYX_OK;
    TRY(fold_affine(chain->pre, chain->n_pre, c, &s->pre_mul, &s->pre_add, &rest));
    if (rest < chain->n_pre) {
        const fuse_op *op = &chain->pre[rest];
        if (rest != chain->n_pre - 1 || op->kind != FUSE_RELU)
            return onyx_error(ONYX_ERR_RUNTIME, "convolution pre-ops: only one Relu, last");
        s->pre_act = true;
        s->pre_alpha = op->alpha;
    }
    if (!s->pre_mul) { /* a Relu alone */
        s->pre_mul = malloc((size_t)(c > 0 ? c : 1) * sizeof(float));
        s->pre_add = calloc((size_t)(c > 0 ? c : 1), sizeof(float));
        if (!s->pre_mul || !s->pre_add) return onyx_oom("convolution pre-ops");
        for (int64_t k = 0; k < c; k++) s->pre_mul[k] = 1.f;
    }
    s->pre_c = c;
    return ONYX_OK;
}

/* What conv_prepare makes of the node and its chain before the primitive (s: its type, pre-ops,
 * channels-last X or Y, opaque tensors, a scale on X, the post-ops folded or kept; xd: X's
 * logical dims): the checks of the chain its query (cpu_conv_takes_chain) makes as well.
 * oneDNN's convolutions take every post-op kind a chain holds (its reference kernel at worst)
 * and reorder opaque tensors to and from the layouts they compute in, so nothing of oneDNN is
 * asked here. */
static onyx_status conv_setup(const kernel_prep *p, bool transpose, conv_state *s, int64_t *xd) {
    if (p->n_in < 2 || !p->in_type[0] || !p->in_type[1])
        return onyx_error(ONYX_ERR_INVALID_MODEL, "inputs X and W are required");
    s->transpose = transpose;
    const type_info *x = p->in_type[0], *w = p->in_type[1];
    s->dtype = x->dtype;
    s->bf16 = p->env && p->env->bf16;
    s->has_bias = p->n_in > 2 && p->in_type[2];
    int64_t m = -1;
    if (w->rank >= 2 && w->dims[0] >= 0) m = transpose ? -1 : w->dims[0];
    int64_t xc = x->rank >= 2 ? x->dims[1] : -1;
    if (p->fused && p->fused->n_pre > 0 && (transpose || s->dtype != ONYX_FLOAT || xc < 0))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "convolution pre-ops need a float Conv with known "
                          "input channels");
    /* X read from, Y written to a channels-last tensor (the chain's x/y_channels_last): X's dims
     * are then [N, spatial..., C], the prim's the logical [N, C, spatial...] */
    const fuse_chain no_chain = {0}, *fc = p->fused ? p->fused : &no_chain;
    bool x_last = fc->x_channels_last, y_last = fc->y_channels_last, x_scale = fc->x_scale;
    if ((x_last || y_last) && (transpose || s->dtype != ONYX_FLOAT || x->rank < 3 ||
                               x->rank > 5 || (x_last && p->fused->n_pre > 0)))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "a channels-last X or Y needs a float Conv of "
                          "rank 3 to 5 without pre-ops");
    conv_x_dims(x_last, x->rank, x->dims, xd);
    xc = x->rank >= 2 ? xd[1] : -1;
    /* opaque tensors (core/fuse_chain.h) are stored channels last, which md_stored describes
     * for float tensors of rank 3 to 5 alone (an opaque X's pre-ops run pixel by pixel) */
    bool x_fits = !transpose && opaque_fits(s->dtype, x->rank, xc);
    bool y_fits = !transpose && opaque_fits(s->dtype, x->rank, m);
    if ((fc->opaque_in0 && !x_fits) || ((fc->opaque_out0 || fc->opaque_addend) && !y_fits))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "opaque tensors of a Conv are float, of rank 3 "
                          "to 5 with known channels");
    const geom_window *win = op_params_window(p->params); /* NULL until the run resolves it */
    if (x_scale && (transpose || s->dtype != ONYX_FLOAT || p->fused->n_pre > 0 || p->n_in < 5 ||
                       !p->in_value[1] || !win || win->group != 1))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "a scale on X taken into the weights needs a "
                          "float, ungrouped Conv with constant weights and no pre-ops");
    return take_chain(s, p->fused, m, xc);
}

static onyx_status conv_prepare(const kernel_prep *p, void **state, bool transpose) {
    conv_state *s = calloc(1, sizeof *s);
    if (!s) return onyx_oom("convolution state");
    onyx_status st = ONYX_OK;
    int64_t xd[ONYX_MAX_RANK];
    CHECK(conv_setup(p, transpose, s, xd));
    const type_info *x = p->in_type[0], *w = p->in_type[1];
    if (s->dtype != ONYX_DOUBLE && type_is_static(x) && type_is_static(w) && x->rank == w->rank) {
        const tensor *b = s->has_bias ? p->in_value[2] : NULL;
        const geom_window *win;
        CHECK(kernel_window(p->params, &win));
        st = build_prim(p, s, win, &s->prepared, x->rank, xd, w->dims,
                        s->chain.x_scale ? NULL : p->in_value[1], b, b != NULL);
        if (st != ONYX_OK) goto done;
    }
    *state = s;
    s = NULL;
done:
    cpu_conv_release(s);
    return st;
}

/* kernel.takes_chain of Conv: whether conv_prepare takes p->fused (its post-ops, pre-ops,
 * channels-last X and Y, a scale on X, and which tensors are opaque), from conv_setup's checks
 * (the primitive is not built). A refusal is this answer, not an error: the message is
 * cleared. */
bool cpu_conv_takes_chain(const kernel_prep *p) {
    conv_state *s = calloc(1, sizeof *s);
    if (!s) return false;
    int64_t xd[ONYX_MAX_RANK];
    onyx_status st = conv_setup(p, false, s, xd);
    if (st != ONYX_OK) onyx_error_clear();
    cpu_conv_release(s);
    return st == ONYX_OK;
}

onyx_status cpu_conv_prepare(const kernel_prep *p, void **state) {
    return conv_prepare(p, state, false);
}
onyx_status cpu_convtranspose_prepare(const kernel_prep *p, void **state) {
    return conv_prepare(p, state, true);
}

/* ------------------------------------------------------------------ float run */

/* The pre-ops on x plain [N, C, S] into y, either plain (over (batch, channel) planes) or
 * channels last [N, S, C] (over (batch, 16 pixels) tiles). */
typedef struct pre_job {
    const conv_state *s;
    const float *x;
    float *y;
    int64_t c, sp, tiles; /* channels, spatial size, tiles of 16 pixels per image */
} pre_job;

/* y = act(x * mul + add) over n values; written as selects GCC vectorizes at -O2 (NaN stays
 * NaN, Relu(-inf) = 0). */
static void pre_row(const float *x, float *y, int64_t n, float mul, float add, bool act,
                    float slope) {
    if (!act) {
        CPU_SIMD for (int64_t i = 0; i < n; i++) y[i] = x[i] * mul + add;
    } else if (slope == 0.f) {
        CPU_SIMD for (int64_t i = 0; i < n; i++) {
            float v = x[i] * mul + add;
            y[i] = v < 0.f ? 0.f : v;
        }
    } else {
        CPU_SIMD for (int64_t i = 0; i < n; i++) {
            float v = x[i] * mul + add;
            float pos = v < 0.f ? 0.f : v, neg = v < 0.f ? v : 0.f;
            y[i] = pos + slope * neg;
        }
    }
}

/* A 4 x 4 transpose from rows of `src` (stride ss) to rows of `dst` (stride ds) in vector
 * registers (GCC / clang vector extensions): the scalar 16 x 16 tile transpose took as long as
 * the rest of the pre-ops. */
typedef float pre_v4 __attribute__((vector_size(16)));
typedef int pre_v4i __attribute__((vector_size(16)));
#if defined(__clang__)
#define PRE_SHUF(a, b, i, j, k, l) __builtin_shufflevector(a, b, i, j, k, l)
#else
#define PRE_SHUF(a, b, i, j, k, l) __builtin_shuffle(a, b, (pre_v4i){i, j, k, l})
#endif

static inline void transpose4(const float *src, int64_t ss, float *dst, int64_t ds) {
    pre_v4 a, b, c, d;
    memcpy(&a, src, sizeof a);
    memcpy(&b, src + ss, sizeof b);
    memcpy(&c, src + 2 * ss, sizeof c);
    memcpy(&d, src + 3 * ss, sizeof d);
    pre_v4 t0 = PRE_SHUF(a, b, 0, 4, 1, 5), t1 = PRE_SHUF(a, b, 2, 6, 3, 7);
    pre_v4 t2 = PRE_SHUF(c, d, 0, 4, 1, 5), t3 = PRE_SHUF(c, d, 2, 6, 3, 7);
    pre_v4 o0 = PRE_SHUF(t0, t2, 0, 1, 4, 5), o1 = PRE_SHUF(t0, t2, 2, 3, 6, 7);
    pre_v4 o2 = PRE_SHUF(t1, t3, 0, 1, 4, 5), o3 = PRE_SHUF(t1, t3, 2, 3, 6, 7);
    memcpy(dst, &o0, sizeof o0);
    memcpy(dst + ds, &o1, sizeof o1);
    memcpy(dst + 2 * ds, &o2, sizeof o2);
    memcpy(dst + 3 * ds, &o3, sizeof o3);
}

static void pre_planes(void *ctx, int64_t b, int64_t e) {
    const pre_job *j = ctx;
    const conv_state *s = j->s;
    for (int64_t pl = b; pl < e; pl++) {
        int64_t ch = pl % j->c;
        pre_row(j->x + pl * j->sp, j->y + pl * j->sp, j->sp, s->pre_mul[ch], s->pre_add[ch],
                s->pre_act, s->pre_alpha);
    }
}

static void pre_tiles(void *ctx, int64_t b, int64_t e) {
    const pre_job *j = ctx;
    const conv_state *s = j->s;
    const float *pm = s->pre_mul, *pa = s->pre_add;
    bool act = s->pre_act;
    float slope = s->pre_alpha;
    int64_t c = j->c, sp = j->sp;
    for (int64_t t = b; t < e; t++) {
        int64_t n = t / j->tiles, i0 = t % j->tiles * 16;
        int64_t w = sp - i0 < 16 ? sp - i0 : 16;
        float *y = j->y + (n * sp + i0) * c, tile[16][16];
        /* 16 x 16 tiles: rows (channels) read and transformed contiguously, transposed in L1
         * into 16 pixels' rows of channels */
        for (int64_t c0 = 0; c0 < c; c0 += 16) {
            int64_t kn = c - c0 < 16 ? c - c0 : 16;
            for (int64_t k = 0; k < kn; k++)
                pre_row(j->x + (n * c + c0 + k) * sp + i0, tile[k], w, pm[c0 + k], pa[c0 + k],
                        act, slope);
            if (w == 16 && kn == 16) {
                for (int kb = 0; kb < 16; kb += 4)
                    for (int ib = 0; ib < 16; ib += 4)
                        transpose4(&tile[kb][ib], 16, y + ib * c + c0 + kb, c);
                continue;
            }
            for (int64_t i = 0; i < w; i++)
                for (int64_t k = 0; k < kn; k++) y[i * c + c0 + k] = tile[k][i];
        }
    }
}

/* Pixels [b, e) of x stored channels last, each a row of c channels. */
static void pre_pixels(void *ctx, int64_t b, int64_t e) {
    const pre_job *j = ctx;
    const conv_state *s = j->s;
    const float *pm = s->pre_mul, *pa = s->pre_add;
    const int64_t c = j->c;
    const float slope = s->pre_alpha;
    for (int64_t px = b; px < e; px++) {
        const float *x = j->x + px * c;
        float *y = j->y + px * c;
        if (!s->pre_act) {
            CPU_SIMD for (int64_t k = 0; k < c; k++) y[k] = x[k] * pm[k] + pa[k];
        } else if (slope == 0.f) { /* as pre_row: Relu(-inf) is 0, not 0 * -inf */
            CPU_SIMD for (int64_t k = 0; k < c; k++) {
                float v = x[k] * pm[k] + pa[k];
                y[k] = v < 0.f ? 0.f : v;
            }
        } else {
            CPU_SIMD for (int64_t k = 0; k < c; k++) {
                float v = x[k] * pm[k] + pa[k];
                float pos = v < 0.f ? 0.f : v, neg = v < 0.f ? v : 0.f;
                y[k] = pos + slope * neg;
            }
        }
    }
}

static void run_pre(const conv_state *s, const conv_prim *p, const float *x, float *y) {
    pre_job j = {s, x, y, p->g.c, p->xn / (p->g.n * p->g.c), 0};
    if (p->pre_rows) { /* X channels last, y in the same layout */
        int64_t grain = 16384 / (j.c > 0 ? j.c : 1);
        parallel_for(p->g.n * j.sp, grain < 1 ? 1 : grain, pre_pixels, &j);
        return;
    }
    if (!p->pre_direct) {
        int64_t grain = 16384 / (j.sp > 0 ? j.sp : 1);
        parallel_for(p->g.n * j.c, grain < 1 ? 1 : grain, pre_planes, &j);
        return;
    }
    j.tiles = (j.sp + 15) / 16;
    int64_t grain = 16384 / (16 * j.c);
    parallel_for(p->g.n * j.tiles, grain < 1 ? 1 : grain, pre_tiles, &j);
}

static bool prim_fits(const conv_prim *p, const tensor *x, const int64_t *xdims, const tensor *w) {
    return p->used && p->rank == x->rank && w->rank == x->rank &&
           !memcmp(p->xdims, xdims, sizeof(int64_t) * (size_t)x->rank) &&
           !memcmp(p->wdims, w->dims, sizeof(int64_t) * (size_t)x->rank);
}

/* The prim for this call's shapes and the fork's memories for it: the prepared one, else one the
 * fork built (kept for later runs), else a new one built now into the fork. */
static onyx_status find_prim(conv_fork *f, const kernel_call *c, const conv_prim **out,
                             const conv_mems **mems) {
    const conv_state *s = f->s;
    const tensor *x = kernel_input(c, 0), *w = kernel_input(c, 1);
    int64_t xd[ONYX_MAX_RANK];
    conv_x_dims(s->chain.x_channels_last, x->rank, x->dims, xd);
    if (prim_fits(&s->prepared, x, xd, w)) {
        *out = &s->prepared;
        *mems = &f->prepared;
        return ONYX_OK;
    }
    for (int i = 0; i < CONV_CACHE; i++)
        if (prim_fits(&f->cache[i], x, xd, w)) {
            *out = &f->cache[i];
            *mems = &f->cache_mems[i];
            return ONYX_OK;
        }
    if (x->rank != w->rank)
        return onyx_error(ONYX_ERR_SHAPE, "W has rank %d, expected %d", w->rank, x->rank);
    int k = f->next;
    f->next = (f->next + 1) % CONV_CACHE;
    mems_release(&f->cache_mems[k]);
    prim_release(&f->cache[k]);
    /* a BatchNormalization is folded only into constant weights, which fix the shape: a new shape
     * here has no constant to fold */
    if (s->bn_mul) return onyx_error(ONYX_ERR_RUNTIME, "fused convolution got a new weight shape");
    conv_prim *p = &f->cache[k];
    const geom_window *win;
    TRY(kernel_window(c->params, &win));
    onyx_status st = build_prim(NULL, s, win, p, x->rank, xd, w->dims, NULL, NULL, false);
    if (st == ONYX_OK && p->prim) st = mems_create(p, &f->cache_mems[k]);
    if (st != ONYX_OK) {
        prim_release(p);
        return st;
    }
    *out = p;
    *mems = &f->cache_mems[k];
    return ONYX_OK;
}

/* Where element (n, m, i) of a tensor of n * M * per elements is: plain, or channels last. */
static int64_t at_nmi(bool last, int64_t n, int64_t m, int64_t i, int64_t M, int64_t per) {
    return last ? (n * per + i) * M + m : (n * M + m) * per + i;
}

/* Y of a convolution over no input elements (C = 0, yn > 0): the bias alone, plus the addend af
 * (float, or NULL; channels last where a_last) where there is one. Y is channels last where
 * y_last. */
static void fill_bias(const conv_state *s, const conv_prim *p, const tensor *b, tensor *y,
                      bool y_last, const float *af, bool a_last) {
    int64_t M = p->g.m, per = p->yn / (p->g.n * M);
    size_t es = dtype_size(y->dtype);
    memset(y->data, 0, y->nbytes);
    if (!b && !s->bn_mul && !af) return;
    for (int64_t n = 0; n < p->g.n; n++)
        for (int64_t m = 0; m < M; m++) {
            float v = 0.f;
            if (b) to_float(s->dtype, (const char *)b->data + (size_t)m * es, &v, 1);
            if (s->bn_mul) v = v * s->bn_mul[m] + s->bn_add[m];
            for (int64_t i = 0; i < per; i++) {
                float e = af ? v + af[at_nmi(a_last, n, m, i, M, per)] : v;
                char *dst = (char *)y->data + (size_t)at_nmi(y_last, n, m, i, M, per) * es;
                if (s->dtype == ONYX_FLOAT) memcpy(dst, &e, sizeof e);
                else from_float(s->dtype, &e, dst, 1);
            }
        }
}

/* Places the staged output `stage` `shift` pixels into y (float, Y's dims), bias everywhere
 * else. */
static void unstage(const conv_prim *p, const float *stage, const float *bias, float *y) {
    const geom_window *g = &p->g;
    int64_t per = p->yn / (g->n * g->m), last = p->stage_dims[p->rank - 1];
    for (int64_t nm = 0; nm < g->n * g->m; nm++) {
        float bv = bias ? bias[nm % g->m] : 0.f;
        for (int64_t i = 0; i < per; i++) y[nm * per + i] = bv;
    }
    int64_t rows = p->yn > 0 ? 1 : 0, idx[ONYX_MAX_RANK] = {0};
    for (int d = 0; d < p->rank - 1; d++) rows *= p->stage_dims[d];
    const float *src = stage;
    for (int64_t r = 0; r < rows; r++, src += last) {
        int64_t off = 0;
        for (int d = 0; d < p->rank - 1; d++) {
            int64_t ydim = d < 2 ? p->stage_dims[d] : g->out[d - 2];
            off = off * ydim + idx[d] + (d < 2 ? 0 : p->shift[d - 2]);
        }
        off = off * g->out[g->nsp - 1] + p->shift[g->nsp - 1];
        memcpy(y + off, src, (size_t)last * sizeof *y);
        for (int d = p->rank - 2; d >= 0; d--) {
            if (++idx[d] < p->stage_dims[d]) break;
            idx[d] = 0;
        }
    }
}

/* The weights (ONNX layout) times the scale on X per input channel, and a folded
 * BatchNormalization's multiplier per output channel (constant weights fold it once, these are
 * not constant), into `to`. */
static onyx_status scale_weights(const conv_state *s, const conv_prim *p, const tensor *sc,
                                 const float *w, float *to) {
    const geom_window *g = &p->g;
    if (!sc || sc->dtype != ONYX_FLOAT || sc->numel != g->c)
        return onyx_error(ONYX_ERR_SHAPE, "the scale on X has %lld values, expected one per "
                          "input channel (%lld)", sc ? (long long)sc->numel : 0LL,
                          (long long)g->c);
    const float *k = sc->data;
    int64_t taps = g->c > 0 ? p->wn / (g->m * g->c) : 0;
    for (int64_t m = 0; m < g->m; m++) {
        float om = s->bn_mul ? s->bn_mul[m] : 1.f;
        const float *restrict src = w + m * g->c * taps;
        float *restrict dst = to + m * g->c * taps;
        if (taps == 1) { /* a pointwise convolution (a squeeze-and-excitation block's): one pass */
            CPU_SIMD for (int64_t i = 0; i < g->c; i++) dst[i] = src[i] * (k[i] * om);
            continue;
        }
        for (int64_t i = 0; i < g->c; i++) {
            float f = k[i] * om;
            for (int64_t t = 0; t < taps; t++) dst[i * taps + t] = src[i * taps + t] * f;
        }
    }
    return ONYX_OK;
}

/* A Winograd prim's run: X and Y (and the addend) as stored, channels last. */
static onyx_status run_wino(const conv_state *s, const conv_prim *p, const kernel_call *c,
                            const tensor *b, const tensor *addend, tensor *y) {
    void *mem;
    TRY(kernel_scratch(c, p->scratch_bytes + 1, &mem));
    char *sb = mem;
    const float *bias = NULL;
    if (p->bready) {
        bias = p->bbuf;
    } else if (p->bias_own) {
        float *bb = (float *)(sb + p->off_bias);
        fold_bias(s, p, b, bb);
        bias = bb;
    } else if (p->has_bias) {
        bias = b->data;
    }
    int end = p->tail >= 0 ? p->tail : s->chain.n;
    cpu_wino_epilogue ep = {bias, s->chain.ops + p->wino_op0, end - p->wino_op0,
                            addend ? addend->data : NULL};
    cpu_wino_run(&p->wplan, kernel_input(c, 0)->data, p->wbuf, &ep, y->data, sb + p->off_wino);
    if (p->tail >= 0) cpu_post_vmath_apply(&s->chain.ops[p->tail], y->data, y->numel);
    return ONYX_OK;
}

static onyx_status run_float(conv_fork *f, const kernel_call *c) {
    const conv_state *s = f->s;
    const tensor *x = kernel_input(c, 0), *w = kernel_input(c, 1), *b = s->has_bias ? kernel_input(c, 2) : NULL;
    tensor *y = kernel_output(c, 0);
    const conv_prim *p = NULL;
    const conv_mems *m = NULL;
    TRY(find_prim(f, c, &p, &m));
    if (y->numel != p->yn)
        return onyx_error(ONYX_ERR_SHAPE, "output has %lld elements, expected %lld",
                          (long long)y->numel, (long long)p->yn);
    const tensor *addend = s->sum_input >= 0 ? kernel_input(c, s->sum_input) : NULL;
    if (s->sum_input >= 0 && (!addend || addend->numel != y->numel || addend->dtype != y->dtype))
        return onyx_error(ONYX_ERR_SHAPE, "fused Add: addend does not match the output");
    if (p->wino) return run_wino(s, p, c, b, addend, y);
    if (!p->prim) {
        if (p->yn == 0) return ONYX_OK;
        const float *af = addend ? addend->data : NULL;
        if (af && addend->data == y->data) { /* Y took the addend's bytes: keep it first */
            void *copy;
            TRY(kernel_scratch(c, (size_t)y->numel * sizeof(float) + 1, &copy));
            memcpy(copy, af, (size_t)y->numel * sizeof(float));
            af = copy;
        }
        /* no input elements: the sum is empty; Y and the addend in their layouts as stored */
        bool y_last = (s->chain.opaque_out0 && opaque_fits(s->dtype, y->rank, p->g.m)) ||
                      s->chain.y_channels_last;
        bool a_last = s->chain.opaque_addend && opaque_fits(s->dtype, y->rank, p->g.m);
        fill_bias(s, p, b, y, y_last, af, a_last);
        return ONYX_OK;
    }
    /* this run's buffers: its scratch, at the offsets build_prim laid out */
    void *mem;
    TRY(kernel_scratch(c, p->scratch_bytes + 1, &mem));
    char *sb = mem;
    void *src_buf = sb + p->off_src, *dst_buf = sb + p->off_dst, *pad = sb + p->off_pad;
    float *hx = (float *)(sb + p->off_hx), *hw = (float *)(sb + p->off_hw);
    float *hy = (float *)(sb + p->off_hy), *stage = (float *)(sb + p->off_stage);
    bool half = is_half(s->dtype);
    const void *src = x->data;
    if (half) {
        to_float(s->dtype, x->data, hx, p->xn);
        src = hx;
    }
    void *out = half ? (void *)hy : y->data;
    void *dst = p->staged ? (void *)stage : p->dst_copy ? dst_buf : out;
    if (s->pre_mul && p->pre_direct) {
        run_pre(s, p, src, src_buf);
        src = src_buf;
    } else {
        if (s->pre_mul) {
            float *pre = (float *)(sb + p->off_pre);
            run_pre(s, p, src, pre);
            src = pre;
        }
        if (p->reo_src) {
            TRY(run_reorder(p->reo_src, m->src_user, src, m->src, src_buf, m->pad[PAD_SRC], pad));
            src = src_buf;
        }
    }
    if (p->reo_add)
        TRY(run_reorder(p->reo_add, m->add_user, addend->data, m->dst, dst, m->pad[PAD_ADD], pad));
    else if (addend && addend->data != dst) /* in the layout of Y as computed */
        memcpy(dst, addend->data, dnnl_memory_desc_get_size(p->md_dst));
    /* weights */
    void *wei = (void *)p->wbuf;
    if (!p->wready) {
        const float *wf = w->data;
        if (half) {
            to_float(s->dtype, w->data, hw, p->wn);
            wf = hw;
        }
        if (s->chain.x_scale) {
            TRY(scale_weights(s, p, kernel_input(c, 4), wf, hw));
            wf = hw;
        }
        if (p->wei_own) {
            wei = sb + p->off_wei;
            TRY(place_weights(p, m, wf, wei, pad));
        } else {
            wei = (void *)wf;
        }
    }
    const void *bias = NULL;
    if (p->has_bias) {
        if (p->bready) bias = p->bbuf;
        else if (p->bias_own) {
            float *bb = (float *)(sb + p->off_bias);
            fold_bias(s, p, b, bb);
            bias = bb;
        } else bias = b->data;
    }
    TRY(cpu_dnnl_check(dnnl_memory_set_data_handle(m->src, (void *)src), "binding X"));
    TRY(cpu_dnnl_check(dnnl_memory_set_data_handle(m->wei, wei), "binding W"));
    TRY(cpu_dnnl_check(dnnl_memory_set_data_handle(m->dst, dst), "binding Y"));
    dnnl_exec_arg_t args[5] = {{DNNL_ARG_SRC, m->src}, {DNNL_ARG_WEIGHTS, m->wei},
                               {DNNL_ARG_DST, m->dst}};
    int nargs = 3;
    if (p->has_bias) {
        TRY(cpu_dnnl_check(dnnl_memory_set_data_handle(m->bias, (void *)bias), "binding B"));
        args[nargs++] = (dnnl_exec_arg_t){DNNL_ARG_BIAS, m->bias};
    }
    TRY(execute(p->prim, args, nargs, m->pad[PAD_PRIM], pad));
    if (p->tail >= 0)
        cpu_post_vmath_apply(&s->chain.ops[p->tail], dst,
                             (int64_t)(dnnl_memory_desc_get_size(p->md_dst) / sizeof(float)));
    if (p->staged) unstage(p, stage, bias, out);
    if (p->reo_dst)
        TRY(run_reorder(p->reo_dst, m->dst, dst_buf, m->dst_user, out, m->pad[PAD_DST], pad));
    if (half) from_float(s->dtype, hy, y->data, p->yn);
    return ONYX_OK;
}

/* ------------------------------------------------------------------ double run */

/* Flat index in the `big` space (dims `big`) of position `pos` (small-space multi-index) shifted
 * by kernel offset `kk`: pos * stride - pad + kk * dilation; -1 when outside. */
static int64_t tap_index(const geom_window *g, const int64_t *big, const int64_t *pos,
                         const int64_t *kk) {
    int64_t flat = 0;
    for (int i = 0; i < g->nsp; i++) {
        int64_t t = pos[i] * g->stride[i] - g->pad_b[i] + kk[i] * g->dil[i];
        if (t < 0 || t >= big[i]) return -1;
        flat = flat * big[i] + t;
    }
    return flat;
}

static void next_index(int nsp, const int64_t *dims, int64_t *idx) {
    for (int i = nsp - 1; i >= 0; i--) {
        if (++idx[i] < dims[i]) return;
        idx[i] = 0;
    }
}

static onyx_status run_double(const conv_state *s, const kernel_call *c) {
    const tensor *x = kernel_input(c, 0), *w = kernel_input(c, 1), *b = s->has_bias ? kernel_input(c, 2) : NULL;
    tensor *y = kernel_output(c, 0);
    const geom_window *g;
    TRY(kernel_window(c->params, &g));
    int64_t kp = 1, ip = 1, op = 1;
    for (int i = 0; i < g->nsp; i++) {
        kp *= g->k[i];
        ip *= g->in[i];
        op *= g->out[i];
    }
    int64_t cg = g->c / g->group, mg = g->m / g->group;
    /* rows x columns of the column matrix: Conv (Cg*K) x out, ConvTranspose (Mg*K) x in */
    int64_t rows = (s->transpose ? mg : cg) * kp, cols = s->transpose ? ip : op;
    if (!cpu_blas_dims_ok(rows, cols, s->transpose ? cg : rows) || !cpu_blas_dims_ok(mg, op, cg))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "convolution too large for BLAS's int");
    if ((uint64_t)(rows * cols) > SIZE_MAX / sizeof(double))
        return onyx_oom("convolution columns");
    void *mem;
    TRY(kernel_scratch(c, (size_t)(rows * cols) * sizeof(double) + 1, &mem));
    double *col = mem, *yd = y->data;
    const double *xd = x->data, *wd = w->data, *bd = b ? b->data : NULL;
    for (int64_t n = 0; n < g->n; n++)
        for (int64_t gi = 0; gi < g->group; gi++) {
            const double *xg = xd + (n * g->c + gi * cg) * ip;
            double *yg = yd + (n * g->m + gi * mg) * op;
            if (!s->transpose) {
                for (int64_t r = 0; r < rows; r++) {
                    int64_t ch = r / kp, kk[GEOM_WINDOW_MAX_SPATIAL];
                    int64_t pos[GEOM_WINDOW_MAX_SPATIAL] = {0};
                    int64_t kr = r % kp;
                    for (int i = g->nsp - 1; i >= 0; i--) {
                        kk[i] = kr % g->k[i];
                        kr /= g->k[i];
                    }
                    for (int64_t o = 0; o < op; o++) {
                        int64_t t = tap_index(g, g->in, pos, kk);
                        col[r * op + o] = t >= 0 ? xg[ch * ip + t] : 0.0;
                        next_index(g->nsp, g->out, pos);
                    }
                }
                cpu_dgemm(false, false, mg, op, rows, 1.0, wd + gi * mg * rows, rows, col, op, 0.0,
                          yg, op);
                for (int64_t m = 0; m < mg; m++)
                    if (bd)
                        for (int64_t o = 0; o < op; o++) yg[m * op + o] += bd[gi * mg + m];
            } else {
                /* col[(m, k), i] = sum_c W[c, m, k] X[c, i], then scattered into Y */
                cpu_dgemm(true, false, rows, ip, cg, 1.0, wd + gi * cg * rows, rows, xg, ip, 0.0,
                          col, ip);
                for (int64_t m = 0; m < mg; m++) {
                    double bv = bd ? bd[gi * mg + m] : 0.0;
                    for (int64_t o = 0; o < op; o++) yg[m * op + o] = bv;
                }
                for (int64_t r = 0; r < rows; r++) {
                    int64_t m = r / kp, kk[GEOM_WINDOW_MAX_SPATIAL];
                    int64_t pos[GEOM_WINDOW_MAX_SPATIAL] = {0};
                    int64_t kr = r % kp;
                    for (int i = g->nsp - 1; i >= 0; i--) {
                        kk[i] = kr % g->k[i];
                        kr /= g->k[i];
                    }
                    for (int64_t i = 0; i < ip; i++) {
                        int64_t t = tap_index(g, g->out, pos, kk);
                        if (t >= 0) yg[m * op + t] += col[r * ip + i];
                        next_index(g->nsp, g->in, pos);
                    }
                }
            }
        }
    return ONYX_OK;
}

static onyx_status conv_run(const kernel_call *c) {
    conv_fork *f = c->state;
    if (!f) return onyx_error(ONYX_ERR_RUNTIME, "kernel state missing (prepare was not run)");
    if (kernel_output(c, 0)->numel == 0) return ONYX_OK;
    return f->s->dtype == ONYX_DOUBLE ? run_double(f->s, c) : run_float(f, c);
}

onyx_status cpu_conv_run(const kernel_call *c) { return conv_run(c); }
onyx_status cpu_convtranspose_run(const kernel_call *c) { return conv_run(c); }
void cpu_convtranspose_release(void *state) { cpu_conv_release(state); }
onyx_status cpu_convtranspose_fork(const void *state, void **out) {
    return cpu_conv_fork(state, out);
}
void cpu_convtranspose_unfork(void *fork) { cpu_conv_unfork(fork); }
