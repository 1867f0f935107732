/* The opaque layout between convolutions (core/fuse.h: channels last, no padding; the name
 * "blocked" is from when it was oneDNN's channel-blocked one): which steps take it (convs, and
 * the KF_OPAQUE_LAYOUT kernels: channel Concat, pooling, global pooling, a per-channel Mul, the
 * quantized convs' 8-bit elementwise steps and channel QLinearConcat, a ChannelShuffle
 * (core/fuse_shuffle.c), Transposes that move channels last or first again, a QuantizeLinear
 * into a quantized conv)
 * and which tensors may then be stored so, on a device whose layouts allow it
 * (core/device_registry.h), as far as the steps' kernels say they take them (kernel.takes_chain,
 * asked before anything is prepared). */
#include "core/fuse_blocked.h"
#include "core/fuse_internal.h"

#include <stdlib.h>
#include <string.h>

#include "core/device_registry.h"
#include "core/log.h"
#include "core/plan_prepare.h"

/* How a step takes the opaque layout: a conv on X, its addend and Y, each on its own; the other
 * kinds (KF_OPAQUE_LAYOUT kernels) on all their tensors at once: a Concat along channels (joined
 * pixel by pixel), a MaxPool/AveragePool, a global pooling, and a Mul of a tensor by a
 * per-channel factor of the same rank ([N or 1, C, 1, ...]: a squeeze-and-excitation block's
 * scale) or by one of its own shape. Opaque tensors are stored channels last (core/fuse.h), so
 * a Transpose that puts the channels last reads an opaque X as the plain Y of the same bytes
 * (LAY_TO_LAST), and one that puts them first again makes an opaque Y of its plain X's bytes
 * (LAY_FROM_LAST): it moves nothing (ConvNeXt's blocks, between their depthwise conv and their
 * channel MLP). A QuantizeLinear of a plain float X may write an opaque 8-bit Y (LAY_QUANTIZE:
 * a quantized network's input, quantized into the layout its first conv reads). */
enum { LAY_NONE, LAY_CONV, LAY_ALL, LAY_TO_LAST, LAY_FROM_LAST, LAY_QUANTIZE };

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
    if (ms_op(n, "QLinearConcat")) return i >= 2 && (i - 2) % 3 == 0;
    if (ms_op(n, "QLinearGlobalAveragePool") || qunary_op(n)) return i == 0;
    return true;
}

/* The first input that carries the step's layout: a QLinearConcat's first tensor (after Y_scale
 * and Y_zero_point), else input 0. */
static int first_layout_input(const graph_node *n) { return ms_op(n, "QLinearConcat") ? 2 : 0; }

