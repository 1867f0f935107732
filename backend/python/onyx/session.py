"""onyx.Session: load a model once, run it many times (the everyday Python API)."""
import ctypes
import os

import numpy as np

from ._call import NOT_HANDLED, CallPlan
from ._lib import KIND_NAMES, IoInfo, Model, Rep, Value_pp, check, lib, threads_option
from ._values import Arena, numpy_dtype, take_outputs, target_value, to_value, values_array


class NodeArg:
    """A graph input or output: name, type ("tensor(float)", "seq(tensor(int64))", …) and shape (a
    list of ints, symbolic names, or None for a dim nobody named; None when the rank is unknown)."""

    def __init__(self, info):
        self.name = info.name.decode('utf-8')
        self.kind_code = info.kind
        self.kind = KIND_NAMES.get(info.kind, 'unknown')
        self.dtype_code = info.dtype
        elem = lib.onyx_dtype_name(info.dtype).decode()
        tensor = f'tensor({elem})'
        self.type = {'seq': f'seq({tensor})', 'optional': f'optional({tensor})'}.get(self.kind, tensor)
        if info.rank < 0:
            self.shape = None
        else:
            self.shape = []
            for i in range(info.rank):
                if info.dims[i] >= 0:
                    self.shape.append(int(info.dims[i]))
                elif info.dim_params and info.dim_params[i]:
                    self.shape.append(info.dim_params[i].decode('utf-8'))
                else:
                    self.shape.append(None)

    @property
    def numpy_dtype(self):
        return numpy_dtype(self.dtype_code)

    def __repr__(self):
        return f'NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape!r})'


def load_model(model):
    """A library model from a path, bytes, or anything with SerializeToString (a ModelProto)."""
    handle = ctypes.POINTER(Model)()
    if isinstance(model, (str, os.PathLike)):
        check(lib.onyx_model_load_file(os.fsencode(model), ctypes.byref(handle)))
    else:
        data = model.SerializeToString() if hasattr(model, 'SerializeToString') else bytes(model)
        check(lib.onyx_model_load_buffer(data, len(data), None, ctypes.byref(handle)))
    return handle


def _io_list(count, get, owner):
    out = []
    for i in range(count(owner)):
        info = IoInfo()
        check(get(owner, i, ctypes.byref(info)))
        out.append(NodeArg(info))
    return out


