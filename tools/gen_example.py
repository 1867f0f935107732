#!/usr/bin/env python3
"""Writes the bundled example model (tests/models/example.onnx): a small MLP classifier,
MatMul + Add + Relu, MatMul + Add, Softmax, with a symbolic batch dimension. The file is
committed, so the quick start needs no Python; `make example` regenerates it byte for byte
(the weights come from a fixed seed)."""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

IN, HIDDEN, OUT = 16, 32, 10


def build() -> onnx.ModelProto:
    rng = np.random.default_rng(20240601)
    w1 = (rng.standard_normal((IN, HIDDEN)) / np.sqrt(IN)).astype(np.float32)
    b1 = (0.1 * rng.standard_normal(HIDDEN)).astype(np.float32)
    w2 = (rng.standard_normal((HIDDEN, OUT)) / np.sqrt(HIDDEN)).astype(np.float32)
    b2 = (0.1 * rng.standard_normal(OUT)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h0"], name="fc1"),
        helper.make_node("Add", ["h0", "b1"], ["h1"], name="fc1_bias"),
        helper.make_node("Relu", ["h1"], ["h2"], name="relu"),
        helper.make_node("MatMul", ["h2", "w2"], ["l0"], name="fc2"),
        helper.make_node("Add", ["l0", "b2"], ["logits"], name="fc2_bias"),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
    ]
    graph = helper.make_graph(
        nodes,
        "example_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", IN])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", OUT])],
        initializer=[
            numpy_helper.from_array(w1, "w1"),
            numpy_helper.from_array(b1, "b1"),
            numpy_helper.from_array(w2, "w2"),
            numpy_helper.from_array(b2, "b2"),
        ],
    )
    model = helper.make_model(
        graph,
        producer_name="onyx tools/gen_example.py",
        opset_imports=[helper.make_opsetid("", 13)],
    )
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


def main() -> int:
    path = sys.argv[1] if len(sys.argv) > 1 else "tests/models/example.onnx"
    model = build()
    onnx.save(model, path)
    # The reference output for the CLI's generated input (arange(n)/n, batch 1), so that what
    # `onyx run` prints can be checked by eye.
    from onnx.reference import ReferenceEvaluator

    x = (np.arange(IN) / IN).astype(np.float32).reshape(1, IN)
    (probs,) = ReferenceEvaluator(model).run(None, {"x": x})
    print(f"wrote {path}; for x = arange({IN})/{IN}: probs = {np.array2string(probs[0], precision=6)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