static int layout_kind(const graph *g, const plan *p, const plan_step *ps, bool all_kinds) {
    const graph_node *nd = step_node(g, ps);
    const device_layouts *l = device_layouts_of(ps->k->device);
    if (l->opaque_max_rank == 0) return LAY_NONE; /* the device keeps every tensor plain */
    if (fuse_conv_step(g, ps)) return LAY_CONV;
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
    if (fuse_is_op(nd, "QuantizeLinear"))
        return eight_bit && nd->inputs[0] >= 0 && opaque_value(l, p, nd->inputs[0], false) &&
                       p->vals[nd->inputs[0]].type.rank == rank
                   ? LAY_QUANTIZE
                   : LAY_NONE;
    /* 8-bit tensors: pooling, activations, and the elementwise ops of one shape or by a
     * per-channel factor (a squeeze-and-excitation scale), the kinds 8-bit kernels take */
    if (qbinary_op(nd)) {
        if (nd->n_inputs < 8 || nd->inputs[0] < 0 || nd->inputs[3] < 0) return LAY_NONE;
        const type_info *a = &p->vals[nd->inputs[0]].type, *b = &p->vals[nd->inputs[3]].type;
        bool a_full = fuse_same_type(a, out), b_full = fuse_same_type(b, out);
        return (a_full && (b_full || fuse_channel_factor(b, out))) ||
                       (b_full && fuse_channel_factor(a, out))
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
               : fuse_channels_perm(p, nd, true)          ? LAY_TO_LAST
               : fuse_channels_perm(p, nd, false)         ? LAY_FROM_LAST
                                                     : LAY_NONE;
    if (ms_op(nd, "QLinearConcat")) { /* joined pixel by pixel along the channels */
        int64_t axis = attr_int(nd, "axis", 0);
        if (!eight_bit || (axis != 1 && axis != 1 - rank) || nd->n_inputs < 5 ||
            (nd->n_inputs - 2) % 3 != 0)
            return LAY_NONE;
        for (int i = 2; i < nd->n_inputs; i += 3)
            if (nd->inputs[i] < 0 || !opaque_value(l, p, nd->inputs[i], true) ||
                p->vals[nd->inputs[i]].type.rank != rank)
                return LAY_NONE;
        return LAY_ALL;
    }
    if (!strcmp(nd->domain, "ai.onyx") && !strcmp(nd->op_type, "ChannelShuffle"))
        return nd->n_inputs == 1 && nd->inputs[0] >= 0 &&
                       !eight_bit && opaque_value(l, p, nd->inputs[0], false) &&
                       p->vals[nd->inputs[0]].type.rank == rank
                   ? LAY_ALL
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
        if ((a_full && (b_full || fuse_channel_factor(b, out))) ||
            (b_full && fuse_channel_factor(a, out)))
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

/* Whether input i of a step of layout kind `kind` may be opaque (a conv's X not read through a
 * Transpose from channels last; with pre-ops it may: they run pixel by pixel). */
static bool takes_opaque(int kind, const graph_node *nd, const fuse_chain *c, int i) {
    return (kind == LAY_ALL && layout_input(nd, i)) || (kind == LAY_TO_LAST && i == 0) ||
           (kind == LAY_CONV &&
            ((i == 0 && !c->x_channels_last) || (i == 3 && nd->n_inputs >= 4)));
}

static bool has_opaque(const fuse_chain *c) {
    return c->opaque_in0 || c->opaque_out0 || c->opaque_addend;
}

static void clear_opaque(const plan *p, fuse_chain *chains) {
    for (int s = 0; s < p->n_steps; s++)
        chains[s].opaque_in0 = chains[s].opaque_out0 = chains[s].opaque_addend = false;
}

/* Marks the outputs of such steps that only such steps read opaque, on both ends; a Concat or
 * pooling step only when all of its tensors are (all_kinds false: between convs only); the
 * other steps' tensors plain. */
static onyx_status mark_opaque(const graph *g, const plan *p, const int *uses, fuse_chain *chains,
                               bool all_kinds) {
    clear_opaque(p, chains);
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
            int x = nd->inputs[first_layout_input(nd)];
            if (x >= 0 && cand[x] && fuse_opaque_is_plain(nd, &p->vals[nd->outputs[0]].type))
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
        int x = nd->inputs[first_layout_input(nd)];
        chains[s].opaque_in0 = x >= 0 && cand[x] && !chains[s].x_channels_last;
        chains[s].opaque_addend = kind[s] == LAY_CONV && nd->n_inputs >= 4 && nd->inputs[3] >= 0 &&
                                  cand[nd->inputs[3]];
    }
    free(kind);
    free(cand);
    return ONYX_OK;
}

/* The first step whose kernel does not take the opaque tensors its chain marks (its query, with
 * its whole chain; a kernel without one takes none), or -1. */
static int layout_refused(const subgraph *sg, const plan *p, const fuse_chain *chains) {
    for (int s = 0; s < p->n_steps; s++) {
        const plan_step *ps = &p->steps[s];
        if (!has_opaque(&chains[s])) continue;
        if (!ps->k->takes_chain ||
            !plan_kernel_takes_chain(sg, p, ps->k, step_node(sg->g, ps), ps->params, &chains[s]))
            return s;
    }
    return -1;
}

onyx_status fuse_keep_opaque(const subgraph *sg, const plan *p, const int *uses,
                             fuse_chain *chains) {
    static const char *const fallback[] = {"no tensor kept opaque",
                                           "opaque tensors between convolutions only"};
    for (int all_kinds = 1; all_kinds >= 0; all_kinds--) {
        TRY(mark_opaque(sg->g, p, uses, chains, all_kinds));
        int s = layout_refused(sg, p, chains);
        if (s < 0) return ONYX_OK;
        char label[256];
        log_write(&sg->env.log, ONYX_LOG_VERBOSE, "fusion: %s takes no opaque layout here: %s",
                  node_label(step_node(sg->g, &p->steps[s]), label, sizeof label),
                  fallback[all_kinds]);
    }
    clear_opaque(p, chains);
    return ONYX_OK;
}
