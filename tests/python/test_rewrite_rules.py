"""The graph each rewrite rule makes (core/rules/, the table in core/rules/table.c), as
onnxruntime's graph_transform_test.cc checks its transformers: a small model per rule, the rules
that fired and the op counts of the rewritten graph, read from the verbose log ("rewrite: RULE
(FILE) at node 'NAME' (OP)" per change, then "rewrite: graph 'NAME': N nodes -> M: OP COUNT, ..."),
and the outputs against the graph run as written (ORT_DISABLE_ALL). Every rule of the table has a
case here: tests/unit/test_rewrite_rules.c checks that each rule's name appears in CASES."""
import math
import re

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as oh
from onnx import numpy_helper as nh

import onyx.ort as ort

ALL = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
PLAIN = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
RULE_LINE = re.compile(r"^rewrite: (\S+) \((\S+)\) at node '(.*)' \((\S+)\)$")
GRAPH_LINE = re.compile(r"^rewrite: graph '(.*)': (\d+) nodes -> (\d+): ?(.*)$")


class Model:
    """A graph written by hand: constants as initializers, one output per op unless named."""

    def __init__(self):
        self.nodes, self.inits, self.inputs, self.n = [], [], [], 0

    def input(self, name, dtype, shape):
        self.inputs.append(oh.make_tensor_value_info(name, dtype, shape))
        return name

    def const(self, a):
        self.n += 1
        self.inits.append(nh.from_array(np.asarray(a), f'c{self.n}'))
        return f'c{self.n}'

    def op(self, op_type, *inputs, outputs=1, domain='', **attrs):
        self.n += 1
        outs = [f'{op_type.lower()}{self.n}_{k}' for k in range(outputs)]
        self.nodes.append(oh.make_node(op_type, list(inputs), outs, domain=domain or None, **attrs))
        return outs[0] if outputs == 1 else outs

    def dq(self, x, scale, zp, dtype=np.uint8):
        return self.op('DequantizeLinear', x, self.const(np.float32(scale)), self.const(dtype(zp)))

    def q(self, x, scale, zp, dtype=np.uint8):
        return self.op('QuantizeLinear', x, self.const(np.float32(scale)), self.const(dtype(zp)))

    def build(self, outputs, opset=17):
        g = oh.make_graph(self.nodes, 'rules', self.inputs,
                          [oh.make_tensor_value_info(y, TP.UNDEFINED, None) for y in outputs],
                          self.inits)
        m = oh.make_model(g, opset_imports=[oh.make_opsetid('', opset),
                                            oh.make_opsetid('com.microsoft', 1)])
        m.ir_version = 8 if opset < 19 else 9
        return m.SerializeToString()

    def ops(self):
        counts = {}
        for n in self.nodes:
            counts[n.op_type] = counts.get(n.op_type, 0) + 1
        return counts


def rewrite(model, level=ALL):
    """(the rules that fired, the op counts of the graph they made, the graph's node count before)
    for `model` prepared on the CPU at `level`."""
    lines = []
    ort.set_default_logger_callback(lambda sev, cat, logid, loc, msg: lines.append(msg))
    try:
        so = ort.SessionOptions()
        so.log_severity_level = 0
        so.graph_optimization_level = level
        sess = ort.InferenceSession(model, so, providers=['CPUExecutionProvider'])
    finally:
        ort.set_default_logger_callback(None)
    fired = [m.group(1) for m in map(RULE_LINE.match, lines) if m]
    graphs = [m for m in map(GRAPH_LINE.match, lines) if m]
    assert len(graphs) == 1, lines
    counts = {}
    for item in filter(None, graphs[0].group(4).split(', ')):
        op, count = item.rsplit(' ', 1)
        counts[op] = int(count)
    assert sum(counts.values()) == int(graphs[0].group(3))
    return fired, counts, int(graphs[0].group(2)), sess


def outputs(model, feed, level):
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    return ort.InferenceSession(model, so, providers=['CPUExecutionProvider']).run(None, feed)


def rng():
    return np.random.default_rng(5)


# ---- the cases: rule -> (model, feed, op counts after, tolerance of the outputs against the
# graph as written: (rtol, atol) for floats, steps for 8-bit results)

