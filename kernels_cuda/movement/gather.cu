// Index-driven movement on CUDA: Gather, GatherElements, GatherND, ScatterElements (and the old
// Scatter), ScatterND. Indices stay on the device and are not checked (that would need a sync):
// a gather reads zero for an index out of range, a scatter skips its update.
#include <string.h>

#include "kernels_cuda/movement/movement.cuh"

namespace {

bool index_type(onyx_dtype d) { return d == ONYX_INT32 || d == ONYX_INT64; }

// Index v of an axis of size dim, wrapped when negative; -1 when out of range.
__device__ __forceinline__ int64_t wrap_index(int64_t v, int64_t dim) {
    if (v < 0) v += dim;
    return v >= 0 && v < dim ? v : -1;
}

// ---------------------------------------------------------------- Gather

// y[o, k, j] = x[o, idx[k], j]; rows of `inner` elements (widened to W-byte elements). The
// index math is 32-bit when the count allows: 64-bit division costs several times more.
template <typename T, typename X, typename I>
__device__ __forceinline__ void gather_body(T *__restrict__ y, const T *__restrict__ x,
                                            const X *__restrict__ idx, I n_idx, int64_t dim,
                                            I inner, I n) {
    for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (I)gridDim.x * blockDim.x) {
        I r = i / inner, j = i - r * inner;
        I o = r / n_idx, k = r - o * n_idx;
        int64_t v = wrap_index((int64_t)idx[k], dim);
        T out = T();
        if (v >= 0) out = x[((int64_t)o * dim + v) * (int64_t)inner + (int64_t)j];
        y[i] = out;
    }
}

template <typename T, typename X>
__global__ void gather_kernel(T *__restrict__ y, const T *__restrict__ x, const X *__restrict__ idx,
                              int64_t n_idx, int64_t dim, int64_t inner, int64_t n) {
    if (n <= INT32_MAX)
        gather_body<T, X, uint32_t>(y, x, idx, (uint32_t)n_idx, dim, (uint32_t)inner, (uint32_t)n);
    else
        gather_body<T, X, int64_t>(y, x, idx, n_idx, dim, inner, n);
}

template <typename T>
onyx_status gather_launch(const kernel_call *c, const tensor *x, const tensor *idx, tensor *y,
                          int64_t dim, int64_t inner) {
    int64_t n = y->numel * (int64_t)dtype_size(y->dtype) / (int64_t)sizeof(T);
    unsigned blocks = cuda_blocks(n);
    if (idx->dtype == ONYX_INT32)
        gather_kernel<T, int32_t><<<blocks, CUDA_THREADS, 0, cuda_stream(c)>>>(
            (T *)y->data, (const T *)x->data, (const int32_t *)idx->data, idx->numel, dim, inner,
            n);
    else
        gather_kernel<T, int64_t><<<blocks, CUDA_THREADS, 0, cuda_stream(c)>>>(
            (T *)y->data, (const T *)x->data, (const int64_t *)idx->data, idx->numel, dim, inner,
            n);
    return cuda_launched("Gather");
}

} // namespace

bool mv_gather_supports(const kernel_prep *p) {
    const type_info *x = p->in_type[0], *idx = p->n_in > 1 ? p->in_type[1] : NULL;
    const type_info *y = &p->out_type[0];
    int axis;
    if (!idx || !mv_ranks_ok(p) || !mv_size_ok(x->dtype) || !index_type(idx->dtype) ||
        !mv_axis(attr_int(p->node, "axis", 0), x->rank, &axis))
        return false;
    int64_t n_idx = mv_product(idx->dims, 0, idx->rank);
    return mv_product(y->dims, 0, y->rank) ==
           mv_product(x->dims, 0, axis) * n_idx * mv_product(x->dims, axis + 1, x->rank);
}

// Whether y lies inside x's bytes: the plan made it a view of x (KF_VIEW, core/exec_view.c;
// an output never overlaps an input otherwise), so it already holds the result.
static bool is_view(const tensor *x, const tensor *y) {
    const char *a = (const char *)x->data, *b = (const char *)y->data;
    return b >= a && b + y->nbytes <= a + x->nbytes;
}

