// Attention (ai.onnx 23, 24, 25) on CUDA as one fused flash-attention kernel: a block takes a run
// of query rows that share one kv head, streams K/V tiles through shared memory with an online
// softmax (running max and sum per row in registers) and writes Y once. Semantics mirror
// kernels_cpu/attention/attention.c (onnx 1.23's: a row no key is left to is 0; the causal band and
// v25's window aligned at nonpad_kv_seqlen - q_len); past/present caches and the Q*K^T output stay
// on the CPU.
// The same kernel runs attention spelled out (MatMul, scale, mask, Softmax, MatMul) that the
// planner fused (core/fuse.c), reading Q, K and V and writing Y through the chain's views.
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "core/fuse_chain.h"
}
#include "geometry/attention.h"
#include "kernels_cuda/common.cuh"

namespace att {
namespace {

constexpr int WARPS = 8;
constexpr int THREADS = WARPS * 32;
constexpr int BK = 64;      // keys per tile
constexpr int SC = BK / 32; // score columns per lane
constexpr int MAX_HEAD = 256;

// strides of batch, head, row: [B, H, S, Dh] (4-D) or [B, S, H*Dh] (3-D)
void view_strides(bool packed, int64_t H, int64_t S, int64_t Dh, int64_t *s) {
    s[0] = H * S * Dh;
    s[1] = packed ? Dh : S * Dh;
    s[2] = packed ? H * Dh : Dh;
}

struct att_args {
    const void *q, *k, *v;
    void *y;
    const void *mask;
    bool has_mask;
    int mask_dt;
    const int64_t *nonpad; // device, [B]; NULL without nonpad_kv_seqlen
    int64_t qs[3], ks[3], vs[3], ys[3];
    int64_t ms[3]; // mask strides of batch, query head, query row (0 along broadcast dims)
    int64_t mlen;  // the mask's last dim
    bool mbcast;   // v23: a last dim of 1 broadcasts over the keys (else short masks pad -inf)
    bool causal;
    int64_t left, right; // v25's window sides; -1: unbounded (args_of sets both)
    bool zero_masked; // the Attention op: a row every key is masked from is 0 (a fused chain's
                      // Softmax makes it NaN)
    bool nan_to_zero; // a fused chain's Where(IsNaN(P), 0, P): a row whose softmax is NaN is 0
    int64_t batch;
    int kv_heads, group, q_len, total, D, Dv;
    int Dp;               // D rounded up to 4 (zero padded in shared memory)
    int qstride, kvstride; // shared row strides in floats, each 4 * odd: conflict-free float4
    int row_blocks;       // blocks of rows per (batch, kv head)
    bool vec_qk, vec_v; // tensor-core kernel: Q/K and V rows take 16-byte loads
    bool p16;           // tensor-core kernel: P in one 16-bit operand, no high/low pair
    float scale, softcap;
};

__device__ __forceinline__ float mask_at(const void *m, int dt, int64_t i) {
    switch (dt) {
    case ONYX_BOOL: return ((const uint8_t *)m)[i] ? 0.0f : -INFINITY;
    case ONYX_FLOAT: return ((const float *)m)[i];
    case ONYX_FLOAT16: return __half2float(((const __half *)m)[i]);
    case ONYX_BFLOAT16: return __bfloat162float(((const __nv_bfloat16 *)m)[i]);
    case ONYX_DOUBLE: return (float)((const double *)m)[i];
    // integers go through double as the CPU's conversion does
    case ONYX_INT8: return (float)(double)((const int8_t *)m)[i];
    case ONYX_INT16: return (float)(double)((const int16_t *)m)[i];
    case ONYX_INT32: return (float)(double)((const int32_t *)m)[i];
    case ONYX_INT64: return (float)(double)((const int64_t *)m)[i];
    case ONYX_UINT8: return (float)(double)((const uint8_t *)m)[i];
    case ONYX_UINT16: return (float)(double)((const uint16_t *)m)[i];
    case ONYX_UINT32: return (float)(double)((const uint32_t *)m)[i];
    case ONYX_UINT64: return (float)(double)((const uint64_t *)m)[i];
    default: return 0.0f;
    }
}

// Virtual row v of a (batch, kv head) is query position v % Lq of query head
// kvh * group + v / Lq: the heads of a group share the block's K/V tiles.
__device__ __forceinline__ void row_of(const att_args &a, int kvh, int v, int *h, int *qi) {
    int g = v / a.q_len;
    *h = kvh * a.group + g;
    *qi = v - g * a.q_len;
}

__device__ __forceinline__ int64_t sat_add(int64_t x, int64_t y) {
    if (y > 0 && x > INT64_MAX - y) return INT64_MAX;
    if (y < 0 && x < INT64_MIN - y) return INT64_MIN;
    return x + y;
}

// The keys [lo, hi) row (batch b, query position qi) may attend to past the causal band, the
// window and the valid lengths, np = nonpad_kv_seqlen[b] (hi == lo: none). The band and the window
// are aligned at the row's absolute position qi + offset, offset np - q_len with nonpad_kv_seqlen
// (an external cache), else 0 (past caches stay on the CPU); saturating, as any int64 may come.
struct key_range {
    int lo, hi;
};
__device__ __forceinline__ key_range row_keys(const att_args &a, int64_t np, int qi) {
    const int64_t p = a.nonpad ? sat_add(sat_add(np, -(int64_t)a.q_len), qi) : qi;
    int64_t l = 0, e = a.total;
    if (a.left >= 0) l = max(l, sat_add(p, -a.left));
    if (a.causal) e = min(e, sat_add(p, 1));
    if (a.right >= 0) e = min(e, sat_add(sat_add(p, a.right), 1));
    if (a.nonpad) e = min(e, np);
    l = min(l, (int64_t)a.total);
    return key_range{(int)l, (int)max(e, l)};
}

// The keys of the virtual rows [v0, v1] of kv head kvh: the first row's lower bound, the last's
// upper (a row's keys move right with its position; rows of several heads span every position).
__device__ __forceinline__ key_range block_keys(const att_args &a, int64_t np, int kvh, int v0,
                                                int v1) {
    int h0, q0, h1, q1;
    row_of(a, kvh, v0, &h0, &q0);
    row_of(a, kvh, v1, &h1, &q1);
    return key_range{row_keys(a, np, h0 == h1 ? q0 : 0).lo,
                     row_keys(a, np, h0 == h1 ? q1 : a.q_len - 1).hi};
}

// Score of key col from the raw dot product: scale, softcap, mask (the CPU's order); keys outside
// the row's range are -inf, and so (for the Attention op, whose fully-masked guard looks at the
// bias) are those the mask closes, whatever the product.
__device__ __forceinline__ float score(const att_args &a, float dot, int col, key_range r,
                                       int64_t moff) {
    if (col < r.lo || col >= r.hi) return -INFINITY;
    float x = dot * a.scale;
    if (a.softcap > 0.0f) x = a.softcap * tanhf(x / a.softcap);
    if (a.has_mask) {
        const float m = a.mbcast        ? mask_at(a.mask, a.mask_dt, moff)
                        : col < a.mlen ? mask_at(a.mask, a.mask_dt, moff + col)
                                       : -INFINITY;
        if (a.zero_masked && m == -INFINITY) return -INFINITY;
        x += m;
    }
    return x;
}

__device__ __forceinline__ float warp_max(float x) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, o));
    return x;
}

