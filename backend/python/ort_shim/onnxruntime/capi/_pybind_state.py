"""onnxruntime.capi._pybind_state over onyx (as onnxruntime's: the pybind11 module's names)."""
from onyx.ort_capi import *  # noqa: F403
from onyx.ort_capi import __all__  # noqa: F401