onyx_status mv_gather_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0), *idx = kernel_input(c, 1);
    tensor *y = kernel_output(c, 0);
    int axis;
    if (!mv_axis(attr_int(c->node, "axis", 0), x->rank, &axis))
        return onyx_error(ONYX_ERR_SHAPE, "Gather: axis out of range for rank %d", x->rank);
    if (!index_type(idx->dtype))
        return onyx_error(ONYX_ERR_SHAPE, "Gather: indices of type %d", (int)idx->dtype);
    int64_t inner = mv_product(x->dims, axis + 1, x->rank), dim = x->dims[axis];
    if (y->numel != mv_product(x->dims, 0, axis) * idx->numel * inner)
        return onyx_error(ONYX_ERR_SHAPE, "Gather: output has %lld elements, expected %lld",
                          (long long)y->numel,
                          (long long)(mv_product(x->dims, 0, axis) * idx->numel * inner));
    if (y->numel == 0) return ONYX_OK;
    if (is_view(x, y)) return ONYX_OK; /* one constant index after dims of 1 */
    size_t es = dtype_size(x->dtype), w = mv_align_width(inner * (int64_t)es, x->data, y->data);
    if (w < es) w = es;
    int64_t iw = inner * (int64_t)es / (int64_t)w;
    switch (w) {
    case 1: return gather_launch<uint8_t>(c, x, idx, y, dim, iw);
    case 2: return gather_launch<uint16_t>(c, x, idx, y, dim, iw);
    case 4: return gather_launch<uint32_t>(c, x, idx, y, dim, iw);
    case 8: return gather_launch<uint64_t>(c, x, idx, y, dim, iw);
    default: return gather_launch<uint4>(c, x, idx, y, dim, iw);
    }
}

// ---------------------------------------------------------------- GatherElements, ScatterElements

namespace {

// Element e of the index tensor (dims idims) addresses data at its own coordinates, but along
// `axis` at the index it holds.
struct elem_params {
    int rank, axis;
    int64_t idims[CUDA_MAX_RANK];
    int64_t xst[CUDA_MAX_RANK];
};

template <typename I>
__device__ __forceinline__ int64_t elem_base(const elem_params &p, I e) {
    int64_t off = 0;
    for (int k = p.rank - 1; k >= 0; k--) {
        I dim = (I)p.idims[k];
        I q = e / dim;
        if (k != p.axis) off += (int64_t)(e - q * dim) * p.xst[k];
        e = q;
    }
    return off;
}

template <typename T, typename X, typename I>
__device__ __forceinline__ void gather_elements_body(T *__restrict__ y, const T *__restrict__ x,
                                                     const X *__restrict__ idx,
                                                     const elem_params &p, int64_t axis_dim, I n) {
    for (I e = (I)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += (I)gridDim.x * blockDim.x) {
        int64_t v = wrap_index((int64_t)idx[e], axis_dim);
        T out = T();
        if (v >= 0) out = x[elem_base<I>(p, e) + v * p.xst[p.axis]];
        y[e] = out;
    }
}

template <typename T, typename X>
__global__ void gather_elements_kernel(T *__restrict__ y, const T *__restrict__ x,
                                       const X *__restrict__ idx, elem_params p, int64_t axis_dim,
                                       int64_t n) {
    if (n <= INT32_MAX) gather_elements_body<T, X, uint32_t>(y, x, idx, p, axis_dim, (uint32_t)n);
    else gather_elements_body<T, X, int64_t>(y, x, idx, p, axis_dim, n);
}

enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN };

__device__ __forceinline__ void atomic_add(float *p, float v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add(double *p, double v) { atomicAdd(p, v); }
__device__ __forceinline__ void atomic_add(int32_t *p, int32_t v) { atomicAdd((int *)p, (int)v); }
__device__ __forceinline__ void atomic_add(uint32_t *p, uint32_t v) {
    atomicAdd((unsigned *)p, (unsigned)v);
}
// Integers wrap on overflow, as the CPU's sums in uint64 do.
__device__ __forceinline__ void atomic_add(int64_t *p, int64_t v) {
    atomicAdd((unsigned long long *)p, (unsigned long long)v);
}
__device__ __forceinline__ void atomic_add(uint64_t *p, uint64_t v) {
    atomicAdd((unsigned long long *)p, (unsigned long long)v);
}

template <typename T, bool ADD> struct store_op {
    __device__ static void put(T *p, T v) { *p = v; }
};
template <typename T> struct store_op<T, true> {
    __device__ static void put(T *p, T v) { atomic_add(p, v); }
};

template <typename T, bool ADD, typename X, typename I>
__device__ __forceinline__ void scatter_elements_body(T *__restrict__ y, const T *__restrict__ upd,
                                                      const X *__restrict__ idx,
                                                      const elem_params &p, int64_t axis_dim,
                                                      I n) {
    for (I e = (I)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += (I)gridDim.x * blockDim.x) {
        int64_t v = wrap_index((int64_t)idx[e], axis_dim);
        if (v < 0) continue;
        store_op<T, ADD>::put(y + elem_base<I>(p, e) + v * p.xst[p.axis], upd[e]);
    }
}

template <typename T, bool ADD, typename X>
__global__ void scatter_elements_kernel(T *y, const T *__restrict__ upd, const X *__restrict__ idx,
                                        elem_params p, int64_t axis_dim, int64_t n) {
    if (n <= INT32_MAX)
        scatter_elements_body<T, ADD, X, uint32_t>(y, upd, idx, p, axis_dim, (uint32_t)n);
    else
        scatter_elements_body<T, ADD, X, int64_t>(y, upd, idx, p, axis_dim, n);
}

bool elem_params_make(const tensor *x, const tensor *idx, int axis, elem_params *p) {
    if (x->rank > CUDA_MAX_RANK || idx->rank != x->rank) return false;
    memset(p, 0, sizeof *p);
    p->rank = x->rank;
    p->axis = axis;
    mv_strides(x->rank, x->dims, p->xst);
    for (int k = 0; k < x->rank; k++) {
        if (k != axis && idx->dims[k] > x->dims[k]) return false;
        p->idims[k] = idx->dims[k];
    }
    return true;
}

struct gather_elements_launch {
    template <typename T>
    static onyx_status run(const kernel_call *c, const tensor *x, const tensor *idx, tensor *y,
                           const elem_params *p) {
        int64_t n = idx->numel, dim = x->dims[p->axis];
        unsigned blocks = cuda_blocks(n);
        if (idx->dtype == ONYX_INT32)
            gather_elements_kernel<T, int32_t><<<blocks, CUDA_THREADS, 0, cuda_stream(c)>>>(
                (T *)y->data, (const T *)x->data, (const int32_t *)idx->data, *p, dim, n);
        else
            gather_elements_kernel<T, int64_t><<<blocks, CUDA_THREADS, 0, cuda_stream(c)>>>(
                (T *)y->data, (const T *)x->data, (const int64_t *)idx->data, *p, dim, n);
        return cuda_launched("GatherElements");
    }
};

template <bool ADD> struct scatter_elements_launch {
    template <typename T>
    static onyx_status run(const kernel_call *c, const tensor *x, const tensor *idx,
                           const tensor *upd, tensor *y, const elem_params *p) {
        int64_t n = idx->numel, dim = x->dims[p->axis];
        unsigned blocks = cuda_blocks(n);
        if (idx->dtype == ONYX_INT32)
            scatter_elements_kernel<T, ADD, int32_t><<<blocks, CUDA_THREADS, 0, cuda_stream(c)>>>(
                (T *)y->data, (const T *)upd->data, (const int32_t *)idx->data, *p, dim, n);
        else
            scatter_elements_kernel<T, ADD, int64_t><<<blocks, CUDA_THREADS, 0, cuda_stream(c)>>>(
                (T *)y->data, (const T *)upd->data, (const int64_t *)idx->data, *p, dim, n);
        return cuda_launched("ScatterElements");
    }
};

// The reduction attribute (v16+; max and min from v18), -1 when unknown.
int read_reduction(const graph_node *n) {
    if (strcmp(n->op_type, "Scatter") == 0 || n->version < 16) return RED_NONE;
    const char *r = attr_string(n, "reduction", "none");
    static const char *const names[] = {"none", "add", "mul", "max", "min"};
    int count = n->version >= 18 ? 5 : 3;
    for (int i = 0; i < count; i++)
        if (strcmp(r, names[i]) == 0) return i;
    return -1;
}

// Types whose additions have a native atomic.
bool add_type(onyx_dtype d) {
    return d == ONYX_FLOAT || d == ONYX_DOUBLE || d == ONYX_INT32 || d == ONYX_INT64 ||
           d == ONYX_UINT32 || d == ONYX_UINT64;
}

// y = x first (in stream order, before the updates land).
onyx_status copy_data(const kernel_call *c, const tensor *x, tensor *y, const char *what) {
    if (y->nbytes != x->nbytes || y->dtype != x->dtype)
        return onyx_error(ONYX_ERR_SHAPE, "%s: output does not match data", what);
    if (y->data == x->data || x->nbytes == 0) return ONYX_OK;
    return cuda_status(cudaMemcpyAsync(y->data, x->data, x->nbytes, cudaMemcpyDeviceToDevice,
                                       cuda_stream(c)),
                       what);
}

bool same_dims(const type_info *a, const type_info *b) {
    if (a->rank != b->rank) return false;
    for (int k = 0; k < a->rank; k++)
        if (a->dims[k] != b->dims[k]) return false;
    return true;
}

} // namespace