__device__ __forceinline__ float warp_sum(float x) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
    return x;
}

// One block: BQ = WARPS * RPT virtual rows of one (batch, kv head); warp w owns rows
// w + WARPS * i, whose scores (lanes across keys), softmax state and outputs (lanes across
// value columns, VC per lane) it keeps in registers, so only K/V loads need the whole block.
template <typename T, int RPT, int VC>
__global__ void __launch_bounds__(THREADS, RPT == 1 ? 3 : 2) flash(att_args a) {
    constexpr int BQ = WARPS * RPT;
    extern __shared__ float4 smem4[];
    float *qsh = (float *)smem4;            // [BQ][qstride]
    float *kvsh = qsh + BQ * a.qstride;     // [BK][kvstride], K then V of each tile
    float *psh = kvsh + BK * a.kvstride;    // [BQ][BK] probabilities
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;

    // heavy (late, under a causal mask) row blocks first
    const int rb = a.row_blocks - 1 - (int)(blockIdx.x % (unsigned)a.row_blocks);
    const int64_t bk = blockIdx.x / (unsigned)a.row_blocks;
    const int kvh = (int)(bk % a.kv_heads);
    const int64_t b = bk / a.kv_heads;
    const int rows = a.group * a.q_len, v0 = rb * BQ;
    const int64_t np = a.nonpad ? a.nonpad[b] : 0;

    // keys any row of the block may see
    const key_range kb = block_keys(a, np, kvh, v0, min(v0 + BQ, rows) - 1);
    const int kbeg = kb.lo, kend = kb.hi;

    key_range lim[RPT];
#pragma unroll
    for (int i = 0; i < RPT; i++) {
        int r = warp + WARPS * i, v = v0 + r, h, qi;
        bool ok = v < rows;
        row_of(a, kvh, ok ? v : 0, &h, &qi);
        lim[i] = ok ? row_keys(a, np, qi) : key_range{0, 0};
        const T *src = (const T *)a.q + b * a.qs[0] + h * a.qs[1] + qi * a.qs[2];
        for (int d = lane; d < a.Dp; d += 32)
            qsh[r * a.qstride + d] = ok && d < a.D ? (float)to_compute(src[d]) : 0.0f;
    }

    float m[RPT], l[RPT], o[RPT][VC];
#pragma unroll
    for (int i = 0; i < RPT; i++) {
        m[i] = -INFINITY;
        l[i] = 0.0f;
#pragma unroll
        for (int c = 0; c < VC; c++) o[i][c] = 0.0f;
    }

    const T *kbase = (const T *)a.k + b * a.ks[0] + kvh * a.ks[1];
    const T *vbase = (const T *)a.v + b * a.vs[0] + kvh * a.vs[1];
    for (int k0 = kbeg; k0 < kend; k0 += BK) {
        const int nk = min(BK, kend - k0);
        __syncthreads(); // the previous tile's V is consumed
        for (int j = warp; j < BK; j += WARPS) {
            const T *src = kbase + (int64_t)(k0 + j) * a.ks[2];
            bool ok = j < nk;
            for (int d = lane; d < a.Dp; d += 32)
                kvsh[j * a.kvstride + d] = ok && d < a.D ? (float)to_compute(src[d]) : 0.0f;
        }
        __syncthreads();

        float s[RPT][SC];
#pragma unroll
        for (int i = 0; i < RPT; i++)
#pragma unroll
            for (int jj = 0; jj < SC; jj++) s[i][jj] = 0.0f;
#pragma unroll 2
        for (int d = 0; d < a.Dp; d += 4) {
            float4 kk[SC];
#pragma unroll
            for (int jj = 0; jj < SC; jj++)
                kk[jj] = *(const float4 *)&kvsh[(lane + 32 * jj) * a.kvstride + d];
#pragma unroll
            for (int i = 0; i < RPT; i++) {
                float4 qq = *(const float4 *)&qsh[(warp + WARPS * i) * a.qstride + d];
#pragma unroll
                for (int jj = 0; jj < SC; jj++) {
                    float t = s[i][jj];
                    t = fmaf(qq.x, kk[jj].x, t);
                    t = fmaf(qq.y, kk[jj].y, t);
                    t = fmaf(qq.z, kk[jj].z, t);
                    t = fmaf(qq.w, kk[jj].w, t);
                    s[i][jj] = t;
                }
            }
        }

        // the scores, then the online softmax update of each row
#pragma unroll
        for (int i = 0; i < RPT; i++) {
            const int r = warp + WARPS * i;
            int64_t moff = 0;
            if (a.has_mask) {
                int h, qi;
                row_of(a, kvh, min(v0 + r, rows - 1), &h, &qi);
                moff = b * a.ms[0] + (int64_t)h * a.ms[1] + (int64_t)qi * a.ms[2];
            }
            float mx = -INFINITY;
#pragma unroll
            for (int jj = 0; jj < SC; jj++) {
                const int col = k0 + lane + 32 * jj;
                const float x = score(a, s[i][jj], col, lim[i], moff);
                s[i][jj] = x;
                mx = fmaxf(mx, x);
            }
            mx = warp_max(mx);
            const float mnew = fmaxf(m[i], mx);
            float corr = 1.0f, sum = 0.0f;
            if (mnew != -INFINITY) {
                corr = expf(m[i] - mnew); // 0 while the row had nothing (m = -inf)
#pragma unroll
                for (int jj = 0; jj < SC; jj++) {
                    float p = expf(s[i][jj] - mnew);
                    s[i][jj] = p;
                    sum += p;
                }
            } else {
#pragma unroll
                for (int jj = 0; jj < SC; jj++) s[i][jj] = 0.0f;
            }
#pragma unroll
            for (int jj = 0; jj < SC; jj++) psh[r * BK + lane + 32 * jj] = s[i][jj];
            sum = warp_sum(sum);
            l[i] = l[i] * corr + sum;
            m[i] = mnew;
#pragma unroll
            for (int c = 0; c < VC; c++) o[i][c] *= corr;
        }

        __syncthreads(); // every warp is done with K
        for (int j = warp; j < BK; j += WARPS) {
            const T *src = vbase + (int64_t)(k0 + j) * a.vs[2];
            bool ok = j < nk;
            // rows past the tile are zeros: probability 0 times stale data could be NaN
            for (int d = lane; d < a.Dv; d += 32)
                kvsh[j * a.kvstride + d] = ok ? (float)to_compute(src[d]) : 0.0f;
        }
        __syncthreads();

        const int nk4 = (nk + 3) & ~3;
        for (int j = 0; j < nk4; j += 4) {
            float vv[4][VC];
#pragma unroll
            for (int t = 0; t < 4; t++)
#pragma unroll
                for (int c = 0; c < VC; c++) vv[t][c] = kvsh[(j + t) * a.kvstride + lane + 32 * c];
#pragma unroll
            for (int i = 0; i < RPT; i++) {
                float4 pp = *(const float4 *)&psh[(warp + WARPS * i) * BK + j];
#pragma unroll
                for (int c = 0; c < VC; c++) {
                    float t = o[i][c];
                    t = fmaf(pp.x, vv[0][c], t);
                    t = fmaf(pp.y, vv[1][c], t);
                    t = fmaf(pp.z, vv[2][c], t);
                    t = fmaf(pp.w, vv[3][c], t);
                    o[i][c] = t;
                }
            }
        }
    }

#pragma unroll
    for (int i = 0; i < RPT; i++) {
        const int v = v0 + warp + WARPS * i;
        if (v >= rows) continue;
        int h, qi;
        row_of(a, kvh, v, &h, &qi);
        T *dst = (T *)a.y + b * a.ys[0] + (int64_t)h * a.ys[1] + (int64_t)qi * a.ys[2];
        // a row with no key left (masked out entirely, or no key in reach) is 0 for the op and
        // NaN in a chain, as the CPU's; zeros where the chain zeroes NaN probabilities (NaN
        // scores make the sum NaN)
        const bool zero = (a.zero_masked && m[i] == -INFINITY) ||
                          (a.nan_to_zero && (m[i] == -INFINITY || !(l[i] > 0.0f)));
        const float inv = zero ? 0.0f : m[i] == -INFINITY ? NAN : 1.0f / l[i];
#pragma unroll
        for (int c = 0; c < VC; c++) {
            const int col = lane + 32 * c;
            if (col < a.Dv) dst[col] = from_compute<T>(zero ? 0.0f : o[i][c] * inv);
        }
    }
}

