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


@pytest.mark.parametrize('which', ['example', 'resnet'])
def test_serve_concurrent_requests(cluster, which, tmp_path):
    from ray import serve
    import onyx.serve
    if which == 'example':
        model, fmt, replicas = u.EXAMPLE, 'json', 1
    else:
        model = str(tmp_path / 'resnet_like.onnx')
        onnx.save(u.resnet_like(), model)
        fmt, replicas = 'npz', 2
    cases = str(tmp_path / 'cases.npz')
    u.write_cases(model, cases, count=8)
    app = onyx.serve.deployment(model, num_replicas=replicas, threads=1, max_batch_size=8,
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
        # 16 requests in flight against 1-2 replicas: serve.batch must have merged some.
        assert summary['batch_max'] > 1, summary
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
    try:
        req = urllib.request.Request(f'{cluster}/bad', data=json.dumps({'inputs': {'y': [[1.0]]}}).encode(),
                                     headers={'Content-Type': 'application/json'})
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(req, timeout=60)
        assert e.value.code == 400 and 'unknown input' in e.value.read().decode()
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
