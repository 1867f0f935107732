"""Outputs that are one contiguous run of their input's bytes point into them instead of copying
(KF_VIEW, core/exec_view.c): a Gather of one constant index and a Split along an axis after dims
of 1, a Slice keeping whole inner axes (its bounds the plan's, core/op_params.h), and a Transpose
moving only dims of 1. Results stay right, and the working memory holds no
copy of them (checked through the session's memory limit)."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h

from test_inplace import session  # a session under a memory limit

ROWS, COLS = 64, 256
UNIT = ROWS * COLS * 4  # bytes of one [64, 256] float tensor


def model(nodes, x_shape, inits=()):
    graph = h.make_graph(nodes, 'g', [h.make_tensor_value_info('x', TP.FLOAT, x_shape)],
                         [h.make_tensor_value_info('y', TP.FLOAT, None)],
                         [onnx.numpy_helper.from_array(v, n) for n, v in inits])
    return h.make_model(graph, opset_imports=[h.make_opsetid('', 20)]).SerializeToString()


def three_parts(parts, inits=()):
    """y = q * k + v, q, k, v the three [64, 256] parts of r = relu(x) [3, 64, 256]."""
    n = h.make_node
    tail = [n('Mul', ['q', 'k'], ['m']), n('Add', ['m', 'v'], ['y'])]
    return model([n('Relu', ['x'], ['r'])] + parts + tail, [3, ROWS, COLS],
                 [(f'i{i}', np.array(i, np.int64)) for i in range(3)] + list(inits))


GATHERS = [h.make_node('Gather', ['r', f'i{i}'], [name]) for i, name in enumerate('qkv')]
SPLIT = [h.make_node('Split', ['r'], ['q3', 'k3', 'v3'], num_outputs=3)] + [
    h.make_node('Squeeze', [f'{name}3'], [name]) for name in 'qkv']


SLICES = [h.make_node('Slice', ['r', f's{i}', f's{i + 1}', 'axis0'], [f'{name}3'])
          for i, name in enumerate('qkv')] + [
    h.make_node('Squeeze', [f'{name}3'], [name]) for name in 'qkv']
SLICE_BOUNDS = [(f's{i}', np.array([i], np.int64)) for i in range(4)] + [
    ('axis0', np.array([0], np.int64))]


@pytest.mark.parametrize('parts,inits', [(GATHERS, ()), (SPLIT, ()), (SLICES, SLICE_BOUNDS)],
                         ids=['gather', 'split', 'slice'])
def test_parts_are_views(parts, inits):
    # r (3 units) lives until v is read, m takes 1 and the Add writes y over m: 4 units. Copies
    # of q, k and v would be live beside r: 6.
    data = three_parts(parts, inits)
    x = np.random.default_rng(0).standard_normal((3, ROWS, COLS)).astype(np.float32)
    x0 = x.copy()
    s = session(data, memory_limit=4 * UNIT)
    (y,) = s.run(None, {'x': x})
    r = np.maximum(x, 0)
    np.testing.assert_allclose(y, r[0] * r[1] + r[2], rtol=1e-6)
    np.testing.assert_array_equal(x, x0)
    (y2,) = s.run(None, {'x': x})
    np.testing.assert_array_equal(y, y2)
    with pytest.raises(Exception, match='memory|limit'):
        session(data, memory_limit=4 * UNIT - 64)


def test_transpose_of_unit_dims_is_a_view():
    # [1, 64, 256] -> [64, 1, 256]: the same bytes. r and t are read again at the end, so r and
    # n = -t are live together: 2 units (a copy t beside them: 3)
    n = h.make_node
    data = model([n('Relu', ['x'], ['r']), n('Transpose', ['r'], ['t'], perm=[1, 0, 2]),
                  n('Neg', ['t'], ['nt']), n('Reshape', ['r', 'shape'], ['rr']), n('Mul', ['rr', 'nt'], ['m']),
                  n('Mul', ['m', 't'], ['y'])],
                 [1, ROWS, COLS], [('shape', np.array([ROWS, 1, COLS], np.int64))])
    x = np.random.default_rng(1).standard_normal((1, ROWS, COLS)).astype(np.float32)
    (y,) = session(data, memory_limit=2 * UNIT).run(None, {'x': x})
    t = np.maximum(x, 0).transpose(1, 0, 2)
    np.testing.assert_allclose(y, -t * t * t, rtol=1e-6)
    with pytest.raises(Exception, match='memory|limit'):
        session(data, memory_limit=2 * UNIT - 64)


def test_parts_along_a_later_axis_are_copied():
    # [64, 3, 256] split along axis 1: each part is 64 runs apart, not a view; the answer holds
    n = h.make_node
    data = model([n('Relu', ['x'], ['r']), n('Gather', ['r', 'i1'], ['g'], axis=1), n('Neg', ['g'], ['y'])],
                 [ROWS, 3, COLS], [('i1', np.array(1, np.int64))])
    x = np.random.default_rng(2).standard_normal((ROWS, 3, COLS)).astype(np.float32)
    (y,) = session(data).run(None, {'x': x})
    np.testing.assert_array_equal(y, -np.maximum(x[:, 1], 0))


def test_slice_with_a_step_or_a_cut_inner_axis_is_copied():
    # r[:, 1:3, :] (a cut with whole rows after it, but 64 rows before it) and r[:, ::2] are no
    # run of r's bytes: copies, and right
    n = h.make_node
    inits = [('one', np.array([1], np.int64)), ('three', np.array([3], np.int64)),
             ('ax1', np.array([1], np.int64)), ('zero', np.array([0], np.int64)),
             ('big', np.array([1 << 40], np.int64)), ('two', np.array([2], np.int64))]
    data = model([n('Relu', ['x'], ['r']), n('Slice', ['r', 'one', 'three', 'ax1'], ['a']),
                  n('Slice', ['r', 'zero', 'big', 'ax1', 'two'], ['b']),
                  n('Neg', ['a'], ['na']), n('Neg', ['b'], ['nb']),
                  n('Concat', ['na', 'nb'], ['y'], axis=1)],
                 [ROWS, 4, COLS], inits)
    x = np.random.default_rng(3).standard_normal((ROWS, 4, COLS)).astype(np.float32)
    (y,) = session(data).run(None, {'x': x})
    r = np.maximum(x, 0)
    np.testing.assert_array_equal(y, np.concatenate([-r[:, 1:3], -r[:, ::2]], axis=1))
