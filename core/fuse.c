/* The fusion pass of a plan: a Conv (kernel flagged KF_POST_OPS) absorbs the chain of nodes
 * that only it feeds: an inference BatchNormalization with constant parameters and Mul / Add of
 * per-channel constants (folded into its constant weights), Relu / LeakyRelu / Clip / Sigmoid /
 * Tanh / HardSigmoid / Swish / HardSwish / Gelu, and one Add of a same-shaped tensor (or
 * two-input Sum). A MatMul absorbs the same but for the affine steps: an Add of per-column
 * constants first (its bias), then activations and an Add, where its oneDNN primitive takes them
 * (tried as the chain is made). The absorbed steps leave the plan; the fused step runs where the
 * chain's last node ran, so every addend is ready.
 * A conv also absorbs the per-channel steps and the Relu that only feed its X (pre-ops), and the
 * tensors passed only between convs, channel Concats and poolings keep the convs' layout.
 * Attention spelled out (MatMul, scale, mask, Softmax, MatMul) becomes one step of the CPU
 * Attention kernel, which keeps each block of scores in cache instead of writing them all out
 * (or of the step's device's Attention kernel, where its takes_chain query says it takes it).
 * A plan layer: it edits steps through core/plan.h and prepares kernels through
 * core/plan_prepare.h; the driver (core/exec.c) calls it, it never calls the driver. */
#include "core/fuse.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/device_registry.h"
#include "core/op_schema.h"
#include "core/strided_view.h"
#include "core/exec_internal.h"
#include "core/log.h"
#include "core/plan.h"
#include "core/plan_prepare.h"
#include "geometry/perm.h"

/* Links (factors, Transposes, relabellings) a MatMul view walks through, per end; the longest
 * other dim of the product a strided view is worth it for (see fuse_plan). */
enum { MAX_WALK = 16, VIEW_MAX_REUSE = 512 };

/* Input slots of a fused conv or product node: X, W, B, the addend, a scale on X (see
 * fuse_chain); those it does not take are -1. */
enum { FUSED_INPUTS = 5 };

bool fuse_is_op(const graph_node *n, const char *op) {
    return !*n->domain && !strcmp(n->op_type, op);
}

bool fuse_only_output0(const graph_node *n) {
    for (int o = 1; o < n->n_outputs; o++)
        if (n->outputs[o] >= 0) return false;
    return n->n_outputs >= 1 && n->outputs[0] >= 0;
}

/* The host constant behind input i of n (a device's copy of a constant is read through the
 * host's), or NULL. */
static const tensor *host_const(const plan *p, const graph_node *n, int i) {
    if (i >= n->n_inputs || n->inputs[i] < 0) return NULL;
    const plan_value *v = &p->vals[n->inputs[i]];
    if (v->device != DEVICE_CPU) v = &p->vals[v->source];
    return v->where == ST_CONST && v->device == DEVICE_CPU ? v->constant : NULL;
}

/* The constant float value of input i of n, with `numel` values (-1: any), or NULL. */
static const tensor *const_float(const plan *p, const graph_node *n, int i, int64_t numel) {
    const tensor *c = host_const(p, n, i);
    if (!c || c->dtype != ONYX_FLOAT) return NULL;
    if (numel >= 0 && c->numel != numel) return NULL;
    return c;
}

/* The one value of constant input i of n, of a float type (16-bit ones in a device's float16
 * graph), as a float; false if it is none. */
static bool const_scalar(const plan *p, const graph_node *n, int i, float *out) {
    const tensor *c = host_const(p, n, i);
    if (!c || c->numel != 1) return false;
    if (c->dtype == ONYX_FLOAT) *out = ((const float *)c->data)[0];
    else if (c->dtype == ONYX_FLOAT16) *out = fp16_to_float(((const uint16_t *)c->data)[0]);
    else if (c->dtype == ONYX_BFLOAT16) *out = bf16_to_float(((const uint16_t *)c->data)[0]);
    else return false;
    return true;
}

bool fuse_same_type(const type_info *a, const type_info *b) {
    return a->kind == ONYX_VALUE_TENSOR && b->kind == ONYX_VALUE_TENSOR && a->dtype == b->dtype &&
           type_is_static(a) && type_is_static(b) &&
           shape_equal(a->rank, a->dims, b->rank, b->dims);
}

/* Value v as a float constant that broadcasts over `t` along axis `axis` only ([M,1,..],
 * [1,M,1,..], a single value for the channel axis 1), or NULL. */
static const tensor *per_axis(const plan *p, int v, const type_info *t, int axis) {
    if (v < 0) return NULL;
    const plan_value *pv = &p->vals[v];
    const tensor *c = pv->constant;
    if (pv->where != ST_CONST || !c || c->dtype != ONYX_FLOAT || c->rank > t->rank) return NULL;
    if (c->numel != 1 && c->numel != t->dims[axis]) return NULL;
    for (int i = 0; i < c->rank; i++)
        if (c->dims[i] != 1 && t->rank - c->rank + i != axis) return NULL;
    return c;
}

static const tensor *per_channel(const plan *p, int v, const type_info *t) {
    return per_axis(p, v, t, 1);
}

/* Whether node n multiplies `cur` by a constant float scalar, or divides it by one: the factor
 * in *c. */
static bool scalar_factor(const plan *p, const graph_node *n, int cur, float *c) {
    bool div = fuse_is_op(n, "Div");
    if ((!div && !fuse_is_op(n, "Mul")) || n->version < 7 || n->n_inputs != 2 ||
        !fuse_only_output0(n))
        return false;
    int k = n->inputs[0] == cur ? 1 : div ? -1 : n->inputs[1] == cur ? 0 : -1;
    if (k < 0 || n->inputs[k] == cur) return false;
    const tensor *t = host_const(p, n, k);
    float f;
    if (!const_scalar(p, n, k, &f) || t->rank > p->vals[cur].type.rank) return false;
    if (div && f == 0.0f) return false;
    *c = div ? 1.0f / f : f;
    return isfinite(*c);
}

/* Whether node n, reading `cur` (the chain's value so far, of type `t` with M channels), can be
 * absorbed; fills *op. `*addend` receives an Add's other operand. `affine`: the chain so far only
 * has per-channel affine steps that fold into the weights (so may this one, with w_const).
 * `matmul`: the chain of a MatMul, whose channels are its last axis: an Add of per-column
 * constants first (its bias), no other affine step, no BatchNormalization. */
static bool classify(const plan *p, const graph_node *n, int cur, const type_info *t,
                     bool affine, bool w_const, bool matmul, int *addend, fuse_op *op) {
    memset(op, 0, sizeof *op);
    if (!fuse_only_output0(n) || !fuse_same_type(&p->vals[n->outputs[0]].type, t)) return false;
    if (n->n_inputs < 1) return false;
    bool first = n->inputs[0] == cur;
    if ((fuse_is_op(n, "Mul") || fuse_is_op(n, "Add")) && n->version >= 7 && n->n_inputs == 2 &&
        affine && w_const && (first || n->inputs[1] == cur) && !(matmul && fuse_is_op(n, "Mul"))) {
        const tensor *k = per_axis(p, n->inputs[first ? 1 : 0], t, matmul ? t->rank - 1 : 1);
        if (k) {
            bool mul = fuse_is_op(n, "Mul");
            op->kind = mul ? FUSE_SCALE : FUSE_SHIFT;
            (mul ? &op->scale : &op->bias)[0] = k;
            return true;
        }
    }
    float c;
    if (scalar_factor(p, n, cur, &c)) {
        op->kind = FUSE_LINEAR;
        op->alpha = c;
        return true;
    }
    if (fuse_is_op(n, "Add") || fuse_is_op(n, "Sum")) { /* a two-input Sum is an Add */
        if (n->n_inputs != 2 || *addend >= 0) return false;
        int other = first ? n->inputs[1] : n->inputs[0];
        if ((!first && n->inputs[1] != cur) || other == cur || other < 0) return false;
        if (!fuse_same_type(&p->vals[other].type, t)) return false;
        if (n->version < 7 && attr_int(n, "broadcast", 0) != 0) return false;
        *addend = other;
        op->kind = FUSE_SUM;
        return true;
    }
    if (!first) return false;
    for (int i = 1; i < n->n_inputs; i++)
        if (n->inputs[i] == cur) return false;
    if (fuse_is_op(n, "Relu")) {
        op->kind = FUSE_RELU;
    } else if (fuse_is_op(n, "LeakyRelu")) {
        op->kind = FUSE_RELU;
        op->alpha = attr_float(n, "alpha", 0.01f);
    } else if (fuse_is_op(n, "Sigmoid")) {
        op->kind = FUSE_SIGMOID;
    } else if (fuse_is_op(n, "Tanh")) {
        op->kind = FUSE_TANH;
    } else if (fuse_is_op(n, "Swish")) {
        op->kind = FUSE_SWISH;
        op->alpha = attr_float(n, "alpha", 1.0f);
    } else if (fuse_is_op(n, "HardSwish")) {
        op->kind = FUSE_HARDSWISH;
    } else if (fuse_is_op(n, "Gelu")) {
        const char *approx = attr_string(n, "approximate", "none");
        if (strcmp(approx, "none") && strcmp(approx, "tanh")) return false;
        op->kind = FUSE_GELU;
        op->alpha = strcmp(approx, "tanh") == 0;
    } else if (fuse_is_op(n, "HardSigmoid")) {
        op->kind = FUSE_HARDSIGMOID;
        op->alpha = attr_float(n, "alpha", 0.2f);
        op->beta = attr_float(n, "beta", 0.5f);
    } else if (fuse_is_op(n, "Clip")) {
        op->kind = FUSE_CLIP;
        if (n->version < 11) {
            op->alpha = attr_float(n, "min", -FLT_MAX);
            op->beta = attr_float(n, "max", FLT_MAX);
        } else {
            op->alpha = -FLT_MAX;
            op->beta = FLT_MAX;
            for (int i = 1; i < n->n_inputs && i < 3; i++) {
                if (n->inputs[i] < 0) continue;
                const tensor *b = const_float(p, n, i, 1);
                if (!b) return false;
                (i == 1 ? &op->alpha : &op->beta)[0] = ((const float *)b->data)[0];
            }
        }
        if (!(op->alpha <= op->beta)) return false;
    } else if (fuse_is_op(n, "BatchNormalization")) {
        int64_t m = t->dims[1];
        if (!affine || !w_const || matmul || n->n_inputs != 5) return false;
        if (n->version >= 14 && attr_int(n, "training_mode", 0) != 0) return false;
        if (n->version < 9 && attr_int(n, "spatial", 1) == 0) return false;
        op->kind = FUSE_BATCHNORM;
        op->epsilon = attr_float(n, "epsilon", 1e-5f);
        op->scale = const_float(p, n, 1, m);
        op->bias = const_float(p, n, 2, m);
        op->mean = const_float(p, n, 3, m);
        op->var = const_float(p, n, 4, m);
        return op->scale && op->bias && op->mean && op->var;
    } else {
        return false;
    }
    return true;
}

