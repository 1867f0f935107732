/* Schema of Einsum and the equation parser its kernel shares (numpy's einsum: explicit "->" or
 * implicit output, "..." broadcasting, repeated labels taking diagonals). */
#include "ops/math/einsum.h"

#include <string.h>

#define EINSUM_TYPES (DT_BIT(ONYX_FLOAT) | DT_BIT(ONYX_DOUBLE) | DT_BIT(ONYX_FLOAT16) | DT_INTS)

static int letter_id(char ch) {
    if (ch >= 'a' && ch <= 'z') return ch - 'a' + 26;
    if (ch >= 'A' && ch <= 'Z') return ch - 'A';
    return -1;
}

/* Splits one term into label ids (letters) with the ellipsis position marked -2. */
static onyx_status parse_term(const char *s, size_t len, int *labs, int *n, bool *ell) {
    *n = 0;
    *ell = false;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == ' ') continue;
        if (s[i] == '.') {
            if (*ell || i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.')
                return onyx_error(ONYX_ERR_INVALID_MODEL, "equation: malformed or repeated '...'");
            *ell = true;
            i += 2;
            if (*n >= ONYX_MAX_RANK)
                return onyx_error(ONYX_ERR_INVALID_MODEL, "equation: a term has more than %d "
                                  "labels", ONYX_MAX_RANK);
            labs[(*n)++] = -2;
            continue;
        }
        int id = letter_id(s[i]);
        if (id < 0)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "equation: unexpected character '%c'", s[i]);
        if (*n >= ONYX_MAX_RANK)
            return onyx_error(ONYX_ERR_INVALID_MODEL, "equation: a term has more than %d labels",
                              ONYX_MAX_RANK);
        labs[(*n)++] = id;
    }
    return ONYX_OK;
}

static onyx_status set_dim(einsum_spec *sp, int lab, int64_t d, bool broadcast) {
    int64_t *cur = &sp->dim[lab];
    if (d < 0) return ONYX_OK;
    if (*cur < 0 || (broadcast && *cur == 1)) {
        *cur = d;
        return ONYX_OK;
    }
    if (d == *cur || (broadcast && d == 1)) return ONYX_OK;
    if (lab < 52)
        return onyx_error(ONYX_ERR_SHAPE, "label '%c' has sizes %lld and %lld",
                          lab < 26 ? 'A' + lab : 'a' + lab - 26, (long long)*cur, (long long)d);
    return onyx_error(ONYX_ERR_SHAPE, "dims under '...' have sizes %lld and %lld, which do not "
                      "broadcast", (long long)*cur, (long long)d);
}

