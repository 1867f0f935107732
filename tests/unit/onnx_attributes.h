/* Every op version's attributes and their types, as onnx 1.23.2 (and, for com.microsoft and
 * its default-domain additions, onnxruntime) define them: written by
 * tools/conformance/gen_onnx_versions.py --attributes; regenerate it, don't edit it.
 * ONNX_ATTRS(domain, op, since_version, "name:TYPE ..."). */
ONNX_ATTRS("", "Abs", 1, "consumed_inputs:INTS")
ONNX_ATTRS("", "Abs", 6, "")
ONNX_ATTRS("", "Abs", 13, "")
ONNX_ATTRS("", "Acos", 7, "")
ONNX_ATTRS("", "Acos", 22, "")
ONNX_ATTRS("", "Acosh", 9, "")
ONNX_ATTRS("", "Acosh", 22, "")
ONNX_ATTRS("", "Add", 1, "axis:INT broadcast:INT consumed_inputs:INTS")
ONNX_ATTRS("", "Add", 6, "axis:INT broadcast:INT")
ONNX_ATTRS("", "Add", 7, "")
ONNX_ATTRS("", "Add", 13, "")
ONNX_ATTRS("", "Add", 14, "")
ONNX_ATTRS("", "AffineGrid", 20, "align_corners:INT")
ONNX_ATTRS("", "And", 1, "axis:INT broadcast:INT")
ONNX_ATTRS("", "And", 7, "")
ONNX_ATTRS("", "ArgMax", 1, "axis:INT keepdims:INT")
ONNX_ATTRS("", "ArgMax", 11, "axis:INT keepdims:INT")
ONNX_ATTRS("", "ArgMax", 12, "axis:INT keepdims:INT select_last_index:INT")
ONNX_ATTRS("", "ArgMax", 13, "axis:INT keepdims:INT select_last_index:INT")
ONNX_ATTRS("", "ArgMin", 1, "axis:INT keepdims:INT")
ONNX_ATTRS("", "ArgMin", 11, "axis:INT keepdims:INT")
ONNX_ATTRS("", "ArgMin", 12, "axis:INT keepdims:INT select_last_index:INT")
ONNX_ATTRS("", "ArgMin", 13, "axis:INT keepdims:INT select_last_index:INT")
ONNX_ATTRS("", "Asin", 7, "")
ONNX_ATTRS("", "Asin", 22, "")
ONNX_ATTRS("", "Asinh", 9, "")
ONNX_ATTRS("", "Asinh", 22, "")
ONNX_ATTRS("", "Atan", 7, "")
ONNX_ATTRS("", "Atan", 22, "")
ONNX_ATTRS("", "Atanh", 9, "")
ONNX_ATTRS("", "Atanh", 22, "")
ONNX_ATTRS("", "Attention", 23,
    "is_causal:INT kv_num_heads:INT q_num_heads:INT "
    "qk_matmul_output_mode:INT scale:FLOAT softcap:FLOAT "
    "softmax_precision:INT")
ONNX_ATTRS("", "Attention", 24,
    "is_causal:INT kv_num_heads:INT q_num_heads:INT "
    "qk_matmul_output_mode:INT scale:FLOAT softcap:FLOAT "
    "softmax_precision:INT")
ONNX_ATTRS("", "Attention", 25,
    "is_causal:INT kv_num_heads:INT left_window_size:INT q_num_heads:INT "
    "qk_matmul_output_mode:INT right_window_size:INT scale:FLOAT "
    "softcap:FLOAT softmax_precision:INT")
ONNX_ATTRS("", "AveragePool", 1, "auto_pad:STRING kernel_shape:INTS pads:INTS strides:INTS")
ONNX_ATTRS("", "AveragePool", 7,
    "auto_pad:STRING count_include_pad:INT kernel_shape:INTS pads:INTS "
    "strides:INTS")
ONNX_ATTRS("", "AveragePool", 10,
    "auto_pad:STRING ceil_mode:INT count_include_pad:INT kernel_shape:INTS "
    "pads:INTS strides:INTS")
ONNX_ATTRS("", "AveragePool", 11,
    "auto_pad:STRING ceil_mode:INT count_include_pad:INT kernel_shape:INTS "
    "pads:INTS strides:INTS")
ONNX_ATTRS("", "AveragePool", 19,
    "auto_pad:STRING ceil_mode:INT count_include_pad:INT dilations:INTS "
    "kernel_shape:INTS pads:INTS strides:INTS")
ONNX_ATTRS("", "AveragePool", 22,
    "auto_pad:STRING ceil_mode:INT count_include_pad:INT dilations:INTS "
    "kernel_shape:INTS pads:INTS strides:INTS")
ONNX_ATTRS("", "BatchNormalization", 1,
    "consumed_inputs:INTS epsilon:FLOAT is_test:INT momentum:FLOAT "
    "spatial:INT")
ONNX_ATTRS("", "BatchNormalization", 6, "epsilon:FLOAT is_test:INT momentum:FLOAT spatial:INT")
ONNX_ATTRS("", "BatchNormalization", 7, "epsilon:FLOAT momentum:FLOAT spatial:INT")
ONNX_ATTRS("", "BatchNormalization", 9, "epsilon:FLOAT momentum:FLOAT")
ONNX_ATTRS("", "BatchNormalization", 14, "epsilon:FLOAT momentum:FLOAT training_mode:INT")
ONNX_ATTRS("", "BatchNormalization", 15, "epsilon:FLOAT momentum:FLOAT training_mode:INT")
ONNX_ATTRS("", "Bernoulli", 15, "dtype:INT seed:FLOAT")
ONNX_ATTRS("", "Bernoulli", 22, "dtype:INT seed:FLOAT")
ONNX_ATTRS("", "BitCast", 26, "to:INT")
ONNX_ATTRS("", "BitShift", 11, "direction:STRING")
ONNX_ATTRS("", "BitShift", 28, "direction:STRING")
ONNX_ATTRS("", "BitwiseAnd", 18, "")
ONNX_ATTRS("", "BitwiseNot", 18, "")
ONNX_ATTRS("", "BitwiseOr", 18, "")
ONNX_ATTRS("", "BitwiseXor", 18, "")
ONNX_ATTRS("", "BlackmanWindow", 17, "output_datatype:INT periodic:INT")
ONNX_ATTRS("", "Cast", 1, "to:STRING")
ONNX_ATTRS("", "Cast", 6, "to:INT")
ONNX_ATTRS("", "Cast", 9, "to:INT")
ONNX_ATTRS("", "Cast", 13, "to:INT")
ONNX_ATTRS("", "Cast", 19, "saturate:INT to:INT")
ONNX_ATTRS("", "Cast", 21, "saturate:INT to:INT")
ONNX_ATTRS("", "Cast", 23, "saturate:INT to:INT")
ONNX_ATTRS("", "Cast", 24, "round_mode:STRING saturate:INT to:INT")
ONNX_ATTRS("", "Cast", 25, "round_mode:STRING saturate:INT to:INT")
ONNX_ATTRS("", "Cast", 28, "round_mode:STRING saturate:INT to:INT")
ONNX_ATTRS("", "CastLike", 15, "")
ONNX_ATTRS("", "CastLike", 19, "saturate:INT")
ONNX_ATTRS("", "CastLike", 21, "saturate:INT")
ONNX_ATTRS("", "CastLike", 23, "saturate:INT")
ONNX_ATTRS("", "CastLike", 24, "round_mode:STRING saturate:INT")
ONNX_ATTRS("", "CastLike", 25, "round_mode:STRING saturate:INT")
ONNX_ATTRS("", "CausalConvWithState", 27, "activation:STRING")
ONNX_ATTRS("", "Ceil", 1, "consumed_inputs:INTS")
ONNX_ATTRS("", "Ceil", 6, "")
ONNX_ATTRS("", "Ceil", 13, "")
ONNX_ATTRS("", "Celu", 12, "alpha:FLOAT")
ONNX_ATTRS("", "Celu", 28, "alpha:FLOAT")
ONNX_ATTRS("", "CenterCropPad", 18, "axes:INTS")
ONNX_ATTRS("", "Clip", 1, "consumed_inputs:INTS max:FLOAT min:FLOAT")
ONNX_ATTRS("", "Clip", 6, "max:FLOAT min:FLOAT")
ONNX_ATTRS("", "Clip", 11, "")
ONNX_ATTRS("", "Clip", 12, "")
ONNX_ATTRS("", "Clip", 13, "")
ONNX_ATTRS("", "Col2Im", 18, "dilations:INTS pads:INTS strides:INTS")
ONNX_ATTRS("", "Compress", 9, "axis:INT")
ONNX_ATTRS("", "Compress", 11, "axis:INT")
ONNX_ATTRS("", "Compress", 28, "axis:INT")
ONNX_ATTRS("", "Concat", 1, "axis:INT")
ONNX_ATTRS("", "Concat", 4, "axis:INT")
ONNX_ATTRS("", "Concat", 11, "axis:INT")
ONNX_ATTRS("", "Concat", 13, "axis:INT")
ONNX_ATTRS("", "ConcatFromSequence", 11, "axis:INT new_axis:INT")
ONNX_ATTRS("", "Constant", 1, "value:TENSOR")
ONNX_ATTRS("", "Constant", 9, "value:TENSOR")
ONNX_ATTRS("", "Constant", 11, "sparse_value:SPARSE_TENSOR value:TENSOR")
ONNX_ATTRS("", "Constant", 12,
    "sparse_value:SPARSE_TENSOR value:TENSOR value_float:FLOAT "
    "value_floats:FLOATS value_int:INT value_ints:INTS value_string:STRING "
    "value_strings:STRINGS")
ONNX_ATTRS("", "Constant", 13,
    "sparse_value:SPARSE_TENSOR value:TENSOR value_float:FLOAT "
    "value_floats:FLOATS value_int:INT value_ints:INTS value_string:STRING "
    "value_strings:STRINGS")
ONNX_ATTRS("", "Constant", 19,
    "sparse_value:SPARSE_TENSOR value:TENSOR value_float:FLOAT "
    "value_floats:FLOATS value_int:INT value_ints:INTS value_string:STRING "
    "value_strings:STRINGS")
ONNX_ATTRS("", "Constant", 21,
    "sparse_value:SPARSE_TENSOR value:TENSOR value_float:FLOAT "
    "value_floats:FLOATS value_int:INT value_ints:INTS value_string:STRING "
    "value_strings:STRINGS")
ONNX_ATTRS("", "Constant", 23,
    "sparse_value:SPARSE_TENSOR value:TENSOR value_float:FLOAT "
    "value_floats:FLOATS value_int:INT value_ints:INTS value_string:STRING "
    "value_strings:STRINGS")
ONNX_ATTRS("", "Constant", 24,
    "sparse_value:SPARSE_TENSOR value:TENSOR value_float:FLOAT "
    "value_floats:FLOATS value_int:INT value_ints:INTS value_string:STRING "
    "value_strings:STRINGS")
ONNX_ATTRS("", "Constant", 25,
    "sparse_value:SPARSE_TENSOR value:TENSOR value_float:FLOAT "
    "value_floats:FLOATS value_int:INT value_ints:INTS value_string:STRING "
    "value_strings:STRINGS")
ONNX_ATTRS("", "ConstantOfShape", 9, "value:TENSOR")
ONNX_ATTRS("", "ConstantOfShape", 20, "value:TENSOR")
ONNX_ATTRS("", "ConstantOfShape", 21, "value:TENSOR")
ONNX_ATTRS("", "ConstantOfShape", 23, "value:TENSOR")
ONNX_ATTRS("", "ConstantOfShape", 24, "value:TENSOR")
ONNX_ATTRS("", "ConstantOfShape", 25, "value:TENSOR")
ONNX_ATTRS("", "Conv", 1,
    "auto_pad:STRING dilations:INTS group:INT kernel_shape:INTS pads:INTS "
    "strides:INTS")
