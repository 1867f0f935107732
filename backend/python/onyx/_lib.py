"""ctypes declarations of libonyx's C API (include/onyx.h) and the error type its statuses raise."""
import ctypes
import operator
import os

c_int64_p = ctypes.POINTER(ctypes.c_int64)
c_char_p_p = ctypes.POINTER(ctypes.c_char_p)


class OnyxError(Exception):
    """A failure reported by libonyx: `status` is the status name (e.g. "ONYX_ERR_SHAPE"), `code`
    its number, and the message is the library's own (what failed and where). An Exception, not a
    RuntimeError, as onnxruntime's classes are: an `except RuntimeError` catches the same things under
    both engines."""

    def __init__(self, code, status, message):
        super().__init__(f'{status}: {message}' if message else status)
        self.code = code
        self.status = status
        self.message = message


class Value(ctypes.Structure):
    """Opaque onyx_value."""


class Model(ctypes.Structure):
    """Opaque onyx_model."""


class Rep(ctypes.Structure):
    """Opaque onyx_rep."""


Value_p = ctypes.POINTER(Value)
Value_pp = ctypes.POINTER(Value_p)


class IoInfo(ctypes.Structure):
    _fields_ = [('name', ctypes.c_char_p), ('kind', ctypes.c_int), ('dtype', ctypes.c_int),
                ('rank', ctypes.c_int64), ('dims', c_int64_p), ('dim_params', c_char_p_p)]


class TensorInfo(ctypes.Structure):
    _fields_ = [('dtype', ctypes.c_int), ('rank', ctypes.c_size_t), ('dims', c_int64_p),
                ('numel', ctypes.c_int64), ('data', ctypes.c_void_p), ('nbytes', ctypes.c_size_t),
                ('device', ctypes.c_char_p)]


class OutputInfo(ctypes.Structure):
    _fields_ = [('dtype', ctypes.c_int), ('rank', ctypes.c_int64), ('dims', c_int64_p)]


# Value kinds (onyx_value_kind).
KIND_NONE, KIND_TENSOR, KIND_SEQUENCE, KIND_OPTIONAL, KIND_MAP = range(5)
KIND_NAMES = {KIND_NONE: 'unknown', KIND_TENSOR: 'tensor', KIND_SEQUENCE: 'seq',
              KIND_OPTIONAL: 'optional', KIND_MAP: 'map'}


def _find_library():
    """The library bundled in the installed package (onyx/_native/, put there by the wheel), else
    $ONYX_LIB, else libonyx.so beside this package, else the build folder of the source tree this
    package sits in (backend/python/onyx -> build/)."""
    here = os.path.dirname(os.path.abspath(__file__))
    bundled = os.path.join(here, '_native', 'libonyx.so.0')
    if os.path.exists(bundled):
        return bundled
    env = os.environ.get('ONYX_LIB')
    if env:
        return env
    for candidate in (os.path.join(here, 'libonyx.so'),
                      os.path.join(here, '..', '..', '..', 'build', 'libonyx.so')):
        if os.path.exists(candidate):
            return os.path.normpath(candidate)
    raise OSError('libonyx.so not found: install the package (pip install <onyx checkout>), or build '
                  'it with `make` in the checkout, or set ONYX_LIB to its path')


