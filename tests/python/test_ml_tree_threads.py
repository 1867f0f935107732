"""Tree ensembles over a batch large enough to be split over threads (kernels_cpu/ml/tree.c splits the
rows): a two-thread session answers bit for bit as a one-thread one and as a sample of its rows
run one at a time, for TreeEnsembleClassifier (scores, labels; leaves with one output or all),
TreeEnsembleRegressor and TreeEnsemble (v5), on rows with and without NaN (walked four at a time or
alone) and batch sizes that are not a multiple of four. On a one-CPU machine the two-thread session
runs on one (parallel_usable_threads) and the comparison is of one thread with itself."""
import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper

import onyx

N_FEATURES, DEPTH = 6, 4


def random_trees(n_trees, n_outputs, seed):
    """Full trees of depth DEPTH, node k's children at 2k + 1 (true) and 2k + 2 (false): per node
    (tree, node, feature, split, is_leaf), and each leaf's weight for every output."""
    rng = np.random.default_rng(seed)
    n_nodes = 2 ** (DEPTH + 1) - 1
    nodes, leaves = [], []
    for t in range(n_trees):
        for k in range(n_nodes):
            leaf = k >= 2 ** DEPTH - 1
            nodes.append((t, k, int(rng.integers(N_FEATURES)), float(rng.standard_normal()), leaf))
            if leaf:
                leaves.append((t, k, rng.standard_normal(n_outputs).astype(np.float32)))
    return nodes, leaves


def legacy_attrs(nodes, leaves, prefix, post, n_outputs):
    return {'nodes_treeids': [n[0] for n in nodes], 'nodes_nodeids': [n[1] for n in nodes],
            'nodes_featureids': [0 if n[4] else n[2] for n in nodes],
            'nodes_values': [0.0 if n[4] else n[3] for n in nodes],
            'nodes_modes': ['LEAF' if n[4] else 'BRANCH_LEQ' for n in nodes],
            'nodes_truenodeids': [0 if n[4] else 2 * n[1] + 1 for n in nodes],
            'nodes_falsenodeids': [0 if n[4] else 2 * n[1] + 2 for n in nodes],
            'nodes_missing_value_tracks_true': [int(n[1] % 3 == 0) for n in nodes],
            f'{prefix}_treeids': [t for t, _, w in leaves for _ in w],
            f'{prefix}_nodeids': [k for _, k, w in leaves for _ in w],
            f'{prefix}_ids': [i if len(w) > 1 else t % n_outputs for t, _, w in leaves for i in range(len(w))],
            f'{prefix}_weights': [float(v) for _, _, w in leaves for v in w],
            'post_transform': post}


def model_of(node, ml_opset, outputs):
    graph = h.make_graph([node], 'g', [h.make_tensor_value_info('x', TP.FLOAT, [None, N_FEATURES])], outputs)
    return h.make_model(graph, opset_imports=[h.make_opsetid('', 21), h.make_opsetid('ai.onnx.ml', ml_opset)])


def classifier(n_trees, n_classes, post, one_output=False):
    """one_output: each leaf scores one class, tree t's class t % n_classes (as LightGBM's
    multiclass models), else every class."""
    nodes, leaves = random_trees(n_trees, n_classes, seed=n_trees)
    if one_output:
        leaves = [(t, k, w[t % n_classes:t % n_classes + 1]) for t, k, w in leaves]
    node = h.make_node('TreeEnsembleClassifier', ['x'], ['label', 'scores'], domain='ai.onnx.ml',
                       classlabels_int64s=list(range(10, 10 + n_classes)),
                       **legacy_attrs(nodes, leaves, 'class', post, n_classes))
    return model_of(node, 3, [h.make_tensor_value_info('label', TP.INT64, [None]),
                              h.make_tensor_value_info('scores', TP.FLOAT, [None, n_classes])])


