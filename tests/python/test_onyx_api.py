"""onyx's own additions around the onnxruntime-compatible API: run deadlines and caps, the model
metadata API (C, through ctypes, and Python), error classes, the CLI as `python -m onyx`, and quiet
failures of constructors."""
import ctypes
import os
import subprocess
import sys

import numpy as np
import pytest
from onnx import TensorProto, helper

import onyx
from onyx._lib import lib

MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'models')
EXAMPLE = os.path.join(MODELS, 'example.onnx')
ENDLESS = os.path.join(MODELS, 'endless_loop.onnx')
FEED = {'trips': np.array(2**62, np.int64), 'cond': np.array(True), 'start': np.array(0, np.int64)}


def test_run_timeout_and_iteration_cap():
    sess = onyx.InferenceSession(ENDLESS)
    ro = onyx.RunOptions()
    ro.timeout = 0.1
    with pytest.raises(onyx.Fail) as e:
        sess.run(None, FEED, ro)
    assert e.value.status == 'ONYX_ERR_TIMEOUT'
    ro = onyx.RunOptions()
    ro.add_run_config_entry('onyx.max_iterations', '1000')
    with pytest.raises(onyx.Fail) as e:
        sess.run(None, FEED, ro)
    assert e.value.status == 'ONYX_ERR_LIMIT'
    assert ro.get_run_config_entry('onyx.max_iterations') == '1000'
    (count,) = sess.run(None, dict(FEED, trips=np.array(10, np.int64)), ro)
    assert count == 10


def _model_with_metadata():
    graph = helper.make_graph([helper.make_node('Relu', ['x'], ['t']), helper.make_node('Relu', ['t'], ['u']),
                               helper.make_node('Neg', ['u'], ['y'])], 'g',
                              [helper.make_tensor_value_info('x', TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info('y', TensorProto.FLOAT, [2])], doc_string='gdoc')
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 13), helper.make_opsetid('ai.onnx.ml', 3)],
                              producer_name='p', producer_version='v', domain='d', model_version=3, doc_string='doc')
    model.ir_version = 8
    helper.set_model_props(model, {'k1': 'v1', 'k2': 'v2'})
    return model.SerializeToString()


def test_model_metadata_python():
    data = _model_with_metadata()
    meta = onyx.model_metadata(data)
    assert (meta.producer_name, meta.producer_version, meta.domain, meta.version, meta.description,
            meta.graph_name, meta.graph_description) == ('p', 'v', 'd', 3, 'doc', 'g', 'gdoc')
    assert meta.custom_metadata_map == {'k1': 'v1', 'k2': 'v2'}
    assert meta.opsets == {'ai.onnx': 13, 'ai.onnx.ml': 3}
    assert meta.ir_version == 8 and meta.node_count == 3 and meta.op_counts == {'Relu': 2, 'Neg': 1}
    file_meta = onyx.model_metadata(EXAMPLE)
    assert file_meta.graph_name == 'example_mlp' and file_meta.op_counts['MatMul'] == 2
    with pytest.raises(onyx.NoSuchFile):
        onyx.model_metadata('no-such-file.onnx')
    with pytest.raises(onyx.InvalidProtobuf):
        onyx.model_metadata(b'not a model')


