"""Values in device memory through the onnxruntime-compatible API: OrtValues on the device, inputs
bound by device pointer, outputs kept on the device between runs. On onyx's TEST device (every
machine has it) and on CUDA where a GPU is usable (tools/cuda/check.sh runs them on one)."""
import json
import os

import numpy as np
import pytest

import onyx.ort as ort

MODEL = os.path.join(os.path.dirname(__file__), '..', 'models', 'example.onnx')


DEVICES = ['test'] + (['cuda'] if 'CUDAExecutionProvider' in ort.get_available_providers() else [])
PROVIDER = {'test': 'OnyxTestExecutionProvider', 'cuda': 'CUDAExecutionProvider'}


@pytest.fixture(scope='module', params=DEVICES)
def sessions(request):
    cpu = ort.InferenceSession(MODEL, providers=['CPUExecutionProvider'])
    dev = ort.InferenceSession(MODEL, providers=[PROVIDER[request.param]])
    return cpu, dev, request.param


def _x(seed=0):
    return np.random.default_rng(seed).standard_normal((4, 16)).astype(np.float32)


@pytest.mark.parametrize('device', DEVICES)
def test_ortvalue_on_device_round_trip(device):
    x = _x()
    v = ort.OrtValue.ortvalue_from_numpy(x, device, 0)
    assert v.device_name() == device
    assert v.shape() == [4, 16]
    assert v.data_type() == 'tensor(float)'
    assert v.data_ptr() != 0
    np.testing.assert_array_equal(v.numpy(), x)


def test_bound_device_input_and_output(sessions):
    cpu, dev, device = sessions
    x = _x(1)
    (expected,) = cpu.run(None, {'x': x})
    binding = dev.io_binding()
    binding.bind_ortvalue_input('x', ort.OrtValue.ortvalue_from_numpy(x, device, 0))
    binding.bind_output('probs', device)
    for _ in range(2):   # the same plan again, the outputs still on the device
        dev.run_with_iobinding(binding)
        (out,) = binding.get_outputs()
        assert out.device_name() == device
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-6)
    (host,) = binding.copy_outputs_to_cpu()
    np.testing.assert_allclose(host, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize('device', DEVICES)
def test_bound_input_and_output_staged_in_the_arena(device, tmp_path):
    """A device that replays graphs (CUDA; the TEST device plans as one) reads a bound input and
    makes a bound output through copies within its memory, so that every computing step works on
    the arena's fixed addresses and stays inside the graph: one MemcpyOnDevice for the input, one
    for the output, each run (a profiled run runs its steps one by one, each an event)."""
    opts = ort.SessionOptions()
    opts.enable_profiling = True
    opts.profile_file_prefix = str(tmp_path / 'profile_')
    dev = ort.InferenceSession(MODEL, opts, providers=[PROVIDER[device]])
    cpu = ort.InferenceSession(MODEL, providers=['CPUExecutionProvider'])
    runs = 3
    for i in range(runs):
        x = _x(10 + i)
        (expected,) = cpu.run(None, {'x': x})
        binding = dev.io_binding()
        binding.bind_ortvalue_input('x', ort.OrtValue.ortvalue_from_numpy(x, device, 0))
        binding.bind_output('probs', device)
        dev.run_with_iobinding(binding)
        (out,) = binding.get_outputs()
        assert out.device_name() == device
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-6)
    with open(dev.end_profiling()) as f:
        ops = [e['args']['op_name'] for e in json.load(f)
               if e.get('cat') == 'Node' and 'op_name' in e.get('args', {})]
    assert ops.count('MemcpyOnDevice') == 2 * runs
    assert not {'MemcpyFromHost', 'MemcpyToHost'} & set(ops)


def test_input_bound_by_device_pointer(sessions):
    cpu, dev, device = sessions
    x = _x(2)
    (expected,) = cpu.run(None, {'x': x})
    if device == 'test':   # TEST device memory holds each byte XOR 0xA5
        buffer = np.frombuffer(x.tobytes(), np.uint8) ^ np.uint8(0xA5)
        pointer = buffer.ctypes.data
    else:                  # device memory the caller holds (here through an OrtValue)
        buffer = ort.OrtValue.ortvalue_from_numpy(x, device, 0)
        pointer = buffer.data_ptr()
    binding = dev.io_binding()
    binding.bind_input('x', device, 0, np.float32, x.shape, pointer)
    binding.bind_output('probs')
    dev.run_with_iobinding(binding)
    (out,) = binding.copy_outputs_to_cpu()
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


def test_device_not_available():
    with pytest.raises(Exception, match='not available'):
        ort.OrtValue.ortvalue_from_numpy(_x(), 'mars', 0)
    if 'CUDAExecutionProvider' not in ort.get_available_providers():
        with pytest.raises(Exception, match='not available'):
            ort.OrtValue.ortvalue_from_numpy(_x(), 'cuda', 0)
