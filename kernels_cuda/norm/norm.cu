// Normalizations on CUDA: LayerNormalization and RMSNormalization (a warp or block per row),
// GroupNormalization, InstanceNormalization and MeanVarianceNormalization (statistics of long
// groups split over blocks and merged, then an elementwise pass). Statistics accumulate in
// double, two-pass per part (mean, then squared deviations), as kernels_cpu/norm/norm.c and
// kernels_cpu/math/lpnorm_mvn.c do; the affine pass mirrors the CPU's compute type. The axes are
// the ones the schemas resolved (core/op_params.h).
#include <string.h>

#include "kernels_cuda/reduce/reduce_common.cuh"

namespace nrm {
namespace {

using rdc::add_op;
using rdc::block_reduce;
using rdc::kept_offset;
using rdc::red_offset;
using rdc::rplan;
using rdc::warp_reduce;

// Rounds a statistic to the stash type's precision (stage one's computation type).
__device__ __forceinline__ double stash_round(int stash, double v) {
    if (stash == ONYX_FLOAT) return (float)v;
    if (stash == ONYX_BFLOAT16) return __bfloat162float(__float2bfloat16_rn((float)v));
    return v;
}

__device__ __forceinline__ void store_as(void *p, onyx_dtype dt, int64_t i, double v) {
    switch (dt) {
    case ONYX_FLOAT:
        ((float *)p)[i] = (float)v;
        break;
    case ONYX_DOUBLE:
        ((double *)p)[i] = v;
        break;
    case ONYX_FLOAT16:
        ((__half *)p)[i] = __float2half_rn((float)v);
        break;
    case ONYX_BFLOAT16:
        ((__nv_bfloat16 *)p)[i] = __float2bfloat16_rn((float)v);
        break;
    default:
        break;
    }
}

unsigned grid_cap(int64_t n) { return (unsigned)(n < 1 ? 1 : n > (1 << 20) ? (1 << 20) : n); }

int64_t type_numel(const type_info *t) {
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++) n *= t->dims[i];
    return n;
}

// The single axis the schema resolved for an input of rank `rank` (params, core/op_params.h);
// false where the plan handed none.
bool norm_axis(const op_params *params, int rank, int *axis) {
    const geom_axis_set *axes = op_params_axes(params);
    if (!axes || axes->rank != rank || axes->axis < 0) return false;
    *axis = axes->axis;
    return true;
}

// ---- Layer / RMS normalization: x as [rows, cols], cols the axes from `axis` on

struct ln_args {
    const void *x, *w, *b;
    void *y, *mean, *inv;
    onyx_dtype mean_dt, inv_dt;
    int64_t rows, cols, wrows, brows;
    double eps;
    int stash;
    bool rms;
};

template <typename T, bool BLOCK> __global__ void __launch_bounds__(1024) ln_rows(ln_args a) {
    typedef typename compute<T>::type C;
    __shared__ double sh[32];
    const int64_t per = BLOCK ? 1 : blockDim.x / 32;
    const int64_t lane = BLOCK ? threadIdx.x : (threadIdx.x & 31);
    const int64_t width = BLOCK ? blockDim.x : 32;
    const int64_t cols = a.cols;
    for (int64_t r = (int64_t)blockIdx.x * per + (BLOCK ? 0 : threadIdx.x / 32); r < a.rows;
         r += (int64_t)gridDim.x * per) {
        const T *x = (const T *)a.x + r * cols;
        T *y = (T *)a.y + r * cols;
        double m = 0;
        if (!a.rms) {
            double s = 0;
            for (int64_t j = lane; j < cols; j += width) s += (double)to_compute(x[j]);
            if constexpr (BLOCK)
                s = block_reduce(s, add_op(), sh);
            else
                s = warp_reduce(s, add_op());
            m = stash_round(a.stash, s / (double)cols);
        }
        double v = 0;
        for (int64_t j = lane; j < cols; j += width) {
            double d = (double)to_compute(x[j]) - m;
            v += d * d;
        }
        if constexpr (BLOCK)
            v = block_reduce(v, add_op(), sh);
        else
            v = warp_reduce(v, add_op());
        double inv = stash_round(a.stash, 1 / sqrt(v / (double)cols + a.eps));
        if (lane == 0) {
            if (a.mean) store_as(a.mean, a.mean_dt, r, m);
            if (a.inv) store_as(a.inv, a.inv_dt, r, inv);
        }
        const T *w = (const T *)a.w + (r % a.wrows) * cols;
        const T *b = a.b ? (const T *)a.b + (r % a.brows) * cols : NULL;
        const C fm = (C)m, fi = (C)inv;
        for (int64_t j = lane; j < cols; j += width) {
            C val = ((C)to_compute(x[j]) - fm) * fi * (C)to_compute(w[j]);
            if (b) val += (C)to_compute(b[j]);
            y[j] = from_compute<T>(val);
        }
    }
}

// The same for rows of at most 32 * NV 16-byte vectors (every pointer and row 16-byte aligned): a
// warp holds its row in registers, so x is read once instead of three times, with vector loads.
// The statistics and the affine pass are ln_rows' (lane sums in double, then the warp's).
template <typename T, int NV> __global__ void __launch_bounds__(256) ln_rows_vec(ln_args a) {
    typedef typename compute<T>::type C;
    constexpr int V = 16 / sizeof(T); // values per vector
    union vec {
        uint4 u;
        T v[V];
    };
    const int lane = threadIdx.x & 31;
    const int64_t cols = a.cols;
    for (int64_t r = (int64_t)blockIdx.x * 8 + threadIdx.x / 32; r < a.rows;
         r += (int64_t)gridDim.x * 8) {
        const T *x = (const T *)a.x + r * cols;
        C xv[NV][V];
        double s = 0;
#pragma unroll
        for (int k = 0; k < NV; k++) {
            const int64_t c = ((int64_t)k * 32 + lane) * V;
            vec in;
            in.u = c < cols ? *(const uint4 *)(x + c) : make_uint4(0, 0, 0, 0);
#pragma unroll
            for (int e = 0; e < V; e++) {
                xv[k][e] = (C)to_compute(in.v[e]);
                s += (double)xv[k][e]; // zeros past the row
            }
        }
        double m = 0;
        if (!a.rms) m = stash_round(a.stash, warp_reduce(s, add_op()) / (double)cols);
        double v = 0;
#pragma unroll
        for (int k = 0; k < NV; k++)
            if (((int64_t)k * 32 + lane) * V < cols)
#pragma unroll
                for (int e = 0; e < V; e++) {
                    const double d = (double)xv[k][e] - m;
                    v += d * d;
                }
        v = warp_reduce(v, add_op());
        const double inv = stash_round(a.stash, 1 / sqrt(v / (double)cols + a.eps));
        if (lane == 0) {
            if (a.mean) store_as(a.mean, a.mean_dt, r, m);
            if (a.inv) store_as(a.inv, a.inv_dt, r, inv);
        }
        const T *w = (const T *)a.w + (r % a.wrows) * cols;
        const T *b = a.b ? (const T *)a.b + (r % a.brows) * cols : NULL;
        T *y = (T *)a.y + r * cols;
        const C fm = (C)m, fi = (C)inv;
#pragma unroll
        for (int k = 0; k < NV; k++) {
            const int64_t c = ((int64_t)k * 32 + lane) * V;
            if (c >= cols) continue;
            vec wv, bv, out;
            wv.u = *(const uint4 *)(w + c);
            if (b) bv.u = *(const uint4 *)(b + c);
#pragma unroll
            for (int e = 0; e < V; e++) {
                C val = (xv[k][e] - fm) * fi * (C)to_compute(wv.v[e]);
                if (b) val += (C)to_compute(bv.v[e]);
                out.v[e] = from_compute<T>(val);
            }
            *(uint4 *)(y + c) = out.u;
        }
    }
}

struct ln_launch {
    template <typename T> static onyx_status run(const kernel_call *c, const ln_args &a) {
        cudaStream_t st = cuda_stream(c);
        const char *name = a.rms ? "RMSNormalization" : "LayerNormalization";
        if constexpr (sizeof(T) <= 4) {
            constexpr int64_t V = 16 / sizeof(T);
            auto al = [](const void *p) { return (uintptr_t)p % 16 == 0; };
            const int64_t nv = a.cols / V; // vectors per row
            if (a.cols % V == 0 && nv <= 32 * 4 && al(a.x) && al(a.y) && al(a.w) &&
                (!a.b || al(a.b))) {
                const unsigned grid = grid_cap((a.rows + 7) / 8);
                if (nv <= 32)
                    ln_rows_vec<T, 1><<<grid, 256, 0, st>>>(a);
                else if (nv <= 64)
                    ln_rows_vec<T, 2><<<grid, 256, 0, st>>>(a);
                else
                    ln_rows_vec<T, 4><<<grid, 256, 0, st>>>(a);
                return cuda_launched(name);
            }
        }
        if (a.cols > 1024)
            ln_rows<T, true><<<grid_cap(a.rows), a.cols >= 8192 ? 1024 : 256, 0, st>>>(a);
        else
            ln_rows<T, false><<<grid_cap((a.rows + 7) / 8), 256, 0, st>>>(a);
        return cuda_launched(name);
    }
};

// Whether scale/bias t maps onto x's rows as element (r, j) = t[(r % rows) * cols + j]: past its
// leading 1s it covers every normalized axis and broadcasts nowhere (the CPU's fast path).
bool param_fits(const type_info *t, const type_info *x, int axis) {
    if (!t || t->rank < 0 || t->rank > x->rank || t->dtype != x->dtype) return false;
    int off = x->rank - t->rank, lead = 0;
    while (lead < t->rank && t->dims[lead] == 1) lead++;
    for (int d = x->rank - 1; d >= 0; d--) {
        int k = d - off;
        if (k >= lead && t->dims[k] != x->dims[d]) return false;
    }
    return off + lead <= axis;
}

int64_t param_rows(const tensor *t, int64_t cols) {
    int64_t r = cols ? t->numel / cols : 1;
    return r > 0 ? r : 1;
}

// Which of the ops this is: RMS or not, and the outputs that take the rows' mean and inverse
// standard deviation (-1: none).
struct ln_form {
    bool rms;
    int mean_out, inv_out;
};
const ln_form LAYER_NORM = {false, 1, 2}, RMS_NORM = {true, -1, -1},
             SIMPLIFIED_NORM = {true, -1, 1}; // onnxruntime's SimplifiedLayerNormalization

bool ln_supports_(const kernel_prep *p, ln_form f) {
    const type_info *x = p->in_type[0];
    if (!x || x->rank < 1 || !dtype_is_float(x->dtype)) return false;
    int axis;
    if (!norm_axis(p->params, x->rank, &axis)) return false;
    if (p->n_in < 2 || !param_fits(p->in_type[1], x, axis)) return false;
    if (!f.rms && p->n_in > 2 && p->in_type[2] && !param_fits(p->in_type[2], x, axis)) return false;
    if (p->out_type[0].dtype != x->dtype) return false;
    int64_t rows = 1;
    for (int d = 0; d < axis; d++) rows *= x->dims[d];
    for (int o = 1; o < p->n_out; o++) {
        if (p->node->n_outputs <= o || p->node->outputs[o] < 0) continue;
        if (o != f.mean_out && o != f.inv_out) return false;
        const type_info *t = &p->out_type[o];
        if (!dtype_is_float(t->dtype) || type_numel(t) != rows) return false;
    }
    return true;
}

onyx_status ln_run(const kernel_call *c, ln_form f) {
    const bool rms = f.rms;
    const tensor *x = kernel_input(c, 0), *w = kernel_input(c, 1);
    const tensor *b = rms ? NULL : kernel_input(c, 2);
    tensor *mean = f.mean_out > 0 ? kernel_output(c, f.mean_out) : NULL,
           *inv = f.inv_out > 0 ? kernel_output(c, f.inv_out) : NULL;
    int axis;
    TRY(kernel_axis(c->params, x->rank, &axis));
    if (!w) return onyx_error(ONYX_ERR_SHAPE, "%s: input 1 (scale) is missing", c->node->op_type);
    ln_args a;
    a.x = x->data;
    a.w = w->data;
    a.b = b ? b->data : NULL;
    a.y = kernel_output(c, 0)->data;
    a.mean = mean ? mean->data : NULL;
    a.inv = inv ? inv->data : NULL;
    a.mean_dt = mean ? mean->dtype : ONYX_FLOAT;
    a.inv_dt = inv ? inv->dtype : ONYX_FLOAT;
    a.rows = a.cols = 1;
    for (int d = 0; d < x->rank; d++) {
        if (d < axis)
            a.rows *= x->dims[d];
        else
            a.cols *= x->dims[d];
    }
    a.wrows = param_rows(w, a.cols);
    a.brows = b ? param_rows(b, a.cols) : 1;
    a.eps = attr_float(c->node, "epsilon", 1e-5f);
    a.stash = (int)attr_int(c->node, "stash_type", 1);
    a.rms = rms;
    if (x->numel == 0) return ONYX_OK;
    CUDA_DISPATCH_FLOATS(x->dtype, ln_launch, c, a)
    return onyx_error(ONYX_ERR_UNSUPPORTED, "%s: type %d on CUDA", c->node->op_type, (int)x->dtype);
}

// ---- onnxruntime's SkipLayerNormalization and SkipSimplifiedLayerNormalization: input + skip
// (broadcast over rows) + bias, written as input_skip_bias_sum (output 3) or into scratch, in the
// input's type, then normalized over the last axis by the rows kernels above with gamma (and
// beta), RMS for the simplified form; the statistics rounded to float, as the CPU's. A float16
// sum is normalized as rounded to float16 (the CPU normalizes it before rounding).

template <typename T>
__global__ void skip_sum(const T *x, const T *skip, const T *bias, T *sum, int64_t rows,
                         int64_t cols, int64_t skip_rows) {
    CUDA_GRID_LOOP(i, rows * cols) {
        const int64_t r = i / cols, j = i - r * cols;
        auto v = to_compute(x[i]) + to_compute(skip[(r % skip_rows) * cols + j]);
        if (bias) v += to_compute(bias[j]);
        sum[i] = from_compute<T>(v);
    }
}

// The sum into a.x, then the rows normalized.
struct skip_launch {
    template <typename T>
    static onyx_status run(const kernel_call *c, const tensor *x, const tensor *skip,
                           const tensor *bias, const ln_args &a) {
        skip_sum<T><<<cuda_blocks(a.rows * a.cols), CUDA_THREADS, 0, cuda_stream(c)>>>(
            (const T *)x->data, (const T *)skip->data, bias ? (const T *)bias->data : NULL,
            (T *)a.x, a.rows, a.cols, skip->numel / a.cols);
        TRY(cuda_launched(c->node->op_type));
        return ln_launch::run<T>(c, a);
    }
};

bool skip_supports(const kernel_prep *p) {
    const bool rms = strcmp(p->node->op_type, "SkipSimplifiedLayerNormalization") == 0;
    const type_info *x = p->in_type[0];
    if (!x || (x->rank != 2 && x->rank != 3) || !dtype_is_float(x->dtype)) return false;
    // skip, gamma, then beta and bias (the simplified form: bias alone)
    for (int i = 1; i < p->n_in; i++) {
        const type_info *t = p->in_type[i];
        if (t ? t->dtype != x->dtype : i < 3) return false;
    }
    if (p->n_in > (rms ? 4 : 5)) return false;
    for (int o = 0; o < p->n_out; o++) {
        if (p->node->n_outputs <= o || p->node->outputs[o] < 0) continue;
        onyx_dtype want = o == 1 || o == 2 ? ONYX_FLOAT : x->dtype;
        if (p->out_type[o].dtype != want) return false;
    }
    return true;
}

onyx_status skip_run(const kernel_call *c, bool rms) {
    const tensor *x = kernel_input(c, 0), *skip = kernel_input(c, 1), *gamma = kernel_input(c, 2);
    const tensor *beta = rms ? NULL : kernel_input(c, 3), *bias = kernel_input(c, rms ? 3 : 4);
    tensor *y = kernel_output(c, 0), *mean = kernel_output(c, 1), *inv = kernel_output(c, 2),
           *sum = kernel_output(c, 3);
    const char *op = c->node->op_type;
    if (x->rank != 2 && x->rank != 3)
        return onyx_error(ONYX_ERR_SHAPE, "%s: input has rank %d, expected 2 or 3", op, x->rank);
    const int64_t cols = x->dims[x->rank - 1], rows = cols ? x->numel / cols : 0;
    const tensor *params[3] = {gamma, beta, bias};
    for (int i = 0; i < 3; i++)
        if (params[i] && (params[i]->dtype != x->dtype || params[i]->numel != cols))
            return onyx_error(ONYX_ERR_SHAPE,
                              "%s: gamma/beta/bias must have the input's type and %lld elements",
                              op, (long long)cols);
    if (!gamma) return onyx_error(ONYX_ERR_SHAPE, "%s: input 2 (gamma) is missing", op);
    if (skip->dtype != x->dtype || cols == 0 || skip->numel % cols != 0 || skip->numel == 0 ||
        rows % (skip->numel / cols) != 0)
        return onyx_error(ONYX_ERR_SHAPE, "%s: skip does not broadcast to the input", op);
    if ((mean && (mean->dtype != ONYX_FLOAT || mean->numel != rows)) ||
        (inv && (inv->dtype != ONYX_FLOAT || inv->numel != rows)))
        return onyx_error(ONYX_ERR_SHAPE,
                          "%s: mean and inv_std_var must be float with %lld elements", op,
                          (long long)rows);
    if (rows == 0) return ONYX_OK;
    void *s = sum ? sum->data : NULL;
    if (!s) TRY(cuda_scratch(c, x->nbytes, &s));
    ln_args a;
    a.x = s;
    a.w = gamma->data;
    a.b = beta ? beta->data : NULL;
    a.y = y->data;
    a.mean = !rms && mean ? mean->data : NULL;
    a.inv = inv ? inv->data : NULL;
    a.mean_dt = a.inv_dt = ONYX_FLOAT;
    a.rows = rows;
    a.cols = cols;
    a.wrows = a.brows = 1;
    a.eps = attr_float(c->node, "epsilon", 1e-12f);
    a.stash = ONYX_FLOAT;
    a.rms = rms;
    CUDA_DISPATCH_FLOATS(x->dtype, skip_launch, c, x, skip, bias, a)
    return onyx_error(ONYX_ERR_UNSUPPORTED, "%s: type %d on CUDA", op, (int)x->dtype);
}

// ---- statistics of groups (the kept positions of a plan, each reducing `count` elements),
// each split in nparts parts whose (count, mean, M2) are merged as Chan et al.

template <typename T, bool BLOCK>
__global__ void group_stats(const T *x, rplan p, int64_t nparts, int64_t chunk, double *part) {
    __shared__ double sh[32];
    const int64_t per = BLOCK ? 1 : blockDim.x / 32;
    const int64_t lane = BLOCK ? threadIdx.x : (threadIdx.x & 31);
    const int64_t width = BLOCK ? blockDim.x : 32;
    const int64_t units = p.nout * nparts;
    for (int64_t u = (int64_t)blockIdx.x * per + (BLOCK ? 0 : threadIdx.x / 32); u < units;
         u += (int64_t)gridDim.x * per) {
        int64_t g = u / nparts, s = u - g * nparts;
        const T *xg = x + kept_offset(p, g);
        int64_t t0 = s * chunk, t1 = t0 + chunk < p.count ? t0 + chunk : p.count;
        double sum = 0;
        for (int64_t t = t0 + lane; t < t1; t += width)
            sum += (double)to_compute(xg[red_offset(p, t)]);
        if constexpr (BLOCK)
            sum = block_reduce(sum, add_op(), sh);
        else
            sum = warp_reduce(sum, add_op());
        int64_t len = t1 > t0 ? t1 - t0 : 0;
        double mean = len ? sum / (double)len : 0, m2 = 0;
        for (int64_t t = t0 + lane; t < t1; t += width) {
            double d = (double)to_compute(xg[red_offset(p, t)]) - mean;
            m2 += d * d;
        }
        if constexpr (BLOCK)
            m2 = block_reduce(m2, add_op(), sh);
        else
            m2 = warp_reduce(m2, add_op());
        if (lane == 0) {
            part[3 * u] = (double)len;
            part[3 * u + 1] = mean;
            part[3 * u + 2] = m2;
        }
    }
}

// Group g's mean and (population) variance from its parts; 0 and 0 when it is empty.
__device__ void merge_parts(const double *part, int64_t g, int64_t nparts, double *mean,
                            double *var) {
    double n = 0, m = 0, m2 = 0;
    for (int64_t s = 0; s < nparts; s++) {
        const double *q = part + 3 * (g * nparts + s);
        double nb = q[0];
        if (nb == 0) continue;
        if (n == 0) {
            n = nb, m = q[1], m2 = q[2];
            continue;
        }
        double d = q[1] - m, nn = n + nb;
        m += d * nb / nn;
        m2 += q[2] + d * d * n * nb / nn;
        n = nn;
    }
    *mean = m;
    *var = n > 0 ? m2 / n : 0;
}

// Parts per group and their length: enough blocks to fill the GPU, parts of at least 4096.
void split_groups(int64_t groups, int64_t count, int64_t *nparts, int64_t *chunk) {
    int64_t s = (528 + groups - 1) / groups, most = (count + 4095) / 4096;
    if (s > most) s = most;
    if (s > 1024) s = 1024;
    if (s < 1) s = 1;
    *chunk = count > 0 ? (count + s - 1) / s : 1;
    *nparts = count > 0 ? (count + *chunk - 1) / *chunk : 1;
}

template <typename T>
onyx_status launch_stats(cudaStream_t st, const T *x, const rplan &p, int64_t nparts, int64_t chunk,
                         double *part) {
    if (chunk >= 2048)
        group_stats<T, true><<<grid_cap(p.nout * nparts), 256, 0, st>>>(x, p, nparts, chunk, part);
    else
        group_stats<T, false>
            <<<grid_cap((p.nout * nparts + 7) / 8), 256, 0, st>>>(x, p, nparts, chunk, part);
    return cuda_launched("normalization statistics");
}

// ---- Group / Instance normalization: x as [N, G, cpg, inner], scale/bias per channel (or per
// group, GroupNormalization 18). Per (instance, channel): y = x * A + B.

struct gn_args {
    int64_t nc, channels, groups, cpg, inner, numel;
    bool per_channel;
    int stash;
    double eps;
};

template <typename T>
__global__ void gn_coef(const double *part, int64_t nparts, const T *sc, const T *bi,
                        typename compute<T>::type *A, typename compute<T>::type *B, gn_args a) {
    typedef typename compute<T>::type C;
    CUDA_GRID_LOOP(i, a.nc) {
        int64_t n = i / a.channels, ch = i - n * a.channels, g = ch / a.cpg;
        double m, var;
        merge_parts(part, n * a.groups + g, nparts, &m, &var);
        m = stash_round(a.stash, m);
        double inv = stash_round(a.stash, 1 / sqrt(var + a.eps));
        int64_t pi = a.per_channel ? ch : g;
        double k = (double)to_compute(sc[pi]) * inv;
        A[i] = (C)k;
        B[i] = (C)((double)to_compute(bi[pi]) - m * k);
    }
}

template <typename T>
__global__ void gn_apply(const T *x, T *y, const typename compute<T>::type *A,
                         const typename compute<T>::type *B, int64_t inner, int64_t numel) {
    CUDA_GRID_LOOP(i, numel) {
        int64_t k = i / inner;
        y[i] = from_compute<T>(to_compute(x[i]) * A[k] + B[k]);
    }
}

struct gn_launch {
    template <typename T>
    static onyx_status run(const kernel_call *c, const tensor *x, const tensor *sc,
                           const tensor *bi, tensor *y, const gn_args &a) {
        typedef typename compute<T>::type C;
        cudaStream_t st = cuda_stream(c);
        // the rows [N * G, cpg * inner] as a plan: groups kept, their elements reduced
        int64_t dims[2] = {x->dims[0] * a.groups, a.cpg * a.inner};
        bool mask[2] = {false, true};
        rplan p;
        rdc::rplan_build(&p, 2, dims, mask);
        int64_t nparts, chunk;
        split_groups(p.nout, p.count, &nparts, &chunk);
        size_t part_bytes = ((size_t)(p.nout * nparts) * 3 * sizeof(double) + 255) / 256 * 256;
        void *mem;
        TRY(cuda_scratch(c, part_bytes + 2 * (size_t)a.nc * sizeof(C), &mem));
        double *part = (double *)mem;
        C *A = (C *)((char *)mem + part_bytes), *B = A + a.nc;
        TRY(launch_stats(st, cuda_data<T>(x), p, nparts, chunk, part));
        gn_coef<T><<<cuda_blocks(a.nc), CUDA_THREADS, 0, st>>>(part, nparts, cuda_data<T>(sc),
                                                               cuda_data<T>(bi), A, B, a);
        TRY(cuda_launched("GroupNormalization coefficients"));
        gn_apply<T><<<cuda_blocks(a.numel), CUDA_THREADS, 0, st>>>(cuda_data<T>(x), cuda_data<T>(y),
                                                                   A, B, a.inner, a.numel);
        return cuda_launched("GroupNormalization");
    }
};

bool gn_supports_(const kernel_prep *p, int64_t groups, bool per_channel) {
    const type_info *x = p->in_type[0];
    if (!x || x->rank < 2 || !dtype_is_float(x->dtype)) return false;
    if (p->out_type[0].dtype != x->dtype) return false;
    int64_t ch = x->dims[1];
    if (groups <= 0 || ch % groups != 0) return false;
    int64_t want = per_channel ? ch : groups;
    for (int i = 1; i < 3; i++) {
        const type_info *t = i < p->n_in ? p->in_type[i] : NULL;
        if (!t || t->rank < 0 || t->dtype != x->dtype || type_numel(t) != want) return false;
    }
    return true;
}

onyx_status gn_run(const kernel_call *c, int64_t groups, bool per_channel, int stash) {
    const tensor *x = kernel_input(c, 0), *sc = kernel_input(c, 1), *bi = kernel_input(c, 2);
    tensor *y = kernel_output(c, 0);
    if (x->rank < 2 || groups <= 0 || x->dims[1] % groups != 0 || !sc || !bi)
        return onyx_error(ONYX_ERR_SHAPE, "%s: bad shapes on CUDA", c->node->op_type);
    gn_args a;
    a.channels = x->dims[1];
    a.groups = groups;
    a.cpg = a.channels / groups;
    a.nc = x->dims[0] * a.channels;
    a.inner = 1;
    for (int d = 2; d < x->rank; d++) a.inner *= x->dims[d];
    a.numel = x->numel;
    a.per_channel = per_channel;
    a.stash = stash;
    a.eps = attr_float(c->node, "epsilon", 1e-5f);
    if (x->numel == 0) return ONYX_OK;
    CUDA_DISPATCH_FLOATS(x->dtype, gn_launch, c, x, sc, bi, y, a)
    return onyx_error(ONYX_ERR_UNSUPPORTED, "%s: type %d on CUDA", c->node->op_type, (int)x->dtype);
}

// ---- MeanVarianceNormalization: y = (x - mean) / (sqrt(var) + 1e-9) over the axes, in double

// Element index -> group index: the position over the kept dims (row-major).
struct gmap {
    int rank;
    int64_t dims[CUDA_MAX_RANK], gstride[CUDA_MAX_RANK];
};

__global__ void mvn_finish(const double *part, int64_t nparts, int64_t groups, double *mean,
                           double *denom) {
    CUDA_GRID_LOOP(g, groups) {
        double m, var;
        merge_parts(part, g, nparts, &m, &var);
        mean[g] = m;
        denom[g] = sqrt(var) + 1e-9;
    }
}

template <typename T>
__global__ void mvn_apply(const T *x, T *y, const double *mean, const double *denom, gmap gm,
                          int64_t numel) {
    CUDA_GRID_LOOP(i, numel) {
        int64_t idx = i, g = 0;
        for (int d = gm.rank - 1; d >= 0; d--) {
            int64_t q = idx / gm.dims[d];
            g += (idx - q * gm.dims[d]) * gm.gstride[d];
            idx = q;
        }
        double v = ((double)to_compute(x[i]) - mean[g]) / denom[g];
        y[i] = from_compute<T>((typename compute<T>::type)v);
    }
}

struct mvn_launch {
    template <typename T>
    static onyx_status run(const kernel_call *c, const tensor *x, tensor *y, const bool *mask) {
        cudaStream_t st = cuda_stream(c);
        rplan p;
        rdc::rplan_build(&p, x->rank, x->dims, mask);
        gmap gm;
        gm.rank = x->rank;
        int64_t groups = 1;
        for (int i = x->rank - 1; i >= 0; i--) {
            gm.dims[i] = x->dims[i];
            gm.gstride[i] = mask[i] ? 0 : groups;
            if (!mask[i]) groups *= x->dims[i];
        }
        int64_t nparts, chunk;
        split_groups(p.nout, p.count, &nparts, &chunk);
        size_t part_bytes = ((size_t)(p.nout * nparts) * 3 * sizeof(double) + 255) / 256 * 256;
        void *mem;
        TRY(cuda_scratch(c, part_bytes + 2 * (size_t)p.nout * sizeof(double), &mem));
        double *part = (double *)mem;
        double *mean = (double *)((char *)mem + part_bytes), *denom = mean + p.nout;
        TRY(launch_stats(st, cuda_data<T>(x), p, nparts, chunk, part));
        mvn_finish<<<cuda_blocks(p.nout), CUDA_THREADS, 0, st>>>(part, nparts, p.nout, mean, denom);
        TRY(cuda_launched("MeanVarianceNormalization statistics"));
        mvn_apply<T><<<cuda_blocks(x->numel), CUDA_THREADS, 0, st>>>(
            cuda_data<T>(x), cuda_data<T>(y), mean, denom, gm, x->numel);
        return cuda_launched("MeanVarianceNormalization");
    }
};

bool mvn_supports(const kernel_prep *p) {
    const type_info *x = p->in_type[0];
    if (!x || x->rank < 0 || x->rank > CUDA_MAX_RANK || !dtype_is_float(x->dtype)) return false;
    if (p->out_type[0].dtype != x->dtype) return false;
    const geom_axis_set *axes = op_params_axes(p->params); // the schema's, for the plan
    return axes && axes->rank == x->rank;
}

onyx_status cuda_mvn(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    if (x->rank > CUDA_MAX_RANK)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "MeanVarianceNormalization: rank %d on CUDA",
                          x->rank);
    const geom_axis_set *axes;
    TRY(kernel_axes(c->params, x->rank, &axes));
    if (x->numel == 0) return ONYX_OK;
    CUDA_DISPATCH_FLOATS(x->dtype, mvn_launch, c, x, y, axes->mask)
    return onyx_error(ONYX_ERR_UNSUPPORTED, "MeanVarianceNormalization: type %d on CUDA",
                      (int)x->dtype);
}

