"""Never silently wrong: a model that asks for what onyx does not implement (an attribute the op
does not have, an opset past the newest onyx knows) is refused by prepare and by is_compatible,
naming what it asked for; and is_compatible says no wherever prepare would refuse."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h

import onyx
import onyx.backend as backend

NEWEST = onnx.defs.onnx_opset_version()  # the pinned onnx's newest opset: onyx's too


def model(node, inputs, outputs, opset=NEWEST, domain_opsets=()):
    graph = h.make_graph([node], 'g', inputs, outputs)
    opsets = [h.make_opsetid('', opset)] + [h.make_opsetid(d, v) for d, v in domain_opsets]
    m = h.make_model(graph, opset_imports=opsets)
    m.ir_version = 10  # any IR that holds these opsets; the checker's IR/opset table is not the point
    return m


def refused(m, *words):
    assert not backend.is_compatible(m)
    with pytest.raises(onyx.OnyxError) as err:
        backend.prepare(m)
    for w in words:
        assert w in str(err.value), f'{w!r} not in {err.value}'


def x_in(name='x', elem=TP.FLOAT, shape=(1, 4, 2, 2)):
    return h.make_tensor_value_info(name, elem, shape)


def test_unknown_attribute_is_refused():
    # Relu has no attributes: an 'alpha' (a LeakyRelu written as Relu) would be ignored
    m = model(h.make_node('Relu', ['x'], ['y'], alpha=0.1), [x_in()], [x_in('y')])
    refused(m, "Relu-14 has no attribute 'alpha'")


def test_attribute_of_a_newer_version_is_refused():
    # SpaceToDepth-13 has no mode; run as 13, mode=CRD would give DCR's answer
    node = h.make_node('SpaceToDepth', ['x'], ['y'], blocksize=2, mode='CRD')
    m = model(node, [x_in()], [x_in('y', shape=(1, 16, 1, 1))], opset=13)
    refused(m, "SpaceToDepth-13 has no attribute 'mode'")


def test_newer_opset_is_refused():
    m = model(h.make_node('Relu', ['x'], ['y']), [x_in()], [x_in('y')], opset=NEWEST + 1)
    refused(m, f"opset {NEWEST + 1} of domain 'ai.onnx'", f'newest onyx implements ({NEWEST})')


def test_newer_ml_opset_is_refused():
    node = h.make_node('Binarizer', ['x'], ['y'], domain='ai.onnx.ml', threshold=0.5)
    newest_ml = onnx.defs.C.schema_version_map()['ai.onnx.ml'][1]
    m = model(node, [x_in()], [x_in('y')], domain_opsets=[('ai.onnx.ml', newest_ml + 1)])
    refused(m, f"opset {newest_ml + 1} of domain 'ai.onnx.ml'")


def test_unknown_op_is_refused():
    m = model(h.make_node('NoSuchOp', ['x'], ['y']), [x_in()], [x_in('y')])
    refused(m, 'unknown op NoSuchOp')


@pytest.mark.parametrize('case', ['bitshift_int8_v11', 'mod_float_fmod0_v13', 'celu_half_v12'])
def test_is_compatible_agrees_with_prepare(case):
    """Types and attribute values an op version does not take: before version 28 BitShift takes
    unsigned ints only, Mod's fmod=0 integers only, Celu float only."""
    if case == 'bitshift_int8_v11':
        node = h.make_node('BitShift', ['x', 's'], ['y'], direction='LEFT')
        ins = [x_in('x', TP.INT8, (4,)), x_in('s', TP.INT8, (4,))]
        m = model(node, ins, [x_in('y', TP.INT8, (4,))], opset=11)
    elif case == 'mod_float_fmod0_v13':
        node = h.make_node('Mod', ['a', 'b'], ['y'], fmod=0)
        m = model(node, [x_in('a', shape=(4,)), x_in('b', shape=(4,))], [x_in('y', shape=(4,))],
                  opset=13)
    else:
        node = h.make_node('Celu', ['x'], ['y'])
        m = model(node, [x_in('x', TP.FLOAT16)], [x_in('y', TP.FLOAT16)], opset=12)
    refused(m)


def test_is_compatible_says_yes_to_what_runs():
    m = model(h.make_node('Relu', ['x'], ['y']), [x_in()], [x_in('y')])
    assert backend.is_compatible(m)
    x = np.linspace(-1, 1, 16, dtype=np.float32).reshape(1, 4, 2, 2)
    np.testing.assert_array_equal(backend.prepare(m).run([x])[0], np.maximum(x, 0))


def test_newer_ir_is_refused():
    m = model(h.make_node('Relu', ['x'], ['y']), [x_in()], [x_in('y')])
    m.ir_version = onnx.IR_VERSION + 1  # it may hold fields onyx would drop unread
    refused(m, f'IR version {onnx.IR_VERSION + 1} is newer than the newest onyx reads '
               f'({onnx.IR_VERSION})')


def test_newer_opset_runs_where_the_user_vouches():
    m = model(h.make_node('Relu', ['x'], ['y']), [x_in()], [x_in('y')], opset=NEWEST + 1)
    so = onyx.SessionOptions()
    so.add_session_config_entry('onyx.allow_newer_opsets', 'ai.onnx.ml, ai.onnx')
    sess = onyx.InferenceSession(m.SerializeToString(), so)
    x = np.linspace(-1, 1, 16, dtype=np.float32).reshape(1, 4, 2, 2)
    np.testing.assert_array_equal(sess.run(None, {'x': x})[0], np.maximum(x, 0))
    # vouching for another domain does not cover the default one
    so = onyx.SessionOptions()
    so.add_session_config_entry('onyx.allow_newer_opsets', 'ai.onnx.ml')
    with pytest.raises(onyx.OnyxError, match=f"opset {NEWEST + 1} of domain 'ai.onnx'"):
        onyx.InferenceSession(m.SerializeToString(), so)


def test_cuda_kernel_ranges_are_versions():
    """The CUDA plugin's kernels serve version ranges that start and end at versions of their op
    (tests/unit/test_registry.c checks the CPU table): the plugin cannot run here, so a range
    claiming a version its kernel does not implement would go unseen. Read from the sources."""
    import collections
    import glob
    import os
    import re
    history = collections.defaultdict(set)
    for s in onnx.defs.get_all_schemas_with_history():
        history[(s.domain, s.name)].add(s.since_version)
    root = os.path.join(os.path.dirname(__file__), '..', '..', 'kernels_cuda')
    entry = re.compile(r'\{\s*"([^"]*)",\s*"(\w+)",\s*(\d+),\s*(\d+),\s*DEVICE_CUDA')
    reduce_entry = re.compile(r'\bRED\("(\w+)",\s*(\d+),')  # reduce.cu: versions 1..hi
    ranges = []
    for path in glob.glob(os.path.join(root, '**', '*.c*'), recursive=True):
        text = open(path, encoding='utf-8').read()
        ranges += [(d, op, int(lo), int(hi)) for d, op, lo, hi in entry.findall(text)]
        ranges += [('', op, 1, int(hi)) for op, hi in reduce_entry.findall(text)]
    assert len(ranges) > 100
    bad = [(op, lo, hi, sorted(history[(d, op)])) for d, op, lo, hi in ranges
           if (d, op) in history and not {lo, hi} <= history[(d, op)]]
    assert not bad, bad