// ---- tensor cores: float16 / bfloat16 with head sizes up to 128, laid out as FlashAttention-2
// does. Four warps of 16 query rows; each warp keeps its Q fragments, its scores, probabilities
// and output accumulators in registers (mma.sync m16n8k16, float accumulation), so a row's
// softmax needs only the four lanes that hold it. K and V tiles of BK keys pass through shared
// memory and reach the MMAs through ldmatrix. P goes to the MMA as a 16-bit high part plus the
// 16-bit rest, so that it keeps about float's precision (V is exact in its own type).

constexpr int TC_WARPS = 4;
constexpr int TC_THREADS = TC_WARPS * 32;
constexpr int TC_BQ = TC_WARPS * 16;
constexpr int TC_HEAD = 128;

// Shared row stride of a tile whose rows are DK 16-bit values: 16 bytes more, so that the eight
// rows an ldmatrix reads fall on distinct banks.
template <int DK> __host__ __device__ constexpr int tc_ld() { return DK + 8; }

// Shared bytes: the Q tile, then one K and one V tile (PIPE: two of each).
template <typename T, int DK, bool PIPE> constexpr size_t tc_smem_bytes() {
    return sizeof(T) * (size_t)(TC_BQ + (PIPE ? 4 : 2) * BK) * tc_ld<DK>();
}

__device__ __forceinline__ uint32_t smem_addr(const void *p) {
    return (uint32_t)__cvta_generic_to_shared(p);
}

// Four 8x8 16-bit matrices; lanes 8i..8i+7 give the row addresses of matrix i.
__device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], const void *p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p))
                 : "memory");
}

// The same, each matrix transposed.
__device__ __forceinline__ void ldsm_x4_trans(uint32_t (&r)[4], const void *p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p))
                 : "memory");
}

// d += a b for a 16x16 A (row-major fragment), a 16x8 B (column-major), float accumulators.
template <typename T>
__device__ __forceinline__ void mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                         uint32_t b1);
template <>
__device__ __forceinline__ void mma16816<__half>(float (&d)[4], const uint32_t (&a)[4],
                                                 uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
template <>
__device__ __forceinline__ void mma16816<__nv_bfloat16>(float (&d)[4], const uint32_t (&a)[4],
                                                        uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// x and y (x in the low half) as two 16-bit values, and what rounding them left behind.
template <typename T> __device__ __forceinline__ void split2(float x, float y, uint32_t &hi,
                                                             uint32_t &lo);
template <>
__device__ __forceinline__ void split2<__half>(float x, float y, uint32_t &hi, uint32_t &lo) {
    const __half2 h = __floats2half2_rn(x, y);
    const float2 f = __half22float2(h);
    const __half2 r = __floats2half2_rn(x - f.x, y - f.y);
    hi = *(const uint32_t *)&h;
    lo = *(const uint32_t *)&r;
}
template <>
__device__ __forceinline__ void split2<__nv_bfloat16>(float x, float y, uint32_t &hi,
                                                      uint32_t &lo) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(x, y);
    const float2 f = __bfloat1622float2(h);
    const __nv_bfloat162 r = __floats2bfloat162_rn(x - f.x, y - f.y);
    hi = *(const uint32_t *)&h;
    lo = *(const uint32_t *)&r;
}

// 16 bytes from global to shared memory without passing through registers; src_bytes 0 writes
// zeros (src is then not read, but must be a valid address).
__device__ __forceinline__ void cp_async16(void *dst, const void *src, int src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)),
                 "l"(src), "r"(src_bytes)
                 : "memory");
}

