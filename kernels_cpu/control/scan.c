/* Scan and SequenceMap: run a body, prepared once, per slice of the scan inputs (per element of
 * the input sequences) and stack (collect) its outputs. Scan v8's batch axis runs the v9 core
 * once per batch entry. */
#include <stdlib.h>
#include <string.h>

#include "core/exec_run.h"
#include "kernels_cpu/control/util.h"
#include "kernels_cpu/cpu_kernels.h"

/* The prepared state: the body and the attributes, shared by concurrent runs. A fork is a copy of
 * it that shares those and owns the working members below (fork_work). */
typedef struct scan_state {
    subgraph *body;
    bool v8;
    int n_state, n_in, n_out;   /* states; scan inputs; scan outputs */
    int *in_axis, *out_axis;    /* v9: as given (normalized at run time) */
    bool *in_rev, *out_rev;
    const type_info **out_decl; /* body's declared scan output types */
    onyx_dtype *out_fallback;
    /* working members, NULL in the prepared state: each fork owns its own, sized here so that
     * runs only fill them */
    const onyx_value **body_in; /* n_state + n_in */
    onyx_value **outs[2];       /* two alternating sets of n_state + n_out body outputs */
    onyx_value **slices;        /* n_in: the current slice of each scan input */
    onyx_value **res;           /* v8: n_state + n_out results of one batch entry */
    onyx_value **views;         /* v8: n_state views of one batch entry's states */
    const tensor **x;           /* n_in scan inputs */
    int *in_axis_run;           /* n_in scan axes, normalized */
    int *out_axis_run;          /* n_out output axes, normalized */
    tensor *xb;                 /* v8: n_in views of one batch entry */
    const tensor **xbp;
    onyx_value **res_ptr;       /* v9: n_state + n_out results (node outputs or scratch) */
    onyx_value **scratch;       /* v9: results of outputs the node omits */
} scan_state;

static void free_values(onyx_value **v, int n) {
    if (!v) return;
    for (int i = 0; i < n; i++) {
        value_clear(v[i]);
        free(v[i]);
    }
    free(v);
}

static onyx_status new_values(onyx_value ***out, int n) {
    onyx_value **v = calloc((size_t)n + 1, sizeof *v);
    if (!v) return onyx_oom("Scan state");
    for (int i = 0; i < n; i++)
        if (!(v[i] = value_new())) {
            free_values(v, i);
            return onyx_oom("Scan state");
        }
    *out = v;
    return ONYX_OK;
}

static void free_work(scan_state *s) {
    free(s->body_in);
    for (int k = 0; k < 2; k++) free_values(s->outs[k], s->n_state + s->n_out);
    free_values(s->slices, s->n_in);
    free_values(s->res, s->n_state + s->n_out);
    free_values(s->views, s->n_state);
    free(s->x);
    free(s->in_axis_run);
    free(s->out_axis_run);
    free(s->xb);
    free(s->xbp);
    free(s->res_ptr);
    free_values(s->scratch, s->n_state + s->n_out);
}

void cpu_scan_release(void *state) {
    scan_state *s = state;
    if (!s) return;
    free_work(s);
    subgraph_free(s->body);
    free(s->in_axis);
    free(s->out_axis);
    free(s->in_rev);
    free(s->out_rev);
    free(s->out_decl);
    free(s->out_fallback);
    free(s);
}

void cpu_scan_unfork(void *fork) {
    scan_state *f = fork;
    if (!f) return;
    free_work(f); /* the rest belongs to the prepared state */
    free(f);
}