def gelu_erf():
    m = Model()
    x = m.input('x', TP.FLOAT, [2, 16])
    a = m.op('Add', m.op('Erf', m.op('Div', x, m.const(np.float32(math.sqrt(2))))),
             m.const(np.float32(1)))
    y = m.op('Mul', m.op('Mul', x, a), m.const(np.float32(0.5)))
    return m, [y], {'x': rng().standard_normal((2, 16)).astype(np.float32)}, {'Gelu': 1}, (1e-5, 1e-6)


def gelu_tanh():
    m = Model()
    x = m.input('x', TP.FLOAT, [2, 16])
    cube = m.op('Mul', m.op('Pow', x, m.const(np.float32(3))), m.const(np.float32(0.044715)))
    t = m.op('Tanh', m.op('Mul', m.op('Add', x, cube), m.const(np.float32(math.sqrt(2 / math.pi)))))
    h = m.op('Mul', x, m.const(np.float32(0.5)))  # (x * 0.5) * (1 + tanh)
    y = m.op('Mul', h, m.op('Add', t, m.const(np.float32(1))))
    return m, [y], {'x': rng().standard_normal((2, 16)).astype(np.float32)}, {'Gelu': 1}, (1e-5, 1e-6)


def swish():
    m = Model()
    x = m.input('x', TP.FLOAT, [2, 16])
    y = m.op('Mul', m.op('Sigmoid', x), x)
    return m, [y], {'x': rng().standard_normal((2, 16)).astype(np.float32)}, {'Swish': 1}, (1e-5, 1e-6)


def layer_norm():
    m = Model()
    x = m.input('x', TP.FLOAT, [2, 3, 8])
    d = m.op('Sub', x, m.op('ReduceMean', x, axes=[-1]))
    var = m.op('ReduceMean', m.op('Pow', d, m.const(np.float32(2))), axes=[-1])
    n = m.op('Div', d, m.op('Sqrt', m.op('Add', var, m.const(np.float32(1e-5)))))
    g, b = rng().standard_normal((2, 8)).astype(np.float32)
    y = m.op('Add', m.op('Mul', n, m.const(g)), m.const(b))
    return (m, [y], {'x': rng().standard_normal((2, 3, 8)).astype(np.float32)},
            {'LayerNormalization': 1}, (1e-4, 1e-5))


def global_average_pool():
    m = Model()
    x = m.input('x', TP.FLOAT, [1, 4, 5, 5])
    y = m.op('ReduceMean', x, axes=[2, 3], keepdims=1)
    return (m, [y], {'x': rng().standard_normal((1, 4, 5, 5)).astype(np.float32)},
            {'GlobalAveragePool': 1}, (1e-5, 1e-6))


def sink_transpose():
    # torch's MultiheadAttention: [S, B, E] to [B, S, E], the packed projection, q, k, v gathered
    m = Model()
    s, b, e = 5, 2, 8
    x = m.input('x', TP.FLOAT, [s, b, e])
    w = rng().standard_normal((e, 3 * e)).astype(np.float32)
    proj = m.op('Add', m.op('MatMul', m.op('Transpose', x, perm=[1, 0, 2]), m.const(w)),
                m.const(rng().standard_normal(3 * e).astype(np.float32)))
    packed = m.op('Reshape', proj, m.const(np.array([b, s, 3, e], np.int64)))
    qkv = [m.op('Gather', packed, m.const(np.int64(k)), axis=2) for k in range(3)]
    # the same ops in another order: the Transpose after the product
    return (m, qkv, {'x': rng().standard_normal((s, b, e)).astype(np.float32)},
            {'Transpose': 1, 'MatMul': 1, 'Add': 1, 'Reshape': 1, 'Gather': 3}, (1e-5, 1e-5))


def gather_transposed_weight():
    # tied embeddings as onnxruntime-genai's builder writes them: the table is the transposed
    # output projection's weight; indices of rank 2, negative ones included
    m = Model()
    w = rng().standard_normal((6, 40)).astype(np.float32)
    ids = m.input('ids', TP.INT64, [2, 3])
    wc = m.const(w)
    emb = m.op('Gather', m.op('Transpose', wc, perm=[1, 0]), ids)
    logits = m.op('MatMul', emb, wc)  # the projection reads the same weight as stored
    return (m, [emb, logits], {'ids': np.array([[0, 5, 39], [-1, -40, 7]], np.int64)},
            {'Gather': 1, 'Transpose': 1, 'MatMul': 1}, (0, 0))


