/* CPU kernels of the shape family (see cpu_kernels.h for the entry forms). Movement kernels
 * take every byte-aligned type: (DT_ALL_TENSOR & ~DT_SUBBYTE). */
KERNEL("", "Shape", 1, 25, 0, 0, cpu_shape_run)
KERNEL("", "Size", 1, 25, 0, 0, cpu_size_run)
KERNEL("", "Reshape", 1, 25, 0, KF_ALIAS_INPUT0, cpu_reshape_run)
KERNEL("", "Flatten", 1, 25, 0, KF_ALIAS_INPUT0, cpu_reshape_run)
KERNEL("", "Squeeze", 1, 25, 0, KF_ALIAS_INPUT0, cpu_reshape_run)
KERNEL("", "Unsqueeze", 1, 25, 0, KF_ALIAS_INPUT0, cpu_reshape_run)
/* Sequences and optionals select with dtype UNDEFINED, which only the first entry's mask
 * (bit 0) admits before the tensor entry: they get a copy sized at run time, tensors alias. */
KERNEL("", "Identity", 1, 25, 0, KF_ALIAS_INPUT0, cpu_identity_run)
KERNEL_CHAIN("", "Transpose", 1, 25, (DT_ALL_TENSOR & ~DT_SUBBYTE), KF_VIEW | KF_OPAQUE_LAYOUT,
             cpu_transpose_prepare, cpu_transpose_run, cpu_transpose_release,
             cpu_transpose_takes_chain)
KERNEL_CHAIN("", "Concat", 1, 13, (DT_ALL_TENSOR & ~DT_SUBBYTE),
             KF_OPAQUE_LAYOUT | KF_INPLACE_PREFIX, cpu_opaque_prepare, cpu_concat_run,
             cpu_opaque_release, cpu_opaque_takes_chain)
KERNEL("", "Split", 1, 18, (DT_ALL_TENSOR & ~DT_SUBBYTE), KF_VIEW, cpu_split_run)
KERNEL_CHAIN("ai.onyx", "ChannelShuffle", 1, 1, (DT_ALL_TENSOR & ~DT_SUBBYTE), KF_OPAQUE_LAYOUT,
             cpu_opaque_prepare, cpu_channelshuffle_run, cpu_opaque_release,
             cpu_opaque_takes_chain)
KERNEL("", "Slice", 1, 13, (DT_ALL_TENSOR & ~DT_SUBBYTE), KF_VIEW, cpu_slice_run)
KERNEL("", "Gather", 1, 13, (DT_ALL_TENSOR & ~DT_SUBBYTE), KF_VIEW, cpu_gather_run)
KERNEL("", "Tile", 1, 13, (DT_ALL_TENSOR & ~DT_SUBBYTE), 0, cpu_tile_run)
KERNEL("", "Constant", 1, 25, 0, 0, cpu_constant_run)
KERNEL("", "ConstantOfShape", 9, 25, 0, 0, cpu_constant_of_shape_run)
KERNEL("", "Range", 11, 27, 0, 0, cpu_range_run)
KERNEL("", "GatherElements", 11, 13, (DT_ALL_TENSOR & ~DT_SUBBYTE), 0, cpu_gather_elements_run)
KERNEL("", "GatherND", 11, 13, (DT_ALL_TENSOR & ~DT_SUBBYTE), 0, cpu_gather_nd_run)
KERNEL("", "ScatterElements", 11, 18, (DT_ALL_TENSOR & ~DT_SUBBYTE), 0, cpu_scatter_elements_run)
KERNEL("", "Scatter", 9, 11, (DT_ALL_TENSOR & ~DT_SUBBYTE), 0, cpu_scatter_elements_run)
KERNEL("", "ScatterND", 11, 18, (DT_ALL_TENSOR & ~DT_SUBBYTE), 0, cpu_scatter_nd_run)
KERNEL("", "Pad", 1, 25, (DT_ALL_TENSOR & ~DT_SUBBYTE), 0, cpu_pad_run)
KERNEL("", "DepthToSpace", 1, 28, (DT_ALL_TENSOR & ~DT_SUBBYTE), 0, cpu_depth_space_run)
KERNEL("", "SpaceToDepth", 1, 28, (DT_ALL_TENSOR & ~DT_SUBBYTE), 0, cpu_depth_space_run)
KERNEL("", "Trilu", 14, 14, (DT_ALL_TENSOR & ~DT_SUBBYTE), 0, cpu_trilu_run)
KERNEL("", "OneHot", 9, 28, 0, 0, cpu_onehot_run)
KERNEL("", "EyeLike", 9, 22, 0, 0, cpu_eyelike_run)
KERNEL("", "Compress", 9, 28, (DT_ALL_TENSOR & ~DT_SUBBYTE), KF_DYNAMIC_OUTPUT, cpu_compress_run)
KERNEL("", "NonZero", 9, 13, (DT_ALL_TENSOR & ~DT_SUBBYTE), KF_DYNAMIC_OUTPUT, cpu_nonzero_run)
KERNEL("", "ReverseSequence", 10, 28, (DT_ALL_TENSOR & ~DT_SUBBYTE), 0, cpu_reverse_sequence_run)
KERNEL("", "CenterCropPad", 18, 18, (DT_ALL_TENSOR & ~DT_SUBBYTE), 0, cpu_center_crop_pad_run)
KERNEL("", "TensorScatter", 24, 24, (DT_ALL_TENSOR & ~DT_SUBBYTE), 0, cpu_tensor_scatter_run)
KERNEL("", "Unique", 11, 28, (DT_ALL_TENSOR & ~DT_SUBBYTE), KF_DYNAMIC_OUTPUT, cpu_unique_run)