__device__ __forceinline__ void cp_async_commit() {
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Waits until at most N of this thread's committed groups are in flight.
template <int N> __device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// A K or V tile of BK rows (row j at base + j * stride, the first nk of them real) queued into
// shared memory with cp.async, zeros past nk rows and n columns (16-byte rows: n % 8 == 0).
template <typename T, int DK>
__device__ __forceinline__ void tc_queue_rows(T *dst, const T *base, int64_t stride, int nk,
                                              int n) {
    constexpr int CH = DK / 8;
    for (int i = threadIdx.x; i < BK * CH; i += TC_THREADS) {
        const int r = i / CH, c = (i - r * CH) * 8;
        const bool real = r < nk && c < n;
        cp_async16(dst + r * tc_ld<DK>() + c, real ? base + r * stride + c : base, real ? 16 : 0);
    }
}

// Rows [0, nrows) of a tile into shared memory, eight values a step over the block's threads:
// the first n values of row r from src_of(r) (NULL: a row of zeros), zeros up to DK. vec: 16-byte
// loads (n % 8 == 0 and every row 16-byte aligned).
template <typename T, int DK, typename F>
__device__ __forceinline__ void tc_load_rows(T *dst, int nrows, const F &src_of, int n, bool vec) {
    constexpr int CH = DK / 8;
    const T zero = from_compute<T>(0.0f);
    for (int i = threadIdx.x; i < nrows * CH; i += TC_THREADS) {
        const int r = i / CH, c = (i - r * CH) * 8;
        const T *src = src_of(r);
        T *d = dst + r * tc_ld<DK>() + c;
        if (vec) {
            uint4 val = make_uint4(0, 0, 0, 0);
            if (src && c < n) val = *(const uint4 *)(src + c);
            *(uint4 *)d = val;
        } else {
#pragma unroll
            for (int e = 0; e < 8; e++) d[e] = src && c + e < n ? src[c + e] : zero;
        }
    }
}

// PIPE (16-byte rows only): K and V tiles double-buffered, the next one queued with cp.async
// while the block computes on this one, instead of loaded between two barriers.
template <typename T, int DK, bool PIPE>
__global__ void __launch_bounds__(TC_THREADS) flash_tc(att_args a) {
    constexpr int LD = tc_ld<DK>();
    constexpr int NT = BK / 8; // a score tile's 8-key column tiles
    constexpr int OT = DK / 8; // the output's 8-column tiles
    extern __shared__ __align__(16) unsigned char tcsm[];
    T *qs = (T *)tcsm;            // [TC_BQ][LD]
    T *const kv0 = qs + TC_BQ * LD; // K [BK][LD], V [BK][LD] (PIPE: then the second pair)
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, w16 = warp * 16;
    const int g = lane >> 2, t = lane & 3; // the fragments' row and column pair

    const int rb = a.row_blocks - 1 - (int)(blockIdx.x % (unsigned)a.row_blocks);
    const int64_t bk = blockIdx.x / (unsigned)a.row_blocks;
    const int kvh = (int)(bk % a.kv_heads);
    const int64_t b = bk / a.kv_heads;
    const int rows = a.group * a.q_len, v0 = rb * TC_BQ;
    const int64_t np = a.nonpad ? a.nonpad[b] : 0;
    const key_range kb = block_keys(a, np, kvh, v0, min(v0 + TC_BQ, rows) - 1);
    const int kbeg = kb.lo, kend = kb.hi;

    const T *kbase = (const T *)a.k + b * a.ks[0] + kvh * a.ks[1];
    const T *vbase = (const T *)a.v + b * a.vs[0] + kvh * a.vs[1];
    auto queue_tile = [&](int k0, T *kv) {
        const int nk = min(BK, kend - k0);
        tc_queue_rows<T, DK>(kv, kbase + (int64_t)k0 * a.ks[2], a.ks[2], nk, a.D);
        tc_queue_rows<T, DK>(kv + BK * LD, vbase + (int64_t)k0 * a.vs[2], a.vs[2], nk, a.Dv);
        cp_async_commit();
    };
    if (PIPE && kend > kbeg) queue_tile(kbeg, kv0); // in flight while Q loads

    const T *qbase = (const T *)a.q + b * a.qs[0];
    tc_load_rows<T, DK>(
        qs, TC_BQ,
        [&](int r) -> const T * {
            int h, qi;
            if (v0 + r >= rows) return NULL;
            row_of(a, kvh, v0 + r, &h, &qi);
            return qbase + h * a.qs[1] + qi * a.qs[2];
        },
        a.D, a.vec_qk);

    // this lane's two rows: w16 + g and w16 + g + 8
    key_range lim[2];
    int64_t moff[2];
    float m[2], l[2];
#pragma unroll
    for (int i = 0; i < 2; i++) {
        const int v = v0 + w16 + g + 8 * i;
        int h, qi;
        row_of(a, kvh, min(v, rows - 1), &h, &qi);
        lim[i] = v < rows ? row_keys(a, np, qi) : key_range{0, 0};
        moff[i] = b * a.ms[0] + (int64_t)h * a.ms[1] + (int64_t)qi * a.ms[2];
        m[i] = -INFINITY;
        l[i] = 0.0f;
    }
    float o[OT][4];
#pragma unroll
    for (int j = 0; j < OT; j++) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.0f;

    __syncthreads();
    uint32_t qf[DK / 16][4]; // A fragments of the warp's 16 rows of Q
#pragma unroll
    for (int kd = 0; kd < DK / 16; kd++)
        ldsm_x4(qf[kd], qs + (w16 + (lane & 15)) * LD + 16 * kd + 8 * (lane >> 4));

    for (int k0 = kbeg, it = 0; k0 < kend; k0 += BK, it++) {
        const int nk = min(BK, kend - k0);
        T *ks = kv0 + (PIPE ? (it & 1) * 2 * BK * LD : 0), *vs = ks + BK * LD;
        // rows past the tile are zeros: probability 0 times stale data could be NaN
        if (PIPE) {
            // the other pair was consumed before the barrier that ended the last tile
            if (k0 + BK < kend) {
                queue_tile(k0 + BK, kv0 + ((it + 1) & 1) * 2 * BK * LD);
                cp_async_wait<1>();
            } else {
                cp_async_wait<0>();
            }
            __syncthreads();
        } else {
            __syncthreads(); // the previous tile is consumed
            tc_load_rows<T, DK>(
                ks, BK,
                [&](int j) -> const T * {
                    return j < nk ? kbase + (int64_t)(k0 + j) * a.ks[2] : NULL;
                },
                a.D, a.vec_qk);
            tc_load_rows<T, DK>(
                vs, BK,
                [&](int j) -> const T * {
                    return j < nk ? vbase + (int64_t)(k0 + j) * a.vs[2] : NULL;
                },
                a.Dv, a.vec_v);
            __syncthreads();
        }

        // S = Q K^T: s[j] holds rows g and g + 8 at keys 8j + 2t and 8j + 2t + 1
        float s[NT][4];
#pragma unroll
        for (int j = 0; j < NT; j++) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
#pragma unroll
        for (int kd = 0; kd < DK / 16; kd++) {
#pragma unroll
            for (int jp = 0; jp < NT / 2; jp++) {
                // K's rows are K^T's columns: matrices (keys 16jp, 16jp + 8) x (d 16kd, +8)
                uint32_t kb[4];
                ldsm_x4(kb, ks + (16 * jp + (lane & 7) + 8 * (lane >> 4)) * LD + 16 * kd +
                                8 * ((lane >> 3) & 1));
                mma16816<T>(s[2 * jp], qf[kd], kb[0], kb[1]);
                mma16816<T>(s[2 * jp + 1], qf[kd], kb[2], kb[3]);
            }
        }

        // the online softmax of the lane's two rows; a row's four lanes agree on its max
#pragma unroll
        for (int i = 0; i < 2; i++) {
            float mx = -INFINITY;
#pragma unroll
            for (int j = 0; j < NT; j++)
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    const float x =
                        score(a, s[j][2 * i + e], k0 + 8 * j + 2 * t + e, lim[i], moff[i]);
                    s[j][2 * i + e] = x;
                    mx = fmaxf(mx, x);
                }
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
            const float mnew = fmaxf(m[i], mx);
            float corr = 1.0f, sum = 0.0f;
#pragma unroll
            for (int j = 0; j < NT; j++)
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    const float p = mnew == -INFINITY ? 0.0f : expf(s[j][2 * i + e] - mnew);
                    s[j][2 * i + e] = p;
                    sum += p;
                }
            if (mnew != -INFINITY) corr = expf(m[i] - mnew); // 0 while the row had nothing
            l[i] = l[i] * corr + sum; // this lane's part; the four are added at the end
            m[i] = mnew;
#pragma unroll
            for (int j = 0; j < OT; j++) {
                o[j][2 * i] *= corr;
                o[j][2 * i + 1] *= corr;
            }
        }

        // O += P V, 16 keys a step: the score fragments of key tiles 2kk and 2kk + 1 are the A
        // fragment of P as they lie (p16: the high parts alone)
#pragma unroll
        for (int kk = 0; kk < BK / 16; kk++) {
            uint32_t ph[4], pl[4];
            split2<T>(s[2 * kk][0], s[2 * kk][1], ph[0], pl[0]);
            split2<T>(s[2 * kk][2], s[2 * kk][3], ph[1], pl[1]);
            split2<T>(s[2 * kk + 1][0], s[2 * kk + 1][1], ph[2], pl[2]);
            split2<T>(s[2 * kk + 1][2], s[2 * kk + 1][3], ph[3], pl[3]);
#pragma unroll
            for (int jp = 0; jp < OT / 2; jp++) {
                // V's rows transposed: matrices (keys 16kk, 16kk + 8) x (columns 16jp, +8)
                uint32_t vb[4];
                ldsm_x4_trans(vb, vs + (16 * kk + (lane & 7) + 8 * ((lane >> 3) & 1)) * LD +
                                      16 * jp + 8 * (lane >> 4));
                mma16816<T>(o[2 * jp], ph, vb[0], vb[1]);
                mma16816<T>(o[2 * jp + 1], ph, vb[2], vb[3]);
                if (!a.p16) {
                    mma16816<T>(o[2 * jp], pl, vb[0], vb[1]);
                    mma16816<T>(o[2 * jp + 1], pl, vb[2], vb[3]);
                }
            }
        }
        if (PIPE) __syncthreads(); // this pair is queued into again two tiles on
    }

