"""com.microsoft ops as onnxruntime's own tools write them, on tiny committed models
(tests/models/contrib/, made by tools/contrib_models/make_contrib_models.py): onnxruntime-genai's
model builder (GroupQueryAttention with rotary, SimplifiedLayerNormalization,
SkipSimplifiedLayerNormalization, MatMulNBits; on HunYuan, standalone RotaryEmbedding before
GroupQueryAttention without rotary), the transformer optimizer on BERT (MultiHeadAttention,
EmbedLayerNormalization, SkipLayerNormalization, BiasGelu; with the bias fusion off, Gelu), CLIP (QuickGelu, SkipLayerNormalization)
and T5 (SkipSimplifiedLayerNormalization), and onnxruntime's graph optimizer (FusedMatMul). Each
model must still hold the ops its tool wrote; onyx's outputs are compared with the onnxruntime
outputs saved beside it and with onnxruntime run now (float: rtol 1e-4, atol 1e-5; MatMulNBits at
accuracy_level 4, where both quantize the activations to int8: the model rewritten to
accuracy_level 0 against onnxruntime's at level 0 to float rounding, and as written within
onnxruntime's own spread between the two levels)."""
import os

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import onyx

DIR = os.path.join(os.path.dirname(__file__), '..', 'models', 'contrib')
MS = 'com.microsoft'
RTOL, ATOL = 1e-4, 1e-5
EXPECTED_OPS = {
    'fused_matmul': {(MS, 'FusedMatMul')},
    'clip_text': {(MS, 'QuickGelu'), (MS, 'SkipLayerNormalization')},
    't5_encoder': {(MS, 'SkipSimplifiedLayerNormalization')},
    'genai_llama_fp32': {(MS, 'GroupQueryAttention'), ('', 'SimplifiedLayerNormalization'),
                         (MS, 'SkipSimplifiedLayerNormalization')},
    'genai_llama_int4': {(MS, 'GroupQueryAttention'), ('', 'SimplifiedLayerNormalization'),
                         (MS, 'SkipSimplifiedLayerNormalization'), (MS, 'MatMulNBits')},
    'genai_hunyuan_rotary': {(MS, 'RotaryEmbedding'), (MS, 'GroupQueryAttention'),
                             ('', 'SimplifiedLayerNormalization'), (MS, 'SkipSimplifiedLayerNormalization')},
    'bert_mha': {(MS, 'MultiHeadAttention'), (MS, 'EmbedLayerNormalization'), (MS, 'SkipLayerNormalization'),
                 (MS, 'BiasGelu')},
    # the same BERT with the bias fusion off: the erf GELU after the intermediate bias Add is a Gelu
    'bert_gelu': {(MS, 'Gelu'), (MS, 'MultiHeadAttention'), (MS, 'EmbedLayerNormalization'),
                  (MS, 'SkipLayerNormalization')},
}


def load(name):
    m = onnx.load(os.path.join(DIR, name + '.onnx'))
    data = np.load(os.path.join(DIR, name + '.npz'))
    feeds = {k[3:]: data[k] for k in data.files if k.startswith('in.')}
    saved = {k[4:]: data[k] for k in data.files if k.startswith('out.')}
    return m, feeds, saved


def ort_run(m, feeds):
    so = ort.SessionOptions()
    so.log_severity_level = 3
    s = ort.InferenceSession(m.SerializeToString(), so, providers=['CPUExecutionProvider'])
    return dict(zip([o.name for o in s.get_outputs()], s.run(None, feeds)))


def onyx_run(m, feeds):
    s = onyx.Session(m.SerializeToString(), threads=2)
    names = [o.name for o in m.graph.output]
    return dict(zip(names, s.run(None, feeds)))


def accuracy_level_0(m):
    m = onnx.ModelProto.FromString(m.SerializeToString())
    for n in m.graph.node:
        if n.op_type == 'MatMulNBits':
            for a in n.attribute:
                if a.name == 'accuracy_level':
                    a.i = 0
    return m


def compare(got, want, rtol=RTOL, atol=ATOL, allowed=None):
    assert set(got) == set(want), (sorted(got), sorted(want))
    for k, w in want.items():
        g = got[k]
        assert g.shape == w.shape and g.dtype == w.dtype, (k, g.shape, w.shape, g.dtype, w.dtype)
        if allowed is None:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=k)
        else:
            assert np.abs(g - w).max() <= allowed[k], (k, np.abs(g - w).max(), allowed[k])


