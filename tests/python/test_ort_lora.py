"""LoRA adapters in the onnxruntime-compatible API (issue 35): onnxruntime's adapter file format
(.onnx_adapter) read and written by onyx (onyx/_adapter.py) and checked against onnxruntime's own
reader and writer both ways; AdapterFormat and LoraAdapter; RunOptions.add_active_adapter feeding
the adapter's parameters as onnxruntime binds them (same outputs, same precedence, same refusals);
bad files refused with a message, never a crash."""
import ctypes
import importlib
import os
import subprocess
import sys
import threading
import warnings

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

import onyx
import onyx as ort
from onyx import _adapter

F = TensorProto.FLOAT
ORT_PROVIDERS = ['CPUExecutionProvider']
RNG = np.random.default_rng(35)


def lora_model(n=8, rank_dim='r'):
    """y = x @ W + (x @ A) @ B, A and B initializers that are also inputs (empty by default: the
    base model), as onnxruntime's own LoRA test model."""
    w = numpy_helper.from_array(RNG.standard_normal((n, n)).astype(np.float32), 'W')
    a = numpy_helper.from_array(np.zeros((n, 0), np.float32), 'lora_a')
    b = numpy_helper.from_array(np.zeros((0, n), np.float32), 'lora_b')
    g = helper.make_graph(
        [helper.make_node('MatMul', ['x', 'W'], ['xw']), helper.make_node('MatMul', ['x', 'lora_a'], ['xa']),
         helper.make_node('MatMul', ['xa', 'lora_b'], ['xab']), helper.make_node('Add', ['xw', 'xab'], ['y'])],
        'lora', [helper.make_tensor_value_info('x', F, ['batch', n]),
                 helper.make_tensor_value_info('lora_a', F, [n, rank_dim]),
                 helper.make_tensor_value_info('lora_b', F, [rank_dim, n])],
        [helper.make_tensor_value_info('y', F, ['batch', n])], [w, a, b])
    return helper.make_model(g, opset_imports=[helper.make_opsetid('', 21)])


def sessions(model):
    data = model.SerializeToString()
    return (ort.InferenceSession(data, providers=['CPUExecutionProvider']),
            onnxruntime.InferenceSession(data, providers=ORT_PROVIDERS))


def export(engine, path, params, adapter_version=0, model_version=0):
    fmt = engine.AdapterFormat()
    fmt.set_adapter_version(adapter_version)
    fmt.set_model_version(model_version)
    fmt.set_parameters({k: engine.OrtValue.ortvalue_from_numpy(v) for k, v in params.items()})
    fmt.export_adapter(str(path))
    return str(path)


def loaded(engine, path):
    adapter = engine.LoraAdapter()
    adapter.Load(str(path))
    return adapter


def run_with(engine, session, feed, paths):
    options = engine.RunOptions()
    adapters = [loaded(engine, p) for p in paths]   # onnxruntime's options do not keep them alive
    for a in adapters:
        options.add_active_adapter(a)
    return session.run(None, feed, options)[0]


def lora_params(n=8, rank=2, scale=1.0):
    return {'lora_a': (scale * RNG.standard_normal((n, rank))).astype(np.float32),
            'lora_b': RNG.standard_normal((rank, n)).astype(np.float32)}


# Types of each kind an adapter holds, as numpy makes them (bfloat16 by its ONNX number below).
TYPED = {'f32': np.arange(10, dtype=np.float32).reshape(5, 2), 'i64': np.arange(-5, 5).reshape(2, 5),
         'f16': np.linspace(-1, 1, 6).astype(np.float16).reshape(3, 2), 'u8': np.arange(7, dtype=np.uint8),
         'f64': np.array([[1e300, -2.5]]), 'i8': np.array([-128, 127], np.int8), 'u64': np.array([2 ** 63], np.uint64),
         'empty': np.zeros((0, 3), np.float32)}


# ---- the file format, both ways

