"""An `onnxruntime` package that is onyx: put backend/python/ort_shim (and backend/python) first on
sys.path and `import onnxruntime` gives onyx's onnxruntime-compatible API (onyx.ort). Never installed
by default; tools/ort_compat/run.py uses it to run onnxruntime's own Python API tests on onyx."""
from onyx import ort as _ort
from onyx.ort import *  # noqa: F403
from onyx.ort import __all__ as _names

from onyx.ort_capi import *  # noqa: F403 (onnxruntime exports its error classes too)

__version__ = _ort.get_version_string()
__all__ = list(_names)
