#!/usr/bin/env python3
"""onyx against onnxruntime under traffic: an open-loop load generator on the zoo's small models
(issue 31). Back-to-back timings (make bench-zoo) hide what a server sees: requests that arrive
with gaps, after which a thread pool may have gone to sleep.

For each model and engine, one session (2 threads by default) in a process of its own (onyx
through onyx.InferenceSession with ONYX_LIB, onnxruntime's InferenceSession). Both processes live
at once and take turns block by block (the back-to-back block, each load point, the idle one),
the engine going first swapped from one block to the next, so that the machine's drift over
minutes (a shared host's) lands on both alike; --no-interleave runs each engine's blocks in one
stretch instead, one engine after the other (the .serve engines always do). Each process:
  - times back-to-back runs (the "b2b" row);
  - serves requests at Poisson arrivals at 5/25/50/80 % of the model's back-to-back throughput:
    open loop, a request's latency runs from its scheduled arrival, so one that waits behind the
    previous request counts its wait. Both engines get the same arrival times (same seed); the
    rates' basis is the slower engine's back-to-back time (a calibration process per engine
    first), so neither is overloaded;
  - and requests that each arrive a fixed gap (10 ms, 50 ms, 200 ms, 1 s) after the previous
    response: the pause a thread pool sees, whatever the model's time (a fixed inter-arrival
    time shorter than a large model's run would only measure a growing queue);
  - reports p50/p99 latency, the share of requests during which the calling thread was
    preempted ("pre %": its involuntary context switches; another thread or process took its
    core, so that request waited on something outside the engine), p99 over the other requests
    as an onyx / onnxruntime ratio, and its own CPU time (user + system, all threads) per second
    of wall time while the load runs, and then while idle for --idle seconds after a burst of runs
    (spinning workers show there as CPU time with nothing to do).
Engines onyx.serve and ort.serve put the same session behind onyx.serve (Ray Serve: a local
cluster, one replica of --threads threads, batch 1) and send each request over HTTP (the raw
tensor body, or npz with --serve-body npz) from the worker process, so that the serving layer's
cost shows beside the engine's own, and where it goes inside the replica; their CPU
time is the whole machine's (Ray's processes included), so run them on a quiet machine. They
need Ray and the onyx wheel (make bench-traffic-serve uses .venv-serve).
The table gives onyx / onnxruntime ratios. p99 of a few dozen requests is close to their maximum;
--requests and --budget raise the counts. On a machine of two cores both are busy during a run,
so anything else that wakes takes one of them: run the benchmark detached from a terminal that
polls its output (nohup, output to a file), whose process was the one that most often preempted
the caller at the 10 ms pauses (perf sched, 2026-12-03). A benchmark, not a test.

  tools/bench/traffic_bench.py [--threads N] [--models mobilenet_v3_small,all_minilm_l6:12]
      [--rates 5,25,50,80] [--gaps 10,50,200,1000] [--requests N] [--budget S] [--rounds R]
      [--idle S] [--engines onyx,ort] [--serve-body tensors|npz] [--onyx-env K=V ...] [--ort-env K=V ...]
      [--onyx-config K=V ...] [--json FILE] [--zoo DIR]
A model is a zoo name, with ":N" for the sequence length of token models (default 128).
--onyx-env / --ort-env set environment variables in that engine's process only (e.g.
OMP_WAIT_POLICY=active, GOMP_SPINCOUNT=0) for experiments.
"""
import argparse
import http.client
import io
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from zoo_bench import ROOT, make_feeds, models, peak_rss_mib  # noqa: E402

DEFAULT_MODELS = ('mobilenet_v3_small,efficientnet_b0,all_minilm_l6:12,all_minilm_l6:128,'
                  'resnet18,bert_base')
ENGINES = ('onyx', 'ort')  # the engines themselves; NAME.serve: the same behind onyx.serve


