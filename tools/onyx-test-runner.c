/* onyx-test-runner: runs the ONNX backend test data (node, simple, pytorch-*, real) through onyx's
 * public API and compares outputs as onnx's own runner does; each test runs in a forked child so a
 * crash or a hang is that test's ERROR, never the runner's. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/common.h"
#include "onyx.h"

#define DEFAULT_RTOL 1e-3
#define DEFAULT_ATOL 1e-7
#define MAX_MESSAGE (64 * 1024) /* what a child may report; the rest is cut */
#define MAX_DEPTH 3             /* folder levels searched below a DIR for test dirs */

enum { ST_PASS, ST_FAIL, ST_ERROR, ST_XFAIL, ST_XPASS };
static const char *const status_names[] = {"PASS", "FAIL", "ERROR", "XFAIL", "XPASS"};

/* ---------------------------------------------------------------- growable strings */

typedef struct sbuf {
    char *buf;
    size_t len, cap;
} sbuf;

static void sb_append(sbuf *s, const char *data, size_t n) {
    if (s->len + n + 1 > s->cap) {
        size_t cap = s->cap ? s->cap : 256;
        while (cap < s->len + n + 1) cap *= 2;
        char *nb = realloc(s->buf, cap);
        if (!nb) return; /* out of memory: the message just stays shorter */
        s->buf = nb;
        s->cap = cap;
    }
    memcpy(s->buf + s->len, data, n);
    s->len += n;
    s->buf[s->len] = '\0';
}

static void sb_printf(sbuf *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *s, const char *fmt, ...) {
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof small) {
        sb_append(s, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) return;
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb_append(s, big, (size_t)n);
    free(big);
}

static const char *sb_str(const sbuf *s) { return s->buf ? s->buf : ""; }
static void sb_free(sbuf *s) {
    free(s->buf);
    *s = (sbuf){0};
}

/* ---------------------------------------------------------------- options and tests */

typedef struct options {
    const char *device;
    const char *optimization; /* -O none|basic|all */
    const char *filter;
    const char *expected_path;
    const char *draws_path;
    const char *write_expected_path;
    const char *report_path;
    int jobs;
    int timeout_s;
    bool verbose, quiet, no_fork, no_examples;
} options;

static onyx_optimization_level optimization_level(const options *o) {
    if (o->optimization && !strcmp(o->optimization, "none")) return ONYX_OPT_NONE;
    if (o->optimization && !strcmp(o->optimization, "basic")) return ONYX_OPT_BASIC;
    return ONYX_OPT_ALL;
}

typedef struct test {
    char *name;
    char *dir;
    int status; /* ST_* once done */
    double ms;
    char *message;      /* full message; "" for a pass */
    const char *reason; /* from the expected-failure list, or NULL */
    bool done;
} test;

typedef struct test_list {
    test *items;
    size_t count, cap;
} test_list;

typedef struct expected_entry {
    char *name;
    char *reason;
    int kind; /* lists with a kind column: 1 + its index in the accepted names; else 0 */
    bool seen;
} expected_entry;

typedef struct expected_list {
    expected_entry *items;
    size_t count;
} expected_list;

static bool path_exists(const char *path, bool want_dir) {
    struct stat st;
    if (stat(path, &st) != 0) return false;
    return want_dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode);
}

static char *path_join(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    char *p = malloc(la + lb + 2);
    if (!p) return NULL;
    memcpy(p, a, la);
    size_t n = la;
    if (n && p[n - 1] != '/') p[n++] = '/';
    memcpy(p + n, b, lb + 1);
    return p;
}

static bool is_test_dir(const char *dir) {
    char *m = path_join(dir, "model.onnx"), *d = path_join(dir, "data.json");
    bool yes = (m && path_exists(m, false)) || (d && path_exists(d, false));
    free(m);
    free(d);
    return yes;
}

static const char *base_name(const char *path) {
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/') n--;
    size_t b = n;
    while (b > 0 && path[b - 1] != '/') b--;
    return path + b;
}

static bool filter_match(const char *filter, const char *name) {
    if (!filter || !*filter) return true;
    if (strpbrk(filter, "*?[")) return fnmatch(filter, name, 0) == 0;
    return strstr(name, filter) != NULL;
}

static int add_test(test_list *list, const char *dir) {
    if (list->count == list->cap) {
        size_t cap = list->cap ? list->cap * 2 : 256;
        test *items = realloc(list->items, cap * sizeof *items);
        if (!items) return -1;
        list->items = items;
        list->cap = cap;
    }
    test *t = &list->items[list->count];
    *t = (test){0};
    t->dir = strdup(dir);
    /* The name is the folder's basename without trailing slashes. */
    const char *b = base_name(dir);
    size_t n = strcspn(b, "/");
    t->name = strndup(b, n);
    if (!t->dir || !t->name) {
        free(t->dir);
        free(t->name);
        return -1;
    }
    list->count++;
    return 0;
}

static int only_dirs(const struct dirent *e) { return e->d_name[0] != '.'; }

/* Adds `dir` if it is a test dir, else the test dirs found below it (data folders such as
 * .../data/node, or a folder of data folders). */
static int collect(test_list *list, const char *dir, const char *filter, int depth) {
    if (is_test_dir(dir)) {
        char *name = strndup(base_name(dir), strcspn(base_name(dir), "/"));
        int rc = 0;
        if (!name) return -1;
        if (filter_match(filter, name)) rc = add_test(list, dir);
        free(name);
        return rc;
    }
    if (depth >= MAX_DEPTH) return 0;
    struct dirent **entries = NULL;
    int n = scandir(dir, &entries, only_dirs, alphasort);
    if (n < 0) return 0;
    int rc = 0;
    for (int i = 0; i < n; i++) {
        char *sub = rc == 0 ? path_join(dir, entries[i]->d_name) : NULL;
        if (sub && path_exists(sub, true)) rc = collect(list, sub, filter, depth + 1);
        else if (!sub && rc == 0) rc = -1;
        free(sub);
        free(entries[i]);
    }
    free(entries);
    return rc;
}

/* ---------------------------------------------------------------- expected failures */

static char *trim(char *s) {
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    return s;
}

/* Reads a list of 'test_name  # reason' lines, or with `kinds` (a NULL-ended list of accepted
 * words) 'test_name  kind  # reason' lines. */
static int load_expected(const char *path, const char *const *kinds, expected_list *out) {
    char *text = NULL;
    size_t size = 0;
    int err = tool_read_file(path, &text, &size);
    if (err) {
        fprintf(stderr, "onyx-test-runner: cannot read %s: %s\n", path, strerror(err));
        return -1;
    }
    int rc = 0, lineno = 0;
    for (char *line = text, *next; line && *line; line = next) {
        lineno++;
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        char *s = trim(line);
        if (!*s || *s == '#') continue;
        size_t name_len = strcspn(s, " \t#");
        char *rest = trim(s + name_len);
        int kind = 0;
        if (kinds) {
            size_t kind_len = strcspn(rest, " \t#");
            for (int k = 0; kinds[k]; k++)
                if (strlen(kinds[k]) == kind_len && !strncmp(rest, kinds[k], kind_len)) kind = k + 1;
            rest = trim(rest + kind_len);
        }
        char *reason = *rest == '#' ? trim(rest + 1) : NULL;
        if (!reason || !*reason || (kinds && !kind)) {
            fprintf(stderr, "%s:%d: '%s' must read 'test_name  %s# reason' (a reason is required)\n",
                    path, lineno, s, kinds ? "kind  " : "");
            rc = -1;
            continue;
        }
        s[name_len] = '\0';
        for (size_t i = 0; i < out->count; i++)
            if (strcmp(out->items[i].name, s) == 0) {
                fprintf(stderr, "%s:%d: test '%s' is listed twice\n", path, lineno, s);
                rc = -1;
            }
        expected_entry *items = realloc(out->items, (out->count + 1) * sizeof *items);
        char *name = strdup(s), *why = strdup(reason);
        if (!items || !name || !why) {
            if (items) out->items = items;
            free(name);
            free(why);
            rc = -1;
            break;
        }
        out->items = items;
        out->items[out->count++] = (expected_entry){name, why, kind, false};
    }
    free(text);
    return rc;
}

