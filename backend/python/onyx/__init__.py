"""onyx: a native ONNX inference engine (libonyx) for Python.

    import onyx
    sess = onyx.Session("model.onnx")
    print(sess.get_inputs())
    y, = sess.run(None, {"x": x})

onyx.backend implements onnx.backend.base.Backend (prepare, run_model, run_node,
supports_device, is_compatible) for onnx's BackendTest runner.
"""
from ._lib import OnyxError, lib
from .session import NodeArg, Session


def version():
    return lib.onyx_version().decode()


def supports_device(device):
    return bool(lib.onyx_supports_device(str(device).encode()))


__all__ = ['OnyxError', 'NodeArg', 'Session', 'version', 'supports_device']
