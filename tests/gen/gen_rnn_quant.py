# RNN/GRU/LSTM, quantization and BLAS-path cases the ONNX node tests miss: bidirectional layers with
# sequence_lens and layout 1, other dtypes, activations with alpha/beta, clip, per-axis and blocked
# quantization on odd shapes into every integer width, QLinearMatMul with per-row/per-column
# parameters, double GEMM/GEMV. Expected values come from numpy written here where onnx's reference
# does not implement the case (sequence_lens, bidirectional, per-row QLinearMatMul).
import numpy as np

from common import case

_ACTS = {
    'Tanh': lambda x, a, b: np.tanh(x),
    'Sigmoid': lambda x, a, b: 1 / (1 + np.exp(-x)),
    'Relu': lambda x, a, b: np.maximum(x, 0),
    'HardSigmoid': lambda x, a, b: np.clip(a * x + b, 0, 1),
    'LeakyRelu': lambda x, a, b: np.where(x >= 0, x, a * x),
    'Affine': lambda x, a, b: a * x + b,
    'Softsign': lambda x, a, b: x / (1 + np.abs(x)),
}
_PARAMS = {'HardSigmoid': 2, 'LeakyRelu': 1, 'Affine': 2}


def _acts(names, alphas, betas):
    """Activation callables, alphas/betas consumed in order by the functions that take them."""
    out, ia, ib = [], 0, 0
    for n in names:
        a = b = 0.0
        if _PARAMS.get(n, 0) >= 1:
            a, ia = alphas[ia], ia + 1
        if _PARAMS.get(n, 0) >= 2:
            b, ib = betas[ib], ib + 1
        out.append(lambda x, f=_ACTS[n], a=a, b=b: f(x, a, b))
    return out


def rnn_ref(cell, X, W, R, B=None, lens=None, h0=None, c0=None, P=None, direction='forward', layout=0,
            lbr=0, clip=None, acts=None, alphas=(), betas=(), input_forget=0):
    """numpy RNN/GRU/LSTM with sequence_lens (steps past a length give zeros in Y; Y_h and Y_c hold
    each sequence's last state). Computes in float64, returns X's dtype."""
    dt = X.dtype
    X, W, R = (np.asarray(v, np.float64) for v in (X, W, R))
    if layout:
        X = X.transpose(1, 0, 2)
    seq, batch, _ = X.shape
    nd = 2 if direction == 'bidirectional' else 1
    G = {'RNN': 1, 'GRU': 3, 'LSTM': 4}[cell]
    H = R.shape[-1]
    per = {'RNN': 1, 'GRU': 2, 'LSTM': 3}[cell]
    default = {'RNN': ['Tanh'], 'GRU': ['Sigmoid', 'Tanh'], 'LSTM': ['Sigmoid', 'Tanh', 'Tanh']}[cell]
    names = acts or default * nd
    fns = _acts(names, list(alphas), list(betas))
    lens = np.full(batch, seq) if lens is None else lens
    if h0 is not None and layout:
        h0 = h0.transpose(1, 0, 2)
    if c0 is not None and layout:
        c0 = c0.transpose(1, 0, 2)
    Y = np.zeros((seq, nd, batch, H))
    Yh = np.zeros((nd, batch, H))
    Yc = np.zeros((nd, batch, H))
    cl = (lambda v: np.clip(v, -clip, clip)) if clip is not None else (lambda v: v)
    for d in range(nd):
        rev = direction == 'reverse' or d == 1
        f = fns[d * per:(d + 1) * per]
        b = np.zeros(2 * G * H) if B is None else np.asarray(B[d], np.float64)
        wb, rb = b[:G * H], b[G * H:]
        p = np.zeros(3 * H) if P is None else np.asarray(P[d], np.float64)
        for n in range(batch):
            h = np.zeros(H) if h0 is None else np.asarray(h0[d, n], np.float64)
            c = np.zeros(H) if c0 is None else np.asarray(c0[d, n], np.float64)
            L = int(lens[n])
            for s in range(L):
                t = L - 1 - s if rev else s
                x = X[t, n]
                if cell == 'RNN':
                    h = f[0](cl(x @ W[d].T + h @ R[d].T + wb + rb))
                elif cell == 'GRU':
                    gx = x @ W[d].T + wb
                    z = f[0](cl(gx[:H] + h @ R[d][:H].T + rb[:H]))
                    r = f[0](cl(gx[H:2 * H] + h @ R[d][H:2 * H].T + rb[H:2 * H]))
                    if lbr:
                        hh = f[1](cl(gx[2 * H:] + r * (h @ R[d][2 * H:].T + rb[2 * H:])))
                    else:
                        hh = f[1](cl(gx[2 * H:] + (r * h) @ R[d][2 * H:].T + rb[2 * H:]))
                    h = (1 - z) * hh + z * h
                else:
                    g = x @ W[d].T + h @ R[d].T + wb + rb
                    i = f[0](cl(g[:H] + p[:H] * c))
                    fg = 1 - i if input_forget else f[0](cl(g[2 * H:3 * H] + p[2 * H:] * c))
                    cc = f[1](cl(g[3 * H:]))
                    c = fg * c + i * cc
                    o = f[0](cl(g[H:2 * H] + p[H:2 * H] * c))
                    h = o * f[2](c)
                Y[t, d, n] = h
            if L:
                Yh[d, n], Yc[d, n] = h, c
    if layout:
        Y, Yh, Yc = Y.transpose(2, 0, 1, 3), Yh.transpose(1, 0, 2), Yc.transpose(1, 0, 2)
    out = [Y.astype(dt), Yh.astype(dt)]
    return out + [Yc.astype(dt)] if cell == 'LSTM' else out


