"""An EfficientNet-style block (1x1 expansion, SiLU, depthwise conv, SiLU, squeeze-and-excitation,
1x1 projection) with the optimizations on, against numpy: the fused path runs SiLU after each
convolution through vmath's SiLU (kernels_cpu/common/post_vmath.c) and the global pooling over
the channels-last tensor between the convolutions (kernels_cpu/common/opaque.c). Spatial sizes
and channel counts are chosen to leave remainders (pixel rows not a multiple of 4, channels off
the vector width)."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import onyx


def _silu_nodes(x, y):
    return [helper.make_node('Sigmoid', [x], [y + '_s']), helper.make_node('Mul', [x, y + '_s'], [y])]


def _block(c, e, h, w, k, rng):
    ws = {
        'w_exp': rng.standard_normal((e, c, 1, 1)).astype(np.float32) * 0.5,
        'b_exp': rng.standard_normal(e).astype(np.float32) * 0.1,
        'w_dw': rng.standard_normal((e, 1, k, k)).astype(np.float32) * 0.3,
        'b_dw': rng.standard_normal(e).astype(np.float32) * 0.1,
        'w_fc1': rng.standard_normal((e // 4, e, 1, 1)).astype(np.float32) * 0.3,
        'b_fc1': rng.standard_normal(e // 4).astype(np.float32) * 0.1,
        'w_fc2': rng.standard_normal((e, e // 4, 1, 1)).astype(np.float32) * 0.3,
        'b_fc2': rng.standard_normal(e).astype(np.float32) * 0.1,
        'w_proj': rng.standard_normal((c, e, 1, 1)).astype(np.float32) * 0.3,
    }
    p = k // 2
    nodes = [helper.make_node('Conv', ['x', 'w_exp', 'b_exp'], ['a'])]
    nodes += _silu_nodes('a', 'a1')
    nodes += [helper.make_node('Conv', ['a1', 'w_dw', 'b_dw'], ['d'], group=e, pads=[p] * 4)]
    nodes += _silu_nodes('d', 'd1')
    nodes += [helper.make_node('GlobalAveragePool', ['d1'], ['g']),
              helper.make_node('Conv', ['g', 'w_fc1', 'b_fc1'], ['f'])]
    nodes += _silu_nodes('f', 'f1')
    nodes += [helper.make_node('Conv', ['f1', 'w_fc2', 'b_fc2'], ['f2']),
              helper.make_node('Sigmoid', ['f2'], ['sc']),
              helper.make_node('Mul', ['d1', 'sc'], ['m']),
              helper.make_node('Conv', ['m', 'w_proj'], ['y'])]
    graph = helper.make_graph(
        nodes, 'se_block', [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, c, h, w])],
        [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, c, h, w])],
        [numpy_helper.from_array(v, n) for n, v in ws.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17)])
    return model.SerializeToString(), ws


def _reference(x, ws, k):
    def conv1x1(t, wt, b=None):
        r = np.einsum('oc,nchw->nohw', wt[:, :, 0, 0].astype(np.float64), t)
        return r if b is None else r + b[None, :, None, None]

    def silu(t):
        return t / (1 + np.exp(-t))

    a = silu(conv1x1(x.astype(np.float64), ws['w_exp'], ws['b_exp']))
    n, e, h, w = a.shape
    p = k // 2
    ap = np.pad(a, ((0, 0), (0, 0), (p, p), (p, p)))
    d = np.zeros_like(a)
    for i in range(k):
        for j in range(k):
            d += ap[:, :, i:i + h, j:j + w] * ws['w_dw'][None, :, 0, i, j, None, None]
    d = silu(d + ws['b_dw'][None, :, None, None])
    g = d.mean(axis=(2, 3), keepdims=True)
    f = silu(conv1x1(g, ws['w_fc1'], ws['b_fc1']))
    sc = 1 / (1 + np.exp(-conv1x1(f, ws['w_fc2'], ws['b_fc2'])))
    return conv1x1(d * sc, ws['w_proj'])


@pytest.mark.parametrize('c,e,h,w,k', [(16, 32, 7, 7, 3), (24, 40, 5, 6, 5), (8, 96, 23, 19, 3)])
@pytest.mark.parametrize('threads', [1, 2])
def test_se_block_matches_numpy(c, e, h, w, k, threads):
    rng = np.random.default_rng(c * 1000 + e + h)
    model, ws = _block(c, e, h, w, k, rng)
    # inputs spanning SiLU's range, past where sigmoid(x) underflows in float
    x = (rng.standard_normal((1, c, h, w)) * 4).astype(np.float32)
    x[0, 0, 0, :3] = [-95.0, -60.0, 40.0]
    so = onyx.SessionOptions()
    so.intra_op_num_threads = threads
    (y,) = onyx.InferenceSession(model, so).run(None, {'x': x})
    np.testing.assert_allclose(y, _reference(x, ws, k), rtol=1e-4, atol=1e-4)
