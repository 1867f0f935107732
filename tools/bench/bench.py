#!/usr/bin/env python3
"""onyx against onnxruntime on the light models of the onnx package (AlexNet, DenseNet-121,
Inception v1/v2, ResNet-50, ShuffleNet, SqueezeNet, VGG-19, ZFNet-512), side by side in one run
with the same thread count. The models' ConstantOfShape weights are replaced by random initializers
of the same shapes. Each engine runs each model in its own process, which reports its own peak
resident memory (VmHWM, interpreter and numpy included); both are driven from Python (onyx through
its ctypes package), so interpreter overhead is alike.
Prints median latency, the onyx/onnxruntime ratio (below 1: onyx is faster), peak RSS of each,
and the largest difference between the two engines' outputs. A benchmark, not a test.

  tools/bench/bench.py [--threads N] [--batch B] [--seconds S] [--models resnet50,vgg19]
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, '..', '..'))


def light_dir():
    import onnx
    return os.path.join(os.path.dirname(onnx.__file__), 'backend', 'test', 'data', 'light')


def randomized(path, batch, seed=0):
    """The model with each ConstantOfShape of a constant shape replaced by a random initializer
    (BatchNormalization variances positive), and the batch dim of the inputs set to `batch`."""
    import onnx
    from onnx import numpy_helper as nh
    model = onnx.load(path)
    g = model.graph
    rng = np.random.default_rng(seed)
    inits = {i.name: nh.to_array(i) for i in g.initializer}
    variances = {n.input[4] for n in g.node if n.op_type == 'BatchNormalization' and len(n.input) > 4}
    keep = []
    for node in g.node:
        if node.op_type == 'ConstantOfShape' and node.input[0] in inits:
            shape = tuple(int(d) for d in inits[node.input[0]])
            out = node.output[0]
            if out in variances:
                value = rng.uniform(0.5, 1.5, shape)
            else:
                fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else max(shape[0] if shape else 1, 1)
                value = rng.standard_normal(shape) * np.sqrt(2.0 / max(fan_in, 1))
            g.initializer.append(nh.from_array(value.astype(np.float32), out))
        else:
            keep.append(node)
    del g.node[:]
    g.node.extend(keep)
    used = {name for n in g.node for name in n.input}
    unused = [i for i in g.initializer if i.name not in used]
    for i in unused:
        g.initializer.remove(i)
    # Old models list initializers among the inputs too.
    gone = {i.name for i in unused}
    for inp in [i for i in g.input if i.name in gone]:
        g.input.remove(inp)
    for inp in g.input:
        dims = inp.type.tensor_type.shape.dim
        if inp.name not in inits and dims:
            dims[0].dim_value = batch
    return model


def worker(engine, model_path, threads, seconds, out_path):
    """Runs in a child process: times `engine` on the model and writes JSON to out_path."""
    import time
    if engine == 'onyx':
        sys.path.insert(0, os.path.join(ROOT, 'backend', 'python'))
        import onyx
        sess = onyx.Session(model_path, threads=threads)
        inputs = sess.get_inputs()
        feeds = {i.name: np.random.default_rng(1).random([d if isinstance(d, int) else 1 for d in i.shape],
                                                          np.float32) for i in inputs}
        run = lambda: sess.run(None, feeds)  # noqa: E731
    else:
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.log_severity_level = 3
        sess = ort.InferenceSession(model_path, so, providers=['CPUExecutionProvider'])
        feeds = {i.name: np.random.default_rng(1).random([d if isinstance(d, int) else 1 for d in i.shape],
                                                          np.float32) for i in sess.get_inputs()}
        run = lambda: sess.run(None, feeds)  # noqa: E731
    outputs = run()
    for _ in range(2):
        run()
    times = []
    start = time.perf_counter()
    while len(times) < 5 or (time.perf_counter() - start < seconds and len(times) < 1000):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    np.save(out_path + '.npy', np.asarray(outputs[0], np.float32))
    with open(out_path, 'w') as f:
        json.dump({'median_ms': float(np.median(times)) * 1e3, 'runs': len(times), 'peak_mib': peak_rss_mib()}, f)


def peak_rss_mib():
    """This process's peak resident memory (VmHWM). Not the parent's rusage: Linux carries a
    forked child's pre-exec peak (the parent's memory) over into ru_maxrss."""
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith('VmHWM:'):
                return int(line.split()[1]) / 1024.0
    return float('nan')


def measure(engine, model_path, threads, seconds, tmp):
    out = os.path.join(tmp, f'{engine}.json')
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    proc = subprocess.Popen([sys.executable, __file__, '--worker', engine, model_path, str(threads),
                             str(seconds), out], env=env)
    if proc.wait() != 0 or not os.path.exists(out):
        return None
    with open(out) as f:
        result = json.load(f)
    result['output'] = np.load(out + '.npy')
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--threads', type=int, default=os.cpu_count())
    ap.add_argument('--batch', type=int, default=1)
    ap.add_argument('--seconds', type=float, default=3.0, help='timing budget per engine and model')
    ap.add_argument('--models', default='', help='comma-separated names (default: all)')
    ap.add_argument('--worker', nargs=5, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        engine, path, threads, seconds, out = args.worker
        worker(engine, path, int(threads), float(seconds), out)
        return 0
    import onnx
    wanted = [m for m in args.models.split(',') if m]
    paths = sorted(p for p in glob.glob(os.path.join(light_dir(), 'light_*.onnx')))
    print(f'onyx vs onnxruntime, {args.threads} thread(s), batch {args.batch}, '
          f'~{args.seconds:g} s per engine and model; medians')
    header = f'{"model":<16}{"onyx ms":>10}{"ort ms":>10}{"ratio":>8}{"onyx MiB":>10}{"ort MiB":>10}{"max |diff|":>12}'
    print(header)
    print('-' * len(header))
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in paths:
            name = os.path.basename(path)[len('light_'):-len('.onnx')]
            if wanted and name not in wanted:
                continue
            model_path = os.path.join(tmp, name + '.onnx')
            onnx.save(randomized(path, args.batch), model_path)
            a = measure('onyx', model_path, args.threads, args.seconds, tmp)
            b = measure('ort', model_path, args.threads, args.seconds, tmp)
            if a is None or b is None:
                cells = ['failed' if r is None else '%.2f' % r['median_ms'] for r in (a, b)]
                print(f'{name:<16}{cells[0]:>10}{cells[1]:>10}')
                continue
            ratio = a['median_ms'] / b['median_ms']
            ratios.append(ratio)
            diff = float(np.max(np.abs(a['output'] - b['output']))) if a['output'].shape == b['output'].shape else float('nan')
            print(f'{name:<16}{a["median_ms"]:>10.2f}{b["median_ms"]:>10.2f}{ratio:>8.2f}'
                  f'{a["peak_mib"]:>10.0f}{b["peak_mib"]:>10.0f}{diff:>12.2e}')
    if ratios:
        print(f'geometric mean ratio onyx/onnxruntime: {float(np.exp(np.mean(np.log(ratios)))):.2f}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
