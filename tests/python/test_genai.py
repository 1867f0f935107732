"""onyx.genai against onnxruntime-genai on tiny builder exports (tools/llm/tiny_model.py wrote
tests/models/genai/: Qwen2 with tied embeddings, int4 as the builder writes it by default for the
CPU (MatMulNBits at accuracy_level 4, GatherBlockQuantized, GroupQueryAttention); Llama untied in
float32). Greedy search gives the same tokens as onnxruntime-genai where the arithmetic is exact
(float32; int4 at accuracy_level 1); at accuracy_level 4 the logits stay within onnxruntime's own
difference between its levels 1 and 4. Streaming, batches, sampling options and refusals too."""
import os
import shutil

import numpy as np
import onnx
import pytest

import onyx.genai as genai

og = pytest.importorskip('onnxruntime_genai')
ort = pytest.importorskip('onnxruntime')

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, '..', 'models', 'genai')
PROMPTS = ['the quick brown fox', 'hello world', 'onyx runs']


def folder(name):
    return os.path.join(MODELS, name)


def with_level(src, dst, level):
    """A copy of a model folder with every MatMulNBits at accuracy_level `level`."""
    shutil.copytree(src, dst)
    path = os.path.join(dst, 'model.onnx')
    m = onnx.load(path, load_external_data=False)
    for n in m.graph.node:
        if n.op_type == 'MatMulNBits':
            for a in n.attribute:
                if a.name == 'accuracy_level':
                    a.i = level
    onnx.save(m, path)
    return dst


def ort_greedy(path, prompt, max_length=40, **search):
    model = og.Model(path)
    tok = og.Tokenizer(model)
    params = og.GeneratorParams(model)
    params.set_search_options(max_length=max_length, do_sample=False, **search)
    gen = og.Generator(model, params)
    gen.append_tokens(tok.encode(prompt))
    while not gen.is_done():
        gen.generate_next_token()
    seq = gen.get_sequence(0)
    return [int(t) for t in seq], tok.decode(seq)


def onyx_greedy(path, prompt, max_length=40, **search):
    model = genai.Model(path, threads=2)
    tok = genai.Tokenizer(model)
    params = genai.GeneratorParams(model)
    params.set_search_options(max_length=max_length, do_sample=False, **search)
    gen = genai.Generator(model, params)
    gen.append_tokens(tok.encode(prompt))
    while not gen.is_done():
        gen.generate_next_token()
    seq = gen.get_sequence(0)
    return [int(t) for t in seq], tok.decode(seq)


def valid(text):
    return '\ufffd' not in text


@pytest.mark.parametrize('prompt', PROMPTS)
def test_llama_fp32_greedy_equals_onnxruntime_genai(prompt):
    want, want_text = ort_greedy(folder('llama_fp32'), prompt)
    got, got_text = onyx_greedy(folder('llama_fp32'), prompt)
    assert got == want
    # the two tokenizers differ only on invalid UTF-8 (bytes of a split character)
    if valid(want_text) and valid(got_text):
        assert got_text == want_text


@pytest.mark.parametrize('prompt', PROMPTS)
def test_qwen2_int4_level1_greedy_equals_onnxruntime_genai(prompt, tmp_path):
    path = with_level(folder('qwen2_int4'), str(tmp_path / 'l1'), 1)
    want, _ = ort_greedy(path, prompt)
    got, _ = onyx_greedy(path, prompt)
    assert got == want


def prompt_logits_ort(path, ids):
    """onnxruntime's logits for the prompt (plain session, empty cache)."""
    import json
    cfg = json.load(open(os.path.join(path, 'genai_config.json')))['model']['decoder']
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    s = ort.InferenceSession(os.path.join(path, 'model.onnx'), so,
                             providers=['CPUExecutionProvider'])
    feed = {'input_ids': ids[None, :].astype(np.int64),
            'attention_mask': np.ones((1, len(ids)), np.int64)}
    for i in range(cfg['num_hidden_layers']):
        for w in ('key', 'value'):
            feed[f'past_key_values.{i}.{w}'] = np.zeros(
                (1, cfg['num_key_value_heads'], 0, cfg['head_size']), np.float32)
    return s.run(['logits'], feed)[0][0, -1]


def test_qwen2_int4_level4_logits_within_onnxruntime_spread(tmp_path):
    path4 = folder('qwen2_int4')
    path1 = with_level(path4, str(tmp_path / 'l1'), 1)
    model = genai.Model(path4, threads=2)
    ids = genai.Tokenizer(model).encode(PROMPTS[0])
    gen = genai.Generator(model, genai.GeneratorParams(model))
    gen.append_tokens(ids)
    got = gen.get_logits()[0]
    ort4, ort1 = prompt_logits_ort(path4, ids), prompt_logits_ort(path1, ids)
    spread = np.abs(ort4 - ort1).max()
    assert spread > 0   # the levels do differ: the yardstick is not empty
    assert np.abs(got - ort4).max() <= spread * 1.0001 + 1e-6


