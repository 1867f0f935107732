#!/usr/bin/env python3
"""What the bfloat16 opt-in (session config optimization.bfloat16=1: float Conv, MatMul and Gemm
computed in bfloat16) costs in accuracy on the model zoo: onyx in bfloat16 against onyx in
float32 on the same inputs, over several input draws (fixed seeds). Prints, per model: top-1
agreement (the argmax of output 0 over its last axis, per row: classifiers), the largest error
relative to the output's largest magnitude, and the mean cosine similarity of the outputs.
Speed is measured side by side with onnxruntime by tools/bench/zoo_bench.py --onyx-config.

  tools/bench/bf16_accuracy.py [--models resnet50,bert_base,vit_b_16] [--draws 16] [--zoo DIR]
"""
import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, '..', '..'))
sys.path.insert(0, os.path.join(ROOT, 'backend', 'python'))
sys.path.insert(0, HERE)

import onyx  # noqa: E402
from zoo_bench import make_feeds  # noqa: E402


def session(path, bf16, threads):
    so = onyx.SessionOptions()
    so.intra_op_num_threads = threads
    so.add_session_config_entry('optimization.bfloat16', '1' if bf16 else '0')
    return onyx.InferenceSession(path, so)


def draw(spec, k):
    """The zoo's inputs with another seed per draw (token ids stay token ids)."""
    feeds = make_feeds(spec, 0)
    rng = np.random.default_rng(5000 + k)
    for inp in spec['inputs']:
        v = feeds[inp['name']]
        if inp.get('fill', 'uniform') == 'uniform':
            feeds[inp['name']] = rng.uniform(-1.0, 1.0, v.shape).astype(v.dtype)
        elif inp.get('fill') == 'tokens':
            feeds[inp['name']] = rng.integers(0, inp.get('high', 1000), v.shape).astype(v.dtype)
    return feeds


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--models', default='resnet50,bert_base,vit_b_16')
    ap.add_argument('--draws', type=int, default=16)
    ap.add_argument('--threads', type=int, default=os.cpu_count())
    ap.add_argument('--zoo', default=os.path.join(ROOT, 'zoo'))
    args = ap.parse_args()
    print(f'onyx bfloat16 against onyx float32, {args.draws} input draws per model')
    print(f'{"model":<24}{"top-1 agree":>12}{"max rel err":>13}{"mean cosine":>13}')
    for name in [m for m in args.models.split(',') if m]:
        with open(os.path.join(args.zoo, name + '.json')) as f:
            spec = json.load(f)
        path = os.path.join(args.zoo, spec['files']['ts'])
        ref, low = session(path, False, args.threads), session(path, True, args.threads)
        agree = rows = 0
        rel, cos = 0.0, []
        for k in range(args.draws):
            feeds = draw(spec, k)
            a = np.asarray(ref.run(None, feeds)[0], np.float64)
            b = np.asarray(low.run(None, feeds)[0], np.float64)
            rel = max(rel, float(np.abs(a - b).max() / max(np.abs(a).max(), 1e-30)))
            fa, fb = a.reshape(-1), b.reshape(-1)
            cos.append(float(fa @ fb / max(np.linalg.norm(fa) * np.linalg.norm(fb), 1e-30)))
            ra, rb = a.reshape(-1, a.shape[-1]), b.reshape(-1, b.shape[-1])
            agree += int((ra.argmax(-1) == rb.argmax(-1)).sum())
            rows += ra.shape[0]
        top1 = f'{agree}/{rows}' if spec.get('family') != 'transformer' else 'n/a'
        print(f'{name:<24}{top1:>12}{rel:>13.2e}{float(np.mean(cos)):>13.6f}')
        sys.stdout.flush()
    return 0


if __name__ == '__main__':
    sys.exit(main())
