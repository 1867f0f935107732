"""onnxruntime.capi.onnxruntime_pybind11_state over onyx: its error classes and low-level types."""
from onyx.ort_capi import *  # noqa: F403
from onyx.ort_capi import __all__  # noqa: F401
