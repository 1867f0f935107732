"""The ops of onnxruntime-genai's decoder exports on CUDA, against onyx's CPU kernels, which match
onnxruntime's (test_contrib_nlp):
- com.microsoft MatMulNBits (kernels_cuda/contrib/matmulnbits.cu): 2-, 4- and 8-bit codes,
  blocks of 16 to 128 with a K that ends inside a block, no zero points / packed integer ones /
  float ones, a bias, float and float16 activations, and row counts on both of the kernel's paths
  (decode: up to 8 rows, one warp per column; prefill: dequantized panels and cuBLAS);
- SimplifiedLayerNormalization, SkipSimplifiedLayerNormalization and SkipLayerNormalization
  (kernels_cuda/norm/norm.cu): every output, skip broadcast over the batch, with and without bias;
- a tied int4 embedding's rows (ai.onyx GatherNBits, kernels_cuda/contrib/gathernbits.cu, which
  core/rules/tied_embedding.c makes of GatherBlockQuantized over the product's codes);
- GroupQueryAttention (kernels_cuda/contrib/gqa.cu) in the cases test_contrib_nlp checks on the
  CPU: prompts (packed or not, head groups), decode over a past, windows, softcap, scale, long
  prompts, rotary (interleaved or not);
- the committed tiny builder exports (tests/models/genai, every MatMulNBits at accuracy_level 1;
  the CUDA export qwen2_int4_cuda in float16, against its float twin on the CPU):
  a prompt and greedy decode on CUDA against the CPU, the cache carried from step to step, and
  bound in place as one device buffer for past and present (onnxruntime-genai's
  past_present_share_buffer).
Each node must run on CUDA (the profile's provider), not fall back to the CPU. Runs where a GPU is
usable (tools/cuda/check.sh); without one there is no CUDA provider to test."""
import json
import os

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import onyx.ort as ort

pytestmark = pytest.mark.skipif('CUDAExecutionProvider' not in ort.get_available_providers(),
                                reason='needs a GPU: the CUDA provider is not available here')

ELEM = {np.float32: TensorProto.FLOAT, np.float16: TensorProto.FLOAT16}


