"""GPU benchmark, run on a GPU machine by tools/cuda/check.sh: onyx on CUDA against PyTorch on the
same GPU, eager and replayed as a CUDA graph, fp32 and fp16, at batch 1 and 32. The models are
torchvision's and transformers' architectures with random weights (the light models' families,
ResNet-50, ViT-B/16, BERT-base), exported to ONNX here with fixed shapes. onyx is timed by its CLI
(`onyx bench -d CUDA`), once with host inputs and outputs (each run copies them) and once with
them in device memory (--device-io, as PyTorch's inputs already on the GPU); PyTorch with CUDA
events. Both report the median. TF32 is off on both sides (onyx computes fp32 in fp32).

onnxruntime-gpu is the second anchor, on the same .onnx files, where it is importable (check.sh
puts the wheel that tools/cuda/ort_gpu.sh carried on PYTHONPATH): CUDAExecutionProvider with
TF32 off, inputs and outputs bound in device memory through io_binding, timed as it is and
replayed as a CUDA graph (enable_cuda_graph; where onnxruntime refuses the capture, the row says
why). Each model runs in a child process of its own (--ort-worker), apart from PyTorch's CUDA
context; onnxruntime's run waits for its stream, so its times are wall-clock medians."""
import argparse
import json
import os
import re
import subprocess
import sys
import time

torch = None  # imported by main (the onnxruntime worker runs without it)

MODELS = ['alexnet', 'densenet121', 'googlenet', 'resnet50', 'shufflenet_v2_x1_0',
          'squeezenet1_0', 'vgg19', 'vit_b_16', 'bert_base', 'gpt2', 'whisper_tiny_encoder']
TRANSFORMERS = ('bert_base', 'gpt2', 'whisper_tiny_encoder')


def build(name):
    torch.manual_seed(0)
    if name in TRANSFORMERS:
        import transformers
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'zoo'))
        from export import WHISPER_TINY  # the CPU zoo's Whisper-tiny

        class LastHidden(torch.nn.Module):
            """The model's last hidden state from one tensor (plain tensors in and out)."""

            def __init__(self, inner, arg, mask=False):
                super().__init__()
                self.inner, self.arg, self.mask = inner, arg, mask

            def forward(self, x):
                extra = {'attention_mask': torch.ones_like(x)} if self.mask else {}
                return self.inner(**{self.arg: x}, **extra).last_hidden_state

        if name == 'whisper_tiny_encoder':  # the encoder takes 3000 frames (30 s) of 80 mel bins
            cfg = transformers.WhisperConfig(**WHISPER_TINY)
            inner = transformers.WhisperModel(cfg).get_encoder()
            return LastHidden(inner, 'input_features'), lambda b: (torch.randn(b, 80, 3000),)
        if name == 'gpt2':  # no past key/values; a mask of ones, or transformers 5 looks for
            # packed sequences with aten::diff, which the TorchScript exporter does not have
            cfg = transformers.GPT2Config(use_cache=False)
            model = LastHidden(transformers.GPT2Model(cfg), 'input_ids', mask=True)
        else:
            cfg = transformers.BertConfig()
            model = LastHidden(transformers.BertModel(cfg, add_pooling_layer=False), 'input_ids')
        return model, lambda b: (torch.randint(0, cfg.vocab_size, (b, 128)),)
    import torchvision
    kwargs = {'aux_logits': False, 'init_weights': True} if name == 'googlenet' else {}
    model = getattr(torchvision.models, name)(weights=None, **kwargs)
    return model, lambda b: (torch.randn(b, 3, 224, 224),)


def export(model, inputs, path):
    if os.path.exists(path):
        return
    torch.onnx.export(model, inputs, path, opset_version=17, dynamo=False,
                      do_constant_folding=True)


