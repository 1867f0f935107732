/* Convolution implementation benchmark (not a test): for one float 2-D convolution, times each
 * implementation oneDNN offers, in its order of preference, with the layouts of X and Y onyx can
 * ask for; what kernels/conv (conv.c) would pick against what it could pick instead.
 *   build/conv_impls IC OC HW K STRIDE PAD [--group G] [--x last|plain|any] [--y last|any]
 *                    [--relu|--swish] [-n RUNS] [--impls K]
 * Square input HW x HW, batch 1, threads from OMP_NUM_THREADS. X and Y default to channels last
 * (onyx's stored layout between convs); `any` lets oneDNN choose (channel-blocked). Prints, per
 * implementation, the layouts it took, the median and the fastest of RUNS runs and GFLOP/s at
 * the median. Only the first K implementations (default 2): the later ones are the slow generic
 * kernels, seconds a run. */
#include <oneapi/dnnl/dnnl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int layout_tag(const char *name, dnnl_format_tag_t *tag) {
    if (!strcmp(name, "last")) *tag = dnnl_acdb;
    else if (!strcmp(name, "plain")) *tag = dnnl_abcd;
    else if (!strcmp(name, "any")) *tag = dnnl_format_tag_any;
    else return -1;
    return 0;
}

/* oneDNN's name of a descriptor's layout (a plain tag or its blocked one), for the report */
static const char *layout_name(const_dnnl_memory_desc_t md) {
    static const struct { dnnl_format_tag_t tag; const char *name; } known[] = {
        {dnnl_abcd, "plain"}, {dnnl_acdb, "last"}, {dnnl_aBcd16b, "blocked16"},
        {dnnl_aBcd8b, "blocked8"}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        dnnl_memory_desc_t probe;
        dnnl_dims_t dims;
        const dnnl_dims_t *d;
        dnnl_memory_desc_query(md, dnnl_query_dims, &d);
        memcpy(dims, *d, sizeof dims);
        dnnl_memory_desc_create_with_tag(&probe, 4, dims, dnnl_f32, known[i].tag);
        int same = dnnl_memory_desc_equal(probe, md);
        dnnl_memory_desc_destroy(probe);
        if (same) return known[i].name;
    }
    return "other";
}

static void usage(void) {
    fprintf(stderr, "usage: conv_impls IC OC HW K STRIDE PAD [--group G] [--x last|plain|any] "
                    "[--y last|any] [--relu|--swish] [-n RUNS] [--impls K]\n");
    exit(2);
}

