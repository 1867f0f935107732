// com.microsoft MatMulNBits on CUDA: Y = A W^T (+ bias), W [N, K] in 2-, 4- or 8-bit codes per
// block of K with a scale and a zero point per block (geometry/nbits.h), read where the model's
// copy lies on the device: never a float copy of the whole weight.
//  - A few rows (decode, up to NB_ROWS): one warp per output column reads the column's codes once
//    as 32-bit words, unpacks them in registers, scales them per block and accumulates in float
//    for every row at once. The step is bound by the bytes of codes it reads.
//  - More rows (prefill): panels of columns dequantized into scratch in A's type, multiplied by
//    cuBLAS (float accumulation; float32 without TF32), as the CPU kernel does with its sgemm.
// accuracy_level is the lowest precision the model allows: computing in float meets each level.
// A value is (code - zero point) * scale, the zero point the packed integer, the float given,
// or 2^(bits - 1) when there is none, as kernels_cpu/contrib_nlp/nbits_dot.c computes it.
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "kernels_cuda/contrib/nbits.cuh"

namespace {

constexpr int NB_ROWS = 8;  // rows the decode kernel carries; more run as a product
constexpr int NB_WARPS = 4; // columns (a warp each) per block of the decode kernel
// Bytes of one dequantized panel of columns in scratch.
constexpr size_t PANEL_BYTES = (size_t)64 << 20;

// Inputs: A, B (uint8 codes), scales, zero_points, g_idx (refused), bias.
enum { IN_A, IN_B, IN_SCALES, IN_ZP, IN_GIDX, IN_BIAS };

} // namespace

// The attributes are the schema's to check (ops/contrib_nlp); this declines what the kernel has
// no form for, which the CPU then refuses or runs.
bool cuda_matmul_nbits_supports(const kernel_prep *p) {
    const type_info *a = contrib_in_type(p, IN_A), *b = contrib_in_type(p, IN_B),
                    *s = contrib_in_type(p, IN_SCALES), *z = contrib_in_type(p, IN_ZP),
                    *bias = contrib_in_type(p, IN_BIAS);
    if (!a || !b || !s || contrib_in_type(p, IN_GIDX)) return false;
    if (b->dtype != ONYX_UINT8 || s->dtype != a->dtype) return false;
    if (z && z->dtype != ONYX_UINT8 && z->dtype != a->dtype) return false;
    if (bias && bias->dtype != a->dtype) return false;
    return attr_int(p->node, "weight_prepacked", 0) == 0;
}

