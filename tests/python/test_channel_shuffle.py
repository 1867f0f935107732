"""ShuffleNet's channel shuffle (Reshape -> Transpose -> Reshape) between convolutions, which the
CPU's fusion pass makes one ChannelShuffle step (core/fuse_shuffle.c) that the channels-last layout
passes through (core/fuse_blocked.c), and the ai.onyx ChannelShuffle op itself against numpy, on
plain tensors. The fused plan must give the plain plan's and onnxruntime's outputs; a shuffle that
does not sit between convolutions, or is not one, keeps its three steps."""
import numpy as np
import pytest

import onyx

onnx = pytest.importorskip('onnx')
ort = pytest.importorskip('onnxruntime')

from onnx import TensorProto as TP  # noqa: E402
from onnx import helper as oh  # noqa: E402
from onnx import numpy_helper as nh  # noqa: E402


def shuffle_reference(x, g):
    n, c = x.shape[:2]
    return x.reshape(n, g, c // g, *x.shape[2:]).swapaxes(1, 2).reshape(x.shape)


def unit_bytes(c, g, hw, perm=(0, 2, 1, 3, 4), into_conv=True):
    """ShuffleNet v1's unit: grouped 1x1 conv + Relu, the shuffle, a depthwise 3x3 conv, a grouped
    1x1 conv (into_conv False: the shuffle's output is the graph's output instead)."""
    r = np.random.default_rng(c + g)
    inits = [nh.from_array(r.uniform(-0.5, 0.5, (c, 8 // g if 8 % g == 0 else 8, 1, 1)).astype(np.float32), 'w1'),
             nh.from_array(r.uniform(-0.5, 0.5, (c,)).astype(np.float32), 'b1'),
             nh.from_array(np.array([1, g, c // g, hw, hw], np.int64), 's5'),
             nh.from_array(np.array([1, c, hw, hw], np.int64), 's4'),
             nh.from_array(r.uniform(-0.5, 0.5, (c, 1, 3, 3)).astype(np.float32), 'wd'),
             nh.from_array(r.uniform(-0.5, 0.5, (c, c // g, 1, 1)).astype(np.float32), 'w2')]
    g1 = 1 if 8 % g else g
    nodes = [oh.make_node('Conv', ['x', 'w1', 'b1'], ['c1'], group=g1),
             oh.make_node('Relu', ['c1'], ['r1']),
             oh.make_node('Reshape', ['r1', 's5'], ['v']),
             oh.make_node('Transpose', ['v'], ['t'], perm=list(perm)),
             oh.make_node('Reshape', ['t', 's4'], ['s'])]
    out = 's'
    if into_conv:
        nodes += [oh.make_node('Conv', ['s', 'wd'], ['d'], group=c, pads=[1] * 4),
                  oh.make_node('Conv', ['d', 'w2'], ['y'], group=g)]
        out = 'y'
    gr = oh.make_graph(nodes, 'unit', [oh.make_tensor_value_info('x', TP.FLOAT, (1, 8, hw, hw))],
                       [oh.make_tensor_value_info(out, TP.FLOAT, None)], inits)
    m = oh.make_model(gr, opset_imports=[oh.make_opsetid('', 13)])
    m.ir_version = 8
    return m.SerializeToString()


def run(b, x, level=None, config=None):
    so = onyx.SessionOptions()
    so.log_severity_level = 0
    if level is not None:
        so.graph_optimization_level = level
    for k, v in (config or {}).items():
        so.add_session_config_entry(k, v)
    return onyx.InferenceSession(b, so).run(None, {'x': x})[0]


@pytest.mark.parametrize('c,g,hw', [(24, 4, 9), (36, 3, 7), (40, 8, 5), (34, 2, 6)])
def test_shuffle_between_convs_is_one_step(c, g, hw, capfd):
    b = unit_bytes(c, g, hw)
    x = np.random.default_rng(1).uniform(-1, 1, (1, 8, hw, hw)).astype(np.float32)
    fused = run(b, x)
    err = capfd.readouterr().err
    assert 'fusion: a channel shuffle of %d groups as one step' % g in err
    if g == 4:  # c1 and r1 in the conv, the shuffle's output, d: all but x and y channels last
        assert 'fusion: 3 tensors kept opaque' in err
    plain = run(b, x, onyx.GraphOptimizationLevel.ORT_DISABLE_ALL)
    assert 'channel shuffle' not in capfd.readouterr().err
    ref = ort.InferenceSession(b, providers=['CPUExecutionProvider']).run(None, {'x': x})[0]
    assert np.abs(ref).max() > 0.1
    np.testing.assert_allclose(fused, plain, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(fused, ref, rtol=1e-5, atol=1e-5)
    # the same with the layouts left plain: the kernel's plain path
    flat = run(b, x, config={'optimization.blocked_layouts': '0'})
    np.testing.assert_allclose(flat, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('perm,into_conv', [((0, 2, 1, 3, 4), False), ((0, 1, 2, 4, 3), True)])
def test_other_reshapes_and_transposes_stay(perm, into_conv, capfd):
    """A shuffle into no conv, or a Transpose that is no shuffle: three steps, the same result."""
    b = unit_bytes(24, 4, 6, perm, into_conv)
    x = np.random.default_rng(2).uniform(-1, 1, (1, 8, 6, 6)).astype(np.float32)
    got = run(b, x)
    assert 'channel shuffle' not in capfd.readouterr().err
    ref = ort.InferenceSession(b, providers=['CPUExecutionProvider']).run(None, {'x': x})[0]
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('dtype,shape,g', [(np.float32, (2, 12, 5, 3), 3), (np.uint8, (1, 8, 7), 4),
                                           (np.int64, (1, 6, 2, 2, 3), 2), (np.float32, (1, 5, 4, 4), 5)])
def test_op_against_numpy(dtype, shape, g):
    x = (np.arange(np.prod(shape)) % 251).astype(dtype).reshape(shape)
    tp = {np.float32: TP.FLOAT, np.uint8: TP.UINT8, np.int64: TP.INT64}[dtype]
    node = oh.make_node('ChannelShuffle', ['x'], ['y'], domain='ai.onyx', group=g)
    gr = oh.make_graph([node], 'op', [oh.make_tensor_value_info('x', tp, shape)],
                       [oh.make_tensor_value_info('y', tp, None)])
    m = oh.make_model(gr, opset_imports=[oh.make_opsetid('', 13), oh.make_opsetid('ai.onyx', 1)])
    m.ir_version = 8
    got = onyx.InferenceSession(m.SerializeToString()).run(None, {'x': x})[0]
    np.testing.assert_array_equal(got, shuffle_reference(x, g))


def test_op_refuses_groups_that_do_not_divide():
    node = oh.make_node('ChannelShuffle', ['x'], ['y'], domain='ai.onyx', group=4)
    gr = oh.make_graph([node], 'op', [oh.make_tensor_value_info('x', TP.FLOAT, (1, 6, 2, 2))],
                       [oh.make_tensor_value_info('y', TP.FLOAT, None)])
    m = oh.make_model(gr, opset_imports=[oh.make_opsetid('', 13), oh.make_opsetid('ai.onyx', 1)])
    m.ir_version = 8
    with pytest.raises(Exception, match='6 channels do not split into 4 groups'):
        onyx.InferenceSession(m.SerializeToString())
