"""The fast path of one run from Python: numpy arrays of the inputs' own types in, tensors and
sequences of maps (ZipMap's) out. On small models (scikit-learn, LightGBM) the Python around the
run was most of a call's time, so what does not change between calls is worked out once per session
(a CallPlan), and a call is one library call, onyx_rep_run_export (include/onyx.h): the inputs go in
as records of words (the arrays lent, not copied), the outputs come back described in words with
their data copied into this thread's room, and are read from there (big tensors are adopted, not
copied). The run lets the GIL go; the few small accessors keep it (cheaper than letting it go).

Concurrent runs share only read-only things (the plan, its cache of wanted outputs); each thread has
rooms of its own, and a run inside a run takes another. Anything off the fast path (other input
types, missing or unknown names, device outputs, non-contiguous arrays) returns NOT_HANDLED before any
library call, and the general path in ort.py deals with it, with its checks and messages; outputs the
words cannot carry (strings, device tensors, big ones) are read from the values as before.
"""
import ctypes
import math
import struct
import threading

import numpy as np

from . import _lib
from ._lib import KIND_MAP, KIND_SEQUENCE, KIND_TENSOR, Value_p, lib
from ._values import (_NUMPY, _SUB_BYTE_BITS, ADOPT_MIN_BYTES, STRING, _Adopted, from_value, numpy_dtype,
                      unpack_sub_byte)

NOT_HANDLED = object()

_vp, _sz, _i32, _i64 = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int32, ctypes.c_int64
_KEEP_GIL = ctypes.PYFUNCTYPE      # short calls: no GIL release and reacquire around them
_FREE_GIL = ctypes.CFUNCTYPE       # the run: other Python threads go on meanwhile


def _fn(kind, name, restype, *argtypes):
    return kind(restype, *argtypes)((name, lib))


_wrap = _fn(_KEEP_GIL, 'onyx_value_wrap_tensor', _i32, _i32, _sz, _vp, _vp, _sz, _vp)
_value_free = _fn(_KEEP_GIL, 'onyx_value_free', None, _vp)
_values_free = _fn(_KEEP_GIL, 'onyx_values_free', None, _vp, _sz)
_get_info = _fn(_KEEP_GIL, 'onyx_tensor_get_info', _i32, _vp, _vp)
_export = _fn(_KEEP_GIL, 'onyx_values_export', _i32, _vp, _sz, _vp, _sz, _vp, _vp, _sz, _sz, _vp)
_run_export = _fn(_FREE_GIL, 'onyx_rep_run_export', _i32, _vp, _vp, _sz, _vp, _vp, _vp, _vp, _vp)

_string_at = ctypes.string_at
_addressof = ctypes.addressof
_ndarray = np.ndarray
_frombuffer = np.frombuffer

# onyx_tensor_info read as seven 64-bit words (include/onyx.h): dtype (an int, then padding), rank,
# dims, numel, data, nbytes, device. One slice of the array reads them all.
_INFO_WORDS = 7
assert ctypes.sizeof(_lib.TensorInfo) == 8 * _INFO_WORDS
_Info = _i64 * _INFO_WORDS
_DIMS = [struct.Struct(f'={r}q') for r in range(9)]   # a shape as the C int64 array it is
_RECORD = [struct.Struct(f'={4 + r}q') for r in range(9)]   # an input of rank r for onyx_rep_run_export
_DIMS_AT = [_i64 * r for r in range(9)]


def _cpu_device_name():
    """The address of the library's "CPU" device name, which onyx_tensor_get_info gives every host
    tensor: comparing it is cheaper than reading the string (another address: the general path)."""
    x = np.zeros(1, np.float32)
    out, info = _vp(), _Info()
    _lib.check(_wrap(1, 1, _DIMS[1].pack(1), x.ctypes.data, 4, _addressof(out)))
    try:
        _lib.check(_get_info(out.value, _addressof(info)))
        return info[6]
    finally:
        _value_free(out.value)


_CPU = _cpu_device_name()


def _array_interface_address(x):
    return x.__array_interface__['data'][0]


