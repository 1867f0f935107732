"""Steps whose outputs nothing reads leave the plan (core/plan_build.c drop_dead_steps): once
folding makes a Shape a constant, the node it measured may be read by nothing else, as in exporters'
dynamic-shape graphs. At ORT_DISABLE_ALL the graph runs as written."""
import json

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as h

import onyx.ort as ort


def _model():
    """y = Reshape(x, Shape(Transpose(x))) + 1, and a Relu -> Neg chain whose result nobody
    reads: the Transpose, Relu and Neg are dead once the Shape folds."""
    n = h.make_node
    nodes = [n('Transpose', ['x'], ['t'], perm=[1, 0, 2]), n('Shape', ['t'], ['s']),
             n('Reshape', ['x', 's'], ['r']), n('Add', ['r', 'one'], ['y']),
             n('Relu', ['x'], ['unused_relu']), n('Neg', ['unused_relu'], ['unused_neg'])]
    graph = h.make_graph(nodes, 'g', [h.make_tensor_value_info('x', TP.FLOAT, [2, 3, 4])],
                         [h.make_tensor_value_info('y', TP.FLOAT, None)],
                         [h.make_tensor('one', TP.FLOAT, [], [1.0])])
    return h.make_model(graph, opset_imports=[h.make_opsetid('', 17)]).SerializeToString()


def _ops(level, tmp_path):
    opts = ort.SessionOptions()
    opts.graph_optimization_level = level
    opts.enable_profiling = True
    opts.profile_file_prefix = str(tmp_path / 'profile_')
    sess = ort.InferenceSession(_model(), opts, providers=['CPUExecutionProvider'])
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    (y,) = sess.run(None, {'x': x})
    np.testing.assert_array_equal(y, x.reshape(3, 2, 4) + 1)
    with open(sess.end_profiling()) as f:
        return {e['args']['op_name'] for e in json.load(f)
                if e.get('cat') == 'Node' and 'op_name' in e.get('args', {})}


@pytest.mark.parametrize('level', [ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
                                   ort.GraphOptimizationLevel.ORT_ENABLE_ALL])
def test_dead_steps_do_not_run(level, tmp_path):
    ops = _ops(level, tmp_path)
    assert not ops & {'Transpose', 'Relu', 'Neg', 'Shape'}, ops


def test_graph_as_written_without_optimization(tmp_path):
    assert {'Transpose', 'Relu', 'Neg', 'Shape'} <= _ops(ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
                                                          tmp_path)
