"""float16 computed in float32 on the CPU (core/rules/half.c): the nodes of type-generic float
ops that read float16 compute in float, with Casts where float16 enters and where a converted
value is read as float16 again (another op, a subgraph, a graph output). Compared with
onnxruntime, whose CPU provider does the same, and with the pass turned off
(optimization.float16_as_float32=0), which rounds to float16 after every op."""
import json

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

import onyx

F16 = TP.FLOAT16


def _run(model, feeds, half_as_float=True, level=None):
    so = onyx.SessionOptions()
    so.add_session_config_entry('optimization.float16_as_float32', '1' if half_as_float else '0')
    if level is not None:
        so.graph_optimization_level = level
    return onyx.InferenceSession(model.SerializeToString(), so).run(None, feeds)


def _ort(model, feeds):
    return ort.InferenceSession(model.SerializeToString(),
                                providers=['CPUExecutionProvider']).run(None, feeds)


def _model(nodes, inputs, outputs, inits=(), opset=17):
    g = h.make_graph(nodes, 'half', inputs, outputs, initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid('', opset)])
    onnx.checker.check_model(m)
    return m


def test_sums_round_once():
    """2048 + 1 + 1: float16 holds 2048 and 2050 but not 2049, so rounding after each Add gives
    2048 and rounding once, at the end, 2050 (as onnxruntime)."""
    m = _model([h.make_node('Add', ['a', 'b'], ['s']), h.make_node('Add', ['s', 'b'], ['y'])],
               [h.make_tensor_value_info('a', F16, [4]), h.make_tensor_value_info('b', F16, [4])],
               [h.make_tensor_value_info('y', F16, [4])])
    feeds = {'a': np.full(4, 2048, np.float16), 'b': np.ones(4, np.float16)}
    got = _run(m, feeds)[0]
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, np.full(4, 2050, np.float16))
    np.testing.assert_array_equal(got, _ort(m, feeds)[0])
    np.testing.assert_array_equal(_run(m, feeds, half_as_float=False)[0], np.full(4, 2048, np.float16))
    # below optimization level "all" the graph is left as it is
    np.testing.assert_array_equal(_run(m, feeds, level=onyx.GraphOptimizationLevel.ORT_ENABLE_BASIC)[0],
                                  np.full(4, 2048, np.float16))


def _cnn():
    """A float16 CNN whose converted values are also read as float16: by a graph output, by an
    op outside the list (IsNaN), by Shape, and by an If's branch (a capture)."""
    rng = np.random.default_rng(3)
    w1 = (rng.standard_normal((24, 8, 3, 3)) * 0.2).astype(np.float16)
    b1 = rng.standard_normal(24).astype(np.float16)
    w2 = (rng.standard_normal((16, 24, 1, 1)) * 0.2).astype(np.float16)
    then_g = h.make_graph([h.make_node('Neg', ['r'], ['t'])], 'then', [],
                          [h.make_tensor_value_info('t', F16, [2, 24, 6, 6])])
    else_g = h.make_graph([h.make_node('Identity', ['r'], ['e'])], 'else', [],
                          [h.make_tensor_value_info('e', F16, [2, 24, 6, 6])])
    nodes = [
        h.make_node('Conv', ['x', 'w1', 'b1'], ['c'], pads=[1, 1, 1, 1]),
        h.make_node('Relu', ['c'], ['r']),
        h.make_node('Conv', ['r', 'w2'], ['d']),
        h.make_node('GlobalAveragePool', ['d'], ['g']),
        h.make_node('Flatten', ['g'], ['flat']),
        h.make_node('IsNaN', ['r'], ['nan']),
        h.make_node('Shape', ['d'], ['shape']),
        h.make_node('If', ['cond'], ['branch'], then_branch=then_g, else_branch=else_g),
        h.make_node('Cast', ['flat'], ['flat32'], to=TP.FLOAT),
    ]
    inputs = [h.make_tensor_value_info('x', F16, [2, 8, 6, 6]),
              h.make_tensor_value_info('cond', TP.BOOL, [])]
    outputs = [h.make_tensor_value_info(n, t, s)
               for n, t, s in (('flat', F16, [2, 16]), ('flat32', TP.FLOAT, [2, 16]),
                               ('r', F16, [2, 24, 6, 6]), ('nan', TP.BOOL, [2, 24, 6, 6]),
                               ('shape', TP.INT64, [4]), ('branch', F16, [2, 24, 6, 6]))]
    inits = [nh.from_array(w1, 'w1'), nh.from_array(b1, 'b1'), nh.from_array(w2, 'w2')]
    feeds = {'x': rng.standard_normal((2, 8, 6, 6)).astype(np.float16), 'cond': np.array(True)}
    return _model(nodes, inputs, outputs, inits), feeds


