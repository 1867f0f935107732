"""Attention (ai.onnx 23, 24, 25) on the CPU against onnx's reference implementation, over the
combinations the node tests leave out: onnx 1.23's meaning of a row every key is masked from (0,
not NaN), the causal band aligned bottom-right with nonpad_kv_seqlen, v25's sliding window with
each cache and mask, sequences long enough to be computed in several blocks of rows (each block
computing only the keys its rows may see), grouped heads decoding. Also what onyx refuses, and
attention spelled out (MatMul, Softmax, MatMul) that the planner fuses into the same kernel: there
a row of -inf scores stays NaN, as the spelled-out Softmax makes it. Each on the CPU, on onyx's
TEST device (which runs the CPU's Attention kernel on copies of its inputs) and on CUDA where a GPU
is usable (its flash kernel; nodes with a past cache or the Q*K^T output stay on the CPU)."""
import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import onyx.ort as ort

pytestmark = pytest.mark.skipif(
    tuple(int(p) for p in onnx.__version__.split('.')[:2]) < (1, 23),
    reason='the fully-masked-row and bottom-right causal meaning is onnx 1.23 reference behaviour')

PROVIDERS = ['CPUExecutionProvider', 'OnyxTestExecutionProvider'] + (
    ['CUDAExecutionProvider'] if 'CUDAExecutionProvider' in ort.get_available_providers() else [])
INPUTS = ['Q', 'K', 'V', 'attn_mask', 'past_key', 'past_value', 'nonpad_kv_seqlen']


def _model(opset, feeds, attrs, n_out):
    names = [n if feeds.get(n) is not None else '' for n in INPUTS]
    while names and not names[-1]:
        names.pop()
    outs = ['Y', 'present_key', 'present_value', 'qk'][:n_out]
    node = helper.make_node('Attention', names, outs, **attrs)
    ins = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(feeds[n].dtype),
                                         feeds[n].shape) for n in names if n]
    graph = helper.make_graph([node], 'g', ins,
                              [helper.make_tensor_value_info(o, 0, None) for o in outs])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid('', opset)])


def _run(model, feeds, threads=2, provider=PROVIDERS[0]):
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=[provider])
    return sess.run(None, {k: v for k, v in feeds.items() if v is not None})


def _check(opset, feeds, attrs, n_out=1, threads=2, provider=PROVIDERS[0]):
    model = _model(opset, feeds, attrs, n_out)
    got = _run(model, feeds, threads, provider)
    want = ReferenceEvaluator(model).run(None, {k: v for k, v in feeds.items() if v is not None})
    if attrs.get('qk_matmul_output_mode', 0) == 0 and attrs.get('softcap') and n_out == 4:
        # onnx's reference returns the softcapped scores in mode 0; its function body, the
        # attribute's doc ("raw QK matmul result") and onnxruntime give the raw product
        want[3] = None
    for i, (g, w) in enumerate(zip(got, want)):
        if w is None:
            continue
        assert g.shape == w.shape, f'output {i}'
        np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-5, err_msg=f'output {i}')
    return got


