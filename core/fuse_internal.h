/* What the files of the CPU fusion pass (core/fuse.c, the driver, and the core/fuse_*.c files of
 * its ideas) share, and nothing outside them reads: the pass's working state, the node matchers
 * (core/fuse_match.h), the walks through Transposes and relabellings that make strided views
 * (core/fuse_views.c), and each idea's entry point, which the driver calls in order. Kernels see
 * only core/fuse_chain.h. Not core/fuse.h: that is the driver's interface, which the ideas
 * never call. */
#ifndef ONYX_CORE_FUSE_INTERNAL_H
#define ONYX_CORE_FUSE_INTERNAL_H

#include "core/fuse_chain.h"
#include "core/fuse_match.h"
#include "core/plan.h"
#include "core/strided_view.h"

/* Links (factors, Transposes, relabellings) a MatMul view walks through, per end; the longest
 * other dim of the product a strided view is worth it for (see core/fuse_postops.c). */
enum { MAX_WALK = 16, VIEW_MAX_REUSE = 512 };

/* Input slots of a fused conv or product node: X, W, B, the addend, a scale on X (see
 * fuse_chain); those it does not take are -1. */
enum { FUSED_INPUTS = 5 };

/* Absorbed steps per chain: post-ops (some merged), and a MatMul's views and scalar factors;
 * an attention chain's: up to MAX_WALK steps from the scores to the softmax, the Cast, IsNaN and
 * Where that zero NaN, the second MatMul, and four views. */
#define FUSE_MAX_TAKEN (FUSE_MAX_OPS + 3 * MAX_WALK)
#define ATT_MAX_TAKEN (MAX_WALK + 3 + 1 + 4 * MAX_WALK)

/* The pass over one plan: its readers (uses and the single consumer per value), the steps
 * absorbed or moved (gone), where each step runs after the pass (emit: the step placed at
 * each position) and the chain of each step. */
typedef struct fuse_pass {
    subgraph *sg;
    plan *p;
    const graph *g;
    int *uses, *consumer, *emit;
    bool *gone;
    fuse_chain *chains;
} fuse_pass;

/* ---- core/fuse_views.c: a MatMul's operands and result through the steps around it */
enum { LINK_FACTOR, LINK_RELABEL, LINK_TRANSPOSE, LINK_SELECT };

/* The links between a MatMul and an end of it: steps[k] links vals[k] and vals[k + 1] (vals[0]
 * the MatMul's operand or result). */
typedef struct walk {
    int n, steps[MAX_WALK], kinds[MAX_WALK], vals[MAX_WALK + 1];
    float factors[MAX_WALK];
} walk;

int fuse_link_of(const graph *g, const plan *p, const int *uses, const bool *gone, int s, int v,
                 bool out, bool wide, bool shared, int *x, float *c);
void fuse_walk_links(const graph *g, const plan *p, const int *uses, const bool *gone,
                     const int *consumer, int s, int v, bool wide, bool shared, walk *w);
bool fuse_walk_view(const graph *g, const plan *p, const walk *w, int d, bool result,
                    strided_view *v);
void fuse_set_view(fuse_chain *chain, int i, const strided_view *v);
void fuse_operand_views(const graph *g, const plan *p, const int *uses, const bool *gone, int s,
                        const bool *may_view, fuse_chain *chain, int *src, int *taken,
                        int *n_taken);
int fuse_result_views(const graph *g, const plan *p, const int *uses, const bool *gone,
                      const int *consumer, fuse_chain *chain, int *cur, int *taken, int *n_taken);

/* ---- core/fuse_conv_io.c: what a conv's X comes through and its Y goes through */
bool fuse_channels_transpose(const graph *g, const plan *p, int t, bool to_last);
int fuse_channels_last_input(const graph *g, const plan *p, const int *uses, const bool *gone,
                             int s, int *x);
int fuse_se_scale(const graph *g, const plan *p, const int *uses, const bool *gone, int s,
                  const type_info *t, int *x, int *sc);

/* ---- the ideas, in the order the driver (core/fuse.c) runs them */

/* core/fuse_attention.c: attention spelled out from the MatMul of step s, fused into one step of
 * the Attention kernel of s's device where that kernel's takes_chain query says it takes it;
 * *fused says whether it was. */
onyx_status fuse_attention(fuse_pass *f, int s, bool *fused);

/* core/fuse_postops.c: the chain that only the conv or product of step s feeds (post-ops, a
 * product's strided views and factors, a conv's Y written channels last), fused into its step
 * where its kernel's takes_chain query says it takes it. */
onyx_status fuse_post_ops(fuse_pass *f, int s);

/* core/fuse_preops.c: what only feeds the X of the conv of step s (per-channel steps and a
 * Relu, else a squeeze-and-excitation scale or a Transpose from channels last), fused where its
 * kernel's takes_chain query says it takes it. */
onyx_status fuse_pre_ops(fuse_pass *f, int s);

/* core/fuse_shuffle.c: the channel shuffle whose Transpose is step s (Reshape -> Transpose ->
 * Reshape), as one ChannelShuffle step in the last Reshape's place (the other two absorbed). */
onyx_status fuse_channel_shuffle(fuse_pass *f, int s);

/* core/fuse_blocked.c: marks opaque (chains[s].opaque_*) the tensors passed only between steps
 * that take the opaque layout, as far as their kernels say they take it (kernel.takes_chain):
 * between steps of every kind, else between convs only, else nowhere. */
onyx_status fuse_keep_opaque(const subgraph *sg, const plan *p, const int *uses,
                             fuse_chain *chains);

#endif
