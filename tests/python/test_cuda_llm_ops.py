"""The ops of onnxruntime-genai's decoder exports on CUDA, against onyx's CPU kernels, which match
onnxruntime's (test_contrib_nlp):
- com.microsoft MatMulNBits (kernels_cuda/contrib/matmulnbits.cu): 2-, 4- and 8-bit codes,
  blocks of 16 to 128 with a K that ends inside a block, no zero points / packed integer ones /
  float ones, a bias, float and float16 activations, and row counts on both of the kernel's paths
  (decode: up to 8 rows, one warp per column; prefill: dequantized panels and cuBLAS);
- SimplifiedLayerNormalization, SkipSimplifiedLayerNormalization and SkipLayerNormalization
  (kernels_cuda/norm/norm.cu): every output, skip broadcast over the batch, with and without bias;
- a tied int4 embedding's rows (ai.onyx GatherNBits, kernels_cuda/contrib/gathernbits.cu, which
  core/rules/tied_embedding.c makes of GatherBlockQuantized over the product's codes).
Each node must run on CUDA (the profile's provider), not fall back to the CPU. Runs where a GPU is
usable (tools/cuda/check.sh); without one there is no CUDA provider to test. GroupQueryAttention
(kernels_cuda/contrib/gqa.cu) and the tiny builder exports decoded on CUDA are in
test_device_run_shapes, which runs them on the TEST device everywhere and on CUDA where usable."""
import json

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import onyx.ort as ort

pytestmark = pytest.mark.skipif('CUDAExecutionProvider' not in ort.get_available_providers(),
                                reason='needs a GPU: the CUDA provider is not available here')

ELEM = {np.float32: TensorProto.FLOAT, np.float16: TensorProto.FLOAT16}