/* Whether node n, of output type `t`, computing from *x its only non-constant input, can run
 * before a convolution as a pre-op (`relu_ok`: a Relu / LeakyRelu is still allowed, as the last
 * pre-op); fills *op and *x. */
static bool classify_pre(const plan *p, const graph_node *n, const type_info *t, bool relu_ok,
                         int *x, fuse_op *op) {
    memset(op, 0, sizeof *op);
    if (!fuse_only_output0(n) || n->n_inputs < 1 || n->inputs[0] < 0) return false;
    *x = n->inputs[0];
    if ((fuse_is_op(n, "Mul") || fuse_is_op(n, "Add")) && n->version >= 7 && n->n_inputs == 2 &&
        n->inputs[1] >= 0) {
        const tensor *k = per_channel(p, n->inputs[1], t);
        if (!k) {
            k = per_channel(p, n->inputs[0], t);
            *x = n->inputs[1];
        }
        if (!k) return false;
        bool mul = fuse_is_op(n, "Mul");
        op->kind = mul ? FUSE_SCALE : FUSE_SHIFT;
        (mul ? &op->scale : &op->bias)[0] = k;
    } else if (relu_ok && n->n_inputs == 1 &&
               (fuse_is_op(n, "Relu") || fuse_is_op(n, "LeakyRelu"))) {
        op->kind = FUSE_RELU;
        if (fuse_is_op(n, "LeakyRelu")) op->alpha = attr_float(n, "alpha", 0.01f);
    } else if (fuse_is_op(n, "BatchNormalization")) {
        int64_t m = t->dims[1];
        if (n->n_inputs != 5) return false;
        if (n->version >= 14 && attr_int(n, "training_mode", 0) != 0) return false;
        if (n->version < 9 && attr_int(n, "spatial", 1) == 0) return false;
        op->kind = FUSE_BATCHNORM;
        op->epsilon = attr_float(n, "epsilon", 1e-5f);
        op->scale = const_float(p, n, 1, m);
        op->bias = const_float(p, n, 2, m);
        op->mean = const_float(p, n, 3, m);
        op->var = const_float(p, n, 4, m);
        if (!op->scale || !op->bias || !op->mean || !op->var) return false;
    } else {
        return false;
    }
    return *x >= 0 && fuse_same_type(&p->vals[*x].type, t);
}

static bool conv_step(const graph *g, const plan_step *ps) {
    return (ps->k->flags & KF_POST_OPS) && fuse_is_op(step_node(g, ps), "Conv");
}

/* A MatMul or Gemm: a product whose channels are its last axis */
static bool matmul_step(const graph *g, const plan_step *ps) {
    const graph_node *n = step_node(g, ps);
    return (ps->k->flags & KF_POST_OPS) && (fuse_is_op(n, "MatMul") || fuse_is_op(n, "Gemm"));
}

/* How a step takes the opaque layout: a conv on X, its addend and Y, each on its own; the other
 * kinds (KF_OPAQUE_LAYOUT kernels) on all their tensors at once: a Concat along channels (joined
 * pixel by pixel), a MaxPool/AveragePool, a global pooling, and a Mul of a tensor by a
 * per-channel factor of the same rank ([N or 1, C, 1, ...]: a squeeze-and-excitation block's
 * scale) or by one of its own shape. Opaque tensors are stored channels last (core/fuse.h), so
 * a Transpose that puts the channels last reads an opaque X as the plain Y of the same bytes
 * (LAY_TO_LAST), and one that puts them first again makes an opaque Y of its plain X's bytes
 * (LAY_FROM_LAST): it moves nothing (ConvNeXt's blocks, between their depthwise conv and their
 * channel MLP). */
enum { LAY_NONE, LAY_CONV, LAY_ALL, LAY_TO_LAST, LAY_FROM_LAST };

static int producer(const graph *g, const plan *p, int n, int v) {
    for (int r = 0; r < n; r++) {
        const graph_node *nd = step_node(g, &p->steps[r]);
        if (nd->n_outputs > 0 && nd->outputs[0] == v) return r;
    }
    return -1;
}

/* Absorbed steps per chain: post-ops (some merged), and a MatMul's views and scalar factors;
 * an attention chain's: up to MAX_WALK steps from the scores to the softmax, the Cast, IsNaN and
 * Where that zero NaN, the second MatMul, and four views. */
#define FUSE_MAX_TAKEN (FUSE_MAX_OPS + 3 * MAX_WALK)
#define ATT_MAX_TAKEN (MAX_WALK + 3 + 1 + 4 * MAX_WALK)

enum { LINK_FACTOR, LINK_RELABEL, LINK_TRANSPOSE, LINK_SELECT };

static bool float_value_type(const type_info *t) {
    return fuse_same_type(t, t) && t->dtype == ONYX_FLOAT;
}

static bool float_value(const plan *p, int v) { return float_value_type(&p->vals[v].type); }

/* float_value, or where `wide` (a device's attention chain) a float16 or bfloat16 one too. */
static bool any_float_value(const plan *p, int v, bool wide) {
    const type_info *t = &p->vals[v].type;
    return wide ? fuse_same_type(t, t) && (t->dtype == ONYX_FLOAT || t->dtype == ONYX_FLOAT16 ||
                                      t->dtype == ONYX_BFLOAT16)
                : float_value_type(t);
}

/* The one index of Gather node n (a constant of one int64 or int32 element, negatives from the
 * end) along an axis of `dim`; *keep: the index has a rank, so the axis stays as a dim of 1. */
static bool single_index(const plan *p, const graph_node *n, int64_t dim, int64_t *index,
                         bool *keep) {
    const tensor *c = host_const(p, n, 1);
    if (!c || c->numel != 1 || (c->dtype != ONYX_INT64 && c->dtype != ONYX_INT32)) return false;
    int64_t i = c->dtype == ONYX_INT64 ? *(const int64_t *)c->data : *(const int32_t *)c->data;
    if (i < 0) i += dim;
    *index = i;
    *keep = c->rank > 0;
    return i >= 0 && i < dim;
}

/* Step s as a link a MatMul's view may absorb between `v` and the MatMul: making v (out false:
 * a Transpose, a relabelling Reshape / Squeeze / Unsqueeze / Flatten / Identity, or a scalar
 * factor) or reading v (out: a Transpose or a relabelling), v read by nothing else. `shared` (an
 * attention chain's operands): also a Gather of one constant index making v (a select), and v
 * may have other readers, which the chain must then absorb too. Returns the LINK_ kind, or -1;
 * *x is the link's other end (its input, or its output when out) and *c a factor's value. */