ONNX_ATTRS("", "Conv", 11,
    "auto_pad:STRING dilations:INTS group:INT kernel_shape:INTS pads:INTS "
    "strides:INTS")
ONNX_ATTRS("", "Conv", 22,
    "auto_pad:STRING dilations:INTS group:INT kernel_shape:INTS pads:INTS "
    "strides:INTS")
ONNX_ATTRS("", "ConvInteger", 10,
    "auto_pad:STRING dilations:INTS group:INT kernel_shape:INTS pads:INTS "
    "strides:INTS")
ONNX_ATTRS("", "ConvTranspose", 1,
    "auto_pad:STRING dilations:INTS group:INT kernel_shape:INTS "
    "output_padding:INTS output_shape:INTS pads:INTS strides:INTS")
ONNX_ATTRS("", "ConvTranspose", 11,
    "auto_pad:STRING dilations:INTS group:INT kernel_shape:INTS "
    "output_padding:INTS output_shape:INTS pads:INTS strides:INTS")
ONNX_ATTRS("", "ConvTranspose", 22,
    "auto_pad:STRING dilations:INTS group:INT kernel_shape:INTS "
    "output_padding:INTS output_shape:INTS pads:INTS strides:INTS")
ONNX_ATTRS("", "Cos", 7, "")
ONNX_ATTRS("", "Cos", 22, "")
ONNX_ATTRS("", "Cosh", 9, "")
ONNX_ATTRS("", "Cosh", 22, "")
ONNX_ATTRS("", "CumProd", 26, "exclusive:INT reverse:INT")
ONNX_ATTRS("", "CumSum", 11, "exclusive:INT reverse:INT")
ONNX_ATTRS("", "CumSum", 14, "exclusive:INT reverse:INT")
ONNX_ATTRS("", "DFT", 17, "axis:INT inverse:INT onesided:INT")
ONNX_ATTRS("", "DFT", 20, "inverse:INT onesided:INT")
ONNX_ATTRS("", "DeformConv", 19,
    "dilations:INTS group:INT kernel_shape:INTS offset_group:INT pads:INTS "
    "strides:INTS")
ONNX_ATTRS("", "DeformConv", 22,
    "dilations:INTS group:INT kernel_shape:INTS offset_group:INT pads:INTS "
    "strides:INTS")
ONNX_ATTRS("", "DepthToSpace", 1, "blocksize:INT")
ONNX_ATTRS("", "DepthToSpace", 11, "blocksize:INT mode:STRING")
ONNX_ATTRS("", "DepthToSpace", 13, "blocksize:INT mode:STRING")
ONNX_ATTRS("", "DepthToSpace", 28, "blocksize:INT mode:STRING")
ONNX_ATTRS("", "DequantizeLinear", 10, "")
ONNX_ATTRS("", "DequantizeLinear", 13, "axis:INT")
ONNX_ATTRS("", "DequantizeLinear", 19, "axis:INT")
ONNX_ATTRS("", "DequantizeLinear", 21, "axis:INT block_size:INT")
ONNX_ATTRS("", "DequantizeLinear", 23, "axis:INT block_size:INT output_dtype:INT")
ONNX_ATTRS("", "DequantizeLinear", 24, "axis:INT block_size:INT output_dtype:INT")
ONNX_ATTRS("", "DequantizeLinear", 25, "axis:INT block_size:INT output_dtype:INT")
ONNX_ATTRS("", "DequantizeLinear", 28, "axis:INT block_size:INT output_dtype:INT")
ONNX_ATTRS("", "Det", 11, "")
ONNX_ATTRS("", "Det", 22, "")
ONNX_ATTRS("", "Div", 1, "axis:INT broadcast:INT consumed_inputs:INTS")
ONNX_ATTRS("", "Div", 6, "axis:INT broadcast:INT")
ONNX_ATTRS("", "Div", 7, "")
ONNX_ATTRS("", "Div", 13, "")
ONNX_ATTRS("", "Div", 14, "")
ONNX_ATTRS("", "Dropout", 1, "consumed_inputs:INTS is_test:INT ratio:FLOAT")
ONNX_ATTRS("", "Dropout", 6, "is_test:INT ratio:FLOAT")
ONNX_ATTRS("", "Dropout", 7, "ratio:FLOAT")
ONNX_ATTRS("", "Dropout", 10, "ratio:FLOAT")
ONNX_ATTRS("", "Dropout", 12, "seed:INT")
ONNX_ATTRS("", "Dropout", 13, "seed:INT")
ONNX_ATTRS("", "Dropout", 22, "seed:INT")
ONNX_ATTRS("", "DynamicQuantizeLinear", 11, "")
ONNX_ATTRS("", "Einsum", 12, "equation:STRING")
ONNX_ATTRS("", "Einsum", 28, "equation:STRING")
ONNX_ATTRS("", "Elu", 1, "alpha:FLOAT consumed_inputs:INTS")
ONNX_ATTRS("", "Elu", 6, "alpha:FLOAT")
ONNX_ATTRS("", "Elu", 22, "alpha:FLOAT")
ONNX_ATTRS("", "Equal", 1, "axis:INT broadcast:INT")
ONNX_ATTRS("", "Equal", 7, "")
ONNX_ATTRS("", "Equal", 11, "")
ONNX_ATTRS("", "Equal", 13, "")
ONNX_ATTRS("", "Equal", 19, "")
ONNX_ATTRS("", "Erf", 9, "")
ONNX_ATTRS("", "Erf", 13, "")
ONNX_ATTRS("", "Exp", 1, "consumed_inputs:INTS")
ONNX_ATTRS("", "Exp", 6, "")
ONNX_ATTRS("", "Exp", 13, "")
ONNX_ATTRS("", "Expand", 8, "")
ONNX_ATTRS("", "Expand", 13, "")
ONNX_ATTRS("", "EyeLike", 9, "dtype:INT k:INT")
ONNX_ATTRS("", "EyeLike", 22, "dtype:INT k:INT")
ONNX_ATTRS("", "Flatten", 1, "axis:INT")
ONNX_ATTRS("", "Flatten", 9, "axis:INT")
ONNX_ATTRS("", "Flatten", 11, "axis:INT")
ONNX_ATTRS("", "Flatten", 13, "axis:INT")
ONNX_ATTRS("", "Flatten", 21, "axis:INT")
ONNX_ATTRS("", "Flatten", 23, "axis:INT")
ONNX_ATTRS("", "Flatten", 24, "axis:INT")
ONNX_ATTRS("", "Flatten", 25, "axis:INT")
ONNX_ATTRS("", "Floor", 1, "consumed_inputs:INTS")
ONNX_ATTRS("", "Floor", 6, "")
ONNX_ATTRS("", "Floor", 13, "")
ONNX_ATTRS("", "GRU", 1,
    "activation_alpha:FLOATS activation_beta:FLOATS activations:STRINGS "
    "clip:FLOAT direction:STRING hidden_size:INT output_sequence:INT")
ONNX_ATTRS("", "GRU", 3,
    "activation_alpha:FLOATS activation_beta:FLOATS activations:STRINGS "
    "clip:FLOAT direction:STRING hidden_size:INT linear_before_reset:INT "
    "output_sequence:INT")
ONNX_ATTRS("", "GRU", 7,
    "activation_alpha:FLOATS activation_beta:FLOATS activations:STRINGS "
    "clip:FLOAT direction:STRING hidden_size:INT linear_before_reset:INT")
ONNX_ATTRS("", "GRU", 14,
    "activation_alpha:FLOATS activation_beta:FLOATS activations:STRINGS "
    "clip:FLOAT direction:STRING hidden_size:INT layout:INT "
    "linear_before_reset:INT")
ONNX_ATTRS("", "GRU", 22,
    "activation_alpha:FLOATS activation_beta:FLOATS activations:STRINGS "
    "clip:FLOAT direction:STRING hidden_size:INT layout:INT "
    "linear_before_reset:INT")
ONNX_ATTRS("", "Gather", 1, "axis:INT")
ONNX_ATTRS("", "Gather", 11, "axis:INT")
ONNX_ATTRS("", "Gather", 13, "axis:INT")
ONNX_ATTRS("", "GatherElements", 11, "axis:INT")
ONNX_ATTRS("", "GatherElements", 13, "axis:INT")
ONNX_ATTRS("", "GatherND", 11, "")
ONNX_ATTRS("", "GatherND", 12, "batch_dims:INT")
ONNX_ATTRS("", "GatherND", 13, "batch_dims:INT")
ONNX_ATTRS("", "Gelu", 20, "approximate:STRING")
ONNX_ATTRS("", "Gemm", 1, "alpha:FLOAT beta:FLOAT broadcast:INT transA:INT transB:INT")
ONNX_ATTRS("", "Gemm", 6, "alpha:FLOAT beta:FLOAT broadcast:INT transA:INT transB:INT")
ONNX_ATTRS("", "Gemm", 7, "alpha:FLOAT beta:FLOAT transA:INT transB:INT")
ONNX_ATTRS("", "Gemm", 9, "alpha:FLOAT beta:FLOAT transA:INT transB:INT")
ONNX_ATTRS("", "Gemm", 11, "alpha:FLOAT beta:FLOAT transA:INT transB:INT")
ONNX_ATTRS("", "Gemm", 13, "alpha:FLOAT beta:FLOAT transA:INT transB:INT")
ONNX_ATTRS("", "GlobalAveragePool", 1, "")
ONNX_ATTRS("", "GlobalAveragePool", 22, "")
ONNX_ATTRS("", "GlobalLpPool", 1, "p:FLOAT")
ONNX_ATTRS("", "GlobalLpPool", 2, "p:INT")
ONNX_ATTRS("", "GlobalLpPool", 22, "p:INT")
ONNX_ATTRS("", "GlobalMaxPool", 1, "")
ONNX_ATTRS("", "GlobalMaxPool", 22, "")
ONNX_ATTRS("", "Greater", 1, "axis:INT broadcast:INT")
ONNX_ATTRS("", "Greater", 7, "")
ONNX_ATTRS("", "Greater", 9, "")
ONNX_ATTRS("", "Greater", 13, "")
ONNX_ATTRS("", "GreaterOrEqual", 12, "")
ONNX_ATTRS("", "GreaterOrEqual", 16, "")
ONNX_ATTRS("", "GridSample", 16, "align_corners:INT mode:STRING padding_mode:STRING")
ONNX_ATTRS("", "GridSample", 20, "align_corners:INT mode:STRING padding_mode:STRING")
ONNX_ATTRS("", "GridSample", 22, "align_corners:INT mode:STRING padding_mode:STRING")
ONNX_ATTRS("", "GroupNormalization", 18, "epsilon:FLOAT num_groups:INT")
ONNX_ATTRS("", "GroupNormalization", 21, "epsilon:FLOAT num_groups:INT stash_type:INT")
ONNX_ATTRS("", "HammingWindow", 17, "output_datatype:INT periodic:INT")
ONNX_ATTRS("", "HannWindow", 17, "output_datatype:INT periodic:INT")
ONNX_ATTRS("", "HardSigmoid", 1, "alpha:FLOAT beta:FLOAT consumed_inputs:INTS")
ONNX_ATTRS("", "HardSigmoid", 6, "alpha:FLOAT beta:FLOAT")
ONNX_ATTRS("", "HardSigmoid", 22, "alpha:FLOAT beta:FLOAT")
ONNX_ATTRS("", "HardSwish", 14, "")
ONNX_ATTRS("", "HardSwish", 22, "")
ONNX_ATTRS("", "Hardmax", 1, "axis:INT")
ONNX_ATTRS("", "Hardmax", 11, "axis:INT")
ONNX_ATTRS("", "Hardmax", 13, "axis:INT")
ONNX_ATTRS("", "Identity", 1, "")
ONNX_ATTRS("", "Identity", 13, "")
ONNX_ATTRS("", "Identity", 14, "")
ONNX_ATTRS("", "Identity", 16, "")
ONNX_ATTRS("", "Identity", 19, "")
ONNX_ATTRS("", "Identity", 21, "")
ONNX_ATTRS("", "Identity", 23, "")
ONNX_ATTRS("", "Identity", 24, "")
ONNX_ATTRS("", "Identity", 25, "")
ONNX_ATTRS("", "If", 1, "else_branch:GRAPH then_branch:GRAPH")
ONNX_ATTRS("", "If", 11, "else_branch:GRAPH then_branch:GRAPH")
ONNX_ATTRS("", "If", 13, "else_branch:GRAPH then_branch:GRAPH")
ONNX_ATTRS("", "If", 16, "else_branch:GRAPH then_branch:GRAPH")
ONNX_ATTRS("", "If", 19, "else_branch:GRAPH then_branch:GRAPH")
ONNX_ATTRS("", "If", 21, "else_branch:GRAPH then_branch:GRAPH")
ONNX_ATTRS("", "If", 23, "else_branch:GRAPH then_branch:GRAPH")
ONNX_ATTRS("", "If", 24, "else_branch:GRAPH then_branch:GRAPH")
ONNX_ATTRS("", "If", 25, "else_branch:GRAPH then_branch:GRAPH")
ONNX_ATTRS("", "ImageDecoder", 20, "pixel_format:STRING")
ONNX_ATTRS("", "InstanceNormalization", 1, "consumed_inputs:INTS epsilon:FLOAT")
ONNX_ATTRS("", "InstanceNormalization", 6, "epsilon:FLOAT")
ONNX_ATTRS("", "InstanceNormalization", 22, "epsilon:FLOAT")
ONNX_ATTRS("", "IsInf", 10, "detect_negative:INT detect_positive:INT")
ONNX_ATTRS("", "IsInf", 20, "detect_negative:INT detect_positive:INT")
ONNX_ATTRS("", "IsNaN", 9, "")
ONNX_ATTRS("", "IsNaN", 13, "")
ONNX_ATTRS("", "IsNaN", 20, "")
ONNX_ATTRS("", "LRN", 1, "alpha:FLOAT beta:FLOAT bias:FLOAT size:INT")
ONNX_ATTRS("", "LRN", 13, "alpha:FLOAT beta:FLOAT bias:FLOAT size:INT")
ONNX_ATTRS("", "LSTM", 1,
    "activation_alpha:FLOATS activation_beta:FLOATS activations:STRINGS "
    "clip:FLOAT direction:STRING hidden_size:INT input_forget:INT "
    "output_sequence:INT")