// ---- entries

bool ln_supports(const kernel_prep *p) { return ln_supports_(p, LAYER_NORM); }
bool rms_supports(const kernel_prep *p) { return ln_supports_(p, RMS_NORM); }
bool simplified_supports(const kernel_prep *p) { return ln_supports_(p, SIMPLIFIED_NORM); }
onyx_status cuda_layernorm(const kernel_call *c) { return ln_run(c, LAYER_NORM); }
onyx_status cuda_rmsnorm(const kernel_call *c) { return ln_run(c, RMS_NORM); }
onyx_status cuda_simplified(const kernel_call *c) { return ln_run(c, SIMPLIFIED_NORM); }
onyx_status cuda_skip_layernorm(const kernel_call *c) { return skip_run(c, false); }
onyx_status cuda_skip_simplified(const kernel_call *c) {
    TRY(skip_run(c, true));
    tensor *mean = kernel_output(c, 1); // as onnxruntime: no mean for RMS
    if (!mean || mean->numel == 0) return ONYX_OK;
    return cuda_status(cudaMemsetAsync(mean->data, 0, mean->nbytes, cuda_stream(c)),
                       "SkipSimplifiedLayerNormalization mean");
}

bool in_supports(const kernel_prep *p) {
    const type_info *x = p->in_type[0];
    if (!x || x->rank < 2) return false;
    // no channels: nothing to normalize (the CPU returns at once)
    if (x->dims[1] == 0) return p->out_type[0].dtype == x->dtype;
    return gn_supports_(p, x->dims[1], true);
}