static expected_entry *find_expected(expected_list *list, const char *name) {
    for (size_t i = 0; i < list->count; i++)
        if (list->items[i].name && strcmp(list->items[i].name, name) == 0) return &list->items[i];
    return NULL;
}

/* ---------------------------------------------------------------- data.json */

/* The value of a top-level key of a flat JSON object: a string (copied, caller frees) or a
 * number. The files are onnx's own small data.json; this is not a general JSON parser. */
static const char *json_find(const char *json, const char *key) {
    size_t kl = strlen(key);
    for (const char *p = json; (p = strchr(p, '"')) != NULL; p++) {
        if (strncmp(p + 1, key, kl) == 0 && p[1 + kl] == '"') {
            const char *q = p + 2 + kl;
            while (isspace((unsigned char)*q)) q++;
            if (*q != ':') continue;
            q++;
            while (isspace((unsigned char)*q)) q++;
            return q;
        }
    }
    return NULL;
}

static char *json_string(const char *json, const char *key) {
    const char *q = json_find(json, key);
    if (!q || *q != '"') return NULL;
    sbuf s = {0};
    for (q++; *q && *q != '"'; q++) {
        if (*q == '\\' && q[1]) q++;
        sb_append(&s, q, 1);
    }
    if (*q != '"') {
        sb_free(&s);
        return NULL;
    }
    if (!s.buf) return strdup("");
    return s.buf;
}

static bool json_number(const char *json, const char *key, double *out) {
    const char *q = json_find(json, key);
    if (!q) return false;
    char *end;
    double v = strtod(q, &end);
    if (end == q) return false;
    *out = v;
    return true;
}

/* ---------------------------------------------------------------- comparison */

typedef struct tolerance {
    double rtol, atol;
} tolerance;

static const char *dtype_str(onyx_dtype d) { return onyx_dtype_name(d); }

static bool compare_tensor(const onyx_value *got, const onyx_value *exp, tolerance tol,
                           const char *where, sbuf *err) {
    char b1[256], b2[256];
    onyx_dtype dg = onyx_tensor_dtype(got), de = onyx_tensor_dtype(exp);
    if (dg != de) {
        sb_printf(err, "%s: dtype %s, expected %s", where, dtype_str(dg), dtype_str(de));
        return false;
    }
    size_t rg = onyx_tensor_rank(got), re = onyx_tensor_rank(exp);
    const int64_t *sg = onyx_tensor_dims(got), *se = onyx_tensor_dims(exp);
    bool same = rg == re;
    for (size_t k = 0; same && k < rg; k++) same = sg[k] == se[k];
    if (!same) {
        sb_printf(err, "%s: shape %s, expected %s", where,
                  tool_format_dims((int64_t)rg, sg, NULL, b1, sizeof b1),
                  tool_format_dims((int64_t)re, se, NULL, b2, sizeof b2));
        return false;
    }
    int64_t n = onyx_tensor_numel(exp);
    const void *a = onyx_tensor_data(got), *e = onyx_tensor_data(exp);
    if (n > 0 && (!a || !e)) {
        sb_printf(err, "%s: %s has no data", where, a ? "the expected tensor" : "the output");
        return false;
    }
    if (n > 0 && onyx_tensor_nbytes(got) != onyx_tensor_nbytes(exp)) {
        sb_printf(err, "%s: %zu bytes of data, expected %zu", where, onyx_tensor_nbytes(got),
                  onyx_tensor_nbytes(exp));
        return false;
    }
    int64_t bad = 0, first = -1;
    double max_diff = 0;
    bool floating = tool_dtype_is_floating(de), complex = tool_dtype_is_complex(de);
    /* onnx's runner (1.23) compares bfloat16 with rtol at least 2^-6, two of its ULPs */
    if (de == ONYX_BFLOAT16 && tol.rtol < 0x1p-6) tol.rtol = 0x1p-6;
    for (int64_t i = 0; i < n; i++) {
        bool ok;
        if (de == ONYX_STRING) {
            const char *x = ((char *const *)a)[i], *y = ((char *const *)e)[i];
            ok = (x && y) ? strcmp(x, y) == 0 : x == y;
        } else if (floating || complex) {
            double d, mag;
            bool nan_x, nan_y, inf, same;
            if (complex) {
                double xr, xi, yr, yi;
                if (de == ONYX_COMPLEX64) {
                    xr = ((const float *)a)[2 * i];
                    xi = ((const float *)a)[2 * i + 1];
                    yr = ((const float *)e)[2 * i];
                    yi = ((const float *)e)[2 * i + 1];
                } else {
                    xr = ((const double *)a)[2 * i];
                    xi = ((const double *)a)[2 * i + 1];
                    yr = ((const double *)e)[2 * i];
                    yi = ((const double *)e)[2 * i + 1];
                }
                nan_x = isnan(xr) || isnan(xi);
                nan_y = isnan(yr) || isnan(yi);
                inf = isinf(xr) || isinf(xi) || isinf(yr) || isinf(yi);
                same = xr == yr && xi == yi;
                d = same ? 0 : hypot(xr - yr, xi - yi);
                mag = hypot(yr, yi);
            } else {
                double x = tool_elem_double(de, a, i), y = tool_elem_double(de, e, i);
                nan_x = isnan(x);
                nan_y = isnan(y);
                inf = isinf(x) || isinf(y);
                same = x == y;
                d = same ? 0 : fabs(x - y);
                mag = fabs(y);
            }
            /* As numpy's isclose: NaN equals NaN, an infinity only equals itself. */
            if (nan_x || nan_y) ok = nan_x && nan_y;
            else if (inf) ok = same;
            else ok = d <= tol.atol + tol.rtol * mag;
            if (!nan_x && !nan_y && d > max_diff) max_diff = d;
        } else {
            ok = tool_elem_int_equal(de, a, e, i);
        }
        if (!ok) {
            if (first < 0) first = i;
            bad++;
        }
    }
    if (bad == 0) return true;
    char got_s[128], exp_s[128];
    sb_printf(err, "%s: %lld of %lld elements differ; first at %s: got %s, expected %s", where,
              (long long)bad, (long long)n, tool_format_index(re, se, first, b1, sizeof b1),
              tool_format_elem(de, a, first, got_s, sizeof got_s),
              tool_format_elem(de, e, first, exp_s, sizeof exp_s));
    if (floating || complex)
        sb_printf(err, " (max |diff| %.3g; allowed atol %g + rtol %g * |expected|)", max_diff,
                  tol.atol, tol.rtol);
    return false;
}