def test_onnxruntime_written_file_reads_in_onyx(tmp_path):
    path = export(onnxruntime, tmp_path / 'ort.onnx_adapter', TYPED, adapter_version=7, model_version=-3)
    got = ort.AdapterFormat.read_adapter(path)
    assert (got.get_format_version(), got.get_adapter_version(), got.get_model_version()) == (1, 7, -3)
    params = got.get_parameters()
    assert sorted(params) == sorted(TYPED)
    for name, want in TYPED.items():
        v = params[name]
        assert v.is_tensor() and v.shape() == list(want.shape) and v.numpy().dtype == want.dtype
        assert v.element_type() == onnx.helper.np_dtype_to_tensor_dtype(want.dtype)
        np.testing.assert_array_equal(v.numpy(), want)


def test_onyx_written_file_reads_in_onnxruntime(tmp_path):
    path = export(ort, tmp_path / 'onyx.onnx_adapter', TYPED, adapter_version=-1, model_version=2 ** 31 - 1)
    got = onnxruntime.AdapterFormat.read_adapter(path)
    assert (got.get_format_version(), got.get_adapter_version(), got.get_model_version()) == (1, -1, 2 ** 31 - 1)
    params = got.get_parameters()
    assert sorted(params) == sorted(TYPED)
    for name, want in TYPED.items():
        assert params[name].shape() == list(want.shape)
        np.testing.assert_array_equal(params[name].numpy(), want)
        assert params[name].numpy().dtype == want.dtype


def test_bfloat16_and_float8_parameters_both_ways(tmp_path):
    bits = {16: np.array([0x3f80, 0xc000], np.uint16), 17: np.array([0x38, 0xb8], np.uint8)}
    for engine, reader in ((ort, onnxruntime), (onnxruntime, ort)):
        fmt = engine.AdapterFormat()
        fmt.set_parameters({f't{code}': engine.OrtValue.ortvalue_from_numpy_with_onnx_type(raw, code)
                            for code, raw in bits.items()})
        path = str(tmp_path / f'{engine.__name__}.onnx_adapter')
        fmt.export_adapter(path)
        params = reader.AdapterFormat.read_adapter(path).get_parameters()
        for code, raw in bits.items():
            v = params[f't{code}']
            assert v.element_type() == code   # (onnxruntime's numpy() has no bfloat16: its memory)
            assert ctypes.string_at(v.data_ptr(), raw.nbytes) == raw.tobytes()


def test_default_versions_and_empty_adapter(tmp_path):
    fmt = ort.AdapterFormat()
    assert (fmt.get_format_version(), fmt.get_adapter_version(), fmt.get_model_version(), fmt.get_parameters()) \
        == (1, 0, 0, {})
    fmt.export_adapter(str(tmp_path / 'e'))
    got = onnxruntime.AdapterFormat.read_adapter(str(tmp_path / 'e'))
    assert (got.get_adapter_version(), got.get_model_version(), got.get_parameters()) == (0, 0, {})


def test_c_level_properties(tmp_path):
    fmt = ort.AdapterFormat()
    fmt.adapter_version, fmt.model_version = 4, 5
    fmt.parameters = {'p': ort.OrtValue.ortvalue_from_numpy(np.ones(3, np.float32))}
    assert (fmt.format_version, fmt.get_adapter_version(), fmt.get_model_version()) == (1, 4, 5)
    with pytest.raises(AttributeError):
        fmt.format_version = 2
    copy = ort.AdapterFormat(fmt)   # onnxruntime's wrapper over its C-level object
    assert (copy.adapter_version, sorted(copy.parameters)) == (4, ['p'])


# ---- runs