def torch_times(model, inputs, runs, graph):
    """Median ms per run over `runs` runs (eager, or replays of a captured CUDA graph)."""
    with torch.inference_mode():
        for _ in range(3):
            model(*inputs)
        torch.cuda.synchronize()
        step = lambda: model(*inputs)
        if graph:
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                for _ in range(3):
                    model(*inputs)
            torch.cuda.current_stream().wait_stream(stream)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                model(*inputs)
            step = g.replay
        times = []
        for _ in range(runs):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            step()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def onyx_time(cli, path, runs, device_io, extra=()):
    cmd = [cli, 'bench', path, '-d', 'CUDA', '-n', str(runs), '-w', '5', *extra]
    r = subprocess.run(cmd + (['--device-io'] if device_io else []), capture_output=True, text=True,
                       timeout=600)
    if r.returncode != 0:
        return None, (r.stderr or r.stdout).strip().splitlines()[-1][:200]
    m = re.search(r'median ([\d.]+) (ms|us)', r.stdout)
    if not m:
        return None, 'no median in: ' + r.stdout[-200:]
    v = float(m.group(1))
    return (v / 1000 if m.group(2) == 'us' else v), None


ORT_TYPES = {'tensor(float)': 'float32', 'tensor(float16)': 'float16', 'tensor(int64)': 'int64',
             'tensor(int32)': 'int32', 'tensor(bool)': 'bool'}


