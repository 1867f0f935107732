# One session run from many Python threads at once, with different batch sizes.
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import onnxruntime as ort

MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'models', 'example.onnx')
so = ort.SessionOptions()
so.intra_op_num_threads = 1
sess = ort.InferenceSession(MODEL, so, providers=['CPUExecutionProvider'])
rng = np.random.default_rng(3)
feeds = [rng.standard_normal((1 + i % 4, 16)).astype(np.float32) for i in range(32)]


def work(x):
    return sess.run(None, {'x': x})[0]


with ThreadPoolExecutor(max_workers=4) as pool:
    parallel = list(pool.map(work, feeds))
RESULT = {'parallel': parallel, 'same_as_sequential': all(np.array_equal(p, work(x)) for p, x in zip(parallel, feeds))}
