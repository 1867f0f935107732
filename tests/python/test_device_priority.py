"""The session's device list is a priority order (core/device_registry.h, backend/device.c): each
node goes to the first device in the list whose entry takes it, the CPU last. Checked with onyx's TEST
device, whose kernels are a subset of the CPU's: CPU first puts every node on the CPU; TEST first
puts the nodes TEST takes on TEST and the rest on the CPU; both compute onnxruntime's numbers. An
unknown device name is refused, named."""
import json

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

import onyx
import onyx.ort as ort

CPU, TEST = 'CPUExecutionProvider', 'OnyxTestExecutionProvider'


def _model():
    """MatMul, Add, Relu (TEST has kernels for them), then ReduceMean and TopK (it has none)."""
    rng = np.random.default_rng(33)
    w = rng.standard_normal((8, 6)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    k = np.array([2], dtype=np.int64)
    nodes = [helper.make_node('MatMul', ['x', 'w'], ['m']),
             helper.make_node('Add', ['m', 'b'], ['a']),
             helper.make_node('Relu', ['a'], ['r']),
             helper.make_node('ReduceMean', ['r'], ['mean'], axes=[1], keepdims=1),
             helper.make_node('TopK', ['r', 'k'], ['top', 'idx'])]
    graph = helper.make_graph(
        nodes, 'g', [helper.make_tensor_value_info('x', TensorProto.FLOAT, [3, 8])],
        [helper.make_tensor_value_info('mean', TensorProto.FLOAT, [3, 1]),
         helper.make_tensor_value_info('top', TensorProto.FLOAT, [3, 2]),
         helper.make_tensor_value_info('idx', TensorProto.INT64, [3, 2])],
        [numpy_helper.from_array(w, 'w'), numpy_helper.from_array(b, 'b'),
         numpy_helper.from_array(k, 'k')])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17)]).SerializeToString()


def _placed(providers, tmp_path):
    """The outputs, the session's providers, and {op: set of devices its steps ran on}."""
    model = _model()
    opts = ort.SessionOptions()
    opts.enable_profiling = True
    opts.profile_file_prefix = str(tmp_path / 'profile_')
    sess = ort.InferenceSession(model, opts, providers=providers)
    x = np.random.default_rng(1).standard_normal((3, 8)).astype(np.float32)
    out = sess.run(None, {'x': x})
    with open(sess.end_profiling()) as f:
        events = json.load(f)
    places = {}
    for e in events:
        args = e.get('args', {})
        op = args.get('op_name', 'Memcpy')
        if e.get('cat') == 'Node' and not op.startswith('Memcpy'):
            places.setdefault(op, set()).add(args['provider'])
    expected = onnxruntime.InferenceSession(model, providers=[CPU]).run(None, {'x': x})
    for o, want in zip(out, expected):
        np.testing.assert_allclose(o, want, rtol=1e-5, atol=1e-6)
    return sess.get_providers(), places


def test_cpu_first_puts_every_node_on_the_cpu(tmp_path):
    providers, places = _placed([CPU, TEST], tmp_path)
    assert providers == [CPU, TEST]
    assert places and all(devices == {'CPU'} for devices in places.values()), places


def test_test_first_puts_what_test_takes_on_test(tmp_path):
    providers, places = _placed([TEST, CPU], tmp_path)
    assert providers == [TEST, CPU]
    # Add and Relu may run inside the MatMul's step (a device epilogue): what runs is on TEST
    assert places['MatMul'] == {'TEST'}, places
    for op in ('Add', 'Relu'):
        assert places.get(op, {'TEST'}) == {'TEST'}, places
    assert places['ReduceMean'] == {'CPU'}, places
    assert places['TopK'] == {'CPU'}, places


def test_test_alone_falls_back_to_the_cpu(tmp_path):
    _, alone = _placed([TEST], tmp_path)
    _, first = _placed([TEST, CPU], tmp_path)
    assert alone == first


@pytest.mark.parametrize('devices', ['CPU,NPU', 'NPU', 'TEST,cpu:0'])
def test_unknown_device_is_refused_by_name(devices):
    with pytest.raises(onyx.OnyxError) as err:
        onyx.Session(_model(), device=devices)
    bad = devices.split(',')[-1]
    assert f"'{bad}'" in str(err.value) and 'expected CPU, CUDA, CUDA:N or TEST' in str(err.value)
