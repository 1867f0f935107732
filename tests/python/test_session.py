"""The onyx.Session API: io description, runs by name and by order, errors as OnyxError."""
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h

import onyx

EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'models', 'example.onnx')


def model_bytes(opset=17):
    """y = relu(x @ w) with a symbolic batch dim; z = shape of x."""
    w = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
    graph = h.make_graph(
        [h.make_node('MatMul', ['x', 'w'], ['t']), h.make_node('Relu', ['t'], ['y']),
         h.make_node('Shape', ['x'], ['z'])],
        'g', [h.make_tensor_value_info('x', TP.FLOAT, ['batch', 3])],
        [h.make_tensor_value_info('y', TP.FLOAT, ['batch', 4]),
         h.make_tensor_value_info('z', TP.INT64, [2])],
        [onnx.numpy_helper.from_array(w, 'w')])
    return h.make_model(graph, opset_imports=[h.make_opsetid('', opset)]).SerializeToString(), w


def test_io_description():
    data, _ = model_bytes()
    s = onyx.Session(data)
    (x,) = s.get_inputs()
    assert (x.name, x.type, x.shape) == ('x', 'tensor(float)', ['batch', 3])
    assert [(o.name, o.type, o.shape) for o in s.get_outputs()] == [
        ('y', 'tensor(float)', ['batch', 4]), ('z', 'tensor(int64)', [2])]


