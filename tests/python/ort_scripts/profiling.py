# Profiling: enable_profiling with a file prefix, end_profiling's trace file (Chrome trace JSON, one
# complete event per node run).
import json
import os

import numpy as np
import onnxruntime as ort

MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'models', 'example.onnx')
so = ort.SessionOptions()
so.enable_profiling = True
so.profile_file_prefix = 'mlp_profile'
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
sess = ort.InferenceSession(MODEL, so, providers=['CPUExecutionProvider'])
for _ in range(3):
    sess.run(None, {'x': np.ones((2, 16), np.float32)})
path = sess.end_profiling()
with open(path) as f:
    events = json.load(f)
nodes = [e for e in events if e.get('cat') == 'Node' and 'op_name' in e.get('args', {})]
RESULT = {
    'name': os.path.basename(path).startswith('mlp_profile_') and path.endswith('.json'),
    'exists': os.path.isfile(path),
    'ops': sorted({e['args']['op_name'] for e in nodes}),
    'complete_events': all(e['ph'] == 'X' and e['dur'] >= 0 for e in nodes),
    'runs': len(nodes) // 6,
}