def _f(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


# (name, opset, attrs, builder(rng) -> feeds, outputs)
CASES = []


def case(name, opset, attrs, n_out=1):
    def add(build):
        CASES.append(pytest.param(opset, attrs, build, n_out, id=name))
        return build
    return add


@case('v23_bool_row_all_false_mode3', 23, {'qk_matmul_output_mode': 3}, 4)
def _(rng):
    mask = rng.random((2, 1, 5, 7)) > 0.4
    mask[0, 0, 2] = False
    mask[1, 0, 4] = False
    return {'Q': _f(rng, 2, 3, 5, 8), 'K': _f(rng, 2, 3, 7, 8), 'V': _f(rng, 2, 3, 7, 4),
            'attn_mask': mask}


@case('v23_float_row_neginf_causal_past', 23, {'is_causal': 1, 'qk_matmul_output_mode': 2}, 4)
def _(rng):
    mask = _f(rng, 4, 9)
    mask[1, :] = -np.inf
    mask[3, :7] = -np.inf  # open only past the causal band: masked out all the same
    return {'Q': _f(rng, 1, 2, 4, 8), 'K': _f(rng, 1, 2, 4, 8), 'V': _f(rng, 1, 2, 4, 8),
            'attn_mask': mask, 'past_key': _f(rng, 1, 2, 5, 8), 'past_value': _f(rng, 1, 2, 5, 8)}


@case('v24_causal_nonpad_mask_softcap', 24, {'is_causal': 1, 'softcap': 2.5,
                                             'qk_matmul_output_mode': 3}, 4)
def _(rng):
    return {'Q': _f(rng, 3, 2, 4, 8), 'K': _f(rng, 3, 2, 10, 8), 'V': _f(rng, 3, 2, 10, 6),
            'attn_mask': rng.random((3, 1, 4, 10)) > 0.2,
            'nonpad_kv_seqlen': np.array([10, 6, 2], np.int64)}


@case('v24_causal_nonpad_gqa_decode', 24, {'is_causal': 1})
def _(rng):  # one query position, the heads of a group as the rows of one product
    return {'Q': _f(rng, 3, 8, 1, 16), 'K': _f(rng, 3, 2, 12, 16), 'V': _f(rng, 3, 2, 12, 16),
            'nonpad_kv_seqlen': np.array([12, 5, 0], np.int64)}


@case('v24_causal_nonpad_long_blocks', 24, {'is_causal': 1})
def _(rng):  # several blocks of rows per head; a batch whose first rows see no key
    return {'Q': _f(rng, 2, 1, 150, 8), 'K': _f(rng, 2, 1, 230, 8), 'V': _f(rng, 2, 1, 230, 8),
            'nonpad_kv_seqlen': np.array([230, 120], np.int64)}


@case('v24_nonpad_beyond_keys_3d', 24, {'is_causal': 1, 'q_num_heads': 4, 'kv_num_heads': 2})
def _(rng):  # out of contract (more valid keys than keys): the reference's offsets all the same
    return {'Q': _f(rng, 2, 3, 32), 'K': _f(rng, 2, 6, 16), 'V': _f(rng, 2, 6, 16),
            'nonpad_kv_seqlen': np.array([9, -1], np.int64)}


@case('v25_window_left', 25, {'left_window_size': 2, 'right_window_size': 0}, 4)
def _(rng):
    return {'Q': _f(rng, 1, 2, 6, 8), 'K': _f(rng, 1, 2, 6, 8), 'V': _f(rng, 1, 2, 6, 8)}


@case('v25_window_both_mode2', 25, {'left_window_size': 1, 'right_window_size': 2,
                                    'qk_matmul_output_mode': 2}, 4)
def _(rng):
    return {'Q': _f(rng, 2, 2, 5, 8), 'K': _f(rng, 2, 2, 7, 8), 'V': _f(rng, 2, 2, 7, 8),
            'attn_mask': _f(rng, 5, 7)}


@case('v25_window_causal_past_3d', 25, {'is_causal': 1, 'left_window_size': 3,
                                        'q_num_heads': 4, 'kv_num_heads': 2}, 3)
def _(rng):
    return {'Q': _f(rng, 2, 3, 32), 'K': _f(rng, 2, 3, 16), 'V': _f(rng, 2, 3, 16),
            'past_key': _f(rng, 2, 2, 6, 8), 'past_value': _f(rng, 2, 2, 6, 8)}


@case('v25_window_nonpad_rank3_mask', 25, {'left_window_size': 2, 'right_window_size': 1,
                                           'qk_matmul_output_mode': 3}, 4)
def _(rng):
    mask = rng.random((2, 4, 9)) > 0.3  # (heads, q, kv): not a batch dim
    mask[1, 2, :] = False
    return {'Q': _f(rng, 3, 2, 4, 8), 'K': _f(rng, 3, 2, 9, 8), 'V': _f(rng, 3, 2, 9, 8),
            'attn_mask': mask, 'nonpad_kv_seqlen': np.array([9, 5, 1], np.int64)}


@case('v25_window_right_only_short_mask', 25, {'right_window_size': 1})
def _(rng):
    return {'Q': _f(rng, 1, 2, 6, 8), 'K': _f(rng, 1, 2, 8, 8), 'V': _f(rng, 1, 2, 8, 8),
            'attn_mask': _f(rng, 1, 1, 6, 5)}


@case('v25_window_zero', 25, {'left_window_size': 0, 'right_window_size': 0})
def _(rng):  # each query sees its own position alone; rows past the keys see none
    return {'Q': _f(rng, 1, 2, 6, 8), 'K': _f(rng, 1, 2, 4, 8), 'V': _f(rng, 1, 2, 4, 8)}


@case('v25_window_long_blocks', 25, {'left_window_size': 40, 'is_causal': 1})
def _(rng):  # blocks of rows start past the first keys: the products skip them
    return {'Q': _f(rng, 1, 2, 300, 8), 'K': _f(rng, 1, 2, 300, 8), 'V': _f(rng, 1, 2, 300, 8)}


@case('v25_window_long_gqa_decode_nonpad', 25, {'left_window_size': 16, 'is_causal': 1})
def _(rng):
    return {'Q': _f(rng, 2, 6, 1, 8), 'K': _f(rng, 2, 2, 200, 8), 'V': _f(rng, 2, 2, 200, 8),
            'nonpad_kv_seqlen': np.array([180, 9], np.int64)}


@case('v25_window_huge', 25, {'left_window_size': 2 ** 62, 'right_window_size': 2 ** 62})
def _(rng):
    return {'Q': _f(rng, 1, 1, 3, 4), 'K': _f(rng, 1, 1, 5, 4), 'V': _f(rng, 1, 1, 5, 4),
            'nonpad_kv_seqlen': np.array([2 ** 62], np.int64)}


@case('v24_mode0_softcap_raw', 24, {'softcap': 1.5, 'qk_matmul_output_mode': 0}, 4)
def _(rng):
    return {'Q': _f(rng, 1, 2, 3, 4) * 3, 'K': _f(rng, 1, 2, 5, 4), 'V': _f(rng, 1, 2, 5, 4)}


@pytest.mark.parametrize('provider', PROVIDERS)
@pytest.mark.parametrize('opset,attrs,build,n_out', CASES)
def test_attention_matches_reference(opset, attrs, build, n_out, provider):
    feeds = build(np.random.default_rng(len(attrs) + opset))
    got = _check(opset, feeds, attrs, n_out, provider=provider)
    if attrs.get('qk_matmul_output_mode', 0) == 0 and attrs.get('softcap') and n_out == 4:
        q, k = feeds['Q'], feeds['K']
        np.testing.assert_allclose(got[3], q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1]),
                                   rtol=1e-5, atol=1e-5)