def regressor(n_trees, n_targets):
    nodes, leaves = random_trees(n_trees, n_targets, seed=n_trees + 1)
    node = h.make_node('TreeEnsembleRegressor', ['x'], ['y'], domain='ai.onnx.ml', n_targets=n_targets,
                       **legacy_attrs(nodes, leaves, 'target', 'NONE', n_targets))
    return model_of(node, 3, [h.make_tensor_value_info('y', TP.FLOAT, [None, n_targets])])


def tree_ensemble_v5(n_trees, n_targets):
    """The same kind of forest in TreeEnsemble's layout, where a leaf holds one (target, weight):
    leaf i scores target i % n_targets."""
    nodes, leaves = random_trees(n_trees, 1, seed=n_trees + 2)
    first_leaf = 2 ** DEPTH - 1
    inner = [n for n in nodes if not n[4]]
    index = {(n[0], n[1]): i for i, n in enumerate(inner)}
    leaf_index = {(t, k): i for i, (t, k, _) in enumerate(leaves)}

    def child(t, k):
        return (leaf_index[t, k], 1) if k >= first_leaf else (index[t, k], 0)

    true = [child(n[0], 2 * n[1] + 1) for n in inner]
    false = [child(n[0], 2 * n[1] + 2) for n in inner]
    node = h.make_node(
        'TreeEnsemble', ['x'], ['y'], domain='ai.onnx.ml', n_targets=n_targets, aggregate_function=1,
        post_transform=0, tree_roots=[index[t, 0] for t in range(n_trees)],
        nodes_featureids=[n[2] for n in inner],
        nodes_splits=numpy_helper.from_array(np.array([n[3] for n in inner], np.float32)),
        nodes_modes=numpy_helper.from_array(np.zeros(len(inner), np.uint8)),
        nodes_truenodeids=[i for i, _ in true], nodes_trueleafs=[leaf for _, leaf in true],
        nodes_falsenodeids=[i for i, _ in false], nodes_falseleafs=[leaf for _, leaf in false],
        leaf_targetids=[i % n_targets for i in range(len(leaves))],
        leaf_weights=numpy_helper.from_array(np.array([w[0] for _, _, w in leaves], np.float32)))
    return model_of(node, 5, [h.make_tensor_value_info('y', TP.FLOAT, [None, n_targets])])


def rows(n, seed=0):
    x = np.random.default_rng(seed).standard_normal((n, N_FEATURES)).astype(np.float32)
    x[7, 2] = np.nan        # rows that take the general walk, among the fast ones
    x[n // 2, 0] = np.nan
    x[n - 3, 5] = np.nan
    return x


def assert_split_answers_as_one(model, x):
    data = model.SerializeToString()
    two = onyx.Session(data, threads=2).run(None, {'x': x})
    one = onyx.Session(data, threads=1).run(None, {'x': x})
    for a, b in zip(two, one):
        np.testing.assert_array_equal(a, b)
    alone = onyx.Session(data, threads=2)
    for i in range(0, len(x), 37):   # a sample of the rows, each in a batch of its own
        for a, b in zip(alone.run(None, {'x': x[i:i + 1]}), two):
            np.testing.assert_array_equal(a, b[i:i + 1])
    return two


@pytest.mark.parametrize('n_rows', [100, 1001])
@pytest.mark.parametrize('n_classes,post,one_output', [(3, 'SOFTMAX', False), (3, 'SOFTMAX', True),
                                                        (2, 'LOGISTIC', False), (5, 'NONE', True)])
def test_classifier_split_rows(n_rows, n_classes, post, one_output):
    label, scores = assert_split_answers_as_one(classifier(60, n_classes, post, one_output), rows(n_rows))
    assert len(set(label.tolist())) > 1, 'every row got one label: a test that cannot tell'


@pytest.mark.parametrize('n_rows', [100, 1001])
def test_regressor_split_rows(n_rows):
    (y,) = assert_split_answers_as_one(regressor(60, 2), rows(n_rows))
    assert np.unique(y[:, 0]).size > n_rows // 2


def test_tree_ensemble_v5_split_rows():
    (y,) = assert_split_answers_as_one(tree_ensemble_v5(60, 2), rows(1001))
    assert np.unique(y[:, 0]).size > 500
