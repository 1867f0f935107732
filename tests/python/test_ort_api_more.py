"""onnxruntime's Python API as onnxruntime's own tests use it (issue 35): each test here checks one
thing onyx's compatibility layer (onyx.ort, onyx.ort_capi and the `onnxruntime` shim package in
backend/python/ort_shim) must do as onnxruntime does. Models are built with onnx.helper."""
import importlib
import os
import sys
import threading

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import onyx
import onyx as ort
from onyx import ort_capi

F = TensorProto.FLOAT


def mul_model(x_shape=(3, 2)):
    w = numpy_helper.from_array(np.arange(1, 7, dtype=np.float32).reshape(3, 2), 'W')
    g = helper.make_graph([helper.make_node('Mul', ['X', 'W'], ['Y'])], 'mul',
                          [helper.make_tensor_value_info('X', F, list(x_shape))],
                          [helper.make_tensor_value_info('Y', F, [3, 2])], [w])
    return helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])


def identity_model(elem=F, shape=(2, 2), dims_denoted=None, opset=13):
    x = helper.make_tensor_value_info('x', elem, list(shape))
    for dim, den in zip(x.type.tensor_type.shape.dim, dims_denoted or []):
        if den:
            dim.denotation = den
    g = helper.make_graph([helper.make_node('Identity', ['x'], ['y'])], 'id', [x],
                          [helper.make_tensor_value_info('y', elem, list(shape))])
    return helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)]).SerializeToString()


X = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)


def session(model=None, so=None):
    return ort.InferenceSession((model or mul_model()).SerializeToString() if not isinstance(model, bytes)
                                else model, sess_options=so, providers=['CPUExecutionProvider'])


# ---- inputs

def test_lists_and_scalars_take_the_inputs_declared_type():
    y, = session().run(None, {'X': X.tolist()})   # Python floats (double) into a float input
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y, X * X)
    s = ort.InferenceSession(identity_model(TensorProto.INT64, ()), providers=['CPUExecutionProvider'])
    out, = s.run(None, {'x': 7})
    assert out.dtype == np.int64 and out.shape == () and out == 7


def test_string_list_and_void_strings():
    s = ort.InferenceSession(identity_model(TensorProto.STRING), providers=['CPUExecutionProvider'])
    out, = s.run(None, {'x': [['this', 'is'], ['a', 'test']]})
    assert out.tolist() == [['this', 'is'], ['a', 'test']]
    void = np.array([b'must', b'have', b'same', b'size'], dtype=np.void).reshape(2, 2)
    out, = s.run(None, {'x': void})
    assert out.tolist() == [['must', 'have'], ['same', 'size']]


def test_missing_inputs_message_and_class():
    g = helper.make_graph([helper.make_node('Add', ['a', 'b'], ['c'])], 'add',
                          [helper.make_tensor_value_info(n, F, [1]) for n in 'ab'],
                          [helper.make_tensor_value_info('c', F, [1])])
    s = ort.InferenceSession(helper.make_model(g).SerializeToString(), providers=['CPUExecutionProvider'])
    with pytest.raises(ValueError) as e:
        s.run(None, {'b': np.ones(1, np.float32)})
    assert "Required inputs (['a']) are missing from input feed (['b'])" in str(e.value)
    with pytest.raises(ValueError):   # an unknown name for a missing one: still the missing inputs
        s.run(None, {'b': np.ones(1, np.float32), 'z': np.ones(1, np.float32)})


# ---- errors

def test_error_classes_have_onnxruntimes_hierarchy():
    for name in onyx._lib.ORT_ERRORS:
        cls = getattr(ort_capi, name)
        assert issubclass(cls, onyx.OnyxError) and issubclass(cls, Exception)
        assert not issubclass(cls, (RuntimeError, ValueError)), name
    assert not issubclass(ort_capi.InvalidGraph, ort_capi.InvalidProtobuf)
    with pytest.raises(ort_capi.NoSuchFile):
        ort.InferenceSession('no-such-model.onnx')
    with pytest.raises(ort_capi.InvalidProtobuf):
        ort.InferenceSession(b'not a model')
    with pytest.raises(ort_capi.InvalidArgument):
        session().run(None, {'X': np.zeros((3, 3), np.float32)})


