# Pooling family cases (MaxPool, AveragePool, LpPool, Global*, MaxUnpool, RoiAlign, Col2Im,
# DeformConv, CausalConvWithState): dtypes, ranks and attribute corners the node tests leave out.
# Most are written twice: static shapes (float32 max/average then go through oneDNN) and every
# dim symbolic (_sym: shapes known only at run time, so the own loops run).
import numpy as np

from common import case, node_model, reference


def both(s, name, op, inputs, **kw):
    case(s, f'test_pool_{name}', op, inputs, **kw)
    case(s, f'test_pool_{name}_sym', op, inputs, sym=True, **kw)


def maxpool_with_indices(x, k, s, pads, storage_order):
    """MaxPool values and Indices for 2-D input, computed directly (the reference evaluator
    does not produce Indices for every case)."""
    n, c, hh, ww = x.shape
    oh = (hh + pads[0] + pads[2] - k[0]) // s[0] + 1
    ow = (ww + pads[1] + pads[3] - k[1]) // s[1] + 1
    y = np.zeros((n, c, oh, ow), x.dtype)
    idx = np.zeros((n, c, oh, ow), np.int64)
    for b in range(n):
        for ch in range(c):
            for i in range(oh):
                for j in range(ow):
                    best, bi = None, 0
                    for a in range(k[0]):
                        for e in range(k[1]):
                            h0, w0 = i * s[0] - pads[0] + a, j * s[1] - pads[1] + e
                            if 0 <= h0 < hh and 0 <= w0 < ww and (best is None or x[b, ch, h0, w0] > best):
                                best = x[b, ch, h0, w0]
                                bi = h0 * ww + w0 if storage_order == 0 else h0 + w0 * hh
                    y[b, ch, i, j] = best
                    idx[b, ch, i, j] = (b * c + ch) * hh * ww + bi
    return y, idx


def lppool_2d(x, k, s, d, p, out):
    """LpPool over the taps inside the input (the reference evaluator rescales windows that the
    ceil_mode overhang cuts, onnxruntime and the node tests do not)."""
    n, c, hh, ww = x.shape
    y = np.zeros((n, c) + tuple(out), x.dtype)
    for i in range(out[0]):
        for j in range(out[1]):
            acc = 0
            for a in range(k[0]):
                for e in range(k[1]):
                    h0, w0 = i * s[0] + a * d[0], j * s[1] + e * d[1]
                    if h0 < hh and w0 < ww:
                        acc = acc + np.abs(x[:, :, h0, w0]) ** p
            y[:, :, i, j] = acc ** (1.0 / p)
    return y


