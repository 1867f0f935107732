"""Plans for shapes that keep changing (core/exec_run.c, generalize): after a few plans of one
input pattern, a new shape runs on one generic plan (its changing dims left unknown) instead of
building a plan per run, as a decoder's growing cache would; a shape that comes again gets a plan
of its own. Read from the verbose log's "plan: built for ..." lines; every result against numpy."""
import json

import numpy as np
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

from onyx import ort

rng = np.random.default_rng(77)


def session(nodes, inputs, outputs, inits):
    g = h.make_graph(nodes, 'g', inputs, outputs, [nh.from_array(v, k) for k, v in inits.items()])
    data = h.make_model(g, opset_imports=[h.make_opsetid('', 17)]).SerializeToString()
    lines = []
    ort.set_default_logger_callback(lambda sev, cat, logid, loc, msg: lines.append(msg))
    so = ort.SessionOptions()
    so.log_severity_level = 0
    so.intra_op_num_threads = 2
    return ort.InferenceSession(data, so, providers=['CPUExecutionProvider']), lines


def built(lines):
    got = [m[len('plan: built for '):] for m in lines if m.startswith('plan: built for ')]
    lines.clear()
    return got


def test_changing_shapes_share_a_generic_plan():
    w = rng.standard_normal((16, 24)).astype(np.float32)
    s, lines = session([h.make_node('MatMul', ['a', 'w'], ['y'])],
                       [h.make_tensor_value_info('a', TP.FLOAT, ['m', 16])],
                       [h.make_tensor_value_info('y', TP.FLOAT, ['m', 24])], {'w': w})
    try:
        built(lines)  # the one made at prepare
        plans = []
        for m in range(1, 13):
            a = rng.standard_normal((m, 16)).astype(np.float32)
            np.testing.assert_allclose(s.run(None, {'a': a})[0], a @ w, rtol=1e-5, atol=1e-5)
            plans += built(lines)
        # two shapes get plans of their own, then the generic one takes every new shape
        assert len(plans) <= 3, plans
        assert len(plans) < 12
        a = rng.standard_normal((7, 16)).astype(np.float32)  # seen before: its own plan now
        np.testing.assert_allclose(s.run(None, {'a': a})[0], a @ w, rtol=1e-5, atol=1e-5)
        assert built(lines) == ['tensor(float)[7,16]']
        s.run(None, {'a': a})
        assert built(lines) == []
    finally:
        ort.set_default_logger_callback(None)


def test_decoder_like_growing_inputs():
    # a cache that grows by one row per run, concatenated and reduced: every run a new shape
    s, lines = session([h.make_node('Concat', ['past', 'new'], ['all'], axis=1),
                        h.make_node('ReduceSum', ['all', 'axes'], ['y'], keepdims=0)],
                       [h.make_tensor_value_info('past', TP.FLOAT, [2, 'p', 8]),
                        h.make_tensor_value_info('new', TP.FLOAT, [2, 1, 8])],
                       [h.make_tensor_value_info('y', TP.FLOAT, [2, 8])],
                       {'axes': np.array([1], np.int64)})
    try:
        built(lines)
        plans = []
        past = np.zeros((2, 0, 8), np.float32)
        for _ in range(20):
            new = rng.standard_normal((2, 1, 8)).astype(np.float32)
            got = s.run(None, {'past': past, 'new': new})[0]
            past = np.concatenate([past, new], axis=1)
            np.testing.assert_allclose(got, past.sum(axis=1), rtol=1e-5, atol=1e-5)
            plans += built(lines)
        assert len(plans) <= 4, plans
    finally:
        ort.set_default_logger_callback(None)