static int link_of(const graph *g, const plan *p, const int *uses, const bool *gone, int s, int v,
                   bool out, bool wide, bool shared, int *x, float *c) {
    if (s < 0 || gone[s] || p->steps[s].fused || uses[v] < 1 || (uses[v] > 1 && !shared) ||
        plan_value_is_output(g, v))
        return -1;
    const graph_node *t = step_node(g, &p->steps[s]);
    if (!fuse_only_output0(t) || t->n_inputs < 1 || t->inputs[0] < 0 || t->outputs[0] < 0)
        return -1;
    if (!out && t->outputs[0] != v) return -1;
    static const char *const relabel[] = {"Reshape", "Squeeze", "Unsqueeze", "Flatten", "Identity"};
    int kind = -1;
    if (fuse_is_op(t, "Transpose") && t->n_inputs == 1) kind = LINK_TRANSPOSE;
    for (size_t i = 0; i < sizeof relabel / sizeof relabel[0]; i++)
        if (fuse_is_op(t, relabel[i])) kind = LINK_RELABEL;
    if (shared && !out && fuse_is_op(t, "Gather") && t->n_inputs == 2 && t->inputs[1] >= 0) {
        const type_info *in = &p->vals[t->inputs[0]].type;
        int64_t axis = attr_int(t, "axis", 0), index;
        bool keep;
        if (axis < 0) axis += in->rank;
        if (axis < 0 || axis >= in->rank || !single_index(p, t, in->dims[axis], &index, &keep))
            return -1;
        *x = t->inputs[0];
        kind = LINK_SELECT;
    } else if (kind >= 0) {
        if (out && t->inputs[0] != v) return -1;
        for (int k = 1; k < t->n_inputs; k++) /* a shape input must be a constant */
            if (t->inputs[k] >= 0 && p->vals[t->inputs[k]].where != ST_CONST) return -1;
        *x = out ? t->outputs[0] : t->inputs[0];
    } else if (!out) {
        *x = -1;
        for (int k = 0; k < t->n_inputs && k < 2 && *x < 0; k++)
            if (t->inputs[k] >= 0 && scalar_factor(p, t, t->inputs[k], c)) *x = t->inputs[k];
        if (*x < 0) return -1;
        kind = LINK_FACTOR;
    }
    if (kind < 0 || !any_float_value(p, t->inputs[0], wide) ||
        !any_float_value(p, t->outputs[0], wide))
        return -1;
    return kind;
}

/* The links between a MatMul and an end of it: steps[k] links vals[k] and vals[k + 1] (vals[0]
 * the MatMul's operand or result). */
typedef struct walk {
    int n, steps[MAX_WALK], kinds[MAX_WALK], vals[MAX_WALK + 1];
    float factors[MAX_WALK];
} walk;

static bool link_transpose(const graph *g, const plan *p, int step, int rank, int64_t *perm) {
    if (node_transpose_perm(step_node(g, &p->steps[step]), rank, perm) == ONYX_OK) return true;
    onyx_error_clear();
    return false;
}

/* The links from `v` away from the MatMul of step s: towards its producers (an operand), or
 * where `consumer` is given, towards its readers (a result); `wide`: through 16-bit floats too. */
static void walk_links(const graph *g, const plan *p, const int *uses, const bool *gone,
                       const int *consumer, int s, int v, bool wide, bool shared, walk *w) {
    w->n = 0;
    w->vals[0] = v;
    while (w->n < MAX_WALK) {
        int x, cur = w->vals[w->n];
        int r = consumer ? consumer[cur] : producer(g, p, s, cur);
        int kind =
            link_of(g, p, uses, gone, r, cur, consumer != NULL, wide, shared && !consumer, &x,
                    &w->factors[w->n]);
        if (kind < 0) break;
        w->steps[w->n] = r;
        w->kinds[w->n] = kind;
        w->vals[++w->n] = x;
    }
}

/* The view of vals[0] in vals[d] (dense): an operand read through links d-1 .. 0, or (result)
 * a result written through links 0 .. d-1, each undone from the dense end. */
static bool walk_view(const graph *g, const plan *p, const walk *w, int d, bool result,
                      strided_view *v) {
    const type_info *end = &p->vals[w->vals[d]].type;
    view_dense(v, end->rank, end->dims);
    for (int j = d - 1; j >= 0; j--) {
        const type_info *near = &p->vals[w->vals[j]].type; /* the MatMul's side of link j */
        int64_t perm[ONYX_MAX_RANK];
        if (w->kinds[j] == LINK_TRANSPOSE) {
            if (!link_transpose(g, p, w->steps[j], v->rank, perm)) return false;
            (result ? view_untranspose : view_transpose)(v, perm, v);
        } else if (w->kinds[j] == LINK_SELECT) { /* operands only */
            const graph_node *n = step_node(g, &p->steps[w->steps[j]]);
            int64_t axis = attr_int(n, "axis", 0), index;
            bool keep;
            if (axis < 0) axis += v->rank;
            if (result || axis < 0 || axis >= v->rank ||
                !single_index(p, n, v->dims[axis], &index, &keep))
                return false;
            view_select(v, (int)axis, index, keep, v);
        } else if (w->kinds[j] == LINK_RELABEL && !view_reshape(v, near->rank, near->dims, v)) {
            /* a merge of dims the strides keep apart may be split again after a Transpose:
             * the three links move the dims they all keep whole */
            if (result || j < 2 || w->kinds[j - 1] != LINK_TRANSPOSE ||
                w->kinds[j - 2] != LINK_RELABEL ||
                !link_transpose(g, p, w->steps[j - 1], near->rank, perm))
                return false;
            const type_info *c = &p->vals[w->vals[j - 2]].type;
            if (!view_regroup(v, near->rank, near->dims, perm, c->rank, c->dims, v)) return false;
            j -= 2;
        }
    }
    return true;
}

static void set_view(fuse_chain *chain, int i, const strided_view *v) {
    chain->view_rank[i] = v->rank;
    memcpy(chain->view_dims[i], v->dims, sizeof(int64_t) * (size_t)v->rank);
    memcpy(chain->view_strides[i], v->strides, sizeof(int64_t) * (size_t)v->rank);
    chain->view_offset[i] = v->offset;
}

/* A MatMul of two computed operands of the same rank (attention's products) absorbs the scalar
 * factors, Transposes and relabellings that make operand i (where may_view[i]), as far back as
 * they compose into one strided view and end in a factor or a Transpose: in_scale and views 0
 * and 1. src receives the values the fused node reads; the absorbed steps are appended to taken. */
static void operand_views(const graph *g, const plan *p, const int *uses, const bool *gone, int s,
                          const bool *may_view, fuse_chain *chain, int *src, int *taken,
                          int *n_taken) {
    const graph_node *mm = step_node(g, &p->steps[s]);
    float scale = 1.0f;
    for (int i = 0; i < 2; i++) {
        if (i == 1 && mm->inputs[1] == mm->inputs[0]) break;
        if (!may_view[i]) continue;
        walk w;
        walk_links(g, p, uses, gone, NULL, s, mm->inputs[i], false, false, &w);
        strided_view v;
        int d = w.n;
        for (; d > 0; d--)
            if (w.kinds[d - 1] != LINK_RELABEL && walk_view(g, p, &w, d, false, &v)) break;
        float f = scale;
        bool moved = false, factored = false;
        for (int j = 0; j < d; j++) {
            if (w.kinds[j] == LINK_FACTOR) f *= w.factors[j];
            factored |= w.kinds[j] == LINK_FACTOR;
            moved |= w.kinds[j] != LINK_FACTOR;
        }
        if (d == 0 || !isfinite(f)) continue;
        scale = f;
        chain->has_in_scale |= factored;
        for (int j = 0; j < d; j++) taken[(*n_taken)++] = w.steps[j];
        if (moved) set_view(chain, i, &v);
        src[i] = w.vals[d];
    }
    chain->in_scale = scale;
}

/* A MatMul's result no post-op takes, written through the Transposes and relabellings that read
 * it, as far as they compose and end in a Transpose: view 2. Returns the steps absorbed (appended
 * to taken) and sets *cur to the value the fused node makes. */
static int result_views(const graph *g, const plan *p, const int *uses, const bool *gone,
                        const int *consumer, fuse_chain *chain, int *cur, int *taken, int *n_taken) {
    walk w;
    walk_links(g, p, uses, gone, consumer, -1, *cur, false, false, &w);
    strided_view v;
    int d = w.n;
    for (; d > 0; d--)
        if (w.kinds[d - 1] == LINK_TRANSPOSE && walk_view(g, p, &w, d, true, &v)) break;
    if (d == 0) return -1;
    set_view(chain, 2, &v);
    for (int j = 0; j < d; j++) taken[(*n_taken)++] = w.steps[j];
    *cur = w.vals[d];
    return w.steps[d - 1];
}

static bool linear_kind(fuse_kind k) { return k == FUSE_LINEAR || k == FUSE_HARDSIGMOID; }

/* Appends op to the chain, a factor merged into the one before it. oneDNN 2.7 computes a list
 * of post-ops with two linear steps (FUSE_LINEAR, HardSigmoid's) with the first one's
 * parameters for both: one is all a chain takes (false: the chain ends here). */
static bool add_op(fuse_chain *c, const fuse_op *op) {
    fuse_op *prev = c->n > 0 ? &c->ops[c->n - 1] : NULL;
    if (op->kind == FUSE_LINEAR) {
        float *into = prev && prev->kind == FUSE_LINEAR ? &prev->alpha
                      : !prev && c->has_in_scale       ? &c->in_scale
                                                       : NULL;
        if (into) {
            if (!isfinite(*into * op->alpha)) return false;
            *into *= op->alpha;
            return true;
        }
    }
    if (linear_kind(op->kind)) {
        if (c->has_in_scale) return false;
        for (int i = 0; i < c->n; i++)
            if (linear_kind(c->ops[i].kind)) return false;
    }
    c->ops[c->n++] = *op;
    return true;
}

/* Whether value v may be opaque on a device with layouts `l` (core/device_registry.h; the CPU's:
 * rank 3 to 5): a static tensor of a rank the device takes, float, or 8-bit where eight_bit (the
 * quantized convolutions' tensors) and the device takes 8-bit ones. */
