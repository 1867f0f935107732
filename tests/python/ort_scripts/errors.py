# Errors arrive as onnxruntime's exception classes.
import os

import numpy as np
import onnxruntime as ort

MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'models', 'example.onnx')
sess = ort.InferenceSession(MODEL, providers=['CPUExecutionProvider'])


def error_of(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return e
    return None


RESULT = {
    'no_file': type(error_of(lambda: ort.InferenceSession('no-such-model.onnx'))).__name__,
    'not_a_model': type(error_of(lambda: ort.InferenceSession(b'not a model'))).__name__,
    'wrong_type': type(error_of(lambda: sess.run(None, {'x': np.zeros((2, 16), np.int32)}))).__name__,
    'wrong_shape': type(error_of(lambda: sess.run(None, {'x': np.zeros((2, 15), np.float32)}))).__name__,
    'unknown_input_is_value_error': isinstance(error_of(lambda: sess.run(None, {'nope': np.zeros(1)})), ValueError),
}
