"""Seed corpora for the fuzz targets, from the ONNX backend test data: model.onnx files (fuzz_load;
fuzz_run with an 8-byte flags+seed header), their single nodes (fuzz_node, header: opset + seed)
and the test_data_set .pb files (fuzz_pb, with the kind byte the model's input/output type calls
for). Usage: make_corpus.py DATA_DIR OUT_DIR MAX_LEN"""
import hashlib
import os
import sys

import onnx

KIND = {"tensor_type": 0, "sparse_tensor_type": 0, "sequence_type": 1, "optional_type": 2}


def put(folder, blob, max_len):
    if len(blob) > max_len:
        return
    name = hashlib.sha1(blob).hexdigest()
    path = os.path.join(folder, name)
    if not os.path.exists(path):
        with open(path, "wb") as f:
            f.write(blob)


def kind_of(value_info):
    return KIND.get(value_info.type.WhichOneof("value"), 0)


def external_seeds(dirs, max_len):
    """Models whose initializer lives in external data: the fuzz targets give the loader a folder
    with data.bin and sub/w.bin (256 bytes each, fuzz_common.h)."""
    from onnx import helper, TensorProto

    places = [("data.bin", "0", "12"), ("sub/w.bin", "4", "12"), ("data.bin", "250", "12"),
              ("../data.bin", "0", "12"), ("/etc/hostname", "0", "12"), ("sub", "0", "12"),
              ("missing.bin", "0", "12"), ("sub/../data.bin", "0", "12"), ("data.bin", "0", None)]
    for loc, off, length in places:
        w = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[3],
                        data_location=TensorProto.EXTERNAL)
        for k, v in (("location", loc), ("offset", off), ("length", length)):
            if v is not None:
                w.external_data.add(key=k, value=v)
        graph = helper.make_graph(
            [helper.make_node("Add", ["X", "W"], ["Y"])], "ext",
            [helper.make_tensor_value_info("X", TensorProto.FLOAT, [3])],
            [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [3])], [w])
        blob = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()
        put(dirs["load"], blob, max_len)
        put(dirs["run"], bytes(8) + blob, max_len)


def main():
    data, out, max_len = sys.argv[1], sys.argv[2], int(sys.argv[3])
    node_data = sys.argv[4] if len(sys.argv) > 4 else data  # onnx >= 1.23 ships no node/ folder
    dirs = {t: os.path.join(out, t) for t in ("load", "run", "pb", "node")}
    for d in dirs.values():
        os.makedirs(d, exist_ok=True)
    for suite in ("node", "simple", "pytorch-converted", "pytorch-operator"):
        root = os.path.join(node_data if suite == "node" else data, suite)
        for test in sorted(os.listdir(root)):
            path = os.path.join(root, test, "model.onnx")
            if not os.path.exists(path) or os.path.getsize(path) > max_len:
                continue
            blob = open(path, "rb").read()
            put(dirs["load"], blob, max_len)
            digest = hashlib.sha1(blob).digest()
            # two headers per model: plain (flags 0) and one with the flags taken from the hash
            put(dirs["run"], bytes(8) + blob, max_len)
            put(dirs["run"], digest[:8] + blob, max_len)
            try:
                model = onnx.load_model_from_string(blob)
            except Exception:
                continue
            graph = model.graph
            opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)
            if len(graph.node) == 1 and not graph.initializer:
                put(dirs["node"], bytes([opset % 29]) + digest[1:8] + graph.node[0].SerializeToString(),
                    max_len)
            inits = {t.name for t in graph.initializer}
            ins = [kind_of(v) for v in graph.input if v.name not in inits]
            outs = [kind_of(v) for v in graph.output]
            for ds in sorted(os.listdir(os.path.join(root, test))):
                folder = os.path.join(root, test, ds)
                if not os.path.isdir(folder):
                    continue
                for pb in sorted(os.listdir(folder)):
                    stem, _, idx = pb[:-3].partition("_")
                    kinds = ins if stem == "input" else outs
                    i = int(idx) if idx.isdigit() else 0
                    kind = kinds[i] if i < len(kinds) else 0
                    put(dirs["pb"], bytes([kind]) + open(os.path.join(folder, pb), "rb").read(),
                        max_len)
    external_seeds(dirs, max_len)
    for t, d in dirs.items():
        print(f"corpus {t}: {len(os.listdir(d))} seeds in {d}")


main()
