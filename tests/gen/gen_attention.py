# Attention family cases the node tests miss: float16 and double, sequences long enough to split
# across threads (several row blocks per head), masks shorter than the total length with
# nonpad_kv_seqlen, integer masks, symbolic shapes (scratch sized at run time), v25's sliding
# window over long sequences. (tests/python/test_attention_semantics.py: the combinations.)
import numpy as np
from onnx import helper as h

from common import case, declare_outputs, node_model, reference, value_info


def _is16(v):
    return v is not None and (v.dtype == np.float16 or v.dtype.name == 'bfloat16')


def half_case(s, name, op, inputs, attrs, opset, n_out=1):
    """float16 (or bfloat16) inputs; the expectation is the float32 reference rounded to that
    type, since the kernels compute in float. bfloat16 allows one unit in the last place: a float
    result a few float ulps from the reference's rounds to the neighbouring bfloat16 where the two
    straddle a rounding boundary (the tensor-core kernel sums P V in another order)."""
    model, feeds = node_model(op, [v.astype(np.float32) if _is16(v) else v for v in inputs],
                              attrs, opset, n_out)
    ref = reference(model, feeds)
    t = next(v.dtype for v in inputs if _is16(v))
    case(s, name, op, inputs, expected=[r.astype(t) for r in ref], attrs=attrs, opset=opset,
         n_out=n_out, rtol=2.0 ** -7 if t.name == 'bfloat16' else None)