def test_run_with_adapter_matches_onnxruntime(tmp_path):
    model = lora_model()
    onyx_s, ort_s = sessions(model)
    x = RNG.standard_normal((3, 8)).astype(np.float32)
    base = onyx_s.run(None, {'x': x})[0]
    np.testing.assert_allclose(base, ort_s.run(None, {'x': x})[0], rtol=1e-5, atol=1e-5)
    for writer in (onnxruntime, ort):
        path = export(writer, tmp_path / f'{writer.__name__}.onnx_adapter', lora_params())
        want = run_with(onnxruntime, ort_s, {'x': x}, [path])
        got = run_with(ort, onyx_s, {'x': x}, [path])
        assert not np.allclose(want, base)   # the adapter changes the result
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    # the base model again: the adapter applies to the runs naming it only
    np.testing.assert_array_equal(onyx_s.run(None, {'x': x})[0], base)


def test_adapter_precedence_matches_onnxruntime(tmp_path):
    """Several adapters: the one added first wins; an adapter wins over the feed; adapters that each
    hold part of the parameters combine."""
    onyx_s, ort_s = sessions(lora_model())
    x = RNG.standard_normal((2, 8)).astype(np.float32)
    p1, p2 = lora_params(), lora_params(rank=3)
    one = export(ort, tmp_path / '1', p1)
    two = export(ort, tmp_path / '2', p2)
    only_a = export(ort, tmp_path / 'a', {'lora_a': p2['lora_a']})
    only_b = export(ort, tmp_path / 'b', {'lora_b': p2['lora_b']})
    cases = [({'x': x}, [one, two]), ({'x': x}, [two, one]), ({'x': x}, [only_a, only_b]),
             ({'x': x}, [one, one]), (dict(x=x, **p2), [one]), (dict(x=x, lora_a=p2['lora_a']), [only_b])]
    outs = []
    for feed, paths in cases:
        want = run_with(onnxruntime, ort_s, feed, paths)
        np.testing.assert_allclose(run_with(ort, onyx_s, feed, paths), want, rtol=1e-5, atol=1e-5)
        outs.append(want)
    assert not np.allclose(outs[0], outs[1])   # the order mattered


def test_initializers_fed_directly_match_onnxruntime():
    onyx_s, ort_s = sessions(lora_model())
    assert [a.name for a in onyx_s.get_overridable_initializers()] == \
        [a.name for a in ort_s.get_overridable_initializers()] == ['lora_a', 'lora_b']
    assert [a.type for a in onyx_s.get_overridable_initializers()] == ['tensor(float)'] * 2
    x = RNG.standard_normal((2, 8)).astype(np.float32)
    feed = dict(x=x, **lora_params())
    np.testing.assert_allclose(onyx_s.run(None, feed)[0], ort_s.run(None, feed)[0], rtol=1e-5, atol=1e-5)
    assert sessions(onnx.load_from_string(
        onyx_s._overriding(frozenset(['lora_a']))._model_bytes))[0].get_overridable_initializers()[0].name == 'lora_b'


def test_model_with_external_data_runs_with_adapter(tmp_path):
    model = lora_model(n=64)   # W of 16 KiB goes to the external file
    onnx.save_model(model, str(tmp_path / 'm.onnx'), save_as_external_data=True, location='m.data',
                    size_threshold=1024)
    x = RNG.standard_normal((2, 64)).astype(np.float32)
    path = export(ort, tmp_path / 'p', lora_params(n=64))
    got = run_with(ort, ort.InferenceSession(str(tmp_path / 'm.onnx'), providers=['CPUExecutionProvider']),
                   {'x': x}, [path])
    want = run_with(onnxruntime, onnxruntime.InferenceSession(str(tmp_path / 'm.onnx'), providers=ORT_PROVIDERS),
                    {'x': x}, [path])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