def gather_nbits_weight():
    # a tied int4 embedding as onnxruntime-genai's builder writes it: the table is the output
    # projection's codes reshaped to rows, with the projection's scales and zero points; the rows
    # come out of the product's weight exactly (tolerance 0), negative indices included
    m = Model()
    n, k, block = 40, 64, 32
    codes = rng().integers(0, 256, (n, k // block, block // 2)).astype(np.uint8)
    scales = (rng().random((n, k // block)) * 0.05 + 0.01).astype(np.float32)
    zp = rng().integers(0, 256, (n, 1)).astype(np.uint8)
    ids = m.input('ids', TP.INT64, [2, 3])
    a = m.input('a', TP.FLOAT, [2, k])
    bc, sc, zc = m.const(codes), m.const(scales), m.const(zp)
    logits = m.op('MatMulNBits', a, bc, sc, zc, domain='com.microsoft', K=k, N=n, bits=4,
                  block_size=block, accuracy_level=4)
    table = m.op('Reshape', bc, m.const(np.array([n, k // 2], np.int64)))
    emb = m.op('GatherBlockQuantized', table, ids, sc, zc, domain='com.microsoft', bits=4,
               block_size=block, gather_axis=0, quantize_axis=1)
    feed = {'ids': np.array([[0, 5, 39], [-1, -40, 7]], np.int64),
            'a': rng().standard_normal((2, k)).astype(np.float32)}
    return (m, [emb, logits], feed,
            {'ai.onyx:GatherNBits': 1, 'com.microsoft:MatMulNBits': 1}, (0, 0))


def rows_before_product():
    # the same module's output: heads [B, H, S, D] to [S, B, H, D], rows, out-projection, [B, S, E]
    m = Model()
    bb, h, s, d = 2, 2, 3, 4
    e = h * d
    x = m.input('x', TP.FLOAT, [bb, h, s, d])
    rows = m.op('Reshape', m.op('Transpose', x, perm=[2, 0, 1, 3]), m.const(np.array([s * bb, e], np.int64)))
    prod = m.op('Gemm', rows, m.const(rng().standard_normal((e, e)).astype(np.float32)),
                m.const(rng().standard_normal(e).astype(np.float32)), transB=1)
    y = m.op('Transpose', m.op('Reshape', prod, m.const(np.array([s, bb, e], np.int64))), perm=[1, 0, 2])
    # the rows taken as they come: Transpose(x, p'), Reshape, MatMul by W^T (its Transpose folds), + C
    return (m, [y], {'x': rng().standard_normal((bb, h, s, d)).astype(np.float32)},
            {'Transpose': 2, 'Reshape': 1, 'MatMul': 1, 'Add': 1}, (1e-5, 1e-5))


def patch_embedding():
    m = Model()
    x = m.input('x', TP.FLOAT, [1, 3, 16, 16])
    w = rng().standard_normal((8, 3, 4, 4)).astype(np.float32)
    c = m.op('Conv', x, m.const(w), m.const(rng().standard_normal(8).astype(np.float32)),
             kernel_shape=[4, 4], strides=[4, 4])
    y = m.op('Transpose', m.op('Reshape', c, m.const(np.array([1, 8, 16], np.int64))), perm=[0, 2, 1])
    return (m, [y], {'x': rng().standard_normal((1, 3, 16, 16)).astype(np.float32)},
            {'Reshape': 4, 'Transpose': 1, 'Gemm': 1}, (1e-4, 1e-4))


def u8(shape):
    return rng().integers(0, 256, shape).astype(np.uint8)


def qdq_table():
    m = Model()
    x = m.input('x', TP.UINT8, [1, 4, 6, 6])
    y = m.q(m.op('Sigmoid', m.dq(x, 0.05, 128)), 1 / 256, 0)
    # the lookup, and the copies of the unit's nodes that compute its table on the 256 codes (plan
    # time folds them)
    return (m, [y], {'x': u8((1, 4, 6, 6))},
            {'ai.onyx:LookupTable': 1, 'DequantizeLinear': 1, 'Sigmoid': 1, 'QuantizeLinear': 1}, 0)


def qop(m, op, *ins):
    """com.microsoft QLinear`op` of (value, scale, zero point) triples, to (scale, zero point)."""
    args = []
    for v, scale, zp in ins[:-1]:
        args += [v, m.const(np.float32(scale)), m.const(np.uint8(zp))]
    scale, zp = ins[-1]
    return m.op(f'QLinear{op}', *args, m.const(np.float32(scale)), m.const(np.uint8(zp)),
                domain='com.microsoft')


def qop_table():
    # QOperator SiLU, x * QLinearSigmoid(x), then an Add of a quantized one-element constant: one
    # table of x
    m = Model()
    x = m.input('x', TP.UINT8, [1, 4, 6, 6])
    s = qop(m, 'Sigmoid', (x, 0.05, 128), (1 / 256, 0))
    xs = qop(m, 'Mul', (x, 0.05, 128), (s, 1 / 256, 0), (0.03, 20))
    y = qop(m, 'Add', (xs, 0.03, 20), (m.const(np.full((1, 1, 1, 1), 200, np.uint8)), 0.01, 0),
            (0.04, 10))
    # the lookup, and the copies of the unit's nodes that compute its table on the 256 codes
    return (m, [y], {'x': u8((1, 4, 6, 6))},
            {'ai.onyx:LookupTable': 1, 'com.microsoft:QLinearSigmoid': 1,
             'com.microsoft:QLinearMul': 1, 'com.microsoft:QLinearAdd': 1}, 0)


def test_qop_table_takes_in_a_qdq_table():
    # QOperator GELU: the QDQ table of the Erf (the patterns' LookupTable, a pass before), then an
    # Add of a quantized 1, the product with x and one with a quantized 0.5: one table of x
    m = Model()
    x = m.input('x', TP.UINT8, [1, 4, 6, 6])
    erf = m.q(m.op('Erf', m.op('Div', m.dq(x, 0.05, 128), m.const(np.float32(math.sqrt(2))))),
              1 / 128, 128)
    one = (m.const(np.full((1, 1, 1, 1), 255, np.uint8)), 1 / 255, 0)
    a = qop(m, 'Add', (erf, 1 / 128, 128), one, (2 / 255, 0))
    xa = qop(m, 'Mul', (x, 0.05, 128), (a, 2 / 255, 0), (0.04, 100))
    y = qop(m, 'Mul', (xa, 0.04, 100), (m.const(np.uint8(255)), 0.5 / 255, 0), (0.02, 100))
    model = m.build([y])
    fired, after, _, _ = rewrite(model)
    assert sorted(fired) == ['qdq_table', 'qop_table']
    # the lookup, the QDQ table's copies below its own lookup, which the QOperator table's copies
    # read
    assert after == {'ai.onyx:LookupTable': 2, 'DequantizeLinear': 1, 'Div': 1, 'Erf': 1,
                     'QuantizeLinear': 1, 'com.microsoft:QLinearAdd': 1,
                     'com.microsoft:QLinearMul': 2}
    feed = {'x': np.arange(256, dtype=np.uint8).reshape(1, 4, 8, 8)[:, :, :6, :6].copy()}
    assert np.array_equal(outputs(model, feed, ALL)[0], outputs(model, feed, PLAIN)[0])


def test_qop_table_not_of_two_tensors():
    # the squeeze-and-excitation product x * Sigmoid(s): only the Sigmoid is a table of s
    m = Model()
    x = m.input('x', TP.UINT8, [1, 4, 6, 6])
    se = m.input('s', TP.UINT8, [1, 4, 1, 1])
    s = qop(m, 'Sigmoid', (se, 0.05, 128), (1 / 256, 0))
    y = qop(m, 'Mul', (x, 0.05, 128), (s, 1 / 256, 0), (0.03, 20))
    fired, after, _, _ = rewrite(m.build([y]))
    assert fired == ['qop_table']
    assert after == {'ai.onyx:LookupTable': 1, 'com.microsoft:QLinearSigmoid': 1,
                     'com.microsoft:QLinearMul': 1}


def test_qop_table_stops_at_a_value_read_elsewhere():
    # the Sigmoid's result is a graph output too: the product is a table of x and it, not of x
    # alone; the Sigmoid alone is one of x
    m = Model()
    x = m.input('x', TP.UINT8, [2, 8])
    s = qop(m, 'Sigmoid', (x, 0.05, 128), (1 / 256, 0))
    y = qop(m, 'Mul', (x, 0.05, 128), (s, 1 / 256, 0), (0.03, 20))
    model = m.build([y, s])
    fired, after, _, _ = rewrite(model)
    assert fired == ['qop_table']
    assert after['com.microsoft:QLinearMul'] == 1 and after['ai.onyx:LookupTable'] == 1
    feed = {'x': u8((2, 8))}
    for g, p in zip(outputs(model, feed, ALL), outputs(model, feed, PLAIN)):
        assert np.array_equal(g, p)

def qdq_conv():
    m = Model()
    x = m.input('x', TP.UINT8, [1, 4, 6, 6])
    w = m.dq(m.const(rng().integers(-100, 100, (8, 4, 3, 3)).astype(np.int8)), 0.01, 0, np.int8)
    bias = m.op('DequantizeLinear', m.const(rng().integers(-500, 500, 8).astype(np.int32)),
                m.const(np.float32(np.float32(0.05) * np.float32(0.01))), m.const(np.int32(0)))
    y = m.q(m.op('Conv', m.dq(x, 0.05, 128), w, bias, pads=[1, 1, 1, 1]), 0.2, 128)
    return m, [y], {'x': u8((1, 4, 6, 6))}, {'QLinearConv': 1}, 1


def qdq_matmul():
    m = Model()
    a = m.input('a', TP.UINT8, [3, 4])
    b = m.dq(m.const(rng().integers(0, 256, (4, 5)).astype(np.uint8)), 0.02, 120)
    y = m.q(m.op('MatMul', m.dq(a, 0.05, 128), b), 0.3, 128)
    return m, [y], {'a': u8((3, 4))}, {'QLinearMatMul': 1}, 1


def qdq_gemm():
    m = Model()
    a = m.input('a', TP.UINT8, [3, 4])
    b = m.dq(m.const(rng().integers(-100, 100, (5, 4)).astype(np.int8)), 0.02, 0, np.int8)
    c = m.op('DequantizeLinear', m.const(rng().integers(-200, 200, 5).astype(np.int32)),
             m.const(np.float32(np.float32(0.05) * np.float32(0.02))), m.const(np.int32(0)))
    y = m.q(m.op('Gemm', m.dq(a, 0.05, 128), b, c, transB=1), 0.3, 128)
    return m, [y], {'a': u8((3, 4))}, {'com.microsoft:QGemm': 1}, 1


def qdq_float_gemm():
    # a classifier's: the float result of the Gemm is the graph's
    m = Model()
    a = m.input('a', TP.UINT8, [3, 4])
    b = m.dq(m.const(rng().integers(-100, 100, (5, 4)).astype(np.int8)), 0.02, 0, np.int8)
    y = m.op('Gemm', m.dq(a, 0.05, 128), b, transB=1)
    return m, [y], {'a': u8((3, 4))}, {'com.microsoft:QGemm': 1}, (1e-5, 1e-5)


def qdq_binary(op):
    def case():
        m = Model()
        a, b = m.input('a', TP.UINT8, [2, 8]), m.input('b', TP.UINT8, [2, 8])
        y = m.q(m.op(op, m.dq(a, 0.05, 128), m.dq(b, 0.03, 100)), 0.1 if op == 'Add' else 0.2, 128)
        return m, [y], {'a': u8((2, 8)), 'b': u8((2, 8))}, {f'com.microsoft:QLinear{op}': 1}, 1
    return case


def qdq_sigmoid():
    # only where the table cannot take the unit: x a constant, of which no table is made
    m = Model()
    c = m.const(rng().integers(0, 256, (2, 8)).astype(np.uint8))
    x = m.input('x', TP.UINT8, [2, 8])
    s = m.q(m.op('Sigmoid', m.dq(c, 0.05, 128)), 1 / 256, 0)
    y = m.op('Concat', s, x, axis=0)
    return m, [y], {'x': u8((2, 8))}, {'com.microsoft:QLinearSigmoid': 1, 'Concat': 1}, 1


def qdq_max_pool():
    m = Model()
    x = m.input('x', TP.UINT8, [1, 4, 6, 6])
    y = m.q(m.op('MaxPool', m.dq(x, 0.05, 128), kernel_shape=[2, 2], strides=[2, 2]), 0.05, 128)
    return m, [y], {'x': u8((1, 4, 6, 6))}, {'MaxPool': 1}, 0


def qdq_global_average_pool():
    m = Model()
    x = m.input('x', TP.UINT8, [1, 4, 6, 6])
    y = m.q(m.op('GlobalAveragePool', m.dq(x, 0.05, 128)), 0.02, 128)
    return m, [y], {'x': u8((1, 4, 6, 6))}, {'com.microsoft:QLinearGlobalAveragePool': 1}, 1


def qdq_average_pool():
    m = Model()
    x = m.input('x', TP.UINT8, [1, 4, 6, 6])
    y = m.q(m.op('AveragePool', m.dq(x, 0.05, 128), kernel_shape=[2, 2]), 0.04, 128)
    return m, [y], {'x': u8((1, 4, 6, 6))}, {'com.microsoft:QLinearAveragePool': 1}, 1


def qdq_softmax():
    m = Model()
    x = m.input('x', TP.UINT8, [2, 8])
    y = m.q(m.op('Softmax', m.dq(x, 0.05, 128), axis=-1), 1 / 256, 0)
    return m, [y], {'x': u8((2, 8))}, {'com.microsoft:QLinearSoftmax': 1}, 1


def qdq_concat():
    # one scale and zero point: the bytes are joined; another: requantized
    m = Model()
    a, b = m.input('a', TP.UINT8, [2, 8]), m.input('b', TP.UINT8, [2, 8])
    same = m.q(m.op('Concat', m.dq(a, 0.05, 128), m.dq(b, 0.05, 128), axis=0), 0.05, 128)
    other = m.q(m.op('Concat', m.dq(a, 0.05, 128), m.dq(b, 0.03, 100), axis=0), 0.06, 110)
    return (m, [same, other], {'a': u8((2, 8)), 'b': u8((2, 8))},
            {'Concat': 1, 'com.microsoft:QLinearConcat': 1}, 1)


def qdq_move():
    m = Model()
    x = m.input('x', TP.UINT8, [1, 4, 6, 6])
    y = m.q(m.op('Transpose', m.dq(x, 0.05, 128), perm=[0, 2, 3, 1]), 0.05, 128)
    return m, [y], {'x': u8((1, 4, 6, 6))}, {'Transpose': 1}, 0


def dynamic_quant_matmul():
    m = Model()
    x = m.input('x', TP.FLOAT, [3, 4])

    def product(x, k, q=None):
        """x's ([3, k]) dynamically quantized product, scaled and biased, as quantize_dynamic
        writes it"""
        q, s, z = q or m.op('DynamicQuantizeLinear', x, outputs=3)
        w = m.const(rng().integers(-100, 100, (k, 5)).astype(np.int8))
        acc = m.op('Cast', m.op('MatMulInteger', q, w, z, m.const(np.int8(0))), to=TP.FLOAT)
        scaled = m.op('Mul', acc, m.op('Mul', s, m.const(np.float32(0.02))))
        return m.op('Add', scaled, m.const(rng().standard_normal(5).astype(np.float32)))

    # x's quantization feeds another product too: it stays, the product becomes
    # MatMulIntegerToFloat; y's feeds one product alone: both become one DynamicQuantizeMatMul
    q = m.op('DynamicQuantizeLinear', x, outputs=3)
    other = m.op('MatMulInteger', q[0], m.const(rng().integers(-100, 100, (4, 2)).astype(np.int8)), q[2])
    y = product(x, 4, q)
    return (m, [product(m.op('Tanh', y), 5), other], {'x': rng().standard_normal((3, 4)).astype(np.float32)},
            {'DynamicQuantizeLinear': 1, 'com.microsoft:MatMulIntegerToFloat': 1, 'MatMulInteger': 1,
             'com.microsoft:DynamicQuantizeMatMul': 1, 'Tanh': 1}, (1e-5, 1e-5))


def common_subexpression():
    m = Model()
    x = m.input('x', TP.FLOAT, [2, 8])
    y = m.op('Add', m.op('Relu', x), m.op('Relu', x))
    return (m, [y], {'x': rng().standard_normal((2, 8)).astype(np.float32)},
            {'Relu': 1, 'Identity': 1, 'Add': 1}, (0, 0))


def float16_as_float():
    m = Model()
    x = m.input('x', TP.FLOAT16, [2, 8])
    y = m.op('Relu', m.op('Mul', x, x))
    # a Cast to float where float16 enters, the float ops, a Cast back where it leaves
    return (m, [y], {'x': rng().standard_normal((2, 8)).astype(np.float16)},
            {'Cast': 2, 'Mul': 1, 'Relu': 1}, (1e-3, 1e-3))


CASES = {
    'qdq_table': qdq_table, 'qop_table': qop_table, 'layer_norm': layer_norm, 'global_average_pool': global_average_pool,
    'gelu_erf': gelu_erf, 'gelu_tanh': gelu_tanh, 'patch_embedding': patch_embedding,
    'qdq_conv': qdq_conv, 'qdq_matmul': qdq_matmul, 'qdq_gemm': qdq_gemm,
    'qdq_add': qdq_binary('Add'), 'qdq_mul': qdq_binary('Mul'), 'qdq_sigmoid': qdq_sigmoid,
    'qdq_max_pool': qdq_max_pool, 'qdq_global_average_pool': qdq_global_average_pool,
    'qdq_concat': qdq_concat, 'qdq_average_pool': qdq_average_pool, 'qdq_softmax': qdq_softmax,
    'qdq_move': qdq_move, 'qdq_float_gemm': qdq_float_gemm,
    'dynamic_quant_matmul': dynamic_quant_matmul, 'sink_transpose': sink_transpose,
    'rows_before_product': rows_before_product, 'swish': swish,
    'gather_transposed_weight': gather_transposed_weight,
    'gather_nbits_weight': gather_nbits_weight,
    'common_subexpression': common_subexpression, 'float16_as_float': float16_as_float,
}


@pytest.mark.parametrize('rule', list(CASES))
def test_rule_makes_its_graph(rule):
    m, ys, feed, want, tolerance = CASES[rule]()
    model = m.build(ys)
    fired, after, before, _ = rewrite(model)
    assert before == len(m.nodes)
    assert set(fired) == {rule}, fired
    assert after == want, (m.ops(), after)
    got, plain = outputs(model, feed, ALL), outputs(model, feed, PLAIN)
    for g, p in zip(got, plain):
        assert g.dtype == p.dtype and g.shape == p.shape
        if isinstance(tolerance, int):  # 8-bit results: within that many quantization steps
            assert np.abs(g.astype(int) - p.astype(int)).max() <= tolerance
        else:
            np.testing.assert_allclose(g.astype(np.float64), p.astype(np.float64),
                                       rtol=tolerance[0], atol=tolerance[1])


def test_each_rule_fires_once_per_match():
    # two GELUs (of two inputs: one would repeat the other), one SiLU: three changes logged
    m = Model()
    x = m.input('x', TP.FLOAT, [2, 16])
    ys = []
    for v in (x, m.input('x2', TP.FLOAT, [2, 16])):
        a = m.op('Add', m.op('Erf', m.op('Mul', v, m.const(np.float32(math.sqrt(0.5))))),
                 m.const(np.float32(1)))
        ys.append(m.op('Mul', m.op('Mul', a, m.const(np.float32(0.5))), v))
    ys.append(m.op('Mul', x, m.op('Sigmoid', x)))
    fired, after, _, _ = rewrite(m.build(ys))
    assert sorted(fired) == ['gelu_erf', 'gelu_erf', 'swish']
    assert after == {'Gelu': 2, 'Swish': 1}


def test_a_pattern_read_elsewhere_stays():
    # the Sigmoid's result is a graph output too: replacing the product would lose it
    m = Model()
    x = m.input('x', TP.FLOAT, [2, 16])
    s = m.op('Sigmoid', x)
    y = m.op('Mul', s, x)
    fired, after, _, _ = rewrite(m.build([y, s]))
    assert fired == [] and after == {'Sigmoid': 1, 'Mul': 1}


def test_basic_level_runs_no_rule():
    m, ys, _, _, _ = gelu_erf()
    fired, after, before, _ = rewrite(m.build(ys), ort.GraphOptimizationLevel.ORT_ENABLE_BASIC)
    assert fired == [] and after == m.ops() and before == len(m.nodes)
