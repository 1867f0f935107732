"""Elementwise steps write over an input that no later step reads (KF_INPLACE, core/plan_build.c
inplace_root), and a Concat starts where its input 0 was (KF_INPLACE_PREFIX, prefix_root): results
stay right, graph inputs and values still needed are never overwritten, and the working memory
shrinks accordingly (checked through the session's memory limit)."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h

from onyx import ort

SHAPE = [64, 256]
BYTES = 64 * 256 * 4


def model(nodes, inputs, outputs, inits=()):
    graph = h.make_graph(nodes, 'g', [h.make_tensor_value_info(n, TP.FLOAT, SHAPE) for n in inputs],
                         [h.make_tensor_value_info(n, TP.FLOAT, SHAPE) for n in outputs],
                         [onnx.numpy_helper.from_array(v, n) for n, v in inits])
    return h.make_model(graph, opset_imports=[h.make_opsetid('', 20)]).SerializeToString()


def session(data, memory_limit=0):
    so = ort.SessionOptions()
    so.memory_limit = memory_limit
    return ort.InferenceSession(data, so)


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def chain():
    """y = tanh(layernorm(sigmoid(relu(x) * w)) + c): every intermediate dies at the step after
    it."""
    n = h.make_node
    return model([n('Relu', ['x'], ['a']), n('Mul', ['a', 'w'], ['b']), n('Sigmoid', ['b'], ['s']),
                  n('LayerNormalization', ['s', 'g'], ['l'], axis=-1), n('Add', ['c', 'l'], ['d']),
                  n('Tanh', ['d'], ['y'])], ['x', 'w'], ['y'],
                 [('c', np.full(SHAPE, 0.25, np.float32)), ('g', np.full(SHAPE[-1:], 1.5, np.float32))])


def layer_norm(v, g):
    m = v.mean(axis=-1, keepdims=True)
    return (v - m) / np.sqrt(((v - m) ** 2).mean(axis=-1, keepdims=True) + 1e-5) * g


def test_chain_runs_in_one_buffer():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(SHAPE).astype(np.float32)
    w = rng.standard_normal(SHAPE).astype(np.float32)
    x0, w0 = x.copy(), w.copy()
    # five intermediates of BYTES each, one live at a time: one buffer when each step takes its
    # input's bytes, two (a step reads one, writes the other) otherwise
    s = session(chain(), memory_limit=BYTES)
    (y,) = s.run(None, {'x': x, 'w': w})
    expected = np.tanh(layer_norm(sigmoid(np.maximum(x, 0) * w), 1.5) + 0.25)
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)
    # graph inputs and constants are never written
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(w, w0)
    (y2,) = s.run(None, {'x': x, 'w': w})
    np.testing.assert_array_equal(y, y2)


def test_a_value_read_later_keeps_its_own_buffer():
    # a is read by Sigmoid and again by the Add: Sigmoid cannot take its bytes, so a and b need
    # two buffers (the Add may take a's); one buffer is refused
    n = h.make_node
    data = model([n('Relu', ['x'], ['a']), n('Sigmoid', ['a'], ['b']), n('Add', ['a', 'b'], ['c']),
                  n('Tanh', ['c'], ['y'])], ['x'], ['y'])
    session(data, memory_limit=2 * BYTES)
    with pytest.raises(Exception, match='memory|limit'):
        session(data, memory_limit=2 * BYTES - 64)


def test_values_still_read_are_not_overwritten():
    """a = relu(x) is read by Sigmoid and then by the Add: Sigmoid must not take a's bytes; the
    Add may (a and b die there), and the Mul after it may take the Add's."""
    n = h.make_node
    data = model([n('Relu', ['x'], ['a']), n('Sigmoid', ['a'], ['b']), n('Add', ['a', 'b'], ['c']),
                  n('Neg', ['a'], ['na']), n('Mul', ['c', 'na'], ['y'])], ['x'], ['y'])
    rng = np.random.default_rng(1)
    x = rng.standard_normal(SHAPE).astype(np.float32)
    (y,) = session(data).run(None, {'x': x})
    a = np.maximum(x, 0)
    np.testing.assert_allclose(y, (a + sigmoid(a)) * -a, rtol=1e-6, atol=1e-6)


def test_broadcast_operand_is_not_taken():
    """Add of a [64, 256] value and a [1, 256] one: only the full-sized input can be written over."""
    n = h.make_node
    graph = h.make_graph(
        [n('Relu', ['x'], ['a']), n('ReduceMax', ['a', 'ax'], ['m']), n('Relu', ['m'], ['mr']),
         n('Sub', ['mr', 'a'], ['y'])], 'g', [h.make_tensor_value_info('x', TP.FLOAT, SHAPE)],
        [h.make_tensor_value_info('y', TP.FLOAT, SHAPE)],
        [onnx.numpy_helper.from_array(np.array([0], np.int64), 'ax')])
    data = h.make_model(graph, opset_imports=[h.make_opsetid('', 20)]).SerializeToString()
    x = np.random.default_rng(2).standard_normal(SHAPE).astype(np.float32)
    (y,) = session(data).run(None, {'x': x})
    a = np.maximum(x, 0)
    np.testing.assert_allclose(y, a.max(axis=0, keepdims=True) - a, rtol=1e-6)


def dense_block(batch):
    """Three DenseNet layers: each Concat appends Neg(previous) to the previous Concat."""
    n = h.make_node
    nodes, cur = [n('Relu', ['x'], ['c0'])], 'c0'
    for i in range(3):
        nodes += [n('Neg', [cur], [f'f{i}']), n('Concat', [cur, f'f{i}'], [f'c{i + 1}'], axis=1)]
        cur = f'c{i + 1}'
    nodes.append(n('Tanh', [cur], ['y']))
    graph = h.make_graph(nodes, 'g', [h.make_tensor_value_info('x', TP.FLOAT, [batch, 16, 8, 8])],
                         [h.make_tensor_value_info('y', TP.FLOAT, [batch, 128, 8, 8])])
    return h.make_model(graph, opset_imports=[h.make_opsetid('', 20)]).SerializeToString()


def test_concats_grow_one_buffer():
    # c3 (128 channels) starts where c0, c1 and c2 were: the last layer needs c3 and f2 (64
    # channels) live, 192 channels of 8 x 8 floats in all; copying each Concat needs c2 and c3
    # together besides f2, 256
    unit = 8 * 8 * 4
    x = np.random.default_rng(3).standard_normal((1, 16, 8, 8)).astype(np.float32)
    (y,) = session(dense_block(1), memory_limit=192 * unit).run(None, {'x': x})
    c = np.maximum(x, 0)
    for _ in range(3):
        c = np.concatenate([c, -c], axis=1)
    np.testing.assert_allclose(y, np.tanh(c), rtol=1e-6)
    # at batch 2 each image's channels are apart: every Concat copies
    with pytest.raises(Exception, match='memory|limit'):
        session(dense_block(2), memory_limit=2 * 192 * unit)
    session(dense_block(2), memory_limit=2 * 256 * unit)
