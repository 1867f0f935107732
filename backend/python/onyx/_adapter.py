"""onnxruntime's LoRA adapter file (.onnx_adapter): read and written here, byte-compatible with
onnxruntime's. The file is a FlatBuffers buffer of onnxruntime's schema
(onnxruntime/lora/adapter_format/adapter_schema.fbs, file identifier "TORT"):

    table Adapter   { format_version:int; adapter_version:int; model_version:int;
                      parameters:[Parameter]; }
    table Parameter { name:string; dims:[int64]; data_type:TensorDataType (int32, ONNX's numbers);
                      raw_data:[uint8] (force_align: 8); }

Reading checks every offset and length against the buffer before use (as FlatBuffers' verifier), so
a truncated or foreign file is refused with a message saying what is wrong, never read past its end.
The parameters come back as numpy arrays sharing the file's bytes (read once)."""
import math
import os
import struct

import numpy as np

from ._values import numpy_dtype

IDENTIFIER = b'TORT'
FORMAT_VERSION = 1   # the only version onnxruntime writes and reads
# The element types onnxruntime's reader takes (its IsSupportedLoraParameterType): the numeric
# ones of the schema's enum; not strings, bools or complex numbers.
PARAMETER_TYPES = (1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 16, 17, 18, 19, 20)
INT32_MIN, INT32_MAX = -2 ** 31, 2 ** 31 - 1


class AdapterError(RuntimeError):
    """An adapter file that cannot be read or written. A RuntimeError, as onnxruntime raises for
    these: an `except RuntimeError` catches the same things under both engines."""