onyx_status cpu_scan_fork(const void *state, void **out) {
    const scan_state *s = state;
    onyx_status st = ONYX_OK;
    scan_state *f = malloc(sizeof *f);
    if (!f) return onyx_oom("Scan working state");
    *f = *s;
    int n_state = s->n_state, n_in = s->n_in, n_out = s->n_out;
    f->body_in = calloc((size_t)(n_state + n_in) + 1, sizeof *f->body_in);
    f->x = calloc((size_t)n_in + 1, sizeof *f->x);
    f->in_axis_run = calloc((size_t)n_in + 1, sizeof *f->in_axis_run);
    f->out_axis_run = calloc((size_t)n_out + 1, sizeof *f->out_axis_run);
    f->xb = calloc((size_t)n_in + 1, sizeof *f->xb);
    f->xbp = calloc((size_t)n_in + 1, sizeof *f->xbp);
    f->res_ptr = calloc((size_t)(n_state + n_out) + 1, sizeof *f->res_ptr);
    f->outs[0] = f->outs[1] = f->slices = f->res = f->views = f->scratch = NULL;
    if (!f->body_in || !f->x || !f->in_axis_run || !f->out_axis_run || !f->xb || !f->xbp ||
        !f->res_ptr) {
        st = onyx_oom("Scan working state");
        goto done;
    }
    for (int k = 0; k < 2; k++) CHECK(new_values(&f->outs[k], n_state + n_out));
    CHECK(new_values(&f->slices, n_in));
    CHECK(new_values(&f->scratch, n_state + n_out));
    if (s->v8) {
        CHECK(new_values(&f->res, n_state + n_out));
        CHECK(new_values(&f->views, n_state));
    }
    *out = f;
    f = NULL;
done:
    cpu_scan_unfork(f);
    return st;
}

/* Copies an INTS attribute of `n` entries (default `dflt` each) into out. */
static onyx_status read_ints(const graph_node *node, const char *name, int n, int dflt, int *out) {
    const int64_t *v;
    size_t count = attr_ints(node, name, &v);
    if (node_attr(node, name) && (int64_t)count != n)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute %s has %zu entries, expected %d",
                          name, count, n);
    for (int i = 0; i < n; i++) {
        int64_t x = count ? v[i] : dflt;
        if (x < -ONYX_MAX_RANK || x > ONYX_MAX_RANK)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute %s[%d] = %lld is out of range",
                              name, i, (long long)x);
        out[i] = (int)x;
    }
    return ONYX_OK;
}

static onyx_status read_dirs(const graph_node *node, const char *name, int n, bool *out) {
    int *tmp = calloc((size_t)n + 1, sizeof *tmp);
    if (!tmp) return onyx_oom("Scan state");
    onyx_status st = read_ints(node, name, n, 0, tmp);
    for (int i = 0; st == ONYX_OK && i < n; i++) {
        if (tmp[i] != 0 && tmp[i] != 1)
            st = onyx_error(ONYX_ERR_INVALID_MODEL, "attribute %s[%d] = %d, expected 0 or 1", name,
                            i, tmp[i]);
        out[i] = tmp[i] == 1;
    }
    free(tmp);
    return st;
}

onyx_status cpu_scan_prepare(const kernel_prep *p, void **state) {
    onyx_status st = ONYX_OK;
    const graph *body = attr_graph(p->node, "body");
    if (!body) return onyx_error(ONYX_ERR_INVALID_MODEL, "graph attribute 'body' is missing");
    bool v8 = p->node->version < 9;
    int first = v8 ? 1 : 0;
    int64_t n_in = attr_int(p->node, "num_scan_inputs", -1);
    if (n_in < 1 || n_in > p->n_in - first)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "num_scan_inputs is %lld, expected 1..%d",
                          (long long)n_in, p->n_in - first);
    int n_state = p->n_in - first - (int)n_in, n_out = p->n_out - n_state;
    if (n_out < 0 || body->n_inputs != n_state + n_in || body->n_outputs != p->n_out)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "body has %d inputs and %d outputs, expected "
                          "%lld and %d", body->n_inputs, body->n_outputs,
                          (long long)(n_state + n_in), p->n_out);
    scan_state *s = calloc(1, sizeof *s);
    if (!s) return onyx_oom("Scan state");
    s->v8 = v8;
    s->n_state = n_state;
    s->n_in = (int)n_in;
    s->n_out = n_out;
    s->in_axis = calloc((size_t)n_in + 1, sizeof *s->in_axis);
    s->out_axis = calloc((size_t)n_out + 1, sizeof *s->out_axis);
    s->in_rev = calloc((size_t)n_in + 1, sizeof *s->in_rev);
    s->out_rev = calloc((size_t)n_out + 1, sizeof *s->out_rev);
    s->out_decl = calloc((size_t)n_out + 1, sizeof *s->out_decl);
    s->out_fallback = calloc((size_t)n_out + 1, sizeof *s->out_fallback);
    if (!s->in_axis || !s->out_axis || !s->in_rev || !s->out_rev || !s->out_decl ||
        !s->out_fallback) {
        st = onyx_oom("Scan state");
        goto done;
    }
    if (v8) {
        CHECK(read_dirs(p->node, "directions", s->n_in, s->in_rev));
    } else {
        CHECK(read_ints(p->node, "scan_input_axes", s->n_in, 0, s->in_axis));
        CHECK(read_ints(p->node, "scan_output_axes", n_out, 0, s->out_axis));
        CHECK(read_dirs(p->node, "scan_input_directions", s->n_in, s->in_rev));
        CHECK(read_dirs(p->node, "scan_output_directions", n_out, s->out_rev));
    }
    for (int j = 0; j < n_out; j++) {
        s->out_decl[j] = &body->values[body->outputs[n_state + j]].type;
        s->out_fallback[j] = ONYX_FLOAT;
        if (p->out_type && p->out_type[n_state + j].kind == ONYX_VALUE_TENSOR &&
            p->out_type[n_state + j].dtype != ONYX_UNDEFINED)
            s->out_fallback[j] = p->out_type[n_state + j].dtype;
    }
    CHECK(subgraph_create(body, p->env, &s->body));
    *state = s;
    s = NULL;
