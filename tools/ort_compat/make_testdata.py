"""Writes the test models that onnxruntime's Python API tests (onnxruntime_test_python.py) name, into
DIR/testdata, rebuilt with onnx.helper: the index we fetch from gives the test files but not these
binary models. Each is rebuilt from onnxruntime's own generator script where the repository has one
(add_mul_add, model_with_external_initializer_come_from_user, lora/two_params_lora_model), else from
what the model's bytes and the tests show of it (names, types, shapes, values, op). Not rebuilt:
custom_op_library/ (needs onnxruntime's test custom-op .so) and the CUDA-only identity_9799 and
issue4829. mnist.onnx is an MNIST-shaped CNN (same input/output names and shapes, seeded weights),
not the original weights: the tests only serialize it.

    python tools/ort_compat/make_testdata.py DIR
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.external_data_helper import set_external_data


def tensor_vi(name, elem, shape, denotations=None):
    vi = helper.make_tensor_value_info(name, elem, shape)
    for dim, den in zip(vi.type.tensor_type.shape.dim, denotations or []):
        if den:
            dim.denotation = den
    return vi


def model(nodes, name, inputs, outputs, inits=(), opset=7, producer='', ir=None, extra_opsets=()):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(graph, producer_name=producer,
                          opset_imports=[helper.make_opsetid('', opset)] + list(extra_opsets))
    if ir is not None:
        m.ir_version = ir
    return m


def external(value, name, location):
    t = numpy_helper.from_array(value, name)
    raw = t.raw_data
    set_external_data(t, location=location)
    t.ClearField('raw_data')
    t.data_location = TensorProto.EXTERNAL
    return t, raw


def build(out):
    os.makedirs(os.path.join(out, 'lora'), exist_ok=True)
    F, I64, B, S = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL, TensorProto.STRING
    models = {}

    # mul_1: as the copy in onnxruntime's wheel (onnxruntime/datasets/mul_1.onnx)
    w = numpy_helper.from_array(np.arange(1, 7, dtype=np.float32).reshape(3, 2), 'W')
    w.ClearField('raw_data')
    w.float_data.extend(range(1, 7))
    models['mul_1.onnx'] = model([helper.make_node('Mul', ['X', 'W'], ['Y'], name='mul_1')], 'mul test',
                                 [tensor_vi('X', F, [3, 2])], [tensor_vi('Y', F, [3, 2])], [w],
                                 producer='chenta', ir=3)
    wm = numpy_helper.from_array(np.array([[1.0], [2.0]], np.float32), 'W')
    models['matmul_1.onnx'] = model([helper.make_node('MatMul', ['X', 'W'], ['Y'])], 'matmul test',
                                    [tensor_vi('X', F, [3, 2])], [tensor_vi('Y', F, [3, 1])], [wm], ir=3)
    models['matmul_2.onnx'] = model([helper.make_node('MatMul', ['X', 'W'], ['Y'])], 'matmul test',
                                    [tensor_vi('X', F, ['None', 2])], [tensor_vi('Y', F, ['None', 1])],
                                    [wm], ir=3)
    models['logicaland.onnx'] = model(
        [helper.make_node('And', ['input:0', 'input1:0'], ['output:0'], name='output')], 'tf2onnx',
        [tensor_vi('input1:0', B, [2, 2]), tensor_vi('input:0', B, [2, 2])],
        [tensor_vi('output:0', B, [2, 2])], producer='tf2onnx')
    models['identity_string.onnx'] = model([helper.make_node('Identity', ['input:0'], ['output:0'])],
                                           'identity_string', [tensor_vi('input:0', S, [2, 2])],
                                           [tensor_vi('output:0', S, [2, 2])])
    opt_seq = helper.make_optional_type_proto(helper.make_sequence_type_proto(
        helper.make_tensor_type_proto(F, None)))
    models['identity_opt.onnx'] = model(
        [helper.make_node('Identity', ['input'], ['output'])], 'identity_opt',
        [helper.make_value_info('input', opt_seq)], [helper.make_value_info('output', opt_seq)], opset=16)
    seq_f = helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, None))
    models['sequence_length.onnx'] = model(
        [helper.make_node('SequenceLength', ['X'], ['Y'])], 'test-model',
        [helper.make_value_info('X', seq_f)], [tensor_vi('Y', I64, [])], opset=11, producer='onnx-example')
    seq_i = helper.make_sequence_type_proto(helper.make_tensor_type_proto(I64, None))
    models['sequence_construct.onnx'] = model(
        [helper.make_node('SequenceConstruct', ['tensor1', 'tensor2'], ['output_sequence'])], 'test-model',
        [tensor_vi('tensor1', I64, [2, 3]), tensor_vi('tensor2', I64, [2, 3])],
        [helper.make_value_info('output_sequence', seq_i)], opset=11, producer='onnx-example')
    models['sequence_insert.onnx'] = model(
        [helper.make_node('SequenceInsert', ['input_seq', 'tensor'], ['output_sequence'])], 'test-model',
        [helper.make_value_info('input_seq', seq_i), tensor_vi('tensor', I64, [2, 3])],
        [helper.make_value_info('output_sequence', seq_i)], opset=11, producer='onnx-example')
    # the bytes show dim_param "None" (twice) with denotations DATA_BATCH / DATA_CHANNEL, then 5
    models['abs_free_dimensions.onnx'] = model(
        [helper.make_node('Abs', ['x'], ['y'])], 'test_abs',
        [tensor_vi('x', F, ['None', 'None', 5], ['DATA_BATCH', 'DATA_CHANNEL'])],
        [tensor_vi('y', F, ['None', 'None', 5])], opset=6, producer='backend-test')
    cfg = model([helper.make_node('Mul', ['X', 'W'], ['Y'], name='mul_1')], 'mul test',
                [tensor_vi('X', F, [3, 2])], [tensor_vi('Y', F, [3, 2])], [w])
    helper.set_model_props(cfg, {'ort_config': json.dumps({'session_options': {
        'inter_op_num_threads': 5, 'intra_op_num_threads': 2, 'graph_optimization_level': 99,
        'enable_profiling': 1}})})
    models['model_with_valid_ort_config_json.onnx'] = cfg
    pads, _ = external(np.array([0, 0, 1, 1], np.int64), 'Pads_not_on_disk', 'Pads_not_on_disk.bin')
    models['model_with_external_initializer_come_from_user.onnx'] = model(
        [helper.make_node('Pad', ['X', 'Pads_not_on_disk'], ['Y'], mode='constant')], 'test-model',
        [tensor_vi('X', F, [1, 2]), tensor_vi('Pads_not_on_disk', I64, [4])], [tensor_vi('Y', F, [1, 4])],
        [pads], opset=11, producer='onnx-example')
    orig, raw = external(np.array([0, 0, 1, 1], np.int64), 'model_with_orig_ext_data',
                         'model_with_orig_ext_data.bin')
    with open(os.path.join(out, 'model_with_orig_ext_data.bin'), 'wb') as f:
        f.write(raw)
    models['model_with_orig_ext_data.onnx'] = model(
        [helper.make_node('Pad', ['X', 'model_with_orig_ext_data'], ['Y'], name='pad0', mode='constant')],
        'test-model', [tensor_vi('X', F, [1, 2]), tensor_vi('model_with_orig_ext_data', I64, [4])],
        [tensor_vi('Y', F, [1, 4])], [orig], opset=11, producer='onnx-example')
    models['add_mul_add.onnx'] = model(
        [helper.make_node('Add', ['A', 'B'], ['add_output'], name='add_0'),
         helper.make_node('Mul', ['add_output', 'B'], ['mul_output'], name='mul_0'),
         helper.make_node('Add', ['mul_output', 'A'], ['C'], name='add_1')], 'Main_graph',
        [tensor_vi('A', F, [3, 2]), tensor_vi('B', F, [3, 2])], [tensor_vi('C', F, [3, 2])], opset=21)
    weight_x = numpy_helper.from_array(np.arange(1, 17, dtype=np.float32).reshape(4, 4), 'weight_x')
    models['lora/two_params_lora_model.onnx'] = model(
        [helper.make_node('MatMul', ['input_x', 'weight_x'], ['mm_output_x']),
         helper.make_node('MatMul', ['input_x', 'lora_param_a'], ['mm_output_a']),
         helper.make_node('MatMul', ['mm_output_a', 'lora_param_b'], ['mm_output_b']),
         helper.make_node('Add', ['mm_output_x', 'mm_output_b'], ['output'])], 'two_params_lora_model',
        [tensor_vi('input_x', F, [4, 4]), tensor_vi('lora_param_a', F, [4, 'dim']),
         tensor_vi('lora_param_b', F, ['dim', 4])], [tensor_vi('output', F, [4, 4])],
        [weight_x, numpy_helper.from_array(np.zeros([4, 0], np.float32), 'lora_param_a'),
         numpy_helper.from_array(np.zeros([0, 4], np.float32), 'lora_param_b')], opset=21)
    rng = np.random.default_rng(193)

    def p(name, *shape):
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.1).astype(np.float32), name)
    models['mnist.onnx'] = model(
        [helper.make_node('Conv', ['Input3', 'Parameter5'], ['c1'], kernel_shape=[5, 5], pads=[2, 2, 2, 2]),
         helper.make_node('Add', ['c1', 'Parameter6'], ['a1']), helper.make_node('Relu', ['a1'], ['r1']),
         helper.make_node('MaxPool', ['r1'], ['p1'], kernel_shape=[2, 2], strides=[2, 2]),
         helper.make_node('Conv', ['p1', 'Parameter87'], ['c2'], kernel_shape=[5, 5], pads=[2, 2, 2, 2]),
         helper.make_node('Add', ['c2', 'Parameter88'], ['a2']), helper.make_node('Relu', ['a2'], ['r2']),
         helper.make_node('MaxPool', ['r2'], ['p2'], kernel_shape=[3, 3], strides=[3, 3]),
         helper.make_node('Reshape', ['p2', 'shape'], ['flat']),
         helper.make_node('MatMul', ['flat', 'Parameter193'], ['mm']),
         helper.make_node('Add', ['mm', 'Parameter194'], ['Plus214_Output_0'])], 'CNTKGraph',
        [tensor_vi('Input3', F, [1, 1, 28, 28])], [tensor_vi('Plus214_Output_0', F, [1, 10])],
        [p('Parameter5', 8, 1, 5, 5), p('Parameter6', 8, 1, 1), p('Parameter87', 16, 8, 5, 5),
         p('Parameter88', 16, 1, 1), p('Parameter193', 256, 10), p('Parameter194', 1, 10),
         numpy_helper.from_array(np.array([1, 256], np.int64), 'shape')], opset=8)

    for name, m in models.items():
        with open(os.path.join(out, name), 'wb') as f:
            f.write(m.SerializeToString())
    try:   # the adapter is onnxruntime's own format: written by onnxruntime, as its script does
        import onnxruntime as ort
        fmt = ort.AdapterFormat()
        fmt.set_adapter_version(1)
        fmt.set_model_version(1)
        fmt.set_parameters({
            'lora_param_a': ort.OrtValue.ortvalue_from_numpy(np.array([3, 4, 5, 6], np.float32).reshape(4, 1)),
            'lora_param_b': ort.OrtValue.ortvalue_from_numpy(np.array([7, 8, 9, 10], np.float32).reshape(1, 4))})
        fmt.export_adapter(os.path.join(out, 'lora', 'two_params_lora_model.onnx_adapter'))
    except (ImportError, AttributeError) as e:
        print(f'make_testdata: no onnxruntime here ({e}): lora adapter not written', file=sys.stderr)
    return sorted(models)


if __name__ == '__main__':
    names = build(os.path.join(sys.argv[1] if len(sys.argv) > 1 else '.ort-compat', 'testdata'))
    print(f'make_testdata: {len(names)} models')
