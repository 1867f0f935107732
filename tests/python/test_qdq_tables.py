"""QDQ units that are a function of one 8-bit tensor become ai.onyx LookupTable (core/rules/qdq_table.c):
Q(f(DQ(x))) with f elementwise float ops over x and one-element constants, inner Q -> DQ pairs
included (GELU spelled out as ConvNeXt's quantized blocks have it, x * Sigmoid(x), an Add or Mul
of a quantized constant). The table is f computed on the 256 codes by the unit's own kernels, so
the output must equal the graph as written, bit for bit, for every input byte."""
import json
import os

import numpy as np
import pytest

import onyx

onnx = pytest.importorskip('onnx')

from onnx import TensorProto as TP  # noqa: E402
from onnx import helper as oh  # noqa: E402
from onnx import numpy_helper as nh  # noqa: E402

NP2TP = {np.uint8: TP.UINT8, np.int8: TP.INT8, np.float32: TP.FLOAT}
ALL = onyx.GraphOptimizationLevel.ORT_ENABLE_ALL
PLAIN = onyx.GraphOptimizationLevel.ORT_DISABLE_ALL
SHAPE = (1, 4, 8, 8)  # 256 elements: every byte once


def vnni():
    flags = open('/proc/cpuinfo').read()
    return ' avx512_vnni' in flags or ' avx_vnni' in flags


class Graph:
    """A QDQ graph written by hand: DQ and Q nodes of scalar constant parameters."""

    def __init__(self):
        self.nodes, self.inits, self.n = [], [], 0

    def name(self, base):
        self.n += 1
        return f'{base}{self.n}'

    def const(self, a, base='c'):
        name = self.name(base)
        self.inits.append(nh.from_array(np.asarray(a), name))
        return name

    def op(self, op_type, *inputs, **attrs):
        out = self.name(op_type.lower())
        self.nodes.append(oh.make_node(op_type, list(inputs), [out], **attrs))
        return out

    def dq(self, x, scale, zp, t):
        return self.op('DequantizeLinear', x, self.const(np.float32(scale)), self.const(t(zp)))

    def q(self, x, scale, zp, t):
        return self.op('QuantizeLinear', x, self.const(np.float32(scale)), self.const(t(zp)))

    def qdq(self, x, scale, zp, t):
        return self.dq(self.q(x, scale, zp, t), scale, zp, t)

    def model(self, x_type, y, y_type, shape=SHAPE, outputs=()):
        outs = [oh.make_tensor_value_info(y, NP2TP[y_type], None)]
        outs += [oh.make_tensor_value_info(o, TP.FLOAT, None) for o in outputs]
        g = oh.make_graph(self.nodes, 'tables', [oh.make_tensor_value_info('x', NP2TP[x_type], shape)],
                          outs, self.inits)
        m = oh.make_model(g, opset_imports=[oh.make_opsetid('', 13)])
        m.ir_version = 8
        return m


def gelu(g, a, t):
    """ConvNeXt's quantized GELU: Q(Erf(a / sqrt 2)), + DQ(1), * a, * DQ(0.5), Q between each."""
    e = g.qdq(g.op('Erf', g.op('Div', a, g.const(np.float32(1.4142135)))), 2 / 255, 127, np.uint8)
    one = g.dq(g.const(np.uint8(255)), 1 / 255, 0, np.uint8)
    p = g.qdq(g.op('Add', e, one), 2 / 255, 0, np.uint8)
    m = g.qdq(g.op('Mul', a, p), 0.03, 40, np.uint8)
    return g.op('Mul', m, g.dq(g.const(np.uint8(128)), 0.5 / 128, 0, np.uint8))


def swish(g, a, t):
    return g.op('Mul', a, g.qdq(g.op('Sigmoid', a), 1 / 255, 0, np.uint8))


def hard_swish(g, a, t):
    """x * Clip(x + 3, 0, 6) / 6 in float ops of scalar constants."""
    c = g.op('Clip', g.op('Add', a, g.const(np.float32(3))), g.const(np.float32(0)), g.const(np.float32(6)))
    return g.op('Div', g.op('Mul', a, c), g.const(np.float32(6)))