def rnn_case(s, name, cell, seq, batch, inp, H, dtype=np.float32, direction='forward', layout=0, lens=None,
             with_h0=False, with_c0=False, with_p=False, opset=14, rng=None, sym=False, **attrs):
    nd = 2 if direction == 'bidirectional' else 1
    G = {'RNN': 1, 'GRU': 3, 'LSTM': 4}[cell]

    def r(*shape):
        return (rng.standard_normal(shape) * 0.5).astype(dtype)

    X = r(batch, seq, inp) if layout else r(seq, batch, inp)
    W, R, B = r(nd, G * H, inp), r(nd, G * H, H), r(nd, 2 * G * H)
    hs = (batch, nd, H) if layout else (nd, batch, H)
    h0 = r(*hs) if with_h0 else None
    c0 = r(*hs) if with_c0 else None
    P = r(nd, 3 * H) if with_p else None
    L = None if lens is None else np.array(lens, np.int32)
    inputs = [X, W, R, B, L, h0]
    if cell == 'LSTM':
        inputs += [c0, P]
    while inputs[-1] is None:
        inputs.pop()
    a = {'hidden_size': H, 'direction': direction}
    if opset >= 14:
        a['layout'] = layout
    ref_kw = {}
    for k, v in attrs.items():
        a[k] = v
        key = {'activations': 'acts', 'activation_alpha': 'alphas', 'activation_beta': 'betas',
               'linear_before_reset': 'lbr'}.get(k, k)
        ref_kw[key] = v
    exp = rnn_ref(cell, X, W, R, B, L, h0, c0, P, direction, layout, **ref_kw)
    case(s, f'test_rq_{name}', cell, inputs, expected=exp, attrs=a, opset=opset, n_out=len(exp), sym=sym)