static bool opaque_value(const device_layouts *l, const plan *p, int v, bool eight_bit) {
    const type_info *t = &p->vals[v].type;
    bool dtype_ok = t->dtype == ONYX_FLOAT || (eight_bit && l->opaque_8bit &&
                                               (t->dtype == ONYX_UINT8 || t->dtype == ONYX_INT8));
    return t->kind == ONYX_VALUE_TENSOR && dtype_ok && type_is_static(t) &&
           t->rank >= l->opaque_min_rank && t->rank <= l->opaque_max_rank && t->dims[1] > 0;
}

/* A QLinearConv whose kernel keeps 8-bit tensors opaque (its oneDNN path). */
static bool qconv_step(const graph *g, const plan_step *ps) {
    return (ps->k->flags & KF_OPAQUE_LAYOUT) && fuse_is_op(step_node(g, ps), "QLinearConv");
}

/* Whether n is the com.microsoft contrib op `op`. */
static bool ms_op(const graph_node *n, const char *op) {
    return !strcmp(n->domain, "com.microsoft") && !strcmp(n->op_type, op);
}

/* The elementwise quantized ops (com.microsoft QLinearAdd, QLinearMul): data inputs 0 and 3, the
 * others scales and zero points. */
static bool qbinary_op(const graph_node *n) {
    return ms_op(n, "QLinearAdd") || ms_op(n, "QLinearMul");
}

/* The quantized activations (com.microsoft QLinearSigmoid, QLinearLeakyRelu, and onyx's own
 * LookupTable of a QDQ unit, core/rules/qdq_table.c): data input 0, elementwise. */
static bool qunary_op(const graph_node *n) {
    return ms_op(n, "QLinearSigmoid") || ms_op(n, "QLinearLeakyRelu") ||
           (!strcmp(n->domain, "ai.onyx") && !strcmp(n->op_type, "LookupTable"));
}

/* Whether input i of node n carries its layout (is a tensor of the step's pixels) rather than
 * a scale or zero point. */
static bool layout_input(const graph_node *n, int i) {
    if (qbinary_op(n)) return i == 0 || i == 3;
    if (ms_op(n, "QLinearGlobalAveragePool") || qunary_op(n)) return i == 0;
    return true;
}

/* Whether node n is a Transpose of a tensor of rank 3 to 5 that puts its channels last
 * (to_last: perm [0, 2, ..., r-1, 1]) or first again ([0, r-1, 1, ..., r-2]). */
static bool channels_perm(const plan *p, const graph_node *n, bool to_last) {
    if (!fuse_is_op(n, "Transpose") || n->n_inputs != 1 || n->inputs[0] < 0 ||
        !fuse_only_output0(n))
        return false;
    int r = p->vals[n->inputs[0]].type.rank;
    int64_t perm[ONYX_MAX_RANK];
    if (r < 3 || r > 5) return false;
    if (node_transpose_perm(n, r, perm) != ONYX_OK) {
        onyx_error_clear();
        return false;
    }
    return geom_perm_moves_channels(perm, r, to_last);
}

/* Whether `f` scales `t` channel by channel: same rank, [t->dims[0] or 1, C, 1, ...]. */
static bool channel_factor(const type_info *f, const type_info *t) {
    if (f->rank != t->rank || f->dims[1] != t->dims[1] ||
        (f->dims[0] != t->dims[0] && f->dims[0] != 1))
        return false;
    for (int i = 2; i < f->rank; i++)
        if (f->dims[i] != 1) return false;
    return true;
}

static int layout_kind(const graph *g, const plan *p, const plan_step *ps, bool all_kinds) {
    const graph_node *nd = step_node(g, ps);
    const device_layouts *l = device_layouts_of(ps->k->device);
    if (l->opaque_max_rank == 0) return LAY_NONE; /* the device keeps every tensor plain */
    if (conv_step(g, ps)) return LAY_CONV;
    if (qconv_step(g, ps))
        return nd->n_inputs >= 8 && nd->inputs[0] >= 0 && opaque_value(l, p, nd->inputs[0], true) &&
                       fuse_only_output0(nd) && opaque_value(l, p, nd->outputs[0], true)
                   ? LAY_CONV
                   : LAY_NONE;
    if (!all_kinds || !(ps->k->flags & KF_OPAQUE_LAYOUT) || !fuse_only_output0(nd) ||
        nd->n_inputs < 1 || !opaque_value(l, p, nd->outputs[0], true))
        return LAY_NONE;
    const type_info *out = &p->vals[nd->outputs[0]].type;
    int rank = out->rank;
    bool eight_bit = out->dtype != ONYX_FLOAT;
    /* 8-bit tensors: pooling, activations, and the elementwise ops of one shape or by a
     * per-channel factor (a squeeze-and-excitation scale), the kinds 8-bit kernels take */
    if (qbinary_op(nd)) {
        if (nd->n_inputs < 8 || nd->inputs[0] < 0 || nd->inputs[3] < 0) return LAY_NONE;
        const type_info *a = &p->vals[nd->inputs[0]].type, *b = &p->vals[nd->inputs[3]].type;
        bool a_full = fuse_same_type(a, out), b_full = fuse_same_type(b, out);
        return (a_full && (b_full || channel_factor(b, out))) || (b_full && channel_factor(a, out))
                   ? LAY_ALL
                   : LAY_NONE;
    }
    if (qunary_op(nd))
        return nd->n_inputs >= 2 && nd->inputs[0] >= 0 &&
                       fuse_same_type(&p->vals[nd->inputs[0]].type, out)
                   ? LAY_ALL
                   : LAY_NONE;
    if (ms_op(nd, "QLinearGlobalAveragePool"))
        return attr_int(nd, "channels_last", 0) == 0 && nd->inputs[0] >= 0 &&
                       opaque_value(l, p, nd->inputs[0], true) &&
                       fuse_opaque_is_plain(nd, out)
                   ? LAY_ALL
                   : LAY_NONE;
    if (fuse_is_op(nd, "Transpose"))
        return !opaque_value(l, p, nd->inputs[0], true) ? LAY_NONE
               : channels_perm(p, nd, true)          ? LAY_TO_LAST
               : channels_perm(p, nd, false)         ? LAY_FROM_LAST
                                                     : LAY_NONE;
    if (eight_bit && !fuse_is_op(nd, "MaxPool")) return LAY_NONE;
    for (int i = 0; i < nd->n_inputs; i++)
        if (nd->inputs[i] < 0 || !opaque_value(l, p, nd->inputs[i], eight_bit) ||
            p->vals[nd->inputs[i]].type.rank != rank)
            return LAY_NONE;
    if (fuse_is_op(nd, "Concat")) {
        int64_t axis = attr_int(nd, "axis", 1);
        return axis == 1 || axis == 1 - rank ? LAY_ALL : LAY_NONE;
    }
    if (nd->n_inputs == 1 &&
        (fuse_is_op(nd, "MaxPool") || fuse_is_op(nd, "AveragePool") ||
         fuse_is_op(nd, "GlobalAveragePool") || fuse_is_op(nd, "GlobalMaxPool")))
        return LAY_ALL;
    if (fuse_is_op(nd, "Mul") && nd->version >= 7 && nd->n_inputs == 2) {
        const type_info *a = &p->vals[nd->inputs[0]].type, *b = &p->vals[nd->inputs[1]].type;
        bool a_full = fuse_same_type(a, out), b_full = fuse_same_type(b, out);
        if ((a_full && (b_full || channel_factor(b, out))) || (b_full && channel_factor(a, out)))
            return LAY_ALL;
    }
    return LAY_NONE;
}

bool fuse_opaque_is_plain(const graph_node *n, const type_info *y) {
    if (!fuse_is_op(n, "GlobalAveragePool") && !fuse_is_op(n, "GlobalMaxPool") &&
        !ms_op(n, "QLinearGlobalAveragePool"))
        return false;
    if (!y || y->kind != ONYX_VALUE_TENSOR || y->rank < 3 || y->dims[1] <= 0) return false;
    for (int i = 2; i < y->rank; i++)
        if (y->dims[i] != 1) return false;
    return true;
}

/* Whether input i of a step of layout kind `kind` may be opaque (a conv's X not with pre-ops). */
static bool takes_opaque(int kind, const graph_node *nd, const fuse_chain *c, int i) {
    return (kind == LAY_ALL && layout_input(nd, i)) || (kind == LAY_TO_LAST && i == 0) ||
           (kind == LAY_CONV &&
            ((i == 0 && c->n_pre == 0 && !c->x_channels_last) || (i == 3 && nd->n_inputs >= 4)));
}

/* Marks the outputs of such steps that only such steps read opaque, on both ends; a Concat or
 * pooling step only when all of its tensors are (all_kinds false: between convs only). */
