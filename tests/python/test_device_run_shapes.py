"""Nodes whose shapes are known only at run, on a device (KF_RUN_SHAPES, core/exec_place.c).
com.microsoft GroupQueryAttention's present caches are as long as total_sequence_length's value,
which no plan knows before the run: a device kernel that reads its sizes at run (CUDA's gqa.cu;
the TEST device's, the CPU's kernel on copies) takes the node anyway, its outputs and the copies
that bring its inputs allocated per run in the device's memory. Checked on the TEST device and on
CUDA where a GPU is usable: the node runs on the device (the profile's provider) and its outputs
equal the CPU's, in test_contrib_nlp's cases, over a decode loop whose lengths change at every
step (a generic plan after a few), and with the cache bound in place in device memory as
onnxruntime-genai binds it (past_present_share_buffer), present written over past."""
import json
import os
import threading

import numpy as np
import pytest
from onnx import TensorProto, helper

import onyx.ort as ort
from test_contrib_nlp import QK_OUTS, gqa_feeds, gqa_model, model, rand, rope_caches

DEVICES = ['test'] + (['cuda'] if 'CUDAExecutionProvider' in ort.get_available_providers() else [])
PROVIDER = {'test': 'OnyxTestExecutionProvider', 'cuda': 'CUDAExecutionProvider'}
PROFILE_NAME = {'test': 'TEST', 'cuda': 'CUDA'}


def gqa_cases():
    """(model, feeds) pairs of test_contrib_nlp's GroupQueryAttention tests: prompts (packed or
    not, head groups), decode over a past, windows, softcap, scale, long prompts, rotary."""
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


CASES = gqa_cases()


def _session(m, device, tmp_path=None):
    opts = ort.SessionOptions()
    if tmp_path is not None:
        opts.enable_profiling = True
        opts.profile_file_prefix = str(tmp_path / 'profile_')
    return ort.InferenceSession(m.SerializeToString(), opts, providers=[PROVIDER[device]])


def _providers(sess, op='GroupQueryAttention'):
    return _providers_by_op(sess).get(op, set())


def _providers_by_op(sess):
    """op name -> the providers that ran it, from the session's profile (which this ends)."""
    by_op = {}
    with open(sess.end_profiling()) as f:
        for e in json.load(f):
            if e.get('cat') == 'Node' and 'op_name' in e.get('args', {}):
                by_op.setdefault(e['args']['op_name'], set()).add(e['args'].get('provider'))
    return by_op


def _cpu(m, feeds):
    return ort.InferenceSession(m.SerializeToString(),
                                providers=['CPUExecutionProvider']).run(None, feeds)


@pytest.mark.parametrize('device', DEVICES)
@pytest.mark.parametrize('case', range(len(CASES)))
def test_gqa_on_device_equals_cpu(device, case, tmp_path):
    m, feeds = CASES[case]
    sess = _session(m, device, tmp_path)
    got = sess.run(None, feeds)
    assert _providers(sess) == {PROFILE_NAME[device]}
    for g, e in zip(got, _cpu(m, feeds)):
        assert g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize('device', DEVICES)
@pytest.mark.parametrize('what', ['bias, sink, qk', 'smooth', 'int4 cache'])
def test_gqa_options_on_device_or_cpu(device, what, tmp_path):
    """attention_bias, head_sink, smooth_softmax, output_qk and a quantized cache: the TEST
    device's kernel (the CPU's, on copies) computes them; CUDA's declines such a node, which then
    runs on the CPU. Either way the CPU's results."""
    if what == 'smooth':
        m = gqa_model(past=True, num_heads=4, kv_num_heads=2, smooth_softmax=1)
        feeds = gqa_feeds(2, 1, 4, 2, 8, [9, 4], 10, 10)
    elif what == 'int4 cache':
        m = gqa_model(past=True, kv_bits=4, num_heads=4, kv_num_heads=2,
                      k_quant_type='PER_CHANNEL', v_quant_type='PER_CHANNEL')
        cache = np.random.default_rng(3).integers(0, 256, (2, 2, 10, 4)).astype(np.uint8)
        feeds = {**gqa_feeds(2, 1, 4, 2, 8, [9, 4], 10), 'pk': cache, 'pv': cache[::-1].copy(),
                 'ks': np.full(16, 0.02, np.float32), 'vs': np.full(16, 0.03, np.float32)}
    else:
        m = gqa_model(past=True, outs=QK_OUTS, bias=True, sink=True, num_heads=4,
                      kv_num_heads=2, qk_output=2)
        feeds = {**gqa_feeds(2, 1, 4, 2, 8, [9, 4], 10, 10), 'ab': rand(2, 4, 1, 10),
                 'sink': rand(4)}
    sess = _session(m, device, tmp_path)
    got = sess.run(None, feeds)
    assert _providers(sess) == {'TEST' if device == 'test' else 'CPU'}
    want = _cpu(m, feeds)
    assert len(got) == len(want)
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize('device', DEVICES)
def test_gqa_decode_loop_on_device(device, tmp_path):
    """Past and total grow by one each step: after a few lengths the session runs a generic plan,
    whose past length and present length are unknown until the run; the node stays on the device
    at every step and the cache carried from step to step stays the CPU's."""
    m = gqa_model(past=True, num_heads=4, kv_num_heads=2)
    sess = _session(m, device, tmp_path)
    cpu = ort.InferenceSession(m.SerializeToString(), providers=['CPUExecutionProvider'])
    rng = np.random.default_rng(7)
    past = {'pk': rng.standard_normal((2, 2, 3, 8)).astype(np.float32),
            'pv': rng.standard_normal((2, 2, 3, 8)).astype(np.float32)}
    for step in range(7):
        length = 3 + step
        feeds = gqa_feeds(2, 1, 4, 2, 8, [length, length], length + 1)
        feeds.update(past)
        got = sess.run(None, feeds)
        want = cpu.run(None, feeds)
        for g, e in zip(got, want):
            assert g.shape == e.shape
            np.testing.assert_allclose(g, e, rtol=1e-4, atol=1e-5)
        assert got[1].shape == (2, 2, length + 1, 8)
        past = {'pk': got[1], 'pv': got[2]}
    assert _providers(sess) == {PROFILE_NAME[device]}