def s_dq_uint2(s, inits, expected):
    """A DequantizeLinear-25 case whose packed uint2 input is an initializer."""
    import onnx
    from onnx import helper as h
    node = h.make_node('DequantizeLinear', ['x0', 'x1', 'x2'], ['y0'])
    zp = h.make_tensor('x2', onnx.TensorProto.UINT2, [], [1])
    sc = h.make_tensor('x1', onnx.TensorProto.FLOAT, [], [0.5])
    g = h.make_graph([node], 'dq_uint2', [], [h.make_tensor_value_info('y0', onnx.TensorProto.FLOAT, expected.shape)],
                     initializer=inits + [sc, zp])
    m = h.make_model(g, opset_imports=[h.make_opsetid('', 25)])
    s.write('test_rq_dq_big_uint2', m, [], [('y0', expected)])


def quant_cases(s, rng):
    def f(*shape, scale=3.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    # per axis on an odd shape, both signs, with and without zero point
    x = f(3, 5, 7)
    case(s, 'test_rq_ql_axis1_u8', 'QuantizeLinear',
         [x, np.linspace(0.02, 0.1, 5).astype(np.float32), np.arange(5, dtype=np.uint8) * 20], attrs={'axis': 1})
    for sym in (False, True):
        case(s, 'test_rq_ql_axis_neg_i8' + ('_sym' if sym else ''), 'QuantizeLinear',
             [x, np.linspace(0.01, 0.05, 7).astype(np.float32), np.arange(-3, 4, dtype=np.int8)],
             attrs={'axis': -1}, sym=sym)
    # ties: x / scale lands on .5 exactly; nearest even
    case(s, 'test_rq_ql_ties', 'QuantizeLinear',
         [np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 254.5, 300, -300], np.float32), np.float32(1.0),
          np.uint8(0)], opset=13)
    # blocked (block does not divide the axis) into every narrow integer type
    xb = f(2, 3, 7)
    sb = (rng.random((2, 3, 3)) * 0.5 + 0.1).astype(np.float32)
    for name, dt, opset in (('int4', 'int4', 21), ('uint4', 'uint4', 21), ('int16', np.int16, 21),
                            ('uint16', np.uint16, 21), ('int2', 'int2', 25), ('uint2', 'uint2', 25)):
        import onnx
        tp = {'int4': onnx.TensorProto.INT4, 'uint4': onnx.TensorProto.UINT4, 'int2': onnx.TensorProto.INT2,
              'uint2': onnx.TensorProto.UINT2}.get(dt)
        attrs = {'axis': 2, 'block_size': 3}
        if tp is not None:
            attrs['output_dtype'] = tp
            case(s, f'test_rq_ql_blocked_{name}', 'QuantizeLinear', [xb, sb], attrs=attrs, opset=opset)
        else:
            zp = rng.integers(0, 50, (2, 3, 3)).astype(dt)
            case(s, f'test_rq_ql_blocked_{name}', 'QuantizeLinear', [xb * 100, sb, zp], attrs=attrs,
                 opset=opset)
    # float16 in and scale: the division in float16
    case(s, 'test_rq_ql_f16', 'QuantizeLinear',
         [f(4, 9).astype(np.float16), np.float16(0.037), np.int8(3)], opset=21)
    # int32 input
    case(s, 'test_rq_ql_i32', 'QuantizeLinear',
         [rng.integers(-1000, 1000, (6, 5)).astype(np.int32), np.float32(7.0), np.uint8(128)], opset=13)
    # float8 without saturation: out-of-range values become NaN / Inf
    case(s, 'test_rq_ql_e4m3_nosat', 'QuantizeLinear',
         [np.array([0.0, 1.0, -3.3, 500.0, -1000.0, 1e-4], np.float32), np.float32(1.0)],
         attrs={'saturate': 0, 'output_dtype': 17}, opset=21)
    # large (run with every core): chunks over threads, including packed outputs and blocked scales
    case(s, 'test_rq_ql_big_axis', 'QuantizeLinear',
         [f(8, 50, 90), np.linspace(0.01, 0.1, 50).astype(np.float32), np.full(50, 7, np.int8)], attrs={'axis': 1})
    case(s, 'test_rq_ql_big_blocked_int4', 'QuantizeLinear',
         [f(6, 101, 61), (rng.random((6, 101, 5)) + 0.2).astype(np.float32)],
         attrs={'axis': 2, 'block_size': 13, 'output_dtype': 22}, opset=21)
    import onnx
    u2 = rng.integers(0, 4, (7, 5001)).astype(np.uint8)
    # uint2 goes in as a graph initializer (numpy has no uint2); y = (x - 1) * 0.5
    model_inputs = [onnx.helper.make_tensor('x0', onnx.TensorProto.UINT2, u2.shape, u2.ravel().tolist())]
    s_dq_uint2(s, model_inputs, ((u2.astype(np.float32) - 1) * np.float32(0.5)).astype(np.float32))

    # DequantizeLinear
    case(s, 'test_rq_dq_axis_i16', 'DequantizeLinear',
         [rng.integers(-30000, 30000, (4, 3, 5)).astype(np.int16), np.linspace(0.001, 0.01, 3).astype(np.float32),
          np.array([-5, 0, 17], np.int16)], attrs={'axis': 1}, opset=21)
    case(s, 'test_rq_dq_i32', 'DequantizeLinear',
         [rng.integers(-2**30, 2**30, (7,)).astype(np.int32), np.float32(1e-6)], opset=19)
    case(s, 'test_rq_dq_blocked_u8_f16', 'DequantizeLinear',
         [rng.integers(0, 255, (5, 6)).astype(np.uint8), (rng.random((2, 6)) + 0.5).astype(np.float16),
          rng.integers(0, 255, (2, 6)).astype(np.uint8)], attrs={'axis': 0, 'block_size': 4}, opset=21)
    xq = rng.integers(-128, 127, (3, 4)).astype(np.int8)
    case(s, 'test_rq_dq_out_f16', 'DequantizeLinear', [xq, np.float32(0.25), np.int8(-1)],
         expected=[((xq.astype(np.float32) + 1) * np.float32(0.25)).astype(np.float16)],
         attrs={'output_dtype': 10}, opset=23)

    # DynamicQuantizeLinear: all positive, all negative, odd sizes, threads
    for name, x in (('pos', np.abs(f(37))), ('neg', -np.abs(f(5, 3))), ('zero', np.zeros(9, np.float32)),
                    ('big', f(70000))):
        case(s, f'test_rq_dynql_{name}', 'DynamicQuantizeLinear', [x], n_out=3)


