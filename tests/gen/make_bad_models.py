#!/usr/bin/env python3
# Writes models (and inputs) that onyx must refuse, each in OUT/bad/NAME/ with model.onnx and
# input_N.pb, plus OUT/bad/manifest.json naming for each the onyx status expected and a piece of
# its message. tests/gen/check_bad.py runs them through `onyx run` and checks both.
#   .venv/bin/python tests/gen/make_bad_models.py OUT
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto as TP  # noqa: E402
from onnx import helper as h  # noqa: E402
from onnx import numpy_helper as nh  # noqa: E402

from common import node_model, to_proto  # noqa: E402

SHAPE, RUNTIME, INVALID, UNSUPPORTED, IO = ('ONYX_ERR_SHAPE', 'ONYX_ERR_RUNTIME', 'ONYX_ERR_INVALID_MODEL',
                                            'ONYX_ERR_UNSUPPORTED', 'ONYX_ERR_IO')


class BadSuite:
    """Writes the bad cases under root, each once, and the manifest that describes them."""

    def __init__(self, root):
        self.root = root
        self.entries = []
        shutil.rmtree(root, ignore_errors=True)
        os.makedirs(root)

    def write(self, name, model, feeds, status, message, files=None):
        """model: a ModelProto or raw bytes; feeds: (input name, value or raw bytes); status: the
        status name, or a list of acceptable ones; message: a substring of the error message."""
        if any(e['name'] == name for e in self.entries):
            raise ValueError(f'bad case {name} written twice')
        d = os.path.join(self.root, name)
        os.makedirs(d)
        with open(os.path.join(d, 'model.onnx'), 'wb') as f:
            f.write(model if isinstance(model, bytes) else model.SerializeToString())
        inputs = []
        for i, (n, v) in enumerate(feeds):
            fn = f'input_{i}.pb'
            with open(os.path.join(d, fn), 'wb') as f:
                f.write(v if isinstance(v, bytes) else to_proto(v, n).SerializeToString())
            inputs.append([n, fn])
        for fn, data in (files or {}).items():
            with open(os.path.join(d, fn), 'wb') as f:
                f.write(data)
        self.entries.append({'name': name, 'model': f'{name}/model.onnx',
                             'inputs': [[n, f'{name}/{fn}'] for n, fn in inputs],
                             'status': status if isinstance(status, list) else [status], 'message': message})

    def node(self, name, op, inputs, status, message, attrs=None, opset=21, n_out=1, consts=(), sym=False):
        model, feeds = node_model(op, inputs, attrs, opset, n_out, consts, sym)
        self.write(name, model, feeds, status, message)

    def save_manifest(self):
        with open(os.path.join(self.root, 'manifest.json'), 'w') as f:
            json.dump(self.entries, f, indent=1)


def f(*shape):
    return np.ones(shape, np.float32)


def i64(*v):
    return np.array(v, dtype=np.int64)


def vi(name, elem, shape=None):
    return h.make_tensor_value_info(name, elem, shape)


def graph_model(nodes, inputs, outputs, inits=(), opset=17):
    g = h.make_graph(nodes, 'g', inputs, outputs, list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid('', opset)], ir_version=8)


