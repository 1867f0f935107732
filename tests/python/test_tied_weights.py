"""Tied embeddings hold their weight once more, not twice: onnxruntime-genai's builder reads the
embedding table of a tied model through the output projection's weight, as
Gather(Transpose(W)) in float (core/rules/tied_embedding.c gathers W's columns instead of folding
a transposed copy) and as GatherBlockQuantized(Reshape(B)) in int4 (read as ai.onyx GatherNBits,
rows of the product's weight in the product's form: at accuracy_level 4 the int8 repack, the
model's codes handed back). Measured as the growth of a fresh process's peak (VmHWM) when it
prepares and runs the model, less the same for a small one."""
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

MS = 'com.microsoft'
rng = np.random.default_rng(3)

PEAK_SCRIPT = textwrap.dedent('''
    import sys
    import numpy as np
    import onyx
    def peak_kib():
        # VmHWM: the peak; VmRSS (sys.argv[3] == 'held'): what is held after the runs
        field = 'VmRSS:' if sys.argv[3] == 'held' else 'VmHWM:'
        for line in open('/proc/self/status'):
            if line.startswith(field):
                return int(line.split()[1])
    k = int(sys.argv[2])
    data = open(sys.argv[1], 'rb').read()
    before = peak_kib()
    s = onyx.Session(data, threads=2)
    for rows in (1, 16):
        ids = np.arange(rows, dtype=np.int64)[None, :]
        s.run(None, {'a': np.ones((1, rows, k), np.float32), 'ids': ids})
    print(peak_kib() - before)
''')


def grown_kib(tmp_path, model, k, what='peak'):
    path = tmp_path / 'model.onnx'
    path.write_bytes(model.SerializeToString())
    script = tmp_path / 'peak.py'
    script.write_text(PEAK_SCRIPT)
    out = subprocess.run([sys.executable, str(script), str(path), str(k), what], capture_output=True,
                         text=True, env=dict(os.environ), check=True)
    return int(out.stdout.strip().splitlines()[-1])


def io(k, n):
    return ([h.make_tensor_value_info('a', TP.FLOAT, [1, None, k]),
             h.make_tensor_value_info('ids', TP.INT64, [1, None])],
            [h.make_tensor_value_info('logits', TP.FLOAT, None),
             h.make_tensor_value_info('emb', TP.FLOAT, None)])


def float_tied(k, n):
    """logits = a @ W, emb = Gather(Transpose(W), ids): W [k, n] float."""
    w = rng.standard_normal((k, n)).astype(np.float32)
    nodes = [h.make_node('MatMul', ['a', 'W'], ['logits']),
             h.make_node('Transpose', ['W'], ['WT'], perm=[1, 0]),
             h.make_node('Gather', ['WT', 'ids'], ['emb'])]
    ins, outs = io(k, n)
    g = h.make_graph(nodes, 'g', ins, outs, [nh.from_array(w, 'W')])
    return h.make_model(g, opset_imports=[h.make_opsetid('', 17)])


def int4_tied(k, n, level=0):
    """logits = MatMulNBits(a, B), emb = GatherBlockQuantized(Reshape(B, [n, k / 2]), ids)."""
    kb = k // 32
    b = rng.integers(0, 256, (n, kb, 16)).astype(np.uint8)
    s = (rng.random((n, kb)) * 0.02 + 0.005).astype(np.float32)
    nodes = [h.make_node('MatMulNBits', ['a', 'B', 's'], ['logits'], domain=MS, K=k, N=n, bits=4,
                         block_size=32, accuracy_level=level),
             h.make_node('Reshape', ['B', 'shape'], ['table']),
             h.make_node('GatherBlockQuantized', ['table', 'ids', 's'], ['emb'], domain=MS,
                         bits=4, block_size=32, gather_axis=0, quantize_axis=1)]
    ins, outs = io(k, n)
    inits = [nh.from_array(b, 'B'), nh.from_array(s, 's'),
             nh.from_array(np.array([n, k // 2], np.int64), 'shape')]
    g = h.make_graph(nodes, 'g', ins, outs, inits)
    return h.make_model(g, opset_imports=[h.make_opsetid('', 21), h.make_opsetid(MS, 1)])


def test_float_tied_embedding_holds_no_transposed_copy(tmp_path):
    k, n = 1024, 16384   # W: 64 MiB
    grown = grown_kib(tmp_path, float_tied(k, n), k) - grown_kib(tmp_path, float_tied(64, 256), 64)
    w_kib = k * n * 4 // 1024
    # the model's W and the product's packed copy: 2 x W; a folded transpose would make it 3
    assert grown < w_kib * 2.5, (grown, w_kib)


def test_int4_tied_embedding_holds_the_codes_once(tmp_path):
    k, n = 2048, 32768   # B: 32 MiB of codes, 8 MiB of scales
    grown = grown_kib(tmp_path, int4_tied(k, n), k) - grown_kib(tmp_path, int4_tied(64, 256), 64)
    codes_kib = n * k // 2 // 1024
    scales_kib = n * (k // 32) * 4 // 1024
    # the codes and scales once; a folded copy of the reshaped codes would add 32 MiB
    assert grown < codes_kib * 1.5 + scales_kib, (grown, codes_kib)


def test_int4_tied_embedding_at_level4_holds_the_codes_once(tmp_path):
    # the product repacks the codes for its int8 kernels: the rows come from that repack and the
    # model's codes go back to the system once both have prepared, where they were kept for the
    # gather before. What is held after the runs: the peak is reached while the repack is made
    # beside the model's codes.
    k, n = 2048, 32768   # B: 32 MiB of codes, 8 MiB of scales
    held = (grown_kib(tmp_path, int4_tied(k, n, 4), k, 'held') -
            grown_kib(tmp_path, int4_tied(64, 256, 4), 64, 'held'))
    codes_kib = n * k // 2 // 1024
    scales_kib = n * (k // 32) * 4 // 1024
    # the repack (codes and scales) and the model's scales; the codes twice would add 32 MiB
    assert held < codes_kib * 1.5 + scales_kib * 2, (held, codes_kib)


@pytest.mark.parametrize('level', [1, 4])
def test_int4_tied_rows_equal_onnxruntime(level):
    # level 1: rows from the codes as stored; level 4: from the product's int8 repack (N = 100:
    # a last group of 16 columns only partly used)
    ort = pytest.importorskip('onnxruntime')
    k, n = 256, 100
    model = int4_tied(k, n, level).SerializeToString()
    feed = {'a': rng.standard_normal((1, 6, k)).astype(np.float32),
            'ids': np.array([[0, 99, 7, -1, -100, 40]], np.int64)}
    want = ort.InferenceSession(model, providers=['CPUExecutionProvider']).run(None, feed)
    got = onyx.Session(model, threads=2).run(None, feed)
    np.testing.assert_array_equal(got[1], want[1])   # the rows, bit for bit