def _declare(lib):
    sz, i64, i32, vp, cp = ctypes.c_size_t, ctypes.c_int64, ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p
    status = ctypes.c_int
    sigs = {
        'onyx_status_name': (cp, [status]),
        'onyx_last_error': (cp, []),
        'onyx_dtype_name': (cp, [i32]),
        'onyx_value_new_tensor': (status, [i32, sz, c_int64_p, vp, sz, ctypes.POINTER(Value_p)]),
        'onyx_value_wrap_tensor': (status, [i32, sz, c_int64_p, vp, sz, ctypes.POINTER(Value_p)]),
        'onyx_value_wrap_device_tensor': (status, [cp, i32, sz, c_int64_p, vp, sz, ctypes.POINTER(Value_p)]),
        'onyx_value_copy_to_device': (status, [Value_p, cp, ctypes.POINTER(Value_p)]),
        'onyx_tensor_device': (cp, [Value_p]),
        'onyx_value_new_string_tensor': (status, [sz, c_int64_p, c_char_p_p, ctypes.POINTER(Value_p)]),
        'onyx_value_new_sequence': (status, [i32, sz, Value_pp, ctypes.POINTER(Value_p)]),
        'onyx_value_new_optional': (status, [Value_p, ctypes.POINTER(Value_p)]),
        'onyx_value_new_map': (status, [Value_p, Value_p, ctypes.POINTER(Value_p)]),
        'onyx_map_keys': (Value_p, [Value_p]),
        'onyx_map_values': (Value_p, [Value_p]),
        'onyx_value_free': (None, [Value_p]),
        'onyx_values_free': (None, [Value_pp, sz]),
        'onyx_value_kind_of': (i32, [Value_p]),
        'onyx_tensor_dtype': (i32, [Value_p]),
        'onyx_tensor_rank': (sz, [Value_p]),
        'onyx_tensor_dims': (c_int64_p, [Value_p]),
        'onyx_tensor_numel': (i64, [Value_p]),
        'onyx_tensor_data': (vp, [Value_p]),
        'onyx_tensor_nbytes': (sz, [Value_p]),
        'onyx_tensor_get_info': (status, [Value_p, ctypes.POINTER(TensorInfo)]),
        'onyx_sequence_length': (sz, [Value_p]),
        'onyx_sequence_at': (Value_p, [Value_p, sz]),
        'onyx_sequence_elem_dtype': (i32, [Value_p]),
        'onyx_optional_has_value': (ctypes.c_bool, [Value_p]),
        'onyx_optional_value': (Value_p, [Value_p]),
        'onyx_model_load_file': (status, [cp, ctypes.POINTER(ctypes.POINTER(Model))]),
        'onyx_model_load_buffer': (status, [vp, sz, cp, ctypes.POINTER(ctypes.POINTER(Model))]),
        'onyx_model_free': (None, [ctypes.POINTER(Model)]),
        'onyx_model_input_count': (sz, [ctypes.POINTER(Model)]),
        'onyx_model_output_count': (sz, [ctypes.POINTER(Model)]),
        'onyx_model_input': (status, [ctypes.POINTER(Model), sz, ctypes.POINTER(IoInfo)]),
        'onyx_model_output': (status, [ctypes.POINTER(Model), sz, ctypes.POINTER(IoInfo)]),
        'onyx_supports_device': (ctypes.c_bool, [cp]),
        'onyx_rep_free': (None, [ctypes.POINTER(Rep)]),
        'onyx_rep_input_count': (sz, [ctypes.POINTER(Rep)]),
        'onyx_rep_output_count': (sz, [ctypes.POINTER(Rep)]),
        'onyx_rep_input': (status, [ctypes.POINTER(Rep), sz, ctypes.POINTER(IoInfo)]),
        'onyx_rep_output': (status, [ctypes.POINTER(Rep), sz, ctypes.POINTER(IoInfo)]),
        'onyx_rep_run': (status, [ctypes.POINTER(Rep), sz, c_char_p_p, Value_pp,
                                  ctypes.POINTER(sz), ctypes.POINTER(Value_pp)]),
        'onyx_run_node': (status, [vp, sz, i64, cp, sz, Value_pp, sz, ctypes.POINTER(OutputInfo),
                                   ctypes.POINTER(sz), ctypes.POINTER(Value_pp)]),
        'onyx_is_compatible': (status, [ctypes.POINTER(Model), cp]),
        'onyx_version': (cp, []),
        # session options, prepare_session, profiling
        'onyx_session_options_create': (status, [ctypes.POINTER(vp)]),
        'onyx_session_options_free': (None, [vp]),
        'onyx_session_options_set_devices': (status, [vp, cp]),
        'onyx_session_options_set_threads': (status, [vp, i32]),
        'onyx_session_options_set_optimization': (status, [vp, i32]),
        'onyx_session_options_set_profiling': (status, [vp, cp]),
        'onyx_session_options_set_optimized_model': (status, [vp, cp, cp, sz]),
        'onyx_session_options_set_log': (status, [vp, i32, LogFn, vp]),
        'onyx_session_options_set_memory_limit': (status, [vp, sz]),
        'onyx_session_options_add_example': (status, [vp, cp, Value_p]),
        'onyx_session_options_set_config': (status, [vp, cp, cp]),
        'onyx_prepare_session': (status, [ctypes.POINTER(Model), vp, ctypes.POINTER(ctypes.POINTER(Rep))]),
        'onyx_prepare_session_owning': (status, [ctypes.POINTER(Model), vp, ctypes.POINTER(ctypes.POINTER(Rep))]),
        'onyx_rep_end_profiling': (status, [ctypes.POINTER(Rep), ctypes.POINTER(cp)]),
        # run options
        'onyx_run_options_create': (status, [ctypes.POINTER(vp)]),
        'onyx_run_options_free': (None, [vp]),
        'onyx_run_options_set_terminate': (status, [vp, ctypes.c_bool]),
        'onyx_run_options_set_timeout': (status, [vp, ctypes.c_double]),
        'onyx_run_options_set_max_iterations': (status, [vp, i64]),
        'onyx_run_options_set_tag': (status, [vp, cp]),
        'onyx_run_options_set_output_device': (status, [vp, cp]),
        'onyx_rep_run_with_options': (status, [ctypes.POINTER(Rep), vp, sz, c_char_p_p, Value_pp,
                                               ctypes.POINTER(sz), ctypes.POINTER(Value_pp)]),
        'onyx_rep_run_into': (status, [ctypes.POINTER(Rep), vp, sz, c_char_p_p, Value_pp, sz, c_char_p_p,
                                       Value_pp, ctypes.POINTER(sz), ctypes.POINTER(Value_pp)]),
        # model metadata
        'onyx_model_metadata_read_file': (status, [cp, ctypes.POINTER(vp)]),
        'onyx_model_metadata_read_buffer': (status, [vp, sz, ctypes.POINTER(vp)]),
        'onyx_model_get_metadata': (status, [ctypes.POINTER(Model), ctypes.POINTER(vp)]),
        'onyx_model_metadata_free': (None, [vp]),
        'onyx_model_metadata_ir_version': (i64, [vp]),
        'onyx_model_metadata_producer_name': (cp, [vp]),
        'onyx_model_metadata_producer_version': (cp, [vp]),
        'onyx_model_metadata_domain': (cp, [vp]),
        'onyx_model_metadata_model_version': (i64, [vp]),
        'onyx_model_metadata_doc_string': (cp, [vp]),
        'onyx_model_metadata_graph_name': (cp, [vp]),
        'onyx_model_metadata_graph_doc_string': (cp, [vp]),
        'onyx_model_metadata_prop_count': (sz, [vp]),
        'onyx_model_metadata_prop': (status, [vp, sz, ctypes.POINTER(cp), ctypes.POINTER(cp)]),
        'onyx_model_metadata_lookup': (cp, [vp, cp]),
        'onyx_model_metadata_opset_count': (sz, [vp]),
        'onyx_model_metadata_opset': (status, [vp, sz, ctypes.POINTER(cp), ctypes.POINTER(i64)]),
        'onyx_model_metadata_node_count': (sz, [vp]),
        'onyx_model_metadata_initializer_count': (sz, [vp]),
        'onyx_model_metadata_op_count': (sz, [vp]),
        'onyx_model_metadata_op': (status, [vp, sz, ctypes.POINTER(cp), ctypes.POINTER(cp),
                                            ctypes.POINTER(sz)]),
    }
    for name, (restype, argtypes) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


