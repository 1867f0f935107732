// The movement family's strided copy engine (every reshaping copy reduces to it: Transpose,
// Concat, Split, Slice, Tile, Expand, DepthToSpace) and the host helpers of the family.
#include <stdint.h>
#include <string.h>

#include "kernels_cuda/movement/movement.cuh"

namespace {

struct mv_view {
    int rank;
    int64_t dims[MV_MAX_RANK];
    int64_t dst[MV_MAX_RANK];
    int64_t src[MV_MAX_RANK];
};

// One element per index: the index split into the view's axes. I is uint32_t when the count
// allows, since 64-bit division costs several times more.
template <typename T, typename I>
__device__ __forceinline__ void general_body(T *__restrict__ dst, const T *__restrict__ src,
                                             const mv_view &v, I n) {
    for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (I)gridDim.x * blockDim.x) {
        I rem = i;
        int64_t d = 0, s = 0;
        for (int k = v.rank - 1; k > 0; k--) {
            I dim = (I)v.dims[k];
            I q = rem / dim;
            I r = rem - q * dim;
            d += (int64_t)r * v.dst[k];
            s += (int64_t)r * v.src[k];
            rem = q;
        }
        d += (int64_t)rem * v.dst[0];
        s += (int64_t)rem * v.src[0];
        dst[d] = src[s];
    }
}

template <typename T>
__global__ void copy_general(T *__restrict__ dst, const T *__restrict__ src, mv_view v, int64_t n) {
    if (n <= INT32_MAX) general_body<T, uint32_t>(dst, src, v, (uint32_t)n);
    else general_body<T, int64_t>(dst, src, v, n);
}

// A transpose whose source-contiguous axis a and destination-contiguous axis b differ: 32x32
// tiles through shared memory, so that both the reads and the writes are coalesced. The other
// axes are a batch.
struct mv_tiled {
    mv_view batch;
    int64_t na, nb;   // sizes of axes a and b
    int64_t a_dst;    // destination stride of a (its source stride is 1)
    int64_t b_src;    // source stride of b (its destination stride is 1)
    int64_t tiles_a, tiles_b, total;
};

enum { TILE = 32, TILE_ROWS = 8 };

template <typename T>
__global__ void copy_tiled(T *__restrict__ dst, const T *__restrict__ src, mv_tiled t) {
    __shared__ T tile[TILE][TILE + 1];
    for (int64_t blk = blockIdx.x; blk < t.total; blk += gridDim.x) {
        int64_t ta = blk % t.tiles_a, r = blk / t.tiles_a;
        int64_t tb = r % t.tiles_b, bi = r / t.tiles_b;
        int64_t d0 = 0, s0 = 0;
        for (int k = t.batch.rank - 1; k >= 0; k--) {
            int64_t dim = t.batch.dims[k], q = bi / dim, i = bi - q * dim;
            d0 += i * t.batch.dst[k];
            s0 += i * t.batch.src[k];
            bi = q;
        }
        int64_t a0 = ta * TILE, b0 = tb * TILE;
        int64_t a = a0 + threadIdx.x;
        for (int y = threadIdx.y; y < TILE; y += TILE_ROWS) {
            int64_t b = b0 + y;
            if (a < t.na && b < t.nb) tile[y][threadIdx.x] = src[s0 + b * t.b_src + a];
        }
        __syncthreads();
        int64_t b = b0 + threadIdx.x;
        for (int y = threadIdx.y; y < TILE; y += TILE_ROWS) {
            int64_t a2 = a0 + y;
            if (a2 < t.na && b < t.nb) dst[d0 + a2 * t.a_dst + b] = tile[threadIdx.x][y];
        }
        __syncthreads();
    }
}

template <typename T>
onyx_status launch_general(const kernel_call *c, void *dst, const void *src, const mv_view &v,
                           int64_t n, const char *what) {
    copy_general<T><<<cuda_blocks(n), CUDA_THREADS, 0, cuda_stream(c)>>>((T *)dst, (const T *)src,
                                                                        v, n);
    return cuda_launched(what);
}

template <typename T>
onyx_status launch_tiled(const kernel_call *c, void *dst, const void *src, const mv_tiled &t,
                         const char *what) {
    int64_t blocks = t.total < (1 << 20) ? t.total : (1 << 20);
    copy_tiled<T><<<(unsigned)blocks, dim3(TILE, TILE_ROWS), 0, cuda_stream(c)>>>(
        (T *)dst, (const T *)src, t);
    return cuda_launched(what);
}

int64_t iabs(int64_t v) { return v < 0 ? -v : v; }

} // namespace