def _model(rng, k, n, bits, block, zp, bias, dtype):
    """A MatMulNBits node over random codes, scales, zero points (None, 'u8' packed, 'float')."""
    k_blocks, blob = -(-k // block), block * bits // 8
    inits = {'B': rng.integers(0, 256, (n, k_blocks, blob)).astype(np.uint8),
             'scales': (rng.standard_normal(n * k_blocks) * 0.05).astype(dtype)}
    inputs = ['A', 'B', 'scales']
    if zp == 'u8':
        inits['zp'] = rng.integers(0, 256, (n, -(-k_blocks * bits // 8))).astype(np.uint8)
    elif zp == 'float':
        inits['zp'] = rng.uniform(0, 2 ** bits - 1, n * k_blocks).astype(dtype)
    inputs.append('zp' if zp else '')
    if bias:
        inits['bias'] = rng.standard_normal(n).astype(dtype)
        inputs += ['', 'bias']
    node = helper.make_node('MatMulNBits', inputs, ['Y'], domain='com.microsoft', K=k, N=n,
                            bits=bits, block_size=block)
    t = ELEM[dtype]
    graph = helper.make_graph([node], 'g', [helper.make_tensor_value_info('A', t, ['M', k])],
                              [helper.make_tensor_value_info('Y', t, ['M', n])],
                              [numpy_helper.from_array(v, name) for name, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17),
                                                   helper.make_opsetid('com.microsoft', 1)])


def _run_cuda(model, feed, tmp_path, op='MatMulNBits'):
    """The first output on CUDA, and the providers that ran `op` (from the profile)."""
    ys, providers = _run_all_cuda(model, feed, tmp_path, op)
    return ys[0], providers


def _run_all_cuda(model, feed, tmp_path, op):
    opts = ort.SessionOptions()
    opts.enable_profiling = True
    opts.profile_file_prefix = str(tmp_path / 'profile_')
    sess = ort.InferenceSession(model.SerializeToString(), opts,
                                providers=['CUDAExecutionProvider'])
    ys = sess.run(None, feed)
    with open(sess.end_profiling()) as f:
        providers = {e['args'].get('provider') for e in json.load(f)
                     if e.get('cat') == 'Node' and e.get('args', {}).get('op_name') == op}
    return ys, providers


def _cpu(model, feed):
    return ort.InferenceSession(model.SerializeToString(),
                                providers=['CPUExecutionProvider']).run(None, feed)


@pytest.mark.parametrize('bits,block', [(4, 32), (4, 128), (2, 16), (8, 64)])
@pytest.mark.parametrize('zp', [None, 'u8', 'float'])
@pytest.mark.parametrize('rows', [1, 3, 8, 9, 70])
def test_matmul_nbits_cuda_equals_cpu(bits, block, zp, rows, tmp_path):
    rng = np.random.default_rng(bits * 1000 + block + rows)
    k, n = 3 * block - 5, 200   # K ends inside its last block
    model = _model(rng, k, n, bits, block, zp, bias=rows % 2 == 1, dtype=np.float32)
    feed = {'A': rng.standard_normal((rows, k)).astype(np.float32)}
    y, providers = _run_cuda(model, feed, tmp_path)
    (expected,) = ort.InferenceSession(model.SerializeToString(),
                                       providers=['CPUExecutionProvider']).run(None, feed)
    assert providers == {'CUDA'}
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize('rows', [1, 70])
def test_matmul_nbits_cuda_float16(rows, tmp_path):
    rng = np.random.default_rng(rows)
    k, n = 256, 96
    model = _model(rng, k, n, 4, 32, 'u8', bias=True, dtype=np.float16)
    feed = {'A': rng.standard_normal((rows, k)).astype(np.float16)}
    y, providers = _run_cuda(model, feed, tmp_path)
    (expected,) = ort.InferenceSession(model.SerializeToString(),
                                       providers=['CPUExecutionProvider']).run(None, feed)
    assert providers == {'CUDA'}
    np.testing.assert_allclose(y.astype(np.float32), expected.astype(np.float32), rtol=2e-2,
                               atol=2e-2)


def _norm_model(op, rows_shape, h, dtype, bias, skip_rows):
    """op over X [*rows_shape, h]: the skip forms take skip [skip_rows, h] broadcast over the batch
    (or X's shape) and give all four outputs; SimplifiedLayerNormalization gives Y and inv_std_var."""
    rng = np.random.default_rng(h + len(rows_shape))
    t = ELEM[dtype]
    x_shape = [*rows_shape, h]
    inits = {'gamma': rng.standard_normal(h).astype(dtype)}
    inputs, outs = ['X'], ['Y']
    vi = [helper.make_tensor_value_info('X', t, x_shape)]
    if op == 'SimplifiedLayerNormalization':
        inputs.append('gamma')
        outs.append('inv')
        out_types = [t, TensorProto.FLOAT]
        attrs = {'axis': -1, 'epsilon': 1e-5}
        domain = ''
    else:
        skip_shape = x_shape if skip_rows is None else [skip_rows, h]
        vi.append(helper.make_tensor_value_info('S', t, skip_shape))
        inputs += ['S', 'gamma']
        if op == 'SkipLayerNormalization':
            inits['beta'] = rng.standard_normal(h).astype(dtype)
            inputs.append('beta')
        if bias:
            inits['bias'] = rng.standard_normal(h).astype(dtype)
            inputs.append('bias')
        outs += ['mean', 'inv', 'sum']
        out_types = [t, TensorProto.FLOAT, TensorProto.FLOAT, t]
        attrs = {'epsilon': 1e-6}
        domain = 'com.microsoft'
    node = helper.make_node(op, inputs, outs, domain=domain, **attrs)
    graph = helper.make_graph([node], 'g', vi,
                              [helper.make_tensor_value_info(o, ot, None)
                               for o, ot in zip(outs, out_types)],
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17),
                                                    helper.make_opsetid('com.microsoft', 1)])
    feed = {'X': rng.standard_normal(x_shape).astype(dtype)}
    if op != 'SimplifiedLayerNormalization':
        feed['S'] = rng.standard_normal(skip_shape).astype(dtype)
    return model, feed


@pytest.mark.parametrize('op', ['SimplifiedLayerNormalization', 'SkipSimplifiedLayerNormalization',
                                'SkipLayerNormalization'])
@pytest.mark.parametrize('h', [896, 2048, 3000])
@pytest.mark.parametrize('dtype', [np.float32, np.float16])
@pytest.mark.parametrize('bias,skip_rows', [(False, None), (True, None), (True, 7)])
def test_llm_norms_cuda_equal_cpu(op, h, dtype, bias, skip_rows, tmp_path):
    model, feed = _norm_model(op, [2, 7], h, dtype, bias, skip_rows)
    got, providers = _run_all_cuda(model, feed, tmp_path, op)
    expected = _cpu(model, feed)
    assert providers == {'CUDA'}
    tol = 1e-4 if dtype == np.float32 else 1e-2
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g.astype(np.float32), e.astype(np.float32), rtol=tol, atol=tol)


