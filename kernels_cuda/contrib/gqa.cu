// com.microsoft GroupQueryAttention on CUDA, with the semantics of the CPU's kernel
// (kernels_cpu/contrib_nlp/attention.c): the present key/value caches written on the device (only
// the new rows where the caller binds one buffer as both past and present, KF_CACHE_IN_PLACE: no
// copy of the cache per token), Q and the new K rotated first where do_rotary asks, then per
// (batch, query head, query row) softmax(scale * q K^T) V over that batch's valid keys (seqlens_k
// + 1 of them), causal from the row's position, within local_window_size, softcap applied; groups
// of query heads share a key/value head. One block per query row holds its scores in shared
// memory: keys are read once for the scores and values once for the output, in float.
// Left on the CPU (supports declines): a window-sized cache (sliding_window_cache), position_ids,
// more than GQA_MAX_BATCH sequences, more keys than a block's shared memory holds.
#include <limits.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "geometry/attention.h"
}
#include "kernels_cuda/contrib/family.h"

namespace {

enum { IN_Q, IN_K, IN_V, IN_PAST_K, IN_PAST_V, IN_SEQLENS, IN_TOTAL, IN_COS, IN_SIN, IN_POS };

constexpr int GQA_MAX_BATCH = 64; // seqlens_k travels in the launch's arguments
constexpr int GQA_THREADS = 256;
// Shared memory one block may take for its scores (Hopper allows 227 KB a block).
constexpr size_t GQA_MAX_SHARED = (size_t)200 << 10;

struct gqa_args {
    const void *q, *k, *v; // Q, and the new K and V (views into Q where packed)
    int64_t q_row, kv_row; // elements between sequence rows of Q and of K/V (per batch: * S)
    const void *past_k, *past_v;
    void *pk, *pv; // the present caches [B, Nkv, T, D]
    const void *cos, *sin;
    void *qr; // rotated Q [B, S, Nq, D] in scratch, or NULL
    void *y;  // [B, S, Nq * D]
    int64_t B, S, Nq, Nkv, D, P, T, rot;
    bool first, causal, interleaved;
    int64_t window;
    float scale, softcap;
    int32_t lens[GQA_MAX_BATCH]; // seqlens_k
};

// The position of new row s of batch b (the first prompt counts from 0, later tokens from the
// batch's past length).
__device__ __forceinline__ int64_t position(const gqa_args &a, int64_t b, int64_t s) {
    return a.first ? s : (int64_t)a.lens[b] + 1 - a.S + s;
}

// Element i of a head's row x rotated (the first rot features; the rest as they are), in float.
template <typename T>
__device__ __forceinline__ float rotated(const gqa_args &a, const T *x, int64_t i, int64_t p) {
    if (i >= a.rot) return to_compute(x[i]);
    const int64_t half = a.rot / 2;
    const T *c = (const T *)a.cos + p * half, *s = (const T *)a.sin + p * half;
    if (a.interleaved) {
        const int64_t j = i / 2;
        const float u = to_compute(x[2 * j]), w = to_compute(x[2 * j + 1]);
        const float cj = to_compute(c[j]), sj = to_compute(s[j]);
        return i % 2 == 0 ? u * cj - w * sj : w * cj + u * sj;
    }
    const int64_t j = i < half ? i : i - half;
    const float u = to_compute(x[j]), w = to_compute(x[j + half]);
    const float cj = to_compute(c[j]), sj = to_compute(s[j]);
    return i < half ? u * cj - w * sj : w * cj + u * sj;
}

// The present caches where they are not the past's buffers: each (batch, head) block's valid
// past rows copied, the rows after the new ones zeroed (the new rows: gqa_append).
template <typename T> __global__ void gqa_carry(gqa_args a) {
    const int64_t per_cache = a.B * a.Nkv * a.T * a.D;
    CUDA_GRID_LOOP(i, 2 * per_cache) {
        const int w = i >= per_cache;
        const int64_t e = i - w * per_cache, d = e % a.D, r = e / a.D % a.T, bh = e / (a.D * a.T),
                      b = bh / a.Nkv;
        const int64_t at = a.first ? 0 : (int64_t)a.lens[b] + 1 - a.S;
        if (r >= at && r < at + a.S) continue;
        const T *past = (const T *)(w ? a.past_v : a.past_k);
        T *dst = (T *)(w ? a.pv : a.pk);
        if (dst == past) continue; // bound in place: the past rows are where they belong
        dst[e] = r < at && past ? past[(bh * a.P + r) * a.D + d] : from_compute<T>(0.0f);
    }
}

// The new rows into the present caches (K rotated where asked), and Q rotated into a.qr.
template <typename T> __global__ void gqa_append(gqa_args a) {
    const int64_t kv = a.B * a.S * a.Nkv * a.D, q = a.qr ? a.B * a.S * a.Nq * a.D : 0;
    CUDA_GRID_LOOP(i, 2 * kv + q) {
        if (i >= 2 * kv) { // a rotated query element
            const int64_t e = i - 2 * kv, d = e % a.D, h = e / a.D % a.Nq, s = e / (a.D * a.Nq) % a.S,
                          b = e / (a.D * a.Nq * a.S);
            const T *x = (const T *)a.q + b * a.S * a.q_row + s * a.q_row + h * a.D;
            ((T *)a.qr)[e] = from_compute<T>(rotated(a, x, d, position(a, b, s)));
            continue;
        }
        const int w = i >= kv; // 0: key, 1: value
        const int64_t e = i - w * kv, d = e % a.D, h = e / a.D % a.Nkv, s = e / (a.D * a.Nkv) % a.S,
                      b = e / (a.D * a.Nkv * a.S);
        const T *x = (const T *)(w ? a.v : a.k) + b * a.S * a.kv_row + s * a.kv_row + h * a.D;
        const int64_t at = a.first ? 0 : (int64_t)a.lens[b] + 1 - a.S;
        T *dst = (T *)(w ? a.pv : a.pk) + ((b * a.Nkv + h) * a.T + at + s) * a.D;
        dst[d] = !w && a.rot ? from_compute<T>(rotated(a, x, d, position(a, b, s))) : x[d];
    }
}

__device__ __forceinline__ float block_sum(float v, float *red) {
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    __syncthreads(); // red is reused across calls
    if ((threadIdx.x & 31) == 0) red[threadIdx.x / 32] = v;
    __syncthreads();
    float t = 0;
    for (int k = 0; k < (int)(blockDim.x / 32); k++) t += red[k];
    return t;
}

__device__ __forceinline__ float block_max(float v, float *red) {
    for (int off = 16; off > 0; off >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
    __syncthreads();
    if ((threadIdx.x & 31) == 0) red[threadIdx.x / 32] = v;
    __syncthreads();
    float t = -INFINITY;
    for (int k = 0; k < (int)(blockDim.x / 32); k++) t = fmaxf(t, red[k]);
    return t;
}

// Block (s, h, b): query row s of head h of batch b. Shared memory (attend_shared): the query
// row, the reductions' partials (32), the scores of keys [lo, hi) and the P V partial sums.
template <typename T> __global__ void __launch_bounds__(GQA_THREADS) gqa_attend(gqa_args a) {
    extern __shared__ float sh[];
    const int64_t s = blockIdx.x, h = blockIdx.y, b = blockIdx.z, kh = h / (a.Nq / a.Nkv);
    float *qs = sh, *red = sh + a.D, *sc = red + 32;
    const T *q = a.qr ? (const T *)a.qr + ((b * a.S + s) * a.Nq + h) * a.D
                      : (const T *)a.q + b * a.S * a.q_row + s * a.q_row + h * a.D;
    for (int64_t d = threadIdx.x; d < a.D; d += blockDim.x) qs[d] = to_compute(q[d]);
    const int64_t total = (int64_t)a.lens[b] + 1;
    int64_t hi = total, lo = 0;
    if (a.causal) {
        hi = a.first ? s + 1 : total - a.S + s + 1;
        if (hi > total) hi = total;
        if (a.window > 0 && hi > a.window) lo = hi - a.window;
    }
    if (hi < lo) hi = lo;
    T *y = (T *)a.y + (b * a.S + s) * a.Nq * a.D + h * a.D;
    __syncthreads();
    if (hi == lo) { // no key: a row of zeros, as the CPU's empty softmax
        for (int64_t d = threadIdx.x; d < a.D; d += blockDim.x) y[d] = from_compute<T>(0.0f);
        return;
    }
    const T *kc = (const T *)a.pk + (b * a.Nkv + kh) * a.T * a.D;
    const T *vc = (const T *)a.pv + (b * a.Nkv + kh) * a.T * a.D;
    float mx = -INFINITY;
    for (int64_t j = lo + threadIdx.x; j < hi; j += blockDim.x) {
        const T *kr = kc + j * a.D;
        float dot = 0;
        for (int64_t d = 0; d < a.D; d++) dot += qs[d] * to_compute(kr[d]);
        float v = a.scale * dot;
        if (a.softcap > 0) v = a.softcap * tanhf(v / a.softcap);
        sc[j - lo] = v;
        mx = fmaxf(mx, v);
    }
    mx = block_max(mx, red);
    float sum = 0;
    for (int64_t j = threadIdx.x; j < hi - lo; j += blockDim.x) {
        const float e = __expf(sc[j] - mx);
        sc[j] = e;
        sum += e;
    }
    sum = block_sum(sum, red); // its barriers also publish sc
    // P V: the threads in groups of `lanes` over the head's features, each group a share of the
    // keys (reads of a value row coalesced), the groups' partial sums added after
    const int64_t lanes = a.D < (int64_t)blockDim.x ? a.D : blockDim.x,
                  groups = blockDim.x / lanes, grp = threadIdx.x / lanes, l = threadIdx.x % lanes;
    float *part = sc + a.T;
    if (grp < groups)
        for (int64_t d = l; d < a.D; d += lanes) {
            float acc = 0;
            for (int64_t j = lo + grp; j < hi; j += groups)
                acc += sc[j - lo] * to_compute(vc[j * a.D + d]);
            part[grp * a.D + d] = acc;
        }
    __syncthreads();
    const float inv = 1.0f / sum;
    for (int64_t d = threadIdx.x; d < a.D; d += blockDim.x) {
        float acc = 0;
        for (int64_t k = 0; k < groups; k++) acc += part[k * a.D + d];
        y[d] = from_compute<T>(acc * inv);
    }
}

// The query row, the reductions' partials, the scores and the groups' partial sums (at most
// max(GQA_THREADS, D) floats: groups * D <= GQA_THREADS where D <= GQA_THREADS, else D).
size_t attend_shared(const gqa_args &a) {
    const int64_t parts = a.D < GQA_THREADS ? GQA_THREADS : a.D;
    return ((size_t)a.D + 32 + (size_t)a.T + (size_t)parts) * sizeof(float);
}

struct gqa_launch {
    template <typename T> static onyx_status run(const kernel_call *c, const gqa_args &a, bool carry) {
        cudaStream_t st = cuda_stream(c);
        if (carry) {
            gqa_carry<T><<<cuda_blocks(2 * a.B * a.Nkv * a.T * a.D), CUDA_THREADS, 0, st>>>(a);
            TRY(cuda_launched("GroupQueryAttention (cache)"));
        }
        const int64_t n = 2 * a.B * a.S * a.Nkv * a.D + (a.qr ? a.B * a.S * a.Nq * a.D : 0);
        gqa_append<T><<<cuda_blocks(n), CUDA_THREADS, 0, st>>>(a);
        TRY(cuda_launched("GroupQueryAttention (append)"));
        const size_t shared = attend_shared(a);
        if (shared > 48 * 1024)
            TRY(cuda_status(cudaFuncSetAttribute(gqa_attend<T>,
                                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                 (int)shared),
                            "GroupQueryAttention shared memory"));
        dim3 grid((unsigned)a.S, (unsigned)a.Nq, (unsigned)a.B);
        gqa_attend<T><<<grid, GQA_THREADS, shared, st>>>(a);
        return cuda_launched("GroupQueryAttention");
    }
};

// The node's attributes, read once at prepare (the schema checked them).
struct gqa_attrs {
    bool causal, interleaved, rotary;
    int64_t window;
    float softcap, scale; // scale 0: 1 / sqrt(head size)
};

} // namespace

bool cuda_gqa_supports(const kernel_prep *p) {
    const type_info *q = contrib_in_type(p, IN_Q);
    if (!q || !contrib_float(q->dtype) || contrib_in_type(p, IN_POS)) return false;
    if (attr_int(p->node, "sliding_window_cache", 0) != 0) return false;
    // attention_bias, head_sink, smooth softmax and output_qk: the CPU's kernel computes them
    for (int i = IN_POS + 1; i < p->n_in; i++)
        if (p->in_type[i]) return false;
    if (attr_int(p->node, "smooth_softmax", -1) == 1) return false;
    if (p->n_out > 3 && p->node->n_outputs > 3 && p->node->outputs[3] >= 0) return false;
    // sizes a generic plan leaves open (-1) are checked at run, as the present's length always is
    const geom_attention *g = op_params_attention(p->params);
    if (!g || g->form != GEOM_ATT_GQA || g->batch > GQA_MAX_BATCH || g->q_len > 65535 ||
        g->q_heads > 65535)
        return false;
    // where the plan knows the present's length and the head size, the scores must fit a block
    const int64_t t = p->out_type[1].rank == 4 ? p->out_type[1].dims[2] : -1;
    gqa_args a;
    a.D = g->head;
    a.T = t;
    return t < 0 || g->head < 0 || attend_shared(a) <= GQA_MAX_SHARED;
}

onyx_status cuda_gqa_prepare(const kernel_prep *p, void **state) {
    gqa_attrs *at = (gqa_attrs *)malloc(sizeof *at);
    if (!at) return onyx_oom("GroupQueryAttention attributes");
    const graph_node *n = p->node;
    at->causal = attr_int(n, "causal", 1) != 0;
    at->interleaved = attr_int(n, "rotary_interleaved", 0) != 0;
    at->rotary = attr_int(n, "do_rotary", 0) != 0;
    at->window = attr_int(n, "local_window_size", -1);
    at->softcap = attr_float(n, "softcap", 0.0f);
    at->scale = attr_float(n, "scale", 0.0f);
    *state = at;
    return ONYX_OK;
}

onyx_status cuda_gqa_run(const kernel_call *c) {
    const gqa_attrs *at = (const gqa_attrs *)c->state;
    const tensor *Q = kernel_input(c, IN_Q), *K = kernel_input(c, IN_K), *V = kernel_input(c, IN_V),
                 *PK = kernel_input(c, IN_PAST_K), *PV = kernel_input(c, IN_PAST_V),
                 *SL = kernel_input(c, IN_SEQLENS), *TS = kernel_input(c, IN_TOTAL);
    if (!SL || !TS || TS->numel != 1 || TS->dtype != ONYX_INT32)
        return onyx_error(ONYX_ERR_SHAPE, "total_sequence_length must be one int32");
    const int64_t total = ((const int32_t *)TS->data)[0];
    const geom_attention *g;
    TRY(kernel_attention(c->params, GEOM_ATT_GQA, Q ? Q->numel : 0, &g));
    geom_attention d;
    geom_msg m;
    GEOM_TRY(m, geom_attention_gqa_total(g, total, &d, &m));
    if (d.window_cache > 0)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "GroupQueryAttention on CUDA: sliding_window_cache");
    tensor *Y = kernel_output(c, 0), *OK_ = kernel_output(c, 1), *OV = kernel_output(c, 2);
    if (kernel_output(c, 3))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "output output_qk is not supported");
    const int64_t B = d.batch, S = d.q_len, Nq = d.q_heads, Nkv = d.kv_heads, D = d.head,
                  P = d.past_len, T = d.total_len;
    // the launch's grid: rows on x, heads on y, batch on z
    if (B > GQA_MAX_BATCH || Nq > 65535 || S > INT_MAX)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "GroupQueryAttention on CUDA: batch %lld (at most "
                          "%d), %lld heads (65535) or %lld rows", (long long)B, GQA_MAX_BATCH,
                          (long long)Nq, (long long)S);
    if (SL->dtype != ONYX_INT32 || SL->numel != B)
        return onyx_error(ONYX_ERR_SHAPE, "seqlens_k must be int32 of %lld values", (long long)B);
    gqa_args a;
    memset(&a, 0, sizeof a);
    const bool first = S == total;
    for (int64_t b = 0; b < B; b++) {
        const int32_t len = ((const int32_t *)SL->data)[b];
        const int64_t tb = (int64_t)len + 1, past = first ? 0 : tb - S;
        if (tb < 1 || tb > T || past < 0 || past + S > T || (!first && past > P))
            return onyx_error(ONYX_ERR_SHAPE,
                              "seqlens_k[%lld] = %lld does not fit sequence length %lld, "
                              "total_sequence_length %lld and a past of %lld",
                              (long long)b, (long long)len, (long long)S, (long long)total,
                              (long long)P);
        a.lens[b] = len;
    }
    a.B = B, a.S = S, a.Nq = Nq, a.Nkv = Nkv, a.D = D, a.P = P, a.T = T;
    if (attend_shared(a) > GQA_MAX_SHARED)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "GroupQueryAttention on CUDA: %lld keys exceed a "
                          "block's shared memory", (long long)T);
    const size_t es = dtype_size(Q->dtype);
    const int64_t qw = d.qkv_packed ? (Nq + 2 * Nkv) * D : Nq * D;
    a.q = Q->data;
    a.q_row = qw;
    if (d.qkv_packed) {
        a.k = (const char *)Q->data + (size_t)(Nq * D) * es;
        a.v = (const char *)Q->data + (size_t)((Nq + Nkv) * D) * es;
        a.kv_row = qw;
    } else {
        a.k = K->data;
        a.v = V->data;
        a.kv_row = Nkv * D;
    }
    a.past_k = PK ? PK->data : NULL;
    a.past_v = PV ? PV->data : NULL;
    a.y = Y->data;
    a.first = first;
    a.causal = at->causal;
    a.interleaved = at->interleaved;
    a.window = at->window;
    a.softcap = at->softcap;
    a.scale = at->scale != 0.0f ? at->scale : D > 0 ? 1.0f / sqrtf((float)D) : 1.0f;
    const bool rotary = at->rotary;
    // scratch: the present caches the caller did not ask for, then the rotated Q
    const size_t cache = (size_t)(B * Nkv * T * D) * es;
    const size_t own = (OK_ ? 0 : cache) + (OV ? 0 : cache);
    const size_t rq = rotary ? (size_t)(B * S * Nq * D) * es : 0;
    char *buf = NULL;
    if (own + rq) TRY(cuda_scratch(c, own + rq, (void **)&buf));
    a.pk = OK_ ? OK_->data : buf;
    a.pv = OV ? OV->data : buf + (OK_ ? 0 : cache);
    if (rotary) {
        const tensor *cs = kernel_input(c, IN_COS), *sn = kernel_input(c, IN_SIN);
        a.cos = cs->data;
        a.sin = sn->data;
        a.rot = d.rot;
        a.qr = buf + own;
        for (int64_t b = 0; b < B; b++) // the positions the caches must cover
            if ((first ? S - 1 : (int64_t)a.lens[b]) >= d.max_pos)
                return onyx_error(ONYX_ERR_RUNTIME,
                                  "position %lld is outside the %lld rows of the cos/sin caches",
                                  (long long)(first ? S - 1 : (int64_t)a.lens[b]),
                                  (long long)d.max_pos);
    }
    const bool in_place = a.pk == a.past_k || a.pv == a.past_v;
    if (in_place && P != T)
        return onyx_error(ONYX_ERR_SHAPE,
                          "present shares the past's buffer but holds %lld rows, not its %lld",
                          (long long)T, (long long)P);
    if (Y->numel == 0) return ONYX_OK;
    // where a present is the past's own buffer its past rows are already in place
    const bool carry = a.pk != a.past_k || a.pv != a.past_v;
    CONTRIB_DISPATCH(Q->dtype, gqa_launch, c, a, carry)
    return onyx_error(ONYX_ERR_UNSUPPORTED, "GroupQueryAttention on CUDA: type %d", (int)Q->dtype);
}
