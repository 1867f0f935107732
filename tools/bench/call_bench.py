#!/usr/bin/env python3
"""The cost of one Python call, onyx against onnxruntime: `InferenceSession.run` on small
scikit-learn / LightGBM models (ZipMap included), where the run itself is microseconds and the
Python layer around it is most of the time (issue 35: onyx's call must cost no more than
onnxruntime's).

The models are trained and converted with fixed seeds (skl2onnx, onnxmltools) into an ignored
folder (build/call_bench/). Each engine runs in its own long-lived process with default session
options (what `import onyx as onnxruntime` gives a user); the driver asks them for blocks of calls
in turn (onyx, onnxruntime, onnxruntime, onyx, ...) so that drift on a shared machine falls on both,
and reports the median of all calls of each engine and the ratio onyx / onnxruntime (below 1: onyx
costs less). Beside the wall time, each block's CPU time per call: the process's (all its threads,
workers that spin between calls included: both engines spin by default) and the calling thread's
(steadier than the wall time on a loaded machine, but blind to work handed to other threads); each
the median over blocks. Both engines' outputs are compared before timing. A benchmark, not a test.

  tools/bench/call_bench.py [--rounds R] [--calls N] [--batch B] [--models rf,pipeline,...]
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, '..', '..'))
OUT_DIR = os.path.join(ROOT, 'build', 'call_bench')
SEED = 0


# ---- models (built once, in the driver) ----------------------------------------------------------

def _data(rows=300, seed=SEED):
    """A 3-class problem of 4 float features, the last one a small-integer category."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, 4)).astype(np.float32)
    x[:, 3] = rng.integers(0, 4, rows)
    y = ((x[:, 0] + 0.5 * x[:, 1] > 0).astype(np.int64) + (x[:, 3] > 1.5)).astype(np.int64)
    return x, y


def _skl(model, x):
    from skl2onnx import to_onnx
    return to_onnx(model, x[:1], target_opset={'': 17, 'ai.onnx.ml': 3})


def build_rf(x, y):
    from sklearn.ensemble import RandomForestClassifier
    return _skl(RandomForestClassifier(n_estimators=10, max_depth=6, random_state=SEED).fit(x, y), x)


def build_logreg(x, y):
    from sklearn.linear_model import LogisticRegression
    return _skl(LogisticRegression(max_iter=500).fit(x, y), x)


def build_pipeline(x, y):
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler
    pre = ColumnTransformer([('num', StandardScaler(), [0, 1, 2]),
                             ('cat', OneHotEncoder(handle_unknown='ignore'), [3])])
    pipe = Pipeline([('pre', pre), ('clf', LogisticRegression(max_iter=500))]).fit(x, y)
    return _skl(pipe, x)


def build_lightgbm(x, y):
    import lightgbm
    from onnxmltools import convert_lightgbm
    from onnxmltools.convert.common.data_types import FloatTensorType
    clf = lightgbm.LGBMClassifier(n_estimators=20, num_leaves=15, random_state=SEED, verbose=-1,
                                  deterministic=True, force_row_wise=True).fit(x, y)
    return convert_lightgbm(clf, initial_types=[('input', FloatTensorType([None, 4]))],
                            target_opset=15, zipmap=True)


BUILDERS = {'rf': build_rf, 'pipeline': build_pipeline, 'logreg': build_logreg, 'lightgbm': build_lightgbm}


def build_models(names):
    os.makedirs(OUT_DIR, exist_ok=True)
    x, y = _data()
    paths = {}
    for name in names:
        path = os.path.join(OUT_DIR, f'{name}.onnx')
        if not os.path.exists(path):
            try:
                model = BUILDERS[name](x, y)
            except ImportError as e:
                print(f'call_bench: {name} skipped ({e})')
                continue
            with open(path, 'wb') as f:
                f.write(model.SerializeToString())
        paths[name] = path
    return paths


# ---- worker (one per engine) ---------------------------------------------------------------------

def worker(engine):
    """Reads JSON commands from stdin, one a line: {"load": {name: path}, "batch": B} loads the
    sessions and answers their outputs; {"time": name, "calls": N} answers the N calls' times (ns)
    and the block's process and calling-thread CPU times (ns)."""
    if engine == 'onyx':
        sys.path.insert(0, os.path.join(ROOT, 'backend', 'python'))
        import onyx as rt
    else:
        import onnxruntime as rt
    x, _ = _data(seed=SEED + 1)
    sessions, feeds = {}, {}
    for line in sys.stdin:
        cmd = json.loads(line)
        if 'load' in cmd:
            answer = {}
            for name, path in cmd['load'].items():
                sess = rt.InferenceSession(path, providers=['CPUExecutionProvider'])
                feed = {sess.get_inputs()[0].name: x[:cmd['batch']].copy()}
                sessions[name], feeds[name] = sess, feed
                outs = sess.run(None, feed)
                answer[name] = [o.tolist() if isinstance(o, np.ndarray) else o for o in outs]
            print(json.dumps(answer), flush=True)
        elif 'time' in cmd:
            run, feed = sessions[cmd['time']].run, feeds[cmd['time']]
            clock = time.perf_counter_ns
            times = []
            cpu0, thread0 = time.process_time_ns(), time.thread_time_ns()
            for _ in range(cmd['calls']):
                t0 = clock()
                run(None, feed)
                times.append(clock() - t0)
            cpu, thread = time.process_time_ns() - cpu0, time.thread_time_ns() - thread0
            print(json.dumps({'times': times, 'cpu': cpu, 'thread_cpu': thread}), flush=True)


