"""ai.onnx.ml ops that return maps (ZipMap) or must refuse malformed trees: through the Python API,
since the C conformance runner compares tensors only."""
import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as h

import onyx


def ml_model(node, x_type, x_shape, out):
    graph = h.make_graph([node], 'g', [h.make_tensor_value_info('x', x_type, x_shape)], out)
    return h.make_model(graph, opset_imports=[h.make_opsetid('', 19), h.make_opsetid('ai.onnx.ml', 3)])


def test_zipmap_strings_and_ints():
    x = np.array([[0.1, 0.9], [0.7, 0.3], [0.5, 0.5]], np.float32)
    for labels, key in ((dict(classlabels_strings=['cat', 'dog']), ['cat', 'dog']),
                        (dict(classlabels_int64s=[3, 8]), [3, 8])):
        node = h.make_node('ZipMap', ['x'], ['z'], domain='ai.onnx.ml', **labels)
        key_type = TP.STRING if isinstance(key[0], str) else TP.INT64
        out = h.make_value_info('z', h.make_sequence_type_proto(h.make_map_type_proto(
            key_type, h.make_tensor_type_proto(TP.FLOAT, []))))
        (maps,) = onyx.Session(ml_model(node, TP.FLOAT, [3, 2], [out])).run(None, {'x': x})
        assert len(maps) == 3
        for row, m in zip(x, maps):
            assert list(m) == key
            np.testing.assert_allclose(list(m.values()), row)


def test_zipmap_label_count_mismatch():
    node = h.make_node('ZipMap', ['x'], ['z'], domain='ai.onnx.ml', classlabels_int64s=[1, 2, 3])
    out = h.make_value_info('z', h.make_sequence_type_proto(h.make_map_type_proto(
        TP.INT64, h.make_tensor_type_proto(TP.FLOAT, []))))
    with pytest.raises(onyx.OnyxError, match='3 class labels'):
        onyx.Session(ml_model(node, TP.FLOAT, [2, 2], [out]))


def regressor(**override):
    attrs = dict(nodes_treeids=[0, 0, 0], nodes_nodeids=[0, 1, 2], nodes_featureids=[0, 0, 0],
                 nodes_values=[0.5, 0.0, 0.0], nodes_modes=['BRANCH_LEQ', 'LEAF', 'LEAF'],
                 nodes_truenodeids=[1, 0, 0], nodes_falsenodeids=[2, 0, 0],
                 target_treeids=[0, 0], target_nodeids=[1, 2], target_ids=[0, 0], target_weights=[-1.0, 1.0])
    attrs.update(override)
    node = h.make_node('TreeEnsembleRegressor', ['x'], ['y'], domain='ai.onnx.ml', **attrs)
    return ml_model(node, TP.FLOAT, [None, 1], [h.make_tensor_value_info('y', TP.FLOAT, [None, 1])])


def test_tree_regressor_runs():
    (y,) = onyx.Session(regressor()).run(None, {'x': np.array([[0.2], [0.9], [np.nan]], np.float32)})
    np.testing.assert_array_equal(y.ravel(), [-1.0, 1.0, 1.0])


def test_tree_double_split_float_rows():
    """A split that no float equals (0.1 as a double, nodes_values_as_tensor) against float rows: x <=
    split as exactly as in double, on the fast walk (rows without NaN, split rounded down to a
    float once) and on the general one (a NaN in a column the tree does not read)."""
    split = h.make_tensor('nodes_values_as_tensor', TP.DOUBLE, [3], [0.1, 0.0, 0.0])
    attrs = dict(nodes_treeids=[0, 0, 0], nodes_nodeids=[0, 1, 2], nodes_featureids=[0, 0, 0],
                 nodes_values_as_tensor=split, nodes_modes=['BRANCH_LEQ', 'LEAF', 'LEAF'],
                 nodes_truenodeids=[1, 0, 0], nodes_falsenodeids=[2, 0, 0], target_treeids=[0, 0],
                 target_nodeids=[1, 2], target_ids=[0, 0], target_weights=[-1.0, 1.0])
    node = h.make_node('TreeEnsembleRegressor', ['x'], ['y'], domain='ai.onnx.ml', **attrs)
    model = ml_model(node, TP.FLOAT, [None, 2], [h.make_tensor_value_info('y', TP.FLOAT, [None, 1])])
    above = np.float32(0.1)                       # 0.10000000149 > 0.1
    below = np.nextafter(above, np.float32(0))    # 0.09999999404 <= 0.1
    x = np.array([[above, 0], [below, 0], [above, np.nan], [below, np.nan]], np.float32)
    (y,) = onyx.Session(model).run(None, {'x': x})
    np.testing.assert_array_equal(y.ravel(), [1.0, -1.0, 1.0, -1.0])


@pytest.mark.parametrize('modes', [['BRANCH_LEQ', 'LEAF', 'LEAF'], ['BRANCH_LT', 'LEAF', 'LEAF']])
@pytest.mark.parametrize('tracks', [0, 1])
def test_tree_missing_value_tracks_true(modes, tracks):
    """A NaN feature takes the true branch where nodes_missing_value_tracks_true says so, else the
    false one; float rows through <= tests only take the fast walk (find_leaf_leq), the rest the
    general one, and both follow the rule; a value on the split is true for <= only."""
    model = regressor(nodes_modes=modes, nodes_missing_value_tracks_true=[tracks, 0, 0])
    (y,) = onyx.Session(model).run(None, {'x': np.array([[0.2], [0.9], [np.nan], [0.5]], np.float32)})
    on_split = -1.0 if modes[0] == 'BRANCH_LEQ' else 1.0
    np.testing.assert_array_equal(y.ravel(), [-1.0, 1.0, -1.0 if tracks else 1.0, on_split])


@pytest.mark.parametrize('override, message', [
    (dict(nodes_truenodeids=[0, 0, 0]), 'twice'),                 # the root points at itself
    (dict(nodes_falsenodeids=[7, 0, 0]), 'does not have'),         # a branch to a missing node
    (dict(target_nodeids=[1, 0]), 'not a leaf'),                   # an output on an inner node
    (dict(target_ids=[0, 3]), 'target'),                           # an output past n_targets
    (dict(nodes_modes=['BRANCH_XX', 'LEAF', 'LEAF']), 'BRANCH_XX'),
])
def test_tree_regressor_refuses_malformed_trees(override, message):
    with pytest.raises(onyx.OnyxError, match=message) as e:
        onyx.Session(regressor(**override))
    assert e.value.status == 'ONYX_ERR_INVALID_MODEL'


def test_tree_reads_past_the_features():
    s = onyx.Session(regressor(nodes_featureids=[4, 0, 0]))
    with pytest.raises(onyx.OnyxError, match='feature 4'):
        s.run(None, {'x': np.zeros((2, 1), np.float32)})