ONNX_ATTRS("", "LSTM", 7,
    "activation_alpha:FLOATS activation_beta:FLOATS activations:STRINGS "
    "clip:FLOAT direction:STRING hidden_size:INT input_forget:INT")
ONNX_ATTRS("", "LSTM", 14,
    "activation_alpha:FLOATS activation_beta:FLOATS activations:STRINGS "
    "clip:FLOAT direction:STRING hidden_size:INT input_forget:INT "
    "layout:INT")
ONNX_ATTRS("", "LSTM", 22,
    "activation_alpha:FLOATS activation_beta:FLOATS activations:STRINGS "
    "clip:FLOAT direction:STRING hidden_size:INT input_forget:INT "
    "layout:INT")
ONNX_ATTRS("", "LayerNormalization", 17, "axis:INT epsilon:FLOAT stash_type:INT")
ONNX_ATTRS("", "LeakyRelu", 1, "alpha:FLOAT consumed_inputs:INTS")
ONNX_ATTRS("", "LeakyRelu", 6, "alpha:FLOAT")
ONNX_ATTRS("", "LeakyRelu", 16, "alpha:FLOAT")
ONNX_ATTRS("", "Less", 1, "axis:INT broadcast:INT")
ONNX_ATTRS("", "Less", 7, "")
ONNX_ATTRS("", "Less", 9, "")
ONNX_ATTRS("", "Less", 13, "")
ONNX_ATTRS("", "LessOrEqual", 12, "")
ONNX_ATTRS("", "LessOrEqual", 16, "")
ONNX_ATTRS("", "LinearAttention", 27,
    "chunk_size:INT kv_num_heads:INT q_num_heads:INT scale:FLOAT "
    "update_rule:STRING")
ONNX_ATTRS("", "Log", 1, "consumed_inputs:INTS")
ONNX_ATTRS("", "Log", 6, "")
ONNX_ATTRS("", "Log", 13, "")
ONNX_ATTRS("", "LogSoftmax", 1, "axis:INT")
ONNX_ATTRS("", "LogSoftmax", 11, "axis:INT")
ONNX_ATTRS("", "LogSoftmax", 13, "axis:INT")
ONNX_ATTRS("", "Loop", 1, "body:GRAPH")
ONNX_ATTRS("", "Loop", 11, "body:GRAPH")
ONNX_ATTRS("", "Loop", 13, "body:GRAPH")
ONNX_ATTRS("", "Loop", 16, "body:GRAPH")
ONNX_ATTRS("", "Loop", 19, "body:GRAPH")
ONNX_ATTRS("", "Loop", 21, "body:GRAPH")
ONNX_ATTRS("", "Loop", 23, "body:GRAPH")
ONNX_ATTRS("", "Loop", 24, "body:GRAPH")
ONNX_ATTRS("", "Loop", 25, "body:GRAPH")
ONNX_ATTRS("", "LpNormalization", 1, "axis:INT p:INT")
ONNX_ATTRS("", "LpNormalization", 22, "axis:INT p:INT")
ONNX_ATTRS("", "LpPool", 1, "auto_pad:STRING kernel_shape:INTS p:FLOAT pads:INTS strides:INTS")
ONNX_ATTRS("", "LpPool", 2, "auto_pad:STRING kernel_shape:INTS p:INT pads:INTS strides:INTS")
ONNX_ATTRS("", "LpPool", 11, "auto_pad:STRING kernel_shape:INTS p:INT pads:INTS strides:INTS")
ONNX_ATTRS("", "LpPool", 18,
    "auto_pad:STRING ceil_mode:INT dilations:INTS kernel_shape:INTS p:INT "
    "pads:INTS strides:INTS")
ONNX_ATTRS("", "LpPool", 22,
    "auto_pad:STRING ceil_mode:INT dilations:INTS kernel_shape:INTS p:INT "
    "pads:INTS strides:INTS")
ONNX_ATTRS("", "MatMul", 1, "")
ONNX_ATTRS("", "MatMul", 9, "")
ONNX_ATTRS("", "MatMul", 13, "")
ONNX_ATTRS("", "MatMulInteger", 10, "")
ONNX_ATTRS("", "Max", 1, "consumed_inputs:INTS")
ONNX_ATTRS("", "Max", 6, "")
ONNX_ATTRS("", "Max", 8, "")
ONNX_ATTRS("", "Max", 12, "")
ONNX_ATTRS("", "Max", 13, "")
ONNX_ATTRS("", "MaxPool", 1, "auto_pad:STRING kernel_shape:INTS pads:INTS strides:INTS")
ONNX_ATTRS("", "MaxPool", 8,
    "auto_pad:STRING kernel_shape:INTS pads:INTS storage_order:INT "
    "strides:INTS")
ONNX_ATTRS("", "MaxPool", 10,
    "auto_pad:STRING ceil_mode:INT dilations:INTS kernel_shape:INTS "
    "pads:INTS storage_order:INT strides:INTS")
ONNX_ATTRS("", "MaxPool", 11,
    "auto_pad:STRING ceil_mode:INT dilations:INTS kernel_shape:INTS "
    "pads:INTS storage_order:INT strides:INTS")
ONNX_ATTRS("", "MaxPool", 12,
    "auto_pad:STRING ceil_mode:INT dilations:INTS kernel_shape:INTS "
    "pads:INTS storage_order:INT strides:INTS")
ONNX_ATTRS("", "MaxPool", 22,
    "auto_pad:STRING ceil_mode:INT dilations:INTS kernel_shape:INTS "
    "pads:INTS storage_order:INT strides:INTS")
ONNX_ATTRS("", "MaxRoiPool", 1, "pooled_shape:INTS spatial_scale:FLOAT")
ONNX_ATTRS("", "MaxRoiPool", 22, "pooled_shape:INTS spatial_scale:FLOAT")
ONNX_ATTRS("", "MaxUnpool", 9, "kernel_shape:INTS pads:INTS strides:INTS")
ONNX_ATTRS("", "MaxUnpool", 11, "kernel_shape:INTS pads:INTS strides:INTS")
ONNX_ATTRS("", "MaxUnpool", 22, "kernel_shape:INTS pads:INTS strides:INTS")
ONNX_ATTRS("", "Mean", 1, "consumed_inputs:INTS")
ONNX_ATTRS("", "Mean", 6, "")
ONNX_ATTRS("", "Mean", 8, "")
ONNX_ATTRS("", "Mean", 13, "")
ONNX_ATTRS("", "MeanVarianceNormalization", 9, "axes:INTS")
ONNX_ATTRS("", "MeanVarianceNormalization", 13, "axes:INTS")
ONNX_ATTRS("", "MelWeightMatrix", 17, "output_datatype:INT")
ONNX_ATTRS("", "Min", 1, "consumed_inputs:INTS")
ONNX_ATTRS("", "Min", 6, "")
ONNX_ATTRS("", "Min", 8, "")
ONNX_ATTRS("", "Min", 12, "")
ONNX_ATTRS("", "Min", 13, "")
ONNX_ATTRS("", "Mish", 18, "")
ONNX_ATTRS("", "Mish", 22, "")
ONNX_ATTRS("", "Mod", 10, "fmod:INT")
ONNX_ATTRS("", "Mod", 13, "fmod:INT")
ONNX_ATTRS("", "Mod", 28, "fmod:INT")
ONNX_ATTRS("", "Mul", 1, "axis:INT broadcast:INT consumed_inputs:INTS")
ONNX_ATTRS("", "Mul", 6, "axis:INT broadcast:INT")
ONNX_ATTRS("", "Mul", 7, "")
ONNX_ATTRS("", "Mul", 13, "")
ONNX_ATTRS("", "Mul", 14, "")
ONNX_ATTRS("", "Multinomial", 7, "dtype:INT sample_size:INT seed:FLOAT")
ONNX_ATTRS("", "Multinomial", 22, "dtype:INT sample_size:INT seed:FLOAT")
ONNX_ATTRS("", "Neg", 1, "consumed_inputs:INTS")
ONNX_ATTRS("", "Neg", 6, "")
ONNX_ATTRS("", "Neg", 13, "")
ONNX_ATTRS("", "NegativeLogLikelihoodLoss", 12, "ignore_index:INT reduction:STRING")
ONNX_ATTRS("", "NegativeLogLikelihoodLoss", 13, "ignore_index:INT reduction:STRING")
ONNX_ATTRS("", "NegativeLogLikelihoodLoss", 22, "ignore_index:INT reduction:STRING")
ONNX_ATTRS("", "NonMaxSuppression", 10, "center_point_box:INT")
ONNX_ATTRS("", "NonMaxSuppression", 11, "center_point_box:INT")
ONNX_ATTRS("", "NonZero", 9, "")
ONNX_ATTRS("", "NonZero", 13, "")
ONNX_ATTRS("", "Not", 1, "")
ONNX_ATTRS("", "OneHot", 9, "axis:INT")
ONNX_ATTRS("", "OneHot", 11, "axis:INT")
ONNX_ATTRS("", "OneHot", 28, "axis:INT")
ONNX_ATTRS("", "Optional", 15, "type:TYPE_PROTO")
ONNX_ATTRS("", "Optional", 28, "type:TYPE_PROTO")
ONNX_ATTRS("", "OptionalGetElement", 15, "")
ONNX_ATTRS("", "OptionalGetElement", 18, "")
ONNX_ATTRS("", "OptionalGetElement", 28, "")
ONNX_ATTRS("", "OptionalHasElement", 15, "")
ONNX_ATTRS("", "OptionalHasElement", 18, "")
ONNX_ATTRS("", "OptionalHasElement", 28, "")
ONNX_ATTRS("", "Or", 1, "axis:INT broadcast:INT")
ONNX_ATTRS("", "Or", 7, "")
ONNX_ATTRS("", "PRelu", 1, "consumed_inputs:INTS")
ONNX_ATTRS("", "PRelu", 6, "")
ONNX_ATTRS("", "PRelu", 7, "")
ONNX_ATTRS("", "PRelu", 9, "")
ONNX_ATTRS("", "PRelu", 16, "")
ONNX_ATTRS("", "Pad", 1, "mode:STRING paddings:INTS value:FLOAT")
ONNX_ATTRS("", "Pad", 2, "mode:STRING pads:INTS value:FLOAT")
ONNX_ATTRS("", "Pad", 11, "mode:STRING")
ONNX_ATTRS("", "Pad", 13, "mode:STRING")
ONNX_ATTRS("", "Pad", 18, "mode:STRING")
ONNX_ATTRS("", "Pad", 19, "mode:STRING")
ONNX_ATTRS("", "Pad", 21, "mode:STRING")
ONNX_ATTRS("", "Pad", 23, "mode:STRING")
ONNX_ATTRS("", "Pad", 24, "mode:STRING")
ONNX_ATTRS("", "Pad", 25, "mode:STRING")
ONNX_ATTRS("", "Pow", 1, "axis:INT broadcast:INT")
ONNX_ATTRS("", "Pow", 7, "")
ONNX_ATTRS("", "Pow", 12, "")
ONNX_ATTRS("", "Pow", 13, "")
ONNX_ATTRS("", "Pow", 15, "")
ONNX_ATTRS("", "QLinearConv", 10,
    "auto_pad:STRING dilations:INTS group:INT kernel_shape:INTS pads:INTS "
    "strides:INTS")