def cpu_seconds():
    """CPU time of this process, all threads, user + system."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def machine_cpu_seconds():
    """CPU time of the whole machine (all processes), user + system, from /proc/stat."""
    with open('/proc/stat') as f:
        fields = [int(x) for x in f.readline().split()[1:8]]
    busy = fields[0] + fields[1] + fields[2] + fields[5] + fields[6]  # user nice system irq softirq
    return busy / os.sysconf('SC_CLK_TCK')


def switches():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_nvcsw + r.ru_nivcsw


# The calling thread's involuntary context switches: a request during which the caller was
# preempted (another thread or process took its core) waited for something outside the engine.
PREEMPTIONS = getattr(resource, 'RUSAGE_THREAD', resource.RUSAGE_SELF)


def caller_preemptions():
    return resource.getrusage(PREEMPTIONS).ru_nivcsw


def sleep_until(t):
    """Sleeps until perf_counter() reaches t (nothing when t is past)."""
    while True:
        left = t - time.perf_counter()
        if left <= 0:
            return
        time.sleep(left)


# where a request's time inside the replica went, in order (onyx.serve's x-onyx-*-ms headers)
PARTS = ('receive', 'decode', 'queue', 'run', 'encode')


class ServeSession:
    """One replica of onyx.serve (batch 1) on a local Ray cluster, asked over keep-alive HTTP
    with `body` (tensors or npz) bodies: run() has InferenceSession.run's form."""

    def __init__(self, engine, model_path, threads, body):
        sys.path.insert(0, os.path.join(ROOT, 'tests', 'serving'))
        import serving_util
        from ray import serve
        import onyx.serve
        port = serving_util.free_port()
        serving_util.start_cluster(port, num_cpus=threads)
        app = onyx.serve.deployment(model_path, threads=threads, max_batch_size=1,
                                    engine={'onyx': 'onyx', 'ort': 'onnxruntime'}[engine])
        serve.run(app, name='traffic', route_prefix='/traffic')
        self.conn = http.client.HTTPConnection('127.0.0.1', port, timeout=120)
        self.body = body
        # each request's time inside the replica, all of it and its parts
        self.times = {k: [] for k in ('replica',) + PARTS}

    def run(self, _names, feeds):
        if self.body == 'tensors':
            import onyx.serve
            payload, ctype = onyx.serve.encode_tensors(feeds), onyx.serve.TENSORS
        else:
            buf = io.BytesIO()
            np.savez(buf, **feeds)
            payload, ctype = buf.getvalue(), 'application/x-npz'
        self.conn.request('POST', '/traffic', body=payload, headers={'Content-Type': ctype})
        r = self.conn.getresponse()
        body = r.read()
        if r.status != 200:
            raise RuntimeError(f'serve answered {r.status}: {body[:200]!r}')
        for k in self.times:
            header = 'x-onyx-latency-ms' if k == 'replica' else f'x-onyx-{k}-ms'
            self.times[k].append(float(r.getheader(header, 'nan')))
        if self.body == 'tensors':
            return list(onyx.serve.decode_tensors(body).values())
        with np.load(io.BytesIO(body), allow_pickle=False) as z:
            return [z[k] for k in z.files]


def session(engine, model_path, threads, config, serve_body):
    if engine.endswith('.serve'):
        return ServeSession(engine[:-len('.serve')], model_path, threads, serve_body)
    if engine == 'onyx':
        sys.path.insert(0, os.path.join(ROOT, 'backend', 'python'))
        import onyx
        so = onyx.SessionOptions()
        so.intra_op_num_threads = threads
        for entry in config:
            so.add_session_config_entry(*entry.split('=', 1))
        return onyx.InferenceSession(model_path, so)
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    return ort.InferenceSession(model_path, so, providers=['CPUExecutionProvider'])


def schedule(point, basis_ms, plan):
    """Arrival offsets in seconds from the start of a load point; the same for both engines."""
    kind, value = point
    if kind == 'rate':   # arrival offsets
        mean = basis_ms / 1e3 / (value / 100.0)
        n = int(min(plan['requests'], max(plan['min_requests'], plan['budget'] / mean)))
        rng = np.random.default_rng(plan['seed'] + int(value))
        gaps = rng.exponential(mean, n)
    else:                # only the count matters: each arrives a gap after the last response
        gap = value / 1e3
        n = int(min(plan['requests'], max(plan['min_requests'], plan['budget'] / (gap + basis_ms / 1e3))))
        gaps = np.full(n, gap)
    return np.cumsum(gaps)