onyx_status mv_copy(const kernel_call *c, void *dst, const void *src, size_t es, int rank,
                    const int64_t *dims, const int64_t *dst_st, const int64_t *src_st,
                    const char *what) {
    if (rank > MV_MAX_RANK)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "%s: a copy of rank %d on CUDA", what, rank);
    mv_view v;
    memset(&v, 0, sizeof v);
    for (int k = 0; k < rank; k++)
        if (dims[k] == 0) return ONYX_OK;
    // unit axes dropped, and an axis merged into the one before when the two walk as one
    int r = 0;
    for (int k = 0; k < rank; k++) {
        if (dims[k] == 1) continue;
        if (r > 0 && v.dst[r - 1] == dst_st[k] * dims[k] && v.src[r - 1] == src_st[k] * dims[k]) {
            v.dims[r - 1] *= dims[k];
            v.dst[r - 1] = dst_st[k];
            v.src[r - 1] = src_st[k];
            continue;
        }
        v.dims[r] = dims[k];
        v.dst[r] = dst_st[k];
        v.src[r] = src_st[k];
        r++;
    }
    v.rank = r;
    cudaStream_t stream = cuda_stream(c);
    if (r == 0) return cuda_status(cudaMemcpyAsync(dst, src, es, cudaMemcpyDeviceToDevice, stream), what);
    // a contiguous innermost run moves in wider elements when every offset stays aligned
    if (v.dst[r - 1] == 1 && v.src[r - 1] == 1) {
        for (size_t w = 16; w > es; w /= 2) {
            bool ok = (v.dims[r - 1] * (int64_t)es) % (int64_t)w == 0 &&
                      (uintptr_t)dst % w == 0 && (uintptr_t)src % w == 0;
            for (int k = 0; ok && k < r - 1; k++)
                ok = (iabs(v.dst[k]) * (int64_t)es) % (int64_t)w == 0 &&
                     (iabs(v.src[k]) * (int64_t)es) % (int64_t)w == 0;
            if (!ok) continue;
            int64_t f = (int64_t)(w / es);
            v.dims[r - 1] /= f;
            for (int k = 0; k < r - 1; k++) {
                v.dst[k] /= f;
                v.src[k] /= f;
            }
            es = w;
            break;
        }
        if (r == 1)
            return cuda_status(cudaMemcpyAsync(dst, src, (size_t)v.dims[0] * es,
                                               cudaMemcpyDeviceToDevice, stream),
                               what);
    }
    int64_t n = 1;
    for (int k = 0; k < r; k++) n *= v.dims[k];
    int last = r - 1, a = -1;
    if (v.dst[last] == 1 && v.src[last] != 1 && es <= 8)
        for (int k = 0; k < last; k++)
            if (v.src[k] == 1) a = k;
    if (a >= 0 && v.dims[a] >= 8 && v.dims[last] >= 8) {
        mv_tiled t;
        memset(&t, 0, sizeof t);
        int br = 0;
        for (int k = 0; k < last; k++) {
            if (k == a) continue;
            t.batch.dims[br] = v.dims[k];
            t.batch.dst[br] = v.dst[k];
            t.batch.src[br] = v.src[k];
            br++;
        }
        t.batch.rank = br;
        t.na = v.dims[a];
        t.nb = v.dims[last];
        t.a_dst = v.dst[a];
        t.b_src = v.src[last];
        t.tiles_a = (t.na + TILE - 1) / TILE;
        t.tiles_b = (t.nb + TILE - 1) / TILE;
        t.total = t.tiles_a * t.tiles_b * (n / (t.na * t.nb));
        switch (es) {
        case 1: return launch_tiled<uint8_t>(c, dst, src, t, what);
        case 2: return launch_tiled<uint16_t>(c, dst, src, t, what);
        case 4: return launch_tiled<uint32_t>(c, dst, src, t, what);
        default: return launch_tiled<uint64_t>(c, dst, src, t, what);
        }
    }
    switch (es) {
    case 1: return launch_general<uint8_t>(c, dst, src, v, n, what);
    case 2: return launch_general<uint16_t>(c, dst, src, v, n, what);
    case 4: return launch_general<uint32_t>(c, dst, src, v, n, what);
    case 8: return launch_general<uint64_t>(c, dst, src, v, n, what);
    case 16: return launch_general<uint4>(c, dst, src, v, n, what);
    default: return onyx_error(ONYX_ERR_UNSUPPORTED, "%s: elements of %zu bytes", what, es);
    }
}

// ---------------------------------------------------------------- host helpers

void mv_strides(int rank, const int64_t *dims, int64_t *st) {
    int64_t s = 1;
    for (int k = rank - 1; k >= 0; k--) {
        st[k] = s;
        s *= dims[k];
    }
}

bool mv_axis(int64_t axis, int rank, int *out) {
    return geom_axis(axis, rank, "axis", out, NULL) == ONYX_OK;
}

onyx_status mv_on_host(const tensor *t, int input) {
    if (t && t->device != DEVICE_CPU)
        return onyx_error(ONYX_ERR_RUNTIME, "input %d is not in host memory", input);
    return ONYX_OK;
}

onyx_status mv_read_ints(const tensor *t, int input, int64_t *out, size_t cap, size_t *n) {
    TRY(mv_on_host(t, input));
    return ops_read_ints(t, input, out, cap, n);
}

int64_t mv_product(const int64_t *dims, int from, int to) {
    int64_t p = 1;
    for (int k = from; k < to; k++) p *= dims[k];
    return p;
}

bool mv_ranks_ok(const kernel_prep *p) {
    for (int i = 0; i < p->n_in; i++)
        if (p->in_type[i] && p->in_type[i]->rank > CUDA_MAX_RANK) return false;
    for (int o = 0; o < p->n_out; o++)
        if (p->node->outputs[o] >= 0 && p->out_type[o].rank > CUDA_MAX_RANK) return false;
    return true;
}

size_t mv_align_width(int64_t bytes, const void *a, const void *b) {
    size_t w = 16;
    while (w > 1 && (bytes % (int64_t)w != 0 || (uintptr_t)a % w != 0 || (uintptr_t)b % w != 0))
        w /= 2;
    return w;
}
