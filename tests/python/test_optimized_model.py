"""SessionOptions.optimized_model_filepath (onyx_session_options_set_optimized_model): the model onyx
writes is the graph its rewrites made (each rule's case from test_rewrite_rules.py), onyx loads it
back and computes what the original computes, onnxruntime loads the standard-op ones and agrees,
onnx.checker accepts them; initializers go to the external file as onnxruntime's keys ask; what
cannot be written is refused by name, with nothing written."""
import math
import os
import re

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto as TP
from onnx import helper as oh
from onnx import numpy_helper as nh

import onyx.ort as ort
from onyx import _lib
import test_rewrite_rules as rules

ALL, PLAIN = rules.ALL, rules.PLAIN
BASIC = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
EXTERNAL_FILE = 'session.optimized_model_external_initializers_file_name'
EXTERNAL_MIN = 'session.optimized_model_external_initializers_min_size_in_bytes'


def written(model, path, level=ALL, config=None):
    """Creates an onyx session on `model` that writes its optimized model to `path`: the session."""
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    so.optimized_model_filepath = str(path)
    for key, value in (config or {}).items():
        so.add_session_config_entry(key, value)
    return ort.InferenceSession(model, so, providers=['CPUExecutionProvider'])


def onyx_run(path, feed, level=ALL):
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    return ort.InferenceSession(str(path), so, providers=['CPUExecutionProvider']).run(None, feed)


def op_counts(model):
    counts = {}
    for n in model.graph.node:
        key = f'{n.domain}:{n.op_type}' if n.domain else n.op_type
        counts[key] = counts.get(key, 0) + 1
    return counts


def close(got, want, tolerance):
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        if isinstance(tolerance, int):  # 8-bit results: within that many quantization steps
            assert np.abs(g.astype(int) - w.astype(int)).max() <= tolerance
        else:
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64),
                                       rtol=tolerance[0], atol=tolerance[1])


def mlp(opset=13):
    """A standard-op graph: MatMul, Add, Relu, with a symbolic batch dim."""
    rng = np.random.default_rng(3)
    x = oh.make_tensor_value_info('x', TP.FLOAT, ['N', 16])
    y = oh.make_tensor_value_info('y', TP.FLOAT, ['N', 8])
    inits = [nh.from_array(rng.standard_normal((16, 8)).astype(np.float32), 'w'),
             nh.from_array(rng.standard_normal(8).astype(np.float32), 'b'),
             nh.from_array(np.float32([0.5]), 'half')]  # 4 bytes: under any threshold used here
    nodes = [oh.make_node('MatMul', ['x', 'w'], ['m']), oh.make_node('Add', ['m', 'b'], ['a']),
             oh.make_node('Mul', ['a', 'half'], ['h']), oh.make_node('Relu', ['h'], ['y'])]
    m = oh.make_model(oh.make_graph(nodes, 'mlp', [x], [y], inits),
                      opset_imports=[oh.make_opsetid('', opset)])
    m.ir_version = 8
    return m


FEED = {'x': np.random.default_rng(4).standard_normal((3, 16)).astype(np.float32)}