def generate(s):
    rng = np.random.default_rng(7)

    def f(*shape, dt=np.float32):
        return rng.standard_normal(shape).astype(dt)

    def i64(*v):
        return np.array(v, dtype=np.int64)

    # MaxPool: every dtype, 1-D/2-D/3-D, ceil_mode, dilations, auto_pad
    # a window far larger than the image: the own loops, not oneDNN's (fuzz_run: 14 s at 2^20)
    both(s, 'max_window_dwarfs_input', 'MaxPool', [f(1, 2, 8, 8)],
         attrs={'kernel_shape': [100, 2], 'auto_pad': 'SAME_LOWER'})
    both(s, 'max_f16_2d_pads', 'MaxPool', [f(2, 3, 9, 8, dt=np.float16)],
         attrs={'kernel_shape': [3, 2], 'strides': [2, 1], 'pads': [1, 0, 2, 1]})
    both(s, 'max_f64_1d_ceil_dil', 'MaxPool', [f(2, 3, 17, dt=np.float64)],
         attrs={'kernel_shape': [3], 'strides': [2], 'dilations': [2], 'ceil_mode': 1, 'pads': [1, 1]})
    both(s, 'max_i8_2d', 'MaxPool', [rng.integers(-128, 127, (1, 4, 7, 9)).astype(np.int8)],
         attrs={'kernel_shape': [3, 3], 'strides': [2, 2], 'pads': [1, 1, 1, 1]})
    both(s, 'max_u8_3d_ceil', 'MaxPool', [rng.integers(0, 255, (1, 2, 5, 6, 7)).astype(np.uint8)],
         attrs={'kernel_shape': [2, 2, 3], 'strides': [2, 2, 2], 'ceil_mode': 1})
    # (the reference evaluator sizes MaxPool's SAME_LOWER with strides as floor(in / stride), not
    # the spec's ceil: the strided SAME_LOWER case is an AveragePool)
    both(s, 'max_f32_same_upper_dil', 'MaxPool', [f(1, 3, 10, 11)],
         attrs={'kernel_shape': [3, 3], 'strides': [2, 3], 'dilations': [2, 1], 'auto_pad': 'SAME_UPPER'})
    both(s, 'avg_f32_same_lower', 'AveragePool', [f(1, 3, 10, 11)],
         attrs={'kernel_shape': [3, 4], 'strides': [2, 3], 'auto_pad': 'SAME_LOWER'})
    both(s, 'max_f32_valid', 'MaxPool', [f(1, 3, 10, 11)],
         attrs={'kernel_shape': [3, 4], 'strides': [3, 2], 'auto_pad': 'VALID'})
    both(s, 'max_v1', 'MaxPool', [f(1, 2, 6, 6)], attrs={'kernel_shape': [2, 2], 'strides': [2, 2]}, opset=1)
    for so in (0, 1):
        x = f(2, 3, 7, 6)
        y, idx = maxpool_with_indices(x, [3, 2], [2, 2], [1, 0, 1, 1], so)
        both(s, f'max_indices_so{so}', 'MaxPool', [x], expected=[y, idx], n_out=2,
             attrs={'kernel_shape': [3, 2], 'strides': [2, 2], 'pads': [1, 0, 1, 1], 'storage_order': so})
    # Large: oneDNN (static) and the parallel loops (sym) over many planes
    both(s, 'max_big_ceil', 'MaxPool', [f(2, 32, 29, 31)],
         attrs={'kernel_shape': [3, 3], 'strides': [2, 2], 'ceil_mode': 1})
    both(s, 'avg_big_pads', 'AveragePool', [f(1, 64, 30, 30)],
         attrs={'kernel_shape': [3, 3], 'strides': [1, 1], 'pads': [1, 1, 1, 1]})

    # AveragePool
    both(s, 'avg_f16_incl_pad_ceil', 'AveragePool', [f(1, 3, 9, 10, dt=np.float16)],
         attrs={'kernel_shape': [3, 3], 'strides': [2, 2], 'pads': [1, 1, 1, 1], 'ceil_mode': 1,
                'count_include_pad': 1})
    both(s, 'avg_f64_dil_v19', 'AveragePool', [f(2, 2, 11, 9, dt=np.float64)],
         attrs={'kernel_shape': [2, 3], 'dilations': [3, 2], 'pads': [1, 2, 0, 1]}, opset=19)
    both(s, 'avg_f32_ceil_excl', 'AveragePool', [f(1, 2, 8, 8)],
         attrs={'kernel_shape': [3, 3], 'strides': [2, 2], 'ceil_mode': 1, 'pads': [1, 1, 1, 1]})
    both(s, 'avg_f32_1d_same_upper', 'AveragePool', [f(2, 3, 13)],
         attrs={'kernel_shape': [4], 'strides': [3], 'auto_pad': 'SAME_UPPER'})
    both(s, 'avg_v7_incl_pad', 'AveragePool', [f(1, 2, 6, 7)],
         attrs={'kernel_shape': [3, 3], 'pads': [1, 1, 1, 1], 'count_include_pad': 1}, opset=7)

    # LpPool
    both(s, 'lp_p1_f64', 'LpPool', [f(1, 3, 8, 7, dt=np.float64)],
         attrs={'kernel_shape': [2, 3], 'strides': [2, 2], 'p': 1, 'pads': [1, 1, 0, 1]}, opset=18)
    xl = f(1, 2, 10, 9)
    both(s, 'lp_p3_ceil_dil', 'LpPool', [xl], expected=[lppool_2d(xl, [3, 2], [2, 2], [1, 2], 3, [5, 4])],
         attrs={'kernel_shape': [3, 2], 'strides': [2, 2], 'p': 3, 'ceil_mode': 1, 'dilations': [1, 2]},
         opset=18)

    # Global pools
    xm = f(2, 3, 4, 5, 6, dt=np.float16)
    both(s, 'gmax_f16_3d', 'GlobalMaxPool', [xm], expected=[xm.max(axis=(2, 3, 4), keepdims=True)])
    both(s, 'gavg_1d', 'GlobalAveragePool', [f(3, 5, 17)])
    xg = f(2, 3, 5, 4, dt=np.float64)
    both(s, 'glp_p3_f64', 'GlobalLpPool', [xg], attrs={'p': 3},
         expected=[(np.abs(xg) ** 3).sum(axis=(2, 3), keepdims=True) ** (1 / 3)])
    both(s, 'gavg_big', 'GlobalAveragePool', [f(2, 256, 9, 9)])

    # MaxUnpool: 1-D and 3-D, output_shape larger than the default
    x3 = f(1, 2, 4, 4, 4)
    idx = np.stack([rng.choice(8 * 8 * 8, 64, replace=False) for _ in range(2)]).reshape(1, 2, 4, 4, 4)
    idx = idx + np.arange(2).reshape(1, 2, 1, 1, 1) * 512
    both(s, 'unpool_3d', 'MaxUnpool', [x3, idx.astype(np.int64)],
         attrs={'kernel_shape': [2, 2, 2], 'strides': [2, 2, 2]})
    x1 = f(2, 3, 5)
    idx1 = (np.arange(5) * 2 + rng.integers(0, 2, (2, 3, 5))) + np.arange(6).reshape(2, 3, 1) * 10
    both(s, 'unpool_1d_out_shape', 'MaxUnpool', [x1, idx1.astype(np.int64), i64(2, 3, 12)],
         attrs={'kernel_shape': [2], 'strides': [2]}, consts=(2,))

    # RoiAlign
    rois = np.array([[0, 0, 7, 7], [1.5, 2.25, 6.5, 5.0], [3, 3, 3.5, 9], [-2, -1, 4, 3]], np.float32)
    # version 10 has no coordinate_transformation_mode and behaves as output_half_pixel (the
    # reference evaluator applies v16's half_pixel default to it): expectations come from v16
    xr, br = f(2, 3, 8, 9), i64(0, 1, 1, 0)
    attrs = {'output_height': 3, 'output_width': 2, 'spatial_scale': 0.75}
    m16, feeds = node_model('RoiAlign', [xr, rois, br], dict(attrs, coordinate_transformation_mode='output_half_pixel'), opset=16)
    both(s, 'roi_v10_avg', 'RoiAlign', [xr, rois, br], attrs=attrs, opset=10, expected=reference(m16, feeds))
    both(s, 'roi_max_f64_half_pixel', 'RoiAlign', [f(2, 3, 8, 9, dt=np.float64), rois.astype(np.float64),
                                                    i64(1, 0, 1, 1)],
         attrs={'output_height': 2, 'output_width': 3, 'mode': 'max', 'sampling_ratio': 2}, opset=16)
    # boxes reaching far past the map (spatial_scale 4 on a 6x6 map): most adaptive samples land
    # off it and weigh 0, and the kernel reads only the ones on it; avg and max (a 0 from off the
    # map counts in the max), negative values so that it matters
    far = np.array([[0, 0, 5, 5], [-3, 1, 2, 7], [1, -2, 4, 0.5]], np.float32)
    for mode in ('avg', 'max'):
        both(s, f'roi_far_boxes_{mode}', 'RoiAlign', [f(1, 2, 6, 6) - 2, far, i64(0, 0, 0)],
             attrs={'output_height': 2, 'output_width': 3, 'spatial_scale': 4.0, 'mode': mode}, opset=16)
    # fuzz_run's spatial_scale of 1e9: 2e8 x 2e8 adaptive samples per bin, of which about 11 x 11
    # land on the 10x10 map in the first bin and none in the others, so every output is within
    # 121 / 4e16 of 0 (the reference evaluator would take days to say so)
    both(s, 'roi_huge_scale', 'RoiAlign', [f(1, 1, 10, 10), np.array([[0, 0, 1, 1]], np.float32), i64(0)],
         attrs={'output_height': 5, 'output_width': 5, 'spatial_scale': 1e9}, opset=16,
         expected=[np.zeros((1, 1, 5, 5), np.float32)])

    # Col2Im: 1-D, 3-D and an integer type
    both(s, 'col2im_1d', 'Col2Im', [f(2, 6, 6), i64(11), i64(3)], attrs={'strides': [2], 'pads': [1, 1]},
         consts=(1, 2), opset=18)
    both(s, 'col2im_3d_i32', 'Col2Im', [rng.integers(-50, 50, (1, 16, 18)).astype(np.int32), i64(4, 4, 4),
                                         i64(2, 2, 2)], attrs={'dilations': [1, 2, 1]}, consts=(1, 2),
         opset=18)

    # DeformConv: groups, offset groups, mask, bias, stride, dilation, double
    xd = f(2, 4, 7, 6, dt=np.float64)
    w = f(6, 2, 2, 3, dt=np.float64)
    oh, ow = (7 + 2 - 3) // 2 + 1, (6 + 0 - 3) // 1 + 1
    off = f(2, 2 * 2 * 3 * 2, oh, ow, dt=np.float64) * 1.5
    mask = rng.random((2, 2 * 2 * 3, oh, ow))
    both(s, 'deform_f64_groups', 'DeformConv', [xd, w, off, f(6, dt=np.float64), mask],
         attrs={'group': 2, 'offset_group': 2, 'strides': [2, 1], 'dilations': [2, 1], 'pads': [1, 0, 1, 0]},
         opset=19)
    both(s, 'deform_f32_nomask', 'DeformConv', [f(1, 3, 6, 6), f(4, 3, 3, 3), f(1, 18, 6, 6)],
         attrs={'pads': [1, 1, 1, 1]}, opset=19)

    # CausalConvWithState: kernel size 1 with bias, and longer past than input
    both(s, 'ccws_k5_short', 'CausalConvWithState', [f(2, 3, 2), f(3, 1, 5), f(3), f(2, 3, 4)],
         attrs={'activation': 'silu'}, n_out=2, opset=27)


