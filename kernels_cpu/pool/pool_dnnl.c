/* oneDNN pooling for float32 MaxPool/AveragePool and int8/uint8 MaxPool over plain NC(D)(H)W
 * memory (or channels last, for tensors kept in the convolutions' opaque layout): the light CNNs
 * spend their pooling time here, and oneDNN's kernels beat scalar loops. */
#include <stdlib.h>
#include <string.h>

#include "kernels_cpu/common/dnnl_util.h"
#include "kernels_cpu/pool/pool.h"

/* The engine and the per-thread streams come from dnnl_util. The primitive (user scratchpad
 * mode) is shared by concurrent runs; the memories, bound to a run's buffers each time, belong
 * to one run context (cpu_pool_dnnl_mem). oneDNN pools 8-bit plain tensors only with its
 * reference kernel, slower than our loops: those are reordered channels last, pooled there and
 * reordered back ("staged"), three quick passes. */
struct cpu_pool_dnnl {
    dnnl_primitive_t prim, reo_in, reo_out; /* reorders: staged only */
    dnnl_memory_desc_t src_md, dst_md, pad_md;
    dnnl_memory_desc_t user_src_md, user_dst_md, in_pad_md, out_pad_md; /* staged only */
    size_t pad_size, in_pad_size, out_pad_size;
    size_t src_bytes, dst_bytes; /* staged: the channels-last copies */
};

struct cpu_pool_dnnl_mem {
    dnnl_memory_t src, dst, pad, user_src, user_dst, in_pad, out_pad;
};

static void md_free(dnnl_memory_desc_t md) {
    if (md) dnnl_memory_desc_destroy(md);
}

void cpu_pool_dnnl_free(cpu_pool_dnnl *d) {
    if (!d) return;
    if (d->prim) dnnl_primitive_destroy(d->prim);
    if (d->reo_in) dnnl_primitive_destroy(d->reo_in);
    if (d->reo_out) dnnl_primitive_destroy(d->reo_out);
    md_free(d->src_md);
    md_free(d->dst_md);
    md_free(d->pad_md);
    md_free(d->user_src_md);
    md_free(d->user_dst_md);
    md_free(d->in_pad_md);
    md_free(d->out_pad_md);
    free(d);
}

void cpu_pool_dnnl_mem_free(cpu_pool_dnnl_mem *m) {
    if (!m) return;
    dnnl_memory_t all[] = {m->src, m->dst, m->pad, m->user_src, m->user_dst, m->in_pad, m->out_pad};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        if (all[i]) dnnl_memory_destroy(all[i]);
    free(m);
}

onyx_status cpu_pool_dnnl_mem_create(const cpu_pool_dnnl *d, cpu_pool_dnnl_mem **out) {
    cpu_pool_dnnl_mem *m = calloc(1, sizeof *m);
    if (!m) return onyx_oom("oneDNN pooling memories");
    onyx_status st = cpu_dnnl_memory(&m->src, d->src_md);
    if (st == ONYX_OK) st = cpu_dnnl_memory(&m->dst, d->dst_md);
    if (st == ONYX_OK && d->pad_size) st = cpu_dnnl_memory(&m->pad, d->pad_md);
    if (st == ONYX_OK && d->reo_in) st = cpu_dnnl_memory(&m->user_src, d->user_src_md);
    if (st == ONYX_OK && d->reo_in) st = cpu_dnnl_memory(&m->user_dst, d->user_dst_md);
    if (st == ONYX_OK && d->in_pad_size) st = cpu_dnnl_memory(&m->in_pad, d->in_pad_md);
    if (st == ONYX_OK && d->out_pad_size) st = cpu_dnnl_memory(&m->out_pad, d->out_pad_md);
    if (st != ONYX_OK) {
        cpu_pool_dnnl_mem_free(m);
        return st;
    }
    *out = m;
    return ONYX_OK;
}

static size_t round64(size_t n) { return (n + 63) & ~(size_t)63; }

static size_t max3(size_t a, size_t b, size_t c) {
    size_t m = a > b ? a : b;
    return m > c ? m : c;
}

/* Scratch of a run: [the channels-last copies, staged only][the largest scratchpad]. */
size_t cpu_pool_dnnl_scratch(const cpu_pool_dnnl *d) {
    size_t pads = max3(d->pad_size, d->in_pad_size, d->out_pad_size);
    return d->reo_in ? round64(d->src_bytes) + round64(d->dst_bytes) + pads : pads;
}

/* What a oneDNN pooling of a window is made of: the element type, the engine, the algorithm, the
 * dims of X and Y and the window in oneDNN's terms. */
typedef struct pool_args {
    dnnl_data_type_t dt;
    dnnl_engine_t engine;
    dnnl_alg_kind_t alg;
    int rank;
    int64_t in[2 + GEOM_WINDOW_MAX_SPATIAL], out[2 + GEOM_WINDOW_MAX_SPATIAL];
    dnnl_dims_t strides, kernel, dil, pl, pr;
} pool_args;