ONNX_ATTRS("", "QLinearMatMul", 10, "")
ONNX_ATTRS("", "QLinearMatMul", 21, "")
ONNX_ATTRS("", "QuantizeLinear", 10, "")
ONNX_ATTRS("", "QuantizeLinear", 13, "axis:INT")
ONNX_ATTRS("", "QuantizeLinear", 19, "axis:INT saturate:INT")
ONNX_ATTRS("", "QuantizeLinear", 21, "axis:INT block_size:INT output_dtype:INT saturate:INT")
ONNX_ATTRS("", "QuantizeLinear", 23,
    "axis:INT block_size:INT output_dtype:INT precision:INT saturate:INT")
ONNX_ATTRS("", "QuantizeLinear", 24,
    "axis:INT block_size:INT output_dtype:INT precision:INT saturate:INT")
ONNX_ATTRS("", "QuantizeLinear", 25,
    "axis:INT block_size:INT output_dtype:INT precision:INT saturate:INT")
ONNX_ATTRS("", "QuantizeLinear", 28,
    "axis:INT block_size:INT output_dtype:INT precision:INT saturate:INT")
ONNX_ATTRS("", "RMSNormalization", 23, "axis:INT epsilon:FLOAT stash_type:INT")
ONNX_ATTRS("", "RNN", 1,
    "activation_alpha:FLOATS activation_beta:FLOATS activations:STRINGS "
    "clip:FLOAT direction:STRING hidden_size:INT output_sequence:INT")
ONNX_ATTRS("", "RNN", 7,
    "activation_alpha:FLOATS activation_beta:FLOATS activations:STRINGS "
    "clip:FLOAT direction:STRING hidden_size:INT")
ONNX_ATTRS("", "RNN", 14,
    "activation_alpha:FLOATS activation_beta:FLOATS activations:STRINGS "
    "clip:FLOAT direction:STRING hidden_size:INT layout:INT")
ONNX_ATTRS("", "RNN", 22,
    "activation_alpha:FLOATS activation_beta:FLOATS activations:STRINGS "
    "clip:FLOAT direction:STRING hidden_size:INT layout:INT")
ONNX_ATTRS("", "RandomNormal", 1, "dtype:INT mean:FLOAT scale:FLOAT seed:FLOAT shape:INTS")
ONNX_ATTRS("", "RandomNormal", 22, "dtype:INT mean:FLOAT scale:FLOAT seed:FLOAT shape:INTS")
ONNX_ATTRS("", "RandomNormalLike", 1, "dtype:INT mean:FLOAT scale:FLOAT seed:FLOAT")
ONNX_ATTRS("", "RandomNormalLike", 22, "dtype:INT mean:FLOAT scale:FLOAT seed:FLOAT")
ONNX_ATTRS("", "RandomUniform", 1, "dtype:INT high:FLOAT low:FLOAT seed:FLOAT shape:INTS")
ONNX_ATTRS("", "RandomUniform", 22, "dtype:INT high:FLOAT low:FLOAT seed:FLOAT shape:INTS")
ONNX_ATTRS("", "RandomUniformLike", 1, "dtype:INT high:FLOAT low:FLOAT seed:FLOAT")
ONNX_ATTRS("", "RandomUniformLike", 22, "dtype:INT high:FLOAT low:FLOAT seed:FLOAT")
ONNX_ATTRS("", "Range", 11, "")
ONNX_ATTRS("", "Range", 27, "stash_type:INT")
ONNX_ATTRS("", "Reciprocal", 1, "consumed_inputs:INTS")
ONNX_ATTRS("", "Reciprocal", 6, "")
ONNX_ATTRS("", "Reciprocal", 13, "")
ONNX_ATTRS("", "ReduceL1", 1, "axes:INTS keepdims:INT")
ONNX_ATTRS("", "ReduceL1", 11, "axes:INTS keepdims:INT")
ONNX_ATTRS("", "ReduceL1", 13, "axes:INTS keepdims:INT")
ONNX_ATTRS("", "ReduceL1", 18, "keepdims:INT noop_with_empty_axes:INT")
ONNX_ATTRS("", "ReduceL2", 1, "axes:INTS keepdims:INT")
ONNX_ATTRS("", "ReduceL2", 11, "axes:INTS keepdims:INT")
ONNX_ATTRS("", "ReduceL2", 13, "axes:INTS keepdims:INT")
ONNX_ATTRS("", "ReduceL2", 18, "keepdims:INT noop_with_empty_axes:INT")
ONNX_ATTRS("", "ReduceLogSum", 1, "axes:INTS keepdims:INT")
ONNX_ATTRS("", "ReduceLogSum", 11, "axes:INTS keepdims:INT")
ONNX_ATTRS("", "ReduceLogSum", 13, "axes:INTS keepdims:INT")
ONNX_ATTRS("", "ReduceLogSum", 18, "keepdims:INT noop_with_empty_axes:INT")
ONNX_ATTRS("", "ReduceLogSum", 28, "keepdims:INT noop_with_empty_axes:INT")
ONNX_ATTRS("", "ReduceLogSumExp", 1, "axes:INTS keepdims:INT")
ONNX_ATTRS("", "ReduceLogSumExp", 11, "axes:INTS keepdims:INT")
ONNX_ATTRS("", "ReduceLogSumExp", 13, "axes:INTS keepdims:INT")
ONNX_ATTRS("", "ReduceLogSumExp", 18, "keepdims:INT noop_with_empty_axes:INT")
ONNX_ATTRS("", "ReduceLogSumExp", 28, "keepdims:INT noop_with_empty_axes:INT")
ONNX_ATTRS("", "ReduceMax", 1, "axes:INTS keepdims:INT")
ONNX_ATTRS("", "ReduceMax", 11, "axes:INTS keepdims:INT")
ONNX_ATTRS("", "ReduceMax", 12, "axes:INTS keepdims:INT")
ONNX_ATTRS("", "ReduceMax", 13, "axes:INTS keepdims:INT")
ONNX_ATTRS("", "ReduceMax", 18, "keepdims:INT noop_with_empty_axes:INT")
ONNX_ATTRS("", "ReduceMax", 20, "keepdims:INT noop_with_empty_axes:INT")
ONNX_ATTRS("", "ReduceMean", 1, "axes:INTS keepdims:INT")
ONNX_ATTRS("", "ReduceMean", 11, "axes:INTS keepdims:INT")
ONNX_ATTRS("", "ReduceMean", 13, "axes:INTS keepdims:INT")
ONNX_ATTRS("", "ReduceMean", 18, "keepdims:INT noop_with_empty_axes:INT")
ONNX_ATTRS("", "ReduceMin", 1, "axes:INTS keepdims:INT")
ONNX_ATTRS("", "ReduceMin", 11, "axes:INTS keepdims:INT")
ONNX_ATTRS("", "ReduceMin", 12, "axes:INTS keepdims:INT")
ONNX_ATTRS("", "ReduceMin", 13, "axes:INTS keepdims:INT")
ONNX_ATTRS("", "ReduceMin", 18, "keepdims:INT noop_with_empty_axes:INT")
ONNX_ATTRS("", "ReduceMin", 20, "keepdims:INT noop_with_empty_axes:INT")
ONNX_ATTRS("", "ReduceProd", 1, "axes:INTS keepdims:INT")
ONNX_ATTRS("", "ReduceProd", 11, "axes:INTS keepdims:INT")
ONNX_ATTRS("", "ReduceProd", 13, "axes:INTS keepdims:INT")
ONNX_ATTRS("", "ReduceProd", 18, "keepdims:INT noop_with_empty_axes:INT")
ONNX_ATTRS("", "ReduceSum", 1, "axes:INTS keepdims:INT")
ONNX_ATTRS("", "ReduceSum", 11, "axes:INTS keepdims:INT")
ONNX_ATTRS("", "ReduceSum", 13, "keepdims:INT noop_with_empty_axes:INT")
ONNX_ATTRS("", "ReduceSumSquare", 1, "axes:INTS keepdims:INT")
ONNX_ATTRS("", "ReduceSumSquare", 11, "axes:INTS keepdims:INT")
ONNX_ATTRS("", "ReduceSumSquare", 13, "axes:INTS keepdims:INT")
ONNX_ATTRS("", "ReduceSumSquare", 18, "keepdims:INT noop_with_empty_axes:INT")
ONNX_ATTRS("", "RegexFullMatch", 20, "pattern:STRING")
ONNX_ATTRS("", "Relu", 1, "consumed_inputs:INTS")
ONNX_ATTRS("", "Relu", 6, "")
ONNX_ATTRS("", "Relu", 13, "")
ONNX_ATTRS("", "Relu", 14, "")
ONNX_ATTRS("", "Reshape", 1, "consumed_inputs:INTS shape:INTS")
ONNX_ATTRS("", "Reshape", 5, "")
ONNX_ATTRS("", "Reshape", 13, "")
ONNX_ATTRS("", "Reshape", 14, "allowzero:INT")
ONNX_ATTRS("", "Reshape", 19, "allowzero:INT")
ONNX_ATTRS("", "Reshape", 21, "allowzero:INT")
ONNX_ATTRS("", "Reshape", 23, "allowzero:INT")
ONNX_ATTRS("", "Reshape", 24, "allowzero:INT")
ONNX_ATTRS("", "Reshape", 25, "allowzero:INT")
ONNX_ATTRS("", "Resize", 10, "mode:STRING")
ONNX_ATTRS("", "Resize", 11,
    "coordinate_transformation_mode:STRING cubic_coeff_a:FLOAT "
    "exclude_outside:INT extrapolation_value:FLOAT mode:STRING "
    "nearest_mode:STRING")
