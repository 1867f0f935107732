#!/usr/bin/env python3
"""Writes the small models the run-time tests use (committed beside this script, so the tests
need no Python; `make test-models` regenerates them byte for byte from fixed seeds):

- concurrency.onnx: Conv + Relu + MaxPool + ReduceMean, a Loop whose body reads an outer weight,
  MatMul + Add + Softmax; batch, height and width symbolic, so runs of mixed shapes build and
  share plans (tests/unit/test_concurrency.c).
- attention_concurrency.onnx: the same input as concurrency.onnx read as a sequence of
  height x width positions of 3 features, through attention spelled out as the exporters write
  it (two heads), which the fusion pass runs as one Attention step; shapes symbolic likewise.
- winograd_concurrency.onnx: the same input through a 1x1 conv to 32 channels and a residual
  block of two 3x3 convs between channels-last tensors, which the inputs of 60 or more 2x2
  output tiles run by Winograd (kernels_cpu/conv/winograd.c) and the smaller ones by oneDNN,
  then pooled, MatMul + Softmax; shapes symbolic likewise.
- endless_loop.onnx: a Loop whose trip count is an input (INT64_MAX in the tests) and whose
  condition stays true: only run options (deadline, terminate, iteration cap) stop it.
- activation_patterns.onnx: the exporters' spelled-out GELU (erf form in its three associations
  and with 1/sqrt 2 as a Mul, tanh form) and SiLU, which the graph rewrites (core/rules/gelu.c, swish.c)
  turn into Gelu and Swish, beside near misses they must leave alone."""

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


def attention_concurrency_model() -> onnx.ModelProto:
    rng = np.random.default_rng(20261126)

    def w(*shape):
        return (rng.standard_normal(shape) / 2).astype(np.float32)

    consts = {"wq": w(3, 8), "wk": w(3, 8), "wv": w(3, 8), "bq": w(8), "wo": w(8, 5),
              "seq": np.array([0, 3, -1], np.int64), "heads": np.array([0, -1, 2, 4], np.int64),
              "merged": np.array([0, -1, 8], np.int64), "root": np.array(2.0, np.float32)}
    node = helper.make_node
    nodes = [
        node("Reshape", ["x", "seq"], ["x3"]),                 # [batch, 3, positions]
        node("Transpose", ["x3"], ["xs"], perm=[0, 2, 1]),     # [batch, positions, 3]
        node("MatMul", ["xs", "wq"], ["q0"]), node("Add", ["q0", "bq"], ["q"]),
        node("MatMul", ["xs", "wk"], ["k"]), node("MatMul", ["xs", "wv"], ["v"]),
        node("Reshape", ["q", "heads"], ["q4"]), node("Transpose", ["q4"], ["qh"], perm=[0, 2, 1, 3]),
        node("Reshape", ["k", "heads"], ["k4"]), node("Transpose", ["k4"], ["kh"], perm=[0, 2, 3, 1]),
        node("Reshape", ["v", "heads"], ["v4"]), node("Transpose", ["v4"], ["vh"], perm=[0, 2, 1, 3]),
        node("MatMul", ["qh", "kh"], ["scores"]), node("Div", ["scores", "root"], ["scaled"]),
        node("Softmax", ["scaled"], ["probs"], axis=-1), node("MatMul", ["probs", "vh"], ["ctx"]),
        node("Transpose", ["ctx"], ["ctx_t"], perm=[0, 2, 1, 3]),
        node("Reshape", ["ctx_t", "merged"], ["ctx3"]),
        node("ReduceMean", ["ctx3"], ["pooled"], axes=[1], keepdims=0),
        node("MatMul", ["pooled", "wo"], ["logits"]),
        node("Softmax", ["logits"], ["out"], axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "attention_concurrency",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, "height", "width"])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["batch", 5])],
        initializer=[numpy_helper.from_array(a, n) for n, a in consts.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                             producer_name="onyx-tests")


def winograd_concurrency_model() -> onnx.ModelProto:
    rng = np.random.default_rng(20261203)

    def w(*shape):
        return (rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))).astype(np.float32)

    consts = {"wa": w(32, 3, 1, 1), "ba": w(32), "wb": w(32, 32, 3, 3), "bb": w(32),
              "wc": w(32, 32, 3, 3), "bc": w(32), "wo": w(32, 5)}
    node = helper.make_node
    nodes = [
        node("Conv", ["x", "wa", "ba"], ["a"]), node("Relu", ["a"], ["ar"]),
        node("Conv", ["ar", "wb", "bb"], ["b"], pads=[1, 1, 1, 1]), node("Relu", ["b"], ["br"]),
        node("Conv", ["br", "wc", "bc"], ["c"], pads=[1, 1, 1, 1]),
        node("Add", ["c", "ar"], ["cs"]), node("Relu", ["cs"], ["cr"]),
        node("GlobalAveragePool", ["cr"], ["gap"]), node("Flatten", ["gap"], ["pooled"]),
        node("MatMul", ["pooled", "wo"], ["logits"]),
        node("Softmax", ["logits"], ["out"], axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "winograd_concurrency",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, "height", "width"])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["batch", 5])],
        initializer=[numpy_helper.from_array(a, n) for n, a in consts.items()],
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


