"""ONNX QLinearConv on oneDNN's int8 convolution (kernels_cpu/conv/qconv_dnnl.c), the 8-bit
tensors the fusion pass keeps channels last between quantized convolutions, pooling and
elementwise ops (core/fuse.c), and QDQ units rewritten into 8-bit ops (core/rules/qdq.c).

The fast path requantizes as onnxruntime does, so its outputs must equal onnxruntime's exactly;
the reference loops (taken where the weights are not a constant, or their zero point is not 0 for
int8 / 128 for uint8) round in double as ONNX's reference does and may differ by one step now and
then. A quantized network's outputs must not change with the optimization level (opaque chains
at `all`, the graph as written at `disable`). Which path ran shows in onnxruntime-exactness only
on CPUs with VNNI; elsewhere every case runs the reference and the exactness tests are skipped."""
import gc
import threading

import numpy as np
import pytest

import onyx

onnx = pytest.importorskip('onnx')
ort = pytest.importorskip('onnxruntime')

from onnx import TensorProto as TP  # noqa: E402
from onnx import helper as oh  # noqa: E402
from onnx import numpy_helper as nh  # noqa: E402

NP2TP = {np.uint8: TP.UINT8, np.int8: TP.INT8, np.float32: TP.FLOAT, np.int32: TP.INT32}


def vnni():
    flags = open('/proc/cpuinfo').read()
    return ' avx512_vnni' in flags or ' avx_vnni' in flags


needs_vnni = pytest.mark.skipif(not vnni(), reason='oneDNN int8 convolutions are exact only with '
                                'VNNI: without it every QLinearConv runs the reference loops')


def model_bytes(nodes, inputs, inits, outputs):
    g = oh.make_graph(nodes, 'q', inputs, outputs, inits)
    m = oh.make_model(g, opset_imports=[oh.make_opsetid('', 13), oh.make_opsetid('com.microsoft', 1)])
    m.ir_version = 8
    return m.SerializeToString()


def onyx_run(b, feed, level=None, verbose=False):
    so = onyx.SessionOptions()
    if level is not None:
        so.graph_optimization_level = level
    if verbose:
        so.log_severity_level = 0
    return onyx.InferenceSession(b, so).run(None, feed)


# what the verbose log says when the oneDNN path packs a QLinearConv's weights (kernel_shared)
PACKED = '(QLinearConv-10) made data from its constants'



def ort_run(b, feed):
    return ort.InferenceSession(b, providers=['CPUExecutionProvider']).run(None, feed)


def steps(a, b):
    return int(np.abs(a.astype(np.int32) - b.astype(np.int32)).max()) if a.size else 0


# ---------------------------------------------------------------- one QLinearConv

CONVS = [  # X shape, W shape, attributes
    ((1, 16, 12, 12), (32, 16, 3, 3), {'pads': [1, 1, 1, 1]}),
    ((2, 8, 9, 11), (16, 8, 3, 3), {'strides': [2, 2], 'pads': [1, 0, 1, 2]}),
    ((1, 3, 20, 20), (8, 3, 7, 7), {'strides': [2, 2], 'pads': [3, 3, 3, 3]}),
    ((1, 24, 10, 10), (24, 1, 3, 3), {'group': 24, 'pads': [1, 1, 1, 1]}),
    # depthwise (kernels_cpu/conv/qconv_dw.c for uint8 X): channels past a block of 64, taps
    # past a group of 4, strides, dilations, uneven pads, two images
    ((1, 40, 11, 13), (40, 1, 5, 5), {'group': 40, 'strides': [2, 2], 'pads': [2, 2, 2, 2]}),
    ((2, 144, 9, 9), (144, 1, 3, 3), {'group': 144, 'pads': [1, 0, 1, 2], 'dilations': [2, 2]}),
    ((1, 70, 6, 8), (70, 1, 3, 2), {'group': 70, 'strides': [1, 2]}),
    ((1, 16, 10, 10), (32, 4, 3, 3), {'group': 4, 'dilations': [2, 2], 'pads': [2, 2, 2, 2]}),
    ((1, 64, 7, 7), (48, 64, 1, 1), {}),
    # ConvNeXt's downsampling: a 2x2 kernel of 96 channels, stride 2, which oneDNN 3.2's spatial
    # AMX brgemm kernel sums wrong (kernels_cpu/conv/qconv_dnnl.c, zy_as_post_op)
    ((1, 96, 12, 12), (16, 96, 2, 2), {'strides': [2, 2]}),
    ((2, 12, 30), (20, 12, 5), {'pads': [2, 2]}),
    # no padding: X's zero point goes into the bias, while sums of X W stay below 2^24
    ((1, 32, 9, 9), (16, 32, 3, 3), {'strides': [2, 2]}),
]


def conv_case(xs, ws, xt, wt, yt, per_channel, bias, seed=3):
    r = np.random.default_rng(seed)
    m = ws[0]

    def q(shape, t):
        lo, hi = (-128, 127) if t == np.int8 else (0, 255)
        return r.integers(lo, hi + 1, size=shape).astype(t)
    w_zp = np.full(m if per_channel else (), 0 if wt == np.int8 else 128, wt)
    w_scale = np.array(r.uniform(0.001, 0.01, size=m if per_channel else ()), np.float32)
    k = int(np.prod(ws[1:]))
    params = {
        'xs': np.array(r.uniform(0.01, 0.05), np.float32),
        'xz': np.array(r.integers(-10, 10) if xt == np.int8 else r.integers(100, 150), xt),
        'w': q(ws, wt), 'ws': w_scale, 'wz': w_zp,
        # y's scale near the accumulators' spread, so that outputs use the whole range
        'ys': np.array(0.02 * 0.005 * 60 * np.sqrt(k) / 40, np.float32),
        'yz': np.array(r.integers(-5, 5) if yt == np.int8 else r.integers(120, 135), yt),
    }
    if bias:
        params['b'] = r.integers(-5000, 5000, size=m).astype(np.int32)
    return q(xs, xt), params


def conv_bytes(x, params, attrs, yt, const=True):
    names = ['x', 'xs', 'xz', 'w', 'ws', 'wz', 'ys', 'yz'] + (['b'] if 'b' in params else [])
    node = oh.make_node('QLinearConv', names, ['y'], **attrs)
    inits = [nh.from_array(a, n) for n, a in params.items() if const or n != 'w']
    inputs = [oh.make_tensor_value_info('x', NP2TP[x.dtype.type], x.shape)]
    if not const:
        inputs.append(oh.make_tensor_value_info('w', NP2TP[params['w'].dtype.type], params['w'].shape))
    return model_bytes([node], inputs, inits, [oh.make_tensor_value_info('y', NP2TP[yt], None)])


@needs_vnni
@pytest.mark.parametrize('xs,ws,attrs', CONVS)
@pytest.mark.parametrize('xt,wt,yt,per_channel,bias', [
    (np.uint8, np.int8, np.uint8, False, True), (np.uint8, np.int8, np.uint8, True, True),
    (np.int8, np.int8, np.int8, True, False), (np.int8, np.int8, np.int8, False, True),
    (np.uint8, np.uint8, np.uint8, True, True)])  # the type triples onnxruntime has kernels for
