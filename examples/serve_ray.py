"""onyx on Ray: serve a model over HTTP with Ray Serve, then map it over a dataset with Ray Data.

    python examples/serve_ray.py [model.onnx]     (default: tests/models/example.onnx)

Needs `pip install "ray[serve,data]"` and the onyx wheel in the same environment
(docs/SERVING.md). It starts a local Ray cluster in this process; with RAY_ADDRESS=auto (or
ray://...) it joins a running one instead, e.g. one started across several machines with
`ray start`.
"""
import io
import json
import os
import sys
import urllib.request

import numpy as np
import ray
from ray import serve

import onyx.serve

model = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', 'tests', 'models',
                                                            'example.onnx')
ray.init(include_dashboard=False)  # RAY_ADDRESS, when set, makes this join that cluster
serve.start(http_options={'host': '127.0.0.1', 'port': 8000})
app = onyx.serve.deployment(model, num_replicas=2, threads=1, max_batch_size=8, batch_wait_timeout_s=0.005)
serve.run(app, name='example', route_prefix='/example')

# JSON in, JSON out; the replica's latency (queue, batching and run) comes with the answer.
body = json.dumps({'inputs': {'x': np.ones((2, 16)).tolist()}}).encode()
req = urllib.request.Request('http://127.0.0.1:8000/example', data=body,
                             headers={'Content-Type': 'application/json'})
with urllib.request.urlopen(req) as r:
    answer = json.loads(r.read())
print('json:', np.asarray(answer['outputs']['probs']).shape, f"{answer['latency_ms']:.2f} ms,",
      'batch of', answer['batch_size'])

# numpy in, numpy out (np.savez bytes): no float-to-text round trip.
buf = io.BytesIO()
np.savez(buf, x=np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32))
req = urllib.request.Request('http://127.0.0.1:8000/example', data=buf.getvalue(),
                             headers={'Content-Type': onyx.serve.NPZ})
with urllib.request.urlopen(req) as r:
    probs = np.load(io.BytesIO(r.read()))['probs']
    print('npz: ', probs.shape, r.headers['x-onyx-latency-ms'], 'ms')

# Raw tensors in, raw tensors out: the cheapest body for the replica to decode and encode.
x = np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32)
req = urllib.request.Request('http://127.0.0.1:8000/example', data=onyx.serve.encode_tensors({'x': x}),
                             headers={'Content-Type': onyx.serve.TENSORS})
with urllib.request.urlopen(req) as r:
    probs = onyx.serve.decode_tensors(r.read())['probs']
    print('tensors:', probs.shape, r.headers['x-onyx-latency-ms'], 'ms')

# A replica's view: engine, where it imported onyx from, latency percentiles, batch sizes.
with urllib.request.urlopen('http://127.0.0.1:8000/example') as r:
    print('replica:', json.loads(r.read()))

# Batch inference: the same model over a dataset, two actors with one session each. The serving
# replicas go first: each holds a CPU of Ray's, and the actors would wait for theirs on a small machine.
serve.delete('example')
ds = ray.data.from_numpy(np.random.default_rng(1).standard_normal((1000, 16)).astype(np.float32))
ds = onyx.serve.map_batches(ds, model, concurrency=2, threads=1, batch_size=100, columns={'x': 'data'})
print('ray data:', ds.count(), 'rows,', ds.take(1)[0]['probs'].shape)

serve.shutdown()
ray.shutdown()
