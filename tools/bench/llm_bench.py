#!/usr/bin/env python3
"""Decoder LLMs exported by onnxruntime-genai's builder: onyx against onnxruntime (the same
generation loop over a plain session) and onnxruntime-genai, side by side in one run.

Each engine runs each model in a process of its own; with --rounds R the engines' blocks alternate
R times (each first in turn) and the figures are medians over the rounds. A worker reports:
session creation (load + prepare), prefill of P tokens (time to the first token's logits) for
each P, both the first prompt of that length in the process (prefill_P) and the next one (warm_P),
decode ms/token over N greedy steps after a prompt, and its peak resident memory (VmHWM). The first
prompt of a length writes activations and logits into memory the process has not touched yet; on
a virtual machine whose host takes freed pages back, that first touch costs both engines several
microseconds a page (a 512-token Llama-3.2-1B prompt: about 85-95 thousand pages, 1.3-1.5 s of
system time), so the warm figure is the engine's own prefill and the first one what a process's
first request at that length pays.
The machine's memory bandwidth (a large numpy copy) and each model's weight bytes give decode's
bound: a token reads every weight once, so ms/token >= weight bytes / bandwidth. A benchmark, not
a test.

  tools/bench/llm_bench.py MODEL_DIR... [--threads 2] [--prefill 128,512] [--decode 128]
                           [--context 16] [--rounds 2] [--engines onyx,ort,genai]

Decode runs after a prompt of --context tokens. Engines onyx-share and ort-share run the loop with
the cache as onnxruntime-genai binds it (past_present_share_buffer): per layer one buffer of the
generation's maximum length, bound through io_binding as both past and present, appended in place;
onyx and ort carry each step's present over as the next step's past.

--device cuda runs every engine on the GPU (issue 36; tools/cuda/check.sh's `llm` step): onyx's
and onnxruntime's sessions with CUDAExecutionProvider (onnxruntime-gpu), the share engines' caches
as device buffers, the logits copied to the host each step as a sampler would read them;
onnxruntime-genai with its cuda provider (onnxruntime-genai-cuda). The bound then is the
weights over the GPU's memory bandwidth (a device copy through PyTorch, where it is installed),
and gpu_mib the process's device memory at its end (nvidia-smi).

Model folders come from tools/llm/tiny_model.py (make llm-models writes the default set under
llm/). Needs onnxruntime-genai for the `genai` engine.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, '..', '..'))


def peak_mib():
    for line in open('/proc/self/status'):
        if line.startswith('VmHWM:'):
            return int(line.split()[1]) / 1024
    return float('nan')


def gpu_mib():
    """This process's device memory now (nvidia-smi), or NaN where it cannot say."""
    try:
        out = subprocess.run(['nvidia-smi', '--query-compute-apps=pid,used_memory',
                              '--format=csv,noheader,nounits'], capture_output=True, text=True,
                             timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return float('nan')
    for line in out.splitlines():
        pid, _, mib = line.partition(',')
        if pid.strip() == str(os.getpid()):
            return float(mib)
    return float('nan')


def gpu_bandwidth_gbs(mib=1024, repeats=5):
    """The GPU's memory bandwidth as a device copy moves it (read + write), through PyTorch."""
    import torch
    a = torch.ones(mib * 1024 * 1024 // 4, device='cuda')
    b = torch.empty_like(a)
    best = float('inf')
    for _ in range(repeats):
        torch.cuda.synchronize()
        t = time.perf_counter()
        b.copy_(a)
        torch.cuda.synchronize()
        best = min(best, time.perf_counter() - t)
    return 2 * a.numel() * 4 / best / 1e9


def bandwidth_gbs(mib=512, repeats=5):
    """Memory bandwidth as a large copy moves it (read + write), best of a few."""
    a = np.ones(mib * 1024 * 1024 // 8)
    b = np.empty_like(a)
    best = float('inf')
    for _ in range(repeats):
        t = time.perf_counter()
        np.copyto(b, a)
        best = min(best, time.perf_counter() - t)
    return 2 * a.nbytes / best / 1e9


def weight_bytes(folder):
    return sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder)
               if f.endswith(('.onnx', '.onnx.data', '.data')))


class Loop:
    """The generation loop over a plain session (onyx or onnxruntime): the cache carried from the
    outputs to the next step's inputs, or (share) one buffer per cache bound as both."""

    def __init__(self, engine, folder, threads, share=False, device='cpu'):
        self.share = share
        self.device = device
        cfg = json.load(open(os.path.join(folder, 'genai_config.json')))['model']
        dec = cfg['decoder']
        self.layers, self.kvh, self.hs = (dec['num_hidden_layers'], dec['num_key_value_heads'],
                                          dec['head_size'])
        self.vocab = cfg['vocab_size']
        path = os.path.join(folder, dec['filename'])
        if engine == 'onyx':
            from onyx import ort as rt
        else:
            import onnxruntime as rt
        so = rt.SessionOptions()
        so.intra_op_num_threads = threads
        provider = 'CUDAExecutionProvider' if device == 'cuda' else 'CPUExecutionProvider'
        self.s = rt.InferenceSession(path, so, providers=[provider])
        if self.s.get_providers()[0] != provider:
            raise RuntimeError(f'{provider} is not available to {engine}')
        self.inputs = {i.name for i in self.s.get_inputs()}
        self.outputs = [o.name for o in self.s.get_outputs()]
        self.dtype = np.float16 if 'float16' in self.s.get_inputs()[-1].type else np.float32
        self.rt = rt

    def start(self, max_length):
        length = max_length if self.share else 0
        self.past = {f'past_key_values.{i}.{w}': np.zeros((1, self.kvh, length, self.hs), self.dtype)
                     for i in range(self.layers) for w in ('key', 'value')}
        self.total = 0
        if self.share:   # bound once per generation: past and present are one buffer
            self.binding = self.s.io_binding()
            self.binding.bind_output('logits')
            for name, buf in self.past.items():
                value = self.rt.OrtValue.ortvalue_from_numpy(buf, self.device, 0)
                self.binding.bind_ortvalue_input(name, value)
                self.binding.bind_ortvalue_output(name.replace('past_key_values', 'present'), value)

    def step(self, ids):
        self.total += ids.shape[1]
        feed = {'input_ids': ids, **self.past}
        if 'attention_mask' in self.inputs:
            feed['attention_mask'] = np.ones((1, self.total), np.int64)
        if 'position_ids' in self.inputs:
            feed['position_ids'] = np.arange(self.total - ids.shape[1], self.total)[None, :]
        if self.share:
            for name in ('input_ids', 'attention_mask', 'position_ids'):
                if name in feed:
                    self.binding.bind_cpu_input(name, feed[name])
            self.binding.bind_output('logits')   # onnxruntime sizes it anew each step, on the host
            self.s.run_with_iobinding(self.binding)
            return int(np.argmax(self.binding.get_outputs()[0].numpy()[0, -1]))
        r = dict(zip(self.outputs, self.s.run(None, feed)))
        for i in range(self.layers):
            for w in ('key', 'value'):
                self.past[f'past_key_values.{i}.{w}'] = r[f'present.{i}.{w}']
        return int(np.argmax(r['logits'][0, -1]))


def prompt_ids(n, vocab):
    return np.random.default_rng(n).integers(1, min(vocab, 30000), (1, n)).astype(np.int64)


def worker(engine, folder, threads, prefills, decode, context, out_path, device='cpu'):
    res = {}
    t = time.perf_counter()
    if engine == 'genai':
        import onnxruntime_genai as og
        cfg = og.Config(folder)
        cfg.clear_providers()
        if device == 'cuda':
            cfg.append_provider('cuda')
        model = og.Model(cfg)
        vocab = json.load(open(os.path.join(folder, 'genai_config.json')))['model']['vocab_size']

        def run(p, steps):
            params = og.GeneratorParams(model)
            # min_length keeps a random model's end-of-text token from ending the loop early
            params.set_search_options(max_length=p + steps + 1, min_length=p + steps + 1,
                                      do_sample=False)
            gen = og.Generator(model, params)
            t0 = time.perf_counter()
            gen.append_tokens(prompt_ids(p, vocab)[0].astype(np.int32))
            gen.generate_next_token()
            t1 = time.perf_counter()
            for _ in range(steps):
                gen.generate_next_token()
            return t1 - t0, time.perf_counter() - t1
    else:
        loop = Loop(engine.split('-')[0], folder, threads, share=engine.endswith('-share'),
                    device=device)

        def run(p, steps):
            loop.start(p + steps + 1)
            t0 = time.perf_counter()
            tok = loop.step(prompt_ids(p, loop.vocab))
            t1 = time.perf_counter()
            for _ in range(steps):
                tok = loop.step(np.array([[tok]], np.int64))
            return t1 - t0, time.perf_counter() - t1
    res['create_s'] = time.perf_counter() - t
    run(8, 2)   # warm-up: first-run work (packing, plans) is not a prefill's
    for p in prefills:
        first, _ = run(p, 0)
        res[f'prefill_{p}_ms'] = first * 1000
        again, _ = run(p, 0)
        res[f'warm_{p}_ms'] = again * 1000
    _, rest = run(context, decode)
    res['decode_ms'] = rest * 1000 / decode
    res['peak_mib'] = peak_mib()
    if device == 'cuda':
        res['gpu_mib'] = gpu_mib()
    with open(out_path, 'w') as f:
        json.dump(res, f)


def run_worker(engine, folder, a):
    with tempfile.NamedTemporaryFile(suffix='.json', delete=False) as f:
        out = f.name
    try:
        env = dict(os.environ)
        if engine.startswith('onyx'):
            env['PYTHONPATH'] = os.path.join(ROOT, 'backend', 'python')
        proc = subprocess.run([sys.executable, __file__, '--worker', engine, folder,
                               str(a.threads), a.prefill, str(a.decode), str(a.context), out,
                               a.device],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if proc.returncode != 0:
            return {'error': proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else
                    f'exit {proc.returncode}'}
        return json.load(open(out))
    finally:
        os.unlink(out)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == '--worker':
        engine, folder, threads, prefill, decode, context, out, device = sys.argv[2:10]
        worker(engine, folder, int(threads), [int(p) for p in prefill.split(',') if p],
               int(decode), int(context), out, device)
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('models', nargs='+')
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--prefill', default='128,512')
    ap.add_argument('--decode', type=int, default=128)
    ap.add_argument('--context', type=int, default=16, help='prompt tokens before decode')
    ap.add_argument('--rounds', type=int, default=2)
    ap.add_argument('--engines', default='onyx,ort,genai')
    ap.add_argument('--device', choices=['cpu', 'cuda'], default='cpu')
    a = ap.parse_args()
    engines = a.engines.split(',')
    bw = gpu_bandwidth_gbs() if a.device == 'cuda' else bandwidth_gbs()
    load = os.getloadavg()[0]
    print(f'{a.device}: {a.threads} thread(s), {a.rounds} round(s), memory bandwidth {bw:.1f} GB/s '
          f'(copy), load average {load:.2f}')
    prefills = [int(p) for p in a.prefill.split(',') if p]
    cols = (['create_s'] + [f'{kind}_{p}_ms' for p in prefills for kind in ('prefill', 'warm')] +
            ['decode_ms', 'peak_mib'] + (['gpu_mib'] if a.device == 'cuda' else []))
    for folder in a.models:
        runs = {e: [] for e in engines}
        for r in range(a.rounds):
            order = engines if r % 2 == 0 else engines[::-1]
            for e in order:
                runs[e].append(run_worker(e, folder, a))
        wb = weight_bytes(folder)
        bound = wb / (bw * 1e9) * 1000
        print(f'\n{os.path.basename(os.path.normpath(folder))}: weights {wb / 2**20:.0f} MiB, '
              f'decode bound {bound:.2f} ms/token')
        print(f"{'engine':12}" + ''.join(f'{c:>15}' for c in cols) + f"{'vs bound':>10}")
        med = {}
        for e in engines:
            ok = [x for x in runs[e] if 'error' not in x]
            if not ok:
                print(f'{e:12} error: {runs[e][0]["error"]}')
                continue
            med[e] = {c: float(np.median([x[c] for x in ok])) for c in cols}
            print(f'{e:12}' + ''.join(f'{med[e][c]:15.2f}' for c in cols) +
                  f"{med[e]['decode_ms'] / bound:10.2f}")
        if 'onyx' in med:
            for e in engines:
                if e != 'onyx' and e in med:
                    print(f'onyx/{e:7}' + ''.join(f'{med["onyx"][c] / med[e][c]:15.2f}'
                                                 for c in cols))


if __name__ == '__main__':
    main()
