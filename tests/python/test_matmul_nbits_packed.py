"""MatMulNBits on its packed weights, against onnxruntime's CPU provider on random models: rows
M = 1, 7 (the dot kernels, in groups of 4) and 40, 128 (dequantized panels through sgemm); K and N not
multiples of the block; 2/4/8-bit codes; with and without zero points and bias; float and float16
activations. accuracy_level 0/1: within float rounding of onnxruntime's output (rtol 1e-5 of the
output's scale). accuracy_level 4 (int8 activations): within onnxruntime's own difference between
its levels 1 and 4 (plus the rounding allowance), and where the CPU has AVX-512 VNNI and M is small
(the int8 path) within a tenth of it of onnxruntime's level 4; 4-bit weights at level 4 run as an
int8 GEMM for every M where the CPU has AVX2 (forced onto the AVX2 kernels with ONYX_NBITS_I8=avx2
too), and are then within a tenth of the spread at every M. 2- and 8-bit codes at level 4 stay on
their float paths (bit-exact with level 1). And preparing
a model must not hold a float copy of the weight: the peak RSS of a process that loads a K x N
model and runs it at M = 1 and 128 grows by well under K*N*4 bytes."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

import onyx

MS = 'com.microsoft'
rng = np.random.default_rng(3434)


def nbits_model(k, n, bits=4, block=32, zp=False, bias=False, level=0, dtype=TP.FLOAT):
    kb = (k + block - 1) // block
    np_t = np.float16 if dtype == TP.FLOAT16 else np.float32
    inits = [nh.from_array(rng.integers(0, 256, (n, kb, block * bits // 8)).astype(np.uint8), 'B'),
             nh.from_array((rng.random(n * kb) * 0.02 + 0.005).astype(np_t), 'scales')]
    ins = ['a', 'B', 'scales']
    if zp:
        inits.append(nh.from_array(
            rng.integers(0, 256, (n, (kb * bits + 7) // 8)).astype(np.uint8), 'zp'))
        ins.append('zp')
    if bias:
        ins += [''] * (5 - len(ins)) + ['bias']
        inits.append(nh.from_array(rng.standard_normal(n).astype(np_t), 'bias'))
    node = h.make_node('MatMulNBits', ins, ['y'], domain=MS, name='subject', K=k, N=n, bits=bits,
                       block_size=block, accuracy_level=level)
    g = h.make_graph([node], 'g', [h.make_tensor_value_info('a', dtype, None)],
                     [h.make_tensor_value_info('y', dtype, None)], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid('', 21), h.make_opsetid(MS, 1)])


def with_level(m, level):
    m2 = type(m)()
    m2.CopyFrom(m)
    for a in m2.graph.node[0].attribute:
        if a.name == 'accuracy_level':
            a.i = level
    return m2


def ort_run(m, a):
    so = ort.SessionOptions()
    so.log_severity_level = 3
    return ort.InferenceSession(m.SerializeToString(), so,
                                providers=['CPUExecutionProvider']).run(None, {'a': a})[0]


def onyx_run(m, a):
    return onyx.Session(m.SerializeToString(), threads=2).run(None, {'a': a})[0]


CPUINFO = open('/proc/cpuinfo').read()
HAS_VNNI = 'avx512_vnni' in CPUINFO
HAS_AVX2 = ' avx2' in CPUINFO and ' fma' in CPUINFO

# (40, 4100, 300): panels of 128 columns, three of them shared by the threads' slots, the last one
# short, each product on its thread alone; (300, 2100, 400): two panels of 240 and 160 columns, the
# products split over the threads (more than 256 rows)
SHAPES = [(1, 200, 72), (7, 200, 72), (128, 200, 72), (1, 96, 40), (7, 1000, 130),
          (40, 4100, 300), (300, 2100, 400)]


@pytest.mark.parametrize('m_rows, k, n', SHAPES)
@pytest.mark.parametrize('bits, block', [(4, 32), (4, 16), (4, 128), (8, 32), (2, 64), (2, 16)])
@pytest.mark.parametrize('zp, bias', [(False, False), (True, True)])
@pytest.mark.parametrize('level', [0, 1])
def test_float_levels(m_rows, k, n, bits, block, zp, bias, level):
    m = nbits_model(k, n, bits, block, zp, bias, level)
    a = rng.standard_normal((m_rows, k)).astype(np.float32)
    got, want = onyx_run(m, a), ort_run(m, a)
    assert got.shape == want.shape
    scale = np.abs(want).max() + 1e-6
    assert np.abs(got - want).max() <= 1e-5 * scale, (np.abs(got - want).max(), scale)


@pytest.mark.parametrize('m_rows, k, n', SHAPES + [(40, 520, 33)])
@pytest.mark.parametrize('block', [16, 32, 64, 128, 256])
@pytest.mark.parametrize('zp, bias', [(False, False), (True, True), (True, False)])
@pytest.mark.parametrize('isa', ['default', 'avx2'])
def test_int8_level(m_rows, k, n, block, zp, bias, isa, monkeypatch):
    if isa == 'avx2':
        if not HAS_AVX2:
            pytest.skip('the CPU has no AVX2: the AVX2 kernels cannot run here')
        monkeypatch.setenv('ONYX_NBITS_I8', 'avx2')  # read when the session prepares
    m4 = nbits_model(k, n, 4, block, zp, bias, 4)
    a = rng.standard_normal((m_rows, 1, k)).astype(np.float32)
    got, want4, want1 = onyx_run(m4, a), ort_run(m4, a), ort_run(with_level(m4, 1), a)
    spread = np.abs(want4 - want1).max()
    allowed = spread + 1e-5 * (np.abs(want1).max() + 1e-6)
    assert np.abs(got - want4).max() <= allowed, (np.abs(got - want4).max(), allowed)
    assert spread > 0  # onnxruntime's level 4 really is int8 here
    if (m_rows <= 16 and HAS_VNNI) or HAS_AVX2:
        # the int8 paths quantize as onnxruntime does and run in int8: far nearer its level 4
        # than its level 1
        assert np.abs(got - want4).max() < 0.1 * spread, (np.abs(got - want4).max(), spread)


@pytest.mark.parametrize('bits, block, zp', [(2, 32, True), (8, 32, True), (2, 16, False),
                                             (8, 64, False)])
@pytest.mark.parametrize('m_rows', [1, 7, 40])
def test_level4_keeps_other_bits_on_their_paths(bits, block, zp, m_rows):
    # 2/8-bit codes at level 4 run the float kernels: bit-exact with level 1, and within float
    # rounding of onnxruntime's level 1
    m4 = nbits_model(200, 72, bits, block, zp, False, 4)
    a = rng.standard_normal((m_rows, 200)).astype(np.float32)
    got4, got1 = onyx_run(m4, a), onyx_run(with_level(m4, 1), a)
    np.testing.assert_array_equal(got4, got1)
    want = ort_run(with_level(m4, 1), a)
    assert np.abs(got4 - want).max() <= 1e-5 * (np.abs(want).max() + 1e-6)


@pytest.mark.parametrize('bad', [np.nan, np.inf])
def test_level4_input_not_finite(bad):
    # an activation with no int8 code makes its row NaN, never a finite guess; other rows unharmed
    m4 = nbits_model(200, 40, 4, 32, True, False, 4)
    a = rng.standard_normal((3, 200)).astype(np.float32)
    clean = onyx_run(m4, a)
    a[1, 77] = bad
    got = onyx_run(m4, a)
    assert np.isnan(got[1]).all()
    np.testing.assert_array_equal(got[[0, 2]], clean[[0, 2]])


def test_level4_float16_activations():
    # the int8 path converts float16 activations in and the output back out: the float16 model
    # gives the float32 one's answer on the same (float16-exact) values, to float16's rounding
    m16 = nbits_model(200, 72, 4, 32, True, True, 4, TP.FLOAT16)
    m32 = type(m16)()
    m32.CopyFrom(m16)
    for t in list(m32.graph.initializer):
        if t.data_type == TP.FLOAT16:
            t.CopyFrom(nh.from_array(nh.to_array(t).astype(np.float32), t.name))
    m32.graph.input[0].type.tensor_type.elem_type = TP.FLOAT
    m32.graph.output[0].type.tensor_type.elem_type = TP.FLOAT
    for rows in (1, 7, 40):
        a = rng.standard_normal((rows, 200)).astype(np.float16)
        got, want = onyx_run(m16, a), onyx_run(m32, a.astype(np.float32))
        assert got.dtype == np.float16
        np.testing.assert_allclose(got.astype(np.float32), want, rtol=1e-2, atol=1e-2)


# VmHWM, not ru_maxrss: a child's ru_maxrss starts at its parent's peak (fork copies it), while
# exec gives the process a fresh address space whose high-water mark starts from nothing
PEAK_SCRIPT = textwrap.dedent('''
    import sys
    import numpy as np
    import onyx
    def peak_kib():
        for line in open('/proc/self/status'):
            if line.startswith('VmHWM:'):
                return int(line.split()[1])
    k, n = int(sys.argv[2]), int(sys.argv[3])
    data = open(sys.argv[1], 'rb').read()
    before = peak_kib()
    s = onyx.Session(data, threads=2)
    for rows in (1, 128):
        s.run(None, {'a': np.ones((rows, k), np.float32)})
    print(peak_kib() - before)
''')


def grown_kib(tmp_path, model, k, n):
    """How much a fresh process's peak grows when it prepares `model` (A of k columns) and runs
    it at M = 1 and 128."""
    path = tmp_path / f'model{k}x{n}.onnx'
    path.write_bytes(model.SerializeToString())
    script = tmp_path / 'peak.py'
    script.write_text(PEAK_SCRIPT)
    out = subprocess.run([sys.executable, str(script), str(path), str(k), str(n)],
                         capture_output=True, text=True, env=dict(os.environ), check=True)
    return int(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize('level', [0, 4])
def test_no_float_copy_of_the_weight(tmp_path, level):
    # level 4 holds an int8-ready copy of the packed codes and scales (10 MiB here), not a float one
    def peak(k, n):
        return grown_kib(tmp_path, nbits_model(k, n, 4, 32, level=level), k, n)
    k, n = 4096, 4096
    # what a session and its first products cost whatever the weight (oneDNN, OpenBLAS's
    # buffers, thread stacks) is measured on a small weight run the same way, and taken off
    grown = peak(k, n) - peak(256, 256)
    float_copy_kib = k * n * 4 // 1024   # 64 MiB
    # the model's packed bytes (8 MiB, held in the model and in the session) and scales
    # (2 MiB) are allowed; a float copy of the weight is not
    assert grown < float_copy_kib * 0.6, (grown, float_copy_kib)


def layers_model(count, d, level):
    """A chain of `count` d x d 4-bit MatMulNBits (block 32)."""
    kb = d // 32
    inits, nodes, x = [], [], 'a'
    for i in range(count):
        inits += [nh.from_array(rng.integers(0, 256, (d, kb, 16)).astype(np.uint8), f'B{i}'),
                  nh.from_array((rng.random(d * kb) * 0.02 + 0.005).astype(np.float32), f's{i}')]
        nodes.append(h.make_node('MatMulNBits', [x, f'B{i}', f's{i}'], [f'h{i}'], domain=MS,
                                 K=d, N=d, bits=4, block_size=32, accuracy_level=level))
        x = f'h{i}'
    nodes.append(h.make_node('Identity', [x], ['y']))
    g = h.make_graph(nodes, 'g', [h.make_tensor_value_info('a', TP.FLOAT, None)],
                     [h.make_tensor_value_info('y', TP.FLOAT, None)], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid('', 21), h.make_opsetid(MS, 1)])


@pytest.mark.skipif(not HAS_AVX2, reason='the int8 repack runs where the CPU has AVX2')
def test_level4_holds_the_codes_once(tmp_path):
    # the repacked codes replace the model's: the model's copy of each B is handed back once it is
    # repacked (core/shared.h), so the codes are held once, not twice
    count, d = 8, 2048
    grown = (grown_kib(tmp_path, layers_model(count, d, 4), d, d) -
             grown_kib(tmp_path, layers_model(1, 256, 4), 256, 256))
    codes_kib = count * d * d // 2 // 1024            # 16 MiB
    scales_kib = count * d * (d // 32) * 4 // 1024    # 4 MiB, held twice (model and pack)
    # held once: codes + 2 x scales + one B in flight = 26 MiB; held twice: 42 MiB
    assert grown < codes_kib + 2 * scales_kib + codes_kib * 0.5, (grown, codes_kib)


@pytest.mark.parametrize('field,value,words', [('accuracy_level', 5, 'accuracy_level 5'),
                                               ('accuracy_level', -1, 'accuracy_level -1'),
                                               ('block_size', 1 << 30, 'block_size')])
def test_attributes_out_of_range_are_refused(field, value, words):
    m = nbits_model(64, 8)
    for a in m.graph.node[0].attribute:
        if a.name == field:
            a.i = value
    with pytest.raises(Exception, match=words):
        onyx.InferenceSession(m.SerializeToString()).run(None, {'a': np.ones((1, 64), np.float32)})
