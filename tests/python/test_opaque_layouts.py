"""The opaque layout between convolutions (core/fuse_blocked.c) as the kernels' queries decide it:
the fusion pass asks each step's kernel (kernel.takes_chain) before it keeps a tensor opaque, and
where one refuses, keeps opaque tensors between convolutions only. Conv -> pooling -> Conv -> Conv:
a pooling oneDNN has a channels-last kernel for takes the layout (every tensor between the
convolutions opaque); an AveragePool whose ceil_mode pad is counted has none, says so, and only
the tensor between the last two convolutions stays opaque. The numbers are the plain plan's."""
import numpy as np
import pytest

import onyx

onnx = pytest.importorskip('onnx')

from onnx import TensorProto as TP  # noqa: E402
from onnx import helper as oh  # noqa: E402
from onnx import numpy_helper as nh  # noqa: E402


def model_bytes(count_include_pad):
    r = np.random.default_rng(3)
    inits, nodes = [], []

    def conv(x, name):
        inits.append(nh.from_array(r.uniform(-0.2, 0.2, (16, 16, 3, 3)).astype(np.float32), name + '_w'))
        nodes.append(oh.make_node('Conv', [x, name + '_w'], [name], pads=[1, 1, 1, 1]))
        return name

    c1 = conv('x', 'c1')
    # 8 -> 4 with ceil_mode: one pad past the input on the right of each spatial axis
    nodes.append(oh.make_node('AveragePool', [c1], ['p'], kernel_shape=[3, 3], strides=[2, 2],
                              ceil_mode=1, count_include_pad=count_include_pad, name='p'))
    c3 = conv(conv('p', 'c2'), 'c3')
    g = oh.make_graph(nodes, 'layouts', [oh.make_tensor_value_info('x', TP.FLOAT, (1, 16, 8, 8))],
                      [oh.make_tensor_value_info(c3, TP.FLOAT, None)], inits)
    m = oh.make_model(g, opset_imports=[oh.make_opsetid('', 13)])
    m.ir_version = 8
    return m.SerializeToString()


def run(b, x, level=None):
    so = onyx.SessionOptions()
    so.log_severity_level = 0
    if level is not None:
        so.graph_optimization_level = level
    return onyx.InferenceSession(b, so).run(None, {'x': x})[0]


@pytest.mark.parametrize('count_include_pad', [0, 1])
def test_layouts_the_kernels_take(count_include_pad, capfd):
    b = model_bytes(count_include_pad)
    x = np.random.default_rng(4).uniform(-1, 1, (1, 16, 8, 8)).astype(np.float32)
    fused = run(b, x)
    err = capfd.readouterr().err
    refusal = "node 'p' (AveragePool-11) takes no opaque layout here: opaque tensors between " \
              "convolutions only"
    if count_include_pad:  # c2 -> c3 alone
        assert refusal in err
        assert 'fusion: 1 tensors kept opaque' in err
    else:  # c1 -> p, p -> c2, c2 -> c3
        assert 'takes no opaque layout' not in err
        assert 'fusion: 3 tensors kept opaque' in err
    plain = run(b, x, onyx.GraphOptimizationLevel.ORT_DISABLE_ALL)
    assert 'tensors kept opaque' not in capfd.readouterr().err
    assert np.abs(plain).max() > 0
    np.testing.assert_allclose(fused, plain, rtol=1e-4, atol=1e-5)


def dense_block_bytes(act):
    """DenseNet's pre-activation block: conv0 -> [BatchNorm -> act -> 1x1 conv -> BatchNorm -> act ->
    3x3 conv] -> Concat(conv0's, the layer's) -> BatchNorm -> act -> 1x1 conv. The BatchNorm and
    act before each conv are its pre-ops; act 'LeakyRelu' a leaky one, None an affine alone."""
    r = np.random.default_rng(5)
    inits, nodes = [], []

    def const(name, a):
        inits.append(nh.from_array(a.astype(np.float32), name))
        return name

    def conv(x, name, cin, cout, k):
        nodes.append(oh.make_node('Conv', [x, const(name + '_w', r.uniform(-0.3, 0.3, (cout, cin, k, k)))],
                                  [name], pads=[k // 2] * 4))
        return name

    def pre(x, name, ch):
        nodes.append(oh.make_node('BatchNormalization', [
            x, const(name + '_s', r.uniform(0.5, 1.5, ch)), const(name + '_b', r.uniform(-0.5, 0.5, ch)),
            const(name + '_m', r.uniform(-0.2, 0.2, ch)), const(name + '_v', r.uniform(0.5, 1.5, ch))],
            [name + '_bn']))
        if act is None:
            return name + '_bn'
        attrs = {'alpha': 0.1} if act == 'LeakyRelu' else {}
        nodes.append(oh.make_node(act, [name + '_bn'], [name], **attrs))
        return name

    c0 = conv('x', 'c0', 3, 16, 3)
    c2 = conv(pre(conv(pre(c0, 'p1', 16), 'c1', 16, 24, 1), 'p2', 24), 'c2', 24, 8, 3)
    nodes.append(oh.make_node('Concat', [c0, c2], ['cat'], axis=1))
    conv(pre('cat', 'p3', 24), 'y', 24, 8, 1)
    g = oh.make_graph(nodes, 'dense', [oh.make_tensor_value_info('x', TP.FLOAT, (1, 3, 10, 9))],
                      [oh.make_tensor_value_info('y', TP.FLOAT, None)], inits)
    m = oh.make_model(g, opset_imports=[oh.make_opsetid('', 13)])
    m.ir_version = 8
    return m.SerializeToString()


@pytest.mark.parametrize('act', ['Relu', 'LeakyRelu', None])
def test_pre_activation_reads_an_opaque_x(act, capfd):
    """A conv whose pre-ops (BatchNorm, act) read a channels-last X applies them pixel by pixel:
    DenseNet's block keeps c0, c1, c2 and the Concat channels last (no reorder around them)."""
    b = dense_block_bytes(act)
    x = np.random.default_rng(6).uniform(-1, 1, (1, 3, 10, 9)).astype(np.float32)
    fused = run(b, x)
    assert 'fusion: 4 tensors kept opaque' in capfd.readouterr().err
    plain = run(b, x, onyx.GraphOptimizationLevel.ORT_DISABLE_ALL)
    ort = pytest.importorskip('onnxruntime')
    ref = ort.InferenceSession(b, providers=['CPUExecutionProvider']).run(None, {'x': x})[0]
    assert np.abs(ref).max() > 0.1
    np.testing.assert_allclose(fused, plain, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(fused, ref, rtol=1e-5, atol=1e-5)