def shape_family(b):
    b.node('bad_shp_reshape_two_neg', 'Reshape', [f(2, 3), i64(-1, -1)], SHAPE, '-1 at both')
    b.node('bad_shp_reshape_mismatch', 'Reshape', [f(2, 3), i64(4, 2)], SHAPE, 'cannot reshape [2,3]')
    b.node('bad_shp_reshape_mismatch_const', 'Reshape', [f(2, 3), i64(4, 2)], SHAPE, 'cannot reshape [2,3]',
           consts=(1,))
    b.node('bad_shp_gather_oob', 'Gather', [f(3, 4), i64(0, 7, 1)], RUNTIME, 'index 7',
           attrs={'axis': 1})
    b.node('bad_shp_gather_oob_neg', 'Gather', [f(3, 4), i64(-4)], RUNTIME, 'index -4')
    b.node('bad_shp_slice_step0', 'Slice', [f(3, 4), i64(0), i64(2), i64(0), i64(0)], INVALID, 'steps[0] is 0')
    b.node('bad_shp_slice_axes_dup', 'Slice', [f(3, 4), i64(0, 0), i64(2, 2), i64(0, -2)], INVALID, 'repeats axis 0')
    b.node('bad_shp_transpose_badperm', 'Transpose', [f(3, 4)], INVALID, 'no permutation', attrs={'perm': [0, 0]})
    b.node('bad_shp_concat_mismatch', 'Concat', [f(3, 4), f(2, 5)], SHAPE, 'has size 5 on axis 1, expected 4',
           attrs={'axis': 0})
    b.node('bad_shp_concat_axis', 'Concat', [f(2, 3)], SHAPE, 'axis 2 is out of range', attrs={'axis': 2})
    b.node('bad_shp_split_badsum', 'Split', [f(6, 4), i64(1, 2)], SHAPE, 'add up to 3', attrs={'axis': 0}, n_out=2)
    b.node('bad_shp_split_uneven13', 'Split', [f(7, 4)], SHAPE, 'equal parts', attrs={'axis': 0}, opset=13, n_out=2)
    b.node('bad_shp_scatternd_oob', 'ScatterND', [f(4, 5), i64(0, 9).reshape(2, 1), f(2, 5)], RUNTIME,
           'index 9', opset=13)
    b.node('bad_shp_gathernd_oob', 'GatherND', [f(4, 5), i64(0, 9).reshape(1, 2)], RUNTIME, 'index 9', opset=13)
    b.node('bad_shp_gather_elements_oob', 'GatherElements', [f(4, 5), i64(0, 1, -6, 2, 3).reshape(1, 5)], RUNTIME,
           'index -6')
    b.node('bad_shp_scatter_el_oob', 'ScatterElements', [f(4, 5), i64(0, 1, 5, 2, 3).reshape(1, 5), f(1, 5)], RUNTIME,
           'index 5')
    b.node('bad_shp_range_delta0', 'Range', [np.array(1, np.int64), np.array(5, np.int64), np.array(0, np.int64)],
           RUNTIME, 'delta is 0')
    b.node('bad_shp_squeeze_non1', 'Squeeze', [f(2, 3), i64(0)], SHAPE, 'cannot squeeze axis 0')
    b.node('bad_shp_unsqueeze_dup', 'Unsqueeze', [f(2, 3), i64(0, 0)], INVALID, 'repeats axis 0')
    b.node('bad_shp_flatten_axis', 'Flatten', [f(2, 3)], SHAPE, 'axis 5 is out of range', attrs={'axis': 5})
    b.node('bad_shp_tile_neg', 'Tile', [f(2, 3), i64(1, -1)], SHAPE, 'repeat -1 on axis 1')
    b.node('bad_shp_pad_neg_size', 'Pad', [f(2, 3), i64(0, -2, 0, -2)], SHAPE, 'negative size')
    b.node('bad_shp_d2s_bad_c', 'DepthToSpace', [f(1, 5, 2, 2)], SHAPE, 'not a multiple of blocksize',
           attrs={'blocksize': 2})
    b.node('bad_shp_onehot_depth0', 'OneHot', [i64(1, 2), np.array(0, np.int64), np.array([0, 1], np.float32)],
           SHAPE, 'depth 0')
    b.node('bad_shp_revseq_len', 'ReverseSequence', [f(3, 2), i64(4, 1)], RUNTIME, 'sequence_lens[0] = 4')
    b.node('bad_shp_compress_past', 'Compress', [f(2, 3), np.array([0, 0, 0, 1], bool)], RUNTIME,
           'past the size 3', attrs={'axis': 1})
    b.node('bad_shp_cos_neg', 'ConstantOfShape', [i64(2, -3)], SHAPE, 'shape[1] = -3 is negative')
    b.node('bad_shp_eyelike_rank', 'EyeLike', [f(2, 3, 4)], SHAPE, 'rank 3')


def planned_shapes_family(b):
    # Reshape's output shape is fixed at prepare ([2,2]) while its input comes from Compress,
    # whose length is only known at run time: a run that keeps 3 elements must be refused.
    nodes = [h.make_node('Compress', ['x', 'keep'], ['y'], axis=0),
             h.make_node('Reshape', ['y', 'shape'], ['z'])]
    model = graph_model(nodes, [vi('x', TP.FLOAT, [4]), vi('keep', TP.BOOL, [4])],
                        [vi('z', TP.FLOAT, [2, 2])], [nh.from_array(i64(2, 2), 'shape')])
    b.write('bad_plan_reshape_after_compress', model,
            [('x', f(4)), ('keep', np.array([1, 1, 1, 0], bool))], SHAPE, '[3]')
    # The same chain with an element-wise op whose static output came from the other input.
    nodes = [h.make_node('Compress', ['x', 'keep'], ['y'], axis=0),
             h.make_node('Add', ['y', 'w'], ['z'])]
    model = graph_model(nodes, [vi('x', TP.FLOAT, [4]), vi('keep', TP.BOOL, [4])],
                        [vi('z', TP.FLOAT, [4])], [nh.from_array(f(4), 'w')])
    b.write('bad_plan_add_after_compress', model,
            [('x', f(4)), ('keep', np.array([1, 0, 1, 0], bool))], SHAPE, 'broadcast')


def elementwise_family(b):
    b.node('bad_ew_bc_mismatch', 'Add', [f(2, 3), f(4, 3)], SHAPE, 'does not broadcast')
    b.node('bad_ew_bc_mismatch_sym', 'Add', [f(2, 3), f(4, 3)], SHAPE, 'does not broadcast', sym=True)
    b.node('bad_ew_type_mismatch', 'Add', [f(2), np.ones(2, np.int32)], SHAPE, 'type int32, expected float')
    b.node('bad_ew_cast_bad_to', 'Cast', [f(2)], INVALID, "'to' is 99", attrs={'to': 99})
    b.node('bad_ew_legacy_bad_axis', 'Add', [f(2, 3), f(3)], INVALID, 'axis 5', attrs={'broadcast': 1, 'axis': 5},
           opset=6)
    # Opset-6 Add broadcasts only with broadcast=1; without it the shapes must be equal.
    b.node('bad_ew_legacy_no_broadcast', 'Add', [f(2, 3), f(3)], [SHAPE, INVALID], 'broadcast', opset=6)
    b.node('bad_ew_bitshift_direction', 'BitShift', [np.ones(2, np.uint8), np.ones(2, np.uint8)], INVALID,
           "direction is 'UP'", attrs={'direction': 'UP'})
    # Mod with fmod=0 takes integer types only (floats need fmod=1).
    b.node('bad_ew_mod_float_fmod0', 'Mod', [f(2), f(2)], [SHAPE, INVALID], 'fmod')
    b.node('bad_ew_where_cond_float', 'Where', [f(2), f(2), f(2)], SHAPE, 'input 0 has type float')
    b.node('bad_ew_expand_bad', 'Expand', [f(2, 3), i64(4, 4)], SHAPE, 'cannot expand')
    b.node('bad_ew_expand_bad_const', 'Expand', [f(2, 3), i64(4, 4)], SHAPE, 'cannot expand', consts=(1,))
    b.node('bad_ew_pow_bool', 'Pow', [np.ones(2, bool), f(2)], SHAPE, 'input 0 has type bool')
    b.node('bad_ew_clip_min_vector', 'Clip', [f(3), f(2), None], SHAPE, 'expected a scalar', opset=13)
    b.node('bad_ew_isinf_int', 'IsInf', [np.ones(2, np.int32)], SHAPE, 'input 0 has type int32')
    b.node('bad_ew_prelu_slope', 'PRelu', [f(2, 3), f(4)], SHAPE, 'does not broadcast')
    b.node('bad_ew_sum_no_inputs', 'Sum', [], INVALID, 'has 0 inputs')
    b.node('bad_ew_unknown_op', 'NoSuchOp', [f(2)], UNSUPPORTED, 'unknown op NoSuchOp')