static onyx_status mark_opaque(const graph *g, const plan *p, const int *uses, fuse_chain *chains,
                               bool all_kinds) {
    int *kind = calloc((size_t)p->n_steps + 1, sizeof *kind);
    bool *cand = calloc((size_t)p->n_vals + 1, sizeof *cand);
    if (!kind || !cand) {
        free(kind);
        free(cand);
        return onyx_oom("fusion pass");
    }
    for (int s = 0; s < p->n_steps; s++) kind[s] = layout_kind(g, p, &p->steps[s], all_kinds);
    for (int s = 0; s < p->n_steps; s++) {
        if (kind[s] == LAY_NONE || kind[s] == LAY_TO_LAST) continue; /* its Y is plain */
        const plan_step *ps = &p->steps[s];
        int v = step_node(g, ps)->outputs[0];
        const device_layouts *l = device_layouts_of(ps->k->device);
        if (plan_value_is_output(g, v) || !opaque_value(l, p, v, true) || chains[s].y_channels_last)
            continue;
        int reads = 0;
        bool ok = true;
        for (int r = 0; r < p->n_steps && ok; r++) {
            const graph_node *nd = step_node(g, &p->steps[r]);
            for (int i = 0; i < nd->n_inputs; i++) {
                if (nd->inputs[i] != v) continue;
                reads++;
                ok &= p->steps[r].k->device == ps->k->device &&
                      takes_opaque(kind[r], nd, &chains[r], i) &&
                      (kind[r] != LAY_CONV || kind[s] != LAY_CONV || p->steps[r].k == ps->k);
            }
        }
        cand[v] = ok && reads > 0 && reads == uses[v];
    }
    /* a Concat or pooling step whose tensors are not all opaque keeps all of them plain, but
     * for an opaque X and a Y that is the same opaque or plain (a network's last pooling, read
     * by its classifier) */
    for (bool changed = true; changed;) {
        changed = false;
        for (int s = 0; s < p->n_steps; s++) {
            if (kind[s] != LAY_ALL) continue;
            const graph_node *nd = step_node(g, &p->steps[s]);
            bool all = cand[nd->outputs[0]], any = all;
            for (int i = 0; i < nd->n_inputs; i++) {
                if (!layout_input(nd, i)) continue;
                all &= cand[nd->inputs[i]];
                any |= cand[nd->inputs[i]];
            }
            if (all || !any) continue;
            if (cand[nd->inputs[0]] && fuse_opaque_is_plain(nd, &p->vals[nd->outputs[0]].type))
                continue;
            cand[nd->outputs[0]] = false;
            for (int i = 0; i < nd->n_inputs; i++)
                if (layout_input(nd, i)) cand[nd->inputs[i]] = false;
            changed = true;
        }
    }
    for (int s = 0; s < p->n_steps; s++) {
        if (kind[s] == LAY_NONE) continue;
        const graph_node *nd = step_node(g, &p->steps[s]);
        chains[s].opaque_out0 = cand[nd->outputs[0]];
        chains[s].opaque_in0 = nd->inputs[0] >= 0 && cand[nd->inputs[0]] && chains[s].n_pre == 0 &&
                               !chains[s].x_channels_last;
        chains[s].opaque_addend = kind[s] == LAY_CONV && nd->n_inputs >= 4 && nd->inputs[3] >= 0 &&
                                  cand[nd->inputs[3]];
    }
    free(kind);
    free(cand);
    return ONYX_OK;
}

static bool chain_used(const fuse_chain *c) {
    return c->n > 0 || c->n_pre > 0 || c->opaque_in0 || c->opaque_out0 || c->opaque_addend ||
           c->view_rank[0] || c->view_rank[1] || c->view_rank[2] || c->view_rank[3] ||
           c->has_in_scale || c->attention || c->x_scale || c->x_channels_last ||
           c->y_channels_last;
}

/* ---------------------------------------------------------------- attention */

/* Operand `v` of the MatMul of step s read through the deepest view whose rows are contiguous
 * (the kernel reads them with a leading dimension), or, where cols_ok, whose columns are (K^T,
 * whose columns are K's rows): the view in *out, the factors met on the way multiplied into
 * *scale (NULL: V, whose factors would scale the output, not the scores; a view through one is
 * not taken), the value it reads in *src, the steps absorbed appended to taken. Never fails: the
 * operand itself (dense) is the shallowest such view. */
static void attention_operand(const graph *g, const plan *p, const int *uses, const bool *gone,
                              int s, int v, bool cols_ok, bool wide, bool shared,
                              strided_view *out, float *scale, int *src, int *taken,
                              int *n_taken) {
    walk w;
    walk_links(g, p, uses, gone, NULL, s, v, wide, shared, &w);
    for (int d = w.n; d >= 0; d--) {
        strided_view view;
        if (d > 0 && (w.kinds[d - 1] == LINK_RELABEL || !walk_view(g, p, &w, d, false, &view)))
            continue;
        if (d == 0) view_dense(&view, p->vals[v].type.rank, p->vals[v].type.dims);
        int r = view.rank;
        float f = scale ? *scale : 1.0f;
        bool factored = false;
        for (int j = 0; j < d; j++)
            if (w.kinds[j] == LINK_FACTOR) {
                f *= w.factors[j];
                factored = true;
            }
        if (!isfinite(f) || (factored && !scale) ||
            (view.strides[r - 1] != 1 && !(cols_ok && view.strides[r - 2] == 1)))
            continue;
        if (scale) *scale = f;
        *out = view;
        *src = w.vals[d];
        for (int j = 0; j < d; j++) taken[(*n_taken)++] = w.steps[j];
        return;
    }
}

/* Whether what the operand walks' steps (taken[0..n)) make is read by them and the two MatMuls
 * (steps s and s2) alone, and is none of the values the fused step reads (src[0..3): where one
 * walk stopped, another may have gone on), after dropping the steps that several walks took
 * (from taken). */
static bool walks_closed(const graph *g, const plan *p, const int *uses, int s, int s2,
                         const int *src, int *taken, int *n) {
    int m = 0;
    for (int i = 0; i < *n; i++) {
        bool again = false;
        for (int j = 0; j < m; j++) again |= taken[j] == taken[i];
        if (!again) taken[m++] = taken[i];
    }
    *n = m;
    for (int i = 0; i < m; i++) {
        int x = step_node(g, &p->steps[taken[i]])->outputs[0], reads = 0;
        if (x == src[0] || x == src[1] || x == src[2]) return false;
        for (int j = 0; j < m + 2; j++) {
            int r = j < m ? taken[j] : j == m ? s : s2;
            const graph_node *nd = step_node(g, &p->steps[r]);
            for (int k = 0; k < nd->n_inputs; k++) reads += nd->inputs[k] == x;
        }
        if (reads != uses[x]) return false;
    }
    return true;
}

/* Whether mask type m broadcasts to scores of type t (rank <= t's, each dim 1 or t's); `wide`:
 * a 16-bit float mask too. */
static bool mask_broadcasts(const plan *p, int mask, const type_info *t, bool wide) {
    const type_info *m = &p->vals[mask].type;
    if (!any_float_value(p, mask, wide) || m->rank > t->rank) return false;
    for (int i = 0; i < m->rank; i++) {
        int64_t d = m->dims[i], e = t->dims[t->rank - m->rank + i];
        if (d != 1 && d != e) return false;
    }
    return true;
}

/* The step after s making `v` from `from` alone, as op `op` (and only what it makes), or -1. */
static int maker_of(const graph *g, const plan *p, const bool *gone, int s, int until, int v,
                    int from, const char *op) {
    for (int r = s + 1; r < until; r++) {
        const graph_node *n = step_node(g, &p->steps[r]);
        if (!gone[r] && !p->steps[r].fused && fuse_is_op(n, op) && n->n_inputs == 1 &&
            n->inputs[0] == from && fuse_only_output0(n) && n->outputs[0] == v)
            return r;
    }
    return -1;
}

/* Whether P (the softmax's output, made by step s) goes through Where(IsNaN(P), 0, P) and
 * nothing else: torch's scaled dot product export zeroes the rows a mask left empty so (a
 * float16 model computed in float tests a Cast of P to float16, NaN where P is). Returns the
 * IsNaN's step (the Where is consumer[p_val]) with, in *cast, the Cast's (or -1), or -1. */
static int nan_to_zero(const graph *g, const plan *p, const int *uses, const bool *gone,
                       const int *consumer, int s, int p_val, int *cast) {
    int w = consumer[p_val];
    if (uses[p_val] != 2 || plan_value_is_output(g, p_val) || w <= s || gone[w] ||
        p->steps[w].fused)
        return -1;
    const graph_node *where = step_node(g, &p->steps[w]);
    const tensor *zero = const_float(p, where, 1, 1);
    if (!fuse_is_op(where, "Where") || where->n_inputs != 3 || where->inputs[2] != p_val || !zero ||
        ((const float *)zero->data)[0] != 0.0f || !fuse_only_output0(where) ||
        !float_value(p, where->outputs[0]) ||
        !fuse_same_type(&p->vals[where->outputs[0]].type, &p->vals[p_val].type))
        return -1;
    int isnan_val = where->inputs[0];
    if (uses[isnan_val] != 1 || plan_value_is_output(g, isnan_val)) return -1;
    *cast = -1;
    int isnan = maker_of(g, p, gone, s, w, isnan_val, p_val, "IsNaN");
    if (isnan >= 0) return isnan;
    for (int r = s + 1; r < w && isnan < 0; r++) { /* IsNaN(Cast(P)) */
        const graph_node *n = step_node(g, &p->steps[r]);
        if (!fuse_is_op(n, "IsNaN") || n->n_inputs != 1 || n->outputs[0] != isnan_val) continue;
        int half = n->inputs[0];
        if (half < 0 || uses[half] != 1 || plan_value_is_output(g, half) ||
            p->vals[half].type.dtype != ONYX_FLOAT16)
            return -1;
        *cast = maker_of(g, p, gone, s, r, half, p_val, "Cast");
        isnan = *cast >= 0 ? maker_of(g, p, gone, *cast, w, isnan_val, half, "IsNaN") : -1;
    }
    return isnan;
}

