"""onyx on Ray: online serving with Ray Serve, batch inference with Ray Data.

onyx stays an engine: replicas, routing, autoscaling, HTTP and cross-machine scheduling are Ray's.
Ray (`pip install "ray[serve,data]"`) is imported only when these functions are called, so
`import onyx` never needs it.

    from ray import serve
    import onyx.serve
    app = onyx.serve.deployment("model.onnx", num_replicas=2, threads=1, max_batch_size=8)
    serve.run(app, name="model", route_prefix="/model")
    # POST /model  body: onyx.serve.encode_tensors({"x": x}) (application/x-onyx-tensors),
    #              np.savez bytes (application/x-npz) or {"inputs": {"x": [[...]]}} (JSON)
    # GET  /model  this replica's engine, onyx.__file__ and latency/batch statistics

    ds = onyx.serve.map_batches(ray.data.from_numpy(x), "model.onnx", concurrency=2)

A model given as a path is read here, on the driver, and shipped to the replicas as bytes, so that
workers on other machines need neither the file nor a shared file system; they need only the
onyx wheel (and its system libraries) installed.
"""
import asyncio
import io
import json
import os
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from . import _tensor_body

__all__ = ['deployment', 'server_class', 'map_batches', 'Predictor', 'load_engine', 'encode_tensors',
           'decode_tensors']

NPZ = 'application/x-npz'
TENSORS = _tensor_body.CONTENT_TYPE
encode_tensors = _tensor_body.encode
decode_tensors = _tensor_body.decode
_STATS_WINDOW = 10000


def _model_bytes(model):
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model)
    if isinstance(model, (str, os.PathLike)):
        with open(model, 'rb') as f:
            return f.read()
    return model.SerializeToString()  # an onnx.ModelProto


_ORT_TYPES = {'tensor(float)': np.float32, 'tensor(double)': np.float64, 'tensor(float16)': np.float16,
              'tensor(int64)': np.int64, 'tensor(int32)': np.int32, 'tensor(int8)': np.int8,
              'tensor(uint8)': np.uint8, 'tensor(bool)': np.bool_, 'tensor(string)': np.object_}


class _Engine:
    """One session and what the request decoding needs: input names and dtypes, output names.
    engine="onnxruntime" exists so that benchmarks compare the engines in the same harness."""

    def __init__(self, model, threads=1, engine='onyx'):
        self.kind = engine
        if engine == 'onyx':
            import onyx
            self.session = onyx.Session(model, threads=threads)
        elif engine == 'onnxruntime':
            import onnxruntime
            so = onnxruntime.SessionOptions()
            so.intra_op_num_threads = threads
            so.inter_op_num_threads = 1
            self.session = onnxruntime.InferenceSession(model, so, providers=['CPUExecutionProvider'])
        else:
            raise ValueError(f'engine must be "onyx" or "onnxruntime", not {engine!r}')
        self.inputs = {i.name: _ORT_TYPES.get(i.type, None) for i in self.session.get_inputs()}
        self.outputs = [o.name for o in self.session.get_outputs()]

    def feed(self, named):
        unknown = set(named) - set(self.inputs)
        if unknown:
            raise ValueError(f'unknown input(s) {sorted(unknown)}; the model has {list(self.inputs)}')
        missing = set(self.inputs) - set(named)
        if missing:
            raise ValueError(f'missing input(s) {sorted(missing)}; the model has {list(self.inputs)}')
        return {n: np.asarray(v, dtype=self.inputs[n]) for n, v in named.items()}

    def run(self, feed):
        return dict(zip(self.outputs, self.session.run(None, feed)))


def load_engine(model, threads=1, engine='onyx'):
    return _Engine(model, threads, engine)


def _concatenable(feeds):
    first = feeds[0]
    for f in feeds:
        for n, a in f.items():
            b = first[n]
            if a.ndim == 0 or a.shape[1:] != b.shape[1:] or a.dtype != b.dtype:
                return False
    return True


def _run_batch(engine, feeds):
    """Runs requests that agree on every dim but the first as one batch along axis 0 and splits the
    outputs back; anything else (other shapes, outputs without the batch axis) runs one by one, so
    batching never changes an answer's meaning."""
    if len(feeds) > 1 and _concatenable(feeds):
        rows = [len(next(iter(f.values()))) if f else 0 for f in feeds]
        if all(len(a) == r for f, r in zip(feeds, rows) for a in f.values()):
            merged = {n: np.concatenate([f[n] for f in feeds]) for n in feeds[0]}
            out = engine.run(merged)
            total = sum(rows)
            if all(v.ndim > 0 and len(v) == total for v in out.values()):
                cuts = np.cumsum(rows)[:-1]
                parts = {n: np.split(v, cuts) for n, v in out.items()}
                return [{n: parts[n][i] for n in out} for i in range(len(feeds))]
    return [engine.run(f) for f in feeds]