bool mv_gather_elements_supports(const kernel_prep *p) {
    const type_info *x = p->in_type[0], *idx = p->n_in > 1 ? p->in_type[1] : NULL;
    int axis;
    if (!idx || !mv_ranks_ok(p) || !mv_size_ok(x->dtype) || !index_type(idx->dtype) ||
        idx->rank != x->rank || !mv_axis(attr_int(p->node, "axis", 0), x->rank, &axis))
        return false;
    for (int k = 0; k < x->rank; k++)
        if (k != axis && idx->dims[k] > x->dims[k]) return false;
    return same_dims(idx, &p->out_type[0]);
}

onyx_status mv_gather_elements_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0), *idx = kernel_input(c, 1);
    tensor *y = kernel_output(c, 0);
    int axis;
    elem_params p;
    if (!mv_axis(attr_int(c->node, "axis", 0), x->rank, &axis) || !index_type(idx->dtype) ||
        !elem_params_make(x, idx, axis, &p) || y->numel != idx->numel)
        return onyx_error(ONYX_ERR_SHAPE, "GatherElements: indices do not fit the data");
    if (y->numel == 0) return ONYX_OK;
    return mv_by_size<gather_elements_launch>(dtype_size(x->dtype), c, x, idx, y,
                                              (const elem_params *)&p);
}

bool mv_scatter_elements_supports(const kernel_prep *p) {
    if (p->n_in < 3) return false;
    const type_info *x = p->in_type[0], *idx = p->in_type[1], *upd = p->in_type[2];
    int axis, red = read_reduction(p->node);
    if (!idx || !upd || !mv_ranks_ok(p) || !mv_size_ok(x->dtype) || !index_type(idx->dtype) ||
        upd->dtype != x->dtype || idx->rank != x->rank || !same_dims(idx, upd) ||
        !mv_axis(attr_int(p->node, "axis", 0), x->rank, &axis))
        return false;
    for (int k = 0; k < x->rank; k++)
        if (k != axis && idx->dims[k] > x->dims[k]) return false;
    return red == RED_NONE || (red == RED_ADD && add_type(x->dtype));
}