# onyx_log_fn: (user, level, message)
LogFn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p)

_PATH = _find_library()
lib = _declare(ctypes.CDLL(_PATH))


def library_path():
    """The path of the libonyx this package loaded."""
    return _PATH


# onnxruntime's exception names (onnxruntime.capi.onnxruntime_pybind11_state), each an OnyxError and,
# as onnxruntime's, neither a RuntimeError nor a ValueError nor a subclass of another of them.
class Fail(OnyxError):
    """The run failed or was stopped (terminated, timed out, past a cap)."""


class InvalidArgument(OnyxError):
    """A wrong argument: input names, types or shapes that do not fit the model."""


class NoSuchFile(OnyxError):
    """The model file cannot be read."""


class NoModel(OnyxError):
    """onnxruntime's name; onyx does not raise it."""


class EngineError(OnyxError):
    """onnxruntime's name; onyx does not raise it."""


class InvalidProtobuf(OnyxError):
    """The bytes are not an ONNX model."""


class ModelLoaded(OnyxError):
    """onnxruntime's name; onyx does not raise it."""


class InvalidGraph(OnyxError):
    """The model is malformed or inconsistent."""


class NotImplemented(OnyxError):  # noqa: A001 (onnxruntime's name)
    """Valid ONNX that onyx does not implement (op, type, device, option)."""


