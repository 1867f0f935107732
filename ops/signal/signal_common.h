/* What inference and the CPU kernels of the image/signal family both derive from attributes and
 * small inputs (Resize's per-axis scales and sizes, DFT's axis and length, STFT's framing), so
 * that the two read them the same way. */
#ifndef ONYX_OPS_SIGNAL_COMMON_H
#define ONYX_OPS_SIGNAL_COMMON_H

#include "ops/schema.h"

/* Resize / Upsample coordinate modes. */
enum {
    OPS_RZ_HALF_PIXEL,
    OPS_RZ_PYTORCH_HALF_PIXEL,
    OPS_RZ_ALIGN_CORNERS,
    OPS_RZ_ASYMMETRIC,
    OPS_RZ_TF_HALF_PIXEL_FOR_NN,
    OPS_RZ_TF_CROP_AND_RESIZE,
    OPS_RZ_HALF_PIXEL_SYMMETRIC,
};
enum { OPS_RZ_NEAREST, OPS_RZ_LINEAR, OPS_RZ_CUBIC };
/* nearest_mode values; SIMPLE is the pre-v11 rule (ceil when downsampling, else floor). */
enum { OPS_RZ_PREFER_FLOOR, OPS_RZ_PREFER_CEIL, OPS_RZ_FLOOR, OPS_RZ_CEIL, OPS_RZ_SIMPLE };

/* Everything a Resize/Upsample node computes with, per axis of the input. */
typedef struct ops_resize_plan {
    int rank;
    int mode, coord, nearest;
    bool antialias, exclude_outside;
    float cubic_a, extrapolation;
    int64_t in_dims[ONYX_MAX_RANK], out_dims[ONYX_MAX_RANK];
    double scale[ONYX_MAX_RANK];        /* output/input as the coordinate formulas use it */
    double roi_lo[ONYX_MAX_RANK], roi_hi[ONYX_MAX_RANK];
    bool active[ONYX_MAX_RANK];         /* false: the axis is copied unchanged */
} ops_resize_plan;

/* The most filter taps one axis may have. An antialiased downscale by s spans 2/s input elements
 * (linear) or 4/s (cubic): a tiny scale (subnormal, say) asks for more, and is refused. */
#define OPS_RZ_MAX_TAPS (1 << 26)

/* Reads the attributes only (mode, coordinate mode, ...) into p; validates their values. */
onyx_status ops_resize_attrs(const graph_node *n, ops_resize_plan *p);

/* Resolves the whole plan for an input of rank/dims from the scales / sizes / roi tensors of
 * Resize (any may be NULL or empty) or Upsample's attributes or scales input. */
onyx_status ops_resize_plan_make(const graph_node *n, int rank, const int64_t *dims,
                                 const tensor *roi, const tensor *scales, const tensor *sizes,
                                 ops_resize_plan *p);

/* DFT: the normalized axis, transform length and output dims for an input of rank/dims
 * (the last dim is 1 for real, 2 for complex input). dft_length / axis tensors may be NULL. */
typedef struct ops_dft_plan {
    int axis;
    int64_t length;      /* transform length n */
    bool inverse, onesided, real_in;
    int64_t out_dims[ONYX_MAX_RANK];
} ops_dft_plan;

onyx_status ops_dft_plan_make(const graph_node *n, int rank, const int64_t *dims,
                              const tensor *dft_length, const tensor *axis, ops_dft_plan *p);

/* STFT: frames of frame_length samples every step along axis 1 of [batch, length, 1|2]. */
typedef struct ops_stft_plan {
    int64_t batch, length, step, frame_length, frames, bins;
    bool onesided, real_in;
} ops_stft_plan;

onyx_status ops_stft_plan_make(const graph_node *n, int rank, const int64_t *dims,
                               const tensor *frame_step, const tensor *window,
                               const tensor *frame_length, ops_stft_plan *p);

/* Reads a scalar (or one-element) integer input; `what` names it in errors. */
onyx_status ops_scalar_int(const tensor *t, const char *what, int64_t *out);

#endif