done:
    cpu_scan_release(s);
    return st;
}

/* The stacked scan output j for zero iterations: empty, shaped like the body's declaration. */
static onyx_status empty_scan_out(const scan_state *s, int j, onyx_value *out) {
    const type_info *d = s->out_decl[j];
    int64_t dims[ONYX_MAX_RANK] = {0};
    int r = 1;
    onyx_dtype dt = s->out_fallback[j];
    if (d->kind == ONYX_VALUE_TENSOR) {
        if (d->dtype != ONYX_UNDEFINED) dt = d->dtype;
        if (d->rank >= 0 && d->rank < ONYX_MAX_RANK) {
            int axis = s->out_axis[j] < 0 ? s->out_axis[j] + d->rank + 1 : s->out_axis[j];
            if (axis < 0 || axis > d->rank) axis = 0;
            r = d->rank + 1;
            for (int k = 0, src = 0; k < r; k++)
                dims[k] = k == axis ? 0 : (d->dims[src] > 0 ? d->dims[src++] : (src++, 0));
        }
    }
    return value_alloc_tensor(out, dt, r, dims);
}

/* One scan over `seq_len` steps: states from `state_in`, scan inputs `x` (tensors); fills
 * res[0..n_state) with the final states and res[n_state..) with the stacked scan outputs. */
