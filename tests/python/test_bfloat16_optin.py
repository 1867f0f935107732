"""The bfloat16 opt-in (session config optimization.bfloat16=1): float Conv, MatMul and Gemm with
constant weights compute in bfloat16 (oneDNN; float where it has no fast bfloat16 kernel), the
rest in float. Results stay within bfloat16's precision of float64 references; on a CPU with
AVX-512 BF16 they must differ from the float32 session's (the opt-in took effect), and without
the entry they must not."""
import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

import onyx


def _cpu_has_bf16():
    try:
        with open('/proc/cpuinfo') as f:
            return 'avx512_bf16' in f.read()
    except OSError:
        return False


def _session(model, bf16):
    so = onyx.SessionOptions()
    if bf16 is not None:
        so.add_session_config_entry('optimization.bfloat16', '1' if bf16 else '0')
    return onyx.InferenceSession(model.SerializeToString(), so)


def _model():
    """x [2,16,12,12] -> Conv 3x3 (32) + Relu -> GlobalAveragePool -> Flatten -> MatMul [32,64]
    + bias -> Gemm [64,10] (transB)."""
    rng = np.random.default_rng(7)
    w = (rng.standard_normal((32, 16, 3, 3)) * 0.1).astype(np.float32)
    b = rng.standard_normal(32).astype(np.float32)
    m1 = (rng.standard_normal((32, 64)) * 0.2).astype(np.float32)
    b1 = rng.standard_normal(64).astype(np.float32)
    g = (rng.standard_normal((10, 64)) * 0.2).astype(np.float32)
    nodes = [h.make_node('Conv', ['x', 'w', 'b'], ['c'], pads=[1, 1, 1, 1]),
             h.make_node('Relu', ['c'], ['r']), h.make_node('GlobalAveragePool', ['r'], ['p']),
             h.make_node('Flatten', ['p'], ['f']), h.make_node('MatMul', ['f', 'm1'], ['m']),
             h.make_node('Add', ['m', 'b1'], ['mb']),
             h.make_node('Gemm', ['mb', 'g'], ['y'], transB=1)]
    graph = h.make_graph(nodes, 'bf16', [h.make_tensor_value_info('x', TP.FLOAT, [2, 16, 12, 12])],
                         [h.make_tensor_value_info('y', TP.FLOAT, [2, 10])],
                         [nh.from_array(v, n) for n, v in (('w', w), ('b', b), ('m1', m1), ('b1', b1), ('g', g))])
    model = h.make_model(graph, opset_imports=[h.make_opsetid('', 17)])

    def reference(x):
        x = x.astype(np.float64)
        xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
        cols = np.stack([xp[:, :, i:i + 12, j:j + 12] for i in range(3) for j in range(3)], 2)
        c = np.einsum('nckhw,ock->nohw', cols, w.reshape(32, 16, 9).astype(np.float64)) + b[:, None, None]
        f = np.maximum(c, 0).mean((2, 3))
        return (f @ m1 + b1) @ g.T.astype(np.float64)
    return model, reference


def test_bf16_within_its_precision():
    model, reference = _model()
    x = np.random.default_rng(1).uniform(-1, 1, (2, 16, 12, 12)).astype(np.float32)
    want = reference(x)
    exact = _session(model, None).run(None, {'x': x})[0]
    low = _session(model, True).run(None, {'x': x})[0]
    np.testing.assert_allclose(exact, want, rtol=1e-4, atol=1e-4)
    scale = np.abs(want).max()
    # bfloat16 keeps 8 significant bits: operands rounded by up to 2^-9 relative
    assert np.abs(low - want).max() <= 2e-2 * scale, (np.abs(low - want).max(), scale)
    np.testing.assert_array_equal(_session(model, False).run(None, {'x': x})[0], exact)
    if _cpu_has_bf16():
        assert not np.array_equal(low, exact), 'the bfloat16 opt-in had no effect on a CPU with AVX-512 BF16'


def test_bf16_config_refuses_other_values():
    so = onyx.SessionOptions()
    so.add_session_config_entry('optimization.bfloat16', 'yes')
    model, _ = _model()
    with pytest.raises(Exception, match='optimization.bfloat16'):
        onyx.InferenceSession(model.SerializeToString(), so)
