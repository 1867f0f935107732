// ai.onyx GatherNBits on CUDA (ops/contrib_nlp/gathernbits.c; core/rules/tied_embedding.c makes it
// of a tied int4 embedding): rows of a MatMulNBits weight dequantized where its codes lie on the
// device, Y[i..., :] = (code - zero point) * scale of row indices[i...] of B, in the scales'
// type. An index outside [-N, N) gives a row of zeros, as on the CPU.
#include <string.h>

#include "kernels_cuda/contrib/nbits.cuh"

namespace {

enum { IN_B, IN_INDICES, IN_SCALES, IN_ZP };

struct gn_args {
    const uint8_t *b, *zp;
    const void *idx, *scales;
    void *y;
    int64_t rows;
    geom_nbits g;
};

// A thread per output element: row i, element k of it.
template <typename T, typename I, int BITS> __global__ void gather_rows(gn_args x) {
    constexpr int PER = 8 / BITS;
    const geom_nbits &g = x.g;
    const I *idx = (const I *)x.idx;
    const T *scales = (const T *)x.scales;
    T *y = (T *)x.y;
    CUDA_GRID_LOOP(e, x.rows * g.k) {
        const int64_t i = e / g.k, k = e - i * g.k;
        int64_t ix = (int64_t)idx[i];
        if (ix < -g.n || ix >= g.n) {
            y[e] = from_compute<T>(0.0f);
            continue;
        }
        if (ix < 0) ix += g.n;
        const int64_t kb = k / g.block, in = k - kb * g.block;
        const unsigned byte = x.b[(ix * g.k_blocks + kb) * g.blob + in / PER];
        const float code = (float)((byte >> ((in % PER) * BITS)) & ((1u << BITS) - 1));
        const float z = nbits_zero_point<T, BITS>(x.zp, (const T *)NULL, g, ix, kb);
        y[e] = from_compute<T>((code - z) * to_compute(scales[ix * g.k_blocks + kb]));
    }
}

template <typename T, typename I> onyx_status launch(const kernel_call *c, const gn_args &x) {
    const unsigned blocks = cuda_blocks(x.rows * x.g.k);
    cudaStream_t s = cuda_stream(c);
    switch (x.g.bits) {
    case 2: gather_rows<T, I, 2><<<blocks, CUDA_THREADS, 0, s>>>(x); break;
    case 4: gather_rows<T, I, 4><<<blocks, CUDA_THREADS, 0, s>>>(x); break;
    case 8: gather_rows<T, I, 8><<<blocks, CUDA_THREADS, 0, s>>>(x); break;
    default: return onyx_error(ONYX_ERR_UNSUPPORTED, "GatherNBits: bits=%lld", (long long)x.g.bits);
    }
    return cuda_launched("GatherNBits");
}

struct by_index {
    template <typename T> static onyx_status run(const kernel_call *c, const gn_args &x, onyx_dtype it) {
        return it == ONYX_INT64 ? launch<T, int64_t>(c, x) : launch<T, int32_t>(c, x);
    }
};

} // namespace

// The attributes and input types are the schema's to check (ops/contrib_nlp/gathernbits.c).
bool cuda_gather_nbits_supports(const kernel_prep *p) {
    const type_info *b = contrib_in_type(p, IN_B), *i = contrib_in_type(p, IN_INDICES),
                    *s = contrib_in_type(p, IN_SCALES), *z = contrib_in_type(p, IN_ZP);
    return b && i && s && (i->dtype == ONYX_INT32 || i->dtype == ONYX_INT64) &&
           contrib_float(s->dtype) && (!z || z->dtype == ONYX_UINT8);
}

onyx_status cuda_gather_nbits_run(const kernel_call *c) {
    const geom_nbits &g = *(const geom_nbits *)c->state;
    const tensor *B = kernel_input(c, IN_B), *I = kernel_input(c, IN_INDICES),
                 *S = kernel_input(c, IN_SCALES), *Z = kernel_input(c, IN_ZP);
    tensor *Y = kernel_output(c, 0);
    if (B->numel != g.n * g.k_blocks * g.blob)
        return onyx_error(ONYX_ERR_SHAPE, "GatherNBits: B must hold N*k_blocks*blob = %lld bytes",
                          (long long)(g.n * g.k_blocks * g.blob));
    if (S->numel != g.n * g.k_blocks)
        return onyx_error(ONYX_ERR_SHAPE, "GatherNBits: scales must have N*k_blocks = %lld elements",
                          (long long)(g.n * g.k_blocks));
    if (Z && Z->numel != g.n * g.zp_bytes)
        return onyx_error(ONYX_ERR_SHAPE, "GatherNBits: zero_points must be packed uint8 [N, %lld]",
                          (long long)g.zp_bytes);
    if (I->dtype != ONYX_INT32 && I->dtype != ONYX_INT64)
        return onyx_error(ONYX_ERR_SHAPE, "GatherNBits: indices must be int32 or int64");
    if (Y->dtype != S->dtype || Y->numel != I->numel * g.k)
        return onyx_error(ONYX_ERR_SHAPE, "GatherNBits: output must be [indices..., %lld] of the "
                          "scales' type", (long long)g.k);
    if (Y->numel == 0) return ONYX_OK;
    gn_args x;
    memset(&x, 0, sizeof x);
    x.b = (const uint8_t *)B->data;
    x.zp = Z ? (const uint8_t *)Z->data : NULL;
    x.idx = I->data;
    x.scales = S->data;
    x.y = Y->data;
    x.rows = I->numel;
    x.g = g;
    CONTRIB_DISPATCH(S->dtype, by_index, c, x, I->dtype)
    return onyx_error(ONYX_ERR_UNSUPPORTED, "GatherNBits on CUDA: scales of type %d", (int)S->dtype);
}
