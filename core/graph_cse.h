/* Common subexpressions: nodes that compute what an earlier node computes. Exporters repeat work
 * per layer (the TorchScript export of BERT turns the same attention mask into scores' addend in
 * each of its 12 layers, each from its own copies of the constants 0 and -inf). */
#ifndef ONYX_CORE_GRAPH_CSE_H
#define ONYX_CORE_GRAPH_CSE_H

#include "core/graph.h"
#include "core/status.h"

/* *dup_of (g->n_nodes entries, caller frees) gets, per node, the index of an earlier node that
 * computes the same single output, or -1. Two nodes compute the same when they are the same
 * deterministic ai.onnx op with equal attributes and without subgraphs, reading the same values,
 * where equal small constants count as the same value and so do the outputs of nodes found
 * duplicate before them. */
onyx_status graph_find_duplicates(const graph *g, int **dup_of);

#endif
