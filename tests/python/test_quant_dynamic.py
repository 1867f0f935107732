"""Dynamic quantization at int8 speed: MatMulInteger, MatMulIntegerToFloat and
DynamicQuantizeMatMul on oneDNN's int8 matmul primitive where B is a constant matrix
(kernels_cpu/common/i8_matmul.c), and the vectorized DynamicQuantizeLinear.

The fast path must give the reference's bits: int32 products equal to numpy's exact sums
(wrapped to 32 bits) and to the reference loop's (B fed as an input, which the fast path does not
take), float outputs equal to the generic path's bit for bit. Every zero-point form is covered
(one value, per row of A, per column of B), uint8 and int8 on both sides, k not a multiple of 4,
a single row, and sums past 2^24 where a float round trip would show. Which path ran shows in the
verbose log ('made data from its constants': B packed once), on CPUs with VNNI only; elsewhere
both runs take the reference and the path assertions are skipped."""
import collections
import json
import threading

import numpy as np
import pytest

import onyx

onnx = pytest.importorskip('onnx')

from onnx import TensorProto as TP  # noqa: E402
from onnx import helper as oh  # noqa: E402
from onnx import numpy_helper as nh  # noqa: E402

MS = 'com.microsoft'
NP2TP = {np.uint8: TP.UINT8, np.int8: TP.INT8, np.float32: TP.FLOAT, np.int32: TP.INT32}


def vnni():
    flags = open('/proc/cpuinfo').read()
    return ' avx512_vnni' in flags or ' avx_vnni' in flags or ' amx_int8' in flags


PACKED = 'made data from its constants'


def model_bytes(node, inputs, const, out_type):
    """One node; inputs [(name, array or None)], those named in const as initializers."""
    ins, inits = [], []
    for name, a in inputs:
        if a is None:
            continue
        if name in const:
            inits.append(nh.from_array(a, name))
        else:
            ins.append(oh.make_tensor_value_info(name, NP2TP[a.dtype.type], a.shape))
    g = oh.make_graph([node], 't', ins, [oh.make_tensor_value_info('y', out_type, None)], inits)
    m = oh.make_model(g, opset_imports=[oh.make_opsetid('', 13), oh.make_opsetid(MS, 1)])
    m.ir_version = 8
    feed = {n: a for n, a in inputs if a is not None and n not in const}
    return m.SerializeToString(), feed


def run(node, inputs, const, out_type, capfd):
    """onyx's output and whether B was packed (the fast path)."""
    b, feed = model_bytes(node, inputs, const, out_type)
    so = onyx.SessionOptions()
    so.log_severity_level = 0
    out = onyx.InferenceSession(b, so).run(None, feed)[0]
    return out, PACKED in capfd.readouterr().err


def both_paths(node, inputs, out_type, capfd, params=()):
    """The output with B as an initializer (fast path where VNNI is) and as an input (reference)."""
    fast, packed = run(node, inputs, {'b'} | set(params), out_type, capfd)
    ref, packed_ref = run(node, inputs, set(params), out_type, capfd)
    assert not packed_ref
    if vnni():
        assert packed, 'the int8 primitive did not run'
    return fast, ref


def q(r, shape, t, lo=None, hi=None):
    info = np.iinfo(t)
    return r.integers(info.min if lo is None else lo, (info.max if hi is None else hi) + 1,
                      size=shape).astype(t)


def exact(a, b, za, zb):
    """(A - za) @ (B - zb) in int64, wrapped to int32 as ONNX's MatMulInteger."""
    p = (a.astype(np.int64) - za.astype(np.int64)) @ (b.astype(np.int64) - zb.astype(np.int64))
    return p.astype(np.int32)  # numpy wraps int64 -> int32 modulo 2^32


# A's shape, k, n, a_zero_point form, b_zero_point form
SHAPES = [((5,), 16, 7, 'one', 'one'), ((1,), 768, 64, 'one', 'none'), ((3,), 5, 3, 'row', 'col'),
          ((2, 3), 1031, 33, 'one', 'col'), ((2, 4), 67, 130, 'matrix', 'col'),
          ((4,), 3, 1, 'none', 'one'), ((7,), 256, 256, 'row', 'none')]


@pytest.mark.parametrize('lead,k,n,zak,zbk', SHAPES)
@pytest.mark.parametrize('at,bt', [(np.uint8, np.int8), (np.uint8, np.uint8), (np.int8, np.int8),
                                   (np.int8, np.uint8)])
