#!/usr/bin/env python3
"""Each quantized zoo model's QDQ form against its QOperator twin, on onyx alone (issue 32: "a
QDQ model is never slower than its QOperator twin"). tools/zoo/quantize.py writes both from the
same calibration (.qop / .qdq per tensor, .qop_pc / .qdq_pc per output channel); after onyx's
QDQ rules the QDQ form should run the same 8-bit steps, or fewer.

For every pair: `onyx profile` of each, alternated --rounds times (the order flipped every
round, each in its own process), and
  - the steps one run takes that differ between the two, as (op, type of its first input) counts:
    a unit left in float shows as a float step the twin has not;
  - per op, the sum over its steps of each step's shortest time over all runs, and that sum over
    all steps: a measure a loaded machine moves much less than a run's wall time, since one
    quiet moment per step is enough.
A benchmark, not a test (tests/python/test_qdq_twins.py holds the property on small networks).

  tools/bench/qdq_twins.py [--onyx build/onyx] [--models resnet18,mobilenet_v2] [--rounds 3]
                           [--runs 10] [--threads 2] [--zoo zoo]
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, '..', '..'))
PAIRS = (('qop', 'qdq'), ('qop_pc', 'qdq_pc'))


def profile(onyx, path, runs, threads, trace):
    """The steps of every profiled run: lists of trace events, one list per run."""
    subprocess.run([onyx, 'profile', '-t', str(threads), '-n', str(runs), '-w', '3',
                    '--trace', trace, path], check=True, capture_output=True)
    with open(trace) as f:
        events = json.load(f)
    events = events['traceEvents'] if isinstance(events, dict) else events
    out, steps = [], []
    for e in events:
        if e.get('cat') == 'Node':
            steps.append(e)
        elif e.get('name') == 'model_run':
            out.append(steps)
            steps = []
    return out


def step_kind(e):
    return e['args']['op_name'], next(iter(e['args']['input_type_shape'][0]), '?')


def compare(onyx, a, b, rounds, runs, threads, tmp):
    shortest = {a: {}, b: {}}  # path -> step index -> (shortest time in us, event)
    for r in range(rounds):
        for path in ((a, b) if r % 2 == 0 else (b, a)):
            for steps in profile(onyx, path, runs, threads, os.path.join(tmp, 'trace.json')):
                for k, e in enumerate(steps):
                    if k not in shortest[path] or e['dur'] < shortest[path][k][0]:
                        shortest[path][k] = (e['dur'], e)
    kinds = {p: collections.Counter(step_kind(e) for _, e in s.values()) for p, s in shortest.items()}
    only_a, only_b = kinds[a] - kinds[b], kinds[b] - kinds[a]
    print(f'  steps: {sum(kinds[a].values())} / {sum(kinds[b].values())}')
    for name, diff in ((os.path.basename(a), only_a), (os.path.basename(b), only_b)):
        if diff:
            print(f'    only in {name}: ' + ', '.join(f'{op} on {t} x{n}' for (op, t), n in sorted(diff.items())))
    per_op = collections.defaultdict(lambda: [0, 0])
    for i, p in enumerate((a, b)):
        for d, e in shortest[p].values():
            per_op[e['args']['op_name']][i] += d
    for op, (x, y) in sorted(per_op.items(), key=lambda t: -max(t[1])):
        print(f'    {op:28s} {x / 1e3:9.3f} {y / 1e3:9.3f} ms')
    ta, tb = (sum(d for d, _ in shortest[p].values()) for p in (a, b))
    print(f'  sum of steps\' shortest times: {ta / 1e3:.3f} / {tb / 1e3:.3f} ms, ratio {tb / ta:.3f}')
    return tb / ta


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--onyx', default=os.path.join(ROOT, 'build', 'onyx'))
    ap.add_argument('--zoo', default=os.path.join(ROOT, 'zoo'))
    ap.add_argument('--models', default='')
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--runs', type=int, default=10)
    ap.add_argument('--threads', type=int, default=2)
    args = ap.parse_args()
    models = [m for m in args.models.split(',') if m] or sorted(
        {f[:-len('.qdq.onnx')] for f in os.listdir(args.zoo) if f.endswith('.qdq.onnx')})
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        for m in models:
            for qop, qdq in PAIRS:
                a, b = (os.path.join(args.zoo, f'{m}.{v}.onnx') for v in (qop, qdq))
                if not (os.path.exists(a) and os.path.exists(b)):
                    continue
                print(f'{m}: {qop} / {qdq}, {args.threads} threads')
                ratios.append((f'{m}.{qdq}', compare(args.onyx, a, b, args.rounds, args.runs,
                                                     args.threads, tmp)))
    print('QDQ / QOperator, sums of steps\' shortest times:')
    for name, r in ratios:
        print(f'  {name:28s} {r:.3f}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
