# OrtValue: values made from numpy, their description, and run_with_ort_values.
import os

import numpy as np
import onnxruntime as ort

MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'models', 'example.onnx')
sess = ort.InferenceSession(MODEL, providers=['CPUExecutionProvider'])
x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(2, 16)
xv = ort.OrtValue.ortvalue_from_numpy(x, 'cpu', 0)
RESULT = {
    'device': xv.device_name(), 'shape': xv.shape(), 'type': xv.data_type(), 'is_tensor': xv.is_tensor(),
    'has_value': xv.has_value(), 'roundtrip': xv.numpy(),
}
outs = sess.run_with_ort_values(['probs'], {'x': xv})
RESULT['out_shape'] = outs[0].shape()
RESULT['out_type'] = outs[0].data_type()
RESULT['out'] = outs[0].numpy()
RESULT['same_as_run'] = bool(np.allclose(outs[0].numpy(), sess.run(None, {'x': x})[0]))
empty = ort.OrtValue.ortvalue_from_shape_and_type([2, 3], np.int64, 'cpu', 0)
RESULT['empty'] = (empty.shape(), empty.data_type())
