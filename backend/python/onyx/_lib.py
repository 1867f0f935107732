"""ctypes declarations of libonyx's C API (include/onyx.h) and the error type its statuses raise."""
import ctypes
import os

c_int64_p = ctypes.POINTER(ctypes.c_int64)
c_char_p_p = ctypes.POINTER(ctypes.c_char_p)


class OnyxError(RuntimeError):
    """A failure reported by libonyx: `status` is the status name (e.g. "ONYX_ERR_SHAPE"), `code`
    its number, and the message is the library's own (what failed and where)."""

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


class PrepareOptions(ctypes.Structure):
    _fields_ = [('device', ctypes.c_char_p), ('threads', ctypes.c_int),
                ('example_count', ctypes.c_size_t), ('example_names', c_char_p_p),
                ('examples', Value_pp), ('verbose', ctypes.c_int)]


class OutputInfo(ctypes.Structure):
    _fields_ = [('dtype', ctypes.c_int), ('rank', ctypes.c_int64), ('dims', c_int64_p)]


# Value kinds (onyx_value_kind).
KIND_NONE, KIND_TENSOR, KIND_SEQUENCE, KIND_OPTIONAL, KIND_MAP = range(5)
KIND_NAMES = {KIND_NONE: 'unknown', KIND_TENSOR: 'tensor', KIND_SEQUENCE: 'seq',
              KIND_OPTIONAL: 'optional', KIND_MAP: 'map'}


def _find_library():
    """$ONYX_LIB, else libonyx.so beside this package, else the build folder of the source tree
    this package sits in (backend/python/onyx → build/)."""
    env = os.environ.get('ONYX_LIB')
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (os.path.join(here, 'libonyx.so'),
                      os.path.join(here, '..', '..', '..', 'build', 'libonyx.so')):
        if os.path.exists(candidate):
            return os.path.normpath(candidate)
    raise OSError('libonyx.so not found: build it with `make` or set ONYX_LIB to its path')


def _declare(lib):
    sz, i64, i32, vp, cp = ctypes.c_size_t, ctypes.c_int64, ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p
    status = ctypes.c_int
    sigs = {
        'onyx_status_name': (cp, [status]),
        'onyx_last_error': (cp, []),
        'onyx_dtype_name': (cp, [i32]),
        'onyx_value_new_tensor': (status, [i32, sz, c_int64_p, vp, sz, ctypes.POINTER(Value_p)]),
        'onyx_value_wrap_tensor': (status, [i32, sz, c_int64_p, vp, sz, ctypes.POINTER(Value_p)]),
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
        'onyx_prepare_options_init': (None, [ctypes.POINTER(PrepareOptions)]),
        'onyx_prepare': (status, [ctypes.POINTER(Model), ctypes.POINTER(PrepareOptions),
                                  ctypes.POINTER(ctypes.POINTER(Rep))]),
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
    }
    for name, (restype, argtypes) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


lib = _declare(ctypes.CDLL(_find_library()))


def error(code):
    """The OnyxError for a failed call's status, with this thread's message."""
    return OnyxError(code, lib.onyx_status_name(code).decode(),
                     lib.onyx_last_error().decode('utf-8', 'replace'))


def check(code):
    if code != 0:
        raise error(code)
