"""Conversions between Python values (numpy arrays, lists for sequences, None for empty optionals)
and libonyx values. Plain numeric arrays are lent to the library without a copy."""
import ctypes

import numpy as np

from ._lib import (KIND_MAP, KIND_OPTIONAL, KIND_SEQUENCE, KIND_TENSOR, TensorInfo, Value_p,
                   Value_pp, c_char_p_p, c_int64_p, check, lib)

# onyx dtype number (= onnx.TensorProto.DataType) → numpy type name; the names that numpy lacks
# come from ml_dtypes (a dependency of onnx), loaded only when one of them is used.
_NUMPY = {1: 'float32', 2: 'uint8', 3: 'int8', 4: 'uint16', 5: 'int16', 6: 'int32', 7: 'int64',
          8: 'object', 9: 'bool', 10: 'float16', 11: 'float64', 12: 'uint32', 13: 'uint64',
          14: 'complex64', 15: 'complex128'}
_ML_DTYPES = {16: 'bfloat16', 17: 'float8_e4m3fn', 18: 'float8_e4m3fnuz', 19: 'float8_e5m2',
              20: 'float8_e5m2fnuz', 21: 'uint4', 22: 'int4', 23: 'float4_e2m1fn',
              24: 'float8_e8m0fnu', 25: 'uint2', 26: 'int2', 27: 'float6_e2m3fn',
              28: 'float6_e3m2fn'}
# Types onyx packs as ONNX's raw_data does: element i in bits [i*b, (i+1)*b) of a little-endian bit
# stream (a 6-bit one may span two bytes); ml_dtypes keeps one per byte.
_SUB_BYTE_BITS = {21: 4, 22: 4, 23: 4, 25: 2, 26: 2, 27: 6, 28: 6}
STRING = 8


def numpy_dtype(code):
    """The numpy dtype of an onyx dtype number."""
    if code in _NUMPY:
        return np.dtype(_NUMPY[code])
    if code in _ML_DTYPES:
        import ml_dtypes
        return np.dtype(getattr(ml_dtypes, _ML_DTYPES[code]))
    raise TypeError(f'onyx dtype {code} has no numpy equivalent')


_CODE_OF = {}   # numpy dtype -> onyx dtype number, filled as dtypes are met


def dtype_code(dtype):
    """The onyx dtype number of a numpy dtype."""
    code = _CODE_OF.get(dtype)
    if code is None:
        code = _find_code(np.dtype(dtype))
        if len(_CODE_OF) < 256:   # string dtypes differ by length: bounded
            _CODE_OF[dtype] = code
    return code


def _find_code(dtype):
    if dtype.kind in 'OUS' or dtype.type is np.void:   # np.void: raw bytes, taken as strings
        # (ml_dtypes' types are of kind 'V' too, but not np.void)
        return STRING
    for code, name in _NUMPY.items():
        if dtype == np.dtype(name):
            return code
    for code, name in _ML_DTYPES.items():
        if dtype.name == name:
            return code
    raise TypeError(f'numpy dtype {dtype} has no ONNX element type')


def _pack(raw, bits):
    """One element per byte → a `bits`-bit stream, low bits first (ceil(n * bits / 8) bytes)."""
    stream = np.unpackbits(raw.reshape(-1, 1), axis=1, count=bits, bitorder='little')
    return np.packbits(stream.reshape(-1), bitorder='little')


def _unpack(packed, bits, count):
    stream = np.unpackbits(packed, count=count * bits, bitorder='little')
    return np.packbits(stream.reshape(count, bits), axis=1, bitorder='little').reshape(count)


def _dims(shape):
    return (ctypes.c_int64 * max(len(shape), 1))(*shape)


class Arena:
    """Keeps what the library borrows alive for one call, and frees the values made for it."""

    def __init__(self):
        self.keep = []
        self.owned = []

    def free(self):
        for v in self.owned:
            lib.onyx_value_free(v)
        self.owned.clear()
        self.keep.clear()