def generate(s):
    rng = np.random.default_rng(7)

    def f(*shape, dt=np.float32):
        return rng.standard_normal(shape).astype(dt)

    # Long sequences: 5 row blocks per head, causal with a past cache and a float mask.
    case(s, 'test_att_long_causal_past', 'Attention',
         [f(1, 2, 300, 16), f(1, 2, 260, 16), f(1, 2, 260, 16), f(300, 300), f(1, 2, 40, 16), f(1, 2, 40, 16)],
         attrs={'is_causal': 1}, opset=23, n_out=3)
    # 3-D GQA, long, bool mask broadcast over heads, Q*K^T after the mask.
    case(s, 'test_att_long_3d_gqa_bool', 'Attention',
         [f(1, 130, 64), f(1, 150, 32), f(1, 150, 48), rng.random((1, 1, 130, 150)) > 0.2],
         attrs={'q_num_heads': 4, 'kv_num_heads': 2, 'qk_matmul_output_mode': 2}, opset=23, n_out=4)
    # One head: its rows split across the (two) threads; two heads of 340 positions with a mask
    # (a head a task); two heads of 1200 queries over 2100 keys: three blocks of 400 rows each
    # (a task's score block is at most 1M floats).
    case(s, 'test_att_one_head_split', 'Attention',
         [f(1, 1, 100, 8), f(1, 1, 100, 8), f(1, 1, 100, 8)], attrs={'is_causal': 1}, opset=23)
    case(s, 'test_att_long_rows_mask', 'Attention',
         [f(1, 2, 340, 16), f(1, 2, 340, 16), f(1, 2, 340, 16), f(340, 340)], opset=23)
    case(s, 'test_att_long_even_blocks', 'Attention',
         [f(1, 2, 1200, 4), f(1, 2, 2100, 4), f(1, 2, 2100, 4)], opset=23)
    # v24: a mask shorter than the kv length (padded with -inf) and per-batch valid lengths.
    case(s, 'test_att_v24_short_mask_nonpad', 'Attention',
         [f(3, 2, 5, 8), f(3, 2, 9, 8), f(3, 2, 9, 6), f(3, 1, 5, 7), None, None,
          np.array([9, 4, 6], np.int64)], attrs={'softcap': 3.0}, opset=24)
    # decoding (one query position) with grouped heads as the rows of one product: 3-D with a
    # mask and the softmax output, and 130 query heads on one kv head (three row blocks)
    case(s, 'test_att_decode_gqa_3d', 'Attention',
         [f(2, 1, 8 * 6), f(2, 7, 2 * 6), f(2, 7, 2 * 5), f(2, 1, 1, 7), f(2, 2, 3, 6), f(2, 2, 3, 5)],
         attrs={'q_num_heads': 8, 'kv_num_heads': 2, 'qk_matmul_output_mode': 3}, opset=23, n_out=4)
    case(s, 'test_att_decode_mqa_many_heads', 'Attention',
         [f(1, 130, 1, 8), f(1, 1, 20, 8), f(1, 1, 20, 8)], attrs={'is_causal': 1}, opset=23)
    # a batch whose keys are all padding: its rows are 0, as onnx 1.23 says of a row no key is
    # left to
    case(s, 'test_att_v24_nonpad_zero', 'Attention',
         [f(2, 2, 3, 4), f(2, 2, 5, 4), f(2, 2, 5, 4), f(2, 1, 3, 5), None, None, np.array([0, 3], np.int64)],
         opset=24)
    # v25's sliding window: blocks of rows past the first keys (the products skip those), with a
    # float mask, causal; and decoding with grouped heads over an external cache
    case(s, 'test_att_v25_window_long_mask', 'Attention',
         [f(1, 2, 260, 8), f(1, 2, 260, 8), f(1, 2, 260, 8), f(260, 260)],
         attrs={'left_window_size': 30, 'right_window_size': 5}, opset=25)
    case(s, 'test_att_v25_window_causal_decode_nonpad', 'Attention',
         [f(2, 8, 1, 8), f(2, 2, 90, 8), f(2, 2, 90, 8), None, None, None,
          np.array([90, 33], np.int64)], attrs={'left_window_size': 20, 'is_causal': 1}, opset=25)
    # masks that close the last columns of every row of a block (a causal band, padded keys):
    # the products stop at the last column some row keeps open. Float -inf in blocks of 218
    # rows over 300 keys (the last 30 padded), bool per batch and row, and a float mask whose
    # rows close at -3.4e38 (torch.finfo(float).min) rather than -inf
    rows, keys = np.arange(300)[:, None], np.arange(300)[None, :]
    band = np.where((keys > rows) | (keys >= 270), -np.inf, 0).astype(np.float32)
    case(s, 'test_att_mask_closes_columns', 'Attention',
         [f(2, 2, 300, 8), f(2, 2, 300, 8), f(2, 2, 300, 8), band], opset=23)
    # no query at all, with a mask of no rows and the present K/V still wanted: nothing reads the
    # mask (it has no first row to look at)
    case(s, 'test_att_no_queries_empty_mask', 'Attention',
         [f(1, 2, 0, 4), f(1, 2, 6, 4), f(1, 2, 6, 4), f(0, 6)], opset=23, n_out=3)
    keep = np.arange(9)[None, None, None, :] < rng.integers(1, 10, (2, 1, 5, 1))
    case(s, 'test_att_bool_mask_closes_columns', 'Attention',
         [f(2, 2, 5, 4), f(2, 2, 9, 4), f(2, 2, 9, 4), keep], opset=23)
    lowest = np.where(keys[:, :40] > rows[:30] + 10, np.finfo(np.float32).min, 0).astype(np.float32)
    case(s, 'test_att_lowest_mask_closes_columns', 'Attention',
         [f(1, 3, 30, 8), f(1, 3, 40, 8), f(1, 3, 40, 8), lowest], opset=23)
    # integer mask added as numbers
    case(s, 'test_att_int_mask', 'Attention',
         [f(2, 2, 4, 8), f(2, 2, 5, 8), f(2, 2, 5, 8), rng.integers(-3, 2, (4, 5)).astype(np.int32)],
         opset=23)
    case(s, 'test_att_double_3d_scaled', 'Attention',
         [f(2, 5, 12, dt=np.float64), f(2, 7, 12, dt=np.float64), f(2, 7, 6, dt=np.float64)],
         attrs={'q_num_heads': 3, 'kv_num_heads': 3, 'scale': 0.3, 'qk_matmul_output_mode': 3},
         opset=23, n_out=4)
    case(s, 'test_att_sym_past_qk', 'Attention',
         [f(2, 4, 3, 8), f(2, 2, 5, 8), f(2, 2, 5, 4), f(2, 1, 3, 9), f(2, 2, 4, 8), f(2, 2, 4, 4)],
         attrs={'qk_matmul_output_mode': 1, 'softcap': 2.0}, opset=23, n_out=4, sym=True)
    half_case(s, 'test_att_fp16_3d_causal_past', 'Attention',
              [f(2, 6, 32, dt=np.float16), f(2, 6, 16, dt=np.float16), f(2, 6, 16, dt=np.float16), None,
               f(2, 2, 3, 8, dt=np.float16), f(2, 2, 3, 8, dt=np.float16)],
              {'q_num_heads': 4, 'kv_num_heads': 2, 'is_causal': 1}, 23, n_out=3)
    half_case(s, 'test_att_fp16_long', 'Attention',
              [f(1, 3, 200, 16, dt=np.float16), f(1, 3, 200, 16, dt=np.float16),
               f(1, 3, 200, 16, dt=np.float16)], {'is_causal': 1}, 23)
    # CUDA's tensor-core kernel: heads of 64 (16-byte rows) over 197 positions (a last key tile
    # of 5) with a float mask; bfloat16 heads of 80 and values of 48 (its wider variant),
    # causal, more keys than queries; 3-D grouped heads of 20 (element loads) with a bool mask
    half_case(s, 'test_att_fp16_heads64_masked', 'Attention',
              [f(1, 2, 197, 64, dt=np.float16), f(1, 2, 197, 64, dt=np.float16),
               f(1, 2, 197, 64, dt=np.float16), f(197, 197, dt=np.float16)], {}, 23)
    try:
        import ml_dtypes
        bf = lambda *shape: f(*shape).astype(ml_dtypes.bfloat16)
        half_case(s, 'test_att_bf16_heads80_causal', 'Attention',
                  [bf(1, 2, 70, 80), bf(1, 2, 130, 80), bf(1, 2, 130, 48)], {'is_causal': 1}, 23)
    except ImportError:
        pass
    # v25's window on the tensor-core kernel: blocks of 64 rows starting past the first keys, the
    # second batch's first 20 rows before its valid keys (zero rows)
    half_case(s, 'test_att_fp16_v25_window_nonpad', 'Attention',
              [f(2, 2, 70, 64, dt=np.float16), f(2, 2, 130, 64, dt=np.float16),
               f(2, 2, 130, 64, dt=np.float16), None, None, None, np.array([130, 50], np.int64)],
              {'left_window_size': 50, 'is_causal': 1}, 25)
    half_case(s, 'test_att_fp16_3d_gqa_heads20', 'Attention',
              [f(2, 33, 4 * 20, dt=np.float16), f(2, 45, 2 * 20, dt=np.float16),
               f(2, 45, 2 * 20, dt=np.float16), rng.random((2, 1, 33, 45)) > 0.3],
              {'q_num_heads': 4, 'kv_num_heads': 2}, 23)

    # RotaryEmbedding
    cos = np.cos(rng.random((64, 8))).astype(np.float32)
    sin = np.sin(rng.random((64, 8))).astype(np.float32)
    pos = rng.integers(0, 64, (2, 40)).astype(np.int64)
    case(s, 'test_rope_long_3d_partial', 'RotaryEmbedding',
         [f(2, 40, 6 * 24), cos, sin, pos], attrs={'num_heads': 6, 'rotary_embedding_dim': 16}, opset=23)
    half_case(s, 'test_rope_fp16_interleaved', 'RotaryEmbedding',
              [f(2, 3, 5, 16, dt=np.float16), cos.astype(np.float16), sin.astype(np.float16),
               rng.integers(0, 64, (2, 5)).astype(np.int64)], {'interleaved': 1}, 23)
    case(s, 'test_rope_sym_no_pos', 'RotaryEmbedding',
         [f(2, 3, 5, 12), f(2, 5, 4), f(2, 5, 4)], attrs={'rotary_embedding_dim': 8, 'interleaved': 1},
         opset=23, sym=True)

    # LinearAttention; the delta rules are stable only with L2-normalized keys
    keys = f(2, 50, 4, 16)
    keys = (keys / np.linalg.norm(keys, axis=-1, keepdims=True)).reshape(2, 50, 64)
    case(s, 'test_linatt_gated_delta_long', 'LinearAttention',
         [f(2, 50, 8 * 16), keys, f(2, 50, 4 * 16), f(2, 4, 16, 16),
          -np.abs(f(2, 50, 4)) * 0.1, 1 / (1 + np.exp(-f(2, 50, 4)))],
         attrs={'q_num_heads': 8, 'kv_num_heads': 4}, opset=27, n_out=2)
    half_case(s, 'test_linatt_fp16_linear', 'LinearAttention',
              [f(1, 3, 16, dt=np.float16), f(1, 3, 16, dt=np.float16), f(1, 3, 8, dt=np.float16)],
              {'q_num_heads': 2, 'kv_num_heads': 2, 'update_rule': 'linear'}, 27, n_out=2)

    # FlexAttention (ai.onnx.preview): GQA with a score_mod and symbolic shapes
    mod = h.make_graph([h.make_node('Mul', ['s', 'k'], ['o'])], 'halve',
                       [h.make_tensor_value_info('s', 1, ['B', 'H', 'L', 'S'])],
                       [h.make_tensor_value_info('o', 1, ['B', 'H', 'L', 'S'])],
                       initializer=[h.make_tensor('k', 1, [], [0.5])])
    for sym in (False, True):
        flex(s, 'test_flex_gqa_score_mod' + ('_sym' if sym else ''),
             [f(2, 4, 70, 8), f(2, 2, 90, 8), f(2, 2, 90, 12)], {'score_mod': mod}, sym)
    flex(s, 'test_flex_double_prob_mod', [f(1, 2, 3, 4, dt=np.float64), f(1, 2, 5, 4, dt=np.float64),
                                          f(1, 2, 5, 4, dt=np.float64)],
         {'prob_mod': h.make_graph([h.make_node('Sqrt', ['p'], ['o'])], 'root',
                                   [h.make_tensor_value_info('p', 11, ['B', 'H', 'L', 'S'])],
                                   [h.make_tensor_value_info('o', 11, ['B', 'H', 'L', 'S'])])}, False)


def flex(s, name, inputs, attrs, sym):
    """A FlexAttention (ai.onnx.preview) case: common.case knows only the default domain."""
    names = ['Q', 'K', 'V']
    node = h.make_node('FlexAttention', names, ['Y'], domain='ai.onnx.preview', **attrs)
    g = h.make_graph([node], 'flex', [value_info(n, v, sym) for n, v in zip(names, inputs)],
                     [h.make_empty_tensor_value_info('Y')])
    model = h.make_model(g, opset_imports=[h.make_opsetid('', 26), h.make_opsetid('ai.onnx.preview', 1)])
    feeds = list(zip(names, inputs))
    res = reference(model, feeds)
    declare_outputs(model, res, sym)
    s.write(name, model, feeds, [('Y', res[0])], check=not sym)
