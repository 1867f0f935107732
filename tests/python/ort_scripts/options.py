# Session options and providers: threads, optimization levels, config entries, log level, and a
# CUDA provider with options that falls back to the CPU when CUDA is not there.
import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(1)
w = rng.standard_normal((8, 3, 3, 3)).astype(np.float32)
b = rng.standard_normal(8).astype(np.float32)
scale, bias = rng.uniform(0.5, 1.5, 8).astype(np.float32), rng.standard_normal(8).astype(np.float32)
mean, var = rng.standard_normal(8).astype(np.float32), rng.uniform(0.5, 2, 8).astype(np.float32)
graph = helper.make_graph(
    [helper.make_node('Conv', ['x', 'w', 'b'], ['c'], pads=[1, 1, 1, 1]),
     helper.make_node('BatchNormalization', ['c', 'scale', 'bias', 'mean', 'var'], ['n']),
     helper.make_node('Relu', ['n'], ['r']),
     helper.make_node('GlobalAveragePool', ['r'], ['y'])],
    'convnet', [helper.make_tensor_value_info('x', TensorProto.FLOAT, ['N', 3, 8, 8])],
    [helper.make_tensor_value_info('y', TensorProto.FLOAT, ['N', 8, 1, 1])],
    [numpy_helper.from_array(a, n) for a, n in
     [(w, 'w'), (b, 'b'), (scale, 'scale'), (bias, 'bias'), (mean, 'mean'), (var, 'var')]])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17)])
model.ir_version = 8
data = model.SerializeToString()
x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)

RESULT = {}
for level in (ort.GraphOptimizationLevel.ORT_DISABLE_ALL, ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
              ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED, ort.GraphOptimizationLevel.ORT_ENABLE_ALL):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = level
    so.log_severity_level = 3
    so.add_session_config_entry('session.intra_op.allow_spinning', '0')
    sess = ort.InferenceSession(data, sess_options=so, providers=['CPUExecutionProvider'])
    RESULT[f'level_{int(level)}'] = sess.run(None, {'x': x})[0]
    assert sess.get_session_options().graph_optimization_level == level

# The CUDA provider with options first, then the CPU: runs wherever CUDA is missing.
providers = [('CUDAExecutionProvider', {'device_id': 0, 'arena_extend_strategy': 'kSameAsRequested'}),
             'CPUExecutionProvider']
sess = ort.InferenceSession(data, providers=providers)
RESULT['cuda_or_cpu'] = sess.run(['y'], {'x': x})[0]
assert sess.get_providers()[-1] == 'CPUExecutionProvider'
if 'CUDAExecutionProvider' not in ort.get_available_providers():
    RESULT['providers_without_cuda'] = sess.get_providers()

# Free dimension override: the batch dim fixed at prepare.
so = ort.SessionOptions()
so.add_free_dimension_override_by_name('N', 2)
sess = ort.InferenceSession(data, so, providers=['CPUExecutionProvider'])
RESULT['free_dim'] = sess.run(None, {'x': x})[0]
