"""Options with absurd values through the Python paths (onyx.backend.prepare, onyx.Session, the
onnxruntime-compatible SessionOptions and RunOptions): thread counts past the CPUs are clamped
(they crashed in libgomp while oneDNN packed weights), the rest is refused naming the option."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import onyx
import onyx.backend

W = (np.arange(32 * 16, dtype=np.float32).reshape(32, 16) % 7 - 3) / 8
X = (np.arange(4 * 32, dtype=np.float32).reshape(4, 32) % 5) / 4


def _matmul():
    """x @ W with W a constant: the CPU packs W at prepare (oneDNN's parallel region)."""
    graph = helper.make_graph([helper.make_node('MatMul', ['x', 'W'], ['y'])], 'g',
                              [helper.make_tensor_value_info('x', TensorProto.FLOAT, ['N', 32])],
                              [helper.make_tensor_value_info('y', TensorProto.FLOAT, ['N', 16])],
                              [numpy_helper.from_array(W, 'W')])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 13)])
    model.ir_version = 8
    return model


@pytest.mark.parametrize('threads', [100000, 2**31 - 1, 2**40])
def test_threads_past_the_cpus_are_clamped(threads):
    model = _matmul()
    (y,) = onyx.backend.prepare(model, threads=threads).run([X])
    np.testing.assert_allclose(y, X @ W, rtol=1e-5, atol=1e-6)
    (y,) = onyx.Session(model.SerializeToString(), threads=threads).run(None, {'x': X})
    np.testing.assert_allclose(y, X @ W, rtol=1e-5, atol=1e-6)


def test_intra_op_threads_clamped_with_a_warning(capfd):
    so = onyx.SessionOptions()
    so.intra_op_num_threads = 100000
    sess = onyx.InferenceSession(_matmul().SerializeToString(), so)
    (y,) = sess.run(None, {'x': X})
    np.testing.assert_allclose(y, X @ W, rtol=1e-5, atol=1e-6)
    assert 'threads: 100000 requested' in capfd.readouterr().err


@pytest.mark.parametrize('threads', [-1, -2**40, 2.5, '4'])
def test_bad_thread_counts_are_refused(threads):
    model = _matmul()
    with pytest.raises(onyx.InvalidArgument, match='threads'):
        onyx.backend.prepare(model, threads=threads)
    so = onyx.SessionOptions()
    so.intra_op_num_threads = threads
    with pytest.raises(onyx.InvalidArgument, match='intra_op_num_threads'):
        onyx.InferenceSession(model.SerializeToString(), so)


@pytest.mark.parametrize('field, value', [
    ('inter_op_num_threads', -1),
    ('graph_optimization_level', 7),
    ('graph_optimization_level', -1),
    ('log_severity_level', 5),
    ('log_severity_level', -2),
    ('memory_limit', -1),
    ('memory_limit', 2**64),
])
def test_bad_session_fields_are_refused(field, value):
    so = onyx.SessionOptions()
    setattr(so, field, value)
    with pytest.raises(onyx.InvalidArgument, match=field):
        onyx.InferenceSession(_matmul().SerializeToString(), so)


def test_session_config_keys():
    so = onyx.SessionOptions()
    for key in ('optimization.blocked_layout', 'optimization.nonsense', 'device.graph', 'onyx.x'):
        with pytest.raises(onyx.InvalidArgument, match=key.replace('.', r'\.')):
            so.add_session_config_entry(key, '1')
    # onnxruntime's own keys: accepted, without effect (documented in SessionOptions)
    so.add_session_config_entry('optimization.enable_gelu_approximation', '1')
    so.add_session_config_entry('session.intra_op.allow_spinning', '0')
    so.add_session_config_entry('optimization.blocked_layouts', '0')
    (y,) = onyx.InferenceSession(_matmul().SerializeToString(), so).run(None, {'x': X})
    np.testing.assert_allclose(y, X @ W, rtol=1e-5, atol=1e-6)
    so.add_session_config_entry('device.graphs', 'yes')   # onyx's key, a bad value: refused
    with pytest.raises(onyx.InvalidArgument, match='device.graphs'):
        onyx.InferenceSession(_matmul().SerializeToString(), so)


def test_free_dimension_override_must_be_a_size():
    so = onyx.SessionOptions()
    with pytest.raises(onyx.InvalidArgument, match="'N'"):
        so.add_free_dimension_override_by_name('N', -5)
    with pytest.raises(onyx.InvalidArgument, match="'N'"):
        so.add_free_dimension_override_by_name('N', 2**64)


def test_bad_run_options_are_refused():
    ro = onyx.RunOptions()
    for value in (-1, float('nan'), float('inf'), 1e10, 'soon'):
        with pytest.raises(onyx.InvalidArgument, match='timeout'):
            ro.timeout = value
    for value in (-1, 2**63, 1.5):
        with pytest.raises(onyx.InvalidArgument, match='iterations'):
            ro.max_iterations = value
    with pytest.raises(onyx.InvalidArgument, match='onyx.nope'):
        ro.add_run_config_entry('onyx.nope', '1')
    with pytest.raises(onyx.InvalidArgument, match='max_iterations'):
        ro.add_run_config_entry('onyx.max_iterations', 'many')
    with pytest.raises(onyx.InvalidArgument, match='tag'):
        ro.logid = 'a' * 300
    ro.add_run_config_entry('memory.enable_memory_arena_shrinkage', 'cpu:0')   # onnxruntime's
    ro.max_iterations = 2**63 - 1
    ro.timeout = 1e9
    sess = onyx.InferenceSession(_matmul().SerializeToString())
    (y,) = sess.run(None, {'x': X}, ro)
    np.testing.assert_allclose(y, X @ W, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize('device', ['', 'CPU:-1', 'CUDA:-1', 'CUDA:999', 'CUDA:0,CUDA:1', 'GPU'])
def test_bad_devices_are_refused(device):
    with pytest.raises(onyx.EPFail):
        onyx.Session(_matmul().SerializeToString(), device=device)
    assert not onyx.supports_device(device)


@pytest.mark.parametrize('entries', [
    {'session.intra_op.allow_spinning': '0'},
    {'session.intra_op.allow_spinning': '1', 'onyx.intra_op.spin_us': '0',
     'onyx.intra_op.doze_us': '0'},
    {'onyx.intra_op.spin_us': '100000', 'onyx.intra_op.doze_us': '10000000'},
])
def test_wait_policy_entries_run(entries):
    so = onyx.SessionOptions()
    so.intra_op_num_threads = 2
    for key, value in entries.items():
        so.add_session_config_entry(key, value)
    sess = onyx.InferenceSession(_matmul().SerializeToString(), so)
    for _ in range(3):
        (y,) = sess.run(None, {'x': X})
        np.testing.assert_allclose(y, X @ W, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize('key, value', [
    ('session.intra_op.allow_spinning', '2'),
    ('onyx.intra_op.spin_us', '-1'),
    ('onyx.intra_op.spin_us', '20ms'),
    ('onyx.intra_op.doze_us', '10000001'),
])
def test_bad_wait_policy_entries_are_refused(key, value):
    so = onyx.SessionOptions()
    so.add_session_config_entry(key, value)
    with pytest.raises(onyx.InvalidArgument, match=key.replace('.', r'\.')):
        onyx.InferenceSession(_matmul().SerializeToString(), so)