def _decode_npz(body):
    if body[:4] not in (b'PK\x03\x04', b'PK\x05\x06'):   # np.load would call anything else pickled data
        raise ValueError(f'{NPZ} body is not an np.savez archive (no zip signature)')
    with np.load(io.BytesIO(body), allow_pickle=False) as z:
        return {n: z[n] for n in z.files}


def _encode_npz(named):
    buf = io.BytesIO()
    np.savez(buf, **named)
    return buf.getvalue()


# A request body's form by its Content-Type (anything else is JSON) and the answer's in the same form.
_DECODE = {NPZ: _decode_npz, TENSORS: _tensor_body.decode, 'json': lambda body: json.loads(body)['inputs']}
_ENCODE = {NPZ: _encode_npz, TENSORS: _tensor_body.encode}


def _timed_batch(engine, feeds):
    t = time.perf_counter()
    outs = _run_batch(engine, feeds)
    return outs, (time.perf_counter() - t) * 1e3


def _percentiles(values):
    if not values:
        return {'p50': None, 'p99': None, 'mean': None}
    a = np.asarray(values)
    return {'p50': float(np.percentile(a, 50)), 'p99': float(np.percentile(a, 99)), 'mean': float(a.mean())}


_server_cls = None


def server_class():
    """The Ray Serve deployment class (built on first use, because it needs ray). Its constructor
    takes (model_bytes, threads, engine, max_batch_size, batch_wait_timeout_s)."""
    global _server_cls
    if _server_cls is not None:
        return _server_cls
    from ray import serve
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response

    class OnyxServer:
        def __init__(self, model, threads=1, engine='onyx', max_batch_size=8, batch_wait_timeout_s=0.005):
            self.engine = _Engine(model, threads, engine)
            self.threads = threads
            # serve.batch's limits are fixed where the method is decorated; per-deployment values
            # are set on the batch handler here.
            self._infer.set_max_batch_size(max_batch_size)
            self._infer.set_batch_wait_timeout_s(batch_wait_timeout_s)
            # One thread runs the engine, off the event loop (a run takes milliseconds and ctypes
            # releases the GIL, so the replica keeps receiving requests meanwhile), one run at a
            # time in arrival order, as the session's threads expect the cores to themselves.
            self._runner = ThreadPoolExecutor(max_workers=1, thread_name_prefix='onyx-run')
            self.batching = {'max_batch_size': max_batch_size, 'batch_wait_timeout_s': batch_wait_timeout_s}
            self._lock = threading.Lock()
            self._latency_ms = deque(maxlen=_STATS_WINDOW)
            self._batch_sizes = deque(maxlen=_STATS_WINDOW)
            self._requests = 0
            self._errors = 0

        @serve.batch(max_batch_size=8, batch_wait_timeout_s=0.005)
        async def _infer(self, feeds):
            outs, run_ms = await asyncio.get_running_loop().run_in_executor(self._runner, _timed_batch,
                                                                            self.engine, feeds)
            return [(o, len(feeds), run_ms) for o in outs]

        def info(self):
            import onyx
            with self._lock:
                lat, sizes = list(self._latency_ms), list(self._batch_sizes)
                requests, errors = self._requests, self._errors
            return {'engine': self.engine.kind, 'threads': self.threads, 'onyx_file': onyx.__file__,
                    'onyx_version': onyx.version(), 'pid': os.getpid(), 'inputs': list(self.engine.inputs),
                    'outputs': self.engine.outputs, 'requests': requests, 'errors': errors,
                    **self.batching,
                    'latency_ms': _percentiles(lat),
                    'batch_size': {'mean': float(np.mean(sizes)) if sizes else None,
                                   'max': int(max(sizes)) if sizes else None}}

        async def _run(self, feed):
            """A request's run: through serve.batch when batching is on, else straight to the
            executor, so that batch 1 never waits on the batch queue's wake-up."""
            if self.batching['max_batch_size'] > 1:
                return await self._infer(feed)
            outs, run_ms = await asyncio.get_running_loop().run_in_executor(self._runner, _timed_batch,
                                                                            self.engine, [feed])
            return outs[0], 1, run_ms

        async def __call__(self, request: Request):
            t0 = time.perf_counter()
            if request.method == 'GET':
                return JSONResponse(self.info())
            body = await request.body()
            t_body = time.perf_counter()
            form = request.headers.get('content-type', '').split(';')[0].strip()
            form = form if form in _DECODE else 'json'
            try:
                feed = self.engine.feed(_DECODE[form](body))
            except Exception as e:  # a client's mistake: say what, keep serving
                with self._lock:
                    self._errors += 1
                return JSONResponse({'error': f'{type(e).__name__}: {e}'}, status_code=400)
            t_feed = time.perf_counter()
            try:
                out, batch, run_ms = await self._run(feed)
            except Exception as e:
                with self._lock:
                    self._errors += 1
                return JSONResponse({'error': f'{type(e).__name__}: {e}'}, status_code=500)
            t_run = time.perf_counter()
            # JSON's cost is in tolist(); its dumps below carries the latency, so it stays out of it
            payload = {n: v.tolist() for n, v in out.items()} if form == 'json' else _ENCODE[form](out)
            t_end = time.perf_counter()
            ms = (t_end - t0) * 1e3
            with self._lock:
                self._requests += 1
                self._latency_ms.append(ms)
                self._batch_sizes.append(batch)
            # where the replica's time went (docs/SERVING.md)
            headers = {'x-onyx-latency-ms': f'{ms:.3f}', 'x-onyx-batch-size': str(batch),
                       'x-onyx-receive-ms': f'{(t_body - t0) * 1e3:.3f}',
                       'x-onyx-decode-ms': f'{(t_feed - t_body) * 1e3:.3f}',
                       'x-onyx-queue-ms': f'{(t_run - t_feed) * 1e3 - run_ms:.3f}',
                       'x-onyx-run-ms': f'{run_ms:.3f}',
                       'x-onyx-encode-ms': f'{(t_end - t_run) * 1e3:.3f}'}
            if form == 'json':
                return JSONResponse({'outputs': payload, 'latency_ms': ms, 'batch_size': batch}, headers=headers)
            return Response(payload, media_type=form, headers=headers)

    _server_cls = OnyxServer
    return _server_cls