def test_matmul_integer_exact(lead, k, n, zak, zbk, at, bt, capfd):
    r = np.random.default_rng(k * n + len(lead))
    a, b = q(r, lead + (k,), at), q(r, (k, n), bt)
    m = lead[-1]
    za = {'none': None, 'one': q(r, (), at), 'row': q(r, (m,), at),
          'matrix': q(r, lead + (1,), at)}[zak]
    zb = {'none': None, 'one': q(r, (), bt), 'col': q(r, (n,), bt)}[zbk]
    ins = [('a', a), ('b', b), ('za', za), ('zb', zb)]
    node = oh.make_node('MatMulInteger', ['a', 'b', 'za' if za is not None else '',
                                          'zb' if zb is not None else ''], ['y'])
    fast, ref = both_paths(node, ins, TP.INT32, capfd)
    zae = np.zeros((), at) if za is None else (za[..., None] if zak == 'row' else za)
    want = exact(a, b, zae, np.zeros((), bt) if zb is None else zb)
    np.testing.assert_array_equal(ref, want)
    np.testing.assert_array_equal(fast, want)


@pytest.mark.parametrize('at', [np.uint8, np.int8])
def test_matmul_integer_large_sums(at, capfd):
    """Sums past 2^24, odd, and some past 2^31 (wrapping): a float round trip would show."""
    r = np.random.default_rng(5)
    k, n = 40003, 9
    a = (q(r, (3, k), at, 120, 127) if at == np.int8 else q(r, (3, k), at, 250, 255))
    b = q(r, (k, n), np.int8, -128, -120)
    za, zb = np.array(1 if at == np.uint8 else -128, at), np.array(127, np.int8)
    ins = [('a', a), ('b', b), ('za', za), ('zb', zb)]
    node = oh.make_node('MatMulInteger', ['a', 'b', 'za', 'zb'], ['y'])
    fast, ref = both_paths(node, ins, TP.INT32, capfd)
    want = exact(a, b, za, zb)
    wide = (a.astype(np.int64) - int(za)) @ (b.astype(np.int64) - int(zb))
    assert np.abs(wide).max() > 2 ** 31 and (np.abs(wide) > 2 ** 24).all() and (wide % 2).any()
    np.testing.assert_array_equal(ref, want)
    np.testing.assert_array_equal(fast, want)


def test_matmul_integer_concurrent_runs():
    """One session, runs on several threads at once with different inputs: each gets its own."""
    r = np.random.default_rng(11)
    k, n = 96, 80
    b = q(r, (k, n), np.int8)
    zb = q(r, (n,), np.int8)
    node = oh.make_node('MatMulInteger', ['a', 'b', 'za', 'zb'], ['y'])
    g = oh.make_graph([node], 't', [oh.make_tensor_value_info('a', TP.UINT8, [6, k]),
                                    oh.make_tensor_value_info('za', TP.UINT8, [])],
                      [oh.make_tensor_value_info('y', TP.INT32, None)],
                      [nh.from_array(b, 'b'), nh.from_array(zb, 'zb')])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid('', 13)])
    m.ir_version = 8
    sess = onyx.InferenceSession(m.SerializeToString())
    feeds = [{'a': q(r, (6, k), np.uint8), 'za': q(r, (), np.uint8)} for _ in range(8)]
    wants = [exact(f['a'], b, f['za'], zb) for f in feeds]
    bad = []

    def worker(t):
        for i in range(30):
            j = (t + i) % len(feeds)
            if not np.array_equal(sess.run(None, feeds[j])[0], wants[j]):
                bad.append(j)
    threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad


def _b_params(r, n, kind, bt):
    if kind == 'one':
        return np.array(r.uniform(0.001, 0.02), np.float32), q(r, (), bt)
    shape = (n,) if kind == 'col' else (1, n)
    return np.array(r.uniform(0.001, 0.02, size=shape), np.float32), q(r, shape, bt)


@pytest.mark.parametrize('lead,k,n', [((5,), 16, 7), ((2, 3), 1031, 33), ((1,), 768, 64)])
@pytest.mark.parametrize('kind', ['one', 'col', 'matrix'])
@pytest.mark.parametrize('at,bt', [(np.uint8, np.int8), (np.uint8, np.uint8), (np.int8, np.int8)])
@pytest.mark.parametrize('bias', [False, True])
def test_matmul_integer_to_float_same_bits(lead, k, n, kind, at, bt, bias, capfd):
    r = np.random.default_rng(k + n)
    bs, bz = _b_params(r, n, kind, bt)
    ins = [('a', q(r, lead + (k,), at)), ('b', q(r, (k, n), bt)),
           ('as', np.array(r.uniform(0.01, 0.1), np.float32)), ('bs', bs), ('az', q(r, (), at)),
           ('bz', bz), ('bias', r.standard_normal(n).astype(np.float32) if bias else None)]
    node = oh.make_node('MatMulIntegerToFloat', [nm if x is not None else '' for nm, x in ins], ['y'],
                        domain=MS)
    fast, ref = both_paths(node, ins, TP.FLOAT, capfd, {'as', 'bs', 'az', 'bz', 'bias'})
    np.testing.assert_array_equal(fast, ref)
    a, b = ins[0][1], ins[1][1]
    acc = exact(a, b, ins[4][1], bz.reshape(-1) if kind != 'one' else bz).astype(np.float32)
    want = acc * (ins[2][1] * bs.reshape(-1))
    if bias:
        want = want + ins[6][1]
    np.testing.assert_array_equal(fast, want.astype(np.float32))


