# Control-flow family cases: If, Loop, Scan, SequenceMap, sequence and optional ops. Where the
# reference evaluator cannot run a case (Scan-8) or the result is plain to see, the expectation
# is written by hand.
import numpy as np
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

from common import Opt, reference


def vi(name, elem, shape=None):
    return h.make_tensor_value_info(name, elem, shape)


def seqvi(name, elem, shape=None):
    return h.make_tensor_sequence_value_info(name, elem, shape)


def optvi(name, elem, shape=None):
    return h.make_value_info(name, h.make_optional_type_proto(h.make_tensor_type_proto(elem, shape)))


def save(s, name, graph, inputs, opset=17, expected=None):
    model = h.make_model(graph, opset_imports=[h.make_opsetid('', opset)], ir_version=8)
    feeds = [(i.name, v) for i, v in zip(graph.input, inputs)]
    if expected is None:
        expected = reference(model, [(n, v.value if isinstance(v, Opt) else v) for n, v in feeds])
    # onnx's checker wants a shape on every graph output; these leave out the data-dependent ones.
    s.write(f'test_ctl_{name}', model, feeds, [(o.name, v) for o, v in zip(graph.output, expected)], check=False)


def loops(s):
    # Loop: carried x (Identity), scan outputs of the iteration number and of x, a carried sequence
    body = h.make_graph([
        h.make_node('Identity', ['cin'], ['cout']),
        h.make_node('Identity', ['x_in'], ['x_out']),
        h.make_node('SequenceInsert', ['s_in', 'x_in'], ['s_out']),
        h.make_node('Identity', ['i'], ['scan_i']),
        h.make_node('Unsqueeze', ['x_in', 'ax'], ['scan_x']),
        h.make_node('Concat', ['x_in', 'x_in'], ['x2'], axis=0),
    ], 'body', [vi('i', TP.INT64, []), vi('cin', TP.BOOL, []), vi('x_in', TP.FLOAT, [2]), seqvi('s_in', TP.FLOAT)],
        [vi('cout', TP.BOOL, []), vi('x_out', TP.FLOAT, [2]), seqvi('s_out', TP.FLOAT), vi('scan_i', TP.INT64, []),
         vi('scan_x', TP.FLOAT, [1, 2])],
        [nh.from_array(np.array([0], np.int64), 'ax')])
    g = h.make_graph([
        h.make_node('SequenceEmpty', [], ['s0'], dtype=TP.FLOAT),
        h.make_node('Loop', ['M', 'c', 'x', 's0'], ['xf', 'sf', 'si', 'sx'], body=body),
        h.make_node('ConcatFromSequence', ['sf'], ['cat'], axis=0, new_axis=1),
    ], 'g', [vi('M', TP.INT64, []), vi('c', TP.BOOL, []), vi('x', TP.FLOAT, [2])],
        [vi('xf', TP.FLOAT, [2]), vi('si', TP.INT64, None), vi('sx', TP.FLOAT, None), vi('cat', TP.FLOAT, None)])
    for nm, M in (('loop_scan', 5), ('loop_scan_long', 100)):
        x = np.array([1, 2], np.float32)
        save(s, nm, g, [np.array(M, np.int64), np.array(True), x],
             expected=[x, np.arange(M, dtype=np.int64), np.tile(x, (M, 1, 1)), np.tile(x, (M, 1))])

    # Zero iterations (by trip count or by the initial condition): empty scan outputs
    g0 = h.make_graph([
        h.make_node('SequenceEmpty', [], ['s0'], dtype=TP.FLOAT),
        h.make_node('Loop', ['M', 'c', 'x', 's0'], ['xf', 'sf', 'si', 'sx'], body=body),
        h.make_node('SequenceLength', ['sf'], ['n']),
    ], 'g', [vi('M', TP.INT64, []), vi('c', TP.BOOL, []), vi('x', TP.FLOAT, [2])],
        [vi('xf', TP.FLOAT, [2]), vi('si', TP.INT64, None), vi('sx', TP.FLOAT, None), vi('n', TP.INT64, [])])
    empty = [np.array([1, 2], np.float32), np.zeros([0], np.int64), np.zeros([0, 1, 2], np.float32),
             np.array(0, np.int64)]
    save(s, 'loop_zero', g0, [np.array(0, np.int64), np.array(True), np.array([1, 2], np.float32)], expected=empty)
    save(s, 'loop_cond_false', g0, [np.array(3, np.int64), np.array(False), np.array([1, 2], np.float32)],
         expected=empty)

    # While loop: no trip count, the body's condition is false after the first iteration
    body_w = h.make_graph([
        h.make_node('Constant', [], ['f'], value=nh.from_array(np.array(False), 'f')),
        h.make_node('Concat', ['x_in', 'x_in'], ['x_out'], axis=0),
    ], 'body', [vi('i', TP.INT64, []), vi('cin', TP.BOOL, []), vi('x_in', TP.FLOAT, None)],
        [vi('f', TP.BOOL, []), vi('x_out', TP.FLOAT, None)])
    gw = h.make_graph([h.make_node('Loop', ['', 'c', 'x'], ['xf'], body=body_w)], 'g',
                      [vi('c', TP.BOOL, []), vi('x', TP.FLOAT, [2])], [vi('xf', TP.FLOAT, None)])
    save(s, 'loop_while', gw, [np.array(True), np.array([1, 2], np.float32)])

    # A carried tensor that grows each iteration, and an outer-scope value read in the body
    body_g = h.make_graph([
        h.make_node('Identity', ['cin'], ['cout']),
        h.make_node('Concat', ['x_in', 'outer'], ['x_out'], axis=0),
    ], 'body', [vi('i', TP.INT64, []), vi('cin', TP.BOOL, []), vi('x_in', TP.FLOAT, None)],
        [vi('cout', TP.BOOL, []), vi('x_out', TP.FLOAT, None)])
    gg = h.make_graph([h.make_node('Identity', ['y'], ['outer']),
                       h.make_node('Loop', ['M', '', 'x'], ['xf'], body=body_g)],
                      'g', [vi('M', TP.INT64, []), vi('x', TP.FLOAT, [2]), vi('y', TP.FLOAT, [1])],
                      [vi('xf', TP.FLOAT, None)])
    save(s, 'loop_grow', gg, [np.array(4, np.int64), np.array([1, 2], np.float32), np.array([7], np.float32)],
         expected=[np.array([1, 2, 7, 7, 7, 7], np.float32)])

    # Strings through a Loop scan output and sequences
    body_s = h.make_graph([
        h.make_node('Identity', ['cin'], ['cout']),
        h.make_node('Identity', ['x_in'], ['x_out']),
        h.make_node('Identity', ['x_in'], ['scan_x']),
    ], 'body', [vi('i', TP.INT64, []), vi('cin', TP.BOOL, []), vi('x_in', TP.STRING, [2])],
        [vi('cout', TP.BOOL, []), vi('x_out', TP.STRING, [2]), vi('scan_x', TP.STRING, [2])])
    gstr = h.make_graph([
        h.make_node('Loop', ['M', '', 'x'], ['xf', 'sx'], body=body_s),
        h.make_node('SplitToSequence', ['sx'], ['sq'], axis=1, keepdims=0),
        h.make_node('ConcatFromSequence', ['sq'], ['cat'], axis=0),
    ], 'g', [vi('M', TP.INT64, []), vi('x', TP.STRING, [2])], [vi('sx', TP.STRING, None), vi('cat', TP.STRING, None)])
    xs = np.array(['ab', 'cde'], dtype=object)
    save(s, 'strings', gstr, [np.array(3, np.int64), xs],
         expected=[np.tile(xs, (3, 1)), np.array(['ab', 'ab', 'ab', 'cde', 'cde', 'cde'], dtype=object)])