def _model(rng, k, n, bits, block, zp, bias, dtype):
    """A MatMulNBits node over random codes, scales, zero points (None, 'u8' packed, 'float')."""
    k_blocks, blob = -(-k // block), block * bits // 8
    inits = {'B': rng.integers(0, 256, (n, k_blocks, blob)).astype(np.uint8),
             'scales': (rng.standard_normal(n * k_blocks) * 0.05).astype(dtype)}
    inputs = ['A', 'B', 'scales']
    if zp == 'u8':
        inits['zp'] = rng.integers(0, 256, (n, -(-k_blocks * bits // 8))).astype(np.uint8)
    elif zp == 'float':
        inits['zp'] = rng.uniform(0, 2 ** bits - 1, n * k_blocks).astype(dtype)
    inputs.append('zp' if zp else '')
    if bias:
        inits['bias'] = rng.standard_normal(n).astype(dtype)
        inputs += ['', 'bias']
    node = helper.make_node('MatMulNBits', inputs, ['Y'], domain='com.microsoft', K=k, N=n,
                            bits=bits, block_size=block)
    t = ELEM[dtype]
    graph = helper.make_graph([node], 'g', [helper.make_tensor_value_info('A', t, ['M', k])],
                              [helper.make_tensor_value_info('Y', t, ['M', n])],
                              [numpy_helper.from_array(v, name) for name, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17),
                                                   helper.make_opsetid('com.microsoft', 1)])


def _run_cuda(model, feed, tmp_path, op='MatMulNBits'):
    """The first output on CUDA, and the providers that ran `op` (from the profile)."""
    ys, providers = _run_all_cuda(model, feed, tmp_path, op)
    return ys[0], providers


def _run_all_cuda(model, feed, tmp_path, op):
    opts = ort.SessionOptions()
    opts.enable_profiling = True
    opts.profile_file_prefix = str(tmp_path / 'profile_')
    sess = ort.InferenceSession(model.SerializeToString(), opts,
                                providers=['CUDAExecutionProvider'])
    ys = sess.run(None, feed)
    with open(sess.end_profiling()) as f:
        providers = {e['args'].get('provider') for e in json.load(f)
                     if e.get('cat') == 'Node' and e.get('args', {}).get('op_name') == op}
    return ys, providers


def _cpu(model, feed):
    return ort.InferenceSession(model.SerializeToString(),
                                providers=['CPUExecutionProvider']).run(None, feed)


@pytest.mark.parametrize('bits,block', [(4, 32), (4, 128), (2, 16), (8, 64)])
@pytest.mark.parametrize('zp', [None, 'u8', 'float'])
@pytest.mark.parametrize('rows', [1, 3, 8, 9, 70])
def test_matmul_nbits_cuda_equals_cpu(bits, block, zp, rows, tmp_path):
    rng = np.random.default_rng(bits * 1000 + block + rows)
    k, n = 3 * block - 5, 200   # K ends inside its last block
    model = _model(rng, k, n, bits, block, zp, bias=rows % 2 == 1, dtype=np.float32)
    feed = {'A': rng.standard_normal((rows, k)).astype(np.float32)}
    y, providers = _run_cuda(model, feed, tmp_path)
    (expected,) = ort.InferenceSession(model.SerializeToString(),
                                       providers=['CPUExecutionProvider']).run(None, feed)
    assert providers == {'CUDA'}
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize('rows', [1, 70])
def test_matmul_nbits_cuda_float16(rows, tmp_path):
    rng = np.random.default_rng(rows)
    k, n = 256, 96
    model = _model(rng, k, n, 4, 32, 'u8', bias=True, dtype=np.float16)
    feed = {'A': rng.standard_normal((rows, k)).astype(np.float16)}
    y, providers = _run_cuda(model, feed, tmp_path)
    (expected,) = ort.InferenceSession(model.SerializeToString(),
                                       providers=['CPUExecutionProvider']).run(None, feed)
    assert providers == {'CUDA'}
    np.testing.assert_allclose(y.astype(np.float32), expected.astype(np.float32), rtol=2e-2,
                               atol=2e-2)


def _norm_model(op, rows_shape, h, dtype, bias, skip_rows):
    """op over X [*rows_shape, h]: the skip forms take skip [skip_rows, h] broadcast over the batch
    (or X's shape) and give all four outputs; SimplifiedLayerNormalization gives Y and inv_std_var."""
    rng = np.random.default_rng(h + len(rows_shape))
    t = ELEM[dtype]
    x_shape = [*rows_shape, h]
    inits = {'gamma': rng.standard_normal(h).astype(dtype)}
    inputs, outs = ['X'], ['Y']
    vi = [helper.make_tensor_value_info('X', t, x_shape)]
    if op == 'SimplifiedLayerNormalization':
        inputs.append('gamma')
        outs.append('inv')
        out_types = [t, TensorProto.FLOAT]
        attrs = {'axis': -1, 'epsilon': 1e-5}
        domain = ''
    else:
        skip_shape = x_shape if skip_rows is None else [skip_rows, h]
        vi.append(helper.make_tensor_value_info('S', t, skip_shape))
        inputs += ['S', 'gamma']
        if op == 'SkipLayerNormalization':
            inits['beta'] = rng.standard_normal(h).astype(dtype)
            inputs.append('beta')
        if bias:
            inits['bias'] = rng.standard_normal(h).astype(dtype)
            inputs.append('bias')
        outs += ['mean', 'inv', 'sum']
        out_types = [t, TensorProto.FLOAT, TensorProto.FLOAT, t]
        attrs = {'epsilon': 1e-6}
        domain = 'com.microsoft'
    node = helper.make_node(op, inputs, outs, domain=domain, **attrs)
    graph = helper.make_graph([node], 'g', vi,
                              [helper.make_tensor_value_info(o, ot, None)
                               for o, ot in zip(outs, out_types)],
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17),
                                                    helper.make_opsetid('com.microsoft', 1)])
    feed = {'X': rng.standard_normal(x_shape).astype(dtype)}
    if op != 'SimplifiedLayerNormalization':
        feed['S'] = rng.standard_normal(skip_shape).astype(dtype)
    return model, feed


@pytest.mark.parametrize('op', ['SimplifiedLayerNormalization', 'SkipSimplifiedLayerNormalization',
                                'SkipLayerNormalization'])
@pytest.mark.parametrize('h', [896, 2048, 3000])
@pytest.mark.parametrize('dtype', [np.float32, np.float16])
@pytest.mark.parametrize('bias,skip_rows', [(False, None), (True, None), (True, 7)])
def test_llm_norms_cuda_equal_cpu(op, h, dtype, bias, skip_rows, tmp_path):
    model, feed = _norm_model(op, [2, 7], h, dtype, bias, skip_rows)
    got, providers = _run_all_cuda(model, feed, tmp_path, op)
    expected = _cpu(model, feed)
    assert providers == {'CUDA'}
    tol = 1e-4 if dtype == np.float32 else 1e-2
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g.astype(np.float32), e.astype(np.float32), rtol=tol, atol=tol)


def test_tied_int4_embedding_cuda_equals_cpu(tmp_path):
    from test_tied_weights import int4_tied   # MatMulNBits and GatherBlockQuantized on one B
    k, n = 256, 100
    model = int4_tied(k, n)
    rng = np.random.default_rng(9)
    feed = {'a': rng.standard_normal((1, 6, k)).astype(np.float32),
            'ids': np.array([[0, 99, 7, -1, -100, 40]], np.int64)}
    got, providers = _run_all_cuda(model, feed, tmp_path, 'GatherNBits')
    expected = _cpu(model, feed)
    assert providers == {'CUDA'}
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-4, atol=1e-4)   # the logits
    np.testing.assert_array_equal(got[1], expected[1])                      # the rows