#pragma unroll
    for (int i = 0; i < 2; i++) {
        float sum = l[i];
        sum += __shfl_xor_sync(0xffffffffu, sum, 1);
        sum += __shfl_xor_sync(0xffffffffu, sum, 2);
        const int v = v0 + w16 + g + 8 * i;
        if (v >= rows) continue;
        int h, qi;
        row_of(a, kvh, v, &h, &qi);
        T *dst = (T *)a.y + b * a.ys[0] + (int64_t)h * a.ys[1] + (int64_t)qi * a.ys[2];
        const bool zero = (a.zero_masked && m[i] == -INFINITY) ||
                          (a.nan_to_zero && (m[i] == -INFINITY || !(sum > 0.0f)));
        const float inv = zero ? 0.0f : m[i] == -INFINITY ? NAN : 1.0f / sum;
#pragma unroll
        for (int j = 0; j < OT; j++)
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const int col = 8 * j + 2 * t + e;
                if (col < a.Dv) dst[col] = from_compute<T>(zero ? 0.0f : o[j][2 * i + e] * inv);
            }
    }
}

template <typename T, int DK, bool PIPE> onyx_status launch_tc(const kernel_call *c, att_args a) {
    auto fn = flash_tc<T, DK, PIPE>;
    constexpr size_t smem = tc_smem_bytes<T, DK, PIPE>();
    TRY(cuda_status(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)smem),
                    "Attention: shared memory size"));
    // 16-byte row loads where every row starts 16-byte aligned: 8 | D, aligned bases and strides
    // (an Attention node's are multiples of the head sizes; a fused chain's views' may not be)
    auto rows8 = [](const int64_t *st) {
        return st[0] % 8 == 0 && st[1] % 8 == 0 && st[2] % 8 == 0;
    };
    a.vec_qk = a.D % 8 == 0 && (uintptr_t)a.q % 16 == 0 && (uintptr_t)a.k % 16 == 0 &&
               rows8(a.qs) && rows8(a.ks);
    a.vec_v = a.Dv % 8 == 0 && (uintptr_t)a.v % 16 == 0 && rows8(a.vs);
    if (PIPE && !(a.vec_qk && a.vec_v)) return launch_tc<T, DK, false>(c, a);
    a.row_blocks = (int)(((int64_t)a.group * a.q_len + TC_BQ - 1) / TC_BQ);
    const int64_t grid = (int64_t)a.batch * a.kv_heads * a.row_blocks;
    if (grid > INT_MAX) return onyx_error(ONYX_ERR_UNSUPPORTED, "Attention: too many blocks");
    fn<<<(unsigned)grid, TC_THREADS, smem, cuda_stream(c)>>>(a);
    return cuda_launched("Attention");
}

