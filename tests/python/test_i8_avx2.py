"""The 8-bit products of CPUs without VNNI (kernels_cpu/common/i8_gemm_avx2.c), forced here with
ONYX_I8=avx2 (read when a session prepares): MatMulInteger, QLinearMatMul, QGemm,
MatMulIntegerToFloat and DynamicQuantizeMatMul with a constant B, every pairing of uint8/int8
A and B, per-tensor and per-column zero points, shapes that are not multiples of the kernels'
tiles.

onnxruntime on this machine runs its VNNI kernels, whose sums are exact; MLAS's AVX2 kernels
differ from them only where vpmaddubsw saturates a pair of uint8 x int8 products to int16. So:
- inputs where no pair can saturate (int8 B within [-63, 63], or a pairing MLAS computes exactly
  on AVX2) must give onnxruntime's outputs bit for bit;
- inputs that saturate must give what a numpy model of MLAS's AVX2 arithmetic gives (each pair
  k = 2p, 2p + 1 of raw A x raw B clipped to int16, zero points applied afterwards), and that
  must differ from the exact product (else the test would show nothing); the default path (oneDNN
  with VNNI here) and the reference loops (ONYX_I8=ref) stay exact."""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

import onyx

MS = 'com.microsoft'
rng = np.random.default_rng(3232)
CPUINFO = open('/proc/cpuinfo').read()
HAS_AVX2 = ' avx2' in CPUINFO
HAS_VNNI = 'avx512_vnni' in CPUINFO or 'avx_vnni' in CPUINFO
TP_OF = {np.uint8: TP.UINT8, np.int8: TP.INT8}
SHAPES = [(1, 200, 72), (7, 33, 130), (5, 3, 17), (64, 768, 40)]
PAIRS = [(np.uint8, np.int8), (np.uint8, np.uint8), (np.int8, np.int8), (np.int8, np.uint8)]


@pytest.fixture
def avx2(monkeypatch):
    if not HAS_AVX2:
        pytest.skip('the CPU has no AVX2: the AVX2 kernels cannot run here')
    monkeypatch.setenv('ONYX_I8', 'avx2')


def values(dt, shape, narrow=False):
    if dt is np.int8:
        lo, hi = (-63, 64) if narrow else (-128, 128)
    else:
        lo, hi = 0, 256
    return np.asarray(rng.integers(lo, hi, shape)).astype(dt)


def model(nodes, inputs, outputs, inits):
    g = h.make_graph(nodes, 'g', inputs, outputs, inits)
    return h.make_model(g, opset_imports=[h.make_opsetid('', 21), h.make_opsetid(MS, 1)])


def run_both(m, feeds):
    so = ort.SessionOptions()
    so.log_severity_level = 3
    want = ort.InferenceSession(m.SerializeToString(), so,
                                providers=['CPUExecutionProvider']).run(None, feeds)[0]
    got = onyx.Session(m.SerializeToString(), threads=2).run(None, feeds)[0]
    return got, want


def matmul_integer(a_t, b, za, zb):
    inits = [nh.from_array(b, 'B'), nh.from_array(np.array(za, a_t), 'za'), nh.from_array(zb, 'zb')]
    return model([h.make_node('MatMulInteger', ['a', 'B', 'za', 'zb'], ['y'])],
                 [h.make_tensor_value_info('a', TP_OF[a_t], None)],
                 [h.make_tensor_value_info('y', TP.INT32, None)], inits)


def zero_points(dt, n, per_column):
    return values(dt, (n,) if per_column else ())


@pytest.mark.parametrize('m, k, n', SHAPES)
@pytest.mark.parametrize('a_t, b_t', PAIRS)
@pytest.mark.parametrize('per_column', [False, True])
def test_matmul_integer(m, k, n, a_t, b_t, per_column, avx2):
    b, a, za, zb = values(b_t, (k, n), narrow=True), values(a_t, (m, k)), values(a_t, ()), \
        zero_points(b_t, n, per_column)
    got, want = run_both(matmul_integer(a_t, b, za, zb), {'a': a})
    assert got.dtype == np.int32 and got.shape == want.shape
    np.testing.assert_array_equal(got, exact(a, b, int(za), np.broadcast_to(zb, (n,)).astype(np.int64)))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize('m, k, n', SHAPES)