def _data_address_reader():
    """How to read an array's data address: from the array object itself (numpy's C struct keeps it
    right after the object header, a layout its ABI has fixed for years; one ctypes read instead of
    building __array_interface__'s dict), when this interpreter and numpy agree; else the interface."""
    read = ctypes.c_void_p.from_address
    offset = object.__basicsize__   # PyObject_HEAD: the struct's `data` member follows
    try:
        base = np.arange(12, dtype=np.float32).reshape(3, 4)
        samples = [base, base[1:], np.zeros(0, np.int64), np.ones((2, 2), np.float64), base.T.copy()]
        if all(read(id(a) + offset).value == a.__array_interface__['data'][0] for a in samples):
            return lambda x: read(id(x) + offset).value
    except Exception:   # noqa: BLE001 (any surprise: the documented way)
        pass
    return _array_interface_address


_data_address = _data_address_reader()
_DTYPES = {code: np.dtype(name) for code, name in _NUMPY.items() if code != STRING}


class CallPlan:
    """What a session's runs need that does not change between them."""

    def __init__(self, rep, inputs, outputs):
        self.rep = ctypes.cast(rep, _vp).value
        # (name, numpy dtype, onyx dtype code) of each input, in the graph's order: a fast call
        # gives all of them, every one a numeric tensor (else fast_count is -1: none)
        self.inputs = [(a.name, _DTYPES[a.dtype_code], a.dtype_code) for a in inputs
                       if a.kind_code == KIND_TENSOR and a.dtype_code in _DTYPES
                       and a.dtype_code not in _SUB_BYTE_BITS]
        self.fast_count = len(inputs) if len(self.inputs) == len(inputs) and len(inputs) <= 64 else -1
        # the C array of the input names in that order, made once: a call's records follow it,
        # whatever order its feed has (a feed of as many names, all of them found, has no other)
        encoded = [a.name.encode() for a in inputs]
        self._names = ((ctypes.c_char_p * max(len(encoded), 1))(*encoded), encoded)
        self.c_names = _addressof(self._names[0])
        self.output_kinds = [a.kind_code for a in outputs]
        self.output_index = {a.name: i for i, a in enumerate(outputs)}
        self.wanted = {}  # tuple of output names -> their indices

    def run(self, output_names, feed, options):
        """The outputs' Python values, or NOT_HANDLED (nothing done) when the call is off the fast
        path. `options`: the address of the run options, or None."""
        n = len(feed)
        if n != self.fast_count:
            return NOT_HANDLED
        if output_names:
            key = tuple(output_names)
            wanted = self.wanted.get(key)
            if wanted is None:
                index = self.output_index
                if not all(isinstance(o, str) and o in index for o in key):
                    return NOT_HANDLED
                wanted = [index[o] for o in key]
                if len(self.wanted) < 64:
                    self.wanted[key] = wanted
        else:
            wanted = _ALL
        # one record of words per input (include/onyx.h, onyx_rep_run_export); the arrays are lent
        # without a copy, and `arrays` keeps them alive through the run
        if n == 1:
            name, dtype, code = self.inputs[0]
            x = feed.get(name)
            if not _lendable(x, dtype):
                return NOT_HANDLED
            arrays = x
            records = _RECORD[x.ndim].pack(code, x.ndim, *x.shape, _data_address(x), x.nbytes)
        else:
            arrays, parts = [], []
            for name, dtype, code in self.inputs:
                x = feed.get(name)
                if not _lendable(x, dtype):
                    return NOT_HANDLED
                arrays.append(x)
                parts.append(_RECORD[x.ndim].pack(code, x.ndim, *x.shape, _data_address(x), x.nbytes))
            records = b''.join(parts)
        free = _BUFFERS.free   # this thread's rooms not in use (a run inside a run, from a callback,
        room_set = free.pop() if free else _room_set()   # takes a new one)
        try:
            words, data, tail, tail_address = room_set[:4]
            status = _run_export(self.rep, options, n, self.c_names, records,
                                 tail_address, tail_address + _RESULT_AT, tail_address + _RESULT_AT + 8)
            if status:
                raise _lib.error(status)
            nwords, nbytes, count, outs = _read_tail(tail, _USED_AT)
            try:
                if nwords > room_set[4] or nbytes > room_set[5]:   # more than the room: again, with
                    grown = _room_set(max(nwords, room_set[4]), max(nbytes, room_set[5]))   # enough
                    words, data, tail = grown[:3]
                    sizes = _Sizes()
                    _lib.check(_export(outs, count, grown[6], nwords, _addressof(sizes), grown[7],
                                       nbytes, ADOPT_MIN_BYTES - 1, _addressof(sizes) + 8))
                    if nwords <= _WORDS_KEPT and nbytes <= _BYTES_KEPT:   # the next call fits
                        room_set = grown
                w = words[:nwords].tolist()
                return _read_outputs(w, data, outs, count, wanted)
            finally:
                if outs:
                    _values_free(outs, count)
        finally:
            free.append(room_set)


