"""The fast path of InferenceSession.run (backend/python/onyx/_call.py, onyx_rep_run_export):
the same results as the general path, writable outputs, large outputs adopted, ZipMap rows, and
what falls back (other dtypes, strings, unknown names) keeps the general path's behaviour."""
import threading

import numpy as np
import pytest
from onnx import TensorProto, helper

import onyx
import onyx.ort as ort


def _session(nodes, inputs, outputs, opsets=(('', 17),)):
    graph = helper.make_graph(nodes, 'g', inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    model.ir_version = 8
    return ort.InferenceSession(model.SerializeToString())


def _add_session():
    x = helper.make_tensor_value_info('x', TensorProto.FLOAT, ['n', 4])
    y = helper.make_tensor_value_info('y', TensorProto.FLOAT, ['n', 4])
    z = helper.make_tensor_value_info('z', TensorProto.FLOAT, ['n', 4])
    return _session([helper.make_node('Add', ['x', 'y'], ['z']),
                     helper.make_node('Mul', ['x', 'y'], ['w'])], [x, y],
                    [z, helper.make_tensor_value_info('w', TensorProto.FLOAT, ['n', 4])])


def test_fast_path_matches_general_path():
    sess = _add_session()
    rng = np.random.default_rng(0)
    for rows in (1, 3, 5000):   # 5000 x 4 floats: past the copy limit, the output is adopted
        x, y = rng.random((rows, 4), np.float32), rng.random((rows, 4), np.float32)
        fast = sess.run(None, {'x': x, 'y': y})
        general = sess._run(None, {'x': x, 'y': y}, None)
        for a, b in zip(fast, general):
            np.testing.assert_array_equal(a, b)
            assert a.dtype == np.float32 and a.shape == (rows, 4)
            assert a.flags.writeable
        np.testing.assert_allclose(fast[0], x + y, rtol=1e-6)
        fast[0][0, 0] = 42.0   # writable and its own: the next run is unaffected
        assert sess.run(['z'], {'x': x, 'y': y})[0][0, 0] != 42.0


def test_output_names_order_and_errors():
    sess = _add_session()
    x = np.ones((2, 4), np.float32)
    w, z = sess.run(['w', 'z'], {'x': x, 'y': x})
    np.testing.assert_array_equal(w, x * x)
    np.testing.assert_array_equal(z, x + x)
    with pytest.raises(onyx.InvalidArgument, match='Invalid output name'):
        sess.run(['nope'], {'x': x, 'y': x})
    with pytest.raises(ValueError, match='Required inputs'):
        sess.run(None, {'x': x})
    with pytest.raises(onyx.InvalidArgument):   # float64 is no float input: refused, never cast
        sess.run(None, {'x': x.astype(np.float64), 'y': x})
    with pytest.raises(onyx.OnyxError):   # a shape the graph cannot take: the library's error
        sess.run(None, {'x': np.ones((2, 3), np.float32), 'y': x})
    # non-contiguous arrays take the general path and give the same result
    big = np.ones((2, 8), np.float32)
    np.testing.assert_array_equal(sess.run(['z'], {'x': big[:, ::2], 'y': x})[0], x + x)


def test_zipmap_rows_and_string_keys():
    for keys, attr in (([0, 1, 2], 'classlabels_int64s'), (['a', 'b', 'c'], 'classlabels_strings')):
        kind = TensorProto.INT64 if isinstance(keys[0], int) else TensorProto.STRING
        x = helper.make_tensor_value_info('p', TensorProto.FLOAT, ['n', 3])
        out = helper.make_value_info('z', helper.make_sequence_type_proto(
            helper.make_map_type_proto(kind, helper.make_tensor_type_proto(TensorProto.FLOAT, []))))
        sess = _session([helper.make_node('ZipMap', ['p'], ['z'], domain='ai.onnx.ml', **{attr: keys})],
                        [x], [out], opsets=(('', 17), ('ai.onnx.ml', 3)))
        p = np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]], np.float32)
        rows, = sess.run(None, {'p': p})
        assert [rows] == sess._run(None, {'p': p}, None)
        assert list(rows[0]) == keys
        assert rows[1][keys[0]] == pytest.approx(0.5)
        batch = np.random.default_rng(0).random((50, 3), np.float32)   # many rows: read in bulk
        many, = sess.run(None, {'p': batch})
        assert [many] == sess._run(None, {'p': batch}, None)
        assert many[49][keys[2]] == float(batch[49, 2])


def _zipmap_session(keys, extra_output=False):
    x = helper.make_tensor_value_info('p', TensorProto.FLOAT, ['n', len(keys)])
    out = helper.make_value_info('z', helper.make_sequence_type_proto(
        helper.make_map_type_proto(TensorProto.INT64, helper.make_tensor_type_proto(TensorProto.FLOAT, []))))
    nodes = [helper.make_node('ZipMap', ['p'], ['z'], domain='ai.onnx.ml', classlabels_int64s=keys)]
    outputs = [out]
    if extra_output:
        nodes.append(helper.make_node('Identity', ['p'], ['q']))
        outputs.append(helper.make_tensor_value_info('q', TensorProto.FLOAT, ['n', len(keys)]))
    return _session(nodes, [x], outputs, opsets=(('', 17), ('ai.onnx.ml', 3)))