ONNX_ATTRS("", "Resize", 13,
    "coordinate_transformation_mode:STRING cubic_coeff_a:FLOAT "
    "exclude_outside:INT extrapolation_value:FLOAT mode:STRING "
    "nearest_mode:STRING")
ONNX_ATTRS("", "Resize", 18,
    "antialias:INT axes:INTS coordinate_transformation_mode:STRING "
    "cubic_coeff_a:FLOAT exclude_outside:INT extrapolation_value:FLOAT "
    "keep_aspect_ratio_policy:STRING mode:STRING nearest_mode:STRING")
ONNX_ATTRS("", "Resize", 19,
    "antialias:INT axes:INTS coordinate_transformation_mode:STRING "
    "cubic_coeff_a:FLOAT exclude_outside:INT extrapolation_value:FLOAT "
    "keep_aspect_ratio_policy:STRING mode:STRING nearest_mode:STRING")
ONNX_ATTRS("", "ReverseSequence", 10, "batch_axis:INT time_axis:INT")
ONNX_ATTRS("", "ReverseSequence", 28, "batch_axis:INT time_axis:INT")
ONNX_ATTRS("", "RoiAlign", 10,
    "mode:STRING output_height:INT output_width:INT sampling_ratio:INT "
    "spatial_scale:FLOAT")
ONNX_ATTRS("", "RoiAlign", 16,
    "coordinate_transformation_mode:STRING mode:STRING output_height:INT "
    "output_width:INT sampling_ratio:INT spatial_scale:FLOAT")
ONNX_ATTRS("", "RoiAlign", 22,
    "coordinate_transformation_mode:STRING mode:STRING output_height:INT "
    "output_width:INT sampling_ratio:INT spatial_scale:FLOAT")
ONNX_ATTRS("", "RotaryEmbedding", 23, "interleaved:INT num_heads:INT rotary_embedding_dim:INT")
ONNX_ATTRS("", "Round", 11, "")
ONNX_ATTRS("", "Round", 22, "")
ONNX_ATTRS("", "STFT", 17, "onesided:INT")
ONNX_ATTRS("", "Scan", 8, "body:GRAPH directions:INTS num_scan_inputs:INT")
ONNX_ATTRS("", "Scan", 9,
    "body:GRAPH num_scan_inputs:INT scan_input_axes:INTS "
    "scan_input_directions:INTS scan_output_axes:INTS "
    "scan_output_directions:INTS")
ONNX_ATTRS("", "Scan", 11,
    "body:GRAPH num_scan_inputs:INT scan_input_axes:INTS "
    "scan_input_directions:INTS scan_output_axes:INTS "
    "scan_output_directions:INTS")
ONNX_ATTRS("", "Scan", 16,
    "body:GRAPH num_scan_inputs:INT scan_input_axes:INTS "
    "scan_input_directions:INTS scan_output_axes:INTS "
    "scan_output_directions:INTS")
ONNX_ATTRS("", "Scan", 19,
    "body:GRAPH num_scan_inputs:INT scan_input_axes:INTS "
    "scan_input_directions:INTS scan_output_axes:INTS "
    "scan_output_directions:INTS")
ONNX_ATTRS("", "Scan", 21,
    "body:GRAPH num_scan_inputs:INT scan_input_axes:INTS "
    "scan_input_directions:INTS scan_output_axes:INTS "
    "scan_output_directions:INTS")
ONNX_ATTRS("", "Scan", 23,
    "body:GRAPH num_scan_inputs:INT scan_input_axes:INTS "
    "scan_input_directions:INTS scan_output_axes:INTS "
    "scan_output_directions:INTS")
ONNX_ATTRS("", "Scan", 24,
    "body:GRAPH num_scan_inputs:INT scan_input_axes:INTS "
    "scan_input_directions:INTS scan_output_axes:INTS "
    "scan_output_directions:INTS")
ONNX_ATTRS("", "Scan", 25,
    "body:GRAPH num_scan_inputs:INT scan_input_axes:INTS "
    "scan_input_directions:INTS scan_output_axes:INTS "
    "scan_output_directions:INTS")
ONNX_ATTRS("", "Scatter", 9, "axis:INT")
ONNX_ATTRS("", "Scatter", 11, "axis:INT")
ONNX_ATTRS("", "ScatterElements", 11, "axis:INT")
ONNX_ATTRS("", "ScatterElements", 13, "axis:INT")
ONNX_ATTRS("", "ScatterElements", 16, "axis:INT reduction:STRING")
ONNX_ATTRS("", "ScatterElements", 18, "axis:INT reduction:STRING")
ONNX_ATTRS("", "ScatterND", 11, "")
ONNX_ATTRS("", "ScatterND", 13, "")
ONNX_ATTRS("", "ScatterND", 16, "reduction:STRING")
ONNX_ATTRS("", "ScatterND", 18, "reduction:STRING")
ONNX_ATTRS("", "Selu", 1, "alpha:FLOAT consumed_inputs:INTS gamma:FLOAT")
ONNX_ATTRS("", "Selu", 6, "alpha:FLOAT gamma:FLOAT")
ONNX_ATTRS("", "Selu", 22, "alpha:FLOAT gamma:FLOAT")
ONNX_ATTRS("", "SequenceAt", 11, "")
ONNX_ATTRS("", "SequenceConstruct", 11, "")
ONNX_ATTRS("", "SequenceEmpty", 11, "dtype:INT")
ONNX_ATTRS("", "SequenceErase", 11, "")
ONNX_ATTRS("", "SequenceInsert", 11, "")
ONNX_ATTRS("", "SequenceLength", 11, "")
ONNX_ATTRS("", "SequenceMap", 17, "body:GRAPH")
ONNX_ATTRS("", "Shape", 1, "")
ONNX_ATTRS("", "Shape", 13, "")
ONNX_ATTRS("", "Shape", 15, "end:INT start:INT")
ONNX_ATTRS("", "Shape", 19, "end:INT start:INT")
ONNX_ATTRS("", "Shape", 21, "end:INT start:INT")
ONNX_ATTRS("", "Shape", 23, "end:INT start:INT")
ONNX_ATTRS("", "Shape", 24, "end:INT start:INT")
ONNX_ATTRS("", "Shape", 25, "end:INT start:INT")
ONNX_ATTRS("", "Shrink", 9, "bias:FLOAT lambd:FLOAT")
ONNX_ATTRS("", "Sigmoid", 1, "consumed_inputs:INTS")
ONNX_ATTRS("", "Sigmoid", 6, "")
ONNX_ATTRS("", "Sigmoid", 13, "")
ONNX_ATTRS("", "Sign", 9, "")
ONNX_ATTRS("", "Sign", 13, "")
ONNX_ATTRS("", "Sin", 7, "")
ONNX_ATTRS("", "Sin", 22, "")
ONNX_ATTRS("", "Sinh", 9, "")
ONNX_ATTRS("", "Sinh", 22, "")
ONNX_ATTRS("", "Size", 1, "")
ONNX_ATTRS("", "Size", 13, "")
ONNX_ATTRS("", "Size", 19, "")
ONNX_ATTRS("", "Size", 21, "")
ONNX_ATTRS("", "Size", 23, "")
ONNX_ATTRS("", "Size", 24, "")
ONNX_ATTRS("", "Size", 25, "")
ONNX_ATTRS("", "Slice", 1, "axes:INTS ends:INTS starts:INTS")
ONNX_ATTRS("", "Slice", 10, "")
ONNX_ATTRS("", "Slice", 11, "")
ONNX_ATTRS("", "Slice", 13, "")
ONNX_ATTRS("", "Softmax", 1, "axis:INT")
ONNX_ATTRS("", "Softmax", 11, "axis:INT")
ONNX_ATTRS("", "Softmax", 13, "axis:INT")
ONNX_ATTRS("", "SoftmaxCrossEntropyLoss", 12, "ignore_index:INT reduction:STRING")
ONNX_ATTRS("", "SoftmaxCrossEntropyLoss", 13, "ignore_index:INT reduction:STRING")
ONNX_ATTRS("", "Softplus", 1, "")
ONNX_ATTRS("", "Softplus", 22, "")
ONNX_ATTRS("", "Softsign", 1, "")
ONNX_ATTRS("", "Softsign", 22, "")
ONNX_ATTRS("", "SpaceToDepth", 1, "blocksize:INT")
ONNX_ATTRS("", "SpaceToDepth", 13, "blocksize:INT")
ONNX_ATTRS("", "SpaceToDepth", 28, "blocksize:INT mode:STRING")
ONNX_ATTRS("", "Split", 1, "axis:INT split:INTS")
ONNX_ATTRS("", "Split", 2, "axis:INT split:INTS")
ONNX_ATTRS("", "Split", 11, "axis:INT split:INTS")
ONNX_ATTRS("", "Split", 13, "axis:INT")
ONNX_ATTRS("", "Split", 18, "axis:INT num_outputs:INT")
ONNX_ATTRS("", "SplitToSequence", 11, "axis:INT keepdims:INT")
ONNX_ATTRS("", "SplitToSequence", 24, "axis:INT keepdims:INT")
ONNX_ATTRS("", "Sqrt", 1, "consumed_inputs:INTS")
ONNX_ATTRS("", "Sqrt", 6, "")
ONNX_ATTRS("", "Sqrt", 13, "")
ONNX_ATTRS("", "Squeeze", 1, "axes:INTS")
ONNX_ATTRS("", "Squeeze", 11, "axes:INTS")
ONNX_ATTRS("", "Squeeze", 13, "")
ONNX_ATTRS("", "Squeeze", 21, "")
ONNX_ATTRS("", "Squeeze", 23, "")
ONNX_ATTRS("", "Squeeze", 24, "")
ONNX_ATTRS("", "Squeeze", 25, "")
ONNX_ATTRS("", "StringConcat", 20, "")
ONNX_ATTRS("", "StringNormalizer", 10,
    "case_change_action:STRING is_case_sensitive:INT locale:STRING "
    "stopwords:STRINGS")
ONNX_ATTRS("", "StringSplit", 20, "delimiter:STRING maxsplit:INT")
ONNX_ATTRS("", "Sub", 1, "axis:INT broadcast:INT consumed_inputs:INTS")
ONNX_ATTRS("", "Sub", 6, "axis:INT broadcast:INT")
ONNX_ATTRS("", "Sub", 7, "")
ONNX_ATTRS("", "Sub", 13, "")
ONNX_ATTRS("", "Sub", 14, "")
ONNX_ATTRS("", "Sum", 1, "consumed_inputs:INTS")
ONNX_ATTRS("", "Sum", 6, "")
ONNX_ATTRS("", "Sum", 8, "")
ONNX_ATTRS("", "Sum", 13, "")
ONNX_ATTRS("", "SwiGLU", 28, "alpha:FLOAT")
ONNX_ATTRS("", "Swish", 24, "alpha:FLOAT")
ONNX_ATTRS("", "Tan", 7, "")
ONNX_ATTRS("", "Tan", 22, "")
ONNX_ATTRS("", "Tanh", 1, "consumed_inputs:INTS")
ONNX_ATTRS("", "Tanh", 6, "")
ONNX_ATTRS("", "Tanh", 13, "")
ONNX_ATTRS("", "TensorScatter", 24, "axis:INT mode:STRING")
ONNX_ATTRS("", "TfIdfVectorizer", 9,
    "max_gram_length:INT max_skip_count:INT min_gram_length:INT mode:STRING "
    "ngram_counts:INTS ngram_indexes:INTS pool_int64s:INTS "
    "pool_strings:STRINGS weights:FLOATS")
