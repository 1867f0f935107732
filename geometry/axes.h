/* Axis normalisation: one possibly negative axis, a list of distinct axes, and the axes a
 * Reduce* node reduces (repeats allowed, empty meaning all or none); and the axes of a whole node
 * resolved for its input's rank (geom_axis_set) that a schema hands to every device's kernel
 * through its plan step (core/op_params.h). */
#ifndef ONYX_GEOMETRY_AXES_H
#define ONYX_GEOMETRY_AXES_H

#include "geometry/geom.h"

#ifdef __cplusplus
extern "C" {
#endif

/* axis in -rank..rank-1 as 0..rank-1 into *out; fails with ONYX_ERR_SHAPE otherwise. `what`
 * names it in the message ("axis"). */
onyx_status geom_axis(int64_t axis, int rank, const char *what, int *out, geom_msg *msg);

/* n axes normalised into out[n], refusing one out of range (ONYX_ERR_SHAPE), a repeated one and
 * more axes than the rank (ONYX_ERR_INVALID_MODEL). `what` names the list ("axes"). */
onyx_status geom_axes(const int64_t *axes, size_t n, int rank, const char *what, int *out,
                      geom_msg *msg);

/* mask[0..rank) = the axes a reduction over `axes` (count values, repeats allowed) takes: all
 * of them when the list is empty, or none with noop_with_empty_axes. Fails with ONYX_ERR_SHAPE
 * on an axis out of range. */
onyx_status geom_reduce_axes(const int64_t *axes, size_t count, bool noop_when_empty, int rank,
                             bool *mask, geom_msg *msg);

/* The axes one node works along, resolved for its input's rank: one axis (ArgMax/ArgMin, the
 * softmaxes, the normalizations over [axis, rank)) or a set of them (the reductions,
 * MeanVarianceNormalization). Known as soon as the rank is: the same for every run of a plan. */
typedef struct geom_axis_set {
    int rank;                 /* the input's rank they are resolved for */
    int axis;                 /* the one axis, 0..rank-1; -1 for a set */
    bool mask[GEOM_MAX_RANK]; /* mask[i]: axis i is one of them (a single axis: it alone) */
} geom_axis_set;

/* *out = the single axis `axis` (already in 0..rank-1) of an input of rank `rank`. */
void geom_axis_set_one(int rank, int axis, geom_axis_set *out);

/* *out = the set mask[0..rank) of an input of rank `rank` (axis -1). */
void geom_axis_set_mask(int rank, const bool *mask, geom_axis_set *out);

#ifdef __cplusplus
}
#endif

#endif
