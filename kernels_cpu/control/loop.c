/* Loop: runs the body, prepared once, while the trip count and condition allow. Carried values
 * alternate between two reused output arrays (the previous iteration's outputs are the next
 * one's inputs); scan outputs are appended to growing tensors and handed out at the end. */
#include <stdlib.h>
#include <string.h>

#include "core/exec_run.h"
#include "kernels_cpu/control/util.h"
#include "kernels_cpu/cpu_kernels.h"

/* First capacity of a scan output when the trip count does not bound it. */
#define SCAN_FIRST_CAP 16
/* Largest scan output (bytes) reserved up front from a known trip count. */
#define SCAN_RESERVE_MAX ((int64_t)64 << 20)

typedef struct scan_acc {
    tensor t;        /* dims[0] is the capacity in iterations */
    int64_t count;   /* iterations appended */
    int64_t item;    /* elements per iteration */
} scan_acc;

/* Prepared, shared by concurrent runs: read only at run time. */
typedef struct loop_state {
    subgraph *body;
    int n_carried, n_scan;
    const type_info **scan_decl; /* the body's declared scan output types (for 0 iterations) */
    onyx_dtype *scan_fallback;   /* element type for zero iterations when the body does not say */
    bool *wrap;                  /* carried i: the body takes an optional but may return a plain value */
} loop_state;

/* One run context's working values (the body's inputs and outputs, the scan accumulators). */
typedef struct loop_fork {
    const loop_state *s;
    onyx_value *iter, *cond;     /* body inputs 0 and 1, rewritten each iteration */
    const onyx_value **body_in;  /* 2 + n_carried */
    onyx_value **outs[2];        /* two sets of 1 + n_carried + n_scan body outputs */
    scan_acc *acc;
} loop_fork;

static void drop_acc(scan_acc *a) {
    tensor_release(&a->t);
    memset(&a->t, 0, sizeof a->t);
    a->count = a->item = 0;
}

void cpu_loop_release(void *state) {
    loop_state *s = state;
    if (!s) return;
    subgraph_free(s->body);
    free(s->scan_decl);
    free(s->scan_fallback);
    free(s->wrap);
    free(s);
}

void cpu_loop_unfork(void *fork) {
    loop_fork *f = fork;
    if (!f) return;
    value_clear(f->iter);
    free(f->iter);
    value_clear(f->cond);
    free(f->cond);
    int n_outs = 1 + f->s->n_carried + f->s->n_scan;
    for (int k = 0; k < 2; k++) {
        if (!f->outs[k]) continue;
        for (int i = 0; i < n_outs; i++) {
            value_clear(f->outs[k][i]);
            free(f->outs[k][i]);
        }
        free(f->outs[k]);
    }
    if (f->acc)
        for (int j = 0; j < f->s->n_scan; j++) drop_acc(&f->acc[j]);
    free(f->acc);
    free(f->body_in);
    free(f);
}

onyx_status cpu_loop_fork(const void *state, void **out) {
    const loop_state *s = state;
    onyx_status st = ONYX_OK;
    loop_fork *f = calloc(1, sizeof *f);
    if (!f) return onyx_oom("Loop working state");
    f->s = s;
    int n_outs = 1 + s->n_carried + s->n_scan;
    f->body_in = calloc((size_t)(2 + s->n_carried), sizeof *f->body_in);
    f->acc = calloc((size_t)s->n_scan + 1, sizeof *f->acc);
    f->iter = value_new();
    f->cond = value_new();
    for (int k = 0; k < 2; k++) f->outs[k] = calloc((size_t)n_outs, sizeof *f->outs[k]);
    if (!f->body_in || !f->acc || !f->iter || !f->cond || !f->outs[0] || !f->outs[1]) {
        st = onyx_oom("Loop working state");
        goto done;
    }
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < n_outs; i++)
            if (!(f->outs[k][i] = value_new())) {
                st = onyx_oom("Loop working state");
                goto done;
            }
    CHECK(value_alloc_tensor(f->iter, ONYX_INT64, 0, NULL));
    CHECK(value_alloc_tensor(f->cond, ONYX_BOOL, 0, NULL));
    f->body_in[0] = f->iter;
    f->body_in[1] = f->cond;
    *out = f;
    f = NULL;
done:
    cpu_loop_unfork(f);
    return st;
}