def tanh_shift(g, a, t):
    return g.op('Sub', g.op('Tanh', g.op('Mul', a, g.const(np.float32([1.7])))), g.const(np.float32(0.25)))


FUNCTIONS = {'gelu': gelu, 'swish': swish, 'hard_swish': hard_swish, 'tanh_shift': tanh_shift}


def unit_model(fn, xt, yt):
    g = Graph()
    a = g.dq('x', 0.047, 7 if xt == np.int8 else 131, xt)
    y = g.q(FUNCTIONS[fn](g, a, xt), 0.021, -20 if yt == np.int8 else 30, yt)
    return g.model(xt, y, yt)


def run(model, feed, level, tmp_path, verbose=False):
    """The outputs and the op type of every step that ran."""
    path = str(tmp_path / f'm{level}.onnx')
    onnx.save(model, path)
    so = onyx.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = str(tmp_path / 'profile')
    so.graph_optimization_level = level
    if verbose:
        so.log_severity_level = 0
    s = onyx.InferenceSession(path, so)
    y = s.run(None, feed)
    events = json.load(open(s.end_profiling()))
    os.remove(path)
    return y, [e['args']['op_name'] for e in events if e.get('cat') == 'Node']


def every_byte(t):
    return np.arange(256, dtype=np.uint8).view(t).reshape(SHAPE)


@pytest.mark.parametrize('fn', sorted(FUNCTIONS))
@pytest.mark.parametrize('xt,yt', [(np.uint8, np.uint8), (np.int8, np.int8), (np.int8, np.uint8)])
def test_unit_is_one_table_equal_to_the_graph(fn, xt, yt, tmp_path):
    m = unit_model(fn, xt, yt)
    x = every_byte(xt)
    (fused,), ops = run(m, {'x': x}, ALL, tmp_path)
    (plain,), plain_ops = run(m, {'x': x}, PLAIN, tmp_path)
    assert ops == ['LookupTable']
    assert 'LookupTable' not in plain_ops and 'QuantizeLinear' in plain_ops
    assert fused.dtype == yt and fused.shape == SHAPE
    assert len(np.unique(fused)) > 8  # a function that moves, not a constant
    np.testing.assert_array_equal(fused, plain)


def test_larger_tensor_and_shared_input(tmp_path):
    """Two units read one DQ of x (each its own table, one copy of the codes' DQ) over a tensor
    larger than a thread's share, its bytes in every order."""
    g = Graph()
    a = g.dq('x', 0.05, 128, np.uint8)
    y1 = g.q(swish(g, a, np.uint8), 0.02, 20, np.uint8)
    y2 = g.q(gelu(g, a, np.uint8), 0.03, 10, np.uint8)
    y = g.op('Add', g.dq(y1, 0.02, 20, np.uint8), g.dq(y2, 0.03, 10, np.uint8))
    shape = (2, 16, 64, 80)
    m = g.model(np.uint8, y, np.float32, shape=shape)
    x = np.random.default_rng(3).integers(0, 256, shape).astype(np.uint8)
    (fused,), ops = run(m, {'x': x}, ALL, tmp_path)
    (plain,), _ = run(m, {'x': x}, PLAIN, tmp_path)
    assert ops.count('LookupTable') == 2 and 'Erf' not in ops and 'Sigmoid' not in ops
    np.testing.assert_array_equal(fused, plain)


