/* Node matchers of both fusion passes (core/fuse_match.c): what a node, step or value is. */
#ifndef ONYX_CORE_FUSE_MATCH_H
#define ONYX_CORE_FUSE_MATCH_H

#include "core/fuse_chain.h"
#include "core/plan.h"

/* n is op `op` of the default domain; n makes output 0 alone; a and b are tensors of one static
 * type and shape. */
bool fuse_is_op(const struct graph_node *n, const char *op);
bool fuse_only_output0(const struct graph_node *n);
bool fuse_same_type(const type_info *a, const type_info *b);
/* A product over rows known only at run (a generic plan's MatMul by a constant 2-D B, of a float
 * result whose columns are known), step ps: the kernel may take its shape-keeping post-ops. */
bool fuse_rows_at_run(const graph *g, const plan *p, const plan_step *ps);

/* The CPU pass's: constants a node reads, scalar factors, conv and product steps, producers,
 * float values, channel permutations and per-channel factors. */
const tensor *fuse_host_const(const plan *p, const graph_node *n, int i);
const tensor *fuse_const_float(const plan *p, const graph_node *n, int i, int64_t numel);
const tensor *fuse_per_axis(const plan *p, int v, const type_info *t, int axis);
bool fuse_scalar_factor(const plan *p, const graph_node *n, int cur, float *c);
bool fuse_conv_step(const graph *g, const plan_step *ps);
bool fuse_matmul_step(const graph *g, const plan_step *ps);
int fuse_producer(const graph *g, const plan *p, int n, int v);
bool fuse_float_value_type(const type_info *t);
bool fuse_float_value(const plan *p, int v);
bool fuse_any_float_value(const plan *p, int v, bool wide);
bool fuse_channels_perm(const plan *p, const graph_node *n, bool to_last);
bool fuse_channel_factor(const type_info *f, const type_info *t);

/* An inference BatchNormalization over `channels` channels with constant scale, bias, mean and
 * variance, as a FUSE_BATCHNORM op in *op (a post-op or a pre-op); false for anything else. */
bool fuse_batchnorm_op(const plan *p, const graph_node *n, int64_t channels, fuse_op *op);

#endif
