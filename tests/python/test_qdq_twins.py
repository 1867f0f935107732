"""A QDQ model is never slower than its QOperator twin (issue 32): onnxruntime's quantize_static
writes the same quantization of a network in both formats, and after onyx's QDQ rules
(core/rules/qdq.c, core/rules/qdq_table.c) the QDQ form must run the very 8-bit steps the
QOperator form runs, or fewer: no unit left in float, no DequantizeLinear / QuantizeLinear left
between 8-bit ops. Where both run the same steps, they are the same ops with the same parameters,
so their outputs are equal bit for bit.

The networks are the zoo's building blocks (ResNet's convolutions, max pooling and residual Add,
EfficientNet's SiLU, the pooled classifier), per tensor and per output channel."""
import collections
import json
import os
import re

import numpy as np
import pytest

import onyx

onnx = pytest.importorskip('onnx')
quant = pytest.importorskip('onnxruntime.quantization')

from onnx import TensorProto as TP  # noqa: E402
from onnx import helper as oh  # noqa: E402
from onnx import numpy_helper as nh  # noqa: E402


def float_net(silu):
    """Conv -> MaxPool -> Conv -> Conv + residual Add -> Conv (stride 2; SiLU or Relu) ->
    GlobalAveragePool -> Flatten -> Gemm, float, random weights, Relu after the other convs."""
    r = np.random.default_rng(12)
    inits, nodes = [], []

    def w(name, shape, s):
        inits.append(nh.from_array((r.standard_normal(shape) * s).astype(np.float32), name))
        return name

    def conv(x, name, cin, cout, stride=1, act='Relu'):
        nodes.append(oh.make_node('Conv', [x, w(name + '_w', (cout, cin, 3, 3), 1 / np.sqrt(9 * cin)),
                                           w(name + '_b', (cout,), 0.1)], [name + '_c'],
                                  pads=[1, 1, 1, 1], strides=[stride, stride]))
        if act == 'SiLU':
            nodes.append(oh.make_node('Sigmoid', [name + '_c'], [name + '_s']))
            nodes.append(oh.make_node('Mul', [name + '_c', name + '_s'], [name]))
        else:
            nodes.append(oh.make_node('Relu', [name + '_c'], [name]))
        return name
    conv('x', 'c1', 3, 16)
    nodes.append(oh.make_node('MaxPool', ['c1'], ['p'], kernel_shape=[3, 3], strides=[2, 2], pads=[1] * 4))
    conv(conv('p', 'c2', 16, 16), 'c3', 16, 16)
    nodes.append(oh.make_node('Add', ['c3', 'p'], ['a']))
    conv('a', 'c4', 16, 32, stride=2, act='SiLU' if silu else 'Relu')
    nodes.append(oh.make_node('GlobalAveragePool', ['c4'], ['g']))
    nodes.append(oh.make_node('Flatten', ['g'], ['f']))
    nodes.append(oh.make_node('Gemm', ['f', w('fc_w', (10, 32), 0.2), w('fc_b', (10,), 0.1)], ['y'],
                              transB=1))
    g = oh.make_graph(nodes, 'net', [oh.make_tensor_value_info('x', TP.FLOAT, (1, 3, 32, 32))],
                      [oh.make_tensor_value_info('y', TP.FLOAT, (1, 10))], inits)
    m = oh.make_model(g, opset_imports=[oh.make_opsetid('', 17)])
    m.ir_version = 8
    return m


class Calibration(quant.CalibrationDataReader):
    def __init__(self):
        r = np.random.default_rng(14)
        self.data = iter([{'x': r.uniform(-1, 1, (1, 3, 32, 32)).astype(np.float32)} for _ in range(4)])

    def get_next(self):
        return next(self.data, None)


@pytest.fixture(scope='module')
def twins(tmp_path_factory):
    """(silu, per_channel) -> {'QOperator': path, 'QDQ': path}: the same quantization (the same
    calibration, u8 activations, s8 weights) in the two formats."""
    d = tmp_path_factory.mktemp('twins')
    out = {}
    for silu in (False, True):
        src = str(d / f'net_{silu}.onnx')
        onnx.save(float_net(silu), src)
        for pc in (False, True):
            for fmt in ('QOperator', 'QDQ'):
                path = str(d / f'net_{silu}_{pc}_{fmt}.onnx')
                quant.quantize_static(src, path, Calibration(), quant_format=getattr(quant.QuantFormat, fmt),
                                      activation_type=quant.QuantType.QUInt8,
                                      weight_type=quant.QuantType.QInt8, per_channel=pc)
                out.setdefault((silu, pc), {})[fmt] = path
    return out


