"""A weight read on a device is uploaded once per session and device (core/exec_place.c,
upload_constant), its bytes shared by every plan: a decoder's plans for prompts, decode steps and
the generic one would otherwise each hold the whole model in the device's memory. On the TEST
device, whose memory is the process's, four plans of a 32 MiB weight add no copy of it after the
first, and every plan computes the CPU's results."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import onyx.ort as ort

K, N = 1024, 8192   # a 32 MiB float weight


def _rss_mib():
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1]) / 1024
    pytest.skip('no /proc/self/status here')


def test_plans_share_a_device_weight():
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((K, N)) * 0.03).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node('MatMul', ['x', 'w'], ['y'])], 'g',
        [helper.make_tensor_value_info('x', TensorProto.FLOAT, ['rows', K])],
        [helper.make_tensor_value_info('y', TensorProto.FLOAT, ['rows', N])],
        [numpy_helper.from_array(w, 'w')])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17)]).SerializeToString()
    dev = ort.InferenceSession(model, providers=['OnyxTestExecutionProvider'])
    cpu = ort.InferenceSession(model, providers=['CPUExecutionProvider'])
    xs = [rng.standard_normal((rows, K)).astype(np.float32) for rows in (1, 2, 3, 5)]
    want = [cpu.run(None, {'x': x})[0] for x in xs]
    dev.run(None, {'x': xs[0]})   # the first plan uploads the weight
    before = _rss_mib()
    for x, y in zip(xs, want):   # three more plans (the last a generic one) read it on TEST
        np.testing.assert_allclose(dev.run(None, {'x': x})[0], y, rtol=1e-4, atol=1e-4)
    grown = _rss_mib() - before
    assert grown < 16, f'{grown:.0f} MiB more after three more plans of a 32 MiB weight'
