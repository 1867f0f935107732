"""onnxruntime.capi over onyx (see the package's __init__)."""
