"""The KV cache in place: GroupQueryAttention's past and present bound to one buffer of the maximum
length (onnxruntime-genai's past_present_share_buffer), through io_binding and Session.run_into
(onyx_rep_run_into in include/onyx.h). On the committed tiny builder exports (tests/models/genai)
onyx's decode through such a binding matches onnxruntime's through the same binding: logits within
float32 rounding at accuracy_level 1, and the buffers themselves, rows past the tokens included
(left as they were: the cache is appended in place, not copied). Aliases nothing declares safe are
computed apart and copied into their targets, or refused where two targets overlap."""
import json
import os
import shutil

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

import onyx
from onyx import ort as onyx_ort

ort = pytest.importorskip('onnxruntime')

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, '..', 'models', 'genai')
ARCHS = ['llama_fp32', 'qwen2_int4', 'mistral_int4', 'qwen3_int4', 'phi3_int4', 'phi3_5_int4',
         'phi4_int4', 'gemma2_int4']
PROMPT = [5, 17, 42, 99, 100, 7, 3, 250, 12, 64]
TOTAL = 72        # tokens at the end: past Phi-3.5's 64 positions, many times Gemma 2's window
SPARE = 8         # rows of the buffers past the last token, which the decode must leave alone
SENTINEL = 7.0    # what those rows hold from the start
MS = 'com.microsoft'
rng = np.random.default_rng(34)


def at_level1(name, tmp_path):
    """The export with every MatMulNBits at accuracy_level 1 (exact float arithmetic)."""
    src, dst = os.path.join(MODELS, name), str(tmp_path / name)
    shutil.copytree(src, dst)
    path = os.path.join(dst, 'model.onnx')
    m = onnx.load(path, load_external_data=False)
    for n in m.graph.node:
        for a in n.attribute:
            if n.op_type == 'MatMulNBits' and a.name == 'accuracy_level':
                a.i = 1
    onnx.save(m, path)
    return dst


def cap_window(folder):
    cfg = json.load(open(os.path.join(folder, 'genai_config.json')))['model']['decoder']
    return cfg['sliding_window']['window_size']


def shared_decode(folder, rt, tokens=None):
    """Prompt then greedy decode (or `tokens`) to TOTAL tokens through io_binding of engine rt
    (onnxruntime or onyx.ort), each cache one buffer bound as past and present: the logits of
    each step, the tokens, the buffers, and the names of the window-sized ones."""
    so = rt.SessionOptions()
    so.intra_op_num_threads = 2
    s = rt.InferenceSession(os.path.join(folder, 'model.onnx'), so,
                            providers=['CPUExecutionProvider'])
    names = [i.name for i in s.get_inputs()]
    cfg = json.load(open(os.path.join(folder, 'genai_config.json')))['model']['decoder']
    window = cfg.get('sliding_window') or {}
    bufs, windowed = {}, set()
    binding = s.io_binding()
    binding.bind_output('logits')
    for n in names:
        if n.startswith('past_key_values.'):
            if int(n.split('.')[1]) in window.get('layers', []):
                length = window['window_size'] + 3
                windowed.add(n)
            else:
                length = TOTAL + SPARE
            bufs[n] = np.full((1, cfg['num_key_value_heads'], length, cfg['head_size']), SENTINEL,
                              np.float32)
            value = rt.OrtValue.ortvalue_from_numpy(bufs[n])
            binding.bind_ortvalue_input(n, value)
            binding.bind_ortvalue_output(n.replace('past_key_values', 'present'), value)
    ids, new, logits = list(PROMPT), list(PROMPT), []
    while True:
        binding.bind_cpu_input('input_ids', np.array([new], np.int64))
        binding.bind_cpu_input('attention_mask', np.ones((1, len(ids)), np.int64))
        if 'position_ids' in names:
            binding.bind_cpu_input('position_ids',
                                   np.arange(len(ids) - len(new), len(ids), dtype=np.int64)[None])
        binding.bind_output('logits')   # its shape changes after the prompt: onnxruntime allocates it anew
        s.run_with_iobinding(binding)
        logits.append(binding.get_outputs()[0].numpy()[0, -1].copy())
        if len(ids) >= TOTAL:
            return np.array(logits), ids, bufs, windowed
        t = tokens[len(ids)] if tokens else int(np.argmax(logits[-1]))
        ids.append(t)
        new = [t]


