"""An `onnxruntime` package that is onyx: put backend/python/ort_shim (and backend/python) first on
sys.path and `import onnxruntime` gives onyx's onnxruntime-compatible API (onyx.ort). Never installed
by default; tools/ort_compat/run.py uses it to run onnxruntime's own Python API tests on onyx."""
from onyx import ort as _ort
from onyx.ort import *  # noqa: F403
from onyx.ort import __all__ as _names

import onyx as _onyx
__version__ = _onyx.__version__
__all__ = list(_names)