def deployment(model, *, num_replicas=1, threads=1, max_batch_size=8, batch_wait_timeout_s=0.005,
               engine='onyx', name='onyx', ray_actor_options=None, max_ongoing_requests=None):
    """A Ray Serve application (pass it to serve.run) that serves `model` (path, bytes or
    onnx.ModelProto) with `num_replicas` replicas, each holding one session that runs on `threads`
    threads (and reserves as many CPUs from Ray). Concurrent requests to a replica are batched
    along the first axis with serve.batch, up to max_batch_size requests or batch_wait_timeout_s
    (max_batch_size=1: no batch queue). Requests: POST an encode_tensors body with Content-Type
    application/x-onyx-tensors, an np.savez body with application/x-npz, or a JSON
    {"inputs": {name: nested list}}; the answer comes in the same form, with the replica's
    per-request latency in the x-onyx-latency-ms header (and "latency_ms" in JSON) and its parts
    in x-onyx-{receive,decode,queue,run,encode}-ms (docs/SERVING.md)."""
    from ray import serve
    options = {'num_cpus': threads}
    options.update(ray_actor_options or {})
    # Enough requests in flight per replica to fill a batch while the previous one runs.
    ongoing = max_ongoing_requests or max(2 * max_batch_size, 4)
    dep = serve.deployment(server_class(), name=name, num_replicas=num_replicas,
                           ray_actor_options=options, max_ongoing_requests=ongoing)
    return dep.bind(_model_bytes(model), threads, engine, max_batch_size, batch_wait_timeout_s)


class Predictor:
    """The callable class Ray Data's actor pool instantiates: one session per actor. Input columns
    map to model inputs by name unless `columns` ({input name: column}) says otherwise; outputs
    become columns named after them (with `prefix`)."""

    def __init__(self, model, threads=1, engine='onyx', columns=None, prefix='', keep_columns=True):
        self.engine = _Engine(model, threads, engine)
        self.columns = columns or {n: n for n in self.engine.inputs}
        self.prefix = prefix
        self.keep = keep_columns

    def __call__(self, batch):
        feed = self.engine.feed({n: np.stack(batch[c]) if batch[c].dtype == object else batch[c]
                                 for n, c in self.columns.items()})
        out = self.engine.run(feed)
        result = dict(batch) if self.keep else {}
        result.update({self.prefix + n: v for n, v in out.items()})
        return result


def map_batches(dataset, model, *, concurrency=1, threads=1, batch_size=64, engine='onyx', columns=None,
                prefix='', keep_columns=True, **kwargs):
    """`dataset.map_batches` with an actor pool of `concurrency` actors (an int, or Ray Data's
    (min, max) tuple for an autoscaling pool), each holding one session on `threads` threads;
    returns the lazy Dataset with the model's outputs added as columns."""
    from ray.data import ActorPoolStrategy
    pool = (ActorPoolStrategy(min_size=concurrency[0], max_size=concurrency[1]) if isinstance(concurrency, tuple)
            else ActorPoolStrategy(size=concurrency))
    return dataset.map_batches(Predictor, batch_size=batch_size, batch_format='numpy', compute=pool,
                               num_cpus=threads,
                               fn_constructor_kwargs={'model': _model_bytes(model), 'threads': threads,
                                                      'engine': engine, 'columns': columns, 'prefix': prefix,
                                                      'keep_columns': keep_columns},
                               **kwargs)