def test_windows_resolved_per_run_on_a_generic_plan():
    # A conv's and a pool's window is resolved once per plan (core/op_params.h); a generic plan's
    # has unknown dims and each run resolves its own: SAME_UPPER's pads, ceil mode's last window
    # and dilations differ with every image size here. Against onnx's reference.
    from onnx.reference import ReferenceEvaluator
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    nodes = [h.make_node('Conv', ['x', 'w'], ['c'], auto_pad='SAME_UPPER', strides=[2, 2],
                         dilations=[1, 2]),
             h.make_node('MaxPool', ['c'], ['m'], kernel_shape=[3, 2], strides=[2, 2],
                         ceil_mode=1),
             h.make_node('AveragePool', ['x'], ['a'], kernel_shape=[2, 3], auto_pad='SAME_LOWER',
                         count_include_pad=1)]
    inputs = [h.make_tensor_value_info('x', TP.FLOAT, [1, 3, 'h', 'w'])]
    outputs = [h.make_tensor_value_info('m', TP.FLOAT, None),
               h.make_tensor_value_info('a', TP.FLOAT, None)]
    s, lines = session(nodes, inputs, outputs, {'w': w})
    g = h.make_graph(nodes, 'g', inputs, outputs, [nh.from_array(w, 'w')])
    ref = ReferenceEvaluator(h.make_model(g, opset_imports=[h.make_opsetid('', 17)]))
    try:
        generic = built(lines)  # made at prepare, its image dims unknown: the generic one
        assert generic and all('?' in p for p in generic), generic
        plans = []
        for size in range(7, 19):
            x = rng.standard_normal((1, 3, size, size + 3)).astype(np.float32)
            got, want = s.run(None, {'x': x}), ref.run(None, {'x': x})
            for a, b in zip(got, want):
                assert a.shape == b.shape
                np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)
            plans += built(lines)
        assert len(plans) <= 3, plans  # the rest ran on the generic plan
    finally:
        ort.set_default_logger_callback(None)


def test_products_and_axes_resolved_per_run_on_a_generic_plan():
    # A product's geometry and the axes of a reduction, softmax, normalization or ArgMax are
    # resolved once per plan (core/op_params.h); a generic plan's products have unknown dims and
    # each run resolves its own, as does a reduction whose axes come from an input (each run's
    # value here). Against numpy.
    b = rng.standard_normal((1, 8, 5)).astype(np.float32)  # one matrix for every batch
    scale = rng.standard_normal(5).astype(np.float32)
    nodes = [h.make_node('MatMul', ['x', 'b'], ['p']),
             h.make_node('Softmax', ['p'], ['s'], axis=1),
             h.make_node('ReduceSum', ['s', 'axes'], ['r'], keepdims=1),
             h.make_node('LayerNormalization', ['p', 'scale'], ['ln'], axis=-1),
             h.make_node('ArgMax', ['p'], ['am'], axis=1, keepdims=0)]
    inputs = [h.make_tensor_value_info('x', TP.FLOAT, ['n', 's', 8]),
              h.make_tensor_value_info('axes', TP.INT64, [1])]
    outputs = [h.make_tensor_value_info(name, t, None)
               for name, t in (('r', TP.FLOAT), ('ln', TP.FLOAT), ('am', TP.INT64))]
    s, lines = session(nodes, inputs, outputs, {'b': b, 'scale': scale})
    try:
        built(lines)
        plans = []
        for i, (n, seq) in enumerate([(1, 3), (2, 5), (3, 4), (2, 7), (4, 2), (1, 9), (3, 6)]):
            x = rng.standard_normal((n, seq, 8)).astype(np.float32)
            axis = [1, 2, -1, 0][i % 4]
            r, ln, am = s.run(None, {'x': x, 'axes': np.array([axis], np.int64)})
            p = x @ b
            e = np.exp(p - p.max(axis=1, keepdims=True))
            soft = e / e.sum(axis=1, keepdims=True)
            np.testing.assert_allclose(r, soft.sum(axis=axis, keepdims=True), rtol=1e-5,
                                       atol=1e-5)
            mean = p.mean(axis=-1, keepdims=True)
            var = ((p - mean) ** 2).mean(axis=-1, keepdims=True)
            np.testing.assert_allclose(ln, (p - mean) / np.sqrt(var + 1e-5) * scale, rtol=1e-4,
                                       atol=1e-4)
            np.testing.assert_array_equal(am, p.argmax(axis=1))
            plans += built(lines)
        assert len(plans) <= 3, plans  # the rest ran on the generic plan
    finally:
        ort.set_default_logger_callback(None)