@pytest.mark.parametrize('a_t, b_t', PAIRS)
def test_full_range_where_exact(m, k, n, a_t, b_t, avx2):
    """Every pairing but uint8 x int8 is exact in MLAS's AVX2 kernels: full-range B too."""
    if (a_t, b_t) == (np.uint8, np.int8):
        pytest.skip('uint8 x int8 saturates: test_saturation')
    b, a = values(b_t, (k, n)), values(a_t, (m, k))
    got, want = run_both(matmul_integer(a_t, b, values(a_t, ()), values(b_t, (n,))), {'a': a})
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize('m, k, n', SHAPES)
@pytest.mark.parametrize('a_t, b_t', PAIRS[:3])  # onnxruntime has no int8 A x uint8 B kernel
def test_qlinear_matmul(m, k, n, a_t, b_t, avx2):
    y_t = a_t  # onnxruntime's kernels write A's type
    b = values(b_t, (k, n), narrow=True)
    inits = [nh.from_array(np.array(0.02, np.float32), 'as'), nh.from_array(values(a_t, ()), 'az'),
             nh.from_array((rng.random(n) * 0.01 + 0.002).astype(np.float32), 'bs'),
             nh.from_array(values(b_t, (n,)), 'bz'), nh.from_array(b, 'B'),
             nh.from_array(np.array(rng.random() * 5 + 20, np.float32), 'ys'),
             nh.from_array(values(y_t, ()), 'yz')]
    node = h.make_node('QLinearMatMul', ['a', 'as', 'az', 'B', 'bs', 'bz', 'ys', 'yz'], ['y'])
    m_ = model([node], [h.make_tensor_value_info('a', TP_OF[a_t], None)],
               [h.make_tensor_value_info('y', TP_OF[y_t], None)], inits)
    got, want = run_both(m_, {'a': values(a_t, (m, k))})
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize('m, k, n', SHAPES)
@pytest.mark.parametrize('a_t, b_t', [(np.uint8, np.int8), (np.uint8, np.uint8)])
@pytest.mark.parametrize('trans_b', [0, 1])
def test_qgemm(m, k, n, a_t, b_t, trans_b, avx2):
    b = values(b_t, (n, k) if trans_b else (k, n), narrow=True)
    inits = [nh.from_array(np.array(0.03, np.float32), 'as'), nh.from_array(values(a_t, ()), 'az'),
             nh.from_array(b, 'B'), nh.from_array(np.array(0.004, np.float32), 'bs'),
             nh.from_array(values(b_t, ()), 'bz'),
             nh.from_array(rng.integers(-5000, 5000, n).astype(np.int32), 'C'),
             nh.from_array(np.array(0.5, np.float32), 'ys'), nh.from_array(values(a_t, ()), 'yz')]
    node = h.make_node('QGemm', ['a', 'as', 'az', 'B', 'bs', 'bz', 'C', 'ys', 'yz'], ['y'],
                       domain=MS, transB=trans_b)
    m_ = model([node], [h.make_tensor_value_info('a', TP_OF[a_t], None)],
               [h.make_tensor_value_info('y', TP_OF[a_t], None)], inits)
    got, want = run_both(m_, {'a': values(a_t, (m, k))})
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize('m, k, n', SHAPES)
@pytest.mark.parametrize('b_t', [np.int8, np.uint8])
def test_matmul_integer_to_float(m, k, n, b_t, avx2):
    b = values(b_t, (k, n), narrow=True)
    inits = [nh.from_array(b, 'B'), nh.from_array(np.array(0.02, np.float32), 'as'),
             nh.from_array((rng.random(n) * 0.01 + 0.002).astype(np.float32), 'bs'),
             nh.from_array(values(np.uint8, ()), 'az'), nh.from_array(values(b_t, (n,)), 'bz'),
             nh.from_array(rng.standard_normal(n).astype(np.float32), 'bias')]
    node = h.make_node('MatMulIntegerToFloat', ['a', 'B', 'as', 'bs', 'az', 'bz', 'bias'], ['y'],
                       domain=MS)
    m_ = model([node], [h.make_tensor_value_info('a', TP.UINT8, None)],
               [h.make_tensor_value_info('y', TP.FLOAT, None)], inits)
    got, want = run_both(m_, {'a': values(np.uint8, (m, k))})
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize('m, k, n', SHAPES)
def test_dynamic_quantize_matmul(m, k, n, avx2):
    b = values(np.int8, (k, n), narrow=True)
    inits = [nh.from_array(b, 'B'), nh.from_array((rng.random(n) * 0.01).astype(np.float32), 'bs'),
             nh.from_array(np.zeros(n, np.int8), 'bz')]
    node = h.make_node('DynamicQuantizeMatMul', ['a', 'B', 'bs', 'bz'], ['y'], domain=MS)
    m_ = model([node], [h.make_tensor_value_info('a', TP.FLOAT, None)],
               [h.make_tensor_value_info('y', TP.FLOAT, None)], inits)
    got, want = run_both(m_, {'a': rng.standard_normal((m, k)).astype(np.float32)})
    np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------- saturation


