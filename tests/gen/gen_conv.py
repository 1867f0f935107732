# Conv family cases: Conv / ConvTranspose / ConvInteger / QLinearConv with odd pads, strides,
# dilations and groups in 1-D, 2-D and 3-D, float16 and double, weights as inputs (reordered per
# run) and symbolic shapes (primitives built at run time), and small graphs whose conv chains
# the planner fuses (BatchNormalization, activations, residual Add). bad_cases(b) holds the
# attribute and shape errors that must be refused, for make_bad_models.py.
import itertools

import numpy as np
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

from common import case, declare_outputs, reference


def _geometry(x, w, attrs, transpose):
    """Strides, dilations, begin/end pads and output sizes per the ONNX spec (the reference
    evaluator reads the wrong dims for auto_pad and mishandles grouped ConvTranspose)."""
    nsp = x.ndim - 2
    st = attrs.get('strides', [1] * nsp)
    dil = attrs.get('dilations', [1] * nsp)
    pads = list(attrs.get('pads', [0] * 2 * nsp))
    ap = attrs.get('auto_pad', 'NOTSET')
    opad = attrs.get('output_padding', [0] * nsp)
    oshape = attrs.get('output_shape')
    pb, pe, out = [], [], []
    for i in range(nsp):
        n, dk = x.shape[2 + i], (w.shape[2 + i] - 1) * dil[i] + 1
        if not transpose:
            if ap in ('SAME_UPPER', 'SAME_LOWER'):
                o = -(-n // st[i])
                tot = max(0, (o - 1) * st[i] + dk - n)
                b = tot // 2 if ap == 'SAME_UPPER' else tot - tot // 2
                pb.append(b)
                pe.append(tot - b)
            else:
                pb.append(0 if ap == 'VALID' else pads[i])
                pe.append(0 if ap == 'VALID' else pads[nsp + i])
            out.append((n + pb[i] + pe[i] - dk) // st[i] + 1)
        else:
            nat = st[i] * (n - 1) + opad[i] + dk
            if oshape is not None or ap in ('SAME_UPPER', 'SAME_LOWER'):
                o = oshape[i] if oshape is not None else n * st[i]
                tot = nat - o
                b = tot // 2 if ap == 'SAME_UPPER' else tot - tot // 2
                pb.append(b)
                pe.append(tot - b)
            else:
                pb.append(pads[i])
                pe.append(pads[nsp + i])
            out.append(nat - pb[i] - pe[i])
    return st, dil, pb, pe, out


def np_conv(inputs, attrs, transpose=False):
    """Conv / ConvTranspose computed directly in float64, returned in the inputs' dtype."""
    x, w = inputs[0], inputs[1]
    b = inputs[2] if len(inputs) > 2 else None
    dt = x.dtype
    x, w = x.astype(np.float64), w.astype(np.float64)
    group = attrs.get('group', 1)
    st, dil, pb, pe, out = _geometry(x, w, attrs, transpose)
    nsp = x.ndim - 2
    cg = x.shape[1] // group
    mg = w.shape[1] if transpose else w.shape[0] // group
    m = mg * group
    if not transpose:
        xp = np.pad(x, [(0, 0), (0, 0)] + [(pb[i], pe[i]) for i in range(nsp)])
        y = np.zeros((x.shape[0], m, *out))
        for kk in itertools.product(*[range(k) for k in w.shape[2:]]):
            sl = tuple(slice(kk[i] * dil[i], kk[i] * dil[i] + (out[i] - 1) * st[i] + 1, st[i]) for i in range(nsp))
            for g in range(group):
                xs = xp[(slice(None), slice(g * cg, (g + 1) * cg)) + sl]
                y[:, g * mg:(g + 1) * mg] += np.einsum('nc...,mc->nm...', xs, w[(slice(g * mg, (g + 1) * mg), slice(None)) + kk])
    else:
        full = [st[i] * (x.shape[2 + i] - 1) + (w.shape[2 + i] - 1) * dil[i] + 1 for i in range(nsp)]
        ext = [max(0, out[i] + pb[i] - full[i]) for i in range(nsp)]  # output_padding / negative end pads
        lo = [max(0, -pb[i]) for i in range(nsp)]
        yf = np.zeros((x.shape[0], m, *[lo[i] + full[i] + ext[i] for i in range(nsp)]))
        for kk in itertools.product(*[range(k) for k in w.shape[2:]]):
            sl = tuple(slice(lo[i] + kk[i] * dil[i], lo[i] + kk[i] * dil[i] + (x.shape[2 + i] - 1) * st[i] + 1, st[i])
                       for i in range(nsp))
            for g in range(group):
                contrib = np.einsum('nc...,cm->nm...', x[:, g * cg:(g + 1) * cg],
                                    w[(slice(g * cg, (g + 1) * cg), slice(None)) + kk])
                yf[(slice(None), slice(g * mg, (g + 1) * mg)) + sl] += contrib
        y = yf[(slice(None), slice(None)) + tuple(slice(lo[i] + pb[i], lo[i] + pb[i] + out[i]) for i in range(nsp))]
    if b is not None:
        y = y + b.astype(np.float64).reshape((1, -1) + (1,) * nsp)
    return [y.astype(dt)]


def generate(s):
    rng = np.random.default_rng(7)

    def f(*shape, dt=np.float32):
        return rng.standard_normal(shape).astype(dt)

    def both(name, op, inputs, **kw):
        if op in ('Conv', 'ConvTranspose') and 'expected' not in kw:
            kw['expected'] = np_conv(inputs, kw.get('attrs', {}), op == 'ConvTranspose')
        case(s, f'test_cv_{name}', op, inputs, **kw)
        case(s, f'test_cv_{name}_sym', op, inputs, sym=True, **kw)

    # ---- Conv, float
    both('1d_pads_stride_dil_group', 'Conv', [f(2, 4, 17), f(6, 2, 3), f(6)],
         attrs={'pads': [2, 1], 'strides': [2], 'dilations': [2], 'group': 2}, consts=(1, 2))
    # narrow groups, where oneDNN's own layout choice is im2col + GEMM and channels last has
    # direct kernels (ShuffleNet's first grouped conv; a ResNeXt-like 3x3, integer-valued as its
    # sums cancel; 1-D and 3-D)
    both('2d_group4_narrow_1x1', 'Conv', [f(1, 24, 12, 10), f(112, 6, 1, 1), f(112)], attrs={'group': 4},
         consts=(1, 2))
    both('2d_group8_narrow_3x3', 'Conv', [np.round(f(2, 32, 9, 7)), np.round(f(32, 4, 3, 3)), np.round(f(32))],
         attrs={'group': 8, 'pads': [1, 1, 1, 1], 'strides': [2, 1]}, consts=(1, 2))
    both('1d_group3_narrow', 'Conv', [f(1, 12, 30), f(18, 4, 3)], attrs={'group': 3}, consts=(1,))
    both('3d_group2_narrow', 'Conv', [f(1, 6, 5, 4, 6), f(10, 3, 1, 3, 3), f(10)],
         attrs={'group': 2, 'pads': [0, 1, 1, 0, 1, 1]}, consts=(1, 2))
    both('2d_asym', 'Conv', [f(1, 6, 11, 9), f(3, 2, 3, 2)],
         attrs={'pads': [0, 2, 1, 0], 'strides': [2, 3], 'dilations': [2, 1], 'group': 3}, consts=(1,))
    both('2d_w_input', 'Conv', [f(2, 3, 8, 7), f(5, 3, 3, 3), f(5)], attrs={'pads': [1, 1, 1, 1]})
    both('3d_same_lower', 'Conv', [f(1, 2, 5, 6, 7), f(4, 2, 2, 3, 2)],
         attrs={'auto_pad': 'SAME_LOWER', 'strides': [2, 1, 2]}, consts=(1,))
    both('3d_same_upper_dil', 'Conv', [f(1, 3, 6, 5, 4), f(2, 3, 2, 2, 3), f(2)],
         attrs={'auto_pad': 'SAME_UPPER', 'dilations': [2, 1, 1]}, consts=(1,))
    both('2d_valid', 'Conv', [f(1, 2, 9, 8), f(3, 2, 4, 3)], attrs={'auto_pad': 'VALID', 'strides': [3, 2]},
         consts=(1,))
    both('2d_depthwise', 'Conv', [f(2, 8, 10, 10), f(8, 1, 3, 3), f(8)],
         attrs={'group': 8, 'pads': [1, 1, 1, 1], 'kernel_shape': [3, 3]}, consts=(1, 2))
    case(s, 'test_cv_2d_opset1', 'Conv', [f(1, 2, 6, 6), f(3, 2, 3, 3)], attrs={'pads': [1, 0, 0, 1]}, opset=1)
    case(s, 'test_cv_2d_opset22', 'Conv', [f(1, 2, 6, 6), f(3, 2, 3, 3)], opset=22, consts=(1,))
    both('2d_f64', 'Conv', [f(2, 4, 7, 6, dt=np.float64), f(4, 2, 3, 2, dt=np.float64), f(4, dt=np.float64)],
         attrs={'pads': [1, 0, 2, 1], 'strides': [1, 2], 'dilations': [1, 2], 'group': 2})
    both('3d_f64', 'Conv', [f(1, 2, 4, 5, 3, dt=np.float64), f(3, 2, 2, 2, 2, dt=np.float64)],
         attrs={'pads': [1, 0, 0, 0, 1, 1]})
    both('2d_f16', 'Conv', [f(1, 4, 7, 7, dt=np.float16), f(2, 4, 3, 3, dt=np.float16), f(2, dt=np.float16)],
         attrs={'pads': [1, 1, 1, 1], 'strides': [2, 2]}, consts=(1, 2))
    both('1d_f16_w_input', 'Conv', [f(1, 2, 9, dt=np.float16), f(3, 2, 2, dt=np.float16)])
    both('2d_empty_batch', 'Conv', [f(0, 2, 5, 5), f(3, 2, 3, 3), f(3)], consts=(1, 2),
         expected=[np.zeros((0, 3, 3, 3), np.float32)])
    # Large: oneDNN splits the work over every core (small integers keep every sum exact, so
    # that no split changes a bit).
    big = [rng.integers(-2, 3, sh).astype(np.float32) for sh in ((1, 16, 48, 48), (32, 16, 3, 3), (32,))]
    case(s, 'test_cv_2d_big', 'Conv', big, attrs={'pads': [1, 1, 1, 1]}, consts=(1, 2))

    # ---- ConvTranspose
    both('t_1d', 'ConvTranspose', [f(2, 3, 7), f(3, 2, 3), f(2)], attrs={'strides': [2], 'pads': [1, 2]},
         consts=(1, 2))
    for name, ins, attrs in (
            ('t_2d_group_dil', [f(1, 4, 5, 4), f(4, 3, 3, 2), f(6)],
             {'group': 2, 'dilations': [2, 1], 'strides': [2, 3], 'output_padding': [1, 2]}),
            ('t_2d_f64_group', [f(2, 6, 4, 3, dt=np.float64), f(6, 2, 3, 3, dt=np.float64), f(6, dt=np.float64)],
             {'group': 3, 'strides': [2, 1], 'pads': [1, 0, 0, 1], 'output_padding': [1, 0]})):
        both(name, 'ConvTranspose', ins, attrs=attrs, consts=(1,))
    both('t_2d_same_lower', 'ConvTranspose', [f(1, 2, 4, 4), f(2, 3, 3, 3)],
         attrs={'strides': [2, 2], 'auto_pad': 'SAME_LOWER'}, consts=(1,))
    both('t_2d_outshape_big', 'ConvTranspose', [f(1, 2, 4, 4), f(2, 3, 3, 3), f(3)],
         attrs={'strides': [2, 2], 'output_shape': [11, 10], 'auto_pad': 'SAME_LOWER'}, consts=(1, 2))
    both('t_2d_outshape_small', 'ConvTranspose', [f(1, 2, 4, 4), f(2, 3, 3, 3)],
         attrs={'strides': [2, 2], 'output_shape': [7, 8]}, consts=(1,))
    both('t_2d_same_upper', 'ConvTranspose', [f(1, 2, 3, 5), f(2, 2, 2, 3)],
         attrs={'strides': [2, 2], 'auto_pad': 'SAME_UPPER'}, consts=(1,))
    both('t_3d', 'ConvTranspose', [f(1, 2, 3, 4, 3), f(2, 2, 2, 3, 2), f(2)],
         attrs={'strides': [1, 2, 2], 'pads': [0, 1, 0, 1, 0, 1]})
    both('t_2d_f64', 'ConvTranspose', [f(2, 4, 4, 3, dt=np.float64), f(4, 2, 3, 3, dt=np.float64),
                                       f(2, dt=np.float64)],
         attrs={'strides': [2, 1], 'pads': [1, 0, 0, 1], 'output_padding': [1, 0]})
    both('t_1d_f16', 'ConvTranspose', [f(1, 2, 6, dt=np.float16), f(2, 3, 3, dt=np.float16)],
         attrs={'strides': [3]})

    # ---- ConvInteger and QLinearConv
    def q(dt, *shape):
        lo, hi = (-128, 128) if dt == np.int8 else (0, 256)
        return rng.integers(lo, hi, shape).astype(dt)

    both('int_u8_i8_group', 'ConvInteger', [q(np.uint8, 1, 4, 7, 6), q(np.int8, 6, 2, 3, 2),
                                            np.array(131, np.uint8), q(np.int8, 6)],
         attrs={'group': 2, 'pads': [1, 0, 1, 2], 'strides': [2, 1], 'dilations': [1, 2]}, opset=10)
    both('int_i8_1d', 'ConvInteger', [q(np.int8, 2, 3, 11), q(np.int8, 2, 3, 4), np.array(-3, np.int8)],
         attrs={'pads': [2, 3], 'strides': [3]}, opset=10)
    both('int_u8_3d_nozp', 'ConvInteger', [q(np.uint8, 1, 2, 4, 3, 5), q(np.uint8, 3, 2, 2, 2, 2)],
         attrs={'auto_pad': 'SAME_UPPER'}, opset=10)
    both('qlinear_i8_perchannel', 'QLinearConv',
         [q(np.int8, 1, 4, 6, 6), np.array(0.05, np.float32), np.array(3, np.int8), q(np.int8, 4, 2, 3, 3),
          np.array([0.01, 0.02, 0.005, 0.03], np.float32), np.array(0, np.int8), np.array(0.2, np.float32),
          np.array(-5, np.int8), rng.integers(-500, 500, 4).astype(np.int32)],
         attrs={'group': 2, 'pads': [1, 1, 1, 1], 'strides': [1, 2]}, opset=10, consts=(3, 4, 5, 8))
    both('qlinear_u8', 'QLinearConv',
         [q(np.uint8, 2, 3, 5, 4), np.array(0.02, np.float32), np.array(128, np.uint8), q(np.uint8, 2, 3, 2, 2),
          np.array(0.01, np.float32), np.array(120, np.uint8), np.array(0.05, np.float32),
          np.array(100, np.uint8)], opset=10)

    # ---- fused chains (the planner folds these into the convs; the results must not change)
    def graph_case(name, nodes, inputs, inits, outputs, opset=17):
        ins = [h.make_tensor_value_info(n, TP.FLOAT, list(v.shape)) for n, v in inputs]
        outs = [h.make_empty_tensor_value_info(n) for n in outputs]
        g = h.make_graph(nodes, name, ins, outs, initializer=[nh.from_array(v, n) for n, v in inits])
        m = h.make_model(g, opset_imports=[h.make_opsetid('', opset)])
        res = reference(m, inputs)
        declare_outputs(m, res)
        s.write(name, m, inputs, list(zip(outputs, res)))

    x = f(1, 4, 9, 9)
    w = f(6, 4, 3, 3)
    b = f(6)
    bn = [('sc', f(6) + 2), ('bb', f(6)), ('mu', f(6)), ('var', np.abs(f(6)) + 0.5)]
    conv = h.make_node('Conv', ['x', 'w', 'b'], ['c'], pads=[1, 1, 1, 1])
    bnode = h.make_node('BatchNormalization', ['c', 'sc', 'bb', 'mu', 'var'], ['n'], epsilon=1e-3)
    graph_case('test_cv_fuse_bn_relu', [conv, bnode, h.make_node('Relu', ['n'], ['y'])],
               [('x', x)], [('w', w), ('b', b)] + bn, ['y'])
    other = f(1, 6, 9, 9)
    graph_case('test_cv_fuse_bn_add_relu',
               [conv, bnode, h.make_node('Add', ['o', 'n'], ['a']), h.make_node('Relu', ['a'], ['y'])],
               [('x', x), ('o', other)], [('w', w), ('b', b)] + bn, ['y'])
    # the addend is computed after the conv in node order: the fused step moves to the Add
    graph_case('test_cv_fuse_add_late',
               [h.make_node('Conv', ['x', 'w'], ['c'], pads=[1, 1, 1, 1]),
                h.make_node('Conv', ['x', 'w2'], ['d'], pads=[1, 1, 1, 1]),
                h.make_node('Add', ['c', 'd'], ['y'])],
               [('x', x)], [('w', w), ('w2', f(6, 4, 3, 3))], ['y'])
    for act, attrs in (('LeakyRelu', {'alpha': 0.3}), ('Sigmoid', {}), ('Tanh', {}),
                       ('HardSigmoid', {'alpha': 0.3, 'beta': 0.4})):
        graph_case(f'test_cv_fuse_{act.lower()}',
                   [h.make_node('Conv', ['x', 'w', 'b'], ['c'], strides=[2, 2]),
                    h.make_node(act, ['c'], ['y'], **attrs)],
                   [('x', x)], [('w', w), ('b', b)], ['y'])
    graph_case('test_cv_fuse_clip11',
               [h.make_node('Conv', ['x', 'w'], ['c']), h.make_node('Clip', ['c', 'lo', 'hi'], ['y'])],
               [('x', x)], [('w', w), ('lo', np.array(-0.5, np.float32)), ('hi', np.array(1.5, np.float32))], ['y'])
    graph_case('test_cv_fuse_clip6',
               [h.make_node('Conv', ['x', 'w'], ['c']), h.make_node('Clip', ['c'], ['y'], min=0.0, max=6.0)],
               [('x', x)], [('w', w)], ['y'], opset=6)
    # the conv output is also a graph output / read twice: nothing may be fused away
    graph_case('test_cv_nofuse_output',
               [h.make_node('Conv', ['x', 'w'], ['c']), h.make_node('Relu', ['c'], ['y'])],
               [('x', x)], [('w', w)], ['c', 'y'])
    graph_case('test_cv_nofuse_two_readers',
               [h.make_node('Conv', ['x', 'w'], ['c']), h.make_node('Relu', ['c'], ['r']),
                h.make_node('Add', ['c', 'r'], ['y'])],
               [('x', x)], [('w', w)], ['y'])
    # chains of convs with channels in sixteens: the tensors between them stay opaque (channels last)
    # (small integers: every sum is exact in float, whatever order oneDNN adds in)
    def fw(*shape):
        return rng.integers(-1, 2, shape).astype(np.float32)

    x16 = fw(1, 16, 10, 10)
    graph_case('test_cv_opaque_chain',
               [h.make_node('Conv', ['x', 'wa', 'ba'], ['a'], pads=[1, 1, 1, 1]),
                h.make_node('Relu', ['a'], ['ar']),
                h.make_node('Conv', ['ar', 'wb'], ['b']),
                h.make_node('Add', ['b', 'ar'], ['s']),  # ar: conv b's X and its addend
                h.make_node('Conv', ['s', 'wc'], ['c'], group=32, pads=[1, 1, 1, 1]),
                h.make_node('Conv', ['c', 'wd'], ['d'], group=2),
                h.make_node('Conv', ['d', 'we'], ['y'], strides=[2, 2])],
               [('x', x16)], [('wa', fw(32, 16, 3, 3)), ('ba', fw(32)), ('wb', fw(32, 32, 1, 1)),
                              ('wc', fw(32, 1, 3, 3)), ('wd', fw(32, 16, 1, 1)), ('we', fw(16, 32, 3, 3))], ['y'])
    graph_case('test_cv_opaque_mixed_reader',
               [h.make_node('Conv', ['x', 'wa'], ['a'], pads=[1, 1, 1, 1]),
                h.make_node('Conv', ['a', 'wb'], ['b']),
                h.make_node('MaxPool', ['a'], ['p'], kernel_shape=[2, 2]),
                h.make_node('Conv', ['b', 'wb'], ['y'])],
               [('x', x16)], [('wa', fw(32, 16, 3, 3)), ('wb', fw(32, 32, 1, 1))], ['y', 'p'])
    graph_case('test_cv_opaque_1d',
               [h.make_node('Conv', ['x', 'wa'], ['a'], pads=[1, 1]),
                h.make_node('Conv', ['a', 'wb'], ['b']), h.make_node('Sigmoid', ['b'], ['y'])],
               [('x', fw(2, 16, 12))], [('wa', fw(32, 16, 3)), ('wb', fw(16, 32, 1))], ['y'])
    graph_case('test_cv_opaque_3d',
               [h.make_node('Conv', ['x', 'wa'], ['a'], pads=[1, 1, 1, 1, 1, 1]),
                h.make_node('Conv', ['a', 'wb'], ['y'], strides=[2, 1, 2])],
               [('x', fw(1, 16, 5, 6, 4))], [('wa', fw(16, 16, 3, 3, 3)), ('wb', fw(32, 16, 2, 2, 2))], ['y'])
    graph_case('test_cv_first_layer_blocked',
               [h.make_node('Conv', ['x', 'wa', 'ba'], ['y'], strides=[2, 2], pads=[3, 3, 3, 3])],
               [('x', fw(1, 3, 20, 20))], [('wa', fw(16, 3, 7, 7)), ('ba', fw(16))], ['y'])

    # weights as a graph input: no BatchNormalization folding, activations still fused
    wi = [h.make_tensor_value_info('w', TP.FLOAT, [6, 4, 3, 3])]
    nodes = [h.make_node('Conv', ['x', 'w'], ['c']),
             h.make_node('BatchNormalization', ['c', 'sc', 'bb', 'mu', 'var'], ['n']),
             h.make_node('Relu', ['n'], ['y'])]
    g = h.make_graph(nodes, 'w_input', [h.make_tensor_value_info('x', TP.FLOAT, [1, 4, 9, 9])] + wi,
                     [h.make_empty_tensor_value_info('y')], initializer=[nh.from_array(v, n) for n, v in bn])
    m = h.make_model(g, opset_imports=[h.make_opsetid('', 17)])
    feeds = [('x', x), ('w', w)]
    res = reference(m, feeds)
    declare_outputs(m, res)
    s.write('test_cv_fuse_bn_w_input', m, feeds, [('y', res[0])])


def bad_cases(b):
    """Inputs onyx must refuse (for make_bad_models.py: b is its BadSuite)."""
    shape, invalid = 'ONYX_ERR_SHAPE', 'ONYX_ERR_INVALID_MODEL'
    x = np.zeros((1, 4, 5, 5), np.float32)
    w = np.zeros((2, 4, 3, 3), np.float32)
    b.node('bad_cv_kernel_shape', 'Conv', [x, w], shape, 'kernel_shape[1] is 2 but W has 3',
           attrs={'kernel_shape': [3, 2]})
    b.node('bad_cv_group', 'Conv', [x, np.zeros((3, 2, 3, 3), np.float32)], shape, 'not a multiple of group 2',
           attrs={'group': 2})
    b.node('bad_cv_w_channels', 'Conv', [x, np.zeros((2, 3, 3, 3), np.float32)], shape,
           'W has 3 input channels per group, expected 4')
    b.node('bad_cv_bias_len', 'Conv', [x, w, np.zeros(3, np.float32)], shape, 'B has 3 values, expected 2')
    b.node('bad_cv_neg_pad', 'Conv', [x, w], invalid, 'pads[1] is -1', attrs={'pads': [0, -1, 0, 0]})
    b.node('bad_cv_too_small', 'Conv', [x, np.zeros((2, 4, 7, 3), np.float32)], shape,
           'smaller than the dilated kernel')
    b.node('bad_cv_auto_pad', 'Conv', [x, w], invalid, "auto_pad is 'SAME'", attrs={'auto_pad': 'SAME'})
    b.node('bad_cv_strides_len', 'Conv', [x, w], invalid, 'strides has 1 values, expected 2',
           attrs={'strides': [1]})
    b.node('bad_cv_dilation_zero', 'Conv', [x, w], invalid, 'dilations[0] is 0', attrs={'dilations': [0, 1]})
    b.node('bad_cv_rank', 'Conv', [x, np.zeros((2, 4, 3), np.float32)], shape, 'W has rank 3, expected 4')
    b.node('bad_cv_t_channels', 'ConvTranspose', [x, np.zeros((3, 2, 3, 3), np.float32)], shape,
           'W has 3 input channels, expected 4')
    b.node('bad_cv_int_wzp_len', 'ConvInteger', [x.astype(np.uint8), w.astype(np.uint8), np.array(0, np.uint8),
                                                 np.zeros(3, np.uint8)], shape, 'w_zero_point', opset=10)
