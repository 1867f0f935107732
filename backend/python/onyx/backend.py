"""onnx.backend.base.Backend over libonyx: what onnx's BackendTest runner drives."""
import ctypes

import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep, namedtupledict

from ._lib import OnyxError, OutputInfo, Value_pp, check, error, lib
from ._values import Arena, dtype_code, take_outputs, to_value, values_array
from .session import Session, load_model


def _device_name(device):
    # onnx passes "CPU" / "CUDA" strings, sometimes a Device object; "CUDA:1" keeps its index.
    return str(device) if not hasattr(device, 'type') else ('CUDA' if device.type else 'CPU')


class OnyxRep(BackendRep):
    """A prepared model: run(inputs) takes a list in graph-input order or a dict by name."""

    def __init__(self, session):
        self.session = session

    def run(self, inputs, **kwargs):  # noqa: ARG002
        if isinstance(inputs, np.ndarray):
            inputs = [inputs]
        outputs = self.session.run_all(inputs)
        return namedtupledict('Outputs', [o.name for o in self.session.get_outputs()])(*outputs)


class OnyxBackend(Backend):
    @classmethod
    def is_compatible(cls, model, device='CPU', **kwargs):  # noqa: ARG003
        """False where prepare would refuse the model, loading included (an attribute the op
        does not have is refused as the model loads)."""
        try:
            handle = load_model(model)
        except OnyxError:
            return False
        try:
            return lib.onyx_is_compatible(handle, _device_name(device).encode()) == 0
        finally:
            lib.onyx_model_free(handle)

    @classmethod
    def prepare(cls, model, device='CPU', **kwargs):
        """kwargs: input_example (arrays fixing symbolic dims), threads."""
        return OnyxRep(Session(model, device=_device_name(device),
                               input_example=kwargs.get('input_example'),
                               threads=kwargs.get('threads')))

    @classmethod
    def run_model(cls, model, inputs, device='CPU', **kwargs):
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node, inputs, device='CPU', outputs_info=None, **kwargs):
        """Runs one NodeProto on `inputs` (one per non-empty input name). outputs_info: optional
        (element type, shape) per output, the type as a TensorProto number or a numpy dtype.
        kwargs: opset_version (default: the newest onyx knows)."""
        data = node.SerializeToString()
        arena = Arena()
        try:
            values = [to_value(x, arena) for x in inputs]
            infos = []
            for elem, shape in outputs_info or []:
                code = elem if isinstance(elem, int) else dtype_code(elem)
                dims = None
                if shape is not None:
                    dims = (ctypes.c_int64 * max(len(shape), 1))(*shape)
                    arena.keep.append(dims)
                infos.append(OutputInfo(code, -1 if shape is None else len(shape),
                                        ctypes.cast(dims, ctypes.POINTER(ctypes.c_int64)) if dims else None))
            info_arr = (OutputInfo * max(len(infos), 1))(*infos)
            count = ctypes.c_size_t()
            outs = Value_pp()
            check(lib.onyx_run_node(data, len(data), int(kwargs.get('opset_version') or 0),
                                    _device_name(device).encode(), len(values), values_array(values),
                                    len(infos), info_arr, ctypes.byref(count), ctypes.byref(outs)))
        finally:
            arena.free()
        outputs = take_outputs(outs, count.value)
        names = [n for n in node.output if n] or [f'output_{i}' for i in range(len(outputs))]
        return namedtupledict('Outputs', names[:len(outputs)])(*outputs)

    @classmethod
    def supports_device(cls, device):
        return bool(lib.onyx_supports_device(_device_name(device).encode()))


prepare = OnyxBackend.prepare
run_model = OnyxBackend.run_model
run_node = OnyxBackend.run_node
supports_device = OnyxBackend.supports_device
is_compatible = OnyxBackend.is_compatible

__all__ = ['OnyxBackend', 'OnyxRep', 'prepare', 'run_model', 'run_node', 'supports_device',
           'is_compatible', 'error', 'onnx']
