# Image and signal family cases (Resize, Upsample, GridSample, AffineGrid, DFT, STFT, windows,
# MelWeightMatrix) that the node tests miss: other dtypes, odd and non-power-of-two sizes, run-time
# scales, symbolic shapes, and large tensors that split across threads.
import numpy as np
from onnx import TensorProto as TP

from common import case, node_model, reference


def both(s, name, op, inputs, **kw):
    case(s, f'test_sig_{name}', op, inputs, **kw)
    case(s, f'test_sig_{name}_sym', op, inputs, sym=True, **kw)


def generate(s):
    rng = np.random.default_rng(7)

    def f(*shape, dt=np.float32):
        return rng.standard_normal(shape).astype(dt)

    def sc(*v):
        return np.array(v, dtype=np.float32)

    def i64(*v):
        return np.array(v, dtype=np.int64)

    empty = np.zeros((0,), np.float32)

    # ---- Resize
    img_u8 = rng.integers(0, 256, (1, 3, 7, 9)).astype(np.uint8)
    both(s, 'resize_u8_linear', 'Resize', [img_u8, None, sc(1, 1, 1.7, 0.6)],
         attrs={'mode': 'linear'}, consts=(2,), opset=19)
    both(s, 'resize_i8_cubic', 'Resize', [rng.integers(-128, 128, (2, 5, 6)).astype(np.int8), None, None,
                                            i64(2, 11, 4)],
         attrs={'mode': 'cubic', 'cubic_coeff_a': -0.5}, consts=(3,), opset=19)
    both(s, 'resize_f16_linear', 'Resize', [f(1, 2, 5, 6, dt=np.float16), None, sc(1, 1, 2.5, 1.5)],
         attrs={'mode': 'linear', 'coordinate_transformation_mode': 'align_corners'}, consts=(2,), opset=19)
    both(s, 'resize_f64_cubic_aa', 'Resize', [f(2, 3, 17, 13, dt=np.float64), None, sc(1, 1, 0.35, 0.6)],
         attrs={'mode': 'cubic', 'antialias': 1}, consts=(2,), opset=19)
    both(s, 'resize_5d_trilinear', 'Resize', [f(1, 2, 4, 5, 3), None, None, i64(1, 2, 7, 3, 6)],
         attrs={'mode': 'linear', 'coordinate_transformation_mode': 'pytorch_half_pixel'}, consts=(3,), opset=19)
    both(s, 'resize_1d', 'Resize', [f(11), None, sc(2.3)], attrs={'mode': 'cubic',
                                                                 'exclude_outside': 1}, consts=(2,), opset=19)
    both(s, 'resize_axes_not_larger', 'Resize', [f(2, 9, 7, 3), None, None, i64(5, 5)],
         attrs={'mode': 'linear', 'axes': [2, 1], 'keep_aspect_ratio_policy': 'not_larger'}, consts=(3,),
         opset=19)
    both(s, 'resize_tf_crop_cubic', 'Resize', [f(1, 1, 8, 8), sc(0.1, 0.3, 0.9, 1.2), None, i64(5, 6)],
         attrs={'mode': 'cubic', 'axes': [2, 3], 'coordinate_transformation_mode': 'tf_crop_and_resize',
                'extrapolation_value': 3.5}, consts=(1, 3), opset=19)
    both(s, 'resize_hps_down', 'Resize', [f(1, 2, 10, 9), None, sc(1, 1, 0.45, 0.7)],
         attrs={'mode': 'linear', 'coordinate_transformation_mode': 'half_pixel_symmetric'}, consts=(2,),
         opset=19)
    both(s, 'resize_nearest_ceil_excl', 'Resize', [f(1, 1, 4, 5), None, sc(1, 1, 2.6, 1.9)],
         attrs={'mode': 'nearest', 'nearest_mode': 'ceil', 'exclude_outside': 1}, consts=(2,), opset=19)
    # scales only known at run time: the kernel plans in run
    both(s, 'resize_runtime_scales', 'Resize', [f(2, 3, 6, 5), empty, sc(1, 1, 1.5, 2.2)],
         attrs={'mode': 'linear'}, opset=13)
    both(s, 'resize_v11_sizes', 'Resize', [f(1, 2, 6, 5), empty, empty, i64(1, 2, 3, 9)],
         attrs={'mode': 'nearest', 'coordinate_transformation_mode': 'asymmetric'}, consts=(1, 2, 3), opset=11)
    x = f(1, 2, 3, 4)
    both(s, 'resize_v10_nearest', 'Resize', [x, sc(1, 1, 2, 3)], consts=(1,), opset=10,
         expected=[np.repeat(np.repeat(x, 2, axis=2), 3, axis=3)])
    both(s, 'upsample_v7', 'Upsample', [x], attrs={'scales': [1.0, 2.0, 1.0, 2.0]}, opset=7,
         expected=[np.repeat(np.repeat(x, 2, axis=1), 2, axis=3)])
    both(s, 'upsample_v9_i32', 'Upsample', [x.astype(np.int32) * 0 + 5, sc(1, 1, 3, 1)], opset=9,
         expected=[np.full((1, 2, 9, 4), 5, np.int32)])
    case(s, 'test_sig_resize_big_aa', 'Resize', [f(2, 3, 90, 110), None, sc(1, 1, 0.4, 0.55)],
         attrs={'mode': 'linear', 'antialias': 1}, consts=(2,), opset=19)
    # A subnormal scale with antialias leaves the axis empty; its filter width 1/scale used to be
    # converted to int64 first (UBSan). Run-time scales too, so that the kernel plans in run.
    for mode in ('linear', 'cubic'):
        for rt in (False, True):
            case(s, f'test_sig_resize_aa_subnormal_{mode}' + ('_rt' if rt else ''), 'Resize',
                 [f(1, 2, 5, 6), None, sc(1, 1, 0.5, 1e-40)], attrs={'mode': mode, 'antialias': 1},
                 consts=() if rt else (2,), opset=19, expected=[np.zeros((1, 2, 2, 0), np.float32)])
    case(s, 'test_sig_resize_big_up', 'Resize', [f(1, 4, 40, 30) + 3, None, sc(1, 1, 2, 3)],
         attrs={'mode': 'cubic'}, consts=(2,), opset=19)
    # Axes scaled alike: growing, the innermost goes first; shrinking, last (tf_crop's extrapolated
    # columns in the innermost pass, nearest's one tap, cubic's four).
    case(s, 'test_sig_resize_same_ratio_up', 'Resize', [f(1, 5, 9, 13), None, None, i64(1, 5, 72, 104)],
         attrs={'mode': 'linear', 'coordinate_transformation_mode': 'half_pixel'}, consts=(3,), opset=19)
    case(s, 'test_sig_resize_same_ratio_down', 'Resize', [f(2, 3, 40, 36), None, sc(1, 1, 0.5, 0.5)],
         attrs={'mode': 'cubic'}, consts=(2,), opset=19)
    case(s, 'test_sig_resize_same_ratio_tf_crop', 'Resize',
         [f(1, 2, 6, 7), sc(0, 0, -0.17, -0.23, 1, 1, 1.07, 1.13), sc(1, 1, 3, 3)],
         attrs={'mode': 'linear', 'coordinate_transformation_mode': 'tf_crop_and_resize',
                'extrapolation_value': -2.0}, consts=(1, 2), opset=19)
    case(s, 'test_sig_resize_same_ratio_nearest', 'Resize', [f(3, 2, 5, 5), None, sc(1, 1, 4, 4)],
         attrs={'mode': 'nearest'}, consts=(2,), opset=19)

    # ---- GridSample and AffineGrid
    grid = (rng.random((2, 5, 6, 2)) * 2.6 - 1.3).astype(np.float32)
    both(s, 'gridsample_f64_cubic_reflect', 'GridSample', [f(2, 3, 4, 5, dt=np.float64), grid.astype(np.float64)],
         attrs={'mode': 'cubic', 'padding_mode': 'reflection'}, opset=22)
    both(s, 'gridsample_border_align', 'GridSample', [f(2, 2, 6, 3), grid],
         attrs={'mode': 'linear', 'padding_mode': 'border', 'align_corners': 1}, opset=22)
    # v16 names the modes bilinear/bicubic, which the reference only knows as linear/cubic
    xg = f(2, 2, 6, 3)
    m22, feeds = node_model('GridSample', [xg, grid], {'mode': 'cubic'}, opset=22)
    both(s, 'gridsample_v16_bicubic', 'GridSample', [xg, grid], attrs={'mode': 'bicubic'}, opset=16,
         expected=reference(m22, feeds))
    grid3 = (rng.random((1, 3, 4, 2, 3)) * 2.4 - 1.2).astype(np.float32)
    both(s, 'gridsample_3d_cubic', 'GridSample', [f(1, 2, 3, 4, 5), grid3],
         attrs={'mode': 'cubic', 'padding_mode': 'border'}, opset=22)
    both(s, 'gridsample_3d_nearest_reflect', 'GridSample', [f(1, 2, 3, 4, 5), grid3],
         attrs={'mode': 'nearest', 'padding_mode': 'reflection', 'align_corners': 1}, opset=22)
    both(s, 'gridsample_u8_nearest', 'GridSample', [rng.integers(0, 255, (2, 3, 4, 4)).astype(np.uint8), grid],
         attrs={'mode': 'nearest'}, opset=22)
    case(s, 'test_sig_gridsample_big', 'GridSample',
         [f(2, 8, 30, 40), (rng.random((2, 50, 60, 2)) * 2.2 - 1.1).astype(np.float32)],
         attrs={'mode': 'linear'}, opset=22)
    theta2 = f(3, 2, 3)
    both(s, 'affine_grid_2d_odd', 'AffineGrid', [theta2, i64(3, 1, 5, 7)], attrs={'align_corners': 1},
         consts=(1,), opset=20)
    both(s, 'affine_grid_3d_runtime_size', 'AffineGrid', [f(2, 3, 4), i64(2, 1, 3, 1, 4)], opset=20)

    # ---- DFT (radix-2 and Bluestein lengths, padding, truncation, inverse, one-sided)
    both(s, 'dft_bluestein_97', 'DFT', [f(2, 97, 1), None, np.array(1, np.int64)], consts=(2,), opset=20)
    both(s, 'dft_complex_pad', 'DFT', [f(3, 12, 2), np.array(20, np.int64), np.array(-2, np.int64)], consts=(1, 2), opset=20)
    both(s, 'dft_trunc_onesided', 'DFT', [f(2, 4, 16, 1), np.array(11, np.int32), np.array(2, np.int64)],
         attrs={'onesided': 1}, consts=(1, 2), opset=20)
    both(s, 'dft_f64_inverse_axis0', 'DFT', [f(9, 3, 2, dt=np.float64), None, np.array(0, np.int64)],
         attrs={'inverse': 1}, consts=(2,), opset=20)
    both(s, 'dft_irfft_odd', 'DFT', [f(2, 6, 2, dt=np.float64), np.array(11, np.int64), np.array(1, np.int64)],
         attrs={'inverse': 1, 'onesided': 1}, consts=(1, 2), opset=20)
    both(s, 'dft_v17_axis2', 'DFT', [f(2, 3, 30, 1, dt=np.float64)], attrs={'axis': 2}, opset=17)
    case(s, 'test_sig_dft_big', 'DFT', [f(64, 600, 1), None, np.array(1, np.int64)], consts=(2,), opset=20)

    # ---- STFT
    sig = f(2, 100, 1, dt=np.float64)
    both(s, 'stft_f64_window', 'STFT', [sig, np.array(7, np.int64), np.hanning(20).astype(np.float64)], consts=(1,),
         opset=17)
    both(s, 'stft_complex_twosided', 'STFT', [f(1, 50, 2), np.array(5, np.int32), None,
                                              np.array(12, np.int32)],
         attrs={'onesided': 0}, consts=(1, 3), opset=17)
    case(s, 'test_sig_stft_big', 'STFT', [f(3, 8000, 1), np.array(64, np.int64), None, np.array(256, np.int64)], consts=(1, 3), opset=17)

    # ---- windows and MelWeightMatrix
    for op in ('HannWindow', 'HammingWindow', 'BlackmanWindow'):
        low = op.lower()
        case(s, f'test_sig_{low}_f64', op, [np.array(33, np.int64)],
             attrs={'output_datatype': TP.DOUBLE, 'periodic': 0}, opset=17)
        # the reference computes a float16 window in float16 arithmetic; the exact value rounded
        # once is what onyx (and the spec's formula) gives
        m, feeds = node_model(op, [np.array(17, np.int32)], {'output_datatype': TP.DOUBLE}, opset=17)
        case(s, f'test_sig_{low}_f16', op, [np.array(17, np.int32)],
             attrs={'output_datatype': TP.FLOAT16}, opset=17,
             expected=[reference(m, feeds)[0].astype(np.float16)])
        case(s, f'test_sig_{low}_empty', op, [np.array(0, np.int32)], opset=17)
    case(s, 'test_sig_mel_f64', 'MelWeightMatrix',
         [np.array(10, np.int64), np.array(64, np.int64), np.array(16000, np.int64),
          np.array(20.0, np.float64), np.array(7000.0, np.float64)],
         attrs={'output_datatype': TP.DOUBLE}, opset=17)
