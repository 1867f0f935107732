"""Device epilogues (core/fuse_device.c): on a device, a Conv takes the residual Add and the Relu
that follow it, a MatMul or Gemm its bias Add, residual Add and Relu, into its own kernel (cuDNN's convolution
with bias and activation, cuBLASLt's epilogues on CUDA). Checked on onyx's TEST device, which
applies the same chains, and on CUDA where a GPU is usable: the results match the CPU's, the
absorbed nodes no longer run, and what a device cannot take (or must not: a value read elsewhere)
stays as it was."""
import json

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import onyx.ort as ort

DEVICES = ['test'] + (['cuda'] if 'CUDAExecutionProvider' in ort.get_available_providers() else [])
PROVIDER = {'test': 'OnyxTestExecutionProvider', 'cuda': 'CUDAExecutionProvider'}


def _model(nodes, inputs, outputs, inits):
    graph = helper.make_graph(nodes, 'g', inputs, outputs,
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17)]).SerializeToString()


def _value(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def _ops_run(model, feed, device, tmp_path):
    """The outputs on `device` and the ops its profile saw run, with the CPU's outputs."""
    opts = ort.SessionOptions()
    opts.enable_profiling = True
    opts.profile_file_prefix = str(tmp_path / 'profile_')
    sess = ort.InferenceSession(model, opts, providers=[PROVIDER[device]])
    out = sess.run(None, feed)
    with open(sess.end_profiling()) as f:
        events = json.load(f)
    ops = sorted(e['args']['op_name'] for e in events
                 if e.get('cat') == 'Node' and 'op_name' in e.get('args', {}))
    expected = ort.InferenceSession(model, providers=['CPUExecutionProvider']).run(None, feed)
    return out, expected, [o for o in ops if not o.startswith('Memcpy')]


def _close(out, expected):
    for o, e in zip(out, expected):
        np.testing.assert_allclose(o, e, rtol=1e-4, atol=1e-4)


def _residual_block(rng):
    w1 = rng.standard_normal((8, 8, 3, 3)).astype(np.float32) * 0.2
    w2 = rng.standard_normal((8, 8, 1, 1)).astype(np.float32) * 0.2
    b = rng.standard_normal(8).astype(np.float32)
    nodes = [helper.make_node('Conv', ['x', 'w1', 'b'], ['c1'], pads=[1, 1, 1, 1]),
             helper.make_node('Relu', ['c1'], ['r1']),
             helper.make_node('Conv', ['r1', 'w2', 'b'], ['c2']),
             helper.make_node('Add', ['c2', 'x'], ['s']),
             helper.make_node('Relu', ['s'], ['y'])]
    return _model(nodes, [_value('x', [2, 8, 6, 6])], [_value('y', [2, 8, 6, 6])],
                  {'w1': w1, 'w2': w2, 'b': b})


@pytest.mark.parametrize('device', DEVICES)
def test_conv_takes_sum_and_relu(device, tmp_path):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 8, 6, 6)).astype(np.float32)
    out, expected, ops = _ops_run(_residual_block(rng), {'x': x}, device, tmp_path)
    _close(out, expected)
    assert ops == ['Conv', 'Conv']


@pytest.mark.parametrize('device', DEVICES)
def test_product_takes_bias_and_relu(device, tmp_path):
    rng = np.random.default_rng(1)
    w = rng.standard_normal((16, 32)).astype(np.float32)
    bias = rng.standard_normal(32).astype(np.float32)
    wg = rng.standard_normal((32, 8)).astype(np.float32)
    cg = rng.standard_normal(8).astype(np.float32)
    nodes = [helper.make_node('MatMul', ['x', 'w'], ['m']),
             helper.make_node('Add', ['bias', 'm'], ['a']),   # the bias first, as torch writes it
             helper.make_node('Relu', ['a'], ['r']),
             helper.make_node('Reshape', ['r', 'rows'], ['r2']),
             helper.make_node('Gemm', ['r2', 'wg', 'cg'], ['g'], alpha=0.5),
             helper.make_node('Relu', ['g'], ['y'])]
    model = _model(nodes, [_value('x', [3, 5, 16])], [_value('y', [15, 8])],
                   {'w': w, 'bias': bias, 'wg': wg, 'cg': cg,
                    'rows': np.array([15, 32], dtype=np.int64)})
    x = rng.standard_normal((3, 5, 16)).astype(np.float32)
    out, expected, ops = _ops_run(model, {'x': x}, device, tmp_path)
    _close(out, expected)
    assert 'Add' not in ops and 'Relu' not in ops
    assert ops.count('MatMul') == 1 and ops.count('Gemm') == 1