def _lendable(x, dtype):
    """Whether x is an array the run may read in place: the input's dtype, C order, aligned."""
    if type(x) is not _ndarray or (x.dtype is not dtype and x.dtype != dtype) or x.ndim > 8:
        return False
    flags = x.flags
    return flags.c_contiguous and flags.aligned


# A call's first try at reading its outputs: room for this many words and bytes; a call that needs
# more grows its thread's room (up to the _KEPT sizes: ZipMap's rows of a batch of hundreds).
_WORDS, _BYTES = 128, 1024
_WORDS_KEPT, _BYTES_KEPT = 1 << 16, 1 << 20
_Sizes = _sz * 2
# A room set's tail: onyx_export_room (words, word_capacity, bytes, byte_capacity, copy_limit,
# words_used, bytes_used), then the run's output count and outputs; read back in one unpack.
_ROOM_WORDS = 7
_USED_AT, _RESULT_AT = 5 * 8, _ROOM_WORDS * 8
_read_tail = struct.Struct('=QQQQ').unpack_from   # words_used, bytes_used, count, outputs (0: none)


def _room_set(word_capacity=_WORDS, byte_capacity=_BYTES):
    """Room for a run's exported outputs and its results: (words, bytes, tail, tail address, word
    capacity, byte capacity, words address, bytes address, pins); the words and the tail are
    bytearrays read back through a memoryview and a struct (cheaper than ctypes arrays), pinned for
    their addresses. A run copies what it reads out of them, so the next run on the same thread may
    reuse them."""
    words, data = bytearray(8 * word_capacity), bytearray(byte_capacity)
    tail = bytearray(8 * (_ROOM_WORDS + 2))
    pins = [(ctypes.c_char * len(b)).from_buffer(b) for b in (words, data, tail)]
    addresses = [_addressof(pin) for pin in pins]
    struct.pack_into('=7Q', tail, 0, addresses[0], word_capacity, addresses[1], byte_capacity,
                     ADOPT_MIN_BYTES - 1, 0, 0)
    return (memoryview(words).cast('q'), data, tail, addresses[2], word_capacity, byte_capacity,
            addresses[0], addresses[1], pins)


class _Buffers(threading.local):
    """Each thread's room sets not in use."""

    def __init__(self):
        self.free = [_room_set()]


_BUFFERS = _Buffers()


def _read_outputs(w, data, outs, count, wanted):
    """The values exported in words w and bytes data (data is only sliced: copies leave it)."""
    if count == 1 or wanted is _ALL:   # most calls: read in order, tensors and ZipMap rows inline
        results, at = [], 0
        for index in range(count):
            kind = w[at]
            if kind == _TENSOR:
                code, rank = w[at + 1], w[at + 2]
                offset = w[at + 3 + rank]
                dtype = _COPIED.get(code)
                if offset >= 0 and dtype is not None:
                    array = _frombuffer(data[offset:offset + w[at + 4 + rank]], dtype)
                    results.append(array if rank == 1 else array.reshape(w[at + 3:at + 3 + rank]))
                    at += 5 + rank
                    continue
            elif kind == _ROWS:
                rows = _map_rows(w, at, data)
                if rows is not None:
                    results.append(rows)
                    at += _ROWS_WORDS
                    continue
            reader = _Reader(w, data, outs)   # the rest, one by one
            reader.at = at
            results.extend(reader.value(i) for i in range(index, count))
            break
        return results if wanted is _ALL else [results[i] for i in wanted]
    reader = _Reader(w, data, outs)
    values = [reader.value(i) for i in range(count)]
    return [values[i] for i in wanted]


