"""QDQ units of Concat, AveragePool, Softmax, Resize and Gather in 8 bits (core/rules/qdq.c),
as onnxruntime's QDQ transformer makes them: QLinearConcat (or Concat on the 8-bit tensors where
every input has the output's scale and zero point), QLinearAveragePool, QLinearSoftmax, and Resize
and Gather on the 8-bit tensor where DQ and Q share their parameters. Outputs against the graph
as written (the 8-bit ops round once where the unit rounds twice: within a step) and against
onnxruntime."""
import json

import numpy as np
import pytest

import onyx

onnx = pytest.importorskip('onnx')
ort = pytest.importorskip('onnxruntime')
quant = pytest.importorskip('onnxruntime.quantization')

from onnx import TensorProto as TP  # noqa: E402
from onnx import helper as oh  # noqa: E402
from onnx import numpy_helper as nh  # noqa: E402

ALL = onyx.GraphOptimizationLevel.ORT_ENABLE_ALL
PLAIN = onyx.GraphOptimizationLevel.ORT_DISABLE_ALL


def vnni():
    flags = open('/proc/cpuinfo').read()
    return ' avx512_vnni' in flags or ' avx_vnni' in flags


def run(path, feed, level, tmp_path):
    """The outputs and the op type of every step that ran."""
    so = onyx.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = str(tmp_path / 'profile')
    so.graph_optimization_level = level
    s = onyx.InferenceSession(path, so)
    y = s.run(None, feed)
    events = json.load(open(s.end_profiling()))
    return y, [e['args']['op_name'] for e in events if e.get('cat') == 'Node']


def float_model(mode):
    """Conv -> Relu, Conv; Concat of both -> AveragePool (stride 2) -> Resize x2 (mode) -> Conv ->
    GlobalAveragePool -> Gemm -> Softmax: what quantize_static writes these units of."""
    r = np.random.default_rng(2)
    inits, nodes = [], []

    def w(name, shape, s):
        inits.append(nh.from_array((r.standard_normal(shape) * s).astype(np.float32), name))
        return name

    def conv(x, name, cin, cout):
        nodes.append(oh.make_node('Conv', [x, w(name + '_w', (cout, cin, 3, 3), 1 / np.sqrt(9 * cin)),
                                           w(name + '_b', (cout,), 0.1)], [name], pads=[1] * 4))
        return name
    nodes.append(oh.make_node('Relu', [conv('x', 'a', 3, 8)], ['ar']))
    nodes.append(oh.make_node('Concat', ['ar', conv('ar', 'b', 8, 8)], ['cat'], axis=1))
    nodes.append(oh.make_node('AveragePool', ['cat'], ['ap'], kernel_shape=[3, 3], pads=[1] * 4,
                              strides=[2, 2]))
    inits.append(nh.from_array(np.array([1, 1, 2, 2], np.float32), 'sc'))
    nodes.append(oh.make_node('Resize', ['ap', '', 'sc'], ['rs'], mode=mode))
    nodes.append(oh.make_node('GlobalAveragePool', [conv('rs', 'c', 16, 8)], ['g']))
    nodes.append(oh.make_node('Flatten', ['g'], ['f']))
    nodes.append(oh.make_node('Gemm', ['f', w('fc', (10, 8), 0.5), w('fcb', (10,), 0.1)], ['l'], transB=1))
    nodes.append(oh.make_node('Softmax', ['l'], ['y'], axis=1))
    g = oh.make_graph(nodes, 'm', [oh.make_tensor_value_info('x', TP.FLOAT, (1, 3, 16, 16))],
                      [oh.make_tensor_value_info('y', TP.FLOAT, (1, 10))], inits)
    m = oh.make_model(g, opset_imports=[oh.make_opsetid('', 17)])
    m.ir_version = 8
    return m


class Calibration(quant.CalibrationDataReader):
    def __init__(self):
        r = np.random.default_rng(4)
        self.data = iter([{'x': r.uniform(-1, 1, (1, 3, 16, 16)).astype(np.float32)} for _ in range(4)])

    def get_next(self):
        return next(self.data, None)


@pytest.mark.parametrize('mode', ['nearest', 'linear', 'cubic'])
@pytest.mark.parametrize('act', ['u8', 's8'])
def test_units_run_in_8_bits(mode, act, tmp_path):
    src, path = str(tmp_path / 'f.onnx'), str(tmp_path / 'q.onnx')
    onnx.save(float_model(mode), src)
    quant.quantize_static(src, path, Calibration(), quant_format=quant.QuantFormat.QDQ,
                          activation_type=quant.QuantType.QUInt8 if act == 'u8' else quant.QuantType.QInt8,
                          weight_type=quant.QuantType.QInt8)
    x = np.random.default_rng(9).uniform(-1, 1, (1, 3, 16, 16)).astype(np.float32)
    (fused,), ops = run(path, {'x': x}, ALL, tmp_path)
    (plain,), plain_ops = run(path, {'x': x}, PLAIN, tmp_path)
    assert {'QLinearConcat', 'QLinearAveragePool', 'QLinearSoftmax', 'Resize'} <= set(ops)
    assert not {'Concat', 'AveragePool', 'Softmax', 'Conv'} & set(ops)
    assert ops.count('DequantizeLinear') == 1  # the network's output
    assert {'Concat', 'AveragePool', 'Softmax'} <= set(plain_ops)
    # the Softmax's output scale (1/256 for uint8, 1/128 for int8... as the quantizer writes it)
    model = onnx.load(path)
    inits = {i.name: nh.to_array(i) for i in model.graph.initializer}
    last_scale = float(inits[model.graph.node[-1].input[1]])
    assert float(np.abs(fused - plain).max()) <= last_scale * 1.001
    ref, = ort.InferenceSession(path, providers=['CPUExecutionProvider']).run(None, {'x': x})
    assert float(np.abs(fused - ref).max()) <= last_scale * 1.001