def test_single_thread_matches():
    rng = np.random.default_rng(3)
    feeds = {'Q': _f(rng, 1, 2, 300, 8), 'K': _f(rng, 1, 2, 300, 8), 'V': _f(rng, 1, 2, 300, 8)}
    _check(25, feeds, {'left_window_size': 7, 'right_window_size': 3}, threads=1)


@pytest.mark.parametrize('opset,attrs,feeds,what', [
    (24, {}, 'past_nonpad', 'nonpad_kv_seqlen cannot be combined'),
    (25, {'left_window_size': -2}, None, 'left_window_size'),
    (25, {'right_window_size': -5}, None, 'right_window_size'),
    (25, {'q_num_heads': 2, 'kv_num_heads': 2}, None, 'q_num_heads'),
])
def test_refused(opset, attrs, feeds, what):
    rng = np.random.default_rng(0)
    f = {'Q': _f(rng, 1, 2, 3, 4), 'K': _f(rng, 1, 2, 3, 4), 'V': _f(rng, 1, 2, 3, 4)}
    if feeds == 'past_nonpad':
        f.update(past_key=_f(rng, 1, 2, 2, 4), past_value=_f(rng, 1, 2, 2, 4),
                 nonpad_kv_seqlen=np.array([5], np.int64))
    with pytest.raises(Exception, match=what):
        _run(_model(opset, f, attrs, 1), f)


