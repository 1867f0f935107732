"""The float6 types (FLOAT6E2M3, FLOAT6E3M2; onnx 1.23, opset 28) through the Python adapter: Cast,
QuantizeLinear and DequantizeLinear on every code and on the rounding boundaries, on the CPU and the
TEST device, compared bit for bit with onnx's ReferenceEvaluator; their packing (6 bits a value,
ONNX's raw_data stream) both ways; and the versions that must refuse them."""
import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx.reference import ReferenceEvaluator

import onyx
import onyx.backend as backend

if not hasattr(TP, 'FLOAT6E2M3'):  # until the project's onnx is 1.23
    pytest.skip(f'onnx {onnx.__version__} has no float6 types', allow_module_level=True)

FLOAT6 = [(TP.FLOAT6E2M3, ml_dtypes.float6_e2m3fn), (TP.FLOAT6E3M2, ml_dtypes.float6_e3m2fn)]
IDS = ['e2m3', 'e3m2']


def model(nodes, inputs, outputs, opset=28):
    """inputs / outputs: (name, element type) pairs, shapes left free."""
    g = h.make_graph(nodes, 'g', [h.make_tensor_value_info(n, t, None) for n, t in inputs],
                     [h.make_tensor_value_info(n, t, None) for n, t in outputs])
    return h.make_model(g, opset_imports=[h.make_opsetid('', opset)],
                        ir_version=11 if opset < 28 else 14)


def bits(a):
    """The values' bit patterns (NaN payloads and zero signs included) for exact comparison."""
    a = np.asarray(a)
    return a.view(np.dtype(f'u{a.dtype.itemsize}'))


def check_same(m, feeds):
    want = ReferenceEvaluator(m).run(None, feeds)
    for device in ('CPU', 'TEST'):
        got = backend.prepare(m, device).run(list(feeds.values()))
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape, device
            np.testing.assert_array_equal(bits(g), bits(w), err_msg=device)


def all_codes(np_type):
    return np.arange(64, dtype=np.uint8).view(np_type)


def boundaries(np_type, float_type):
    """Every value, the midpoints of neighbours and a hair either side (in float_type), overflow,
    infinities, NaNs of both signs, tiny values and zeros."""
    v = np.unique(all_codes(np_type).astype(np.float64))
    mid = (v[:-1] + v[1:]) / 2
    big = float(v[-1])
    extra = [big * 1.03, big + (v[-1] - v[-2]) / 2, -big * 1.5, 1e30, -1e30, np.inf, -np.inf,
             np.nan, -np.nan, 1e-30, -1e-30, 0.0, -0.0]
    with np.errstate(over='ignore'):  # 1e30 in float16
        x = np.concatenate([v, mid, extra]).astype(float_type)
    return np.concatenate([x, np.nextafter(mid.astype(float_type), float_type(np.inf)),
                           np.nextafter(mid.astype(float_type), float_type(-np.inf))])


@pytest.mark.parametrize('elem,np_type', FLOAT6, ids=IDS)
@pytest.mark.parametrize('to', [TP.FLOAT, TP.DOUBLE, TP.FLOAT16, TP.BFLOAT16, TP.INT8,
                                TP.FLOAT4E2M1])
def test_cast_from_float6(elem, np_type, to):
    m = model([h.make_node('Cast', ['x'], ['y'], to=to)], [('x', elem)], [('y', to)])
    check_same(m, {'x': all_codes(np_type)})


@pytest.mark.parametrize('elem,np_type', FLOAT6, ids=IDS)
@pytest.mark.parametrize('src', [np.float32, np.float64, np.float16])
@pytest.mark.parametrize('saturate', [0, 1])
def test_cast_to_float6(elem, np_type, src, saturate):
    x = boundaries(np_type, src)
    m = model([h.make_node('Cast', ['x'], ['y'], to=elem, saturate=saturate)],
              [('x', onnx.helper.np_dtype_to_tensor_dtype(np.dtype(src)))], [('y', elem)])
    check_same(m, {'x': x})
    # packed lengths that end inside a byte, and a 2-D shape
    for n in (1, 2, 3, 5, 7):
        check_same(m, {'x': x[:n]})
    check_same(m, {'x': x[:15].reshape(3, 5)})


def test_cast_between_float6_and_ints():
    x = np.arange(-40, 41, dtype=np.int32)
    for elem, np_type in FLOAT6:
        m = model([h.make_node('Cast', ['x'], ['y'], to=elem)], [('x', TP.INT32)], [('y', elem)])
        check_same(m, {'x': x})
        m = model([h.make_node('Cast', ['x'], ['y'], to=TP.FLOAT6E3M2 + TP.FLOAT6E2M3 - elem)],
                  [('x', elem)], [('y', TP.FLOAT6E3M2 + TP.FLOAT6E2M3 - elem)])
        check_same(m, {'x': all_codes(np_type)})