def check_version(what, value):
    """An int32 version number (the schema's `int`), else TypeError naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or \
            not INT32_MIN <= int(value) <= INT32_MAX:
        raise TypeError(f'{what} must be a 32-bit integer, got {value!r}')
    return int(value)


# ---------------------------------------------------------------- reading

class _Reader:
    """Bounds-checked access to a FlatBuffers buffer (little-endian)."""

    def __init__(self, data, where):
        self.data = data
        self.where = where

    def fail(self, what):
        raise AdapterError(f'{self.where}: not a valid onnxruntime adapter file ({what})')

    def u32(self, pos, what, align=4):
        if pos < 0 or pos + 4 > len(self.data):
            self.fail(f'{what} lies past the end of the file')
        if pos % align:
            self.fail(f'{what} is misaligned')
        return struct.unpack_from('<I', self.data, pos)[0]

    def target(self, pos, what):
        """The position a uoffset at `pos` points to."""
        return pos + self.u32(pos, what)

    def table(self, pos, what):
        """{field index: position of the field} of the table at `pos`, absent fields left out."""
        soffset = struct.unpack('<i', struct.pack('<I', self.u32(pos, what)))[0]
        vtable = pos - soffset
        if vtable < 0 or vtable + 4 > len(self.data) or vtable % 2:
            self.fail(f'the vtable of {what} lies outside the file')
        size, inline = struct.unpack_from('<HH', self.data, vtable)
        if size < 4 or size % 2 or vtable + size > len(self.data) or pos + inline > len(self.data):
            self.fail(f'the vtable of {what} is malformed')
        fields = {}
        for i in range((size - 4) // 2):
            off = struct.unpack_from('<H', self.data, vtable + 4 + 2 * i)[0]
            if off:
                if off < 4 or off + 4 > inline:
                    self.fail(f'field {i} of {what} lies outside its table')
                fields[i] = pos + off
        return fields

    def int32(self, fields, i, what):
        if i not in fields:
            return 0   # the schema's default
        return struct.unpack('<i', struct.pack('<I', self.u32(fields[i], what)))[0]

    def vector(self, fields, i, elem_size, what):
        """(position of the first element, count) of a vector field; (None, 0) when absent."""
        if i not in fields:
            return None, 0
        start = self.target(fields[i], what)
        count = self.u32(start, f'the length of {what}')
        if start + 4 + count * elem_size > len(self.data):
            self.fail(f'{what} ({count} elements) runs past the end of the file')
        return start + 4, count


def read_adapter_bytes(data, where):
    """(format_version, adapter_version, model_version, {name: numpy array}) of an adapter file's
    bytes; `where` names it in errors. The arrays are views of `data` where aligned."""
    data = np.frombuffer(data, dtype=np.uint8) if not isinstance(data, np.ndarray) else data
    r = _Reader(memoryview(data).cast('B'), where)
    if len(data) <= 8 or bytes(data[4:8]) != IDENTIFIER:
        r.fail(f'no "TORT" file identifier; {len(data)} bytes')
    root = r.target(0, 'the root offset')
    fields = r.table(root, 'the adapter table')
    fmt = r.int32(fields, 0, 'format_version')
    if fmt != FORMAT_VERSION:
        raise AdapterError(f'{where}: adapter format version {fmt} is not supported '
                           f'(onyx reads version {FORMAT_VERSION}, as onnxruntime)')
    adapter_version = r.int32(fields, 1, 'adapter_version')
    model_version = r.int32(fields, 2, 'model_version')
    first, count = r.vector(fields, 3, 4, 'the parameter list')
    params = {}
    for k in range(count):
        pos = r.target(first + 4 * k, f'parameter {k}')
        name, arr = _read_parameter(r, data, pos, k)
        if name in params:
            r.fail(f"parameter '{name}' is given twice")
        params[name] = arr
    return fmt, adapter_version, model_version, params


def _read_parameter(r, data, pos, k):
    fields = r.table(pos, f'parameter {k}')
    start, length = r.vector(fields, 0, 1, f'the name of parameter {k}')
    if start is None:
        name = ''
    else:
        if start + length >= len(r.data) or r.data[start + length] != 0:
            r.fail(f'the name of parameter {k} is not NUL-terminated')
        try:
            name = bytes(r.data[start:start + length]).decode('utf-8')
        except UnicodeDecodeError:
            r.fail(f'the name of parameter {k} is not UTF-8')
    label = f"parameter '{name}'"
    dims_at, rank = r.vector(fields, 1, 8, f'the dims of {label}')
    if not rank:   # onnxruntime's reader refuses these too
        raise AdapterError(f'{r.where}: {label} has no dims (onnxruntime adapters hold no scalars)')
    dims = struct.unpack_from(f'<{rank}q', r.data, dims_at)
    if any(d < 0 for d in dims):
        r.fail(f'{label} has a negative dimension {list(dims)}')
    code = r.int32(fields, 2, f'the data_type of {label}')
    if code not in PARAMETER_TYPES:
        raise AdapterError(f'{r.where}: {label} has data_type {code}, which is no LoRA parameter '
                           f'type (onnxruntime takes the numeric types {list(PARAMETER_TYPES)})')
    dtype = numpy_dtype(code).newbyteorder('<')
    raw_at, nbytes = r.vector(fields, 3, 1, f'the raw_data of {label}')
    count = math.prod(dims)   # Python ints: no overflow on absurd dims
    if nbytes != count * dtype.itemsize:
        r.fail(f'{label} is {dtype.name}{list(dims)}: {count * dtype.itemsize} bytes, '
               f'but holds {nbytes}')
    if raw_at is None or raw_at % dtype.alignment:
        arr = np.frombuffer(bytes(r.data[raw_at or 0:(raw_at or 0) + nbytes]), dtype=dtype)
    else:
        arr = data[raw_at:raw_at + nbytes].view(dtype)
    return name, arr.reshape(dims)


def read_adapter_file(path):
    """read_adapter_bytes of the file at `path` (a str or os.PathLike)."""
    path = os.fspath(path)
    try:
        data = np.fromfile(path, dtype=np.uint8)
    except OSError as e:
        raise AdapterError(f'cannot read adapter file {path!r}: {e.strerror or e}') from None
    return read_adapter_bytes(data, path)


# ---------------------------------------------------------------- writing

class _Writer:
    """Lays a FlatBuffers buffer out front to back: every uoffset points forward, as the format
    requires, and each object is aligned from the buffer's start (onnxruntime's verifier checks
    alignment there)."""

    def __init__(self):
        self.buf = bytearray()

    def align(self, n, then=0):
        """Pad so that the next write plus `then` bytes lands on a multiple of n."""
        while (len(self.buf) + then) % n:
            self.buf.append(0)

    def patch(self, at, target):
        struct.pack_into('<I', self.buf, at, target - at)

    def table(self, fields):
        """Writes a vtable then its table of 4-byte fields [(index, bytes)]; returns (table
        position, {index: position of the field})."""
        n = max((i for i, _ in fields), default=-1) + 1
        self.align(4, then=4 + 2 * n)   # the table (after the vtable) 4-aligned
        vtable = len(self.buf)
        inline = 4 + 4 * len(fields)
        offsets = [0] * n
        for slot, (i, _) in enumerate(fields):
            offsets[i] = 4 + 4 * slot
        self.buf += struct.pack(f'<HH{n}H', 4 + 2 * n, inline, *offsets)
        pos = len(self.buf)
        self.buf += struct.pack('<i', pos - vtable)
        where = {}
        for i, value in fields:
            where[i] = len(self.buf)
            self.buf += value
        return pos, where

    def vector(self, payload, count, align):
        """A vector's length then its payload, the payload aligned to `align`; returns its start."""
        self.align(max(align, 4), then=4)
        start = len(self.buf)
        self.buf += struct.pack('<I', count) + payload
        return start


def adapter_bytes(adapter_version, model_version, params):
    """The adapter file's bytes for {name: (ONNX element type, numpy array)}, as onnxruntime
    writes them."""
    w = _Writer()
    w.buf += b'\0\0\0\0' + IDENTIFIER
    root, root_fields = w.table([(0, struct.pack('<i', FORMAT_VERSION)),
                                 (1, struct.pack('<i', adapter_version)),
                                 (2, struct.pack('<i', model_version)),
                                 (3, b'\0' * 4)])
    w.patch(0, root)
    items = list(params.items())
    slots = w.vector(b'\0' * 4 * len(items), len(items), 4)
    w.patch(root_fields[3], slots)
    for k, (name, (code, arr)) in enumerate(items):
        table, fields = w.table([(0, b'\0' * 4), (1, b'\0' * 4), (2, struct.pack('<i', code)),
                                 (3, b'\0' * 4)])
        w.patch(slots + 4 + 4 * k, table)
        encoded = name.encode('utf-8')
        w.patch(fields[0], w.vector(encoded + b'\0', len(encoded), 4))
        w.patch(fields[1], w.vector(struct.pack(f'<{arr.ndim}q', *arr.shape), arr.ndim, 8))
        raw = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder('<'))
        w.patch(fields[3], w.vector(raw.tobytes(), raw.nbytes, 8))
    w.align(8)
    return bytes(w.buf)