def control_family(b):
    node = h.make_node
    x = np.zeros((2, 3), np.float32)

    def seq_case(name, nodes, inputs, output, status, message):
        ins = [vi(n, TP.FLOAT if v.dtype == np.float32 else TP.INT64, list(v.shape)) for n, v in inputs]
        b.write(name, graph_model(nodes, ins, [output]), inputs, status, message)

    pair = node('SequenceConstruct', ['x', 'x'], ['s'])
    length = node('SequenceLength', ['s2'], ['y'])
    seq_case('bad_ctl_seq_at', [pair, node('SequenceAt', ['s', 'p'], ['y'])],
             [('x', x), ('p', np.array(5, np.int64))], vi('y', TP.FLOAT), RUNTIME, 'position 5 is out of range')
    seq_case('bad_ctl_seq_insert', [pair, node('SequenceInsert', ['s', 'x', 'p'], ['s2']), length],
             [('x', x), ('p', np.array(-3, np.int64))], vi('y', TP.INT64), RUNTIME, 'position -3 is out of range')
    seq_case('bad_ctl_seq_erase_empty',
             [node('SequenceEmpty', [], ['s']), node('SequenceErase', ['s'], ['s2']), length],
             [('x', x)], vi('y', TP.INT64), RUNTIME, 'empty sequence')
    seq_case('bad_ctl_split_sizes', [node('SplitToSequence', ['x', 'p'], ['s2']), length],
             [('x', x), ('p', np.array([1, 3], np.int64))], vi('y', TP.INT64), RUNTIME, 'split[1] = 3')
    seq_case('bad_ctl_split_zero', [node('SplitToSequence', ['x', 'p'], ['s2']), length],
             [('x', x), ('p', np.array(0, np.int64))], vi('y', TP.INT64), RUNTIME, 'split is 0')
    seq_case('bad_ctl_concat_from_seq', [node('SequenceConstruct', ['x', 'z'], ['s']),
                                         node('ConcatFromSequence', ['s'], ['y'], axis=0)],
             [('x', x), ('z', np.zeros((2, 4), np.float32))], vi('y', TP.FLOAT), SHAPE, 'does not concatenate')
    seq_case('bad_ctl_seq_construct_types', [node('SequenceConstruct', ['x', 'p'], ['s2']), length],
             [('x', x), ('p', np.array(0, np.int64))], vi('y', TP.INT64), SHAPE, 'input 1 has type int64')
    seq_case('bad_ctl_optional_get_empty', [node('Optional', [], ['o'], type=h.make_tensor_type_proto(TP.FLOAT, None)),
                                            node('OptionalGetElement', ['o'], ['y'])],
             [('x', x)], vi('y', TP.FLOAT), RUNTIME, 'optional input is empty')

    # If
    two = np.ones(2, np.float32)
    c_x = [vi('c', TP.BOOL, []), vi('x', TP.FLOAT, [2])]
    tb = h.make_graph([node('Identity', ['x'], ['o'])], 't', [], [vi('o', TP.FLOAT)])
    eb = h.make_graph([node('Identity', ['x'], ['o']), node('Identity', ['x'], ['o2'])], 'e', [],
                      [vi('o', TP.FLOAT), vi('o2', TP.FLOAT)])
    m = graph_model([node('If', ['c'], ['y'], then_branch=tb, else_branch=eb)], c_x, [vi('y', TP.FLOAT)])
    b.write('bad_ctl_if_branch_count', m, [('c', np.array(True)), ('x', two)], INVALID,
            'then_branch has 1 outputs and else_branch 2')
    m = graph_model([node('If', ['c'], ['y'], then_branch=tb, else_branch=tb)],
                    [vi('c', TP.BOOL, [2]), vi('x', TP.FLOAT, [2])], [vi('y', TP.FLOAT)])
    b.write('bad_ctl_if_cond_vector', m, [('c', np.array([True, False])), ('x', two)], SHAPE, 'must hold one element')
    ti = h.make_graph([node('Cast', ['x'], ['o'], to=TP.INT32)], 't', [], [vi('o', TP.INT32)])
    m = graph_model([node('If', ['c'], ['y'], then_branch=ti, else_branch=tb)], c_x, [vi('y', TP.FLOAT)])
    b.write('bad_ctl_if_branch_types', m, [('c', np.array(True)), ('x', two)], INVALID, 'int32 in then_branch')

    # Loop: body(i, cond, x_in) -> (cond, x_out, scan outputs...)
    def body(nodes, outputs, x_in=vi('x_in', TP.FLOAT, None)):
        return h.make_graph([node('Identity', ['cin'], ['cout'])] + nodes, 'b',
                            [vi('i', TP.INT64, []), vi('cin', TP.BOOL, []), x_in], [vi('cout', TP.BOOL, [])] + outputs)

    def loop(body_graph, outputs=('xf',), m_shape=(), x_type=TP.FLOAT):
        return graph_model([node('Loop', ['M', '', 'x'], list(outputs), body=body_graph)],
                           [vi('M', TP.INT64, list(m_shape)), vi('x', x_type, [2])], [vi(o, x_type) for o in outputs])

    m3 = ('M', np.array(3, np.int64))
    b.write('bad_ctl_loop_body_outputs', loop(body([], [])), [m3, ('x', two)], INVALID, 'body has 1 outputs')
    m = loop(body([node('Identity', ['x_in'], ['x_out'])], [vi('x_out', TP.FLOAT, None)]), m_shape=[2])
    b.write('bad_ctl_loop_trip_vector', m, [('M', np.array([2, 3], np.int64)), ('x', two)], SHAPE,
            '(M) must hold one element')
    m = loop(body([node('Concat', ['x_in', 'x_in'], ['x_out'], axis=0), node('Identity', ['x_in'], ['sc'])],
                  [vi('x_out', TP.FLOAT, None), vi('sc', TP.FLOAT, None)]), outputs=('xf', 's'))
    b.write('bad_ctl_loop_scan_shape_change', m, [m3, ('x', two)], SHAPE, 'scan output 0 is float [4] in iteration 1')
    # A loop-carried value must keep its type: the body turns float into int32.
    m = loop(body([node('Cast', ['x_in'], ['x_out'], to=TP.INT32)], [vi('x_out', TP.INT32, None)]))
    b.write('bad_ctl_loop_carried_type', m, [m3, ('x', two)], [INVALID, SHAPE], 'int32')
    # The body declares its carried input float; the Loop feeds it int32.
    m = loop(body([node('Neg', ['x_in'], ['x_out'])], [vi('x_out', TP.FLOAT, [2])], x_in=vi('x_in', TP.FLOAT, [2])),
             x_type=TP.INT32)
    b.write('bad_ctl_loop_body_input_type', m, [m3, ('x', np.ones(2, np.int32))], [INVALID, SHAPE], 'int32')

    # Scan and SequenceMap
    sb = h.make_graph([node('Add', ['a', 'b'], ['o'])], 'sb', [vi('a', TP.FLOAT, [2]), vi('b', TP.FLOAT, [2])],
                      [vi('o', TP.FLOAT, [2])])
    for name, (da, db) in (('bad_ctl_scan_lengths', ([3, 2], [4, 2])),
                           ('bad_ctl_scan_lengths_sym', (['n', 2], ['m', 2]))):
        m = graph_model([node('Scan', ['A', 'B'], ['O'], body=sb, num_scan_inputs=2)],
                        [vi('A', TP.FLOAT, da), vi('B', TP.FLOAT, db)], [vi('O', TP.FLOAT)])
        b.write(name, m, [('A', f(3, 2)), ('B', f(4, 2))], SHAPE, 'scan input 1 has 4 steps, expected 3')
    m = graph_model([node('Scan', ['A', 'B'], ['O'], body=sb, num_scan_inputs=3)],
                    [vi('A', TP.FLOAT, [3, 2]), vi('B', TP.FLOAT, [3, 2])], [vi('O', TP.FLOAT)])
    b.write('bad_ctl_scan_num_inputs', m, [('A', f(3, 2)), ('B', f(3, 2))], INVALID, 'num_scan_inputs is 3')
    mb = h.make_graph([node('Add', ['a', 'b'], ['c'])], 'mb', [vi('a', TP.FLOAT), vi('b', TP.FLOAT)],
                      [vi('c', TP.FLOAT)])
    m = graph_model([node('SequenceConstruct', ['x', 'x'], ['s1']), node('SequenceConstruct', ['x'], ['s2']),
                     node('SequenceMap', ['s1', 's2'], ['o'], body=mb), node('SequenceLength', ['o'], ['n'])],
                    [vi('x', TP.FLOAT, [2])], [vi('n', TP.INT64, [])])
    b.write('bad_ctl_seqmap_lengths', m, [('x', two)], SHAPE, 'input 1 has 1 elements, expected 2')