@pytest.mark.parametrize('name', ARCHS)
def test_shared_buffers_equal_onnxruntime(name, tmp_path):
    folder = at_level1(name, tmp_path) if name.endswith('int4') else os.path.join(MODELS, name)
    want, ids, want_bufs, windowed = shared_decode(folder, ort)
    got, got_ids, got_bufs, _ = shared_decode(folder, onyx_ort, ids)
    assert got_ids == ids
    assert np.abs(got - want).max() <= 1e-5 * np.abs(want).max(), name
    for n, w in want_bufs.items():
        g = got_bufs[n]
        rows = TOTAL   # the rows holding tokens; the others are the caller's
        if n in windowed:   # the most recent L(TOTAL) positions (onnxruntime evicts C - W + 1 at once)
            cap, win = w.shape[2], cap_window(folder)
            evict = cap - win + 1
            rows = TOTAL - evict * -(-(TOTAL - cap) // evict)
        assert np.abs(g[:, :, :rows] - w[:, :, :rows]).max() <= 1e-5 * np.abs(w).max(), n
        if n not in windowed:   # appended in place: the rows after the last token untouched
            assert (g[:, :, TOTAL:] == SENTINEL).all(), n


@pytest.mark.parametrize('name', ['llama_fp32', 'gemma2_int4'])
def test_genai_share_buffer_on_and_off_give_the_same_tokens(name):
    import onyx.genai as genai
    seqs = []
    for share in (True, False):
        model = genai.Model(os.path.join(MODELS, name), threads=2)
        assert model.config.search['past_present_share_buffer']   # the builder's default
        params = genai.GeneratorParams(model)
        params.set_search_options(max_length=40, do_sample=False, past_present_share_buffer=share)
        gen = genai.Generator(model, params)
        gen.append_tokens(genai.Tokenizer(model).encode('the quick brown fox'))
        while not gen.is_done():
            gen.generate_next_token()
        seqs.append([int(t) for t in gen.get_sequence(0)])
    assert len(seqs[0]) == 40 and seqs[0] == seqs[1]


# ---------------------------------------------------------------- aliases onyx must not trust

def model(nodes, inputs, outputs, inits=()):
    g = h.make_graph(nodes, 'g', [h.make_tensor_value_info(n, t, None) for n, t in inputs],
                     [h.make_tensor_value_info(n, t, None) for n, t in outputs],
                     [nh.from_array(v, n) for n, v in dict(inits).items()])
    return h.make_model(g, opset_imports=[h.make_opsetid('', 17), h.make_opsetid(MS, 1)])


def gqa_then_read_past(b=1, nq=4, nkv=2, d=8):
    """GroupQueryAttention, then a node that reads past_key after it (z = past_key + sum(y))."""
    ins = ['q', 'k', 'v', 'pk', 'pv', 'seqlens', 'total']
    nodes = [h.make_node('GroupQueryAttention', ins, ['y', 'pk_out', 'pv_out'], domain=MS,
                         num_heads=nq, kv_num_heads=nkv),
             h.make_node('ReduceSum', ['y'], ['ys'], keepdims=0),
             h.make_node('Add', ['pk', 'ys'], ['z'])]
    types = {'seqlens': TP.INT32, 'total': TP.INT32}
    return model(nodes, [(n, types.get(n, TP.FLOAT)) for n in ins],
                 [(n, TP.FLOAT) for n in ('y', 'pk_out', 'pv_out', 'z')])


def gqa_feeds(cap=12, past=5, b=1, nq=4, nkv=2, d=8):
    r = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    return {'q': r(b, 1, nq * d), 'k': r(b, 1, nkv * d), 'v': r(b, 1, nkv * d),
            'pk': r(b, nkv, cap, d), 'pv': r(b, nkv, cap, d),
            'seqlens': np.full(b, past, np.int32), 'total': np.array([past + 1], np.int32)}


def test_past_read_after_the_attention_is_not_overwritten():
    s = onyx.Session(gqa_then_read_past().SerializeToString(), threads=2)
    feeds = gqa_feeds()
    want = dict(zip(['y', 'pk_out', 'pv_out', 'z'], s.run(None, feeds)))
    pk, pv = feeds['pk'].copy(), feeds['pv'].copy()
    shared = {**feeds, 'pk': pk, 'pv': pv}
    y, z = s.run_into(['y', 'z'], shared, {'pk_out': pk, 'pv_out': pv})
    np.testing.assert_array_equal(y, want['y'])
    np.testing.assert_array_equal(z, want['z'])   # read the past as it was, not the present
    # past_key, read later, got its present computed apart and copied in (rows past the tokens
    # zeroed, as a present of its own has them); past_value, read by the attention alone, was
    # appended in place (those rows as they were)
    np.testing.assert_array_equal(pk, want['pk_out'])
    np.testing.assert_array_equal(pv[:, :, :6], want['pv_out'][:, :, :6])
    np.testing.assert_array_equal(pv[:, :, 6:], feeds['pv'][:, :, 6:])
    assert (want['pk_out'][:, :, 6:] == 0).all()


def test_a_product_into_its_own_input_is_computed_apart():
    w = rng.standard_normal((6, 6)).astype(np.float32)
    m = model([h.make_node('MatMul', ['x', 'w'], ['y'])], [('x', TP.FLOAT)], [('y', TP.FLOAT)],
              {'w': w})
    s = onyx.Session(m.SerializeToString(), threads=2)
    x = rng.standard_normal((6, 6)).astype(np.float32)
    want = x @ w
    y, = s.run_into(['y'], {'x': x}, {'y': x})
    assert y is x
    np.testing.assert_allclose(x, want, rtol=1e-5, atol=1e-5)
    # a target over part of the input (a view one row in) is no safer
    x = rng.standard_normal((7, 6)).astype(np.float32)
    want = x[:6] @ w
    s.run_into(['y'], {'x': x[:6]}, {'y': x[1:]})
    np.testing.assert_allclose(x[1:], want, rtol=1e-5, atol=1e-5)


def test_overlapping_targets_and_wrong_shapes_are_refused():
    s = onyx.Session(gqa_then_read_past().SerializeToString(), threads=2)
    feeds = gqa_feeds()
    buf = feeds['pk'].copy()
    with pytest.raises(onyx.OnyxError, match='overlapping targets'):
        s.run_into(['y'], feeds, {'pk_out': buf, 'pv_out': buf})
    with pytest.raises(onyx.OnyxError, match="output 'pk_out' is .*; its target is"):
        s.run_into(['y'], feeds, {'pk_out': np.zeros((1, 2, 11, 8), np.float32)})


def test_io_binding_of_a_shared_cache_on_a_single_node():
    """One GroupQueryAttention node, past and present bound to one buffer per cache through
    io_binding, against onnxruntime's through the same binding, step after step."""
    nq, nkv, d, cap = 4, 2, 8, 16
    ins = ['q', 'k', 'v', 'pk', 'pv', 'seqlens', 'total']
    m = model([h.make_node('GroupQueryAttention', ins, ['y', 'pk_out', 'pv_out'], domain=MS,
                           num_heads=nq, kv_num_heads=nkv)],
              [(n, {'seqlens': TP.INT32, 'total': TP.INT32}.get(n, TP.FLOAT)) for n in ins],
              [(n, TP.FLOAT) for n in ('y', 'pk_out', 'pv_out')])
    steps = [(3, rng.standard_normal((1, 3, (nq + 2 * nkv) * d)).astype(np.float32))]
    steps += [(1, rng.standard_normal((1, 1, (nq + 2 * nkv) * d)).astype(np.float32))
              for _ in range(5)]
    results = []
    for rt in (ort, onyx_ort):
        s = rt.InferenceSession(m.SerializeToString(), providers=['CPUExecutionProvider'])
        caches = [np.full((1, nkv, cap, d), SENTINEL, np.float32) for _ in range(2)]
        binding = s.io_binding()
        binding.bind_output('y')
        for name, out, buf in (('pk', 'pk_out', caches[0]), ('pv', 'pv_out', caches[1])):
            value = rt.OrtValue.ortvalue_from_numpy(buf)
            binding.bind_ortvalue_input(name, value)
            binding.bind_ortvalue_output(out, value)
        total, ys = 0, []
        for n, qkv in steps:
            total += n
            binding.bind_cpu_input('q', np.ascontiguousarray(qkv[..., :nq * d]))
            binding.bind_cpu_input('k', np.ascontiguousarray(qkv[..., nq * d:(nq + nkv) * d]))
            binding.bind_cpu_input('v', np.ascontiguousarray(qkv[..., (nq + nkv) * d:]))
            binding.bind_cpu_input('seqlens', np.array([total - 1], np.int32))
            binding.bind_cpu_input('total', np.array([total], np.int32))
            binding.bind_output('y')
            s.run_with_iobinding(binding)
            ys.append(binding.get_outputs()[0].numpy().copy())
        results.append((ys, caches, total))
    (want, want_caches, total), (got, got_caches, _) = results
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    for g, w in zip(got_caches, want_caches):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
        assert (g[:, :, total:] == SENTINEL).all()
