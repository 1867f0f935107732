// What the movement family's files share: element types chosen by byte size (moving data does
// not care about the type), the strided copy engine, and host helpers for shape-like inputs
// (slices, pads, axes and permutations are resolved by the host's readers, ops/shape_common.h,
// and geometry/, as on the CPU).
#ifndef ONYX_KERNELS_CUDA_MOVEMENT_CUH
#define ONYX_KERNELS_CUDA_MOVEMENT_CUH

extern "C" {
#include "ops/shape_common.h"
}
#include "geometry/axes.h"
#include "kernels_cuda/common.cuh"

// Rank of a copy-engine view: Tile splits every axis of a CUDA_MAX_RANK tensor in two.
#define MV_MAX_RANK (2 * CUDA_MAX_RANK)

// Types the movement kernels take: every fixed-size type of 1, 2, 4 or 8 bytes.
#define MV_DT_MOVE                                                                                 \
    (DT_ALL_TENSOR & ~DT_SUBBYTE & ~DT_BIT(ONYX_STRING) & ~DT_BIT(ONYX_COMPLEX128))
// The aliasing ops (a byte copy at most) take complex128 too.
#define MV_DT_ALIAS (DT_ALL_TENSOR & ~DT_SUBBYTE & ~DT_BIT(ONYX_STRING))

// The unsigned element of N bytes; 16 only for copies the engine widens.
template <int N> struct mv_elem;
template <> struct mv_elem<1> { typedef uint8_t type; };
template <> struct mv_elem<2> { typedef uint16_t type; };
template <> struct mv_elem<4> { typedef uint32_t type; };
template <> struct mv_elem<8> { typedef uint64_t type; };
template <> struct mv_elem<16> { typedef uint4 type; };

// F::template run<T>(args...) with T the element of es bytes (1, 2, 4, 8).
template <typename F, typename... A> static inline onyx_status mv_by_size(size_t es, A... a) {
    switch (es) {
    case 1: return F::template run<uint8_t>(a...);
    case 2: return F::template run<uint16_t>(a...);
    case 4: return F::template run<uint32_t>(a...);
    case 8: return F::template run<uint64_t>(a...);
    default: return onyx_error(ONYX_ERR_UNSUPPORTED, "elements of %zu bytes on CUDA", es);
    }
}

// True for the element sizes mv_by_size takes.
static inline bool mv_size_ok(onyx_dtype d) {
    size_t s = dtype_size(d);
    return s == 1 || s == 2 || s == 4 || s == 8;
}

// dst[sum_k i_k * dst_st[k]] = src[sum_k i_k * src_st[k]] for every i < dims (strides in
// elements of es bytes, src strides may be 0 or negative). Simplifies the view (drops unit axes,
// merges contiguous ones, widens the element when alignment allows), then copies with
// cudaMemcpyAsync, a tiled transpose or a general strided kernel. rank <= MV_MAX_RANK.
onyx_status mv_copy(const kernel_call *c, void *dst, const void *src, size_t es, int rank,
                    const int64_t *dims, const int64_t *dst_st, const int64_t *src_st,
                    const char *what);

// ---- host helpers

// Row-major strides in elements.
void mv_strides(int rank, const int64_t *dims, int64_t *st);
// axis normalized against rank (geom_axis); false when out of range.
bool mv_axis(int64_t axis, int rank, int *out);
// Fails unless t (input `input`; NULL: omitted) lies in host memory, where the host's readers
// look at it.
onyx_status mv_on_host(const tensor *t, int input);
// Reads a scalar or 1-D int32/int64 host tensor of at most cap values (ops_read_ints).
onyx_status mv_read_ints(const tensor *t, int input, int64_t *out, size_t cap, size_t *n);
// Product of dims[from..to).
int64_t mv_product(const int64_t *dims, int from, int to);
// Whether every input and output type the kernel sees has rank <= CUDA_MAX_RANK.
bool mv_ranks_ok(const kernel_prep *p);
// Largest power of two up to 16 dividing bytes and both addresses.
size_t mv_align_width(int64_t bytes, const void *a, const void *b);

// ---- kernel entry points of the family's files (movement.cu gathers the table)
onyx_status mv_gather_run(const kernel_call *c);
bool mv_gather_supports(const kernel_prep *p);
onyx_status mv_gather_elements_run(const kernel_call *c);
bool mv_gather_elements_supports(const kernel_prep *p);
onyx_status mv_gather_nd_run(const kernel_call *c);
bool mv_gather_nd_supports(const kernel_prep *p);
onyx_status mv_scatter_elements_run(const kernel_call *c);
bool mv_scatter_elements_supports(const kernel_prep *p);
onyx_status mv_scatter_nd_run(const kernel_call *c);
bool mv_scatter_nd_supports(const kernel_prep *p);
onyx_status mv_pad_run(const kernel_call *c);
bool mv_pad_supports(const kernel_prep *p);
onyx_status mv_trilu_run(const kernel_call *c);
bool mv_trilu_supports(const kernel_prep *p);
onyx_status mv_resize_prepare(const kernel_prep *p, void **state);
onyx_status mv_resize_run(const kernel_call *c);
void mv_resize_release(void *state);
bool mv_resize_supports(const kernel_prep *p);

#endif
