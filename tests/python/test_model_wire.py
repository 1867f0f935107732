"""onyx/_model_wire.py, which reads and edits a model's protobuf bytes without the onnx package (for
feeding initializers, e.g. LoRA parameters): checked against onnx's own parse of the same bytes."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onyx import _model_wire

F = TensorProto.FLOAT


def model(listed_inputs, initializers, metadata=True):
    """A graph y = sum of its inputs and initializers; `listed_inputs` are the graph inputs (some
    may be initializers' names too, as before IR 4)."""
    names = sorted(set(listed_inputs) | set(initializers))
    g = helper.make_graph([helper.make_node('Sum', names, ['y'])], 'g',
                          [helper.make_tensor_value_info(n, F, [2]) for n in listed_inputs],
                          [helper.make_tensor_value_info('y', F, [2])],
                          [numpy_helper.from_array(np.full(2, i + 1, np.float32), n)
                           for i, n in enumerate(initializers)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)], doc_string='after the graph')
    if metadata:
        helper.set_model_props(m, {'k': 'v' * 300})   # fields after the graph, lengths over 127
    return m


def test_overridable_initializers_match_onnx():
    cases = [(['x'], []), (['x'], ['w']), (['x', 'a', 'b'], ['a', 'b', 'w']), (['a'], ['a']),
             (['x', 'é'], ['é'])]
    for inputs, inits in cases:
        m = model(inputs, inits)
        want = {t.name for t in m.graph.initializer} & {i.name for i in m.graph.input}
        assert _model_wire.overridable_initializers(m.SerializeToString()) == want


def test_without_initializers_is_the_model_less_those():
    m = model(['x', 'a', 'b'], ['a', 'w', 'b'])
    data = _model_wire.without_initializers(m.SerializeToString(), {'a', 'b'})
    got = onnx.load_model_from_string(data)
    want = onnx.ModelProto()
    want.CopyFrom(m)
    del want.graph.initializer[:]
    want.graph.initializer.extend([t for t in m.graph.initializer if t.name not in ('a', 'b')])
    assert got == want
    onnx.checker.check_model(got)
    assert _model_wire.overridable_initializers(data) == frozenset()
    assert _model_wire.without_initializers(m.SerializeToString(), set()) == m.SerializeToString()


def test_a_large_graph_length_is_reencoded():
    """A graph over 2 MiB (a four-byte length varint) shrinking to under 128 bytes (one byte)."""
    m = model(['x', 'big'], [])
    m.graph.initializer.append(numpy_helper.from_array(np.zeros(600_000, np.float32), 'big'))
    data = _model_wire.without_initializers(m.SerializeToString(), {'big'})
    got = onnx.load_model_from_string(data)
    assert [t.name for t in got.graph.initializer] == [] and len(data) < 1000
    assert got.metadata_props[0].value == 'v' * 300


def test_malformed_bytes_raise_wire_error():
    good = model(['x', 'a'], ['a']).SerializeToString()
    for bad in (good[:len(good) // 2], b'\x3a\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff', b'\x3b\x00',
                b'', b'\x0a\x05abc'):
        with pytest.raises(_model_wire.WireError):
            _model_wire.overridable_initializers(bad)