def ort_worker(path, runs, graph, provider):
    """In a child process: one onnxruntime session on `provider`, inputs and outputs bound in its
    device memory, warmed, then timed; prints one JSON line (median_ms, or error)."""
    import numpy as np
    import onnxruntime as ort
    info = {'version': ort.__version__}
    if hasattr(ort, 'get_build_info'):
        info['build'] = ort.get_build_info()
    cuda = provider == 'CUDAExecutionProvider'
    if cuda and hasattr(ort, 'preload_dlls'):
        ort.preload_dlls()  # CUDA and cuDNN from the nvidia-* wheels beside PyTorch
    opts = {'device_id': '0', 'use_tf32': '0'}
    if graph:
        opts['enable_cuda_graph'] = '1'
    sess = ort.InferenceSession(path, ort.SessionOptions(),
                                providers=[(provider, opts) if cuda else provider])
    if sess.get_providers()[0] != provider:
        raise RuntimeError(f'{provider} not used (providers: {sess.get_providers()})')
    rng = np.random.default_rng(0)
    feeds = {}
    for i in sess.get_inputs():
        if i.type not in ORT_TYPES or not all(isinstance(d, int) for d in i.shape):
            raise RuntimeError(f'input {i.name}: {i.type} {i.shape} (a fixed shape is needed)')
        dtype = ORT_TYPES[i.type]
        feeds[i.name] = (rng.integers(0, 1000, i.shape) if 'int' in dtype
                         else rng.standard_normal(i.shape)).astype(dtype)
    device = 'cuda' if cuda else 'cpu'
    shapes = [o.shape for o in sess.get_outputs()]
    if not all(isinstance(d, int) for s in shapes for d in s):
        shapes = [o.shape for o in sess.run(None, feeds)]  # a graph capture needs them fixed
    binding = sess.io_binding()
    keep = []  # the bound buffers stay alive (and in place: a captured graph reads them)
    for name, x in feeds.items():
        keep.append(ort.OrtValue.ortvalue_from_numpy(x, device, 0))
        binding.bind_ortvalue_input(name, keep[-1])
    for o, shape in zip(sess.get_outputs(), shapes):
        keep.append(ort.OrtValue.ortvalue_from_shape_and_type(shape, np.dtype(ORT_TYPES[o.type]),
                                                              device, 0))
        binding.bind_ortvalue_output(o.name, keep[-1])
    for _ in range(5):
        sess.run_with_iobinding(binding)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        sess.run_with_iobinding(binding)
        times.append((time.perf_counter() - t) * 1e3)
    times.sort()
    info['median_ms'] = times[len(times) // 2]
    return info


def ort_time(path, runs, graph, provider='CUDAExecutionProvider'):
    """(median ms, None) from a child process (ort_worker), or (None, why not)."""
    cmd = [sys.executable, __file__, '--ort-worker', path, '--runs', str(runs),
           '--ort-provider', provider] + (['--ort-graph'] if graph else [])
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return None, 'onnxruntime: timed out'
    lines = [x for x in r.stdout.splitlines() if x.startswith('{')]
    got = json.loads(lines[-1]) if lines else {'error': (r.stderr or r.stdout).strip()[-200:]}
    if 'median_ms' not in got:
        return None, 'onnxruntime' + (' graph' if graph else '') + ': ' + \
            got.get('error', '?').strip().splitlines()[-1][:120]
    return got['median_ms'], None


def ort_available():
    """onnxruntime's version line if it can run on CUDA here, else None."""
    r = subprocess.run([sys.executable, '-c', 'import onnxruntime as o, json; '
                        'print(json.dumps([o.__version__, o.get_available_providers(), '
                        'o.get_build_info() if hasattr(o, "get_build_info") else ""]))'],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        return None
    version, providers, build = json.loads(r.stdout.splitlines()[-1])
    if 'CUDAExecutionProvider' not in providers:
        return None
    return f'onnxruntime {version} ({build})'


def main():
    if '--ort-worker' in sys.argv:  # the child process of ort_time
        ap = argparse.ArgumentParser()
        ap.add_argument('--ort-worker', required=True)
        ap.add_argument('--runs', type=int, default=30)
        ap.add_argument('--ort-graph', action='store_true')
        ap.add_argument('--ort-provider', default='CUDAExecutionProvider')
        a = ap.parse_args()
        try:
            print(json.dumps(ort_worker(a.ort_worker, a.runs, a.ort_graph, a.ort_provider)))
        except Exception as e:
            print(json.dumps({'error': f'{type(e).__name__}: {e}'}))
        return 0
    global torch
    import torch
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', default='.gpu/out')
    ap.add_argument('--models', default=','.join(MODELS))
    ap.add_argument('--batches', default='1,32')
    ap.add_argument('--runs', type=int, default=30)
    ap.add_argument('--precisions', default='fp32,fp16')
    ap.add_argument('--profile', action='store_true', help='also profile each model per node')
    ap.add_argument('--ab', action='store_true',
                    help='also time onyx at -O basic (no fusion, no device epilogues), device I/O')
    ap.add_argument('--no-ort', action='store_true', help='leave onnxruntime-gpu out')
    args = ap.parse_args()
    ort_version = None if args.no_ort else ort_available()
    print(ort_version or 'onnxruntime-gpu: not available here (its columns stay empty)', flush=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    cli = os.environ.get('ONYX_CLI', 'build/onyx')
    mdir = '/tmp/onyx-gpu-models'
    os.makedirs(mdir, exist_ok=True)
    rows = []
    for name in args.models.split(','):
        model, make = build(name)
        model.eval()
        for b in [int(x) for x in args.batches.split(',')]:
            for prec in args.precisions.split(','):
                m = model.half() if prec == 'fp16' else model.float()
                inputs = make(b)
                if prec == 'fp16':
                    inputs = tuple(x.half() if x.is_floating_point() else x for x in inputs)
                path = f'{mdir}/{name}_b{b}_{prec}.onnx'
                t0 = time.time()
                try:
                    # float16 CNNs trace on the GPU; BERT's does not: traced on CUDA, torch's
                    # scaled-dot-product attention leaves float Casts that make the file invalid
                    # (a float16 LayerNorm scale on a float input: onnxruntime refuses it too)
                    # (with torch 2.11 the CPU trace of its float16 scaled-dot-product attention
                    # leaves a float LayerNorm input too: its float16 export is traced with the
                    # eager attention, and PyTorch is timed with its default one)
                    on_gpu = prec == 'fp16' and name not in TRANSFORMERS
                    eager = prec == 'fp16' and name in TRANSFORMERS
                    if eager:
                        default_attention = m.inner.config._attn_implementation
                        m.inner.config._attn_implementation = 'eager'
                    try:
                        export(m.cuda() if on_gpu else m.cpu(),
                               tuple(x.cuda() if on_gpu else x.cpu() for x in inputs), path)
                    finally:
                        if eager:
                            m.inner.config._attn_implementation = default_attention
                except Exception as e:  # an exporter failure is a row, not the end of the table
                    rows.append((name, b, prec, None, None, None, None, None, None,
                                 f'export: {str(e)[:80]}'))
                    continue
                export_s = time.time() - t0
                if b == 1:  # which nodes stay on the CPU: the first suspect of a slow row
                    with open(os.path.join(args.out, 'placement.txt'), 'a') as f:
                        r = subprocess.run([cli, 'info', path, '--placement', '-d', 'CUDA'],
                                           capture_output=True, text=True, timeout=600)
                        f.write(f'== {path}\n' + r.stdout + r.stderr[-2000:])
                    # the next suspect: steps outside the device graphs (a launch each, per run),
                    # and segments whose capture failed
                    with open(os.path.join(args.out, 'graphs.txt'), 'a') as f:
                        for io in ([], ['--device-io']):
                            r = subprocess.run([cli, 'bench', path, '-d', 'CUDA', '-n', '3', '-w',
                                                '1', '-v', *io], capture_output=True, text=True,
                                               timeout=600)
                            lines = [x for x in r.stderr.splitlines() if 'device graph' in x]
                            f.write(f'== {path} {" ".join(io)}\n' + '\n'.join(lines) + '\n')
                if args.profile:  # where the time goes, node by node (each waited for)
                    r = subprocess.run([cli, 'profile', path, '-d', 'CUDA', '-n', '10', '-w', '3',
                                        '--top', '25', '--trace', '/tmp/onyx_profile.json'],
                                       capture_output=True, text=True, timeout=600)
                    with open(os.path.join(args.out, 'profile.txt'), 'a') as f:
                        f.write(f'== {path}\n' + r.stdout + r.stderr[-2000:])
                    print(f'== profile {path}\n' + '\n'.join(r.stdout.splitlines()[:22]), flush=True)
                oh, err = onyx_time(cli, path, args.runs, False)
                ox, err2 = onyx_time(cli, path, args.runs, True)
                err = err or err2
                if args.ab:
                    basic, err3 = onyx_time(cli, path, args.runs, True, ('-O', 'basic'))
                    err = err or err3
                    err = (err or '') + f' -O basic: {basic:.3f} ms' if basic else err
                gm = m.cuda()
                gin = tuple(x.cuda() for x in inputs)
                eager = torch_times(gm, gin, args.runs, False)
                try:
                    graph = torch_times(gm, gin, args.runs, True)
                except Exception as e:
                    graph, err = None, (err or '') + f' graph: {str(e)[:60]}'
                ort_plain = ort_graph = None
                if ort_version:
                    ort_plain, e1 = ort_time(path, args.runs, False)
                    ort_graph, e2 = ort_time(path, args.runs, True)
                    err = '; '.join(x for x in (err, e1, e2) if x) or None
                rows.append((name, b, prec, oh, ox, eager, graph, ort_plain, ort_graph, err))
                print(f'{name:20s} b{b:<3d} {prec}: onyx {oh} / device-io {ox} ms, torch eager {eager:.3f} ms, '
                      f'graph {graph} ms, onnxruntime {ort_plain} / graph {ort_graph} ms '
                      f'(export {export_s:.0f} s) {err or ""}', flush=True)
        del model
        torch.cuda.empty_cache()
    fmt = lambda v: f'{v:.3f}' if v is not None else '-'
    ratio = lambda a, b: f'{a / b:.2f}' if a is not None and b else '-'
    # onnxruntime's better time: as it is or replayed as a CUDA graph, where it allows one
    best = lambda a, b: min(x for x in (a, b) if x is not None) if a or b else None
    lines = [f'{ort_version or "onnxruntime-gpu: not run"}; torch {torch.__version__}, CUDA '
             f'{torch.version.cuda}, cuDNN {torch.backends.cudnn.version()}', '',
             '| model | batch | precision | onyx ms (host I/O) | onyx ms (device I/O) | torch eager ms '
             '| torch CUDA graph ms | onnxruntime-gpu ms | onnxruntime-gpu CUDA graph ms '
             '| onyx / eager | onyx / graph | onyx / onnxruntime-gpu | note |', '|' + ' --- |' * 13]
    for name, b, prec, oh, ox, eager, graph, orp, org, err in rows:
        lines.append(f'| {name} | {b} | {prec} | {fmt(oh)} | {fmt(ox)} | {fmt(eager)} | {fmt(graph)} | '
                     f'{fmt(orp)} | {fmt(org)} | {ratio(ox, eager)} | {ratio(ox, graph)} | '
                     f'{ratio(ox, best(orp, org))} | {err or ""} |')
    table = '\n'.join(lines)
    with open(os.path.join(args.out, 'bench_gpu.md'), 'w') as f:
        f.write(table + '\n')
    print(table)


if __name__ == '__main__':
    sys.exit(main())
