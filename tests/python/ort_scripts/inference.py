# Plain inference as onnxruntime's docs show it: session from a path and from bytes, io description,
# run with all outputs and with named ones.
import os

import numpy as np
import onnxruntime as ort

MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'models', 'example.onnx')

sess = ort.InferenceSession(MODEL, providers=['CPUExecutionProvider'])
inputs, outputs = sess.get_inputs(), sess.get_outputs()
RESULT = {
    'inputs': [(i.name, i.type, i.shape) for i in inputs],
    'outputs': [(o.name, o.type, o.shape) for o in outputs],
    'providers': sess.get_providers(),
    'overridable': [i.name for i in sess.get_overridable_initializers()],
    'cpu_available': 'CPUExecutionProvider' in ort.get_available_providers(),
}
x = np.random.default_rng(0).standard_normal((3, 16)).astype(np.float32)
RESULT['all'] = sess.run(None, {inputs[0].name: x})
RESULT['named'] = sess.run([outputs[0].name], {'x': x})
with open(MODEL, 'rb') as f:
    sess2 = ort.InferenceSession(f.read(), providers=['CPUExecutionProvider'])
RESULT['from_bytes'] = sess2.run(None, {'x': x[:1]})[0]
assert RESULT['all'][0].shape == (3, 10)
