"""The 8-bit convolutions of CPUs without VNNI (kernels_cpu/conv/qconv_avx2.c), forced here with
ONYX_I8=avx2 (read when a session prepares): QLinearConv (NCHW, and com.microsoft's with and
without channels_last), ConvInteger; uint8/int8 activations and weights, per-tensor and
per-channel, groups, depthwise, strides, pads, dilations, bias; the channels-last fusion.

onnxruntime on this machine runs its VNNI kernels, whose sums are exact; on AVX2 its kernels
differ from them only where vpmaddubsw saturates a pair of uint8 x int8 products to int16. So:
- inputs where no pair can saturate (int8 weights within [-63, 63], or a pairing onnxruntime
  computes exactly on AVX2) must give onnxruntime's outputs bit for bit;
- inputs that saturate must give what a numpy model of onnxruntime's AVX2 arithmetic gives
  (channels-last patches, k = tap * C / group + c, pairs k = 2p, 2p + 1 of raw X x raw W clipped
  to int16), which must differ from the exact result (else the test would show nothing), while
  the reference loops (ONYX_I8=ref) stay exact. Depthwise convolutions and ConvInteger are
  exact on every path."""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

import onyx

MS = 'com.microsoft'
rng = np.random.default_rng(3233)
CPUINFO = open('/proc/cpuinfo').read()
HAS_AVX2 = ' avx2' in CPUINFO
TP_OF = {np.uint8: TP.UINT8, np.int8: TP.INT8}

# name: (N, C, spatial, M, kernel, group, attributes)
GEOMS = {
    'convsym_3x3': (1, 8, (9, 9), 16, (3, 3), 1, dict(pads=[1, 1, 1, 1])),
    'odd_channels_s2': (1, 3, (11, 10), 8, (3, 3), 1, dict(pads=[1, 1, 1, 1], strides=[2, 2])),
    'pointwise': (2, 16, (5, 7), 24, (1, 1), 1, {}),
    'pointwise_s2': (1, 12, (6, 6), 8, (1, 1), 1, dict(strides=[2, 2])),
    'grouped': (1, 8, (7, 7), 12, (3, 3), 4, dict(pads=[1, 1, 1, 1])),
    'grouped_odd': (1, 6, (6, 5), 4, (3, 2), 2, dict(pads=[0, 1, 1, 0])),
    'depthwise16': (1, 16, (8, 8), 16, (3, 3), 16, dict(pads=[1, 1, 1, 1], strides=[2, 2])),
    'depthwise5': (2, 5, (7, 6), 5, (3, 3), 5, dict(pads=[1, 1, 1, 1])),
    'multiplier': (1, 4, (6, 6), 8, (3, 3), 4, dict(pads=[1, 1, 1, 1])),
    'dilated': (2, 5, (9, 8), 7, (3, 2), 1, dict(dilations=[2, 3], pads=[2, 0, 1, 3])),
    'conv1d': (1, 6, (20,), 10, (5,), 1, dict(pads=[2, 1], strides=[3])),
}


@pytest.fixture
def avx2(monkeypatch):
    if not HAS_AVX2:
        pytest.skip('the CPU has no AVX2: the AVX2 kernels cannot run here')
    monkeypatch.setenv('ONYX_I8', 'avx2')


def values(dt, shape, narrow=False):
    if dt is np.int8:
        lo, hi = (-63, 64) if narrow else (-128, 128)
    else:
        lo, hi = 0, 256
    return np.asarray(rng.integers(lo, hi, shape)).astype(dt)


def model(nodes, inputs, outputs, inits):
    g = h.make_graph(nodes, 'g', inputs, outputs, inits)
    return h.make_model(g, opset_imports=[h.make_opsetid('', 21), h.make_opsetid(MS, 1)])


def run_onyx(m, feeds):
    return onyx.Session(m.SerializeToString(), threads=2).run(None, feeds)[0]


def run_ort(m, feeds):
    so = ort.SessionOptions()
    so.log_severity_level = 3
    return ort.InferenceSession(m.SerializeToString(), so,
                                providers=['CPUExecutionProvider']).run(None, feeds)[0]