static onyx_status scan_core(scan_state *s, const kernel_call *c,
                             const onyx_value *const *state_in, const tensor *const *x,
                             const int *in_axis, int64_t seq_len, onyx_value *const *res) {
    int n_state = s->n_state, n_body_out = n_state + s->n_out;
    onyx_status st = ONYX_OK;
    int *out_axis = s->out_axis_run;
    for (int i = 0; i < n_state; i++) s->body_in[i] = state_in[i];
    int cur = 0;
    for (int64_t t = 0; t < seq_len; t++) {
        /* the caller may stop the run or cap its iterations: t + 1 once this one runs */
        CHECK(kernel_check_run(c, t + 1));
        for (int j = 0; j < s->n_in; j++) {
            int64_t idx = s->in_rev[j] ? seq_len - 1 - t : t;
            CHECK(cpu_ctl_slice(s->slices[j], x[j], in_axis[j], idx));
            s->body_in[n_state + j] = s->slices[j];
        }
        onyx_value **outs = s->outs[cur];
        for (int k = 0; k < n_body_out; k++) value_clear(outs[k]);
        st = subgraph_run(s->body, c->frame, s->body_in, outs);
        if (st != ONYX_OK) {
            onyx_error_prefix(st, "iteration %lld", (long long)t);
            goto done;
        }
        for (int j = 0; j < s->n_out; j++) {
            const onyx_value *v = outs[n_state + j];
            if (v->kind != ONYX_VALUE_TENSOR) {
                st = onyx_error(ONYX_ERR_SHAPE, "scan output %d of the body is a %s, expected a "
                                "tensor", j, cpu_ctl_kind_name(v));
                goto done;
            }
            const tensor *o = &v->t;
            int r = o->rank;
            if (t == 0) {
                if (r + 1 > ONYX_MAX_RANK) {
                    st = onyx_error(ONYX_ERR_SHAPE, "scan output %d has rank %d, too high to "
                                    "stack", j, r);
                    goto done;
                }
                int axis = s->out_axis[j] < 0 ? s->out_axis[j] + r + 1 : s->out_axis[j];
                if (axis < 0 || axis > r) {
                    st = onyx_error(ONYX_ERR_SHAPE, "scan_output_axes[%d] = %d is out of range "
                                    "for rank %d", j, s->out_axis[j], r + 1);
                    goto done;
                }
                out_axis[j] = axis;
                int64_t dims[ONYX_MAX_RANK];
                for (int k = 0, src = 0; k <= r; k++) dims[k] = k == axis ? seq_len : o->dims[src++];
                CHECK(value_alloc_tensor(res[n_state + j], o->dtype, r + 1, dims));
            }
            tensor *dst = &res[n_state + j]->t;
            int axis = out_axis[j];
            bool fits = o->dtype == dst->dtype && r + 1 == dst->rank;
            for (int k = 0, src = 0; fits && k <= r; k++)
                if (k != axis) fits = o->dims[src++] == dst->dims[k];
            if (!fits) {
                char a[128], b[128];
                st = onyx_error(ONYX_ERR_SHAPE, "scan output %d is %s %s in iteration %lld, which "
                                "does not fit the stacked %s %s", j, onyx_dtype_name(o->dtype),
                                shape_str(o->rank, o->dims, a, sizeof a), (long long)t,
                                onyx_dtype_name(dst->dtype),
                                shape_str(dst->rank, dst->dims, b, sizeof b));
                goto done;
            }
            int64_t idx = s->out_rev[j] ? seq_len - 1 - t : t;
            int64_t outer = cpu_ctl_outer(dst, axis), inner = cpu_ctl_inner(dst, axis);
            CHECK(cpu_ctl_copy_blocks(dst, idx * inner, seq_len * inner, o, 0, inner, outer,
                                      inner));
        }
        for (int i = 0; i < n_state; i++) s->body_in[i] = outs[i];
        cur ^= 1;
    }
    for (int i = 0; i < n_state; i++) {
        if (seq_len == 0) CHECK(value_copy(res[i], state_in[i]));
        else value_move(res[i], s->outs[cur ^ 1][i]);
    }
    if (seq_len == 0)
        for (int j = 0; j < s->n_out; j++) CHECK(empty_scan_out(s, j, res[n_state + j]));
done:
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < n_body_out; i++) value_clear(s->outs[k][i]);
    for (int j = 0; j < s->n_in; j++) value_clear(s->slices[j]);
    return st;
}

/* Scan inputs must be tensors of rank > axis that agree on the sequence length. */
static onyx_status scan_inputs(const kernel_call *c, const scan_state *s, int first, int lead,
                               const tensor **x, int *axis, int64_t *seq_len) {
    for (int j = 0; j < s->n_in; j++) {
        int i = first + s->n_state + j;
        x[j] = kernel_input(c, i);
        if (!x[j])
            return onyx_error(ONYX_ERR_SHAPE, "scan input %d must be a tensor, got a %s", j,
                              cpu_ctl_kind_name(c->in[i]));
        int r = x[j]->rank - lead;
        int a = s->in_axis[j] < 0 ? s->in_axis[j] + r : s->in_axis[j];
        if (a < 0 || a >= r)
            return onyx_error(ONYX_ERR_SHAPE, "scan input %d has rank %d, which has no scan axis "
                              "%d", j, x[j]->rank, s->in_axis[j]);
        axis[j] = a;
        int64_t len = x[j]->dims[lead + a];
        if (j == 0) *seq_len = len;
        else if (len != *seq_len)
            return onyx_error(ONYX_ERR_SHAPE, "scan input %d has %lld steps, expected %lld like "
                              "scan input 0", j, (long long)len, (long long)*seq_len);
        if (lead && x[j]->dims[0] != x[0]->dims[0])
            return onyx_error(ONYX_ERR_SHAPE, "scan input %d has batch size %lld, expected %lld",
                              j, (long long)x[j]->dims[0], (long long)x[0]->dims[0]);
    }
    return ONYX_OK;
}

/* Copies one batch entry's stacked scan output r ([len, ...]) into out ([batch, max_len, ...]),
 * allocating out on first use; steps past len stay zero. */