int main(int argc, char **argv) {
    if (argc < 7) usage();
    long ic = atol(argv[1]), oc = atol(argv[2]), hw = atol(argv[3]), k = atol(argv[4]),
         stride = atol(argv[5]), pad = atol(argv[6]), group = 1;
    int runs = 200, impls = 2, relu = 0, swish = 0;
    dnnl_format_tag_t xtag = dnnl_acdb, ytag = dnnl_acdb;
    for (int i = 7; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--relu")) relu = 1;
        else if (!strcmp(a, "--swish")) swish = 1;
        else if (!v) usage();
        else if (!strcmp(a, "--group")) group = atol(argv[++i]);
        else if (!strcmp(a, "-n")) runs = atoi(argv[++i]);
        else if (!strcmp(a, "--impls")) impls = atoi(argv[++i]);
        else if (!strcmp(a, "--x")) { if (layout_tag(argv[++i], &xtag)) usage(); }
        else if (!strcmp(a, "--y")) { if (layout_tag(argv[++i], &ytag) || ytag == dnnl_abcd) usage(); }
        else usage();
    }
    long oh = (hw + 2 * pad - k) / stride + 1;
    if (ic <= 0 || oc <= 0 || k <= 0 || stride <= 0 || pad < 0 || group <= 0 || oh <= 0 ||
        ic % group || oc % group || runs <= 0)
        usage();
    dnnl_engine_t eng;
    dnnl_stream_t stream;
    if (dnnl_engine_create(&eng, dnnl_cpu, 0) ||
        dnnl_stream_create(&stream, eng, dnnl_stream_default_flags)) {
        fprintf(stderr, "conv_impls: no oneDNN CPU engine\n");
        return 1;
    }
    dnnl_dims_t xd = {1, ic, hw, hw}, yd = {1, oc, oh, oh}, bd = {oc};
    dnnl_dims_t wd = {group, oc / group, ic / group, k, k};
    dnnl_memory_desc_t xmd, ymd, wmd, bmd;
    dnnl_memory_desc_create_with_tag(&xmd, 4, xd, dnnl_f32, xtag);
    dnnl_memory_desc_create_with_tag(&ymd, 4, yd, dnnl_f32, ytag);
    /* grouped weights carry the group as a leading dim */
    dnnl_memory_desc_create_with_tag(&wmd, group > 1 ? 5 : 4, group > 1 ? wd : wd + 1, dnnl_f32,
                                     dnnl_format_tag_any);
    dnnl_memory_desc_create_with_tag(&bmd, 1, bd, dnnl_f32, dnnl_a);
    dnnl_dims_t strides = {stride, stride}, dil = {0, 0}, pads = {pad, pad};
    dnnl_primitive_attr_t attr;
    dnnl_post_ops_t po;
    dnnl_primitive_attr_create(&attr);
    dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user); /* as onyx */
    dnnl_post_ops_create(&po);
    if (relu) dnnl_post_ops_append_eltwise(po, dnnl_eltwise_relu, 0, 0);
    if (swish) dnnl_post_ops_append_eltwise(po, dnnl_eltwise_swish, 1.f, 0);
    dnnl_primitive_attr_set_post_ops(attr, po);
    dnnl_primitive_desc_t pd;
    if (dnnl_convolution_forward_primitive_desc_create(
            &pd, eng, dnnl_forward_inference, dnnl_convolution_direct, xmd, wmd, bmd, ymd, strides,
            dil, pads, pads, attr)) {
        fprintf(stderr, "conv_impls: oneDNN has no implementation for these layouts\n");
        return 1;
    }
    double flop = 2.0 * (double)oc * (double)(ic / group) * (double)(k * k) * (double)(oh * oh);
    double *t = malloc(sizeof *t * (size_t)runs);
    for (int n = 0; t && n < impls; n++) {
        const char *impl;
        dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
        dnnl_primitive_t prim;
        if (dnnl_primitive_create(&prim, pd)) {
            printf("%-24s cannot be created\n", impl);
        } else {
            const_dnnl_memory_desc_t mds[5] = {
                dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0),
                dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0), bmd,
                dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0),
                dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0)};
            const int arg[5] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_BIAS, DNNL_ARG_DST,
                                DNNL_ARG_SCRATCHPAD};
            dnnl_memory_t mem[5];
            dnnl_exec_arg_t args[5];
            for (int i = 0; i < 5; i++) {
                void *h;
                dnnl_memory_create(&mem[i], mds[i], eng, DNNL_MEMORY_ALLOCATE);
                dnnl_memory_get_data_handle(mem[i], &h);
                if (h) memset(h, 0, dnnl_memory_desc_get_size(mds[i]));
                args[i] = (dnnl_exec_arg_t){arg[i], mem[i]};
            }
            for (int r = 0; r < 10; r++) dnnl_primitive_execute(prim, stream, 5, args);
            for (int r = 0; r < runs; r++) {
                double t0 = now_ms();
                dnnl_primitive_execute(prim, stream, 5, args);
                dnnl_stream_wait(stream);
                t[r] = now_ms() - t0;
            }
            qsort(t, (size_t)runs, sizeof *t, by_value);
            printf("%-24s x %-9s y %-9s median %.4f ms  fastest %.4f ms  %.0f GFLOP/s\n", impl,
                   layout_name(mds[0]), layout_name(mds[3]), t[runs / 2], t[0],
                   flop / t[runs / 2] * 1e-6);
            for (int i = 0; i < 5; i++) dnnl_memory_destroy(mem[i]);
            dnnl_primitive_destroy(prim);
        }
        if (dnnl_primitive_desc_next_impl(pd) != dnnl_success) break;
    }
    free(t);
    dnnl_primitive_desc_destroy(pd);
    dnnl_post_ops_destroy(po);
    dnnl_primitive_attr_destroy(attr);
    dnnl_memory_desc_destroy(xmd);
    dnnl_memory_desc_destroy(ymd);
    dnnl_memory_desc_destroy(wmd);
    dnnl_memory_desc_destroy(bmd);
    dnnl_stream_destroy(stream);
    dnnl_engine_destroy(eng);
    return 0;
}
