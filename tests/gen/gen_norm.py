# Norm family cases (BatchNorm, InstanceNorm, LayerNorm, GroupNorm, RMSNorm, LRN, the two losses,
# Dropout, NonMaxSuppression): the dtypes, axes, versions and broadcasts the node tests miss, and
# large inputs whose kernels split across threads. Half-precision expectations are computed in
# float64 by hand and rounded once, since numpy's float16 arithmetic rounds at every step.
# bad_cases(b) holds the inputs that must be refused, for make_bad_models.py.
import numpy as np

from common import case, declare_outputs, node_model

F16 = np.float16


def _bf16(x):
    """float32 values rounded to bfloat16, as uint16 bit patterns inside a bfloat16 tensor."""
    try:
        import ml_dtypes
        return np.asarray(x, np.float32).astype(ml_dtypes.bfloat16)
    except ImportError:
        return None


def _f8(x):
    """float32 values rounded to float8e4m3fn (saturating, as the kernel stores them)."""
    try:
        import ml_dtypes
        fmax = float(ml_dtypes.finfo(ml_dtypes.float8_e4m3fn).max)
        return np.clip(np.asarray(x, np.float32), -fmax, fmax).astype(ml_dtypes.float8_e4m3fn)
    except ImportError:
        return None


def generate(s):
    rng = np.random.default_rng(7)

    def f(*shape, dtype=np.float32):
        return rng.standard_normal(shape).astype(dtype)

    def pos(*shape, dtype=np.float32):
        return rng.uniform(0.5, 2.0, shape).astype(dtype)

    # ---- BatchNormalization
    def bn_ref(x, sc, b, m, v, eps=1e-5):
        sh = (1, -1) + (1,) * (x.ndim - 2)
        x64 = x.astype(np.float64)
        return (sc.astype(np.float64).reshape(sh) * (x64 - m.astype(np.float64).reshape(sh)) /
                np.sqrt(v.astype(np.float64).reshape(sh) + eps) + b.astype(np.float64).reshape(sh))

    x = f(2, 3, 4, 5, dtype=np.float64)
    prm = [f(3, dtype=np.float64), f(3, dtype=np.float64), f(3, dtype=np.float64), pos(3, dtype=np.float64)]
    case(s, 'test_norm_bn_f64', 'BatchNormalization', [x] + prm, opset=15)
    case(s, 'test_norm_bn_f64_const', 'BatchNormalization', [x] + prm, opset=15, consts=(1, 2, 3, 4))
    x = f(2, 3, 4, 5, dtype=F16)
    prm16 = [f(3, dtype=F16), f(3, dtype=F16), f(3, dtype=F16), pos(3, dtype=F16)]
    case(s, 'test_norm_bn_f16', 'BatchNormalization', [x] + prm16,
         expected=[bn_ref(x, *prm16).astype(F16)], opset=15, consts=(1, 2, 3, 4))
    # v15: scale/bias float, mean/var double around float16 data
    prm_mixed = [f(3), f(3), f(3, dtype=np.float64), pos(3, dtype=np.float64)]
    case(s, 'test_norm_bn_v15_mixed', 'BatchNormalization', [x] + prm_mixed,
         expected=[bn_ref(x, *prm_mixed).astype(F16)], opset=15)
    x32 = f(3, 4, 6)
    case(s, 'test_norm_bn_v6_3d_is_test', 'BatchNormalization', [x32, f(4), f(4), f(4), pos(4)],
         expected=None, attrs={'is_test': 1}, opset=6)
    # v7 spatial=0: parameters per activation (C x D)
    p7 = [f(4, 6), f(4, 6), f(4, 6), pos(4, 6)]
    case(s, 'test_norm_bn_v7_per_activation', 'BatchNormalization', [x32] + p7,
         expected=[bn_ref(x32.reshape(3, 24), *[p.reshape(24) for p in p7]).reshape(3, 4, 6).astype(np.float32)],
         attrs={'spatial': 0}, opset=7)
    xt = f(4, 3, 5, 5, dtype=np.float64)
    case(s, 'test_norm_bn_training_f64', 'BatchNormalization', [xt] + prm,
         attrs={'training_mode': 1, 'momentum': 0.7}, opset=15, n_out=3)
    # shapes known only at run time: parameters sized and folded per run
    case(s, 'test_norm_bn_f64_sym', 'BatchNormalization', [x] + prm, opset=15, sym=True)
    # no spatial dims ([tokens, C]: BatchNorm1d after a Linear, as LeViT): each row's channels
    # contiguous, normalized row by row
    x2 = f(197, 96)
    case(s, 'test_norm_bn_2d_rows', 'BatchNormalization', [x2, f(96), f(96), f(96), pos(96)], opset=15,
         consts=(1, 2, 3, 4))
    x2h = f(33, 40, dtype=F16)
    p2h = [f(40, dtype=F16), f(40, dtype=F16), f(40, dtype=F16), pos(40, dtype=F16)]
    case(s, 'test_norm_bn_2d_rows_f16', 'BatchNormalization', [x2h] + p2h,
         expected=[bn_ref(x2h, *p2h).astype(F16)], opset=15)
    xb = f(2, 64, 30, 30)
    case(s, 'test_norm_bn_big', 'BatchNormalization', [xb, f(64), f(64), f(64), pos(64)], opset=15, consts=(1, 2, 3, 4))
    case(s, 'test_norm_bn_big_training', 'BatchNormalization', [xb, f(64), f(64), f(64), pos(64)],
         attrs={'training_mode': 1}, opset=15, n_out=3)

    # ---- InstanceNormalization
    def in_ref(x, sc, b, eps=1e-5):
        ax = tuple(range(2, x.ndim))
        x64 = x.astype(np.float64)
        m, v = x64.mean(axis=ax, keepdims=True), x64.var(axis=ax, keepdims=True)
        sh = (1, -1) + (1,) * (x.ndim - 2)
        return sc.astype(np.float64).reshape(sh) * (x64 - m) / np.sqrt(v + eps) + b.astype(np.float64).reshape(sh)

    case(s, 'test_norm_in_f64_rank3', 'InstanceNormalization', [f(2, 3, 7, dtype=np.float64), f(3, dtype=np.float64), f(3, dtype=np.float64)])
    case(s, 'test_norm_in_rank5', 'InstanceNormalization', [f(2, 3, 2, 3, 4), f(3), f(3)], attrs={'epsilon': 0.1})
    xi, si, bi = f(2, 4, 5, 6, dtype=F16), f(4, dtype=F16), f(4, dtype=F16)
    case(s, 'test_norm_in_f16', 'InstanceNormalization', [xi, si, bi], expected=[in_ref(xi, si, bi).astype(F16)])
    case(s, 'test_norm_in_big', 'InstanceNormalization', [f(2, 32, 40, 40), f(32), f(32)])

    # ---- LayerNormalization
    def ln_ref(x, w, b, axis, eps=1e-5):
        ax = tuple(range(axis % x.ndim, x.ndim))
        x64 = x.astype(np.float64)
        m, v = x64.mean(axis=ax, keepdims=True), x64.var(axis=ax, keepdims=True)
        y = (x64 - m) / np.sqrt(v + eps) * w.astype(np.float64)
        return y + b.astype(np.float64) if b is not None else y

    case(s, 'test_norm_ln_f64', 'LayerNormalization', [f(3, 4, 5, dtype=np.float64), f(5, dtype=np.float64), f(5, dtype=np.float64)],
         opset=17)
    xl = f(3, 4, 5)
    case(s, 'test_norm_ln_sym', 'LayerNormalization', [xl, f(4, 5), f(5)], attrs={'axis': -2}, opset=17,
         n_out=3, sym=True)
    case(s, 'test_norm_ln_no_bias', 'LayerNormalization', [xl, f(4, 5)], attrs={'axis': 1}, opset=17, n_out=3)
    # scale broadcast inside the normalized axes, bias over every axis of x
    w_b, b_b = f(1, 5), f(3, 1, 5)
    case(s, 'test_norm_ln_bcast', 'LayerNormalization', [xl, w_b, b_b], attrs={'axis': 1},
         expected=[ln_ref(xl, w_b, b_b, 1).astype(np.float32)], opset=17)
    # scale over every axis of x: one scale row per normalized row
    w_full = f(3, 4, 5)
    case(s, 'test_norm_ln_scale_full', 'LayerNormalization', [xl, w_full], attrs={'axis': 2},
         expected=[ln_ref(xl, w_full, None, 2).astype(np.float32)], opset=17)
    xh, wh, bh = f(4, 6, 8, dtype=F16), f(8, dtype=F16), f(8, dtype=F16)
    case(s, 'test_norm_ln_f16', 'LayerNormalization', [xh, wh, bh], expected=[ln_ref(xh, wh, bh, -1).astype(F16)],
         opset=17)
    xbf = _bf16(f(4, 6, 8))
    if xbf is not None:
        wbf, bbf = _bf16(f(8)), _bf16(f(8))
        exp = ln_ref(xbf.astype(np.float32), wbf.astype(np.float32), bbf.astype(np.float32), -1)
        case(s, 'test_norm_ln_bf16', 'LayerNormalization', [xbf, wbf, bbf],
             expected=[_bf16(exp.astype(np.float32))], opset=17)
    case(s, 'test_norm_ln_big', 'LayerNormalization', [f(256, 384), f(384), f(384)], opset=17, n_out=3)
    # rows of whole 16-byte vectors (CUDA holds such a row in registers): 96 vectors of 8 float16
    # (a lane's fourth vector past the row), 32 of 8 bfloat16, and 130 of 4 floats (too many)
    xw, ww, bw = f(3, 5, 768, dtype=F16), f(768, dtype=F16), f(768, dtype=F16)
    case(s, 'test_norm_ln_f16_wide_rows', 'LayerNormalization', [xw, ww, bw],
         expected=[ln_ref(xw, ww, bw, -1).astype(F16)], opset=17)
    xbw = _bf16(f(12, 256))
    if xbw is not None:
        wbw, bbw = _bf16(f(256)), _bf16(f(256))
        exp = ln_ref(xbw.astype(np.float32), wbw.astype(np.float32), bbw.astype(np.float32), -1)
        case(s, 'test_norm_ln_bf16_vector_rows', 'LayerNormalization', [xbw, wbw, bbw],
             expected=[_bf16(exp.astype(np.float32))], opset=17)
    case(s, 'test_norm_ln_rows_past_vectors', 'LayerNormalization', [f(9, 520), f(520), f(520)],
         opset=17, n_out=3)

    # ---- GroupNormalization
    def gn_ref(x, sc, b, g, per_channel, eps=1e-5):
        n, c = x.shape[:2]
        x64 = x.astype(np.float64).reshape(n, g, -1)
        m, v = x64.mean(axis=2, keepdims=True), x64.var(axis=2, keepdims=True)
        y = ((x64 - m) / np.sqrt(v + eps)).reshape(x.shape)
        sh = (1, -1) + (1,) * (x.ndim - 2)
        scc = sc.astype(np.float64) if per_channel else np.repeat(sc.astype(np.float64), c // g)
        bc = b.astype(np.float64) if per_channel else np.repeat(b.astype(np.float64), c // g)
        return y * scc.reshape(sh) + bc.reshape(sh)

    xg = f(2, 6, 3, 4)
    sg, bg = f(3), f(3)
    # onnx's checker refuses the deprecated v18 schema: written without it
    model, feeds = node_model('GroupNormalization', [xg, sg, bg], {'num_groups': 3}, opset=18)
    y18 = gn_ref(xg, sg, bg, 3, False).astype(np.float32)
    declare_outputs(model, [y18])
    s.write('test_norm_gn_v18_per_group', model, feeds, [('y0', y18)], check=False)
    xg64, sg64, bg64 = f(2, 6, 5, dtype=np.float64), f(6, dtype=np.float64), f(6, dtype=np.float64)
    case(s, 'test_norm_gn_f64', 'GroupNormalization', [xg64, sg64, bg64], attrs={'num_groups': 2},
         expected=[gn_ref(xg64, sg64, bg64, 2, True)], opset=21)
    xg16, sg16, bg16 = f(2, 8, 3, 3, dtype=F16), f(8, dtype=F16), f(8, dtype=F16)
    case(s, 'test_norm_gn_f16', 'GroupNormalization', [xg16, sg16, bg16], attrs={'num_groups': 4},
         expected=[gn_ref(xg16, sg16, bg16, 4, True).astype(F16)], opset=21)
    xgb, sgb, bgb = f(2, 32, 30, 30), f(32), f(32)
    case(s, 'test_norm_gn_big', 'GroupNormalization', [xgb, sgb, bgb], attrs={'num_groups': 8},
         expected=[gn_ref(xgb, sgb, bgb, 8, True).astype(np.float32)], opset=21)

    # ---- RMSNormalization
    def rms_ref(x, w, axis, eps=1e-5):
        ax = tuple(range(axis % x.ndim, x.ndim))
        x64 = x.astype(np.float64)
        return x64 / np.sqrt((x64 * x64).mean(axis=ax, keepdims=True) + eps) * w.astype(np.float64)

    xr, wr = f(4, 6, 8, dtype=F16), f(8, dtype=F16)
    case(s, 'test_norm_rms_f16', 'RMSNormalization', [xr, wr], expected=[rms_ref(xr, wr, -1).astype(F16)], opset=23)
    xr64, wr64 = f(3, 4, 5, dtype=np.float64), f(1, 5, dtype=np.float64)
    case(s, 'test_norm_rms_f64_bcast', 'RMSNormalization', [xr64, wr64], attrs={'axis': 1},
         expected=[rms_ref(xr64, wr64, 1)], opset=23)
    # Y takes the scale's type (V), here float around double data
    xr2, wr2 = f(3, 5, dtype=np.float64), f(5)
    case(s, 'test_norm_rms_mixed_types', 'RMSNormalization', [xr2, wr2],
         expected=[rms_ref(xr2, wr2, -1).astype(np.float32)], opset=23)
    xrb, wrb = f(200, 512), f(512)
    case(s, 'test_norm_rms_big', 'RMSNormalization', [xrb, wrb], expected=[rms_ref(xrb, wrb, -1).astype(np.float32)],
         opset=23)

    # ---- LRN
    def lrn_ref(x, size, alpha=1e-4, beta=0.75, bias=1.0):
        x64 = x.astype(np.float64)
        c = x.shape[1]
        sq = np.zeros_like(x64)
        lo_off, hi_off = (size - 1) // 2, size // 2
        for ch in range(c):
            lo, hi = max(0, ch - lo_off), min(c - 1, ch + hi_off)
            sq[:, ch] = (x64[:, lo:hi + 1] ** 2).sum(axis=1)
        return x64 / (bias + alpha / size * sq) ** beta

    xl4 = f(2, 7, 3, 4, dtype=np.float64) * 10
    case(s, 'test_norm_lrn_f64_even', 'LRN', [xl4], attrs={'size': 4, 'alpha': 0.01},
         expected=[lrn_ref(xl4, 4, alpha=0.01)], opset=13)
    xl3 = f(2, 6, 9) * 10
    case(s, 'test_norm_lrn_rank3_pow', 'LRN', [xl3], attrs={'size': 3, 'alpha': 0.02, 'beta': 0.3, 'bias': 1.5},
         expected=[lrn_ref(xl3, 3, 0.02, 0.3, 1.5).astype(np.float32)], opset=13)
    case(s, 'test_norm_lrn_beta1', 'LRN', [xl3], attrs={'size': 5, 'alpha': 0.02, 'beta': 1.0},
         expected=[lrn_ref(xl3, 5, 0.02, 1.0).astype(np.float32)], opset=1)
    xl16 = (f(1, 5, 4, 4) * 10).astype(F16)
    case(s, 'test_norm_lrn_f16', 'LRN', [xl16], attrs={'size': 3, 'alpha': 0.01},
         expected=[lrn_ref(xl16, 3, alpha=0.01).astype(F16)], opset=13)
    xlb = f(1, 32, 40, 40) * 10
    case(s, 'test_norm_lrn_big', 'LRN', [xlb], attrs={'size': 5, 'alpha': 0.001},
         expected=[lrn_ref(xlb, 5, alpha=0.001).astype(np.float32)], opset=13)

    # ---- NegativeLogLikelihoodLoss / SoftmaxCrossEntropyLoss
    def labels(shape, c, dtype=np.int64):
        return rng.integers(0, c, shape).astype(dtype)

    xn = f(3, 5, 4, dtype=np.float64)
    tn = labels((3, 4), 5, np.int32)
    case(s, 'test_norm_nll_f64_i32', 'NegativeLogLikelihoodLoss', [xn, tn], attrs={'reduction': 'sum'}, opset=13)
    tn2 = tn.copy()
    tn2[0, 1] = tn2[2, 3] = -1
    case(s, 'test_norm_nll_ii_weight_none', 'NegativeLogLikelihoodLoss', [xn, tn2, pos(5, dtype=np.float64)],
         attrs={'reduction': 'none', 'ignore_index': -1}, opset=13)
    xn16, tn16 = f(4, 6, dtype=F16), labels((4,), 6)
    exp = -xn16.astype(np.float64)[np.arange(4), tn16].mean()
    case(s, 'test_norm_nll_f16_mean', 'NegativeLogLikelihoodLoss', [xn16, tn16], expected=[np.array(exp, F16)],
         opset=13)
    xs = f(2, 7, 3, 2)
    ts = labels((2, 3, 2), 7)
    ts[1, 2, 0] = 3
    case(s, 'test_norm_sce_4d_ii_logprob', 'SoftmaxCrossEntropyLoss', [xs, ts, pos(7)],
         attrs={'ignore_index': 3}, opset=13, n_out=2)
    case(s, 'test_norm_sce_4d_sym', 'SoftmaxCrossEntropyLoss', [xs, ts], attrs={'reduction': 'none'}, opset=13,
         n_out=2, sym=True)
    case(s, 'test_norm_sce_f64_sum', 'SoftmaxCrossEntropyLoss', [f(5, 4, dtype=np.float64), labels((5,), 4)],
         attrs={'reduction': 'sum'}, opset=12)
    xsb, tsb = f(64, 100, 10), labels((64, 10), 100)
    case(s, 'test_norm_sce_big', 'SoftmaxCrossEntropyLoss', [xsb, tsb], opset=13, n_out=2)

    # ---- Dropout
    xd = f(3, 4, 5)
    case(s, 'test_norm_dropout_v7_mask_float', 'Dropout', [xd], expected=[xd, np.ones_like(xd)],
         attrs={'ratio': 0.3}, opset=7, n_out=2)
    case(s, 'test_norm_dropout_v10_mask_bool', 'Dropout', [xd], expected=[xd, np.ones(xd.shape, bool)],
         opset=10, n_out=2)
    case(s, 'test_norm_dropout_v6_is_test', 'Dropout', [xd], expected=[xd], attrs={'is_test': 1}, opset=6)

    def dropped(x, ratio, seed, scale_dtype=np.float32):
        keep = np.random.RandomState(seed).uniform(0, 1.0, x.shape) >= ratio
        scale = scale_dtype(1.0) / (scale_dtype(1.0) - scale_dtype(ratio))
        y = keep.astype(np.float64 if x.dtype == np.float64 else np.float32) * x.astype(
            np.float64 if x.dtype == np.float64 else np.float32) * scale
        return y.astype(x.dtype), keep

    t = np.array(True)
    xd64 = f(4, 6, dtype=np.float64)
    case(s, 'test_norm_dropout_train_f64', 'Dropout', [xd64, np.array(0.25), t],
         expected=list(dropped(xd64, 0.25, 3, np.float64)), attrs={'seed': 3}, opset=13, n_out=2)
    xd16 = f(4, 6, dtype=F16)
    case(s, 'test_norm_dropout_train_f16', 'Dropout', [xd16, np.array(0.4, np.float32), t],
         expected=[dropped(xd16, np.float32(0.4), 11)[0]], attrs={'seed': 11}, opset=13)
    case(s, 'test_norm_dropout_not_training', 'Dropout', [xd, np.array(0.4, np.float32), np.array(False)],
         expected=[xd, np.ones(xd.shape, bool)], attrs={'seed': 1}, opset=13, n_out=2)
    x8 = _f8(f(4, 5))
    if x8 is not None:
        case(s, 'test_norm_dropout_f8_inference', 'Dropout', [x8], expected=[x8, np.ones(x8.shape, bool)],
             attrs={'seed': 2}, opset=22, n_out=2)
        y8, k8 = dropped(x8.astype(np.float32), np.float32(0.5), 2)
        case(s, 'test_norm_dropout_f8_train', 'Dropout', [x8, np.array(0.5, np.float32), t],
             expected=[_f8(y8), k8], attrs={'seed': 2}, opset=22, n_out=2)
    xdb = f(300, 200)
    case(s, 'test_norm_dropout_train_big', 'Dropout', [xdb, np.array(0.5, np.float32), t],
         expected=list(dropped(xdb, np.float32(0.5), 12345)), attrs={'seed': 12345}, opset=22, n_out=2)

    # ---- NonMaxSuppression
    def boxes(b, n):
        c = rng.uniform(0, 10, (b, n, 2)).astype(np.float32)
        wh = rng.uniform(0.5, 4, (b, n, 2)).astype(np.float32)
        return np.concatenate([c, wh], axis=2)

    bx, sc = boxes(2, 40), rng.uniform(0, 1, (2, 3, 40)).astype(np.float32)

    def i64(v):
        return np.array([v], np.int64)

    def f32(v):
        return np.array([v], np.float32)

    case(s, 'test_norm_nms_center_multi', 'NonMaxSuppression', [bx, sc, i64(5), f32(0.3), f32(0.2)],
         attrs={'center_point_box': 1}, opset=11)
    case(s, 'test_norm_nms_no_score_threshold', 'NonMaxSuppression', [bx, sc, i64(100), f32(0.5)], opset=11)
    case(s, 'test_norm_nms_sym', 'NonMaxSuppression', [bx, sc, i64(3), f32(0.3)], opset=11, sym=True)
    case(s, 'test_norm_nms_no_max', 'NonMaxSuppression', [bx, sc], expected=[np.zeros((0, 3), np.int64)], opset=10)
    # no candidate at all (every score under the threshold; zero boxes; zero classes): an empty
    # selection, and no working memory touched (a fuzz find: the kernel offset a NULL scratch)
    none = [np.zeros((0, 3), np.int64)]
    case(s, 'test_norm_nms_all_below_threshold', 'NonMaxSuppression', [bx, sc, i64(5), f32(0.3), f32(2.0)],
         expected=none, opset=11)
    case(s, 'test_norm_nms_zero_boxes', 'NonMaxSuppression',
         [np.zeros((1, 0, 4), np.float32), np.zeros((1, 2, 0), np.float32), i64(5)], expected=none, opset=11)
    case(s, 'test_norm_nms_zero_classes', 'NonMaxSuppression',
         [bx, np.zeros((2, 0, 40), np.float32), i64(5)], expected=none, opset=11)
    bb, sb = boxes(1, 2000), rng.uniform(0, 1, (1, 2, 2000)).astype(np.float32)
    case(s, 'test_norm_nms_big', 'NonMaxSuppression', [bb, sb, i64(50), f32(0.4), f32(0.1)],
         attrs={'center_point_box': 1}, opset=11)

    # Classes with 512 candidates or more also keep their selections in a grid of cells (a
    # candidate is tested only against the boxes in the cells it touches): each case below has
    # such classes, and the reference tests every selection, so a box the grid misses shows.
    def corners(n, lo, hi, size_lo, size_hi):
        p0 = rng.uniform(lo, hi, (n, 2)).astype(np.float32)
        return np.concatenate([p0, p0 + rng.uniform(size_lo, size_hi, (n, 2)).astype(np.float32)], axis=1)

    # torchvision's batched_nms: one call for all classes, each class's boxes moved by
    # class * (max coordinate + 1), so the boxes lie along a diagonal; some corners flipped
    n = 6000
    cls = rng.integers(0, 20, n)
    g = corners(n, 0, 300, 10, 120) + (cls * 421.0).astype(np.float32)[:, None]
    flip = rng.uniform(0, 1, n) < 0.2
    g[flip] = g[flip][:, [2, 3, 0, 1]]
    case(s, 'test_norm_nms_grid_class_offsets', 'NonMaxSuppression',
         [g[None], rng.uniform(0, 1, (1, 1, n)).astype(np.float32), i64(n), f32(0.5), f32(0.05)], opset=11)
    # several batches and classes, centre format, max_output_boxes_per_class reached
    gc = np.concatenate([rng.uniform(0, 200, (2, 1500, 2)), rng.uniform(1, 15, (2, 1500, 2))],
                        axis=2).astype(np.float32)
    case(s, 'test_norm_nms_grid_batches', 'NonMaxSuppression',
         [gc, rng.uniform(0, 1, (2, 3, 1500)).astype(np.float32), i64(300), f32(0.3), f32(0.2)],
         attrs={'center_point_box': 1}, opset=11)
    # boxes that span most of the grid (kept in the wide list, a few of them with the highest
    # scores), zero-area and NaN boxes, tied scores (the lower index first), IoU threshold 0
    # (any positive overlap suppresses)
    w = np.concatenate([corners(1400, 0, 100, 0.5, 4), corners(40, -10, 80, 30, 60),
                        np.repeat(np.array([[5, 5, 5, 9]], np.float32), 30, 0),
                        np.repeat(np.array([[np.nan, 1, 2, 3]], np.float32), 30, 0)])
    sw = rng.uniform(0, 1, (1, 1, len(w))).astype(np.float32)
    sw[0, 0, rng.integers(0, len(w), 20)] = 0.5
    sw[0, 0, 1400:1404] = 2
    case(s, 'test_norm_nms_grid_wide_and_degenerate', 'NonMaxSuppression',
         [w[None], sw, i64(len(w)), f32(0.0)], opset=11)
    # corners near the float range: the grid's cell count and cell map stay finite
    e = np.concatenate([corners(600, 0, 50, 1, 5), np.array([[-3e38, -3e38, 3e38, 3e38], [1e30, 1e30, 2e30, 2e30],
                                                               [-1e-30, 0, 1e-30, 1e-30]], np.float32)])
    case(s, 'test_norm_nms_grid_extreme_corners', 'NonMaxSuppression',
         [e[None], rng.uniform(0, 1, (1, 1, len(e))).astype(np.float32), i64(len(e)), f32(0.4)], opset=11)
    # boxes twice the mean size touch about nine cells each: the grid's entries (four per
    # possible selection) run out and the last selections go to the wide list, where their
    # twins (shifted a little, scored lower) must still find them
    big = corners(450, 0, 60, 2.8, 3.2)
    d = np.concatenate([big, big + np.float32(0.01), corners(1100, 0, 60, 0.05, 0.1)])
    sd = np.concatenate([rng.uniform(0.5, 1, 450), rng.uniform(0.25, 0.5, 450),
                         rng.uniform(0, 0.25, 1100)]).astype(np.float32)
    case(s, 'test_norm_nms_grid_entries_full', 'NonMaxSuppression',
         [d[None], sd[None, None], i64(600), f32(0.9)], opset=11)
    topk_cases(s)


def topk_cases(s):
    """TopK with k a large share of the row (a detector's 300 best scores of a few thousand): float
    rows of 256 elements or more are sorted whole by a radix sort of order keys. Ties (rounded
    values), -0 beside +0, NaN and infinities; both directions; other layouts keep the heap."""
    rng = np.random.default_rng(11)
    x = np.round(rng.standard_normal((3, 1000)), 1).astype(np.float32)
    x[0, rng.integers(0, 1000, 12)] = np.nan
    x[1, rng.integers(0, 1000, 12)] = -0.0
    x[1, rng.integers(0, 1000, 12)] = 0.0
    x[2, :5] = [np.inf, -np.inf, np.inf, -np.inf, np.nan]
    k = np.array([300], np.int64)
    case(s, 'test_norm_topk_radix_largest', 'TopK', [x, k], opset=11, n_out=2)
    case(s, 'test_norm_topk_radix_smallest', 'TopK', [x, k], attrs={'largest': 0}, opset=11, n_out=2)
    case(s, 'test_norm_topk_radix_every_element', 'TopK', [x, np.array([1000], np.int64)], opset=11, n_out=2)
    d = rng.uniform(0, 1, 1700).astype(np.float32)
    case(s, 'test_norm_topk_radix_1d', 'TopK', [d, k], opset=11, n_out=2)
    # the heap: a strided axis, and a k too small a share of the row
    case(s, 'test_norm_topk_heap_axis0', 'TopK', [x.T.copy(), k], attrs={'axis': 0}, opset=11, n_out=2)
    case(s, 'test_norm_topk_heap_small_k', 'TopK', [x, np.array([100], np.int64)], opset=11, n_out=2)


def bad_cases(b):
    """Inputs onyx must refuse (for make_bad_models.py: b is its BadSuite)."""
    runtime, shape, invalid = 'ONYX_ERR_RUNTIME', 'ONYX_ERR_SHAPE', 'ONYX_ERR_INVALID_MODEL'
    x = np.zeros((3, 5), np.float32)
    b.node('bad_norm_nll_label_high', 'NegativeLogLikelihoodLoss', [x, np.array([0, 5, 1], np.int64)], runtime,
           'label 5 at position 1 is out of range', opset=13)
    b.node('bad_norm_sce_label_negative', 'SoftmaxCrossEntropyLoss', [x, np.array([0, -2, 1], np.int32)], runtime,
           'label -2 at position 1 is out of range', attrs={'ignore_index': -1}, opset=13)
    b.node('bad_norm_sce_label_shape', 'SoftmaxCrossEntropyLoss', [x, np.array([0, 1], np.int64)], shape,
           'labels', opset=13)
    b.node('bad_norm_gn_groups', 'GroupNormalization', [np.zeros((1, 6, 2), np.float32), np.ones(6, np.float32),
           np.zeros(6, np.float32)], shape, 'not a multiple of num_groups', attrs={'num_groups': 4}, opset=21)
    b.node('bad_norm_bn_param_len', 'BatchNormalization', [np.zeros((1, 3, 2), np.float32)] +
           [np.ones(4, np.float32)] * 4, shape, 'expected 3', opset=15)
    b.node('bad_norm_lrn_no_size', 'LRN', [np.zeros((1, 3, 2, 2), np.float32)], invalid, 'size is missing', opset=13)
    b.node('bad_norm_dropout_ratio_one', 'Dropout', [x, np.array(1.0, np.float32), np.array(True)], runtime,
           'ratio is 1', attrs={'seed': 0}, opset=13)
    b.node('bad_norm_nms_boxes_shape', 'NonMaxSuppression', [np.zeros((1, 4, 3), np.float32),
           np.zeros((1, 1, 4), np.float32)], shape, 'boxes', opset=11)