namespace {

struct nb_args {
    const void *a;
    const uint8_t *b;
    const void *scales, *zp_t, *bias;
    const uint8_t *zp_u8;
    void *y;
    int64_t rows;
    geom_nbits g;
};

// Decode: warp (blockIdx.x * NB_WARPS + warp) computes column n for rows [0, x.rows <= R). Lane l
// reads words l, l + 32, ... of the column's codes: word w of block kb holds the codes of
// elements kb * block + (w % words a block) * PER .. + PER - 1, low bits first.
template <typename T, int BITS, int R> __global__ void __launch_bounds__(NB_WARPS * 32) nb_dot(nb_args x) {
    constexpr int PER = 32 / BITS;
    constexpr uint32_t MASK = (1u << BITS) - 1;
    const geom_nbits &g = x.g;
    const int lane = threadIdx.x & 31;
    const int64_t n = (int64_t)blockIdx.x * NB_WARPS + (threadIdx.x >> 5);
    if (n >= g.n) return;
    const T *a = (const T *)x.a, *scales = (const T *)x.scales, *zp_t = (const T *)x.zp_t;
    const int64_t block_words = g.blob / 4, words = g.k_blocks * block_words;
    const uint32_t *col = (const uint32_t *)(x.b + n * g.k_blocks * g.blob);
    float acc[R];
#pragma unroll
    for (int r = 0; r < R; r++) acc[r] = 0.0f;
    for (int64_t w = lane; w < words; w += 32) {
        const int64_t kb = w / block_words;
        const int64_t k0 = kb * g.block + (w - kb * block_words) * PER;
        const float s = to_compute(scales[n * g.k_blocks + kb]);
        const float z = nbits_zero_point<T, BITS>(x.zp_u8, zp_t, g, n, kb);
        const uint32_t word = __ldg(col + w);
#pragma unroll
        for (int t = 0; t < PER; t++) {
            const int64_t k = k0 + t;
            if (k >= g.k) break; // the last block's padding
            const float v = ((float)((word >> (t * BITS)) & MASK) - z) * s;
#pragma unroll
            for (int r = 0; r < R; r++)
                if (r < x.rows) acc[r] += v * to_compute(a[r * g.k + k]);
        }
    }
#pragma unroll
    for (int r = 0; r < R; r++)
        for (int off = 16; off > 0; off >>= 1) acc[r] += __shfl_xor_sync(0xffffffffu, acc[r], off);
    if (lane != 0) return;
    const float b = x.bias ? to_compute(((const T *)x.bias)[n]) : 0.0f;
    T *y = (T *)x.y;
    for (int r = 0; r < R && r < x.rows; r++) y[r * g.n + n] = from_compute<T>(acc[r] + b);
}

// Prefill: columns [n0, n0 + cols) dequantized into w [cols, K] in A's type, a thread per byte of
// codes.
template <typename T, int BITS> __global__ void nb_dequant(nb_args x, int64_t n0, int64_t cols, T *w) {
    constexpr int PER_BYTE = 8 / BITS;
    constexpr unsigned MASK = (1u << BITS) - 1;
    const geom_nbits &g = x.g;
    const T *scales = (const T *)x.scales, *zp_t = (const T *)x.zp_t;
    const int64_t col_bytes = g.k_blocks * g.blob;
    CUDA_GRID_LOOP(i, cols * col_bytes) {
        const int64_t c = i / col_bytes, j = i - c * col_bytes, n = n0 + c;
        const int64_t kb = j / g.blob;
        const int64_t k0 = kb * g.block + (j - kb * g.blob) * PER_BYTE;
        const float s = to_compute(scales[n * g.k_blocks + kb]);
        const float z = nbits_zero_point<T, BITS>(x.zp_u8, zp_t, g, n, kb);
        const unsigned byte = x.b[n * col_bytes + j];
#pragma unroll
        for (int t = 0; t < PER_BYTE; t++)
            if (k0 + t < g.k)
                w[c * g.k + k0 + t] = from_compute<T>(((float)((byte >> (t * BITS)) & MASK) - z) * s);
    }
}

template <typename T> __global__ void nb_add_bias(T *y, const T *bias, int64_t rows, int64_t n) {
    CUDA_GRID_LOOP(i, rows * n) y[i] = from_compute<T>(to_compute(y[i]) + to_compute(bias[i % n]));
}

template <typename T, int BITS> onyx_status launch_dot(const kernel_call *c, const nb_args &x) {
    dim3 grid((unsigned)((x.g.n + NB_WARPS - 1) / NB_WARPS)), threads(NB_WARPS * 32);
    cudaStream_t s = cuda_stream(c);
    if (x.rows <= 1) nb_dot<T, BITS, 1><<<grid, threads, 0, s>>>(x);
    else if (x.rows <= 2) nb_dot<T, BITS, 2><<<grid, threads, 0, s>>>(x);
    else if (x.rows <= 4) nb_dot<T, BITS, 4><<<grid, threads, 0, s>>>(x);
    else nb_dot<T, BITS, NB_ROWS><<<grid, threads, 0, s>>>(x);
    return cuda_launched("MatMulNBits (rows)");
}

cudaDataType blas_type(onyx_dtype d) {
    return d == ONYX_FLOAT16 ? CUDA_R_16F : d == ONYX_BFLOAT16 ? CUDA_R_16BF : CUDA_R_32F;
}

// Y [rows, N] = A [rows, K] W^T panel by panel: column-major Y^T (cols x rows, ld N) = W (stored
// [cols, K], column-major K x cols, transposed) times A^T (K x rows).
template <typename T, int BITS>
onyx_status run_panels(const kernel_call *c, const nb_args &x, onyx_dtype dt) {
    const geom_nbits &g = x.g;
    if (x.rows > INT_MAX) return onyx_error(ONYX_ERR_UNSUPPORTED, "MatMulNBits: %lld rows exceed cuBLAS's int range", (long long)x.rows);
    int64_t cols = (int64_t)(PANEL_BYTES / ((size_t)g.k * sizeof(T))) / 64 * 64;
    if (cols < 64) cols = 64;
    if (cols > g.n) cols = g.n;
    T *w = NULL;
    TRY(cuda_scratch(c, (size_t)cols * (size_t)g.k * sizeof(T), (void **)&w));
    cublasHandle_t h;
    TRY(cuda_blas(c, &h));
    const float one = 1.0f, zero = 0.0f;
    const cudaDataType bt = blas_type(dt);
    for (int64_t n0 = 0; n0 < g.n; n0 += cols) {
        const int64_t cnt = g.n - n0 < cols ? g.n - n0 : cols;
        nb_dequant<T, BITS><<<cuda_blocks(cnt * g.k_blocks * g.blob), CUDA_THREADS, 0, cuda_stream(c)>>>(x, n0, cnt, w);
        TRY(cuda_launched("MatMulNBits (dequantize)"));
        TRY(cublas_status(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, (int)cnt, (int)x.rows, (int)g.k,
                                       &one, w, bt, (int)g.k, x.a, bt, (int)g.k, &zero,
                                       (T *)x.y + n0, bt, (int)g.n, CUBLAS_COMPUTE_32F,
                                       CUBLAS_GEMM_DEFAULT),
                          "MatMulNBits"));
    }
    if (!x.bias) return ONYX_OK;
    nb_add_bias<T><<<cuda_blocks(x.rows * g.n), CUDA_THREADS, 0, cuda_stream(c)>>>((T *)x.y, (const T *)x.bias, x.rows, g.n);
    return cuda_launched("MatMulNBits (bias)");
}