def open_worker_session(plan):
    """The plan's session and feeds, warmed up, and its creation time in ms."""
    with open(plan['spec']) as f:
        spec = json.load(f)
    if plan['seq']:
        for inp in spec['inputs']:
            if '1' in inp.get('dynamic', {}):
                inp['shape'][1] = plan['seq']
    feeds = make_feeds(spec, 0)
    global cpu_seconds
    if plan['engine'].endswith('.serve'):
        cpu_seconds = machine_cpu_seconds
    t0 = time.perf_counter()
    sess = session(plan['engine'], plan['model'], plan['threads'], plan['config'], plan['serve_body'])
    create_ms = (time.perf_counter() - t0) * 1e3
    for _ in range(3):
        sess.run(None, feeds)
    return sess, feeds, create_ms


def run_b2b(sess, feeds, plan):
    sleep_until(time.perf_counter() + 0.2)   # after the other engine's block, its threads idle
    times, preempted, start = [], [], time.perf_counter()
    c0 = cpu_seconds()
    while len(times) < 10 or (time.perf_counter() - start < plan['b2b_seconds'] and len(times) < 500):
        p0, t = caller_preemptions(), time.perf_counter()
        sess.run(None, feeds)
        times.append((time.perf_counter() - t) * 1e3)
        preempted.append(caller_preemptions() > p0)
    wall = time.perf_counter() - start
    return {'lat_ms': times, 'preempted': preempted, 'cpu': (cpu_seconds() - c0) / wall}


def run_point(sess, feeds, plan, point):
    arrivals = schedule(point, plan['basis_ms'], plan)
    sleep_until(time.perf_counter() + 0.2)   # every point starts after the same short pause
    lat, preempted, c0, s0 = [], [], cpu_seconds(), switches()
    base = time.perf_counter()
    if point[0] == 'rate':
        for a in arrivals:
            due = base + a
            sleep_until(due)
            p0 = caller_preemptions()
            sess.run(None, feeds)
            lat.append((time.perf_counter() - due) * 1e3)
            preempted.append(caller_preemptions() > p0)
    else:   # a pause of the gap after each response, whatever the model's time
        done = base
        for _ in arrivals:
            due = done + point[1] / 1e3
            sleep_until(due)
            p0 = caller_preemptions()
            sess.run(None, feeds)
            done = time.perf_counter()
            lat.append((done - due) * 1e3)
            preempted.append(caller_preemptions() > p0)
    wall = time.perf_counter() - base
    return {'point': point, 'lat_ms': lat, 'preempted': preempted,
            'cpu': (cpu_seconds() - c0) / wall, 'switches': switches() - s0, 'wall_s': wall}


def run_idle(sess, feeds, plan):
    """A burst of runs, then nothing; CPU time spent while nothing is asked."""
    for _ in range(20):
        sess.run(None, feeds)
    idle = {}
    c0, base = cpu_seconds(), time.perf_counter()
    for mark in (0.1, plan['idle']):
        sleep_until(base + mark)
        idle[f'{mark:g}'] = (cpu_seconds() - c0) / (time.perf_counter() - base)
    return idle


def worker(plan_path, out_path):
    """In a child process: one session, the plan's blocks, a JSON result. With out_path '-', the
    blocks one at a time as the parent asks for them on stdin (a JSON line each: "b2b", a point's
    index, "idle", "end"), each block's result a JSON line on stdout."""
    with open(plan_path) as f:
        plan = json.load(f)
    if out_path == '-':   # only the replies on the pipe: what else writes to stdout goes to stderr
        reply = os.fdopen(os.dup(1), 'w')
        os.dup2(2, 1)
        sys.stdout = sys.stderr
    sess, feeds, create_ms = open_worker_session(plan)
    result = {'create_ms': create_ms}
    if out_path == '-':
        reply.write(json.dumps(result) + '\n')
        reply.flush()
        for line in sys.stdin:
            ask = json.loads(line)
            if ask == 'end':
                break
            if ask == 'b2b':
                got = run_b2b(sess, feeds, plan)
            elif ask == 'idle':
                got = {'idle': run_idle(sess, feeds, plan), 'peak_mib': peak_rss_mib()}
            else:
                got = run_point(sess, feeds, plan, plan['points'][ask])
            reply.write(json.dumps(got) + '\n')
            reply.flush()
        return
    result['b2b'] = run_b2b(sess, feeds, plan)
    result['points'] = [run_point(sess, feeds, plan, point) for point in plan['points']]
    result['idle'] = run_idle(sess, feeds, plan)
    result['peak_mib'] = peak_rss_mib()
    if isinstance(sess, ServeSession):
        result['replica'] = sess.times
    with open(out_path, 'w') as f:
        json.dump(result, f)