ONNX_ATTRS("", "ThresholdedRelu", 10, "alpha:FLOAT")
ONNX_ATTRS("", "ThresholdedRelu", 22, "alpha:FLOAT")
ONNX_ATTRS("", "Tile", 1, "")
ONNX_ATTRS("", "Tile", 6, "")
ONNX_ATTRS("", "Tile", 13, "")
ONNX_ATTRS("", "TopK", 1, "axis:INT k:INT")
ONNX_ATTRS("", "TopK", 10, "axis:INT")
ONNX_ATTRS("", "TopK", 11, "axis:INT largest:INT sorted:INT")
ONNX_ATTRS("", "TopK", 24, "axis:INT largest:INT sorted:INT")
ONNX_ATTRS("", "Transpose", 1, "perm:INTS")
ONNX_ATTRS("", "Transpose", 13, "perm:INTS")
ONNX_ATTRS("", "Transpose", 21, "perm:INTS")
ONNX_ATTRS("", "Transpose", 23, "perm:INTS")
ONNX_ATTRS("", "Transpose", 24, "perm:INTS")
ONNX_ATTRS("", "Transpose", 25, "perm:INTS")
ONNX_ATTRS("", "Trilu", 14, "upper:INT")
ONNX_ATTRS("", "Unique", 11, "axis:INT sorted:INT")
ONNX_ATTRS("", "Unique", 28, "axis:INT sorted:INT")
ONNX_ATTRS("", "Unsqueeze", 1, "axes:INTS")
ONNX_ATTRS("", "Unsqueeze", 11, "axes:INTS")
ONNX_ATTRS("", "Unsqueeze", 13, "")
ONNX_ATTRS("", "Unsqueeze", 21, "")
ONNX_ATTRS("", "Unsqueeze", 23, "")
ONNX_ATTRS("", "Unsqueeze", 24, "")
ONNX_ATTRS("", "Unsqueeze", 25, "")
ONNX_ATTRS("", "Upsample", 1, "height_scale:FLOAT mode:STRING width_scale:FLOAT")
ONNX_ATTRS("", "Upsample", 7, "mode:STRING scales:FLOATS")
ONNX_ATTRS("", "Upsample", 9, "mode:STRING")
ONNX_ATTRS("", "Upsample", 10, "mode:STRING")
ONNX_ATTRS("", "Where", 9, "")
ONNX_ATTRS("", "Where", 16, "")
ONNX_ATTRS("", "Xor", 1, "axis:INT broadcast:INT")
ONNX_ATTRS("", "Xor", 7, "")
ONNX_ATTRS("ai.onnx.ml", "ArrayFeatureExtractor", 1, "")
ONNX_ATTRS("ai.onnx.ml", "Binarizer", 1, "threshold:FLOAT")
ONNX_ATTRS("ai.onnx.ml", "CastMap", 1, "cast_to:STRING map_form:STRING max_map:INT")
ONNX_ATTRS("ai.onnx.ml", "CategoryMapper", 1,
    "cats_int64s:INTS cats_strings:STRINGS default_int64:INT "
    "default_string:STRING")
ONNX_ATTRS("ai.onnx.ml", "DictVectorizer", 1, "int64_vocabulary:INTS string_vocabulary:STRINGS")
ONNX_ATTRS("ai.onnx.ml", "FeatureVectorizer", 1, "inputdimensions:INTS")
ONNX_ATTRS("ai.onnx.ml", "Imputer", 1,
    "imputed_value_floats:FLOATS imputed_value_int64s:INTS "
    "replaced_value_float:FLOAT replaced_value_int64:INT")
ONNX_ATTRS("ai.onnx.ml", "LabelEncoder", 1,
    "classes_strings:STRINGS default_int64:INT default_string:STRING")
ONNX_ATTRS("ai.onnx.ml", "LabelEncoder", 2,
    "default_float:FLOAT default_int64:INT default_string:STRING "
    "keys_floats:FLOATS keys_int64s:INTS keys_strings:STRINGS "
    "values_floats:FLOATS values_int64s:INTS values_strings:STRINGS")
ONNX_ATTRS("ai.onnx.ml", "LabelEncoder", 4,
    "default_float:FLOAT default_int64:INT default_string:STRING "
    "default_tensor:TENSOR keys_floats:FLOATS keys_int64s:INTS "
    "keys_strings:STRINGS keys_tensor:TENSOR values_floats:FLOATS "
    "values_int64s:INTS values_strings:STRINGS values_tensor:TENSOR")
ONNX_ATTRS("ai.onnx.ml", "LinearClassifier", 1,
    "classlabels_ints:INTS classlabels_strings:STRINGS coefficients:FLOATS "
    "intercepts:FLOATS multi_class:INT post_transform:STRING")
ONNX_ATTRS("ai.onnx.ml", "LinearRegressor", 1,
    "coefficients:FLOATS intercepts:FLOATS post_transform:STRING "
    "targets:INT")
ONNX_ATTRS("ai.onnx.ml", "Normalizer", 1, "norm:STRING")
ONNX_ATTRS("ai.onnx.ml", "OneHotEncoder", 1, "cats_int64s:INTS cats_strings:STRINGS zeros:INT")
ONNX_ATTRS("ai.onnx.ml", "SVMClassifier", 1,
    "classlabels_ints:INTS classlabels_strings:STRINGS coefficients:FLOATS "
    "kernel_params:FLOATS kernel_type:STRING post_transform:STRING "
    "prob_a:FLOATS prob_b:FLOATS rho:FLOATS support_vectors:FLOATS "
    "vectors_per_class:INTS")
ONNX_ATTRS("ai.onnx.ml", "SVMRegressor", 1,
    "coefficients:FLOATS kernel_params:FLOATS kernel_type:STRING "
    "n_supports:INT one_class:INT post_transform:STRING rho:FLOATS "
    "support_vectors:FLOATS")
ONNX_ATTRS("ai.onnx.ml", "Scaler", 1, "offset:FLOATS scale:FLOATS")
ONNX_ATTRS("ai.onnx.ml", "TreeEnsemble", 5,
    "aggregate_function:INT leaf_targetids:INTS leaf_weights:TENSOR "
    "membership_values:TENSOR n_targets:INT nodes_falseleafs:INTS "
    "nodes_falsenodeids:INTS nodes_featureids:INTS nodes_hitrates:TENSOR "
    "nodes_missing_value_tracks_true:INTS nodes_modes:TENSOR "
    "nodes_splits:TENSOR nodes_trueleafs:INTS nodes_truenodeids:INTS "
    "post_transform:INT tree_roots:INTS")
ONNX_ATTRS("ai.onnx.ml", "TreeEnsembleClassifier", 1,
    "base_values:FLOATS class_ids:INTS class_nodeids:INTS "
    "class_treeids:INTS class_weights:FLOATS classlabels_int64s:INTS "
    "classlabels_strings:STRINGS nodes_falsenodeids:INTS "
    "nodes_featureids:INTS nodes_hitrates:FLOATS "
    "nodes_missing_value_tracks_true:INTS nodes_modes:STRINGS "
    "nodes_nodeids:INTS nodes_treeids:INTS nodes_truenodeids:INTS "
    "nodes_values:FLOATS post_transform:STRING")
ONNX_ATTRS("ai.onnx.ml", "TreeEnsembleClassifier", 3,
    "base_values:FLOATS base_values_as_tensor:TENSOR class_ids:INTS "
    "class_nodeids:INTS class_treeids:INTS class_weights:FLOATS "
    "class_weights_as_tensor:TENSOR classlabels_int64s:INTS "
    "classlabels_strings:STRINGS nodes_falsenodeids:INTS "
    "nodes_featureids:INTS nodes_hitrates:FLOATS "
    "nodes_hitrates_as_tensor:TENSOR nodes_missing_value_tracks_true:INTS "
    "nodes_modes:STRINGS nodes_nodeids:INTS nodes_treeids:INTS "
    "nodes_truenodeids:INTS nodes_values:FLOATS "
    "nodes_values_as_tensor:TENSOR post_transform:STRING")
ONNX_ATTRS("ai.onnx.ml", "TreeEnsembleClassifier", 5,
    "base_values:FLOATS base_values_as_tensor:TENSOR class_ids:INTS "
    "class_nodeids:INTS class_treeids:INTS class_weights:FLOATS "
    "class_weights_as_tensor:TENSOR classlabels_int64s:INTS "
    "classlabels_strings:STRINGS nodes_falsenodeids:INTS "
    "nodes_featureids:INTS nodes_hitrates:FLOATS "
    "nodes_hitrates_as_tensor:TENSOR nodes_missing_value_tracks_true:INTS "
    "nodes_modes:STRINGS nodes_nodeids:INTS nodes_treeids:INTS "
    "nodes_truenodeids:INTS nodes_values:FLOATS "
    "nodes_values_as_tensor:TENSOR post_transform:STRING")
ONNX_ATTRS("ai.onnx.ml", "TreeEnsembleRegressor", 1,
    "aggregate_function:STRING base_values:FLOATS n_targets:INT "
    "nodes_falsenodeids:INTS nodes_featureids:INTS nodes_hitrates:FLOATS "
    "nodes_missing_value_tracks_true:INTS nodes_modes:STRINGS "
    "nodes_nodeids:INTS nodes_treeids:INTS nodes_truenodeids:INTS "
    "nodes_values:FLOATS post_transform:STRING target_ids:INTS "
    "target_nodeids:INTS target_treeids:INTS target_weights:FLOATS")
ONNX_ATTRS("ai.onnx.ml", "TreeEnsembleRegressor", 3,
    "aggregate_function:STRING base_values:FLOATS "
    "base_values_as_tensor:TENSOR n_targets:INT nodes_falsenodeids:INTS "
    "nodes_featureids:INTS nodes_hitrates:FLOATS "
    "nodes_hitrates_as_tensor:TENSOR nodes_missing_value_tracks_true:INTS "
    "nodes_modes:STRINGS nodes_nodeids:INTS nodes_treeids:INTS "
    "nodes_truenodeids:INTS nodes_values:FLOATS "
    "nodes_values_as_tensor:TENSOR post_transform:STRING target_ids:INTS "
    "target_nodeids:INTS target_treeids:INTS target_weights:FLOATS "
    "target_weights_as_tensor:TENSOR")
ONNX_ATTRS("ai.onnx.ml", "TreeEnsembleRegressor", 5,
    "aggregate_function:STRING base_values:FLOATS "
    "base_values_as_tensor:TENSOR n_targets:INT nodes_falsenodeids:INTS "
    "nodes_featureids:INTS nodes_hitrates:FLOATS "
    "nodes_hitrates_as_tensor:TENSOR nodes_missing_value_tracks_true:INTS "
    "nodes_modes:STRINGS nodes_nodeids:INTS nodes_treeids:INTS "
    "nodes_truenodeids:INTS nodes_values:FLOATS "
    "nodes_values_as_tensor:TENSOR post_transform:STRING target_ids:INTS "
    "target_nodeids:INTS target_treeids:INTS target_weights:FLOATS "
    "target_weights_as_tensor:TENSOR")
ONNX_ATTRS("ai.onnx.ml", "ZipMap", 1, "classlabels_int64s:INTS classlabels_strings:STRINGS")
ONNX_ATTRS("ai.onnx.preview", "FlexAttention", 1,
    "prob_mod:GRAPH scale:FLOAT score_mod:GRAPH softmax_precision:INT")
ONNX_ATTRS("ai.onnx.preview.training", "Adagrad", 1,
    "decay_factor:FLOAT epsilon:FLOAT norm_coefficient:FLOAT")