onyx_status cuda_instancenorm(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    if (x->rank >= 2 && x->dims[1] == 0) return ONYX_OK;
    return gn_run(c, x->rank >= 2 ? x->dims[1] : 0, true, ONYX_DOUBLE);
}

bool groupnorm_supports(const kernel_prep *p) {
    return gn_supports_(p, attr_int(p->node, "num_groups", 0), p->node->version >= 21);
}

onyx_status cuda_groupnorm(const kernel_call *c) {
    int v = c->node->version;
    // GroupNormalization 18 has scale/bias per group and no stash_type (its statistics stay
    // in double); 21 has them per channel
    int stash = v >= 21 ? (int)attr_int(c->node, "stash_type", 1) : ONYX_DOUBLE;
    return gn_run(c, attr_int(c->node, "num_groups", 0), v >= 21, stash);
}

// The layer norms (plain, RMS, simplified, with a skip) take their rows and columns from the
// tensors at run (ln_run, skip_run): a device plan may give them shapes only the run knows.
const kernel entries[] = {
    // domain, op, versions, device, dtypes, flags, prepare, run, release, fork, unfork,
    // supports, host_inputs
    {"", "LayerNormalization", 17, 17, DEVICE_CUDA, DT_FLOATS, KF_RUN_SHAPES, NULL, cuda_layernorm,
     NULL, NULL, NULL, ln_supports, 0},
    {"", "RMSNormalization", 23, 23, DEVICE_CUDA, DT_FLOATS, KF_RUN_SHAPES, NULL, cuda_rmsnorm, NULL,
     NULL, NULL, rms_supports, 0},
    {"", "SimplifiedLayerNormalization", 1, 1, DEVICE_CUDA, DT_FLOATS, KF_RUN_SHAPES, NULL,
     cuda_simplified, NULL, NULL, NULL, simplified_supports, 0},
    {"com.microsoft", "SkipLayerNormalization", 1, 1, DEVICE_CUDA, DT_FLOATS, KF_RUN_SHAPES, NULL,
     cuda_skip_layernorm, NULL, NULL, NULL, skip_supports, 0},
    {"com.microsoft", "SkipSimplifiedLayerNormalization", 1, 1, DEVICE_CUDA, DT_FLOATS,
     KF_RUN_SHAPES, NULL, cuda_skip_simplified, NULL, NULL, NULL, skip_supports, 0},
    {"", "GroupNormalization", 18, 21, DEVICE_CUDA, DT_FLOATS, 0, NULL, cuda_groupnorm, NULL, NULL,
     NULL, groupnorm_supports, 0},
    {"", "InstanceNormalization", 1, 22, DEVICE_CUDA, DT_FLOATS, 0, NULL, cuda_instancenorm, NULL,
     NULL, NULL, in_supports, 0},
    {"", "MeanVarianceNormalization", 9, 13, DEVICE_CUDA, DT_FLOATS, 0, NULL, cuda_mvn, NULL, NULL,
     NULL, mvn_supports, 0},
};

} // namespace
} // namespace nrm

extern "C" const kernel *cuda_family_norm(size_t *count) {
    *count = sizeof nrm::entries / sizeof nrm::entries[0];
    return nrm::entries;
}