_EPILOGUE_WEIGHTS = {'w1': rng.standard_normal((16, 80)).astype(np.float32),
                     'b1': rng.standard_normal(80).astype(np.float32),
                     'w2': rng.standard_normal((16, 72)).astype(np.float32),
                     'half': np.array(0.5, np.float32)}


def _epilogue_session(level, tmp_path=None):
    """x [1, s, 16] by constant weights, each product with an epilogue the fusion pass gives it:
    a bias and SiLU spelled out (a decoder's MLP gate), and a scalar factor then Tanh."""
    nodes = [h.make_node('MatMul', ['x', 'w1'], ['p1']),
             h.make_node('Add', ['p1', 'b1'], ['q1']),
             h.make_node('Sigmoid', ['q1'], ['s1']),
             h.make_node('Mul', ['q1', 's1'], ['y1']),
             h.make_node('MatMul', ['x', 'w2'], ['p2']),
             h.make_node('Mul', ['p2', 'half'], ['q2']),
             h.make_node('Tanh', ['q2'], ['y2'])]
    inputs = [h.make_tensor_value_info('x', TP.FLOAT, [1, 's', 16])]
    outputs = [h.make_tensor_value_info(y, TP.FLOAT, [1, 's', n]) for y, n in (('y1', 80),
                                                                               ('y2', 72))]
    g = h.make_graph(nodes, 'g', inputs, outputs,
                     [nh.from_array(v, k) for k, v in _EPILOGUE_WEIGHTS.items()])
    data = h.make_model(g, opset_imports=[h.make_opsetid('', 17)]).SerializeToString()
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    so.graph_optimization_level = level
    if tmp_path is not None:
        so.enable_profiling = True
        so.profile_file_prefix = str(tmp_path / 'profile_')
    return ort.InferenceSession(data, so, providers=['CPUExecutionProvider'])


def _steps_per_run(profile):
    """The op names of each run's steps, run by run, from a profile's events."""
    runs, steps = [], []
    with open(profile) as f:
        for e in json.load(f):
            if e.get('cat') == 'Node':
                steps.append(e['args']['op_name'])
            elif e.get('cat') == 'Session' and e.get('name') == 'model_run':
                runs.append(steps)
                steps = []
    return runs


def test_products_keep_their_epilogues_on_a_generic_plan(tmp_path):
    # A prompt of a new length runs on the generic plan: its products by constant weights take
    # the same post-ops (bias, SiLU, factor, Tanh) as a known length's: a length that comes again
    # gets its own plan, whose results are the generic plan's bits. Both within a float's last
    # bits of the unfused steps (vmath's SiLU after the product is not the Swish kernel's). One
    # row runs on the weights' panels, with the same epilogue.
    fused = _epilogue_session(ort.GraphOptimizationLevel.ORT_ENABLE_ALL, tmp_path)
    plain = _epilogue_session(ort.GraphOptimizationLevel.ORT_ENABLE_BASIC)
    lengths = [5, 9, 1, 12, 33, 7, 1, 33]
    first = {}
    for s in lengths:
        x = rng.standard_normal((1, s, 16)).astype(np.float32)
        got, want = fused.run(None, {'x': x}), plain.run(None, {'x': x})
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
        if s in first:  # its own plan now: the generic plan's bits again
            for a, b in zip(fused.run(None, {'x': first[s][0]}), first[s][1]):
                np.testing.assert_array_equal(a, b)
        else:
            first[s] = (x, got)
    runs = _steps_per_run(fused.end_profiling())
    assert len(runs) == len(lengths) + 2, len(runs)
    for steps in runs:  # every run, on the generic plan or its own, fused
        assert sorted(steps) == ['MatMul', 'MatMul'], steps
