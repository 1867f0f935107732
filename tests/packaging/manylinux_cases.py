"""Writes the cases tests/packaging/test_manylinux.sh runs in the minimal Debian root: each a model
(NAME.onnx) and NAME.npz with its inputs (in_*) and the expected outputs (out_*), from onnxruntime
where it implements the op, else from what the input encodes (a PNG's pixels). The cases reach every
library the manylinux wheel bundles that a plain MLP would not load: OpenBLAS (double MatMul,
dlopen()ed), RE2 (RegexFullMatch) and the image codecs (ImageDecoder on a PNG).
    manylinux_cases.py OUT_DIR EXAMPLE_MODEL          (run with .venv's python: onnx, onnxruntime)
"""
import os
import shutil
import struct
import sys
import zlib

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper


def ort_run(model_path, feeds):
    sess = ort.InferenceSession(model_path, providers=['CPUExecutionProvider'])
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))


def png(rgb):
    """A PNG (8-bit RGB, no filter) of rgb, written with zlib: lossless, so its pixels are the
    expected decode."""
    height, width, _ = rgb.shape
    raw = b''.join(b'\0' + rgb[i].tobytes() for i in range(height))

    def chunk(kind, data):
        return (struct.pack('>I', len(data)) + kind + data +
                struct.pack('>I', zlib.crc32(kind + data) & 0xffffffff))
    header = struct.pack('>IIBBBBB', width, height, 8, 2, 0, 0, 0)
    return (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', header) + chunk(b'IDAT', zlib.compress(raw))
            + chunk(b'IEND', b''))


def save(out, name, model, inputs, outputs):
    path = os.path.join(out, name + '.onnx')
    if isinstance(model, str):
        shutil.copyfile(model, path)
    else:
        onnx.checker.check_model(model)
        onnx.save(model, path)
    if outputs is None:
        outputs = ort_run(path, inputs)
    # strings as numpy's str type: object arrays would need pickle to load
    arrays = {**{f'in_{k}': v for k, v in inputs.items()},
              **{f'out_{k}': v for k, v in outputs.items()}}
    np.savez(os.path.join(out, name + '.npz'),
             **{k: v.astype(str) if v.dtype == object else v for k, v in arrays.items()})


def main():
    out, example = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(35)
    opset = [helper.make_opsetid('', 20)]

    save(out, 'example', example, {'x': rng.standard_normal((8, 16)).astype(np.float32)}, None)
    # what `onyx run` feeds the example (arange(n)/n), for the CLI's printed probabilities
    save(out, 'example_cli', example, {'x': (np.arange(16, dtype=np.float32) / 16).reshape(1, 16)},
         None)

    w = numpy_helper.from_array(rng.standard_normal((16, 12)), 'w')
    graph = helper.make_graph(
        [helper.make_node('MatMul', ['a', 'w'], ['y'])], 'double_matmul',
        [helper.make_tensor_value_info('a', TensorProto.DOUBLE, [9, 16])],
        [helper.make_tensor_value_info('y', TensorProto.DOUBLE, [9, 12])], [w])
    save(out, 'double_matmul', helper.make_model(graph, opset_imports=opset),
         {'a': rng.standard_normal((9, 16))}, None)

    graph = helper.make_graph(
        [helper.make_node('RegexFullMatch', ['s'], ['y'], pattern=r'[a-z]+@\d+(\.\d+)?')],
        'regex', [helper.make_tensor_value_info('s', TensorProto.STRING, [5])],
        [helper.make_tensor_value_info('y', TensorProto.BOOL, [5])])
    save(out, 'regex', helper.make_model(graph, opset_imports=opset),
         {'s': np.array(['abc@12', 'Abc@1', 'x@', 'pi@3.14', 'a@1.'], dtype=object)}, None)

    image = (np.arange(6 * 7 * 3) * 37 % 256).astype(np.uint8).reshape(6, 7, 3)
    graph = helper.make_graph(
        [helper.make_node('ImageDecoder', ['b'], ['y'], pixel_format='RGB')], 'png',
        [helper.make_tensor_value_info('b', TensorProto.UINT8, [None])],
        [helper.make_tensor_value_info('y', TensorProto.UINT8, [None, None, 3])])
    save(out, 'png', helper.make_model(graph, opset_imports=opset),
         {'b': np.frombuffer(png(image), np.uint8)}, {'y': image})


if __name__ == '__main__':
    main()
