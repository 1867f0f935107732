"""Version 28 of SpaceToDepth, DepthToSpace, Compress, OneHot, ReverseSequence, Unique, ReduceLogSum
and ReduceLogSumExp against onnx's reference evaluator, on the CPU and the TEST device: what the
node tests of onnx 1.23.2 leave out (CRD with other block sizes, bfloat16 with axes and NaNs, the
refusals of a bad mode and of integer log-reductions). Needs onnx >= 1.23 (opset 28)."""
import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import helper as h
from onnx import numpy_helper as nh
from onnx.reference import ReferenceEvaluator

import onyx
import onyx.backend as backend

pytestmark = pytest.mark.skipif(onnx.defs.onnx_opset_version() < 28,
                                reason='opset 28 needs onnx >= 1.23 for its reference')

DEVICES = ['CPU', 'TEST']
BF16 = ml_dtypes.bfloat16


def _model(op, inputs, n_out=1, opset=28, **attrs):
    """One node of op at opset; inputs: (name, value) pairs, graph inputs in that order."""
    node = h.make_node(op, [n for n, _ in inputs], [f'y{i}' for i in range(n_out)], **attrs)
    ins = [h.make_tensor_value_info(n, h.np_dtype_to_tensor_dtype(v.dtype), v.shape)
           for n, v in inputs]
    outs = [h.make_empty_tensor_value_info(f'y{i}') for i in range(n_out)]
    graph = h.make_graph([node], f'{op}_28', ins, outs)
    return h.make_model(graph, opset_imports=[h.make_opsetid('', opset)])


def _check(device, op, inputs, n_out=1, rtol=0.0, **attrs):
    """Runs the node on device and compares every output with the reference evaluator's."""
    model = _model(op, inputs, n_out, **attrs)
    want = ReferenceEvaluator(model).run(None, dict(inputs))
    got = backend.prepare(model, device).run([v for _, v in inputs])
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        w = np.asarray(w)
        assert g.dtype == w.dtype, f'{op} output {i}'
        assert g.shape == w.shape, f'{op} output {i}'
        if g.dtype == object:
            assert g.tolist() == w.tolist(), f'{op} output {i}'
        else:
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol,
                                       equal_nan=True, err_msg=f'{op} output {i}')
    return got


def _refused(device, model, inputs, *words):
    with pytest.raises(onyx.OnyxError) as e:
        backend.prepare(model, device).run(inputs)
    for w in words:
        assert w in str(e.value)


def _arange(shape, dtype):
    return np.arange(np.prod(shape)).reshape(shape).astype(dtype)


# ---------------------------------------------------------------- SpaceToDepth, DepthToSpace

SPACE_SHAPES = [((1, 1, 4, 6), 2), ((2, 3, 6, 9), 3), ((1, 2, 8, 4), 4), ((2, 2, 3, 5), 1)]


@pytest.mark.parametrize('device', DEVICES)
@pytest.mark.parametrize('mode', ['DCR', 'CRD'])
@pytest.mark.parametrize('shape,b', SPACE_SHAPES)
def test_space_to_depth(device, mode, shape, b):
    x = _arange(shape, np.float32)
    (y,) = _check(device, 'SpaceToDepth', [('x', x)], blocksize=b, mode=mode)
    if b > 1 and shape[1] > 1:  # the two modes then order channels differently
        other = 'CRD' if mode == 'DCR' else 'DCR'
        model = _model('SpaceToDepth', [('x', x)], blocksize=b, mode=other)
        assert not np.array_equal(y, ReferenceEvaluator(model).run(None, {'x': x})[0])


@pytest.mark.parametrize('device', DEVICES)
def test_space_to_depth_default_mode_is_dcr(device):
    x = _arange((1, 2, 4, 4), np.float32)
    (y,) = _check(device, 'SpaceToDepth', [('x', x)], blocksize=2)
    (dcr,) = _check(device, 'SpaceToDepth', [('x', x)], blocksize=2, mode='DCR')
    np.testing.assert_array_equal(y, dcr)


@pytest.mark.parametrize('device', DEVICES)
@pytest.mark.parametrize('dtype', [BF16, np.int64, np.bool_, object])
def test_space_to_depth_crd_types(device, dtype):
    x = _arange((1, 2, 4, 6), np.int64)
    x = (x % 2 == 1) if dtype is np.bool_ else x.astype(str).astype(object) if dtype is object \
        else x.astype(dtype)
    _check(device, 'SpaceToDepth', [('x', x)], blocksize=2, mode='CRD')


