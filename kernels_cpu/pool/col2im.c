/* CPU kernel of Col2Im: every column entry of a sliding block is added into the image position
 * it came from; taps that fall in the padding are dropped. Planes (n, c) run in parallel. The
 * blocks' window over the image comes from the plan (core/op_params.h). */
#include <string.h>

#include "core/parallel.h"
#include "kernels_cpu/cpu_kernels.h"
#include "kernels_cpu/common/cpu_types.h"

/* 1-D and 2-D are padded to 3-D with leading unit dims, as in the pooling loops. */
typedef struct col_job {
    const void *x;
    void *y;
    int64_t img[3], k[3], s[3], d[3], pb[3], cols[3];
    int64_t bvol, L, img_size;
} col_job;

#define COL2IM_TEMPLATE(N, T, ADD)                                                                 \
    static void col2im_planes_##N(void *ctx, int64_t b, int64_t e) {                               \
        const col_job *j = ctx;                                                                    \
        for (int64_t pl = b; pl < e; pl++) {                                                       \
            const T *x = (const T *)j->x + pl * j->bvol * j->L;                                    \
            T *y = (T *)j->y + pl * j->img_size;                                                   \
            memset(y, 0, (size_t)j->img_size * sizeof *y);                                         \
            int64_t kk = 0;                                                                        \
            for (int64_t k0 = 0; k0 < j->k[0]; k0++)                                               \
                for (int64_t k1 = 0; k1 < j->k[1]; k1++)                                           \
                    for (int64_t k2 = 0; k2 < j->k[2]; k2++, kk++) {                               \
                        const T *row = x + kk * j->L;                                              \
                        int64_t col = 0;                                                           \
                        for (int64_t c0 = 0; c0 < j->cols[0]; c0++) {                              \
                            int64_t i0 = c0 * j->s[0] - j->pb[0] + k0 * j->d[0];                   \
                            for (int64_t c1 = 0; c1 < j->cols[1]; c1++) {                          \
                                int64_t i1 = c1 * j->s[1] - j->pb[1] + k1 * j->d[1];               \
                                bool in01 =                                                        \
                                    i0 >= 0 && i0 < j->img[0] && i1 >= 0 && i1 < j->img[1];        \
                                for (int64_t c2 = 0; c2 < j->cols[2]; c2++, col++) {               \
                                    int64_t i2 = c2 * j->s[2] - j->pb[2] + k2 * j->d[2];           \
                                    if (!in01 || i2 < 0 || i2 >= j->img[2]) continue;              \
                                    T *o = &y[(i0 * j->img[1] + i1) * j->img[2] + i2];             \
                                    *o = ADD(*o, row[col]);                                        \
                                }                                                                  \
                            }                                                                      \
                        }                                                                          \
                    }                                                                              \
        }                                                                                          \
    }

#define ADD_NATIVE(a, b) ((a) + (b))
#define ADD_F16(a, b) cpu_float_to_fp16(cpu_fp16_to_float(a) + cpu_fp16_to_float(b))
#define ADD_BF16(a, b) cpu_float_to_bf16(cpu_bf16_to_float(a) + cpu_bf16_to_float(b))
/* integers wrap as ONNX says, without signed-overflow UB */
#define ADD_WRAP(a, b) ((__typeof__(a))((CPU_UNSIGNED_OF(__typeof__(a)))(a) +                      \
                                        (CPU_UNSIGNED_OF(__typeof__(a)))(b)))

COL2IM_TEMPLATE(f32, float, ADD_NATIVE)
COL2IM_TEMPLATE(f64, double, ADD_NATIVE)
COL2IM_TEMPLATE(f16, uint16_t, ADD_F16)
COL2IM_TEMPLATE(bf16, uint16_t, ADD_BF16)
#define COL2IM_INT(D, T) COL2IM_TEMPLATE(D##_i, T, ADD_WRAP)
COL2IM_INT(i8, int8_t)
COL2IM_INT(i16, int16_t)
COL2IM_INT(i32, int32_t)
COL2IM_INT(i64, int64_t)
COL2IM_INT(u8, uint8_t)
COL2IM_INT(u16, uint16_t)
COL2IM_INT(u32, uint32_t)
COL2IM_INT(u64, uint64_t)

