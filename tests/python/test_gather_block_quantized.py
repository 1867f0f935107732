"""com.microsoft.GatherBlockQuantized (the embedding of a tied int4 lm_head, as onnxruntime-genai's
builder writes it): random tables over the data types (int4, uint4, uint8 holding 2/4/8-bit codes,
float8, float4), axes, block sizes, with and without zero points, int32 and int64 indices
(negative and out of range), float and float16 scales, each run by onyx and by onnxruntime's CPU
provider: the output must be bit-identical (it is a dequantization: one product per element).
bfloat16 scales, which onnxruntime does not take, against numpy; malformed nodes refused."""
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

import onyx

MS = 'com.microsoft'
rng = np.random.default_rng(34)


def pack(codes, bits):
    """codes (unsigned, last axis a multiple of 8 // bits) packed low bits first along it"""
    per = 8 // bits
    c = codes.reshape(*codes.shape[:-1], codes.shape[-1] // per, per).astype(np.uint8)
    out = np.zeros(c.shape[:-1], np.uint8)
    for t in range(per):
        out |= (c[..., t] & ((1 << bits) - 1)) << (t * bits)
    return out


def int4_tensor(name, vals, dtype):
    return h.make_tensor(name, dtype, vals.shape, vals.flatten().tolist())


def gbq_model(data, idx_t, scales, zp=None, out_t=TP.FLOAT, **attrs):
    """data/zp: TensorProtos; scales: array; indices a graph input"""
    inits = [data, nh.from_array(scales, 'scales')]
    ins = ['data', 'idx', 'scales']
    if zp is not None:
        inits.append(zp)
        ins.append('zp')
    node = h.make_node('GatherBlockQuantized', ins, ['y'], domain=MS, name='subject', **attrs)
    g = h.make_graph([node], 'g', [h.make_tensor_value_info('idx', idx_t, None)],
                     [h.make_tensor_value_info('y', out_t, None)], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid('', 21), h.make_opsetid(MS, 1)])


def run_both(m, idx):
    so = ort.SessionOptions()
    so.log_severity_level = 3
    want = ort.InferenceSession(m.SerializeToString(), so,
                                providers=['CPUExecutionProvider']).run(None, {'idx': idx})[0]
    got = onyx.Session(m.SerializeToString(), threads=2).run(None, {'idx': idx})[0]
    return got, want


def assert_identical(got, want):
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape)
    np.testing.assert_array_equal(got.view(np.uint16 if got.dtype == np.float16 else np.uint32),
                                  want.view(np.uint16 if want.dtype == np.float16 else np.uint32))


def scales_for(shape, np_t):
    return (rng.random(shape) * 0.1 + 0.01).astype(np_t)


def indices(n_rows, idx_t, shape=(5,)):
    v = rng.integers(-n_rows, n_rows, shape)
    v.flat[0] = n_rows + 3      # out of range: zeros
    v.flat[-1] = -n_rows - 1    # out of range too
    return v.astype(np.int64 if idx_t == TP.INT64 else np.int32)


