"""onyx.backend.run_node for a sample of ops, and the rest of the Backend contract."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h

import onyx
import onyx.backend as backend


def test_run_node_sample():
    x = np.array([[1.5, -2.0, 3.0], [0.0, 4.0, -1.0]], np.float32)
    cases = [
        (h.make_node('Relu', ['x'], ['y']), [x], [np.maximum(x, 0)]),
        (h.make_node('Add', ['a', 'b'], ['c']), [x, np.float32(2)], [x + 2]),
        (h.make_node('Transpose', ['x'], ['y'], perm=[1, 0]), [x], [x.T]),
        (h.make_node('ReduceSum', ['x', 'axes'], ['y'], keepdims=0), [x, np.array([1], np.int64)],
         [x.sum(axis=1)]),
        (h.make_node('Cast', ['x'], ['y'], to=TP.INT32), [x], [x.astype(np.int32)]),
        (h.make_node('Gather', ['x', 'i'], ['y'], axis=1), [x, np.array([2, -3], np.int64)],
         [x[:, [2, 0]]]),
        (h.make_node('TopK', ['x', 'k'], ['v', 'i']), [x, np.array([1], np.int64)],
         [x.max(axis=1, keepdims=True), x.argmax(axis=1).reshape(2, 1)]),
        (h.make_node('Split', ['x'], ['p', 'q'], axis=1, num_outputs=2), [x], [x[:, :2], x[:, 2:]]),
        (h.make_node('Where', ['c', 'a', 'b'], ['y']),
         [x > 0, np.array(['pos'], object), np.array(['neg'], object)], [np.where(x > 0, 'pos', 'neg')]),
    ]
    for node, inputs, expected in cases:
        out = backend.run_node(node, inputs)
        assert list(out._fields) == [n for n in node.output]
        for got, want in zip(out, expected):
            assert got.shape == np.asarray(want).shape, node.op_type
            if got.dtype == object:
                assert got.tolist() == np.asarray(want).tolist(), node.op_type
            else:
                assert got.dtype == np.asarray(want).dtype, node.op_type
                np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=node.op_type)


def test_run_node_opset_and_outputs_info():
    # Before opset 13 ReduceSum took axes as an attribute.
    node = h.make_node('ReduceSum', ['x'], ['y'], axes=[0], keepdims=1)
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    (y,) = backend.run_node(node, [x], opset_version=11)
    np.testing.assert_array_equal(y, x.sum(axis=0, keepdims=True))
    node = h.make_node('Identity', ['x'], ['y'])
    (y,) = backend.run_node(node, [x], outputs_info=[(np.float64, (2, 3))])
    np.testing.assert_array_equal(y, x)


def test_run_node_errors():
    with pytest.raises(onyx.OnyxError) as e:
        backend.run_node(h.make_node('Gather', ['x', 'i'], ['y'], name='g1'),
                         [np.zeros((2, 2), np.float32), np.array([5], np.int64)])
    assert 'g1' in str(e.value)
    with pytest.raises(onyx.OnyxError) as e:
        backend.run_node(h.make_node('NoSuchOp', ['x'], ['y']), [np.zeros(1, np.float32)])
    assert e.value.status == 'ONYX_ERR_UNSUPPORTED'


def test_backend_contract():
    graph = h.make_graph([h.make_node('Neg', ['x'], ['y'])], 'g',
                         [h.make_tensor_value_info('x', TP.FLOAT, [2])],
                         [h.make_tensor_value_info('y', TP.FLOAT, [2])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid('', 13)])
    assert backend.supports_device('CPU')
    assert backend.is_compatible(model)
    x = np.array([1, -2], np.float32)
    np.testing.assert_array_equal(backend.run_model(model, [x]).y, -x)
    rep = backend.prepare(model, 'CPU')
    np.testing.assert_array_equal(rep.run([x])[0], -x)
    np.testing.assert_array_equal(rep.run({'x': x})['y'], -x)
    bad = onnx.ModelProto()
    bad.CopyFrom(model)
    bad.graph.node[0].op_type = 'NoSuchOp'
    assert not backend.is_compatible(bad)
