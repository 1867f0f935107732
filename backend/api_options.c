/* The public session and run options: opaque objects with one setter per setting, so that
 * settings can be added without changing any struct a caller compiles against. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"

onyx_status onyx_session_options_create(onyx_session_options **out) {
    if (!out) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "session options: out is NULL");
    onyx_session_options *o = calloc(1, sizeof *o);
    if (!o) return onyx_oom("session options");
    o->device = DEVICE_CPU;
    o->optimization = ONYX_OPT_ALL;
    o->blocked_layouts = true;
    o->half_as_float = true;
    o->winograd = true;
    o->device_graphs = true;
    o->allow_spinning = true;
    o->spin_us = PARALLEL_DEFAULT_SPIN_US;
    o->doze_us = PARALLEL_DEFAULT_DOZE_US;
    o->log.level = ONYX_LOG_WARNING;
    *out = o;
    return ONYX_OK;
}

void onyx_session_options_free(onyx_session_options *o) {
    if (!o) return;
    for (int i = 0; i < o->n_examples; i++) {
        free(o->examples[i].name);
        type_release(&o->examples[i].type);
    }
    free(o->examples);
    free(o->profile_path);
    free(o->newer_opsets);
    free(o->optimized_path);
    free(o->optimized_external);
    free(o);
}

#define NEED_OPTIONS(o)                                                                            \
    do {                                                                                           \
        if (!(o)) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "options are NULL");                \
    } while (0)

onyx_status onyx_session_options_set_devices(onyx_session_options *o, const char *devices) {
    NEED_OPTIONS(o);
    device_kind kind;
    int index;
    bool cpu_first;
    TRY(device_parse_list(devices, &kind, &index, &cpu_first));
    o->device = kind;
    o->device_index = index;
    o->cpu_first = cpu_first;
    return ONYX_OK;
}

onyx_status onyx_session_options_set_threads(onyx_session_options *o, int threads) {
    NEED_OPTIONS(o);
    /* a count past the CPUs is kept as asked: prepare runs it on all of them and logs that */
    if (threads < 0)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT,
                          "session options: threads must be >= 0 (0: all CPUs), got %d", threads);
    o->threads = threads;
    return ONYX_OK;
}

onyx_status onyx_session_options_set_optimization(onyx_session_options *o,
                                                  onyx_optimization_level level) {
    NEED_OPTIONS(o);
    if (level < ONYX_OPT_NONE || level > ONYX_OPT_ALL)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "unknown optimization level %d", (int)level);
    o->optimization = level;
    return ONYX_OK;
}

onyx_status onyx_session_options_set_profiling(onyx_session_options *o, const char *trace_path) {
    NEED_OPTIONS(o);
    char *copy = NULL;
    if (trace_path) {
        if (!*trace_path)
            return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "profiling: the trace path is empty");
        if (!(copy = strdup(trace_path))) return onyx_oom("session options");
    }
    free(o->profile_path);
    o->profile_path = copy;
    return ONYX_OK;
}

onyx_status onyx_session_options_set_optimized_model(onyx_session_options *o, const char *path,
                                                     const char *external_file,
                                                     size_t external_min_bytes) {
    NEED_OPTIONS(o);
    char *path_copy = NULL, *external_copy = NULL;
    if (path) {
        if (!*path)
            return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "optimized model: the path is empty");
        path_copy = strdup(path);
        external_copy = external_file && *external_file ? strdup(external_file) : NULL;
        if (!path_copy || (external_file && *external_file && !external_copy)) {
            free(path_copy);
            free(external_copy);
            return onyx_oom("session options");
        }
    }
    free(o->optimized_path);
    free(o->optimized_external);
    o->optimized_path = path_copy;
    o->optimized_external = external_copy;
    o->optimized_external_min = external_min_bytes;
    return ONYX_OK;
}

onyx_status onyx_session_options_set_log(onyx_session_options *o, onyx_log_level level,
                                         onyx_log_fn fn, void *user) {
    NEED_OPTIONS(o);
    if (level < ONYX_LOG_VERBOSE || level > ONYX_LOG_FATAL)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "unknown log level %d", (int)level);
    o->log = (exec_log){.fn = fn, .user = user, .level = level};
    return ONYX_OK;
}

onyx_status onyx_session_options_set_memory_limit(onyx_session_options *o, size_t bytes) {
    NEED_OPTIONS(o);
    o->memory_limit = bytes;
    return ONYX_OK;
}

onyx_status onyx_session_options_add_example(onyx_session_options *o, const char *input_name,
                                             const onyx_value *example) {
    NEED_OPTIONS(o);
    if (!example) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "input example is NULL");
    session_example *grown = realloc(o->examples, ((size_t)o->n_examples + 1) * sizeof *grown);
    if (!grown) return onyx_oom("session options");
    o->examples = grown;
    session_example *e = &o->examples[o->n_examples];
    e->name = NULL;
    type_init(&e->type);
    if (input_name && !(e->name = strdup(input_name))) return onyx_oom("session options");
    onyx_status st = type_of_value(&e->type, example);
    if (st != ONYX_OK) {
        free(e->name);
        return st;
    }
    o->n_examples++;
    return ONYX_OK;
}

/* The session config entries onyx reads: each a switch, "0" or "1". Every key's meaning, values
 * and default are documented in include/onyx.h (onyx_session_options_set_config): a key added
 * here is added there too. */
static const struct {
    const char *key;
    size_t field; /* offset of its bool in onyx_session_options */
} config_switches[] = {
    {"optimization.blocked_layouts", offsetof(onyx_session_options, blocked_layouts)},
    {"optimization.float16_as_float32", offsetof(onyx_session_options, half_as_float)},
    {"optimization.bfloat16", offsetof(onyx_session_options, bf16)},
    {"optimization.winograd", offsetof(onyx_session_options, winograd)},
    {"device.graphs", offsetof(onyx_session_options, device_graphs)},
    {"session.intra_op.allow_spinning", offsetof(onyx_session_options, allow_spinning)},
};

