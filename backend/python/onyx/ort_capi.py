"""onnxruntime.capi.onnxruntime_pybind11_state's names over onyx."""
from ._lib import (EPFail, Fail, InvalidArgument, InvalidGraph, InvalidProtobuf, NoSuchFile,
                   NotImplemented, RuntimeException)
from .ort import RunOptions, SessionOptions

__all__ = ['Fail', 'InvalidArgument', 'NoSuchFile', 'InvalidProtobuf', 'InvalidGraph', 'NotImplemented',
           'RuntimeException', 'EPFail', 'RunOptions', 'SessionOptions']
from .ort import OrtValue  # noqa: E402
OrtValueVector = list
__all__ += ['OrtValue', 'OrtValueVector']
