"""Load generator for onyx.serve (the serving test and tools/bench/serve_bench.py): sends requests
from this process, over HTTP on loopback, `--concurrency` at a time (one keep-alive connection per
thread), and checks every answer against the expected outputs.

    load_client.py URL CASES.npz --requests 300 --concurrency 16 [--format npz|json|tensors] [--rtol R --atol A]

CASES.npz holds cases k = 0..K-1 as arrays "in__{k}__{input}" and "out__{k}__{output}"; request i
sends case i % K. Prints one JSON line: requests, failures (with the first few reasons), requests/s,
client-side p50/p99 latency, the server's reported latency and batch sizes. Exit status 1 when any
answer is missing or wrong, or the replica's reported times do not add up. Standard library and
numpy only (and onyx.serve's encoder for --format tensors), so that it runs in any venv.
"""
import argparse
import http.client
import io
import json
import sys
import threading
import time
import urllib.parse

import numpy as np


def load_cases(path):
    cases = {}
    with np.load(path, allow_pickle=False) as z:
        for key in z.files:
            kind, k, name = key.split('__', 2)
            cases.setdefault(int(k), ({}, {}))[0 if kind == 'in' else 1][name] = z[key]
    return [cases[k] for k in sorted(cases)]


def encode(inputs, fmt):
    if fmt == 'tensors':
        import onyx.serve
        return onyx.serve.encode_tensors(inputs), onyx.serve.TENSORS
    if fmt == 'npz':
        buf = io.BytesIO()
        np.savez(buf, **inputs)
        return buf.getvalue(), 'application/x-npz'
    return json.dumps({'inputs': {n: v.tolist() for n, v in inputs.items()}}).encode(), 'application/json'


def decode(body, content_type):
    if content_type.startswith('application/x-onyx-tensors'):
        import onyx.serve
        return onyx.serve.decode_tensors(body)
    if content_type.startswith('application/x-npz'):
        with np.load(io.BytesIO(body), allow_pickle=False) as z:
            return {n: z[n] for n in z.files}
    return {n: np.asarray(v) for n, v in json.loads(body)['outputs'].items()}


# where a request's time in the replica went, in order (onyx.serve's x-onyx-*-ms headers)
PARTS = ('receive', 'decode', 'queue', 'run', 'encode')


def pct(values, q):
    return float(np.percentile(values, q)) if values else None


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument('url')
    ap.add_argument('cases')
    ap.add_argument('--requests', type=int, default=300)
    ap.add_argument('--concurrency', type=int, default=16)
    ap.add_argument('--format', choices=['npz', 'json', 'tensors'], default='npz')
    ap.add_argument('--rtol', type=float, default=1e-3)
    ap.add_argument('--atol', type=float, default=1e-4)
    ap.add_argument('--timeout', type=float, default=120)
    args = ap.parse_args(argv)

    url = urllib.parse.urlsplit(args.url)
    cases = load_cases(args.cases)
    bodies = [encode(inputs, args.format) for inputs, _ in cases]
    lock = threading.Lock()
    next_i = [0]
    latency, server_ms, run_ms, batch, failures = [], [], [], [], []

    def worker():
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=args.timeout)
        while True:
            with lock:
                i = next_i[0]
                if i >= args.requests:
                    break
                next_i[0] += 1
            k = i % len(cases)
            body, ctype = bodies[k]
            t0 = time.perf_counter()
            try:
                conn.request('POST', url.path or '/', body=body, headers={'Content-Type': ctype})
                r = conn.getresponse()
                data = r.read()
                ms = (time.perf_counter() - t0) * 1e3
                if r.status != 200:
                    raise RuntimeError(f'HTTP {r.status}: {data[:200]!r}')
                got = decode(data, r.getheader('content-type', ''))
                for name, want in cases[k][1].items():
                    if name not in got or got[name].shape != want.shape or \
                            not np.allclose(got[name], want, rtol=args.rtol, atol=args.atol):
                        raise RuntimeError(f'output {name} of case {k} differs: '
                                           f'{got.get(name, np.empty(0)).ravel()[:4]} vs {want.ravel()[:4]}')
                in_replica = float(r.getheader('x-onyx-latency-ms'))
                parts = {p: float(r.getheader(f'x-onyx-{p}-ms')) for p in PARTS}
                run = parts['run']
                # the parts the replica reports are its time, one after the other (each printed
                # to 0.001 ms)
                if not (min(parts.values()) >= 0 and run > 0
                        and abs(sum(parts.values()) - in_replica) <= 0.01):
                    raise RuntimeError(f'replica times do not add up: {parts}, in all {in_replica} ms')
                with lock:
                    latency.append(ms)
                    server_ms.append(in_replica)
                    run_ms.append(run)
                    batch.append(int(r.getheader('x-onyx-batch-size')))
            except Exception as e:  # recorded, reported, and the run goes on
                with lock:
                    failures.append(f'request {i}: {type(e).__name__}: {e}')
                conn.close()
                conn = http.client.HTTPConnection(url.hostname, url.port, timeout=args.timeout)
        conn.close()

    t0 = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(args.concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    ok = len(latency)
    print(json.dumps({'requests': args.requests, 'ok': ok, 'failures': len(failures),
                      'first_failures': failures[:5], 'seconds': wall, 'rps': ok / wall,
                      'p50_ms': pct(latency, 50), 'p99_ms': pct(latency, 99),
                      'server_p50_ms': pct(server_ms, 50), 'server_p99_ms': pct(server_ms, 99),
                      'run_p50_ms': pct(run_ms, 50),
                      'batch_mean': float(np.mean(batch)) if batch else None,
                      'batch_max': max(batch) if batch else None}))
    return 0 if ok == args.requests and not failures else 1


if __name__ == '__main__':
    sys.exit(main())