def test_fast_path_equals_onnxruntime(xs, ws, attrs, xt, wt, yt, per_channel, bias, capfd):
    x, params = conv_case(xs, ws, xt, wt, yt, per_channel, bias)
    b = conv_bytes(x, params, attrs, yt)
    got, = onyx_run(b, {'x': x}, verbose=True)
    assert PACKED in capfd.readouterr().err  # the oneDNN path ran
    ref, = ort_run(b, {'x': x})
    assert got.dtype == ref.dtype and got.shape == ref.shape
    assert len(np.unique(got)) > 8 and steps(got, ref) == 0
    # the reference loops (weights given at run time) agree within one step
    ref_loops, = onyx_run(conv_bytes(x, params, attrs, yt, const=False), {'x': x, 'w': params['w']},
                          verbose=True)
    assert PACKED not in capfd.readouterr().err
    assert steps(got, ref_loops) <= 1


@needs_vnni
@pytest.mark.parametrize('xs,ws', [((1, 96, 1, 1), (24, 96, 1, 1)), ((3, 40, 1, 1), (160, 40, 1, 1)),
                                   ((2, 33, 1), (7, 33, 1))])
@pytest.mark.parametrize('xt,wt,yt,per_channel,bias', [
    (np.uint8, np.int8, np.uint8, False, True), (np.uint8, np.int8, np.uint8, True, False),
    (np.int8, np.int8, np.int8, True, True), (np.uint8, np.uint8, np.uint8, True, True)])
def test_one_pixel_equals_onnxruntime(xs, ws, xt, wt, yt, per_channel, bias):
    """A convolution of one pixel (a squeeze-and-excitation block's): dot products computed
    without oneDNN, onnxruntime's bits."""
    x, params = conv_case(xs, ws, xt, wt, yt, per_channel, bias)
    w = params['w'].astype(np.int64) - (128 if wt == np.uint8 else 0)
    acc = (x.reshape(xs[0], -1).astype(np.int64) - int(params['xz'])) @ w.reshape(ws[0], -1).T
    acc = acc + params.get('b', 0)
    params['ys'] = np.array(float(params['xs']) * float(params['ws'].mean()) * acc.std() / 40,
                            np.float32)  # outputs over about 160 steps
    b = conv_bytes(x, params, {}, yt)
    got, = onyx_run(b, {'x': x})
    ref, = ort_run(b, {'x': x})
    assert got.dtype == ref.dtype and got.shape == ref.shape
    assert len(np.unique(ref)) > 4
    np.testing.assert_array_equal(got, ref)


def pointwise_and_depthwise_cases(count, seed):
    """Random pointwise and depthwise QLinearConvs: channel counts below, at and past oneDNN's
    blocks, images of 1 to 361 pixels, strides, padding or none, the three type triples
    onnxruntime has kernels for, per-tensor and per-channel weights, bias or none, Y's zero point
    0 or not."""
    r = np.random.default_rng(seed)
    triples = [(np.uint8, np.int8, np.uint8), (np.int8, np.int8, np.int8),
               (np.uint8, np.uint8, np.uint8)]
    for _ in range(count):
        c = int(r.choice([3, 8, 16, 24, 32, 40, 64, 96, 144]))
        if r.random() < 0.5:
            k, s = int(r.choice([3, 5])), int(r.choice([1, 2]))
            pad = k // 2 if r.random() < 0.8 else 0
            lo = max(1, k - 2 * pad)
            xs, ws = (1, c, int(r.integers(lo, 20)), int(r.integers(lo, 20))), (c, 1, k, k)
            attrs = {'group': c, 'strides': [s, s], 'pads': [pad] * 4}
        else:
            m = int(r.choice([8, 16, 24, 48, 64, 96, 160]))
            xs, ws, attrs = (1, c, int(r.integers(1, 20)), int(r.integers(1, 20))), (m, c, 1, 1), {}
        xt, wt, yt = triples[int(r.integers(len(triples)))]
        per_channel, bias = bool(r.integers(2)), bool(r.integers(2))
        x, params = conv_case(xs, ws, xt, wt, yt, per_channel, bias, seed=int(r.integers(1 << 30)))
        if r.random() < 0.3:
            params['yz'] = np.array(0, yt)
        yield xs, ws, attrs, x, params, yt


@needs_vnni
def test_pointwise_and_depthwise_random_shapes_equal_onnxruntime():
    """Pointwise and depthwise convolutions add a constant Y zero point after the rounding, a
    post-op that takes oneDNN's brgemm kernels (kernels_cpu/conv/qconv_dnnl.c, zy_as_post_op):
    onnxruntime's bits on random shapes, and no crash where a kernel could write past Y."""
    wrong = []
    for xs, ws, attrs, x, params, yt in pointwise_and_depthwise_cases(160, 28):
        b = conv_bytes(x, params, attrs, yt)
        got, = onyx_run(b, {'x': x})
        ref, = ort_run(b, {'x': x})
        if got.shape != ref.shape or steps(got, ref) != 0:
            wrong.append((xs, ws, attrs, x.dtype.name, int(params['yz'])))
    assert not wrong, wrong


@needs_vnni
@pytest.mark.parametrize('cin', [64, 600])
def test_unpadded_zero_point_equals_onnxruntime(cin, capfd):
    """A 1x1 convolution: X's zero point folded into the bias (64 channels), or left to oneDNN
    where sums of X W could pass 2^24 (600 channels); both onnxruntime's bits."""
    x, params = conv_case((1, cin, 6, 6), (16, cin, 1, 1), np.uint8, np.int8, np.uint8, True, True)
    acc = np.einsum('nchw,mc->nmhw', x.astype(np.int64) - int(params['xz']),
                    params['w'][:, :, 0, 0].astype(np.int64))
    params['ys'] = np.array(float(params['xs']) * float(params['ws'].mean()) * acc.std() / 40,
                            np.float32)  # outputs over about 160 steps
    b = conv_bytes(x, params, {}, np.uint8)
    got, = onyx_run(b, {'x': x}, verbose=True)
    assert PACKED in capfd.readouterr().err
    ref, = ort_run(b, {'x': x})
    assert len(np.unique(ref)) > 50
    np.testing.assert_array_equal(got, ref)


@needs_vnni
@pytest.mark.parametrize('ws,attrs', [((24, 16, 3, 3), {'pads': [1, 1, 1, 1]}), ((24, 16, 1, 1), {}),
                                      ((16, 1, 3, 3), {'pads': [1, 1, 1, 1], 'group': 16})])
def test_scales_given_per_run_equal_onnxruntime(ws, attrs, capfd):
    """Scales, zero points and bias as graph inputs (weights constant): the oneDNN path computes
    its requantization terms per run, so one session follows scales and zero points that change
    between runs (Y's as oneDNN's runtime zero point, where a constant one would be a post-op)."""
    x, params = conv_case((1, 16, 8, 8), ws, np.uint8, np.int8, np.uint8, True, True)
    runtime = ['xs', 'xz', 'ws', 'ys', 'yz', 'b']
    node = oh.make_node('QLinearConv', ['x', 'xs', 'xz', 'w', 'ws', 'wz', 'ys', 'yz', 'b'], ['y'],
                        **attrs)
    inputs = [oh.make_tensor_value_info('x', TP.UINT8, x.shape)] + [
        oh.make_tensor_value_info(n, NP2TP[params[n].dtype.type], params[n].shape) for n in runtime]
    b = model_bytes([node], inputs, [nh.from_array(params[n], n) for n in ('w', 'wz')],
                    [oh.make_tensor_value_info('y', TP.UINT8, None)])
    so = onyx.SessionOptions()
    so.log_severity_level = 0
    sess = onyx.InferenceSession(b, so)
    assert PACKED in capfd.readouterr().err
    ref = ort.InferenceSession(b, providers=['CPUExecutionProvider'])
    for ys_scale, yz_shift in ((1.0, 0), (0.5, 9), (2.0, -11)):
        feed = {'x': x, **{n: params[n] for n in runtime}}
        feed['ys'] = np.array(params['ys'] * ys_scale, np.float32)
        feed['yz'] = np.array(int(params['yz']) + yz_shift, np.uint8)
        got, = sess.run(None, feed)
        want, = ref.run(None, feed)
        assert len(np.unique(want)) > 8
        np.testing.assert_array_equal(got, want)