def test_inner_value_read_elsewhere_splits_the_unit(tmp_path):
    """GELU's Erf unit also feeds a graph output: that unit is a table of x, the Add after it one
    of its 8-bit result, and the product of the two tensors x and that is no table
    (QLinearMul, one rounding where the graph has two: within a step)."""
    g = Graph()
    a = g.dq('x', 0.047, 131, np.uint8)
    e8 = g.q(g.op('Erf', g.op('Div', a, g.const(np.float32(1.4142135)))), 2 / 255, 127, np.uint8)
    e = g.dq(e8, 2 / 255, 127, np.uint8)
    seen = g.op('Identity', e)
    p = g.qdq(g.op('Add', e, g.dq(g.const(np.uint8(255)), 1 / 255, 0, np.uint8)), 2 / 255, 0, np.uint8)
    y = g.q(g.op('Mul', a, p), 0.03, 40, np.uint8)
    m = g.model(np.uint8, y, np.uint8, outputs=[seen])
    x = every_byte(np.uint8)
    fused, ops = run(m, {'x': x}, ALL, tmp_path)
    plain, _ = run(m, {'x': x}, PLAIN, tmp_path)
    assert ops.count('LookupTable') == 2 and ops.count('QLinearMul') == 1 and 'Erf' not in ops
    assert np.abs(fused[0].astype(int) - plain[0]).max() <= 1
    np.testing.assert_array_equal(fused[1], plain[1])


@pytest.mark.parametrize('case', ['vector_constant', 'two_tensors', 'float_input'])
def test_not_a_table(case, tmp_path):
    """A constant of more than one value (per channel), a function of two 8-bit tensors, or a
    float graph input inside f: no table."""
    g = Graph()
    a = g.dq('x', 0.047, 131, np.uint8)
    if case == 'vector_constant':
        f = g.op('Mul', g.op('Erf', a), g.const(np.linspace(0.5, 1.5, 4, dtype=np.float32).reshape(1, 4, 1, 1)))
    elif case == 'two_tensors':
        b = g.dq(g.op('Identity', 'x'), 0.047, 131, np.uint8)
        f = g.op('Add', g.op('Erf', a), g.op('Tanh', b))
    else:
        f = g.op('Add', g.op('Erf', a), g.op('Abs', 'w'))
    y = g.q(f, 0.02, 30, np.uint8)
    m = g.model(np.uint8, y, np.uint8)
    feed = {'x': every_byte(np.uint8)}
    if case == 'float_input':
        m.graph.input.append(oh.make_tensor_value_info('w', TP.FLOAT, (1,)))
        feed['w'] = np.array([0.3], np.float32)
    (fused,), ops = run(m, feed, ALL, tmp_path)
    (plain,), _ = run(m, feed, PLAIN, tmp_path)
    assert 'LookupTable' not in ops and 'Erf' in ops
    np.testing.assert_array_equal(fused, plain)


def test_table_keeps_the_convolutions_layout(tmp_path, capfd):
    """QLinearConv -> table unit -> QLinearConv: the table is elementwise, so the 8-bit tensors
    on both of its sides stay channels last (core/fuse.c)."""
    r = np.random.default_rng(5)
    g = Graph()
    s, z = g.const(np.float32(0.05)), g.const(np.uint8(128))
    xq = g.op('QuantizeLinear', 'xf', s, z)

    def qconv(x, cin, cout):
        return g.op('QLinearConv', x, s, z, g.const(r.integers(-127, 128, (cout, cin, 3, 3)).astype(np.int8)),
                    g.const(np.float32(0.01)), g.const(np.int8(0)), s, z,
                    g.const(r.integers(-500, 500, cout).astype(np.int32)), pads=[1, 1, 1, 1])
    c1 = qconv(xq, 8, 16)
    t = g.q(swish(g, g.dq(c1, 0.05, 128, np.uint8), np.uint8), 0.05, 128, np.uint8)
    y = g.op('DequantizeLinear', qconv(t, 16, 16), s, z)
    m = g.model(np.float32, y, np.float32, shape=(1, 8, 12, 12))
    m.graph.input[0].name = 'xf'
    xf = r.uniform(-3, 3, (1, 8, 12, 12)).astype(np.float32)
    (fused,), ops = run(m, {'xf': xf}, ALL, tmp_path, verbose=True)
    err = capfd.readouterr().err
    assert ops.count('LookupTable') == 1
    if vnni():  # the quantized input, c1's output and the table's, around the two oneDNN
        # convolutions
        assert 'fusion: 3 tensors kept opaque' in err
    (plain,), _ = run(m, {'xf': xf}, PLAIN, tmp_path)
    np.testing.assert_array_equal(fused, plain)
