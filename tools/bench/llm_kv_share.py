#!/usr/bin/env python3
"""Decode with the KV cache carried from present to past (each step's present a new array) against
the cache bound in place (past and present one buffer of the maximum length, through io_binding:
onyx_rep_run_into), both on onyx in one process, their blocks of steps alternated, medians of wall
and CPU time per token. CPU time (process_time, all threads) moves less than wall time when the
machine is shared. A benchmark, not a test.

  tools/bench/llm_kv_share.py MODEL_DIR [--context 512] [--decode 128] [--block 16] [--threads 2]
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import llm_bench  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('model')
    ap.add_argument('--context', type=int, default=512)
    ap.add_argument('--decode', type=int, default=128)
    ap.add_argument('--block', type=int, default=16)
    ap.add_argument('--threads', type=int, default=2)
    a = ap.parse_args()
    loops = {share: llm_bench.Loop('onyx', a.model, a.threads, share=share) for share in (False, True)}
    tokens = {}
    for share, loop in loops.items():
        loop.start(a.context + a.decode + 1)
        tokens[share] = loop.step(llm_bench.prompt_ids(a.context, loop.vocab))
    times = {share: ([], []) for share in loops}
    for b in range(a.decode // a.block):
        for share in (False, True) if b % 2 == 0 else (True, False):
            wall, cpu = time.perf_counter(), time.process_time()
            for _ in range(a.block):
                tokens[share] = loops[share].step(np.array([[tokens[share]]], np.int64))
            times[share][0].append((time.perf_counter() - wall) * 1000 / a.block)
            times[share][1].append((time.process_time() - cpu) * 1000 / a.block)
    print(f'context {a.context}, {a.decode} decode steps in blocks of {a.block}, load average '
          f'{os.getloadavg()[0]:.2f}')
    for share, (wall, cpu) in times.items():
        print(f"{'in place' if share else 'carried':9} wall {np.median(wall):7.1f} ms/token   "
              f'cpu {np.median(cpu):7.1f} ms/token')
    assert tokens[False] == tokens[True], 'the two caches gave different tokens'


if __name__ == '__main__':
    main()
