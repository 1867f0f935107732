"""onnxruntime-genai's CUDA export on the CPU: the builder's `-e cuda` graph of a tiny random Qwen2
(tools/llm/tiny_model.py --ep cuda; tests/models/genai/qwen2_int4_cuda) computes in float16
throughout (MatMulNBits with float16 scales, GroupQueryAttention with the rotary inside,
SkipSimplifiedLayerNormalization, GatherBlockQuantized of the tied embedding). A CPU session runs
it as its float twin (core/rules/half.c converts those com.microsoft ops too): prompt then greedy
decode give onnxruntime's tokens, the logits within float16 rounding of its own."""
import json
import os

import numpy as np
import pytest

import onyx

ort = pytest.importorskip('onnxruntime')

FOLDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'models', 'genai',
                      'qwen2_int4_cuda')
PROMPT = [5, 17, 42, 99, 100, 7, 3, 250, 12, 64]


def decode(engine, steps=16):
    """Logits of the prompt's last token and of each greedy step, and the tokens chosen."""
    path = os.path.join(FOLDER, 'model.onnx')
    if engine == 'ort':
        s = ort.InferenceSession(path, providers=['CPUExecutionProvider'])
    else:
        s = onyx.Session(path, threads=2)
    cfg = json.load(open(os.path.join(FOLDER, 'genai_config.json')))['model']['decoder']
    names = [i.name for i in s.get_inputs()]
    outs = [o.name for o in s.get_outputs()]
    past = {n: np.zeros((1, cfg['num_key_value_heads'], 0, cfg['head_size']), np.float16)
            for n in names if n.startswith('past_key_values.')}
    ids, total, logits = list(PROMPT), 0, []
    for _ in range(steps + 1):
        step = ids if total == 0 else ids[-1:]
        total += len(step)
        feed = {'input_ids': np.array([step], np.int64),
                'attention_mask': np.ones((1, total), np.int64), **past}
        got = dict(zip(outs, s.run(None, feed)))
        past = {n: got[n.replace('past_key_values', 'present')] for n in past}
        logits.append(got['logits'][0, -1])
        ids.append(int(np.argmax(got['logits'][0, -1])))
    return np.array(logits), ids


def test_cuda_export_runs_on_the_cpu_as_onnxruntime():
    got, got_ids = decode('onyx')
    want, want_ids = decode('ort')
    assert got.dtype == np.float16 and got.shape == want.shape
    assert got_ids == want_ids
    span = float(np.abs(want.astype(np.float32)).max())
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=0,
                               atol=1e-2 * span)