@pytest.mark.parametrize('device', DEVICES)
def test_gqa_on_device_from_many_threads(device):
    """One session run from several threads at once, each with pasts of its own lengths: the
    device values sized per run belong to each run (kept until its queue finished), so every
    thread gets the CPU's results."""
    m = gqa_model(past=True, num_heads=4, kv_num_heads=2)
    sess = _session(m, device)
    cpu = ort.InferenceSession(m.SerializeToString(), providers=['CPUExecutionProvider'])
    lengths = [[int(n) for n in np.random.default_rng(t).integers(1, 20, 15)] for t in range(4)]
    cases = {n: gqa_feeds(2, 1, 4, 2, 8, [n, n], n + 1, n) for ls in lengths for n in ls}
    want = {n: cpu.run(None, f) for n, f in cases.items()}
    failures = []

    def worker(ls):
        for n in ls:
            got = sess.run(None, cases[n])
            if not all(g.shape == w.shape and np.allclose(g, w, rtol=1e-4, atol=1e-5)
                       for g, w in zip(got, want[n])):
                failures.append(n)

    threads = [threading.Thread(target=worker, args=(ls,)) for ls in lengths]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


@pytest.mark.parametrize('device', DEVICES)
def test_gqa_cache_bound_in_place_on_device(device):
    """One device buffer of the cache's capacity per key and value, bound as both past and
    present (onnxruntime-genai's past_present_share_buffer): the run appends each step's row
    into it where it is, and the decoded outputs equal a CPU session's bound the same way."""
    m = gqa_model(past=True, num_heads=4, kv_num_heads=2)
    capacity, steps = 12, 6
    rng = np.random.default_rng(3)
    start = rng.standard_normal((1, 2, capacity, 8)).astype(np.float32)
    # past rows 0..3 hold a prompt; step i appends row 4 + i (seqlens_k: the new length - 1)
    steps_feeds = [gqa_feeds(1, 1, 4, 2, 8, [4 + i], 5 + i) for i in range(steps)]
    runs = {}
    for where in ('cpu', device):
        sess = ort.InferenceSession(m.SerializeToString(),
                                    providers=[PROVIDER.get(where, 'CPUExecutionProvider')])
        caches = {n: ort.OrtValue.ortvalue_from_numpy(start.copy(), where, 0) for n in ('k', 'v')}
        binding = sess.io_binding()
        binding.bind_ortvalue_input('pk', caches['k'])
        binding.bind_ortvalue_input('pv', caches['v'])
        binding.bind_output('y')
        binding.bind_ortvalue_output('pk_out', caches['k'])
        binding.bind_ortvalue_output('pv_out', caches['v'])
        ys = []
        for feeds in steps_feeds:
            binding.bind_cpu_input('q', feeds['q'])
            binding.bind_cpu_input('k', feeds['k'])
            binding.bind_cpu_input('v', feeds['v'])
            binding.bind_cpu_input('seqlens', feeds['seqlens'])
            binding.bind_cpu_input('total', feeds['total'])
            sess.run_with_iobinding(binding)
            y = binding.copy_outputs_to_cpu()[0]
            assert isinstance(y, np.ndarray)
            ys.append(y)
        assert caches['k'].device_name() == where
        runs[where] = (np.array(ys), caches['k'].numpy(), caches['v'].numpy())
    for got, want in zip(runs[device], runs['cpu']):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    # rows 4..9 were written by the steps, the rest kept
    k = runs[device][1]
    np.testing.assert_array_equal(k[:, :, :4], start[:, :, :4])
    np.testing.assert_array_equal(k[:, :, 10:], start[:, :, 10:])
    assert not np.array_equal(k[:, :, 4:10], start[:, :, 4:10])


