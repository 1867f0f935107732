"""Float 3x3 convolutions by Winograd F(2x2, 3x3) (kernels_cpu/conv/winograd.c): the stride-1
convolutions between channels-last tensors of a chain, with the epilogues the fusion pass gives
them (folded BatchNormalization and bias, a residual Add then Relu, Clip, LeakyRelu, SiLU applied
after), pads 0 to 2, outputs of odd sizes (a last row and column of half tiles), output channels
off the 64-wide weight blocks, batch 2. Outputs as onnxruntime's and as onyx's own direct
convolutions (config optimization.winograd=0), to the tolerance of a different summation order;
ONEDNN_VERBOSE=1 in a child process shows that oneDNN ran none of those convolutions, and ran
them all with the switch off."""
import os
import subprocess
import sys

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

import onyx

CHILD = os.path.join(os.path.dirname(__file__), 'onyx_child.py')
CPU_FLAGS = set(next((l.split(':', 1)[1].split() for l in open('/proc/cpuinfo')
                      if l.startswith('flags')), []))
rng = np.random.default_rng(2026)


def chain_model(c=16, m=48, m2=80, side=17):
    """x -> 1x1 conv + Relu (reads the plain input: no Winograd) -> five 3x3 convs between
    channels-last tensors, each with another epilogue -> 1x1 conv (writes the plain output)."""
    inits, nodes = [], []

    def conv(x, y, cin, cout, k, pad, bias=True):
        w = (rng.uniform(-1, 1, (cout, cin, k, k)) / np.sqrt(cin * k * k)).astype(np.float32)
        inits.append(nh.from_array(w, y + '_w'))
        ins = [x, y + '_w']
        if bias:
            inits.append(nh.from_array(rng.uniform(-0.2, 0.2, cout).astype(np.float32), y + '_b'))
            ins.append(y + '_b')
        nodes.append(h.make_node('Conv', ins, [y], kernel_shape=[k, k], pads=[pad] * 4))

    conv('x', 'a', c, m, 1, 0)
    nodes.append(h.make_node('Relu', ['a'], ['t1']))
    # B: no bias, BatchNormalization folded in, Relu
    conv('t1', 'b', m, m, 3, 1, bias=False)
    for name, v in (('s', rng.uniform(0.5, 1.5, m)), ('o', rng.uniform(-0.2, 0.2, m)),
                    ('mu', rng.uniform(-0.2, 0.2, m)), ('var', rng.uniform(0.5, 1.5, m))):
        inits.append(nh.from_array(v.astype(np.float32), 'bn_' + name))
    nodes += [h.make_node('BatchNormalization', ['b', 'bn_s', 'bn_o', 'bn_mu', 'bn_var'], ['bb']),
              h.make_node('Relu', ['bb'], ['t2'])]
    # C: a residual Add of t1, then Relu
    conv('t2', 'cc', m, m, 3, 1)
    nodes += [h.make_node('Add', ['cc', 't1'], ['ca']), h.make_node('Relu', ['ca'], ['t3'])]
    # D: no pads (side - 2 out), Clip
    conv('t3', 'd', m, m2, 3, 0)
    inits += [nh.from_array(np.array(0.0, np.float32), 'lo'), nh.from_array(np.array(1.5, np.float32), 'hi')]
    nodes.append(h.make_node('Clip', ['d', 'lo', 'hi'], ['t4']))
    # E: pads 2 (side out), LeakyRelu
    conv('t4', 'e', m2, m2, 3, 2)
    nodes.append(h.make_node('LeakyRelu', ['e'], ['t5'], alpha=0.1))
    # F: pads 1, SiLU as the exporters write it
    conv('t5', 'f', m2, m2, 3, 1)
    nodes += [h.make_node('Sigmoid', ['f'], ['fs']), h.make_node('Mul', ['f', 'fs'], ['t6'])]
    conv('t6', 'y', m2, 8, 1, 0)
    out = side
    g = h.make_graph(nodes, 'g', [h.make_tensor_value_info('x', TP.FLOAT, [2, c, side, side])],
                     [h.make_tensor_value_info('y', TP.FLOAT, [2, 8, out, out])], inits)
    model = h.make_model(g, opset_imports=[h.make_opsetid('', 17)])
    return model, {'x': rng.uniform(-1, 1, (2, c, side, side)).astype(np.float32)}


def run_onyx(model, feeds, winograd):
    so = onyx.SessionOptions()
    so.intra_op_num_threads = 2
    so.add_session_config_entry('optimization.winograd', winograd)
    return onyx.InferenceSession(model.SerializeToString(), so).run(None, feeds)[0]


@pytest.mark.parametrize('shape', [(16, 48, 80, 17), (16, 48, 80, 30), (192, 192, 192, 14)])
def test_winograd_chain_matches_direct_and_onnxruntime(shape):
    # the last: transformed weights past the L2, an item per half of the output channels
    c, m, m2, side = shape
    model, feeds = chain_model(c, m, m2, side)
    wino, direct = run_onyx(model, feeds, '1'), run_onyx(model, feeds, '0')
    ref = ort.InferenceSession(model.SerializeToString(),
                               providers=['CPUExecutionProvider']).run(None, feeds)[0]
    assert np.abs(ref).max() > 0.1  # a chain that carries signal to its end
    np.testing.assert_allclose(wino, ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(direct, ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(wino, direct, rtol=1e-4, atol=1e-5)


def onednn_3x3_convs(tmp_path, model, feeds, winograd):
    path = tmp_path / 'm.onnx'
    path.write_bytes(model.SerializeToString())
    np.savez(tmp_path / 'in.npz', **feeds)
    proc = subprocess.run([sys.executable, CHILD, str(path), str(tmp_path / 'in.npz'),
                           str(tmp_path / 'out.npy'), f'optimization.winograd={winograd}'],
                          env=dict(os.environ, ONEDNN_VERBOSE='1'), capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return np.load(tmp_path / 'out.npy'), sum(
        1 for line in proc.stdout.splitlines()
        if line.startswith('onednn_verbose,exec,cpu,convolution,') and 'kh3' in line)


@pytest.mark.skipif('avx512f' not in CPU_FLAGS, reason='the Winograd kernels need AVX-512')
def test_winograd_replaces_onednn_for_the_chain(tmp_path):
    model, feeds = chain_model()
    y1, taken_by_onednn = onednn_3x3_convs(tmp_path, model, feeds, 1)
    y0, control = onednn_3x3_convs(tmp_path, model, feeds, 0)
    assert taken_by_onednn == 0
    assert control == 5  # the switch off: oneDNN runs the five 3x3 convolutions
    np.testing.assert_allclose(y1, y0, rtol=1e-4, atol=1e-5)