_ALL = object()   # all outputs, in order
_COPIED = {code: dtype for code, dtype in _DTYPES.items() if code not in _SUB_BYTE_BITS}
_STRUCTS = {}   # (dtype code, count) -> the struct of that many numbers: read in one step
_FORMATS = {1: 'f', 2: 'B', 3: 'b', 4: 'H', 5: 'h', 6: 'i', 7: 'q', 9: '?', 11: 'd', 12: 'I', 13: 'Q'}


def _struct(code, n):
    """The struct of n numbers of dtype `code` (read as ndarray.tolist() gives them), or None for a
    dtype without a struct format (float16, complex, ...)."""
    s = _STRUCTS.get((code, n))
    if s is None:
        fmt = _FORMATS.get(code)
        if fmt is None:
            return None
        s = struct.Struct(f'={n}{fmt}')
        if len(_STRUCTS) < 256:
            _STRUCTS[code, n] = s
    return s


def _map_rows(w, at, data):
    """The maps described as ONYX_EXPORT_MAP_ROWS at w[at:] (ZipMap's output: keys once, a matrix
    of values) as a list of dicts; None for types struct cannot read (then the reader does)."""
    # 5, count, keys (1, dtype, 1, n, offset, nbytes), values (1, dtype, 2, count, n, offset, nbytes)
    count, n = w[at + 1], w[at + 5]
    key_struct, row_struct = _struct(w[at + 3], n), _struct(w[at + 9], n)
    if key_struct is None or row_struct is None:
        return None
    keys = key_struct.unpack_from(data, w[at + 6])
    make = _ROW_MAKERS.get(keys)
    if make is None:
        make = _row_maker(keys)
        if len(_ROW_MAKERS) < 64:
            _ROW_MAKERS[keys] = make
    if count == 1 or not n:
        return make((row_struct.unpack_from(data, w[at + 13]),) * count)
    # each row straight from the bytes as a tuple of Python numbers (no array, no lists)
    offset = w[at + 13]
    return make(row_struct.iter_unpack(memoryview(data)[offset:offset + count * row_struct.size]))


_ROWS_WORDS = 15   # the words of an ONYX_EXPORT_MAP_ROWS description
_ROW_MAKERS = {}   # keys -> their row maker


def _row_maker(keys):
    """A function from rows of values (sequences of len(keys) numbers) to a list of dicts of these
    keys. Integer keys (ZipMap's classes): a list comprehension of a dict display with the keys as
    constants, compiled once per key set; Python builds dicts fastest that way (about 2.5 times
    dict(zip(keys, row)) per row). The source holds only the integers' reprs and made-up names."""
    if not keys or len(keys) > 256 or any(type(k) is not int for k in keys):
        return lambda rows: [dict(zip(keys, row)) for row in rows]
    names = [f'v{i}' for i in range(len(keys))]
    entries = ', '.join(f'{k!r}: {name}' for k, name in zip(keys, names))
    return eval(f'lambda rows: [{{{entries}}} for {", ".join(names)}, in rows]', {})   # noqa: S307


_TENSOR, _SEQ, _OPT, _MAP, _ROWS = KIND_TENSOR, KIND_SEQUENCE, 3, KIND_MAP, 5