// Shared bytes of the CUDA-core kernel's carve-up.
size_t smem_bytes(int bq, int qstride, int kvstride) {
    return sizeof(float) * ((size_t)bq * qstride + (size_t)BK * kvstride + (size_t)bq * BK);
}

// the smallest stride >= n that is 4 times an odd number
int odd4(int n) {
    n = (n + 3) & ~3;
    return (n / 4) % 2 ? n : n + 4;
}

template <typename T, int RPT, int VC> onyx_status launch(const kernel_call *c, att_args a) {
    constexpr int BQ = WARPS * RPT;
    auto fn = flash<T, RPT, VC>;
    const size_t most =
        smem_bytes(BQ, odd4(MAX_HEAD), odd4(MAX_HEAD > 32 * VC ? MAX_HEAD : 32 * VC));
    // the same value on every call, so that concurrent runs cannot undo one another's setting
    TRY(cuda_status(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)most),
                    "Attention: shared memory size"));
    // V rows are read VC * 32 columns wide, K rows Dp
    a.kvstride = odd4(a.Dp > 32 * VC ? a.Dp : 32 * VC);
    a.row_blocks = (int)(((int64_t)a.group * a.q_len + BQ - 1) / BQ);
    const int64_t grid = (int64_t)a.batch * a.kv_heads * a.row_blocks;
    if (grid > INT_MAX) return onyx_error(ONYX_ERR_UNSUPPORTED, "Attention: too many blocks");
    fn<<<(unsigned)grid, THREADS, smem_bytes(BQ, a.qstride, a.kvstride), cuda_stream(c)>>>(a);
    return cuda_launched("Attention");
}

// Variants of the tensor-core kernel a GPU run is to choose between, until then off by default:
// ONYX_CUDA_ATTENTION lists "pipe" (K/V tiles double-buffered through cp.async) and "p16" (P
// as one 16-bit operand: half the P*V products, P rounded to 16 bits). Read once per process.
struct tc_variant {
    bool pipe, p16;
};

tc_variant tc_variant_of_env() {
    static const tc_variant v = [] {
        const char *e = getenv("ONYX_CUDA_ATTENTION");
        return tc_variant{e && strstr(e, "pipe"), e && strstr(e, "p16")};
    }();
    return v;
}

template <typename T, int DK> onyx_status launch_tc_variant(const kernel_call *c, att_args a) {
    const tc_variant v = tc_variant_of_env();
    a.p16 = v.p16;
    return v.pipe ? launch_tc<T, DK, true>(c, a) : launch_tc<T, DK, false>(c, a);
}

// 16-bit types go to the tensor cores, unless the rows of a (batch, kv head) are too few to fill
// their 64-row blocks (decoding). Else query rows per warp: 8, or 4 with value heads above 128
// (registers for their columns), or 1 when bigger blocks would leave most SMs idle.
template <typename T> onyx_status launch_typed(const kernel_call *c, const att_args &a, int sms) {
    if constexpr (sizeof(T) == 2) {
        if (a.D <= TC_HEAD && a.Dv <= TC_HEAD && (int64_t)a.group * a.q_len >= 32)
            return a.D <= 64 && a.Dv <= 64 ? launch_tc_variant<T, 64>(c, a)
                                           : launch_tc_variant<T, 128>(c, a);
    }
    const int vc = a.Dv <= 64 ? 2 : a.Dv <= 128 ? 4 : 8, big = vc == 8 ? 4 : 8;
    const int64_t rows = (int64_t)a.group * a.q_len;
    const int64_t blocks = a.batch * a.kv_heads * ((rows + WARPS * big - 1) / (WARPS * big));
    const bool small = blocks < sms;
    if (vc == 2) return small ? launch<T, 1, 2>(c, a) : launch<T, 8, 2>(c, a);
    if (vc == 4) return small ? launch<T, 1, 4>(c, a) : launch<T, 8, 4>(c, a);
    return small ? launch<T, 1, 8>(c, a) : launch<T, 4, 8>(c, a);
}

const dtype_mask QKV_TYPES = DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_FLOAT16) | DT_BIT(ONYX_BFLOAT16);
const dtype_mask MASK_TYPES = DT_BIT(ONYX_BOOL) | DT_FLOATS | DT_INTS;

bool input_given(const kernel_prep *p, int i) { return i < p->n_in && p->in_type[i]; }

bool output_wanted(const graph_node *n, int o) { return o < n->n_outputs && n->outputs[o] >= 0; }

// attn_mask's dims all known (their fit to the scores is inference's, geometry/attention.h)
bool mask_known(int rank, const int64_t *md) {
    if (rank < 0) return false;
    for (int i = 0; i < rank; i++)
        if (md[i] < 0) return false;
    return true;
}

bool att_supports(const kernel_prep *p) {
    const graph_node *n = p->node;
    if (p->n_in < 3 || p->n_in > 7 || p->n_out < 1) return false;
    const type_info *q = p->in_type[0], *k = p->in_type[1], *v = p->in_type[2];
    if (!q || !k || !v) return false;
    if (q->kind != ONYX_VALUE_TENSOR || k->kind != ONYX_VALUE_TENSOR ||
        v->kind != ONYX_VALUE_TENSOR)
        return false;
    if (!dtype_in(q->dtype, QKV_TYPES) || k->dtype != q->dtype || v->dtype != q->dtype ||
        p->out_type[0].dtype != q->dtype)
        return false;
    // the plan's geometry (a generic plan's, with unknown sizes, stays on the CPU)
    const geom_attention *g = op_params_attention(p->params);
    if (!g || g->form != GEOM_ATT_ONNX || !geom_attention_known(g)) return false;
    const geom_attention &d = *g;
    if (d.head > MAX_HEAD || d.v_head > MAX_HEAD) return false;
    // lengths and rows as ints in the kernel, with room for a tile past the end
    if (d.total_len > INT_MAX - BK || d.q_len > INT_MAX ||
        (d.q_heads / d.kv_heads) * d.q_len > INT_MAX - 64)
        return false;
    if (d.batch * d.kv_heads > INT_MAX) return false;
    // past caches, present outputs and the Q*K^T output stay on the CPU
    if (input_given(p, 4) || input_given(p, 5)) return false;
    for (int o = 1; o < p->n_out; o++)
        if (output_wanted(n, o)) return false;
    if (attr_int(n, "qk_matmul_output_mode", 0) != 0) return false;
    if (input_given(p, 3)) {
        const type_info *m = p->in_type[3];
        if (m->kind != ONYX_VALUE_TENSOR || !dtype_in(m->dtype, MASK_TYPES) ||
            !mask_known(m->rank, m->dims))
            return false;
    }
    if (input_given(p, 6)) {
        const type_info *np = p->in_type[6];
        if (np->kind != ONYX_VALUE_TENSOR || np->dtype != ONYX_INT64 || np->rank != 1 ||
            np->dims[0] != d.batch)
            return false;
    }
    return true;
}

