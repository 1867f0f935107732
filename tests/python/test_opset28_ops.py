"""Opset 28's SwiGLU, BitShift (signed types), Mod (fmod=0 on floats), Celu and Einsum (new types)
against onnx's reference implementation, on the edges the node tests leave out: every signed width
with shifts out of range, Mod's signed zeros and infinities in every float type, SwiGLU and Celu in
double and bfloat16, SwiGLU over more elements than one chunk and in place; and the older versions
refusing what only version 28 defines. Needs onnx >= 1.23 (opset 28)."""
import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import helper as h
from onnx.reference import ReferenceEvaluator

import onyx
import onyx.backend as backend

pytestmark = pytest.mark.skipif(onnx.defs.onnx_opset_version() < 28,
                                reason='needs onnx with opset 28')

DEVICES = ['CPU', 'TEST']
BF16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = [np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16), BF16]


def _model(node, inputs, opset):
    tp = onnx.helper.np_dtype_to_tensor_dtype
    g = h.make_graph([node], 'g',
                     [h.make_tensor_value_info(n, tp(v.dtype), v.shape)
                      for n, v in zip(node.input, inputs)],
                     [h.make_tensor_value_info(n, onnx.TensorProto.UNDEFINED, None)
                      for n in node.output])
    return h.make_model(g, opset_imports=[h.make_opsetid('', opset)])


def _run(node, inputs, device, opset=28):
    return backend.run_model(_model(node, inputs, opset), inputs, device=device)[0]


def _ref(node, inputs, opset=28):
    m = _model(node, inputs, opset)
    return ReferenceEvaluator(m).run(None, dict(zip(node.input, inputs)))[0]


def _same_bits(got, want):
    """Equal values, NaN where NaN, and zeros of the same sign."""
    assert got.dtype == want.dtype and got.shape == want.shape
    g, w = got.astype(np.float64), want.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
    ok = ~np.isnan(w)
    np.testing.assert_array_equal(g[ok], w[ok])
    np.testing.assert_array_equal(np.signbit(g[ok]), np.signbit(w[ok]))


# ---- BitShift-28


def _shift_operands(dt):
    info = np.iinfo(dt)
    bits = info.bits
    xs = [info.min, info.min + 1, -1, 0, 1, 2, 5, -5, info.max, info.max - 1, 0x55]
    ys = [0, 1, 3, bits - 1, bits, bits + 1, 2 * bits, info.max, -1, -bits, info.min]
    xs = sorted({int(np.array(v).astype(dt)) for v in xs})
    ys = [v for v in ys if info.min <= v <= info.max]
    return (np.array(xs, dt).reshape(-1, 1), np.array(ys, dt).reshape(1, -1))


@pytest.mark.parametrize('device', DEVICES)
@pytest.mark.parametrize('direction', ['LEFT', 'RIGHT'])
@pytest.mark.parametrize('dt', [np.int8, np.int16, np.int32, np.int64,
                                np.uint8, np.uint16, np.uint32, np.uint64])
def test_bitshift_28(device, direction, dt):
    x, y = _shift_operands(dt)
    node = h.make_node('BitShift', ['x', 'y'], ['z'], direction=direction)
    got = _run(node, [x, y], device)
    want = _ref(node, [x, y])
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_bitshift_11_refuses_signed():
    node = h.make_node('BitShift', ['x', 'y'], ['z'], direction='RIGHT')
    x = np.array([-4, 4], np.int8)
    with pytest.raises(onyx.OnyxError):
        _run(node, [x, np.array([1, 1], np.int8)], 'CPU', opset=27)
    # unsigned still runs as version 11
    u = np.array([4, 8], np.uint8)
    np.testing.assert_array_equal(_run(node, [u, np.array([1, 2], np.uint8)], 'CPU', opset=27),
                                  [2, 2])


# ---- Mod-28