@pytest.mark.parametrize('bits', [2, 4, 8])
@pytest.mark.parametrize('zp', [False, True])
@pytest.mark.parametrize('idx_t', [TP.INT32, TP.INT64])
@pytest.mark.parametrize('sc_t', [np.float32, np.float16])
def test_uint8_codes(bits, zp, idx_t, sc_t):
    rows, cols, block = 11, 200, 32      # 200: the last block is partial
    nb = (cols + block - 1) // block
    codes = rng.integers(0, 1 << bits, (rows, cols))
    data = nh.from_array(pack(codes, bits), 'data')
    z = None
    if zp:
        z = nh.from_array(pack(np.pad(rng.integers(0, 1 << bits, (rows, nb)),
                                      ((0, 0), (0, (-nb) % (8 // bits)))), bits), 'zp')
    out_t = TP.FLOAT16 if sc_t == np.float16 else TP.FLOAT
    m = gbq_model(data, idx_t, scales_for((rows, nb), sc_t), z, out_t, bits=bits,
                  block_size=block, gather_axis=0, quantize_axis=1)
    for shape in ((5,), (2, 3)):
        assert_identical(*run_both(m, indices(rows, idx_t, shape)))


@pytest.mark.parametrize('dtype', [TP.INT4, TP.UINT4])
@pytest.mark.parametrize('shape, gather_axis, quantize_axis', [
    ((10, 48), 0, 1), ((10, 48), 1, 0), ((10, 48), 0, -1), ((3, 7, 40), 1, 2), ((3, 7, 40), 2, 0),
    ((6, 40), 1, 1), ((4, 5, 34), -1, 0)])
@pytest.mark.parametrize('zp', [False, True])
@pytest.mark.parametrize('block', [16, 64])
def test_int4_axes(dtype, shape, gather_axis, quantize_axis, zp, block):
    lo, hi = (-8, 8) if dtype == TP.INT4 else (0, 16)
    data = int4_tensor('data', rng.integers(lo, hi, shape), dtype)
    qa = quantize_axis % len(shape)
    sshape = list(shape)
    sshape[qa] = (shape[qa] + block - 1) // block
    z = int4_tensor('zp', rng.integers(lo, hi, sshape), dtype) if zp else None
    m = gbq_model(data, TP.INT64, scales_for(sshape, np.float32), z, block_size=block,
                  gather_axis=gather_axis, quantize_axis=quantize_axis)
    n = shape[gather_axis % len(shape)]
    assert_identical(*run_both(m, indices(n, TP.INT64, (2, 2))))


def test_defaults_and_float16():
    # gather_axis 0, quantize_axis 1, block_size 128, bits 4: the builder's tied embedding
    rows, hid = 9, 300
    codes = rng.integers(0, 16, (rows, hid + hid % 2))
    m = gbq_model(nh.from_array(pack(codes, 4), 'data'), TP.INT64,
                  scales_for((rows, 3), np.float16), out_t=TP.FLOAT16)
    assert_identical(*run_both(m, indices(rows, TP.INT64, (1, 4))))


@pytest.mark.parametrize('dtype', [TP.FLOAT8E4M3FN, TP.FLOAT8E4M3FNUZ, TP.FLOAT8E5M2,
                                   TP.FLOAT8E5M2FNUZ, TP.FLOAT4E2M1])
@pytest.mark.parametrize('block, bcast', [(16, False), (0, False), (32, True)])
def test_float_codes(dtype, block, bcast):
    rows, cols = 7, 48
    if dtype == TP.FLOAT4E2M1:
        vals = rng.integers(0, 16, (rows, cols))
        data = h.make_tensor('data', dtype, (rows, cols), pack(vals, 4).tobytes(), raw=True)
    else:
        vals = rng.integers(0, 256, (rows, cols)).astype(np.uint8)
        vals[vals == 0x7F] = 0x10   # no NaN codes: NaN payloads need not match
        vals[vals == 0xFF] = 0x11
        vals[vals == 0x80] = 0x12
        data = h.make_tensor('data', dtype, (rows, cols), vals.tobytes(), raw=True)
    nb = 1 if block == 0 else (cols + block - 1) // block
    m = gbq_model(data, TP.INT32, scales_for((1 if bcast else rows, nb), np.float32),
                  block_size=block)
    assert_identical(*run_both(m, indices(rows, TP.INT32, (4,))))


def test_bfloat16_scales_against_numpy():
    # onnxruntime's CPU kernel refuses bfloat16 output; the spec allows it
    rows, cols, block = 5, 64, 32
    codes = rng.integers(0, 16, (rows, cols))
    sc = scales_for((rows, 2), np.float32)
    sc_bf = (sc.view(np.uint32) >> 16).astype(np.uint16)   # truncated: exact as bfloat16
    sc_tp = h.make_tensor('scales', TP.BFLOAT16, (rows, 2), sc_bf.tobytes(), raw=True)
    node = h.make_node('GatherBlockQuantized', ['data', 'idx', 'scales'], ['y'], domain=MS,
                       block_size=block)
    g = h.make_graph([node], 'g', [h.make_tensor_value_info('idx', TP.INT64, None)],
                     [h.make_tensor_value_info('y', TP.BFLOAT16, None)],
                     [nh.from_array(pack(codes, 4), 'data'), sc_tp])
    m = h.make_model(g, opset_imports=[h.make_opsetid('', 21), h.make_opsetid(MS, 1)])
    idx = np.array([3, 0, -1], np.int64)
    got = onyx.Session(m.SerializeToString()).run(None, {'idx': idx})[0]
    scf = (sc_bf.astype(np.uint32) << 16).view(np.float32)
    want = ((codes[idx] - 8) * np.repeat(scf[idx], block, axis=1)).astype(np.float32)
    u = want.view(np.uint32)
    want_bf = (((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16).view(np.float32)  # nearest even
    np.testing.assert_array_equal(np.asarray(got, np.float32), want_bf)


def refused(m, match):
    with pytest.raises(onyx.OnyxError) as e:
        onyx.Session(m.SerializeToString()).run(None, {'idx': np.array([0], np.int64)})
    assert match in str(e.value), str(e.value)


def test_refusals():
    data = nh.from_array(pack(rng.integers(0, 16, (4, 64)), 4), 'data')
    refused(gbq_model(data, TP.INT64, scales_for((4, 2), np.float32), bits=3, block_size=32),
            'bits=3')
    refused(gbq_model(data, TP.INT64, scales_for((4, 2), np.float32), block_size=24),
            'block_size')
    refused(gbq_model(data, TP.INT64, scales_for((4, 3), np.float32), block_size=32), 'scales')
    refused(gbq_model(data, TP.INT64, scales_for((4, 2), np.float32), block_size=32,
                      gather_axis=1, quantize_axis=0), 'gather_axis must be 0')
    i4 = int4_tensor('data', rng.integers(-8, 8, (4, 64)), TP.INT4)
    refused(gbq_model(i4, TP.INT64, scales_for((4, 2), np.float32), bits=8, block_size=32),
            'bits=8')
    f8 = h.make_tensor('data', TP.FLOAT8E4M3FN, (4, 64), bytes(256), raw=True)
    zp8 = h.make_tensor('zp', TP.FLOAT8E4M3FN, (4, 2), bytes(8), raw=True)
    refused(gbq_model(f8, TP.INT64, scales_for((4, 2), np.float32), zp8, block_size=32),
            'zero_points')