def test_refusals_match_onnxruntime(tmp_path):
    """A parameter named like no input (an output, a plain initializer, nothing), or of the wrong type
    or shape: refused by both engines, onyx naming it."""
    onyx_s, ort_s = sessions(lora_model())
    x = RNG.standard_normal((2, 8)).astype(np.float32)
    p = lora_params()
    cases = {'nope': {'nope': p['lora_a']}, 'y': {'y': p['lora_a']}, 'W': {'W': p['lora_a']},
             'lora_a': {'lora_a': p['lora_a'].astype(np.float64), 'lora_b': p['lora_b']}}
    for word, params in cases.items():
        path = export(ort, tmp_path / word, params)
        with pytest.raises(onnxruntime.capi.onnxruntime_pybind11_state.InvalidArgument):
            run_with(onnxruntime, ort_s, {'x': x}, [path])
        with pytest.raises(onyx.InvalidArgument, match=word):
            run_with(ort, onyx_s, {'x': x}, [path])
    # an input the adapter gives but the feed lacks: onnxruntime's Python check, on the feed alone
    path = export(ort, tmp_path / 'x', {'x': x})
    with pytest.raises(ValueError, match=r"Required inputs \(\['x'\]\) are missing"):
        run_with(onnxruntime, ort_s, {}, [path])
    with pytest.raises(ValueError, match=r"Required inputs \(\['x'\]\) are missing"):
        run_with(ort, onyx_s, {}, [path])
    with pytest.raises(TypeError, match='LoraAdapter'):
        ort.RunOptions().add_active_adapter(None)   # onnxruntime takes it, then crashes in the run
    with pytest.raises(TypeError, match='LoraAdapter'):
        ort.RunOptions().add_active_adapter(ort.AdapterFormat())


def test_iobinding_ignores_adapters_with_a_warning_as_onnxruntime(tmp_path):
    onyx_s, ort_s = sessions(lora_model())
    x = RNG.standard_normal((2, 8)).astype(np.float32)
    path = export(ort, tmp_path / 'p', lora_params())
    outs = []
    for engine, s in ((ort, onyx_s), (onnxruntime, ort_s)):
        options = engine.RunOptions()
        adapter = loaded(engine, path)
        options.add_active_adapter(adapter)
        binding = s.io_binding()
        binding.bind_cpu_input('x', x)
        binding.bind_output('y')
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            s.run_with_iobinding(binding, options)
        if engine is ort:
            assert [str(w.message) for w in caught] == \
                ["run_with_iobinding has active adapters specified, but won't have an effect"]
        outs.append(binding.copy_outputs_to_cpu()[0])
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(outs[0], onyx_s.run(None, {'x': x})[0], rtol=1e-6)   # the base model