def test_unknown_config_key_and_provider_raise_runtime_error():
    with pytest.raises(RuntimeError, match='SessionOptions does not have configuration with key: NOPE'):
        ort.SessionOptions().get_session_config_entry('NOPE')
    s = session()
    with pytest.raises(RuntimeError, match='Unknown Provider Type: InvalidProvider'):
        s.set_providers(['InvalidProvider'])
    assert s.get_providers() == ['CPUExecutionProvider']   # the session it had is kept


# ---- module functions and types

def test_version_build_info_telemetry():
    assert ort.ort.get_version_string() == onyx.__version__
    assert 'Build Info' in ort.ort.get_build_info()
    ort.ort.disable_telemetry_events()
    ort.ort.enable_telemetry_events()


def test_default_logger_callback():
    lines = []
    try:
        ort.ort.set_default_logger_callback(lambda *a: lines.append(a), severity=0)
        session()
        assert lines and all(isinstance(a[0], int) and all(isinstance(x, str) for x in a[1:]) for a in lines)
        ort.ort.set_default_logger_callback(lambda *a: 1 / 0, severity=0)
        session()   # a callback that raises is ignored
        for bad in (5, -1):
            with pytest.raises(RuntimeError):
                ort.ort.set_default_logger_callback(print, severity=bad)
        with pytest.raises(RuntimeError):
            ort.ort.set_default_logger_callback('not a callable')
    finally:
        ort.ort.set_default_logger_callback(None)
        ort.set_default_logger_severity(2)


def test_ort_device_and_memory_info():
    o = ort.ort
    d = o.OrtDevice.make('cuda', 1)
    assert (d.device_type(), d.device_id(), d.device_vendor_id()) == (1, 1, o.OrtDeviceVendorId.NVIDIA)
    info = o.OrtMemoryInfo('Cpu', o.OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0, o.OrtMemType.DEFAULT)
    assert (info.name, info.device_id, info.mem_type, info.device_mem_type) == \
        ('Cpu', 0, o.OrtMemType.DEFAULT, o.OrtDeviceMemoryType.DEFAULT)
    s = session()
    assert [m.name for m in s.get_input_memory_infos()] == ['Cpu']
    assert len(s.get_output_memory_infos()) == 1 and s.get_input_epdevices() == [None]
    cfg = o.OrtArenaCfg({'max_mem': 16, 'initial_growth_chunk_size_bytes': 2})
    assert (cfg.max_mem, cfg.initial_growth_chunk_size_bytes) == (16, 2)


def test_check_and_normalize_provider_args():
    f = ort.ort.check_and_normalize_provider_args
    assert f([('a', {1: 2}), 'b'], None, ['a', 'b']) == (['a', 'b'], [{'1': '2'}, {}])
    with pytest.warns(UserWarning):
        assert f(['a', 'a'], [{}, {}], ['a']) == (['a'], [{}])
    for bad in ((3, None), (['a'], 3), (['a', 'b'], [{}])):
        with pytest.raises(ValueError):
            f(*bad, ['a', 'b'])


# ---- OrtValue

def test_ortvalue_array_protocol_size_and_element_type():
    v = ort.OrtValue.ortvalue_from_numpy(X)
    a = np.asarray(v)
    assert a.ctypes.data == v.data_ptr() and a.dtype == np.float32   # shared, not copied
    assert np.asarray(v, dtype=np.float64).dtype == np.float64
    assert v.tensor_size_in_bytes() == 24
    assert v.element_type() == TensorProto.FLOAT
    assert v._ortvalue is v and v._get_c_value() is v