static onyx_status put_entry(onyx_value *out, const tensor *r, int j, int64_t b, int64_t batch,
                             int64_t max_len) {
    if (out->kind != ONYX_VALUE_TENSOR) {
        int64_t dims[ONYX_MAX_RANK];
        if (r->rank < 1 || r->rank + 1 > ONYX_MAX_RANK)
            return onyx_error(ONYX_ERR_SHAPE, "scan output %d has rank %d, expected 1..%d", j,
                              r->rank - 1, ONYX_MAX_RANK - 2);
        dims[0] = batch;
        dims[1] = max_len;
        for (int k = 1; k < r->rank; k++) dims[k + 1] = r->dims[k];
        TRY(value_alloc_tensor(out, r->dtype, r->rank + 1, dims));
    }
    const tensor *o = &out->t;
    if (r->dtype != o->dtype || !shape_equal(r->rank - 1, r->dims + 1, o->rank - 2, o->dims + 2)) {
        char got[128], want[128];
        shape_str(r->rank - 1, r->dims + 1, got, sizeof got);
        shape_str(o->rank - 2, o->dims + 2, want, sizeof want);
        return onyx_error(ONYX_ERR_SHAPE, "scan output %d of batch entry %lld has steps of %s %s, "
                          "expected %s %s like the entries before", j, (long long)b,
                          onyx_dtype_name(r->dtype), got, onyx_dtype_name(o->dtype), want);
    }
    int64_t per = o->numel / batch; /* batch > 0: out exists only after an entry ran */
    return cpu_ctl_copy_blocks(&out->t, b * per, 0, r, 0, 0, 1, r->numel);
}

/* v8: one core scan per batch entry over its first sequence_lens[b] steps; results are copied
 * into the [batch, ...] outputs. */
static onyx_status scan8_run(const kernel_call *c, scan_state *s) {
    onyx_status st = ONYX_OK;
    int n_state = s->n_state, n_res = n_state + s->n_out;
    const tensor **x = s->x, **xbp = s->xbp;
    tensor *xb = s->xb;
    int *axis = s->in_axis_run;
    int64_t max_len = 0;
    CHECK(scan_inputs(c, s, 1, 1, x, axis, &max_len));
    int64_t batch = x[0]->dims[0];
    const tensor *lens = kernel_input(c, 0);
    if (c->in[0] && (!lens || lens->dtype != ONYX_INT64 || lens->numel != batch)) {
        st = onyx_error(ONYX_ERR_SHAPE, "sequence_lens must be an int64 tensor of %lld entries",
                        (long long)batch);
        goto done;
    }
    for (int j = 0; j < s->n_in; j++)
        if (dtype_packed_bits(x[j]->dtype)) {
            st = onyx_error(ONYX_ERR_UNSUPPORTED, "Scan-8 on a sub-byte scan input");
            goto done;
        }
    for (int i = 0; i < n_state; i++) {
        const tensor *t = kernel_input(c, 1 + i);
        if (!t || t->rank < 1 || t->dims[0] != batch) {
            st = onyx_error(ONYX_ERR_SHAPE, "state %d must be a tensor with batch size %lld", i,
                            (long long)batch);
            goto done;
        }
        if (c->out[i]) CHECK(value_alloc_tensor(c->out[i], t->dtype, t->rank, t->dims));
    }
    for (int64_t b = 0; b < batch; b++) {
        int64_t len = lens ? ((const int64_t *)lens->data)[b] : max_len;
        if (len < 0 || len > max_len) {
            st = onyx_error(ONYX_ERR_RUNTIME, "sequence_lens[%lld] = %lld, expected 0..%lld",
                            (long long)b, (long long)len, (long long)max_len);
            goto done;
        }
        for (int i = 0; i < n_state; i++) CHECK(cpu_ctl_slice(s->views[i], kernel_input(c, 1 + i), 0, b));
        for (int j = 0; j < s->n_in; j++) {
            /* the entry's first `len` steps, contiguous along its leading axis */
            int64_t dims[ONYX_MAX_RANK];
            for (int k = 1; k < x[j]->rank; k++) dims[k - 1] = x[j]->dims[k];
            dims[0] = len;
            memset(&xb[j], 0, sizeof xb[j]);
            CHECK(tensor_set_shape(&xb[j], x[j]->dtype, x[j]->rank - 1, dims));
            size_t es = x[j]->dtype == ONYX_STRING ? sizeof(char *) : dtype_size(x[j]->dtype);
            xb[j].data = (char *)x[j]->data + (size_t)(b * (x[j]->numel / batch)) * es;
            xbp[j] = &xb[j];
        }
        CHECK(scan_core(s, c, (const onyx_value *const *)s->views, xbp, axis, len, s->res));
        for (int i = 0; i < n_state; i++) {
            if (!c->out[i]) continue;
            const tensor *r = &s->res[i]->t;
            const tensor *o = &c->out[i]->t;
            if (s->res[i]->kind != ONYX_VALUE_TENSOR || r->dtype != o->dtype ||
                !shape_equal(r->rank, r->dims, o->rank - 1, o->dims + 1)) {
                char got[128], want[128];
                shape_str(r->rank, r->dims, got, sizeof got);
                shape_str(o->rank - 1, o->dims + 1, want, sizeof want);
                st = onyx_error(ONYX_ERR_SHAPE, "state %d of batch entry %lld came out of the body "
                                "as %s %s, expected %s %s like its input", i, (long long)b,
                                onyx_dtype_name(r->dtype), got, onyx_dtype_name(o->dtype), want);
                goto done;
            }
            CHECK(cpu_ctl_copy_blocks(&c->out[i]->t, b * r->numel, 0, r, 0, 0, 1, r->numel));
        }
        for (int j = 0; j < s->n_out; j++)
            if (c->out[n_state + j] && len > 0)
                CHECK(put_entry(c->out[n_state + j], &s->res[n_state + j]->t, j, b, batch,
                                max_len));
        for (int k = 0; k < n_res; k++) value_clear(s->res[k]);
    }
    /* outputs no entry produced (no steps anywhere): empty, shaped from the declaration */
    for (int j = 0; j < s->n_out; j++) {
        onyx_value *out = c->out[n_state + j];
        if (!out || out->kind == ONYX_VALUE_TENSOR) continue;
        CHECK(empty_scan_out(s, j, s->res[0]));
        const tensor *e = &s->res[0]->t;
        int64_t dims[ONYX_MAX_RANK];
        dims[0] = batch;
        dims[1] = max_len;
        for (int k = 1; k < e->rank && k + 1 < ONYX_MAX_RANK; k++) dims[k + 1] = e->dims[k];
        if (e->rank + 1 > ONYX_MAX_RANK) {
            st = onyx_error(ONYX_ERR_SHAPE, "scan output %d has too high a rank", j);
            goto done;
        }
        CHECK(value_alloc_tensor(out, e->dtype, e->rank + 1, dims));
        value_clear(s->res[0]);
    }
done:
    for (int k = 0; k < n_res; k++) value_clear(s->res[k]);
    for (int i = 0; i < n_state; i++) value_clear(s->views[i]);
    return st;
}

