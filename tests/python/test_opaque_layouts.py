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
