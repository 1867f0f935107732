#!/usr/bin/env python3
"""onyx against onnxruntime on one model, op by op: each engine's own profile (enable_profiling,
the same Chrome-trace events in both) summed per op type, and each engine's latency and process
CPU time per run. A benchmark, not a test.

  tools/bench/op_compare.py MODEL [--threads N] [--runs R] [--rounds K] [--nodes K] [--paired K]

Each engine runs in a process of its own, K rounds alternated (each engine first in every other
round); per round a timed block of R runs without profiling (wall median, and the process's user +
system CPU time over the block divided by R), then R profiled runs in a second session. The table
gives medians over the rounds. On a machine shared with other work the wall times move with the
load; the CPU time per run at --threads 1 moves far less (it counts only the time the engine ran),
which makes it the figure to compare kernels by there. At more threads it also counts the time
the engines' workers spin waiting for work. Inputs: uniform [-1, 1] floats with a fixed seed,
every symbolic dim taken as --free-dim (default 1; or per name: --free-dim batch=1,sequence=12, the
unnamed ones 1); integer inputs (token ids, masks) all ones.

--paired K lists the K nodes where onyx loses most, node by node, by each node's shortest profiled
run (over all runs and rounds: a minimum moves little with the load at 2 threads, where medians
move with every preemption), and each engine's shortest run time outside its nodes (the run's
profiled time less its nodes': dispatch between nodes, and each profiler's own cost, which for
onnxruntime is a few microseconds a node, so its per-node times read a little long).
"""
import argparse
import collections
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np


def parse_free_dim(text):
    """--free-dim's value: one int for every symbolic dim, or NAME=N pairs (the others 1)."""
    if '=' not in str(text):
        return int(text)
    return {k: int(v) for k, v in (pair.split('=') for pair in text.split(','))}


def feeds_for(sess, free_dim):
    feeds = {}
    for k, inp in enumerate(sess.get_inputs()):
        shape = [d if isinstance(d, int) else free_dim.get(d, 1) if isinstance(free_dim, dict)
                 else free_dim for d in inp.shape]
        if 'int' in inp.type:  # token ids, masks, segment ids: ones are valid for all three
            feeds[inp.name] = np.ones(shape, np.int64 if 'int64' in inp.type else np.int32)
            continue
        rng = np.random.default_rng(1000 + k)
        feeds[inp.name] = rng.uniform(-1.0, 1.0, shape).astype(np.float32)
    return feeds


def open_session(engine, model, threads, profile_prefix=None):
    if engine == 'onyx':
        import onyx as rt
    else:
        import onnxruntime as rt
    so = rt.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    if profile_prefix:
        so.enable_profiling = True
        so.profile_file_prefix = profile_prefix
    if engine == 'onyx':
        return rt.InferenceSession(model, so)
    return rt.InferenceSession(model, so, providers=['CPUExecutionProvider'])


def profile_events(path):
    """Every event of a profile: a JSON list, or one event per line."""
    with open(path) as f:
        text = f.read()
    try:
        return json.loads(text)
    except json.JSONDecodeError:  # one event per line
        return [json.loads(line.strip().rstrip(',')) for line in text.splitlines()
                if line.strip().startswith('{')]


def node_events(path):
    """The node events ("cat": "Node", "<node>_kernel_time") of a profile, in order."""
    return [e for e in profile_events(path) if e.get('cat') == 'Node' and 'dur' in e and
            e.get('name', '').endswith('_kernel_time')]


def run_events(path):
    """The whole-run events ("cat": "Session", "model_run") of a profile, in order."""
    return [e for e in profile_events(path)
            if e.get('cat') == 'Session' and e.get('name') == 'model_run' and 'dur' in e]