def sequence_loop_model() -> onnx.ModelProto:
    """A Loop of `trips` iterations that appends [i] (float) to a sequence each time, then
    concatenates it: builds a long sequence one SequenceInsert at a time (must stay linear)."""
    body = helper.make_graph(
        [
            helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT),
            helper.make_node("Unsqueeze", ["fi", "axis0"], ["item"]),
            helper.make_node("SequenceInsert", ["seq_in", "item"], ["seq_out"]),
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_sequence_value_info("seq_in", TensorProto.FLOAT, None),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_sequence_value_info("seq_out", TensorProto.FLOAT, None),
        ],
        initializer=[numpy_helper.from_array(np.array([0], np.int64), "axis0")],
    )
    graph = helper.make_graph(
        [
            helper.make_node("SequenceEmpty", [], ["empty"], dtype=TensorProto.FLOAT),
            helper.make_node("Loop", ["trips", "", "empty"], ["seq"], name="build", body=body),
            helper.make_node("SequenceLength", ["seq"], ["length"]),
            helper.make_node("ConcatFromSequence", ["seq"], ["values"], axis=0),
        ],
        "sequence_loop",
        [helper.make_tensor_value_info("trips", TensorProto.INT64, [])],
        [
            helper.make_tensor_value_info("length", TensorProto.INT64, []),
            helper.make_tensor_value_info("values", TensorProto.FLOAT, ["n"]),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                             producer_name="onyx-tests")


def activation_patterns_model() -> onnx.ModelProto:
    c = {"sqrt2": np.float32(np.sqrt(2.0)), "rsqrt2": np.float32(np.sqrt(0.5)),
         "one": np.float32(1.0), "half": np.float32(0.5), "k": np.float32(0.044715),
         "three": np.float32(3.0), "s2pi": np.float32(np.sqrt(2.0 / np.pi)),
         "notsqrt2": np.float32(1.5)}
    nodes = []

    def op(kind, inputs, out):
        nodes.append(helper.make_node(kind, inputs, [out], name=out))
        return out

    def erf_plus_one(tag, scale_by_mul=False, scale="sqrt2"):
        d = op("Mul" if scale_by_mul else "Div", ["x", "rsqrt2" if scale_by_mul else scale], f"{tag}_d")
        e = op("Erf", [d], f"{tag}_e")
        return op("Add", [e, "one"], f"{tag}_a")

    a = erf_plus_one("g1")                                   # (x * a) * 0.5
    op("Mul", [op("Mul", ["x", a], "g1_m"), "half"], "gelu_xa_half")
    a = erf_plus_one("g2", scale_by_mul=True)                # (a * 0.5) * x
    op("Mul", [op("Mul", [a, "half"], "g2_m"), "x"], "gelu_ahalf_x")
    a = erf_plus_one("g3")                                   # (x * 0.5) * a
    op("Mul", [op("Mul", ["x", "half"], "g3_h"), a], "gelu_xhalf_a")
    cube = op("Pow", ["x", "three"], "t_p")                  # tanh form
    inner = op("Add", ["x", op("Mul", [cube, "k"], "t_k")], "t_s")
    t = op("Tanh", [op("Mul", [inner, "s2pi"], "t_m")], "t_t")
    op("Mul", [op("Mul", ["x", op("Add", [t, "one"], "t_a")], "t_x"), "half"], "gelu_tanh")
    op("Mul", ["x", op("Sigmoid", ["x"], "s_sig")], "silu")
    op("Mul", ["x", op("Sigmoid", ["y"], "n_sig")], "not_silu")     # sigmoid of another value
    a = erf_plus_one("n1", scale="notsqrt2")                          # not 1/sqrt 2
    op("Mul", [op("Mul", ["x", a], "n1_m"), "half"], "not_gelu")
    outs = ["gelu_xa_half", "gelu_ahalf_x", "gelu_xhalf_a", "gelu_tanh", "silu", "not_silu",
            "not_gelu"]
    graph = helper.make_graph(
        nodes, "activation_patterns",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 16]) for n in ("x", "y")],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 16]) for n in outs],
        initializer=[numpy_helper.from_array(np.array(v, np.float32), k) for k, v in c.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                             producer_name="onyx-tests")


def dnnl_oom_model() -> onnx.ModelProto:
    """Conv, MatMul and Gemm (oneDNN primitives, reorders and sgemm) for the out-of-memory test
    (tests/unit/test_oom.c): small, so that the memory left is what the test sets."""
    rng = np.random.default_rng(5)
    w = rng.standard_normal((16, 16, 3, 3)).astype(np.float32) * 0.1
    m = rng.standard_normal((16 * 4 * 4, 32)).astype(np.float32) * 0.05
    g = rng.standard_normal((32, 10)).astype(np.float32) * 0.1
    graph = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], strides=[4, 4]),
            helper.make_node("Relu", ["c"], ["r"]),
            helper.make_node("Flatten", ["r"], ["f"]),
            helper.make_node("MatMul", ["f", "m"], ["h"]),
            helper.make_node("Gemm", ["h", "g"], ["y"]),
        ],
        "dnnl_oom",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 10])],
        initializer=[numpy_helper.from_array(w, "w"), numpy_helper.from_array(m, "m"),
                     numpy_helper.from_array(g, "g")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                             producer_name="onyx-tests")


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent
    for name, model in [("concurrency", concurrency_model()),
                        ("attention_concurrency", attention_concurrency_model()),
                        ("winograd_concurrency", winograd_concurrency_model()),
                        ("endless_loop", endless_loop_model()),
                        ("sequence_loop", sequence_loop_model()),
                        ("activation_patterns", activation_patterns_model()),
                        ("dnnl_oom", dnnl_oom_model())]:
        onnx.checker.check_model(model, full_check=True)
        onnx.save(model, out / f"{name}.onnx")


if __name__ == "__main__":
    main()