def bad(b):
    """Models onyx must refuse (make_bad_models.py's family list: gen_pool.bad): review regressions."""
    SHAPE, INVALID = 'ONYX_ERR_SHAPE', 'ONYX_ERR_INVALID_MODEL'
    rng = np.random.default_rng(5)

    def f(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    # image_shape not constant but of length 4: inference wrote 6 dims into a 5-dim array
    b.node('pool_col2im_image_rank4', 'Col2Im',
           [f(1, 4, 1), np.array([2, 2, 2, 2], np.int64), np.array([1, 1, 1, 1], np.int64)], SHAPE, 'image_shape',
           opset=18)
    # prod(block_shape) = 2^90 overflowed int64 before the window check
    b.node('pool_col2im_block_overflow', 'Col2Im',
           [f(1, 1, 1), np.array([1, 1, 1], np.int64), np.array([2 ** 30] * 3, np.int64)], SHAPE, 'window',
           opset=18, consts=(1, 2))
    # zero channels let offset_group * kernel * 2 overflow int64 before the shapes were compared
    b.node('pool_deform_offset_group_huge', 'DeformConv', [f(1, 0, 3, 3), f(2, 0, 1, 1), f(1, 2, 3, 3)], INVALID,
           'offset_group', attrs={'offset_group': 2 ** 62}, opset=19)