class _Reader:
    """Reads onyx_values_export's words back into Python values: arrays over copies of their bytes
    (writable, as onnxruntime's outputs are), lists, dicts, None. A tensor it did not copy (large,
    strings, device memory) is read from the value itself: large host ones are adopted (the array
    owns the value, whose slot in `outs` is cleared so that the caller's free skips it)."""

    __slots__ = ('words', 'data', 'outs', 'at')

    def __init__(self, words, data, outs):
        self.words, self.data, self.outs, self.at = words, data, outs, 0

    def value(self, index):
        start = self.at
        try:
            return self._read(index)
        except _Nested:
            self.at = start
            self._skip()
            return from_value(ctypes.cast(ctypes.c_void_p.from_address(self.outs + 8 * index).value, Value_p))

    def _skip(self):
        w, at = self.words, self.at
        kind = w[at]
        if kind == _TENSOR:
            self.at = at + 5 + w[at + 2]
        elif kind == _SEQ:
            self.at = at + 2
            for _ in range(w[at + 1]):
                self._skip()
        elif kind == _MAP:
            self.at = at + 1
            self._skip()
            self._skip()
        elif kind == _OPT:
            self.at = at + 2
            if w[at + 1]:
                self._skip()
        elif kind == _ROWS:
            self.at = at + 2
            self._skip()
            self._skip()
        else:
            self.at = at + 1

    def _read(self, index=None):
        w, at = self.words, self.at
        kind = w[at]
        if kind == _TENSOR:
            code, rank = w[at + 1], w[at + 2]
            shape = tuple(w[at + 3:at + 3 + rank])
            offset, nbytes = w[at + 3 + rank], w[at + 4 + rank]
            self.at = at + 5 + rank
            if offset >= 0:   # copied (then the run may have freed the outputs: outs is NULL)
                packed = self.data[offset:offset + nbytes]
                if code in _SUB_BYTE_BITS:
                    return unpack_sub_byte(packed, code, math.prod(shape), shape)
                dtype = _DTYPES.get(code)
                return _frombuffer(packed, numpy_dtype(code) if dtype is None else dtype).reshape(shape)
            return self._uncopied(index, at)
        if kind == _SEQ:
            count = w[at + 1]
            self.at = at + 2
            if count and w[at + 2] == _MAP:
                return self._maps(count)
            return [self._read() for _ in range(count)]
        if kind == _MAP:
            self.at = at + 1
            keys, values = self._read(), self._read()
            return dict(zip(keys.tolist(), values.tolist()))
        if kind == _OPT:
            self.at = at + 2
            return self._read() if w[at + 1] else None
        if kind == _ROWS:
            self.at = at + 2
            keys, values = self._read(), self._read()
            keys = keys.tolist()
            return [dict(zip(keys, row)) for row in values.tolist()]
        raise _Nested(at)   # no Python equivalent: the general reader says so

    def _maps(self, count):
        """A sequence of maps (ZipMap's rows) as a list of dicts."""
        rows = []
        for _ in range(count):
            self.at += 1   # the map's kind
            keys, values = self._read(), self._read()
            rows.append(dict(zip(keys.tolist(), values.tolist())))
        return rows

    def _uncopied(self, index, at):
        """A tensor whose data was not copied; index: the output's, when it is one (else nested)."""
        if index is not None:
            ptr = ctypes.c_void_p.from_address(self.outs + 8 * index).value
            value, adopted = _tensor(ptr)
            if adopted:
                ctypes.c_void_p.from_address(self.outs + 8 * index).value = None
            return value
        raise _Nested(at)


class _Nested(Exception):
    """A nested tensor that was not copied (a string map key, a large item of a sequence): the
    whole output is read by the general reader instead."""


def _tensor(v):
    """(array, adopted) for a tensor output: copied when small, else adopted (its storage becomes
    the array's, and the caller must not free the value)."""
    info = _Info()
    if _get_info(v, _addressof(info)):
        return from_value(ctypes.cast(v, Value_p)), False
    code, rank, dims, _numel, data, nbytes, device = info[:]
    code &= 0xffffffff
    dtype = _DTYPES.get(code)
    if device != _CPU or dtype is None or code in _SUB_BYTE_BITS or rank > 8:
        return from_value(ctypes.cast(v, Value_p)), False
    shape = tuple(_DIMS_AT[rank].from_address(dims)) if rank else ()
    if not nbytes:
        return np.zeros(shape, dtype), False
    if nbytes >= ADOPT_MIN_BYTES:
        raw = np.asarray(_Adopted(ctypes.cast(v, Value_p), data, nbytes))
        return raw.view(dtype).reshape(shape), True
    # one copy into a bytearray: the array over it is writable, as onnxruntime's outputs are
    return _frombuffer(bytearray(_string_at(data, nbytes)), dtype).reshape(shape), False


__all__ = ['CallPlan', 'NOT_HANDLED']
