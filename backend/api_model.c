/* The public model API: loading, freeing and describing a model. An onyx_model is the core's
 * `model` (the public struct is never defined; pointers are cast at this boundary). */
#include <stdlib.h>

#include "core/loader.h"
#include "core/loader_wire.h"
#include "ops/schema.h"

static model *to_model(const onyx_model *m) { return (model *)(uintptr_t)m; }

onyx_status onyx_model_load_buffer(const void *bytes, size_t size, const char *base_dir,
                                   onyx_model **out) {
    if (!out) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "onyx_model_load_buffer: out is NULL");
    if (!bytes && size)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "onyx_model_load_buffer: bytes is NULL");
    model *m;
    TRY(model_load_bytes(&ops_registry, bytes, size, base_dir, &m));
    *out = (onyx_model *)m;
    return ONYX_OK;
}

onyx_status onyx_model_load_file(const char *path, onyx_model **out) {
    if (!out) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "onyx_model_load_file: out is NULL");
    void *bytes = NULL;
    char *dir = NULL;
    size_t size = 0;
    TRY(loader_read_file(path, &bytes, &size, &dir));
    model *m;
    onyx_status st = model_load_owned_bytes(&ops_registry, bytes, size, dir, &m);
    free(dir);
    if (st != ONYX_OK) return onyx_error_prefix(st, "%s", path);
    *out = (onyx_model *)m;
    return ONYX_OK;
}

void onyx_model_free(onyx_model *m) { model_release(to_model(m)); }

size_t onyx_model_input_count(const onyx_model *m) {
    return m ? (size_t)to_model(m)->main->n_inputs : 0;
}

size_t onyx_model_output_count(const onyx_model *m) {
    return m ? (size_t)to_model(m)->main->n_outputs : 0;
}

/* Rank-many NULLs for values that declare no symbolic names. */
static const char *const no_dim_params[ONYX_MAX_RANK];

/* For sequences and optionals dtype, rank and dims are those of the innermost tensor. */
static void describe(const graph_value *v, onyx_io_info *out) {
    const type_info *t = &v->type;
    out->name = v->name;
    out->kind = t->kind;
    while ((t->kind == ONYX_VALUE_SEQUENCE || t->kind == ONYX_VALUE_OPTIONAL) && t->elem)
        t = t->elem;
    bool tensor = t->kind == ONYX_VALUE_TENSOR;
    out->dtype = tensor ? t->dtype : ONYX_UNDEFINED;
    out->rank = tensor ? t->rank : -1;
    out->dims = t->dims;
    out->dim_params = (t == &v->type && v->dim_params) ? v->dim_params : no_dim_params;
}

static onyx_status io_info(const onyx_model *om, size_t index, bool input, onyx_io_info *out) {
    const char *fn = input ? "onyx_model_input" : "onyx_model_output";
    if (!om || !out) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "%s: NULL argument", fn);
    const graph *g = to_model(om)->main;
    size_t n = (size_t)(input ? g->n_inputs : g->n_outputs);
    if (index >= n)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "%s: index %zu out of range (model has %zu)",
                          fn, index, n);
    describe(&g->values[input ? g->inputs[index] : g->outputs[index]], out);
    return ONYX_OK;
}

onyx_status onyx_model_input(const onyx_model *m, size_t index, onyx_io_info *out) {
    return io_info(m, index, true, out);
}

onyx_status onyx_model_output(const onyx_model *m, size_t index, onyx_io_info *out) {
    return io_info(m, index, false, out);
}

int64_t onyx_model_ir_version(const onyx_model *m) { return m ? to_model(m)->ir_version : 0; }

int64_t onyx_model_opset(const onyx_model *m, const char *domain) {
    return model_opset(to_model(m), domain ? domain : "");
}
