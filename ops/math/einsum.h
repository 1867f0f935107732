/* Einsum's equation, parsed against its inputs' ranks: shared by the schema's inference and the
 * CPU kernel. */
#ifndef ONYX_OPS_EINSUM_H
#define ONYX_OPS_EINSUM_H

#include "ops/schema.h"

#define EINSUM_MAX_INPUTS 8
/* 52 letters plus up to ONYX_MAX_RANK dims under "..." */
#define EINSUM_MAX_LABELS (52 + ONYX_MAX_RANK)

typedef struct einsum_spec {
    int n_in;
    int in_len[EINSUM_MAX_INPUTS];                 /* dims of each input (its rank) */
    int in_lab[EINSUM_MAX_INPUTS][ONYX_MAX_RANK];  /* label of each input dim */
    int out_len;
    int out_lab[ONYX_MAX_RANK];
    int n_labels;                                  /* labels in use: out_lab first, then summed */
    int order[EINSUM_MAX_LABELS];                  /* labels in loop order (output first) */
    int64_t dim[EINSUM_MAX_LABELS];                /* size per label, -1 when unknown */
} einsum_spec;

/* Parses `eq` for inputs of the given ranks and dims (dims[i][k] -1 when unknown) and resolves
 * each label's size; ellipsis dims broadcast. Fails on a malformed equation or a size clash. */
onyx_status einsum_parse(const char *eq, int n_in, const int *ranks, const int64_t *const *dims,
                         einsum_spec *out);

#endif