def test_dlpack_both_ways_shares_memory():
    v = ort.OrtValue.ortvalue_from_numpy(X)
    assert v.__dlpack_device__() == (1, 0)
    w = ort.OrtValue.from_dlpack(v.__dlpack__())    # a capsule
    assert w.data_ptr() == v.data_ptr()
    assert not ort.ort.is_dlpack_uint8_tensor(v.to_dlpack())
    assert ort.ort.is_dlpack_uint8_tensor(np.zeros(2, np.uint8).__dlpack__())
    z = ort.OrtValue.from_dlpack(v)                  # an object with __dlpack__
    assert z.data_ptr() == v.data_ptr()
    b = ort.OrtValue.from_dlpack(ort.OrtValue.ortvalue_from_numpy(np.array([True, False])))
    assert b.numpy().dtype == np.bool_
    e = ort.OrtValue.from_dlpack(np.zeros((1, 8, 0, 128), np.float32).__dlpack__(), False)
    assert e.shape() == [1, 8, 0, 128]


def test_run_with_ort_values_through_sess():
    s = session()
    vect = s._sess.run_with_ort_values({'X': ort.OrtValue.ortvalue_from_numpy(X)._get_c_value()}, ['Y'],
                                       ort_capi.RunOptions())
    assert isinstance(vect, ort_capi.OrtValueVector)
    np.testing.assert_array_equal(vect[0].numpy(), X * X)


# ---- sessions

def test_run_async_calls_back_from_another_thread():
    done = threading.Event()
    got = {}

    def callback(res, data, err):
        got.update(res=res, data=data, err=err, thread=threading.current_thread())
        done.set()
    session().run_async(['Y'], {'X': X}, callback, 'mine')
    assert done.wait(10)
    assert got['err'] == '' and got['data'] == 'mine' and got['thread'] is not threading.current_thread()
    np.testing.assert_array_equal(got['res'][0], X * X)
    done.clear()
    session().run_async(['Y'], {'X': np.zeros((3, 3), np.float32)}, callback, None)
    assert done.wait(10) and got['res'] is None and 'X' in got['err']


def test_free_dimension_overrides_pin_the_shape():
    model = identity_model(F, ('batch', 'chan', 5), ['DATA_BATCH', 'DATA_CHANNEL'])
    so = ort.SessionOptions()
    so.add_free_dimension_override_by_name('batch', 4)
    so.add_free_dimension_override_by_name('chan', 6)
    s = ort.InferenceSession(model, so, providers=['CPUExecutionProvider'])
    assert s.get_inputs()[0].shape == [4, 6, 5]
    so = ort.SessionOptions()
    so.add_free_dimension_override_by_denotation('DATA_BATCH', 3)
    so.add_free_dimension_override_by_denotation('DATA_CHANNEL', 5)
    s = ort.InferenceSession(model, so, providers=['CPUExecutionProvider'])
    assert s.get_inputs()[0].shape == [3, 5, 5]
    assert s.run(None, {'x': np.ones((3, 5, 5), np.float32)})[0].shape == (3, 5, 5)


def test_add_initializer_overrides_the_models():
    so = ort.SessionOptions()
    so.add_initializer('W', ort.OrtValue.ortvalue_from_numpy(np.array([[2, 1], [4, 3], [6, 5]], np.float32)))
    y, = session(so=so).run(None, {'X': X})
    np.testing.assert_array_equal(y, [[2, 2], [12, 12], [30, 30]])
    so = ort.SessionOptions()
    so.add_initializer('nope', np.zeros(1, np.float32))
    with pytest.raises(ort_capi.InvalidArgument, match='nope'):
        session(so=so)


def external_pad_model():
    pads = numpy_helper.from_array(np.array([0, 0, 1, 1], np.int64), 'pads')
    onnx.external_data_helper.set_external_data(pads, location='pads.bin')
    pads.ClearField('raw_data')
    pads.data_location = TensorProto.EXTERNAL
    g = helper.make_graph([helper.make_node('Pad', ['X', 'pads'], ['Y'], mode='constant')], 'pad',
                          [helper.make_tensor_value_info('X', F, [1, 2])],
                          [helper.make_tensor_value_info('Y', F, None)], [pads])
    return helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]).SerializeToString()