def scans(s):
    # Scan-9: input and output axes and directions
    sb = h.make_graph([
        h.make_node('Concat', ['st_in', 'a'], ['st_out'], axis=0),
        h.make_node('Identity', ['a'], ['o1']),
        h.make_node('Identity', ['b'], ['o2']),
    ], 'sb', [vi('st_in', TP.FLOAT, None), vi('a', TP.FLOAT, [2]), vi('b', TP.INT32, [3])],
        [vi('st_out', TP.FLOAT, None), vi('o1', TP.FLOAT, [2]), vi('o2', TP.INT32, [3])])
    gs = h.make_graph([h.make_node('Scan', ['s', 'A', 'B'], ['sf', 'O1', 'O2'], body=sb, num_scan_inputs=2,
                                   scan_input_axes=[1, 0], scan_input_directions=[1, 0],
                                   scan_output_axes=[-1, 0], scan_output_directions=[0, 1])], 'g',
                      [vi('s', TP.FLOAT, [1]), vi('A', TP.FLOAT, [2, 4]), vi('B', TP.INT32, [4, 3])],
                      [vi('sf', TP.FLOAT, None), vi('O1', TP.FLOAT, None), vi('O2', TP.INT32, None)])
    A = np.arange(8, dtype=np.float32).reshape(2, 4)
    B = np.arange(12, dtype=np.int32).reshape(4, 3)
    save(s, 'scan_axes', gs, [np.array([0], np.float32), A, B],
         expected=[np.concatenate([[0]] + [A[:, 3 - t] for t in range(4)]).astype(np.float32), A[:, ::-1].copy(),
                   B[::-1].copy()])

    # Scan-8 with a batch axis and sequence_lens; the reference evaluator has no Scan-8: by hand.
    # The state keeps its shape in v8, so the body swaps state and input.
    sb8 = h.make_graph([
        h.make_node('Identity', ['a'], ['st_out']),
        h.make_node('Identity', ['st_in'], ['o1']),
    ], 'sb', [vi('st_in', TP.FLOAT, [2]), vi('a', TP.FLOAT, [2])],
        [vi('st_out', TP.FLOAT, [2]), vi('o1', TP.FLOAT, [2])])
    gs8 = h.make_graph([h.make_node('Scan', ['L', 's', 'X'], ['sf', 'O'], body=sb8, num_scan_inputs=1, directions=[1])],
                       'g', [vi('L', TP.INT64, [2]), vi('s', TP.FLOAT, [2, 2]), vi('X', TP.FLOAT, [2, 3, 2])],
                       [vi('sf', TP.FLOAT, [2, 2]), vi('O', TP.FLOAT, [2, 3, 2])])
    X = np.arange(12, dtype=np.float32).reshape(2, 3, 2)
    S = np.array([[-1, -2], [-3, -4]], np.float32)
    # batch 0, length 3, reversed: states S0 -> X0[2] -> X0[1] -> X0[0]; outputs S0, X0[2], X0[1]
    # batch 1, length 2, reversed over its first 2: S1 -> X1[1] -> X1[0]; outputs S1, X1[1], then 0
    O = np.zeros((2, 3, 2), np.float32)
    O[0] = [S[0], X[0, 2], X[0, 1]]
    O[1, 0] = S[1]
    O[1, 1] = X[1, 1]
    save(s, 'scan8_lens', gs8, [np.array([3, 2], np.int64), S, X], opset=8, expected=[np.stack([X[0, 0], X[1, 0]]), O])