@needs_vnni
def test_concurrent_runs_each_get_their_own(capfd):
    """One session run from four threads at once with different inputs: each run context binds
    its own oneDNN memory objects, so every result is its input's."""
    x, params = conv_case((1, 16, 10, 10), (32, 16, 3, 3), np.uint8, np.int8, np.uint8, True, True)
    b = conv_bytes(x, params, {'pads': [1, 1, 1, 1]}, np.uint8)
    r = np.random.default_rng(21)
    xs = [r.integers(0, 256, size=x.shape).astype(np.uint8) for _ in range(8)]
    ref = ort.InferenceSession(b, providers=['CPUExecutionProvider'])
    wants = [ref.run(None, {'x': v})[0] for v in xs]
    sess = onyx.InferenceSession(b)
    bad = []

    def worker(t):
        for i in range(40):
            j = (t + i) % len(xs)
            if not np.array_equal(sess.run(None, {'x': xs[j]})[0], wants[j]):
                bad.append(j)
    threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad


def test_bias_past_float_takes_the_reference(capfd):
    """A constant bias float cannot hold (2^24 and more) keeps the convolution off oneDNN, whose
    float bias would round it: the reference loops run, within a step of onnxruntime."""
    x, params = conv_case((1, 8, 6, 6), (8, 8, 3, 3), np.uint8, np.int8, np.uint8, False, True)
    params['b'][3] = (1 << 24) + 3
    b = conv_bytes(x, params, {'pads': [1, 1, 1, 1]}, np.uint8)
    got, = onyx_run(b, {'x': x}, verbose=True)
    assert PACKED not in capfd.readouterr().err
    assert steps(got, ort_run(b, {'x': x})[0]) <= 1


def test_other_weight_zero_points_take_the_reference(capfd):
    """A weight zero point oneDNN cannot take (int8 W, zero point 3) still gives the right answer."""
    x, params = conv_case((1, 8, 6, 6), (8, 8, 3, 3), np.uint8, np.int8, np.uint8, False, True)
    params['wz'] = np.array(3, np.int8)
    b = conv_bytes(x, params, {'pads': [1, 1, 1, 1]}, np.uint8)
    got, = onyx_run(b, {'x': x}, verbose=True)
    assert PACKED not in capfd.readouterr().err
    ref, = ort_run(b, {'x': x})
    assert steps(got, ref) <= 1


# ---------------------------------------------------------------- 8-bit chains kept channels last