def test_tied_int4_embedding_cuda_equals_cpu(tmp_path):
    from test_tied_weights import int4_tied   # MatMulNBits and GatherBlockQuantized on one B
    k, n = 256, 100
    model = int4_tied(k, n)
    rng = np.random.default_rng(9)
    feed = {'a': rng.standard_normal((1, 6, k)).astype(np.float32),
            'ids': np.array([[0, 99, 7, -1, -100, 40]], np.int64)}
    got, providers = _run_all_cuda(model, feed, tmp_path, 'GatherNBits')
    expected = _cpu(model, feed)
    assert providers == {'CUDA'}
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-4, atol=1e-4)   # the logits
    np.testing.assert_array_equal(got[1], expected[1])                      # the rows


def _gqa_cases():
    """(model, feeds) pairs of test_contrib_nlp's GroupQueryAttention tests."""
    from test_contrib_nlp import gqa_feeds, gqa_model, model, rope_caches
    cases = []
    for packed in (False, True):
        for nq, nkv in ((4, 2), (4, 1), (2, 2)):
            cases.append((gqa_model(packed=packed, num_heads=nq, kv_num_heads=nkv),
                          gqa_feeds(2, 6, nq, nkv, 8, [5, 5], 6, packed=packed)))
        cases.append((gqa_model(packed=packed, past=True, num_heads=4, kv_num_heads=2),
                      gqa_feeds(3, 1, 4, 2, 8, [8, 5, 3], 9, 9, packed=packed)))
        cases.append((gqa_model(packed=packed, num_heads=3, kv_num_heads=1),
                      gqa_feeds(2, 150, 3, 1, 8, [149, 149], 150, packed=packed)))
        cases.append((gqa_model(packed=packed, past=True, num_heads=3, kv_num_heads=1),
                      gqa_feeds(1, 130, 3, 1, 8, [169], 170, 40, packed=packed)))
    cases.append((gqa_model(past=True, num_heads=4, kv_num_heads=2),
                  gqa_feeds(1, 3, 4, 2, 8, [7], 8, 10)))
    cases.append((gqa_model(num_heads=4, kv_num_heads=2, local_window_size=2, softcap=2.0,
                            scale=0.4), gqa_feeds(2, 7, 4, 2, 8, [6, 6], 7)))
    cases.append((gqa_model(past=True, num_heads=4, kv_num_heads=2, local_window_size=3),
                  gqa_feeds(2, 1, 4, 2, 8, [9, 4], 10, 10)))
    c, sn = rope_caches(16, 8)
    for interleaved in (0, 1):
        for packed in (False, True):
            for past in (False, True):
                ins = ['q', '' if packed else 'k', '' if packed else 'v', 'pk' if past else '',
                       'pv' if past else '', 'seqlens', 'total', 'cos', 'sin']
                types = {'seqlens': TensorProto.INT32, 'total': TensorProto.INT32}
                m = model([helper.make_node('GroupQueryAttention', ins, ['y', 'pk_out', 'pv_out'],
                                            domain='com.microsoft', num_heads=4, kv_num_heads=2,
                                            do_rotary=1, rotary_interleaved=interleaved)],
                          [(n, types.get(n, TensorProto.FLOAT)) for n in ins if n],
                          [(n, TensorProto.FLOAT) for n in ('y', 'pk_out', 'pv_out')])
                feeds = (gqa_feeds(2, 1, 4, 2, 16, [7, 3], 8, 8, packed=packed) if past
                         else gqa_feeds(2, 5, 4, 2, 16, [4, 4], 5, packed=packed))
                cases.append((m, {**feeds, 'cos': c, 'sin': sn}))
    return cases