def run_steps(path):
    """The output and the (op, kernel, type of its first input) of every step that ran, in order,
    at level `all`."""
    so = onyx.SessionOptions()
    so.log_severity_level = 0  # the plan's log: packed weights, tensors kept channels last
    so.enable_profiling = True
    so.profile_file_prefix = os.path.splitext(path)[0] + '_profile'
    s = onyx.InferenceSession(path, so)
    y, = s.run(None, {'x': np.random.default_rng(15).uniform(-1, 1, (1, 3, 32, 32)).astype(np.float32)})
    with open(s.end_profiling()) as f:
        events = json.load(f)
    return y, [(e['args']['op_name'], e['args']['kernel'], next(iter(e['args']['input_type_shape'][0])))
               for e in events if e.get('cat') == 'Node']


def float_steps(steps):
    """The steps that compute on float tensors, but the input's quantization (the QOperator twin
    runs it too)."""
    return [s for s in steps if s[2] == 'float' and s[0] != 'QuantizeLinear']


def plan_log(text):
    """What the plan's log says of the 8-bit path: how many convolutions had their weights packed
    (the oneDNN path) and how many tensors stay channels last."""
    packed = text.count('(QLinearConv-10) made data from its constants')
    opaque = re.search(r'fusion: (\d+) tensors kept opaque', text)
    return packed, int(opaque.group(1)) if opaque else 0


@pytest.mark.parametrize('per_channel', [False, True])
def test_qdq_runs_its_qoperator_twins_steps(twins, per_channel, capfd):
    """Without SiLU every QDQ unit has a QOperator op: the same steps, in the same order, on the
    same kernels (weights packed, tensors channels last alike), and the same outputs bit for
    bit."""
    capfd.readouterr()
    qop_y, qop_steps = run_steps(twins[False, per_channel]['QOperator'])
    qop_log = plan_log(capfd.readouterr().err)
    qdq_y, qdq_steps = run_steps(twins[False, per_channel]['QDQ'])
    qdq_log = plan_log(capfd.readouterr().err)
    assert qop_log[1] > 0 and qdq_log == qop_log
    ops = [s[0] for s in qdq_steps]
    assert ops.count('QLinearConv') == 4 and ops.count('QLinearAdd') == 1 and ops.count('QGemm') == 1
    assert float_steps(qdq_steps) == []
    assert qdq_steps == qop_steps
    np.testing.assert_array_equal(qdq_y, qop_y)


@pytest.mark.parametrize('per_channel', [False, True])
def test_qdq_silu_runs_its_qoperator_twins_steps(twins, per_channel):
    """SiLU: the QDQ twin's unit is a table (core/rules/qdq_table.c), and so are the QOperator
    twin's QLinearSigmoid and QLinearMul (core/rules/qop_table.c): the same steps. The two tables
    round differently (the QDQ one computes the unit's float ops on the 256 codes, the QOperator
    one its 8-bit ops), within a step of the output."""
    qop_y, qop_steps = run_steps(twins[True, per_channel]['QOperator'])
    qdq_y, qdq_steps = run_steps(twins[True, per_channel]['QDQ'])
    qop_ops = collections.Counter(s[0] for s in qop_steps)
    qdq_ops = collections.Counter(s[0] for s in qdq_steps)
    assert float_steps(qdq_steps) == []
    assert qop_ops['QLinearSigmoid'] == 0 and qop_ops['QLinearMul'] == 0
    assert qdq_ops['LookupTable'] == 1 and qop_ops['LookupTable'] == 1
    assert qdq_ops == qop_ops
    model = onnx.load(twins[True, per_channel]['QDQ'])
    inits = {i.name: nh.to_array(i) for i in model.graph.initializer}
    out_dq = next(n for n in model.graph.node if n.output[0] == 'y')
    step = float(inits[out_dq.input[1]])
    assert float(np.abs(qdq_y - qop_y).max()) <= step * 1.001