def _tensor(x, arena):
    out = Value_p()
    if type(x) is np.ndarray and x.flags.c_contiguous and x.flags.aligned and x.dtype.kind not in 'OUS' \
            and x.dtype.type is not np.void:
        code = dtype_code(x.dtype)
        if code not in _SUB_BYTE_BITS:   # the common case, without the checks below
            arena.keep.append(x)   # lent without a copy: must outlive the call
            check(lib.onyx_value_wrap_tensor(code, x.ndim, _dims(x.shape), x.ctypes.data if x.nbytes else None,
                                             x.nbytes, ctypes.byref(out)))
            return out
    if isinstance(x, np.ndarray) and (x.dtype.kind in 'OUS' or x.dtype.type is np.void) or \
            isinstance(x, (str, bytes)):
        # np.void items are raw bytes (as onnxruntime reads them)
        x = np.asarray(x, dtype=object)
        items = [s if isinstance(s, bytes) else s.tobytes() if isinstance(s, np.void) else
                 str(s).encode('utf-8') for s in x.reshape(-1)]
        strings = (ctypes.c_char_p * max(len(items), 1))(*items)
        check(lib.onyx_value_new_string_tensor(x.ndim, _dims(x.shape), strings, ctypes.byref(out)))
        return out
    x = np.asarray(x)
    code = dtype_code(x.dtype)
    if code in _SUB_BYTE_BITS:
        packed = _pack(np.ascontiguousarray(x).view(np.uint8), _SUB_BYTE_BITS[code])
        check(lib.onyx_value_new_tensor(code, x.ndim, _dims(x.shape), packed.ctypes.data,
                                        packed.nbytes, ctypes.byref(out)))
        return out
    if not x.flags.c_contiguous or not x.flags.aligned:
        x = np.ascontiguousarray(x)
    arena.keep.append(x)  # lent without a copy: must outlive the call
    check(lib.onyx_value_wrap_tensor(code, x.ndim, _dims(x.shape), x.ctypes.data if x.nbytes else None,
                                     x.nbytes, ctypes.byref(out)))
    return out


def _unowned(x, kind, arena, elem_dtype=0):
    """A new value for x (the caller takes ownership)."""
    if kind == KIND_OPTIONAL:
        item = None if x is None else _unowned(x, KIND_SEQUENCE if isinstance(x, list) else KIND_TENSOR,
                                               arena, elem_dtype)
        out = Value_p()
        code = lib.onyx_value_new_optional(item, ctypes.byref(out))
        if code != 0:
            lib.onyx_value_free(item)
            check(code)
        return out
    if isinstance(x, dict):
        keys = list(x)
        key_array = np.array(keys, dtype=object if keys and isinstance(keys[0], str) else np.int64)
        k = _unowned(key_array, KIND_TENSOR, arena)
        try:
            values = _unowned(np.array(list(x.values())), KIND_TENSOR, arena)
        except BaseException:
            lib.onyx_value_free(k)
            raise
        out = Value_p()
        code = lib.onyx_value_new_map(k, values, ctypes.byref(out))
        if code != 0:
            lib.onyx_value_free(k)
            lib.onyx_value_free(values)
            check(code)
        return out
    if isinstance(x, (list, tuple)):
        items = []
        try:
            for item in x:
                items.append(_unowned(item, KIND_TENSOR, arena))
            arr = (Value_p * max(len(items), 1))(*items)
            if items:
                elem_dtype = lib.onyx_tensor_dtype(items[0])
            out = Value_p()
            check(lib.onyx_value_new_sequence(elem_dtype, len(items), arr, ctypes.byref(out)))
            return out
        except BaseException:
            for item in items:
                lib.onyx_value_free(item)
            raise
    if x is None:
        raise TypeError('None is only allowed for an optional input')
    return _tensor(x, arena)


def to_value(x, arena, kind=0, elem_dtype=0):
    """A library value for the Python value x, freed with the arena. `kind` is the declared kind of
    the input (0: from x itself)."""
    if kind not in (KIND_OPTIONAL,):
        kind = KIND_SEQUENCE if isinstance(x, (list, tuple)) else KIND_MAP if isinstance(x, dict) else KIND_TENSOR
    v = _unowned(x, kind, arena, elem_dtype)
    arena.owned.append(v)
    return v


_RAW = {}


