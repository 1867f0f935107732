#!/usr/bin/env python3
"""Writes the small models the run-time tests use (committed beside this script, so the tests
need no Python; `make test-models` regenerates them byte for byte from fixed seeds):

- concurrency.onnx: Conv + Relu + MaxPool + ReduceMean, a Loop whose body reads an outer weight,
  MatMul + Add + Softmax; batch, height and width symbolic, so runs of mixed shapes build and
  share plans (tests/unit/test_concurrency.c).
- endless_loop.onnx: a Loop whose trip count is an input (INT64_MAX in the tests) and whose
  condition stays true: only run options (deadline, terminate, iteration cap) stop it."""

import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def concurrency_model() -> onnx.ModelProto:
    rng = np.random.default_rng(20261125)
    w = (rng.standard_normal((8, 3, 3, 3)) / 5).astype(np.float32)
    b = (0.1 * rng.standard_normal(8)).astype(np.float32)
    decay = np.full((8,), 0.9, np.float32)
    w2 = (rng.standard_normal((8, 5)) / 3).astype(np.float32)
    b2 = (0.1 * rng.standard_normal(5)).astype(np.float32)
    trips = np.array(3, np.int64)
    body = helper.make_graph(
        [
            helper.make_node("Mul", ["c_in", "decay"], ["scaled"]),
            helper.make_node("Add", ["scaled", "b"], ["shifted"]),
            helper.make_node("Tanh", ["shifted"], ["c_out"]),
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("c_in", TensorProto.FLOAT, None),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("c_out", TensorProto.FLOAT, None),
        ],
    )
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["conv"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv"], ["relu"], name="relu"),
        helper.make_node("MaxPool", ["relu"], ["pool"], name="pool", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("ReduceMean", ["pool"], ["mean"], name="mean", axes=[2, 3], keepdims=0),
        helper.make_node("Loop", ["trips", "", "mean"], ["looped"], name="loop", body=body),
        helper.make_node("MatMul", ["looped", "w2"], ["fc"], name="fc"),
        helper.make_node("Add", ["fc", "b2"], ["logits"], name="fc_bias"),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
    ]
    graph = helper.make_graph(
        nodes,
        "concurrency",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, "height", "width"])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", 5])],
        initializer=[numpy_helper.from_array(a, n) for a, n in
                     [(w, "w"), (b, "b"), (decay, "decay"), (w2, "w2"), (b2, "b2"),
                      (trips, "trips")]],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                             producer_name="onyx-tests")


def endless_loop_model() -> onnx.ModelProto:
    body = helper.make_graph(
        [
            helper.make_node("Add", ["count_in", "one"], ["count_out"]),
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("count_in", TensorProto.INT64, []),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("count_out", TensorProto.INT64, []),
        ],
        initializer=[numpy_helper.from_array(np.array(1, np.int64), "one")],
    )
    graph = helper.make_graph(
        [helper.make_node("Loop", ["trips", "cond", "start"], ["count"], name="endless",
                          body=body)],
        "endless_loop",
        [
            helper.make_tensor_value_info("trips", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
            helper.make_tensor_value_info("start", TensorProto.INT64, []),
        ],
        [helper.make_tensor_value_info("count", TensorProto.INT64, [])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                             producer_name="onyx-tests")


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent
    for name, model in [("concurrency", concurrency_model()), ("endless_loop", endless_loop_model())]:
        onnx.checker.check_model(model, full_check=True)
        onnx.save(model, out / f"{name}.onnx")


if __name__ == "__main__":
    main()
