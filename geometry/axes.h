/* Axis normalisation: one possibly negative axis, a list of distinct axes, and the axes a
 * Reduce* node reduces (repeats allowed, empty meaning all or none). */
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

#ifdef __cplusplus
}
#endif

#endif