struct nb_by_type {
    template <typename T> static onyx_status run(const kernel_call *c, const nb_args &x, onyx_dtype dt) {
        const bool dots = x.rows <= NB_ROWS;
        switch (x.g.bits) {
        case 2: return dots ? launch_dot<T, 2>(c, x) : run_panels<T, 2>(c, x, dt);
        case 4: return dots ? launch_dot<T, 4>(c, x) : run_panels<T, 4>(c, x, dt);
        case 8: return dots ? launch_dot<T, 8>(c, x) : run_panels<T, 8>(c, x, dt);
        default: return onyx_error(ONYX_ERR_UNSUPPORTED, "MatMulNBits: bits=%lld", (long long)x.g.bits);
        }
    }
};

} // namespace

onyx_status cuda_matmul_nbits_run(const kernel_call *c) {
    const geom_nbits &g = *(const geom_nbits *)c->state;
    const tensor *A = kernel_input(c, IN_A), *B = kernel_input(c, IN_B),
                 *S = kernel_input(c, IN_SCALES), *Z = kernel_input(c, IN_ZP),
                 *bias = kernel_input(c, IN_BIAS);
    tensor *Y = kernel_output(c, 0);
    if (kernel_input(c, IN_GIDX))
        return onyx_error(ONYX_ERR_UNSUPPORTED, "MatMulNBits: input g_idx (deprecated) is not supported");
    if (A->rank < 1 || A->dims[A->rank - 1] != g.k)
        return onyx_error(ONYX_ERR_SHAPE, "MatMulNBits: A's last dim must be K = %lld", (long long)g.k);
    if (B->numel != g.n * g.k_blocks * g.blob || ((uintptr_t)B->data & 3) != 0)
        return onyx_error(ONYX_ERR_SHAPE, "MatMulNBits: B must hold N*k_blocks*blob = %lld bytes, "
                          "4-byte aligned", (long long)(g.n * g.k_blocks * g.blob));
    if (S->numel != g.n * g.k_blocks)
        return onyx_error(ONYX_ERR_SHAPE, "MatMulNBits: scales must have N*k_blocks = %lld elements",
                          (long long)(g.n * g.k_blocks));
    if (Z && Z->numel != (Z->dtype == ONYX_UINT8 ? g.n * g.zp_bytes : g.n * g.k_blocks))
        return onyx_error(ONYX_ERR_SHAPE, "MatMulNBits: zero_points must be packed uint8 [N, %lld] "
                          "or [N, %lld] of A's type", (long long)g.zp_bytes, (long long)g.k_blocks);
    if (bias && bias->numel != g.n)
        return onyx_error(ONYX_ERR_SHAPE, "MatMulNBits: bias must have N = %lld elements", (long long)g.n);
    const int64_t rows = A->numel / g.k;
    if (Y->numel != rows * g.n)
        return onyx_error(ONYX_ERR_SHAPE, "MatMulNBits: output has %lld elements, expected %lld",
                          (long long)Y->numel, (long long)(rows * g.n));
    if (rows == 0) return ONYX_OK;
    nb_args x;
    memset(&x, 0, sizeof x);
    x.a = A->data;
    x.b = (const uint8_t *)B->data;
    x.scales = S->data;
    if (Z && Z->dtype == ONYX_UINT8) x.zp_u8 = (const uint8_t *)Z->data;
    else if (Z) x.zp_t = Z->data;
    x.bias = bias ? bias->data : NULL;
    x.y = Y->data;
    x.rows = rows;
    x.g = g;
    CONTRIB_DISPATCH(A->dtype, nb_by_type, c, x, A->dtype)
    return onyx_error(ONYX_ERR_UNSUPPORTED, "MatMulNBits on CUDA: A of type %d", (int)A->dtype);
}
