"""A child process for tests that set the environment oneDNN reads once per process
(ONEDNN_VERBOSE, ONEDNN_MAX_CPU_ISA): runs one model on onyx and saves its first output.

    python onyx_child.py MODEL.onnx INPUTS.npz OUTPUT.npy [KEY=VALUE ...]

KEY=VALUE: session config entries (onyx_session_options_set_config).
"""
import os
import sys

import numpy as np

if __name__ == '__main__':
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', '..', 'backend', 'python'))
    import onyx
    model_path, in_path, out_path = sys.argv[1:4]
    inputs = dict(np.load(in_path))
    if len(sys.argv) > 4:
        options = onyx.SessionOptions()
        options.intra_op_num_threads = 2
        for entry in sys.argv[4:]:
            options.add_session_config_entry(*entry.split('=', 1))
        session = onyx.InferenceSession(model_path, options)
    else:
        session = onyx.Session(model_path, threads=2, input_example=inputs)
    np.save(out_path, session.run(None, inputs)[0])
    sys.stdout.flush()