def test_run_async_and_threads_apply_adapters(tmp_path):
    """onyx applies the active adapters in run_async as in run (onnxruntime 1.32's run_async leaves
    them out silently); runs from many threads share one adapter."""
    onyx_s, _ = sessions(lora_model())
    x = RNG.standard_normal((2, 8)).astype(np.float32)
    path = export(ort, tmp_path / 'p', lora_params())
    options = ort.RunOptions()
    options.add_active_adapter(loaded(ort, path))
    want = onyx_s.run(None, {'x': x}, options)[0]
    done, got = threading.Event(), {}

    def callback(results, user_data, error):
        got['y'], got['error'] = results, error
        done.set()

    onyx_s.run_async(None, {'x': x}, callback, None, options)
    assert done.wait(60) and got['error'] == ''
    np.testing.assert_array_equal(got['y'][0], want)
    results = []
    threads = [threading.Thread(target=lambda: results.append(onyx_s.run(None, {'x': x}, options)[0]))
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4 and all(np.array_equal(r, want) for r in results)


# ---- bad files and bad parameters

def valid_file(tmp_path):
    return open(export(onnxruntime, tmp_path / 'v', {'lora_a': TYPED['f32'], 'lora_b': TYPED['i64']}, 3, 4),
                'rb').read()


def refused_by_both(tmp_path, data, match):
    path = str(tmp_path / 'bad.onnx_adapter')
    with open(path, 'wb') as f:
        f.write(data)
    with pytest.raises(RuntimeError):
        onnxruntime.AdapterFormat.read_adapter(path)
    for read in (ort.AdapterFormat.read_adapter, lambda p: ort.LoraAdapter().Load(p)):
        with pytest.raises(RuntimeError, match=match):
            read(path)


def test_bad_files_are_refused(tmp_path):
    good = valid_file(tmp_path)
    refused_by_both(tmp_path, b'', 'no "TORT" file identifier')
    refused_by_both(tmp_path, good[:4] + b'ORTX' + good[8:], 'no "TORT" file identifier')
    refused_by_both(tmp_path, good[:40], 'not a valid onnxruntime adapter file .*outside the file')
    with pytest.raises(RuntimeError, match='cannot read adapter file.*No such file'):
        ort.LoraAdapter().Load(str(tmp_path / 'missing.onnx_adapter'))
    with pytest.raises(TypeError, match='file path'):
        ort.AdapterFormat.read_adapter(123)


def test_every_truncation_is_refused(tmp_path):
    good = valid_file(tmp_path)
    for n in range(len(good) - 1):
        with pytest.raises(_adapter.AdapterError):
            _adapter.read_adapter_bytes(good[:n], 'truncated')


def test_corrupted_bytes_never_crash(tmp_path):
    """Random byte changes: each file loads or raises AdapterError, nothing else (no IndexError,
    no read past the end); what loads agrees with onnxruntime's reader where it loads too."""
    good = np.frombuffer(valid_file(tmp_path), np.uint8)
    rng = np.random.default_rng(7)
    loaded_count = 0
    for trial in range(400):
        data = good.copy()
        at = rng.integers(0, len(data), size=rng.integers(1, 4))
        data[at] = rng.integers(0, 256, size=len(at))
        try:
            got = _adapter.read_adapter_bytes(data.tobytes(), 'corrupted')
        except _adapter.AdapterError:
            continue
        path = str(tmp_path / f'c{trial}')
        data.tofile(path)
        theirs = onnxruntime.AdapterFormat.read_adapter(path)   # what onyx takes, onnxruntime takes
        assert got[1:3] == (theirs.get_adapter_version(), theirs.get_model_version())
        params = theirs.get_parameters()
        assert sorted(got[3]) == sorted(params)
        for name, arr in got[3].items():
            assert arr.tobytes() == params[name].numpy().tobytes() and list(arr.shape) == params[name].shape()
        loaded_count += 1
    assert loaded_count > 0   # some changes (in the data, the versions) leave a valid file


def test_unsupported_version_and_types_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(_adapter, 'FORMAT_VERSION', 2)
    data = _adapter.adapter_bytes(0, 0, {'p': (1, np.ones(2, np.float32))})
    monkeypatch.undo()
    refused_by_both(tmp_path, data, 'adapter format version 2 is not supported')
    for name, arr, word in (('b', np.array([True]), 'data_type 9'), ('s', np.array(1.5, np.float32), 'no dims')):
        fmt = onnxruntime.AdapterFormat()   # onnxruntime writes these, and cannot read them back
        fmt.set_parameters({name: onnxruntime.OrtValue.ortvalue_from_numpy(arr)})
        fmt.export_adapter(str(tmp_path / name))
        refused_by_both(tmp_path, open(str(tmp_path / name), 'rb').read(), word)


def test_export_refuses_what_no_reader_takes(tmp_path):
    for arr, err, word in ((np.array([True, False]), TypeError, 'tensor\\(bool\\)'),
                           (np.array(['a'], object), TypeError, 'tensor\\(string\\)'),
                           (np.array(2.0, np.float32), ValueError, 'scalar')):
        fmt = ort.AdapterFormat()
        fmt.set_parameters({'p': ort.OrtValue.ortvalue_from_numpy(arr)})
        with pytest.raises(err, match=word):
            fmt.export_adapter(str(tmp_path / 'x'))
        assert not os.path.exists(tmp_path / 'x')
    with pytest.raises(TypeError, match='str -> OrtValue'):
        ort.AdapterFormat().set_parameters({'p': np.zeros(2)})
    for bad in (2 ** 31, -2 ** 31 - 1, 1.5, '1'):
        with pytest.raises(TypeError, match='32-bit integer'):
            ort.AdapterFormat().set_adapter_version(bad)
    fmt = ort.AdapterFormat()
    with pytest.raises(RuntimeError, match='cannot write adapter file'):
        fmt.export_adapter(str(tmp_path / 'no' / 'such' / 'dir'))


def test_shim_exports_adapters_where_onnxruntime_does(monkeypatch):
    shim = os.path.join(os.path.dirname(onyx.__file__), '..', 'ort_shim')
    monkeypatch.syspath_prepend(os.path.abspath(shim))
    for name in [m for m in sys.modules if m == 'onnxruntime' or m.startswith('onnxruntime.')]:
        monkeypatch.delitem(sys.modules, name)
    rt = importlib.import_module('onnxruntime')
    state = importlib.import_module('onnxruntime.capi.onnxruntime_pybind11_state')
    C = importlib.import_module('onnxruntime.capi._pybind_state')
    coll = importlib.import_module('onnxruntime.capi.onnxruntime_inference_collection')
    assert rt.LoraAdapter is state.LoraAdapter is C.LoraAdapter is onyx.LoraAdapter
    assert rt.AdapterFormat is coll.AdapterFormat is state.AdapterFormat is onyx.AdapterFormat


def test_ortvalue_with_onnx_type_reads_the_bits_as_onnxruntime():
    """What the adapter tests build bfloat16 parameters with: the array's memory taken as the type."""
    bits = np.array([0x3f80, 0xc000], np.uint16)
    ours = ort.OrtValue.ortvalue_from_numpy_with_onnx_type(bits, 16)
    theirs = onnxruntime.OrtValue.ortvalue_from_numpy_with_onnx_type(bits, 16)
    assert ours.data_type() == theirs.data_type() == 'tensor(bfloat16)'
    assert ours.numpy().tobytes() == ctypes.string_at(theirs.data_ptr(), 4) == bits.tobytes()
    assert ours.numpy().astype(np.float32).tolist() == [1.0, -2.0]
    with pytest.raises(onyx.InvalidArgument, match='Items size in the incoming array: 4 specified by onnxtype: 8'):
        ort.OrtValue.ortvalue_from_numpy_with_onnx_type(np.ones(2, np.float32), 7)


def test_adapters_need_no_onnx_package(tmp_path):
    """The initializers are found and taken out at the protobuf wire level (onyx/_model_wire.py):
    a process where `import onnx` fails runs the adapter to onnxruntime's result."""
    onnx.save_model(lora_model(), str(tmp_path / 'm.onnx'))
    x = RNG.standard_normal((2, 8)).astype(np.float32)
    np.save(str(tmp_path / 'x.npy'), x)
    path = export(onnxruntime, tmp_path / 'p', lora_params())
    want = run_with(onnxruntime, onnxruntime.InferenceSession(str(tmp_path / 'm.onnx'), providers=ORT_PROVIDERS),
                    {'x': x}, [path])
    script = f'''
import sys
sys.modules['onnx'] = None   # import onnx raises ImportError
import numpy as np
import onyx as ort
s = ort.InferenceSession({str(tmp_path / 'm.onnx')!r}, providers=['CPUExecutionProvider'])
a = ort.LoraAdapter()
a.Load({path!r})
o = ort.RunOptions()
o.add_active_adapter(a)
np.save({str(tmp_path / 'y.npy')!r}, s.run(None, {{'x': np.load({str(tmp_path / 'x.npy')!r})}}, o)[0])
assert 'onnx' not in sys.modules or sys.modules['onnx'] is None
'''
    subprocess.run([sys.executable, '-c', script], check=True, timeout=120)
    np.testing.assert_allclose(np.load(str(tmp_path / 'y.npy')), want, rtol=1e-5, atol=1e-5)
