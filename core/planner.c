/* The memory planner: values with static sizes and known lifetimes get offsets in one arena, so
 * that two values share bytes only when their lifetimes do not overlap. */
#include "core/exec_internal.h"

#include <stdlib.h>

#define ARENA_ALIGN 64

static int by_size_desc(const void *a, const void *b, void *vals_) {
    const plan_value *vals = vals_;
    const int ia = *(const int *)a, ib = *(const int *)b;
    if (vals[ia].size != vals[ib].size) return vals[ia].size > vals[ib].size ? -1 : 1;
    return ia - ib;
}

static bool lifetimes_overlap(const plan_value *a, const plan_value *b) {
    return a->first <= b->last && b->first <= a->last;
}

/* Greedy best-fit by decreasing size (as TFLite's and ORT's planners do): each value takes the
 * lowest offset that does not collide with an already placed value whose lifetime overlaps. */
size_t plan_assign_offsets(plan_value *vals, int n, device_kind device) {
    int *order = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    int *placed = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    size_t total = 0;
    if (!order || !placed) {
        free(order);
        free(placed);
        return SIZE_MAX;
    }
    int count = 0;
    for (int i = 0; i < n; i++)
        if (vals[i].where == ST_ARENA && vals[i].alias_of < 0 && vals[i].device == device)
            order[count++] = i;
    qsort_r(order, (size_t)count, sizeof(int), by_size_desc, vals);

    int n_placed = 0;
    for (int k = 0; k < count; k++) {
        plan_value *v = &vals[order[k]];
        size_t size = (v->size + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
        size_t offset = 0;
        /* Restart the scan whenever the candidate moves: placed values are few per step. */
        for (bool moved = true; moved;) {
            moved = false;
            for (int j = 0; j < n_placed; j++) {
                const plan_value *p = &vals[placed[j]];
                if (!lifetimes_overlap(v, p)) continue;
                size_t psize = (p->size + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
                if (offset < p->offset + psize && p->offset < offset + size) {
                    offset = p->offset + psize;
                    moved = true;
                }
            }
        }
        v->offset = offset;
        if (offset + size > total) total = offset + size;
        placed[n_placed++] = order[k];
    }
    free(order);
    free(placed);
    return total;
}
