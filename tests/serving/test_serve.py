"""onyx.serve on a local Ray cluster (make test-serving): the bundled example and a ResNet-like
model deployed with Ray Serve, a few hundred concurrent requests from another process over
loopback with every answer checked against onnxruntime, and the Ray Data helper. The replicas
must import the installed wheel, never the source tree."""
import os
import sysconfig

import numpy as np
import onnx
import pytest

import serving_util as u

pytestmark = pytest.mark.serving

REQUESTS = int(os.environ.get('SERVE_TEST_REQUESTS', '300'))


@pytest.fixture(scope='module')
def cluster():
    port = u.free_port()
    u.start_cluster(port, num_cpus=2)
    try:
        yield f'http://127.0.0.1:{port}'
    finally:
        u.stop_cluster()


def _get_info(url):
    import json
    import urllib.request
    with urllib.request.urlopen(url, timeout=60) as r:
        return json.loads(r.read())


@pytest.mark.parametrize('which', ['example', 'resnet', 'unbatched'])
def test_serve_concurrent_requests(cluster, which, tmp_path):
    from ray import serve
    import onyx.serve
    if which == 'example':
        model, fmt, replicas, max_batch = u.EXAMPLE, 'json', 1, 8
    elif which == 'resnet':
        model = str(tmp_path / 'resnet_like.onnx')
        onnx.save(u.resnet_like(), model)
        fmt, replicas, max_batch = 'npz', 2, 8
    else:   # batch 1 skips serve.batch; the raw tensor body
        model, fmt, replicas, max_batch = u.EXAMPLE, 'tensors', 1, 1
    cases = str(tmp_path / 'cases.npz')
    u.write_cases(model, cases, count=8)
    app = onyx.serve.deployment(model, num_replicas=replicas, threads=1, max_batch_size=max_batch,
                                batch_wait_timeout_s=0.01, name=which)
    serve.run(app, name=which, route_prefix=f'/{which}')
    try:
        url = f'{cluster}/{which}'
        info = _get_info(url)
        # The replica imported the wheel installed in this venv, not backend/python.
        assert info['onyx_file'].startswith(sysconfig.get_paths()['purelib']), info['onyx_file']
        assert info['engine'] == 'onyx' and info['threads'] == 1
        summary = u.run_client(url, cases, REQUESTS, concurrency=16, fmt=fmt)
        print(which, summary)
        assert summary['rc'] == 0 and summary['ok'] == REQUESTS, summary
        # 16 requests in flight against 1-2 replicas: serve.batch must have merged some (unless off).
        assert summary['batch_max'] == 1 if max_batch == 1 else summary['batch_max'] > 1, summary
        assert summary['server_p50_ms'] > 0
        # the engine's part of a request, reported by the replica, within its time there
        assert 0 < summary['run_p50_ms'] <= summary['server_p50_ms'], summary
    finally:
        serve.delete(which)


def test_bad_request_is_answered(cluster):
    import json
    import urllib.error
    import urllib.request
    from ray import serve
    import onyx.serve
    serve.run(onyx.serve.deployment(u.EXAMPLE, name='bad'), name='bad', route_prefix='/bad')
    good = onyx.serve.encode_tensors({'x': np.ones((1, 16), np.float32)})
    bad = [('application/json', json.dumps({'inputs': {'y': [[1.0]]}}).encode(), 'unknown input'),
           ('application/x-npz', b'not a zip', 'not an np.savez archive'),
           ('application/x-npz', b'PK\x03\x04 not a zip either', 'BadZipFile'),
           (onyx.serve.TENSORS, good[:-8], "tensor 'x' (float32 [1, 16]) ends at byte"),
           (onyx.serve.TENSORS, b'\x02\x00\x00\x00{}', 'header must be a list'),
           (onyx.serve.TENSORS, onyx.serve.encode_tensors({'x': np.ones((1, 16), np.float32),
                                                           'z': np.ones(1)}), "unknown input(s) ['z']")]
    try:
        for ctype, body, message in bad:
            req = urllib.request.Request(f'{cluster}/bad', data=body, headers={'Content-Type': ctype})
            with pytest.raises(urllib.error.HTTPError) as e:
                urllib.request.urlopen(req, timeout=60)
            assert e.value.code == 400 and message in json.loads(e.value.read())['error'], (ctype, message)
        # and the replica still answers a good one
        req = urllib.request.Request(f'{cluster}/bad', data=good, headers={'Content-Type': onyx.serve.TENSORS})
        with urllib.request.urlopen(req, timeout=60) as r:
            assert r.headers['content-type'] == onyx.serve.TENSORS
            assert onyx.serve.decode_tensors(r.read())['probs'].shape == (1, 10)
    finally:
        serve.delete('bad')


def test_ray_data_map_batches(cluster):
    import onnxruntime
    import ray
    import onyx.serve
    x = np.random.default_rng(3).standard_normal((200, 16)).astype(np.float32)
    ds = ray.data.from_items([{'x': row} for row in x])
    rows = onyx.serve.map_batches(ds, u.EXAMPLE, concurrency=2, threads=1, batch_size=32).take_all()
    assert len(rows) == len(x)
    got = {tuple(np.round(r['x'], 5)): r['probs'] for r in rows}  # Ray Data may reorder rows
    want = onnxruntime.InferenceSession(u.EXAMPLE, providers=['CPUExecutionProvider']).run(None, {'x': x})[0]
    for row, probs in zip(x, want):
        np.testing.assert_allclose(got[tuple(np.round(row, 5))], probs, rtol=1e-4, atol=1e-6)