class Session:
    """A prepared model.

    Session(model, device="CPU", input_example=None, threads=None)
      model: a file path, the model's bytes, or an onnx.ModelProto.
      input_example: arrays (a list in input order, or a dict by name) that fix symbolic dims and
        let kernels be chosen up front; runs with other shapes still work.
      threads: threads per run (None or 0: all the CPUs this process may run on; more than those
        is clamped to them; negative: onyx.InvalidArgument).
    Errors from the library arrive as onyx.OnyxError carrying its message.
    """

    def __init__(self, model, device='CPU', input_example=None, threads=None):
        self._rep = None
        model_handle = load_model(model)
        try:
            self._model_inputs = _io_list(lib.onyx_model_input_count, lib.onyx_model_input, model_handle)
            opts = ctypes.c_void_p()
            check(lib.onyx_session_options_create(ctypes.byref(opts)))
            arena = Arena()
            try:
                check(lib.onyx_session_options_set_devices(opts, device.encode()))
                check(lib.onyx_session_options_set_threads(opts, threads_option('Session threads', threads)))
                if input_example is not None:
                    for name, example in self._examples(input_example, arena):
                        check(lib.onyx_session_options_add_example(opts, name.encode(), example))
                rep = ctypes.POINTER(Rep)()
                # the session takes the model over (its weights then held once, as packed)
                handle, model_handle = model_handle, None
                check(lib.onyx_prepare_session_owning(handle, opts, ctypes.byref(rep)))
                self._rep = rep
            finally:
                arena.free()
                lib.onyx_session_options_free(opts)
        finally:
            if model_handle is not None:
                lib.onyx_model_free(model_handle)
        self._inputs = _io_list(lib.onyx_rep_input_count, lib.onyx_rep_input, self._rep)
        self._by_name = {i.name: i for i in self._inputs}
        self._input_names = [i.name for i in self._inputs]
        self._c_names = {}   # tuple of input names -> their C array, per order given
        self._outputs = _io_list(lib.onyx_rep_output_count, lib.onyx_rep_output, self._rep)
        self._plan = CallPlan(self._rep, self._inputs, self._outputs)
        self.device = device

    def _examples(self, example, arena):
        """(input name, library value) pairs of an input example given as a list or a dict."""
        if isinstance(example, dict):
            items = list(example.items())
        else:
            items = [(info.name, x) for info, x in zip(self._model_inputs, example)]
        kinds = {info.name: info for info in self._model_inputs}
        pairs = []
        for name, x in items:
            info = kinds.get(name)
            pairs.append((name, to_value(x, arena, info.kind_code if info else 0)))
        return pairs

    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def run(self, output_names=None, input_feed=None):
        """Runs the model. input_feed: a dict by input name (or a list in input order); returns the
        outputs named in output_names (all when None), in that order."""
        results = self._run_fast(output_names, input_feed)
        if results is not NOT_HANDLED:
            return results
        outputs = self._run_general(input_feed if input_feed is not None else {})
        if output_names is None:
            return outputs
        index = {o.name: i for i, o in enumerate(self._outputs)}
        missing = [n for n in output_names if n not in index]
        if missing:
            raise ValueError(f'unknown output name(s) {missing}; the model has {list(index)}')
        return [outputs[index[n]] for n in output_names]

    def _run_fast(self, output_names, inputs):
        """The one-call path of _call.py (numeric arrays of the inputs' own types in, by name or in
        order), or NOT_HANDLED when the call is off it: _run_general then deals with it, with its
        checks and messages."""
        if self._rep is None or (output_names is not None and not output_names):   # []: no outputs
            return NOT_HANDLED
        if type(inputs) is not dict:
            if type(inputs) not in (list, tuple) or len(inputs) != len(self._inputs):
                return NOT_HANDLED
            inputs = dict(zip(self._input_names, inputs))
        return self._plan.run(output_names, inputs, None)

    def run_all(self, inputs, targets=None):
        """Every output, in graph order, for inputs given as a dict by name or a list in order.
        targets: see run_into."""
        if not targets:
            results = self._run_fast(None, inputs)
            if results is not NOT_HANDLED:
                return results
        return self._run_general(inputs, targets)

    def _run_general(self, inputs, targets=None):
        """run_all for any inputs: values made one by one, every check and message."""
        if self._rep is None:
            raise ValueError('session is closed')
        arena = Arena()
        copies = {}   # targets the run cannot write where they are: filled from its outputs
        try:
            if isinstance(inputs, dict):
                by_name = self._by_name
                names = tuple(inputs)
                c_names = self._c_names.get(names)
                if c_names is None:   # names in an order not seen before: checked, then kept
                    unknown = [n for n in names if n not in by_name]
                    if unknown:
                        raise ValueError(f'unknown input name(s) {unknown}; the model has {list(by_name)}')
                    c_names = (ctypes.c_char_p * max(len(names), 1))(*[n.encode() for n in names])
                    if len(self._c_names) < 64:
                        self._c_names[names] = c_names
                values = [to_value(inputs[n], arena, by_name[n].kind_code) for n in names]
            else:
                inputs = list(inputs)
                values = [to_value(x, arena, info.kind_code) for x, info in zip(inputs, self._inputs)]
                if len(inputs) > len(self._inputs):
                    raise ValueError(f'{len(inputs)} inputs given, the model has {len(self._inputs)}')
                c_names = None
            count = ctypes.c_size_t()
            outs = Value_pp()
            if targets:
                bound = {}
                for name, x in targets.items():
                    v = target_value(x, arena)
                    if v is None:
                        copies[name] = x
                    else:
                        bound[name] = v
                t_names = (ctypes.c_char_p * max(len(bound), 1))(*[n.encode() for n in bound])
                check(lib.onyx_rep_run_into(self._rep, None, len(values), c_names, values_array(values),
                                            len(bound), t_names, values_array(list(bound.values())),
                                            ctypes.byref(count), ctypes.byref(outs)))
            else:
                check(lib.onyx_rep_run(self._rep, len(values), c_names, values_array(values),
                                       ctypes.byref(count), ctypes.byref(outs)))
        finally:
            arena.free()
        results = take_outputs(outs, count.value)
        for i, out in enumerate(self._outputs):
            if out.name in copies:
                target = copies[out.name]
                if np.shape(results[i]) != np.shape(target):
                    raise ValueError(f"output '{out.name}' has shape {np.shape(results[i])}; its "
                                     f'target has {np.shape(target)}')
                np.copyto(target, results[i])
            if targets and out.name in targets:
                results[i] = targets[out.name]
        return results

    def run_into(self, output_names, input_feed, targets):
        """run, with the outputs named in `targets` (a dict of name -> numpy array of the output's
        type and shape) written into those arrays, which come back as those outputs. An output is
        computed where its array is unless it overlaps an input; a GroupQueryAttention's present
        key/value whose array is its past key/value's own (one buffer of the cache's capacity,
        bound as both: onnxruntime-genai's past_present_share_buffer) is appended in place."""
        index = {o.name: i for i, o in enumerate(self._outputs)}
        missing = [n for n in list(output_names) + list(targets) if n not in index]
        if missing:
            raise ValueError(f'unknown output name(s) {missing}; the model has {list(index)}')
        outputs = self._run_general(input_feed, targets)
        return [outputs[index[n]] for n in output_names]

    def close(self):
        # getattr: __del__ also runs on an object whose __init__ failed before _rep was set.
        rep = getattr(self, '_rep', None)
        if rep is not None:
            self._rep = None
            lib.onyx_rep_free(rep)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()
