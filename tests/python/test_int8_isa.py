"""The 8-bit products on each instruction set oneDNN may pick: AMX where the CPU has it (Sapphire
Rapids and later: oneDNN's brgemm kernels for QLinearConv, ConvInteger and the products with a
constant B), and AVX-512 VNNI, which the same CPU takes with oneDNN capped below AMX by
ONEDNN_MAX_CPU_ISA=AVX512_CORE_VNNI (read once, when oneDNN first asks for the CPU's features,
so each case runs in a process of its own) and a CPU without AMX (AMD Zen 4) takes by itself.
onyx asks oneDNN, not cpuid, which path it is on (cpu_int8_exact), so the cap moves onyx's
choices with it. Both paths sum exactly in int32: outputs must equal onnxruntime's bit for bit
either way (onnxruntime runs its own AMX or VNNI kernels, also exact). ONEDNN_VERBOSE=1 in the
child shows which kernels ran: AMX ones where the CPU has AMX and nothing caps it, none under
the cap, and none for the pointwise convolutions with few input channels, which onyx keeps on
VNNI (AMX fills its tiles badly there: kernels_cpu/conv/qconv_dnnl.c). (The AVX2 kernels of CPUs
without VNNI: test_i8_avx2.py, test_qconv_avx2.py.)"""
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

MS = 'com.microsoft'
CPU_FLAGS = set(next((l.split(':', 1)[1].split() for l in open('/proc/cpuinfo')
                      if l.startswith('flags')), []))
HAS_AMX = 'amx_int8' in CPU_FLAGS and 'amx_tile' in CPU_FLAGS
HAS_VNNI = 'avx512_vnni' in CPU_FLAGS
rng = np.random.default_rng(3232)


def ints(dt, shape):
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max + 1, shape).astype(dt)


def model(nodes, inputs, outputs, inits):
    g = h.make_graph(nodes, 'g', inputs, outputs, inits)
    return h.make_model(g, opset_imports=[h.make_opsetid('', 21), h.make_opsetid(MS, 1)])


