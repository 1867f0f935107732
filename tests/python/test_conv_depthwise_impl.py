"""Float depthwise convolutions (EfficientNet-B0's and MobileNet's shapes, with the folded bias and
the activations the fusion pass gives them) on the kernel onyx picks for them: oneDNN's direct
depthwise kernel (jit_dw) where oneDNN has it, ahead of its brgemm one (brdgmm_dw), which it
prefers but which runs slower at batch 1 (kernels_cpu/conv/conv.c, prefer_jit_dw). Outputs as
onnxruntime's, to the tolerance of a different summation order. ONEDNN_VERBOSE=1 in a child
process shows which kernel ran."""
import os
import subprocess
import sys

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

CHILD = os.path.join(os.path.dirname(__file__), 'onyx_child.py')  # runs a model in a process of its own

CPU_FLAGS = set(next((l.split(':', 1)[1].split() for l in open('/proc/cpuinfo')
                      if l.startswith('flags')), []))
INTEL = 'GenuineIntel' in open('/proc/cpuinfo').read()
rng = np.random.default_rng(3131)

# (channels, side, kernel, stride, activation after the conv)
CASES = {
    'c32_k3_s1_relu': (32, 112, 3, 1, 'Relu'),
    'c144_k5_s2_silu': (144, 56, 5, 2, 'Silu'),
    'c240_k5_s1_silu': (240, 28, 5, 1, 'Silu'),
    'c1152_k3_s1_none': (1152, 7, 3, 1, None),
}


def depthwise(c, hw, k, stride, act):
    w = rng.uniform(-0.5, 0.5, (c, 1, k, k)).astype(np.float32)
    b = rng.uniform(-0.5, 0.5, c).astype(np.float32)
    nodes = [h.make_node('Conv', ['x', 'w', 'b'], ['c' if act else 'y'], group=c,
                         kernel_shape=[k, k], strides=[stride] * 2, pads=[k // 2] * 4)]
    if act == 'Relu':
        nodes.append(h.make_node('Relu', ['c'], ['y']))
    elif act == 'Silu':  # x * sigmoid(x), as the exporters write it
        nodes += [h.make_node('Sigmoid', ['c'], ['s']), h.make_node('Mul', ['c', 's'], ['y'])]
    out = (hw + 2 * (k // 2) - k) // stride + 1
    g = h.make_graph(nodes, 'g', [h.make_tensor_value_info('x', TP.FLOAT, [1, c, hw, hw])],
                     [h.make_tensor_value_info('y', TP.FLOAT, [1, c, out, out])],
                     [nh.from_array(w, 'w'), nh.from_array(b, 'b')])
    m = h.make_model(g, opset_imports=[h.make_opsetid('', 17)])
    return m, {'x': rng.uniform(-1, 1, (1, c, hw, hw)).astype(np.float32)}


@pytest.mark.skipif('avx512f' not in CPU_FLAGS, reason='oneDNN has its jit_dw kernel for AVX-512 here')
@pytest.mark.parametrize('case', sorted(CASES))
def test_depthwise_takes_jit_dw(case, tmp_path):
    m, feeds = depthwise(*CASES[case])
    path = tmp_path / 'm.onnx'
    path.write_bytes(m.SerializeToString())
    np.savez(tmp_path / 'in.npz', **feeds)
    proc = subprocess.run([sys.executable, CHILD, str(path), str(tmp_path / 'in.npz'),
                           str(tmp_path / 'out.npy')], env=dict(os.environ, ONEDNN_VERBOSE='1'),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = [line for line in proc.stdout.splitlines()
             if line.startswith('onednn_verbose,exec,cpu,convolution,')]
    convs = {line.split(',')[4] for line in lines}
    assert convs and all(impl.startswith('jit_dw') for impl in convs), convs
    # a SiLU is oneDNN's post-op on Intel's AVX-512 cores (the only ones this test runs on),
    # vmath's pass after it elsewhere
    # (kernels_cpu/common/post_vmath.h, cpu_post_vmath_conv_tail)
    if CASES[case][4] == 'Silu':
        assert all(('eltwise_swish' in line) == INTEL for line in lines), lines
    want = ort.InferenceSession(m.SerializeToString(),
                                providers=['CPUExecutionProvider']).run(None, feeds)[0]
    np.testing.assert_allclose(np.load(tmp_path / 'out.npy'), want, rtol=1e-5, atol=1e-5)