onyx_status einsum_parse(const char *eq, int n_in, const int *ranks, const int64_t *const *dims,
                         einsum_spec *sp) {
    memset(sp, 0, sizeof *sp);
    if (n_in < 1 || n_in > EINSUM_MAX_INPUTS)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "Einsum with %d inputs (onyx takes 1..%d)", n_in,
                          EINSUM_MAX_INPUTS);
    sp->n_in = n_in;
    for (int l = 0; l < EINSUM_MAX_LABELS; l++) sp->dim[l] = -1;
    const char *arrow = strstr(eq, "->");
    size_t lhs_len = arrow ? (size_t)(arrow - eq) : strlen(eq);
    int count[52] = {0};
    int ell = 0; /* dims under "...", the most any input has */
    int raw[EINSUM_MAX_INPUTS][ONYX_MAX_RANK], nraw[EINSUM_MAX_INPUTS];
    bool has_ell[EINSUM_MAX_INPUTS];
    size_t pos = 0;
    for (int i = 0; i < n_in; i++) {
        const char *comma = memchr(eq + pos, ',', lhs_len - pos);
        size_t end = comma ? (size_t)(comma - eq) : lhs_len;
        if ((i < n_in - 1) != (comma != NULL))
            return onyx_error(ONYX_ERR_INVALID_MODEL, "equation '%s' has a term count that is "
                              "not the %d inputs", eq, n_in);
        TRY(parse_term(eq + pos, end - pos, raw[i], &nraw[i], &has_ell[i]));
        pos = end + 1;
        int letters = nraw[i] - (has_ell[i] ? 1 : 0);
        if (ranks[i] < letters || (!has_ell[i] && ranks[i] != letters))
            return onyx_error(ONYX_ERR_SHAPE, "input %d has rank %d, but its term has %d labels",
                              i, ranks[i], letters);
        if (has_ell[i] && ranks[i] - letters > ell) ell = ranks[i] - letters;
        for (int k = 0; k < nraw[i]; k++)
            if (raw[i][k] >= 0) count[raw[i][k]]++;
    }
    /* expand each input's "..." into the last dims of the ellipsis block */
    bool unknown[EINSUM_MAX_LABELS] = {false};
    for (int i = 0; i < n_in; i++) {
        int letters = nraw[i] - (has_ell[i] ? 1 : 0), e = ranks[i] - letters, n = 0;
        for (int k = 0; k < nraw[i]; k++) {
            if (raw[i][k] != -2) {
                sp->in_lab[i][n++] = raw[i][k];
                continue;
            }
            for (int q = 0; q < e; q++) sp->in_lab[i][n++] = 52 + ell - e + q;
        }
        sp->in_len[i] = n;
        for (int k = 0; k < n; k++) {
            TRY(set_dim(sp, sp->in_lab[i][k], dims[i][k], sp->in_lab[i][k] >= 52));
            if (dims[i][k] < 0) unknown[sp->in_lab[i][k]] = true;
        }
    }
    /* a broadcast dim seen as 1 and as unknown is whatever the unknown one turns out to be */
    for (int l = 52; l < EINSUM_MAX_LABELS; l++)
        if (unknown[l] && sp->dim[l] == 1) sp->dim[l] = -1;
    bool used[EINSUM_MAX_LABELS] = {false};
    if (arrow) {
        int labs[ONYX_MAX_RANK], n;
        bool oell;
        TRY(parse_term(arrow + 2, strlen(arrow + 2), labs, &n, &oell));
        for (int k = 0; k < n; k++) {
            if (labs[k] == -2) {
                for (int q = 0; q < ell; q++) {
                    if (sp->out_len >= ONYX_MAX_RANK)
                        return onyx_error(ONYX_ERR_UNSUPPORTED, "equation: output rank above %d",
                                          ONYX_MAX_RANK);
                    sp->out_lab[sp->out_len++] = 52 + q;
                }
                continue;
            }
            if (count[labs[k]] == 0 || used[labs[k]])
                return onyx_error(ONYX_ERR_INVALID_MODEL, "equation '%s': output label '%c' is "
                                  "not in any input or repeated", eq,
                                  labs[k] < 26 ? 'A' + labs[k] : 'a' + labs[k] - 26);
            if (sp->out_len >= ONYX_MAX_RANK)
                return onyx_error(ONYX_ERR_UNSUPPORTED, "equation: output rank above %d",
                                  ONYX_MAX_RANK);
            used[labs[k]] = true;
            sp->out_lab[sp->out_len++] = labs[k];
        }
    } else {
        /* implicit output: the ellipsis dims, then the labels seen once in alphabetical order */
        for (int q = 0; q < ell; q++) sp->out_lab[sp->out_len++] = 52 + q;
        for (int l = 0; l < 52; l++) { /* ids follow ASCII: upper case first, as numpy sorts */
            if (count[l] != 1) continue;
            if (sp->out_len >= ONYX_MAX_RANK)
                return onyx_error(ONYX_ERR_UNSUPPORTED, "equation: output rank above %d",
                                  ONYX_MAX_RANK);
            sp->out_lab[sp->out_len++] = l;
        }
    }
    /* loop order: output labels, then every other label in use */
    bool in_use[EINSUM_MAX_LABELS] = {false};
    for (int i = 0; i < n_in; i++)
        for (int k = 0; k < sp->in_len[i]; k++) in_use[sp->in_lab[i][k]] = true;
    for (int k = 0; k < sp->out_len; k++) {
        sp->order[sp->n_labels++] = sp->out_lab[k];
        in_use[sp->out_lab[k]] = false;
    }
    for (int l = 0; l < EINSUM_MAX_LABELS; l++)
        if (in_use[l]) sp->order[sp->n_labels++] = l;
    return ONYX_OK;
}

static onyx_status einsum_infer(infer_ctx *c) {
    const char *eq = attr_string(c->node, "equation", NULL);
    if (!eq) return onyx_error(ONYX_ERR_INVALID_MODEL, "attribute equation is missing");
    if (c->n_in > EINSUM_MAX_INPUTS)
        return onyx_error(ONYX_ERR_UNSUPPORTED, "Einsum with %d inputs (onyx takes 1..%d)",
                          c->n_in, EINSUM_MAX_INPUTS);
    /* bfloat16 came in version 28 */
    dtype_mask types = EINSUM_TYPES | (c->node->version >= 28 ? DT_BIT(ONYX_BFLOAT16) : 0);
    int ranks[EINSUM_MAX_INPUTS];
    const int64_t *dims[EINSUM_MAX_INPUTS];
    for (int i = 0; i < c->n_in; i++) {
        TRY(infer_dtype_in(c, i, types));
        if (c->in[i]->rank < 0) {
            type_set_tensor(&c->out[0], c->in[0]->dtype, -1, NULL);
            return ONYX_OK;
        }
        ranks[i] = c->in[i]->rank;
        dims[i] = c->in[i]->dims;
    }
    TRY(infer_same_dtypes(c, 0, c->n_in));
    einsum_spec sp;
    TRY(einsum_parse(eq, c->n_in, ranks, dims, &sp));
    int64_t out[ONYX_MAX_RANK];
    for (int k = 0; k < sp.out_len; k++) out[k] = sp.dim[sp.out_lab[k]];
    type_set_tensor(&c->out[0], c->in[0]->dtype, sp.out_len, out);
    return ONYX_OK;
}

static const attr_spec attrs[] = {{"equation", ATTR_STRING}, {NULL, 0}};

const op_schema op_Einsum[] = {
    {"", "Einsum", 12, 1, ONYX_VARIADIC, 1, 1, attrs, einsum_infer, 0},
    {"", "Einsum", 28, 1, ONYX_VARIADIC, 1, 1, attrs, einsum_infer, 0},
    OP_END,
};