def run_interleaved(engines, plan, tmp, envs, first, verbose):
    """Both engines' processes at once, their blocks alternated block by block (back to back,
    each load point, idle), the engine going first swapped from one block to the next, so that
    a drift in the machine's speed over minutes lands on both alike. Results as run_child's."""
    procs, logs, results = {}, {}, {}
    try:
        for e in engines:
            plan_path = os.path.join(tmp, f'{e}.plan.json')
            with open(plan_path, 'w') as f:
                json.dump(dict(plan, engine=e), f)
            env = dict(os.environ, OMP_NUM_THREADS=str(plan['threads']))
            env.update(envs[e])
            # stderr to a file: a pipe nobody reads until the end could fill and stall the worker
            logs[e] = os.path.join(tmp, f'{e}.stderr')
            with open(logs[e], 'w') as log:
                procs[e] = subprocess.Popen([sys.executable, os.path.abspath(__file__), '--worker',
                                             plan_path, '-'], env=env, stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE, stderr=log, text=True)

        def ask(e, what):
            p = procs[e]
            if what is not None:
                p.stdin.write(json.dumps(what) + '\n')
                p.stdin.flush()
            line = p.stdout.readline()
            if not line:
                with open(logs[e]) as log:
                    last = (log.read().strip().splitlines() or ['?'])[-1]
                raise RuntimeError(f'{e}: {last[:160]}')
            return json.loads(line)

        for e in engines:
            results[e] = ask(e, None)   # the session made
        blocks = ['b2b'] + list(range(len(plan['points']))) + ['idle']
        for k, block in enumerate(blocks):
            order = engines if (first + k) % 2 == 0 else engines[::-1]
            for e in order:
                got = ask(e, block)
                if block == 'b2b':
                    results[e]['b2b'] = got
                elif block == 'idle':
                    results[e].update(got)
                else:
                    results[e].setdefault('points', []).append(got)
        for e in engines:
            procs[e].stdin.write(json.dumps('end') + '\n')
            procs[e].stdin.flush()
    except (RuntimeError, OSError, ValueError) as err:
        return {e: {'error': str(err)} for e in engines}
    finally:
        for p in procs.values():
            try:
                p.stdin.close()
            except OSError:
                pass
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
        for e, path in logs.items():
            with open(path) as log:
                text = log.read().strip()
            if verbose and text:
                print(text, file=sys.stderr)
    return results


def run_child(engine, plan, tmp, env_extra, verbose):
    plan_path = os.path.join(tmp, f'{engine}.plan.json')
    out = os.path.join(tmp, f'{engine}.json')
    if os.path.exists(out):
        os.remove(out)
    with open(plan_path, 'w') as f:
        json.dump(dict(plan, engine=engine), f)
    env = dict(os.environ, OMP_NUM_THREADS=str(plan['threads']))
    env.update(env_extra)
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), '--worker', plan_path, out],
                          env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0 or not os.path.exists(out):
        last = (proc.stderr.strip().splitlines() or ['?'])[-1]
        return {'error': last[:160]}
    if verbose and proc.stderr.strip():
        print(proc.stderr.strip(), file=sys.stderr)
    with open(out) as f:
        return json.load(f)


def pct(values, q):
    return float(np.percentile(values, q)) if len(values) else float('nan')


def label(point):
    kind, value = point
    if kind == 'rate':
        return f'poisson {value:g}%'
    return f'gap {value / 1e3:g} s' if value >= 1000 else f'gap {value:g} ms'


