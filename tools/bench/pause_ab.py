#!/usr/bin/env python3
"""Two or more builds of onyx (or onnxruntime) on one zoo model, each in a process of its own, all
alive at once and taking turns in blocks of requests that each follow a fixed pause; the block
order reverses every other block. For the tail after pauses that a change of the thread pool
aims at: p50, p90, p99, p99.5, the slowest request, the requests over 1.5x the median, the share
during which the calling thread was preempted (its involuntary context switches: another task
took its CPU), and the share during which only other threads of the process were (a worker). traffic_bench.py measures onyx against onnxruntime over every load; this
compares builds at one pause in a minute or two. A benchmark, not a test: run it detached
(nohup, output to a file) on an otherwise idle machine.

  tools/bench/pause_ab.py zoo/mobilenet_v3_small.onnx NAME=onyx:LIB.so NAME=ort ...
      [--gap-ms 10] [--blocks 16] [--requests 200] [--threads 2]
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from zoo_bench import ROOT, make_feeds  # noqa: E402

RUSAGE_THREAD = getattr(resource, 'RUSAGE_THREAD', resource.RUSAGE_SELF)


def open_session(kind, lib, model, threads):
    if kind == 'onyx':
        os.environ['ONYX_LIB'] = lib
        sys.path.insert(0, os.path.join(ROOT, 'backend', 'python'))
        import onyx
        so = onyx.SessionOptions()
        so.intra_op_num_threads = threads
        return onyx.InferenceSession(model, so)
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    return ort.InferenceSession(model, so, providers=['CPUExecutionProvider'])


def worker(kind, lib, model, threads):
    """Serves blocks asked on stdin ("N GAP_MS"), answering each with its latencies (ms), whether
    the caller was preempted and whether another thread of the process was, one JSON line."""
    sess = open_session(kind, lib, model, threads)
    with open(model[:-len('.onnx')] + '.json') as f:
        feeds = make_feeds(json.load(f), 1)
    for _ in range(20):
        sess.run(None, feeds)
    for line in sys.stdin:
        n, gap_ms = line.split()
        lat, pre, others = [], [], []
        for _ in range(int(n)):
            time.sleep(float(gap_ms) / 1e3)
            c0 = resource.getrusage(RUSAGE_THREAD).ru_nivcsw
            p0 = resource.getrusage(resource.RUSAGE_SELF).ru_nivcsw
            t0 = time.perf_counter()
            sess.run(None, feeds)
            lat.append((time.perf_counter() - t0) * 1e3)
            caller = resource.getrusage(RUSAGE_THREAD).ru_nivcsw - c0
            process = resource.getrusage(resource.RUSAGE_SELF).ru_nivcsw - p0
            pre.append(caller > 0)
            others.append(process > caller)
        print(json.dumps({'lat': lat, 'pre': pre, 'others': others}), flush=True)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == '--worker':
        kind, lib, model, threads = sys.argv[2:6]
        worker(kind, lib, model, int(threads))
        return
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('model')
    ap.add_argument('engines', nargs='+', help='NAME=onyx:LIB.so or NAME=ort')
    ap.add_argument('--gap-ms', type=float, default=10)
    ap.add_argument('--blocks', type=int, default=16)
    ap.add_argument('--requests', type=int, default=200, help='requests per block')
    ap.add_argument('--threads', type=int, default=2)
    args = ap.parse_args()
    procs = {}
    for spec in args.engines:
        name, _, what = spec.partition('=')
        kind, _, lib = what.partition(':')
        if kind not in ('onyx', 'ort') or (kind == 'onyx' and not lib):
            ap.error(f'{spec}: expected NAME=onyx:LIB.so or NAME=ort')
        procs[name] = subprocess.Popen(
            [sys.executable, __file__, '--worker', kind, os.path.abspath(lib) if lib else '-',
             args.model, str(args.threads)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    got = {name: ([], [], []) for name in procs}
    for block in range(args.blocks):
        order = list(procs) if block % 2 == 0 else list(procs)[::-1]
        for name in order:
            p = procs[name]
            p.stdin.write(f'{args.requests} {args.gap_ms}\n')
            p.stdin.flush()
            line = p.stdout.readline()
            if not line:
                sys.exit(f'{name}: its worker ended')
            r = json.loads(line)
            for k, key in enumerate(('lat', 'pre', 'others')):
                got[name][k].extend(r[key])
    for p in procs.values():
        p.stdin.close()
        p.wait()
    print(f'{args.model}, a pause of {args.gap_ms:g} ms before each request, {args.threads} threads, '
          f'{args.blocks} alternated blocks of {args.requests}; ms')
    print(f'{"engine":10s} {"n":>5s} {"p50":>7s} {"p90":>7s} {"p99":>7s} {"p99.5":>7s} {"max":>7s} '
          f'{">1.5x p50":>9s} {"pre %":>6s} {"worker pre %":>12s} {"of the slow":>11s}')
    for name, (lat, pre, others) in got.items():
        lat, pre, others = np.array(lat), np.array(pre), np.array(others) & ~np.array(pre)
        p50 = np.percentile(lat, 50)
        slow = lat > 1.5 * p50
        q = [np.percentile(lat, x) for x in (50, 90, 99, 99.5)]
        # of the slow requests: caller preempted / only a worker preempted / neither
        split = f'{int((slow & pre).sum())}/{int((slow & others).sum())}/{int((slow & ~pre & ~others).sum())}'
        print(f'{name:10s} {len(lat):5d} ' + ' '.join(f'{v:7.3f}' for v in q) +
              f' {lat.max():7.2f} {int(slow.sum()):9d} {100 * pre.mean():6.2f} {100 * others.mean():12.2f} {split:>11s}')
    print('of the slow: requests over 1.5x p50 whose caller was preempted / only a worker / neither')


if __name__ == '__main__':
    main()
