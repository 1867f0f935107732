"""Writes onnx's node test cases to disk in the layout onyx-test-runner reads (model.onnx and
test_data_set_N/{input,output}_j.pb), as onnx releases before 1.23 shipped them. onnx 1.23 builds
its node tests in memory from its case scripts (onnx/backend/test/case/node); this only serializes
what those scripts produce, with numpy's generator seeded so that every run writes the same data.

usage: gen_node_data.py OUTPUT_DIR   (writes OUTPUT_DIR/node/test_*/ and a stamp of onnx's version)
"""
import os
import shutil
import sys
import warnings

import numpy as np


def write_value(path, value, type_proto, name):
    from onnx import TensorProto, numpy_helper
    if type_proto.HasField('map_type'):
        proto = numpy_helper.from_dict(value, name)
    elif type_proto.HasField('sequence_type'):
        proto = numpy_helper.from_list(value, name)
    elif type_proto.HasField('optional_type'):
        proto = numpy_helper.from_optional(value, name)
    elif isinstance(value, TensorProto):
        proto = value
    else:
        proto = numpy_helper.from_array(value, name)
    with open(path, 'wb') as f:
        f.write(proto.SerializeToString())


def main(out_dir):
    np.random.seed(0)  # the case scripts draw their inputs from numpy's global generator
    import onnx
    from onnx.backend.test.loader import load_node_model_tests
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # the scripts' own overflow and log(0) warnings
        cases = load_node_model_tests()
    node_dir = os.path.join(out_dir, 'node')
    tmp_dir = node_dir + '.tmp'
    shutil.rmtree(tmp_dir, ignore_errors=True)
    for case in cases:
        case_dir = os.path.join(tmp_dir, case.name)
        os.makedirs(case_dir)
        with open(os.path.join(case_dir, 'model.onnx'), 'wb') as f:
            f.write(case.model.SerializeToString())
        graph = case.model.graph
        for i, (inputs, outputs) in enumerate(case.data_sets):
            set_dir = os.path.join(case_dir, f'test_data_set_{i}')
            os.makedirs(set_dir)
            for j, value in enumerate(inputs):
                write_value(os.path.join(set_dir, f'input_{j}.pb'), value, graph.input[j].type,
                            graph.input[j].name)
            for j, value in enumerate(outputs):
                write_value(os.path.join(set_dir, f'output_{j}.pb'), value, graph.output[j].type,
                            graph.output[j].name)
    shutil.rmtree(node_dir, ignore_errors=True)
    os.rename(tmp_dir, node_dir)
    with open(os.path.join(out_dir, 'onnx-version'), 'w') as f:
        f.write(onnx.__version__ + '\n')
    print(f'gen_node_data: {len(cases)} node tests of onnx {onnx.__version__} in {node_dir}')


if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