@pytest.mark.parametrize('elem,np_type', FLOAT6, ids=IDS)
def test_quantize_linear(elem, np_type):
    x = boundaries(np_type, np.float32)
    x = x[np.isfinite(x)].reshape(-1, 1) * np.array([[1, 0.5, 2, 3]], np.float32)
    scale = np.array([1, 0.5, 2, 3], np.float32)
    # no zero point: the type from output_dtype; per tensor and per axis
    m = model([h.make_node('QuantizeLinear', ['x', 's'], ['y'], axis=1, output_dtype=elem)],
              [('x', TP.FLOAT), ('s', TP.FLOAT)], [('y', elem)])
    check_same(m, {'x': x, 's': scale})
    check_same(m, {'x': x, 's': np.float32(0.75)})
    # a zero point is added (in float32, also for float16 x: numpy's promotion), then rounded
    zp = np.array([0.5, -1.0, 0.25, 3.0]).astype(np_type)
    m = model([h.make_node('QuantizeLinear', ['x', 's', 'z'], ['y'], axis=1)],
              [('x', TP.FLOAT), ('s', TP.FLOAT), ('z', elem)], [('y', elem)])
    check_same(m, {'x': x, 's': scale, 'z': zp})
    m = model([h.make_node('QuantizeLinear', ['x', 's', 'z'], ['y'], axis=1)],
              [('x', TP.FLOAT16), ('s', TP.FLOAT16), ('z', elem)], [('y', elem)])
    with np.errstate(over='ignore'):  # 1e30 becomes inf
        x16 = x.astype(np.float16)
    check_same(m, {'x': x16, 's': scale.astype(np.float16), 'z': zp})


@pytest.mark.parametrize('elem,np_type', FLOAT6, ids=IDS)
def test_dequantize_linear(elem, np_type):
    x = all_codes(np_type).reshape(16, 4)
    scale = np.array([1, 0.5, 2, 3.3], np.float32)
    zp = np.array([0.5, -1.0, 0.0, 3.0]).astype(np_type)
    m = model([h.make_node('DequantizeLinear', ['x', 's'], ['y'], axis=1)],
              [('x', elem), ('s', TP.FLOAT)], [('y', TP.FLOAT)])
    check_same(m, {'x': x, 's': scale})
    # float6 zero points are subtracted (float8's and float4's are not): the reference does
    m = model([h.make_node('DequantizeLinear', ['x', 's', 'z'], ['y'], axis=1)],
              [('x', elem), ('s', TP.FLOAT), ('z', elem)], [('y', TP.FLOAT)])
    check_same(m, {'x': x, 's': scale, 'z': zp})
    m = model([h.make_node('DequantizeLinear', ['x', 's', 'z'], ['y'], axis=1,
                           output_dtype=TP.FLOAT16)],
              [('x', elem), ('s', TP.FLOAT), ('z', elem)], [('y', TP.FLOAT16)])
    check_same(m, {'x': x, 's': scale, 'z': zp})


def test_optional_round_trip():
    x = all_codes(ml_dtypes.float6_e2m3fn)[:7]
    opt = h.make_optional_type_proto(h.make_tensor_type_proto(TP.FLOAT6E2M3, None))
    g = h.make_graph([h.make_node('Optional', ['x'], ['o']),
                      h.make_node('OptionalGetElement', ['o'], ['y']),
                      h.make_node('OptionalHasElement', ['o'], ['b'])], 'g',
                     [h.make_tensor_value_info('x', TP.FLOAT6E2M3, None)],
                     [h.make_tensor_value_info('y', TP.FLOAT6E2M3, None),
                      h.make_tensor_value_info('b', TP.BOOL, None)],
                     value_info=[h.make_value_info('o', opt)])
    m = h.make_model(g, opset_imports=[h.make_opsetid('', 28)], ir_version=14)
    y, b = backend.prepare(m, 'CPU').run([x])
    assert y.dtype == x.dtype and bits(y).tolist() == bits(x).tolist() and bool(b)


def test_refused_before_opset_28():
    x = all_codes(ml_dtypes.float6_e2m3fn)
    cases = [
        model([h.make_node('Cast', ['x'], ['y'], to=TP.FLOAT)], [('x', TP.FLOAT6E2M3)],
              [('y', TP.FLOAT)], opset=25),
        model([h.make_node('CastLike', ['x', 'l'], ['y'])],
              [('x', TP.FLOAT6E2M3), ('l', TP.FLOAT)], [('y', TP.FLOAT)]),
        model([h.make_node('DequantizeLinear', ['x', 's'], ['y'])],
              [('x', TP.FLOAT6E2M3), ('s', TP.FLOAT)], [('y', TP.FLOAT)], opset=25),
    ]
    feeds = [[x], [x, np.zeros(1, np.float32)], [x, np.float32(1)]]
    for m, f in zip(cases, feeds):
        with pytest.raises(onyx.OnyxError) as e:
            backend.prepare(m, 'CPU').run(f)
        assert 'float6e2m3' in str(e.value)
