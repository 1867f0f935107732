"""com.microsoft transformer ops (contrib_nlp): the graphs onnxruntime's transformer optimizer
(bert, gpt2) and its MatMul n-bit quantizer emit, and small hand-made single-op models for every
op, each run by onyx and by onnxruntime (CPU) and compared (float ops: rtol 1e-4, atol 1e-5;
quantized models: within onnxruntime's own spread between its optimized and unoptimized runs;
BiasSoftmax, which onnxruntime runs on GPUs only, against numpy). Malformed nodes must be refused
with an error naming the node."""
import contextlib
import os
import shutil
import sys
import tempfile
import types

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

import onyx

F, F16, I32, I64 = TP.FLOAT, TP.FLOAT16, TP.INT32, TP.INT64
MS = 'com.microsoft'
TINY_BERT = os.path.join(os.path.dirname(__file__), '..', 'models', 'tiny', 'tiny_bert.onnx')
RTOL, ATOL = 1e-4, 1e-5


def model(nodes, inputs, outputs, inits=(), opset=17):
    """inputs/outputs: (name, elem_type) pairs, shapes left open; inits: name -> array."""
    g = h.make_graph(nodes, 'g', [h.make_tensor_value_info(n, t, None) for n, t in inputs],
                     [h.make_tensor_value_info(n, t, None) for n, t in outputs],
                     [nh.from_array(v, n) for n, v in dict(inits).items()])
    return h.make_model(g, opset_imports=[h.make_opsetid('', opset), h.make_opsetid(MS, 1)])


def ort_session(m, level=ort.GraphOptimizationLevel.ORT_ENABLE_ALL):
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    so.log_severity_level = 3
    return ort.InferenceSession(m.SerializeToString(), so, providers=['CPUExecutionProvider'])


def both(m, feeds):
    want = ort_session(m).run(None, feeds)
    got = onyx.Session(m.SerializeToString(), threads=2).run(None, feeds)
    return got, want


