"""ViT's patch embedding (a Conv whose stride is its kernel, flattened and transposed to
[N, patches, M]) runs as one Gemm of all patches (core/rules/patch_embedding.c): on the CPU, the TEST device
and CUDA where a GPU is usable, no Conv runs and the result is the convolution's."""
import json

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import onyx.ort as ort

PROVIDERS = ['CPUExecutionProvider', 'OnyxTestExecutionProvider'] + (
    ['CUDAExecutionProvider'] if 'CUDAExecutionProvider' in ort.get_available_providers() else [])


def _model(n, c, hw, m, patch, dynamic_batch):
    rng = np.random.default_rng(8)
    w = (rng.standard_normal((m, c, patch, patch)) / np.sqrt(c * patch * patch)).astype(np.float32)
    b = rng.standard_normal(m).astype(np.float32)
    grid = (hw // patch) ** 2
    N = helper.make_node
    nodes = [N('Conv', ['x', 'w', 'b'], ['c'], kernel_shape=[patch, patch], strides=[patch, patch]),
             N('Reshape', ['c', 'flat'], ['cf']), N('Transpose', ['cf'], ['y'], perm=[0, 2, 1])]
    x = helper.make_tensor_value_info('x', TensorProto.FLOAT,
                                      ['batch' if dynamic_batch else n, c, hw, hw])
    inits = [numpy_helper.from_array(w, 'w'), numpy_helper.from_array(b, 'b'),
             numpy_helper.from_array(np.array([-1 if dynamic_batch else n, m, grid], np.int64),
                                     'flat')]
    graph = helper.make_graph(nodes, 'g', [x], [helper.make_tensor_value_info('y', TensorProto.FLOAT, None)],
                              inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17)]).SerializeToString(), w, b


def _reference(x, w, b, patch):
    n, c, hw, _ = x.shape
    g = hw // patch
    patches = x.reshape(n, c, g, patch, g, patch).transpose(0, 2, 4, 1, 3, 5).reshape(n, g * g, -1)
    return patches.astype(np.float64) @ w.reshape(w.shape[0], -1).T.astype(np.float64) + b


@pytest.mark.parametrize('dynamic_batch', [False, True])
@pytest.mark.parametrize('provider', PROVIDERS)
def test_patch_conv_runs_as_one_product(provider, dynamic_batch, tmp_path):
    n, c, hw, m, patch = 2, 3, 32, 24, 8
    model, w, b = _model(n, c, hw, m, patch, dynamic_batch)
    x = np.random.default_rng(9).standard_normal((n, c, hw, hw)).astype(np.float32)
    opts = ort.SessionOptions()
    opts.enable_profiling = True
    opts.profile_file_prefix = str(tmp_path / 'profile_')
    sess = ort.InferenceSession(model, opts, providers=[provider])
    (y,) = sess.run(None, {'x': x})
    with open(sess.end_profiling()) as f:
        ops = {e['args']['op_name'] for e in json.load(f)
               if e.get('cat') == 'Node' and 'op_name' in e.get('args', {})}
    np.testing.assert_allclose(y, _reference(x, w, b, patch), rtol=1e-4, atol=1e-5)
    assert 'Gemm' in ops and 'Conv' not in ops, ops