/* "onyx.allow_newer_opsets": the domains (comma-separated; "ai.onnx" for the default one) whose
 * opset past the newest onyx implements the user vouches for (backend/api_run.c). */
#define CONFIG_NEWER_OPSETS "onyx.allow_newer_opsets"
/* "onyx.intra_op.spin_us" and "onyx.intra_op.doze_us": how long a rep's threads spin, and then
 * doze, after a run before they sleep (core/parallel.h). */
#define CONFIG_SPIN_US "onyx.intra_op.spin_us"
#define CONFIG_DOZE_US "onyx.intra_op.doze_us"
#define WAIT_US_MAX 10000000 /* 10 s: past that, waiting is burning cores, not waiting */

/* A decimal count of microseconds, 0 to WAIT_US_MAX. */
static onyx_status parse_wait_us(const char *key, const char *value, int64_t *out) {
    char *end;
    errno = 0;
    long long us = value[0] >= '0' && value[0] <= '9' ? strtoll(value, &end, 10) : -1;
    if (us < 0 || *end || errno || us > WAIT_US_MAX)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT,
                          "config '%s' takes microseconds from 0 to %d, got '%s'", key,
                          WAIT_US_MAX, value);
    *out = us;
    return ONYX_OK;
}

onyx_status onyx_session_options_set_config(onyx_session_options *o, const char *key,
                                            const char *value) {
    NEED_OPTIONS(o);
    if (!key || !value) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "config key or value is NULL");
    if (!strcmp(key, CONFIG_NEWER_OPSETS)) {
        char *copy = *value ? strdup(value) : NULL;
        if (*value && !copy) return onyx_oom("session options");
        free(o->newer_opsets);
        o->newer_opsets = copy;
        return ONYX_OK;
    }
    if (!strcmp(key, CONFIG_SPIN_US)) return parse_wait_us(key, value, &o->spin_us);
    if (!strcmp(key, CONFIG_DOZE_US)) return parse_wait_us(key, value, &o->doze_us);
    for (size_t i = 0; i < sizeof config_switches / sizeof *config_switches; i++) {
        if (strcmp(key, config_switches[i].key)) continue;
        if (strcmp(value, "0") && strcmp(value, "1"))
            return onyx_error(ONYX_ERR_INVALID_ARGUMENT,
                              "config '%s' takes \"0\" or \"1\", got '%s'", key, value);
        *(bool *)((char *)o + config_switches[i].field) = value[0] == '1';
        return ONYX_OK;
    }
    char known[256] = "";
    size_t len = 0;
    for (size_t i = 0; i < sizeof config_switches / sizeof *config_switches; i++) {
        int n = snprintf(known + len, sizeof known - len, "%s%s", i ? ", " : "",
                         config_switches[i].key);
        if (n < 0 || (size_t)n >= sizeof known - len) break;
        len += (size_t)n;
    }
    return onyx_error(ONYX_ERR_INVALID_ARGUMENT,
                      "unknown session config key '%s' (known: %s, %s, %s, %s)", key, known,
                      CONFIG_NEWER_OPSETS, CONFIG_SPIN_US, CONFIG_DOZE_US);
}

/* ------------------------------------------------------------------ run options */

onyx_status onyx_run_options_create(onyx_run_options **out) {
    if (!out) return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "run options: out is NULL");
    onyx_run_options *o = calloc(1, sizeof *o);
    if (!o) return onyx_oom("run options");
    atomic_init(&o->terminate, false);
    *out = o;
    return ONYX_OK;
}

void onyx_run_options_free(onyx_run_options *o) {
    if (!o) return;
    free(o->tag);
    free(o);
}

onyx_status onyx_run_options_set_terminate(onyx_run_options *o, bool terminate) {
    NEED_OPTIONS(o);
    atomic_store(&o->terminate, terminate);
    return ONYX_OK;
}

onyx_status onyx_run_options_set_timeout(onyx_run_options *o, double seconds) {
    NEED_OPTIONS(o);
    if (!(seconds >= 0) || !isfinite(seconds) || seconds > 1e9)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "timeout must be 0 to 1e9 seconds, got %g",
                          seconds);
    o->timeout = seconds;
    return ONYX_OK;
}

onyx_status onyx_run_options_set_max_iterations(onyx_run_options *o, int64_t iterations) {
    NEED_OPTIONS(o);
    if (iterations < 0)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT, "max iterations must be >= 0, got %lld",
                          (long long)iterations);
    o->max_iterations = iterations;
    return ONYX_OK;
}

onyx_status onyx_run_options_set_output_device(onyx_run_options *o, const char *device) {
    NEED_OPTIONS(o);
    device_kind kind;
    int index;
    TRY(backend_device_parse(device, &kind, &index));
    o->output_device = kind;
    o->output_device_index = index;
    return ONYX_OK;
}

onyx_status onyx_run_options_set_tag(onyx_run_options *o, const char *tag) {
    NEED_OPTIONS(o);
    /* a profile event is one line of at most 4 KiB: a longer tag would drop every event */
    if (tag && strlen(tag) > ONYX_RUN_TAG_MAX)
        return onyx_error(ONYX_ERR_INVALID_ARGUMENT,
                          "run options: the tag is %zu bytes, at most %d", strlen(tag),
                          ONYX_RUN_TAG_MAX);
    char *copy = NULL;
    if (tag && !(copy = strdup(tag))) return onyx_oom("run options");
    free(o->tag);
    o->tag = copy;
    return ONYX_OK;
}