def test_a_standard_op_graph_reads_back_in_onyx_and_onnxruntime(tmp_path):
    model = mlp().SerializeToString()
    path = tmp_path / 'opt.onnx'
    want = written(model, path).run(None, FEED)
    onnx.checker.check_model(str(path), full_check=True)
    out = onnx.load(str(path))
    assert op_counts(out) == {'MatMul': 1, 'Add': 1, 'Mul': 1, 'Relu': 1}
    assert [(o.domain, o.version) for o in out.opset_import] == [('', 13)]
    assert out.graph.input[0].type.tensor_type.shape.dim[0].dim_param == 'N'
    for level in (ALL, PLAIN):
        for g, w in zip(onyx_run(path, FEED, level), want):
            assert np.array_equal(g, w)
    ours = onnxruntime.InferenceSession(str(path), providers=['CPUExecutionProvider']).run(None, FEED)
    theirs = onnxruntime.InferenceSession(model, providers=['CPUExecutionProvider']).run(None, FEED)
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_allclose(ours[0], want[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize('rule', list(rules.CASES))
def test_the_rewritten_graph_is_written_and_computes_the_same(rule, tmp_path):
    m, ys, feed, want_ops, tolerance = rules.CASES[rule]()
    model = m.build(ys)
    path = tmp_path / f'{rule}.onnx'
    want = written(model, path).run(None, feed)
    out = onnx.load(str(path))
    assert op_counts(out) == want_ops          # the graph the rule made, not the one given
    # the same graph with the same plan: the same bits; run as written: within the case's bound
    for g, w in zip(onyx_run(path, feed, ALL), want):
        assert np.array_equal(g, w)
    close(onyx_run(path, feed, PLAIN), want, tolerance)
    ours = [n.op_type for n in out.graph.node if n.domain == 'ai.onyx']
    if ours:
        # onyx's own op (LookupTable, GatherNBits): onnxruntime does not know it
        assert [o.version for o in out.opset_import if o.domain == 'ai.onyx'] == [1]
        with pytest.raises(Exception, match=ours[0]):
            onnxruntime.InferenceSession(str(path), providers=['CPUExecutionProvider'])
        return
    onnx.checker.check_model(out)
    theirs = onnxruntime.InferenceSession(str(path), providers=['CPUExecutionProvider'])
    close(theirs.run(None, feed), want, tolerance)


def test_a_rewrite_needing_a_newer_opset_raises_it(tmp_path):
    m, ys, feed, _, tolerance = rules.gelu_erf()   # Gelu is ai.onnx's from opset 20
    path = tmp_path / 'gelu.onnx'
    want = written(m.build(ys), path).run(None, feed)
    out = onnx.load(str(path))
    assert {o.domain: o.version for o in out.opset_import}[''] == 20
    assert out.ir_version >= 9        # onnx 1.15's IR, the first with opset 20
    onnx.checker.check_model(out)
    close(onyx_run(path, feed), want, tolerance)


@pytest.mark.parametrize('rule', ['patch_embedding', 'rows_before_product', 'float16_as_float',
                                  'common_subexpression'])
def test_a_rewrite_in_an_older_opset_writes_its_ops_at_that_opset(rule, tmp_path):
    # the rules ask for the oldest version with their meaning: an opset-13 model stays at 13
    m, ys, feed, want_ops, tolerance = rules.CASES[rule]()
    path = tmp_path / f'{rule}.onnx'
    want = written(m.build(ys, opset=13), path).run(None, feed)
    out = onnx.load(str(path))
    assert op_counts(out) == want_ops
    assert {o.domain: o.version for o in out.opset_import}[''] == 13
    onnx.checker.check_model(out)
    for g, w in zip(onyx_run(path, feed), want):
        assert np.array_equal(g, w)
    theirs = onnxruntime.InferenceSession(str(path), providers=['CPUExecutionProvider'])
    close(theirs.run(None, feed), want, tolerance)


def test_a_newer_op_is_written_under_its_ai_onyx_name_where_a_raise_would_change_others(tmp_path):
    # Gelu needs opset 20; under it the Split-13 next to it would read as Split-18: the model keeps
    # opset 17 and the Gelu goes as ai.onyx's, which onyx reads as Gelu-20
    m, ys, feed, _, tolerance = rules.gelu_erf()
    halves = m.op('Split', ys[0], m.const(np.array([8, 8], np.int64)), axis=1, outputs=2)
    path = tmp_path / 'gelu_split.onnx'
    want = written(m.build(halves), path).run(None, feed)
    out = onnx.load(str(path))
    assert {o.domain: o.version for o in out.opset_import} == {'': 17, 'com.microsoft': 1,
                                                                'ai.onyx': 1}
    assert op_counts(out) == {'ai.onyx:Gelu': 1, 'Split': 1}
    for g, w in zip(onyx_run(path, feed, ALL), want):
        assert np.array_equal(g, w)
    close(onyx_run(path, feed, PLAIN), want, tolerance)


def test_a_newer_op_without_an_ai_onyx_name_is_refused_where_a_raise_would_change_others(tmp_path):
    # two equal SequenceConstructs: the second becomes an Identity of the first, of a sequence:
    # Identity-25, under whose opset the Add-13 (and the other SequenceLength's Identity-13) would
    # read as a newer version; ai.onyx has no Identity
    m = rules.Model()
    x = m.input('x', TP.FLOAT, [2, 3])
    lengths = [m.op('SequenceLength', m.op('SequenceConstruct', x)) for _ in range(2)]
    y = m.op('Add', *lengths)
    path = tmp_path / 'seq.onnx'
    with pytest.raises(_lib.NotImplemented) as err:
        written(m.build([y], opset=13), path)
    message = str(err.value)
    assert re.search(r'\((Add|Identity)-13\) would not read as that version under opset 25', message)
    assert 'Identity-25' in message, message
    assert 'ai.onyx has no name for' in message, message
    assert not os.listdir(tmp_path)
    # the same model without the rewrites is written as it is
    written(m.build([y], opset=13), path, level=BASIC)
    assert op_counts(onnx.load(str(path)))['SequenceConstruct'] == 2


def test_basic_level_writes_the_graph_as_given(tmp_path):
    m, ys, feed, _, _ = rules.gelu_tanh()
    path = tmp_path / 'plain.onnx'
    want = written(m.build(ys), path, level=BASIC).run(None, feed)
    assert op_counts(onnx.load(str(path))) == m.ops()
    for g, w in zip(onyx_run(path, feed, BASIC), want):
        assert np.array_equal(g, w)


def test_initializers_past_the_threshold_go_to_the_external_file(tmp_path):
    folder = tmp_path / 'out'
    folder.mkdir()
    path = folder / 'opt.onnx'
    want = written(mlp().SerializeToString(), path,
                   config={EXTERNAL_FILE: 'weights.bin', EXTERNAL_MIN: '32'}).run(None, FEED)
    assert sorted(os.listdir(folder)) == ['opt.onnx', 'weights.bin']
    out = onnx.load(str(path), load_external_data=False)
    where = {t.name: t.data_location for t in out.graph.initializer}
    assert where == {'w': TP.EXTERNAL, 'b': TP.EXTERNAL, 'half': TP.DEFAULT}   # 512, 32, 4 bytes
    for t in out.graph.initializer:
        if t.data_location == TP.EXTERNAL:
            entries = {e.key: e.value for e in t.external_data}
            assert entries['location'] == 'weights.bin'
            assert int(entries['offset']) % 64 == 0
    onnx.checker.check_model(str(path), full_check=True)
    for g, w in zip(onyx_run(path, FEED), want):
        assert np.array_equal(g, w)
    theirs = onnxruntime.InferenceSession(str(path), providers=['CPUExecutionProvider']).run(None, FEED)
    np.testing.assert_allclose(theirs[0], want[0], rtol=1e-5, atol=1e-6)


def test_a_model_with_external_data_is_written_again_over_its_own_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = {EXTERNAL_FILE: 'data.bin', EXTERNAL_MIN: '10'}
    want = written(mlp().SerializeToString(), 'first.onnx', config=config).run(None, FEED)
    # the loaded model reads data.bin in place while the new one is written to the same name
    written('first.onnx', 'first.onnx', config=config)
    assert sorted(os.listdir(tmp_path)) == ['data.bin', 'first.onnx']
    for g, w in zip(onyx_run('first.onnx', FEED), want):
        assert np.array_equal(g, w)


def test_default_threshold_is_onnxruntimes_1024_bytes(tmp_path):
    path = tmp_path / 'opt.onnx'
    rng = np.random.default_rng(1)
    big = nh.from_array(rng.standard_normal((16, 16)).astype(np.float32), 'big')      # 1024 bytes
    small = nh.from_array(rng.standard_normal((16, 15)).astype(np.float32), 'small')  # 960 bytes
    x = oh.make_tensor_value_info('x', TP.FLOAT, [2, 16])
    y = oh.make_tensor_value_info('y', TP.FLOAT, [2, 15])
    g = oh.make_graph([oh.make_node('MatMul', ['x', 'big'], ['m']),
                       oh.make_node('MatMul', ['m', 'small'], ['y'])], 'g', [x], [y], [big, small])
    model = oh.make_model(g, opset_imports=[oh.make_opsetid('', 13)])
    written(model.SerializeToString(), path, config={EXTERNAL_FILE: 'w.bin'})
    out = onnx.load(str(path), load_external_data=False)
    assert {t.name: t.data_location for t in out.graph.initializer} == {
        'big': TP.EXTERNAL, 'small': TP.DEFAULT}


def test_subgraphs_are_rewritten_and_written(tmp_path):
    # an If whose branches read the outer x: a GELU pattern in one (rewritten), in the other the
    # same ops with another constant (kept)
    def branch(name, scale):
        d = oh.make_node('Div', ['x', f'{name}_sqrt2'], [f'{name}_d'])
        e = oh.make_node('Erf', [f'{name}_d'], [f'{name}_e'])
        a = oh.make_node('Add', [f'{name}_e', f'{name}_one'], [f'{name}_a'])
        m1 = oh.make_node('Mul', ['x', f'{name}_a'], [f'{name}_m'])
        m2 = oh.make_node('Mul', [f'{name}_m', f'{name}_half'], [f'{name}_y'])
        consts = [nh.from_array(np.float32(v), f'{name}_{k}')
                  for k, v in (('sqrt2', math.sqrt(2)), ('one', 1), ('half', 0.5 * scale))]
        out = oh.make_tensor_value_info(f'{name}_y', TP.FLOAT, [2, 16])
        return oh.make_graph([d, e, a, m1, m2], name, [], [out], consts)
    x = oh.make_tensor_value_info('x', TP.FLOAT, [2, 16])
    c = oh.make_tensor_value_info('c', TP.BOOL, [])
    y = oh.make_tensor_value_info('y', TP.FLOAT, [2, 16])
    node = oh.make_node('If', ['c'], ['y'], then_branch=branch('then', 1.0),
                        else_branch=branch('else', 2.0))
    model = oh.make_model(oh.make_graph([node], 'g', [x, c], [y]),
                          opset_imports=[oh.make_opsetid('', 20)])
    path = tmp_path / 'if.onnx'
    sess = written(model.SerializeToString(), path)
    out = onnx.load(str(path))
    ops = {a.name: [n.op_type for n in a.g.node] for a in out.graph.node[0].attribute}
    assert ops == {'then_branch': ['Gelu'], 'else_branch': ['Div', 'Erf', 'Add', 'Mul', 'Mul']}
    onnx.checker.check_model(out)
    xv = np.random.default_rng(2).standard_normal((2, 16)).astype(np.float32)
    for cond in (True, False):
        feed = {'x': xv, 'c': np.array(cond)}
        want = sess.run(None, feed)
        for g, w in zip(onyx_run(path, feed), want):
            assert np.array_equal(g, w)
        theirs = onnxruntime.InferenceSession(str(path), providers=['CPUExecutionProvider'])
        np.testing.assert_allclose(theirs.run(None, feed)[0], want[0], rtol=1e-5, atol=1e-6)


def test_a_path_that_cannot_be_written_is_refused(tmp_path):
    path = tmp_path / 'no_such_folder' / 'opt.onnx'
    with pytest.raises(_lib.NoSuchFile, match='no_such_folder'):
        written(mlp().SerializeToString(), path)
    assert not os.listdir(tmp_path)


@pytest.mark.parametrize('name', ['/tmp/weights.bin', '../weights.bin', 'a/../../w.bin', 'dir/'])
def test_an_external_file_outside_the_models_folder_is_refused(name, tmp_path):
    with pytest.raises(_lib.InvalidArgument, match='external initializers file'):
        written(mlp().SerializeToString(), tmp_path / 'opt.onnx', config={EXTERNAL_FILE: name})
    assert not os.listdir(tmp_path)


@pytest.mark.parametrize('value', ['-1', 'ten', '1.5'])
def test_a_bad_threshold_is_refused(value, tmp_path):
    with pytest.raises(_lib.InvalidArgument, match=EXTERNAL_MIN):
        written(mlp().SerializeToString(), tmp_path / 'opt.onnx',
                config={EXTERNAL_FILE: 'w.bin', EXTERNAL_MIN: value})
    assert not os.listdir(tmp_path)
