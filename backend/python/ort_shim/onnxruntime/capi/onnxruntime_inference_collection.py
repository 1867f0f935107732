"""onnxruntime.capi.onnxruntime_inference_collection over onyx."""
from onyx.ort import *  # noqa: F403
from onyx.ort import __all__, check_and_normalize_provider_args  # noqa: F401