onyx_status cpu_col2im_run(const kernel_call *c) {
    const tensor *x = kernel_input(c, 0);
    tensor *y = kernel_output(c, 0);
    /* the plan's window (image_shape and block_shape as the schema read them): checked against
     * X and Y, not derived again */
    const geom_window *w;
    TRY(kernel_window(c->params, &w));
    int nd = w->nsp;
    int64_t bvol, nblocks;
    if (nd < 1 || nd > 3 || x->rank != 3 || y->rank != nd + 2 ||
        !shape_numel(nd, w->k, &bvol) || !shape_numel(nd, w->out, &nblocks))
        return onyx_error(ONYX_ERR_RUNTIME, "the plan's Col2Im window is for other ranks");
    bool fits = y->dims[0] == w->n && y->dims[1] == w->c && x->dims[0] == w->n &&
                x->dims[1] % bvol == 0 && x->dims[1] / bvol == w->c && x->dims[2] == nblocks;
    for (int i = 0; i < nd && fits; i++) fits = y->dims[2 + i] == w->in[i];
    if (!fits) return onyx_error(ONYX_ERR_RUNTIME, "the plan's Col2Im window is for other dims");
    col_job j;
    int off = 3 - nd;
    for (int i = 0; i < 3; i++) {
        j.img[i] = j.k[i] = j.s[i] = j.d[i] = j.cols[i] = 1;
        j.pb[i] = 0;
    }
    j.bvol = bvol;
    for (int i = 0; i < nd; i++) {
        j.img[off + i] = w->in[i];
        j.k[off + i] = w->k[i];
        j.s[off + i] = w->stride[i];
        j.d[off + i] = w->dil[i];
        j.pb[off + i] = w->pad_b[i];
        j.cols[off + i] = w->out[i];
    }
    j.x = x->data;
    j.y = y->data;
    j.L = nblocks;
    j.img_size = y->numel / (y->dims[0] * y->dims[1] > 0 ? y->dims[0] * y->dims[1] : 1);
    void (*fn)(void *, int64_t, int64_t);
    switch (x->dtype) {
    case ONYX_FLOAT: fn = col2im_planes_f32; break;
    case ONYX_DOUBLE: fn = col2im_planes_f64; break;
    case ONYX_FLOAT16: fn = col2im_planes_f16; break;
    case ONYX_BFLOAT16: fn = col2im_planes_bf16; break;
    case ONYX_INT8: fn = col2im_planes_i8_i; break;
    case ONYX_INT16: fn = col2im_planes_i16_i; break;
    case ONYX_INT32: fn = col2im_planes_i32_i; break;
    case ONYX_INT64: fn = col2im_planes_i64_i; break;
    case ONYX_UINT8: fn = col2im_planes_u8_i; break;
    case ONYX_UINT16: fn = col2im_planes_u16_i; break;
    case ONYX_UINT32: fn = col2im_planes_u32_i; break;
    case ONYX_UINT64: fn = col2im_planes_u64_i; break;
    default:
        return onyx_error(ONYX_ERR_UNSUPPORTED, "input 0 has type %s, expected a numeric type",
                          onyx_dtype_name(x->dtype));
    }
    int64_t planes = y->dims[0] * y->dims[1];
    if (planes == 0) return ONYX_OK; /* then x is empty whatever bvol * L says */
    int64_t work = j.bvol > 16384 || j.L > 16384 ? 16384 : j.bvol * j.L;
    parallel_for(planes, 1 + 16384 / (work + 1), fn, &j);
    return ONYX_OK;
}