/* Attention spelled out, as every exporter writes the scaled dot product, from its first
 * MatMul (step s):
 *   S = MatMul(Q, K^T), [* or / scalars], [+ mask], P = Softmax(S, last axis), O = MatMul(P, V)
 * with Q, K^T, V and O of rank 3 or 4 sharing their leading dims (no broadcast), every value
 * between read by the next step alone. Q, K^T and V are read through the Transposes,
 * relabellings and scalar factors that make them (strided views), and O is written through the
 * Transposes that read it, as the MatMul chains do. Fills `chain` (views 0: Q, 1: K^T, 3: V,
 * 2: O; in_scale: every factor) and src (Q, K^T, V, mask or -1), appends the absorbed steps to
 * taken and sets *cur to the value the fused step makes. Returns the last step absorbed, or -1
 * when the steps from s are no such pattern. */
static int attention_chain(const graph *g, const plan *p, const int *uses, const bool *gone,
                           const int *consumer, int s, fuse_chain *chain, int *src, int *cur,
                           int *taken, int *n_taken) {
    const graph_node *mm = step_node(g, &p->steps[s]);
    /* the CPU's kernel computes in float; a device's takes its 16-bit floats too. Every step of
     * the chain runs on the first MatMul's device: a value from another comes through a copy,
     * which no walk passes. */
    device_kind dev = p->steps[s].k->device;
    bool wide = dev != DEVICE_CPU;
    if (!fuse_is_op(mm, "MatMul") || mm->n_inputs != 2 || mm->inputs[0] == mm->inputs[1]) return -1;
    const type_info *t = &p->vals[mm->outputs[0]].type, *tq = &p->vals[mm->inputs[0]].type,
                    *tk = &p->vals[mm->inputs[1]].type;
    int r = t->rank;
    if ((r != 3 && r != 4) || !any_float_value(p, mm->inputs[0], wide) ||
        !any_float_value(p, mm->inputs[1], wide) || tq->dtype != t->dtype ||
        tk->dtype != t->dtype || tq->rank != r || tk->rank != r ||
        p->vals[mm->inputs[0]].where == ST_CONST || p->vals[mm->inputs[1]].where == ST_CONST)
        return -1;
    for (int i = 0; i < r - 2; i++)
        if (tq->dims[i] != t->dims[i] || tk->dims[i] != t->dims[i]) return -1;
    int tk_[ATT_MAX_TAKEN], nt = 0, v = mm->outputs[0], mask = -1, step = -1;
    bool zeroed = false;
    float scale = 1.0f;
    /* the scores' way to the softmax: factors, then at most one Add */
    for (bool softmax = false; !softmax;) {
        step = consumer[v];
        if (nt >= MAX_WALK || uses[v] != 1 || plan_value_is_output(g, v) || step <= s ||
            gone[step] || p->steps[step].fused)
            return -1;
        const graph_node *n = step_node(g, &p->steps[step]);
        if (!fuse_only_output0(n) || !fuse_same_type(&p->vals[n->outputs[0]].type, t)) return -1;
        float f;
        if (mask < 0 && scalar_factor(p, n, v, &f)) {
            scale *= f;
        } else if (mask < 0 && fuse_is_op(n, "Add") && n->version >= 7 && n->n_inputs == 2 &&
                   (n->inputs[0] == v) != (n->inputs[1] == v)) {
            mask = n->inputs[n->inputs[0] == v ? 1 : 0];
            if (mask < 0 || !mask_broadcasts(p, mask, t, wide)) return -1;
        } else if (fuse_is_op(n, "Softmax") && n->n_inputs == 1) {
            int64_t axis = attr_int(n, "axis", n->version >= 13 ? -1 : 1);
            if (axis != -1 && axis != r - 1) return -1;
            softmax = true;
        } else {
            return -1;
        }
        tk_[nt++] = step;
        v = n->outputs[0];
    }
    /* torch's export zeroes what the softmax made NaN (rows masked out entirely) */
    int cast, zeroing = nan_to_zero(g, p, uses, gone, consumer, step, v, &cast);
    if (zeroing >= 0) {
        if (cast >= 0) tk_[nt++] = cast;
        tk_[nt++] = zeroing;
        step = consumer[v];
        tk_[nt++] = step;
        v = step_node(g, &p->steps[step])->outputs[0];
        zeroed = true;
    }
    /* P times V */
    int s2 = consumer[v];
    if (uses[v] != 1 || plan_value_is_output(g, v) || s2 <= step || gone[s2] ||
        p->steps[s2].fused || p->steps[s2].k->device != dev ||
        (dev == DEVICE_CPU && !matmul_step(g, &p->steps[s2])))
        return -1;
    const graph_node *pv = step_node(g, &p->steps[s2]);
    if (!fuse_is_op(pv, "MatMul") || pv->n_inputs != 2 || pv->inputs[0] != v ||
        pv->inputs[1] == v ||
        !any_float_value(p, pv->inputs[1], wide) || !any_float_value(p, pv->outputs[0], wide) ||
        p->vals[pv->inputs[1]].type.dtype != t->dtype ||
        p->vals[pv->outputs[0]].type.dtype != t->dtype)
        return -1;
    const type_info *tv = &p->vals[pv->inputs[1]].type, *to = &p->vals[pv->outputs[0]].type;
    if (tv->rank != r || to->rank != r || tv->dims[r - 2] != t->dims[r - 1]) return -1;
    for (int i = 0; i < r - 2; i++)
        if (tv->dims[i] != t->dims[i]) return -1;
    tk_[nt++] = s2;

    fuse_chain c = {0};
    strided_view view[4];
    /* Q, K^T and V through their links; first through links they share, as torch's
     * MultiheadAttention makes all three from one projection (Gathers of one index) */
    int wk[3 * MAX_WALK], nw = 0;
    float scores_scale = scale;
    for (int shared = 1; shared >= 0; shared--) {
        nw = 0;
        scale = scores_scale;
        attention_operand(g, p, uses, gone, s, mm->inputs[0], false, wide, shared, &view[0],
                          &scale, &src[0], wk, &nw);
        attention_operand(g, p, uses, gone, s, mm->inputs[1], true, wide, shared, &view[1],
                          &scale, &src[1], wk, &nw);
        attention_operand(g, p, uses, gone, s2, pv->inputs[1], false, wide, shared, &view[3],
                          NULL, &src[2], wk, &nw);
        if (!shared || walks_closed(g, p, uses, s, s2, src, wk, &nw)) break;
    }
    for (int i = 0; i < nw; i++) tk_[nt++] = wk[i];
    int last = s2, end = pv->outputs[0];
    /* O through the Transposes that read it, where its rows stay contiguous */
    walk w;
    walk_links(g, p, uses, gone, consumer, -1, end, wide, false, &w);
    view_dense(&view[2], to->rank, to->dims);
    for (int d = w.n; d > 0; d--) {
        strided_view o;
        if (w.kinds[d - 1] != LINK_TRANSPOSE || !walk_view(g, p, &w, d, true, &o) ||
            o.strides[o.rank - 1] != 1)
            continue;
        view[2] = o;
        for (int j = 0; j < d; j++) tk_[nt++] = w.steps[j];
        last = w.steps[d - 1];
        end = w.vals[d];
        break;
    }
    for (int i = 0; i < 4; i++) set_view(&c, i, &view[i]);
    c.attention = true;
    c.nan_to_zero = zeroed;
    c.has_in_scale = true;
    c.in_scale = scale;
    src[3] = mask;
    *chain = c;
    *cur = end;
    for (int i = 0; i < nt; i++) taken[(*n_taken)++] = tk_[i];
    return last;
}

/* The fused node of an attention chain found at step s: an Attention node of the chain's
 * inputs and output, run by the Attention kernel (*k) of step s's device with the chain
 * prepared. *node stays NULL (the steps stay as they are) when that kernel is missing or refuses
 * the chain. */
static onyx_status attention_node(subgraph *sg, plan *p, int s, const fuse_chain *chain,
                                  const int *src, int out, graph_node **node, const kernel **k) {
    *node = NULL;
    const op_schema *schema = NULL;
    if (!sg->env.ops || sg->env.ops->resolve("", "Attention", 23, &schema) != ONYX_OK) {
        onyx_error_clear();
        return ONYX_OK;
    }
    graph_node *fn = calloc(1, sizeof *fn + 5 * sizeof(int));
    if (!fn) return onyx_oom("fused attention");
    *fn = (graph_node){.name = step_node(sg->g, &p->steps[s])->name, .op_type = "Attention",
                       .domain = "", .version = 23, .schema = schema,
                       .n_inputs = src[3] >= 0 ? 4 : 3, .n_outputs = 1};
    fn->inputs = (int *)(fn + 1);
    fn->outputs = fn->inputs + 4;
    memcpy(fn->inputs, src, 4 * sizeof(int));
    fn->outputs[0] = out;
    const type_info *in_types[4];
    for (int i = 0; i < fn->n_inputs; i++) in_types[i] = &p->vals[src[i]].type;
    const kernel *cand = sg->env.select(fn, fn->n_inputs, in_types, p->steps[s].k->device);
    if (!cand) onyx_error_clear(); /* no Attention kernel on that device: no fusion */
    if (cand && cand->takes_chain) { /* the kernel answers; its prepare comes with the others' */
        if (!plan_kernel_takes_chain(sg, p, cand, fn, NULL, chain)) cand = NULL;
    } else if (cand) { /* a kernel without the query: its prepare tried */
        void *trial = NULL;
        if (plan_prepare_kernel(sg, p, cand, fn, NULL, chain, &trial) != ONYX_OK || !trial) {
            onyx_error_clear();
            cand = NULL;
        }
        if (trial && cand && cand->release) cand->release(trial);
    }
    if (!cand) {
        free(fn);
        return ONYX_OK;
    }
    *node = fn;
    *k = cand;
    return ONYX_OK;
}