def test_zipmap_rows_key_sets():
    """ZipMap's rows come back as one key set and a matrix of values (ONYX_EXPORT_MAP_ROWS): every
    row and key right for one row, none, many, negative and many keys, read by either reader."""
    rng = np.random.default_rng(1)
    for keys in ([5], [-3, 0, 7], list(range(300))):
        sess = _zipmap_session(keys)
        for rows in (1, 0, 7):
            p = rng.random((rows, len(keys)), np.float32)
            out, = sess.run(None, {'p': p})
            assert out == [dict(zip(keys, row)) for row in p.tolist()]
            assert [out] == sess._run(None, {'p': p}, None)
    sess = _zipmap_session([1, 2], extra_output=True)   # one output of two asked: the general reader
    p = rng.random((4, 2), np.float32)
    out, = sess.run(['z'], {'p': p})
    assert out == [dict(zip([1, 2], row)) for row in p.tolist()]
    q, out = sess.run(['q', 'z'], {'p': p})
    np.testing.assert_array_equal(q, p)
    assert out == [dict(zip([1, 2], row)) for row in p.tolist()]


def test_string_output_falls_back():
    x = helper.make_tensor_value_info('x', TensorProto.STRING, ['n'])
    y = helper.make_tensor_value_info('y', TensorProto.STRING, ['n'])
    sess = _session([helper.make_node('Identity', ['x'], ['y'])], [x], [y])
    out, = sess.run(None, {'x': np.array(['ab', 'c'], dtype=object)})
    assert out.tolist() == ['ab', 'c']


def test_concurrent_runs_share_nothing():
    sess = _add_session()
    errors = []

    def work(seed):
        rng = np.random.default_rng(seed)
        try:
            for _ in range(200):
                rows = int(rng.integers(1, 50))
                x, y = rng.random((rows, 4), np.float32), rng.random((rows, 4), np.float32)
                z, w = sess.run(None, {'x': x, 'y': y})
                np.testing.assert_allclose(z, x + y, rtol=1e-6)
                np.testing.assert_allclose(w, x * y, rtol=1e-6)
        except Exception as e:   # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


@pytest.mark.parametrize('to, name', [(TensorProto.BFLOAT16, 'bfloat16'), (TensorProto.FLOAT8E4M3FN, 'float8_e4m3fn'),
                                      (TensorProto.FLOAT4E2M1, 'float4_e2m1fn'), (TensorProto.INT4, 'int4'),
                                      (TensorProto.UINT2, 'uint2')])
def test_ml_dtypes_outputs(to, name):
    """Outputs of ml_dtypes' types (sub-byte ones packed): the run copies them and frees its
    values, so the reader must decode the copy (it used to read the freed outputs and crash)."""
    x = helper.make_tensor_value_info('x', TensorProto.FLOAT, ['n'])
    y = helper.make_tensor_value_info('y', to, ['n'])
    graph = helper.make_graph([helper.make_node('Cast', ['x'], ['y'], to=to)], 'g', [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 25)])
    model.ir_version = 12
    data = model.SerializeToString()
    sess, session = ort.InferenceSession(data), onyx.Session(data)
    for n in (0, 3, 6):
        feed = {'x': np.arange(n, dtype=np.float32) - 1}
        fast, = sess.run(None, feed)
        general, = sess._run(None, feed, None)
        assert fast.dtype == general.dtype and fast.dtype.name == name
        assert fast.shape == (n,) and fast.tobytes() == general.tobytes()
        assert session.run(None, feed)[0].tobytes() == fast.tobytes()
    assert fast.astype(np.float32).tolist()[1:4] == [0.0, 1.0, 2.0]


def test_session_run_takes_the_fast_path_with_its_own_semantics():
    """onyx.Session.run and run_all take the same one-call path (inputs by name or in order);
    what that path does not take keeps Session's own behaviour and messages."""
    x = helper.make_tensor_value_info('x', TensorProto.FLOAT, ['n', 4])
    y = helper.make_tensor_value_info('y', TensorProto.FLOAT, ['n', 4])
    graph = helper.make_graph([helper.make_node('Add', ['x', 'y'], ['z']), helper.make_node('Mul', ['x', 'y'], ['w'])],
                              'g', [x, y], [helper.make_tensor_value_info('z', TensorProto.FLOAT, ['n', 4]),
                                            helper.make_tensor_value_info('w', TensorProto.FLOAT, ['n', 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid('', 17)])
    model.ir_version = 8
    session = onyx.Session(model.SerializeToString())
    a, b = np.full((2, 4), 2, np.float32), np.full((2, 4), 3, np.float32)
    z, w = session.run(None, {'x': a, 'y': b})
    assert z.tolist() == (a + b).tolist() and w.tolist() == (a * b).tolist() and z.flags.writeable
    assert [o.tolist() for o in session.run(None, [a, b])] == [z.tolist(), w.tolist()]
    assert [o.tolist() for o in session.run_all((a, b))] == [z.tolist(), w.tolist()]
    assert session.run(['w'], {'y': b, 'x': a})[0].tolist() == w.tolist()
    assert session.run([], {'x': a, 'y': b}) == []   # no names: no outputs (not all of them)
    with pytest.raises(ValueError, match='unknown output name'):
        session.run(['nope'], {'x': a, 'y': b})
    with pytest.raises(ValueError, match='unknown input name'):
        session.run(None, {'x': a, 'nope': b})
    with pytest.raises(onyx.OnyxError):   # float64 for a float input: refused, never cast
        session.run(None, {'x': a.astype(np.float64), 'y': b})
    session.close()
    with pytest.raises(ValueError, match='session is closed'):
        session.run(None, {'x': a, 'y': b})