onyx_status cpu_loop_prepare(const kernel_prep *p, void **state) {
    onyx_status st = ONYX_OK;
    const graph *body = attr_graph(p->node, "body");
    if (!body) return onyx_error(ONYX_ERR_INVALID_MODEL, "graph attribute 'body' is missing");
    int n_carried = p->n_in - 2, n_scan = p->n_out - n_carried;
    if (n_carried < 0 || n_scan < 0 || body->n_inputs != 2 + n_carried ||
        body->n_outputs != 1 + n_carried + n_scan)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "body has %d inputs and %d outputs, expected "
                          "%d and %d for %d inputs and %d outputs of the node", body->n_inputs,
                          body->n_outputs, 2 + n_carried, 1 + p->n_out, p->n_in, p->n_out);
    loop_state *s = calloc(1, sizeof *s);
    if (!s) return onyx_oom("Loop state");
    s->n_carried = n_carried;
    s->n_scan = n_scan;
    s->scan_decl = calloc((size_t)n_scan + 1, sizeof *s->scan_decl);
    s->scan_fallback = calloc((size_t)n_scan + 1, sizeof *s->scan_fallback);
    s->wrap = calloc((size_t)n_carried + 1, sizeof *s->wrap);
    if (!s->wrap || !s->scan_decl || !s->scan_fallback) {
        st = onyx_oom("Loop state");
        goto done;
    }
    for (int i = 0; i < n_carried; i++)
        s->wrap[i] = body->values[body->inputs[2 + i]].type.kind == ONYX_VALUE_OPTIONAL;
    for (int j = 0; j < n_scan; j++) {
        s->scan_decl[j] = &body->values[body->outputs[1 + n_carried + j]].type;
        s->scan_fallback[j] = ONYX_UNDEFINED;
        /* what the node's own inference says about the element type, when the body does not */
        if (s->scan_decl[j]->kind != ONYX_VALUE_TENSOR && p->out_type &&
            p->out_type[n_carried + j].kind == ONYX_VALUE_TENSOR)
            s->scan_fallback[j] = p->out_type[n_carried + j].dtype;
    }
    CHECK(subgraph_create(body, p->env, &s->body));
    *state = s;
    s = NULL;
done:
    cpu_loop_release(s);
    return st;
}

/* Makes `v` an optional holding what it held. */
static onyx_status wrap_optional(onyx_value *v) {
    type_info t;
    TRY(type_of_value(&t, v));
    onyx_value *item = value_new();
    onyx_status st = item ? ONYX_OK : onyx_oom("optional element");
    if (st == ONYX_OK) {
        value_move(item, v);
        st = value_make_optional(v, &t);
    }
    if (st == ONYX_OK) {
        v->opt = item;
    } else if (item) {
        value_move(v, item);
        free(item);
    }
    type_release(&t);
    return st;
}

/* Appends one iteration's scan value, growing the tensor by doubling. */
static onyx_status acc_push(scan_acc *a, const onyx_value *v, int j, int64_t max_trip) {
    if (!v || v->kind != ONYX_VALUE_TENSOR)
        return onyx_error(ONYX_ERR_SHAPE, "scan output %d of the body is a %s, expected a tensor",
                          j, cpu_ctl_kind_name(v));
    const tensor *x = &v->t;
    if (x->rank + 1 > ONYX_MAX_RANK)
        return onyx_error(ONYX_ERR_SHAPE, "scan output %d has rank %d, too high to stack", j,
                          x->rank);
    if (a->count > 0) {
        if (x->dtype != a->t.dtype || !shape_equal(x->rank, x->dims, a->t.rank - 1, a->t.dims + 1)) {
            char got[128], want[128];
            return onyx_error(ONYX_ERR_SHAPE, "scan output %d is %s %s in iteration %lld, but %s "
                              "%s before", j, onyx_dtype_name(x->dtype),
                              shape_str(x->rank, x->dims, got, sizeof got), (long long)a->count,
                              onyx_dtype_name(a->t.dtype),
                              shape_str(a->t.rank - 1, a->t.dims + 1, want, sizeof want));
        }
    }
    int64_t cap = a->count > 0 ? a->t.dims[0] : 0;
    if (a->count == cap) {
        int64_t ncap = cap ? cap * 2 : SCAN_FIRST_CAP;
        size_t bytes;
        if (cap == 0 && max_trip > 0 && max_trip < INT64_MAX / (x->numel ? x->numel : 1) &&
            dtype_storage_size(x->dtype, max_trip * x->numel, &bytes) &&
            (int64_t)bytes <= SCAN_RESERVE_MAX)
            ncap = max_trip;
        int64_t dims[ONYX_MAX_RANK];
        dims[0] = ncap;
        memcpy(dims + 1, x->dims, sizeof(int64_t) * (size_t)x->rank);
        tensor grown;
        memset(&grown, 0, sizeof grown);
        TRY(tensor_alloc(&grown, x->dtype, x->rank + 1, dims));
        onyx_status st = ONYX_OK;
        if (a->count > 0) st = cpu_ctl_copy_blocks(&grown, 0, 0, &a->t, 0, 0, 1, a->count * a->item);
        if (st != ONYX_OK) {
            tensor_release(&grown);
            return st;
        }
        tensor_release(&a->t);
        a->t = grown;
        a->item = x->numel;
    }
    TRY(cpu_ctl_copy_blocks(&a->t, a->count * a->item, 0, x, 0, 0, 1, a->item));
    a->count++;
    return ONYX_OK;
}