/* Optionals compare by what they hold, as onnx's runner unwraps them. */
static const onyx_value *unwrap(const onyx_value *v) {
    while (v && onyx_value_kind_of(v) == ONYX_VALUE_OPTIONAL)
        v = onyx_optional_has_value(v) ? onyx_optional_value(v) : NULL;
    return v;
}

static bool compare_value(const onyx_value *got, const onyx_value *exp, tolerance tol,
                          const char *where, sbuf *err) {
    got = unwrap(got);
    exp = unwrap(exp);
    if (!got && !exp) return true;
    if (!got || !exp) {
        sb_printf(err, "%s: got %s, expected %s", where, got ? "a value" : "an empty optional",
                  exp ? "a value" : "an empty optional");
        return false;
    }
    onyx_value_kind kg = onyx_value_kind_of(got), ke = onyx_value_kind_of(exp);
    if (kg != ke) {
        sb_printf(err, "%s: got a %s, expected a %s", where, tool_kind_name(kg),
                  tool_kind_name(ke));
        return false;
    }
    if (ke == ONYX_VALUE_TENSOR) return compare_tensor(got, exp, tol, where, err);
    if (ke == ONYX_VALUE_SEQUENCE) {
        size_t ng = onyx_sequence_length(got), ne = onyx_sequence_length(exp);
        if (ng != ne) {
            sb_printf(err, "%s: sequence of %zu items, expected %zu", where, ng, ne);
            return false;
        }
        for (size_t j = 0; j < ne; j++) {
            char sub[512];
            snprintf(sub, sizeof sub, "%s item %zu", where, j);
            if (!compare_value(onyx_sequence_at(got, j), onyx_sequence_at(exp, j), tol, sub, err))
                return false;
        }
        return true;
    }
    sb_printf(err, "%s: cannot compare a %s", where, tool_kind_name(ke));
    return false;
}

/* ---------------------------------------------------------------- running one test */

typedef struct data_set {
    size_t input_count, output_count;
    onyx_value **inputs;
    onyx_value **outputs;
} data_set;

static void data_set_free(data_set *ds) {
    if (ds->inputs) onyx_values_free(ds->inputs, ds->input_count);
    if (ds->outputs) onyx_values_free(ds->outputs, ds->output_count);
    *ds = (data_set){0};
}

static int fail_api(sbuf *err, onyx_status st, const char *what) {
    sb_printf(err, "%s (%s): %s", onyx_status_name(st), what, onyx_last_error());
    return ST_ERROR;
}

/* Number of files prefix_0.pb, prefix_1.pb, ... present in `dir` (counted as onnx's runner does,
 * by pattern; loading then needs them numbered without gaps). */
static size_t count_pb(const char *dir, const char *prefix) {
    DIR *d = opendir(dir);
    size_t n = 0, pl = strlen(prefix);
    if (!d) return 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        const char *s = e->d_name;
        size_t l = strlen(s);
        if (strncmp(s, prefix, pl) == 0 && l > pl + 3 && strcmp(s + l - 3, ".pb") == 0) n++;
    }
    closedir(d);
    return n;
}

static onyx_value_kind io_kind(const onyx_model *model, size_t i, bool input) {
    onyx_io_info info;
    onyx_status st = input ? onyx_model_input(model, i, &info) : onyx_model_output(model, i, &info);
    if (st != ONYX_OK || info.kind == ONYX_VALUE_NONE) return ONYX_VALUE_TENSOR;
    return info.kind;
}

/* Loads prefix_I.pb for I < count, with kinds taken from the model's inputs or outputs. */
static int load_pbs(const onyx_model *model, const char *dir, const char *prefix, size_t count,
                    bool inputs, onyx_value ***out, sbuf *err) {
    onyx_value **vals = calloc(count ? count : 1, sizeof *vals);
    int rc = ST_PASS;
    if (!vals) {
        sb_printf(err, "out of memory");
        return ST_ERROR;
    }
    for (size_t i = 0; i < count && rc == ST_PASS; i++) {
        char file[64], *path;
        snprintf(file, sizeof file, "%s%zu.pb", prefix, i);
        path = path_join(dir, file);
        if (!path || !path_exists(path, false)) {
            sb_printf(err, "missing %s/%s", base_name(dir), file);
            rc = ST_ERROR;
        } else {
            onyx_status st = onyx_value_load_pb(io_kind(model, i, inputs), path, &vals[i]);
            if (st != ONYX_OK) {
                char what[128];
                snprintf(what, sizeof what, "loading %s/%s", base_name(dir), file);
                rc = fail_api(err, st, what);
            }
        }
        free(path);
    }
    if (rc != ST_PASS) {
        onyx_values_free(vals, count);
        return rc;
    }
    *out = vals;
    return ST_PASS;
}

static int data_set_number(const char *name) {
    return (int)strtol(name + strlen("test_data_set_"), NULL, 10);
}

static int cmp_data_sets(const struct dirent **a, const struct dirent **b) {
    int x = data_set_number((*a)->d_name), y = data_set_number((*b)->d_name);
    return (x > y) - (x < y);
}

static int only_data_sets(const struct dirent *e) {
    return strncmp(e->d_name, "test_data_set_", 14) == 0;
}

/* The model of a real/ test: data.json's url is "onnx/backend/test/data/light/light_X.onnx",
 * relative to the folder holding onnx/; the test dir is .../onnx/backend/test/data/real/test_X. */
static char *resolve_url(const char *test_dir, const char *url) {
    const char *marker = "onnx/backend/test/data/";
    char *abs = realpath(test_dir, NULL);
    if (!abs) return NULL;
    char *found = NULL;
    if (strncmp(url, marker, strlen(marker)) == 0) {
        /* The data folder is the test dir's grandparent. */
        char *p = strrchr(abs, '/');
        if (p && p != abs) *p = '\0';
        p = strrchr(abs, '/');
        if (p && p != abs) *p = '\0';
        found = path_join(abs, url + strlen(marker));
        if (found && !path_exists(found, false)) {
            free(found);
            found = NULL;
        }
        free(abs);
        abs = realpath(test_dir, NULL);
        if (!abs) return found;
    }
    /* Otherwise try every ancestor as the root the url is relative to. */
    while (!found) {
        char *cand = path_join(abs, url);
        if (cand && path_exists(cand, false)) {
            found = cand;
            break;
        }
        free(cand);
        char *p = strrchr(abs, '/');
        if (!p || p == abs) break;
        *p = '\0';
    }
    free(abs);
    return found;
}

/* ---------------------------------------------------------------- random draws */

/* Tests whose outputs are random draws that no generator reproduces bit for bit (--draws FILE,
 * lines 'test_name  kind  # reason'). Their outputs are checked for what a draw must satisfy
 * instead of being compared with the recorded ones. Kinds:
 *   bernoulli         output 0 has the recorded type and shape, holds only 0 and 1, and over many
 *                     runs each element is 1 about as often as input 0 (its probability) says
 *   bernoulli-seeded  the same values check, and two runs give the same draws
 *   bernoulli-inverted  as bernoulli, with 1 as often as 1 - probability (the graph says so) */
typedef enum draw_kind { DRAW_NONE, DRAW_BERNOULLI, DRAW_BERNOULLI_SEEDED, DRAW_BERNOULLI_INVERTED } draw_kind;

/* The kind words of the --draws list, in draw_kind order after DRAW_NONE. */
static const char *const draw_kind_names[] = {"bernoulli", "bernoulli-seeded", "bernoulli-inverted",
                                              NULL};
static expected_list draws;

