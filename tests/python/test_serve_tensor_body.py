"""onyx.serve's raw tensor body (application/x-onyx-tensors) without Ray: what encode writes,
decode reads back bit for bit as views of the body, and every malformed body is a ValueError
naming what is wrong (the replica answers it with a 400)."""
import json
import struct

import numpy as np
import pytest

from onyx import serve
from onyx._tensor_body import decode, encode


def _body(header, data=b''):
    raw = json.dumps(header).encode()
    return struct.pack('<I', len(raw)) + raw + data


def test_round_trip_is_exact_and_aligned():
    rng = np.random.default_rng(0)
    named = {'image': rng.standard_normal((1, 3, 5, 7)).astype(np.float32),
             'ids': rng.integers(-2**40, 2**40, (2, 12)),
             'mask': np.array([[True, False, True]]),
             'half': rng.standard_normal(5).astype(np.float16),
             'scalar': np.float64(2.5),
             'empty': np.zeros((0, 4), np.uint8)}
    body = encode(named)
    got = decode(body)
    assert list(got) == list(named)
    for name, want in named.items():
        a = got[name]
        assert a.dtype == np.asarray(want).dtype and a.shape == np.shape(want), name
        assert np.array_equal(a, want), name
        assert a.flags.c_contiguous and a.flags.aligned and not a.flags.writeable, name
        if a.size:
            # a view of the body, not a copy: its data lies inside the body at a 64-byte offset
            offset = a.ctypes.data - np.frombuffer(body, np.uint8).ctypes.data
            assert 0 < offset < len(body) and offset % 64 == 0, (name, offset)


def test_encode_takes_any_layout_and_byte_order():
    a = np.arange(12, dtype='>i4').reshape(3, 4).T        # big endian, not C order
    got = decode(encode({'a': a}))['a']
    assert got.dtype == np.dtype('<i4') and np.array_equal(got, a)


def test_public_names():
    assert serve.TENSORS == 'application/x-onyx-tensors'
    x = {'x': np.ones((2, 2), np.float32)}
    assert serve.encode_tensors(x) == encode(x)
    assert np.array_equal(serve.decode_tensors(encode(x))['x'], x['x'])


def test_encode_refuses_objects():
    with pytest.raises(ValueError, match="tensor 's': dtype 'object'"):
        encode({'s': np.array(['a', None], dtype=object)})


@pytest.mark.parametrize('body, message', [
    (b'\x01\x00', 'shorter than its 4-byte header length'),
    (struct.pack('<I', 100) + b'[]', 'header of 100 bytes does not fit in a body of 6'),
    (struct.pack('<I', 3) + b'[[[', 'header is not JSON'),
    (_body({'x': 1}), 'header must be a list'),
    (_body([['x', 'float32']]), "entry \\['x', 'float32'\\] is not \\[name, dtype, shape of counts\\]"),
    (_body([['x', 'float32', [2, -1]]]), 'is not \\[name, dtype, shape of counts\\]'),
    (_body([['x', 'float32', [2.0]]]), 'is not \\[name, dtype, shape of counts\\]'),
    (_body([['x', 'float33', [1]]]), "tensor 'x': dtype 'float33' is not a numpy number or bool type"),
    (_body([['x', 'object', [1]]]), "tensor 'x': dtype 'object'"),
    (_body([['x', 'U4', [1]]]), "tensor 'x': dtype 'U4'"),
    (_body([['x', 7, [1]]]), "tensor 'x': dtype 7"),
    (_body([['x', 'uint8', [1]], ['x', 'uint8', [1]]], bytes(100)), "names tensor 'x' twice"),
    (_body([['x', 'float32', [4]]], bytes(44)), "tensor 'x' \\(float32 \\[4\\]\\) ends at byte 80, past the body's 71"),
    (_body([['x', 'float32', [1 << 62, 1 << 62]]]), 'past the body'),
    (encode({'x': np.ones(3, np.int32)}) + b'\x00', '1 bytes after its last tensor'),
])
def test_malformed_bodies_name_the_fault(body, message):
    with pytest.raises(ValueError, match=message):
        decode(body)