onyx_status cpu_scan_run(const kernel_call *c) {
    scan_state *s = c->state;
    if (s->v8) return scan8_run(c, s);
    onyx_status st = ONYX_OK;
    int n = s->n_state + s->n_out;
    const tensor **x = s->x;
    int *axis = s->in_axis_run;
    onyx_value **res = s->res_ptr;
    int64_t seq_len = 0;
    CHECK(scan_inputs(c, s, 0, 0, x, axis, &seq_len));
    for (int i = 0; i < s->n_state; i++)
        if (!c->in[i]) {
            st = onyx_error(ONYX_ERR_INVALID_MODEL, "state input %d is missing", i);
            goto done;
        }
    for (int k = 0; k < n; k++) res[k] = c->out[k] ? c->out[k] : s->scratch[k];
    CHECK(scan_core(s, c, (const onyx_value *const *)c->in, x, axis, seq_len, res));
done:
    for (int k = 0; k < n; k++) value_clear(s->scratch[k]);
    return st;
}

/* ------------------------------------------------------------------ SequenceMap */

/* As scan_state: the prepared state's body and declarations are shared by its forks, which own
 * the working arrays (NULL in the prepared state). */
typedef struct seqmap_state {
    subgraph *body;
    int n_in, n_out;
    const type_info **out_decl;   /* body's declared output types (element types) */
    const onyx_value **body_in;
    onyx_value **outs;            /* fresh values each iteration: pushing gives them away */
} seqmap_state;

void cpu_sequence_map_release(void *state) {
    seqmap_state *s = state;
    if (!s) return;
    subgraph_free(s->body);
    free(s->out_decl);
    free(s);
}

