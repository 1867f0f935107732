# RunOptions.terminate set from another thread stops a run that would never end; the session stays
# usable, and the same options run again once terminate is cleared.
import os
import threading
import time

import numpy as np
import onnxruntime as ort

MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'models', 'endless_loop.onnx')
sess = ort.InferenceSession(MODEL, providers=['CPUExecutionProvider'])
feed = {'trips': np.array(2**62, np.int64), 'cond': np.array(True), 'start': np.array(0, np.int64)}
ro = ort.RunOptions()
ro.logid = 'endless'
ro.log_severity_level = 4
timer = threading.Timer(0.2, lambda: setattr(ro, 'terminate', True))
timer.start()
t0 = time.monotonic()
try:
    sess.run(None, feed, ro)
    error = None
except Exception as e:  # noqa: BLE001 (onnxruntime raises its Fail class)
    error = type(e).__name__
elapsed = time.monotonic() - t0
timer.join()
ro.terminate = False
feed['trips'] = np.array(5, np.int64)
RESULT = {'error': error, 'stopped_quickly': 0.15 < elapsed < 5, 'after': sess.run(None, feed, ro)}
