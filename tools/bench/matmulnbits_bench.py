"""Microbenchmark of one MatMulNBits the size of an LLM's layers, onyx against onnxruntime, each
engine timed in its own process (so neither warms the other's caches or threads), alternating:
4-bit codes in blocks of 32 (--block), with or without zero points, accuracy_level 1 and 4, rows
M = 1 (decode) and 128, 512 (prefill), on Qwen2-0.5B's shapes (K = 896: N = 896, 128, 4864,
151936; K = 4864: N = 896) and Llama-3.2-1B's (K = 2048: N = 2048, 512, 8192, 128256; K = 8192:
N = 2048). Prints per case the best of the rounds' median ms per call, the ratio onyx / onnxruntime,
and at M = 1 the bytes of B read per call over onyx's time (GB/s). Timings on a shared machine are
noisy: repeat, and say the load.

    ONYX_LIB=build/libonyx.so PYTHONPATH=backend/python .venv/bin/python tools/bench/matmulnbits_bench.py
    ... --model qwen --rows 1 --zp 0 --levels 4    # a subset
"""
import argparse
import os
import subprocess
import sys
import tempfile

CHILD = r'''
import sys, time
import numpy as np
engine, path = sys.argv[1], sys.argv[2]
k, threads, runs, m = (int(x) for x in sys.argv[3:7])
data = open(path, 'rb').read()
a = np.random.default_rng(0).standard_normal((m, k)).astype(np.float32)
# both through the same API (onyx's onnxruntime-compatible one), so the call costs compare
if engine == 'onyx':
    import onyx as ort
else:
    import onnxruntime as ort
so = ort.SessionOptions()
so.intra_op_num_threads = threads
s = ort.InferenceSession(data, so, providers=['CPUExecutionProvider'])
run = lambda: s.run(None, {'a': a})
t0 = time.perf_counter()
run()
runs = max(5, min(runs, int(2.0 / max(time.perf_counter() - t0, 1e-6))))
for _ in range(3):
    run()
ts = []
for _ in range(runs):
    t0 = time.perf_counter()
    run()
    ts.append(time.perf_counter() - t0)
print(sorted(ts)[len(ts) // 2] * 1e3)
'''


SHAPES = {'qwen': [(896, 896), (896, 128), (896, 4864), (896, 151936), (4864, 896)],
          'llama': [(2048, 2048), (2048, 512), (2048, 8192), (2048, 128256), (8192, 2048)]}


def make_model(k, n, block, level, zp, path):
    import numpy as np
    from onnx import TensorProto as TP
    from onnx import helper as h
    from onnx import numpy_helper as nh
    rng = np.random.default_rng(1)
    kb = (k + block - 1) // block
    inits = [nh.from_array(rng.integers(0, 256, (n, kb, block // 2)).astype(np.uint8), 'B'),
             nh.from_array((rng.random(n * kb) * 0.02).astype(np.float32), 'scales')]
    ins = ['a', 'B', 'scales']
    nbytes = n * kb * (block // 2 + 4)  # codes and float scales read per call
    if zp:
        inits.append(nh.from_array(rng.integers(0, 256, (n, (kb + 1) // 2)).astype(np.uint8), 'zp'))
        ins.append('zp')
        nbytes += n * ((kb + 1) // 2)
    node = h.make_node('MatMulNBits', ins, ['y'], domain='com.microsoft', K=k, N=n, bits=4,
                       block_size=block, accuracy_level=level)
    g = h.make_graph([node], 'g', [h.make_tensor_value_info('a', TP.FLOAT, ['M', k])],
                     [h.make_tensor_value_info('y', TP.FLOAT, ['M', n])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid('', 21), h.make_opsetid('com.microsoft', 1)])
    with open(path, 'wb') as f:
        f.write(m.SerializeToString())
    return nbytes


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--runs', type=int, default=200, help='timed calls per process at most')
    ap.add_argument('--rounds', type=int, default=3, help='alternating rounds per engine')
    ap.add_argument('--block', type=int, default=32)
    ap.add_argument('--model', choices=['qwen', 'llama', 'both'], default='both')
    ap.add_argument('--rows', type=int, nargs='+', default=[1, 128, 512])
    ap.add_argument('--zp', type=int, nargs='+', default=[0, 1])
    ap.add_argument('--levels', type=int, nargs='+', default=[1, 4])
    ap.add_argument('--max-n', type=int, default=1 << 30, help='skip shapes with larger N')
    args = ap.parse_args()
    shapes = SHAPES['qwen'] + SHAPES['llama'] if args.model == 'both' else SHAPES[args.model]
    print(f'{"K":>5s} {"N":>6s} {"M":>4s} zp lvl {"onyx ms":>9s} {"ort ms":>9s} ratio  onyx GB/s')
    with tempfile.TemporaryDirectory() as tmp:
        child = os.path.join(tmp, 'child.py')
        with open(child, 'w') as f:
            f.write(CHILD)
        for k, n in shapes:
            if n > args.max_n:
                continue
            for zp in args.zp:
                for level in args.levels:
                    path = os.path.join(tmp, f'nb_{k}_{n}_{zp}_{level}.onnx')
                    nbytes = make_model(k, n, args.block, level, zp, path)
                    for m in args.rows:
                        best = {}
                        for _ in range(args.rounds):
                            for engine in ('onyx', 'onnxruntime'):
                                out = subprocess.run(
                                    [sys.executable, child, engine, path, str(k),
                                     str(args.threads), str(args.runs), str(m)],
                                    capture_output=True, text=True, check=True)
                                ms = float(out.stdout.strip().splitlines()[-1])
                                best[engine] = min(best.get(engine, ms), ms)
                        o, r = best['onyx'], best['onnxruntime']
                        gbs = f'{nbytes / o / 1e6:6.1f}' if m == 1 else ''
                        print(f'{k:5d} {n:6d} {m:4d} {zp:2d} {level:3d} {o:9.3f} {r:9.3f} '
                              f'{o / r:5.2f}  {gbs}', flush=True)


if __name__ == '__main__':
    main()