@pytest.mark.parametrize('lead,k,n', [((5,), 16, 7), ((2, 3), 1031, 33), ((1,), 768, 64)])
@pytest.mark.parametrize('kind', ['one', 'col'])
@pytest.mark.parametrize('bt', [np.uint8, np.int8])
@pytest.mark.parametrize('bias', [False, True])
def test_dynamic_quantize_matmul_same_bits(lead, k, n, kind, bt, bias, capfd):
    r = np.random.default_rng(3 * k + n)
    bs, bz = _b_params(r, n, kind, bt)
    ins = [('a', (r.standard_normal(lead + (k,)) * 3).astype(np.float32)), ('b', q(r, (k, n), bt)),
           ('bs', bs), ('bz', bz), ('bias', r.standard_normal(n).astype(np.float32) if bias else None)]
    node = oh.make_node('DynamicQuantizeMatMul', [nm if x is not None else '' for nm, x in ins], ['y'],
                        domain=MS)
    fast, ref = both_paths(node, ins, TP.FLOAT, capfd, {'bs', 'bz', 'bias'})
    np.testing.assert_array_equal(fast, ref)


def dql_reference(x):
    """ONNX's DynamicQuantizeLinear, step by step in float32; NaN left out of the range and
    quantized to 0, as onyx does."""
    x = x.astype(np.float32)
    finite = x[~np.isnan(x)]
    mn = np.float32(min(0.0, finite.min() if finite.size else 0.0))
    mx = np.float32(max(0.0, finite.max() if finite.size else 0.0))
    scale = np.float32((mx - mn) if mx != mn else np.float32(1)) / np.float32(255)
    zp = np.float32(np.clip(np.rint(np.float32(0) - mn / scale), 0, 255))
    with np.errstate(invalid='ignore'):
        y = np.rint(x / scale) + zp
        y = np.where(np.isnan(y), 0, np.clip(y, 0, 255))
    return y.astype(np.uint8), scale, zp.astype(np.uint8)


def onyx_dql(x):
    """onyx's DynamicQuantizeLinear of x: (y, y_scale, y_zero_point)."""
    node = oh.make_node('DynamicQuantizeLinear', ['x'], ['y', 'ys', 'yz'])
    g = oh.make_graph([node], 't', [oh.make_tensor_value_info('x', TP.FLOAT, list(x.shape))],
                      [oh.make_tensor_value_info('y', TP.UINT8, None),
                       oh.make_tensor_value_info('ys', TP.FLOAT, None),
                       oh.make_tensor_value_info('yz', TP.UINT8, None)])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid('', 13)])
    m.ir_version = 8
    return onyx.InferenceSession(m.SerializeToString()).run(None, {'x': x})


@pytest.mark.parametrize('shape,kind', [((12, 768), 'normal'), ((1, 128, 3072), 'normal'),
                                        ((1000,), 'positive'), ((33,), 'negative'), ((7,), 'zeros'),
                                        ((300001,), 'normal'), ((4096,), 'ties'), ((64,), 'nan')])
def test_dynamic_quantize_linear(shape, kind):
    r = np.random.default_rng(len(shape) + shape[-1])
    x = (r.standard_normal(shape) * 2).astype(np.float32)
    if kind == 'positive':
        x = np.abs(x) + 0.5
    elif kind == 'negative':
        x = -np.abs(x) - 0.5
    elif kind == 'zeros':
        x = np.zeros(shape, np.float32)
    elif kind == 'ties':  # range [-1, 254] * s: scale s, x / scale lands on k + 0.5 often
        x = (r.integers(-2, 508, size=shape) / 2.0).astype(np.float32)
        x[0], x[1] = -1.0, 254.0
    elif kind == 'nan':
        x[::5] = np.nan
    y, ys, yz = onyx_dql(x)
    wy, ws, wz = dql_reference(x)
    assert ys == ws and yz == wz
    np.testing.assert_array_equal(y, wy)
    if kind == 'ties':
        assert (np.abs(x / ws - np.floor(x / ws) - 0.5) < 1e-6).sum() > 100  # ties were there


