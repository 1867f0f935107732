#!/usr/bin/env python3
"""onyx against onnxruntime on the model zoo (tools/zoo/export.py writes zoo/*.onnx with a
<name>.json describing the inputs), side by side in one run with the same thread count.

Each engine runs each model in a process of its own, in a block of back-to-back runs, so an
engine's spinning worker threads are never charged to the other; with --rounds R the two blocks
alternate R times, each engine first in every other round, and the medians pool all rounds. Each worker reports its session creation time
(onyx: load + prepare with the inputs as examples; onnxruntime: InferenceSession), its median
latency and its own peak resident memory (VmHWM). A benchmark, not a test.

  tools/bench/zoo_bench.py [--threads N] [--batch B] [--seconds S] [--rounds R]
                           [--models bert_base,resnet50] [--exporters ts,dynamo] [--zoo DIR]
                           [--onyx-config KEY=VALUE ...]
--onyx-config sets onyx session config entries, e.g. optimization.bfloat16=1 (the bfloat16
opt-in, against onnxruntime in float32).

Quantized models (tools/zoo/quantize.py: <model>.qop, .qdq, .dyn, ...; their .json has a
"quantized" entry) get the accuracy yardstick, output by output: an integer output's largest
difference from onnxruntime in quantization steps (within: at most 1); a float output's max|diff|
from onnxruntime (ORT_ENABLE_ALL, as timed) next to onnxruntime's own spread, max|diff| between its
ORT_DISABLE_ALL and ORT_ENABLE_ALL outputs (within: onyx's difference is no larger). A float output
made by a DequantizeLinear with one scale is a quantized output in float form: it also shows onyx's
difference in steps of that scale, and one step is within too (the issue's "within one step").
On x86, onnxruntime computes QDQ units with int8 activations in float (its
session.qdqisint8allowed is 0 there, 1 on ARM): for those models the same rules are also applied
against onnxruntime with that entry at 1, its own 8-bit computation of the model, and an output
within either reference is within; the line then shows both ("int8 ort:").
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, '..', '..'))
DTYPES = {'float32': np.float32, 'float': np.float32, 'float16': np.float16, 'int64': np.int64,
          'int32': np.int32, 'bool': np.bool_}


def make_feeds(spec, batch, seed=1000):
    """Inputs from the zoo's description: a fixed seed per input (seed + its index), batch dim
    overridden."""
    feeds = {}
    for k, inp in enumerate(spec['inputs']):
        shape = list(inp['shape'])
        if batch and shape and '0' in inp.get('dynamic', {}):
            shape[0] = batch
        rng = np.random.default_rng(seed + k)
        dtype = DTYPES[inp['dtype']]
        fill = inp.get('fill', 'uniform')
        if fill == 'tokens':
            value = rng.integers(0, inp.get('high', 1000), shape)
        elif fill == 'ones':
            value = np.ones(shape)
        elif fill == 'zeros':
            value = np.zeros(shape)
        else:
            value = rng.uniform(-1.0, 1.0, shape)
        feeds[inp['name']] = np.ascontiguousarray(value.astype(dtype))
    return feeds


def peak_rss_mib():
    """This process's peak resident memory (VmHWM)."""
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith('VmHWM:'):
                return int(line.split()[1]) / 1024.0
    return float('nan')


def save_outputs(path, outputs):
    """All outputs, each in its own dtype (the yardstick counts steps of integer outputs)."""
    np.savez(path, *[np.asarray(o) for o in outputs])


def load_outputs(path):
    with np.load(path) as z:
        return [z[f'arr_{i}'] for i in range(len(z.files))]