def worker(engine, model, threads, runs, out, free_dim):
    sess = open_session(engine, model, threads)
    feeds = feeds_for(sess, free_dim)
    for _ in range(5):
        sess.run(None, feeds)
    walls = []
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    for _ in range(runs):
        t0 = time.perf_counter()
        sess.run(None, feeds)
        walls.append(time.perf_counter() - t0)
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) / runs
    del sess
    warm = 5
    prof = open_session(engine, model, threads, os.path.join(os.path.dirname(out), engine + '_prof'))
    for _ in range(warm + runs):
        prof.run(None, feeds)
    path = prof.end_profiling()
    events = node_events(path)
    per_run = len(events) // (warm + runs)  # the warm-up runs' events come first
    ops, nodes, calls = collections.defaultdict(float), collections.defaultdict(float), collections.Counter()
    node_min, order = {}, []
    timed = events[len(events) - per_run * runs:]
    for e in timed:
        op = e.get('args', {}).get('op_name', '?')
        ops[op] += e['dur'] / 1e3 / runs
        calls[op] += 1
        nodes[f"{e['name'][:-len('_kernel_time')]} ({op})"] += e['dur'] / 1e3 / runs
        # onnxruntime names a node's events "<node>_token_<k>"; the node's name is the rest
        name = re.sub(r'_token_\d+$', '', e['name'][:-len('_kernel_time')])
        if name not in node_min:
            order.append(name)
        node_min[name] = min(node_min.get(name, e['dur'] / 1e3), e['dur'] / 1e3)
    outside = [r['dur'] - sum(n['dur'] for n in timed[i * per_run:(i + 1) * per_run])
               for i, r in enumerate(run_events(path)[-runs:])]
    os.remove(path)
    with open(out, 'w') as f:
        json.dump({'wall_ms': statistics.median(walls) * 1e3, 'cpu_ms': cpu * 1e3, 'ops': ops,
                   'calls': {k: v // runs for k, v in calls.items()}, 'nodes': nodes,
                   'node_min': node_min, 'order': order,
                   'outside_ms': min(outside) / 1e3 if outside else float('nan')}, f)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('model')
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--runs', type=int, default=30)
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--nodes', type=int, default=0, help='also list the K slowest nodes of each engine')
    ap.add_argument('--paired', type=int, default=0,
                    help='also list the K nodes where onyx loses most, by each node\'s shortest run')
    ap.add_argument('--free-dim', default='1',
                    help='the value of every symbolic dim (a sequence length), or NAME=N,... per dim')
    ap.add_argument('--worker', nargs=3, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        worker(a.worker[0], a.model, a.threads, int(a.worker[1]), a.worker[2],
               parse_free_dim(a.free_dim))
        return
    parse_free_dim(a.free_dim)   # a malformed value fails here, not in both workers
    got = {'onyx': [], 'ort': []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(a.rounds):
            for engine in (('onyx', 'ort') if r % 2 == 0 else ('ort', 'onyx')):
                out = os.path.join(tmp, engine + '.json')
                proc = subprocess.run([sys.executable, __file__, a.model, '--threads', str(a.threads),
                                       '--free-dim', a.free_dim, '--worker', engine, str(a.runs), out],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                if proc.returncode != 0:
                    sys.exit(f'{engine}: ' + (proc.stderr.strip().splitlines() or ['?'])[-1])
                with open(out) as f:
                    got[engine].append(json.load(f))

    def med(engine, get):
        return statistics.median(get(d) for d in got[engine])

    print(f'{os.path.basename(a.model)}: {a.threads} thread(s), {a.rounds} alternated rounds of '
          f'{a.runs} runs, medians over rounds; load average {os.getloadavg()[0]:.1f}')
    for what in ('wall_ms', 'cpu_ms'):
        x, y = med('onyx', lambda d: d[what]), med('ort', lambda d: d[what])
        print(f'  {what:8s} onyx {x:8.3f}  onnxruntime {y:8.3f}  ratio {x / y:.3f}')
    ops = set().union(*(d['ops'] for e in got for d in got[e]))
    rows = [(op, med('onyx', lambda d: d['ops'].get(op, 0.0)), med('ort', lambda d: d['ops'].get(op, 0.0)),
             got['onyx'][0]['calls'].get(op, 0), got['ort'][0]['calls'].get(op, 0)) for op in ops]
    print(f"\n  {'op (profiled, ms per run)':32s} {'onyx':>9s} {'calls':>5s} {'onnxruntime':>11s} {'calls':>5s}")
    for op, x, y, cx, cy in sorted(rows, key=lambda r: -max(r[1], r[2])):
        print(f'  {op:32s} {x:9.3f} {cx:5d} {y:11.3f} {cy:5d}')
    for engine in ('onyx', 'ort') if a.nodes else ():
        names = set().union(*(d['nodes'] for d in got[engine]))
        times = sorted(((med(engine, lambda d: d['nodes'].get(n, 0.0)), n) for n in names), reverse=True)
        print(f'\n  {engine}: slowest nodes')
        for t, n in times[:a.nodes]:
            print(f'  {t:9.3f}  {n}')
    if a.paired:
        print_paired(got, a.paired)


def print_paired(got, k):
    """Node by node, each engine's shortest run of it over every round, the K where onyx loses most."""
    def shortest(engine):
        best = {}
        for d in got[engine]:
            for n, t in d['node_min'].items():
                best[n] = min(best.get(n, t), t)
        return best
    x, y = shortest('onyx'), shortest('ort')
    for engine in ('onyx', 'ort'):
        print(f"\n  {engine}: shortest run outside its nodes {min(d['outside_ms'] for d in got[engine]):.3f} ms"
              f"; sum of its nodes' shortest runs {sum(shortest(engine).values()):.3f} ms")
    rows = sorted(((x[n] - y.get(n, 0.0), n) for n in got['onyx'][0]['order']), reverse=True)
    print(f"\n  {'node (shortest run, ms)':60s} {'onyx':>8s} {'onnxruntime':>11s} {'onyx - ort':>10s}")
    for diff, n in rows[:k]:
        print(f'  {n[-60:]:60s} {x[n]:8.3f} {y.get(n, 0.0):11.3f} {diff:+10.3f}')


if __name__ == '__main__':
    main()