ONNX_ATTRS("ai.onnx.preview.training", "Adam", 1,
    "alpha:FLOAT beta:FLOAT epsilon:FLOAT norm_coefficient:FLOAT "
    "norm_coefficient_post:FLOAT")
ONNX_ATTRS("ai.onnx.preview.training", "Gradient", 1, "xs:STRINGS y:STRING zs:STRINGS")
ONNX_ATTRS("ai.onnx.preview.training", "Momentum", 1,
    "alpha:FLOAT beta:FLOAT mode:STRING norm_coefficient:FLOAT")
ONNX_ATTRS("", "Affine", 1, "alpha:FLOAT beta:FLOAT")
ONNX_ATTRS("", "Affine", 10, "alpha:FLOAT beta:FLOAT")
ONNX_ATTRS("com.microsoft", "Attention", 1,
    "do_rotary:INT mask_filter_value:FLOAT num_heads:INT "
    "past_present_share_buffer:INT qkv_hidden_sizes:INTS "
    "rotary_embedding_dim:INT scale:FLOAT unidirectional:INT")
ONNX_ATTRS("com.microsoft", "AttnLSTM", 1,
    "activation_alpha:FLOATS activation_beta:FLOATS activations:STRINGS "
    "clip:FLOAT direction:STRING hidden_size:INT input_forget:INT")
ONNX_ATTRS("com.microsoft", "BeamSearch", 1,
    "decoder:GRAPH decoder_start_token_id:INT early_stopping:INT "
    "encoder:GRAPH eos_token_id:INT init_decoder:GRAPH model_type:INT "
    "no_repeat_ngram_size:INT pad_token_id:INT vocab_size:INT")
ONNX_ATTRS("com.microsoft", "BiasAdd", 1, "")
ONNX_ATTRS("com.microsoft", "BiasDropout", 1, "seed:INT")
ONNX_ATTRS("com.microsoft", "BiasGelu", 1, "")
ONNX_ATTRS("com.microsoft", "BiasSoftmax", 1, "axis:INT is_inner_broadcast:INT")
ONNX_ATTRS("com.microsoft", "BiasSplitGelu", 1, "")
ONNX_ATTRS("com.microsoft", "BifurcationDetector", 1, "max_ngram_size:INT min_ngram_size:INT")
ONNX_ATTRS("com.microsoft", "BitmaskBiasDropout", 1, "seed:INT")
ONNX_ATTRS("com.microsoft", "BitmaskDropout", 1, "seed:INT")
ONNX_ATTRS("com.microsoft", "CDist", 1, "metric:STRING")
ONNX_ATTRS("com.microsoft", "CausalConvWithState", 1,
    "activation:STRING channels_last:INT dilation:INT ndim:INT "
    "state_window:INT")
ONNX_ATTRS("com.microsoft", "ComplexMul", 1, "")
ONNX_ATTRS("com.microsoft", "ComplexMulConj", 1, "")
ONNX_ATTRS("com.microsoft", "ConvTransposeWithDynamicPads", 1,
    "auto_pad:STRING dilations:INTS group:INT kernel_shape:INTS "
    "output_padding:INTS strides:INTS")
ONNX_ATTRS("", "Crop", 1, "border:INTS scale:INTS")
ONNX_ATTRS("", "Crop", 10, "border:INTS scale:INTS")
ONNX_ATTRS("com.microsoft", "CropAndResize", 1, "extrapolation_value:FLOAT mode:STRING")
ONNX_ATTRS("com.microsoft", "DecoderAttention", 1, "mask_filter_value:FLOAT num_heads:INT")
ONNX_ATTRS("com.microsoft", "DecoderMaskedMultiHeadAttention", 1,
    "mask_filter_value:FLOAT num_heads:INT output_qk:INT "
    "past_present_share_buffer:INT scale:FLOAT")
ONNX_ATTRS("com.microsoft", "DecoderMaskedSelfAttention", 1,
    "do_rotary:INT mask_filter_value:FLOAT num_heads:INT "
    "past_present_share_buffer:INT scale:FLOAT")
ONNX_ATTRS("com.microsoft", "DequantizeBFP", 1, "bfp_type:INT block_dim:INT dtype:INT")
ONNX_ATTRS("com.microsoft", "DequantizeLinear", 1, "axis:INT")
ONNX_ATTRS("com.microsoft", "DequantizeWithOrder", 1, "order_input:INT order_output:INT to:INT")
ONNX_ATTRS("", "DisentangledAttention_TRT", 1, "factor:FLOAT span:INT")
ONNX_ATTRS("com.microsoft", "DynamicQuantizeLSTM", 1,
    "activation_alpha:FLOATS activation_beta:FLOATS activations:STRINGS "
    "clip:FLOAT direction:STRING hidden_size:INT input_forget:INT")
ONNX_ATTRS("com.microsoft", "DynamicQuantizeMatMul", 1, "")
ONNX_ATTRS("", "DynamicSlice", 1, "")
ONNX_ATTRS("", "DynamicSlice", 10, "")
ONNX_ATTRS("com.microsoft", "DynamicTimeWarping", 1, "")
ONNX_ATTRS("com.microsoft", "EPContext", 1,
    "embed_mode:INT ep_cache_context:STRING ep_sdk_version:STRING "
    "hardware_architecture:STRING main_context:INT max_size:INT "
    "notes:STRING onnx_model_filename:STRING partition_name:STRING "
    "source:STRING")
ONNX_ATTRS("", "EfficientNMS_TRT", 1,
    "background_class:INT box_coding:INT iou_threshold:FLOAT "
    "max_output_boxes:INT plugin_version:STRING score_activation:INT "
    "score_threshold:FLOAT")
ONNX_ATTRS("com.microsoft", "EmbedLayerNormalization", 1, "epsilon:FLOAT mask_index_type:INT")
ONNX_ATTRS("com.microsoft", "EngramGate", 1, "epsilon:FLOAT")
ONNX_ATTRS("com.microsoft", "ExpandDims", 1, "")
ONNX_ATTRS("com.microsoft", "FastGelu", 1, "")
ONNX_ATTRS("com.microsoft", "FusedConv", 1,
    "activation:STRING activation_params:FLOATS auto_pad:STRING "
    "dilations:INTS group:INT kernel_shape:INTS pads:INTS strides:INTS")
ONNX_ATTRS("com.microsoft", "FusedGemm", 1,
    "activation:STRING activation_alpha:FLOAT activation_beta:FLOAT "
    "activation_gamma:FLOAT alpha:FLOAT beta:FLOAT transA:INT transB:INT")
ONNX_ATTRS("com.microsoft", "FusedMatMul", 1,
    "alpha:FLOAT transA:INT transB:INT transBatchA:INT transBatchB:INT")
ONNX_ATTRS("com.microsoft", "FusedMatMulActivation", 1,
    "activation:STRING activation_alpha:FLOAT activation_axis:INT "
    "activation_beta:FLOAT activation_gamma:FLOAT alpha:FLOAT transA:INT "
    "transB:INT transBatchA:INT transBatchB:INT")
ONNX_ATTRS("", "GRUUnit", 1, "drop_states:INT")
ONNX_ATTRS("", "GRUUnit", 10, "drop_states:INT")
ONNX_ATTRS("com.microsoft", "GatedAdd", 1, "")
ONNX_ATTRS("com.microsoft", "GatedDeltaNet", 1,
    "beta_activation:STRING chunk_size:INT gate_activation:STRING "
    "qk_l2_norm:INT scale:FLOAT state_update_capacity:INT "
    "update_rule:STRING")
ONNX_ATTRS("com.microsoft", "GatedRMSNorm", 1, "epsilon:FLOAT")
ONNX_ATTRS("com.microsoft", "GatedRelativePositionBias", 1, "num_heads:INT")
ONNX_ATTRS("com.microsoft", "GatherBlockQuantized", 1,
    "bits:INT block_size:INT gather_axis:INT quantize_axis:INT")
ONNX_ATTRS("com.microsoft", "GatherND", 1, "")
ONNX_ATTRS("com.microsoft", "Gelu", 1, "")
ONNX_ATTRS("com.microsoft", "GemmFastGelu", 1, "")
ONNX_ATTRS("com.microsoft", "GemmFloat8", 1,
    "activation:STRING alpha:FLOAT beta:FLOAT dtype:INT transA:INT "
    "transB:INT")
ONNX_ATTRS("com.microsoft", "GemmaRotaryEmbedding", 1, "")
ONNX_ATTRS("", "GivenTensorFill", 1,
    "extra_shape:INTS input_as_shape:INT shape:INTS values:FLOATS")
ONNX_ATTRS("", "GivenTensorFill", 10,
    "extra_shape:INTS input_as_shape:INT shape:INTS values:FLOATS")
ONNX_ATTRS("com.microsoft", "GreedySearch", 1,
    "decoder:GRAPH decoder_start_token_id:INT encoder:GRAPH "
    "eos_token_id:INT init_decoder:GRAPH model_type:INT "
    "no_repeat_ngram_size:INT pad_token_id:INT vocab_size:INT")
ONNX_ATTRS("com.microsoft", "GridSample", 1, "align_corners:INT mode:STRING padding_mode:STRING")
ONNX_ATTRS("com.microsoft", "GroupNorm", 1,
    "activation:INT channels_last:INT epsilon:FLOAT groups:INT")
ONNX_ATTRS("com.microsoft", "GroupQueryAttention", 1,
    "causal:INT do_rotary:INT k_quant_type:STRING kv_cache_bit_width:INT "
    "kv_num_heads:INT local_window_size:INT num_heads:INT "
    "qk_norm_epsilon:FLOAT qk_output:INT rotary_interleaved:INT scale:FLOAT "
    "sliding_window_cache:INT smooth_softmax:INT softcap:FLOAT "
    "v_quant_type:STRING")
ONNX_ATTRS("", "ImageScaler", 1, "bias:FLOATS scale:FLOAT")
ONNX_ATTRS("", "ImageScaler", 10, "bias:FLOATS scale:FLOAT")
ONNX_ATTRS("com.microsoft", "Inverse", 1, "")
ONNX_ATTRS("com.microsoft", "Irfft", 1, "normalized:INT onesided:INT signal_ndim:INT")
ONNX_ATTRS("com.microsoft", "IsAllFinite", 1, "isinf_only:INT isnan_only:INT")
ONNX_ATTRS("com.microsoft", "LinearAttention", 1,
    "chunk_size:INT kv_num_heads:INT q_num_heads:INT scale:FLOAT "
    "state_window:INT update_rule:STRING")
ONNX_ATTRS("com.microsoft", "LinearAttentionGate", 1, "")
ONNX_ATTRS("com.microsoft", "LongformerAttention", 1, "num_heads:INT window:INT")
ONNX_ATTRS("com.microsoft", "MRotaryEmbedding", 1,
    "interleaved:INT is_packed_batching:INT mrope_layout:INT "
    "mrope_section:INTS num_heads:INT rotary_embedding_dim:INT scale:FLOAT")
ONNX_ATTRS("com.microsoft", "MatMulBlockQuantizedFp4Weight", 1, "block_size:INT")
ONNX_ATTRS("com.microsoft", "MatMulBlockQuantizedFp8Weight", 1, "block_size:INT")
ONNX_ATTRS("com.microsoft", "MatMulBnb4", 1,
    "K:INT N:INT block_size:INT quant_type:INT training_mode:INT transB:INT")
ONNX_ATTRS("com.microsoft", "MatMulFpQ4", 1, "blk_quant_type:INT")
ONNX_ATTRS("com.microsoft", "MatMulInteger16", 1, "")
ONNX_ATTRS("com.microsoft", "MatMulIntegerToFloat", 1, "")
ONNX_ATTRS("com.microsoft", "MatMulNBits", 1,
    "K:INT N:INT accuracy_level:INT bits:INT block_size:INT "
    "weight_prepacked:INT")