def test_external_initializers_given_by_value_and_by_file_bytes():
    x = np.array([[1, 2]], np.float32)
    so = ort.SessionOptions()
    so.add_external_initializers(['pads'], [ort.OrtValue.ortvalue_from_numpy(np.array([0, 0, 1, 1], np.int64))])
    np.testing.assert_array_equal(session(external_pad_model(), so).run(None, {'X': x})[0], [[1, 2, 0], [0, 0, 0]])
    so = ort.SessionOptions()
    data = np.array([0, 1, 0, 0], np.int64).tobytes()
    so.add_external_initializers_from_files_in_memory(['pads.bin'], [data], [len(data)])
    np.testing.assert_array_equal(session(external_pad_model(), so).run(None, {'X': x})[0], [[0, 1, 2]])


def test_session_options_from_the_model(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    m = mul_model()
    helper.set_model_props(m, {'ort_config': '{"session_options": {"inter_op_num_threads": 5, '
                                             '"intra_op_num_threads": 2, "enable_profiling": 1}}'})
    so = ort.SessionOptions()
    s = ort.InferenceSession(m.SerializeToString(), so, providers=['CPUExecutionProvider'])
    assert s.get_session_options().intra_op_num_threads == 0    # read only when asked
    monkeypatch.setenv('ORT_LOAD_CONFIG_FROM_MODEL', '1')
    s = ort.InferenceSession(m.SerializeToString(), so, providers=['CPUExecutionProvider'])
    got = s.get_session_options()
    assert (got.inter_op_num_threads, got.intra_op_num_threads, got.enable_profiling) == (5, 2, True)
    assert so.intra_op_num_threads == 0    # the caller's options are not changed
    assert os.path.exists(s.end_profiling())


def test_shim_package_is_onyx(monkeypatch):
    shim = os.path.join(os.path.dirname(onyx.__file__), '..', 'ort_shim')
    monkeypatch.syspath_prepend(os.path.abspath(shim))
    for name in [m for m in sys.modules if m == 'onnxruntime' or m.startswith('onnxruntime.')]:
        monkeypatch.delitem(sys.modules, name)
    rt = importlib.import_module('onnxruntime')
    state = importlib.import_module('onnxruntime.capi.onnxruntime_pybind11_state')
    C = importlib.import_module('onnxruntime.capi._pybind_state')
    assert rt.InferenceSession is onyx.InferenceSession and rt.__version__ == onyx.__version__
    assert state.Fail is onyx.Fail and C.OrtValue is onyx.OrtValue and hasattr(C.OrtValue, 'from_dlpack')
    coll = importlib.import_module('onnxruntime.capi.onnxruntime_inference_collection')
    assert coll.check_and_normalize_provider_args is onyx.ort.check_and_normalize_provider_args


def test_provider_graph_assignment_info():
    with pytest.raises(ort_capi.Fail, match='session.record_ep_graph_assignment_info'):
        session().get_provider_graph_assignment_info()
    so = ort.SessionOptions()
    so.add_session_config_entry('session.record_ep_graph_assignment_info', '1')
    parts = session(so=so).get_provider_graph_assignment_info()
    assert [(p.ep_name, [n.op_type for n in p.get_nodes()]) for p in parts] == [('CPUExecutionProvider', ['Mul'])]


def test_map_inputs_type_and_python_floats():
    mt = helper.make_map_type_proto(TensorProto.INT64, helper.make_tensor_type_proto(F, None))
    node = helper.make_node('DictVectorizer', ['x'], ['y'], domain='ai.onnx.ml', int64_vocabulary=[1, 2, 3])
    g = helper.make_graph([node], 'dv', [helper.make_value_info('x', mt)], [helper.make_tensor_value_info('y', F, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13), helper.make_opsetid('ai.onnx.ml', 1)])
    s = ort.InferenceSession(m.SerializeToString(), providers=['CPUExecutionProvider'])
    assert s.get_inputs()[0].type == 'map(int64,tensor(float))'
    # values only: onyx's DictVectorizer gives [3] (ONNX's 1-D), onnxruntime [1, 3]
    np.testing.assert_array_equal(s.run(None, {'x': {1: 2.0, 3: 4.0}})[0].ravel(), [2, 0, 4])