def test_run_by_name_and_order():
    data, w = model_bytes()
    s = onyx.Session(data, threads=1)
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    y, z = s.run(None, {'x': x})
    np.testing.assert_allclose(y, np.maximum(x @ w, 0), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(z, [5, 3])
    (z_only,) = s.run(['z'], {'x': x[:2]})
    np.testing.assert_array_equal(z_only, [2, 3])
    # A non-contiguous input is copied, not misread.
    xt = np.asfortranarray(x)
    np.testing.assert_allclose(s.run(['y'], [xt])[0], np.maximum(x @ w, 0), rtol=1e-6, atol=1e-6)


def test_file_path_and_input_example():
    s = onyx.Session(EXAMPLE, input_example=[np.zeros((4, 16), np.float32)])
    (probs,) = s.run(None, {'x': np.ones((4, 16), np.float32)})
    assert probs.shape == (4, 10)
    np.testing.assert_allclose(probs.sum(axis=1), np.ones(4), rtol=1e-5)


def test_large_outputs_handed_over():
    """Outputs past onyx._values.ADOPT_MIN_BYTES become arrays over the library's storage, without
    a copy: each is right, writable, its own (also a constant output, which the session keeps),
    and outlives the session."""
    rows = 8192   # 8192 x 4 floats: 128 KiB
    c = np.arange(rows * 4, dtype=np.float32).reshape(rows, 4)
    graph = h.make_graph(
        [h.make_node('Relu', ['x'], ['y']), h.make_node('Cast', ['x'], ['y16'], to=TP.FLOAT16),
         h.make_node('Identity', ['c'], ['k'])],
        'g', [h.make_tensor_value_info('x', TP.FLOAT, ['n', 4])],
        [h.make_tensor_value_info('y', TP.FLOAT, ['n', 4]),
         h.make_tensor_value_info('y16', TP.FLOAT16, ['n', 4]),
         h.make_tensor_value_info('k', TP.FLOAT, [rows, 4])],
        [onnx.numpy_helper.from_array(c, 'c')])
    data = h.make_model(graph, opset_imports=[h.make_opsetid('', 17)]).SerializeToString()
    x = np.random.default_rng(1).standard_normal((rows, 4)).astype(np.float32)
    for make in (lambda: onyx.Session(data, threads=1), lambda: onyx.InferenceSession(data)):
        s = make()
        y, y16, k = s.run(None, {'x': x})
        for a in (y, y16, k):
            owner = a
            while isinstance(owner, np.ndarray):
                owner = owner.base
            assert isinstance(owner, onyx._values._Adopted) and a.flags.writeable
        assert y16.dtype == np.float16
        np.testing.assert_array_equal(y, np.maximum(x, 0))
        np.testing.assert_array_equal(y16, x.astype(np.float16))
        y[:] = 7
        k[:] = -1
        y2, _, k2 = s.run(None, {'x': x})
        np.testing.assert_array_equal(y2, np.maximum(x, 0))
        np.testing.assert_array_equal(k2, c)
        del s
        np.testing.assert_array_equal(y2 + k2, np.maximum(x, 0) + c)


def test_errors_carry_the_library_message():
    data, _ = model_bytes()
    s = onyx.Session(data)
    with pytest.raises(onyx.OnyxError) as e:
        s.run(None, {'x': np.ones((2, 5), np.float32)})
    assert e.value.status == 'ONYX_ERR_SHAPE'
    assert "'x'" in str(e.value)
    with pytest.raises(onyx.OnyxError) as e:
        s.run(None, {'x': np.ones((2, 3), np.int32)})
    assert 'int32' in str(e.value)
    with pytest.raises(ValueError):
        s.run(None, {'nope': np.ones((2, 3), np.float32)})
    with pytest.raises(ValueError):
        s.run(['nope'], {'x': np.ones((2, 3), np.float32)})
    with pytest.raises(onyx.OnyxError) as e:
        onyx.Session(b'not a model')
    assert e.value.status == 'ONYX_ERR_INVALID_MODEL'
    with pytest.raises(onyx.OnyxError) as e:
        onyx.Session(EXAMPLE, device='TPU')
    assert e.value.status == 'ONYX_ERR_DEVICE'


def test_strings_sequences_and_optionals():
    graph = h.make_graph(
        [h.make_node('SequenceConstruct', ['a', 'a'], ['seq']),
         h.make_node('OptionalHasElement', ['opt'], ['has']),
         h.make_node('Identity', ['s'], ['s2'])],
        'g', [h.make_tensor_value_info('a', TP.INT64, [2]),
              h.make_value_info('opt', h.make_optional_type_proto(h.make_tensor_type_proto(TP.FLOAT, [1]))),
              h.make_tensor_value_info('s', TP.STRING, [2])],
        [h.make_tensor_sequence_value_info('seq', TP.INT64, [2]),
         h.make_tensor_value_info('has', TP.BOOL, []),
         h.make_tensor_value_info('s2', TP.STRING, [2])])
    s = onyx.Session(h.make_model(graph, opset_imports=[h.make_opsetid('', 18)]))
    a = np.array([3, 4], np.int64)
    seq, has, s2 = s.run(None, {'a': a, 'opt': None, 's': np.array(['héllo', ''], object)})
    assert isinstance(seq, list) and len(seq) == 2
    np.testing.assert_array_equal(seq[1], a)
    assert has.dtype == np.bool_ and not has
    assert list(s2) == ['héllo', '']
    (has,) = s.run(['has'], {'a': a, 'opt': np.ones(1, np.float32), 's': np.array(['x', 'y'], object)})
    assert has


def test_low_precision_types_round_trip():
    ml_dtypes = pytest.importorskip('ml_dtypes')
    for elem, dt in [(TP.INT4, ml_dtypes.int4), (TP.UINT2, ml_dtypes.uint2),
                     (TP.FLOAT4E2M1, ml_dtypes.float4_e2m1fn), (TP.BFLOAT16, ml_dtypes.bfloat16),
                     (TP.FLOAT8E4M3FN, ml_dtypes.float8_e4m3fn)]:
        graph = h.make_graph([h.make_node('Identity', ['x'], ['y'])], 'g',
                             [h.make_tensor_value_info('x', elem, [5])],
                             [h.make_tensor_value_info('y', elem, [5])])
        s = onyx.Session(h.make_model(graph, opset_imports=[h.make_opsetid('', 25)]))
        x = np.array([1, 0, -1, 1, 0] if elem != TP.UINT2 else [1, 2, 3, 0, 1]).astype(dt)
        (y,) = s.run(None, {'x': x})
        assert y.dtype == x.dtype
        np.testing.assert_array_equal(y.astype(np.float32), x.astype(np.float32))


def test_supports_device_and_version():
    assert onyx.supports_device('CPU')
    assert not onyx.supports_device('TPU')
    assert onyx.version()


def test_conv_input_of_unknown_rank():
    """A Conv whose X has no shape at prepare (found by fuzzing: the channels-last dims of X were
    read with rank -1) is planned when the first input comes."""
    w = np.arange(12, dtype=np.float32).reshape(4, 3, 1, 1) / 10
    graph = h.make_graph([h.make_node('Conv', ['x', 'w'], ['y'])], 'g',
                         [h.make_tensor_value_info('x', TP.FLOAT, None)],
                         [h.make_tensor_value_info('y', TP.FLOAT, None)],
                         [onnx.numpy_helper.from_array(w, 'w')])
    data = h.make_model(graph, opset_imports=[h.make_opsetid('', 17)]).SerializeToString()
    s = onyx.Session(data)
    x = np.random.default_rng(0).standard_normal((1, 3, 5, 5)).astype(np.float32)
    (y,) = s.run(None, {'x': x})
    np.testing.assert_allclose(y, np.einsum('oc,nchw->nohw', w[:, :, 0, 0], x), rtol=1e-5, atol=1e-6)
