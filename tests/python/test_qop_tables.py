"""QOperator chains of 8-bit elementwise ops of one tensor become one ai.onyx LookupTable
(core/rules/qop_table.c): onnxruntime's quantize_static writes EfficientNet's SiLU as
QLinearSigmoid and QLinearMul of x, the squeeze-and-excitation as QLinearMul(x, QLinearSigmoid(s)).
The table is computed by the unit's own ops on the 256 codes, so the rewritten model's outputs
equal the unrewritten ones bit for bit, and onnxruntime's within one step."""
import collections
import json
import os

import numpy as np
import pytest

import onyx

onnx = pytest.importorskip('onnx')
quant = pytest.importorskip('onnxruntime.quantization')
ort = pytest.importorskip('onnxruntime')

from onnx import TensorProto as TP  # noqa: E402
from onnx import helper as oh  # noqa: E402
from onnx import numpy_helper as nh  # noqa: E402

SHAPE = (1, 8, 12, 12)


def float_net():
    """Conv -> SiLU -> squeeze-and-excitation (GlobalAveragePool, Conv, Sigmoid, Mul) -> Conv."""
    r = np.random.default_rng(21)
    inits, nodes = [], []

    def w(name, shape, s):
        inits.append(nh.from_array((r.standard_normal(shape) * s).astype(np.float32), name))
        return name

    def node(op, ins, out, **attrs):
        nodes.append(oh.make_node(op, ins, [out], **attrs))
        return out
    c = node('Conv', ['x', w('w1', (16, 8, 3, 3), 0.2), w('b1', (16,), 0.1)], 'c', pads=[1] * 4)
    silu = node('Mul', [c, node('Sigmoid', [c], 's')], 'silu')
    g = node('GlobalAveragePool', [silu], 'g')
    e = node('Conv', [g, w('w2', (16, 16, 1, 1), 0.3), w('b2', (16,), 0.1)], 'e')
    se = node('Mul', [silu, node('Sigmoid', [e], 'es')], 'se')
    node('Conv', [se, w('w3', (8, 16, 3, 3), 0.1), w('b3', (8,), 0.1)], 'y', pads=[1] * 4)
    graph = oh.make_graph(nodes, 'net', [oh.make_tensor_value_info('x', TP.FLOAT, SHAPE)],
                          [oh.make_tensor_value_info('y', TP.FLOAT, None)], inits)
    m = oh.make_model(graph, opset_imports=[oh.make_opsetid('', 17)])
    m.ir_version = 8
    return m


class Calibration(quant.CalibrationDataReader):
    def __init__(self):
        r = np.random.default_rng(22)
        self.data = iter([{'x': r.uniform(-1, 1, SHAPE).astype(np.float32)} for _ in range(4)])

    def get_next(self):
        return next(self.data, None)


@pytest.fixture(scope='module', params=[(quant.QuantType.QUInt8, False),
                                        (quant.QuantType.QUInt8, True),
                                        (quant.QuantType.QInt8, False)],
                ids=['u8', 'u8_per_channel', 's8'])
def qop_model(request, tmp_path_factory):
    d = tmp_path_factory.mktemp('qop')
    src, path = str(d / 'net.onnx'), str(d / 'net.qop.onnx')
    onnx.save(float_net(), src)
    act, pc = request.param
    quant.quantize_static(src, path, Calibration(), quant_format=quant.QuantFormat.QOperator,
                          activation_type=act, weight_type=quant.QuantType.QInt8, per_channel=pc,
                          extra_options={'ActivationSymmetric': act == quant.QuantType.QInt8})
    ops = collections.Counter(n.op_type for n in onnx.load(path).graph.node)
    assert ops['QLinearSigmoid'] == 2 and ops['QLinearMul'] == 2, ops
    return path


def feed():
    return {'x': np.random.default_rng(23).uniform(-1.2, 1.2, SHAPE).astype(np.float32)}


def run(path, level):
    """The output and the ops of the steps that ran."""
    so = onyx.SessionOptions()
    so.graph_optimization_level = level
    so.enable_profiling = True
    so.profile_file_prefix = os.path.splitext(path)[0] + f'_{int(level)}_profile'
    s = onyx.InferenceSession(path, so)
    y, = s.run(None, feed())
    with open(s.end_profiling()) as f:
        events = json.load(f)
    return y, collections.Counter(e['args']['op_name'] for e in events if e.get('cat') == 'Node')


def test_silu_and_se_sigmoid_are_tables_equal_to_the_unrewritten_graph(qop_model):
    y_all, ops_all = run(qop_model, onyx.GraphOptimizationLevel.ORT_ENABLE_ALL)
    y_basic, ops_basic = run(qop_model, onyx.GraphOptimizationLevel.ORT_ENABLE_BASIC)
    assert ops_basic['QLinearSigmoid'] == 2 and ops_basic['QLinearMul'] == 2
    # SiLU one table; the squeeze-and-excitation's Sigmoid (of another tensor than its product's)
    # one table, its product stays
    assert ops_all['LookupTable'] == 2 and ops_all['QLinearSigmoid'] == 0
    assert ops_all['QLinearMul'] == 1
    np.testing.assert_array_equal(y_all, y_basic)


def test_tables_equal_onnxruntime_within_a_step(qop_model):
    y, _ = run(qop_model, onyx.GraphOptimizationLevel.ORT_ENABLE_ALL)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    want, = ort.InferenceSession(qop_model, so, providers=['CPUExecutionProvider']).run(None, feed())
    model = onnx.load(qop_model)
    inits = {i.name: nh.to_array(i) for i in model.graph.initializer}
    out_dq = next(n for n in model.graph.node if n.output[0] == 'y')
    step = float(inits[out_dq.input[1]])
    assert float(np.abs(y - want).max()) <= step * 1.001
