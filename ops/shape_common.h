/* What op inference and the kernels read from attributes and index inputs (axes, slice bounds,
 * pads, depth/space and transpose attributes), so that they read them the same way; the shape
 * rules applied to what is read are geometry/'s. Slices, pads and depth/space blocks are read by
 * their schemas alone, once per plan, and handed to the kernels (core/op_params.h). */
#ifndef ONYX_OPS_SHAPE_COMMON_H
#define ONYX_OPS_SHAPE_COMMON_H

#include "ops/schema.h"

/* Type masks of the data-movement ops: every byte-aligned type, and all of them. */
#define OPS_DT_MOVABLE (DT_ALL_TENSOR & ~DT_SUBBYTE)
#define OPS_DT_INDEX (DT_BIT(ONYX_INT32) | DT_BIT(ONYX_INT64))

/* Input i when the node has it, and its value when known (NULL otherwise). */
static inline bool ops_has_input(const infer_ctx *c, int i) { return i < c->n_in && c->in[i]; }
static inline const tensor *ops_value(const infer_ctx *c, int i) {
    return ops_has_input(c, i) && c->in_value ? c->in_value[i] : NULL;
}

/* Product of dims[from..to): 0 when a known dim is 0, else -1 when one is unknown. False on
 * overflow. */
bool ops_dims_product(const int64_t *dims, int from, int to, int64_t *out);

/* Normalizes one possibly negative axis against rank into *out, refusing out-of-range values
 * (geom_axis); `what` names it in messages ("axis"). Kernels check their axes with it too: infer
 * may not have seen the rank they run with. */
onyx_status ops_axis(int64_t axis, int rank, const char *what, int *out);

/* Normalizes n axes (possibly negative) against rank into out[], refusing out-of-range and
 * repeated axes (geom_axes). `what` names the list in messages ("axes"). */
onyx_status ops_norm_axes(const int64_t *axes, size_t n, int rank, int *out, const char *what);

/* Reads an int32/int64 tensor of at most `cap` values (scalar or 1-D) with a message naming
 * the input on failure. */
onyx_status ops_read_ints(const tensor *t, int input, int64_t *out, size_t cap, size_t *n);

/* Slice's bounds for data of rank/dims (-1 unknown): from attributes before v10, else from the
 * tensors starts, ends, axes, steps (the last two may be NULL). Unknown dims give len -1. */
onyx_status ops_slice_resolve(const graph_node *n, int rank, const int64_t *dims,
                              const tensor *starts, const tensor *ends, const tensor *axes,
                              const tensor *steps, geom_slice *out);

/* Pad's geometry for data of rank/dims (-1 unknown): its mode, the pad amounts per axis
 * (negative crops) from the attribute before v11, else from the pads tensor and the optional
 * axes tensor (v18), and the output dims and interior of each known dim. */
onyx_status ops_pads_resolve(const graph_node *n, int rank, const int64_t *dims,
                             const tensor *pads, const tensor *axes, geom_pads *out);

/* Pad's mode attribute: GEOM_PAD_CONSTANT, _REFLECT, _EDGE or _WRAP (v19). */
onyx_status ops_pad_mode(const graph_node *n, int *mode);

/* Depth/space rearrangement of [N, C, H, W] (in_dims, -1 unknown) into a 6-D view and a
 * transpose: the view's dims and the permutation whose result, read densely, is the output. */
onyx_status ops_depth_space_plan(const graph_node *n, bool to_space, const int64_t *in_dims,
                                 geom_blocks *out);

/* Hand the geometry a Slice's, Pad's, DepthToSpace's or SpaceToDepth's inference resolved to its
 * kernels (infer_ctx.params, when asked): the one place theirs comes from (core/op_params.h). */
void ops_set_slice(infer_ctx *c, const geom_slice *s);
void ops_set_pads(infer_ctx *c, const geom_pads *p);
void ops_set_blocks(infer_ctx *c, const geom_blocks *b);

/* Shape's [start, end) over the input dims (v15 attributes, clamped to [0, rank]). */
void ops_shape_range(const graph_node *n, int rank, int *start, int *end);

/* Split's part sizes along an axis of size dim (-1: unknown, then sizes that depend on it are
 * -1) into sizes[n_out], from the split input (`split`, NULL if absent), the split attribute
 * or num_outputs, else equal parts. */
onyx_status ops_split_sizes(const graph_node *n, int n_out, int64_t dim, const tensor *split,
                            int64_t *sizes);

/* Range's element count from its three scalar inputs. */
onyx_status ops_range_count(const tensor *start, const tensor *limit, const tensor *delta,
                            int64_t *count);

#endif