static draw_kind find_draw(const char *name) {
    const expected_entry *e = find_expected(&draws, name);
    return e ? (draw_kind)e->kind : DRAW_NONE;
}

/* Runs the model `runs` more times on `inputs`; counts[i] += output 0's element i each run.
 * With `same` set, every run must reproduce `first` exactly. */
static int rerun_draws(onyx_rep *rep, const data_set *ds, char **names, const onyx_value *first,
                       int runs, bool same, double *counts, sbuf *err) {
    int64_t n = onyx_tensor_numel(first);
    onyx_dtype dt = onyx_tensor_dtype(first);
    for (int r = 0; r < runs; r++) {
        size_t out_count = 0;
        onyx_value **outs = NULL;
        onyx_status st = onyx_rep_run(rep, ds->input_count, (const char *const *)names,
                                      (const onyx_value *const *)ds->inputs, &out_count, &outs);
        if (st != ONYX_OK) return fail_api(err, st, "run (repeated draw)");
        const onyx_value *y = out_count ? outs[0] : NULL;
        bool ok = y && onyx_value_kind_of(y) == ONYX_VALUE_TENSOR && onyx_tensor_numel(y) == n &&
                  onyx_tensor_dtype(y) == dt;
        if (ok && same && memcmp(onyx_tensor_data(y), onyx_tensor_data(first), onyx_tensor_nbytes(y)))
            ok = false;
        for (int64_t i = 0; ok && i < n; i++) counts[i] += tool_elem_double(dt, onyx_tensor_data(y), i);
        onyx_values_free(outs, out_count);
        if (!ok) {
            sb_printf(err, "output 0: run %d %s", r + 2,
                      same ? "drew other values from the same seed" : "changed type or size");
            return ST_FAIL;
        }
    }
    return ST_PASS;
}

/* The Bernoulli checks on output 0 (`got`) against the recorded output (`exp`) and the
 * probabilities (input 0). */
static int check_bernoulli(onyx_rep *rep, const data_set *ds, char **names, const onyx_value *got,
                           const onyx_value *exp, draw_kind kind, sbuf *err) {
    bool seeded = kind == DRAW_BERNOULLI_SEEDED;
    enum { RUNS = 400 };
    onyx_dtype dt = onyx_tensor_dtype(got);
    int64_t n = onyx_tensor_numel(got);
    const onyx_value *p = ds->input_count ? ds->inputs[0] : NULL;
    if (onyx_value_kind_of(got) != ONYX_VALUE_TENSOR || dt != onyx_tensor_dtype(exp) ||
        onyx_tensor_rank(got) != onyx_tensor_rank(exp) ||
        memcmp(onyx_tensor_dims(got), onyx_tensor_dims(exp), onyx_tensor_rank(got) * sizeof(int64_t))) {
        sb_printf(err, "output 0: a %s tensor of another shape than the recorded %s one",
                  dtype_str(dt), dtype_str(onyx_tensor_dtype(exp)));
        return ST_FAIL;
    }
    if (!p || onyx_tensor_numel(p) != n || !tool_dtype_is_floating(onyx_tensor_dtype(p))) {
        sb_printf(err, "input 0 is not a probability per output element");
        return ST_ERROR;
    }
    double *counts = calloc((size_t)n + 1, sizeof *counts);
    if (!counts) {
        sb_printf(err, "out of memory");
        return ST_ERROR;
    }
    int rc = ST_PASS;
    for (int64_t i = 0; i < n && rc == ST_PASS; i++) {
        double v = tool_elem_double(dt, onyx_tensor_data(got), i);
        if (v != 0 && v != 1) {
            sb_printf(err, "output 0: element %lld is %g, not a 0/1 draw", (long long)i, v);
            rc = ST_FAIL;
        }
        counts[i] = v;
    }
    if (rc == ST_PASS) rc = rerun_draws(rep, ds, names, got, seeded ? 1 : RUNS - 1, seeded, counts, err);
    /* Unseeded: each element's frequency of 1 over the runs is within 5 standard deviations (and
     * a small floor) of its probability: a wrong p or a constant output fails, chance does not. */
    for (int64_t i = 0; !seeded && rc == ST_PASS && i < n; i++) {
        double pi = tool_elem_double(onyx_tensor_dtype(p), onyx_tensor_data(p), i);
        if (kind == DRAW_BERNOULLI_INVERTED) pi = 1 - pi;
        double freq = counts[i] / RUNS, bound = 5 * sqrt(pi * (1 - pi) / RUNS) + 0.02;
        if (fabs(freq - pi) > bound) {
            sb_printf(err, "output 0: element %lld was 1 in %.1f%% of %d runs, but its probability "
                      "is %.3f", (long long)i, 100 * freq, RUNS, pi);
            rc = ST_FAIL;
        }
    }
    free(counts);
    return rc;
}