def _mod_operands(dt):
    v = [0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 7.0, -7.0, 1e-3, -1e-3, 3.0e4, -3.0e4,
         np.inf, -np.inf, np.nan]
    x = np.array(v, np.float64).astype(dt).reshape(-1, 1)
    y = np.array(v, np.float64).astype(dt).reshape(1, -1)
    return x, y


@pytest.mark.parametrize('device', DEVICES)
@pytest.mark.parametrize('fmod', [0, 1])
@pytest.mark.parametrize('dt', FLOATS, ids=str)
@pytest.mark.filterwarnings('ignore::RuntimeWarning')
def test_mod_28_floats(device, fmod, dt):
    x, y = _mod_operands(dt)
    node = h.make_node('Mod', ['a', 'b'], ['c'], fmod=fmod)
    got = _run(node, [x, y], device)
    want = _ref(node, [x, y])
    if fmod == 1:
        # fmod=1 lets -0 % positive be either zero; compare values and NaNs only
        np.testing.assert_array_equal(np.isnan(got.astype(np.float64)),
                                      np.isnan(want.astype(np.float64)))
        ok = ~np.isnan(want.astype(np.float64))
        np.testing.assert_array_equal(got.astype(np.float64)[ok], want.astype(np.float64)[ok])
    else:
        _same_bits(got, want)


@pytest.mark.parametrize('dt', [np.int8, np.int32, np.int64, np.uint8, np.uint64])
def test_mod_28_ints(dt):
    info = np.iinfo(dt)
    x = np.array([v for v in [info.min, -7, -1, 0, 1, 7, info.max] if v >= info.min],
                 dt).reshape(-1, 1)
    y = np.array([v for v in [1, 3, -3, 5, -5, info.max] if info.min <= v], dt).reshape(1, -1)
    for fmod in (0, 1):
        node = h.make_node('Mod', ['a', 'b'], ['c'], fmod=fmod)
        np.testing.assert_array_equal(_run(node, [x, y], 'CPU'), _ref(node, [x, y]))


def test_mod_13_refuses_float_fmod_0():
    node = h.make_node('Mod', ['a', 'b'], ['c'], fmod=0)
    x = np.array([5.0, -5.0], np.float32)
    with pytest.raises(onyx.OnyxError):
        _run(node, [x, np.array([3.0, 3.0], np.float32)], 'CPU', opset=27)


# ---- SwiGLU-28


def _swiglu_want(a, b, alpha):
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    return (a64 / (1 + np.exp(-alpha * a64)) * b64)


def _close(got, want64, dt):
    # half types: one rounding of a float result, up to an ulp or so apart
    rtol = {np.dtype(np.float16): 2e-3, BF16: 1.6e-2}.get(np.dtype(dt), 1e-5)
    np.testing.assert_allclose(got.astype(np.float64), want64, rtol=rtol, atol=rtol * 1e-2)


@pytest.mark.parametrize('device', DEVICES)
@pytest.mark.parametrize('alpha', [None, 0.5, -1.25, 0.0])
@pytest.mark.parametrize('dt', FLOATS, ids=str)
def test_swiglu(device, alpha, dt):
    rng = np.random.default_rng(28)
    # more than one 256-element chunk, and not a multiple of it or of a vector
    a = (rng.standard_normal((3, 419)) * 4).astype(dt)
    b = (rng.standard_normal((3, 419)) * 2).astype(dt)
    kw = {} if alpha is None else {'alpha': alpha}
    node = h.make_node('SwiGLU', ['a', 'b'], ['y'], **kw)
    got = _run(node, [a, b], device)
    assert got.dtype == dt and got.shape == a.shape
    _close(got, _swiglu_want(a, b, 1.0 if alpha is None else alpha), dt)
    if dt in (np.float32, np.float64):
        np.testing.assert_allclose(got, _ref(node, [a, b]), rtol=1e-5, atol=1e-6)


