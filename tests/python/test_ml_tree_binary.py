"""ai.onnx.ml TreeEnsembleClassifier with two class labels whose leaves all name one class: class 1
(some converters write only the positive class's weights) or class 0 (skl2onnx), with and without
base values, under every post_transform, integer and string labels; and more than two classes
where a row's leaves score only some of them. Each run by onyx and by onnxruntime (CPU) and
compared: labels equal (but under LOGISTIC, where onyx labels by the probability), scores rtol
1e-5, atol 1e-6."""
import itertools

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as h

import onyx

POSTS = ['NONE', 'LOGISTIC', 'SOFTMAX', 'SOFTMAX_ZERO', 'PROBIT']
# rows reaching each of the four leaves, and the split values themselves
X = np.array([[0, -1], [1, -1], [0, 1], [1, 1], [0.5, 0], [-3, 2]], np.float32)


LEAVES = [(0, 1), (0, 2), (1, 1), (1, 2)]


def classifier(class_ids, weights, labels, post, base=None, leaves=LEAVES):
    """Two trees of depth one (x0 <= 0.5, x1 <= 0) with leaves (tree, node) (0,1) (0,2) (1,1)
    (1,2); weight i goes to leaves[i], for class_ids[i]."""
    attrs = dict(nodes_treeids=[0, 0, 0, 1, 1, 1], nodes_nodeids=[0, 1, 2, 0, 1, 2],
                 nodes_featureids=[0, 0, 0, 1, 0, 0], nodes_modes=['BRANCH_LEQ', 'LEAF', 'LEAF'] * 2,
                 nodes_values=[0.5, 0, 0, 0.0, 0, 0], nodes_truenodeids=[1, 0, 0, 1, 0, 0],
                 nodes_falsenodeids=[2, 0, 0, 2, 0, 0], class_treeids=[t for t, _ in leaves],
                 class_nodeids=[n for _, n in leaves], class_ids=list(class_ids), class_weights=list(weights),
                 post_transform=post)
    strings = isinstance(labels[0], str)
    attrs['classlabels_strings' if strings else 'classlabels_int64s'] = list(labels)
    if base is not None:
        attrs['base_values'] = list(base)
    node = h.make_node('TreeEnsembleClassifier', ['x'], ['y', 'z'], domain='ai.onnx.ml', **attrs)
    g = h.make_graph([node], 'g', [h.make_tensor_value_info('x', TP.FLOAT, [None, 2])],
                     [h.make_tensor_value_info('y', TP.STRING if strings else TP.INT64, [None]),
                      h.make_tensor_value_info('z', TP.FLOAT, [None, len(labels)])])
    return h.make_model(g, opset_imports=[h.make_opsetid('', 17), h.make_opsetid('ai.onnx.ml', 3)])


def run_both(m):
    want = ort.InferenceSession(m.SerializeToString(), providers=['CPUExecutionProvider']).run(None, {'x': X})
    got = onyx.Session(m.SerializeToString()).run(None, {'x': X})
    return got, want


WEIGHTS = {'positive': [0.3, 0.6, 0.2, 0.1], 'mixed': [0.3, -0.6, 0.2, -0.1]}
BASES = {'none': None, 'one': [0.25], 'two': [0.25, 0.15]}
LABELS = {'int01': [0, 1], 'int37': [3, 7], 'strings': ['neg', 'pos']}


@pytest.mark.parametrize('cls,weights,base,labels,post', list(itertools.product(
    [0, 1], WEIGHTS, BASES, LABELS, POSTS)))
