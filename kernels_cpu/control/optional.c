/* Optional kernels: wrapping a value in an optional, asking whether one holds a value and
 * taking the value out. */
#include <stdlib.h>

#include "kernels_cpu/control/util.h"
#include "kernels_cpu/cpu_kernels.h"

onyx_status cpu_optional_run(const kernel_call *c) {
    const onyx_value *in = c->n_in > 0 ? c->in[0] : NULL;
    const graph_attr *a = node_attr(c->node, "type");
    onyx_value *out = c->out[0];
    if (!in) {
        if (!a || !a->tp)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "an Optional without input needs the type "
                              "attribute");
        return value_make_optional(out, a->tp);
    }
    if (in->kind != ONYX_VALUE_TENSOR && in->kind != ONYX_VALUE_SEQUENCE)
        return onyx_error(ONYX_ERR_SHAPE, "input 0 must be a tensor or a sequence, got a %s",
                          cpu_ctl_kind_name(in));
    onyx_status st = ONYX_OK;
    type_info elem;
    type_init(&elem);
    onyx_value *item = value_new();
    if (!item) return onyx_oom("optional element");
    CHECK(type_of_value(&elem, in));
    CHECK(value_copy(item, in));
    CHECK(value_make_optional(out, a && a->tp ? a->tp : &elem));
    out->opt = item;
    item = NULL;
done:
    type_release(&elem);
    if (item) {
        value_clear(item);
        free(item);
    }
    return st;
}

onyx_status cpu_optional_has_element_run(const kernel_call *c) {
    const onyx_value *in = c->n_in > 0 ? c->in[0] : NULL;
    bool has;
    if (!in) {
        has = false;
    } else if (in->kind == ONYX_VALUE_OPTIONAL) {
        has = in->opt != NULL;
    } else if (c->node->version >= 18 &&
               (in->kind == ONYX_VALUE_TENSOR || in->kind == ONYX_VALUE_SEQUENCE)) {
        has = true;
    } else {
        return onyx_error(ONYX_ERR_SHAPE, "input 0 must be an optional%s, got a %s",
                          c->node->version >= 18 ? ", a tensor or a sequence" : "",
                          cpu_ctl_kind_name(in));
    }
    TRY(value_alloc_tensor(c->out[0], ONYX_BOOL, 0, NULL));
    *(bool *)c->out[0]->t.data = has;
    return ONYX_OK;
}

onyx_status cpu_optional_get_element_run(const kernel_call *c) {
    const onyx_value *in = c->in[0];
    if (in && in->kind == ONYX_VALUE_OPTIONAL) {
        if (!in->opt) return onyx_error(ONYX_ERR_RUNTIME, "the optional input is empty");
        return value_copy(c->out[0], in->opt);
    }
    if (in && c->node->version >= 18 &&
        (in->kind == ONYX_VALUE_TENSOR || in->kind == ONYX_VALUE_SEQUENCE))
        return value_copy(c->out[0], in);
    return onyx_error(ONYX_ERR_SHAPE, "input 0 must be an optional%s, got a %s",
                      c->node->version >= 18 ? ", a tensor or a sequence" : "",
                      cpu_ctl_kind_name(in));
}