ONNX_ATTRS("com.microsoft", "MatMulNBitsMlp", 1,
    "K:INT N:INT accuracy_level:INT activation:STRING bits:INT "
    "block_size:INT epsilon:FLOAT")
ONNX_ATTRS("com.microsoft", "MatMulNBitsQkv", 1,
    "K:INT Nkv:INT Nq:INT accuracy_level:INT bits:INT block_size:INT "
    "epsilon:FLOAT")
ONNX_ATTRS("com.microsoft", "MaxpoolWithMask", 1,
    "auto_pad:STRING kernel_shape:INTS pads:INTS storage_order:INT "
    "strides:INTS")
ONNX_ATTRS("", "MemcpyFromHost", 1, "")
ONNX_ATTRS("", "MemcpyToHost", 1, "")
ONNX_ATTRS("com.microsoft", "MoE", 1,
    "activation_alpha:FLOAT activation_beta:FLOAT activation_type:STRING "
    "k:INT normalize_routing_weights:INT swiglu_fusion:INT "
    "swiglu_limit:FLOAT use_sparse_mixer:INT")
ONNX_ATTRS("com.microsoft", "MulInteger", 1, "")
ONNX_ATTRS("com.microsoft", "MultiHeadAttention", 1,
    "mask_filter_value:FLOAT num_heads:INT scale:FLOAT unidirectional:INT")
ONNX_ATTRS("", "MultilevelCropAndResize_TRT", 1,
    "image_size:INTS plugin_version:STRING pooled_size:INT")
ONNX_ATTRS("com.microsoft", "MurmurHash3", 1, "positive:INT seed:INT")
ONNX_ATTRS("com.microsoft", "NGramHashMapping", 1,
    "max_ngram_size:INT n_head_per_ngram:INT pad_id:INT")
ONNX_ATTRS("com.microsoft", "NGramRepeatBlock", 1, "ngram_size:INT")
ONNX_ATTRS("com.microsoft", "NhwcConv", 1,
    "auto_pad:STRING dilations:INTS group:INT kernel_shape:INTS pads:INTS "
    "strides:INTS")
ONNX_ATTRS("com.microsoft", "NhwcFusedConv", 1,
    "activation:STRING activation_params:FLOATS auto_pad:STRING "
    "dilations:INTS group:INT kernel_shape:INTS pads:INTS strides:INTS")
ONNX_ATTRS("com.microsoft", "NhwcMaxPool", 1,
    "auto_pad:STRING ceil_mode:INT dilations:INTS kernel_shape:INTS "
    "pads:INTS strides:INTS")
ONNX_ATTRS("com.microsoft", "PackedAttention", 1,
    "num_heads:INT qkv_hidden_sizes:INTS scale:FLOAT")
ONNX_ATTRS("com.microsoft", "PackedMultiHeadAttention", 1,
    "mask_filter_value:FLOAT num_heads:INT scale:FLOAT")
ONNX_ATTRS("com.microsoft", "Pad", 1, "mode:STRING")
ONNX_ATTRS("com.microsoft", "PagedAttention", 1,
    "do_rotary:INT is_causal:INT k_cache_dtype:STRING k_quant_type:STRING "
    "kv_cache_layout:STRING kv_num_heads:INT local_window_size:INT "
    "num_heads:INT qk_norm_epsilon:FLOAT rotary_interleaved:INT "
    "rotary_offset:INT scale:FLOAT softcap:FLOAT v_cache_dtype:STRING "
    "v_head_size:INT v_quant_type:STRING")
ONNX_ATTRS("", "ParametricSoftplus", 1, "alpha:FLOAT beta:FLOAT")
ONNX_ATTRS("", "ParametricSoftplus", 10, "alpha:FLOAT beta:FLOAT")
ONNX_ATTRS("", "PyramidROIAlign_TRT", 1, "plugin_version:STRING pooled_size:INT")
ONNX_ATTRS("com.microsoft", "QAttention", 1,
    "do_rotary:INT mask_filter_value:FLOAT num_heads:INT "
    "past_present_share_buffer:INT scale:FLOAT unidirectional:INT")
ONNX_ATTRS("com.microsoft", "QEmbedLayerNormalization", 1, "epsilon:FLOAT")
ONNX_ATTRS("com.microsoft", "QGemm", 1, "alpha:FLOAT transA:INT transB:INT")
ONNX_ATTRS("com.microsoft", "QLinearAdd", 1, "")
ONNX_ATTRS("com.microsoft", "QLinearAveragePool", 1,
    "auto_pad:STRING ceil_mode:INT channels_last:INT count_include_pad:INT "
    "kernel_shape:INTS pads:INTS strides:INTS")
ONNX_ATTRS("com.microsoft", "QLinearConcat", 1, "axis:INT")
ONNX_ATTRS("com.microsoft", "QLinearConv", 1,
    "auto_pad:STRING channels_last:INT dilations:INTS group:INT "
    "kernel_shape:INTS pads:INTS strides:INTS")
ONNX_ATTRS("com.microsoft", "QLinearGlobalAveragePool", 1, "channels_last:INT")
ONNX_ATTRS("com.microsoft", "QLinearLeakyRelu", 1, "alpha:FLOAT")
ONNX_ATTRS("com.microsoft", "QLinearMul", 1, "")
ONNX_ATTRS("com.microsoft", "QLinearReduceMean", 1, "axes:INTS keepdims:INT")
ONNX_ATTRS("com.microsoft", "QLinearSigmoid", 1, "")
ONNX_ATTRS("com.microsoft", "QLinearSoftmax", 1, "axis:INT opset:INT")
ONNX_ATTRS("com.microsoft", "QLinearWhere", 1, "")
ONNX_ATTRS("com.microsoft", "QMoE", 1,
    "activation_alpha:FLOAT activation_beta:FLOAT activation_type:STRING "
    "block_size:INT expert_weight_bits:INT k:INT "
    "normalize_routing_weights:INT quant_type:STRING swiglu_fusion:INT "
    "swiglu_limit:FLOAT use_sparse_mixer:INT weights_prepacked:INT")
ONNX_ATTRS("com.microsoft", "QOrderedAttention", 1,
    "num_heads:INT order_input:INT order_output:INT order_weight:INT "
    "qkv_hidden_sizes:INTS unidirectional:INT")
ONNX_ATTRS("com.microsoft", "QOrderedGelu", 1, "order_X:INT order_Y:INT")
ONNX_ATTRS("com.microsoft", "QOrderedLayerNormalization", 1,
    "axis:INT epsilon:FLOAT order_X:INT order_Y:INT")
ONNX_ATTRS("com.microsoft", "QOrderedLongformerAttention", 1,
    "num_heads:INT order_global_weight:INT order_input:INT order_output:INT "
    "order_weight:INT window:INT")
ONNX_ATTRS("com.microsoft", "QOrderedMatMul", 1, "order_A:INT order_B:INT order_Y:INT")
ONNX_ATTRS("com.microsoft", "QuantizeBFP", 1, "bfp_type:INT block_dim:INT")
ONNX_ATTRS("com.microsoft", "QuantizeLinear", 1, "axis:INT")
ONNX_ATTRS("com.microsoft", "QuantizeWithOrder", 1, "order_input:INT order_output:INT")
ONNX_ATTRS("com.microsoft", "QuickGelu", 1, "alpha:FLOAT")
ONNX_ATTRS("com.microsoft", "Range", 1, "")
ONNX_ATTRS("com.microsoft", "ReduceSumInteger", 1, "axes:INTS keepdims:INT")
ONNX_ATTRS("com.microsoft", "RelativePositionBias", 1, "is_bidirectional:INT max_distance:INT")
ONNX_ATTRS("com.microsoft", "RemovePadding", 1, "")
ONNX_ATTRS("com.microsoft", "RestorePadding", 1, "")
ONNX_ATTRS("com.microsoft", "Rfft", 1, "normalized:INT onesided:INT signal_ndim:INT")
ONNX_ATTRS("com.microsoft", "RotaryEmbedding", 1,
    "interleaved:INT is_packed_batching:INT num_heads:INT "
    "rotary_embedding_dim:INT scale:FLOAT")
ONNX_ATTRS("com.microsoft", "SampleOp", 1, "")
ONNX_ATTRS("com.microsoft", "Sampling", 1,
    "custom:INT decoder:GRAPH decoder_start_token_id:INT encoder:GRAPH "
    "eos_token_id:INT filter_value:FLOAT init_decoder:GRAPH "
    "min_tokens_to_keep:INT model_type:INT no_repeat_ngram_size:INT "
    "pad_token_id:INT presence_penalty:FLOAT temperature:FLOAT top_p:FLOAT "
    "vocab_size:INT")
ONNX_ATTRS("", "Scale", 1, "scale:FLOAT")
ONNX_ATTRS("", "Scale", 10, "scale:FLOAT")
ONNX_ATTRS("", "ScaledTanh", 1, "alpha:FLOAT beta:FLOAT")
ONNX_ATTRS("", "ScaledTanh", 10, "alpha:FLOAT beta:FLOAT")
ONNX_ATTRS("", "SimplifiedLayerNormalization", 1, "axis:INT epsilon:FLOAT stash_type:INT")
ONNX_ATTRS("com.microsoft", "SkipGroupNorm", 1,
    "activation:INT channels_last:INT epsilon:FLOAT groups:INT")
ONNX_ATTRS("com.microsoft", "SkipLayerNormalization", 1, "epsilon:FLOAT")
ONNX_ATTRS("com.microsoft", "SkipSimplifiedLayerNormalization", 1, "epsilon:FLOAT")
ONNX_ATTRS("com.microsoft", "Snpe", 1,
    "DLC:STRING notes:STRING snpe_version:STRING target_device:STRING")
ONNX_ATTRS("com.microsoft", "SparseAttention", 1,
    "do_rotary:INT kv_num_heads:INT num_heads:INT rotary_interleaved:INT "
    "scale:FLOAT sparse_block_size:INT")
ONNX_ATTRS("com.microsoft", "SparseToDenseMatMul", 1, "alpha:FLOAT transA:INT transB:INT")
ONNX_ATTRS("com.microsoft", "Tokenizer", 1,
    "mark:INT mincharnum:INT pad_value:STRING separators:STRINGS "
    "tokenexp:STRING")
ONNX_ATTRS("com.microsoft", "TorchEmbedding", 1, "")
ONNX_ATTRS("com.microsoft", "TransposeMatMul", 1, "alpha:FLOAT transA:INT transB:INT")
ONNX_ATTRS("com.microsoft", "Trilu", 1, "upper:INT")
ONNX_ATTRS("com.microsoft", "UnfoldTensor", 1, "dim:INT size:INT step:INT")
ONNX_ATTRS("com.microsoft", "Unique", 1, "")
ONNX_ATTRS("com.microsoft", "VarlenCausalConvWithState", 1,
    "activation:STRING dilation:INT state_update_capacity:INT")
ONNX_ATTRS("com.microsoft", "WhisperBeamSearch", 1,
    "beginning_timestamp_token_id:INT decoder:GRAPH "
    "decoder_output_cross_qk:INT decoder_start_token_id:INT "
    "early_stopping:INT encoder:GRAPH eos_token_id:INT init_decoder:GRAPH "
    "model_type:INT no_repeat_ngram_size:INT no_speech_token_id:INT "
    "no_timestamps_token_id:INT pad_token_id:INT start_of_lm_token_id:INT "
    "transcribe_token_id:INT translate_token_id:INT vocab_size:INT")
ONNX_ATTRS("com.microsoft", "WordConvEmbedding", 1,
    "char_embedding_size:INT conv_window_size:INT embedding_size:INT")
