#!/usr/bin/env python3
"""onyx against onnxruntime node by node: which operators compute differently, apart from what
their inputs carry in. A diagnostic, not a test.

  tools/bench/node_diff.py MODEL [--spec ZOO_JSON] [--free-dim N] [--all]

onnxruntime (ORT_DISABLE_ALL: the model's own operators, none fused) runs the whole model once
with every intermediate value exposed. Then each node runs alone in both engines, fed the values
onnxruntime computed for its inputs, and the table lists the nodes whose outputs differ: how
many elements and by how many units in the last place of float32 (or integer steps). A node that
differs here rounds differently from onnxruntime; a node that only differs in a whole-model run
inherits its inputs' differences. Inputs: the zoo's description (--spec, as zoo_bench.py feeds
it), else uniform [-1, 1] floats and integer ones, every symbolic dim taken as --free-dim.
"""
import argparse
import json
import os
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from op_compare import feeds_for  # noqa: E402
from zoo_bench import make_feeds  # noqa: E402

import onyx  # noqa: E402


def ort_session(path, level='ORT_DISABLE_ALL'):
    so = ort.SessionOptions()
    so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
    return ort.InferenceSession(path, so, providers=['CPUExecutionProvider'])


def every_value(model, feeds, tmp):
    """Each value onnxruntime computes in the model, by name."""
    m = onnx.shape_inference.infer_shapes(model)
    typed = {v.name: v for v in m.graph.value_info}
    shown = {o.name for o in m.graph.output}
    m.graph.output.extend(typed[o] for n in m.graph.node for o in n.output
                          if o in typed and o not in shown)
    path = os.path.join(tmp, 'all.onnx')
    onnx.save(m, path)
    sess = ort_session(path)
    values = dict(zip((o.name for o in sess.get_outputs()), sess.run(None, feeds)))
    values.update(feeds)
    return values


def lone_node(model, node, values):
    """A model of one node: its constant inputs as initializers, the others as graph inputs."""
    inits = {i.name: i for i in model.graph.initializer}
    ins, init, feeds = [], [], {}
    for name in dict.fromkeys(filter(None, node.input)):  # a name read twice is declared once
        if name in inits:
            init.append(inits[name])
            continue
        v = np.asarray(values[name])
        feeds[name] = v
        ins.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape))
    outs = [helper.make_tensor_value_info(o, helper.np_dtype_to_tensor_dtype(np.asarray(values[o]).dtype),
                                          np.asarray(values[o]).shape) for o in node.output if o]
    g = helper.make_graph([node], 'one', ins, outs, init)
    m = helper.make_model(g, opset_imports=model.opset_import)
    m.ir_version = model.ir_version
    return m, feeds


def distance(a, b):
    """(elements that differ, max|a - b|, the largest difference in float32 ulps or integer
    steps). Near zero one ulp is tiny: max|a - b| says how far in the output's own scale."""
    a, b = np.asarray(a), np.asarray(b)
    differ = int(np.sum(a != b))
    if differ == 0 or a.dtype.kind not in 'fiu':
        return differ, 0.0, 0
    most = float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))))
    if a.dtype == np.float32:  # ordered integer images of the floats: their distance counts ulps
        ia, ib = (np.where(x.view(np.int32) < 0, np.int64(-2**31) - x.view(np.int32), x.view(np.int32))
                  .astype(np.int64) for x in (a, b))
        return differ, most, int(np.max(np.abs(ia - ib)))
    return differ, most, int(most)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('model')
    ap.add_argument('--spec', help="the zoo's <name>.json describing the inputs")
    ap.add_argument('--free-dim', type=int, default=1, help='the value of every symbolic dim')
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--all', action='store_true', help='list the nodes that agree too')
    args = ap.parse_args()
    model = onnx.load(args.model)
    if args.spec:
        with open(args.spec) as f:
            feeds = make_feeds(json.load(f), 0)
    else:
        feeds = feeds_for(ort_session(args.model), args.free_dim)
    print(f'{"node":<64}{"op":<24}{"output":>7}{"differ":>16}{"max|diff|":>11}{"max":>11}')
    differing = set()
    with tempfile.TemporaryDirectory() as tmp:
        values = every_value(model, feeds, tmp)
        constants = {i.name for i in model.graph.initializer}
        for node in model.graph.node:
            if any(o and o not in values for o in node.output):
                print(f'{node.name[-63:]:<64}{node.op_type:<24} skipped: an output shape inference left untyped')
                continue
            if any(i and i not in values and i not in constants for i in node.input):
                print(f'{node.name[-63:]:<64}{node.op_type:<24} skipped: an input shape inference left untyped')
                continue
            one, one_feeds = lone_node(model, node, values)
            path = os.path.join(tmp, 'one.onnx')
            onnx.save(one, path)
            want = ort_session(path).run(None, one_feeds)
            got = onyx.Session(path, threads=args.threads, input_example=one_feeds).run(None, one_feeds)
            for k, (a, b) in enumerate(zip(want, got)):
                differ, most, units = distance(a, b)
                if differ or args.all:
                    unit = 'ulp' if np.asarray(a).dtype == np.float32 else 'step'
                    print(f'{node.name[-63:]:<64}{node.op_type:<24}{k:>7}'
                          f'{f"{differ}/{np.asarray(a).size}":>16}{most:>11.2e}{f"{units} {unit}":>11}')
                if differ:
                    differing.add(node.op_type)
    print('operators that round differently from onnxruntime: ' + (', '.join(sorted(differing)) or 'none'))
    return 0


if __name__ == '__main__':
    sys.exit(main())