class Worker:
    def __init__(self, engine, lib):
        env = dict(os.environ)
        if lib:
            env['ONYX_LIB'] = lib
        self.engine = engine
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), '--worker', engine],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)

    def ask(self, cmd):
        self.proc.stdin.write(json.dumps(cmd) + '\n')
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f'call_bench: the {self.engine} worker died')
        return json.loads(line)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def _same(a, b):
    """Outputs agree: labels equal, probabilities within 1e-4 (dicts compared key by key)."""
    if isinstance(a, dict):
        return isinstance(b, dict) and set(map(str, a)) == set(map(str, b)) and \
            all(abs(a[k] - b[k]) <= 1e-4 for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_same(p, q) for p, q in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return abs(a - b) <= 1e-4
    return a == b


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--worker', help=argparse.SUPPRESS)
    ap.add_argument('--rounds', type=int, default=20, help='blocks per engine and model (default 20)')
    ap.add_argument('--calls', type=int, default=200, help='calls per block (default 200)')
    ap.add_argument('--batch', type=int, default=1, help='rows per call (default 1)')
    ap.add_argument('--models', default=','.join(BUILDERS), help='comma-separated: ' + ','.join(BUILDERS))
    ap.add_argument('--lib', help='libonyx.so to load (default: $ONYX_LIB, else the build folder)')
    ap.add_argument('--json', help='also write the results here')
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker)

    paths = build_models([m for m in args.models.split(',') if m])
    workers = {e: Worker(e, args.lib) for e in ('onyx', 'onnxruntime')}
    try:
        loaded = {e: w.ask({'load': paths, 'batch': args.batch}) for e, w in workers.items()}
        for name in paths:
            if not _same(loaded['onnxruntime'][name], loaded['onyx'][name]):
                raise SystemExit(f'call_bench: {name}: the engines disagree:\n  onnxruntime '
                                 f'{loaded["onnxruntime"][name]}\n  onyx        {loaded["onyx"][name]}')
        results = {}
        print(f'{"model":10} {"onnxruntime ms":>15} {"onyx ms":>9} {"onyx/ort":>9}   '
              f'{"process CPU ms ort / onyx (ratio)":>34}   {"caller CPU ms ort / onyx (ratio)":>33}   '
              f'(batch {args.batch}; median of {args.rounds} x {args.calls} calls each)')
        for name in paths:
            times = {'onyx': [], 'onnxruntime': []}
            cpu = {'onyx': [], 'onnxruntime': []}        # per block: ms per call
            thread = {'onyx': [], 'onnxruntime': []}
            for e, w in workers.items():   # warm-up
                w.ask({'time': name, 'calls': args.calls})
            order = ['onyx', 'onnxruntime']
            for r in range(args.rounds):
                for e in (order if r % 2 == 0 else order[::-1]):
                    block = workers[e].ask({'time': name, 'calls': args.calls})
                    times[e] += block['times']
                    cpu[e].append(block['cpu'] / args.calls / 1e6)
                    thread[e].append(block['thread_cpu'] / args.calls / 1e6)
            med = {e: float(np.median(t)) / 1e6 for e, t in times.items()}
            med_cpu = {e: float(np.median(c)) for e, c in cpu.items()}
            med_thread = {e: float(np.median(c)) for e, c in thread.items()}
            ratio = med['onyx'] / med['onnxruntime']
            cpu_ratio = med_cpu['onyx'] / med_cpu['onnxruntime']
            thread_ratio = med_thread['onyx'] / med_thread['onnxruntime']
            results[name] = {'onnxruntime_ms': med['onnxruntime'], 'onyx_ms': med['onyx'], 'ratio': ratio,
                             'onnxruntime_cpu_ms': med_cpu['onnxruntime'], 'onyx_cpu_ms': med_cpu['onyx'],
                             'cpu_ratio': cpu_ratio, 'onnxruntime_caller_cpu_ms': med_thread['onnxruntime'],
                             'onyx_caller_cpu_ms': med_thread['onyx'], 'caller_cpu_ratio': thread_ratio}
            print(f'{name:10} {med["onnxruntime"]:15.4f} {med["onyx"]:9.4f} {ratio:9.2f}   '
                  f'{med_cpu["onnxruntime"]:14.4f} / {med_cpu["onyx"]:.4f} ({cpu_ratio:.2f})   '
                  f'{med_thread["onnxruntime"]:13.4f} / {med_thread["onyx"]:.4f} ({thread_ratio:.2f})',
                  flush=True)
        if args.json:
            with open(args.json, 'w') as f:
                json.dump(results, f, indent=1)
    finally:
        for w in workers.values():
            w.close()


if __name__ == '__main__':
    main()