def worker(engine, model_path, spec_path, batch, threads, seconds, out_path, config='', spread=False):
    """In a child process: creates the session, times back-to-back runs, writes JSON. spread
    (onnxruntime only): afterwards, once peak memory is taken, also runs the model with every graph
    optimization off, for the yardstick."""
    with open(spec_path) as f:
        spec = json.load(f)
    feeds = make_feeds(spec, batch)
    t0 = time.perf_counter()
    if engine == 'onyx':
        sys.path.insert(0, os.path.join(ROOT, 'backend', 'python'))
        import onyx
        if config:
            so = onyx.SessionOptions()
            so.intra_op_num_threads = threads
            for entry in config.split(','):
                so.add_session_config_entry(*entry.split('=', 1))
            sess = onyx.InferenceSession(model_path, so)
        else:
            sess = onyx.Session(model_path, threads=threads, input_example=feeds)
    else:
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.log_severity_level = 3
        sess = ort.InferenceSession(model_path, so, providers=['CPUExecutionProvider'])
    create_ms = (time.perf_counter() - t0) * 1e3
    t0 = time.perf_counter()
    outputs = sess.run(None, feeds)
    first_ms = (time.perf_counter() - t0) * 1e3
    for _ in range(2):
        sess.run(None, feeds)
    times = []
    start = time.perf_counter()
    while len(times) < 5 or (time.perf_counter() - start < seconds and len(times) < 2000):
        t0 = time.perf_counter()
        sess.run(None, feeds)
        times.append(time.perf_counter() - t0)
    peak = peak_rss_mib()
    save_outputs(out_path + '.npz', outputs)
    names = [o.name for o in sess.get_outputs()] if engine == 'ort' else []
    if spread and engine == 'ort':
        del sess
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        plain = ort.InferenceSession(model_path, so, providers=['CPUExecutionProvider'])
        save_outputs(out_path + '.noopt.npz', plain.run(None, feeds))
        del plain
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.add_session_config_entry('session.qdqisint8allowed', '1')
        int8 = ort.InferenceSession(model_path, so, providers=['CPUExecutionProvider'])
        save_outputs(out_path + '.int8.npz', int8.run(None, feeds))
    with open(out_path, 'w') as f:
        json.dump({'times_ms': [t * 1e3 for t in times], 'create_ms': create_ms,
                   'first_ms': first_ms, 'peak_mib': peak, 'output_names': names}, f)