def test_binary_one_class(cls, weights, base, labels, post):
    m = classifier([cls] * 4, WEIGHTS[weights], LABELS[labels], post, BASES[base])
    (got_y, got_z), (want_y, want_z) = run_both(m)
    assert got_z.shape == want_z.shape == (len(X), 2)
    if post == 'LOGISTIC' and weights == 'positive':
        # onyx labels by the probability (the second score > 0.5), onnxruntime by the raw score
        # > 0.5 (see test_converters.py::test_lightgbm_binary_positive_leaves)
        want_y = np.array(LABELS[labels], object)[(raw_positive_score(cls, base) > 0).astype(int)]
    assert got_y.tolist() == want_y.tolist()
    cols = 2
    if cls == 0 and post == 'PROBIT' and base != 'two':
        # the score of the first class alone: onnxruntime writes its probit into the first column
        # and leaves the second unwritten
        cols = 1
    np.testing.assert_allclose(got_z[:, :cols], want_z[:, :cols], rtol=1e-5, atol=1e-6)
    if cls == 1 and base == 'none' and post != 'PROBIT':
        # the leaves' sums land in the second column (the defect: onyx read the first, all zeros)
        sums = np.array([0.5, 0.8, 0.4, 0.7, 0.5, 0.4]) if weights == 'positive' else \
            np.array([0.5, -0.4, 0.2, -0.7, 0.5, 0.2])
        if post != 'SOFTMAX_ZERO':
            assert len(set(np.round(got_z[:, 1], 5))) > 1
        np.testing.assert_allclose(got_z[:, 1], _post(sums, post), rtol=1e-5, atol=1e-6)


def raw_positive_score(cls, base):
    """The score onnxruntime labels by, for all-positive weights: the leaves' sum, plus base_values[0]
    when the leaves name class 0; base_values[1] alone (plus class 0's absent score) when they name
    class 1 and there are two base values."""
    sums = np.array([0.5, 0.8, 0.4, 0.7, 0.5, 0.4])
    if cls == 1:
        return np.full_like(sums, 0.15) if base == 'two' else sums
    return sums + (0.25 if base != 'none' else 0)


def _post(v, post):
    """The second column of [0, v] after the transform (numpy)."""
    if post == 'LOGISTIC':
        return 1 / (1 + np.exp(-v))
    if post == 'SOFTMAX':
        return np.exp(v) / (1 + np.exp(v))
    if post == 'SOFTMAX_ZERO':
        return np.ones_like(v)
    return v


@pytest.mark.parametrize('ids', [[0, 1, 0, 1], [1, 1, 2, 2], [2, 0, 2, 1]])
@pytest.mark.parametrize('post', POSTS)
@pytest.mark.parametrize('base', [None, [0.25, 0.15, 0.1]])
def test_three_classes_some_unscored(ids, post, base):
    """A row whose leaves score only some classes: the label is the argmax among those (and the
    base values give every class a score)."""
    m = classifier(ids, WEIGHTS['mixed'], [4, 5, 6], post, base)
    (got_y, got_z), (want_y, want_z) = run_both(m)
    assert got_y.tolist() == want_y.tolist()
    np.testing.assert_allclose(got_z, want_z, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize('post', ['NONE', 'LOGISTIC', 'SOFTMAX', 'SOFTMAX_ZERO'])
def test_binary_both_classes_in_every_leaf(post):
    """Every leaf scores both classes: scores as onnxruntime; the label is the argmax of the
    scores (onnxruntime answers the literal label 1 whenever class 1's score is positive)."""
    m = classifier([0, 1] * 4, [0.8, 0.2, 0.3, 0.7, 0.6, 0.4, 0.1, 0.9], [3, 7], post,
                   leaves=[leaf for leaf in LEAVES for _ in range(2)])
    (got_y, got_z), (_, want_z) = run_both(m)
    np.testing.assert_allclose(got_z, want_z, rtol=1e-5, atol=1e-6)
    assert got_y.tolist() == [[3, 7][k] for k in np.argmax(got_z, 1)]


def test_rows_walked_together_or_alone():
    """A batch answers as its rows one by one: rows are walked four at a time where none of the four
    has a NaN (find_leaves_leq), else alone (the NaN follows missing_true), and the batch mixes both."""
    m = classifier([0, 1, 0, 1], WEIGHTS['mixed'], LABELS['int01'], 'SOFTMAX')
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 2, (11, 2)).astype(np.float32)
    x[5, 1] = np.nan
    x[9, 0] = np.nan
    sess = onyx.Session(m.SerializeToString())
    y, z = sess.run(None, {'x': x})
    rows = [sess.run(None, {'x': x[i:i + 1]}) for i in range(len(x))]
    assert y.tolist() == [r[0][0] for r in rows]
    np.testing.assert_array_equal(z, np.concatenate([r[1] for r in rows]))
    want = ort.InferenceSession(m.SerializeToString(), providers=['CPUExecutionProvider']).run(None, {'x': x})
    assert y.tolist() == want[0].tolist()
    np.testing.assert_allclose(z, want[1], rtol=1e-5, atol=1e-6)