def qmm_ref(a, sa, za, b, sb, zb, sy, zy):
    """QLinearMatMul with a's parameters per row ([M]) and b's per column ([N]) (2-D operands)."""
    A = a.astype(np.int32) - (za.astype(np.int32)[:, None] if za.ndim else za.astype(np.int32))
    B = b.astype(np.int32) - zb.astype(np.int32)
    C = A @ B
    m = (np.float32(1) * (sa[:, None] if sa.ndim else sa) * sb).astype(np.float32) / np.float32(sy)
    D = np.rint(C * m.astype(np.float32).astype(np.float64)) + zy
    info = np.iinfo(zy.dtype)
    return np.clip(D, info.min, info.max).astype(zy.dtype)


def qmm_cases(s, rng):
    M, K, N = 5, 33, 7
    a = rng.integers(-128, 127, (M, K)).astype(np.int8)
    b = rng.integers(0, 255, (K, N)).astype(np.uint8)
    sa = (rng.random(M) * 0.02 + 0.01).astype(np.float32)
    za = rng.integers(-5, 5, M).astype(np.int8)
    sb = (rng.random(N) * 0.02 + 0.01).astype(np.float32)
    zb = rng.integers(100, 150, N).astype(np.uint8)
    sy, zy = np.float32(0.05), np.uint8(120)
    case(s, 'test_rq_qmm_row_col', 'QLinearMatMul', [a, sa, za, b, sb, zb, sy, zy],
         expected=[qmm_ref(a, sa, za, b, sb, zb, sy, zy)], opset=10)
    # int8 result, per-tensor, broadcast batch: [2,1,M,K] x [3,K,N] through onnx's reference
    a4 = rng.integers(0, 255, (2, 1, 4, 6)).astype(np.uint8)
    b3 = rng.integers(-128, 127, (3, 6, 5)).astype(np.int8)
    case(s, 'test_rq_qmm_batch_bcast', 'QLinearMatMul',
         [a4, np.float32(0.02), np.uint8(130), b3, np.float32(0.03), np.int8(-2), np.float32(0.04), np.int8(-7)],
         opset=10)
    # large enough to split rows over threads (and per-row parameters through the loop)
    a = rng.integers(0, 255, (230, 64)).astype(np.uint8)
    b = rng.integers(-128, 127, (64, 150)).astype(np.int8)
    sa = (rng.random(230) * 0.02 + 0.01).astype(np.float32)
    za = rng.integers(100, 150, 230).astype(np.uint8)
    sb = (rng.random(150) * 0.02 + 0.01).astype(np.float32)
    zb = rng.integers(-5, 5, 150).astype(np.int8)
    case(s, 'test_rq_qmm_big_row_col', 'QLinearMatMul', [a, sa, za, b, sb, zb, np.float32(0.2), np.int8(3)],
         expected=[qmm_ref(a, sa, za, b, sb, zb, np.float32(0.2), np.int8(3))], opset=10)
    case(s, 'test_rq_qmm_big', 'QLinearMatMul',
         [a, np.float32(0.01), np.uint8(128), b, np.float32(0.02), np.int8(0), np.float32(0.3), np.uint8(100)],
         opset=21)


