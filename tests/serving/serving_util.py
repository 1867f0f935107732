"""What the serving test and the serving benchmark share: the ResNet-like model (built with
onnx.helper at run time, random weights: no download, nothing checked in), the request cases with
onnxruntime's answers, and a local Ray cluster with Serve's HTTP proxy on loopback."""
import os
import socket
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
CLIENT = os.path.join(HERE, 'load_client.py')
EXAMPLE = os.path.join(HERE, '..', 'models', 'example.onnx')


def resnet_like(seed=0, size=64, classes=1000):
    """Stem, three residual stages (64, 128, 256 channels; Conv+BatchNormalization+Relu, Add
    shortcuts), global average pool, Gemm: about 1.5 M parameters (6 MB), [N,3,size,size] in,
    [N,classes] probabilities out."""
    rng = np.random.default_rng(seed)
    inits, nodes = [], []

    def const(name, a):
        inits.append(numpy_helper.from_array(a.astype(np.float32), name))
        return name

    def conv_bn(x, cin, cout, stride, name, relu=True):
        w = rng.standard_normal((cout, cin, 3, 3)) * np.sqrt(2.0 / (cin * 9))
        nodes.append(helper.make_node('Conv', [x, const(name + '_w', w)], [name + '_c'], pads=[1, 1, 1, 1],
                                      strides=[stride, stride]))
        bn = [const(name + s, v) for s, v in (('_g', 1 + 0.1 * rng.standard_normal(cout)),
                                                ('_b', 0.1 * rng.standard_normal(cout)),
                                                ('_m', 0.1 * rng.standard_normal(cout)),
                                                ('_v', 1 + 0.1 * rng.random(cout)))]
        nodes.append(helper.make_node('BatchNormalization', [name + '_c'] + bn, [name + '_bn']))
        if not relu:
            return name + '_bn'
        nodes.append(helper.make_node('Relu', [name + '_bn'], [name]))
        return name

    def block(x, cin, cout, stride, name):
        y = conv_bn(x, cin, cout, stride, name + 'a')
        y = conv_bn(y, cout, cout, 1, name + 'b', relu=False)
        short = x if cin == cout and stride == 1 else conv_bn(x, cin, cout, stride, name + 's', relu=False)
        nodes.append(helper.make_node('Add', [y, short], [name + '_sum']))
        nodes.append(helper.make_node('Relu', [name + '_sum'], [name]))
        return name

    x = conv_bn('image', 3, 64, 2, 'stem')
    x = block(x, 64, 64, 1, 'l1')
    x = block(x, 64, 128, 2, 'l2')
    x = block(x, 128, 256, 2, 'l3')
    nodes.append(helper.make_node('GlobalAveragePool', [x], ['gap']))
    nodes.append(helper.make_node('Flatten', ['gap'], ['flat']))
    fc_w = const('fc_w', rng.standard_normal((256, classes)) * np.sqrt(1.0 / 256))
    fc_b = const('fc_b', np.zeros(classes))
    nodes.append(helper.make_node('Gemm', ['flat', fc_w, fc_b], ['logits']))
    nodes.append(helper.make_node('Softmax', ['logits'], ['probs'], axis=1))
    graph = helper.make_graph(nodes, 'resnet_like',
                              [helper.make_tensor_value_info('image', TensorProto.FLOAT, ['N', 3, size, size])],
                              [helper.make_tensor_value_info('probs', TensorProto.FLOAT, ['N', classes])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17)],
                              producer_name='onyx tests/serving')
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def write_cases(model_path, out_path, count=8, rows=1, seed=1):
    """`count` requests of `rows` rows each for the model's (float) inputs, with onnxruntime's
    outputs as the expected answers, in load_client.py's format."""
    import onnxruntime
    sess = onnxruntime.InferenceSession(model_path, providers=['CPUExecutionProvider'])
    rng = np.random.default_rng(seed)
    arrays = {}
    for k in range(count):
        feed = {i.name: rng.standard_normal([rows] + [d for d in i.shape[1:]]).astype(np.float32)
                for i in sess.get_inputs()}
        for name, v in feed.items():
            arrays[f'in__{k}__{name}'] = v
        for o, v in zip(sess.get_outputs(), sess.run(None, feed)):
            arrays[f'out__{k}__{o.name}'] = v
    np.savez(out_path, **arrays)


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def start_cluster(port, num_cpus=2):
    """A local Ray cluster (this process is its head) with Serve's proxy on 127.0.0.1:port.
    Logical CPUs are what replicas reserve (one per session thread), not a measure of the cores."""
    import ray
    from ray import serve
    os.environ.setdefault('RAY_USAGE_STATS_ENABLED', '0')
    ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False, configure_logging=False)
    serve.start(http_options={'host': '127.0.0.1', 'port': port})


def stop_cluster():
    import ray
    from ray import serve
    try:
        serve.shutdown()
    finally:
        ray.shutdown()


def run_client(url, cases, requests, concurrency, fmt='npz', timeout=600):
    """load_client.py in a separate process (another interpreter, so the load it generates is not
    scheduled by this one's GIL); returns its JSON summary."""
    import json
    p = subprocess.run([sys.executable, CLIENT, url, cases, '--requests', str(requests),
                        '--concurrency', str(concurrency), '--format', fmt],
                       capture_output=True, text=True, timeout=timeout)
    try:
        summary = json.loads(p.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        raise RuntimeError(f'load client failed (rc {p.returncode}): {p.stdout}\n{p.stderr}')
    summary['rc'] = p.returncode
    return summary