GENAI = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'models', 'genai')
PROMPT = [5, 17, 42, 99, 100, 7, 3, 250, 12, 64]


def _decode(folder, device, steps, tmp_path, share=None):
    """Prompt then greedy decode through onyx on `device` ('cpu' or one of DEVICES): the logits of
    each step, and the providers that ran GroupQueryAttention. share: the caches as one buffer
    each of that many rows, bound as past and present in the device's memory (io_binding); else
    carried from the outputs to the next inputs."""
    cfg = json.load(open(os.path.join(folder, 'genai_config.json')))['model']['decoder']
    opts = ort.SessionOptions()
    opts.enable_profiling = True
    opts.profile_file_prefix = str(tmp_path / f'profile_{device}_')
    s = ort.InferenceSession(os.path.join(folder, 'model.onnx'), opts,
                             providers=[PROVIDER.get(device, 'CPUExecutionProvider')])
    names = [i.name for i in s.get_inputs()]
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
    return np.array(logits), _providers(s)


# Not Gemma 2: its windowed layers take window-sized caches from the first step, which CUDA
# leaves to the CPU (sliding_window_cache; test_kv_cache_share has them)
@pytest.mark.parametrize('device', DEVICES)
@pytest.mark.parametrize('arch', ['llama_fp32', 'qwen2_int4', 'phi3_int4', 'qwen2_int4_cuda'])
@pytest.mark.parametrize('share', [None, 24])
def test_genai_export_on_device_equals_cpu(device, arch, share, tmp_path):
    """The committed tiny builder exports (tests/models/genai, every MatMulNBits at accuracy_level
    1; the CUDA export qwen2_int4_cuda in float16, against its float twin on the CPU): a prompt
    and greedy decode on the device against the CPU, the cache carried from step to step, and
    bound in place as one device buffer for past and present."""
    from test_kv_cache_share import at_level1
    folder = at_level1(arch, tmp_path)
    got, providers = _decode(folder, device, 6, tmp_path, share)
    want, _ = _decode(folder, 'cpu', 6, tmp_path, share)
    assert providers == {PROFILE_NAME[device]}
    if got.dtype == np.float16:   # the CUDA export: float16 on the GPU, its float twin on the CPU
        span = float(np.abs(want.astype(np.float32)).max())
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=0,
                                   atol=1e-2 * span)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize('device', DEVICES)
def test_genai_prompts_of_new_lengths_stay_on_device(device, tmp_path):
    """After three plans of one input pattern a prompt of a length not seen before runs the
    generic plan (core/exec_run.c), whose shapes only the run knows: the decoder's products,
    norms, attention and activations stay on the device there (KF_RUN_SHAPES), and the logits
    are the CPU's."""
    from test_kv_cache_share import at_level1
    folder = at_level1('qwen2_int4', tmp_path)
    opts = ort.SessionOptions()
    opts.enable_profiling = True
    opts.profile_file_prefix = str(tmp_path / 'profile_')
    path = os.path.join(folder, 'model.onnx')
    dev = ort.InferenceSession(path, opts, providers=[PROVIDER[device]])
    cpu = ort.InferenceSession(path, providers=['CPUExecutionProvider'])
    cfg = json.load(open(os.path.join(folder, 'genai_config.json')))['model']['decoder']
    empty = np.zeros((1, cfg['num_key_value_heads'], 0, cfg['head_size']), np.float32)
    for n in (2, 4, 6, 8, 10):   # the last two on the generic plan
        feed = {'input_ids': np.array([PROMPT[:n]], np.int64),
                'attention_mask': np.ones((1, n), np.int64)}
        feed.update({i.name: empty for i in dev.get_inputs() if i.name.startswith('past')})
        got, want = dev.run(['logits'], feed)[0], cpu.run(['logits'], feed)[0]
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)
    ran = _providers_by_op(dev)
    for op in ('MatMulNBits', 'GroupQueryAttention', 'SkipSimplifiedLayerNormalization', 'Swish',
               'Mul'):
        assert ran.get(op) == {PROFILE_NAME[device]}, (op, ran.get(op))