/* Runs one test in this process: PASS, FAIL (ran, outputs differ) or ERROR, with a message. */
static int run_test(const char *dir, const options *o, sbuf *err) {
    tolerance tol = {DEFAULT_RTOL, DEFAULT_ATOL};
    char *json = NULL, *url = NULL, *model_path = NULL, *expected_prefix = NULL;
    char **names = NULL;
    onyx_model *model = NULL;
    onyx_rep *rep = NULL;
    data_set *sets = NULL;
    size_t set_count = 0, nin = 0;
    struct dirent **entries = NULL;
    int n_entries = 0;
    int rc = ST_PASS;
    onyx_status st;

    char *json_path = path_join(dir, "data.json");
    size_t json_size;
    if (json_path && path_exists(json_path, false)) {
        if (tool_read_file(json_path, &json, &json_size) != 0) {
            sb_printf(err, "cannot read %s", json_path);
            rc = ST_ERROR;
            goto done;
        }
        json_number(json, "rtol", &tol.rtol);
        json_number(json, "atol", &tol.atol);
    }
    model_path = path_join(dir, "model.onnx");
    if (!model_path) {
        sb_printf(err, "out of memory");
        rc = ST_ERROR;
        goto done;
    }
    bool real = !path_exists(model_path, false);
    if (real) {
        url = json ? json_string(json, "url") : NULL;
        free(model_path);
        model_path = NULL;
        if (!url) {
            sb_printf(err, "no model.onnx and no \"url\" in data.json");
            rc = ST_ERROR;
            goto done;
        }
        model_path = resolve_url(dir, url);
        if (!model_path) {
            sb_printf(err, "model %s (from data.json) not found", url);
            rc = ST_ERROR;
            goto done;
        }
        size_t l = strlen(model_path);
        expected_prefix =
            strndup(model_path, l > 5 && strcmp(model_path + l - 5, ".onnx") == 0 ? l - 5 : l);
    }

    st = onyx_model_load_file(model_path, &model);
    if (st != ONYX_OK) {
        rc = fail_api(err, st, "load model");
        goto done;
    }
    nin = onyx_model_input_count(model);
    size_t nout = onyx_model_output_count(model);
    names = calloc(nin ? nin : 1, sizeof *names);
    if (!names) {
        sb_printf(err, "out of memory");
        rc = ST_ERROR;
        goto done;
    }
    for (size_t i = 0; i < nin; i++) {
        onyx_io_info info;
        st = onyx_model_input(model, i, &info);
        if (st != ONYX_OK) {
            rc = fail_api(err, st, "model input info");
            goto done;
        }
        names[i] = (char *)(info.name ? info.name : "");
    }

    if (real) {
        /* One data set: float arange inputs, like onnx's runner for the light models. */
        sets = calloc(1, sizeof *sets);
        if (!sets) {
            sb_printf(err, "out of memory");
            rc = ST_ERROR;
            goto done;
        }
        set_count = 1;
        sets[0].inputs = calloc(nin ? nin : 1, sizeof *sets[0].inputs);
        if (!sets[0].inputs) {
            sb_printf(err, "out of memory");
            rc = ST_ERROR;
            goto done;
        }
        sets[0].input_count = nin;
        for (size_t i = 0; i < nin; i++) {
            onyx_io_info info;
            st = onyx_model_input(model, i, &info);
            if (st != ONYX_OK) {
                rc = fail_api(err, st, "model input info");
                goto done;
            }
            if (info.dtype != ONYX_FLOAT || info.rank < 0) {
                sb_printf(err,
                          "input '%s' is not a float tensor of known rank; onnx's runner makes "
                          "only float inputs",
                          names[i]);
                rc = ST_ERROR;
                goto done;
            }
            st = tool_make_input(ONYX_FLOAT, info.rank, info.dims, &sets[0].inputs[i]);
            if (st != ONYX_OK) {
                sb_printf(err, "cannot make input '%s' (%s)", names[i], onyx_status_name(st));
                rc = ST_ERROR;
                goto done;
            }
        }
        size_t n = 0;
        for (;; n++) {
            char suffix[64];
            snprintf(suffix, sizeof suffix, "_output_%zu.pb", n);
            char *p = malloc(strlen(expected_prefix) + strlen(suffix) + 1);
            if (!p) break;
            strcpy(p, expected_prefix);
            strcat(p, suffix);
            bool there = path_exists(p, false);
            free(p);
            if (!there) break;
        }
        if (n == 0) {
            sb_printf(err, "no expected output %s_output_0.pb", expected_prefix);
            rc = ST_ERROR;
            goto done;
        }
        char *folder = strdup(expected_prefix);
        char *slash = folder ? strrchr(folder, '/') : NULL;
        if (!slash) {
            free(folder);
            sb_printf(err, "bad model path %s", expected_prefix);
            rc = ST_ERROR;
            goto done;
        }
        *slash = '\0';
        char prefix[512];
        snprintf(prefix, sizeof prefix, "%s_output_", slash + 1);
        sets[0].output_count = n;
        rc = load_pbs(model, folder, prefix, n, false, &sets[0].outputs, err);
        free(folder);
        if (rc != ST_PASS) {
            sets[0].output_count = 0;
            goto done;
        }
    } else {
        n_entries = scandir(dir, &entries, only_data_sets, cmp_data_sets);
        if (n_entries <= 0) {
            sb_printf(err, "no test_data_set_* in %s", dir);
            rc = ST_ERROR;
            goto done;
        }
        sets = calloc((size_t)n_entries, sizeof *sets);
        if (!sets) {
            sb_printf(err, "out of memory");
            rc = ST_ERROR;
            goto done;
        }
        for (int k = 0; k < n_entries; k++) {
            char *sd = path_join(dir, entries[k]->d_name);
            if (!sd) {
                sb_printf(err, "out of memory");
                rc = ST_ERROR;
                goto done;
            }
            data_set *ds = &sets[set_count++];
            size_t ni = count_pb(sd, "input_"), no = count_pb(sd, "output_");
            if (ni > nin) {
                sb_printf(err, "%s has %zu inputs, the model has %zu", entries[k]->d_name, ni, nin);
                rc = ST_ERROR;
            }
            if (rc == ST_PASS) {
                rc = load_pbs(model, sd, "input_", ni, true, &ds->inputs, err);
                if (rc == ST_PASS) ds->input_count = ni;
            }
            if (rc == ST_PASS) {
                rc = load_pbs(model, sd, "output_", no, false, &ds->outputs, err);
                if (rc == ST_PASS) ds->output_count = no;
            }
            if (rc == ST_PASS && no > nout) {
                sb_printf(err, "%s has %zu outputs, the model has %zu", entries[k]->d_name, no,
                          nout);
                rc = ST_ERROR;
            }
            free(sd);
            if (rc != ST_PASS) goto done;
        }
    }

    onyx_session_options *opts = NULL;
    st = onyx_session_options_create(&opts);
    if (st == ONYX_OK) st = onyx_session_options_set_devices(opts, o->device);
    if (st == ONYX_OK) st = onyx_session_options_set_threads(opts, o->jobs > 1 ? 1 : 0);
    if (st == ONYX_OK) st = onyx_session_options_set_optimization(opts, optimization_level(o));
    for (size_t i = 0; st == ONYX_OK && !o->no_examples && i < sets[0].input_count; i++)
        st = onyx_session_options_add_example(opts, names[i], sets[0].inputs[i]);
    /* the session takes the model over, as the Python API's does (weights held once, as packed) */
    if (st == ONYX_OK) {
        st = onyx_prepare_session_owning(model, opts, &rep);
        model = NULL;
    }
    onyx_session_options_free(opts);
    if (st != ONYX_OK) {
        rc = fail_api(err, st, "prepare");
        goto done;
    }
    draw_kind draw = find_draw(base_name(dir));
    for (size_t k = 0; k < set_count; k++) {
        data_set *ds = &sets[k];
        size_t out_count = 0;
        onyx_value **outs = NULL;
        st = onyx_rep_run(rep, ds->input_count, (const char *const *)names,
                          (const onyx_value *const *)ds->inputs, &out_count, &outs);
        if (st != ONYX_OK) {
            rc = fail_api(err, st, "run");
            if (set_count > 1) sb_printf(err, " [data set %zu]", k);
            goto done;
        }
        if (out_count != ds->output_count) {
            sb_printf(err, "got %zu outputs, expected %zu", out_count, ds->output_count);
            rc = ST_FAIL;
        }
        for (size_t i = 0; rc == ST_PASS && i < out_count; i++) {
            onyx_io_info info;
            char where[512];
            if (onyx_rep_output(rep, i, &info) == ONYX_OK && info.name)
                snprintf(where, sizeof where, "output %zu '%s'", i, info.name);
            else snprintf(where, sizeof where, "output %zu", i);
            if (set_count > 1) {
                size_t l = strlen(where);
                snprintf(where + l, sizeof where - l, " (data set %zu)", k);
            }
            if (draw != DRAW_NONE && i == 0)
                rc = check_bernoulli(rep, ds, names, outs[0], ds->outputs[0], draw, err);
            else if (!compare_value(outs[i], ds->outputs[i], tol, where, err))
                rc = ST_FAIL;
        }
        onyx_values_free(outs, out_count);
        if (rc != ST_PASS) goto done;
    }

done:
    for (size_t k = 0; k < set_count; k++) data_set_free(&sets[k]);
    free(sets);
    for (int k = 0; k < n_entries; k++) free(entries[k]);
    free(entries);
    onyx_rep_free(rep);
    onyx_model_free(model);
    free(names);
    free(json_path);
    free(json);
    free(url);
    free(model_path);
    free(expected_prefix);
    return rc;
}

/* ---------------------------------------------------------------- child processes */

typedef struct slot {
    bool used;
    size_t test;
    pid_t pid;
    int fd_result, fd_log; /* -1 once at EOF */
    double start;
    bool timed_out;
    sbuf result, log;
} slot;

static int write_all(int fd, const char *data, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, data, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        data += w;
        n -= (size_t)w;
    }
    return 0;
}