void cpu_sequence_map_unfork(void *fork) {
    seqmap_state *f = fork;
    if (!f) return;
    free(f->body_in);
    free_values(f->outs, f->n_out);
    free(f);
}

onyx_status cpu_sequence_map_fork(const void *state, void **out) {
    seqmap_state *f = malloc(sizeof *f);
    if (!f) return onyx_oom("SequenceMap working state");
    *f = *(const seqmap_state *)state;
    f->body_in = calloc((size_t)f->n_in + 1, sizeof *f->body_in);
    f->outs = calloc((size_t)f->n_out + 1, sizeof *f->outs);
    if (!f->body_in || !f->outs) {
        cpu_sequence_map_unfork(f);
        return onyx_oom("SequenceMap working state");
    }
    *out = f;
    return ONYX_OK;
}

onyx_status cpu_sequence_map_prepare(const kernel_prep *p, void **state) {
    onyx_status st = ONYX_OK;
    const graph *body = attr_graph(p->node, "body");
    if (!body) return onyx_error(ONYX_ERR_INVALID_MODEL, "graph attribute 'body' is missing");
    if (body->n_inputs != p->n_in || body->n_outputs != p->n_out)
        return onyx_error(ONYX_ERR_INVALID_MODEL, "body has %d inputs and %d outputs, expected %d "
                          "and %d", body->n_inputs, body->n_outputs, p->n_in, p->n_out);
    seqmap_state *s = calloc(1, sizeof *s);
    if (!s) return onyx_oom("SequenceMap state");
    s->n_in = p->n_in;
    s->n_out = p->n_out;
    s->out_decl = calloc((size_t)p->n_out + 1, sizeof *s->out_decl);
    if (!s->out_decl) {
        st = onyx_oom("SequenceMap state");
        goto done;
    }
    for (int j = 0; j < p->n_out; j++) {
        const type_info *d = &body->values[body->outputs[j]].type;
        s->out_decl[j] = d->kind == ONYX_VALUE_NONE ? NULL : d;
    }
    CHECK(subgraph_create(body, p->env, &s->body));
    *state = s;
    s = NULL;
done:
    cpu_sequence_map_release(s);
    return st;
}

onyx_status cpu_sequence_map_run(const kernel_call *c) {
    seqmap_state *s = c->state;
    onyx_status st = ONYX_OK;
    size_t len = 0;
    for (int i = 0; i < s->n_in; i++) {
        const onyx_value *v = c->in[i];
        if (!v || (v->kind != ONYX_VALUE_SEQUENCE && (i == 0 || v->kind != ONYX_VALUE_TENSOR)))
            return onyx_error(ONYX_ERR_SHAPE, "input %d must be a %s, got a %s", i,
                              i == 0 ? "sequence" : "sequence or a tensor", cpu_ctl_kind_name(v));
        if (v->kind != ONYX_VALUE_SEQUENCE) continue;
        if (i == 0) len = v->seq.count;
        else if (v->seq.count != len)
            return onyx_error(ONYX_ERR_SHAPE, "input %d has %zu elements, expected %zu like input 0",
                              i, v->seq.count, len);
    }
    for (int j = 0; j < s->n_out; j++)
        if (c->out[j]) TRY(value_make_sequence(c->out[j], s->out_decl[j]));
    for (size_t k = 0; k < len; k++) {
        /* the caller may stop the run or cap its iterations and sequence lengths */
        CHECK(kernel_check_run(c, (int64_t)k + 1));
        for (int i = 0; i < s->n_in; i++)
            s->body_in[i] = c->in[i]->kind == ONYX_VALUE_SEQUENCE ? c->in[i]->seq.items[k] : c->in[i];
        for (int j = 0; j < s->n_out; j++)
            if (!s->outs[j] && !(s->outs[j] = value_new())) {
                st = onyx_oom("SequenceMap output");
                goto done;
            }
        st = subgraph_run(s->body, c->frame, s->body_in, s->outs);
        if (st != ONYX_OK) {
            onyx_error_prefix(st, "element %zu", k);
            goto done;
        }
        for (int j = 0; j < s->n_out; j++) {
            if (!c->out[j]) {
                value_clear(s->outs[j]);
                continue;
            }
            CHECK(value_seq_push(c->out[j], s->outs[j]));
            s->outs[j] = NULL;
        }
    }
done:
    for (int j = 0; j < s->n_out; j++) value_clear(s->outs[j]);
    return st;
}
