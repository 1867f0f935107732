"""Microbenchmark of one MatMulNBits at decode (M = 1) the size of Qwen2-0.5B's layers: K = 896 with
N = 4864 (the MLP) and N = 151936 (the lm_head), 4-bit codes in blocks of 32, at accuracy_level 1
and 4, onyx against onnxruntime, each engine timed in its own process (so neither warms the
other's caches or threads), alternating. Prints the median ms per call and the packed bytes read
per call over that time (GB/s). Timings on a shared machine are noisy: not final numbers.

    ONYX_LIB=build/libonyx.so PYTHONPATH=backend/python .venv/bin/python tools/bench/matmulnbits_bench.py
"""
import argparse
import os
import subprocess
import sys
import tempfile

CHILD = r'''
import sys, time
import numpy as np
engine, path, k, threads, runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
data = open(path, 'rb').read()
a = np.random.default_rng(0).standard_normal((1, k)).astype(np.float32)
if engine == 'onyx':
    import onyx
    s = onyx.Session(data, threads=threads)
    run = lambda: s.run(None, {'a': a})
else:
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    s = ort.InferenceSession(data, so, providers=['CPUExecutionProvider'])
    run = lambda: s.run(None, {'a': a})
for _ in range(5):
    run()
ts = []
for _ in range(runs):
    t0 = time.perf_counter()
    run()
    ts.append(time.perf_counter() - t0)
print(sorted(ts)[len(ts) // 2] * 1e3)
'''


def make_model(k, n, block, level, path):
    import numpy as np
    from onnx import TensorProto as TP
    from onnx import helper as h
    from onnx import numpy_helper as nh
    rng = np.random.default_rng(1)
    kb = (k + block - 1) // block
    inits = [nh.from_array(rng.integers(0, 256, (n, kb, block // 2)).astype(np.uint8), 'B'),
             nh.from_array((rng.random(n * kb) * 0.02).astype(np.float32), 'scales')]
    node = h.make_node('MatMulNBits', ['a', 'B', 'scales'], ['y'], domain='com.microsoft', K=k,
                       N=n, bits=4, block_size=block, accuracy_level=level)
    g = h.make_graph([node], 'g', [h.make_tensor_value_info('a', TP.FLOAT, [1, k])],
                     [h.make_tensor_value_info('y', TP.FLOAT, [1, n])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid('', 21), h.make_opsetid('com.microsoft', 1)])
    with open(path, 'wb') as f:
        f.write(m.SerializeToString())
    return n * kb * (block // 2 + 4)  # codes and float scales read per call


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--runs', type=int, default=200)
    ap.add_argument('--rounds', type=int, default=3, help='alternating rounds per engine')
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        child = os.path.join(tmp, 'child.py')
        with open(child, 'w') as f:
            f.write(CHILD)
        for n in (4864, 151936):
            for level in (1, 4):
                path = os.path.join(tmp, f'nb_{n}_{level}.onnx')
                nbytes = make_model(896, n, 32, level, path)
                best = {}
                for _ in range(args.rounds):
                    for engine in ('onyx', 'onnxruntime'):
                        out = subprocess.run([sys.executable, child, engine, path, '896',
                                              str(args.threads), str(args.runs)],
                                             capture_output=True, text=True, check=True)
                        ms = float(out.stdout.strip().splitlines()[-1])
                        best[engine] = min(best.get(engine, ms), ms)
                for engine, ms in best.items():
                    print(f'K=896 N={n:6d} block 32 level {level} {engine:12s} {ms:8.3f} ms '
                          f'{nbytes / ms / 1e6:6.1f} GB/s')


if __name__ == '__main__':
    main()