def _raw():
    """The library's accessors that _maps calls per map, typed with plain addresses (c_void_p),
    which ctypes passes faster than Value_p pointers; and memmove."""
    if not _RAW:
        vp, sz = ctypes.c_void_p, ctypes.c_size_t
        for name, restype, argtypes in (('onyx_sequence_at', vp, (vp, sz)), ('onyx_map_keys', vp, (vp,)),
                                        ('onyx_map_values', vp, (vp,)),
                                        ('onyx_tensor_dtype', ctypes.c_int32, (vp,)),
                                        ('onyx_tensor_numel', ctypes.c_int64, (vp,)),
                                        ('onyx_tensor_data', vp, (vp,))):
            _RAW[name] = ctypes.CFUNCTYPE(restype, *argtypes)((name, lib))
        _RAW['memmove'] = ctypes.memmove
    return _RAW


def _maps(v, count):
    """A sequence of maps (ZipMap's output: one dict per row) read in bulk: the maps' values (and
    numeric keys) are copied into one numpy array each, one memmove per map, and converted at once;
    keys that are the same in every map (ZipMap's) become one list. None when the maps are not of
    numeric values with numeric or string keys (from_value then reads them one by one)."""
    r = _raw()
    at, keys_of, values_of = r['onyx_sequence_at'], r['onyx_map_keys'], r['onyx_map_values']
    dtype_of, numel_of, data_of = r['onyx_tensor_dtype'], r['onyx_tensor_numel'], r['onyx_tensor_data']
    memmove = r['memmove']
    seq = ctypes.cast(v, ctypes.c_void_p).value
    first = at(seq, 0)
    kcode, vcode = dtype_of(keys_of(first)), dtype_of(values_of(first))
    if vcode == STRING or vcode not in _NUMPY or (kcode != STRING and kcode not in _NUMPY):
        return None
    keys, values, sizes = [], [], []
    for i in range(count):
        m = at(seq, i)
        k, x = keys_of(m), values_of(m)
        if dtype_of(k) != kcode or dtype_of(x) != vcode:
            return None
        keys.append(k)
        values.append(x)
        sizes.append(numel_of(k))  # a map's keys and values have one length
    total = sum(sizes)

    def gather(tensors, dtype):
        out = np.empty(total, dtype)
        at_byte, size = out.ctypes.data, dtype.itemsize
        for t, n in zip(tensors, sizes):
            if n:
                memmove(at_byte, data_of(t), n * size)
                at_byte += n * size
        return out

    flat = gather(values, numpy_dtype(vcode)).tolist()
    if kcode == STRING:
        key_rows = [[b.decode('utf-8') for b in ctypes.cast(data_of(k), c_char_p_p)[:n]] if n else []
                    for k, n in zip(keys, sizes)]
    else:
        kflat = gather(keys, numpy_dtype(kcode))
        n0 = sizes[0]
        if sizes == [n0] * count and (kflat.reshape(count, n0) == kflat[:n0]).all():
            key_rows = [kflat[:n0].tolist()] * count
        else:
            bounds = np.cumsum([0] + sizes)
            key_rows = [kflat[bounds[i]:bounds[i + 1]].tolist() for i in range(count)]
    out, start = [], 0
    for row, n in zip(key_rows, sizes):
        out.append(dict(zip(row, flat[start:start + n])))
        start += n
    return out


def from_value(v):
    """The Python value of a library value (copied out): an array, a list, or None."""
    kind = lib.onyx_value_kind_of(v)
    if kind == KIND_SEQUENCE:
        count = lib.onyx_sequence_length(v)
        if count and lib.onyx_value_kind_of(lib.onyx_sequence_at(v, 0)) == KIND_MAP:
            maps = _maps(v, count)
            if maps is not None:
                return maps
        return [from_value(lib.onyx_sequence_at(v, i)) for i in range(count)]
    if kind == KIND_OPTIONAL:
        return from_value(lib.onyx_optional_value(v)) if lib.onyx_optional_has_value(v) else None
    if kind == KIND_MAP:
        keys = from_value(lib.onyx_map_keys(v)).tolist()
        values = from_value(lib.onyx_map_values(v)).tolist()
        return dict(zip(keys, values))
    if kind != KIND_TENSOR:
        raise TypeError(f'onyx value kind {kind} has no Python equivalent')
    info = TensorInfo()   # one call for what took seven (each ctypes call costs about 1 us)
    check(lib.onyx_tensor_get_info(v, ctypes.byref(info)))
    return _tensor_value(v, info)