/* Prepares every step whose chain says something, all or nothing: on failure the new states
 * are released and the old ones stay. */
static onyx_status prepare_all(subgraph *sg, plan *p, const fuse_chain *chains) {
    const graph *g = sg->g;
    onyx_status st = ONYX_OK;
    void **states = calloc((size_t)p->n_steps + 1, sizeof *states);
    if (!states) return onyx_oom("fusion pass");
    for (int s = 0; s < p->n_steps && st == ONYX_OK; s++)
        if (chain_used(&chains[s]))
            st = plan_prepare_kernel(sg, p, p->steps[s].k, step_node(g, &p->steps[s]),
                                     p->steps[s].params, &chains[s], &states[s]);
    for (int s = 0; s < p->n_steps; s++) {
        plan_step *ps = &p->steps[s];
        if (!chain_used(&chains[s])) continue;
        void *drop = st == ONYX_OK ? ps->state : states[s];
        if (drop && ps->k->release) ps->k->release(drop);
        if (st == ONYX_OK) ps->state = states[s];
    }
    free(states);
    return st;
}

/* Whether step t is a Transpose of a float tensor that puts its channels last or first again
 * (channels_perm). */
static bool channels_transpose(const graph *g, const plan *p, int t, bool to_last) {
    const graph_node *n = step_node(g, &p->steps[t]);
    return channels_perm(p, n, to_last) && float_value(p, n->inputs[0]) &&
           float_value(p, n->outputs[0]);
}

/* The Transpose (step) a conv of step s may read X through: X made only for it from a
 * channels-last tensor (its input in *x); -1 if none. */
static int channels_last_input(const graph *g, const plan *p, const int *uses, const bool *gone,
                               int s, int *x) {
    int v = step_node(g, &p->steps[s])->inputs[0];
    if (uses[v] != 1 || plan_value_is_output(g, v)) return -1;
    int t = producer(g, p, s, v);
    if (t < 0 || gone[t] || p->steps[t].fused || !channels_transpose(g, p, t, false)) return -1;
    *x = step_node(g, &p->steps[t])->inputs[0];
    return t;
}

/* The squeeze-and-excitation scale the conv of step s (X of type t) may take into its weights:
 * X made only for it by Mul(x, sc), sc [1, C, 1, ...] computed per run, and the weights at most
 * half X's size (scaling and reordering them per run costs about two passes over them, the Mul
 * two over X: EfficientNet's and MobileNetV3's early projections, not their last ones). Returns
 * the Mul's step, with x and sc; -1 if none. */
static int se_scale(const graph *g, const plan *p, const int *uses, const bool *gone, int s,
                    const type_info *t, int *x, int *sc) {
    const graph_node *conv = step_node(g, &p->steps[s]);
    int v = conv->inputs[0];
    const plan_value *w = &p->vals[conv->inputs[1]];
    int64_t wn, xn;
    if (attr_int(conv, "group", 1) != 1 || w->where != ST_CONST || !type_is_static(&w->type) ||
        !shape_numel(w->type.rank, w->type.dims, &wn) || !shape_numel(t->rank, t->dims, &xn) ||
        wn > xn / 2 || uses[v] != 1 || plan_value_is_output(g, v))
        return -1;
    int m = producer(g, p, s, v);
    if (m < 0 || gone[m] || p->steps[m].fused) return -1;
    const graph_node *mul = step_node(g, &p->steps[m]);
    if (!fuse_is_op(mul, "Mul") || mul->version < 7 || mul->n_inputs != 2 ||
        !fuse_only_output0(mul))
        return -1;
    for (int k = 0; k < 2; k++) {
        int a = mul->inputs[k], b = mul->inputs[1 - k];
        if (a < 0 || b < 0 || a == b) continue;
        const type_info *bt = &p->vals[b].type;
        if (fuse_same_type(&p->vals[a].type, t) && p->vals[b].where != ST_CONST &&
            float_value_type(bt) && channel_factor(bt, t) && bt->dims[0] == 1) {
            *x = a;
            *sc = b;
            return m;
        }
    }
    return -1;
}