/* The arguments of the pooling of window p, or false where oneDNN cannot do this case the ONNX
 * way (or there is no oneDNN): the loops do the work. Sets no error. */
static bool args_of(onyx_dtype dt, const geom_window *p, bool max, bool include_pad,
                    pool_args *a) {
    a->dt = dt == ONYX_FLOAT ? dnnl_f32 : dt == ONYX_INT8 ? dnnl_s8
            : dt == ONYX_UINT8 ? dnnl_u8 : dnnl_data_type_undef;
    if (a->dt == dnnl_data_type_undef || (a->dt != dnnl_f32 && !max)) return false;
    if (cpu_dnnl_engine(&a->engine) != ONYX_OK) {
        onyx_error_clear(); /* no oneDNN */
        return false;
    }
    int nd = p->nsp;
    a->rank = nd + 2;
    a->in[0] = p->n;
    a->in[1] = p->c;
    for (int i = 0; i < nd; i++) a->in[2 + i] = p->in[i];
    geom_window_out_dims(p, a->out);
    for (int i = 0; i < a->rank; i++)
        if (a->in[i] > INT32_MAX || a->out[i] > INT32_MAX) return false;
    for (int i = 0; i < nd; i++) {
        a->strides[i] = p->stride[i];
        a->kernel[i] = p->k[i];
        a->dil[i] = p->dil[i] - 1; /* oneDNN counts dilation from 0 */
        a->pl[i] = p->pad_b[i];
        /* oneDNN wants pads that give the output size with floor division; a ceil_mode output
         * needs a larger right pad, which is harmless for max and for averages that exclude
         * padding, but would be counted by averages that include it */
        int64_t extent = geom_window_extent(p->k[i], p->dil[i]);
        int64_t need = (a->out[2 + i] - 1) * p->stride[i] + extent - a->in[2 + i] - p->pad_b[i];
        a->pr[i] = need > p->pad_e[i] ? need : p->pad_e[i];
        if (a->pr[i] != p->pad_e[i] && !max && include_pad) return false;
        if (a->pl[i] >= extent || a->pr[i] >= extent) return false;
    }
    a->alg = max           ? dnnl_pooling_max
             : include_pad ? dnnl_pooling_avg_include_padding
                           : dnnl_pooling_avg_exclude_padding;
    return true;
}

/* The pooling's primitive descriptor between src and dst in *pd (caller destroys; NULL where
 * oneDNN has none), and whether oneDNN has a kernel for it but its reference one. */