onyx_status mv_scatter_elements_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0), *idx = kernel_input(c, 1), *upd = kernel_input(c, 2);
    tensor *y = kernel_output(c, 0);
    int axis, red = read_reduction(c->node);
    elem_params p;
    if (!mv_axis(attr_int(c->node, "axis", 0), x->rank, &axis) || !index_type(idx->dtype) ||
        upd->dtype != x->dtype || upd->numel != idx->numel || !elem_params_make(x, idx, axis, &p))
        return onyx_error(ONYX_ERR_SHAPE, "ScatterElements: indices do not fit the data");
    TRY(copy_data(c, x, y, "ScatterElements"));
    if (idx->numel == 0) return ONYX_OK;
    const elem_params *pp = &p;
    if (red == RED_NONE)
        return mv_by_size<scatter_elements_launch<false>>(dtype_size(x->dtype), c, x, idx, upd, y,
                                                          pp);
    if (red != RED_ADD)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "ScatterElements: reduction on CUDA");
    switch (x->dtype) {
    case ONYX_FLOAT: return scatter_elements_launch<true>::run<float>(c, x, idx, upd, y, pp);
    case ONYX_DOUBLE: return scatter_elements_launch<true>::run<double>(c, x, idx, upd, y, pp);
    case ONYX_INT32: return scatter_elements_launch<true>::run<int32_t>(c, x, idx, upd, y, pp);
    case ONYX_INT64: return scatter_elements_launch<true>::run<int64_t>(c, x, idx, upd, y, pp);
    case ONYX_UINT32: return scatter_elements_launch<true>::run<uint32_t>(c, x, idx, upd, y, pp);
    case ONYX_UINT64: return scatter_elements_launch<true>::run<uint64_t>(c, x, idx, upd, y, pp);
    default:
        return onyx_error(ONYX_ERR_UNSUPPORTED, "ScatterElements: add of type %d on CUDA",
                          (int)x->dtype);
    }
}

// ---------------------------------------------------------------- GatherND, ScatterND

namespace {

// Tuple t of m indices picks a slice of `slice` elements at
// (t / per_batch) * batch_stride + sum_k idx[t*m + k] * st[k] (all in W-byte elements).
struct nd_params {
    int m;
    int64_t per_batch, batch_stride, slice;
    int64_t dims[CUDA_MAX_RANK], st[CUDA_MAX_RANK];
};

// Offset of tuple t, or -1 when one of its indices is out of range.
template <typename X, typename I>
__device__ __forceinline__ int64_t nd_offset(const nd_params &p, const X *__restrict__ idx, I t) {
    int64_t off = (int64_t)(t / (I)p.per_batch) * p.batch_stride;
    for (int k = 0; k < p.m; k++) {
        int64_t v = wrap_index((int64_t)idx[(int64_t)t * p.m + k], p.dims[k]);
        if (v < 0) return -1;
        off += v * p.st[k];
    }
    return off;
}

template <typename T, typename X, typename I>
__device__ __forceinline__ void gather_nd_body(T *__restrict__ y, const T *__restrict__ x,
                                               const X *__restrict__ idx, const nd_params &p, I n) {
    for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (I)gridDim.x * blockDim.x) {
        I t = i / (I)p.slice, j = i - t * (I)p.slice;
        int64_t off = nd_offset<X, I>(p, idx, t);
        y[i] = off >= 0 ? x[off + (int64_t)j] : T();
    }
}

template <typename T, typename X>
__global__ void gather_nd_kernel(T *__restrict__ y, const T *__restrict__ x,
                                 const X *__restrict__ idx, nd_params p, int64_t n) {
    if (n <= INT32_MAX) gather_nd_body<T, X, uint32_t>(y, x, idx, p, (uint32_t)n);
    else gather_nd_body<T, X, int64_t>(y, x, idx, p, n);
}

template <typename T, typename X, typename I>
__device__ __forceinline__ void scatter_nd_body(T *__restrict__ y, const T *__restrict__ upd,
                                                const X *__restrict__ idx, const nd_params &p,
                                                I n) {
    for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (I)gridDim.x * blockDim.x) {
        I t = i / (I)p.slice, j = i - t * (I)p.slice;
        int64_t off = nd_offset<X, I>(p, idx, t);
        if (off >= 0) y[off + (int64_t)j] = upd[i];
    }
}

