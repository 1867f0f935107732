#!/usr/bin/env python3
"""Breadth sweep: every architecture torchvision ships and ~50 transformers families (tiny random
configs), exported as a user would, plus onnxruntime.quantization's int8 forms of a selection; onyx
against onnxruntime on each. A correctness sweep over models the zoo does not hold, not a benchmark.

  .venv-zoo/bin/python tools/zoo/sweep.py [--families tv,hf,quant,det] [--exporters ts,dynamo]
                                          [--only NAME,...] [--out sweep] [--time] [--rounds R]

Per model one line: onyx's max|diff| from onnxruntime (ORT_ENABLE_ALL) relative to the output's
largest magnitude, next to onnxruntime's own spread (ORT_DISABLE_ALL against ORT_ENABLE_ALL), and a
verdict:
  same      within 1e-4 relative, or no further from onnxruntime than its own spread
  differs   further than that (for int8 models: float operators between quantized ones round
            differently in each engine, and a quantization step downstream can turn an ulp into
            a step: read the step count, not the verdict)
  refused   onyx raised (an op, attribute or type it does not implement is refused by design:
            the message says which)
  skipped   the exporter, the quantizer or onnxruntime failed: nothing to compare
With --time, each model that came out `same` is also timed: onyx and onnxruntime (ORT_ENABLE_ALL)
each in a process of its own, 2 threads, --rounds blocks alternated (the engine going first
swapped), the median run of each block, the blocks' median: onyx / onnxruntime, so that a model
where onyx is slow shows up among the many the zoo does not hold.
Detection models (`det`) end in score-sorted selections; with random weights their scores tie or
saturate, so a one-ulp difference reorders them: their lines are information, not verdicts.
Exported files stay in --out (ignored by git) and are reused. Exit status 1 when a float model
(tv, hf) is refused or differs.
"""
import argparse
import contextlib
import io
import os
import sys
import time
import traceback
import warnings

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, 'backend', 'python'))
os.environ.setdefault('ONYX_LIB', os.path.join(ROOT, 'build', 'libonyx.so'))
os.environ.setdefault('HF_HUB_OFFLINE', '1')

# too large for a 2-core sweep (minutes and >10 GB each), or needing inputs of another size
TV_SKIP = {'vit_h_14', 'vit_l_16', 'vit_l_32', 'regnet_y_128gf', 'mvit_v1_b', 'mvit_v2_s', 's3d'}

H = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128)
DEC = dict(H, num_key_value_heads=2, vocab_size=512, max_position_embeddings=128, use_cache=False)
AUDIO = dict(H, conv_dim=[32, 32], conv_stride=[5, 2], conv_kernel=[10, 3],
             num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4)