def qlinear_conv(geom, x_t, w, per_channel, w_zp, bias=True, domain='', channels_last=0):
    n, c, sp, m, k, group, attrs = geom
    y_t = x_t
    kdim = c // group * np.prod(k)
    inits = [nh.from_array(np.array(0.03, np.float32), 'xs'),
             nh.from_array(values(x_t, ()), 'xz'), nh.from_array(w, 'W'),
             nh.from_array((rng.random(m) * 0.01 + 0.002).astype(np.float32) if per_channel
                           else np.array(0.006, np.float32), 'ws'),
             nh.from_array(w_zp, 'wz'),
             # |acc| is about 2500 sqrt(k) for these values: Y spread over some 40 steps
             nh.from_array(np.array(0.03 * 0.006 * 60 * np.sqrt(kdim) * (rng.random() + 0.5),
                                    np.float32), 'ys'),
             nh.from_array(values(y_t, ()), 'yz')]
    names = ['x', 'xs', 'xz', 'W', 'ws', 'wz', 'ys', 'yz']
    if bias:
        inits.append(nh.from_array(rng.integers(-3000, 3000, m).astype(np.int32), 'B'))
        names.append('B')
    extra = dict(domain=domain, channels_last=channels_last) if domain else {}
    node = h.make_node('QLinearConv', names, ['y'], group=group, **attrs, **extra)
    return model([node], [h.make_tensor_value_info('x', TP_OF[x_t], None)],
                 [h.make_tensor_value_info('y', TP_OF[y_t], None)], inits)


