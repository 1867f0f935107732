/* Type helpers shared by the control-flow, sequence and optional schemas (see control_infer.h). */
#include "ops/control/infer.h"

/* Forgets every dim and rank (also of nested element types); keeps kinds and dtypes. */
static void forget_shape(type_info *t) {
    if (!t) return;
    if (t->kind == ONYX_VALUE_TENSOR) t->rank = -1;
    forget_shape(t->elem);
}

onyx_status infer_ctl_container(type_info *dst, onyx_value_kind kind, const type_info *elem) {
    /* type_copy allocates the nested element the way type_release frees it */
    type_info tmp;
    type_init(&tmp);
    tmp.kind = kind;
    tmp.elem = (type_info *)elem;
    type_release(dst);
    type_init(dst);
    return type_copy(dst, &tmp);
}

static bool known(const type_info *t) { return t && t->kind != ONYX_VALUE_NONE; }

/* Narrows d (already a copy of one side) to what it shares with b. */
static onyx_status join_into(type_info *d, const type_info *b) {
    if (!known(b)) {
        forget_shape(d);
        return ONYX_OK;
    }
    if (d->kind != b->kind) {
        type_release(d);
        type_init(d);
        return ONYX_OK;
    }
    if (d->kind == ONYX_VALUE_TENSOR) {
        if (d->dtype != b->dtype) d->dtype = ONYX_UNDEFINED;
        if (d->rank != b->rank) {
            d->rank = -1;
        } else {
            for (int k = 0; k < d->rank; k++)
                if (d->dims[k] != b->dims[k]) d->dims[k] = -1;
        }
        return ONYX_OK;
    }
    if (d->elem) return join_into(d->elem, b->elem);
    if (b->elem) {
        /* d's element is unknown: take b's kinds without its shape */
        TRY(infer_ctl_container(d, d->kind, b->elem));
        forget_shape(d->elem);
    }
    return ONYX_OK;
}

onyx_status infer_ctl_join(type_info *dst, const type_info *a, const type_info *b) {
    type_release(dst);
    type_init(dst);
    if (!known(a)) {
        const type_info *t = a;
        a = b;
        b = t;
    }
    if (!known(a)) return ONYX_OK;
    TRY(type_copy(dst, a));
    return join_into(dst, b);
}

onyx_status infer_ctl_body(const graph_node *n, const char *name, const graph **out) {
    const graph *g = attr_graph(n, name);
    if (!g) return onyx_error(ONYX_ERR_INVALID_MODEL, "graph attribute '%s' is missing", name);
    *out = g;
    return ONYX_OK;
}

onyx_status infer_ctl_need_seq(infer_ctx *c, int i, const type_info **elem) {
    if (i >= c->n_in || !c->in[i])
        return onyx_error(ONYX_ERR_INVALID_MODEL, "input %d: expected a sequence, got none", i);
    const type_info *t = c->in[i];
    if (t->kind != ONYX_VALUE_SEQUENCE && t->kind != ONYX_VALUE_NONE)
        return onyx_error(ONYX_ERR_SHAPE, "input %d: expected a sequence, got a %s", i,
                          t->kind == ONYX_VALUE_TENSOR ? "tensor" : "non-sequence value");
    *elem = t->kind == ONYX_VALUE_SEQUENCE && t->elem && t->elem->kind != ONYX_VALUE_NONE
                ? t->elem
                : NULL;
    return ONYX_OK;
}

onyx_status infer_ctl_position(infer_ctx *c, int i) {
    if (i >= c->n_in || !c->in[i] || c->in[i]->kind == ONYX_VALUE_NONE) return ONYX_OK;
    TRY(infer_need_tensor(c, i));
    if (c->in[i]->dtype != ONYX_UNDEFINED)
        TRY(infer_dtype_in(c, i, DT_BIT(ONYX_INT32) | DT_BIT(ONYX_INT64)));
    for (int k = 0; k < c->in[i]->rank; k++)
        if (c->in[i]->dims[k] > 1)
            return onyx_error(ONYX_ERR_SHAPE, "input %d (position) must be a scalar, got dim %d of "
                              "%lld", i, k, (long long)c->in[i]->dims[k]);
    return ONYX_OK;
}