def _tensor_value(v, info):
    """The array of tensor value v, described by info (onyx_tensor_get_info), copied out."""
    if info.device != b'CPU':   # device memory: read through a host copy
        host = Value_p()
        check(lib.onyx_value_copy_to_device(v, b'CPU', ctypes.byref(host)))
        try:
            return from_value(host)
        finally:
            lib.onyx_value_free(host)
    code, count, data, nbytes = info.dtype, info.numel, info.data, info.nbytes
    shape = tuple(info.dims[:info.rank])
    dtype = numpy_dtype(code)
    if code == STRING:
        ptrs = ctypes.cast(data, c_char_p_p) if count else None
        out = np.empty(count, dtype=object)
        for i in range(count):
            out[i] = ptrs[i].decode('utf-8')
        return out.reshape(shape)
    if not nbytes:
        return np.zeros(shape, dtype)
    # over the storage, then copied: cheaper than memmove into a new array's ctypes address
    raw = np.frombuffer((ctypes.c_char * nbytes).from_address(data), np.uint8)
    if code in _SUB_BYTE_BITS:
        return unpack_sub_byte(raw, code, count, shape)
    return raw.copy().view(dtype).reshape(shape)


def unpack_sub_byte(packed, code, count, shape):
    """A new array of `count` elements of sub-byte dtype `code` (one per byte, as ml_dtypes keeps
    them) from their packed bits (a bytes-like object or uint8 array)."""
    raw = _unpack(np.frombuffer(packed, np.uint8), _SUB_BYTE_BITS[code], count)
    return raw.view(numpy_dtype(code)).reshape(shape)


def target_value(x, arena):
    """A library value over array x's memory, for a run to write an output into (onyx_rep_run_into
    in include/onyx.h); None when x cannot take one where it is (not a writable, C-ordered,
    aligned numpy array of numbers): the caller then copies the output into it."""
    if type(x) is not np.ndarray or x.dtype.kind not in 'biufc' or not (
            x.flags.c_contiguous and x.flags.aligned and x.flags.writeable):
        return None
    try:
        code = dtype_code(x.dtype)
    except TypeError:
        return None
    if code in _SUB_BYTE_BITS:
        return None
    return to_value(x, arena, KIND_TENSOR)


def values_array(values):
    return (Value_p * max(len(values), 1))(*values)


# Outputs of at least this many bytes are handed over without a copy: below it, copying costs
# less than the object that keeps the library's value alive.
ADOPT_MIN_BYTES = 1 << 16


class _Adopted:
    """Owns a run's output value for the numpy array made over its storage (the array's base):
    the value is freed when the last array over it goes."""
    __slots__ = ('handle', '__array_interface__')

    def __init__(self, handle, data, nbytes):
        self.handle = handle
        self.__array_interface__ = {'version': 3, 'shape': (nbytes,), 'typestr': '|u1',
                                    'data': (data, False)}

    def __del__(self):
        if lib is not None:   # None only while the interpreter shuts down
            lib.onyx_value_free(self.handle)


def take_output(outputs, i):
    """The Python value of output i of a run. A large tensor in host memory becomes the storage of
    its numpy array (a run's outputs own their storage: include/onyx.h), and outputs[i] is set to
    None; anything else is copied out and stays in `outputs` for the caller to free."""
    v = outputs[i]
    if not v:   # written into the caller's target (onyx_rep_run_into)
        return None
    info = TensorInfo()
    if lib.onyx_tensor_get_info(v, ctypes.byref(info)) != 0:   # no tensor
        return from_value(v)
    if (info.device == b'CPU' and info.nbytes >= ADOPT_MIN_BYTES and info.dtype != STRING
            and info.dtype not in _SUB_BYTE_BITS):
        dtype = numpy_dtype(info.dtype)
        raw = np.asarray(_Adopted(ctypes.cast(v, Value_p), info.data, info.nbytes))
        outputs[i] = None
        return raw.view(dtype).reshape(tuple(info.dims[:info.rank]))
    return _tensor_value(v, info)


def take_outputs(outputs, count):
    """Python values of a run's outputs; frees them (or hands them to their arrays)."""
    try:
        return [take_output(outputs, i) for i in range(count)]
    finally:
        lib.onyx_values_free(outputs, count)


__all__ = ['Arena', 'to_value', 'from_value', 'numpy_dtype', 'dtype_code', 'values_array', 'target_value',
           'take_output', 'take_outputs', 'c_int64_p', 'Value_pp']