def _varint(v):
    out = bytearray()
    while True:
        byte, v = v & 0x7f, v >> 7
        out.append(byte | (0x80 if v else 0))
        if not v:
            return bytes(out)


def _field(number, payload):
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _deep_model(levels):
    """A model of If nodes nested `levels` deep in their then_branch, written as protobuf wire
    bytes: Python's protobuf refuses to build it (it nests too deep), which is the point."""
    leaf = h.make_graph([h.make_node('Identity', ['x'], ['o'])], 'leaf', [], [vi('o', TP.FLOAT)]).SerializeToString()
    out = vi('o', TP.FLOAT).SerializeToString()
    graph_type = _varint(20 << 3) + _varint(onnx.AttributeProto.GRAPH)

    def if_node(then_graph):
        then_attr = _field(1, b'then_branch') + _field(6, then_graph) + graph_type
        else_attr = _field(1, b'else_branch') + _field(6, leaf) + graph_type
        return _field(1, b'c') + _field(2, b'o') + _field(4, b'If') + _field(5, then_attr) + _field(5, else_attr)

    g = leaf
    for _ in range(levels - 1):
        g = _field(1, if_node(g)) + _field(2, b'b') + _field(12, out)
    top = h.make_graph([], 'g', [vi('c', TP.BOOL, []), vi('x', TP.FLOAT, [2])], [vi('o', TP.FLOAT)]).SerializeToString()
    ir_version = _varint(1 << 3) + _varint(8)
    opset = _field(8, _varint(2 << 3) + _varint(17))
    return ir_version + opset + _field(7, _field(1, if_node(g)) + top)


