"""onyx: a native ONNX inference engine (libonyx) for Python.

The onnxruntime-compatible API (code written for onnxruntime runs by changing the import):

    import onyx as onnxruntime
    sess = onnxruntime.InferenceSession("model.onnx", providers=["CPUExecutionProvider"])
    y, = sess.run(None, {"x": x})

and onyx's own, with presets for dynamic axes and threads:

    sess = onyx.Session("model.onnx", input_example=[x], threads=2)

onyx.backend implements onnx.backend.base.Backend (prepare, run_model, run_node,
supports_device, is_compatible) for onnx's BackendTest runner. `python -m onyx` is the CLI
(info / run / bench / profile).
"""
from ._lib import (EPFail, Fail, InvalidArgument, InvalidGraph, InvalidProtobuf, NoSuchFile,
                   NotImplemented, OnyxError, RuntimeException, lib, library_path)
from .ort import (AdapterFormat, ExecutionMode, ExecutionOrder, GraphOptimizationLevel,
                  InferenceSession, IOBinding, LoraAdapter, ModelMetadata, OrtValue, RunOptions, SessionOptions, get_all_providers,
                  get_available_providers, get_device, model_metadata, set_default_logger_severity,
                  set_seed)
from .session import NodeArg, Session


def version():
    return lib.onyx_version().decode()


__version__ = version()


def supports_device(device):
    return bool(lib.onyx_supports_device(str(device).encode()))


__all__ = ['OnyxError', 'Fail', 'InvalidArgument', 'NoSuchFile', 'InvalidProtobuf', 'InvalidGraph',
           'NotImplemented', 'RuntimeException', 'EPFail', 'NodeArg', 'Session', 'InferenceSession',
           'SessionOptions', 'RunOptions', 'OrtValue', 'IOBinding', 'ModelMetadata', 'AdapterFormat',
           'LoraAdapter',
           'GraphOptimizationLevel', 'ExecutionMode', 'ExecutionOrder', 'get_available_providers',
           'get_all_providers', 'get_device', 'set_default_logger_severity', 'set_seed',
           'model_metadata', 'version', 'supports_device', 'library_path']