SWIN = dict(embed_dim=32, depths=[1, 1], num_heads=[2, 2], window_size=4, patch_size=4)
STAGES = dict(hidden_sizes=[16, 32, 64, 128], depths=[1, 1, 1, 1])
# name: (input kind, config class, config, model class or None for AutoModel)
HF = {
    'bert': ('text', 'BertConfig', dict(H, vocab_size=512)),
    'roberta': ('text', 'RobertaConfig', dict(H, vocab_size=512)),
    'xlm_roberta': ('text', 'XLMRobertaConfig', dict(H, vocab_size=512)),
    'albert': ('text', 'AlbertConfig', dict(H, vocab_size=512, embedding_size=32)),
    'electra': ('text', 'ElectraConfig', dict(H, vocab_size=512, embedding_size=32)),
    'deberta': ('text', 'DebertaConfig', dict(H, vocab_size=512)),
    'deberta_v2': ('text', 'DebertaV2Config', dict(H, vocab_size=512)),
    'distilbert': ('text', 'DistilBertConfig',
                   dict(dim=64, n_layers=2, n_heads=4, hidden_dim=128, vocab_size=512)),
    'mpnet': ('text', 'MPNetConfig', dict(H, vocab_size=512)),
    'longformer': ('text', 'LongformerConfig', dict(H, vocab_size=512, attention_window=8)),
    'gpt2': ('text', 'GPT2Config', dict(n_embd=64, n_layer=2, n_head=4, vocab_size=512, use_cache=False)),
    'gpt_neo': ('text', 'GPTNeoConfig', dict(hidden_size=64, num_layers=2, num_heads=4, vocab_size=512,
                                             attention_types=[[['global', 'local'], 1]], use_cache=False)),
    'gptj': ('text', 'GPTJConfig', dict(n_embd=64, n_layer=2, n_head=4, rotary_dim=8, vocab_size=512,
                                        use_cache=False)),
    'gpt_neox': ('text', 'GPTNeoXConfig', dict(H, vocab_size=512, use_cache=False)),
    'codegen': ('text', 'CodeGenConfig', dict(n_embd=64, n_layer=2, n_head=4, rotary_dim=8, vocab_size=512,
                                              use_cache=False)),
    'opt': ('text', 'OPTConfig', dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, ffn_dim=128,
                                      word_embed_proj_dim=64, vocab_size=512, use_cache=False)),
    'bloom': ('text', 'BloomConfig', dict(hidden_size=64, n_layer=2, n_head=4, vocab_size=512, use_cache=False)),
    'falcon': ('text', 'FalconConfig', dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                            vocab_size=512, use_cache=False)),
    'mpt': ('text', 'MptConfig', dict(d_model=64, n_heads=4, n_layers=2, vocab_size=512, use_cache=False)),
    'llama': ('text', 'LlamaConfig', DEC),
    'mistral': ('text', 'MistralConfig', DEC),
    'qwen2': ('text', 'Qwen2Config', DEC),
    'qwen3': ('text', 'Qwen3Config', dict(DEC, head_dim=16)),
    'phi': ('text', 'PhiConfig', DEC),
    'gemma': ('text', 'GemmaConfig', dict(DEC, head_dim=16)),
    'gemma2': ('text', 'Gemma2Config', dict(DEC, head_dim=16)),
    'stablelm': ('text', 'StableLmConfig', DEC),
    'olmo': ('text', 'OlmoConfig', DEC),
    'granite': ('text', 'GraniteConfig', DEC),
    't5_encoder': ('text', 'T5Config', dict(d_model=64, d_kv=16, d_ff=128, num_layers=2, num_heads=4,
                                            vocab_size=512), 'T5EncoderModel'),
    'vit': ('vision', 'ViTConfig', dict(H, image_size=64, patch_size=16)),
    'deit': ('vision', 'DeiTConfig', dict(H, image_size=64, patch_size=16)),
    'beit': ('vision', 'BeitConfig', dict(H, image_size=64, patch_size=16)),
    'dinov2': ('vision', 'Dinov2Config', dict(H, image_size=64, patch_size=16)),
    'clip_vision': ('vision', 'CLIPVisionConfig', dict(H, image_size=64, patch_size=16)),
    'siglip_vision': ('vision', 'SiglipVisionConfig', dict(H, image_size=64, patch_size=16)),
    'swin': ('vision', 'SwinConfig', dict(SWIN, image_size=64)),
    'swinv2': ('vision', 'Swinv2Config', dict(SWIN, image_size=64)),
    'convnext': ('vision', 'ConvNextConfig', dict(STAGES, image_size=64)),
    'convnextv2': ('vision', 'ConvNextV2Config', dict(STAGES, image_size=64)),
    'poolformer': ('vision', 'PoolFormerConfig', dict(STAGES, image_size=64)),
    'resnet': ('vision', 'ResNetConfig', dict(hidden_sizes=[16, 32], depths=[1, 1], embedding_size=16)),
    'regnet': ('vision', 'RegNetConfig', dict(hidden_sizes=[16, 32], depths=[1, 1], embedding_size=16,
                                              groups_width=8)),
    'mobilevit': ('vision', 'MobileViTConfig', dict(image_size=64)),
    'levit': ('vision224', 'LevitConfig', {}),
    'segformer': ('vision', 'SegformerConfig', dict(num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1],
                                                    hidden_sizes=[16, 32], num_attention_heads=[1, 2],
                                                    decoder_hidden_size=32)),
    'wav2vec2': ('audio', 'Wav2Vec2Config', AUDIO),
    'hubert': ('audio', 'HubertConfig', AUDIO),
    'wavlm': ('audio', 'WavLMConfig', AUDIO),
}
# int8 forms (onnxruntime.quantization, as a user runs it): static ones of these CNNs and
# transformers, dynamic ones of the transformers
QUANT_TV = ['densenet121', 'googlenet', 'inception_v3', 'shufflenet_v2_x1_0', 'squeezenet1_1',
            'mnasnet1_0', 'regnet_x_400mf', 'regnet_y_400mf', 'mobilenet_v3_large',
            'efficientnet_v2_s', 'resnext50_32x4d', 'alexnet', 'swin_t', 'maxvit_t']
