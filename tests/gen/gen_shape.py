# Shape and data-movement family cases. Most are written twice: with static input shapes, and
# with every input dim symbolic (_sym), where shapes are only known at run time.
import numpy as np
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

from common import case


def both(s, name, op, inputs, **kw):
    case(s, f'test_shp_{name}', op, inputs, **kw)
    case(s, f'test_shp_{name}_sym', op, inputs, sym=True, **kw)


def generate(s):
    rng = np.random.default_rng(0)

    def f(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    def S(*shape):  # noqa: N802  strings of numbers
        return np.array([str(x) for x in rng.integers(0, 1000, size=shape).ravel()], dtype=object).reshape(shape)

    def i64(*v):
        return np.array(v, dtype=np.int64)

    # Large: the strided copy splits across threads (static shapes only: the path is the same).
    case(s, 'test_shp_transpose_big', 'Transpose', [f(3, 40, 50, 7)], attrs={'perm': [2, 0, 3, 1]})
    both(s, 'transpose_2d', 'Transpose', [f(150, 200)])
    both(s, 'transpose_u8', 'Transpose', [rng.integers(0, 255, (33, 65, 3)).astype(np.uint8)],
         attrs={'perm': [1, 2, 0]})
    both(s, 'transpose_str', 'Transpose', [S(3, 4, 5)], attrs={'perm': [2, 0, 1]})
    both(s, 'transpose_f64', 'Transpose', [rng.standard_normal((17, 33, 9))], attrs={'perm': [2, 1, 0]})
    both(s, 'transpose_c64', 'Transpose', [(f(9, 40) + 1j * f(9, 40)).astype(np.complex64)])
    both(s, 'slice_negstep', 'Slice',
         [f(20, 30, 10), i64(-1, 25, 8), i64(-100, 2, -100), i64(0, 1, 2), i64(-3, -2, -1)],
         consts=(1, 2, 3, 4))
    both(s, 'slice_dyn', 'Slice', [f(20, 30), i64(2, -5), i64(1000, -1), i64(1, 0), i64(3, 2)])
    both(s, 'slice_str', 'Slice', [S(6, 7), i64(1, 0), i64(5, 7), i64(0, 1), i64(2, 3)])
    both(s, 'slice_i32', 'Slice', [f(6, 7), np.array([1], np.int32), np.array([5], np.int32)])
    both(s, 'slice_v1', 'Slice', [f(6, 7)], attrs={'starts': [1, -3], 'ends': [100, -1], 'axes': [1, 0]}, opset=1)
    both(s, 'concat_str', 'Concat', [S(2, 3), S(2, 1), S(2, 4)], attrs={'axis': -1})
    both(s, 'concat_big', 'Concat', [f(4, 1000, 3), f(4, 7, 3), f(4, 0, 3)], attrs={'axis': 1})
    both(s, 'split_18_uneven', 'Split', [f(11, 4)], attrs={'axis': 0, 'num_outputs': 4}, opset=18, n_out=4)
    both(s, 'split_str', 'Split', [S(6, 4), i64(1, 2, 3)], attrs={'axis': 0}, opset=13, n_out=3)
    both(s, 'split_v11_attr', 'Split', [f(4, 6)], attrs={'axis': 1, 'split': [1, 5]}, opset=11, n_out=2)
    both(s, 'split_v2_equal', 'Split', [f(4, 6)], attrs={'axis': 1}, opset=2, n_out=3)
    both(s, 'gather_axis1', 'Gather', [f(5, 6, 7), i64(-1, 0, 3, 5)], attrs={'axis': 1})
    both(s, 'gather_str', 'Gather', [S(5, 3), np.array([[4, 0], [1, -1]], np.int32)], attrs={'axis': 0})
    both(s, 'gather_scalar_idx', 'Gather', [f(5, 6), np.array(2, np.int64)], attrs={'axis': 1})
    both(s, 'gather_elements_ax1', 'GatherElements', [f(4, 5, 6), rng.integers(-5, 5, (4, 3, 6)).astype(np.int64)],
         attrs={'axis': 1})
    both(s, 'gathernd_b1', 'GatherND', [f(2, 3, 4, 5), rng.integers(0, 3, (2, 6, 2)).astype(np.int64)],
         attrs={'batch_dims': 1})
    both(s, 'gathernd_full', 'GatherND', [f(3, 4), i64(0, 1, 2, 3).reshape(2, 2)])
    both(s, 'tile_big', 'Tile', [f(3, 1, 5), i64(2, 100, 3)])
    both(s, 'tile_str', 'Tile', [S(2, 3), i64(3, 2)])
    both(s, 'pad_reflect_big', 'Pad', [f(4, 5, 6), i64(3, 4, 1, 2, 3, 5)], attrs={'mode': 'reflect'})
    both(s, 'pad_wrap', 'Pad', [f(3, 4), i64(2, 5, 1, 3)], attrs={'mode': 'wrap'})
    both(s, 'pad_str', 'Pad', [S(2, 3), i64(1, 1, 1, 1), np.array('pad', dtype=object)], attrs={'mode': 'constant'})
    both(s, 'pad_v2', 'Pad', [f(2, 3)], attrs={'pads': [1, 0, 0, 2], 'value': 1.5}, opset=2)
    both(s, 'pad_axes_i32', 'Pad', [f(2, 3, 4), i64(1, 2), None, np.array([-1], np.int32)], attrs={'mode': 'edge'})
    # Negative pads crop; numpy's pad (and so the reference) refuses them: by hand.
    x = f(4, 5)
    both(s, 'pad_neg_crop', 'Pad', [x, i64(-1, 2, 0, -3)],
         expected=[np.concatenate([np.zeros((3, 2), np.float32), x[1:, :2]], axis=1)])
    both(s, 'reshape_allowzero', 'Reshape', [f(0, 4), i64(4, 0)], attrs={'allowzero': 1})
    both(s, 'reshape_copyzero', 'Reshape', [f(2, 3, 4), i64(0, -1)])
    both(s, 'reshape_str', 'Reshape', [S(2, 6), i64(3, -1)])
    both(s, 'squeeze_v11', 'Squeeze', [f(1, 3, 1, 2)], attrs={'axes': [-2]}, opset=11)
    both(s, 'squeeze_all', 'Squeeze', [f(1, 3, 1, 2)], opset=13)
    both(s, 'unsqueeze_v1', 'Unsqueeze', [f(3, 2)], attrs={'axes': [0, 3]}, opset=1)
    both(s, 'unsqueeze_neg', 'Unsqueeze', [f(3, 2), i64(-1, 0)], opset=13)
    both(s, 'flatten_v1', 'Flatten', [f(2, 3, 4)], attrs={'axis': 0}, opset=1)
    both(s, 'flatten_neg', 'Flatten', [f(2, 3, 4)], attrs={'axis': -1})
    both(s, 'shape_v1', 'Shape', [f(2, 3, 4)], opset=1)
    both(s, 'shape_slice', 'Shape', [f(2, 3, 4, 5)], attrs={'start': -3, 'end': -1}, opset=15)
    both(s, 'size_str', 'Size', [S(2, 5)])
    both(s, 'range_i64', 'Range', [np.array(-7, np.int64), np.array(20, np.int64), np.array(3, np.int64)], opset=11)
    both(s, 'range_f64', 'Range', [np.array(1.5), np.array(-3.0), np.array(-0.7)], opset=11)
    both(s, 'range_i16_empty', 'Range', [np.array(5, np.int16), np.array(5, np.int16), np.array(1, np.int16)], opset=11)
    both(s, 'cos_i32', 'ConstantOfShape', [i64(2, 3)], attrs={'value': nh.from_array(np.array([7], np.int32))})
    both(s, 'cos_default', 'ConstantOfShape', [i64(4)])
    both(s, 'cos_bool', 'ConstantOfShape', [i64(2, 2)], attrs={'value': nh.from_array(np.array([True]))})
    both(s, 'cos_scalar', 'ConstantOfShape', [np.zeros(0, np.int64)],
         attrs={'value': nh.from_array(np.array([3], np.int64))})
    both(s, 'd2s_crd_big', 'DepthToSpace', [f(2, 36, 5, 7)], attrs={'blocksize': 3, 'mode': 'CRD'})
    both(s, 'd2s_dcr', 'DepthToSpace', [f(1, 8, 2, 3)], attrs={'blocksize': 2})
    both(s, 's2d_big', 'SpaceToDepth', [f(2, 3, 12, 8)], attrs={'blocksize': 4})
    both(s, 'trilu_bigk', 'Trilu', [f(2, 4, 5), np.array(-1000000, np.int64)], attrs={'upper': 0})
    both(s, 'trilu_str', 'Trilu', [S(3, 4), np.array(1, np.int64)])
    both(s, 'onehot_float_idx', 'OneHot', [np.array([[1, -2], [3, 0]], np.int32), np.array(4, np.int64),
                                          np.array([0, 5], np.int32)], attrs={'axis': 1})
    # Float indices are cast to int64 (truncated) before use; the reference compares them as
    # floats and matches nothing: by hand.
    both(s, 'onehot_f_indices', 'OneHot', [np.array([1.7, -1.2, 3.9], np.float32), np.array(4.0, np.float32),
                                          np.array([-1, 1], np.float32)],
         expected=[np.array([[-1, 1, -1, -1], [-1, -1, -1, 1], [-1, -1, -1, 1]], np.float32)])
    both(s, 'eyelike_k', 'EyeLike', [f(4, 6)], attrs={'k': -2, 'dtype': TP.INT32})
    both(s, 'compress_noaxis', 'Compress', [f(3, 4), np.array([0, 1, 1, 0, 0, 1], bool)])
    both(s, 'compress_str', 'Compress', [S(3, 4), np.array([1, 0, 1, 0], bool)], attrs={'axis': 1})
    both(s, 'nonzero_3d', 'NonZero',
         [(rng.integers(0, 3, (3, 4, 5)) * rng.integers(0, 2, (3, 4, 5))).astype(np.float32)])
    both(s, 'nonzero_str', 'NonZero', [np.array(['a', '', 'b'], dtype=object)])
    both(s, 'nonzero_none', 'NonZero', [np.zeros((2, 3), np.int32)])
    both(s, 'scatter_el_add16', 'ScatterElements', [f(3, 4).astype(np.float16), i64(1, 0, 1, 1, 2, 1).reshape(2, 3),
                                                    f(2, 3).astype(np.float16)],
         attrs={'axis': 0, 'reduction': 'add'}, opset=18)
    both(s, 'scatter_el_mul_i32', 'ScatterElements', [rng.integers(-5, 5, (3, 4)).astype(np.int32),
                                                      i64(1, 0, 1, 1, 2, -1).reshape(2, 3),
                                                      rng.integers(-5, 5, (2, 3)).astype(np.int32)],
         attrs={'axis': 1, 'reduction': 'mul'}, opset=18)
    both(s, 'scatter_el_str', 'ScatterElements', [S(3, 4), i64(1, 0, 1, 1, 2, -1).reshape(2, 3), S(2, 3)],
         attrs={'axis': 1}, opset=13)
    both(s, 'scatternd_slices', 'ScatterND', [f(4, 5, 6), i64(0, 2).reshape(2, 1), f(2, 5, 6)], opset=13)
    both(s, 'scatternd_max', 'ScatterND', [f(4, 5), i64(0, 2, 0).reshape(3, 1), f(3, 5)],
         attrs={'reduction': 'max'}, opset=18)
    both(s, 'revseq_big', 'ReverseSequence', [f(6, 4, 3), i64(6, 1, 2, 3)], attrs={'time_axis': 0, 'batch_axis': 1})
    both(s, 'revseq_b0', 'ReverseSequence', [S(3, 5), i64(2, 5, 1)], attrs={'time_axis': 1, 'batch_axis': 0})
    both(s, 'identity_str', 'Identity', [S(2, 2)])
    both(s, 'unique_str', 'Unique', [np.array(['b', 'a', 'b', 'c', 'a'], dtype=object)], attrs={'sorted': 1}, n_out=4)
    both(s, 'unique_axis_unsorted', 'Unique', [np.array([[1, 0, 0], [1, 0, 0], [2, 3, 4], [0, 0, 1]], np.int32)],
         attrs={'sorted': 0, 'axis': 0}, n_out=4)
    both(s, 'unique_f', 'Unique', [np.array([3., 1., 2., 1., 3., -0.5], np.float32)], attrs={'sorted': 0}, n_out=4)
    both(s, 'ccp_str', 'CenterCropPad', [S(3, 5), i64(5, 2)])
    both(s, 'ccp_axes', 'CenterCropPad', [f(4, 5, 6), i64(7, 3)], attrs={'axes': [-1, 0]})
    both(s, 'ts_circ', 'TensorScatter', [f(2, 3, 6, 4), f(2, 3, 3, 4), i64(5, 2)], attrs={'mode': 'circular'}, opset=24)
    both(s, 'ts_lin_axis1', 'TensorScatter', [f(2, 5, 4), f(2, 2, 4), i64(3, 0)], attrs={'axis': 1}, opset=24)

    for name, attrs in [('floats', {'value_floats': [1.5, 2.5]}), ('float', {'value_float': 1.5}),
                        ('int', {'value_int': -3}), ('ints', {'value_ints': [1, 2, 3]}),
                        ('string', {'value_string': 'hello'}), ('strings', {'value_strings': ['a', 'bc']}),
                        ('str_tensor', {'value': nh.from_array(np.array(['x', 'yy'], dtype=object))})]:
        case(s, f'test_shp_const_{name}', 'Constant', [], attrs=attrs, opset=13)
    # The reference evaluator returns sparse_value as a sparse tensor: the dense one is by hand.
    sparse = h.make_sparse_tensor(nh.from_array(np.array([5., 6.], np.float32), 'v'),
                                  nh.from_array(np.array([1, 4], np.int64), 'i'), [2, 3])
    exp = np.zeros((2, 3), np.float32)
    exp.flat[1], exp.flat[4] = 5, 6
    case(s, 'test_shp_const_sparse', 'Constant', [], attrs={'sparse_value': sparse}, opset=13, expected=[exp])

    # Variadic ops past the old 127-input limit (real graphs Concat hundreds of tensors), and a
    # Split into as many outputs; Sum/Max/Mean take the same path.
    for n in (300, 1000):
        xs = [f(2, 1, 3) for _ in range(n)]
        both(s, f'concat_{n}_inputs', 'Concat', xs, attrs={'axis': 1}, expected=[np.concatenate(xs, 1)])
        case(s, f'test_shp_sum_{n}_inputs', 'Sum', xs, expected=[np.sum(np.stack(xs), 0, dtype=np.float32)])
        case(s, f'test_shp_max_{n}_inputs', 'Max', xs, expected=[np.max(np.stack(xs), 0)])
        case(s, f'test_shp_mean_{n}_inputs', 'Mean', xs, expected=[np.mean(np.stack(xs), 0, dtype=np.float32)])
        x = f(2, n)
        case(s, f'test_shp_split_{n}_outputs', 'Split', [x], attrs={'axis': 1}, n_out=n, opset=13,
             expected=np.split(x, n, 1))
        case(s, f'test_shp_split_{n}_sizes', 'Split', [x, np.ones(n, np.int64)], attrs={'axis': 1}, n_out=n,
             opset=13, consts=(1,), expected=np.split(x, n, 1))
