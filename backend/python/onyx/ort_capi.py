"""onnxruntime.capi.onnxruntime_pybind11_state's (and _pybind_state's) names over onyx: onnxruntime's
error classes (onyx's, with onnxruntime's hierarchy: each an Exception, none a RuntimeError or
ValueError), and its C-level types, which in onyx are the Python ones (OrtValue is onyx.ort.OrtValue)."""
from . import _lib
from .ort import (AdapterFormat, ExecutionMode, ExecutionOrder, GraphOptimizationLevel, LoraAdapter,
                  ModelMetadata, OrtAllocatorType, OrtArenaCfg, OrtDevice, OrtDeviceMemoryType,
                  OrtDeviceVendorId, OrtMemoryInfo, OrtMemoryInfoDeviceType, OrtMemType, OrtSparseFormat, OrtValue, OrtValueVector,
                  RunOptions, SessionOptions, create_and_register_allocator,
                  create_and_register_allocator_v2, disable_telemetry_events, enable_telemetry_events,
                  get_all_providers, get_available_providers, get_build_info, get_device,
                  get_version_string, is_dlpack_uint8_tensor, set_default_logger_callback,
                  set_default_logger_severity, set_seed)
from .ort import InferenceSession as _InferenceSession

globals().update({name: getattr(_lib, name) for name in _lib.ORT_ERRORS})


def get_default_session_options():
    return SessionOptions()


InferenceSession = _InferenceSession

__all__ = list(_lib.ORT_ERRORS) + [
    'AdapterFormat', 'LoraAdapter',
    'ExecutionMode', 'ExecutionOrder', 'GraphOptimizationLevel', 'ModelMetadata', 'OrtAllocatorType',
    'OrtArenaCfg', 'OrtDevice', 'OrtDeviceMemoryType', 'OrtDeviceVendorId', 'OrtMemoryInfo',
    'OrtMemoryInfoDeviceType', 'OrtMemType', 'OrtSparseFormat', 'OrtValue', 'OrtValueVector', 'RunOptions',
    'SessionOptions', 'InferenceSession', 'create_and_register_allocator', 'create_and_register_allocator_v2',
    'disable_telemetry_events', 'enable_telemetry_events', 'get_all_providers', 'get_available_providers',
    'get_build_info', 'get_device', 'get_version_string', 'is_dlpack_uint8_tensor',
    'set_default_logger_callback', 'set_default_logger_severity', 'set_seed', 'get_default_session_options']