class Graph:
    """A QDQ graph written by hand: DQ and Q nodes of scalar constant parameters."""

    def __init__(self):
        self.nodes, self.inits, self.n = [], [], 0

    def const(self, a):
        self.n += 1
        self.inits.append(nh.from_array(np.asarray(a), f'c{self.n}'))
        return f'c{self.n}'

    def op(self, op_type, *inputs, **attrs):
        self.n += 1
        out = f'{op_type.lower()}{self.n}'
        self.nodes.append(oh.make_node(op_type, list(inputs), [out], **attrs))
        return out

    def dq(self, x, scale, zp):
        return self.op('DequantizeLinear', x, self.const(np.float32(scale)), self.const(np.uint8(zp)))

    def q(self, x, scale, zp):
        return self.op('QuantizeLinear', x, self.const(np.float32(scale)), self.const(np.uint8(zp)))

    def save(self, path, y, shape, opset=17):
        g = oh.make_graph(self.nodes, 'units', [oh.make_tensor_value_info('x', TP.UINT8, shape)],
                          [oh.make_tensor_value_info(y, TP.UINT8, None)], self.inits)
        m = oh.make_model(g, opset_imports=[oh.make_opsetid('', opset)])
        m.ir_version = 8 if opset < 19 else 9
        onnx.save(m, path)


SHAPE = (1, 4, 6, 6)


def check(tmp_path, g, y, want_ops, exact, opset=17):
    path = str(tmp_path / 'm.onnx')
    g.save(path, y, SHAPE, opset)
    x = np.random.default_rng(1).integers(0, 256, SHAPE).astype(np.uint8)
    (fused,), ops = run(path, {'x': x}, ALL, tmp_path)
    (plain,), _ = run(path, {'x': x}, PLAIN, tmp_path)
    assert ops == want_ops
    diff = np.abs(fused.astype(int) - plain.astype(int)).max()
    assert diff == 0 if exact else diff <= 1
    assert len(np.unique(fused)) > 16


def test_concat_of_one_scale_joins_the_bytes(tmp_path):
    g = Graph()
    y = g.q(g.op('Concat', g.dq('x', 0.05, 100), g.dq(g.op('Transpose', 'x', perm=[0, 1, 3, 2]), 0.05, 100), axis=2), 0.05, 100)
    check(tmp_path, g, y, ['Transpose', 'Concat'], exact=True)


def test_concat_of_other_scales_requantizes(tmp_path):
    g = Graph()
    y = g.q(g.op('Concat', g.dq('x', 0.05, 100), g.dq('x', 0.03, 120), axis=1), 0.07, 90)
    check(tmp_path, g, y, ['QLinearConcat'], exact=False)


def test_gather_and_nearest_resize_move_the_bytes(tmp_path):
    g = Graph()
    idx = g.const(np.array([3, 0, 2], np.int64))
    t = g.q(g.op('Gather', g.dq('x', 0.05, 100), idx, axis=1), 0.05, 100)
    y = g.q(g.op('Resize', g.dq(t, 0.05, 100), '', g.const(np.float32([1, 1, 2, 3])), mode='nearest'),
            0.05, 100)
    check(tmp_path, g, y, ['Gather', 'Resize'], exact=True)


def test_resize_of_other_scales_stays(tmp_path):
    g = Graph()
    y = g.q(g.op('Resize', g.dq('x', 0.05, 100), '', g.const(np.float32([1, 1, 2, 2])), mode='linear'),
            0.04, 100)
    check(tmp_path, g, y, ['DequantizeLinear', 'Resize', 'QuantizeLinear'], exact=True)


def test_average_pool_with_dilations_stays(tmp_path):
    g = Graph()
    y = g.q(g.op('AveragePool', g.dq('x', 0.05, 100), kernel_shape=[2, 2], dilations=[2, 2]), 0.05, 100)
    check(tmp_path, g, y, ['DequantizeLinear', 'AveragePool', 'QuantizeLinear'], exact=True, opset=19)
    g = Graph()
    y = g.q(g.op('AveragePool', g.dq('x', 0.05, 100), kernel_shape=[2, 2], dilations=[1, 1]), 0.05, 100)
    check(tmp_path, g, y, ['QLinearAveragePool'], exact=False, opset=19)


def test_softmax_unit(tmp_path):
    g = Graph()
    y = g.q(g.op('Softmax', g.dq('x', 0.05, 128), axis=-1), 1 / 256, 0)
    check(tmp_path, g, y, ['QLinearSoftmax'], exact=False)