def test_stream_pieces_add_up_to_the_decoded_text():
    model = genai.Model(folder('llama_fp32'), threads=2)
    tok = genai.Tokenizer(model)
    params = genai.GeneratorParams(model)
    params.set_search_options(max_length=30)
    gen = genai.Generator(model, params)
    ids = tok.encode(PROMPTS[1])
    gen.append_tokens(ids)
    stream = tok.create_stream()
    pieces = []
    while not gen.is_done():
        gen.generate_next_token()
        pieces.append(stream.decode(gen.get_next_tokens()[0]))
    text = tok.decode(gen.get_sequence(0)[len(ids):])
    if valid(text):
        assert ''.join(pieces) == text


def test_batch_rows_equal_their_single_runs():
    model = genai.Model(folder('llama_fp32'), threads=2)
    tok = genai.Tokenizer(model)
    prompts = ['hello world', 'the dog']
    rows = [tok.encode(p) for p in prompts]
    assert len(rows[0]) == len(rows[1])   # a batch without padding needs one length
    params = genai.GeneratorParams(model)
    params.set_search_options(max_length=24)
    gen = genai.Generator(model, params)
    gen.append_tokens(np.stack(rows))
    while not gen.is_done():
        gen.generate_next_token()
    for b, p in enumerate(prompts):
        single, _ = onyx_greedy(folder('llama_fp32'), p, max_length=24)
        got = [int(t) for t in gen.get_sequence(b)]
        # a row that ended before the others is padded after its end
        assert got[:len(single)] == single
        assert all(t == model.config.pad for t in got[len(single):])


def test_repetition_penalty_and_min_length_as_onnxruntime_genai():
    for search in ({'repetition_penalty': 1.5}, {'min_length': 38}):
        want, _ = ort_greedy(folder('llama_fp32'), PROMPTS[1], **search)
        got, _ = onyx_greedy(folder('llama_fp32'), PROMPTS[1], **search)
        assert got == want, search


def test_sampling_is_seeded_and_top_k_1_is_greedy():
    def sample(**search):
        model = genai.Model(folder('llama_fp32'), threads=2)
        params = genai.GeneratorParams(model)
        params.set_search_options(max_length=30, do_sample=True, **search)
        gen = genai.Generator(model, params)
        gen.append_tokens(genai.Tokenizer(model).encode(PROMPTS[0]))
        while not gen.is_done():
            gen.generate_next_token()
        return [int(t) for t in gen.get_sequence(0)]
    a = sample(random_seed=7, temperature=1.5, top_p=0.9)
    assert a == sample(random_seed=7, temperature=1.5, top_p=0.9)
    greedy, _ = onyx_greedy(folder('llama_fp32'), PROMPTS[0], max_length=30)
    assert sample(random_seed=3, top_k=1) == greedy


def test_generate_helper_and_cli(capsys):
    import subprocess
    import sys
    text = genai.generate(folder('llama_fp32'), 'hello world', max_length=20, threads=2)
    want, _ = ort_greedy(folder('llama_fp32'), 'hello world', max_length=20)
    tok = genai.Tokenizer(genai.Model(folder('llama_fp32')))
    assert text == tok.decode(want[len(tok.encode('hello world')):])
    env = dict(os.environ)
    out = subprocess.run([sys.executable, '-m', 'onyx', 'generate', folder('llama_fp32'),
                          '--prompt', 'hello world', '--max-length', '20'],
                         capture_output=True, text=True, env=env, check=True)
    assert out.stdout.rstrip('\n') == text


@pytest.mark.parametrize('options,words', [({'num_beams': 4}, 'beam search'),
                                           ({'no_such_option': 1}, 'no_such_option'),
                                           ({'temperature': 0}, 'temperature'),
                                           ({'top_p': 1.5}, 'top_p')])
def test_unsupported_options_are_refused(options, words):
    model = genai.Model(folder('llama_fp32'))
    params = genai.GeneratorParams(model)
    with pytest.raises(genai.GenaiError, match=words):
        params.set_search_options(**options)


def test_bad_folders_are_refused(tmp_path):
    with pytest.raises(genai.GenaiError, match='genai_config.json'):
        genai.Model(str(tmp_path))
    (tmp_path / 'genai_config.json').write_text('{"model": {}}')
    with pytest.raises(genai.GenaiError, match='decoder.filename'):
        genai.Model(str(tmp_path))