def mlas_avx2_u8s8(a, b, za, zb):
    """MLAS's AVX2 uint8 x int8 product: raw A x raw B, each pair of products (k = 2p, 2p + 1,
    a zero past an odd K) summed and clipped to int16 (vpmaddubsw), the pairs added in int32
    (vpmaddwd by ones), then the zero points through row and column sums."""
    k = a.shape[1]
    a32, b32 = a.astype(np.int64), b.astype(np.int64)
    if k % 2:
        a32 = np.pad(a32, ((0, 0), (0, 1)))
        b32 = np.pad(b32, ((0, 1), (0, 0)))
    prod = a32[:, :, None] * b32[None, :, :]
    pairs = np.clip(prod[:, 0::2] + prod[:, 1::2], -32768, 32767)
    acc = pairs.sum(axis=1)
    acc = acc - za * b.astype(np.int64).sum(axis=0)[None, :] \
        - zb[None, :] * a.astype(np.int64).sum(axis=1)[:, None] + k * za * zb[None, :]
    return acc.astype(np.int32)


def exact(a, b, za, zb):
    return ((a.astype(np.int64) - za) @ (b.astype(np.int64) - zb[None, :])).astype(np.int32)


@pytest.mark.parametrize('m, k, n', SHAPES)
@pytest.mark.parametrize('isa', ['avx2', 'default', 'ref'])
def test_saturation(m, k, n, isa, monkeypatch):
    if isa == 'avx2' and not HAS_AVX2:
        pytest.skip('the CPU has no AVX2: the AVX2 kernels cannot run here')
    if isa == 'default' and not HAS_VNNI:
        pytest.skip('without VNNI the default path is the AVX2 one')
    if isa != 'default':
        monkeypatch.setenv('ONYX_I8', isa)
    a = rng.integers(180, 256, (m, k)).astype(np.uint8)
    b = rng.choice(np.array([-128, -127, -100, 90, 120, 127], np.int8), (k, n))
    za, zb = 7, rng.integers(-128, 128, n).astype(np.int8)
    mdl = matmul_integer(np.uint8, b, za, zb)
    got = onyx.Session(mdl.SerializeToString(), threads=2).run(None, {'a': a})[0]
    model_avx2, model_exact = mlas_avx2_u8s8(a, b, za, zb.astype(np.int64)), \
        exact(a, b, za, zb.astype(np.int64))
    if k > 1:
        assert (model_avx2 != model_exact).any()  # these inputs do saturate
    np.testing.assert_array_equal(got, model_avx2 if isa == 'avx2' else model_exact)