def chain_bytes(xt, per_channel, seed=7):
    """QuantizeLinear -> QLinearConv -> MaxPool -> [QLinearConv -> QLinearConv] + residual
    (QLinearAdd) -> QLinearConv (stride 2) -> QLinearGlobalAveragePool -> DequantizeLinear: a
    quantized ResNet block as onnxruntime's QOperator quantizer writes it."""
    r = np.random.default_rng(seed)
    tp = NP2TP[xt]
    inits, nodes = [], []

    def const(name, a):
        inits.append(nh.from_array(a, name))
        return name

    def zp(name):
        return const(name, np.array(0 if xt == np.int8 else 128, xt))

    def qconv(x, x_sc, x_zp, name, cin, cout, k, stride=1):
        ws = (cout, cin, k, k)
        w_scale = np.array(r.uniform(0.5, 1.5, size=cout if per_channel else ()) / np.sqrt(cin * k * k) / 40)
        nodes.append(oh.make_node('QLinearConv', [
            x, x_sc, x_zp, const(name + '_w', r.integers(-127, 128, size=ws).astype(np.int8)),
            const(name + '_ws', w_scale.astype(np.float32)),
            const(name + '_wz', np.zeros(cout if per_channel else (), np.int8)),
            const(name + '_ys', np.array(0.05, np.float32)), zp(name + '_yz'),
            const(name + '_b', r.integers(-2000, 2000, size=cout).astype(np.int32))],
            [name], pads=[k // 2] * 4, strides=[stride, stride]))
        return name

    s = const('s', np.array(0.05, np.float32))
    nodes.append(oh.make_node('QuantizeLinear', ['x', s, zp('xz')], ['xq']))
    c1 = qconv('xq', s, 'xz', 'c1', 3, 16, 3)
    nodes.append(oh.make_node('MaxPool', [c1], ['p'], kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4))
    c2 = qconv('p', s, 'c1_yz', 'c2', 16, 16, 3)
    c3 = qconv(c2, s, 'c2_yz', 'c3', 16, 16, 3)
    nodes.append(oh.make_node('QLinearAdd', [c3, s, 'c3_yz', 'p', s, 'c1_yz', s, zp('az')], ['a'],
                              domain='com.microsoft'))
    c4 = qconv('a', s, 'az', 'c4', 16, 32, 3, stride=2)
    nodes.append(oh.make_node('QLinearGlobalAveragePool', [c4, s, 'c4_yz', s, zp('gz')], ['g'],
                              domain='com.microsoft'))
    nodes.append(oh.make_node('DequantizeLinear', ['g', s, 'gz'], ['y']))
    return model_bytes(nodes, [oh.make_tensor_value_info('x', TP.FLOAT, (2, 3, 24, 24))], inits,
                       [oh.make_tensor_value_info('y', TP.FLOAT, None)])


@pytest.mark.parametrize('xt', [np.uint8, np.int8])
@pytest.mark.parametrize('per_channel', [False, True])
def test_chain_same_at_every_level(xt, per_channel, capfd):
    b = chain_bytes(xt, per_channel)
    x = np.random.default_rng(1).uniform(-3, 3, (2, 3, 24, 24)).astype(np.float32)
    fused, = onyx_run(b, {'x': x}, verbose=True)
    if vnni():  # every 8-bit tensor from the quantized input to c4's (xq, c1, p, c2, c3, a, c4)
        assert 'fusion: 7 tensors kept opaque' in capfd.readouterr().err
    plain, = onyx_run(b, {'x': x}, onyx.GraphOptimizationLevel.ORT_DISABLE_ALL, verbose=True)
    assert 'tensors kept opaque' not in capfd.readouterr().err
    assert np.abs(fused).max() > 0
    np.testing.assert_array_equal(fused, plain)
    if vnni():
        ref, = ort_run(b, {'x': x})
        np.testing.assert_array_equal(fused, ref)


class QOpGraph:
    """A QOperator graph as onnxruntime's quantizer writes one: every tensor at scale 0.05 and
    zero point 128, random int8 weights (zero point 0) and int32 biases."""

    def __init__(self, seed):
        self.r = np.random.default_rng(seed)
        self.inits, self.nodes = [], []
        self.s = self.const('s', np.array(0.05, np.float32))
        self.z = self.const('z', np.array(128, np.uint8))

    def const(self, name, a):
        self.inits.append(nh.from_array(a, name))
        return name

    def qconv(self, x, name, cin, cout, k, group=1):
        r, s, z, ws = self.r, self.s, self.z, (cout, cin // group, k, k)
        self.nodes.append(oh.make_node('QLinearConv', [
            x, s, z, self.const(name + '_w', r.integers(-127, 128, size=ws).astype(np.int8)),
            self.const(name + '_ws', np.array(1 / np.sqrt(ws[1] * k * k) / 40, np.float32)),
            self.const(name + '_wz', np.array(0, np.int8)), s, z,
            self.const(name + '_b', r.integers(-2000, 2000, size=cout).astype(np.int32))],
            [name], pads=[k // 2] * 4, group=group))
        return name

    def qmatmul(self, x, name, k, n):
        s, z = self.s, self.z
        self.nodes.append(oh.make_node('QLinearMatMul', [
            x, s, z, self.const(name + '_w', self.r.integers(-127, 128, size=(k, n)).astype(np.int8)),
            self.const(name + '_ws', np.array(1 / np.sqrt(k) / 40, np.float32)),
            self.const(name + '_wz', np.array(0, np.int8)), s, z], [name]))
        return name

    def ms(self, op, inputs, output):
        self.nodes.append(oh.make_node(op, inputs, [output], domain='com.microsoft'))
        return output

    def bytes(self, x_shape):
        return model_bytes(self.nodes, [oh.make_tensor_value_info('x', TP.FLOAT, x_shape)],
                           self.inits, [oh.make_tensor_value_info('y', TP.FLOAT, None)])


def convnext_block_bytes(seed=6):
    """ConvNeXt's block as onnxruntime's QOperator quantizer writes it: a depthwise QLinearConv,
    a Transpose putting channels last, the channel MLP (two QLinearMatMul), a Transpose putting
    them first again, the residual QLinearAdd; between convolutions."""
    q = QOpGraph(seed)
    s, z = q.s, q.z
    q.nodes.append(oh.make_node('QuantizeLinear', ['x', s, z], ['xq']))
    c1 = q.qconv('xq', 'c1', 3, 16, 3)
    q.nodes.append(oh.make_node('Transpose', [q.qconv(c1, 'dw', 16, 16, 7, group=16)], ['t1'],
                                perm=[0, 2, 3, 1]))
    q.nodes.append(oh.make_node('Transpose', [q.qmatmul(q.qmatmul('t1', 'm1', 16, 64), 'm2', 64, 16)],
                                ['t2'], perm=[0, 3, 1, 2]))
    q.ms('QLinearAdd', ['t2', s, z, c1, s, z, s, z], 'a')
    q.nodes.append(oh.make_node('DequantizeLinear', [q.qconv('a', 'c2', 16, 8, 1), s, z], ['y']))
    return q.bytes((1, 3, 12, 12))


def test_channels_transposes_move_nothing(capfd):
    """The Transposes around ConvNeXt's channel MLP read and write 8-bit tensors kept channels
    last as the plain tensors of the same bytes: xq, c1, dw, t2 and a stay opaque, same bits."""
    b = convnext_block_bytes()
    x = np.random.default_rng(3).uniform(-3, 3, (1, 3, 12, 12)).astype(np.float32)
    fused, = onyx_run(b, {'x': x}, verbose=True)
    if vnni():
        assert 'fusion: 5 tensors kept opaque' in capfd.readouterr().err
    plain, = onyx_run(b, {'x': x}, onyx.GraphOptimizationLevel.ORT_DISABLE_ALL)
    assert len(np.unique(fused)) > 20
    np.testing.assert_array_equal(fused, plain)
    if vnni():
        np.testing.assert_array_equal(fused, ort_run(b, {'x': x})[0])


def se_bytes(seed=5):
    """EfficientNet's block as onnxruntime's QOperator quantizer writes it: QLinearConv -> SiLU
    (QLinearSigmoid, QLinearMul) -> squeeze and excitation (QLinearGlobalAveragePool, QLinearConv
    of one pixel, QLinearSigmoid, QLinearMul by the per-channel factor) -> QLinearConv ->
    QLinearGlobalAveragePool -> DequantizeLinear."""
    q = QOpGraph(seed)
    s, z = q.s, q.z

    def silu(x, name):
        q.ms('QLinearSigmoid', [x, s, z, s, z], name + '_sig')
        return q.ms('QLinearMul', [x, s, z, name + '_sig', s, z, s, z], name)
    q.nodes.append(oh.make_node('QuantizeLinear', ['x', s, z], ['xq']))
    a = silu(q.qconv('xq', 'c1', 3, 16, 3), 'a')
    q.ms('QLinearGlobalAveragePool', [a, s, z, s, z], 'g')
    q.ms('QLinearSigmoid', [q.qconv('g', 'fc', 16, 16, 1), s, z, s, z], 'f')
    q.ms('QLinearMul', [a, s, z, 'f', s, z, s, z], 'e')
    q.ms('QLinearGlobalAveragePool', [q.qconv('e', 'c2', 16, 24, 3), s, z, s, z], 'h')
    q.nodes.append(oh.make_node('DequantizeLinear', ['h', s, z], ['y']))
    return q.bytes((1, 3, 20, 20))


def test_squeeze_excitation_stays_opaque(capfd):
    """The SiLU and the per-channel scale of a squeeze-and-excitation block take 8-bit tensors
    channels last as they are: no reorder between the block's convolutions, same bits."""
    b = se_bytes()
    x = np.random.default_rng(2).uniform(-3, 3, (1, 3, 20, 20)).astype(np.float32)
    fused, = onyx_run(b, {'x': x}, verbose=True)
    if vnni():  # xq, c1, a, g, fc, f, e, c2: all but the plain x (the SiLU is one table of c1,
        # core/rules/qop_table.c, its sigmoid no tensor of its own)
        assert 'fusion: 8 tensors kept opaque' in capfd.readouterr().err
    plain, = onyx_run(b, {'x': x}, onyx.GraphOptimizationLevel.ORT_DISABLE_ALL)
    assert np.abs(fused).max() > 0
    np.testing.assert_array_equal(fused, plain)
    if vnni():
        np.testing.assert_array_equal(fused, ort_run(b, {'x': x})[0])



def fire_bytes(seed=9):
    """SqueezeNet's fire module as onnxruntime's QOperator quantizer writes it: a 1x1 squeeze
    QLinearConv, a 1x1 and a 3x3 expand QLinearConv, their QLinearConcat along channels (the 3x3
    one read at another scale, so that it is requantized through a table), a QLinearConv."""
    q = QOpGraph(seed)
    s, z = q.s, q.z
    q.nodes.append(oh.make_node('QuantizeLinear', ['x', s, z], ['xq']))
    sq = q.qconv(q.qconv('xq', 'c1', 3, 24, 3), 'sq', 24, 8, 1)
    e1, e3 = q.qconv(sq, 'e1', 8, 16, 1), q.qconv(sq, 'e3', 8, 16, 3)
    s3 = q.const('s3', np.array(0.07, np.float32))
    q.nodes.append(oh.make_node('QLinearConcat', [s, z, e1, s, z, e3, s3, z], ['cat'], axis=1,
                                domain='com.microsoft'))
    q.nodes.append(oh.make_node('DequantizeLinear', [q.qconv('cat', 'c2', 32, 8, 3), s, z], ['y']))
    return q.bytes((1, 3, 11, 13))


def test_fire_module_concat_stays_opaque(capfd):
    """A QLinearConcat along channels joins 8-bit tensors kept channels last pixel by pixel: no
    reorder around a fire module's concatenation, same bits."""
    b = fire_bytes()
    x = np.random.default_rng(5).uniform(-3, 3, (1, 3, 11, 13)).astype(np.float32)
    fused, = onyx_run(b, {'x': x}, verbose=True)
    if vnni():  # xq, c1, sq, e1, e3, cat: all but the plain x and c2's (read by DequantizeLinear)
        assert 'fusion: 6 tensors kept opaque' in capfd.readouterr().err
    plain, = onyx_run(b, {'x': x}, onyx.GraphOptimizationLevel.ORT_DISABLE_ALL)
    assert len(np.unique(fused)) > 20
    np.testing.assert_array_equal(fused, plain)
    if vnni():
        np.testing.assert_array_equal(fused, ort_run(b, {'x': x})[0])


@pytest.mark.parametrize('shape', [(1, 37, 9, 11), (2, 48, 16, 16), (1, 16, 5, 5), (1, 130, 7, 7)])
def test_quantize_into_channels_last_any_channels(shape, capfd):
    """QuantizeLinear of a float tensor of any channel count (DenseNet's pre-activation BatchNorm
    and ReLU before each quantized conv) writes the conv's channels-last layout directly: whole
    16x16 blocks and the edges of channels and pixels, batches of one and two; same bits."""
    q = QOpGraph(10)
    q.nodes.append(oh.make_node('QuantizeLinear', ['x', q.s, q.z], ['xq']))
    q.nodes.append(oh.make_node('DequantizeLinear', [q.qconv('xq', 'c1', shape[1], 8, 3), q.s, q.z],
                                ['y']))
    b = q.bytes(shape)
    x = np.random.default_rng(6).uniform(-6, 6, shape).astype(np.float32)
    fused, = onyx_run(b, {'x': x}, verbose=True)
    if vnni():  # xq
        assert 'fusion: 1 tensors kept opaque' in capfd.readouterr().err
    plain, = onyx_run(b, {'x': x}, onyx.GraphOptimizationLevel.ORT_DISABLE_ALL)
    assert len(np.unique(fused)) > 20
    np.testing.assert_array_equal(fused, plain)
    if vnni():
        np.testing.assert_array_equal(fused, ort_run(b, {'x': x})[0])

def projection_bytes(rows, cols, cin, cout):
    """QuantizeLinear -> QLinearConv 3x3 (3 -> cin) -> QLinearConv 1x1 (cin -> cout) ->
    QLinearConv 3x3 (cout -> 8): MobileNetV2's projection, channels last in and out, batch 1."""
    q = QOpGraph(8)
    q.nodes.append(oh.make_node('QuantizeLinear', ['x', q.s, q.z], ['xq']))
    c1 = q.qconv('xq', 'c1', 3, cin, 3)
    r = q.r
    q.nodes.append(oh.make_node('QLinearConv', [
        c1, q.s, q.z, q.const('p_w', r.integers(-127, 128, size=(cout, cin, 1, 1)).astype(np.int8)),
        q.const('p_ws', np.array(r.uniform(0.5, 1.5, cout) / np.sqrt(cin) / 40, np.float32)),
        q.const('p_wz', np.zeros(cout, np.int8)), q.s, q.z,
        q.const('p_b', r.integers(-2000, 2000, size=cout).astype(np.int32))], ['p']))
    q.nodes.append(oh.make_node('DequantizeLinear', [q.qconv('p', 'c2', cout, 8, 3), q.s, q.z], ['y']))
    return q.bytes((1, 3, rows, cols))


@needs_vnni
@pytest.mark.parametrize('rows,cols', [(9, 5), (6, 8), (3, 9), (1, 45), (7, 6), (7, 7)])
def test_pointwise_of_few_pixels_writes_inside_y(rows, cols):
    """oneDNN 3.2's AMX pointwise kernel writes past Y where an image has 27-48 output pixels
    (kernels_cpu/conv/qconv_dnnl.c, overflows): 720 bytes past a 9x5 projection's, which broke
    the heap and crashed the process when the session was freed. Those take another kernel:
    onnxruntime's bits, and the session frees cleanly."""
    b = projection_bytes(rows, cols, 80, 48)
    x = np.random.default_rng(3).uniform(-3, 3, (1, 3, rows, cols)).astype(np.float32)
    so = onyx.SessionOptions()
    so.intra_op_num_threads = 1
    sess = onyx.InferenceSession(b, so)
    got = [sess.run(None, {'x': x})[0] for _ in range(3)]
    del sess
    gc.collect()
    for y in got:
        np.testing.assert_array_equal(y, ort_run(b, {'x': x})[0])


# ---------------------------------------------------------------- QDQ units in 8 bits

quant = pytest.importorskip('onnxruntime.quantization')


def float_block():
    """Conv -> MaxPool -> Conv -> Conv + residual Add -> Conv (stride 2, SiLU) ->
    GlobalAveragePool -> Flatten -> Gemm, float, random weights, Relu after the other convs: what
    quantize_static turns into QDQ units."""
    r = np.random.default_rng(2)
    inits, nodes = [], []

    def w(name, shape, s):
        inits.append(nh.from_array((r.standard_normal(shape) * s).astype(np.float32), name))
        return name

    def conv(x, name, cin, cout, stride=1, silu=False):
        nodes.append(oh.make_node('Conv', [x, w(name + '_w', (cout, cin, 3, 3), 1 / np.sqrt(9 * cin)),
                                           w(name + '_b', (cout,), 0.1)], [name + '_c'],
                                  pads=[1, 1, 1, 1], strides=[stride, stride]))
        if silu:
            nodes.append(oh.make_node('Sigmoid', [name + '_c'], [name + '_s']))
            nodes.append(oh.make_node('Mul', [name + '_c', name + '_s'], [name]))
        else:
            nodes.append(oh.make_node('Relu', [name + '_c'], [name]))
        return name
    conv('x', 'c1', 3, 16)
    nodes.append(oh.make_node('MaxPool', ['c1'], ['p'], kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4))
    conv(conv('p', 'c2', 16, 16), 'c3', 16, 16)
    nodes.append(oh.make_node('Add', ['c3', 'p'], ['a']))
    conv('a', 'c4', 16, 32, stride=2, silu=True)
    nodes.append(oh.make_node('GlobalAveragePool', ['c4'], ['g']))
    nodes.append(oh.make_node('Flatten', ['g'], ['f']))
    nodes.append(oh.make_node('Gemm', ['f', w('fc_w', (10, 32), 0.2), w('fc_b', (10,), 0.1)], ['y'],
                              transB=1))
    g = oh.make_graph(nodes, 'block', [oh.make_tensor_value_info('x', TP.FLOAT, (1, 3, 32, 32))],
                      [oh.make_tensor_value_info('y', TP.FLOAT, (1, 10))], inits)
    m = oh.make_model(g, opset_imports=[oh.make_opsetid('', 17)])
    m.ir_version = 8
    return m


class Calibration(quant.CalibrationDataReader):
    def __init__(self):
        r = np.random.default_rng(4)
        self.data = iter([{'x': r.uniform(-1, 1, (1, 3, 32, 32)).astype(np.float32)} for _ in range(4)])

    def get_next(self):
        return next(self.data, None)


@pytest.fixture(scope='module')
def qdq_models(tmp_path_factory):
    d = tmp_path_factory.mktemp('qdq')
    src = str(d / 'block.onnx')
    onnx.save(float_block(), src)
    out = {}
    for act in ('u8', 's8'):
        for pc in (False, True):
            path = str(d / f'block_{act}_{pc}.onnx')
            quant.quantize_static(src, path, Calibration(), quant_format=quant.QuantFormat.QDQ,
                                  activation_type=quant.QuantType.QUInt8 if act == 'u8'
                                  else quant.QuantType.QInt8,
                                  weight_type=quant.QuantType.QInt8, per_channel=pc)
            out[act, pc] = path
    return out


def profiled_ops(path, feed, level):
    """The outputs and the op type of every step that ran (the trace written beside the model)."""
    import json
    import os
    so = onyx.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(os.path.dirname(path), 'profile')
    so.graph_optimization_level = level
    s = onyx.InferenceSession(path, so)
    y = s.run(None, feed)
    events = json.load(open(s.end_profiling()))
    return y, [e['args']['op_name'] for e in events if e.get('cat') == 'Node']


def qdq_yardstick(path, x):
    """onnxruntime's outputs with its QDQ fusions and without, and how far apart 8-bit units and
    the graph as written may be: one rounding where the units round twice, so within
    onnxruntime's own spread between the two, and at least a step of the largest output scale."""
    ref_all, = ort.InferenceSession(path, providers=['CPUExecutionProvider']).run(None, {'x': x})
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    ref_plain, = ort.InferenceSession(path, so, providers=['CPUExecutionProvider']).run(None, {'x': x})
    model = onnx.load(path)
    inits = {i.name: nh.to_array(i) for i in model.graph.initializer}
    out_scale = max(float(inits[n.input[1]].max()) for n in model.graph.node
                    if n.op_type == 'QuantizeLinear')
    return ref_all, ref_plain, max(float(np.abs(ref_all - ref_plain).max()), out_scale) * 1.001


@pytest.mark.parametrize('act', ['u8', 's8'])
@pytest.mark.parametrize('per_channel', [False, True])
def test_qdq_units_run_in_8_bits(qdq_models, act, per_channel):
    path = qdq_models[act, per_channel]
    x = np.random.default_rng(9).uniform(-1, 1, (1, 3, 32, 32)).astype(np.float32)
    (fused,), ops = profiled_ops(path, {'x': x}, onyx.GraphOptimizationLevel.ORT_ENABLE_ALL)
    (plain,), plain_ops = profiled_ops(path, {'x': x}, onyx.GraphOptimizationLevel.ORT_DISABLE_ALL)
    # every Conv unit, the residual Add, MaxPool, the pooling and the classifier (float result)
    # in 8 bits
    assert ops.count('QLinearConv') == 4 and 'Conv' not in ops
    assert ops.count('QLinearAdd') == 1 and ops.count('QLinearGlobalAveragePool') == 1
    # SiLU (Q(Mul(DQ(c), DQ(Q(Sigmoid(DQ(c))))))) is a function of c's 256 values: one table
    assert ops.count('LookupTable') == 1 and 'QLinearSigmoid' not in ops and 'Sigmoid' not in ops
    assert ops.count('QGemm') == 1 and 'Gemm' not in ops
    assert plain_ops.count('Conv') == 4 and 'QLinearConv' not in plain_ops
    ref_all, ref_plain, tol = qdq_yardstick(path, x)
    assert float(np.abs(fused - plain).max()) <= tol
    np.testing.assert_allclose(plain, ref_plain, rtol=1e-5, atol=1e-5)
    if vnni():  # onnxruntime's QDQ fusions compute what onyx's do: on x86 it fuses units with
        # int8 activations only when asked (session.qdqisint8allowed, its default on ARM)
        so = ort.SessionOptions()
        so.add_session_config_entry('session.qdqisint8allowed', '1')
        ref_int8, = ort.InferenceSession(path, so, providers=['CPUExecutionProvider']).run(None, {'x': x})
        np.testing.assert_array_equal(fused, ref_int8)
        if act == 'u8':
            np.testing.assert_array_equal(fused, ref_all)


def test_qdq_bias_of_another_scale_stays_float(qdq_models, tmp_path):
    """A bias whose scale is not x_scale * w_scale cannot join the int32 sums: the unit stays."""
    model = onnx.load(qdq_models['u8', False])
    inits = {i.name: i for i in model.graph.initializer}
    conv = next(n for n in model.graph.node if n.op_type == 'Conv')
    bias_dq = next(n for n in model.graph.node if n.output[0] == conv.input[2])
    scale = inits[bias_dq.input[1]]
    scale.CopyFrom(nh.from_array(nh.to_array(scale) * np.float32(1.5), scale.name))
    path = str(tmp_path / 'bias.onnx')
    onnx.save(model, path)
    x = np.random.default_rng(9).uniform(-1, 1, (1, 3, 32, 32)).astype(np.float32)
    (fused,), ops = profiled_ops(path, {'x': x}, onyx.GraphOptimizationLevel.ORT_ENABLE_ALL)
    (plain,), _ = profiled_ops(path, {'x': x}, onyx.GraphOptimizationLevel.ORT_DISABLE_ALL)
    assert ops.count('Conv') == 1 and ops.count('QLinearConv') == 3
    assert float(np.abs(fused - plain).max()) <= qdq_yardstick(path, x)[2]


def float_mlp():
    """MatMul -> Relu -> MatMul over [2, 5, 16] rows: a transformer's projections."""
    r = np.random.default_rng(6)
    inits = [nh.from_array((r.standard_normal((16, 24)) / 4).astype(np.float32), 'w1'),
             nh.from_array((r.standard_normal((24, 8)) / 5).astype(np.float32), 'w2')]
    nodes = [oh.make_node('MatMul', ['x', 'w1'], ['h']), oh.make_node('Relu', ['h'], ['r']),
             oh.make_node('MatMul', ['r', 'w2'], ['y'])]
    g = oh.make_graph(nodes, 'mlp', [oh.make_tensor_value_info('x', TP.FLOAT, (2, 5, 16))],
                      [oh.make_tensor_value_info('y', TP.FLOAT, (2, 5, 8))], inits)
    m = oh.make_model(g, opset_imports=[oh.make_opsetid('', 17)])
    m.ir_version = 8
    return m


class RowCalibration(quant.CalibrationDataReader):
    def __init__(self):
        r = np.random.default_rng(8)
        self.data = iter([{'x': r.standard_normal((2, 5, 16)).astype(np.float32)} for _ in range(4)])

    def get_next(self):
        return next(self.data, None)


@pytest.mark.parametrize('per_channel', [False, True])
def test_qdq_matmul_runs_in_8_bits(tmp_path, per_channel):
    """Q(MatMul(DQ a, DQ W)) -> QLinearMatMul, its batches one product of all rows, its
    per-column scales with one zero point through the int8 GEMM."""
    src, path = str(tmp_path / 'mlp.onnx'), str(tmp_path / 'mlp_q.onnx')
    onnx.save(float_mlp(), src)
    quant.quantize_static(src, path, RowCalibration(), quant_format=quant.QuantFormat.QDQ,
                          activation_type=quant.QuantType.QUInt8, weight_type=quant.QuantType.QInt8,
                          per_channel=per_channel)
    x = np.random.default_rng(3).standard_normal((2, 5, 16)).astype(np.float32)
    (fused,), ops = profiled_ops(path, {'x': x}, onyx.GraphOptimizationLevel.ORT_ENABLE_ALL)
    (plain,), plain_ops = profiled_ops(path, {'x': x}, onyx.GraphOptimizationLevel.ORT_DISABLE_ALL)
    assert ops.count('QLinearMatMul') == 2 and 'MatMul' not in ops
    assert plain_ops.count('MatMul') == 2
    assert float(np.abs(fused - plain).max()) <= qdq_yardstick(path, x)[2]


# onnxruntime's QLinearMatMul kernels: (a, b, y) types
QMM_TYPES = [(np.uint8, np.int8, np.uint8), (np.uint8, np.uint8, np.uint8),
             (np.int8, np.int8, np.int8)]


@pytest.mark.parametrize('a_shape', [(5, 96), (2, 5, 96), (2, 3, 5, 96), ('batch', 5, 96)])
@pytest.mark.parametrize('types', QMM_TYPES, ids=['u8s8', 'u8u8', 's8s8'])
@pytest.mark.parametrize('b_zero', ['zero', 'one', 'columns'])
def test_qlinear_matmul_equals_onnxruntime(a_shape, types, b_zero):
    """QLinearMatMul bit for bit as onnxruntime's: on the int8 matmul with b packed at prepare
    (a's shape known: its batches folded into rows), on the int8 GEMM or the loop (a's batch
    symbolic), with one zero point for b, or one per column (per-column scales then)."""
    at, bt, yt = types
    r = np.random.default_rng(12)
    n, k = 24, a_shape[-1]
    ia, ib = np.iinfo(at), np.iinfo(bt)
    cols = b_zero == 'columns'
    bz = (r.integers(ib.min // 2, ib.max // 2, size=n) if cols else
          np.full((), 0 if b_zero == 'zero' else (ib.min + ib.max + 1) // 2 + 3))
    params = {
        'a_s': np.array(0.02, np.float32), 'a_z': np.array((ia.min + ia.max + 1) // 2 + 5, at),
        'b': r.integers(ib.min, ib.max + 1, size=(k, n)).astype(bt),
        'b_s': np.array(r.uniform(0.0005, 0.002, size=n if cols else ()), np.float32),
        'b_z': bz.astype(bt),
        'y_s': np.array(0.05, np.float32), 'y_z': np.array(np.iinfo(yt).min + 100, yt)}
    node = oh.make_node('QLinearMatMul', ['a', 'a_s', 'a_z', 'b', 'b_s', 'b_z', 'y_s', 'y_z'], ['y'])
    elem = {np.uint8: TP.UINT8, np.int8: TP.INT8}
    b = model_bytes([node], [oh.make_tensor_value_info('a', elem[at], a_shape)],
                    [nh.from_array(v, k) for k, v in params.items()],
                    [oh.make_tensor_value_info('y', elem[yt], None)])
    shape = tuple(2 if d == 'batch' else d for d in a_shape)
    a = r.integers(ia.min, ia.max + 1, size=shape).astype(at)
    got, = onyx_run(b, {'a': a})
    ref, = ort_run(b, {'a': a})
    assert got.shape == ref.shape and len(np.unique(ref)) > 20
    np.testing.assert_array_equal(got, ref)


def contracted_params(t, seed):
    """Scales and zero points for which onnxruntime's constant part, fma(ra, zA, rb * zB), is not
    ra * zA + rb * zB in float: where the two orders of rounding show."""
    f = np.float32
    r = np.random.default_rng(seed)
    lo, hi = (-128, 127) if t == np.int8 else (0, 255)
    while True:
        s = {k: f(r.uniform(0.01, 0.2)) for k in ('as', 'bs', 'cs')}
        z = {k: int(r.integers(lo, hi + 1)) for k in ('az', 'bz', 'cz')}
        ra, rb = f(s['as'] / s['cs']), f(s['bs'] / s['cs'])
        fused = f(np.float64(ra) * z['az'] + np.float64(f(rb * f(z['bz']))))
        if fused != f(f(ra * f(z['az'])) + f(rb * f(z['bz']))):
            return {**{k: np.array(v, np.float32) for k, v in s.items()},
                    **{k: np.array(v, t) for k, v in z.items()}}


@pytest.mark.parametrize('t', [np.uint8, np.int8])
@pytest.mark.parametrize('seed', [0, 1, 2])
def test_qlinear_add_equals_onnxruntime(t, seed):
    """QLinearAdd rounds as onnxruntime's AVX2 kernel does, its constant part fused as its build
    fuses it: equal bits over every pair of 8-bit values."""
    lo, hi = (-128, 127) if t == np.int8 else (0, 255)
    params = contracted_params(t, seed)
    node = oh.make_node('QLinearAdd', ['a', 'as', 'az', 'b', 'bs', 'bz', 'cs', 'cz'], ['y'],
                        domain='com.microsoft')
    tp = NP2TP[t]
    shape = (256, 256)
    b = model_bytes([node], [oh.make_tensor_value_info('a', tp, shape), oh.make_tensor_value_info('b', tp, shape)],
                    [nh.from_array(v, k) for k, v in params.items()], [oh.make_tensor_value_info('y', tp, None)])
    values = np.arange(lo, hi + 1).astype(t)
    feed = {'a': np.repeat(values[:, None], 256, 1), 'b': np.repeat(values[None, :], 256, 0)}
    got, = onyx_run(b, feed)
    ref, = ort_run(b, feed)
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize('t', [np.uint8, np.int8])
@pytest.mark.parametrize('shape,cs', [((3, 37), 0.05), ((1, 16, 7, 9), 0.05), ((5, 29), 1e-4)])
@pytest.mark.parametrize('op', ['QLinearAdd', 'QLinearMul'])
def test_qlinear_binary_vector_tails_equal_onnxruntime(op, t, shape, cs):
    """The AVX-512 Add and Mul of two tensors of one shape (16 elements a step) and the loop that
    ends them: sizes past whole steps, and a tiny output scale that saturates most outputs."""
    lo, hi = (-128, 127) if t == np.int8 else (0, 255)
    r = np.random.default_rng(7)
    params = {'as': np.array(0.07, np.float32), 'az': np.array(r.integers(lo, hi + 1), t),
              'bs': np.array(0.03, np.float32), 'bz': np.array(r.integers(lo, hi + 1), t),
              'cs': np.array(cs, np.float32), 'cz': np.array(r.integers(lo, hi + 1), t)}
    node = oh.make_node(op, ['a', 'as', 'az', 'b', 'bs', 'bz', 'cs', 'cz'], ['y'],
                        domain='com.microsoft')
    tp = NP2TP[t]
    b = model_bytes([node], [oh.make_tensor_value_info('a', tp, shape), oh.make_tensor_value_info('b', tp, shape)],
                    [nh.from_array(v, k) for k, v in params.items()], [oh.make_tensor_value_info('y', tp, None)])
    feed = {k: r.integers(lo, hi + 1, size=shape).astype(t) for k in 'ab'}
    got, = onyx_run(b, feed)
    ref, = ort_run(b, feed)
    # a spread of values, or with the tiny scale both ends of the range
    assert len(np.unique(ref)) > 16 if cs > 1e-3 else {lo, hi} <= set(ref.ravel().tolist())
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize('t', [np.uint8, np.int8])
@pytest.mark.parametrize('n', [1, 63, 64, 1000, 200003])
def test_qlinear_sigmoid_table_lookup(t, n):
    """QLinearSigmoid's table applied 64 bytes at a time where the CPU can (AVX-512 VBMI), bytes
    one by one around them: every length and value as onnxruntime."""
    r = np.random.default_rng(n)
    lo, hi = (-128, 127) if t == np.int8 else (0, 255)
    params = {'xs': np.array(0.05, np.float32), 'xz': np.array(3 if t == np.int8 else 131, t),
              'ys': np.array(1 / 256, np.float32), 'yz': np.array(-128 if t == np.int8 else 0, t)}
    node = oh.make_node('QLinearSigmoid', ['x', 'xs', 'xz', 'ys', 'yz'], ['y'], domain='com.microsoft')
    b = model_bytes([node], [oh.make_tensor_value_info('x', NP2TP[t], (n,))],
                    [nh.from_array(v, k) for k, v in params.items()],
                    [oh.make_tensor_value_info('y', NP2TP[t], None)])
    x = r.integers(lo, hi + 1, size=n).astype(t)
    got, = onyx_run(b, {'x': x})
    np.testing.assert_array_equal(got, ort_run(b, {'x': x})[0])


@pytest.mark.parametrize('tb', [0, 1])
@pytest.mark.parametrize('bt', [np.int8, np.uint8])
def test_qgemm_packed_b(tb, bt, capfd):
    """QGemm with a constant B and A's shape known runs on the int8 matmul primitive, B packed
    once (as stored or transposed): the same bits as onnxruntime (its sums are exact too)."""
    r = np.random.default_rng(4)
    m, k, n = 3, 70, 40
    lo, hi = (-128, 127) if bt == np.int8 else (0, 255)
    params = {'as': np.array(0.02, np.float32), 'az': np.array(120, np.uint8),
              'b': r.integers(lo, hi + 1, size=(n, k) if tb else (k, n)).astype(bt),
              'bs': np.array(r.uniform(0.001, 0.01, size=n), np.float32),
              'bz': np.array(r.integers(lo, hi + 1, size=n), bt),
              'c': r.integers(-3000, 3000, size=n).astype(np.int32),
              'ys': np.array(0.05, np.float32), 'yz': np.array(128, np.uint8)}
    node = oh.make_node('QGemm', ['a', 'as', 'az', 'b', 'bs', 'bz', 'c', 'ys', 'yz'], ['y'],
                        domain='com.microsoft', transB=tb)
    b = model_bytes([node], [oh.make_tensor_value_info('a', TP.UINT8, (m, k))],
                    [nh.from_array(v, key) for key, v in params.items()],
                    [oh.make_tensor_value_info('y', TP.UINT8, None)])
    a = r.integers(0, 256, size=(m, k)).astype(np.uint8)
    got, = onyx_run(b, {'a': a}, verbose=True)
    assert '(com.microsoft.QGemm-1) made data from its constants' in capfd.readouterr().err
    ref, = ort_run(b, {'a': a})
    assert len(np.unique(ref)) > 8
    np.testing.assert_array_equal(got, ref)


def float_conv_transpose_mm():
    """Conv -> Relu -> Transpose to channels last -> Reshape to rows -> MatMul: the data movement a
    QDQ unit passes through on 8 bits."""
    r = np.random.default_rng(7)
    inits = [nh.from_array((r.standard_normal((8, 3, 3, 3)) / 5).astype(np.float32), 'w'),
             nh.from_array((r.standard_normal((8, 6)) / 3).astype(np.float32), 'm'),
             nh.from_array(np.array([-1, 8], np.int64), 'rows')]
    nodes = [oh.make_node('Conv', ['x', 'w'], ['c'], pads=[1, 1, 1, 1]), oh.make_node('Relu', ['c'], ['r']),
             oh.make_node('Transpose', ['r'], ['t'], perm=[0, 2, 3, 1]),
             oh.make_node('Reshape', ['t', 'rows'], ['f']), oh.make_node('MatMul', ['f', 'm'], ['y'])]
    g = oh.make_graph(nodes, 'ctm', [oh.make_tensor_value_info('x', TP.FLOAT, (1, 3, 32, 32))],
                      [oh.make_tensor_value_info('y', TP.FLOAT, (1024, 6))], inits)
    m = oh.make_model(g, opset_imports=[oh.make_opsetid('', 17)])
    m.ir_version = 8
    return m


def test_qdq_data_movement_on_8_bits(tmp_path):
    """Q(Transpose(DQ x)) and Q(Reshape(DQ x)) of one scale and zero point move the 8-bit x."""
    src, path = str(tmp_path / 'ctm.onnx'), str(tmp_path / 'ctm_q.onnx')
    onnx.save(float_conv_transpose_mm(), src)
    quant.quantize_static(src, path, Calibration(), quant_format=quant.QuantFormat.QDQ,
                          activation_type=quant.QuantType.QUInt8, weight_type=quant.QuantType.QInt8)
    x = np.random.default_rng(3).uniform(-1, 1, (1, 3, 32, 32)).astype(np.float32)
    (fused,), ops = profiled_ops(path, {'x': x}, onyx.GraphOptimizationLevel.ORT_ENABLE_ALL)
    (plain,), _ = profiled_ops(path, {'x': x}, onyx.GraphOptimizationLevel.ORT_DISABLE_ALL)
    assert {'QLinearConv', 'QLinearMatMul', 'Transpose', 'Reshape'} <= set(ops)
    assert ops.count('DequantizeLinear') <= 1 and ops.count('QuantizeLinear') == 1
    assert float(np.abs(fused - plain).max()) <= qdq_yardstick(path, x)[2]


def test_qdq_gemm_units(tmp_path):
    """Gemm units become QGemm: one with an 8-bit result (a Q reads it), one with a float result
    (the graph's output), each with its int32 bias."""
    r = np.random.default_rng(11)
    inits = [nh.from_array((r.standard_normal((24, 16)) / 4).astype(np.float32), 'w1'),
             nh.from_array((r.standard_normal(24) / 4).astype(np.float32), 'b1'),
             nh.from_array((r.standard_normal((5, 24)) / 5).astype(np.float32), 'w2'),
             nh.from_array((r.standard_normal(5) / 5).astype(np.float32), 'b2')]
    nodes = [oh.make_node('Gemm', ['x', 'w1', 'b1'], ['h'], transB=1), oh.make_node('Relu', ['h'], ['r']),
             oh.make_node('Gemm', ['r', 'w2', 'b2'], ['y'], transB=1)]
    g = oh.make_graph(nodes, 'mlp', [oh.make_tensor_value_info('x', TP.FLOAT, (4, 16))],
                      [oh.make_tensor_value_info('y', TP.FLOAT, (4, 5))], inits)
    m = oh.make_model(g, opset_imports=[oh.make_opsetid('', 17)])
    m.ir_version = 8
    src, path = str(tmp_path / 'g.onnx'), str(tmp_path / 'g_q.onnx')
    onnx.save(m, src)

    class Rows(quant.CalibrationDataReader):
        def __init__(self):
            self.data = iter([{'x': r.standard_normal((4, 16)).astype(np.float32)} for _ in range(4)])

        def get_next(self):
            return next(self.data, None)
    quant.quantize_static(src, path, Rows(), quant_format=quant.QuantFormat.QDQ,
                          activation_type=quant.QuantType.QUInt8, weight_type=quant.QuantType.QInt8)
    x = r.standard_normal((4, 16)).astype(np.float32)
    (fused,), ops = profiled_ops(path, {'x': x}, onyx.GraphOptimizationLevel.ORT_ENABLE_ALL)
    (plain,), _ = profiled_ops(path, {'x': x}, onyx.GraphOptimizationLevel.ORT_DISABLE_ALL)
    assert ops.count('QGemm') == 2 and 'Gemm' not in ops
    assert float(np.abs(fused - plain).max()) <= qdq_yardstick(path, x)[2]