@pytest.mark.parametrize('device', DEVICES)
def test_product_takes_residual(device, tmp_path):
    # a transformer's output projection: x @ w + bias + x (BERT's, ViT's MLP); then one without
    # a bias whose sum a Relu follows: each a single step, the residual cuBLASLt's C on CUDA
    rng = np.random.default_rng(5)
    w = rng.standard_normal((16, 16)).astype(np.float32)
    w2 = rng.standard_normal((16, 16)).astype(np.float32)
    bias = rng.standard_normal(16).astype(np.float32)
    nodes = [helper.make_node('MatMul', ['x', 'w'], ['m']),
             helper.make_node('Add', ['m', 'bias'], ['a']),
             helper.make_node('Add', ['x', 'a'], ['h']),     # the residual first, as torch writes it
             helper.make_node('MatMul', ['h', 'w2'], ['m2']),
             helper.make_node('Add', ['m2', 'h'], ['s']),
             helper.make_node('Relu', ['s'], ['y'])]
    model = _model(nodes, [_value('x', [3, 5, 16])], [_value('y', [3, 5, 16])],
                   {'w': w, 'w2': w2, 'bias': bias})
    x = rng.standard_normal((3, 5, 16)).astype(np.float32)
    out, expected, ops = _ops_run(model, {'x': x}, device, tmp_path)
    _close(out, expected)
    assert ops == ['MatMul', 'MatMul'], ops


@pytest.mark.parametrize('device', DEVICES)
def test_chains_left_alone(device, tmp_path):
    rng = np.random.default_rng(2)
    w = rng.standard_normal((16, 16)).astype(np.float32)
    wc = rng.standard_normal((4, 4, 1, 1)).astype(np.float32)
    nodes = [
        # the product's result is a graph output too: its Add must not take it
        helper.make_node('MatMul', ['x', 'w'], ['m']),
        helper.make_node('Add', ['m', 'w'], ['a']),       # a [16, 16] addend: no bias
        # a conv without a bias, and a sum without a Relu: cuDNN's fused call needs both
        helper.make_node('Conv', ['img', 'wc'], ['c']),
        helper.make_node('Add', ['c', 'img'], ['s']),
        helper.make_node('Relu', ['s'], ['y'])]
    model = _model(nodes, [_value('x', [16, 16]), _value('img', [1, 4, 5, 5])],
                   [_value('m', [16, 16]), _value('a', [16, 16]), _value('y', [1, 4, 5, 5])],
                   {'w': w, 'wc': wc})
    feed = {'x': rng.standard_normal((16, 16)).astype(np.float32),
            'img': rng.standard_normal((1, 4, 5, 5)).astype(np.float32)}
    out, expected, ops = _ops_run(model, feed, device, tmp_path)
    _close(out, expected)
    # the TEST device applies the sum and Relu after a conv without a bias too; cuDNN does not
    assert ops == (['Add', 'Conv', 'MatMul'] if device == 'test' else
                   ['Add', 'Add', 'Conv', 'MatMul', 'Relu'])


@pytest.mark.parametrize('device', DEVICES)
def test_product_read_as_output_on_device(device):
    """Outputs kept on the device: the product's own result is a graph output there, read by no
    copy, and must stay the product alone."""
    rng = np.random.default_rng(3)
    w = rng.standard_normal((8, 4)).astype(np.float32)
    bias = rng.standard_normal(4).astype(np.float32)
    nodes = [helper.make_node('MatMul', ['x', 'w'], ['m']),
             helper.make_node('Add', ['m', 'bias'], ['y'])]
    model = _model(nodes, [_value('x', [6, 8])], [_value('m', [6, 4]), _value('y', [6, 4])],
                   {'w': w, 'bias': bias})
    x = rng.standard_normal((6, 8)).astype(np.float32)
    sess = ort.InferenceSession(model, providers=[PROVIDER[device]])
    binding = sess.io_binding()
    binding.bind_cpu_input('x', x)
    binding.bind_output('m', device)
    binding.bind_output('y', device)
    sess.run_with_iobinding(binding)
    m, y = binding.copy_outputs_to_cpu()
    np.testing.assert_allclose(m, x @ w, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(y, x @ w + bias, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('device', DEVICES)
def test_batchnorm_takes_relu(device, tmp_path):
    """A pre-activation block (DenseNet's): BatchNormalization, Relu, Conv; the Relu goes into the
    normalization's kernel."""
    rng = np.random.default_rng(5)
    c = 6
    bn = {'scale': rng.random(c).astype(np.float32) + 0.5,
          'shift': rng.standard_normal(c).astype(np.float32),
          'mean': rng.standard_normal(c).astype(np.float32),
          'var': rng.random(c).astype(np.float32) + 0.1}
    w = rng.standard_normal((4, c, 1, 1)).astype(np.float32)
    nodes = [helper.make_node('BatchNormalization', ['x', 'scale', 'shift', 'mean', 'var'], ['n']),
             helper.make_node('Relu', ['n'], ['r']),
             helper.make_node('Conv', ['r', 'w'], ['y'])]
    model = _model(nodes, [_value('x', [2, c, 5, 5])], [_value('y', [2, 4, 5, 5])], {**bn, 'w': w})
    x = rng.standard_normal((2, c, 5, 5)).astype(np.float32)
    out, expected, ops = _ops_run(model, {'x': x}, device, tmp_path)
    _close(out, expected)
    assert ops == ['BatchNormalization', 'Conv']
