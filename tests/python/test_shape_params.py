"""Slices, pads and depth/space blocks resolved once per plan (core/op_params.h): a Slice's bounds
or a Pad's pads that the graph computes are resolved by each run from its own inputs, and a
generic plan (dims left unknown) resolves them per run as well. Every result against numpy or
onnx's reference."""
import numpy as np
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

from onyx import ort

rng = np.random.default_rng(33)


def session(nodes, inputs, outputs, inits, opset=18):
    g = h.make_graph(nodes, 'g', inputs, outputs, [nh.from_array(v, k) for k, v in inits.items()])
    model = h.make_model(g, opset_imports=[h.make_opsetid('', opset)])
    lines = []
    ort.set_default_logger_callback(lambda sev, cat, logid, loc, msg: lines.append(msg))
    so = ort.SessionOptions()
    so.log_severity_level = 0
    so.intra_op_num_threads = 2
    s = ort.InferenceSession(model.SerializeToString(), so, providers=['CPUExecutionProvider'])
    return s, lines, model


def built(lines):
    got = [m[len('plan: built for '):] for m in lines if m.startswith('plan: built for ')]
    lines.clear()
    return got


def test_slice_bounds_computed_by_the_graph():
    # starts = s + 1 is known only when the run has s: each run resolves its own slice
    nodes = [h.make_node('Add', ['s', 'one'], ['starts']),
             h.make_node('Slice', ['x', 'starts', 'ends', 'axes', 'steps'], ['y'])]
    inputs = [h.make_tensor_value_info('x', TP.FLOAT, [4, 10]),
              h.make_tensor_value_info('s', TP.INT64, [1])]
    outputs = [h.make_tensor_value_info('y', TP.FLOAT, None)]
    inits = {'one': np.array([1], np.int64), 'ends': np.array([100], np.int64),
             'axes': np.array([-1], np.int64), 'steps': np.array([2], np.int64)}
    s, _, _ = session(nodes, inputs, outputs, inits)
    try:
        x = rng.standard_normal((4, 10)).astype(np.float32)
        for start in (-12, -5, -1, 0, 3, 8, 9, 20):
            got = s.run(None, {'x': x, 's': np.array([start], np.int64)})[0]
            np.testing.assert_array_equal(got, x[:, start + 1:100:2])
    finally:
        ort.set_default_logger_callback(None)


def test_pads_computed_by_the_graph():
    # the pads are a graph input: each run resolves its own, reflect and constant alike
    nodes = [h.make_node('Pad', ['x', 'pads', 'value', 'axes'], ['r'], mode='reflect'),
             h.make_node('Pad', ['x', 'pads', 'value', 'axes'], ['c'], mode='constant')]
    inputs = [h.make_tensor_value_info('x', TP.FLOAT, [2, 5, 4]),
              h.make_tensor_value_info('pads', TP.INT64, [4])]
    outputs = [h.make_tensor_value_info('r', TP.FLOAT, None),
               h.make_tensor_value_info('c', TP.FLOAT, None)]
    inits = {'value': np.array(7, np.float32), 'axes': np.array([2, 1], np.int64)}
    s, _, _ = session(nodes, inputs, outputs, inits)
    try:
        x = rng.standard_normal((2, 5, 4)).astype(np.float32)
        for p in ([0, 0, 0, 0], [1, 2, 3, 0], [3, 4, 2, 1], [0, 1, 1, 3]):
            got_r, got_c = s.run(None, {'x': x, 'pads': np.array(p, np.int64)})
            width = [(0, 0), (p[1], p[3]), (p[0], p[2])]  # axes 2 then 1
            np.testing.assert_array_equal(got_r, np.pad(x, width, mode='reflect'))
            np.testing.assert_array_equal(got_c, np.pad(x, width, constant_values=7))
        # a crop (negative pad) takes elements off instead
        got_c = s.run(None, {'x': x, 'pads': np.array([-1, 0, 0, -2], np.int64)})[1]
        np.testing.assert_array_equal(got_c, x[:, :3, 1:])
    finally:
        ort.set_default_logger_callback(None)


def test_shape_params_resolved_per_run_on_a_generic_plan():
    # A generic plan's image dims are unknown: each run resolves its slice (negative bounds and a
    # negative step clamp differently for every size), its edge pads and its blocks.
    from onnx.reference import ReferenceEvaluator
    nodes = [h.make_node('DepthToSpace', ['x'], ['d'], blocksize=2, mode='CRD'),
             h.make_node('Slice', ['d', 'starts', 'ends', 'axes', 'steps'], ['s']),
             h.make_node('Pad', ['s', 'pads'], ['p'], mode='edge'),
             h.make_node('SpaceToDepth', ['p'], ['y'], blocksize=2)]
    inputs = [h.make_tensor_value_info('x', TP.FLOAT, [1, 8, 'h', 'w'])]
    outputs = [h.make_tensor_value_info('y', TP.FLOAT, None)]
    inits = {'starts': np.array([-2, 1], np.int64), 'ends': np.array([-100, -1], np.int64),
             'axes': np.array([3, 2], np.int64), 'steps': np.array([-1, 1], np.int64),
             'pads': np.array([0, 0, 1, 0, 0, 0, 1, 1], np.int64)}
    s, lines, model = session(nodes, inputs, outputs, inits, opset=13)
    ref = ReferenceEvaluator(model)
    try:
        generic = built(lines)  # made at prepare, its image dims unknown: the generic one
        assert generic and all('?' in p for p in generic), generic
        plans = []
        for size in range(2, 12):
            x = rng.standard_normal((1, 8, size, size + 1)).astype(np.float32)
            got, want = s.run(None, {'x': x})[0], ref.run(None, {'x': x})[0]
            assert got.shape == want.shape
            np.testing.assert_array_equal(got, want)
            plans += built(lines)
        assert len(plans) <= 3, plans  # the rest ran on the generic plan
    finally:
        ort.set_default_logger_callback(None)