@pytest.mark.parametrize('case', range(len(_gqa_cases())))
def test_gqa_cuda_equals_cpu(case, tmp_path):
    m, feeds = _gqa_cases()[case]
    got, providers = _run_all_cuda(m, feeds, tmp_path, 'GroupQueryAttention')
    expected = _cpu(m, feeds)
    assert providers == {'CUDA'}
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)


GENAI = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'models', 'genai')
PROMPT = [5, 17, 42, 99, 100, 7, 3, 250, 12, 64]


def _decode(folder, provider, steps, share=None):
    """Prompt then greedy decode through onyx on `provider`: the logits of each step. share: the
    caches as one buffer each of that many rows, bound as past and present on the provider's
    device (io_binding); else carried from the outputs to the next inputs."""
    cfg = json.load(open(os.path.join(folder, 'genai_config.json')))['model']['decoder']
    s = ort.InferenceSession(os.path.join(folder, 'model.onnx'), providers=[provider])
    names = [i.name for i in s.get_inputs()]
    device = 'cuda' if provider == 'CUDAExecutionProvider' else 'cpu'
    shape = lambda n: (1, cfg['num_key_value_heads'], n, cfg['head_size'])
    half = any(i.type == 'tensor(float16)' for i in s.get_inputs())   # the builder's CUDA export
    past = {n: np.zeros(shape(share or 0), np.float16 if half else np.float32) for n in names
            if n.startswith('past_key_values.')}
    binding = None
    if share:
        binding = s.io_binding()
        binding.bind_output('logits')   # first: the outputs come back in the order bound
        for n, buf in past.items():
            value = ort.OrtValue.ortvalue_from_numpy(buf, device, 0)
            binding.bind_ortvalue_input(n, value)
            binding.bind_ortvalue_output(n.replace('past_key_values', 'present'), value)
    ids, total, logits = list(PROMPT), 0, []
    for _ in range(steps + 1):
        step = ids if total == 0 else ids[-1:]
        total += len(step)
        feed = {'input_ids': np.array([step], np.int64)}
        if 'attention_mask' in names:
            feed['attention_mask'] = np.ones((1, total), np.int64)
        if 'position_ids' in names:
            feed['position_ids'] = np.arange(total - len(step), total)[None].astype(np.int64)
        if binding:
            for n, v in feed.items():
                binding.bind_cpu_input(n, v)
            binding.bind_output('logits')
            s.run_with_iobinding(binding)
            out = binding.copy_outputs_to_cpu()[0]
        else:
            outs = dict(zip([o.name for o in s.get_outputs()], s.run(None, {**feed, **past})))
            out = outs['logits']
            past = {n: outs[n.replace('past_key_values', 'present')] for n in past}
        logits.append(out[0, -1])
        ids.append(int(np.argmax(out[0, -1])))
    return np.array(logits)


# Not Gemma 2: its windowed layers take window-sized caches from the first step, which CUDA
# leaves to the CPU (sliding_window_cache; test_kv_cache_share has them)
@pytest.mark.parametrize('arch', ['llama_fp32', 'qwen2_int4', 'phi3_int4', 'qwen2_int4_cuda'])
@pytest.mark.parametrize('share', [None, 24])
def test_genai_export_cuda_equals_cpu(arch, share, tmp_path):
    from test_kv_cache_share import at_level1
    folder = at_level1(arch, tmp_path)
    got = _decode(folder, 'CUDAExecutionProvider', 6, share)
    want = _decode(folder, 'CPUExecutionProvider', 6, share)
    if got.dtype == np.float16:   # the CUDA export: float16 on the GPU, its float twin on the CPU
        span = float(np.abs(want.astype(np.float32)).max())
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=0,
                                   atol=1e-2 * span)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)