template <typename T, typename X>
__global__ void scatter_nd_kernel(T *__restrict__ y, const T *__restrict__ upd,
                                  const X *__restrict__ idx, nd_params p, int64_t n) {
    if (n <= INT32_MAX) scatter_nd_body<T, X, uint32_t>(y, upd, idx, p, (uint32_t)n);
    else scatter_nd_body<T, X, int64_t>(y, upd, idx, p, n);
}

// Slices of `slice` elements of es bytes moved as W-byte elements: every offset is a multiple of
// the slice, so it scales exactly.
void nd_widen(nd_params *p, size_t es, size_t w) {
    int64_t f = (int64_t)w, e = (int64_t)es;
    p->slice = p->slice * e / f;
    p->batch_stride = p->batch_stride * e / f;
    for (int k = 0; k < p->m; k++) p->st[k] = p->st[k] * e / f;
}

template <bool SCATTER, typename T>
onyx_status nd_launch(const kernel_call *c, void *dst, const void *src, const tensor *idx,
                      const nd_params &p, int64_t n) {
    unsigned blocks = cuda_blocks(n);
    cudaStream_t s = cuda_stream(c);
    if (SCATTER) {
        if (idx->dtype == ONYX_INT32)
            scatter_nd_kernel<T, int32_t><<<blocks, CUDA_THREADS, 0, s>>>(
                (T *)dst, (const T *)src, (const int32_t *)idx->data, p, n);
        else
            scatter_nd_kernel<T, int64_t><<<blocks, CUDA_THREADS, 0, s>>>(
                (T *)dst, (const T *)src, (const int64_t *)idx->data, p, n);
        return cuda_launched("ScatterND");
    }
    if (idx->dtype == ONYX_INT32)
        gather_nd_kernel<T, int32_t><<<blocks, CUDA_THREADS, 0, s>>>(
            (T *)dst, (const T *)src, (const int32_t *)idx->data, p, n);
    else
        gather_nd_kernel<T, int64_t><<<blocks, CUDA_THREADS, 0, s>>>(
            (T *)dst, (const T *)src, (const int64_t *)idx->data, p, n);
    return cuda_launched("GatherND");
}

// dst/src: the dense side (output of a gather, updates of a scatter) and the indexed side; n
// elements of es bytes on the dense side.
template <bool SCATTER>
onyx_status nd_dispatch(const kernel_call *c, void *dst, const void *src, const tensor *idx,
                        nd_params p, size_t es, int64_t n) {
    size_t w = mv_align_width(p.slice * (int64_t)es, dst, src);
    if (w < es) w = es;
    nd_widen(&p, es, w);
    n = n * (int64_t)es / (int64_t)w;
    switch (w) {
    case 1: return nd_launch<SCATTER, uint8_t>(c, dst, src, idx, p, n);
    case 2: return nd_launch<SCATTER, uint16_t>(c, dst, src, idx, p, n);
    case 4: return nd_launch<SCATTER, uint32_t>(c, dst, src, idx, p, n);
    case 8: return nd_launch<SCATTER, uint64_t>(c, dst, src, idx, p, n);
    default: return nd_launch<SCATTER, uint4>(c, dst, src, idx, p, n);
    }
}

// GatherND's plan as the CPU's checks: false when indices and batch_dims do not fit the data.
bool gather_nd_plan(const graph_node *n, int xr, const int64_t *xd, int q, const int64_t *id,
                    nd_params *p, int64_t *tuples) {
    int64_t bd = n->version >= 12 ? attr_int(n, "batch_dims", 0) : 0;
    if (xr > CUDA_MAX_RANK || q < 1 || bd < 0 || bd >= q || bd >= xr || id[q - 1] > xr - bd)
        return false;
    int b = (int)bd;
    for (int k = 0; k < b; k++)
        if (id[k] != xd[k]) return false;
    memset(p, 0, sizeof *p);
    p->m = (int)id[q - 1];
    int64_t xst[CUDA_MAX_RANK];
    mv_strides(xr, xd, xst);
    for (int k = 0; k < p->m; k++) {
        p->dims[k] = xd[b + k];
        p->st[k] = xst[b + k];
    }
    p->per_batch = mv_product(id, b, q - 1);
    p->batch_stride = mv_product(xd, b, xr);
    p->slice = mv_product(xd, b + p->m, xr);
    *tuples = mv_product(id, 0, q - 1);
    return true;
}