def check(m, feeds, rtol=RTOL, atol=ATOL):
    got, want = both(m, feeds)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape and g.dtype == w.dtype, (i, g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_allclose(g.astype(np.float64) if g.dtype == np.float16 else g, w,
                                   rtol=rtol, atol=atol, err_msg=f'output {i}')
    return got, want


def refused(m, feeds=None, match=None):
    """onyx refuses the node at load or at run, naming it."""
    with pytest.raises(onyx.OnyxError) as e:
        s = onyx.Session(m.SerializeToString())
        if feeds is not None:
            s.run(None, feeds)
    msg = str(e.value)
    if match:
        assert match in msg, msg
    assert 'subject' in msg, msg
    return msg


rng = np.random.default_rng(1234)


def rand(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


# ---------------------------------------------------------------- GELU family

@pytest.mark.parametrize('op, extra', [('Gelu', {}), ('FastGelu', {}), ('QuickGelu', {}),
                                       ('QuickGelu', {'alpha': 1.3})])
@pytest.mark.parametrize('shape', [(7,), (2, 3, 37), (4, 1030)])
def test_gelu_family(op, extra, shape):
    m = model([h.make_node(op, ['x'], ['y'], domain=MS, **extra)], [('x', F)], [('y', F)])
    check(m, {'x': rand(*shape, scale=3)})


@pytest.mark.parametrize('op', ['BiasGelu', 'FastGelu'])
@pytest.mark.parametrize('shape', [(5, 8), (2, 3, 600)])
def test_bias_gelu(op, shape):
    m = model([h.make_node(op, ['x', 'b'], ['y'], domain=MS)], [('x', F), ('b', F)], [('y', F)])
    check(m, {'x': rand(*shape, scale=3), 'b': rand(shape[-1])})


def test_gelu_float16_and_double():
    x = rand(3, 50, scale=3)
    m = model([h.make_node('FastGelu', ['x', 'b'], ['y'], domain=MS)], [('x', F16), ('b', F16)],
              [('y', F16)])
    check(m, {'x': x.astype(np.float16), 'b': rand(50).astype(np.float16)}, rtol=2e-3, atol=2e-3)
    m = model([h.make_node('Gelu', ['x'], ['y'], domain=MS)], [('x', TP.DOUBLE)],
              [('y', TP.DOUBLE)])
    got = onyx.Session(m.SerializeToString()).run(None, {'x': x.astype(np.float64)})[0]
    from math import erf
    want = np.vectorize(lambda v: 0.5 * v * (1 + erf(v / np.sqrt(2))))(x.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_gelu_refusals():
    m = model([h.make_node('BiasGelu', ['x', 'b'], ['y'], domain=MS, name='subject')],
              [('x', F), ('b', F)], [('y', F)])
    refused(m, {'x': rand(2, 4), 'b': rand(3)}, match='bias')
    m = model([h.make_node('Gelu', ['x'], ['y'], domain=MS, name='subject')], [('x', I32)],
              [('y', I32)])
    refused(m, match='type')


# ---------------------------------------------------------------- normalizations

@pytest.mark.parametrize('shape, skip_shape', [((2, 5, 16), (2, 5, 16)), ((2, 5, 16), (1, 5, 16)),
                                               ((2, 5, 16), (5, 16)), ((6, 300), (6, 300))])
@pytest.mark.parametrize('beta, bias', [(True, True), (True, False), (False, True)])
def test_skip_layernorm(shape, skip_shape, beta, bias):
    hid = shape[-1]
    ins = ['x', 's', 'g', 'be' if beta else '', 'bi' if bias else '']
    while ins[-1] == '':
        ins.pop()
    m = model([h.make_node('SkipLayerNormalization', ins, ['y', 'mean', 'inv', 'sum'], domain=MS,
                           epsilon=1e-5)],
              [('x', F), ('s', F), ('g', F)] + [(n, F) for n in ('be', 'bi') if n in ins],
              [('y', F), ('mean', F), ('inv', F), ('sum', F)])
    feeds = {'x': rand(*shape), 's': rand(*skip_shape), 'g': rand(hid), 'be': rand(hid),
             'bi': rand(hid)}
    check(m, {k: v for k, v in feeds.items() if k in ins})


def test_skip_layernorm_default_epsilon_and_float16():
    m = model([h.make_node('SkipLayerNormalization', ['x', 's', 'g', 'b'], ['y'], domain=MS)],
              [('x', F), ('s', F), ('g', F), ('b', F)], [('y', F)])
    check(m, {'x': rand(3, 4, 32), 's': rand(3, 4, 32), 'g': rand(32), 'b': rand(32)})
    m = model([h.make_node('SkipLayerNormalization', ['x', 's', 'g', 'b'], ['y', '', '', 'sum'],
                           domain=MS)],
              [('x', F16), ('s', F16), ('g', F16), ('b', F16)], [('y', F16), ('sum', F16)])
    feeds = {'x': rand(3, 4, 32), 's': rand(3, 4, 32), 'g': rand(32), 'b': rand(32)}
    check(m, {k: v.astype(np.float16) for k, v in feeds.items()}, rtol=5e-3, atol=5e-3)


@pytest.mark.parametrize('shape, skip_shape, bias', [((2, 5, 16), (2, 5, 16), True),
                                                     ((2, 5, 16), (5, 16), False),
                                                     ((7, 64), (7, 64), True)])
def test_skip_simplified_layernorm(shape, skip_shape, bias):
    ins = ['x', 's', 'g'] + (['bi'] if bias else [])
    m = model([h.make_node('SkipSimplifiedLayerNormalization', ins, ['y', 'mean', 'inv', 'sum'],
                           domain=MS, epsilon=1e-6)],
              [(n, F) for n in ins], [('y', F), ('mean', F), ('inv', F), ('sum', F)])
    hid = shape[-1]
    feeds = {'x': rand(*shape), 's': rand(*skip_shape), 'g': rand(hid), 'bi': rand(hid)}
    check(m, {k: v for k, v in feeds.items() if k in ins})


@pytest.mark.parametrize('shape, axis, scale_shape', [
    ((2, 5, 16), -1, (16,)), ((3, 40), 1, (40,)), ((2, 3, 8), 1, (3, 8)), ((2, 3, 8), 1, (1, 8))])
def test_simplified_layernorm(shape, axis, scale_shape):
    m = model([h.make_node('SimplifiedLayerNormalization', ['x', 'g'], ['y', 'inv'], axis=axis,
                           epsilon=1e-5)], [('x', F), ('g', F)], [('y', F), ('inv', F)])
    check(m, {'x': rand(*shape), 'g': rand(*scale_shape)})


def test_simplified_layernorm_float16():
    m = model([h.make_node('SimplifiedLayerNormalization', ['x', 'g'], ['y'], epsilon=1e-5)],
              [('x', F16), ('g', F16)], [('y', F16)])
    check(m, {'x': rand(4, 64).astype(np.float16), 'g': rand(64).astype(np.float16)},
          rtol=5e-3, atol=5e-3)


def embed_model(segment=True, mask=True, pos_ids=False, esum=True, **attrs):
    ins = ['ids', 'seg' if segment else '', 'we', 'pe', 'se' if segment else '', 'g', 'b',
           'm' if mask else '', 'pid' if pos_ids else '']
    while ins[-1] == '':
        ins.pop()
    outs = ['y', 'mi'] + (['es'] if esum else [])
    types = {'ids': I32, 'seg': I32, 'm': I32, 'pid': I32}
    return model([h.make_node('EmbedLayerNormalization', ins, outs, domain=MS, name='subject',
                              **attrs)],
                 [(n, types.get(n, F)) for n in ins if n],
                 [('y', F), ('mi', I32)] + ([('es', F)] if esum else []))


def embed_feeds(b=2, s=6, vocab=30, hid=16, npos=10):
    mask = np.ones((b, s), np.int32)
    mask[0, 4:] = 0
    return {'ids': rng.integers(0, vocab, (b, s)).astype(np.int32),
            'seg': rng.integers(0, 2, (b, s)).astype(np.int32), 'we': rand(vocab, hid),
            'pe': rand(npos, hid), 'se': rand(2, hid), 'g': rand(hid), 'b': rand(hid), 'm': mask,
            'pid': rng.integers(0, npos, (b, s)).astype(np.int32)}


@pytest.mark.parametrize('segment, mask, pos_ids', [(True, True, False), (False, False, False),
                                                    (True, False, True), (False, True, True)])
def test_embed_layernorm(segment, mask, pos_ids):
    m = embed_model(segment, mask, pos_ids, epsilon=1e-5)
    names = [i.name for i in m.graph.input]
    check(m, {k: v for k, v in embed_feeds().items() if k in names})


def test_embed_layernorm_broadcast_positions_and_default_epsilon():
    m = embed_model(True, True, True, esum=False)
    feeds = embed_feeds()
    feeds['pid'] = feeds['pid'][:1]
    check(m, feeds)


def test_norm_refusals():
    m = embed_model(True, True, False)
    feeds = embed_feeds()
    feeds['ids'][1, 2] = 30  # past the vocabulary
    refused(m, {k: v for k, v in feeds.items() if k in [i.name for i in m.graph.input]},
            match='out of the range')
    m = model([h.make_node('SkipLayerNormalization', ['x', 's', 'g'], ['y'], domain=MS,
                           name='subject')], [('x', F), ('s', F), ('g', F)], [('y', F)])
    refused(m, {'x': rand(2, 3, 8), 's': rand(2, 3, 8), 'g': rand(7)}, match='gamma')
    refused(m, {'x': rand(2, 3, 8), 's': rand(3, 3, 8), 'g': rand(8)}, match='skip')
    refused(m, {'x': rand(8), 's': rand(8), 'g': rand(8)}, match='rank')
    m = model([h.make_node('SimplifiedLayerNormalization', ['x', 'g'], ['y'], axis=3,
                           name='subject')], [('x', F), ('g', F)], [('y', F)])
    refused(m, {'x': rand(2, 3), 'g': rand(3)}, match='axis')


# ---------------------------------------------------------------- FusedMatMul, BiasSoftmax

@pytest.mark.parametrize('a_shape, b_shape, attrs', [
    ((3, 4), (4, 5), {}),
    ((5, 3), (4, 5), dict(transA=1, transB=1, alpha=0.5)),
    ((2, 3, 4), (4, 6), dict(alpha=2.0)),
    ((2, 3, 4), (2, 6, 4), dict(transB=1)),
    ((1, 3, 4), (5, 4, 2), {}),
    ((4, 2, 3, 5), (2, 3, 5, 6), dict(transBatchA=1)),
    ((5, 2, 3, 4), (2, 3, 5, 6), dict(transBatchA=1, transA=1, alpha=0.25)),
    ((2, 3, 4, 5), (5, 2, 3, 6), dict(transBatchB=1)),
    ((2, 3, 4, 5), (6, 2, 3, 5), dict(transBatchB=1, transB=1)),
    ((4, 2, 5), (2, 5, 3), dict(transBatchA=1)),
    ((7,), (7, 3), {}),
    ((2, 7), (7,), {}),
])
def test_fused_matmul(a_shape, b_shape, attrs):
    m = model([h.make_node('FusedMatMul', ['a', 'b'], ['y'], domain=MS, **attrs)],
              [('a', F), ('b', F)], [('y', F)])
    check(m, {'a': rand(*a_shape), 'b': rand(*b_shape)})


def test_fused_matmul_float16():
    m = model([h.make_node('FusedMatMul', ['a', 'b'], ['y'], domain=MS, transBatchA=1, transB=1,
                           alpha=0.5)], [('a', F16), ('b', F16)], [('y', F16)])
    a, b = rand(4, 2, 3, 5), rand(2, 3, 6, 5)
    got = onyx.Session(m.SerializeToString()).run(None, {'a': a.astype(np.float16),
                                                         'b': b.astype(np.float16)})[0]
    a16, b16 = a.astype(np.float16).astype(np.float32), b.astype(np.float16).astype(np.float32)
    want = 0.5 * np.matmul(np.transpose(a16, (1, 2, 0, 3)), np.swapaxes(b16, -1, -2))
    np.testing.assert_allclose(got.astype(np.float32), want, rtol=5e-3, atol=5e-3)


def bias_softmax_ref(x, b, axis):
    axis = axis % x.ndim
    z = (x + b).reshape(int(np.prod(x.shape[:axis])), -1).astype(np.float64)
    z = np.exp(z - z.max(1, keepdims=True))
    return (z / z.sum(1, keepdims=True)).reshape(x.shape)


@pytest.mark.parametrize('x_shape, b_shape, axis, inner', [
    ((2, 4, 5, 5), (2, 1, 1, 5), 3, 1),   # attention mask over heads and queries
    ((2, 4, 5, 5), (1, 4, 5, 5), 3, 0),   # relative position bias over the batch
    ((2, 4, 5, 5), (2, 4, 1, 5), -1, 1),
    ((3, 4, 6), (1, 4, 6), 1, 0),         # softmax over the flattened trailing axes
    ((3, 70), (3, 70), 1, 0),
])
def test_bias_softmax(x_shape, b_shape, axis, inner):
    # onnxruntime has no CPU kernel for BiasSoftmax: numpy's softmax(x + b) is the reference
    m = model([h.make_node('BiasSoftmax', ['x', 'b'], ['y'], domain=MS, axis=axis,
                           is_inner_broadcast=inner)], [('x', F), ('b', F)], [('y', F)])
    x, b = rand(*x_shape, scale=3), rand(*b_shape, scale=3)
    got = onyx.Session(m.SerializeToString()).run(None, {'x': x, 'b': b})[0]
    np.testing.assert_allclose(got, bias_softmax_ref(x, b, axis), rtol=RTOL, atol=ATOL)
    for t, dt, tol in ((TP.DOUBLE, np.float64, 1e-12), (F16, np.float16, 2e-3)):
        m = model([h.make_node('BiasSoftmax', ['x', 'b'], ['y'], domain=MS, axis=axis,
                               is_inner_broadcast=inner)], [('x', t), ('b', t)], [('y', t)])
        xs, bs = x.astype(dt), b.astype(dt)
        got = onyx.Session(m.SerializeToString()).run(None, {'x': xs, 'b': bs})[0]
        assert got.dtype == dt
        np.testing.assert_allclose(got.astype(np.float64), bias_softmax_ref(
            xs.astype(np.float64), bs.astype(np.float64), axis), rtol=tol, atol=tol)


def test_matmul_softmax_refusals():
    m = model([h.make_node('FusedMatMul', ['a', 'b'], ['y'], domain=MS, transA=1, name='subject')],
              [('a', F), ('b', F)], [('y', F)])
    refused(m, {'a': rand(3, 4), 'b': rand(4, 5)}, match='inner dims')
    m = model([h.make_node('BiasSoftmax', ['x', 'b'], ['y'], domain=MS, axis=2,
                           is_inner_broadcast=0, name='subject')], [('x', F), ('b', F)], [('y', F)])
    refused(m, {'x': rand(2, 3, 4), 'b': rand(2, 3, 1)}, match='bias')
    m = model([h.make_node('BiasSoftmax', ['x', 'b'], ['y'], domain=MS, name='subject')],
              [('x', F), ('b', F)], [('y', F)])
    refused(m, match='is_inner_broadcast')


# ---------------------------------------------------------------- RotaryEmbedding

def rope_model(**attrs):
    return model([h.make_node('RotaryEmbedding', ['x', 'p', 'c', 's'], ['y'], domain=MS,
                              name='subject', **attrs)],
                 [('x', F), ('p', I64), ('c', F), ('s', F)], [('y', F)])


def rope_caches(max_pos, half):
    ang = np.arange(max_pos)[:, None] * (1.0 / 10000 ** (np.arange(half) / half))[None]
    return np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)


@pytest.mark.parametrize('interleaved', [0, 1])
@pytest.mark.parametrize('layout, rot', [('bsh', 0), ('bnsh', 0), ('bsh_partial', 8)])
@pytest.mark.parametrize('pos_kind', ['offset', 'full'])
def test_rotary_embedding(interleaved, layout, rot, pos_kind):
    b, s, n, d = 2, 5, 3, 16
    attrs = dict(interleaved=interleaved)
    if layout == 'bnsh':
        x = rand(b, n, s, d)
    else:
        x = rand(b, s, n * d)
        if rot:
            attrs.update(rotary_embedding_dim=rot, num_heads=n)
    half = (rot or d) // 2
    c, sn = rope_caches(12, half)
    if pos_kind == 'offset':
        p = np.array([3], np.int64)
    else:
        p = rng.integers(0, 12, (b, s)).astype(np.int64)
    check(rope_model(**attrs), {'x': x, 'p': p, 'c': c, 's': sn})


def test_rotary_embedding_float16():
    m = model([h.make_node('RotaryEmbedding', ['x', 'p', 'c', 's'], ['y'], domain=MS)],
              [('x', F16), ('p', I64), ('c', F16), ('s', F16)], [('y', F16)])
    c, sn = rope_caches(8, 4)
    x = rand(1, 2, 3, 8)
    feeds = {'x': x.astype(np.float16), 'p': np.array([1], np.int64), 'c': c.astype(np.float16),
             's': sn.astype(np.float16)}
    got = onyx.Session(m.SerializeToString()).run(None, feeds)[0]
    m32 = model([h.make_node('RotaryEmbedding', ['x', 'p', 'c', 's'], ['y'], domain=MS)],
                [('x', F), ('p', I64), ('c', F), ('s', F)], [('y', F)])
    want = ort_session(m32).run(None, {k: v.astype(np.float32) if v.dtype == np.float16 else v
                                       for k, v in feeds.items()})[0]
    np.testing.assert_allclose(got.astype(np.float32), want, rtol=5e-3, atol=5e-3)


def test_rotary_refusals():
    c, sn = rope_caches(4, 8)
    refused(rope_model(), {'x': rand(1, 6, 32), 'p': np.array([0], np.int64), 'c': c, 's': sn},
            match='position')
    refused(rope_model(rotary_embedding_dim=8), match='num_heads')
    refused(rope_model(is_packed_batching=1), match='is_packed_batching')
    refused(rope_model(), {'x': rand(1, 2, 30), 'p': np.array([0], np.int64), 'c': c, 's': sn},
            match='multiple')


# ---------------------------------------------------------------- Attention

def attention_model(with_bias=True, mask_type=None, past=False, present=False, attn_bias=False,
                    **attrs):
    ins = ['x', 'w', 'bias' if with_bias else '', 'mask' if mask_type else '',
           'past' if past else '', 'ab' if attn_bias else '']
    while ins[-1] == '':
        ins.pop()
    outs = ['y'] + (['present'] if present else [])
    types = {'mask': I32}
    return model([h.make_node('Attention', ins, outs, domain=MS, name='subject', **attrs)],
                 [(n, types.get(n, F)) for n in ins if n], [(n, F) for n in outs])


def attention_mask(kind, b, s, t):
    if kind == 'len':
        return np.array([t, t - 2][:b] + [t] * max(0, b - 2), np.int32)
    if kind == 'len_start':
        return np.array([t, t - 1, 0, 2], np.int32)[: 2 * b] if b == 2 else None
    if kind == '2d':
        m = np.ones((b, t), np.int32)
        m[1, -3:] = 0
        m[0, :] = 0  # a batch with every key masked: its rows see -10000 everywhere
        return m
    if kind == '3d':
        m = (rng.random((b, s, t)) > 0.3).astype(np.int32)
        m[1, 2] = 0
        return m
    return None


@pytest.mark.parametrize('mask', [None, 'len', 'len_start', '2d', '3d'])
@pytest.mark.parametrize('uni', [0, 1])
def test_attention_masks(mask, uni):
    b, s, hid, n = 2, 7, 16, 4
    m = attention_model(mask_type=mask, num_heads=n, unidirectional=uni)
    feeds = {'x': rand(b, s, hid), 'w': rand(hid, 3 * hid, scale=0.3), 'bias': rand(3 * hid)}
    if mask:
        feeds['mask'] = attention_mask(mask, b, s, s)
    check(m, feeds)


@pytest.mark.parametrize('seq', [1, 3, 65])
def test_attention_past_present(seq):
    b, n, d, past_len = 2, 3, 4, 5
    hid, t = n * d, past_len + seq
    m = attention_model(mask_type='2d', past=True, present=True, num_heads=n, unidirectional=1,
                        mask_filter_value=-1e5, scale=0.3)
    mask = np.ones((b, t), np.int32)
    mask[0, :2] = 0
    feeds = {'x': rand(b, seq, hid), 'w': rand(hid, 3 * hid, scale=0.3), 'bias': rand(3 * hid),
             'mask': mask, 'past': rand(2, b, n, past_len, d)}
    check(m, feeds)
    m = attention_model(past=True, present=True, num_heads=n)
    check(m, {k: v for k, v in feeds.items() if k != 'mask'})


def test_attention_qkv_hidden_sizes():
    b, s, hid, n = 2, 5, 12, 2
    m = attention_model(num_heads=n, qkv_hidden_sizes=[8, 8, 12])
    check(m, {'x': rand(b, s, hid), 'w': rand(hid, 28, scale=0.3), 'bias': rand(28)})
    m = attention_model(present=True, attn_bias=True, num_heads=n)
    check(m, {'x': rand(b, s, hid), 'w': rand(hid, 36, scale=0.3), 'bias': rand(36),
              'ab': rand(b, 1, s, s)})


def test_attention_refusals():
    feeds = {'x': rand(2, 3, 8), 'w': rand(8, 24), 'bias': rand(24)}
    refused(attention_model(num_heads=3), feeds, match='num_heads')
    refused(attention_model(num_heads=2, do_rotary=1), match='do_rotary')
    refused(attention_model(num_heads=2), {**feeds, 'w': rand(8, 25), 'bias': rand(25)},
            match='3 equal parts')
    m = attention_model(mask_type='4d', num_heads=2)
    refused(m, {**feeds, 'mask': np.ones((2, 1, 3, 3), np.int32)}, match='rank 4')
    refused(m, {**feeds, 'mask': np.ones((5,), np.int32)}, match='mask_index')
    m = attention_model(past=True, num_heads=2)
    refused(m, {**feeds, 'past': rand(2, 2, 2, 1, 3)}, match='past')
    refused(attention_model(past=True, attn_bias=True, num_heads=2), match='not both')
    refused(attention_model(present=True, num_heads=2, qkv_hidden_sizes=[4, 4, 8]),
            {'x': rand(1, 3, 8), 'w': rand(8, 16), 'bias': rand(16)}, match='present')


# ---------------------------------------------------------------- MultiHeadAttention

def mha_model(ins, outs=('y',), **attrs):
    types = {'kpm': I32}
    ins = list(ins)
    names = [n for n in ins if n]
    return model([h.make_node('MultiHeadAttention', ins, list(outs), domain=MS, name='subject',
                              **attrs)],
                 [(n, types.get(n, F)) for n in names], [(n, F) for n in outs if n])


@pytest.mark.parametrize('kv_len', [6, 1])
@pytest.mark.parametrize('mask', [None, 'len', '2d', '3d'])
def test_mha_cross_attention(kv_len, mask):
    b, s, n, d, dv = 2, 4, 2, 8, 6
    ins = ['q', 'k', 'v', 'bias', 'kpm' if mask else '', 'ab']
    m = mha_model(ins, num_heads=n, scale=0.2)
    feeds = {'q': rand(b, s, n * d), 'k': rand(b, kv_len, n * d), 'v': rand(b, kv_len, n * dv),
             'bias': rand(2 * n * d + n * dv), 'ab': rand(b, n, s, kv_len)}
    if mask == 'len':
        feeds['kpm'] = np.array([kv_len, max(1, kv_len - 2)], np.int32)
    elif mask == '2d':
        feeds['kpm'] = np.ones((b, kv_len), np.int32)
        feeds['kpm'][1, 0] = 0
    elif mask == '3d':
        feeds['kpm'] = (rng.random((b, s, kv_len)) > 0.3).astype(np.int32)
    check(m, feeds)


@pytest.mark.parametrize('uni', [0, 1])
def test_mha_self_attention_with_past(uni):
    b, s, n, d, p = 2, 3, 2, 4, 5
    m = mha_model(['q', 'k', 'v', '', 'kpm', '', 'pk', 'pv'], ('y', 'ok', 'ov'), num_heads=n,
                  unidirectional=uni)
    kpm = np.ones((b, p + s), np.int32)
    kpm[0, 1] = 0
    feeds = {'q': rand(b, s, n * d), 'k': rand(b, s, n * d), 'v': rand(b, s, n * d), 'kpm': kpm,
             'pk': rand(b, n, p, d), 'pv': rand(b, n, p, d)}
    check(m, feeds)


def test_mha_bnsh_key_value_and_present_without_past():
    b, s, n, d, kv = 2, 3, 2, 4, 5
    m = mha_model(['q', 'k', 'v'], num_heads=n)
    check(m, {'q': rand(b, s, n * d), 'k': rand(b, n, kv, d), 'v': rand(b, n, kv, d)})
    m = mha_model(['q', 'k', 'v', 'bias'], ('y', 'ok', 'ov'), num_heads=n)
    check(m, {'q': rand(b, s, n * d), 'k': rand(b, kv, n * d), 'v': rand(b, kv, n * d),
              'bias': rand(3 * n * d)})
    # key and value given as BNSH are projected already: the bias applies to the query only
    b, s, n, d, kv = 1, 2, 2, 4, 3
    m = mha_model(['q', 'k', 'v', 'bias'], num_heads=n)
    check(m, {'q': rand(b, s, n * d), 'k': rand(b, n, kv, d), 'v': rand(b, n, kv, d),
              'bias': rand(3 * n * d)})



def test_mha_refusals():
    b, s, n, d = 1, 2, 2, 4
    feeds = {'q': rand(b, s, n * d), 'k': rand(b, s, n * d), 'v': rand(b, s, n * d)}
    refused(mha_model(['q', 'k', 'v'], num_heads=3), feeds, match='num_heads')
    refused(mha_model(['q'], num_heads=2), match='packed')
    refused(mha_model(['q', 'k', 'v'], ('y', '', '', 'qk'), num_heads=2), match='qk')
    refused(mha_model(['q', 'k', 'v'], num_heads=2), {**feeds, 'k': rand(b, s, 6)}, match='key')
    refused(mha_model(['q', 'k', 'v', '', 'kpm'], num_heads=2),
            {**feeds, 'kpm': np.ones((3 * b + 2,), np.int32)}, match='3*batch+2')


# ---------------------------------------------------------------- GroupQueryAttention

def gqa_model(packed=False, past=False, outs=('y', 'pk_out', 'pv_out'), bias=False, sink=False,
              kv_bits=0, **attrs):
    """kv_bits 8 or 4: a quantized cache (int8, or uint8 int4 pairs) with k_scale and v_scale
    (inputs 12 and 13) and the kind of scales in attrs' k_quant_type / v_quant_type."""
    ins = ['q', '' if packed else 'k', '' if packed else 'v', 'pk' if past else '',
           'pv' if past else '', 'seqlens', 'total']
    if bias or sink or kv_bits:  # inputs 10 and 11, after the rotary ones (7-9) left out
        ins += ['', '', '', 'ab' if bias else '', 'sink' if sink else '']
    if kv_bits:
        ins += ['ks', 'vs']
        attrs['kv_cache_bit_width'] = kv_bits
    cache = {8: TP.INT8, 4: TP.UINT8}.get(kv_bits, F)
    types = {'seqlens': I32, 'total': I32, 'pk': cache, 'pv': cache, 'pk_out': cache,
             'pv_out': cache}
    return model([h.make_node('GroupQueryAttention', ins, list(outs), domain=MS, name='subject',
                              **attrs)],
                 [(n, types.get(n, F)) for n in ins if n], [(n, types.get(n, F)) for n in outs if n])


def gqa_feeds(b, s, nq, nkv, d, seqlens, total, past_len=0, packed=False):
    f = {'seqlens': np.array(seqlens, np.int32), 'total': np.array([total], np.int32)}
    if packed:
        f['q'] = rand(b, s, (nq + 2 * nkv) * d)
    else:
        f.update(q=rand(b, s, nq * d), k=rand(b, s, nkv * d), v=rand(b, s, nkv * d))
    if past_len:
        f.update(pk=rand(b, nkv, past_len, d), pv=rand(b, nkv, past_len, d))
    return f


@pytest.mark.parametrize('packed', [False, True])
@pytest.mark.parametrize('nq, nkv', [(4, 2), (4, 1), (2, 2)])
def test_gqa_prompt(packed, nq, nkv):
    b, s, d = 2, 6, 8
    m = gqa_model(packed=packed, num_heads=nq, kv_num_heads=nkv)
    check(m, gqa_feeds(b, s, nq, nkv, d, [s - 1, s - 1], s, packed=packed))


def test_gqa_prompt_padded():
    # right padding in the second batch: rows past its length are padding, not compared
    b, s, nq, nkv, d = 2, 6, 4, 2, 8
    m = gqa_model(num_heads=nq, kv_num_heads=nkv)
    got, want = both(m, gqa_feeds(b, s, nq, nkv, d, [s - 1, 3], s))
    np.testing.assert_allclose(got[0][0], want[0][0], rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(got[0][1, :4], want[0][1, :4], rtol=RTOL, atol=ATOL)
    for g, w in zip(got[1:], want[1:]):
        np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize('packed', [False, True])
def test_gqa_decode_with_past(packed):
    b, nq, nkv, d, past_len = 3, 4, 2, 8, 9
    seqlens = [8, 5, 3]  # total lengths 9, 6, 4: the cache of each batch is filled that far
    m = gqa_model(packed=packed, past=True, num_heads=nq, kv_num_heads=nkv)
    check(m, gqa_feeds(b, 1, nq, nkv, d, seqlens, 9, past_len, packed=packed))


def test_gqa_subsequent_prompt_window_softcap_scale():
    nq, nkv, d, past_len = 4, 2, 8, 10
    m = gqa_model(past=True, num_heads=nq, kv_num_heads=nkv)
    check(m, gqa_feeds(1, 3, nq, nkv, d, [7], 8, past_len))
    m = gqa_model(num_heads=nq, kv_num_heads=nkv, local_window_size=2, softcap=2.0, scale=0.4)
    check(m, gqa_feeds(2, 7, nq, nkv, d, [6, 6], 7))
    m = gqa_model(past=True, num_heads=nq, kv_num_heads=nkv, local_window_size=3)
    check(m, gqa_feeds(2, 1, nq, nkv, d, [9, 4], 10, past_len))


@pytest.mark.parametrize('packed', [False, True])
def test_gqa_long_prompts(packed):
    """Prompts of more than the kernel's 64-row blocks: each block reads the keys up to its last
    row's, and every other head takes its blocks last first. A first prompt, one after a past of
    40 (the keys' window moved by it) and one with a local window, three query heads so that
    heads of both orders share one key head."""
    nq, nkv, d = 3, 1, 8
    m = gqa_model(packed=packed, num_heads=nq, kv_num_heads=nkv)
    check(m, gqa_feeds(2, 150, nq, nkv, d, [149, 149], 150, packed=packed))
    m = gqa_model(packed=packed, past=True, num_heads=nq, kv_num_heads=nkv)
    check(m, gqa_feeds(1, 130, nq, nkv, d, [169], 170, 40, packed=packed))
    m = gqa_model(packed=packed, num_heads=nq, kv_num_heads=nkv, local_window_size=50)
    check(m, gqa_feeds(1, 150, nq, nkv, d, [149], 150, packed=packed))


@pytest.mark.parametrize('packed', [False, True])
def test_gqa_present_blocks_in_parallel(packed):
    """A prompt whose present rows are 16 KiB or more a head: the (cache, batch, head) blocks of
    the present are copied by all threads, each the past's valid rows of its batch, the new rows
    after them. A first prompt of two batches, and one after a past of 40 (onnxruntime takes
    such a prompt for one batch only)."""
    nq, nkv, d = 4, 2, 32
    m = gqa_model(packed=packed, num_heads=nq, kv_num_heads=nkv)
    check(m, gqa_feeds(2, 130, nq, nkv, d, [129, 129], 130, packed=packed))
    m = gqa_model(packed=packed, past=True, num_heads=nq, kv_num_heads=nkv)
    check(m, gqa_feeds(1, 130, nq, nkv, d, [169], 170, 40, packed=packed))


@pytest.mark.parametrize('interleaved', [0, 1])
@pytest.mark.parametrize('packed', [False, True])
def test_gqa_rotary(interleaved, packed):
    nq, nkv, d, past_len = 4, 2, 16, 8
    c, sn = rope_caches(16, d // 2)
    rope = {'cos': c, 'sin': sn}

    def rot_model(past):
        ins = ['q', '' if packed else 'k', '' if packed else 'v', 'pk' if past else '',
               'pv' if past else '', 'seqlens', 'total', 'cos', 'sin']
        types = {'seqlens': I32, 'total': I32}
        return model([h.make_node('GroupQueryAttention', ins, ['y', 'pk_out', 'pv_out'], domain=MS,
                                  name='subject', num_heads=nq, kv_num_heads=nkv, do_rotary=1,
                                  rotary_interleaved=interleaved)],
                     [(n, types.get(n, F)) for n in ins if n],
                     [(n, F) for n in ('y', 'pk_out', 'pv_out')])

    check(rot_model(False), {**gqa_feeds(2, 5, nq, nkv, d, [4, 4], 5, packed=packed), **rope})
    check(rot_model(True),
          {**gqa_feeds(2, 1, nq, nkv, d, [7, 3], 8, past_len, packed=packed), **rope})
    # positions past the caches are refused
    refused(rot_model(True), {**gqa_feeds(1, 1, nq, nkv, d, [20], 21, 21, packed=packed), **rope},
            match='cos/sin')

def as_float16(m):
    """The model with its float inputs and outputs declared float16."""
    m = onnx.ModelProto.FromString(m.SerializeToString())
    for v in list(m.graph.input) + list(m.graph.output):
        if v.type.tensor_type.elem_type == F:
            v.type.tensor_type.elem_type = F16
    return m


def half_session(m):
    """onyx running float16 as float16 (no float twin): what a device session's CPU fallback gets."""
    import onyx.ort as oort
    so = oort.SessionOptions()
    so.add_session_config_entry('optimization.float16_as_float32', '0')
    return oort.InferenceSession(m.SerializeToString(), so, providers=['CPUExecutionProvider'])


@pytest.mark.parametrize('past, window', [(False, -1), (True, -1), (True, 3)])
def test_gqa_float16_computes_in_float(past, window):
    """float16 GroupQueryAttention (a CUDA session's fallback where CUDA's kernel declines a node)
    computes in float, as onnxruntime's CPU kernel does: exactly the float kernel's results on the
    float16 inputs, rounded to float16 - through run() and with the cache bound in place."""
    m = gqa_model(past=past, num_heads=4, kv_num_heads=2, local_window_size=window)
    feeds = gqa_feeds(2, 1 if past else 5, 4, 2, 8, [9, 4] if past else [4, 4],
                      10 if past else 5, 12 if past else 0)
    f16 = {k: v.astype(np.float16) if v.dtype == np.float32 else v for k, v in feeds.items()}
    f32 = {k: v.astype(np.float32) if v.dtype == np.float16 else v for k, v in f16.items()}
    want = [w.astype(np.float16) for w in onyx.Session(m.SerializeToString()).run(None, f32)]
    s = half_session(as_float16(m))
    got = s.run(None, f16)
    for g, w in zip(got, want):
        assert g.dtype == np.float16
        np.testing.assert_array_equal(g, w)
    if not past:
        return
    # present over past: one float16 buffer per cache, appended in place
    import onyx.ort as oort
    caches = {n: f16[n].copy() for n in ('pk', 'pv')}
    binding = s.io_binding()
    binding.bind_output('y')   # first: the outputs come back in the order bound
    for n, out in (('pk', 'pk_out'), ('pv', 'pv_out')):
        binding.bind_cpu_input(n, caches[n])
        binding.bind_ortvalue_output(out, oort.OrtValue.ortvalue_from_numpy(caches[n]))
    for n in ('q', 'k', 'v', 'seqlens', 'total'):
        binding.bind_cpu_input(n, f16[n])
    s.run_with_iobinding(binding)
    np.testing.assert_array_equal(binding.copy_outputs_to_cpu()[0], want[0])
    for b, n in enumerate(f16['seqlens'] + 1):   # rows past each batch's length: kept in place
        for cache, w in ((caches['pk'], want[1]), (caches['pv'], want[2])):
            np.testing.assert_array_equal(cache[b, :, :n], w[b, :, :n])
        np.testing.assert_array_equal(caches['pk'][b, :, n:], f16['pk'][b, :, n:])


QK_OUTS = ('y', 'pk_out', 'pv_out', 'qk')


@pytest.mark.parametrize('bias_shape', ['1,1', 'B,N', '1,N', 'B,1'])
def test_gqa_attention_bias(bias_shape):
    """attention_bias [B or 1, N or 1, S, total_sequence_length] added to the scaled (and
    softcapped) scores inside the causal window: a first prompt, a prompt after a past, a
    decoding step with batches of different lengths, and one with a local window and softcap."""
    b, nq, nkv, d = 2, 4, 2, 8
    dims = lambda s, t: tuple(dict(B=b, N=nq).get(x, 1) for x in bias_shape.split(',')) + (s, t)
    m = gqa_model(bias=True, num_heads=nq, kv_num_heads=nkv)
    check(m, {**gqa_feeds(b, 6, nq, nkv, d, [5, 5], 6), 'ab': rand(*dims(6, 6))})
    m = gqa_model(past=True, bias=True, num_heads=nq, kv_num_heads=nkv)
    check(m, {**gqa_feeds(1, 3, nq, nkv, d, [7], 8, 10), 'ab': rand(*dims(3, 8))[:1]})
    check(m, {**gqa_feeds(b, 1, nq, nkv, d, [8, 5], 9, 9), 'ab': rand(*dims(1, 9))})
    m = gqa_model(past=True, bias=True, num_heads=nq, kv_num_heads=nkv, local_window_size=3,
                  softcap=2.0)
    check(m, {**gqa_feeds(b, 1, nq, nkv, d, [9, 4], 10, 10), 'ab': rand(*dims(1, 10))})


def test_gqa_head_sink_and_smooth_softmax():
    """head_sink: one more logit per head in each softmax (its exp in the sum, no output of its
    own), as gpt-oss's attention sinks; smooth_softmax=1 is the same with a logit of 0, 0 and -1
    the plain softmax. Prompts, decoding over a past, a local window, a sliding-window cache."""
    b, nq, nkv, d = 2, 4, 2, 8
    sink = {'sink': rand(nq, scale=3.0)}
    m = gqa_model(sink=True, num_heads=nq, kv_num_heads=nkv)
    check(m, {**gqa_feeds(b, 6, nq, nkv, d, [5, 3], 6), **sink})
    m = gqa_model(past=True, sink=True, num_heads=nq, kv_num_heads=nkv, local_window_size=3)
    check(m, {**gqa_feeds(b, 1, nq, nkv, d, [9, 4], 10, 10), **sink})
    m = gqa_model(past=True, sink=True, num_heads=nq, kv_num_heads=nkv, local_window_size=4,
                  sliding_window_cache=1)
    check(m, {**gqa_feeds(1, 1, nq, nkv, d, [11], 12, 6), **sink})
    feeds = gqa_feeds(b, 5, nq, nkv, d, [4, 4], 5)
    plain = check(gqa_model(num_heads=nq, kv_num_heads=nkv), feeds)[0]
    for flag in (0, -1):
        got = check(gqa_model(num_heads=nq, kv_num_heads=nkv, smooth_softmax=flag), feeds)[0]
        np.testing.assert_array_equal(got[0], plain[0])
    smooth = check(gqa_model(num_heads=nq, kv_num_heads=nkv, smooth_softmax=1), feeds)[0]
    assert not np.allclose(smooth[0], plain[0])
    zero = {'sink': np.zeros(nq, np.float32)}
    got = check(gqa_model(sink=True, num_heads=nq, kv_num_heads=nkv), {**feeds, **zero})[0]
    np.testing.assert_allclose(got[0], smooth[0], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize('mode', [1, 2])
def test_gqa_qk_output(mode):
    """output_qk [B, N, S, total_sequence_length]: the scores after scale, softcap and bias
    (qk_output=1) or the probabilities (2), zero outside each row's causal window and past each
    batch's length. Batches of different lengths, a local window with softcap, a sink."""
    b, nq, nkv, d = 2, 4, 2, 8
    m = gqa_model(outs=QK_OUTS, num_heads=nq, kv_num_heads=nkv, qk_output=mode)
    check(m, gqa_feeds(b, 5, nq, nkv, d, [4, 2], 5))
    m = gqa_model(past=True, outs=QK_OUTS, bias=True, sink=True, num_heads=nq, kv_num_heads=nkv,
                  qk_output=mode, local_window_size=3, softcap=2.0)
    check(m, {**gqa_feeds(b, 1, nq, nkv, d, [9, 4], 10, 10), 'ab': rand(b, nq, 1, 10),
              'sink': rand(nq)})
    m = gqa_model(past=True, outs=QK_OUTS, num_heads=nq, kv_num_heads=nkv, qk_output=mode)
    check(m, gqa_feeds(1, 70, nq, nkv, d, [99], 100, 30))


@pytest.mark.parametrize('past', [False, True])
def test_gqa_float16_bias_sink_qk(past):
    """The float16 kernel (a device session's fallback) with attention_bias, head_sink and
    output_qk: the float kernel's results on the float16 inputs, rounded to float16."""
    m = gqa_model(past=past, outs=QK_OUTS, bias=True, sink=True, num_heads=4, kv_num_heads=2,
                  qk_output=2)
    s, total = (1, 10) if past else (5, 5)
    feeds = {**gqa_feeds(2, s, 4, 2, 8, [9, 4] if past else [4, 4], total, 12 if past else 0),
             'ab': rand(2, 1, s, total), 'sink': rand(4)}
    f16 = {k: v.astype(np.float16) if v.dtype == np.float32 else v for k, v in feeds.items()}
    f32 = {k: v.astype(np.float32) if v.dtype == np.float16 else v for k, v in f16.items()}
    want = [w.astype(np.float16) for w in onyx.Session(m.SerializeToString()).run(None, f32)]
    got = half_session(as_float16(m)).run(None, f16)
    assert len(got) == 4
    for g, w in zip(got, want):
        assert g.dtype == np.float16
        np.testing.assert_array_equal(g, w)


def kv_quantized(bits, x, scale, per_channel):
    """numpy's codes of a [B, N, T, D] float cache: onnxruntime's contract (contrib_nlp.h)."""
    n, d = x.shape[1], x.shape[3]
    s = scale.reshape(n, 1, d) if per_channel else scale.reshape(())
    lo, hi = (-128, 127) if bits == 8 else (-8, 7)
    q = np.clip(np.rint(x * (np.float32(1) / s).astype(np.float32)), lo, hi)
    if bits == 8:
        return q.astype(np.int8)
    u = (q + 8).astype(np.uint8)
    return u[..., 0::2] | (u[..., 1::2] << 4)


@pytest.mark.parametrize('bits', [8, 4])
@pytest.mark.parametrize('kind', ['PER_TENSOR', 'PER_CHANNEL'])
def test_gqa_quantized_kv_cache(bits, kind):
    """kv_cache_bit_width 8 or 4 with k_quant_type = v_quant_type: new keys and values quantized
    into the present caches (int8, or int4 pairs in uint8), attention over the codes. A first
    prompt of two batches, decoding steps over its present, a prompt after a past, rotary: the
    present caches equal onnxruntime's byte for byte and numpy's codes of the float keys, the
    output onnxruntime's within float tolerance."""
    b, nq, nkv, d = 2, 4, 2, 16
    attrs = dict(num_heads=nq, kv_num_heads=nkv, k_quant_type=kind, v_quant_type=kind)
    shape = (nkv * d,) if kind == 'PER_CHANNEL' else (1,)
    scales = {'ks': rng.uniform(0.01, 0.04, shape).astype(np.float32),
              'vs': rng.uniform(0.01, 0.04, shape).astype(np.float32)}
    cols = d if bits == 8 else d // 2
    dt = np.int8 if bits == 8 else np.uint8
    m = gqa_model(past=True, kv_bits=bits, **attrs)
    empty = np.zeros((b, nkv, 0, cols), dt)
    feeds = {**gqa_feeds(b, 5, nq, nkv, d, [4, 2], 5), 'pk': empty, 'pv': empty, **scales}
    got, _ = check(m, feeds)
    assert got[1].dtype == dt and got[1].shape == (b, nkv, 5, cols)
    keys = feeds['k'].reshape(b, 5, nkv, d).transpose(0, 2, 1, 3)
    np.testing.assert_array_equal(got[1][0], kv_quantized(bits, keys, scales['ks'],
                                                          kind == 'PER_CHANNEL')[0])
    pk, pv, lens = got[1], got[2], [4, 2]
    for step in range(3):   # decoding: each batch one more token at its own length
        lens = [n + 1 for n in lens]
        f = {**gqa_feeds(b, 1, nq, nkv, d, lens, max(lens) + 1), 'pk': pk, 'pv': pv, **scales}
        got, _ = check(m, f)
        pk, pv = got[1], got[2]
    m = gqa_model(past=True, kv_bits=bits, **attrs)
    past = {'pk': rng.integers(0, 100, (1, nkv, 6, cols)).astype(dt),
            'pv': rng.integers(0, 100, (1, nkv, 6, cols)).astype(dt)}
    check(m, {**gqa_feeds(1, 3, nq, nkv, d, [8], 9), **past, **scales})
    c, sn = rope_caches(16, d // 2)
    ins = ['q', 'k', 'v', 'pk', 'pv', 'seqlens', 'total', 'cos', 'sin', '', '', '', 'ks', 'vs']
    cache = TP.INT8 if bits == 8 else TP.UINT8
    types = {'seqlens': I32, 'total': I32, 'pk': cache, 'pv': cache}
    rot = model([h.make_node('GroupQueryAttention', ins, ['y', 'pk_out', 'pv_out'], domain=MS,
                             name='subject', do_rotary=1, kv_cache_bit_width=bits, **attrs)],
                [(n, types.get(n, F)) for n in ins if n],
                [('y', F), ('pk_out', cache), ('pv_out', cache)])
    check(rot, {**gqa_feeds(1, 3, nq, nkv, d, [8], 9), **past, **scales, 'cos': c, 'sin': sn})


def test_gqa_quantized_cache_in_place():
    """An int8 cache bound as both past and present (onnxruntime-genai's binding): the new rows
    quantized into the bound buffer, the rows after them kept, the output as with separate
    buffers."""
    import onyx.ort as oort
    nq, nkv, d = 4, 2, 16
    m = gqa_model(past=True, kv_bits=8, num_heads=nq, kv_num_heads=nkv, k_quant_type='PER_TENSOR',
                  v_quant_type='PER_TENSOR')
    caches = {n: rng.integers(-100, 100, (1, nkv, 12, d)).astype(np.int8) for n in ('pk', 'pv')}
    feeds = {**gqa_feeds(1, 1, nq, nkv, d, [6], 7), **caches,
             'ks': np.array([0.02], np.float32), 'vs': np.array([0.03], np.float32)}
    want = onyx.Session(m.SerializeToString()).run(None, feeds)
    s = oort.InferenceSession(m.SerializeToString(), providers=['CPUExecutionProvider'])
    bound = {n: caches[n].copy() for n in caches}
    binding = s.io_binding()
    binding.bind_output('y')
    for n, out in (('pk', 'pk_out'), ('pv', 'pv_out')):
        binding.bind_cpu_input(n, bound[n])
        binding.bind_ortvalue_output(out, oort.OrtValue.ortvalue_from_numpy(bound[n]))
    for n in ('q', 'k', 'v', 'seqlens', 'total', 'ks', 'vs'):
        binding.bind_cpu_input(n, feeds[n])
    s.run_with_iobinding(binding)
    np.testing.assert_array_equal(binding.copy_outputs_to_cpu()[0], want[0])
    for n, w in (('pk', want[1]), ('pv', want[2])):
        np.testing.assert_array_equal(bound[n][:, :, :7], w[:, :, :7])
        np.testing.assert_array_equal(bound[n][:, :, 7:], caches[n][:, :, 7:])


def test_gqa_refusals():
    feeds = gqa_feeds(1, 2, 4, 2, 4, [1], 2)
    refused(gqa_model(num_heads=4, kv_num_heads=3), feeds, match='kv_num_heads')
    refused(gqa_model(num_heads=4, kv_num_heads=2, do_rotary=1), match='cos_cache')
    refused(gqa_model(num_heads=4, kv_num_heads=2, smooth_softmax=2), match='smooth_softmax')
    refused(gqa_model(outs=QK_OUTS, num_heads=4, kv_num_heads=2), match='output_qk')
    refused(gqa_model(num_heads=4, kv_num_heads=2, qk_output=1), match='output_qk')
    refused(gqa_model(outs=QK_OUTS, num_heads=4, kv_num_heads=2, qk_output=3), match='qk_output')
    for shape in ((1, 1, 2, 3), (1, 1, 1, 2), (1, 3, 2, 2), (2, 2)):
        refused(gqa_model(bias=True, num_heads=4, kv_num_heads=2),
                {**feeds, 'ab': rand(*shape)}, match='attention_bias')
    refused(gqa_model(sink=True, num_heads=4, kv_num_heads=2), {**feeds, 'sink': rand(2)},
            match='head_sink')
    refused(gqa_model(past=True, bias=True, num_heads=4, kv_num_heads=2, local_window_size=2,
                      sliding_window_cache=1), match='sliding_window_cache')
    q8 = dict(past=True, kv_bits=8, num_heads=4, kv_num_heads=2)
    refused(gqa_model(**q8, k_quant_type='PER_TENSOR', v_quant_type='PER_CHANNEL'),
            match='differ')
    refused(gqa_model(**q8, k_quant_type='NONE', v_quant_type='NONE'), match='kv_cache_bit_width')
    refused(gqa_model(past=True, num_heads=4, kv_num_heads=2, k_quant_type='PER_TENSOR',
                      v_quant_type='PER_TENSOR'), match='kv_cache_bit_width')
    refused(gqa_model(**q8, k_quant_type='PER_TOKEN', v_quant_type='PER_TOKEN'), match='PER_TOKEN')
    qfeeds = {**gqa_feeds(1, 2, 4, 2, 4, [1], 2), 'pk': np.zeros((1, 2, 0, 4), np.int8),
              'pv': np.zeros((1, 2, 0, 4), np.int8), 'ks': np.ones(1, np.float32),
              'vs': np.ones(1, np.float32)}
    refused(gqa_model(**q8, k_quant_type='PER_CHANNEL', v_quant_type='PER_CHANNEL'), qfeeds,
            match='k_scale')
    float_past = gqa_model(**q8, k_quant_type='PER_TENSOR', v_quant_type='PER_TENSOR')
    for v in float_past.graph.input:
        if v.name in ('pk', 'pv'):
            v.type.tensor_type.elem_type = F
    refused(float_past, match='past_key')
    refused(gqa_model(kv_bits=4, num_heads=2, kv_num_heads=1, k_quant_type='PER_TENSOR',
                      v_quant_type='PER_TENSOR'),
            {**gqa_feeds(1, 2, 2, 1, 3, [1], 2), 'ks': np.ones(1, np.float32),
             'vs': np.ones(1, np.float32)}, match='even')
    refused(gqa_model(**q8, k_quant_type='PER_TENSOR', v_quant_type='PER_TENSOR',
                      local_window_size=2, sliding_window_cache=1), match='sliding_window_cache')
    # output_qk's rows are total_sequence_length long: a batch longer than that is refused
    refused(gqa_model(past=True, outs=QK_OUTS, num_heads=4, kv_num_heads=2, qk_output=1),
            gqa_feeds(1, 1, 4, 2, 4, [6], 4, 8), match='seqlens_k')
    refused(gqa_model(num_heads=4, kv_num_heads=2), {**feeds, 'seqlens': np.array([5], np.int32)},
            match='seqlens_k')
    refused(gqa_model(num_heads=4, kv_num_heads=2), {**feeds, 'k': rand(1, 2, 12)}, match='key')


# ---------------------------------------------------------------- MatMulNBits

def matmul_model(k, n, bias=False):
    w = rand(k, n, scale=0.5)
    nodes = [h.make_node('MatMul', ['a', 'w'], ['mm' if bias else 'y'], name='mm')]
    inits = {'w': w}
    if bias:
        nodes.append(h.make_node('Add', ['mm', 'b'], ['y']))
        inits['b'] = rand(n)
    return model(nodes, [('a', F)], [('y', F)], inits, opset=21)


def ort_spread(m, feeds):
    """max |optimized - unoptimized| of onnxruntime's own runs, and the optimized output"""
    hi = ort_session(m).run(None, feeds)[0]
    lo = ort_session(m, ort.GraphOptimizationLevel.ORT_DISABLE_ALL).run(None, feeds)[0]
    return np.abs(hi - lo), hi


def check_quantized(m, feeds):
    spread, want = ort_spread(m, feeds)
    got = onyx.Session(m.SerializeToString(), threads=2).run(None, feeds)[0]
    assert got.shape == want.shape
    allowed = np.maximum(spread.max(), 1e-5 * np.abs(want).max() + 1e-6)
    assert np.abs(got - want).max() <= allowed, (np.abs(got - want).max(), allowed)


@pytest.mark.parametrize('bits, block, sym, k, n', [
    (4, 32, False, 96, 48), (4, 16, True, 80, 40), (4, 128, False, 200, 24),
    (8, 32, False, 64, 16)])
def test_matmul_nbits_quantizer(bits, block, sym, k, n):
    pytest.importorskip('onnx_ir', reason="onnxruntime's MatMul n-bit quantizer needs onnx-ir")
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer
    q = MatMulNBitsQuantizer(matmul_model(k, n, bias=True), bits=bits, block_size=block,
                             is_symmetric=sym)
    q.process()
    m = q.model.model
    ops = [nd.op_type for nd in m.graph.node]
    assert 'MatMulNBits' in ops and 'MatMul' not in ops, ops
    for shape in ((1, k), (3, 5, k), (2, 1, k)):
        check_quantized(m, {'a': rand(*shape)})


def nbits_model(k, n, bits, block, zp_kind=None, bias=False, dtype=F, const=True):
    """a hand-made MatMulNBits with random codes, scales, zero points (None, 'u8', 'float')"""
    kb = (k + block - 1) // block
    blob = block * bits // 8
    inits = {'B': rng.integers(0, 256, (n, kb, blob)).astype(np.uint8),
             'scales': (rng.random(n * kb) * 0.1 + 0.01).astype(np.float32)}
    ins = ['a', 'B', 'scales']
    if zp_kind == 'u8':
        inits['zp'] = rng.integers(0, 256, (n, (kb * bits + 7) // 8)).astype(np.uint8)
    elif zp_kind == 'float':
        inits['zp'] = (rng.random(n * kb) * (2 ** bits - 1)).astype(np.float32)
    ins.append('zp' if zp_kind else '')
    if bias:
        ins += ['', 'bias']
        inits['bias'] = rand(n)
    while ins[-1] == '':
        ins.pop()
    np_t = np.float16 if dtype == F16 else np.float32
    inits = {key: v.astype(np_t) if v.dtype == np.float32 else v for key, v in inits.items()}
    graph_inputs = [('a', dtype)]
    if not const:
        graph_inputs += [(key, TP.UINT8 if v.dtype == np.uint8 else dtype)
                         for key, v in inits.items()]
    m = model([h.make_node('MatMulNBits', ins, ['y'], domain=MS, name='subject', K=k, N=n,
                           bits=bits, block_size=block)], graph_inputs, [('y', dtype)],
              inits if const else {})
    return m, inits


@pytest.mark.parametrize('bits', [2, 4, 8])
@pytest.mark.parametrize('zp_kind', [None, 'u8', 'float'])
def test_matmul_nbits_forms(bits, zp_kind):
    if bits == 8 and zp_kind == 'float':
        pytest.skip('onnxruntime takes float zero points with 2 and 4 bits only')
    m, _ = nbits_model(70, 24, bits, 32, zp_kind, bias=True)
    check_quantized(m, {'a': rand(3, 70)})
    check_quantized(m, {'a': rand(2, 2, 70)})
    check_quantized(m, {'a': rand(1, 70)})


def test_matmul_nbits_weights_as_inputs_and_float16():
    # B, scales and zero points fed at run time: dequantized per run
    m, inits = nbits_model(64, 16, 4, 16, 'u8', const=False)
    feeds = {'a': rand(4, 64), **inits}
    m_const, _ = nbits_model(64, 16, 4, 16, 'u8')
    for init in m_const.graph.initializer:
        init.CopyFrom(nh.from_array(inits[init.name], init.name))
    want = ort_session(m_const).run(None, {'a': feeds['a']})[0]
    got = onyx.Session(m.SerializeToString()).run(None, feeds)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    m, _ = nbits_model(64, 16, 4, 32, None, dtype=F16)
    check(m, {'a': rand(2, 64).astype(np.float16)}, rtol=1e-2, atol=1e-2)


def test_matmul_nbits_refusals():
    m, _ = nbits_model(64, 16, 4, 16)
    refused(m, {'a': rand(2, 63)}, match='K')
    m.graph.node[0].attribute[-1].i = 24  # block_size not a power of two
    refused(m, match='block_size')
    m, _ = nbits_model(64, 16, 4, 16)
    m.graph.node[0].attribute[1].i = 17  # N no longer matches B
    refused(m, match='B')


# ---------------------------------------------------------------- the transformer optimizer

def transformers_optimizer():
    """onnxruntime.transformers.optimizer.optimize_model, or a skip naming what is missing."""
    pytest.importorskip('sympy', reason='the transformer optimizer needs sympy')
    from onnxruntime.transformers.optimizer import optimize_model
    return optimize_model


@contextlib.contextmanager
def torch_version_stub():
    """The optimizer's ORT-backed levels (opt_level >= 1) import torch only to read
    torch.version.hip, which matters for GPU providers alone: without torch, a stand-in answers
    that read while the optimizer runs on the CPU."""
    try:
        import torch  # noqa: F401
        yield
        return
    except ImportError:
        pass
    stub = types.ModuleType('torch')
    stub.version = types.SimpleNamespace(hip=None, cuda=None)
    sys.modules['torch'], sys.modules['torch.version'] = stub, stub.version
    try:
        yield
    finally:
        del sys.modules['torch'], sys.modules['torch.version']


def optimized(path_or_model, opt_level, **kw):
    optimize_model = transformers_optimizer()
    with tempfile.TemporaryDirectory() as tmp, torch_version_stub():
        # the ORT-backed levels write the optimized model beside the input: keep that in tmp
        src = os.path.join(tmp, 'model.onnx')
        if isinstance(path_or_model, str):
            shutil.copy(path_or_model, src)
        else:
            onnx.save(path_or_model, src)
        opt = optimize_model(src, opt_level=opt_level, use_gpu=False, **kw)
        # saving adds the com.microsoft opset import that the in-memory model lacks
        out = os.path.join(tmp, 'optimized.onnx')
        opt.save_model_to_file(out)
        return onnx.load(out)


def op_types(m):
    return {(nd.domain or '', nd.op_type) for nd in m.graph.node}


def bert_feeds(b, s, vocab, dtype=np.int64, pad=True):
    mask = np.ones((b, s), dtype)
    if pad:
        mask[1, s - 4:] = 0  # right padding of the second sequence
    return {'input_ids': rng.integers(0, vocab, (b, s)).astype(dtype),
            'attention_mask': mask,
            'token_type_ids': np.concatenate([np.zeros((b, s // 2)), np.ones((b, s - s // 2))],
                                             1).astype(dtype)}


@pytest.mark.parametrize('opt_level', [0, 1, 2])
def test_tiny_bert_optimized(opt_level):
    m = optimized(TINY_BERT, opt_level, model_type='bert', num_heads=2, hidden_size=64)
    ops = op_types(m)
    assert (MS, 'SkipLayerNormalization') in ops, ops
    assert (MS, 'BiasGelu') in ops or (MS, 'Gelu') in ops, ops
    for pad in (False, True):
        check(m, bert_feeds(2, 16, 256, pad=pad))


def i64(*v):
    return np.array(v, np.int64)


def f32(v):
    return np.array(v, np.float32)


class Graph:
    """A graph under construction: nodes named after their first output, initializers by name."""

    def __init__(self):
        self.nodes, self.inits = [], {}

    def init(self, name, value):
        self.inits[name] = np.asarray(value)
        return name

    def node(self, op, ins, outs, **attrs):
        outs = [outs] if isinstance(outs, str) else list(outs)
        self.nodes.append(h.make_node(op, ins, outs, name=outs[0], **attrs))
        return outs[0] if len(outs) == 1 else outs

    def linear(self, x, k, n, name):
        w = self.init(name + '.w', rand(k, n, scale=0.2))
        return self.node('Add', [self.node('MatMul', [x, w], name + '.mm'),
                                 self.init(name + '.b', rand(n, scale=0.1))], name)

    def layernorm(self, x, hidden, name, eps):
        return self.node('LayerNormalization',
                         [x, self.init(name + '.g', 1 + rand(hidden, scale=0.1)),
                          self.init(name + '.b', rand(hidden, scale=0.1))], name, epsilon=eps)

    def model(self, name, inputs, outputs):
        graph = h.make_graph(self.nodes, name, inputs, outputs,
                             [nh.from_array(v, n) for n, v in self.inits.items()])
        return h.make_model(graph, opset_imports=[h.make_opsetid('', 17)])


def classic_bert(layers=2, hidden=32, heads=4, vocab=60, max_pos=40, inter=64):
    """BERT as the legacy torch exporter wrote it (the patterns the optimizer fuses into
    EmbedLayerNormalization, Attention, SkipLayerNormalization, BiasGelu and FastGelu): layer 0
    with erf GELU, layer 1 with tanh GELU."""
    g = Graph()
    node, init, d = g.node, g.init, hidden // heads
    # embeddings: the position ids are a constant row sliced to the sequence length
    seq = node('Gather', [node('Shape', ['input_ids'], 'shape'),
                          init('one', np.array(1, np.int64))], 'seq_len', axis=0)
    ends = node('Unsqueeze', [seq, init('ax0', i64(0))], 'seq_len1')
    pos_ids = node('Slice', [init('position_ids', np.arange(max_pos, dtype=np.int64)[None]),
                             init('zero1', i64(0)), ends, init('one1', i64(1)),
                             init('one1b', i64(1))], 'pos_ids')
    word = node('Gather', [init('word_emb', rand(vocab, hidden, scale=0.5)), 'input_ids'], 'word')
    seg = node('Gather', [init('seg_emb', rand(2, hidden, scale=0.5)), 'token_type_ids'], 'seg')
    pos = node('Gather', [init('pos_emb', rand(max_pos, hidden, scale=0.5)), pos_ids], 'pos')
    x = g.layernorm(node('Add', [node('Add', [word, seg], 'emb_ws'), pos], 'emb_sum'), hidden,
                    'emb_ln', 1e-12)
    # the additive mask: (1 - mask) * -10000 over [B, 1, 1, S]
    m = node('Unsqueeze', [node('Unsqueeze', ['attention_mask', init('ax1', i64(1))], 'mask1'),
                           init('ax2', i64(2))], 'mask2')
    m = node('Mul', [node('Sub', [init('one_f', f32(1.0)), node('Cast', [m], 'maskf', to=F)],
                          'mask_inv'), init('neg', f32(-10000.0))], 'mask_add')
    heads_shape = init('heads_shape', i64(0, 0, heads, d))
    merged_shape = init('merged_shape', i64(0, 0, hidden))

    def split_heads(t, perm):
        return node('Transpose', [node('Reshape', [t, heads_shape], t + '.r')], t + '.t', perm=perm)

    for li in range(layers):
        p = f'l{li}'
        q = split_heads(g.linear(x, hidden, hidden, p + '.q'), [0, 2, 1, 3])
        k = split_heads(g.linear(x, hidden, hidden, p + '.k'), [0, 2, 3, 1])
        v = split_heads(g.linear(x, hidden, hidden, p + '.v'), [0, 2, 1, 3])
        sc = node('Div', [node('MatMul', [q, k], p + '.qk'), init(p + '.sqrt', f32(np.sqrt(d)))],
                  p + '.scaled')
        pr = node('Softmax', [node('Add', [sc, m], p + '.masked')], p + '.probs', axis=3)
        ctx = node('Transpose', [node('MatMul', [pr, v], p + '.ctx')], p + '.ctxt',
                   perm=[0, 2, 1, 3])
        ctx = node('Reshape', [ctx, merged_shape], p + '.ctxr')
        x = g.layernorm(node('Add', [g.linear(ctx, hidden, hidden, p + '.o'), x], p + '.res1'),
                        hidden, p + '.ln1', 1e-12)
        f = g.linear(x, hidden, inter, p + '.ff1')
        one, half = init(p + '.one', f32(1.0)), init(p + '.half', f32(0.5))
        if li % 2 == 0:  # erf GELU
            e = node('Erf', [node('Div', [f, init(p + '.r2', f32(np.sqrt(2.0)))], p + '.div')],
                     p + '.erf')
            xe = node('Mul', [f, node('Add', [e, one], p + '.e1')], p + '.xe')
            act = node('Mul', [xe, half], p + '.gelu')
        else:  # tanh GELU
            cube = node('Mul', [node('Pow', [f, init(p + '.three', f32(3.0))], p + '.cube'),
                                init(p + '.c', f32(0.044715))], p + '.c3')
            arg = node('Mul', [node('Add', [f, cube], p + '.inner'),
                               init(p + '.s2pi', f32(np.sqrt(2 / np.pi)))], p + '.arg')
            t1 = node('Add', [node('Tanh', [arg], p + '.tanh'), one], p + '.t1')
            act = node('Mul', [node('Mul', [f, half], p + '.xh'), t1], p + '.gelu')
        x = g.layernorm(node('Add', [g.linear(act, inter, hidden, p + '.ff2'), x], p + '.res2'),
                        hidden, p + '.ln2', 1e-12)
    node('Identity', [x], 'last_hidden_state')
    sym = ['batch', 'seq']
    return g.model('classic_bert', [h.make_tensor_value_info(n, I64, sym) for n in
                                    ('input_ids', 'attention_mask', 'token_type_ids')],
                   [h.make_tensor_value_info('last_hidden_state', F, sym + [hidden])])


@pytest.mark.parametrize('raw_mask', [False, True])
def test_classic_bert_fully_fused(raw_mask):
    from onnxruntime.transformers.fusion_options import FusionOptions
    opts = FusionOptions('bert')
    opts.use_raw_attention_mask(raw_mask)
    m = optimized(classic_bert(), 0, model_type='bert', num_heads=4, hidden_size=32,
                  optimization_options=opts)
    ops = op_types(m)
    for op in ('EmbedLayerNormalization', 'Attention', 'SkipLayerNormalization', 'BiasGelu',
               'FastGelu'):
        assert (MS, op) in ops, (op, ops)
    assert ('', 'Softmax') not in ops and ('', 'Erf') not in ops, ops
    for b, s, pad in ((2, 12, True), (2, 12, False), (1, 5, False)):
        check(m, bert_feeds(b, s, 60, pad=pad))


def gpt2_block(hidden=32, heads=4, max_seq=32):
    """One GPT-2 block with past state as the legacy torch exporter wrote it: fused QKV split,
    past concatenated, a causal band sliced from a constant triangle, Gemm projection."""
    g = Graph()
    node, init, d = g.node, g.init, hidden // heads
    ax0, ax1, ax2, ax3 = (init(f'ax{i}', i64(i)) for i in range(4))
    m1, step1 = init('m1', i64(-1)), init('st1', i64(1))
    x0 = node('Add', ['input_1', 'input_2'], 'ln_in')
    fc = g.linear(g.layernorm(x0, hidden, 'ln1', 1e-5), hidden, 3 * hidden, 'fc')
    q, k, v = node('Split', [fc, init('split3', i64(hidden, hidden, hidden))], ['q', 'k', 'v'],
                   axis=2)
    hs = init('heads_shape', i64(0, 0, heads, d))
    qt, kt, vt = (node('Transpose', [node('Reshape', [t, hs], t + '.r')], t + '.t',
                       perm=[0, 2, 1, 3]) for t in (q, k, v))
    pk, pv = node('Split', ['past', init('split11', i64(1, 1))], ['past_k1', 'past_v1'], axis=0)
    kc = node('Concat', [node('Squeeze', [pk, ax0], 'past_k'), kt], 'k_all', axis=-2)
    vc = node('Concat', [node('Squeeze', [pv, ax0], 'past_v'), vt], 'v_all', axis=-2)
    node('Concat', [node('Unsqueeze', [kc, ax0], 'k_all1'), node('Unsqueeze', [vc, ax0], 'v_all1')],
         'present', axis=0)

    def length(t, n):  # dim -2 of t as a scalar
        sl = node('Slice', [node('Shape', [t], n + '.shape'), init('m2', i64(-2)), m1, ax0],
                  n + '.sl')
        return node('Squeeze', [sl, ax0], n + '.len')

    # the causal mask: rows [T-S, T) and columns [0, T) of a constant lower triangle
    s_len, t_len = length(qt, 'qlen'), length(kc, 'tlen')
    t1 = node('Unsqueeze', [t_len, ax0], 'tlen1')
    p1 = node('Unsqueeze', [node('Sub', [t_len, s_len], 'past_len'), ax0], 'past_len1')
    tri = init('causal', np.tril(np.ones((max_seq, max_seq), np.uint8))[None, None])
    band = node('Slice', [tri, p1, t1, ax2, step1], 'band')
    band = node('Slice', [band, init('z', i64(0)), t1, ax3, step1], 'band2')
    band = node('Cast', [band], 'causal_b', to=TP.BOOL)
    # the padding mask: (1 - mask) * -10000 over [B, 1, 1, T]
    mk = node('Reshape', ['input_mask', init('mshape', i64(0, -1))], 'mask_r')
    mk = node('Unsqueeze', [node('Unsqueeze', [mk, ax1], 'mask1'), ax2], 'mask2')
    mk = node('Mul', [node('Sub', [init('one', f32(1.0)), mk], 'mask_inv'),
                      init('neg', f32(-10000.0))], 'mask_add')
    kT = node('Transpose', [kc], 'k_allT', perm=[0, 1, 3, 2])
    sc = node('Div', [node('MatMul', [qt, kT], 'qk'), init('sqrt_d', f32(np.sqrt(d)))], 'qk_scaled')
    sc = node('Where', [band, sc, init('neg2', f32(-10000.0))], 'qk_causal')
    probs = node('Softmax', [node('Add', [sc, mk], 'qk_masked')], 'probs', axis=3)
    ctx = node('Transpose', [node('MatMul', [probs, vc], 'ctx')], 'ctx.t', perm=[0, 2, 1, 3])
    ctx = node('Reshape', [ctx, init('merged', i64(0, 0, hidden))], 'ctx.r')
    # Gemm over [B*S, hidden], then back to [B, S, hidden]
    shp = node('Shape', [ctx], 'ctx.shape')
    last = node('Slice', [shp, m1, init('inf', i64(2**63 - 1)), ax0], 'ctx.last1')
    last = node('Unsqueeze', [node('Squeeze', [last, ax0], 'ctx.last'), ax0], 'ctx.last2')
    flat_shape = node('Concat', [init('minus1', i64(-1)), last], 'flat_shape', axis=0)
    proj = node('Gemm', [node('Reshape', [ctx, flat_shape], 'ctx.flat'),
                         init('proj.w', rand(hidden, hidden, scale=0.2)),
                         init('proj.b', rand(hidden, scale=0.1))], 'proj')
    dims = [node('Unsqueeze', [node('Gather', [shp, init(f'i{i}', np.array(i, np.int64))],
                                    f'ctx.d{i}', axis=0), ax0], f'ctx.d{i}1') for i in (0, 1)]
    out_shape = node('Concat', dims + [init('hid', i64(hidden))], 'out_shape', axis=0)
    res = node('Add', [node('Reshape', [proj, out_shape], 'proj.r'), x0], 'res')
    node('Identity', [g.layernorm(res, hidden, 'ln2', 1e-5)], 'output')
    B, S, T, P = 'batch', 'seq', 'total', 'past_seq'
    vi = h.make_tensor_value_info
    return g.model('gpt2_block',
                   [vi('input_1', F, [B, S, hidden]), vi('input_2', F, [B, S, hidden]),
                    vi('input_mask', F, [B, T]), vi('past', F, [2, B, heads, P, d])],
                   [vi('output', F, [B, S, hidden]), vi('present', F, [2, B, heads, T, d])])


@pytest.mark.parametrize('s, p', [(3, 4), (1, 6), (5, 0)])
def test_gpt2_block_optimized(s, p):
    """model_type='gpt2': one block with past state fuses into a unidirectional Attention with
    past/present and a raw 2-D mask, and a SkipLayerNormalization."""
    m = optimized(gpt2_block(), 0, model_type='gpt2', num_heads=4, hidden_size=32)
    ops = op_types(m)
    assert (MS, 'Attention') in ops and (MS, 'SkipLayerNormalization') in ops, ops
    assert ('', 'Softmax') not in ops, ops
    att = next(nd for nd in m.graph.node if nd.op_type == 'Attention')
    assert any(a.name == 'unidirectional' and a.i == 1 for a in att.attribute)
    b = 2
    mask = np.ones((b, p + s), np.float32)
    mask[1, :min(2, p + s - 1)] = 0  # left padding of the second sequence
    check(m, {'input_1': rand(b, s, 32), 'input_2': rand(b, s, 32), 'input_mask': mask,
              'past': rand(2, b, 4, p, 8)})



def test_contrib_op_without_opset_import():
    """The transformer optimizer's in-memory models use com.microsoft ops without importing the
    domain; onnxruntime runs them, and onyx takes the domain's one version."""
    m = model([h.make_node('FastGelu', ['x'], ['y'], domain=MS)], [('x', F)], [('y', F)])
    del m.opset_import[1]
    assert [o.domain for o in m.opset_import] == ['']
    check(m, {'x': rand(2, 5)})