def test_model_metadata_c_api_of_a_loaded_model():
    data = _model_with_metadata()
    model = ctypes.POINTER(onyx._lib.Model)()
    assert lib.onyx_model_load_buffer(data, len(data), None, ctypes.byref(model)) == 0
    md = ctypes.c_void_p()
    try:
        assert lib.onyx_model_get_metadata(model, ctypes.byref(md)) == 0
        assert lib.onyx_model_metadata_graph_name(md) == b'g'
        assert lib.onyx_model_metadata_ir_version(md) == 8
        assert lib.onyx_model_metadata_node_count(md) == 3
        assert lib.onyx_model_metadata_opset_count(md) == 2
        d, t, n = ctypes.c_char_p(), ctypes.c_char_p(), ctypes.c_size_t()
        assert lib.onyx_model_metadata_op(md, 0, ctypes.byref(d), ctypes.byref(t), ctypes.byref(n)) == 0
        assert (d.value, t.value, n.value) == (b'', b'Relu', 2)
        assert lib.onyx_model_metadata_op(md, 2, None, None, None) == 1   # out of range
        # the loader keeps the descriptive fields and metadata_props too
        assert lib.onyx_model_metadata_producer_name(md) == b'p'
        assert lib.onyx_model_metadata_producer_version(md) == b'v'
        assert lib.onyx_model_metadata_domain(md) == b'd'
        assert lib.onyx_model_metadata_doc_string(md) == b'doc'
        assert lib.onyx_model_metadata_graph_doc_string(md) == b'gdoc'
        assert lib.onyx_model_metadata_model_version(md) == 3
        assert lib.onyx_model_metadata_prop_count(md) == 2
        assert lib.onyx_model_metadata_lookup(md, b'k1') == b'v1'
    finally:
        lib.onyx_model_metadata_free(md)
        lib.onyx_model_free(model)
    # From bytes: the props, and lookup (NULL when absent).
    assert lib.onyx_model_metadata_read_buffer(data, len(data), ctypes.byref(md)) == 0
    try:
        assert lib.onyx_model_metadata_lookup(md, b'k2') == b'v2'
        assert lib.onyx_model_metadata_lookup(md, b'nope') is None
    finally:
        lib.onyx_model_metadata_free(md)


def test_errors_are_onyx_errors_and_onnxruntime_classes():
    sess = onyx.InferenceSession(EXAMPLE)
    with pytest.raises(onyx.InvalidArgument) as e:
        sess.run(None, {'x': np.zeros((2, 15), np.float32)})
    assert isinstance(e.value, onyx.OnyxError) and e.value.status == 'ONYX_ERR_SHAPE' and "'x'" in str(e.value)
    with pytest.raises(onyx.InvalidArgument):
        sess.run(['nope'], {'x': np.zeros((2, 16), np.float32)})
    with pytest.raises(onyx.EPFail):
        onyx.Session(EXAMPLE, device='TPU')


def test_providers_fall_back_to_the_cpu_with_a_warning():
    if 'CUDAExecutionProvider' in onyx.get_available_providers():
        pytest.skip('CUDA is usable here')
    with pytest.warns(UserWarning, match='CUDAExecutionProvider'):
        sess = onyx.InferenceSession(EXAMPLE, providers=[('CUDAExecutionProvider', {'device_id': 0})])
    assert sess.get_providers() == ['CPUExecutionProvider']
    assert onyx.get_device() == 'CPU'


def _python(code):
    env = dict(os.environ)
    return subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, env=env, timeout=60)


def test_failed_constructors_print_nothing():
    r = _python('import onyx\n'
                'for args in [(), (b"bad",), ("no-such.onnx",)]:\n'
                '    for cls in (onyx.Session, onyx.InferenceSession):\n'
                '        try:\n'
                '            cls(*args)\n'
                '        except Exception:\n'
                '            pass\n'
                'import gc; gc.collect()\n')
    assert r.returncode == 0 and r.stderr == '', r.stderr


def test_cpu_sessions_leave_the_cuda_plugin_unloaded():
    """The CUDA plugin (and the CUDA libraries it maps, about 150 MB) loads only when CUDA is
    asked about, not for sessions on the CPU."""
    r = _python('import numpy as np, onyx\n'
                f'onyx.Session({EXAMPLE!r}).run(None, {{"x": np.ones((1, 16), np.float32)}})\n'
                f'onyx.InferenceSession({EXAMPLE!r}, providers=["CPUExecutionProvider"])\n'
                'maps = lambda: open("/proc/self/maps").read()\n'
                'print("cpu", "libonyx_cuda" in maps())\n'
                'onyx.get_available_providers()\n'
                'print("asked", "libonyx_cuda" in maps())\n')
    assert r.returncode == 0, r.stderr
    assert 'cpu False' in r.stdout
    plugin = os.path.join(os.path.dirname(onyx.library_path()), 'libonyx_cuda.so')
    if os.path.exists(plugin):   # then asking about CUDA loads it
        assert 'asked True' in r.stdout


def test_python_dash_m_onyx():
    r = subprocess.run([sys.executable, '-m', 'onyx', 'info', EXAMPLE], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert 'graph:    example_mlp' in r.stdout and 'MatMul x2' in r.stdout


def test_version_and_library():
    assert onyx.__version__ == onyx.version()
    assert os.path.exists(onyx.library_path())
