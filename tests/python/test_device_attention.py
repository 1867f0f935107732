"""Attention spelled out (MatMul, scale, mask, Softmax, MatMul) on a device: the planner fuses it
into one Attention step of that device (core/fuse.c), read through the Transposes and factors that
make Q, K^T and V. Checked on onyx's TEST device (float; its Attention runs the CPU's kernel on
the chain) and on CUDA where a GPU is usable (float and float16, its flash kernel): the results
match the CPU's and the chain's nodes no longer run."""
import json

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import onyx.ort as ort

DEVICES = ['test'] + (['cuda'] if 'CUDAExecutionProvider' in ort.get_available_providers() else [])
PROVIDER = {'test': 'OnyxTestExecutionProvider', 'cuda': 'CUDAExecutionProvider'}
ELEM = {np.float32: TensorProto.FLOAT, np.float16: TensorProto.FLOAT16}


def _sdpa(b, h, s, d, dtype, mask):
    """torch's scaled dot product export: q and K^T each scaled by sqrt(scale), K^T a Transpose of
    K, heads split from [b, s, h*d] by Reshape and Transpose; an additive mask when asked."""
    f = np.array(np.sqrt(1 / np.sqrt(d)), dtype)
    shape = np.array([b, s, h, d], np.int64)
    nodes = [helper.make_node('Reshape', [n, 'shape'], [n + '4']) for n in 'qkv']
    nodes += [helper.make_node('Transpose', [n + '4'], [n + 'h'], perm=[0, 2, 1, 3]) for n in 'qkv']
    nodes += [helper.make_node('Transpose', ['kh'], ['kt'], perm=[0, 1, 3, 2]),
              helper.make_node('Mul', ['qh', 'f'], ['qs']),
              helper.make_node('Mul', ['kt', 'f'], ['ks']),
              helper.make_node('MatMul', ['qs', 'ks'], ['scores'])]
    last = 'scores'
    if mask:
        nodes.append(helper.make_node('Add', ['scores', 'mask'], ['masked']))
        last = 'masked'
    nodes += [helper.make_node('Softmax', [last], ['p'], axis=-1),
              helper.make_node('MatMul', ['p', 'vh'], ['o']),
              helper.make_node('Transpose', ['o'], ['ot'], perm=[0, 2, 1, 3]),
              helper.make_node('Reshape', ['ot', 'flat'], ['y'])]
    t = ELEM[dtype]
    inputs = [helper.make_tensor_value_info(n, t, [b, s, h * d]) for n in 'qkv']
    inits = {'f': f, 'shape': shape, 'flat': np.array([b, s, h * d], np.int64)}
    if mask:
        inputs.append(helper.make_tensor_value_info('mask', t, [b, 1, 1, s]))
    graph = helper.make_graph(nodes, 'g', inputs, [helper.make_tensor_value_info('y', t, None)],
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17)]).SerializeToString()


def _run(model, feed, device, tmp_path):
    opts = ort.SessionOptions()
    opts.enable_profiling = True
    opts.profile_file_prefix = str(tmp_path / 'profile_')
    sess = ort.InferenceSession(model, opts, providers=[PROVIDER[device]])
    (y,) = sess.run(None, feed)
    with open(sess.end_profiling()) as f:
        ops = {e['args']['op_name'] for e in json.load(f)
               if e.get('cat') == 'Node' and 'op_name' in e.get('args', {})}
    (expected,) = ort.InferenceSession(model, providers=['CPUExecutionProvider']).run(None, feed)
    return y, expected, ops


def _feed(rng, b, h, s, d, dtype, mask):
    feed = {n: rng.standard_normal((b, s, h * d)).astype(dtype) for n in 'qkv'}
    if mask:
        m = np.zeros((b, 1, 1, s), dtype)
        m[..., s // 2:] = -10000   # padded keys
        feed['mask'] = m
    return feed


@pytest.mark.parametrize('device', DEVICES)
@pytest.mark.parametrize('mask', [False, True])
def test_attention_fused_on_device(device, mask, tmp_path):
    rng = np.random.default_rng(4)
    b, h, s, d = 2, 3, 20, 16
    y, expected, ops = _run(_sdpa(b, h, s, d, np.float32, mask),
                            _feed(rng, b, h, s, d, np.float32, mask), device, tmp_path)
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-5)
    assert 'Attention' in ops
    assert not ops & {'MatMul', 'Softmax', 'Mul'}


@pytest.mark.parametrize('device', DEVICES)
def test_attention_float16(device, tmp_path):
    """CUDA fuses the float16 chain itself; the TEST device, like the CPU, computes a float16 graph
    in float (core/optimize_half.c) and fuses that."""
    rng = np.random.default_rng(5)
    b, h, s, d = 2, 4, 70, 32
    y, expected, ops = _run(_sdpa(b, h, s, d, np.float16, True),
                            _feed(rng, b, h, s, d, np.float16, True), device, tmp_path)
    np.testing.assert_allclose(y.astype(np.float32), expected.astype(np.float32), rtol=2e-2,
                               atol=2e-2)
    assert 'Attention' in ops and not ops & {'MatMul', 'Softmax'}
