"""Float products with a constant weight hold it once, packed. The one-row path (a decoder's step, a
classifier at batch 1) reads the many-row primitive's packed B instead of packing its own; and a
session that holds its model alone (onyx.Session, the onnxruntime API, the C API's
onyx_prepare_session_owning) hands the model's copy of such a weight back once it is packed
(core/shared.h), so its peak memory is about the weights once, not twice. Results against numpy
over K and N that leave padding in the packed panels, Gemm's alpha and transB, a fused bias and
activation on the one-row path, new shapes after the weights were handed back (M = 1, many, 0,
then many again), and a weight read by two products (kept)."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

import onyx

rng = np.random.default_rng(2711)


def save(nodes, k, n, inits):
    g = h.make_graph(nodes, 'g', [h.make_tensor_value_info('a', TP.FLOAT, ['m', k])],
                     [h.make_tensor_value_info('y', TP.FLOAT, ['m', n])],
                     [nh.from_array(v, name) for name, v in inits.items()])
    return h.make_model(g, opset_imports=[h.make_opsetid('', 17)]).SerializeToString()


def check(data, want, k, rows=(1, 5, 64, 1)):
    s = onyx.Session(data, threads=2)
    for m in rows:  # one row, then many, then one again: the plans share the packed B
        a = rng.standard_normal((m, k)).astype(np.float32)
        got = s.run(None, {'a': a})[0]
        np.testing.assert_allclose(got, want(a.astype(np.float64)), rtol=2e-5, atol=2e-5 * k)


@pytest.mark.parametrize('k,n', [(96, 64), (300, 200), (770, 1000)])
def test_matmul_one_row_and_many(k, n):
    b = rng.standard_normal((k, n)).astype(np.float32)
    data = save([h.make_node('MatMul', ['a', 'b'], ['y'])], k, n, {'b': b})
    check(data, lambda a: a @ b, k)


@pytest.mark.parametrize('k,n', [(130, 70), (512, 256)])
def test_gemm_alpha_transposed_b_and_bias(k, n):
    bt = rng.standard_normal((n, k)).astype(np.float32)
    c = rng.standard_normal(n).astype(np.float32)
    node = h.make_node('Gemm', ['a', 'b', 'c'], ['y'], alpha=0.5, beta=2.0, transB=1)
    data = save([node], k, n, {'b': bt, 'c': c})
    check(data, lambda a: 0.5 * a @ bt.T + 2.0 * c, k)


def test_fused_bias_and_activation_on_one_row():
    k, n = 200, 130
    b = rng.standard_normal((k, n)).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    nodes = [h.make_node('MatMul', ['a', 'b'], ['p']), h.make_node('Add', ['p', 'bias'], ['q']),
             h.make_node('Relu', ['q'], ['y'])]
    data = save(nodes, k, n, {'b': b, 'bias': bias})
    check(data, lambda a: np.maximum(a @ b + bias, 0), k)


# VmHWM of a fresh process (exec: its high-water mark starts from nothing), as in
# test_matmul_nbits_packed.py
PEAK_SCRIPT = textwrap.dedent('''
    import sys
    import numpy as np
    import onyx
    def peak_kib():
        for line in open('/proc/self/status'):
            if line.startswith('VmHWM:'):
                return int(line.split()[1])
    k = int(sys.argv[2])
    data = open(sys.argv[1], 'rb').read()
    before = peak_kib()
    s = onyx.Session(data, threads=2)
    for rows in map(int, sys.argv[3].split(',')):
        s.run(None, {'a': np.ones((rows, k), np.float32)})
    print(peak_kib() - before)
''')


def layers(count, d, seed=0):
    """A chain of `count` MatMuls by d x d weights, and the same in numpy."""
    r = np.random.default_rng(seed)
    ws = {f'w{i}': (r.standard_normal((d, d)) / d ** 0.5).astype(np.float32) for i in range(count)}
    nodes, x = [], 'a'
    for i in range(count):
        nodes.append(h.make_node('MatMul', [x, f'w{i}'], [f'h{i}']))
        x = f'h{i}'
    nodes.append(h.make_node('Identity', [x], ['y']))

    def want(a):
        for i in range(count):
            a = a @ ws[f'w{i}'].astype(np.float64)
        return a
    return save(nodes, d, d, ws), want


def grown_kib(tmp_path, data, k, rows='1,128,1'):
    path = tmp_path / f'm{len(data)}.onnx'
    path.write_bytes(data)
    script = tmp_path / 'peak.py'
    script.write_text(PEAK_SCRIPT)
    out = subprocess.run([sys.executable, str(script), str(path), str(k), rows],
                         capture_output=True, text=True, env=dict(os.environ), check=True)
    return int(out.stdout.strip().splitlines()[-1])


def test_one_packed_copy_for_one_row_and_many(tmp_path):
    k, n = 2048, 4096
    one = save([h.make_node('MatMul', ['a', 'b'], ['y'])], k, n, {'b': np.ones((k, n), np.float32)})
    small = save([h.make_node('MatMul', ['a', 'b'], ['y'])], 256, 256,
                 {'b': np.ones((256, 256), np.float32)})
    # what a session and its first products cost whatever the weight is measured on a small
    # weight run the same way, and taken off
    grown = grown_kib(tmp_path, one, k) - grown_kib(tmp_path, small, 256)
    weight_kib = k * n * 4 // 1024   # 32 MiB
    # the model's copy while it is packed, and one packed copy; a second packed copy (one per
    # path) is 3x
    assert grown < weight_kib * 2.5, (grown, weight_kib)


# the second: every run a new row count, so that a generic plan (rows known at run) takes over
@pytest.mark.parametrize('rows', ['1,128,1', '1,2,3,4,5,6,64,7,1'])
def test_weights_held_once(tmp_path, rows):
    count, d = 8, 1024
    data, _ = layers(count, d)
    small, _ = layers(1, 256)
    grown = grown_kib(tmp_path, data, d, rows) - grown_kib(tmp_path, small, 256, rows)
    weights_kib = count * d * d * 4 // 1024   # 32 MiB
    # packed copies, plus one weight's model copy while it is packed; both copies held is 2x
    assert grown < weights_kib * 1.5, (grown, weights_kib)


def test_new_shapes_after_weights_handed_back():
    data, want = layers(4, 300, seed=5)
    s = onyx.Session(data, threads=2)
    for m in (64, 1, 7, 0, 130, 1):  # M = 0 reads B as stored: it is rebuilt first
        a = rng.standard_normal((m, 300)).astype(np.float32)
        got = s.run(None, {'a': a})[0]
        assert got.shape == (m, 300)
        np.testing.assert_allclose(got, want(a.astype(np.float64)), rtol=1e-4, atol=1e-4)


def test_weight_read_twice_is_kept():
    k = 200
    b = rng.standard_normal((k, k)).astype(np.float32)
    nodes = [h.make_node('MatMul', ['a', 'b'], ['p']), h.make_node('MatMul', ['p', 'b'], ['q']),
             h.make_node('Mul', ['q', 'b'], ['y'])]
    data = save(nodes, k, k, {'b': b})
    check(data, lambda a: (a @ b @ b) * b, k, rows=(1, 200, 1))