@pytest.mark.parametrize('cond', [True, False])
def test_cnn_matches_onnxruntime(cond):
    m, feeds = _cnn()
    feeds['cond'] = np.array(cond)
    got, want, step = _run(m, feeds), _ort(m, feeds), _run(m, feeds, half_as_float=False)
    names = [o.name for o in m.graph.output]
    for name, a, b, c in zip(names, got, want, step):
        assert a.dtype == b.dtype, name
        assert a.shape == b.shape, name
        if a.dtype == np.float16 or a.dtype == np.float32:
            # as onnxruntime up to float16's last bit; rounded per op, a few bits further away
            np.testing.assert_allclose(a.astype(np.float32), b.astype(np.float32), rtol=2e-3,
                                       atol=2e-3, err_msg=name)
            np.testing.assert_allclose(a.astype(np.float32), c.astype(np.float32), rtol=2e-2,
                                       atol=2e-2, err_msg=name)
        else:
            np.testing.assert_array_equal(a, b, err_msg=name)
    ref_r = dict(zip(names, want))['r']
    np.testing.assert_array_equal(dict(zip(names, got))['branch'], -ref_r if cond else ref_r)



def test_shape_reads_the_float_copy(tmp_path):
    """A Shape of a converted value reads its float copy (same shape) rather than a Cast back:
    in the TorchScript export of attention a Shape reads the Transposed query, and a Cast there
    would keep the attention from fusing (core/fuse.c) with the Transposes as views."""
    rng = np.random.default_rng(5)
    B, S, H, D = 1, 6, 2, 4

    def w(*shape):
        return nh.from_array((rng.standard_normal(shape) * 0.3).astype(np.float16))

    inits = [w(H * D, H * D), w(H * D, H * D), w(H * D, H * D), nh.from_array(np.array(0.5, np.float16))]
    for t, name in zip(inits, ('wq', 'wk', 'wv', 'half')):
        t.name = name
    shape4, shape3 = (np.array(d, np.int64) for d in ((B, S, H, D), (B, S, H * D)))
    inits += [nh.from_array(shape4, 's4'), nh.from_array(shape3, 's3')]
    N = h.make_node
    nodes = [N('MatMul', ['x', 'wq'], ['q']), N('MatMul', ['x', 'wk'], ['k']),
             N('MatMul', ['x', 'wv'], ['v']),
             N('Reshape', ['q', 's4'], ['q4']), N('Transpose', ['q4'], ['qt'], perm=[0, 2, 1, 3]),
             N('Shape', ['qt'], ['qshape']),
             N('Reshape', ['k', 's4'], ['k4']), N('Transpose', ['k4'], ['kt'], perm=[0, 2, 3, 1]),
             N('Reshape', ['v', 's4'], ['v4']), N('Transpose', ['v4'], ['vt'], perm=[0, 2, 1, 3]),
             N('MatMul', ['qt', 'kt'], ['sc']), N('Mul', ['sc', 'half'], ['scs']),
             N('Softmax', ['scs'], ['p'], axis=-1), N('MatMul', ['p', 'vt'], ['o']),
             N('Transpose', ['o'], ['ot'], perm=[0, 2, 1, 3]), N('Reshape', ['ot', 's3'], ['y'])]
    m = _model(nodes, [h.make_tensor_value_info('x', F16, [B, S, H * D])],
               [h.make_tensor_value_info('y', F16, [B, S, H * D]),
                h.make_tensor_value_info('qshape', TP.INT64, [4])], inits)
    feeds = {'x': rng.standard_normal((B, S, H * D)).astype(np.float16)}
    so = onyx.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = str(tmp_path / 'half')
    sess = onyx.InferenceSession(m.SerializeToString(), so)
    got = sess.run(None, feeds)
    with open(sess.end_profiling()) as f:
        ops = [e['args']['op_name'] for e in json.load(f) if e.get('cat') == 'Node']
    want = _ort(m, feeds)
    np.testing.assert_allclose(got[0].astype(np.float32), want[0].astype(np.float32), rtol=2e-3,
                               atol=2e-3)
    np.testing.assert_array_equal(got[1], want[1])
    assert 'Attention' in ops and 'Transpose' not in ops, ops
    assert ops.count('Cast') == 2, ops  # float16 in, float16 out


def test_shape_of_a_converted_float_output():
    """Pow of a float base by a float16 exponent is converted (it reads float16) but writes float:
    a Shape of its output reads that output itself, which has no float copy."""
    nodes = [h.make_node('Pow', ['x', 'e'], ['p']), h.make_node('Shape', ['p'], ['s']),
             h.make_node('Relu', ['p'], ['y'])]
    m = _model(nodes, [h.make_tensor_value_info('x', TP.FLOAT, [2, 3]),
                       h.make_tensor_value_info('e', F16, [])],
               [h.make_tensor_value_info('y', TP.FLOAT, [2, 3]),
                h.make_tensor_value_info('s', TP.INT64, [2])], opset=15)
    feeds = {'x': np.random.default_rng(6).random((2, 3)).astype(np.float32),
             'e': np.array(2, np.float16)}
    got, want = _run(m, feeds), _ort(m, feeds)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    np.testing.assert_array_equal(got[1], want[1])