onyx_status fuse_plan(subgraph *sg, plan *p) {
    const graph *g = sg->g;
    int n = p->n_steps;
    onyx_status st = ONYX_OK;
    int *uses = calloc((size_t)p->n_vals + 1, sizeof *uses);
    int *consumer = malloc(((size_t)p->n_vals + 1) * sizeof *consumer);
    int *emit = malloc(((size_t)n + 1) * sizeof *emit);   /* step placed at this position */
    bool *gone = calloc((size_t)n + 1, sizeof *gone);       /* absorbed or moved */
    plan_step *steps = calloc((size_t)n + 1, sizeof *steps);
    fuse_chain *chains = calloc((size_t)n + 1, sizeof *chains), *placed = NULL;
    placed = calloc((size_t)n + 1, sizeof *placed);
    if (!uses || !consumer || !emit || !gone || !steps || !chains || !placed) {
        st = onyx_oom("fusion pass");
        goto done;
    }
    /* readers among the plan's steps: nodes folded away at prepare (a Shape of a static value)
     * read nothing at run */
    plan_readers(g, p, uses, consumer);
    for (int s = 0; s < n; s++) emit[s] = s;

    /* chains: each conv or MatMul absorbs what only it feeds */
    for (int s = 0; s < n; s++) {
        plan_step *ps = &p->steps[s];
        const graph_node *conv = step_node(g, ps);
        bool matmul = matmul_step(g, ps);
        /* a device's MatMul: an attention chain only (its other epilogues: core/fuse_device.c) */
        bool device_mm = ps->k->device != DEVICE_CPU && fuse_is_op(conv, "MatMul");
        if (gone[s] || !(conv_step(g, ps) || matmul || device_mm) || ps->fused ||
            !fuse_only_output0(conv) || conv->n_inputs < 2 || conv->inputs[0] < 0 ||
            conv->inputs[1] < 0)
            continue;
        int att_src[4], att_out, att_taken[ATT_MAX_TAKEN], att_n = 0;
        int att_last = matmul || device_mm ? attention_chain(g, p, uses, gone, consumer, s,
                                                             &chains[s], att_src, &att_out,
                                                             att_taken, &att_n)
                                           : -1;
        if (att_last >= 0) {
            graph_node *fn;
            const kernel *ak;
            CHECK(attention_node(sg, p, s, &chains[s], att_src, att_out, &fn, &ak));
            if (fn) {
                if (ps->state && ps->k->release) ps->k->release(ps->state);
                ps->state = NULL;
                ps->k = ak;
                plan_set_fused(ps, fn);
                plan_absorb_steps(p, gone, att_taken, att_n);
                gone[s] = true;
                emit[att_last] = s;
                continue;
            }
            memset(&chains[s], 0, sizeof chains[s]);
        }
        if (device_mm) continue;
        const type_info *t = &p->vals[conv->outputs[0]].type;
        if (!fuse_same_type(t, t) || t->dtype != ONYX_FLOAT || t->rank < (matmul ? 2 : 3)) continue;
        bool w_const = matmul || (p->vals[conv->inputs[1]].where == ST_CONST &&
                                  (conv->n_inputs < 3 || conv->inputs[2] < 0 ||
                                   p->vals[conv->inputs[2]].where == ST_CONST));
        fuse_chain *chain = &chains[s];
        int cur = conv->outputs[0], addend = -1, last = s;
        int taken[FUSE_MAX_TAKEN], n_taken = 0, src[2] = {conv->inputs[0], conv->inputs[1]};
        const type_info *ta = &p->vals[conv->inputs[0]].type, *tb = &p->vals[conv->inputs[1]].type;
        bool products = matmul && t->rank >= 3 && ta->rank == t->rank && tb->rank == t->rank &&
                        p->vals[conv->inputs[0]].where != ST_CONST &&
                        p->vals[conv->inputs[1]].where != ST_CONST;
        /* A strided operand or result slows the product a little (measured with oneDNN 2.7
         * on AVX-512: 3-15 %), and a factor moved onto the result applies to more elements
         * than it did on the operand, while the copy or the pass saved costs the operand's
         * bytes: views and factors pay where each element of the operand meets few others,
         * i.e. the product's other dim is short (BERT's and ViT's 128 to 197 positions gain,
         * Whisper's 1500 lose) */
        bool may_view[3] = {false, false, false};
        if (products) {
            int r = t->rank;
            int64_t m = ta->dims[r - 2], k = ta->dims[r - 1], nn = tb->dims[r - 1];
            may_view[0] = nn <= VIEW_MAX_REUSE;
            may_view[1] = m <= VIEW_MAX_REUSE;
            may_view[2] = k <= VIEW_MAX_REUSE;
            operand_views(g, p, uses, gone, s, may_view, chain, src, taken, &n_taken);
        }
        bool gemm = fuse_is_op(conv, "Gemm"); /* has a bias of its own: no other */
        while (chain->n < FUSE_MAX_OPS && n_taken < FUSE_MAX_TAKEN - MAX_WALK - 1) {
            int tstep = consumer[cur];
            if (uses[cur] != 1 || plan_value_is_output(g, cur) || tstep <= s || gone[tstep])
                break;
            /* a product's post-ops act on its elements in order: a relabelling that keeps the
             * columns (GPT-2's Reshape of a Gemm's rows into [batch, sequence]) lets them on */
            int relabel = -1, x = cur, rx;
            float unused;
            if (matmul &&
                link_of(g, p, uses, gone, tstep, cur, true, false, false, &rx, &unused) ==
                    LINK_RELABEL &&
                p->vals[rx].type.rank >= 1 &&
                p->vals[rx].type.dims[p->vals[rx].type.rank - 1] == t->dims[t->rank - 1]) {
                relabel = tstep;
                x = rx;
                tstep = consumer[x];
                if (uses[x] != 1 || plan_value_is_output(g, x) || tstep <= s || gone[tstep]) break;
            }
            const type_info *xt = &p->vals[x].type;
            const graph_node *nn = step_node(g, &p->steps[tstep]);
            fuse_op op;
            bool affine = (!matmul || chain->n == 0) && !gemm;
            for (int i = 0; i < chain->n; i++)
                affine &= chain->ops[i].kind == FUSE_BATCHNORM ||
                          chain->ops[i].kind == FUSE_SCALE || chain->ops[i].kind == FUSE_SHIFT;
            if (!classify(p, nn, x, xt, affine, w_const, matmul, &addend, &op)) break;
            if (op.kind == FUSE_SUM) op.input = 3;
            if (!add_op(chain, &op)) break;
            if (relabel >= 0) taken[n_taken++] = relabel;
            taken[n_taken++] = tstep;
            cur = nn->outputs[0];
            last = tstep;
        }
        /* a conv may write its result through the Transpose that puts its channels last (not
         * with an addend, which is read in the conv's own layout, and may share Y's bytes) */
        if (!matmul && addend < 0 && t->rank <= 5 && uses[cur] == 1 &&
            !plan_value_is_output(g, cur)) {
            int ts = consumer[cur];
            if (ts > s && !gone[ts] && !p->steps[ts].fused &&
                channels_transpose(g, p, ts, true)) {
                chain->y_channels_last = true;
                taken[n_taken++] = ts;
                cur = step_node(g, &p->steps[ts])->outputs[0];
                last = ts;
            }
        }
        /* a result no post-op takes may be written through the Transposes that read it */
        if (products && may_view[2] && chain->n == 0) {
            int end = result_views(g, p, uses, gone, consumer, chain, &cur, taken, &n_taken);
            if (end >= 0) last = end;
        }
        if (n_taken == 0) continue;

        /* the fused node: the conv's inputs (bias slot kept), the addend, the chain's output */
        graph_node *fn = calloc(1, sizeof *fn + (FUSED_INPUTS + 1) * sizeof(int));
        if (!fn) {
            st = onyx_oom("fused node");
            goto done;
        }
        *fn = *conv;
        fn->inputs = (int *)(fn + 1);
        fn->outputs = fn->inputs + FUSED_INPUTS;
        fn->n_inputs = addend >= 0 ? 4 : conv->n_inputs;
        for (int i = 0; i < 3; i++) fn->inputs[i] = i < conv->n_inputs ? conv->inputs[i] : -1;
        fn->inputs[3] = addend;
        fn->n_outputs = 1;
        fn->outputs[0] = cur;
        fn->inputs[0] = src[0];
        fn->inputs[1] = src[1];
        if (matmul) { /* a MatMul takes a chain where its oneDNN primitive does: tried here */
            void *trial = NULL;
            if (plan_prepare_kernel(sg, p, ps->k, fn, ps->params, chain, &trial) != ONYX_OK) {
                onyx_error_clear();
                free(fn);
                memset(chain, 0, sizeof *chain);
                continue;
            }
            if (trial && ps->k->release) ps->k->release(trial);
        }
        plan_set_fused(ps, fn);
        plan_absorb_steps(p, gone, taken, n_taken);
        gone[s] = last != s; /* moved to the chain's end, or (input views only) kept */
        emit[last] = s;
    }

    /* pre-ops: a conv absorbs the per-channel steps (and one activation) that only feed its X */
    for (int s = 0; s < n; s++) {
        plan_step *ps = &p->steps[s];
        if (!conv_step(g, ps)) continue;
        const graph_node *conv = step_node(g, ps);
        if (conv->n_inputs < 2 || conv->inputs[0] < 0 || conv->inputs[1] < 0) continue;
        const type_info *t = &p->vals[conv->inputs[0]].type;
        if (!fuse_same_type(t, t) || t->dtype != ONYX_FLOAT || t->rank < 3 || t->rank > 5) continue;
        fuse_chain *chain = &chains[s];
        int cur = conv->inputs[0], absorbed[FUSE_MAX_OPS];
        fuse_op rev[FUSE_MAX_OPS];
        int np = 0;
        while (np < FUSE_MAX_OPS) {
            if (uses[cur] != 1 || plan_value_is_output(g, cur)) break;
            int tstep = -1;
            for (int r = 0; r < s && tstep < 0; r++) {
                const graph_node *nd = step_node(g, &p->steps[r]);
                if (!gone[r] && nd->n_outputs > 0 && nd->outputs[0] == cur) tstep = r;
            }
            if (tstep < 0 || p->steps[tstep].fused) break;
            const graph_node *nn = step_node(g, &p->steps[tstep]);
            int x;
            if (!classify_pre(p, nn, t, np == 0, &x, &rev[np])) break;
            absorbed[np++] = tstep;
            cur = x;
        }
        /* else a squeeze-and-excitation scale on X, taken into the weights, or a Transpose
         * from channels last that makes X */
        int se = -1, sc = -1, xt = -1;
        if (np == 0 && (se = se_scale(g, p, uses, gone, s, t, &cur, &sc)) < 0 &&
            (xt = channels_last_input(g, p, uses, gone, s, &cur)) < 0)
            continue;
        graph_node *fn = ps->fused ? ps->own_node : NULL;
        if (!fn) {
            if (!(fn = calloc(1, sizeof *fn + (FUSED_INPUTS + 1) * sizeof(int)))) {
                st = onyx_oom("fused node");
                goto done;
            }
            *fn = *conv;
            fn->inputs = (int *)(fn + 1);
            fn->outputs = fn->inputs + FUSED_INPUTS;
            for (int i = 0; i < FUSED_INPUTS; i++)
                fn->inputs[i] = i < conv->n_inputs && i < 4 ? conv->inputs[i] : -1;
            fn->n_inputs = conv->n_inputs < 4 ? conv->n_inputs : 4;
            fn->n_outputs = 1;
            fn->outputs[0] = conv->outputs[0];
            plan_set_fused(ps, fn);
        }
        fn->inputs[0] = cur;
        if (se >= 0) {
            fn->inputs[4] = sc;
            fn->n_inputs = FUSED_INPUTS;
            chain->x_scale = true;
            plan_absorb_steps(p, gone, &se, 1);
            continue;
        }
        if (xt >= 0) {
            chain->x_channels_last = true;
            plan_absorb_steps(p, gone, &xt, 1);
            continue;
        }
        chain->n_pre = np;
        for (int i = 0; i < np; i++) chain->pre[i] = rev[np - 1 - i];
        plan_absorb_steps(p, gone, absorbed, np);
    }

    /* compact: absorbed steps leave, a fused conv takes its chain's last position */
    int k = 0;
    for (int pos = 0; pos < n; pos++) {
        int src = emit[pos];
        if (src == pos && gone[pos]) continue;
        placed[k] = chains[src];
        steps[k++] = p->steps[src];
    }
    memcpy(p->steps, steps, (size_t)k * sizeof *steps);
    p->n_steps = k;
    plan_set_producers(g, p);

    /* opaque layouts refused somewhere: between convs only, then the chains alone */
    bool opaque = sg->env.blocked_layouts;
    for (int level = opaque ? 2 : 0;; level--) {
        for (int s = 0; s < k; s++)
            placed[s].opaque_in0 = placed[s].opaque_out0 = placed[s].opaque_addend = false;
        if (level > 0) CHECK(mark_opaque(g, p, uses, placed, level == 2));
        if (level == 0) {
            CHECK(prepare_all(sg, p, placed));
            break;
        }
        if (prepare_all(sg, p, placed) == ONYX_OK) break;
        onyx_error_clear();
    }
    /* opaque tensors are stored channels last: the memory plan keeps them apart from plain ones
     * (no view into them, in place only over one of the same layout) */
    int opaque_values = 0;
    for (int s = 0; s < k; s++)
        if (placed[s].opaque_out0) {
            p->vals[step_node(g, &p->steps[s])->outputs[0]].channels_last = true;
            opaque_values++;
        }
    if (opaque_values)
        log_write(&sg->env.log, ONYX_LOG_VERBOSE, "fusion: %d tensors kept opaque (channels last)",
                  opaque_values);
done:
    free(uses);
    free(consumer);
    free(emit);
    free(gone);
    free(steps);
    free(chains);
    free(placed);
    return st;
}
