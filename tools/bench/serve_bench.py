"""Ray Serve load benchmark (make bench-serving): the ResNet-like model of tests/serving deployed
with onyx.serve, for each engine (onyx, onnxruntime in the same deployment code), replica count
and max batch size; requests/s and client-side p50/p99 latency from tests/serving/load_client.py
(another process, loopback, every answer checked). Replicas run 1 thread each.

    serve_bench.py [--requests 400] [--concurrency 16] [--replicas 1,2] [--batch 1,8] [--engines onyx,onnxruntime]
"""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tests', 'serving'))
import onnx  # noqa: E402

import serving_util as u  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--requests', type=int, default=400)
    ap.add_argument('--concurrency', type=int, default=16)
    ap.add_argument('--replicas', default='1,2')
    ap.add_argument('--batch', default='1,8')
    ap.add_argument('--engines', default='onyx,onnxruntime')
    ap.add_argument('--wait-ms', type=float, default=5)
    args = ap.parse_args()
    from ray import serve
    import onyx.serve
    tmp = tempfile.mkdtemp()
    model = os.path.join(tmp, 'resnet_like.onnx')
    onnx.save(u.resnet_like(), model)
    cases = os.path.join(tmp, 'cases.npz')
    u.write_cases(model, cases, count=8)
    replicas = [int(r) for r in args.replicas.split(',')]
    port = u.free_port()
    u.start_cluster(port, num_cpus=max(replicas))
    rows = []
    try:
        for engine in args.engines.split(','):
            for r in replicas:
                for b in (int(b) for b in args.batch.split(',')):
                    serve.run(onyx.serve.deployment(model, num_replicas=r, threads=1, max_batch_size=b,
                                                    batch_wait_timeout_s=args.wait_ms / 1e3, engine=engine,
                                                    name='bench'), name='bench', route_prefix='/bench')
                    url = f'http://127.0.0.1:{port}/bench'
                    u.run_client(url, cases, 32, args.concurrency)  # warm-up: first runs, connections
                    s = u.run_client(url, cases, args.requests, args.concurrency)
                    serve.delete('bench')
                    rows.append((engine, r, b, s))
                    print(f'{engine} replicas={r} batch={b}: {s}', file=sys.stderr, flush=True)
    finally:
        u.stop_cluster()
    print(f'\nResNet-like (1x3x64x64), {args.requests} requests, {args.concurrency} in flight, '
          f'1 thread per replica, batch wait {args.wait_ms:g} ms, {os.cpu_count()} cores')
    print('| engine | replicas | max batch | requests/s | p50 ms | p99 ms | mean batch | errors |')
    print('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
    for engine, r, b, s in rows:
        print(f"| {engine} | {r} | {b} | {s['rps']:.1f} | {s['p50_ms']:.1f} | {s['p99_ms']:.1f} | "
              f"{s['batch_mean']:.2f} | {s['requests'] - s['ok']} |")
    return 0 if all(s['rc'] == 0 for *_, s in rows) else 1


if __name__ == '__main__':
    sys.exit(main())