def _spelled_out(zero_nan):
    """Attention spelled out, scores + mask through Softmax; zero_nan: torch's Where(IsNaN(P), 0,
    P) after it."""
    n = helper.make_node
    nodes = [n('MatMul', ['q', 'kt'], ['s']), n('Mul', ['s', 'c'], ['ss']),
             n('Add', ['ss', 'mask'], ['sm']), n('Softmax', ['sm'], ['p'], axis=-1)]
    if zero_nan:
        nodes += [n('IsNaN', ['p'], ['nan']), n('Where', ['nan', 'zero', 'p'], ['pz'])]
    nodes.append(n('MatMul', ['pz' if zero_nan else 'p', 'v'], ['y']))
    shapes = {'q': [1, 2, 6, 4], 'kt': [1, 2, 4, 7], 'v': [1, 2, 7, 3], 'mask': [1, 2, 6, 7]}
    graph = helper.make_graph(
        nodes, 'g', [helper.make_tensor_value_info(k, TensorProto.FLOAT, s)
                     for k, s in shapes.items()],
        [helper.make_tensor_value_info('y', TensorProto.FLOAT, [1, 2, 6, 3])],
        [numpy_helper.from_array(np.array(0.5, np.float32), 'c'),
         numpy_helper.from_array(np.array(0.0, np.float32), 'zero')])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid('', 18)])


@pytest.mark.parametrize('provider', PROVIDERS)
@pytest.mark.parametrize('zero_nan', [False, True])
def test_fused_chain_masked_row(zero_nan, provider, tmp_path):
    """The fused chain computes what its nodes do: a Softmax over a row of -inf is NaN (0 only
    where the graph itself zeroes NaN), unlike the Attention op's masked-out rows."""
    rng = np.random.default_rng(1)
    mask = np.zeros((1, 2, 6, 7), np.float32)
    mask[0, 0, [1, 4]] = -np.inf
    feeds = {'q': _f(rng, 1, 2, 6, 4), 'kt': _f(rng, 1, 2, 4, 7), 'v': _f(rng, 1, 2, 7, 3),
             'mask': mask}
    model = _spelled_out(zero_nan)
    opts = ort.SessionOptions()
    opts.enable_profiling = True
    opts.profile_file_prefix = str(tmp_path / 'profile_')
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=[provider])
    (y,) = sess.run(None, feeds)
    with open(sess.end_profiling()) as f:
        ops = {e['args']['op_name'] for e in json.load(f)
               if e.get('cat') == 'Node' and 'op_name' in e.get('args', {})}
    if provider == PROVIDERS[0] or not zero_nan:  # (TEST has no IsNaN: its chain stops there)
        assert 'Attention' in ops and 'Softmax' not in ops  # it ran fused
    (want,) = ReferenceEvaluator(model).run(None, feeds)
    assert np.isnan(want[0, 0, 1]).all() != zero_nan
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize('provider', PROVIDERS)
@pytest.mark.parametrize('mask_shape', [[4, 6, 7], [1, 6, 7], [4, 1, 7], [7]])
def test_fused_chain_of_rank_3(mask_shape, provider, tmp_path):
    """A chain over [B*H, rows, cols] operands (rank 3: the fused node's geometry has batch 1 and
    B*H heads) with masks broadcast along each leading dim computes what its nodes do."""
    n = helper.make_node
    nodes = [n('MatMul', ['q', 'kt'], ['s']), n('Mul', ['s', 'c'], ['ss']),
             n('Add', ['ss', 'mask'], ['sm']), n('Softmax', ['sm'], ['p'], axis=-1),
             n('MatMul', ['p', 'v'], ['y'])]
    shapes = {'q': [4, 6, 5], 'kt': [4, 5, 7], 'v': [4, 7, 3], 'mask': mask_shape}
    graph = helper.make_graph(
        nodes, 'g', [helper.make_tensor_value_info(k, TensorProto.FLOAT, s)
                     for k, s in shapes.items()],
        [helper.make_tensor_value_info('y', TensorProto.FLOAT, [4, 6, 3])],
        [numpy_helper.from_array(np.array(0.5, np.float32), 'c')])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 18)])
    rng = np.random.default_rng(2)
    feeds = {k: _f(rng, *s) for k, s in shapes.items()}
    opts = ort.SessionOptions()
    opts.enable_profiling = True
    opts.profile_file_prefix = str(tmp_path / 'profile_')
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=[provider])
    (y,) = sess.run(None, feeds)
    with open(sess.end_profiling()) as f:
        ops = {e['args']['op_name'] for e in json.load(f)
               if e.get('cat') == 'Node' and 'op_name' in e.get('args', {})}
    assert 'Attention' in ops and 'Softmax' not in ops  # it ran fused
    (want,) = ReferenceEvaluator(model).run(None, feeds)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