def blas_cases(s, rng):
    def d(*shape):
        return rng.standard_normal(shape)

    def f(*shape):
        # sixteenths: the products and their sums are exact in float, so the result does not
        # depend on the order a library sums in (a cuBLAS product summed near-cancelling terms
        # of a normal draw 20x closer to the true value than numpy's float reference)
        return (np.round(rng.standard_normal(shape) * 16) / 16).astype(np.float32)

    # double: gemv both ways, gemm, Gemm with transposes and bias
    case(s, 'test_rq_blas_mm_f64_row', 'MatMul', [d(1, 40), d(40, 30)], opset=13)
    case(s, 'test_rq_blas_mm_f64_vec', 'MatMul', [d(40), d(40, 30)], opset=13)
    case(s, 'test_rq_blas_mm_f64_col', 'MatMul', [d(30, 40), d(40, 1)], opset=13)
    case(s, 'test_rq_blas_mm_f64', 'MatMul', [d(2, 17, 40), d(40, 23)], opset=13)
    case(s, 'test_rq_blas_gemm_f64_t', 'Gemm', [d(40, 17), d(23, 40), d(23)],
         attrs={'transA': 1, 'transB': 1, 'alpha': 0.5, 'beta': 2.0}, opset=13)
    case(s, 'test_rq_blas_gemm_f64_row_t', 'Gemm', [d(40, 1), d(23, 40)], attrs={'transA': 1, 'transB': 1},
         opset=13)
    # float: tiny (OpenBLAS) and larger (oneDNN) products, batched with shared B
    case(s, 'test_rq_blas_mm_f32_tiny', 'MatMul', [f(16, 20), f(20, 12)], opset=13)
    case(s, 'test_rq_blas_mm_f32_batched', 'MatMul', [f(8, 32, 40), f(40, 24)], opset=13)
    case(s, 'test_rq_blas_gemm_f32_large', 'Gemm', [f(70, 130), f(90, 130), f(1, 90)],
         attrs={'transB': 1}, opset=13)
    case(s, 'test_rq_blas_mm_f32_gemv_t', 'Gemm', [f(300, 1), f(300, 50)], attrs={'transA': 1}, opset=13)