def qlinear_conv(c, m, hw, k, group, w_dt, per_channel, pads):
    """QLinearConv with a uint8 X [1, c, hw, hw], weights [m, c / group, k, k], int32 bias."""
    w = ints(w_dt, (m, c // group, k, k))
    ws = (rng.uniform(0.002, 0.01, m) if per_channel else np.array(0.004)).astype(np.float32)
    # symmetric weights, as onnxruntime's quantizer writes them: the zero points oneDNN's path takes
    wz = np.full(ws.shape, 0 if w_dt is np.int8 else 128, w_dt)
    inits = [nh.from_array(np.array(0.02, np.float32), 'xs'), nh.from_array(np.array(121, np.uint8), 'xz'),
             nh.from_array(w, 'w'), nh.from_array(ws, 'ws'), nh.from_array(wz, 'wz'),
             nh.from_array(np.array(0.05, np.float32), 'ys'), nh.from_array(np.array(117, np.uint8), 'yz'),
             nh.from_array(rng.integers(-2000, 2000, m).astype(np.int32), 'b')]
    node = h.make_node('QLinearConv', ['x', 'xs', 'xz', 'w', 'ws', 'wz', 'ys', 'yz', 'b'], ['y'],
                       group=group, pads=[pads] * 4)
    out = hw + 2 * pads - k + 1
    return (model([node], [h.make_tensor_value_info('x', TP.UINT8, [1, c, hw, hw])],
                  [h.make_tensor_value_info('y', TP.UINT8, [1, m, out, out])], inits),
            {'x': ints(np.uint8, (1, c, hw, hw))})


def qlinear_matmul(m, k, n):
    inits = [nh.from_array(np.array(0.02, np.float32), 'as'), nh.from_array(np.array(130, np.uint8), 'az'),
             nh.from_array(ints(np.int8, (k, n)), 'b'), nh.from_array(np.array(0.01, np.float32), 'bs'),
             nh.from_array(np.array(0, np.int8), 'bz'),
             nh.from_array(np.array(2.5, np.float32), 'ys'), nh.from_array(np.array(120, np.uint8), 'yz')]
    node = h.make_node('QLinearMatMul', ['a', 'as', 'az', 'b', 'bs', 'bz', 'ys', 'yz'], ['y'])
    return (model([node], [h.make_tensor_value_info('a', TP.UINT8, [m, k])],
                  [h.make_tensor_value_info('y', TP.UINT8, [m, n])], inits),
            {'a': ints(np.uint8, (m, k))})


def matmul_integer(m, k, n):
    """uint8 x uint8 with both zero points: B is moved into int8 at prepare."""
    inits = [nh.from_array(ints(np.uint8, (k, n)), 'b'), nh.from_array(np.array(77, np.uint8), 'az'),
             nh.from_array(np.array(140, np.uint8), 'bz')]
    node = h.make_node('MatMulInteger', ['a', 'b', 'az', 'bz'], ['y'])
    return (model([node], [h.make_tensor_value_info('a', TP.UINT8, [2, m, k])],
                  [h.make_tensor_value_info('y', TP.INT32, [2, m, n])], inits),
            {'a': ints(np.uint8, (2, m, k))})


def qgemm(m, k, n):
    inits = [nh.from_array(np.array(0.03, np.float32), 'as'), nh.from_array(np.array(128, np.uint8), 'az'),
             nh.from_array(ints(np.int8, (n, k)), 'b'), nh.from_array(np.array(0.002, np.float32), 'bs'),
             nh.from_array(np.array(0, np.int8), 'bz'),
             nh.from_array(rng.integers(-5000, 5000, n).astype(np.int32), 'c'),
             nh.from_array(np.array(0.4, np.float32), 'ys'), nh.from_array(np.array(125, np.uint8), 'yz')]
    node = h.make_node('QGemm', ['a', 'as', 'az', 'b', 'bs', 'bz', 'c', 'ys', 'yz'], ['y'], domain=MS,
                       transB=1)
    return (model([node], [h.make_tensor_value_info('a', TP.UINT8, [m, k])],
                  [h.make_tensor_value_info('y', TP.UINT8, [m, n])], inits),
            {'a': ints(np.uint8, (m, k))})


def dynamic_quantize_matmul(m, k, n):
    """Float A quantized per run: the dynamic BERT models' product."""
    inits = [nh.from_array(ints(np.int8, (k, n)), 'b'),
             nh.from_array(rng.uniform(0.001, 0.01, n).astype(np.float32), 'bs'),
             nh.from_array(rng.uniform(-1, 1, n).astype(np.float32), 'bias')]
    node = h.make_node('DynamicQuantizeMatMul', ['a', 'b', 'bs', '', 'bias'], ['y'], domain=MS)
    return (model([node], [h.make_tensor_value_info('a', TP.FLOAT, [1, m, k])],
                  [h.make_tensor_value_info('y', TP.FLOAT, [1, m, n])], inits),
            {'a': rng.uniform(-3, 3, (1, m, k)).astype(np.float32)})


# name: (builder, the primitive kind that runs on AMX where the CPU has it; 'vnni': a convolution
# onyx keeps off AMX; None: nothing to check, oneDNN has no AMX kernel or picks either itself)
CASES = {
    'conv3x3': (lambda: qlinear_conv(32, 64, 14, 3, 1, np.int8, False, 1), 'convolution'),
    'conv1x1_per_channel': (lambda: qlinear_conv(64, 96, 7, 1, 1, np.int8, True, 0), 'convolution'),
    # fewer than 64 input channels a group: left to VNNI (qconv_dnnl.c, AMX_MIN_POINTWISE_CHANNELS)
    'conv1x1_narrow': (lambda: qlinear_conv(24, 96, 12, 1, 1, np.int8, False, 0), 'vnni'),
    'conv1x1_narrow_grouped': (lambda: qlinear_conv(64, 64, 9, 1, 2, np.int8, True, 0), 'vnni'),
    'conv_uint8_weights': (lambda: qlinear_conv(16, 32, 9, 3, 1, np.uint8, True, 1), 'convolution'),
    'conv_grouped': (lambda: qlinear_conv(64, 64, 8, 3, 4, np.int8, False, 1), 'convolution'),
    'conv_depthwise': (lambda: qlinear_conv(32, 32, 10, 3, 32, np.int8, True, 1), None),
    'qlinear_matmul_12': (lambda: qlinear_matmul(12, 768, 256), 'matmul'),
    # one row: oneDNN itself picks AMX or VNNI by the width (VNNI at this one)
    'qlinear_matmul_1': (lambda: qlinear_matmul(1, 1280, 200), None),
    'matmul_integer_uint8': (lambda: matmul_integer(64, 256, 192), 'matmul'),
    'qgemm': (lambda: qgemm(5, 320, 100), 'matmul'),
    'dynamic_quantize_matmul': (lambda: dynamic_quantize_matmul(128, 384, 160), 'matmul'),
}


def run_ort(m, feeds):
    so = ort.SessionOptions()
    so.log_severity_level = 3
    so.intra_op_num_threads = 2
    return ort.InferenceSession(m.SerializeToString(), so,
                                providers=['CPUExecutionProvider']).run(None, feeds)[0]


def run_onyx_child(tmp_path, m, feeds, env_extra, lines=False):
    """onyx in a child process (oneDNN reads its ISA cap once per process): the output and the
    oneDNN kernels that ran, as (primitive kind, implementation) pairs (lines: and the child's
    lines of output, oneDNN's verbose log)."""
    path = tmp_path / 'm.onnx'
    path.write_bytes(m.SerializeToString())
    np.savez(tmp_path / 'in.npz', **feeds)
    env = dict(os.environ, ONEDNN_VERBOSE='1', **env_extra)
    proc = subprocess.run([sys.executable, CHILD, str(path), str(tmp_path / 'in.npz'),
                           str(tmp_path / 'out.npy')], env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    kernels = set()
    for line in proc.stdout.splitlines():
        parts = line.split(',')
        if len(parts) > 4 and parts[0] in ('onednn_verbose', 'dnnl_verbose') and parts[1] == 'exec':
            kernels.add((parts[3], parts[4]))
    out = np.load(tmp_path / 'out.npy')
    return (out, kernels, proc.stdout.splitlines()) if lines else (out, kernels)


@pytest.mark.parametrize('case', sorted(CASES))
def test_default_isa_equals_onnxruntime(case, tmp_path):
    """As oneDNN finds the CPU: AMX kernels for what it has them for where the CPU has AMX."""
    build, kind = CASES[case]
    m, feeds = build()
    got, kernels = run_onyx_child(tmp_path, m, feeds, {})
    np.testing.assert_array_equal(got, run_ort(m, feeds))
    if kind == 'vnni' and HAS_VNNI:  # without VNNI onyx takes its own AVX2 kernels
        assert any(k == 'convolution' and 'vnni' in impl for k, impl in kernels), kernels
        assert not any('amx' in impl for _, impl in kernels), kernels
    elif kind and HAS_AMX:
        assert any(k == kind and 'amx' in impl for k, impl in kernels), kernels


@pytest.mark.skipif(not HAS_VNNI, reason='the CPU has no AVX-512 VNNI: oneDNN cannot be capped at it')
@pytest.mark.parametrize('case', sorted(CASES))
def test_vnni_without_amx_equals_onnxruntime(case, tmp_path):
    """Capped at AVX-512 VNNI: the path of CPUs without AMX, also on one that has it."""
    build, kind = CASES[case]
    m, feeds = build()
    got, kernels = run_onyx_child(tmp_path, m, feeds, {'ONEDNN_MAX_CPU_ISA': 'AVX512_CORE_VNNI'})
    np.testing.assert_array_equal(got, run_ort(m, feeds))
    assert not any('amx' in impl for _, impl in kernels), kernels
    if kind:
        kind = 'convolution' if kind == 'vnni' else kind
        assert any(k == kind and 'vnni' in impl for k, impl in kernels), kernels


def quantized_stem(quantize):
    """A network's input: float X [2, 3, 20, 20] quantized by one scale (quantize; else X given in
    uint8) into a 3x3 stride-2 QLinearConv of 3 channels, then a pointwise one that keeps the
    stem's Y channels last."""
    inits = [nh.from_array(np.array(0.02, np.float32), 'xs'), nh.from_array(np.array(121, np.uint8), 'xz')]
    nodes = [h.make_node('QuantizeLinear', ['x', 'xs', 'xz'], ['xq'])] if quantize else []

    def conv(x, xs, xz, name, c, m, k, stride):
        inits.extend([nh.from_array(ints(np.int8, (m, c, k, k)), name + 'w'),
                      nh.from_array(np.array(0.004, np.float32), name + 'ws'),
                      nh.from_array(np.array(0, np.int8), name + 'wz'),
                      nh.from_array(np.array(0.05, np.float32), name + 'ys'),
                      nh.from_array(np.array(117, np.uint8), name + 'yz'),
                      nh.from_array(rng.integers(-2000, 2000, m).astype(np.int32), name + 'b')])
        params = [name + p for p in ('w', 'ws', 'wz', 'ys', 'yz', 'b')]
        nodes.append(h.make_node('QLinearConv', [x, xs, xz] + params, [name], pads=[k // 2] * 4,
                                 strides=[stride] * 2))
        return name
    y = conv(conv('xq', 'xs', 'xz', 'c1', 3, 16, 3, 2), 'c1ys', 'c1yz', 'c2', 16, 24, 1, 1)
    if quantize:
        feeds = {'x': rng.uniform(-3, 3, (2, 3, 20, 20)).astype(np.float32)}
        x_info = h.make_tensor_value_info('x', TP.FLOAT, [2, 3, 20, 20])
    else:
        feeds = {'xq': ints(np.uint8, (2, 3, 20, 20))}
        x_info = h.make_tensor_value_info('xq', TP.UINT8, [2, 3, 20, 20])
    return (model(nodes, [x_info], [h.make_tensor_value_info(y, TP.UINT8, [2, 24, 10, 10])], inits),
            feeds)


def plain_u8_reorders(lines):
    """oneDNN's reorders of uint8 tensors out of the plain layout (NCHW: abcd) that ran."""
    return [l for l in lines if l.startswith(('onednn_verbose,exec', 'dnnl_verbose,exec')) and
            ',reorder,' in l and 'src_u8::blocked:abcd' in l]


@pytest.mark.skipif(not HAS_VNNI, reason='without VNNI QLinearConv takes the AVX2 path')
def test_input_quantized_channels_last(tmp_path):
    """The input QuantizeLinear writes the channels-last layout the stem conv reads
    (core/fuse_blocked.c, LAY_QUANTIZE): no reorder of the stem's X runs, the same bits as
    onnxruntime. Given in uint8 (plain), the same conv reorders its X: the check can fail."""
    m, feeds = quantized_stem(True)
    got, _, lines = run_onyx_child(tmp_path, m, feeds, {}, lines=True)
    np.testing.assert_array_equal(got, run_ort(m, feeds))
    assert plain_u8_reorders(lines) == []
    m, feeds = quantized_stem(False)
    got, _, lines = run_onyx_child(tmp_path, m, feeds, {}, lines=True)
    np.testing.assert_array_equal(got, run_ort(m, feeds))
    assert len(plain_u8_reorders(lines)) >= 1