QUANT_HF = ['bert', 'albert', 'deberta_v2', 'distilbert', 'gpt2', 'llama', 'qwen2', 'opt', 'bloom', 'phi',
            'gemma2', 't5_encoder', 'vit', 'swin', 'clip_vision', 'segformer', 'convnextv2', 'wav2vec2']
STATIC = {'qdq': ('QDQ', False, 'QUInt8'), 'qdq_pc': ('QDQ', True, 'QUInt8'), 'qdq_s8': ('QDQ', True, 'QInt8'),
          'qop': ('QOperator', False, 'QUInt8'), 'qop_pc': ('QOperator', True, 'QUInt8')}


class Skip(Exception):
    """Not onyx's failure: the exporter, the quantizer or onnxruntime."""


@contextlib.contextmanager
def quiet():
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        yield


def last_line(e):
    lines = str(e).strip().splitlines()
    return f'{type(e).__name__}: {lines[-1][:160] if lines else ""}'


def export(module, args, names, path, exporter):
    import torch
    if os.path.exists(path):
        return
    try:
        with quiet(), torch.no_grad():
            if exporter == 'ts':
                torch.onnx.export(module, args, path, dynamo=False, opset_version=17, input_names=names)
            else:
                torch.onnx.export(module, args, path, dynamo=True, input_names=names)
    except Exception as e:
        if os.path.exists(path):
            os.remove(path)
        raise Skip(f'export: {last_line(e)}')


def tv_model(name, family):
    import torch
    import torchvision
    kw = {'weights_backbone': None} if family == 'det' else {}
    torch.manual_seed(0)
    m = torchvision.models.get_model(name, weights=None, **kw).eval()
    video = name in torchvision.models.list_models(module=torchvision.models.video)
    x = torch.randn(1, 3, 16, 112, 112) if video else torch.randn(1, 3, 224, 224)
    return m, (x,), ['x']