/* The child: runs the test, writes "<status> <ms>\n<message>" to fd, and exits through exit() so
 * that sanitizer leak checks run in it. */
static void child_main(const test *t, const options *o, int fd) {
    sbuf err = {0};
    double t0 = tool_now_ms();
    int rc = run_test(t->dir, o, &err);
    double ms = tool_now_ms() - t0;
    char head[64];
    int n = snprintf(head, sizeof head, "%d %.3f\n", rc, ms);
    size_t mlen = err.len > MAX_MESSAGE ? MAX_MESSAGE : err.len;
    int bad = write_all(fd, head, (size_t)n) || write_all(fd, sb_str(&err), mlen);
    sb_free(&err);
    close(fd);
    fflush(NULL);
    exit(bad ? 3 : 0);
}

static bool read_some(int *fd, sbuf *into) {
    char buf[8192];
    ssize_t n = read(*fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
    if (n <= 0) {
        close(*fd);
        *fd = -1;
        return false;
    }
    if (into->len < 4 * MAX_MESSAGE) sb_append(into, buf, (size_t)n);
    return true;
}

/* The line of a child's stderr that says most about a crash: a sanitizer's summary line when
 * there is one, else the last non-empty line. */
static char *crash_line(const char *log) {
    const char *keys[] = {"runtime error:", "ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                          "SUMMARY:", NULL};
    for (int k = 0; keys[k]; k++) {
        const char *p = strstr(log, keys[k]);
        if (p) {
            const char *b = p;
            while (b > log && b[-1] != '\n') b--;
            return strndup(b, strcspn(b, "\n"));
        }
    }
    const char *end = log + strlen(log);
    while (end > log && (end[-1] == '\n' || end[-1] == ' ')) end--;
    const char *b = end;
    while (b > log && b[-1] != '\n') b--;
    return strndup(b, (size_t)(end - b));
}

static void finish_slot(slot *s, test *t, int wstatus, const options *o) {
    double elapsed = tool_now_ms() - s->start;
    sbuf msg = {0};
    int status = ST_ERROR;
    double ms = elapsed;
    const char *res = sb_str(&s->result);
    int code = -1;
    double child_ms = 0;
    bool have_result = sscanf(res, "%d %lf", &code, &child_ms) == 2 && code >= ST_PASS &&
                       code <= ST_ERROR && strchr(res, '\n');
    if (s->timed_out) {
        sb_printf(&msg, "TIMEOUT after %d s (killed)", o->timeout_s);
    } else if (WIFSIGNALED(wstatus)) {
        int sig = WTERMSIG(wstatus);
        char *line = crash_line(sb_str(&s->log));
        sb_printf(&msg, "crashed with signal %d (%s)%s%s", sig, strsignal(sig),
                  line && *line ? ": " : "", line ? line : "");
        free(line);
    } else if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) != 0) {
        char *line = crash_line(sb_str(&s->log));
        sb_printf(&msg, "exited with status %d%s%s", WEXITSTATUS(wstatus),
                  line && *line ? ": " : "", line ? line : "");
        free(line);
    } else if (!have_result) {
        sb_printf(&msg, "exited without reporting a result");
    } else {
        status = code;
        ms = child_ms;
        sb_printf(&msg, "%s", strchr(res, '\n') + 1);
    }
    /* Whatever the child wrote to stderr (library logs, sanitizer reports) goes with -v. */
    if (o->verbose && s->log.len) sb_printf(&msg, "\n--- stderr ---\n%s", sb_str(&s->log));
    t->status = status;
    t->ms = ms;
    t->message = msg.buf ? msg.buf : strdup("");
    t->done = true;
    sb_free(&s->result);
    sb_free(&s->log);
    s->used = false;
}

static int spawn(slot *slots, int nslots, slot *s, size_t index, test *t, const options *o) {
    int pr[2], pl[2];
    if (pipe(pr) != 0) return -1;
    if (pipe(pl) != 0) {
        close(pr[0]);
        close(pr[1]);
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(pr[0]);
        close(pr[1]);
        close(pl[0]);
        close(pl[1]);
        return -1;
    }
    if (pid == 0) {
        for (int i = 0; i < nslots; i++) {
            if (!slots[i].used) continue;
            if (slots[i].fd_result >= 0) close(slots[i].fd_result);
            if (slots[i].fd_log >= 0) close(slots[i].fd_log);
        }
        close(pr[0]);
        close(pl[0]);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) {
            dup2(devnull, STDIN_FILENO);
            close(devnull);
        }
        dup2(pl[1], STDOUT_FILENO);
        dup2(pl[1], STDERR_FILENO);
        close(pl[1]);
        signal(SIGPIPE, SIG_DFL);
        child_main(t, o, pr[1]);
    }
    close(pr[1]);
    close(pl[1]);
    *s = (slot){.used = true,
                .test = index,
                .pid = pid,
                .fd_result = pr[0],
                .fd_log = pl[0],
                .start = tool_now_ms()};
    return 0;
}

/* ---------------------------------------------------------------- output */

static size_t first_line_len(const char *s) { return strcspn(s, "\n"); }

static void print_result(const test *t, int width, const options *o) {
    const char *msg = t->message ? t->message : "";
    if (o->quiet && (t->status == ST_PASS || t->status == ST_XFAIL)) return;
    printf("%-5s  %-*s  %8.2fms", status_names[t->status], width, t->name, t->ms);
    if (t->status == ST_XPASS) {
        printf("  passes but is listed as an expected failure (%s): remove it from the list",
               t->reason ? t->reason : "");
    } else if (*msg) {
        printf("  %.*s", (int)first_line_len(msg), msg);
    }
    printf("\n");
    if (o->verbose && strchr(msg, '\n')) {
        for (const char *p = strchr(msg, '\n') + 1; *p;) {
            size_t n = first_line_len(p);
            printf("         %.*s\n", (int)n, p);
            p += n;
            if (*p) p++;
        }
    }
    fflush(stdout);
}

static void json_escape(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned c = *p;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c == '\n') fputs("\\n", f);
        else if (c == '\t') fputs("\\t", f);
        else if (c < 0x20 || c == 0x7f) fprintf(f, "\\u%04x", c);
        else if (c < 0x80) fputc((int)c, f);
        else {
            /* Pass valid UTF-8 sequences through; replace stray bytes so the file stays valid. */
            int len = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
            bool ok = len > 0;
            for (int k = 1; ok && k < len; k++) ok = (p[k] & 0xc0) == 0x80;
            if (ok) {
                fwrite(p, 1, (size_t)len, f);
                p += len - 1;
            } else {
                fputs("\\ufffd", f);
            }
        }
    }
    fputc('"', f);
}

static int write_report(const char *path, const test_list *tests, const options *o, int passed,
                        int failed, int skipped) {
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "onyx-test-runner: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    fprintf(f, "{\n  \"device\": ");
    json_escape(f, o->device);
    fprintf(f, ",\n  \"passed\": %d,\n  \"failed\": %d,\n  \"skipped\": %d,\n  \"tests\": [",
            passed, failed, skipped);
    for (size_t i = 0; i < tests->count; i++) {
        const test *t = &tests->items[i];
        fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
        json_escape(f, t->name);
        fprintf(f, ", \"status\": \"%s\", \"ms\": %.3f, \"message\": ", status_names[t->status],
                t->ms);
        json_escape(f, t->message ? t->message : "");
        fprintf(f, "}");
    }
    fprintf(f, "\n  ]\n}\n");
    return fclose(f) == 0 ? 0 : -1;
}