def loader_family(b):
    neg = graph_model([h.make_node('Neg', ['x'], ['y'])], [vi('x', TP.FLOAT, [2, 3])], [vi('y', TP.FLOAT, [2, 3])])
    good_x = np.ones((2, 3), np.float32)
    b.write('bad_ld_garbage', b'not a model at all', [], INVALID, 'not a valid ONNX ModelProto')
    raw = neg.SerializeToString()
    b.write('bad_ld_truncated', raw[:len(raw) // 2], [], INVALID, 'not a valid ONNX ModelProto')
    # Far past the loader's nesting limit, which keeps protobuf-c's unbounded recursion off the stack.
    b.write('bad_ld_deep_nesting', _deep_model(1000), [], INVALID, 'nests deeper than')

    def with_init(t):
        return graph_model([h.make_node('Add', ['x', 'w'], ['y'])], [vi('x', TP.FLOAT, [2, 3])],
                           [vi('y', TP.FLOAT, [2, 3])], [t])

    t = nh.from_array(good_x, 'w')
    t.raw_data = t.raw_data[:10]
    b.write('bad_ld_short_raw_data', with_init(t), [('x', good_x)], INVALID, 'raw_data has 10 bytes, expected 24')
    t = nh.from_array(good_x, 'w')
    del t.dims[:]
    t.dims.extend([2**40, 2**40])
    b.write('bad_ld_huge_dims', with_init(t), [('x', good_x)], INVALID, 'overflows int64')
    t = nh.from_array(good_x, 'w')
    del t.dims[:]
    t.dims.extend([-2, 3])
    b.write('bad_ld_negative_dim', with_init(t), [('x', good_x)], INVALID, 'negative dim -2')
    for name, location, status, message in (
            ('bad_ld_external_escape', '../../../../etc/passwd', INVALID, "contains '..'"),
            ('bad_ld_external_absolute', '/etc/passwd', INVALID, 'is an absolute path'),
            ('bad_ld_external_missing', 'missing.bin', IO, 'cannot find external data file')):
        t = onnx.TensorProto(name='w', data_type=TP.FLOAT, dims=[2, 3], data_location=TP.EXTERNAL)
        t.external_data.add(key='location', value=location)
        b.write(name, with_init(t), [('x', good_x)], status, message)
    t = onnx.TensorProto(name='w', data_type=TP.FLOAT, dims=[2, 3], data_location=TP.EXTERNAL)
    t.external_data.add(key='location', value='w.bin')
    t.external_data.add(key='offset', value='16')
    b.write('bad_ld_external_short', with_init(t), [('x', good_x)], INVALID, "which has only 24 bytes",
            files={'w.bin': good_x.tobytes()})

    b.write('bad_ld_dangling_input', graph_model([h.make_node('Neg', ['nothere'], ['y'])], [vi('x', TP.FLOAT, [2])],
                                                 [vi('y', TP.FLOAT, [2])]),
            [('x', np.ones(2, np.float32))], INVALID, "'nothere' is not defined")
    b.write('bad_ld_cycle', graph_model([h.make_node('Neg', ['b'], ['a']), h.make_node('Neg', ['a'], ['b'])],
                                        [vi('x', TP.FLOAT, [2])], [vi('b', TP.FLOAT, [2])]),
            [('x', np.ones(2, np.float32))], INVALID, 'has a cycle')
    b.write('bad_ld_assigned_twice', graph_model([h.make_node('Neg', ['x'], ['y']), h.make_node('Abs', ['x'], ['y'])],
                                                 [vi('x', TP.FLOAT, [2])], [vi('y', TP.FLOAT, [2])]),
            [('x', np.ones(2, np.float32))], INVALID, 'assigned twice')
    # The graph declares its output float, the node makes int32.
    b.write('bad_ld_output_type', graph_model([h.make_node('Cast', ['x'], ['y'], to=TP.INT32)],
                                              [vi('x', TP.FLOAT, [2])],
                                              [vi('y', TP.FLOAT, [2])]),
            [('x', np.ones(2, np.float32))], [INVALID, SHAPE], 'int32')
    m = graph_model([h.make_node('Neg', ['x'], ['y'], domain='com.nowhere')], [vi('x', TP.FLOAT, [2])],
                    [vi('y', TP.FLOAT, [2])])
    m.opset_import.append(h.make_opsetid('com.nowhere', 1))
    b.write('bad_ld_unknown_domain', m, [('x', np.ones(2, np.float32))], UNSUPPORTED, 'unknown op com.nowhere.Neg')

    # Inputs given at run time that do not fit the model, or do not parse
    b.write('bad_in_dtype', neg, [('x', np.ones((2, 3), np.int32))], SHAPE, 'got tensor(int32)[2,3]')
    b.write('bad_in_shape', neg, [('x', np.ones((3, 2), np.float32))], SHAPE, 'got tensor(float)[3,2]')
    b.write('bad_in_rank', neg, [('x', np.ones(6, np.float32))], SHAPE, 'got tensor(float)[6]')
    sym = graph_model([h.make_node('Neg', ['x'], ['y'])], [vi('x', TP.FLOAT, ['N', 3])], [vi('y', TP.FLOAT, ['N', 3])])
    b.write('bad_in_sym_fixed_dim', sym, [('x', np.ones((2, 4), np.float32))], SHAPE, 'got tensor(float)[2,4]')
    b.write('bad_in_garbage_pb', neg, [('x', b'\xff\xff\xff')], INVALID, 'not a valid TensorProto')
    t = nh.from_array(good_x, 'x')
    t.raw_data = t.raw_data[:7]
    b.write('bad_in_short_raw_data', neg, [('x', t.SerializeToString())], INVALID, 'raw_data has 7 bytes')


# ---- string family (StringNormalizer, RegexFullMatch, TfIdfVectorizer, ImageDecoder) ----------------------------


def _node_test_image(name):
    """The encoded image bytes of one of onnx's ImageDecoder node tests (onnx builds its node tests
    in memory from its case scripts)."""
    from onnx.backend.test.loader import load_node_model_tests
    case = next(c for c in load_node_model_tests() if c.name == name)
    return np.asarray(case.data_sets[0][0][0])


def string_family(b):
    def S(*v):  # noqa: N802
        return np.array(v, dtype=object)

    words = S('a', 'B')
    for name, pattern in (('unbalanced', '(abc'), ('backref', r'(a)\1'), ('lookahead', '(?=a)a'),
                          ('bad_class', '[z-a]')):
        b.node(f'bad_str_regex_{name}', 'RegexFullMatch', [words], INVALID, 'not a valid RE2 regex',
               attrs={'pattern': pattern})
    b.node('bad_str_regex_no_pattern', 'RegexFullMatch', [words], INVALID, "'pattern' is missing")
    b.node('bad_str_norm_action', 'StringNormalizer', [words], INVALID, "case_change_action is 'TITLE'",
           attrs={'case_change_action': 'TITLE'})
    b.node('bad_str_norm_rank3', 'StringNormalizer', [words.reshape(1, 1, 2)], SHAPE, 'expected [C] or [1, C]')
    b.node('bad_str_norm_batch2', 'StringNormalizer', [S('a', 'b', 'c', 'd').reshape(2, 2)], SHAPE, 'has shape [2,2], expected [C] or [1, C]')
    b.node('bad_str_norm_batch2_sym', 'StringNormalizer', [S('a', 'b', 'c', 'd').reshape(2, 2)], SHAPE,
           'expected [C] or [1, C]', sym=True)
    b.node('bad_str_norm_utf8', 'StringNormalizer', [np.array([b'ok', b'\xff\xfe'], dtype=object)], RUNTIME,
           'element 1 is not valid UTF-8', attrs={'case_change_action': 'UPPER'})
    b.node('bad_str_concat_type', 'StringConcat', [words, np.ones(2, np.int64)], SHAPE, 'expected string', opset=20)
    tf = dict(mode='TF', min_gram_length=1, max_gram_length=2, max_skip_count=0, ngram_counts=[0, 2],
              ngram_indexes=[0, 1, 2], pool_int64s=[1, 2, 1, 2])
    ints = np.array([1, 2, 3], np.int64)
    b.node('bad_str_tfidf_mode', 'TfIdfVectorizer', [ints], INVALID, "mode is 'BM25'", attrs=dict(tf, mode='BM25'))
    b.node('bad_str_tfidf_short_indexes', 'TfIdfVectorizer', [ints], INVALID, 'ngram_indexes only 2 entries',
           attrs=dict(tf, ngram_indexes=[0, 1]))
    b.node('bad_str_tfidf_neg_index', 'TfIdfVectorizer', [ints], INVALID, 'ngram_indexes[1] = -1',
           attrs=dict(tf, ngram_indexes=[0, -1, 2]))
    b.node('bad_str_tfidf_short_weights', 'TfIdfVectorizer', [ints], INVALID, 'weights has 2 entries',
           attrs=dict(tf, mode='TFIDF', weights=[1.0, 2.0]))
    b.node('bad_str_tfidf_counts', 'TfIdfVectorizer', [ints], INVALID, 'not an increasing position',
           attrs=dict(tf, ngram_counts=[0, 9]))
    b.node('bad_str_tfidf_gram_range', 'TfIdfVectorizer', [ints], INVALID, 'expected 1 <= min <= max',
           attrs=dict(tf, min_gram_length=2, max_gram_length=1))
    b.node('bad_str_tfidf_pool_type', 'TfIdfVectorizer', [ints], SHAPE, 'expected string with pool_strings',
           attrs={**{k: v for k, v in tf.items() if k != 'pool_int64s'}, 'pool_strings': ['a', 'b', 'a', 'b']})
    b.node('bad_str_tfidf_rank3', 'TfIdfVectorizer', [ints.reshape(1, 1, 3)], SHAPE, 'expected [C] or [B, C]',
           attrs=tf)

    # ImageDecoder: damaged bytes are refused with the codec's reason, never a crash or a leak
    images = {'jpeg': 'test_image_decoder_decode_jpeg_rgb', 'png': 'test_image_decoder_decode_png_rgb',
              'webp': 'test_image_decoder_decode_webp_rgb', 'tiff': 'test_image_decoder_decode_tiff_rgb',
              'jp2': 'test_image_decoder_decode_jpeg2k_rgb', 'bmp': 'test_image_decoder_decode_bmp_rgb',
              'pnm': 'test_image_decoder_decode_pnm_rgb'}
    label = {'jpeg': 'JPEG', 'png': 'PNG', 'webp': 'WebP', 'tiff': 'TIFF', 'jp2': 'JPEG 2000', 'bmp': 'BMP',
             'pnm': 'PNM'}
    for fmt, test in images.items():
        data = _node_test_image(test)
        b.node(f'bad_str_image_{fmt}_truncated', 'ImageDecoder', [data[:len(data) * 2 // 3]], RUNTIME,
               f'cannot decode the {label[fmt]} image', opset=20)
        b.node(f'bad_str_image_{fmt}_header_only', 'ImageDecoder', [data[:20]], RUNTIME,
               f'cannot decode the {label[fmt]} image', opset=20)
    jpeg = _node_test_image(images['jpeg']).copy()
    jpeg[200:600] = 0xFF  # the entropy-coded data becomes a run of fill bytes
    b.node('bad_str_image_jpeg_corrupt', 'ImageDecoder', [jpeg], RUNTIME, 'cannot decode the JPEG image', opset=20)
    png = _node_test_image(images['png']).copy()
    png[40] ^= 0x55  # inside the IHDR/IDAT: a CRC or zlib error
    b.node('bad_str_image_png_corrupt', 'ImageDecoder', [png], RUNTIME, 'cannot decode the PNG image', opset=20)
    for name, data, msg in (('pbm_digit', b'P1 3 1\n0 2 1\n', 'not 0 or 1'),
                            ('pgm_above_max', b'P2 2 1 100\n7 101\n', 'above maxval 100'),
                            ('pgm_truncated_plain', b'P2 4 4 100\n7 1\n', 'the data ends early'),
                            ('pbm_raw_truncated', b'P4 9 4\n\x00\x00\x00', 'the data ends early'),
                            ('ppm16_truncated', b'P6 1 1 1000\n\x00\x01\x02', 'the data ends early')):
        b.node(f'bad_str_image_{name}', 'ImageDecoder', [np.frombuffer(data, np.uint8)], RUNTIME, msg, opset=20)
    b.node('bad_str_image_unknown', 'ImageDecoder', [np.arange(64, dtype=np.uint8)], RUNTIME,
           'not an image of a known format', opset=20)
    b.node('bad_str_image_empty', 'ImageDecoder', [np.zeros(0, np.uint8)], RUNTIME, 'the encoded image is empty',
           opset=20)
    b.node('bad_str_image_pixel_format', 'ImageDecoder', [_node_test_image(images['png'])], INVALID,
           "pixel_format is 'RGBA'", attrs={'pixel_format': 'RGBA'}, opset=20)
    # a 1 x 1 PNG header that claims 100000 x 100000 pixels: refused before anything is allocated
    png = bytes(_node_test_image(images['png']))
    ihdr = png[12:16] + (100000).to_bytes(4, 'big') + (100000).to_bytes(4, 'big') + png[24:29]
    import zlib
    big = png[:8] + png[8:12] + ihdr + zlib.crc32(ihdr).to_bytes(4, 'big') + png[33:]
    b.node('bad_str_image_png_huge', 'ImageDecoder', [np.frombuffer(big, np.uint8)], RUNTIME,
           'larger than the limit', opset=20)


# ---- end of the string family ------------------------------------------------------------------------------------


def omitted_required_family(b):
    """Required inputs given as empty names (found by fuzzing: NULL types reached kernels)."""
    b.node('bad_layernorm_no_x', 'LayerNormalization', [None, f(4)], 'ONYX_ERR_INVALID_MODEL', 'input 0')
    b.node('bad_layernorm_no_scale', 'LayerNormalization', [f(2, 4), None], 'ONYX_ERR_INVALID_MODEL', 'input 1')
    b.node('bad_rmsnorm_no_scale', 'RMSNormalization', [f(2, 4), None], 'ONYX_ERR_INVALID_MODEL', 'input 1',
           opset=23)
    b.node('bad_conv_no_w', 'Conv', [f(1, 2, 5, 5), None], ['ONYX_ERR_INVALID_MODEL', 'ONYX_ERR_SHAPE'], '')
    b.node('bad_convtranspose_no_w', 'ConvTranspose', [f(1, 2, 5, 5), None],
           ['ONYX_ERR_INVALID_MODEL', 'ONYX_ERR_SHAPE'], '')
    # LinearAttention read key's rank after skipping the omitted input (segfault at prepare).
    la = {'q_num_heads': 2, 'kv_num_heads': 2, 'update_rule': 'linear'}
    b.node('bad_linatt_no_key', 'LinearAttention', [f(1, 3, 8), None, f(1, 3, 8)], INVALID,
           'input 1 (key) is required but omitted', attrs=la, opset=27, n_out=2)
    b.node('bad_linatt_no_value', 'LinearAttention', [f(1, 3, 8), f(1, 3, 8), None], INVALID,
           'input 2 (value) is required but omitted', attrs=la, opset=27, n_out=2)
    b.node('bad_linatt_no_query', 'LinearAttention', [None, f(1, 3, 8), f(1, 3, 8)], INVALID,
           'input 0 (query) is required but omitted', attrs=la, opset=27, n_out=2)
    # A pad of INT32_MAX made oneDNN 2.6 use freed memory while it built the primitive (fuzz_run).
    b.node('bad_conv_pad_int32_max', 'Conv', [f(2, 4, 6, 6), f(4, 1, 3, 3), f(4)], UNSUPPORTED, 'below 2^31',
           attrs={'group': 4, 'kernel_shape': [3, 3], 'pads': [0, 2147483647, 0, 0]}, consts=(1, 2), opset=6)
    # A pad of 2^20 kept oneDNN 2.6 planning the primitive for 16 s (fuzz_run).
    b.node('bad_conv_pad_huge', 'Conv', [f(1, 1, 5, 5), f(1, 1, 3, 3)], UNSUPPORTED, 'pads up to 65536',
           attrs={'kernel_shape': [3, 3], 'pads': [1, 1048576, 1, 1]}, opset=17)
    # A ConvTranspose with kernel_shape 2^63 - 2 over weights of a symbolic kernel dim overflowed
    # its output size in the graph-wide type inference (fuzz_run, UBSan); a dilated kernel past
    # range too.
    for name, op, attrs in (
            ('bad_convtranspose_kernel_huge', 'ConvTranspose', {'kernel_shape': [2 ** 63 - 2]}),
            ('bad_conv_dilated_kernel_huge', 'Conv', {'kernel_shape': [2 ** 39], 'dilations': [2 ** 39]})):
        node = h.make_node(op, ['x', 'w'], ['y'], **attrs)
        model = graph_model([node], [vi('x', TP.FLOAT, [1, 2, 4]), vi('w', TP.FLOAT, [2, 2, 'K'])],
                            [vi('y', TP.FLOAT)], opset=17)
        b.write(name, model, [('x', f(1, 2, 4)), ('w', f(2, 2, 3))], SHAPE, 'W has 3 there')

    # RoiAlign reads only the bilinear samples that land on the map, so a spatial_scale of 1e9
    # runs at once (fuzz_run found it taking minutes); the samples it must read stay bounded, and
    # the largest sampling_ratio it takes (2^20 per bin axis) on a box over the map is refused
    # rather than run for hours
    node = h.make_node('RoiAlign', ['x', 'rois', 'bi'], ['y'], output_height=2, output_width=2,
                       sampling_ratio=2 ** 20)
    model = graph_model([node], [vi('x', TP.FLOAT, [1, 1, 10, 10]), vi('rois', TP.FLOAT, [1, 4]),
                                 vi('bi', TP.INT64, [1])], [vi('y', TP.FLOAT)], opset=16)
    b.write('bad_roialign_sampling_huge', model,
            [('x', f(1, 1, 10, 10)), ('rois', np.array([[0, 0, 9, 9]], np.float32)), ('bi', i64(0))],
            UNSUPPORTED, 'bilinear samples')


def rewrite_family(b):
    """Malformed nodes inside the patterns the graph rewrites take (core/rules/): the rewrite
    leaves them to their kernels, which refuse them with their own errors."""
    n = h.make_node
    # a patch conv whose kernel_shape has one entry for two spatial dims
    nodes = [n('Conv', ['x', 'w'], ['c'], kernel_shape=[4], strides=[4, 4]),
             n('Reshape', ['c', 'flat'], ['cf']), n('Transpose', ['cf'], ['y'], perm=[0, 2, 1])]
    b.write('bad_rw_patch_kernel_shape_short',
            graph_model(nodes, [vi('x', TP.FLOAT, [1, 3, 8, 8])], [vi('y', TP.FLOAT, None)],
                        [nh.from_array(f(2, 3, 4, 4), 'w'), nh.from_array(i64(1, 2, 4), 'flat')]),
            [('x', f(1, 3, 8, 8))], [INVALID, SHAPE], 'kernel_shape')
    # a sequence-first Transpose with no permutation for perm, before a packed projection
    nodes = [n('Transpose', ['x'], ['t'], perm=[0, 0, 2]), n('MatMul', ['t', 'w'], ['m']),
             n('Add', ['m', 'bias'], ['a']), n('Gather', ['a', 'i'], ['y'], axis=0)]
    b.write('bad_rw_sink_transpose_badperm',
            graph_model(nodes, [vi('x', TP.FLOAT, [2, 3, 4])], [vi('y', TP.FLOAT, None)],
                        [nh.from_array(f(4, 6), 'w'), nh.from_array(f(6), 'bias'),
                         nh.from_array(np.array(0, np.int64), 'i')]),
            [('x', f(2, 3, 4))], INVALID, 'no permutation')


def main(argv):
    if len(argv) != 2:
        sys.stderr.write('usage: make_bad_models.py OUT\n')
        return 2
    b = BadSuite(os.path.join(argv[1], 'bad'))
    # The op families' own must-refuse cases live beside their generated cases.
    import gen_conv
    import gen_norm
    import gen_pool
    import gen_rnn_quant
    for family in (shape_family, planned_shapes_family, elementwise_family, control_family,
                   loader_family, string_family, omitted_required_family, gen_conv.bad_cases,
                   gen_norm.bad_cases, gen_rnn_quant.bad, gen_pool.bad, rewrite_family):
        family(b)
    b.save_manifest()
    print(f'make_bad_models: {len(b.entries)} models in {b.root}')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