def sequences(s):
    # erase/at with negative positions, split by a scalar with a remainder, concat on axis -1
    gq = h.make_graph([
        h.make_node('SplitToSequence', ['x', 'two'], ['sq'], axis=1),
        h.make_node('SequenceErase', ['sq', 'm1'], ['sq2']),
        h.make_node('SequenceAt', ['sq', 'm1'], ['last']),
        h.make_node('ConcatFromSequence', ['sq2'], ['cat'], axis=-1),
        h.make_node('SequenceLength', ['sq2'], ['len']),
        h.make_node('SplitToSequence', ['x'], ['sq3'], axis=-1, keepdims=0),
        h.make_node('ConcatFromSequence', ['sq3'], ['stk'], axis=-1, new_axis=1),
        h.make_node('SequenceConstruct', ['x', 'x'], ['sq4']),
        h.make_node('SequenceInsert', ['sq4', 'x', 'one'], ['sq5']),
        h.make_node('ConcatFromSequence', ['sq5'], ['stk0'], axis=0, new_axis=1),
    ], 'g', [vi('x', TP.FLOAT, [2, 5])],
        [vi('cat', TP.FLOAT, None), vi('last', TP.FLOAT, None), vi('len', TP.INT64, []), vi('stk', TP.FLOAT, None),
         vi('stk0', TP.FLOAT, None)],
        [nh.from_array(np.array(2, np.int64), 'two'), nh.from_array(np.array(-1, np.int64), 'm1'),
         nh.from_array(np.array(1, np.int32), 'one')])
    save(s, 'seq_ops', gq, [np.arange(10, dtype=np.float32).reshape(2, 5)])

    # A sequence as graph input and output, mapped over with SequenceMap (with an extra tensor)
    mb = h.make_graph([h.make_node('Add', ['a', 'b'], ['c'])], 'mb', [vi('a', TP.FLOAT, None), vi('b', TP.FLOAT, None)],
                      [vi('c', TP.FLOAT, None)])
    gm = h.make_graph([h.make_node('SequenceMap', ['sq', 'y'], ['out'], body=mb)], 'g',
                      [seqvi('sq', TP.FLOAT), vi('y', TP.FLOAT, [1])], [seqvi('out', TP.FLOAT)])
    seq = [np.arange(3, dtype=np.float32), np.ones((2, 2), np.float32)]
    save(s, 'seq_map', gm, [seq, np.array([10], np.float32)],
         expected=[[seq[0] + 10, seq[1] + 10]])