class RuntimeException(OnyxError):
    """A kernel failed on its data, or memory ran out."""


class EPFail(OnyxError):
    """The device (execution provider) is unknown or not usable."""


class ModelLoadCanceled(OnyxError):
    """onnxruntime's name; onyx does not raise it."""


class ModelRequiresCompilation(OnyxError):
    """onnxruntime's name; onyx does not raise it."""


class NotFound(OnyxError):
    """onnxruntime's name; onyx does not raise it."""


ORT_ERRORS = ('Fail', 'InvalidArgument', 'NoSuchFile', 'NoModel', 'EngineError', 'RuntimeException',
              'InvalidProtobuf', 'ModelLoaded', 'NotImplemented', 'InvalidGraph', 'EPFail',
              'ModelLoadCanceled', 'ModelRequiresCompilation', 'NotFound')


_CLASSES = {1: InvalidArgument, 2: InvalidGraph, 3: NotImplemented, 4: RuntimeException,
            5: NoSuchFile, 6: InvalidArgument, 7: RuntimeException, 8: EPFail, 9: Fail, 10: Fail,
            11: Fail}


def error(code):
    """The OnyxError for a failed call's status, with this thread's message."""
    message = lib.onyx_last_error().decode('utf-8', 'replace')
    cls = _CLASSES.get(code, OnyxError)
    if cls is InvalidGraph and 'not a valid ONNX ModelProto' in message:
        cls = InvalidProtobuf
    return cls(code, lib.onyx_status_name(code).decode(), message)


def check(code):
    if code != 0:
        raise error(code)


INT_MAX = 2**31 - 1        # the C int of thread counts
INT64_MAX = 2**63 - 1
SIZE_MAX = 2**64 - 1


def int_option(name, value, minimum=0, maximum=None):
    """`value` of option `name` as an int: an integer (numpy's too; not a float or a string) from
    `minimum` to `maximum` (None: no bound), else InvalidArgument naming the option and the value.
    Checked here because ctypes wraps an int that does not fit the C type without a word."""
    try:
        number = operator.index(value)
    except TypeError:
        raise InvalidArgument(1, 'ONYX_ERR_INVALID_ARGUMENT',
                              f'{name} must be an integer, got {value!r}') from None
    if number < minimum or (maximum is not None and number > maximum):
        bound = f'from {minimum} to {maximum}' if maximum is not None else f'>= {minimum}'
        raise InvalidArgument(1, 'ONYX_ERR_INVALID_ARGUMENT',
                              f'{name} must be {bound}, got {number}')
    return number


def threads_option(name, value):
    """A thread count for onyx_session_options_set_threads: None is 0 (all CPUs); negative is
    refused; past a C int it is INT_MAX, which the library clamps to the CPUs like any count past
    them (one place decides the clamp: backend/api_run.c)."""
    return 0 if value is None else min(int_option(name, value), INT_MAX)