// Arguments with the tensors' data and nothing else set.
att_args args_of(const tensor *Q, const tensor *K, const tensor *V, tensor *Y) {
    att_args a;
    memset(&a, 0, sizeof a);
    a.left = a.right = -1;
    a.q = Q->data;
    a.k = K->data;
    a.v = V->data;
    a.y = Y->data;
    return a;
}

int sm_count() {
    int dev = 0, n = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || n < 1)
        return 132;
    return n;
}

onyx_status launch_dtype(const kernel_call *c, const att_args &a, onyx_dtype t) {
    int sms = sm_count();
    switch (t) {
    case ONYX_FLOAT: return launch_typed<float>(c, a, sms);
    case ONYX_FLOAT16: return launch_typed<__half>(c, a, sms);
    case ONYX_BFLOAT16: return launch_typed<__nv_bfloat16>(c, a, sms);
    default: break;
    }
    return onyx_error(ONYX_ERR_UNSUPPORTED, "Attention: type %d on CUDA", (int)t);
}

// ---- attention spelled out, fused by the planner (core/fuse.c)

// What run needs of a fused chain: the geometry, the views' strides in elements (batch, head,
// row: every row's elements contiguous), the scale and the mask's dims as [B, H, S, T].
struct chain_state {
    int64_t B, H, S, T, D, Dv;
    int64_t qs[3], ks[3], vs[3], ys[3];
    int64_t offset[4]; // where the views start, in elements (fuse_chain's order: Q, K^T, Y, V)
    bool has_mask;
    int64_t md[4];
    float scale;
    bool nan_to_zero;
};

// Batch, head and row strides of the chain's view i ([heads, rows, cols] or [batch, heads, rows,
// cols]) whose rows run along dim `row` (K^T's along its last: its columns are K's rows), the
// other of its last two dims contiguous; false where that one is not.
bool chain_strides(const fuse_chain *c, int i, int row, int64_t *st) {
    const int r = c->view_rank[i], col = row == r - 1 ? r - 2 : r - 1;
    const int64_t *vs = c->view_strides[i];
    if (vs[col] != 1 && c->view_dims[i][col] > 1) return false;
    st[0] = r == 4 ? vs[0] : 0;
    st[1] = vs[r - 3];
    st[2] = vs[row];
    return true;
}

// The chain in p->fused as this kernel reads it; false where it cannot (rows not contiguous, a
// head too large, a mask that does not broadcast).
bool chain_plan(const kernel_prep *p, chain_state *cs) {
    const fuse_chain *c = p->fused;
    const int r = c->view_rank[0];
    if (!c->attention || c->n || c->n_pre || (r != 3 && r != 4) || c->view_rank[1] != r ||
        c->view_rank[2] != r || c->view_rank[3] != r || p->n_in < 3)
        return false;
    // the geometry the fusion pass resolved from these views (geometry/attention.h)
    const geom_attention *g = op_params_attention(p->params);
    const int64_t *q = c->view_dims[0], *kt = c->view_dims[1], *v = c->view_dims[3];
    if (!g || g->form != GEOM_ATT_CHAIN || q[r - 3] != g->q_heads || q[r - 2] != g->q_len ||
        q[r - 1] != g->head || kt[r - 1] != g->total_len || v[r - 1] != g->v_head)
        return false;
    memset(cs, 0, sizeof *cs);
    cs->B = g->batch;
    cs->H = g->q_heads;
    cs->S = g->q_len;
    cs->D = g->head;
    cs->T = g->total_len;
    cs->Dv = g->v_head;
    const type_info *tq = p->in_type[0];
    for (int i = 0; i < 3; i++)
        if (!p->in_type[i] || p->in_type[i]->dtype != tq->dtype) return false;
    if (!dtype_in(tq->dtype, QKV_TYPES) || p->out_type[0].dtype != tq->dtype) return false;
    if (cs->D < 1 || cs->Dv < 1 || cs->D > MAX_HEAD || cs->Dv > MAX_HEAD || cs->T < 1 ||
        cs->T > INT_MAX - BK || cs->S < 1 || cs->S > INT_MAX - 64 || cs->B * cs->H > INT_MAX)
        return false;
    if (!chain_strides(c, 0, r - 2, cs->qs) || !chain_strides(c, 1, r - 1, cs->ks) ||
        !chain_strides(c, 3, r - 2, cs->vs) || !chain_strides(c, 2, r - 2, cs->ys))
        return false;
    if (input_given(p, 3)) { // numpy broadcasting to the scores [.., S, T]
        const type_info *m = p->in_type[3];
        const int64_t want[4] = {cs->B, cs->H, cs->S, cs->T};
        if (m->kind != ONYX_VALUE_TENSOR || !dtype_in(m->dtype, DT_FLOATS) || m->rank > r)
            return false;
        for (int i = 0; i < 4; i++) cs->md[i] = 1;
        for (int i = 0; i < m->rank; i++) {
            int64_t d = m->dims[i];
            int at = 4 - m->rank + i;
            if (d != 1 && d != want[at]) return false;
            cs->md[at] = d;
        }
        cs->has_mask = true;
    }
    memcpy(cs->offset, c->view_offset, sizeof cs->offset);
    cs->scale = c->has_in_scale ? c->in_scale : 1.0f;
    cs->nan_to_zero = c->nan_to_zero;
    return true;
}

onyx_status att_prepare(const kernel_prep *p, void **state) {
    *state = NULL;
    if (!p->fused) return ONYX_OK; // an Attention node: read from its inputs at run
    chain_state *cs = (chain_state *)malloc(sizeof *cs);
    if (!cs) return onyx_error(ONYX_ERR_NO_MEMORY, "Attention: out of memory");
    if (!chain_plan(p, cs)) {
        free(cs);
        return onyx_error(ONYX_ERR_UNSUPPORTED, "Attention: CUDA does not take this chain");
    }
    *state = cs;
    return ONYX_OK;
}

void att_release(void *state) { free(state); }