static bool describe_pool(const pool_args *a, const_dnnl_memory_desc_t src,
                          const_dnnl_memory_desc_t dst, dnnl_primitive_attr_t attr,
                          dnnl_primitive_desc_t *pd) {
    const char *impl = NULL;
    return dnnl_guard_pooling_pd(pd, a->engine, dnnl_forward_inference, a->alg, src, dst,
                                 a->strides, a->kernel, a->dil, a->pl, a->pr,
                                 attr) == dnnl_success &&
           dnnl_primitive_desc_query(*pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success &&
           impl && strncmp(impl, "ref", 3) != 0;
}

/* The pooling primitive between src_md and dst_md; *made false (no error) where oneDNN has none
 * or only its reference kernel. */
static onyx_status make_pool(cpu_pool_dnnl *d, const pool_args *a, bool *made) {
    dnnl_primitive_desc_t pd = NULL;
    dnnl_primitive_attr_t attr = NULL;
    onyx_status st = ONYX_OK;
    *made = false;
    CHECK(cpu_dnnl_attr(&attr));
    bool ok = describe_pool(a, d->src_md, d->dst_md, attr, &pd);
    if (ok && (d->pad_size = cpu_dnnl_scratchpad(pd, &d->pad_md)) == SIZE_MAX) {
        st = onyx_oom("oneDNN pooling scratchpad descriptor");
        goto done;
    }
    *made = ok && dnnl_guard_primitive_create(&d->prim, pd) == dnnl_success;
done:
    if (attr) dnnl_primitive_attr_destroy(attr);
    if (pd) dnnl_primitive_desc_destroy(pd);
    return st;
}

bool cpu_pool_dnnl_takes_channels_last(onyx_dtype dt, const geom_window *p, bool max,
                                       bool include_pad) {
    pool_args a;
    if (!args_of(dt, p, max, include_pad, &a)) return false;
    dnnl_memory_desc_t src = NULL, dst = NULL;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    bool takes = cpu_dnnl_md_channels_last(&src, a.rank, a.in, a.dt) == ONYX_OK &&
                 cpu_dnnl_md_channels_last(&dst, a.rank, a.out, a.dt) == ONYX_OK &&
                 cpu_dnnl_attr(&attr) == ONYX_OK && describe_pool(&a, src, dst, attr, &pd);
    if (pd) dnnl_primitive_desc_destroy(pd);
    if (attr) dnnl_primitive_attr_destroy(attr);
    md_free(src);
    md_free(dst);
    onyx_error_clear(); /* a descriptor oneDNN does not make is the answer no */
    return takes;
}

onyx_status cpu_pool_dnnl_create(onyx_dtype dt, const geom_window *p, bool max,
                                 bool include_pad, bool channels_last, cpu_pool_dnnl **res) {
    *res = NULL;
    pool_args a;
    if (!args_of(dt, p, max, include_pad, &a)) return ONYX_OK;
    cpu_pool_dnnl *d = calloc(1, sizeof *d);
    if (!d) return onyx_oom("oneDNN pooling");
    int rank = a.rank;
    dnnl_data_type_t ddt = a.dt;
    const int64_t *in = a.in, *out = a.out;
    onyx_status st = ONYX_OK;
    bool made = false;
    /* Anything oneDNN does not take leaves the work to the loops: no error. */
    if (channels_last) {
        if (cpu_dnnl_md_channels_last(&d->src_md, rank, in, ddt) == ONYX_OK &&
            cpu_dnnl_md_channels_last(&d->dst_md, rank, out, ddt) == ONYX_OK)
            CHECK(make_pool(d, &a, &made));
    } else if (cpu_dnnl_md_plain(&d->src_md, rank, in, ddt) == ONYX_OK &&
               cpu_dnnl_md_plain(&d->dst_md, rank, out, ddt) == ONYX_OK) {
        CHECK(make_pool(d, &a, &made));
        if (!made && ddt != dnnl_f32 && rank >= 3 && rank <= 5) { /* staged */
            d->user_src_md = d->src_md;
            d->user_dst_md = d->dst_md;
            d->src_md = d->dst_md = NULL;
            md_free(d->pad_md);
            d->pad_md = NULL;
            if (cpu_dnnl_md_channels_last(&d->src_md, rank, in, ddt) == ONYX_OK &&
                cpu_dnnl_md_channels_last(&d->dst_md, rank, out, ddt) == ONYX_OK) {
                CHECK(make_pool(d, &a, &made));
                made = made &&
                       cpu_dnnl_reorder(d->user_src_md, d->src_md, &d->reo_in, &d->in_pad_md,
                                        &d->in_pad_size) == ONYX_OK &&
                       cpu_dnnl_reorder(d->dst_md, d->user_dst_md, &d->reo_out, &d->out_pad_md,
                                        &d->out_pad_size) == ONYX_OK;
                d->src_bytes = dnnl_memory_desc_get_size(d->src_md);
                d->dst_bytes = dnnl_memory_desc_get_size(d->dst_md);
            }
        }
    }
    if (made) {
        *res = d;
        d = NULL;
    } else {
        onyx_error_clear();
    }
done:
    cpu_pool_dnnl_free(d);
    return st;
}

/* Binds `mem` to ptr and runs prim from `from` to `to` with the scratchpad `pad` (NULL: none). */
static onyx_status run_one(dnnl_primitive_t prim, int from_arg, dnnl_memory_t from, int to_arg,
                           dnnl_memory_t to, dnnl_memory_t pad, void *pad_ptr) {
    dnnl_exec_arg_t args[3] = {{from_arg, from}, {to_arg, to}};
    int n = 2;
    if (pad) {
        TRY(cpu_dnnl_check(dnnl_memory_set_data_handle(pad, pad_ptr), "binding the scratchpad"));
        args[n++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, pad};
    }
    return cpu_dnnl_execute(prim, n, args);
}

onyx_status cpu_pool_dnnl_run(const cpu_pool_dnnl *d, cpu_pool_dnnl_mem *m, const void *x,
                              void *y, void *scratch) {
    if (!d->reo_in) {
        TRY(cpu_dnnl_check(dnnl_memory_set_data_handle(m->src, (void *)x), "binding pooling input"));
        TRY(cpu_dnnl_check(dnnl_memory_set_data_handle(m->dst, y), "binding pooling output"));
        return run_one(d->prim, DNNL_ARG_SRC, m->src, DNNL_ARG_DST, m->dst, m->pad, scratch);
    }
    char *xs = scratch, *ys = xs + round64(d->src_bytes), *pad = ys + round64(d->dst_bytes);
    TRY(cpu_dnnl_check(dnnl_memory_set_data_handle(m->user_src, (void *)x), "binding pooling input"));
    TRY(cpu_dnnl_check(dnnl_memory_set_data_handle(m->user_dst, y), "binding pooling output"));
    TRY(cpu_dnnl_check(dnnl_memory_set_data_handle(m->src, xs), "binding pooling input"));
    TRY(cpu_dnnl_check(dnnl_memory_set_data_handle(m->dst, ys), "binding pooling output"));
    TRY(run_one(d->reo_in, DNNL_ARG_FROM, m->user_src, DNNL_ARG_TO, m->src, m->in_pad, pad));
    TRY(run_one(d->prim, DNNL_ARG_SRC, m->src, DNNL_ARG_DST, m->dst, m->pad, pad));
    return run_one(d->reo_out, DNNL_ARG_FROM, m->dst, DNNL_ARG_TO, m->user_dst, m->out_pad, pad);
}
