"""LayerNormalization and RMSNormalization round each output element once (kernels_cpu/norm/norm.c):
the row's mean and deviation and the normalization are computed in double, so that every float
output is the exact result correctly rounded (to within the check's float64 reference), rows with
a large offset from zero included; stash_type=bfloat16 still rounds the mean and deviation the row
is normalized with, as the spec's function body does."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import onyx


def _model(op, inits, **attrs):
    node = helper.make_node(op, ['x'] + list(inits), ['y'], axis=-1, **attrs)
    graph = helper.make_graph([node], 'g', [helper.make_tensor_value_info('x', TensorProto.FLOAT, None)],
                              [helper.make_tensor_value_info('y', TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid('', 23)]).SerializeToString()


def _rows(rng, rows, cols):
    """Rows of spread 3 around offsets up to 5: the mean's rounding matters where it is large."""
    return (rng.standard_normal((rows, cols)) * 3 + rng.standard_normal((rows, 1)) * 5).astype(np.float32)


def _within_half_ulp(y, exact):
    ulp = np.spacing(np.abs(exact.astype(np.float32))).astype(np.float64)
    err = np.abs(y.astype(np.float64) - exact) / ulp
    assert err.max() <= 0.5 * (1 + 1e-6), err.max()


@pytest.mark.parametrize('cols', [384, 1000])
def test_layernorm_correctly_rounded(cols):
    rng = np.random.default_rng(cols)
    x = _rows(rng, 64, cols)
    g = (rng.standard_normal(cols) * 0.5 + 1).astype(np.float32)
    b = (rng.standard_normal(cols) * 0.1).astype(np.float32)
    y = onyx.Session(_model('LayerNormalization', {'g': g, 'b': b}, epsilon=1e-5)).run(None, {'x': x})[0]
    x64 = x.astype(np.float64)
    mu = x64.mean(-1, keepdims=True)
    var = ((x64 - mu) ** 2).mean(-1, keepdims=True)
    _within_half_ulp(y, (x64 - mu) / np.sqrt(var + 1e-5) * g + b)


def test_rmsnorm_correctly_rounded():
    rng = np.random.default_rng(5)
    x = _rows(rng, 64, 896)
    g = (rng.standard_normal(896) * 0.5 + 1).astype(np.float32)
    y = onyx.Session(_model('RMSNormalization', {'g': g}, epsilon=1e-6)).run(None, {'x': x})[0]
    x64 = x.astype(np.float64)
    _within_half_ulp(y, x64 / np.sqrt((x64 ** 2).mean(-1, keepdims=True) + 1e-6) * g)


def test_bfloat16_stash_rounds_the_statistics():
    """stash_type=bfloat16: the mean and deviation the row is normalized with are bfloat16's."""
    rng = np.random.default_rng(9)
    x = _rows(rng, 8, 64)
    g = np.ones(64, np.float32)
    b = np.zeros(64, np.float32)
    y = onyx.Session(_model('LayerNormalization', {'g': g, 'b': b}, stash_type=16)).run(None, {'x': x})[0]

    def bf16(v):
        u = np.asarray(v, np.float32).view(np.uint32)
        return ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).view(np.float32).astype(np.float64)

    x64 = x.astype(np.float64)
    mu = bf16(x64.mean(-1, keepdims=True))
    inv = bf16(1 / np.sqrt(((x64 - mu) ** 2).mean(-1, keepdims=True) + 1e-5))
    _within_half_ulp(y, (x64 - mu) * inv)