/* Hands a scan output out: the accumulated tensor itself when it is full, else an exact copy;
 * after zero iterations an empty tensor shaped like the body's declared output. */
static onyx_status acc_finish(scan_acc *a, const type_info *decl, onyx_dtype fallback,
                              onyx_value *out) {
    if (a->count == 0) {
        int64_t dims[ONYX_MAX_RANK] = {0};
        int r = 1;
        onyx_dtype dt = fallback;
        if (decl->kind == ONYX_VALUE_TENSOR) {
            if (decl->dtype != ONYX_UNDEFINED) dt = decl->dtype;
            if (decl->rank >= 0 && decl->rank < ONYX_MAX_RANK) {
                r = decl->rank + 1;
                for (int k = 0; k < decl->rank; k++) dims[k + 1] = decl->dims[k] > 0 ? decl->dims[k] : 0;
            }
        }
        if (dt == ONYX_UNDEFINED) dt = ONYX_FLOAT; /* nothing says otherwise; it holds nothing */
        return value_alloc_tensor(out, dt, r, dims);
    }
    if (a->count == a->t.dims[0]) {
        value_clear(out);
        out->kind = ONYX_VALUE_TENSOR;
        out->t = a->t;
        memset(&a->t, 0, sizeof a->t);
        return ONYX_OK;
    }
    int64_t dims[ONYX_MAX_RANK];
    memcpy(dims, a->t.dims, sizeof(int64_t) * (size_t)a->t.rank);
    dims[0] = a->count;
    TRY(value_alloc_tensor(out, a->t.dtype, a->t.rank, dims));
    return cpu_ctl_copy_blocks(&out->t, 0, 0, &a->t, 0, 0, 1, a->count * a->item);
}

onyx_status cpu_loop_run(const kernel_call *c) {
    loop_fork *f = c->state;
    const loop_state *s = f->s;
    int n_carried = s->n_carried, n_scan = s->n_scan, n_outs = 1 + n_carried + n_scan;
    int64_t max_trip = INT64_MAX;
    bool cond = true, has_cond = c->n_in > 1 && c->in[1];
    onyx_status st = ONYX_OK;
    if (c->in[0]) TRY(cpu_ctl_read_index(c->in[0], "M (trip count)", &max_trip));
    if (has_cond) TRY(cpu_ctl_read_bool(c->in[1], "cond", &cond));
    for (int i = 0; i < n_carried; i++) {
        if (!c->in[2 + i])
            return onyx_error(ONYX_ERR_INVALID_MODEL, "carried input %d is missing", 2 + i);
        f->body_in[2 + i] = c->in[2 + i];
    }
    int64_t it = 0;
    int cur = 0;
    for (; it < max_trip && cond; it++) {
        /* the caller may stop the run or cap its iterations: it + 1 iterations once this runs */
        CHECK(kernel_check_run(c, it + 1));
        onyx_value **outs = f->outs[cur];
        /* the previous outputs become inputs here, not when produced, so that the last ones
         * are handed out as the body made them */
        for (int i = 0; it > 0 && i < n_carried; i++) {
            onyx_value *prev = f->outs[cur ^ 1][1 + i];
            if (s->wrap[i] && prev->kind != ONYX_VALUE_OPTIONAL) CHECK(wrap_optional(prev));
            f->body_in[2 + i] = prev;
        }
        *(int64_t *)f->iter->t.data = it;
        *(bool *)f->cond->t.data = cond;
        for (int k = 0; k < n_outs; k++) value_clear(outs[k]);
        st = subgraph_run(s->body, c->frame, f->body_in, outs);
        if (st != ONYX_OK) {
            onyx_error_prefix(st, "iteration %lld", (long long)it);
            goto done;
        }
        bool next;
        CHECK(cpu_ctl_read_bool(outs[0], "the body's condition output", &next));
        /* with a trip count and no condition input the body's condition is ignored (a for loop) */
        if (has_cond || max_trip == INT64_MAX) cond = next;
        for (int j = 0; j < n_scan; j++)
            CHECK(acc_push(&f->acc[j], outs[1 + n_carried + j], j, max_trip));
        cur ^= 1;
    }
    for (int i = 0; i < n_carried; i++) {
        if (!c->out[i]) continue;
        if (it == 0) CHECK(value_copy(c->out[i], c->in[2 + i]));
        else value_move(c->out[i], f->outs[cur ^ 1][1 + i]);
    }
    for (int j = 0; j < n_scan; j++)
        if (c->out[n_carried + j])
            CHECK(acc_finish(&f->acc[j], s->scan_decl[j], s->scan_fallback[j],
                             c->out[n_carried + j]));
done:
    /* nothing is kept between runs */
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < n_outs; i++) value_clear(f->outs[k][i]);
    for (int j = 0; j < n_scan; j++) drop_acc(&f->acc[j]);
    return st;
}
