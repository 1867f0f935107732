#!/usr/bin/env python3
"""Debugging aid: turn an ONNX backend test dir into one whose outputs are every intermediate
value, with expected data from onnx's reference evaluator, so that onyx-test-runner names the
first node whose output goes wrong.

usage: expose_intermediates.py TEST_DIR OUT_DIR   then   build/onyx-test-runner -v OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper
from onnx.reference import ReferenceEvaluator


def main():
    src, dst = sys.argv[1], sys.argv[2]
    model = onnx.load(os.path.join(src, "model.onnx"))
    inits = {i.name for i in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in inits]
    feeds = {}
    for k, name in enumerate(inputs):
        t = onnx.TensorProto()
        with open(os.path.join(src, "test_data_set_0", f"input_{k}.pb"), "rb") as f:
            t.ParseFromString(f.read())
        feeds[name] = numpy_helper.to_array(t)
    known = {o.name for o in model.graph.output}
    extra = []
    for node in model.graph.node:
        for out in node.output:
            if out and out not in known:
                extra.append(out)
                known.add(out)
    ref = ReferenceEvaluator(model)
    names = [o.name for o in model.graph.output] + extra
    results = ref.run(names, feeds)
    del model.graph.output[:]
    for name, value in zip(names, results):
        if not isinstance(value, np.ndarray):
            continue
        model.graph.output.append(
            onnx.helper.make_tensor_value_info(
                name, onnx.helper.np_dtype_to_tensor_dtype(value.dtype), None))
    os.makedirs(os.path.join(dst, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(dst, "model.onnx"))
    for k, name in enumerate(inputs):
        with open(os.path.join(dst, "test_data_set_0", f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(feeds[name]).SerializeToString())
    k = 0
    for name, value in zip(names, results):
        if not isinstance(value, np.ndarray):
            continue
        with open(os.path.join(dst, "test_data_set_0", f"output_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(value, name).SerializeToString())
        k += 1


if __name__ == "__main__":
    main()
