"""com.microsoft quantized ops (QLinearAdd/Mul/Sigmoid/LeakyRelu/Softmax/Concat/Where, the QLinear
pools, QGemm, the NHWC QLinearConv, MatMulIntegerToFloat, DynamicQuantizeMatMul) against
onnxruntime: a small CNN and a small transformer block quantized by onnxruntime.quantization
(quantize_static in QOperator and QDQ formats, quantize_dynamic), the models onnxruntime's own
optimizer makes of them, single nodes over the attributes those models leave out, and malformed
nodes that must fail cleanly.

Yardsticks: quantized integer tensors within one quantization step of onnxruntime; float outputs
within onnxruntime's spread between its optimized and unoptimized runs, at least 1e-5 of the
output's magnitude, and one step of the output's scale when it is a dequantized tensor."""
import collections

import numpy as np
import pytest

import onyx

onnx = pytest.importorskip('onnx')
ort = pytest.importorskip('onnxruntime')
quant = pytest.importorskip('onnxruntime.quantization')

from onnx import TensorProto as TP  # noqa: E402
from onnx import helper as oh  # noqa: E402
from onnx import numpy_helper as nh  # noqa: E402

MS = 'com.microsoft'
NP2TP = {np.uint8: TP.UINT8, np.int8: TP.INT8, np.float32: TP.FLOAT, np.int32: TP.INT32,
         np.bool_: TP.BOOL}
CNN_SHAPE, TF_SHAPE = (2, 3, 16, 16), (2, 8, 32)
CNN_CONTRIB = {'QLinearAdd', 'QLinearMul', 'QLinearSigmoid', 'QLinearLeakyRelu', 'QLinearAveragePool',
               'QLinearGlobalAveragePool', 'QLinearConcat', 'QGemm'}
TF_CONTRIB = {'QLinearAdd', 'QLinearMul', 'QLinearSoftmax'}
# the fusions of onnxruntime's optimizer that make other families' contrib ops (Gelu, FusedConv, ...)
NON_QUANT_FUSIONS = ['MatMulScaleFusion', 'GeluFusion', 'GeluFusionL1', 'GeluFusionL2', 'QuickGeluFusion',
                     'BiasGeluFusion', 'FastGeluFusion', 'ConvActivationFusion', 'LayerNormFusion',
                     'SimplifiedLayerNormFusion', 'SkipLayerNormFusion', 'AttentionFusion',
                     'MatMulAddFusion', 'NchwcTransformer']


# ---------------------------------------------------------------- the models and their variants