// kernel.takes_chain: the chains att_prepare applies.
bool att_takes_chain(const kernel_prep *p) {
    chain_state cs;
    return p->fused && chain_plan(p, &cs);
}

onyx_status chain_run(const kernel_call *c, const chain_state *cs) {
    const tensor *Q = kernel_input(c, 0), *K = kernel_input(c, 1), *V = kernel_input(c, 2),
                 *M = cs->has_mask ? kernel_input(c, 3) : NULL;
    tensor *Y = kernel_output(c, 0);
    if (!Q || !K || !V || !Y || (cs->has_mask && !M))
        return onyx_error(ONYX_ERR_SHAPE, "Attention: the fused chain's inputs are missing");
    att_args a = args_of(Q, K, V, Y);
    const size_t es = dtype_size(Q->dtype); // the three share Y's type (chain_plan)
    a.q = (const char *)a.q + cs->offset[0] * es;
    a.k = (const char *)a.k + cs->offset[1] * es;
    a.y = (char *)a.y + cs->offset[2] * es;
    a.v = (const char *)a.v + cs->offset[3] * es;
    memcpy(a.qs, cs->qs, sizeof a.qs);
    memcpy(a.ks, cs->ks, sizeof a.ks);
    memcpy(a.vs, cs->vs, sizeof a.vs);
    memcpy(a.ys, cs->ys, sizeof a.ys);
    if (M) {
        int64_t st[4];
        st[3] = 1;
        for (int i = 2; i >= 0; i--) st[i] = st[i + 1] * cs->md[i + 1];
        for (int i = 0; i < 3; i++) a.ms[i] = cs->md[i] == 1 ? 0 : st[i];
        a.mask = M->data;
        a.has_mask = true;
        a.mask_dt = M->dtype;
        a.mlen = cs->md[3];
        a.mbcast = cs->md[3] == 1 && cs->T > 1;
    }
    a.batch = cs->B;
    a.kv_heads = (int)cs->H;
    a.group = 1;
    a.q_len = (int)cs->S;
    a.total = (int)cs->T;
    a.D = (int)cs->D;
    a.Dv = (int)cs->Dv;
    a.Dp = (a.D + 3) & ~3;
    a.qstride = odd4(a.Dp);
    a.scale = cs->scale;
    a.nan_to_zero = cs->nan_to_zero;
    return launch_dtype(c, a, Q->dtype);
}

onyx_status att_run(const kernel_call *c) {
    if (c->state) return chain_run(c, (const chain_state *)c->state);
    const graph_node *n = c->node;
    const tensor *Q = kernel_input(c, 0), *K = kernel_input(c, 1), *V = kernel_input(c, 2),
                 *M = kernel_input(c, 3), *NP = kernel_input(c, 6);
    tensor *Y = kernel_output(c, 0);
    if (!Q || !K || !V || !Y) return onyx_error(ONYX_ERR_SHAPE, "Attention: Q, K, V and Y needed");
    const geom_attention *g;
    TRY(kernel_attention(c->params, GEOM_ATT_ONNX, Q->numel, &g));
    const geom_attention &d = *g;
    if (NP && (NP->dtype != ONYX_INT64 || NP->rank != 1 || NP->dims[0] != d.batch))
        return onyx_error(ONYX_ERR_SHAPE, "Attention: nonpad_kv_seqlen must be int64 [%lld]",
                          (long long)d.batch);
    if (Y->numel == 0) return ONYX_OK;
    cudaStream_t st = cuda_stream(c);
    // no keys at all: the CPU's product over zero columns, zeros
    if (d.total_len == 0)
        return cuda_status(cudaMemsetAsync(Y->data, 0, Y->nbytes, st), "Attention");

    att_args a = args_of(Q, K, V, Y);
    view_strides(d.packed, d.q_heads, d.q_len, d.head, a.qs);
    view_strides(d.packed, d.kv_heads, d.total_len, d.head, a.ks);
    view_strides(d.packed, d.kv_heads, d.total_len, d.v_head, a.vs);
    view_strides(d.packed, d.q_heads, d.q_len, d.v_head, a.ys);
    if (M) {
        // an empty mask (last dim 0) pads every key with -inf: zero rows, as on the CPU
        int64_t md[4] = {1, 1, 1, 1}, s[4];
        for (int i = 0; i < M->rank; i++) md[4 - M->rank + i] = M->dims[i];
        s[3] = 1;
        for (int i = 2; i >= 0; i--) s[i] = s[i + 1] * md[i + 1];
        for (int i = 0; i < 3; i++) a.ms[i] = md[i] == 1 ? 0 : s[i];
        a.mask = M->data;
        a.has_mask = true;
        a.mask_dt = M->dtype;
        a.mlen = md[3];
        a.mbcast = n->version < 24 && md[3] == 1 && d.total_len > 1;
    }
    a.nonpad = NP ? (const int64_t *)NP->data : NULL;
    a.causal = attr_int(n, "is_causal", 0) != 0;
    a.left = attr_int(n, "left_window_size", -1);
    a.right = attr_int(n, "right_window_size", -1);
    if (a.left < -1 || a.right < -1)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "Attention: window sizes %lld and %lld, "
                          "expected -1 or >= 0", (long long)a.left, (long long)a.right);
    a.zero_masked = true;
    a.batch = d.batch;
    a.kv_heads = (int)d.kv_heads;
    a.group = (int)(d.q_heads / d.kv_heads);
    a.q_len = (int)d.q_len;
    a.total = (int)d.total_len;
    a.D = (int)d.head;
    a.Dv = (int)d.v_head;
    a.Dp = (a.D + 3) & ~3;
    a.qstride = odd4(a.Dp);
    a.scale = node_attr(n, "scale") ? attr_float(n, "scale", 0)
                                    : (float)(d.head > 0 ? 1.0 / sqrt((double)d.head) : 1.0);
    a.softcap = attr_float(n, "softcap", 0);
    return launch_dtype(c, a, Q->dtype);
}

const kernel entries[] = {
    // domain, op, versions, device, dtypes, flags, prepare, run, release, fork, unfork,
    // supports, host_inputs, takes_chain
    {"", "Attention", 23, 25, DEVICE_CUDA, QKV_TYPES, 0, att_prepare, att_run, att_release, NULL,
     NULL, att_supports, 0, att_takes_chain},
};

} // namespace
} // namespace att

extern "C" const kernel *cuda_family_attention(size_t *count) {
    *count = sizeof att::entries / sizeof att::entries[0];
    return att::entries;
}