def generate(s):
    rng = np.random.default_rng(7)
    # LSTM: bidirectional with sequence_lens, initial states and peepholes, both layouts
    for layout in (0, 1):
        rnn_case(s, f'lstm_bidir_lens_l{layout}', 'LSTM', 5, 3, 4, 6, direction='bidirectional', layout=layout,
                 lens=[5, 2, 4], with_h0=True, with_c0=True, with_p=True, rng=rng)
    rnn_case(s, 'lstm_reverse_clip_forget', 'LSTM', 4, 2, 3, 5, direction='reverse', clip=0.7, input_forget=1,
             with_p=True, rng=rng, opset=7)
    rnn_case(s, 'lstm_acts', 'LSTM', 3, 2, 3, 4, rng=rng,
             activations=['HardSigmoid', 'LeakyRelu', 'Softsign'], activation_alpha=[0.3, 0.05],
             activation_beta=[0.45])
    rnn_case(s, 'lstm_f64', 'LSTM', 4, 2, 5, 3, dtype=np.float64, direction='bidirectional', with_h0=True, rng=rng)
    rnn_case(s, 'lstm_f16', 'LSTM', 3, 2, 4, 4, dtype=np.float16, rng=rng)
    # shapes known only at run time: scratch sized then
    rnn_case(s, 'lstm_sym', 'LSTM', 4, 3, 5, 6, direction='bidirectional', lens=[4, 1, 3], with_h0=True, rng=rng,
             sym=True)
    # GRU: both reset placements, bidirectional with lengths
    for lbr in (0, 1):
        rnn_case(s, f'gru_bidir_lens_lbr{lbr}', 'GRU', 4, 3, 3, 5, direction='bidirectional', lens=[1, 4, 3],
                 with_h0=True, linear_before_reset=lbr, rng=rng)
    rnn_case(s, 'gru_reverse_layout1', 'GRU', 5, 2, 4, 3, direction='reverse', layout=1, with_h0=True,
             linear_before_reset=1, rng=rng)
    rnn_case(s, 'gru_f64_clip', 'GRU', 3, 2, 3, 4, dtype=np.float64, clip=0.5, rng=rng)
    # RNN: reverse with Relu and clip, bidirectional with per-direction activations
    rnn_case(s, 'rnn_reverse_relu', 'RNN', 6, 2, 3, 4, direction='reverse', activations=['Relu'], clip=1.5,
             rng=rng)
    rnn_case(s, 'rnn_bidir_affine', 'RNN', 4, 3, 2, 5, direction='bidirectional', lens=[4, 3, 2],
             activations=['Tanh', 'Affine'], activation_alpha=[0.8], activation_beta=[0.1], with_h0=True,
             layout=1, rng=rng)
    # large: the projection and per-step GEMMs go through the threaded BLAS
    rnn_case(s, 'lstm_big', 'LSTM', 20, 16, 64, 64, rng=rng)
    # (double: float32 sums near zero would miss the 1e-7 absolute tolerance against this float64 reference)
    rnn_case(s, 'gru_big_bidir_f64', 'GRU', 30, 20, 60, 40, dtype=np.float64, direction='bidirectional',
             lens=list(range(11, 31)), rng=rng)
    quant_cases(s, rng)
    qmm_cases(s, rng)
    blas_cases(s, rng)
    review_cases(s)


def review_cases(s):
    """Regressions found by review and fuzzing."""
    # -inf makes the scale inf and the zero point -inf / inf = NaN: it was cast to uint8 (UB); onnx's
    # reference clamps it with Python's min/max to 255, and -inf / inf = NaN quantizes to 0
    case(s, 'test_rq_dynql_neg_inf', 'DynamicQuantizeLinear', [np.array([-np.inf, 1.0, 3.0], np.float32)],
         expected=[np.array([0, 255, 255], np.uint8), np.array(np.inf, np.float32), np.array(255, np.uint8)],
         n_out=3, opset=11)