def test_swiglu_specials():
    a = np.array([0.0, -0.0, 100.0, -100.0, np.inf, -np.inf, np.nan, 1.0], np.float32)
    b = np.array([2.0, 2.0, 3.0, 3.0, 1.0, 1.0, 1.0, np.nan], np.float32)
    node = h.make_node('SwiGLU', ['a', 'b'], ['y'])
    got = _run(node, [a, b], 'CPU')
    with np.errstate(all='ignore'):
        want = _ref(node, [a, b])
    # the reference's exp(100) overflows float32, so its -100 gate gives -0 for the true -1.1e-41
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-38)


def test_swiglu_in_place():
    """The output may take either input's bytes where the inputs are intermediate values."""
    rng = np.random.default_rng(5)
    a0 = rng.standard_normal((1000,)).astype(np.float32)
    b0 = rng.standard_normal((1000,)).astype(np.float32)
    nodes = [h.make_node('Neg', ['a0'], ['a']), h.make_node('Neg', ['b0'], ['b']),
             h.make_node('SwiGLU', ['a', 'b'], ['y'], alpha=0.75)]
    f = onnx.TensorProto.FLOAT
    g = h.make_graph(nodes, 'g', [h.make_tensor_value_info('a0', f, [1000]),
                                  h.make_tensor_value_info('b0', f, [1000])],
                     [h.make_tensor_value_info('y', f, [1000])])
    m = h.make_model(g, opset_imports=[h.make_opsetid('', 28)])
    for device in DEVICES:
        got = backend.run_model(m, [a0, b0], device=device)[0]
        np.testing.assert_allclose(got, _swiglu_want(-a0, -b0, 0.75), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize('shapes, dts', [
    (((2, 3), (1, 3)), (np.float32, np.float32)),    # broadcastable, but SwiGLU does not broadcast
    (((2, 3), (3,)), (np.float32, np.float32)),
    (((2, 3), (2, 3)), (np.float32, np.float16)),
    (((2, 3), (2, 3)), (np.int32, np.int32)),
])
def test_swiglu_refuses(shapes, dts):
    a, b = (np.ones(s, d) for s, d in zip(shapes, dts))
    with pytest.raises(onyx.OnyxError):
        _run(h.make_node('SwiGLU', ['a', 'b'], ['y']), [a, b], 'CPU')


# ---- Celu-28, Einsum-28


@pytest.mark.parametrize('device', DEVICES)
@pytest.mark.parametrize('alpha', [None, 0.5, -2.0])
@pytest.mark.parametrize('dt', FLOATS, ids=str)
def test_celu_28(device, alpha, dt):
    x = np.linspace(-6, 6, 301).astype(dt)
    kw = {} if alpha is None else {'alpha': alpha}
    node = h.make_node('Celu', ['x'], ['y'], **kw)
    got = _run(node, [x], device)
    al = 1.0 if alpha is None else alpha
    x64 = x.astype(np.float64)
    want = np.maximum(0, x64) + np.minimum(0, al * np.expm1(x64 / al))
    assert got.dtype == dt
    _close(got, want, dt)


def test_celu_12_refuses_double():
    with pytest.raises(onyx.OnyxError):
        _run(h.make_node('Celu', ['x'], ['y']), [np.ones(3, np.float64)], 'CPU', opset=27)


@pytest.mark.parametrize('device', DEVICES)
def test_einsum_28_bfloat16(device):
    rng = np.random.default_rng(12)
    x = rng.standard_normal((2, 3, 5)).astype(BF16)
    y = rng.standard_normal((2, 5, 4)).astype(BF16)
    node = h.make_node('Einsum', ['x', 'y'], ['z'], equation='bij,bjk->bik')
    got = _run(node, [x, y], device)
    assert got.dtype == BF16
    want = np.einsum('bij,bjk->bik', x.astype(np.float64), y.astype(np.float64))
    _close(got, want, BF16)
    with pytest.raises(onyx.OnyxError):
        _run(node, [x, y], 'CPU', opset=27)