@pytest.mark.parametrize('device', DEVICES)
@pytest.mark.parametrize('mode', ['DCR', 'CRD'])
@pytest.mark.parametrize('shape,b', SPACE_SHAPES)
def test_depth_to_space(device, mode, shape, b):
    n, c, hh, ww = shape
    x = _arange((n, c * b * b, hh // b or 1, ww // b or 1), BF16 if b == 3 else np.float32)
    (y,) = _check(device, 'DepthToSpace', [('x', x)], blocksize=b, mode=mode)
    # the inverse of SpaceToDepth in the same mode
    (back,) = _check(device, 'SpaceToDepth', [('y', y)], blocksize=b, mode=mode)
    np.testing.assert_array_equal(back.astype(np.float32), x.astype(np.float32))


@pytest.mark.parametrize('device', DEVICES)
@pytest.mark.parametrize('op', ['SpaceToDepth', 'DepthToSpace'])
def test_depth_space_bad_mode_refused(device, op):
    x = _arange((1, 4, 2, 2), np.float32)
    _refused(device, _model(op, [('x', x)], blocksize=2, mode='RDC'), [x], 'RDC')


@pytest.mark.parametrize('device', DEVICES)
def test_space_to_depth_13_has_no_mode(device):
    # a CRD request under opset 13 must not run as 13's DCR
    x = _arange((1, 4, 2, 2), np.float32)
    model = _model('SpaceToDepth', [('x', x)], opset=13, blocksize=2, mode='CRD')
    _refused(device, model, [x], 'mode')


# ---------------------------------------------------------------- bfloat16 of the movement ops

def _bf16(*shape, nan=False):
    v = np.linspace(-3, 3, int(np.prod(shape)), dtype=np.float32).reshape(shape)
    if nan:
        v.flat[::5] = np.nan
    return v.astype(BF16)


@pytest.mark.parametrize('device', DEVICES)
@pytest.mark.parametrize('axis', [None, 0, 1, -1])
def test_compress_bfloat16(device, axis):
    x = _bf16(3, 4, nan=True)
    n = x.size if axis is None else x.shape[axis]
    cond = np.array([i % 3 != 1 for i in range(n - 1)])  # shorter than the axis: the rest dropped
    attrs = {} if axis is None else {'axis': axis}
    _check(device, 'Compress', [('x', x), ('c', cond)], **attrs)


@pytest.mark.parametrize('device', DEVICES)
@pytest.mark.parametrize('axis', [-1, 0, 1])
def test_onehot_bfloat16(device, axis):
    idx = np.array([[0, 3, -1], [5, -4, 2]], np.int32)  # 5 is out of range: all off
    depth = np.array(4.0, np.float32)
    vals = np.array([-0.5, 2.5], BF16)
    _check(device, 'OneHot', [('i', idx), ('d', depth), ('v', vals)], axis=axis)


@pytest.mark.parametrize('device', DEVICES)
@pytest.mark.parametrize('time_axis,batch_axis', [(0, 1), (1, 0)])
def test_reverse_sequence_bfloat16(device, time_axis, batch_axis):
    x = _bf16(4, 3, 2) if time_axis == 0 else _bf16(3, 4, 2)
    lens = np.array([4, 0, 2], np.int64)
    _check(device, 'ReverseSequence', [('x', x), ('l', lens)], time_axis=time_axis,
           batch_axis=batch_axis)


@pytest.mark.parametrize('device', DEVICES)
@pytest.mark.parametrize('sorted_', [1, 0])
def test_unique_bfloat16(device, sorted_):
    # As float's reference: 0 equals -0, and NaNs count as one value sorted last. The reference
    # itself splits bfloat16 NaNs (numpy's equal_nan skips ml_dtypes' types), so the expectation
    # is the reference's on the same values as float32.
    x = np.array([2.5, np.nan, -1, 0.0, 2.5, -0.0, np.nan, 7, -1, 1e30], np.float32).astype(BF16)
    model = _model('Unique', [('x', x.astype(np.float32))], n_out=4, sorted=sorted_)
    want = ReferenceEvaluator(model).run(None, {'x': x.astype(np.float32)})
    got = backend.prepare(_model('Unique', [('x', x)], n_out=4, sorted=sorted_), device).run([x])
    assert got[0].dtype == BF16
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, f'Unique output {i}'
        np.testing.assert_array_equal(g.astype(w.dtype), w, err_msg=f'Unique output {i}')


@pytest.mark.parametrize('device', DEVICES)
@pytest.mark.parametrize('sorted_', [1, 0])
def test_unique_bfloat16_axis0(device, sorted_):
    x = np.array([[1, 0, 2], [3, 3, 3], [1, 0, 2], [-1, 5, 0], [3, 3, 3]], np.float32).astype(BF16)
    _check(device, 'Unique', [('x', x)], n_out=4, sorted=sorted_, axis=0)


# ---------------------------------------------------------------- ReduceLogSum, ReduceLogSumExp

LOG_OPS = ['ReduceLogSum', 'ReduceLogSumExp']
INTS = [np.int32, np.int64, np.uint32, np.uint64]


@pytest.mark.parametrize('device', DEVICES)
@pytest.mark.parametrize('op', LOG_OPS)
@pytest.mark.parametrize('dtype', INTS)
def test_log_reduce_28_refuses_ints(device, op, dtype):
    x = _arange((2, 3), dtype) + 1
    name = {np.int32: 'int32', np.int64: 'int64', np.uint32: 'uint32', np.uint64: 'uint64'}[dtype]
    _refused(device, _model(op, [('x', x)], keepdims=0), [x], name)


@pytest.mark.parametrize('device', DEVICES)
@pytest.mark.parametrize('op', LOG_OPS)
def test_log_reduce_18_keeps_ints(device, op):
    # onnx's reference refuses integers at every version now; version 18's schema still lists them
    x = _arange((2, 3), np.int64) + 1
    (y,) = backend.prepare(_model(op, [('x', x)], opset=18, keepdims=0), device).run([x])
    s = x.sum() if op == 'ReduceLogSum' else np.exp(x.astype(np.float64)).sum()
    assert y.dtype == np.int64
    assert y == np.int64(np.log(s))


@pytest.mark.parametrize('device', DEVICES)
@pytest.mark.parametrize('op', LOG_OPS)
@pytest.mark.parametrize('dtype', [np.float32, np.float64, np.float16, BF16])
def test_log_reduce_28_floats(device, op, dtype):
    x = (np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 7).astype(dtype)
    axes = np.array([0, -1], np.int64)
    rtol = 1e-5 if dtype in (np.float32, np.float64) else 1e-2
    _check(device, op, [('x', x), ('a', axes)], rtol=rtol, keepdims=1)