def weights(geom, w_t, narrow=True):
    n, c, sp, m, k, group, attrs = geom
    return values(w_t, (m, c // group) + k, narrow)


def weight_zero_points(w_t, m, per_channel):
    """onnxruntime's QLinearConv takes one weight zero point (per channel: all equal): 0 for
    int8 weights (its symmetric form), any for uint8."""
    z = 0 if w_t is np.int8 else int(rng.integers(100, 156))
    return np.full(m, z, w_t) if per_channel else np.array(z, w_t)


def x_shape(geom, last=False):
    n, c, sp = geom[:3]
    return (n,) + sp + (c,) if last else (n, c) + sp


@pytest.mark.parametrize('geom', GEOMS)
@pytest.mark.parametrize('x_t, w_t', [(np.uint8, np.int8), (np.uint8, np.uint8), (np.int8, np.int8)])
@pytest.mark.parametrize('per_channel', [False, True])
@pytest.mark.parametrize('isa', ['avx2', 'default'])
def test_qlinear_conv(geom, x_t, w_t, per_channel, isa, monkeypatch):
    """Also on the default path: with VNNI, what oneDNN's convolution does not take (uint8
    weights with a zero point other than 128) runs on these kernels where they are exact."""
    if isa == 'avx2' and not HAS_AVX2:
        pytest.skip('the CPU has no AVX2: the AVX2 kernels cannot run here')
    if isa == 'avx2':
        monkeypatch.setenv('ONYX_I8', 'avx2')
    g = GEOMS[geom]
    w = weights(g, w_t)
    mdl = qlinear_conv(g, x_t, w, per_channel, weight_zero_points(w_t, g[3], per_channel),
                       bias=per_channel)
    feeds = {'x': values(x_t, x_shape(g))}
    got, want = run_onyx(mdl, feeds), run_ort(mdl, feeds)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert len(np.unique(want)) > 3  # the scales leave the outputs spread, not all clipped
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize('geom', ['convsym_3x3', 'odd_channels_s2', 'grouped', 'depthwise5',
                                  'pointwise', 'conv1d'])
@pytest.mark.parametrize('x_t, w_t', [(np.uint8, np.int8), (np.uint8, np.uint8), (np.int8, np.int8)])
@pytest.mark.parametrize('channels_last', [0, 1])
def test_ms_qlinear_conv(geom, x_t, w_t, channels_last, avx2):
    g = GEOMS[geom]
    w = weights(g, w_t)
    mdl = qlinear_conv(g, x_t, w, True, weight_zero_points(w_t, g[3], True), domain=MS,
                       channels_last=channels_last)
    feeds = {'x': values(x_t, x_shape(g, channels_last == 1))}
    np.testing.assert_array_equal(run_onyx(mdl, feeds), run_ort(mdl, feeds))


@pytest.mark.parametrize('geom', ['grouped', 'depthwise16', 'dilated'])
def test_distinct_weight_zero_points(geom, avx2, monkeypatch):
    """A zero point per output channel, each its own (onnxruntime refuses these): the reference
    loops' exact result, as no pair can saturate with weights within [-63, 63]."""
    g = GEOMS[geom]
    wz = rng.integers(-20, 21, g[3]).astype(np.int8)
    mdl = qlinear_conv(g, np.uint8, weights(g, np.int8), True, wz)
    feeds = {'x': values(np.uint8, x_shape(g))}
    got = run_onyx(mdl, feeds)
    monkeypatch.setenv('ONYX_I8', 'ref')
    np.testing.assert_array_equal(got, run_onyx(mdl, feeds))


def conv_integer(x_t, w, xz, wz, group, attrs):
    inits = [nh.from_array(w, 'W'), nh.from_array(np.array(xz, x_t), 'xz'),
             nh.from_array(wz, 'wz')]
    node = h.make_node('ConvInteger', ['x', 'W', 'xz', 'wz'], ['y'], group=group, **attrs)
    return model([node], [h.make_tensor_value_info('x', TP_OF[x_t], None)],
                 [h.make_tensor_value_info('y', TP.INT32, None)], inits)


def exact_conv(x, w, xz, wz, geom):
    """The exact int32 convolution of (x - xz) by (w - wz), numpy, NCHW."""
    n, c, sp, m, k, group, attrs = geom
    nsp = len(sp)
    pads = attrs.get('pads', [0] * 2 * nsp)
    strides = attrs.get('strides', [1] * nsp)
    dil = attrs.get('dilations', [1] * nsp)
    xs = x.astype(np.int64) - xz
    xs = np.pad(xs, [(0, 0), (0, 0)] + [(pads[i], pads[i + nsp]) for i in range(nsp)])
    ws = w.astype(np.int64) - np.asarray(wz, np.int64).reshape((-1,) + (1,) * (nsp + 1))
    out = [(sp[i] + pads[i] + pads[i + nsp] - dil[i] * (k[i] - 1) - 1) // strides[i] + 1
           for i in range(nsp)]
    cg, mg = c // group, m // group
    y = np.zeros((n, m) + tuple(out), np.int64)
    for tap in np.ndindex(*k):
        sl = tuple(slice(tap[i] * dil[i], tap[i] * dil[i] + (out[i] - 1) * strides[i] + 1,
                         strides[i]) for i in range(nsp))
        patch = xs[(slice(None), slice(None)) + sl]  # [n, c, out...]
        for gi in range(group):
            wt = ws[(slice(gi * mg, (gi + 1) * mg), slice(None)) + tap]  # [mg, cg]
            y[:, gi * mg:(gi + 1) * mg] += np.einsum('nc...,mc->nm...', patch[:, gi * cg:(gi + 1) * cg], wt)
    return y.astype(np.int32)


@pytest.mark.parametrize('geom', ['convsym_3x3', 'odd_channels_s2', 'grouped_odd', 'depthwise5',
                                  'pointwise', 'dilated', 'conv1d'])
@pytest.mark.parametrize('x_t, w_t', [(np.uint8, np.uint8), (np.uint8, np.int8), (np.int8, np.int8)])
@pytest.mark.parametrize('isa', ['avx2', 'default', 'ref'])
def test_conv_integer(geom, x_t, w_t, isa, monkeypatch):
    """Exact whatever the weights, on every path (by default the AVX2 kernels, VNNI or not):
    full-range values; onnxruntime's own kernel (uint8 only) too."""
    if isa == 'avx2' and not HAS_AVX2:
        pytest.skip('the CPU has no AVX2: the AVX2 kernels cannot run here')
    if isa != 'default':
        monkeypatch.setenv('ONYX_I8', isa)
    g = GEOMS[geom]
    n, c, sp, m, k, group, attrs = g
    w, x = weights(g, w_t, narrow=False), values(x_t, x_shape(g))
    xz, wz = values(x_t, ()), values(w_t, ())
    mdl = conv_integer(x_t, w, xz, wz, group, attrs)
    got = run_onyx(mdl, {'x': x})
    np.testing.assert_array_equal(got, exact_conv(x, w, int(xz), int(wz), g))
    if (x_t, w_t) == (np.uint8, np.uint8):
        np.testing.assert_array_equal(got, run_ort(mdl, {'x': x}))


# ---------------------------------------------------------------- saturation


def patches_nhwc(x, xz, geom):
    """onnxruntime's channels-last im2col of one group layout: [n, pixel, tap * C/group + c] per
    group, padding holding X's zero point."""
    n, c, sp, m, k, group, attrs = geom
    nsp = len(sp)
    pads = attrs.get('pads', [0] * 2 * nsp)
    strides = attrs.get('strides', [1] * nsp)
    dil = attrs.get('dilations', [1] * nsp)
    xp = np.pad(x.astype(np.int64), [(0, 0), (0, 0)] + [(pads[i], pads[i + nsp]) for i in range(nsp)],
                constant_values=xz)
    out = [(sp[i] + pads[i] + pads[i + nsp] - dil[i] * (k[i] - 1) - 1) // strides[i] + 1
           for i in range(nsp)]
    cg = c // group
    rows = []
    for gi in range(group):
        taps = []
        for tap in np.ndindex(*k):
            sl = tuple(slice(tap[i] * dil[i], tap[i] * dil[i] + (out[i] - 1) * strides[i] + 1,
                             strides[i]) for i in range(nsp))
            p = xp[(slice(None), slice(gi * cg, (gi + 1) * cg)) + sl]  # [n, cg, out...]
            taps.append(p.reshape(n, cg, -1).transpose(0, 2, 1))        # [n, pixels, cg]
        rows.append(np.concatenate(taps, axis=2))                        # [n, pixels, ks * cg]
    return rows, out


def mlas_avx2_qconv(x, w, xz, geom, mult, bias, yz):
    """onnxruntime's AVX2 QLinearConv of uint8 X and int8 W (zero point 0): raw patch x raw W,
    pairs of k clipped to int16, X's zero point through the column sums, then float(acc + B) *
    multiplier clamped, rounded half to even, plus Y's zero point."""
    n, c, sp, m, k, group, attrs = geom
    rows, out = patches_nhwc(x, xz, geom)
    mg, cg = m // group, c // group
    acc = np.zeros((n, rows[0].shape[1], m), np.int64)
    for gi, a in enumerate(rows):
        wg = w[gi * mg:(gi + 1) * mg].astype(np.int64)                     # [mg, cg, k...]
        b = wg.reshape(mg, cg, -1).transpose(2, 1, 0).reshape(-1, mg)     # [tap * cg + c, mg]
        kd = b.shape[0]
        ap, bp = a, b
        if kd % 2:
            ap, bp = np.pad(a, ((0, 0), (0, 0), (0, 1))), np.pad(b, ((0, 1), (0, 0)))
        prod = ap[:, :, :, None] * bp[None, None, :, :]
        pairs = np.clip(prod[:, :, 0::2] + prod[:, :, 1::2], -32768, 32767)
        acc[:, :, gi * mg:(gi + 1) * mg] = pairs.sum(axis=2) - xz * b.sum(axis=0)
    v = (acc + bias).astype(np.int32).astype(np.float32) * mult
    v = np.rint(np.clip(v, np.float32(0 - yz), np.float32(255 - yz))) + yz
    y = v.astype(np.uint8)                                               # [n, pixels, m]
    return y.transpose(0, 2, 1).reshape((n, m) + tuple(out))


@pytest.mark.parametrize('geom', ['convsym_3x3', 'odd_channels_s2', 'grouped_odd', 'pointwise',
                                  'multiplier', 'dilated'])
@pytest.mark.parametrize('isa, form', [('avx2', 'onnx'), ('ref', 'onnx'), ('avx2', 'ms'),
                                       ('avx2', 'ms_last')])
def test_saturation(geom, isa, form, monkeypatch):
    if isa == 'avx2' and not HAS_AVX2:
        pytest.skip('the CPU has no AVX2: the AVX2 kernels cannot run here')
    monkeypatch.setenv('ONYX_I8', isa)
    g = GEOMS[geom]
    n, c, sp, m, k, group, attrs = g
    w = rng.choice(np.array([-128, -127, -100, 90, 120, 127], np.int8), (m, c // group) + k)
    x = rng.integers(180, 256, x_shape(g)).astype(np.uint8)
    xz, yz = 7, 128
    mult = np.float32(np.float32(0.03) * np.float32(0.0005)) / np.float32(1.0)
    bias = rng.integers(-3000, 3000, m).astype(np.int64)
    inits = [nh.from_array(np.array(0.03, np.float32), 'xs'), nh.from_array(np.array(xz, np.uint8), 'xz'),
             nh.from_array(w, 'W'), nh.from_array(np.array(0.0005, np.float32), 'ws'),
             nh.from_array(np.array(0, np.int8), 'wz'), nh.from_array(np.array(1.0, np.float32), 'ys'),
             nh.from_array(np.array(yz, np.uint8), 'yz'), nh.from_array(bias.astype(np.int32), 'B')]
    ms = dict(domain=MS, channels_last=int(form == 'ms_last')) if form != 'onnx' else {}
    node = h.make_node('QLinearConv', ['x', 'xs', 'xz', 'W', 'ws', 'wz', 'ys', 'yz', 'B'], ['y'],
                       group=group, **attrs, **ms)
    mdl = model([node], [h.make_tensor_value_info('x', TP.UINT8, None)],
                [h.make_tensor_value_info('y', TP.UINT8, None)], inits)
    last = list(range(2, len(sp) + 2)) + [1]
    if form == 'ms_last':  # NHWC in and out
        got = run_onyx(mdl, {'x': np.ascontiguousarray(x.transpose([0] + last))})
        got = got.transpose([0, len(sp) + 1] + list(range(1, len(sp) + 1)))
    else:
        got = run_onyx(mdl, {'x': x})
    acc = exact_conv(x, w, xz, 0, g).astype(np.int64) + bias.reshape((-1,) + (1,) * len(sp))
    v = acc.astype(np.int32).astype(np.float32) * mult
    exact = (np.rint(np.clip(v, np.float32(-yz), np.float32(255 - yz))) + yz).astype(np.uint8)
    saturated = mlas_avx2_qconv(x, w, xz, g, mult, bias, yz)
    assert (saturated != exact).any()  # these inputs do saturate
    if isa == 'avx2':
        np.testing.assert_array_equal(got, saturated)
    else:  # the reference rounds the product in double (conv_int.c)
        r = np.rint(np.clip(acc.astype(np.int32) * np.float64(mult) + yz, 0, 255)).astype(np.uint8)
        np.testing.assert_array_equal(got, r)


# ---------------------------------------------------------------- the channels-last fusion


@pytest.mark.parametrize('xt', [np.uint8, np.int8])
def test_chain_keeps_opaque_tensors(xt, avx2, capfd):
    """A chain of QLinearConvs, pooling and QLinearAdd keeps its 8-bit tensors channels last
    between them on the AVX2 path, as on oneDNN's, with the bits of the plain graph."""
    from test_int8 import chain_bytes, onyx_run
    b = chain_bytes(xt, True)
    x = np.random.default_rng(1).uniform(-3, 3, (2, 3, 24, 24)).astype(np.float32)
    fused, = onyx_run(b, {'x': x}, verbose=True)
    assert 'fusion: 7 tensors kept opaque' in capfd.readouterr().err  # xq, c1, p, c2, c3, a, c4
    plain, = onyx_run(b, {'x': x}, onyx.GraphOptimizationLevel.ORT_DISABLE_ALL, verbose=True)
    assert 'tensors kept opaque' not in capfd.readouterr().err
    assert np.abs(fused).max() > 0
    np.testing.assert_array_equal(fused, plain)
