"""Only a run's worker threads are placed (core/parallel.cc keeps them off the caller's CPU): the
thread that calls run keeps the affinity it had. A caller that picked up one of the workers'
queued spinners while it waited inside a oneDNN convolution was once taken for a worker and held
off its own CPU, with its one worker beside it: both on one core, every run at one thread's speed.
The run that showed it: six 3x3 convolutions, two threads, short pauses between runs."""
import os
import time

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper

import onyx.ort as ort


def _conv_chain():
    rng = np.random.default_rng(0)
    nodes, weights, prev = [], [], 'x'
    for i in range(6):
        weights.append(numpy_helper.from_array(
            rng.standard_normal((32, 32, 3, 3)).astype(np.float32), f'w{i}'))
        nodes += [h.make_node('Conv', [prev, f'w{i}'], [f'c{i}'], pads=[1, 1, 1, 1]),
                  h.make_node('Relu', [f'c{i}'], [f'r{i}'])]
        prev = f'r{i}'
    graph = h.make_graph(nodes, 'g', [h.make_tensor_value_info('x', TP.FLOAT, [1, 32, 28, 28])],
                         [h.make_tensor_value_info(prev, TP.FLOAT, None)], weights)
    return h.make_model(graph, opset_imports=[h.make_opsetid('', 17)]).SerializeToString()


def test_caller_keeps_its_cpus():
    own = os.sched_getaffinity(0)
    if len(own) < 2:
        pytest.skip('one CPU: no thread is ever placed')
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 2
    sess = ort.InferenceSession(_conv_chain(), opts)
    x = np.random.default_rng(1).standard_normal((1, 32, 28, 28)).astype(np.float32)
    try:
        for run in range(300):
            sess.run(None, {'x': x})
            if run % 4 == 3:
                time.sleep(0.001 * (run % 7))  # pauses past the spin: the worker sleeps
            assert os.sched_getaffinity(0) == own, f'the caller was placed at run {run}'
    finally:
        os.sched_setaffinity(0, own)