@pytest.mark.parametrize('name', sorted(EXPECTED_OPS))
def test_tool_model(name):
    m, feeds, saved = load(name)
    ops = {(n.domain or '', n.op_type) for n in m.graph.node}
    assert EXPECTED_OPS[name] <= ops, (name, sorted(EXPECTED_OPS[name] - ops))
    got = onyx_run(m, feeds)
    if any(n.op_type == 'MatMulNBits' for n in m.graph.node):
        # at accuracy_level 0 onyx and onnxruntime both compute in float: equal to rounding;
        # at the model's level 4 both quantize activations to int8, checked below within
        # onnxruntime's own spread between the levels
        exact = ort_run(accuracy_level_0(m), feeds)
        compare(onyx_run(accuracy_level_0(m), feeds), exact)
        # the saved outputs are onnxruntime's at the model's accuracy_level 4
        live = ort_run(m, feeds)
        allowed = {k: np.abs(live[k] - exact[k]).max() + 1e-5 * np.abs(v).max() + 1e-6
                   for k, v in saved.items()}
        compare(got, saved, allowed=allowed)
        compare(got, live, allowed=allowed)
    else:
        compare(got, saved)
        compare(got, ort_run(m, feeds))


def test_genai_attributes():
    """The builder's GroupQueryAttention applies the rotary embedding itself (cos/sin caches)."""
    for name in ('genai_llama_fp32', 'genai_llama_int4'):
        m, _, _ = load(name)
        gqa = [n for n in m.graph.node if n.op_type == 'GroupQueryAttention']
        assert len(gqa) == 2
        for n in gqa:
            attrs = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
            assert attrs['do_rotary'] == 1 and attrs['num_heads'] == 4 and attrs['kv_num_heads'] == 2
            assert n.input[7] and n.input[8], list(n.input)  # cos_cache, sin_cache


def test_hunyuan_rotary_attributes():
    """The HunYuan model applies RotaryEmbedding to Q and K (3-D input, head size from the caches)
    and GroupQueryAttention does no rotary of its own."""
    m, _, _ = load('genai_hunyuan_rotary')
    rot = [n for n in m.graph.node if n.op_type == 'RotaryEmbedding']
    assert len(rot) == 4 and all(n.domain == MS for n in rot)
    for n in rot:
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
        assert attrs.get('num_heads', 0) == 0 and attrs.get('interleaved', 0) == 0, attrs
        assert list(n.input[1:]) == ['position_ids', 'cos_cache', 'sin_cache'], list(n.input)
    for n in m.graph.node:
        if n.op_type == 'GroupQueryAttention':
            attrs = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
            assert attrs.get('do_rotary', 0) == 0


def test_bert_mha_attributes():
    """The optimizer's MultiHeadAttention: separate Q/K/V, packed bias, 1-D key_padding_mask."""
    m, _, _ = load('bert_mha')
    mha = [n for n in m.graph.node if n.op_type == 'MultiHeadAttention']
    assert len(mha) == 2
    elns = [n for n in m.graph.node if n.op_type == 'EmbedLayerNormalization']
    assert len(elns) == 1
    for n in mha:
        assert all(n.input[:5]) and n.input[4] == elns[0].output[1], list(n.input)
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
        assert attrs['num_heads'] == 4


@pytest.mark.parametrize('name', ['genai_llama_fp32', 'genai_llama_int4', 'genai_hunyuan_rotary'])
def test_genai_decode_steps(name):
    """Two decode steps after the prompt, each fed the presents of the step before (onyx's own
    for onyx, onnxruntime's for onnxruntime), against onnxruntime run now. Where the model takes
    position_ids (the standalone RotaryEmbedding), each step is at the next position of its row."""
    m, feeds, _ = load(name)
    if name.endswith('int4'):
        m = accuracy_level_0(m)
    rng = np.random.default_rng(3)
    got, want = onyx_run(m, feeds), ort_run(m, feeds)
    mask = feeds['attention_mask']
    pos = feeds.get('position_ids')
    vocab = want['logits'].shape[-1]
    for _ in range(2):
        mask = np.concatenate([mask, np.ones((mask.shape[0], 1), np.int64)], 1)
        step = {'input_ids': rng.integers(0, vocab, (mask.shape[0], 1)).astype(np.int64),
                'attention_mask': mask}
        if pos is not None:
            pos = pos[:, -1:] + 1
            step['position_ids'] = pos
        past = {k.replace('present.', 'past_key_values.'): k for k in want if k.startswith('present.')}
        got = onyx_run(m, dict(step, **{p: got[k] for p, k in past.items()}))
        want = ort_run(m, dict(step, **{p: want[k] for p, k in past.items()}))
        compare(got, want)
        assert got['present.0.key'].shape[2] == mask.shape[1]
