"""The raw tensor body of onyx.serve (Content-Type application/x-onyx-tensors): named arrays with
no archive around them, so that a replica decodes a request with np.frombuffer (views of the
body, no copy) and encodes an answer with one join, where npz goes through zipfile both ways.

    bytes 0-3   n, the header's length (uint32, little endian)
    bytes 4-    the header: n bytes of UTF-8 JSON, [[name, dtype, shape], ...], dtype a numpy
                name of a number or bool type ("float32", "int64", "bool", ...), shape a list
    then        each tensor's bytes in C order, little endian, in the header's order, each
                starting at a multiple of 64 bytes from the body's start (zero bytes between)

A body that is not this (too short, a header that is not such a list, an unknown dtype, data
shorter or longer than the shapes say) raises ValueError naming what is wrong.
"""
import json
import math
import struct

import numpy as np

CONTENT_TYPE = 'application/x-onyx-tensors'
_ALIGN = 64
_KINDS = 'biufc'   # bool, signed, unsigned, float, complex: what a raw buffer holds without objects


def _aligned(offset):
    return -(-offset // _ALIGN) * _ALIGN


def _dtype(name, tensor):
    try:
        dtype = np.dtype(name) if isinstance(name, str) else None
    except TypeError:
        dtype = None
    if dtype is None or dtype.kind not in _KINDS or dtype.fields is not None or dtype.subdtype is not None:
        raise ValueError(f'tensor {tensor!r}: dtype {name!r} is not a numpy number or bool type')
    return dtype.newbyteorder('<')


def encode(named):
    """The body for {name: array-like}."""
    arrays = [(str(n), np.asarray(a)) for n, a in named.items()]
    for n, a in arrays:
        _dtype(a.dtype.name, n)
    header = json.dumps([[n, a.dtype.name, list(a.shape)] for n, a in arrays]).encode()
    parts, end = [struct.pack('<I', len(header)), header], 4 + len(header)
    for _, a in arrays:
        start = _aligned(end)
        parts.append(bytes(start - end))
        data = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder('<'))
        parts.append(data.reshape(-1).view(np.uint8))
        end = start + data.nbytes
    return b''.join(parts)


def decode(body):
    """{name: read-only array viewing `body`} for a body that encode() wrote."""
    view = memoryview(body)
    if len(view) < 4:
        raise ValueError(f'{CONTENT_TYPE} body of {len(view)} bytes: shorter than its 4-byte header length')
    (n,) = struct.unpack_from('<I', view)
    if 4 + n > len(view):
        raise ValueError(f'{CONTENT_TYPE} header of {n} bytes does not fit in a body of {len(view)}')
    try:
        header = json.loads(bytes(view[4:4 + n]))
    except ValueError as e:
        raise ValueError(f'{CONTENT_TYPE} header is not JSON: {e}') from None
    if not isinstance(header, list):
        raise ValueError(f'{CONTENT_TYPE} header must be a list of [name, dtype, shape], not {type(header).__name__}')
    named, end = {}, 4 + n
    for entry in header:
        if not (isinstance(entry, list) and len(entry) == 3 and isinstance(entry[0], str)
                and isinstance(entry[2], list)
                and all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in entry[2])):
            raise ValueError(f'{CONTENT_TYPE} header entry {entry!r} is not [name, dtype, shape of counts]')
        name, dtype, shape = entry[0], _dtype(entry[1], entry[0]), entry[2]
        if name in named:
            raise ValueError(f'{CONTENT_TYPE} header names tensor {name!r} twice')
        start = _aligned(end)
        end = start + dtype.itemsize * math.prod(shape)
        if end > len(view):
            raise ValueError(f'tensor {name!r} ({dtype.name} {shape}) ends at byte {end}, '
                             f'past the body\'s {len(view)}')
        named[name] = np.frombuffer(view[start:end], dtype=dtype).reshape(shape)
    if end != len(view):
        raise ValueError(f'{CONTENT_TYPE} body has {len(view) - end} bytes after its last tensor')
    return named