def bad(b):
    """Models onyx must refuse (for make_bad_models.py's family list: gen_rnn_quant.bad)."""
    SHAPE, INVALID = 'ONYX_ERR_SHAPE', 'ONYX_ERR_INVALID_MODEL'
    rng = np.random.default_rng(3)

    def f(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    # review regressions: sizes that used to overflow int64 (UB) before being checked
    b.node('rq_lstm_hidden_huge', 'LSTM', [f(2, 1, 3), f(1, 8, 3), f(1, 8, 2)], INVALID, 'hidden_size',
           attrs={'hidden_size': 2 ** 62}, opset=14)
    b.node('rq_ql_block_size_huge', 'QuantizeLinear', [f(4, 6), f(4, 3)], SHAPE, 'blocked',
           attrs={'axis': 1, 'block_size': 2 ** 63 - 1}, opset=21)
    b.node('rq_dq_block_size_huge', 'DequantizeLinear', [np.zeros((4, 6), np.int8), f(4, 3)], SHAPE, 'blocked',
           attrs={'axis': 1, 'block_size': 2 ** 63 - 1}, opset=21, consts=(1,))

    b.node('rq_lstm_bad_direction', 'LSTM', [f(2, 1, 3), f(1, 8, 3), f(1, 8, 2)], INVALID, 'direction',
           attrs={'hidden_size': 2, 'direction': 'sideways'}, opset=14)
    b.node('rq_lstm_w_shape', 'LSTM', [f(2, 1, 3), f(1, 7, 3), f(1, 8, 2)], SHAPE, 'W',
           attrs={'hidden_size': 2}, opset=14)
    b.node('rq_gru_bad_activation', 'GRU', [f(2, 1, 3), f(1, 6, 3), f(1, 6, 2)], 'ONYX_ERR_UNSUPPORTED',
           'Swoosh', attrs={'hidden_size': 2, 'activations': ['Sigmoid', 'Swoosh']}, opset=14)
    b.node('rq_rnn_seq_lens_range', 'RNN',
           [f(2, 2, 3), f(1, 2, 3), f(1, 2, 2), None, np.array([2, 3], np.int32)], SHAPE, 'sequence_lens',
           attrs={'hidden_size': 2}, opset=14)
    b.node('rq_rnn_layout', 'RNN', [f(2, 1, 3), f(1, 2, 3), f(1, 2, 2)], INVALID, 'layout',
           attrs={'hidden_size': 2, 'layout': 2}, opset=14)
    b.node('rq_ql_axis_scale_len', 'QuantizeLinear', [f(3, 4), f(3), np.zeros(3, np.uint8)], SHAPE, 'scale',
           attrs={'axis': 1}, opset=13)
    b.node('rq_ql_blocked_shape', 'QuantizeLinear', [f(4, 6), f(4, 3)], SHAPE, 'blocked',
           attrs={'axis': 1, 'block_size': 4}, opset=21)
    b.node('rq_ql_dtype_mismatch', 'QuantizeLinear', [f(4), np.float32(1), np.int8(0)], INVALID, 'output_dtype',
           attrs={'output_dtype': 2}, opset=21)
    b.node('rq_dq_zp_type', 'DequantizeLinear', [np.zeros(4, np.uint8), np.float32(1), np.int8(0)], SHAPE,
           'zero point', opset=13)
    b.node('rq_qmm_inner', 'QLinearMatMul',
           [np.zeros((2, 3), np.uint8), np.float32(1), np.uint8(0), np.zeros((4, 2), np.uint8), np.float32(1),
            np.uint8(0), np.float32(1), np.uint8(0)], SHAPE, 'inner', opset=10)
    b.node('rq_qmm_row_scale_len', 'QLinearMatMul',
           [np.zeros((2, 3), np.uint8), np.ones(5, np.float32), np.zeros(5, np.uint8), np.zeros((3, 2), np.uint8),
            np.float32(1), np.uint8(0), np.float32(1), np.uint8(0)], SHAPE, 'elements', opset=10)
