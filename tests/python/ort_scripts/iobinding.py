# IOBinding: inputs bound as numpy arrays, by pointer and as OrtValues; outputs by name, into a
# preallocated OrtValue, and read back with copy_outputs_to_cpu / get_outputs.
import os

import numpy as np
import onnxruntime as ort

MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'models', 'example.onnx')
sess = ort.InferenceSession(MODEL, providers=['CPUExecutionProvider'])
x = np.random.default_rng(2).standard_normal((4, 16)).astype(np.float32)
RESULT = {}

binding = sess.io_binding()
binding.bind_cpu_input('x', x)
binding.bind_output('probs')
sess.run_with_iobinding(binding)
RESULT['cpu_input'] = binding.copy_outputs_to_cpu()[0]
RESULT['get_outputs'] = binding.get_outputs()[0].numpy()

binding = sess.io_binding()
binding.bind_input(name='x', device_type='cpu', device_id=0, element_type=np.float32, shape=x.shape,
                   buffer_ptr=x.ctypes.data)
y = ort.OrtValue.ortvalue_from_shape_and_type([4, 10], np.float32, 'cpu', 0)
binding.bind_ortvalue_output('probs', y)
binding.synchronize_inputs()
sess.run_with_iobinding(binding)
binding.synchronize_outputs()
RESULT['pointer_input_preallocated_output'] = y.numpy()

out = np.empty((4, 10), np.float32)
binding = sess.io_binding()
binding.bind_ortvalue_input('x', ort.OrtValue.ortvalue_from_numpy(x))
binding.bind_output('probs', 'cpu', 0, np.float32, list(out.shape), out.ctypes.data)
sess.run_with_iobinding(binding)
RESULT['output_by_pointer'] = out.copy()