def _model(nodes, name, shape_in, shape_out, inits):
    g = oh.make_graph(nodes, name, [oh.make_tensor_value_info('x', TP.FLOAT, shape_in)],
                      [oh.make_tensor_value_info('y', TP.FLOAT, shape_out)], inits)
    m = oh.make_model(g, opset_imports=[oh.make_opsetid('', 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def cnn_model():
    r = np.random.default_rng(0)
    inits = []

    def w(name, shape, s=0.3):
        inits.append(nh.from_array((r.standard_normal(shape) * s).astype(np.float32), name))
        return name
    nodes = [
        oh.make_node('Conv', ['x', w('w1', (8, 3, 3, 3)), w('b1', (8,), 0.1)], ['c1'], pads=[1, 1, 1, 1]),
        oh.make_node('Relu', ['c1'], ['r1']),
        oh.make_node('Conv', ['r1', w('w2', (8, 8, 3, 3), 0.2), w('b2', (8,), 0.1)], ['c2'],
                     pads=[1, 1, 1, 1]),
        oh.make_node('Add', ['c2', 'r1'], ['a1']),
        oh.make_node('Sigmoid', ['a1'], ['s1']),
        oh.make_node('Mul', ['a1', 's1'], ['m1']),
        oh.make_node('LeakyRelu', ['m1'], ['l1'], alpha=0.1),
        oh.make_node('AveragePool', ['l1'], ['p1'], kernel_shape=[2, 2], strides=[2, 2]),
        oh.make_node('Conv', ['p1', w('w3', (8, 8, 1, 1)), w('b3', (8,), 0.1)], ['c3']),
        oh.make_node('Concat', ['p1', 'c3'], ['cat'], axis=1),
        oh.make_node('GlobalAveragePool', ['cat'], ['g']),
        oh.make_node('Flatten', ['g'], ['f']),
        oh.make_node('Gemm', ['f', w('wf', (10, 16)), w('bf', (10,), 0.1)], ['y'], transB=1),
    ]
    return _model(nodes, 'cnn', list(CNN_SHAPE), [2, 10], inits)


def transformer_model():
    """Pre-norm block: LayerNorm, Q/K/V projections, softmax attention over 4 heads, output
    projection, residual, LayerNorm, Erf-GELU MLP, residual."""
    r = np.random.default_rng(1)
    d, heads, ff = 32, 4, 64
    inits, nodes = [], []

    def t(name, a):
        inits.append(nh.from_array(np.asarray(a), name))
        return name

    def w(name, shape, s=0.2):
        return t(name, (r.standard_normal(shape) * s).astype(np.float32))

    def linear(x, name, i, o):
        nodes.append(oh.make_node('MatMul', [x, w(name + '_w', (i, o))], [name + '_mm']))
        nodes.append(oh.make_node('Add', [name + '_mm', w(name + '_b', (o,), 0.05)], [name]))
        return name
    nodes.append(oh.make_node('LayerNormalization', ['x', w('ln1_g', (d,), 0.1), w('ln1_b', (d,), 0.1)],
                              ['ln1'], axis=-1))
    t('heads', np.array([0, 0, heads, d // heads], np.int64))
    for n in ('q', 'k', 'v'):
        linear('ln1', n, d, d)
        nodes.append(oh.make_node('Reshape', [n, 'heads'], [n + '_r']))
    nodes.append(oh.make_node('Transpose', ['q_r'], ['q_t'], perm=[0, 2, 1, 3]))
    nodes.append(oh.make_node('Transpose', ['k_r'], ['k_t'], perm=[0, 2, 3, 1]))
    nodes.append(oh.make_node('Transpose', ['v_r'], ['v_t'], perm=[0, 2, 1, 3]))
    nodes.append(oh.make_node('MatMul', ['q_t', 'k_t'], ['qk']))
    nodes.append(oh.make_node('Mul', ['qk', t('scale', np.array(1 / np.sqrt(d // heads), np.float32))],
                              ['qks']))
    nodes.append(oh.make_node('Softmax', ['qks'], ['probs'], axis=-1))
    nodes.append(oh.make_node('MatMul', ['probs', 'v_t'], ['att']))
    nodes.append(oh.make_node('Transpose', ['att'], ['att_t'], perm=[0, 2, 1, 3]))
    nodes.append(oh.make_node('Reshape', ['att_t', t('merge', np.array([0, 0, d], np.int64))], ['att_r']))
    linear('att_r', 'o', d, d)
    nodes.append(oh.make_node('Add', ['x', 'o'], ['res1']))
    nodes.append(oh.make_node('LayerNormalization', ['res1', w('ln2_g', (d,), 0.1), w('ln2_b', (d,), 0.1)],
                              ['ln2'], axis=-1))
    linear('ln2', 'f1', d, ff)
    nodes.append(oh.make_node('Div', ['f1', t('sqrt2', np.array(np.sqrt(2), np.float32))], ['g_d']))
    nodes.append(oh.make_node('Erf', ['g_d'], ['g_e']))
    nodes.append(oh.make_node('Add', ['g_e', t('one', np.array(1, np.float32))], ['g_a']))
    nodes.append(oh.make_node('Mul', ['f1', 'g_a'], ['g_m']))
    nodes.append(oh.make_node('Mul', ['g_m', t('half', np.array(0.5, np.float32))], ['gelu']))
    linear('gelu', 'f2', ff, d)
    nodes.append(oh.make_node('Add', ['res1', 'f2'], ['y']))
    return _model(nodes, 'transformer', list(TF_SHAPE), list(TF_SHAPE), inits)


class _Reader(quant.CalibrationDataReader):
    def __init__(self, shape, n=6, seed=5):
        r = np.random.default_rng(seed)
        self.data = iter([{'x': r.standard_normal(shape).astype(np.float32)} for _ in range(n)])

    def get_next(self):
        return next(self.data, None)


QT = quant.QuantType
STATIC = [  # (format, activations, weights, per_channel)
    ('QOperator', QT.QUInt8, QT.QUInt8, False),
    ('QOperator', QT.QUInt8, QT.QInt8, True),
    ('QOperator', QT.QInt8, QT.QInt8, False),
    ('QOperator', QT.QInt8, QT.QInt8, True),
    ('QDQ', QT.QUInt8, QT.QInt8, False),
    ('QDQ', QT.QInt8, QT.QInt8, True),
]
DYNAMIC = [(QT.QInt8, False), (QT.QUInt8, True)]


def _static_id(v):
    return f'{v[0]}-{v[1].name}-{v[2].name}' + ('-per_channel' if v[3] else '')


@pytest.fixture(scope='module')
def made(tmp_path_factory):
    """The float models saved once, and a cache of their quantized variants by key."""
    d = tmp_path_factory.mktemp('contrib_quant')
    paths = {}
    for name, fn in (('cnn', cnn_model), ('tf', transformer_model)):
        paths[name] = str(d / f'{name}.onnx')
        onnx.save(fn(), paths[name])
    return d, paths, {}


def quantized(made, name, kind, variant):
    d, paths, cache = made
    key = (name, kind, variant)
    if key in cache:
        return cache[key]
    out = str(d / ('_'.join([name, kind] + [str(getattr(v, 'name', v)) for v in variant]) + '.onnx'))
    shape = CNN_SHAPE if name == 'cnn' else TF_SHAPE
    if kind == 'static':
        fmt, act, wt, pc = variant
        quant.quantize_static(paths[name], out, _Reader(shape), quant_format=getattr(quant.QuantFormat, fmt),
                              activation_type=act, weight_type=wt, per_channel=pc)
    else:
        wt, pc = variant
        quant.quantize_dynamic(paths[name], out, weight_type=wt, per_channel=pc)
    cache[key] = out
    return out


def ort_optimized(path, level='extended'):
    """The model onnxruntime's optimizer makes (extended level: its QDQ and dynamic-quantization
    fusions into QGemm, QLinear*, DynamicQuantizeMatMul, MatMulIntegerToFloat; all: its NHWC
    layout too, with channels_last ops), leaving out the fusions into other families' ops."""
    out = path.replace('.onnx', f'_ort{level}.onnx')
    so = ort.SessionOptions()
    so.log_severity_level = 3
    so.graph_optimization_level = (ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED if level == 'extended'
                                   else ort.GraphOptimizationLevel.ORT_ENABLE_ALL)
    so.optimized_model_filepath = out
    ort.InferenceSession(path, so, providers=['CPUExecutionProvider'], disabled_optimizers=NON_QUANT_FUSIONS)
    return out


# ---------------------------------------------------------------- comparisons

def ort_session(model, level):
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    so.log_severity_level = 3
    return ort.InferenceSession(model, so, providers=['CPUExecutionProvider'])


def contrib_ops(model):
    return collections.Counter(n.op_type for n in model.graph.node if n.domain == MS)


def output_step(model):
    """The scale of the DequantizeLinear that makes the graph output, or 0."""
    inits = {i.name: i for i in model.graph.initializer}
    out = model.graph.output[0].name
    for n in model.graph.node:
        if out in n.output and n.op_type == 'DequantizeLinear' and n.input[1] in inits:
            return float(nh.to_array(inits[n.input[1]]).max())
    return 0.0


def with_quantized_outputs(model):
    """The model with each contrib op's 8-bit output also a graph output (its type is that of the
    op's output zero point, an initializer in what the quantizer writes)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    inits = {i.name: i for i in m.graph.initializer}
    zp_input = {'QLinearConcat': 1, 'QGemm': 8, 'QLinearWhere': 8, 'QLinearAdd': 7, 'QLinearMul': 7,
                'QLinearConv': 7}
    names = []
    for n in m.graph.node:
        if n.domain != MS:
            continue
        i = zp_input.get(n.op_type, 4)
        if i < len(n.input) and n.input[i] in inits and inits[n.input[i]].data_type in (TP.UINT8, TP.INT8):
            m.graph.output.append(oh.make_tensor_value_info(n.output[0], inits[n.input[i]].data_type, None))
            names.append(n.output[0])
    return m, names


def check_model(path, shape, seed=11):
    model = onnx.load(path)
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    ref_opt = ort_session(path, ort.GraphOptimizationLevel.ORT_ENABLE_ALL).run(None, {'x': x})[0]
    ref = ort_session(path, ort.GraphOptimizationLevel.ORT_DISABLE_ALL).run(None, {'x': x})[0]
    got = onyx.InferenceSession(path).run(None, {'x': x})[0]
    spread = float(np.abs(ref_opt - ref).max())
    tol = max(spread, 1e-5 * float(np.abs(ref).max()), output_step(model) * 1.001)
    assert got.shape == ref.shape
    err = float(np.abs(got - ref).max())
    assert err <= tol, f'max |onyx - onnxruntime| {err} > {tol} (spread {spread})'
    # every contrib op's quantized output, within one step
    m, names = with_quantized_outputs(model)
    if names:
        b = m.SerializeToString()
        refs = ort_session(b, ort.GraphOptimizationLevel.ORT_DISABLE_ALL).run(names, {'x': x})
        gots = onyx.InferenceSession(b).run(names, {'x': x})
        for name, r, g in zip(names, refs, gots):
            assert r.dtype == g.dtype and r.shape == g.shape, name
            steps = int(np.abs(r.astype(np.int32) - g.astype(np.int32)).max()) if r.size else 0
            assert steps <= 1, f'{name}: {steps} quantization steps from onnxruntime'
    return model


@pytest.mark.parametrize('variant', STATIC, ids=_static_id)
@pytest.mark.parametrize('name', ['cnn', 'tf'])
def test_quantize_static(made, name, variant):
    path = quantized(made, name, 'static', variant)
    model = check_model(path, CNN_SHAPE if name == 'cnn' else TF_SHAPE)
    if variant[0] == 'QOperator':
        # the test is about these ops: the quantizer must really have emitted them
        assert (CNN_CONTRIB if name == 'cnn' else TF_CONTRIB) <= set(contrib_ops(model))
    else:
        assert not contrib_ops(model)


@pytest.mark.parametrize('variant', DYNAMIC, ids=lambda v: v[0].name + ('-per_channel' if v[1] else ''))
@pytest.mark.parametrize('name', ['cnn', 'tf'])
def test_quantize_dynamic(made, name, variant):
    check_model(quantized(made, name, 'dynamic', variant), CNN_SHAPE if name == 'cnn' else TF_SHAPE)


@pytest.mark.parametrize('name,kind,variant,level,expect', [
    ('cnn', 'static', STATIC[4], 'extended', CNN_CONTRIB),
    ('cnn', 'static', STATIC[4], 'all', CNN_CONTRIB | {'QLinearConv'}),
    ('cnn', 'static', STATIC[1], 'all', CNN_CONTRIB | {'QLinearConv'}),
    ('tf', 'static', STATIC[5], 'extended', {'QLinearSoftmax'}),
    ('cnn', 'dynamic', DYNAMIC[0], 'extended', {'DynamicQuantizeMatMul'}),
    ('tf', 'dynamic', DYNAMIC[0], 'extended', {'DynamicQuantizeMatMul', 'MatMulIntegerToFloat'}),
    ('tf', 'dynamic', DYNAMIC[1], 'extended', {'DynamicQuantizeMatMul', 'MatMulIntegerToFloat'}),
], ids=['cnn-qdq', 'cnn-qdq-nhwc', 'cnn-qoperator-nhwc', 'tf-qdq', 'cnn-dynamic', 'tf-dynamic-s8',
        'tf-dynamic-u8-per_channel'])
def test_onnxruntime_optimized(made, name, kind, variant, level, expect):
    """What onnxruntime's optimizer saves from the quantized models: QDQ groups fused into the
    QLinear ops and QGemm, dynamic quantization into DynamicQuantizeMatMul / MatMulIntegerToFloat,
    and at the top level an NHWC graph of channels_last ops around com.microsoft.QLinearConv."""
    path = ort_optimized(quantized(made, name, kind, variant), level)
    model = check_model(path, CNN_SHAPE if name == 'cnn' else TF_SHAPE)
    assert expect <= set(contrib_ops(model))
    if level == 'all':
        nhwc = {n.op_type for n in model.graph.node
                if any(a.name == 'channels_last' and a.i == 1 for a in n.attribute)}
        assert {'QLinearConv', 'QLinearAveragePool', 'QLinearGlobalAveragePool'} <= nhwc


# ---------------------------------------------------------------- single nodes

def run_node(node, inputs, out_type, const=()):
    """onnxruntime's and onyx's outputs of one node; inputs [(name, array or None)], those named
    in const as initializers."""
    ins, inits = [], []
    for name, a in inputs:
        if a is None:
            continue
        if name in const:
            inits.append(nh.from_array(a, name))
        else:
            ins.append(oh.make_tensor_value_info(name, NP2TP[a.dtype.type], a.shape))
    g = oh.make_graph([node], 't', ins, [oh.make_tensor_value_info('y', out_type, None)], inits)
    m = oh.make_model(g, opset_imports=[oh.make_opsetid('', 17), oh.make_opsetid(MS, 1)])
    m.ir_version = 8
    b = m.SerializeToString()
    feed = {n: a for n, a in inputs if a is not None and n not in const}
    ref = ort.InferenceSession(b, providers=['CPUExecutionProvider']).run(None, feed)[0]
    got = onyx.InferenceSession(b).run(None, feed)[0]
    assert got.dtype == ref.dtype and got.shape == ref.shape
    return ref, got


def assert_steps(ref, got):
    if ref.dtype == np.float32:
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5 * max(1.0, float(np.abs(ref).max())))
    else:
        assert int(np.abs(ref.astype(np.int32) - got.astype(np.int32)).max()) <= 1


class Gen:
    def __init__(self, seed):
        self.r = np.random.default_rng(seed)

    def q(self, shape, t):
        lo, hi = (-128, 127) if t == np.int8 else (0, 255)
        return self.r.integers(lo, hi + 1, size=shape).astype(t)

    def scale(self, lo=0.002, hi=0.1):
        return np.array(self.r.uniform(lo, hi), np.float32)

    def zp(self, t):
        return np.array(self.r.integers(-20, 20) if t == np.int8 else self.r.integers(100, 150), t)


PARAMS = {'as', 'az', 'bs', 'bz', 'cs', 'cz', 'xs', 'xz', 'ys', 'yz', 'zs', 'zz', 's0', 'z0', 's1', 'z1'}
TYPES = [np.uint8, np.int8]


@pytest.mark.parametrize('t', TYPES)
@pytest.mark.parametrize('op', ['QLinearAdd', 'QLinearMul'])
@pytest.mark.parametrize('sa,sb', [((2, 3, 4, 5), (2, 3, 4, 5)), ((2, 3, 4, 5), (5,)), ((2, 3, 4, 5), ()),
                                   ((), (3, 40)), ((2, 3, 1, 1), (2, 3, 4, 5)), ((4, 1), (1, 7))])
def test_binary(op, t, sa, sb):
    g = Gen(1)
    ins = [('a', g.q(sa, t)), ('as', g.scale()), ('az', g.zp(t)), ('b', g.q(sb, t)), ('bs', g.scale()),
           ('bz', g.zp(t)), ('cs', g.scale(0.01, 0.2) * (0.1 if op == 'QLinearMul' else 1)), ('cz', g.zp(t))]
    assert_steps(*run_node(oh.make_node(op, [n for n, _ in ins], ['y'], domain=MS), ins, NP2TP[t], PARAMS))


@pytest.mark.parametrize('t', TYPES)
@pytest.mark.parametrize('op,attrs', [('QLinearSigmoid', {}), ('QLinearLeakyRelu', {'alpha': 0.2}),
                                      ('QLinearLeakyRelu', {})])
def test_activation(op, attrs, t):
    g = Gen(2)
    ins = [('x', g.q((3, 70), t)), ('xs', g.scale()), ('xz', g.zp(t)), ('ys', g.scale(0.001, 0.05)), ('yz', g.zp(t))]
    assert_steps(*run_node(oh.make_node(op, [n for n, _ in ins], ['y'], domain=MS, **attrs), ins, NP2TP[t],
                           PARAMS))


@pytest.mark.parametrize('t', TYPES)
@pytest.mark.parametrize('opset,axis,shape', [(13, -1, (2, 3, 7)), (13, 1, (2, 5, 3)), (11, 1, (2, 3, 4)),
                                              (12, -2, (2, 3, 4)), (17, -1, (4, 64)),
                                              (13, -1, (3, 300)), (13, 1, (2, 300, 3))])  # rows of chunks
def test_softmax(t, opset, axis, shape):
    g = Gen(3)
    x = g.q(shape, t)
    x.reshape(-1)[::5] = 127 if t == np.int8 else 255  # some rows dominated by one element
    ins = [('x', x), ('xs', g.scale(0.01, 0.3)), ('xz', g.zp(t)), ('ys', np.array(1 / 256, np.float32)),
           ('yz', np.array(-128 if t == np.int8 else 0, t))]
    node = oh.make_node('QLinearSoftmax', [n for n, _ in ins], ['y'], domain=MS, axis=axis, opset=opset)
    assert_steps(*run_node(node, ins, NP2TP[t], PARAMS))



@pytest.mark.parametrize('t', TYPES)
@pytest.mark.parametrize('x_scale', [0.02, 0.5, 1.5])  # 1.5: exps down in float's subnormal range
@pytest.mark.parametrize('shape', [(2, 3, 7), (4, 3, 49), (3, 64), (2, 300)])
def test_softmax_exact(t, x_scale, shape):
    """onnxruntime's bytes exactly, rows shorter than, equal to and not a multiple of the kernel's
    vector blocks, at input scales whose exps and quotients reach subnormal floats."""
    g = Gen(31)
    ins = [('x', g.q(shape, t)), ('xs', np.array(x_scale, np.float32)), ('xz', g.zp(t)),
           ('ys', np.array(1 / 255.5, np.float32)), ('yz', np.array(-128 if t == np.int8 else 0, t))]
    node = oh.make_node('QLinearSoftmax', [n for n, _ in ins], ['y'], domain=MS, axis=-1, opset=13)
    ref, got = run_node(node, ins, NP2TP[t], PARAMS)
    np.testing.assert_array_equal(got, ref)

POOLS = [
    ({'kernel_shape': [3, 3], 'strides': [2, 2], 'pads': [1, 1, 1, 1]}, (2, 4, 9, 8)),
    ({'kernel_shape': [3, 2], 'pads': [1, 0, 1, 1], 'count_include_pad': 1}, (1, 3, 7, 6)),
    ({'kernel_shape': [3, 3], 'strides': [2, 2], 'ceil_mode': 1}, (1, 3, 8, 8)),
    ({'kernel_shape': [3, 3], 'auto_pad': 'SAME_UPPER'}, (1, 3, 6, 7)),
    ({'kernel_shape': [3], 'strides': [2], 'pads': [1, 1]}, (2, 3, 9)),
    ({'kernel_shape': [2, 2, 2]}, (1, 2, 4, 4, 4)),
    ({'kernel_shape': [6, 7]}, (2, 3, 6, 7)),  # the whole image: onnxruntime's global path
]


@pytest.mark.parametrize('t', TYPES)
@pytest.mark.parametrize('channels_last', [0, 1])
@pytest.mark.parametrize('attrs,shape', POOLS, ids=lambda v: str(v).replace(' ', ''))
def test_average_pool(t, channels_last, attrs, shape):
    g = Gen(4)
    if channels_last:
        shape = (shape[0],) + shape[2:] + (shape[1],)
    ins = [('x', g.q(shape, t)), ('xs', g.scale()), ('xz', g.zp(t)), ('ys', g.scale()), ('yz', g.zp(t))]
    node = oh.make_node('QLinearAveragePool', [n for n, _ in ins], ['y'], domain=MS,
                        channels_last=channels_last, **attrs)
    assert_steps(*run_node(node, ins, NP2TP[t], PARAMS))


@pytest.mark.parametrize('t', TYPES)
@pytest.mark.parametrize('attrs,shape', POOLS[:5] + [
    ({'kernel_shape': [3, 3], 'pads': [1, 1, 1, 1]}, (1, 48, 35, 35)),  # Inception's branch pools
    ({'kernel_shape': [5, 5], 'strides': [3, 3], 'pads': [2, 2, 2, 2]}, (1, 8, 23, 19))],
    ids=lambda v: str(v).replace(' ', ''))
def test_average_pool_nchw_equals_onnxruntime_bits(t, attrs, shape):
    """NCHW pools of one or two spatial dims sum plane rows tap by tap (qlinear_pool.c's
    avg_planes): the same float sums in the same order as onnxruntime, so the same bytes."""
    g = Gen(8)
    ins = [('x', g.q(shape, t)), ('xs', g.scale()), ('xz', g.zp(t)), ('ys', g.scale()), ('yz', g.zp(t))]
    node = oh.make_node('QLinearAveragePool', [n for n, _ in ins], ['y'], domain=MS, **attrs)
    ref, got = run_node(node, ins, NP2TP[t], PARAMS)
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize('t', TYPES)
@pytest.mark.parametrize('channels_last', [0, 1])
@pytest.mark.parametrize('shape', [(2, 5, 6, 7), (1, 300, 3, 3), (2, 4, 9)])
def test_global_average_pool(t, channels_last, shape):
    g = Gen(5)
    ins = [('x', g.q(shape, t)), ('xs', g.scale()), ('xz', g.zp(t)), ('ys', g.scale()), ('yz', g.zp(t))]
    node = oh.make_node('QLinearGlobalAveragePool', [n for n, _ in ins], ['y'], domain=MS,
                        channels_last=channels_last)
    assert_steps(*run_node(node, ins, NP2TP[t], PARAMS))


@pytest.mark.parametrize('t', TYPES)
@pytest.mark.parametrize('axis,same', [(1, False), (1, True), (-1, False), (0, True)])
def test_concat(t, axis, same):
    g = Gen(6)
    ys, yz = g.scale(), g.zp(t)
    s1, s2 = [list((2, 3, 4)), list((2, 3, 4))]
    s2[axis] = 5
    ins = [('ys', ys), ('yz', yz), ('x0', g.q(s1, t)), ('s0', ys if same else g.scale()),
           ('z0', yz if same else g.zp(t)), ('x1', g.q(s2, t)), ('s1', g.scale()), ('z1', g.zp(t))]
    node = oh.make_node('QLinearConcat', [n for n, _ in ins], ['y'], domain=MS, axis=axis)
    assert_steps(*run_node(node, ins, NP2TP[t], PARAMS))


@pytest.mark.parametrize('same', [False, True])
def test_where(same):
    # uint8 only: onnxruntime 1.30's int8 QLinearWhere indexes its tables with negative numbers
    g, t = Gen(7), np.uint8
    zs, zz = g.scale(), g.zp(t)
    ins = [('c', g.r.integers(0, 2, size=(3, 4)).astype(np.bool_)), ('x', g.q((3, 4), t)),
           ('xs', zs if same else g.scale()), ('xz', zz if same else g.zp(t)), ('y2', g.q((4,), t)),
           ('s1', g.scale()), ('z1', g.zp(t)), ('zs', zs), ('zz', zz)]
    node = oh.make_node('QLinearWhere', [n for n, _ in ins], ['y'], domain=MS)
    assert_steps(*run_node(node, ins, NP2TP[t], PARAMS))


QGEMMS = [  # transA, transB, C's shape (None: no C), quantized output, per-column b
    (0, 0, (7,), True, False), (1, 0, None, True, True), (0, 1, (5, 7), True, False),
    (0, 1, (1, 7), False, True), (1, 1, (), False, False), (0, 0, (5, 1), True, True),
]


@pytest.mark.parametrize('ta,tb,c_shape,quantized_y,per_column', QGEMMS)
@pytest.mark.parametrize('at,bt', [(np.uint8, np.uint8), (np.uint8, np.int8), (np.int8, np.int8)])
def test_qgemm(at, bt, ta, tb, c_shape, quantized_y, per_column):
    g = Gen(8)
    m, k, n = 5, 33, 7
    if per_column:
        bs = np.array(g.r.uniform(0.001, 0.02, size=n), np.float32)
        bz = g.q((n,), bt) if bt == np.int8 else np.array(g.r.integers(120, 136, size=n), bt)
    else:
        bs, bz = g.scale(0.001, 0.02), g.zp(bt)
    ins = [('a', g.q((k, m) if ta else (m, k), at)), ('as', g.scale()), ('az', g.zp(at)),
           ('b', g.q((n, k) if tb else (k, n), bt)), ('bs', bs), ('bz', bz),
           ('c', None if c_shape is None else g.r.integers(-5000, 5000, size=c_shape).astype(np.int32)),
           ('ys', g.scale(0.05, 0.3) if quantized_y else None), ('yz', g.zp(at) if quantized_y else None)]
    names = [nm if a is not None else '' for nm, a in ins]
    while not names[-1]:
        names.pop()
    node = oh.make_node('QGemm', names, ['y'], domain=MS, transA=ta, transB=tb, alpha=0.5 if ta else 1.0)
    ref, got = run_node(node, ins, NP2TP[at] if quantized_y else TP.FLOAT, PARAMS | {'b', 'c'})
    np.testing.assert_array_equal(got, ref)


CONVS = [  # X's shape (NCHW), W's shape, attributes
    ((1, 3, 8, 8), (4, 3, 3, 3), {'pads': [1, 1, 1, 1]}),
    ((2, 4, 9, 7), (6, 2, 3, 2), {'group': 2, 'strides': [2, 1]}),
    ((1, 4, 8, 8), (4, 1, 3, 3), {'group': 4, 'pads': [1, 1, 1, 1], 'dilations': [2, 2]}),
    ((1, 3, 10), (5, 3, 3), {'strides': [2]}),
    ((1, 3, 6, 6), (4, 3, 3, 3), {'auto_pad': 'SAME_UPPER'}),
]


@pytest.mark.parametrize('xs,ws,attrs', CONVS)
@pytest.mark.parametrize('channels_last', [0, 1])
@pytest.mark.parametrize('xt,wt,per_channel', [(np.uint8, np.int8, True), (np.uint8, np.uint8, False),
                                               (np.int8, np.int8, False)])
def test_qlinear_conv(xs, ws, attrs, channels_last, xt, wt, per_channel):
    g = Gen(11)
    if channels_last:
        xs = (xs[0],) + xs[2:] + (xs[1],)
    m = ws[0]
    if per_channel:
        w_scale, w_zp = np.array(g.r.uniform(0.001, 0.02, size=m), np.float32), np.zeros(m, wt)
    else:
        w_scale, w_zp = g.scale(0.001, 0.02), g.zp(wt)
    ins = [('x', g.q(xs, xt)), ('xs', g.scale()), ('xz', g.zp(xt)), ('w', g.q(ws, wt)), ('ws', w_scale),
           ('wz', w_zp), ('ys', g.scale(0.05, 0.3)), ('yz', g.zp(xt)),
           ('bias', g.r.integers(-3000, 3000, size=m).astype(np.int32))]
    node = oh.make_node('QLinearConv', [n for n, _ in ins], ['y'], domain=MS, channels_last=channels_last,
                        **attrs)
    assert_steps(*run_node(node, ins, NP2TP[xt], PARAMS | {'w', 'ws', 'wz', 'bias'}))


MATMULS = [  # A's shape, B's shape, b parameters: 0 one, 1 per column, 2 per column of each matrix
    ((5, 16), (16, 7), 0), ((2, 5, 16), (16, 7), 1), ((2, 5, 16), (2, 16, 7), 2), ((16,), (16, 7), 1),
    ((3, 16), (16,), 0),
]


def _b_params(g, sb, kind, bt):
    n = sb[-1] if len(sb) > 1 else 1
    if kind == 0:
        return g.scale(0.001, 0.02), g.zp(bt)
    shape = (n,) if kind == 1 else (sb[0], 1, n)
    return np.array(g.r.uniform(0.001, 0.02, size=shape), np.float32), g.q(shape, bt)


@pytest.mark.parametrize('sa,sb,kind', MATMULS)
@pytest.mark.parametrize('at,bt', [(np.uint8, np.uint8), (np.uint8, np.int8), (np.int8, np.int8)])
def test_matmul_integer_to_float(at, bt, sa, sb, kind):
    g = Gen(9)
    bs, bz = _b_params(g, sb, kind, bt)
    n = sb[-1] if len(sb) > 1 else 1
    ins = [('a', g.q(sa, at)), ('b', g.q(sb, bt)), ('as', g.scale()), ('bs', bs), ('az', g.zp(at)), ('bz', bz),
           ('bias', g.r.standard_normal(n).astype(np.float32))]
    node = oh.make_node('MatMulIntegerToFloat', [nm for nm, _ in ins], ['y'], domain=MS)
    assert_steps(*run_node(node, ins, TP.FLOAT, PARAMS | {'b', 'bias'}))


@pytest.mark.parametrize('sa,sb,kind', MATMULS[:3])
@pytest.mark.parametrize('bt', TYPES)
@pytest.mark.parametrize('bias', [False, True])
def test_dynamic_quantize_matmul(bt, sa, sb, kind, bias):
    g = Gen(10)
    bs, bz = _b_params(g, sb, kind, bt)
    ins = [('a', (g.r.standard_normal(sa) * 3).astype(np.float32)), ('b', g.q(sb, bt)), ('bs', bs), ('bz', bz),
           ('bias', g.r.standard_normal(sb[-1]).astype(np.float32) if bias else None)]
    node = oh.make_node('DynamicQuantizeMatMul', [nm if a is not None else '' for nm, a in ins], ['y'], domain=MS)
    assert_steps(*run_node(node, ins, TP.FLOAT, PARAMS | {'b', 'bias'}))


# ---------------------------------------------------------------- malformed nodes

def _bad_model(node, inputs, out_type=TP.UINT8):
    ins = [oh.make_tensor_value_info(n, NP2TP[a.dtype.type], a.shape) for n, a in inputs]
    g = oh.make_graph([node], 'bad', ins, [oh.make_tensor_value_info('y', out_type, None)])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid('', 17), oh.make_opsetid(MS, 1)])
    m.ir_version = 8
    return m.SerializeToString(), {n: a for n, a in inputs}


U8 = np.zeros((2, 3), np.uint8)
S8 = np.zeros((2, 3), np.int8)
F1 = np.array(0.1, np.float32)
Z8 = np.array(0, np.uint8)
BAD = [
    ('QLinearAdd', ['a', 'as', 'az', 'b', 'bs', 'bz', 'cs', 'cz'], {},
     {'a': U8, 'as': F1, 'az': Z8, 'b': S8, 'bs': F1, 'bz': Z8, 'cs': F1, 'cz': Z8}, 'input 3'),
    ('QLinearMul', ['a', 'as', 'az', 'b', 'bs', 'bz', 'cs', 'cz'], {},
     {'a': U8, 'as': np.ones(3, np.float32), 'az': Z8, 'b': U8, 'bs': F1, 'bz': Z8, 'cs': F1, 'cz': Z8}, 'scalar'),
    ('QLinearAdd', ['a', 'as', 'az', 'b', 'bs', 'bz', 'cs', 'cz'], {},
     {'a': U8, 'as': F1, 'az': Z8, 'b': np.zeros((4,), np.uint8), 'bs': F1, 'bz': Z8, 'cs': F1, 'cz': Z8},
     'broadcast'),
    ('QLinearSigmoid', ['x', 'xs', 'xz', 'ys', 'yz'], {},
     {'x': np.zeros((2, 3), np.float32), 'xs': F1, 'xz': Z8, 'ys': F1, 'yz': Z8}, 'int8 or uint8'),
    ('QLinearLeakyRelu', ['x', 'xs', 'xz', 'ys', 'yz'], {},
     {'x': U8, 'xs': F1, 'xz': np.array(0, np.int8), 'ys': F1, 'yz': Z8}, 'input 2'),
    ('QLinearSoftmax', ['x', 'xs', 'xz', 'ys', 'yz'], {'axis': -1},
     {'x': U8, 'xs': F1, 'xz': Z8, 'ys': F1, 'yz': Z8}, 'opset'),
    ('QLinearSoftmax', ['x', 'xs', 'xz', 'ys', 'yz'], {'axis': 2, 'opset': 13},
     {'x': U8, 'xs': F1, 'xz': Z8, 'ys': F1, 'yz': Z8}, 'axis'),
    ('QLinearGlobalAveragePool', ['x', 'xs', 'xz', 'ys', 'yz'], {},
     {'x': U8, 'xs': F1, 'xz': Z8, 'ys': F1, 'yz': Z8}, 'rank 2'),
    ('QLinearAveragePool', ['x', 'xs', 'xz', 'ys', 'yz'], {},
     {'x': np.zeros((1, 2, 4, 4), np.uint8), 'xs': F1, 'xz': Z8, 'ys': F1, 'yz': Z8}, 'kernel_shape'),
    ('QLinearAveragePool', ['x', 'xs', 'xz', 'ys', 'yz'], {'kernel_shape': [5, 5]},
     {'x': np.zeros((1, 2, 4, 4), np.uint8), 'xs': F1, 'xz': Z8, 'ys': F1, 'yz': Z8}, ''),
    ('QLinearAveragePool', ['x', 'xs', 'xz', 'ys', 'yz'], {'kernel_shape': [2, 2], 'dilations': [2, 2]},
     {'x': np.zeros((1, 2, 4, 4), np.uint8), 'xs': F1, 'xz': Z8, 'ys': F1, 'yz': Z8}, 'dilations'),
    ('QLinearConcat', ['ys', 'yz', 'x0', 's0', 'z0', 'x1', 's1'], {'axis': 0},
     {'ys': F1, 'yz': Z8, 'x0': U8, 's0': F1, 'z0': Z8, 'x1': U8, 's1': F1}, 'triples'),
    ('QLinearConcat', ['ys', 'yz', 'x0', 's0', 'z0', 'x1', 's1', 'z1'], {'axis': 0},
     {'ys': F1, 'yz': Z8, 'x0': U8, 's0': F1, 'z0': Z8, 'x1': np.zeros((2, 4), np.uint8), 's1': F1, 'z1': Z8},
     'axis 1'),
    ('QLinearWhere', ['c', 'x', 'xs', 'xz', 'y2', 's1', 'z1', 'zs', 'zz'], {},
     {'c': U8, 'x': U8, 'xs': F1, 'xz': Z8, 'y2': U8, 's1': F1, 'z1': Z8, 'zs': F1, 'zz': Z8}, 'bool'),
    ('QGemm', ['a', 'as', 'az', 'b', 'bs', 'bz'], {},
     {'a': np.zeros((2, 3, 4), np.uint8), 'as': F1, 'az': Z8, 'b': np.zeros((4, 5), np.uint8), 'bs': F1,
      'bz': Z8}, 'rank 3'),
    ('QGemm', ['a', 'as', 'az', 'b', 'bs', 'bz'], {},
     {'a': np.zeros((2, 4), np.uint8), 'as': F1, 'az': Z8, 'b': np.zeros((3, 5), np.uint8), 'bs': F1,
      'bz': Z8}, 'inner dims'),
    ('QGemm', ['a', 'as', 'az', 'b', 'bs', 'bz', 'c', 'ys', 'yz'], {},
     {'a': np.zeros((2, 4), np.uint8), 'as': F1, 'az': Z8, 'b': np.zeros((4, 5), np.uint8), 'bs': F1,
      'bz': Z8, 'c': np.zeros((3,), np.int32), 'ys': F1, 'yz': Z8}, 'input 6'),
    ('QLinearConv', ['x', 'xs', 'xz', 'w', 'ws', 'wz', 'ys', 'yz'], {'channels_last': 1},
     {'x': np.zeros((1, 4, 4, 3), np.uint8), 'xs': F1, 'xz': Z8, 'w': np.zeros((2, 4, 1, 1), np.int8),
      'ws': F1, 'wz': np.array(0, np.int8), 'ys': F1, 'yz': Z8}, 'channels'),
    ('QLinearConv', ['x', 'xs', 'xz', 'w', 'ws', 'wz', 'ys', 'yz'], {},
     {'x': np.zeros((1, 3, 4, 4), np.uint8), 'xs': F1, 'xz': Z8, 'w': np.zeros((2, 3, 1, 1), np.int8),
      'ws': np.ones(3, np.float32), 'wz': np.array(0, np.int8), 'ys': F1, 'yz': Z8}, 'w_scale'),
    ('MatMulIntegerToFloat', ['a', 'b', 'as', 'bs'], {},
     {'a': U8, 'b': np.zeros((3, 4), np.float32), 'as': F1, 'bs': F1}, 'input 1'),
    ('DynamicQuantizeMatMul', ['a', 'b', 'bs', '', 'bias'], {},
     {'a': np.zeros((2, 3), np.float32), 'b': np.zeros((3, 4), np.int8), 'bs': F1,
      'bias': np.zeros((5,), np.float32)}, 'bias'),
    ('DynamicQuantizeMatMul', ['a', 'b', 'bs'], {},
     {'a': np.zeros((2, 3), np.float32), 'b': np.zeros((3, 4), np.int8), 'bs': np.zeros((2, 2), np.float32)},
     'b_scale'),
]


@pytest.mark.parametrize('op,inputs,attrs,feeds,words', BAD, ids=[f'{b[0]}-{i}' for i, b in enumerate(BAD)])
def test_malformed_node_is_refused(op, inputs, attrs, feeds, words):
    node = oh.make_node(op, inputs, ['y'], domain=MS, name='bad_node', **attrs)
    b, feed = _bad_model(node, [(n, feeds[n]) for n in inputs if n])
    with pytest.raises(onyx.OnyxError) as e:
        onyx.InferenceSession(b).run(None, feed)
    msg = str(e.value)
    assert 'bad_node' in msg and words in msg, msg


def test_parameters_checked_at_run_time():
    """A scale whose shape only the run reveals is refused by the kernel, naming the node."""
    node = oh.make_node('QLinearAdd', ['a', 'as', 'az', 'b', 'bs', 'bz', 'cs', 'cz'], ['y'], domain=MS,
                        name='late')
    ins = [oh.make_tensor_value_info('a', TP.UINT8, [2, 3]), oh.make_tensor_value_info('as', TP.FLOAT, None)]
    inits = [nh.from_array(v, n) for n, v in (('az', Z8), ('bs', F1), ('bz', Z8), ('cs', F1), ('cz', Z8))]
    inits.append(nh.from_array(U8, 'b'))
    g = oh.make_graph([node], 'late', ins, [oh.make_tensor_value_info('y', TP.UINT8, None)], inits)
    m = oh.make_model(g, opset_imports=[oh.make_opsetid('', 17), oh.make_opsetid(MS, 1)])
    m.ir_version = 8
    sess = onyx.InferenceSession(m.SerializeToString())
    (y,) = sess.run(None, {'a': U8, 'as': F1})
    assert y.shape == (2, 3)
    with pytest.raises(onyx.OnyxError) as e:
        sess.run(None, {'a': U8, 'as': np.ones((3,), np.float32)})
    assert 'late' in str(e.value)