def ifs(s):
    # If with outer-scope capture, returning sequences of different lengths
    tb = h.make_graph([h.make_node('SequenceConstruct', ['x', 'x'], ['o'])], 't', [], [seqvi('o', TP.FLOAT)])
    eb = h.make_graph([h.make_node('SequenceConstruct', ['x'], ['o'])], 'e', [], [seqvi('o', TP.FLOAT)])
    gi = h.make_graph([h.make_node('If', ['c'], ['s'], then_branch=tb, else_branch=eb),
                       h.make_node('SequenceLength', ['s'], ['n'])], 'g',
                      [vi('c', TP.BOOL, []), vi('x', TP.FLOAT, [3])], [vi('n', TP.INT64, [])])
    save(s, 'if_capture_t', gi, [np.array(True), np.array([1, 2, 3], np.float32)])
    save(s, 'if_capture_f', gi, [np.array(False), np.array([1, 2, 3], np.float32)])

    # Branches whose outputs differ in shape (and so are sized at run time)
    tb = h.make_graph([h.make_node('Concat', ['x', 'x'], ['o'], axis=0)], 't', [], [vi('o', TP.FLOAT, [6])])
    eb = h.make_graph([h.make_node('Neg', ['x'], ['o'])], 'e', [], [vi('o', TP.FLOAT, [3])])
    gi = h.make_graph([h.make_node('If', ['c'], ['y'], then_branch=tb, else_branch=eb)], 'g',
                      [vi('c', TP.BOOL, []), vi('x', TP.FLOAT, [3])], [vi('y', TP.FLOAT, None)])
    x = np.array([1, 2, 3], np.float32)
    save(s, 'if_shapes_t', gi, [np.array(True), x], expected=[np.concatenate([x, x])])
    save(s, 'if_shapes_f', gi, [np.array(False), x], expected=[-x])


def optionals(s):
    # Optional built from a tensor and empty, tested and unwrapped
    g = h.make_graph([
        h.make_node('Optional', ['x'], ['o']),
        h.make_node('OptionalHasElement', ['o'], ['has']),
        h.make_node('OptionalGetElement', ['o'], ['back']),
        h.make_node('Optional', [], ['e'], type=h.make_tensor_type_proto(TP.FLOAT, None)),
        h.make_node('OptionalHasElement', ['e'], ['has_e']),
    ], 'g', [vi('x', TP.FLOAT, [2, 2])], [vi('has', TP.BOOL, []), vi('back', TP.FLOAT, None), vi('has_e', TP.BOOL, [])])
    x = np.arange(4, dtype=np.float32).reshape(2, 2)
    save(s, 'optional_ops', g, [x], opset=18, expected=[np.array(True), x, np.array(False)])

    # An optional graph input, present and empty; OptionalHasElement-18 also takes no input at all
    g = h.make_graph([
        h.make_node('OptionalHasElement', ['o'], ['has']),
        h.make_node('OptionalHasElement', [], ['has_none']),
    ], 'g', [optvi('o', TP.FLOAT, [2])], [vi('has', TP.BOOL, []), vi('has_none', TP.BOOL, [])])
    save(s, 'optional_input_some', g, [Opt(np.array([1, 2], np.float32))], opset=18,
         expected=[np.array(True), np.array(False)])
    save(s, 'optional_input_none', g, [Opt(None)], opset=18, expected=[np.array(False), np.array(False)])

    # An optional graph output passed through (Identity-16 takes optionals)
    g = h.make_graph([h.make_node('Identity', ['o'], ['y'])], 'g', [optvi('o', TP.INT32, [3])],
                     [optvi('y', TP.INT32, [3])])
    v = np.array([4, 5, 6], np.int32)
    save(s, 'optional_identity', g, [Opt(v)], opset=18, expected=[Opt(v)])


def generate(s):
    loops(s)
    scans(s)
    sequences(s)
    ifs(s)
    optionals(s)
