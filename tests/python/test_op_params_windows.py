"""The windows of MaxUnpool, Col2Im, DeformConv and com.microsoft QLinearAveragePool, resolved once
per plan (core/op_params.h), resolved per run where the plan cannot: a generic plan's unknown
image dims, and Col2Im's image_shape given as an input rather than a constant. Every result
against onnx's reference, or, for the com.microsoft op, against a plan of known shapes."""
import numpy as np
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh
from onnx.reference import ReferenceEvaluator

from onyx import ort

rng = np.random.default_rng(33)


def session(model):
    lines = []
    ort.set_default_logger_callback(lambda sev, cat, logid, loc, msg: lines.append(msg))
    so = ort.SessionOptions()
    so.log_severity_level = 0
    so.intra_op_num_threads = 2
    return ort.InferenceSession(model.SerializeToString(), so,
                                providers=['CPUExecutionProvider']), lines


def built(lines):
    got = [m[len('plan: built for '):] for m in lines if m.startswith('plan: built for ')]
    lines.clear()
    return got


def test_windows_resolved_per_run():
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    block = np.array([2, 3], np.int64)
    nodes = [h.make_node('MaxPool', ['x'], ['p', 'i'], kernel_shape=[2, 2], strides=[2, 2]),
             h.make_node('MaxUnpool', ['p', 'i'], ['u'], kernel_shape=[2, 2], strides=[2, 2]),
             h.make_node('DeformConv', ['x', 'w', 'off'], ['d'], pads=[1, 0, 1, 2],
                         strides=[2, 1], dilations=[1, 2]),
             h.make_node('Col2Im', ['cols', 'image', 'block'], ['c'], strides=[1, 2],
                         pads=[1, 0, 0, 1])]
    inputs = [h.make_tensor_value_info('x', TP.FLOAT, [1, 3, 'h', 'w']),
              h.make_tensor_value_info('off', TP.FLOAT, [1, 18, 'oh', 'ow']),
              h.make_tensor_value_info('cols', TP.FLOAT, [1, 12, 'l']),
              h.make_tensor_value_info('image', TP.INT64, [2])]
    outputs = [h.make_tensor_value_info(n, TP.FLOAT, None) for n in ('u', 'd', 'c')]
    g = h.make_graph(nodes, 'g', inputs, outputs, [nh.from_array(w, 'w'),
                                                   nh.from_array(block, 'block')])
    model = h.make_model(g, opset_imports=[h.make_opsetid('', 19)])
    s, lines = session(model)
    ref = ReferenceEvaluator(model)
    try:
        generic = built(lines)  # made at prepare, its image dims unknown
        assert generic and all('?' in p for p in generic), generic
        plans = []
        for size in range(6, 14):
            hh, ww = 2 * size, 2 * size - 4  # even: the indices address the unpooled shape
            x = rng.standard_normal((1, 3, hh, ww)).astype(np.float32)
            oh, ow = (hh + 2 - 3) // 2 + 1, (ww + 2 - 5) + 1
            off = rng.uniform(-1.5, 1.5, (1, 18, oh, ow)).astype(np.float32)
            image = np.array([size - 1, size + 1], np.int64)
            l_ = (image[0] + 1 - 2 + 1) * ((image[1] + 1 - 3) // 2 + 1)
            cols = rng.standard_normal((1, 12, l_)).astype(np.float32)
            feed = {'x': x, 'off': off, 'cols': cols, 'image': image}
            got, want = s.run(None, feed), ref.run(None, feed)
            for a, b in zip(got, want):
                assert a.shape == b.shape
                np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)
            plans += built(lines)
        assert len(plans) <= 3, plans  # the rest ran on the generic plan
    finally:
        ort.set_default_logger_callback(None)


def qpool_model(x_shape, channels_last):
    ms = 'com.microsoft'
    node = h.make_node('QLinearAveragePool', ['x', 'xs', 'xz', 'ys', 'yz'], ['y'], domain=ms,
                       kernel_shape=[3, 2], strides=[2, 1], auto_pad='SAME_UPPER',
                       count_include_pad=1, channels_last=channels_last)
    inits = [nh.from_array(np.array(0.05, np.float32), 'xs'),
             nh.from_array(np.array(128, np.uint8), 'xz'),
             nh.from_array(np.array(0.04, np.float32), 'ys'),
             nh.from_array(np.array(120, np.uint8), 'yz')]
    g = h.make_graph([node], 'g', [h.make_tensor_value_info('x', TP.UINT8, x_shape)],
                     [h.make_tensor_value_info('y', TP.UINT8, None)], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid('', 19), h.make_opsetid(ms, 1)])


def test_qlinear_average_pool_window_per_run():
    # the generic plan's window (image dims unknown) resolved per run equals a known plan's
    for cl in (0, 1):
        xs, want = [], []
        for size in range(5, 12):
            dims = (2, size, size + 2, 5) if cl else (2, 5, size, size + 2)
            xs.append(rng.integers(0, 256, dims).astype(np.uint8))
            known = ort.InferenceSession(qpool_model(list(dims), cl).SerializeToString(),
                                         providers=['CPUExecutionProvider'])
            want.append(known.run(None, {'x': xs[-1]})[0])
        s, lines = session(qpool_model([2, 'h', 'w', 5] if cl else [2, 5, 'h', 'w'], cl))
        try:
            generic = built(lines)
            assert generic and all('?' in p for p in generic), generic
            for x, y in zip(xs, want):
                np.testing.assert_array_equal(s.run(None, {'x': x})[0], y)
            assert len(built(lines)) <= 3  # the rest ran on the generic plan
        finally:
            ort.set_default_logger_callback(None)