static int cmp_names(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Writes the tests that fail now as an expected-failure list. Entries of the -x list that were
 * not run are kept with their reasons, so a filtered run updates only what it ran. */
static int write_expected(const char *path, const test_list *tests, const expected_list *old) {
    size_t cap = tests->count + old->count, n = 0;
    char **lines = calloc(cap ? cap : 1, sizeof *lines);
    int rc = 0;
    if (!lines) return -1;
    for (size_t i = 0; i < tests->count; i++) {
        const test *t = &tests->items[i];
        if (t->status != ST_FAIL && t->status != ST_ERROR && t->status != ST_XFAIL) continue;
        sbuf line = {0};
        if (t->reason) {
            sb_printf(&line, "%s  # %s", t->name, t->reason);
        } else {
            const char *m = t->message ? t->message : "";
            size_t l = first_line_len(m);
            if (l > 300) l = 300;
            sb_printf(&line, "%s  # %s%.*s", t->name, t->status == ST_FAIL ? "wrong output: " : "",
                      (int)l, m);
            if (l == 0) sb_printf(&line, "fails");
        }
        lines[n++] = line.buf;
    }
    for (size_t i = 0; i < old->count; i++) {
        if (old->items[i].seen) continue;
        sbuf line = {0};
        sb_printf(&line, "%s  # %s", old->items[i].name, old->items[i].reason);
        lines[n++] = line.buf;
    }
    qsort(lines, n, sizeof *lines, cmp_names);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "onyx-test-runner: cannot write %s: %s\n", path, strerror(errno));
        rc = -1;
    } else {
        fprintf(f, "# Tests expected to fail, one per line: test_name  # reason\n"
                   "# (written by onyx-test-runner --write-expected; give each a real reason)\n\n");
        for (size_t i = 0; i < n; i++)
            if (lines[i]) fprintf(f, "%s\n", lines[i]);
        if (fclose(f) != 0) rc = -1;
    }
    for (size_t i = 0; i < n; i++) free(lines[i]);
    free(lines);
    return rc;
}

/* ---------------------------------------------------------------- main */

static void usage(FILE *f) {
    fprintf(
        f, "usage: onyx-test-runner [-d DEVICE] [-O LEVEL] [-f FILTER] [-x EXPECTED_FAILURES] [-j JOBS]\n"
           "                        [--report FILE.json] [--write-expected FILE] [--timeout SEC]\n"
           "                        [--draws FILE] [--no-fork] [--no-examples] [-q] [-v] DIR...\n"
           "  DIR            a data folder of test dirs (.../onnx/backend/test/data/node) or one "
           "test dir\n"
           "  -d DEVICE      CPU (default), CUDA, CUDA:N, TEST, or a priority list (TEST,CPU)\n"
           "  -O LEVEL       graph optimizations: none, basic, all (default)\n"
           "  -f FILTER      substring of the test name, or a glob when it has * ? [\n"
           "  -x FILE        expected failures: 'test_name  # reason' per line\n"
           "  --draws FILE   tests whose outputs are random draws, checked as draws: 'test_name  "
           "bernoulli[-seeded|-inverted]  # reason' per line\n"
           "  -j JOBS        tests run in parallel (default: cores); each test in its own process\n"
           "  --report FILE  JSON report: per test name, status, ms, message\n"
           "  --write-expected FILE  write the failing tests as an expected-failure list\n"
           "  --timeout SEC  per-test limit (default 120); a test past it is killed: ERROR\n"
           "  --no-fork      run tests in this process, one at a time (for debuggers)\n"
           "  --no-examples  prepare without input examples\n"
           "  -q             print only unexpected results and the summary\n"
           "  -v             full error messages and the tests' stderr\n");
}

static int cores(void) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0) return n;
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* Runs a probe in a child so that device initialisation (a CUDA context does not survive fork)
 * never happens in the parent. */
static bool device_usable(const char *device) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return false;
    if (pid == 0) exit(onyx_supports_device(device) ? 0 : 1);
    int ws;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(ws) && WEXITSTATUS(ws) == 0;
}

static int parse_int(const char *s, const char *what, int min) {
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < min || v > 1000000) {
        fprintf(stderr, "onyx-test-runner: %s must be an integer >= %d, got '%s'\n", what, min, s);
        exit(2);
    }
    return (int)v;
}

int main(int argc, char **argv) {
    options o = {.device = "CPU", .jobs = 0, .timeout_s = 120};
    /* Everything is freed on every path: the sanitizer build checks the runner for leaks too.
     * The holders are static because a forked test exits with its parent's state still
     * allocated: LeakSanitizer must find it reachable, whatever registers the compiler used. */
    static test_list tests;
    static expected_list expected;
    static slot *slots;
    static struct pollfd *pfds;
    static slot **owners;
    static const char **dirs;
    size_t ndirs = 0;
    int rc = 2;
    dirs = calloc((size_t)argc, sizeof *dirs);
    if (!dirs) goto done;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has_next = i + 1 < argc;
#define NEXT(what)                                                                                 \
    (has_next ? argv[++i]                                                                          \
              : (fprintf(stderr, "onyx-test-runner: %s needs a value\n", what), usage(stderr),     \
                 free(dirs), exit(2), ""))
        if (!strcmp(a, "-d") || !strcmp(a, "--device")) o.device = NEXT(a);
        else if (!strcmp(a, "-O")) {
            o.optimization = NEXT(a);
            if (strcmp(o.optimization, "none") && strcmp(o.optimization, "basic") &&
                strcmp(o.optimization, "all")) {
                fprintf(stderr, "onyx-test-runner: -O takes none, basic or all\n");
                free(dirs);
                return 2;
            }
        }
        else if (!strcmp(a, "-f") || !strcmp(a, "--filter")) o.filter = NEXT(a);
        else if (!strcmp(a, "-x") || !strcmp(a, "--expected-failures")) o.expected_path = NEXT(a);
        else if (!strcmp(a, "--draws")) o.draws_path = NEXT(a);
        else if (!strcmp(a, "-j") || !strcmp(a, "--jobs")) o.jobs = parse_int(NEXT(a), "-j", 1);
        else if (!strncmp(a, "-j", 2) && a[2]) o.jobs = parse_int(a + 2, "-j", 1);
        else if (!strcmp(a, "--report")) o.report_path = NEXT(a);
        else if (!strcmp(a, "--write-expected")) o.write_expected_path = NEXT(a);
        else if (!strcmp(a, "--timeout")) o.timeout_s = parse_int(NEXT(a), "--timeout", 1);
        else if (!strcmp(a, "--no-fork")) o.no_fork = true;
        else if (!strcmp(a, "--no-examples")) o.no_examples = true;
        else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) o.verbose = true;
        else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) o.quiet = true;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            rc = 0;
            goto done;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "onyx-test-runner: unknown option %s\n", a);
            usage(stderr);
            goto done;
        } else dirs[ndirs++] = a;