def hf_model(name):
    import torch
    import transformers
    kind, cfg_cls, cfg, *cls = HF[name]
    config = getattr(transformers, cfg_cls)(**cfg)
    torch.manual_seed(0)
    if cls:
        m = getattr(transformers, cls[0])(config)
    else:
        m = transformers.AutoModel.from_config(config, attn_implementation='eager')
    m.eval()
    g = np.random.default_rng(0)
    if kind == 'text':
        mask = torch.ones(2, 16, dtype=torch.int64)
        mask[1, 12:] = 0  # a padded row, so the masks are exercised
        names, xs = ['input_ids', 'attention_mask'], (torch.tensor(g.integers(0, 500, (2, 16))), mask)
    elif kind.startswith('vision'):
        size = 224 if kind == 'vision224' else 64
        names, xs = ['pixel_values'], (torch.randn(1, 3, size, size),)
    else:
        names, xs = ['input_values'], (torch.randn(1, 4000),)

    class FirstOutput(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = m

        def forward(self, *args):
            return self.m(**dict(zip(names, args)), return_dict=True)[0]

    return FirstOutput().eval(), xs, names


def feeds_for(path, seed):
    """Random inputs for the model's inputs as onnxruntime reads them."""
    import onnxruntime as ort
    try:
        s = ort.InferenceSession(path, providers=['CPUExecutionProvider'])
    except Exception as e:
        raise Skip(f'onnxruntime: {last_line(e)}')
    g = np.random.default_rng(seed)
    feeds = {}
    for i in s.get_inputs():
        shape = [d if isinstance(d, int) else 1 for d in i.shape]
        if 'int' in i.type:
            feeds[i.name] = (np.ones(shape) if 'mask' in i.name else g.integers(0, 500, shape)).astype(np.int64)
        else:
            feeds[i.name] = g.standard_normal(shape).astype(np.float32)
    return feeds


def quantize(src, dst, form):
    from onnxruntime import quantization as q
    if os.path.exists(dst):
        return
    pre = src[:-5] + '.pre.onnx'
    try:
        with quiet():
            if not os.path.exists(pre):
                q.quant_pre_process(src, pre, skip_symbolic_shape=True)
            if form == 'dyn':
                q.quantize_dynamic(pre, dst, weight_type=q.QuantType.QInt8)
                return
            fmt, per_channel, act = STATIC[form]

            class Reader(q.CalibrationDataReader):
                def __init__(self):
                    self.it = iter([feeds_for(pre, s) for s in range(4)])

                def get_next(self):
                    return next(self.it, None)

            q.quantize_static(pre, dst, Reader(), quant_format=getattr(q.QuantFormat, fmt),
                              per_channel=per_channel, activation_type=getattr(q.QuantType, act),
                              weight_type=q.QuantType.QInt8)
    except Exception as e:
        if os.path.exists(dst):
            os.remove(dst)
        raise Skip(f'quantize: {last_line(e)}')


def largest_rel_diff(xs, ys):
    worst = 0.0
    for x, y in zip(xs, ys):
        x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
        if x.shape != y.shape:
            return float('inf')
        if y.size:
            worst = max(worst, float(np.max(np.abs(x - y))) / (float(np.max(np.abs(y))) + 1e-30))
    return worst


def compare(path, feeds):
    """(onyx's relative difference from onnxruntime, onnxruntime's own spread). On x86,
    onnxruntime computes QDQ units with int8 activations in float unless session.qdqisint8allowed
    is 1 (zoo_bench.py's yardstick does the same): the nearer of the two references counts."""
    import onnxruntime as ort
    import onyx
    ref = {}
    try:
        for key, level, config in (('all', 'ORT_ENABLE_ALL', {}), ('none', 'ORT_DISABLE_ALL', {}),
                                   ('int8', 'ORT_ENABLE_ALL', {'session.qdqisint8allowed': '1'})):
            so = ort.SessionOptions()
            so.intra_op_num_threads = 2
            so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
            for k, v in config.items():
                so.add_session_config_entry(k, v)
            ref[key] = ort.InferenceSession(path, so, providers=['CPUExecutionProvider']).run(None, feeds)
    except Exception as e:
        raise Skip(f'onnxruntime: {last_line(e)}')
    so = onyx.SessionOptions()
    so.intra_op_num_threads = 2
    mine = onyx.InferenceSession(path, so).run(None, feeds)
    return (min(largest_rel_diff(mine, ref['all']), largest_rel_diff(mine, ref['int8'])),
            largest_rel_diff(ref['none'], ref['all']))


def time_worker(engine, path, feeds_path, seconds):
    """In a child process: one session, warm-up, runs for `seconds`; prints the median in ms."""
    feeds = dict(np.load(feeds_path))
    if engine == 'ort':
        import onnxruntime as rt
        kw = {'providers': ['CPUExecutionProvider']}
    else:
        import onyx as rt
        kw = {}
    so = rt.SessionOptions()
    so.intra_op_num_threads = 2
    sess = rt.InferenceSession(path, so, **kw)
    for _ in range(3):
        sess.run(None, feeds)
    times, end = [], time.perf_counter() + seconds
    while len(times) < 5 or (time.perf_counter() < end and len(times) < 2000):
        t = time.perf_counter()
        sess.run(None, feeds)
        times.append(time.perf_counter() - t)
    print(float(np.median(times)) * 1e3)


def time_engines(path, feeds, rounds, seconds=1.5):
    """onyx's and onnxruntime's median ms, each engine in its own process, alternated."""
    import subprocess
    import tempfile
    with tempfile.NamedTemporaryFile(suffix='.npz') as f:
        np.savez(f.name, **feeds)
        got = {'onyx': [], 'ort': []}
        for r in range(rounds):
            for engine in (('onyx', 'ort') if r % 2 == 0 else ('ort', 'onyx')):
                out = subprocess.run([sys.executable, os.path.abspath(__file__), '--time-worker', engine, path,
                                      f.name, str(seconds)], capture_output=True, text=True)
                if out.returncode != 0:
                    lines = out.stderr.strip().splitlines()
                    raise RuntimeError(f'{engine} timing process exited {out.returncode}: '
                                       f'{lines[-1] if lines else ""}')
                got[engine].append(float(out.stdout.split()[-1]))
    return float(np.median(got['onyx'])), float(np.median(got['ort']))


def check(label, family, make, path, rounds=0):
    """One model: export (make) if needed, compare (and time, rounds > 0), print the line;
    returns the verdict and the time ratio (or None)."""
    t0 = time.time()
    ratio = None
    try:
        feeds = make()
        diff, spread = compare(path, feeds)
        verdict = 'same' if diff <= 1e-4 or diff <= spread * (1 + 1e-6) else 'differs'
        if family == 'det':
            verdict = 'info'
        text = f'{diff:.1e} (onnxruntime spread {spread:.1e})'
        if rounds and verdict == 'same':
            mine, theirs = time_engines(path, feeds, rounds)
            ratio = mine / theirs
            text += f'  {mine:.2f} / {theirs:.2f} ms = {ratio:.2f}'
    except Skip as e:
        verdict, text = 'skipped', str(e)
    except Exception as e:  # onyx's own failure
        verdict, text = 'refused', last_line(e)
        if os.environ.get('SWEEP_TRACE'):
            traceback.print_exc()
    print(f'{family:5s} {label:40s} {verdict:8s} {text}  [{time.time() - t0:.0f} s]', flush=True)
    return verdict, ratio


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--families', default='tv,hf,quant,det')
    ap.add_argument('--exporters', default='ts,dynamo')
    ap.add_argument('--only', default='', help='comma-separated model names')
    ap.add_argument('--out', default=os.path.join(ROOT, 'sweep'))
    ap.add_argument('--time', action='store_true', help='also time onyx against onnxruntime')
    ap.add_argument('--rounds', type=int, default=2, help='alternated timing blocks per engine')
    ap.add_argument('--time-worker', nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.time_worker:
        engine, path, feeds_path, seconds = args.time_worker
        return time_worker(engine, path, feeds_path, float(seconds))
    warnings.filterwarnings('ignore')
    import onnxruntime
    import torch
    import torchvision
    onnxruntime.set_default_logger_severity(4)
    torch.set_num_threads(2)
    os.makedirs(args.out, exist_ok=True)
    families, exporters = args.families.split(','), args.exporters.split(',')
    only = set(filter(None, args.only.split(',')))
    wanted = (lambda n: not only or n in only)
    verdicts = []

    def run(label, family, module_fn, path):
        def make():
            module, xs, names = module_fn()
            export(module, xs, names, path, label.rsplit('.', 1)[-1])
            return {n: x.numpy() for n, x in zip(names, xs)}
        verdicts.append((family, *check(label, family, make, path, args.rounds if args.time else 0)))

    tv = [n for n in torchvision.models.list_models(module=torchvision.models)
          + torchvision.models.list_models(module=torchvision.models.video) if n not in TV_SKIP]
    det = (torchvision.models.list_models(module=torchvision.models.detection)
           + torchvision.models.list_models(module=torchvision.models.segmentation))
    for exporter in exporters:
        if 'tv' in families:
            for n in filter(wanted, tv):
                run(f'{n}.{exporter}', 'tv', lambda n=n: tv_model(n, 'tv'), f'{args.out}/{n}.{exporter}.onnx')
        if 'hf' in families:
            for n in filter(wanted, HF):
                run(f'{n}.{exporter}', 'hf', lambda n=n: hf_model(n), f'{args.out}/hf_{n}.{exporter}.onnx')
        if 'det' in families:
            for n in filter(wanted, det):
                run(f'{n}.{exporter}', 'det', lambda n=n: tv_model(n, 'det'), f'{args.out}/{n}.{exporter}.onnx')
    if 'quant' in families:
        jobs = [(n, f'{n}.ts', lambda n=n: tv_model(n, 'tv'), list(STATIC)) for n in QUANT_TV]
        jobs += [(n, f'hf_{n}.ts', lambda n=n: hf_model(n), ['dyn', 'qdq', 'qop']) for n in QUANT_HF]
        for n, stem, module_fn, forms in jobs:
            if not wanted(n):
                continue
            src = f'{args.out}/{stem}.onnx'
            for form in forms:
                dst = f'{args.out}/{stem}.{form}.onnx'

                def make(module_fn=module_fn, src=src, dst=dst, form=form):
                    module, xs, names = module_fn()
                    export(module, xs, names, src, 'ts')
                    quantize(src, dst, form)
                    return feeds_for(dst, 99)
                verdicts.append(('quant', *check(f'{stem}.{form}', 'quant', make, dst,
                                                 args.rounds if args.time else 0)))

    counts, ratios = {}, {}
    for family, v, ratio in verdicts:
        counts.setdefault(family, {}).setdefault(v, 0)
        counts[family][v] += 1
        if ratio:
            ratios.setdefault(family, []).append(ratio)
    for family, c in counts.items():
        line = f'{family}: ' + ', '.join(f'{k} {v}' for k, v in sorted(c.items()))
        if family in ratios:
            r = np.array(ratios[family])
            line += (f'; onyx / onnxruntime geometric mean {np.exp(np.mean(np.log(r))):.2f} over {r.size},'
                     f' {int(np.sum(r > 1))} above 1.0, largest {r.max():.2f}')
        print(line)
    bad = any(f in ('tv', 'hf') and v in ('refused', 'differs') for f, v, _ in verdicts)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