// ScatterND's plan: tuples of m indices into the leading axes of the data.
bool scatter_nd_plan(int xr, const int64_t *xd, int q, const int64_t *id, nd_params *p,
                     int64_t *tuples) {
    if (xr > CUDA_MAX_RANK || q < 1 || id[q - 1] > xr) return false;
    memset(p, 0, sizeof *p);
    p->m = (int)id[q - 1];
    int64_t xst[CUDA_MAX_RANK];
    mv_strides(xr, xd, xst);
    for (int k = 0; k < p->m; k++) {
        p->dims[k] = xd[k];
        p->st[k] = xst[k];
    }
    p->slice = mv_product(xd, p->m, xr);
    *tuples = mv_product(id, 0, q - 1);
    p->per_batch = *tuples > 0 ? *tuples : 1; /* one batch: the offset term stays 0 */
    p->batch_stride = 0;
    return true;
}

} // namespace

bool mv_gather_nd_supports(const kernel_prep *p) {
    const type_info *x = p->in_type[0], *idx = p->n_in > 1 ? p->in_type[1] : NULL;
    nd_params np;
    int64_t tuples;
    if (!idx || !mv_ranks_ok(p) || !mv_size_ok(x->dtype) || !index_type(idx->dtype) ||
        !gather_nd_plan(p->node, x->rank, x->dims, idx->rank, idx->dims, &np, &tuples))
        return false;
    const type_info *y = &p->out_type[0];
    return y->dtype == x->dtype && mv_product(y->dims, 0, y->rank) == tuples * np.slice;
}

onyx_status mv_gather_nd_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0), *idx = kernel_input(c, 1);
    tensor *y = kernel_output(c, 0);
    nd_params p;
    int64_t tuples;
    if (!index_type(idx->dtype) ||
        !gather_nd_plan(c->node, x->rank, x->dims, idx->rank, idx->dims, &p, &tuples) ||
        y->numel != tuples * p.slice || y->dtype != x->dtype)
        return onyx_error(ONYX_ERR_SHAPE, "GatherND: indices do not fit the data");
    if (y->numel == 0) return ONYX_OK;
    return nd_dispatch<false>(c, y->data, x->data, idx, p, dtype_size(x->dtype), y->numel);
}

bool mv_scatter_nd_supports(const kernel_prep *p) {
    if (p->n_in < 3) return false;
    const type_info *x = p->in_type[0], *idx = p->in_type[1], *upd = p->in_type[2];
    nd_params np;
    int64_t tuples;
    if (!idx || !upd || !mv_ranks_ok(p) || !mv_size_ok(x->dtype) || !index_type(idx->dtype) ||
        upd->dtype != x->dtype || read_reduction(p->node) != RED_NONE ||
        !scatter_nd_plan(x->rank, x->dims, idx->rank, idx->dims, &np, &tuples))
        return false;
    return mv_product(upd->dims, 0, upd->rank) == tuples * np.slice;
}

onyx_status mv_scatter_nd_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0), *idx = kernel_input(c, 1), *upd = kernel_input(c, 2);
    tensor *y = kernel_output(c, 0);
    nd_params p;
    int64_t tuples;
    if (read_reduction(c->node) != RED_NONE)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "ScatterND: reduction on CUDA");
    if (!index_type(idx->dtype) || upd->dtype != x->dtype ||
        !scatter_nd_plan(x->rank, x->dims, idx->rank, idx->dims, &p, &tuples) ||
        upd->numel != tuples * p.slice)
        return onyx_error(ONYX_ERR_SHAPE, "ScatterND: indices or updates do not fit the data");
    TRY(copy_data(c, x, y, "ScatterND"));
    if (upd->numel == 0 || y->numel == 0) return ONYX_OK;
    return nd_dispatch<true>(c, y->data, upd->data, idx, p, dtype_size(x->dtype), upd->numel);
}