#undef NEXT
    }
    if (ndirs == 0) {
        usage(stderr);
        goto done;
    }
    if (o.jobs == 0) o.jobs = cores();
    if (o.no_fork) o.jobs = 1;

    /* With several tests in parallel each child must stay on one core. The prepare option says so
     * for onyx's own loops, but OpenMP and OpenBLAS read their thread counts from the environment
     * when they load, so the runner restarts itself once with those set. */
    if (o.jobs > 1 && !getenv("OMP_NUM_THREADS")) {
        setenv("OMP_NUM_THREADS", "1", 1);
        if (!getenv("OPENBLAS_NUM_THREADS")) setenv("OPENBLAS_NUM_THREADS", "1", 1);
        execv("/proc/self/exe", argv);
        /* If that fails the run still works, only with more threads than cores. */
        fprintf(stderr, "onyx-test-runner: warning: cannot restart with OMP_NUM_THREADS=1: %s\n",
                strerror(errno));
    }

    for (size_t i = 0; i < ndirs; i++) {
        if (!path_exists(dirs[i], true)) {
            fprintf(stderr, "onyx-test-runner: %s is not a directory\n", dirs[i]);
            goto done;
        }
        size_t before = tests.count;
        if (collect(&tests, dirs[i], o.filter, 0) != 0) {
            fprintf(stderr, "onyx-test-runner: out of memory listing %s\n", dirs[i]);
            goto done;
        }
        if (tests.count == before && !o.filter)
            fprintf(stderr, "onyx-test-runner: warning: no test dirs in %s\n", dirs[i]);
    }

    if (o.expected_path && load_expected(o.expected_path, NULL, &expected) != 0) goto done;
    if (o.draws_path && load_expected(o.draws_path, draw_kind_names, &draws) != 0) goto done;
    for (size_t i = 0; i < tests.count; i++) {
        expected_entry *e = find_expected(&expected, tests.items[i].name);
        if (e) {
            e->seen = true;
            tests.items[i].reason = e->reason;
        }
    }

    if (!device_usable(o.device)) {
        fprintf(stderr, "onyx-test-runner: device '%s' is not usable on this machine\n", o.device);
        goto done;
    }

    int width = 10;
    for (size_t i = 0; i < tests.count; i++) {
        int l = (int)strlen(tests.items[i].name);
        if (l > width) width = l;
    }
    if (width > 60) width = 60;

    signal(SIGPIPE, SIG_IGN);
    double t_start = tool_now_ms();
    size_t next = 0, printed = 0;
    int passed = 0, failed = 0, skipped = 0;
    slots = calloc((size_t)o.jobs, sizeof *slots);
    pfds = calloc(2 * (size_t)o.jobs, sizeof *pfds);
    owners = calloc(2 * (size_t)o.jobs, sizeof *owners);
    if (!slots || !pfds || !owners) goto done;
    int running = 0;

    while (printed < tests.count) {
        if (o.no_fork) {
            test *t = &tests.items[next++];
            sbuf err = {0};
            double t0 = tool_now_ms();
            t->status = run_test(t->dir, &o, &err);
            t->ms = tool_now_ms() - t0;
            t->message = err.buf ? err.buf : strdup("");
            t->done = true;
        } else {
            while (running < o.jobs && next < tests.count) {
                slot *s = NULL;
                for (int k = 0; k < o.jobs; k++)
                    if (!slots[k].used) s = &slots[k];
                if (spawn(slots, o.jobs, s, next, &tests.items[next], &o) != 0) {
                    test *t = &tests.items[next];
                    t->status = ST_ERROR;
                    t->message = strdup("cannot start a process for the test (fork/pipe failed)");
                    t->done = true;
                } else {
                    running++;
                }
                next++;
            }
            int np = 0;
            for (int k = 0; k < o.jobs; k++) {
                slot *s = &slots[k];
                if (!s->used) continue;
                if (s->fd_result >= 0) {
                    pfds[np] = (struct pollfd){.fd = s->fd_result, .events = POLLIN};
                    owners[np++] = s;
                }
                if (s->fd_log >= 0) {
                    pfds[np] = (struct pollfd){.fd = s->fd_log, .events = POLLIN};
                    owners[np++] = s;
                }
            }
            if (np > 0 && poll(pfds, (nfds_t)np, 100) > 0) {
                for (int k = 0; k < np; k++) {
                    if (!(pfds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
                    slot *s = owners[k];
                    if (pfds[k].fd == s->fd_result) read_some(&s->fd_result, &s->result);
                    else if (pfds[k].fd == s->fd_log) read_some(&s->fd_log, &s->log);
                }
            } else if (np == 0 && running > 0) {
                usleep(10000); /* pipes closed, waiting for the process to end */
            }
            for (int k = 0; k < o.jobs; k++) {
                slot *s = &slots[k];
                if (!s->used) continue;
                int ws = 0;
                pid_t r = (s->fd_result < 0 && s->fd_log < 0) ? waitpid(s->pid, &ws, WNOHANG) : 0;
                if (r == 0 && tool_now_ms() - s->start > o.timeout_s * 1000.0) {
                    kill(s->pid, SIGKILL);
                    s->timed_out = true;
                    while ((r = waitpid(s->pid, &ws, 0)) < 0 && errno == EINTR) {
                    }
                    /* Drain what it wrote so far; the pipes are closed by its death. */
                    while (s->fd_result >= 0 && read_some(&s->fd_result, &s->result)) {
                    }
                    while (s->fd_log >= 0 && read_some(&s->fd_log, &s->log)) {
                    }
                }
                if (r == s->pid || r < 0) {
                    if (s->fd_result >= 0) close(s->fd_result);
                    if (s->fd_log >= 0) close(s->fd_log);
                    finish_slot(s, &tests.items[s->test], ws, &o);
                    running--;
                }
            }
        }
        /* Print in test order, as soon as every earlier test is done. */
        while (printed < tests.count && tests.items[printed].done) {
            test *t = &tests.items[printed++];
            bool bad = t->status == ST_FAIL || t->status == ST_ERROR;
            if (t->reason) t->status = bad ? ST_XFAIL : ST_XPASS;
            if (t->status == ST_PASS) passed++;
            else if (t->status == ST_XFAIL) skipped++;
            else failed++;
            print_result(t, width, &o);
        }
    }

    double secs = (tool_now_ms() - t_start) / 1000.0;
    int xpass = 0, xfail = skipped;
    for (size_t i = 0; i < tests.count; i++) xpass += tests.items[i].status == ST_XPASS;
    printf("-- %zu test%s in %.1f s on %s with %d job%s: %d unexpected failure%s, %d unexpected "
           "pass%s, %d expected failure%s\n",
           tests.count, tests.count == 1 ? "" : "s", secs, o.device, o.jobs, o.jobs == 1 ? "" : "s",
           failed - xpass, failed - xpass == 1 ? "" : "s", xpass, xpass == 1 ? "" : "es", xfail,
           xfail == 1 ? "" : "s");
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    fflush(stdout);

    rc = failed > 0 ? 1 : 0;
    if (o.report_path && write_report(o.report_path, &tests, &o, passed, failed, skipped) != 0)
        rc = 2;
    if (o.write_expected_path && write_expected(o.write_expected_path, &tests, &expected) != 0)
        rc = 2;

done:
    for (size_t i = 0; i < tests.count; i++) {
        free(tests.items[i].name);
        free(tests.items[i].dir);
        free(tests.items[i].message);
    }
    free(tests.items);
    for (expected_list *l = &expected; l; l = l == &expected ? &draws : NULL) {
        for (size_t i = 0; i < l->count; i++) {
            free(l->items[i].name);
            free(l->items[i].reason);
        }
        free(l->items);
    }
    free(slots);
    free(pfds);
    free(owners);
    free(dirs);
    return rc;
}