def kv(entries):
    return dict(e.split('=', 1) for e in entries)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--models', default=DEFAULT_MODELS,
                    help='comma-separated zoo names, NAME:SEQ for token models')
    ap.add_argument('--engines', default='onyx,ort')
    ap.add_argument('--serve-body', choices=('tensors', 'npz'), default='tensors',
                    help='the request and answer bodies of the .serve engines')
    ap.add_argument('--rates', default='5,25,50,80', help='percent of back-to-back throughput')
    ap.add_argument('--gaps', default='10,50,200,1000', help='fixed gaps in ms')
    ap.add_argument('--requests', type=int, default=30, help='most requests per load point')
    ap.add_argument('--min-requests', type=int, default=6, help='fewest requests per load point')
    ap.add_argument('--budget', type=float, default=3.0,
                    help='seconds of arrivals per load point (between the two counts above)')
    ap.add_argument('--b2b-seconds', type=float, default=1.0)
    ap.add_argument('--idle', type=float, default=2.0, help='idle seconds measured after a burst')
    ap.add_argument('--rounds', type=int, default=1, help='processes per engine and model, alternated')
    ap.add_argument('--no-interleave', dest='interleave', action='store_false',
                    help="run each engine's blocks in one stretch, not alternated block by block")
    ap.add_argument('--seed', type=int, default=31)
    ap.add_argument('--exporter', default='ts')
    ap.add_argument('--zoo', default=os.path.join(ROOT, 'zoo'))
    ap.add_argument('--onyx-config', action='append', default=[], metavar='KEY=VALUE')
    ap.add_argument('--onyx-env', action='append', default=[], metavar='KEY=VALUE')
    ap.add_argument('--ort-env', action='append', default=[], metavar='KEY=VALUE')
    ap.add_argument('--json', help='write every latency and figure to this file')
    ap.add_argument('--verbose', action='store_true')
    ap.add_argument('--worker', nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(*args.worker)
        return 0

    engines = [e for e in args.engines.split(',') if e]
    envs = {'onyx': kv(args.onyx_env), 'ort': kv(args.ort_env)}
    envs.update({e + '.serve': envs[e] for e in ('onyx', 'ort')})
    points = ([('rate', float(r)) for r in args.rates.split(',') if r] +
              [('gap', float(g)) for g in args.gaps.split(',') if g])
    zoo = {name: (path, spec) for name, path, spec in models(args.zoo, set(), {args.exporter})}
    try:
        import onnxruntime
        ort_version = onnxruntime.__version__
    except ImportError:
        ort_version = '?'
    print(f'open-loop traffic on {args.zoo}: {args.threads} thread(s), one process per engine and model, '
          f'onnxruntime {ort_version}; latency from the scheduled arrival; cpu = process CPU s per wall s'
          + (f'; onyx env {envs["onyx"]}' if envs['onyx'] else '')
          + (f'; ort env {envs["ort"]}' if envs['ort'] else '')
          + (f'; onyx config {args.onyx_config}' if args.onyx_config else ''))
    try:
        load = os.getloadavg()[0]
        print(f'load average at start: {load:.2f} on {os.cpu_count()} CPUs')
    except OSError:
        pass
    everything = []
    with tempfile.TemporaryDirectory() as tmp:
        for m, entry in enumerate(m for m in args.models.split(',') if m):
            name, _, seq = entry.partition(':')
            if name not in zoo:
                print(f'{entry}: not in {args.zoo} (make zoo ZOO_FLAGS="--models {name} --exporters {args.exporter}")')
                continue
            path, spec = zoo[name]
            is_tokens = any('1' in i.get('dynamic', {}) for i in json.load(open(spec))['inputs'])
            seq = int(seq) if seq else (128 if is_tokens else 0)
            plan = {'model': path, 'spec': spec, 'seq': seq, 'threads': args.threads,
                    'b2b_seconds': args.b2b_seconds, 'requests': args.requests,
                    'min_requests': args.min_requests, 'budget': args.budget, 'idle': args.idle,
                    'seed': args.seed, 'config': args.onyx_config, 'serve_body': args.serve_body,
                    'points': [], 'basis_ms': 0}
            # calibration: each engine's back-to-back time; the slower one sets the rates
            calib, failed = {}, {}
            for e in engines:
                r = run_child(e, dict(plan, b2b_seconds=min(args.b2b_seconds, 1.0)), tmp, envs[e], args.verbose)
                if 'error' in r:
                    failed[e] = r['error']
                else:
                    calib[e] = float(np.median(r['b2b']['lat_ms']))
            if failed:
                print(f'{entry}: failed ({"; ".join(f"{e}: {msg}" for e, msg in failed.items())})')
                continue
            plan['basis_ms'] = max(calib.values())
            plan['points'] = points
            results = {e: [] for e in engines}
            # engines behind onyx.serve each start a Ray cluster: one at a time
            interleave = args.interleave and not any(e.endswith('.serve') for e in engines)
            for r in range(args.rounds):
                order = engines if (m + r) % 2 == 0 else engines[::-1]
                got = (run_interleaved(engines, plan, tmp, envs, m + r, args.verbose) if interleave else
                       {e: run_child(e, plan, tmp, envs[e], args.verbose) for e in order})
                for e, res in got.items():
                    if 'error' in res:
                        failed[e] = res['error']
                    else:
                        results[e].append(res)
            if failed:
                print(f'{entry}: failed ({"; ".join(f"{e}: {msg}" for e, msg in failed.items())})')
                continue
            everything.append({'model': entry, 'basis_ms': plan['basis_ms'], 'calib_ms': calib,
                               'results': results})
            report(entry, plan, engines, results)
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(everything, f)
    return 0


def report(entry, plan, engines, results):
    def pooled(e, key, idx=None):
        rows = [r['b2b'] if key == 'b2b' else r['points'][idx] for r in results[e]]
        lat = [x for row in rows for x in row['lat_ms']]
        pre = [x for row in rows for x in row.get('preempted', [False] * len(row['lat_ms']))]
        return lat, float(np.mean([row['cpu'] for row in rows])), np.array(pre, bool)

    # onyx / onnxruntime, directly and behind onyx.serve, where both of a pair ran
    pairs = [(a, b) for a, b in (('onyx', 'ort'), ('onyx.serve', 'ort.serve'))
             if a in engines and b in engines]
    cols = [e for e in ENGINES if e in engines] + [e for e in engines if e not in ENGINES]
    print(f'\n{entry}: rates relative to {plan["basis_ms"]:.2f} ms back to back (the slower engine)')
    head = f'{"load":<15}{"n":>4}'
    for what in ('p50 ms', 'p99 ms', 'cpu s/s', 'pre %'):
        for e in cols:
            head += f'{e + " " + what:>{len(e) + len(what) + 3}}'
        if what in ('p50 ms', 'p99 ms'):
            for a, _ in pairs:
                head += f'{"ratio" + a[4:]:>{len(a) + 3}}'
    for a, _ in pairs:
        head += f'{"p99 unpre. ratio" + a[4:]:>{len(a) + 14}}'
    print(head)
    print('-' * len(head))
    rows = [('b2b', 'b2b', None)] + [(label(p), 'pt', i) for i, p in enumerate(plan['points'])]
    for text, key, idx in rows:
        data = {e: pooled(e, key, idx) for e in cols}
        n = len(data[cols[0]][0])
        line = f'{text:<15}{n:>4}'
        for what, q in (('p50 ms', 50), ('p99 ms', 99)):
            vals = {e: pct(data[e][0], q) for e in cols}
            for e in cols:
                line += f'{vals[e]:>{len(e) + len(what) + 3}.2f}'
            for a, b in pairs:
                line += f'{vals[a] / vals[b]:>{len(a) + 3}.2f}'
        for e in cols:
            line += f'{data[e][1]:>{len(e) + 10}.2f}'
        for e in cols:
            line += f'{100 * data[e][2].mean() if len(data[e][2]) else 0:>{len(e) + 8}.1f}'
        for a, b in pairs:
            calm = [pct(np.array(data[x][0])[~data[x][2]], 99) for x in (a, b)]
            line += f'{calm[0] / calm[1]:>{len(a) + 14}.2f}'
        print(line)
    idle = '   '.join(f'{e}: ' + ', '.join(
        f'{float(np.mean([r["idle"][k] for r in results[e]])):.3f} (first {k} s)' if k == '0.1'
        else f'{float(np.mean([r["idle"][k] for r in results[e]])):.3f} ({k} s)'
        for k in results[e][0]['idle']) for e in cols)
    print(f'{"idle cpu s/s":<15}    {idle}')
    print('session create ms: ' + ', '.join(
        f'{e} {np.median([r["create_ms"] for r in results[e]]):.0f}' for e in cols)
        + '; peak MiB: ' + ', '.join(f'{e} {max(r["peak_mib"] for r in results[e]):.0f}' for e in cols))
    for e in cols:
        if 'replica' in results[e][0]:
            p50 = {k: pct([x for r in results[e] for x in r['replica'][k]], 50) for k in ('replica',) + PARTS}
            print(f'{e} ({plan["serve_body"]} bodies): p50 {p50["replica"]:.2f} ms of a request inside the '
                  f'replica; p50 of its parts: ' + ', '.join(f'{k} {p50[k]:.2f}' for k in PARTS)
                  + '; the rest of a request\'s time is in Ray\'s proxy, router and HTTP')
    sys.stdout.flush()


if __name__ == '__main__':
    sys.exit(main())
