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
    in float (core/rules/half.c) and fuses that."""
    rng = np.random.default_rng(5)
    b, h, s, d = 2, 4, 70, 32
    y, expected, ops = _run(_sdpa(b, h, s, d, np.float16, True),
                            _feed(rng, b, h, s, d, np.float16, True), device, tmp_path)
    np.testing.assert_allclose(y.astype(np.float32), expected.astype(np.float32), rtol=2e-2,
                               atol=2e-2)
    assert 'Attention' in ops and not ops & {'MatMul', 'Softmax'}


def _packed_mha(b, h, s, d, dtype, dynamic=False):
    """torch's nn.MultiheadAttention export (ViT's encoder): q, k and v from one projection of the
    sequence-first input ([s, b, 3e] -> [s, b, 3, e] -> Unsqueeze -> Transpose -> Squeeze ->
    Gather of one index each), the heads folded into the batch and split again; the output's
    [s*b, e] rows through the out-projection (a Gemm), back to [s, b, e] and transposed to
    [b, s, e]. dynamic: the [s, b, 3, e] shape comes from the Shape of the transposed input, as
    in exports with a dynamic batch."""
    e = h * d
    rng = np.random.default_rng(6)
    inits = {'w': (rng.standard_normal((e, 3 * e)) / np.sqrt(e)).astype(dtype),
             'bias': rng.standard_normal(3 * e).astype(dtype),
             's5': np.array([s, b, 3, e], np.int64), 'ax0': np.array([0], np.int64),
             'ax3': np.array([3], np.int64), 'fold': np.array([s, b * h, d], np.int64),
             'heads': np.array([b, h, s, d], np.int64), 'f': np.array(d ** -0.25, dtype),
             'flat': np.array([s * b, e], np.int64), 'sbe': np.array([s, b, e], np.int64),
             'wo': (rng.standard_normal((e, e)) / np.sqrt(e)).astype(dtype),
             'bo': rng.standard_normal(e).astype(dtype)}
    N = helper.make_node
    nodes = [N('Transpose', ['x'], ['xs'], perm=[1, 0, 2]), N('MatMul', ['xs', 'w'], ['pm']),
             N('Add', ['bias', 'pm'], ['pa'])]
    if dynamic:
        inits['s5'] = np.array([3, e], np.int64)
        nodes += [N('Shape', ['xs'], ['xshape'], end=2), N('Concat', ['xshape', 's5'], ['s5d'], axis=0)]
    nodes += [N('Reshape', ['pa', 's5d' if dynamic else 's5'], ['p4']),
             N('Unsqueeze', ['p4', 'ax0'], ['p5']), N('Transpose', ['p5'], ['pt'], perm=[3, 1, 2, 0, 4]),
             N('Squeeze', ['pt', 'ax3'], ['p3'])]
    for i, n in enumerate('qkv'):
        inits['i' + n] = np.array(i, np.int64)
        nodes += [N('Gather', ['p3', 'i' + n], [n + 'g'], axis=0), N('Reshape', [n + 'g', 'fold'], [n + 'f']),
                  N('Transpose', [n + 'f'], [n + 't'], perm=[1, 0, 2]),
                  N('Reshape', [n + 't', 'heads'], [n + 'h'])]
    nodes += [N('Mul', ['qh', 'f'], ['qm']), N('Transpose', ['kh'], ['ktr'], perm=[0, 1, 3, 2]),
              N('Mul', ['ktr', 'f'], ['km']), N('MatMul', ['qm', 'km'], ['scores']),
              N('Softmax', ['scores'], ['p'], axis=-1), N('MatMul', ['p', 'vh'], ['o']),
              N('Transpose', ['o'], ['ot'], perm=[2, 0, 1, 3]), N('Reshape', ['ot', 'flat'], ['of']),
              N('Gemm', ['of', 'wo', 'bo'], ['proj'], transB=1), N('Reshape', ['proj', 'sbe'], ['p3d']),
              N('Transpose', ['p3d'], ['y'], perm=[1, 0, 2])]
    t = ELEM[dtype]
    graph = helper.make_graph(nodes, 'g', [helper.make_tensor_value_info('x', t, [b, s, e])],
                              [helper.make_tensor_value_info('y', t, None)],
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17)]).SerializeToString()


def _packed_mha_reference(x, h):
    """What _packed_mha's graph computes, in float64 numpy."""
    b, s, e = x.shape
    d = e // h
    rng = np.random.default_rng(6)  # _packed_mha's weights, drawn in the same order
    w = (rng.standard_normal((e, 3 * e)) / np.sqrt(e)).astype(np.float32).astype(np.float64)
    bias = rng.standard_normal(3 * e).astype(np.float32).astype(np.float64)
    wo = (rng.standard_normal((e, e)) / np.sqrt(e)).astype(np.float32).astype(np.float64)
    bo = rng.standard_normal(e).astype(np.float32).astype(np.float64)
    packed = x.astype(np.float64).transpose(1, 0, 2) @ w + bias           # [s, b, 3e]
    q, k, v = (packed[:, :, i * e:(i + 1) * e].reshape(s, b * h, d).transpose(1, 0, 2)
               .reshape(b, h, s, d) for i in range(3))
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d)
    p = np.exp(scores - scores.max(-1, keepdims=True))
    o = (p / p.sum(-1, keepdims=True)) @ v                                # [b, h, s, d]
    rows = o.transpose(2, 0, 1, 3).reshape(s * b, e) @ wo.T + bo
    return rows.reshape(s, b, e).transpose(1, 0, 2)


@pytest.mark.parametrize('dynamic', [False, True])
@pytest.mark.parametrize('device', ['cpu'] + DEVICES)
def test_packed_projection_read_in_place(device, dynamic, tmp_path):
    """The input's Transpose moves after the packed projection (core/rules/transpose.c), and the fused
    attention reads q, k and v straight from the projection through it (a select and a regrouped
    strided view each, core/fuse.c); the out-projection's rows come in [b, s] order from the
    attention's output Transpose, which the fused step writes through, so the last Transpose
    goes: no Gather and no Transpose runs. With the shapes taken from the transposed input, its
    Transpose stays for its Shape, which folds, and then leaves the plan unread
    (core/plan_build.c)."""
    rng = np.random.default_rng(7)
    b, h, s, d = 2, 3, 20, 16
    feed = {'x': rng.standard_normal((b, s, h * d)).astype(np.float32)}
    model = _packed_mha(b, h, s, d, np.float32, dynamic)
    opts = ort.SessionOptions()
    opts.enable_profiling = True
    opts.profile_file_prefix = str(tmp_path / 'profile_')
    provider = 'CPUExecutionProvider' if device == 'cpu' else PROVIDER[device]
    sess = ort.InferenceSession(model, opts, providers=[provider])
    (y,) = sess.run(None, feed)
    with open(sess.end_profiling()) as f:
        nodes = {e['name']: e['args']['op_name'] for e in json.load(f)
                 if e.get('cat') == 'Node' and 'op_name' in e.get('args', {})}
    ops = list(nodes.values())
    np.testing.assert_allclose(y, _packed_mha_reference(feed['x'], h), rtol=1e-4, atol=1e-5)
    assert 'Attention' in ops and 'Gather' not in ops
    assert 'Transpose' not in ops, sorted(nodes.items())