def measure(engine, model_path, spec_path, batch, threads, seconds, tmp, config='', spread=False):
    out = os.path.join(tmp, f'{engine}.json')
    for stale in (out, out + '.npz', out + '.noopt.npz', out + '.int8.npz'):
        if os.path.exists(stale):
            os.remove(stale)
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    proc = subprocess.run([sys.executable, __file__, '--worker', engine, model_path, spec_path,
                           str(batch), str(threads), str(seconds), out, config or '-',
                           '1' if spread else '0'], env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0 or not os.path.exists(out):
        last = (proc.stderr.strip().splitlines() or ['?'])[-1]
        return {'error': last[:300]}
    with open(out) as f:
        result = json.load(f)
    result['outputs'] = load_outputs(out + '.npz')
    if spread and engine == 'ort':
        result['noopt'] = load_outputs(out + '.noopt.npz')
        result['int8'] = load_outputs(out + '.int8.npz')
    return result


def output_steps(model_path):
    """Graph output name -> the scale of the DequantizeLinear that makes it, where that scale is
    one constant (per-tensor)."""
    import onnx
    from onnx import numpy_helper
    graph = onnx.load(model_path, load_external_data=False).graph
    inits = {t.name: t for t in graph.initializer}
    consts = {n.output[0]: n.attribute[0].t for n in graph.node
              if n.op_type == 'Constant' and n.attribute and n.attribute[0].name == 'value'}
    steps = {}
    outputs = {o.name for o in graph.output}
    for n in graph.node:
        if n.op_type == 'DequantizeLinear' and n.output[0] in outputs and len(n.input) > 1:
            t = inits.get(n.input[1], consts.get(n.input[1]))
            if t is not None:
                scale = numpy_helper.to_array(t)
                if scale.size == 1:
                    steps[n.output[0]] = float(scale.reshape(-1)[0])
    return steps


def output_within(name, a, ref, spread_ref, steps):
    """onyx's output a against one onnxruntime reference: (text, within), as the module
    docstring says."""
    if a.shape != ref.shape:
        return f'shape {a.shape} vs {ref.shape}', False
    if ref.dtype.kind in 'iub':
        n = int(np.max(np.abs(a.astype(np.int64) - ref.astype(np.int64)))) if ref.size else 0
        within = n <= 1
        return f'{n} step{"" if n == 1 else "s"}{"" if within else " OUT"}', within
    a64, r64 = a.astype(np.float64), ref.astype(np.float64)
    diff = float(np.max(np.abs(a64 - r64))) if ref.size else 0.0
    spread = float(np.max(np.abs(spread_ref.astype(np.float64) - r64))) if ref.size else 0.0
    within = diff <= spread or (name in steps and diff <= steps[name] * (1 + 1e-3))
    step = f' ={diff / steps[name]:.1f} st' if name in steps else ''
    return f'{diff:.1e}{step} / {spread:.1e}{"" if within else " OUT"}', within


def yardstick(names, mine, ort_all, ort_none, ort_int8, steps):
    """One entry per output: onyx against onnxruntime, as the module docstring says. Returns
    (text, every output within)."""
    parts, ok = [], True
    for name, a, b, c, d in zip(names, mine, ort_all, ort_none, ort_int8):
        text, within = output_within(name, a, b, c, steps)
        if not np.array_equal(b, d):  # onnxruntime's 8-bit computation differs from its default
            text8, within8 = output_within(name, a, d, c, steps)
            text, within = f'{text}, int8 ort: {text8}', within or within8
        parts.append(f'{name}: {text}')
        ok = ok and within
    return '; '.join(parts), ok


def models(zoo, wanted, exporters):
    for spec_path in sorted(glob.glob(os.path.join(zoo, '*.json'))):
        with open(spec_path) as f:
            spec = json.load(f)
        name = spec.get('name', os.path.basename(spec_path)[:-5])
        if wanted and name not in wanted:
            continue
        for exporter, file in spec.get('files', {}).items():
            path = os.path.join(zoo, file)
            if exporter in exporters and os.path.exists(path):
                yield f'{name}' + ('' if exporter == 'ts' else f'.{exporter}'), path, spec_path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--threads', type=int, default=os.cpu_count())
    ap.add_argument('--batch', type=int, default=0, help='batch size (default: the zoo\'s, 1)')
    ap.add_argument('--seconds', type=float, default=2.0, help='timing budget per engine, model and round')
    ap.add_argument('--rounds', type=int, default=1, help='alternating blocks per engine')
    ap.add_argument('--models', default='', help='comma-separated names (default: all)')
    ap.add_argument('--exporters', default='ts,dynamo')
    ap.add_argument('--zoo', default=os.path.join(ROOT, 'zoo'))
    ap.add_argument('--onyx-config', action='append', default=[], metavar='KEY=VALUE')
    ap.add_argument('--worker', nargs=9, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        engine, path, spec, batch, threads, seconds, out, config, spread = args.worker
        worker(engine, path, spec, int(batch), int(threads), float(seconds), out,
               '' if config == '-' else config, spread == '1')
        return 0
    config = ','.join(args.onyx_config)
    wanted = {m for m in args.models.split(',') if m}
    exporters = set(args.exporters.split(','))
    print(f'onyx vs onnxruntime on {args.zoo}: {args.threads} thread(s), batch {args.batch or "as exported"}, '
          f'{args.rounds} round(s) of ~{args.seconds:g} s per engine; medians'
          + (f'; onyx config {config}' if config else ''))
    header = (f'{"model":<28}{"onyx ms":>9}{"ort ms":>9}{"ratio":>7}{"prep ms":>9}{"ort ms":>8}'
              f'{"onyx MiB":>9}{"ort MiB":>8}{"max|diff|":>10}'
              '  quantized: per output, onyx max|diff| (=steps) / ort spread, or integer steps')
    print(header)
    print('-' * len(header))
    ratios, outside = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name, path, spec in models(args.zoo, wanted, exporters):
            with open(spec) as f:
                quantized = 'quantized' in json.load(f)
            results = {'onyx': [], 'ort': []}
            for r in range(args.rounds):  # ABBA: neither engine always runs first
                for engine in (('onyx', 'ort') if r % 2 == 0 else ('ort', 'onyx')):
                    results[engine].append(measure(engine, path, spec, args.batch, args.threads,
                                                   args.seconds, tmp, config,
                                                   spread=quantized and r == 0))
            failed = [e for e in results if any('error' in r for r in results[e])]
            if failed:
                msgs = '; '.join(f'{e}: {next(r["error"] for r in results[e] if "error" in r)}' for e in failed)
                print(f'{name:<28} failed ({msgs})')
                continue
            a, b = results['onyx'], results['ort']
            med = {e: float(np.median([t for r in results[e] for t in r['times_ms']])) for e in results}
            ratio = med['onyx'] / med['ort']
            ratios.append(ratio)
            out_a, out_b = (x[-1]['outputs'][0].astype(np.float32) for x in (a, b))
            diff = float(np.max(np.abs(out_a - out_b))) if out_a.shape == out_b.shape else float('nan')
            accuracy = ''
            if quantized:
                accuracy, ok = yardstick(b[0]['output_names'], a[0]['outputs'], b[0]['outputs'], b[0]['noopt'],
                                         b[0]['int8'], output_steps(path))
                accuracy = '  ' + accuracy
                if not ok:
                    outside.append(name)
            print(f'{name:<28}{med["onyx"]:>9.2f}{med["ort"]:>9.2f}{ratio:>7.2f}'
                  f'{np.median([r["create_ms"] for r in a]):>9.0f}{np.median([r["create_ms"] for r in b]):>8.0f}'
                  f'{max(r["peak_mib"] for r in a):>9.0f}{max(r["peak_mib"] for r in b):>8.0f}{diff:>10.1e}'
                  f'{accuracy}')
            sys.stdout.flush()
    if ratios:
        print(f'geometric mean ratio onyx/onnxruntime over {len(ratios)} models: '
              f'{float(np.exp(np.mean(np.log(ratios)))):.2f}')
    if outside:
        print(f'outside the accuracy yardstick: {", ".join(outside)}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