@pytest.mark.parametrize('n', [67, 12 * 768 + 5, 70001])
@pytest.mark.parametrize('at', [1, 17, 63, 64, 130, -1])
def test_dynamic_quantize_range_extremes(n, at):
    """The range (kernels_cpu/common/dyn_q8.c keeps 64 running minima and maxima, then a tail;
    above 2^16 elements it runs in parts): the minimum and the maximum wherever they lie, NaN
    first, in the last block and in the tail, still set the scale and zero point."""
    x = np.random.default_rng(n).uniform(-1, 1, n).astype(np.float32)
    at = at if at < n else n - 2  # past a short input's end: in its tail
    x[0] = np.nan
    x[at] = -7.0
    x[at - 1 if at != 1 else 2] = 3.0
    y, ys, yz = onyx_dql(x)
    wy, ws, wz = dql_reference(x)
    assert ws == np.float32(10.0) / np.float32(255) and ys == ws and yz == wz
    np.testing.assert_array_equal(y, wy)


# ---------------------------------------------------------------- the fusion (core/rules/dynamic_quant.c)

# either fused op's weights packed at prepare
FUSED = ('(com.microsoft.MatMulIntegerToFloat-1) made data from its constants',
         '(com.microsoft.DynamicQuantizeMatMul-1) made data from its constants')


def projections_model(r):
    """x -> LayerNorm-free block: Q, K, V projections of one input (one DynamicQuantizeLinear
    feeding three products after quantization), one with no bias, an output projection."""
    def w(name, shape, s=0.2):
        return nh.from_array((r.standard_normal(shape) * s).astype(np.float32), name)
    inits = [w('wq', (32, 24)), w('bq', (24,)), w('wk', (32, 24)), w('bk', (24,)), w('wv', (32, 24)),
             w('wo', (24, 40)), w('bo', (40,))]
    nodes = [oh.make_node('MatMul', ['x', 'wq'], ['q0']), oh.make_node('Add', ['q0', 'bq'], ['q']),
             oh.make_node('MatMul', ['x', 'wk'], ['k0']), oh.make_node('Add', ['bk', 'k0'], ['k']),
             oh.make_node('MatMul', ['x', 'wv'], ['v']),
             oh.make_node('Mul', ['q', 'k'], ['qk']), oh.make_node('Add', ['qk', 'v'], ['h']),
             oh.make_node('Tanh', ['h'], ['t']),
             oh.make_node('MatMul', ['t', 'wo'], ['o0']), oh.make_node('Add', ['o0', 'bo'], ['y'])]
    g = oh.make_graph(nodes, 'p', [oh.make_tensor_value_info('x', TP.FLOAT, [2, 7, 32])],
                      [oh.make_tensor_value_info('y', TP.FLOAT, None)], inits)
    m = oh.make_model(g, opset_imports=[oh.make_opsetid('', 17)])
    m.ir_version = 8
    return m


@pytest.mark.parametrize('weight_type,per_channel', [('QInt8', False), ('QUInt8', False),
                                                     ('QInt8', True), ('QUInt8', True)])
def test_fusion_same_bits_at_every_level(tmp_path, weight_type, per_channel, capfd):
    quant = pytest.importorskip('onnxruntime.quantization')
    r = np.random.default_rng(7)
    src, dst = tmp_path / 'm.onnx', tmp_path / 'm_dyn.onnx'
    onnx.save(projections_model(r), str(src))
    quant.quantize_dynamic(str(src), str(dst), per_channel=per_channel,
                           weight_type=getattr(quant.QuantType, weight_type))
    assert {n.op_type for n in onnx.load(str(dst)).graph.node} >= {'MatMulInteger',
                                                                    'DynamicQuantizeLinear'}
    x = (r.standard_normal((2, 7, 32)) * 2).astype(np.float32)
    capfd.readouterr()
    out = {}
    for level in ('ORT_ENABLE_ALL', 'ORT_DISABLE_ALL'):
        so = onyx.SessionOptions()
        so.graph_optimization_level = getattr(onyx.GraphOptimizationLevel, level)
        so.log_severity_level = 0
        so.enable_profiling = True
        so.profile_file_prefix = str(tmp_path / level)
        sess = onyx.InferenceSession(str(dst), so)
        out[level] = sess.run(None, {'x': x})[0]
        ops = collections.Counter(e.get('args', {}).get('op_name')
                                  for e in json.load(open(sess.end_profiling())))
        fused = level == 'ORT_ENABLE_ALL'
        # x's quantization feeds q, k and v: it stays, read by three products; t's feeds the
        # output projection alone and joins it
        assert ops['MatMulIntegerToFloat'] == (3 if fused else 0), ops
        assert ops['DynamicQuantizeMatMul'] == (1 if fused else 0), ops
        assert ops['DynamicQuantizeLinear'] == (1 if fused else 2), ops
        assert ops['MatMulInteger'] == (0 if fused else 4) and ops['Cast'] == (0 if fused else 4)
        err = capfd.readouterr().err
        assert sum(err.count(f) for f in FUSED) == (4 if fused and vnni() else 0)
    np.testing.assert_array_equal(out['ORT_ENABLE_ALL'], out['ORT_DISABLE_ALL'])
