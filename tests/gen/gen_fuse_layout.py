# Fusion-pass layout cases: channel Concat and MaxPool/AveragePool between convs kept in the
# convs' opaque (channels-last) layout, per-channel constant Mul/Add folded into conv weights, and the
# per-channel steps (BatchNormalization, Mul/Add, Relu) before a conv applied as its pre-ops.
import numpy as np
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

from common import declare_outputs, reference


def generate(s):
    rng = np.random.default_rng(11)

    def f(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    # small integers: every sum is exact in float, whatever order oneDNN adds in
    def fw(*shape):
        return rng.integers(-1, 2, shape).astype(np.float32)

    def graph_case(name, nodes, inputs, inits, outputs, opset=17):
        ins = [h.make_tensor_value_info(n, TP.FLOAT, list(v.shape)) for n, v in inputs]
        outs = [h.make_empty_tensor_value_info(n) for n in outputs]
        g = h.make_graph(nodes, name, ins, outs, initializer=[nh.from_array(v, n) for n, v in inits])
        m = h.make_model(g, opset_imports=[h.make_opsetid('', opset)])
        res = reference(m, inputs)
        declare_outputs(m, res)
        s.write(name, m, inputs, list(zip(outputs, res)))

    N = h.make_node
    x16 = fw(1, 16, 11, 11)
    # fire-module shape: conv+relu, two convs concatenated, pooled, convs again, concat, pool
    graph_case('test_fl_concat_pool_blocked',
               [N('Conv', ['x', 'wa', 'ba'], ['a']), N('Relu', ['a'], ['ar']),
                N('Conv', ['ar', 'wb'], ['b']), N('Relu', ['b'], ['br']),
                N('Conv', ['ar', 'wc'], ['c'], pads=[1, 1, 1, 1]), N('Relu', ['c'], ['cr']),
                N('Concat', ['br', 'cr', 'br'], ['cat'], axis=1),
                N('MaxPool', ['cat'], ['mp'], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
                N('Conv', ['mp', 'wd'], ['d']),
                N('Conv', ['mp', 'we'], ['e'], pads=[1, 1, 1, 1]),
                N('Concat', ['d', 'e'], ['cat2'], axis=-3),
                N('AveragePool', ['cat2'], ['ap'], kernel_shape=[2, 2], pads=[0, 0, 1, 1]),
                N('Conv', ['ap', 'wf'], ['y'])],
               [('x', x16)],
               [('wa', fw(16, 16, 1, 1)), ('ba', fw(16)), ('wb', fw(32, 16, 1, 1)),
                ('wc', fw(16, 16, 3, 3)), ('wd', fw(16, 80, 1, 1)), ('we', fw(32, 80, 3, 3)),
                ('wf', fw(16, 48, 1, 1))], ['y'])
    # the Concat output is a graph output, a pool reads a tensor also read by a Relu: all plain
    graph_case('test_fl_concat_pool_plain_ends',
               [N('Conv', ['x', 'wa'], ['a']), N('Conv', ['x', 'wb'], ['b']),
                N('Concat', ['a', 'b'], ['cat'], axis=1),
                N('MaxPool', ['b'], ['mp'], kernel_shape=[2, 2]),
                N('Relu', ['b'], ['br']), N('Conv', ['mp', 'wc'], ['y'])],
               [('x', x16)], [('wa', fw(16, 16, 1, 1)), ('wb', fw(32, 16, 1, 1)), ('wc', fw(16, 32, 1, 1))],
               ['cat', 'y', 'br'])
    # a channel Concat of 300 opaque conv outputs (more inputs than the executor's old limit of 127)
    graph_case('test_fl_concat_300_convs',
               [N('Conv', ['x', f'w{i}'], [f'c{i}']) for i in range(300)] +
               [N('Concat', [f'c{i}' for i in range(300)], ['cat'], axis=1), N('Conv', ['cat', 'wy'], ['y'])],
               [('x', fw(1, 16, 3, 3))], [(f'w{i}', fw(16, 16, 1, 1)) for i in range(300)] +
               [('wy', fw(16, 4800, 1, 1))], ['y'])
    # 1-D convs and a channel Concat whose channels are off the 16 grid (opaque all the same:
    # channels last joins them pixel by pixel)
    graph_case('test_fl_concat_1d_odd',
               [N('Conv', ['x', 'wa'], ['a']), N('Conv', ['x', 'wb'], ['b'], pads=[1, 1]),
                N('Concat', ['a', 'b'], ['cat'], axis=1), N('Conv', ['cat', 'wc'], ['y'])],
               [('x', fw(2, 16, 9))], [('wa', fw(16, 16, 1)), ('wb', fw(8, 16, 3)), ('wc', fw(16, 24, 1))],
               ['y'])
    # per-channel Mul / Add after BatchNormalization, folded into the conv (as Inception's)
    c = 32
    bn = [('sc', f(c) + 2), ('bb', f(c)), ('mu', f(c)), ('var', np.abs(f(c)) + 0.5)]
    graph_case('test_fl_fold_mul_add',
               [N('Conv', ['x', 'wa', 'ba'], ['a'], pads=[1, 1, 1, 1]),
                N('BatchNormalization', ['a', 'sc', 'bb', 'mu', 'var'], ['n']),
                N('Mul', ['n', 'k'], ['m']), N('Add', ['sh', 'm'], ['ad']), N('Relu', ['ad'], ['r']),
                N('Conv', ['r', 'wb'], ['b']), N('Mul', ['kk', 'b'], ['y'])],
               [('x', f(1, 16, 7, 7))],
               [('wa', f(c, 16, 3, 3)), ('ba', f(c)), ('k', f(c, 1, 1)), ('sh', f(1, c, 1, 1)),
                ('wb', f(16, c, 1, 1)), ('kk', np.array(0.5, np.float32))] + bn, ['y'])
    # pre-activation (as DenseNet's): BatchNormalization, Mul, Add, Relu applied by the conv on
    # its way into the channels-last layout, with spatial sizes off the 16-wide tiles, channels
    # off the 16 grid (partial tiles) and few channels, LeakyRelu and affine-only chains; values on a
    # grid of eighths (epsilon 0, variances 1 or 4) so that the sums are exact
    def fq(*shape):
        return rng.choice(np.array([-2, -1, -0.5, 0.5, 1, 2], np.float32), shape)

    for cin, hw, act in ((32, 6, 'Relu'), (48, 9, 'Relu'), (20, 5, 'LeakyRelu'), (8, 7, 'Relu'),
                         (16, 4, None)):
        bn = [('sc', fq(cin)), ('bb', fq(cin)), ('mu', fq(cin)),
              ('var', rng.choice(np.array([1, 4], np.float32), cin))]
        nodes = [N('BatchNormalization', ['x', 'sc', 'bb', 'mu', 'var'], ['n'], epsilon=0.0),
                 N('Mul', ['n', 'k'], ['m']), N('Add', ['m', 'sh'], ['ad'])]
        last = 'ad'
        if act:
            nodes.append(N(act, ['ad'], ['r'], **({'alpha': 0.25} if act == 'LeakyRelu' else {})))
            last = 'r'
        nodes += [N('Conv', [last, 'w', 'b'], ['y'], pads=[1, 1, 1, 1]),
                  N('Conv', ['x', 'w'], ['y2'])]  # x has another reader
        graph_case(f'test_fl_preops_{cin}_{hw}_{(act or "none").lower()}', nodes,
                   [('x', fq(2, cin, hw, hw + 1))],
                   [('w', fw(64, cin, 3, 3)), ('b', fw(64)), ('k', fq(cin, 1, 1)), ('sh', fq(cin, 1, 1))] + bn,
                   ['y', 'y2'])
    # a Relu alone before a conv, fed by a Concat (as after a dense block)
    graph_case('test_fl_preops_relu_concat',
               [N('Concat', ['x', 'x2'], ['cat'], axis=1), N('Relu', ['cat'], ['r']),
                N('Conv', ['r', 'w'], ['y'], strides=[2, 2])],
               [('x', fq(1, 16, 18, 18)), ('x2', fq(1, 16, 18, 18))], [('w', fw(32, 32, 3, 3))], ['y'])
    # activations a conv applies as oneDNN post-ops: Swish (and the spelled-out SiLU that the graph
    # rewrite turns into it), HardSwish, Gelu in both forms (and spelled out), then a second conv
    # reading the result in the opaque layout
    x = f(1, 16, 9, 9)
    conv_w = [('w', f(32, 16, 3, 3) / 8), ('b', f(32)), ('w2', f(16, 32, 1, 1) / 8)]
    for name, acts, opset in (
            ('swish', [N('Swish', ['a'], ['r'], alpha=0.75)], 24),
            ('silu', [N('Sigmoid', ['a'], ['s']), N('Mul', ['a', 's'], ['r'])], 17),
            ('hardswish', [N('HardSwish', ['a'], ['r'])], 17),
            ('gelu_erf', [N('Gelu', ['a'], ['r'])], 20),
            ('gelu_tanh', [N('Gelu', ['a'], ['r'], approximate='tanh')], 20),
            ('gelu_spelled', [N('Div', ['a', 'sqrt2'], ['d']), N('Erf', ['d'], ['e']),
                              N('Add', ['e', 'one'], ['p']), N('Mul', ['a', 'p'], ['q']),
                              N('Mul', ['q', 'half'], ['r'])], 17)):
        consts = [('sqrt2', np.array(np.sqrt(2.0), np.float32)), ('one', np.array(1.0, np.float32)),
                  ('half', np.array(0.5, np.float32))] if name == 'gelu_spelled' else []
        graph_case(f'test_fl_conv_postop_{name}',
                   [N('Conv', ['x', 'w', 'b'], ['a'], pads=[1, 1, 1, 1])] + acts +
                   [N('Conv', ['r', 'w2'], ['y'])],
                   [('x', x)], conv_w + consts, ['y'], opset=opset)

    # channels off the 16 grid stay opaque too (once padded to oneDNN's 16-channel blocks, now
    # channels last): a residual whose addend is opaque, a stride-2 depthwise conv, a MaxPool
    # between them
    x24 = fw(2, 24, 10, 10)
    graph_case('test_fl_opaque_padded_residual',
               [h.make_node('Conv', ['x', 'wa'], ['r']),
                h.make_node('Conv', ['r', 'wb', 'bb'], ['a']), h.make_node('Relu', ['a'], ['ar']),
                h.make_node('Conv', ['ar', 'wc'], ['c'], group=72, pads=[1, 1, 1, 1]),
                h.make_node('Conv', ['c', 'wd'], ['d']), h.make_node('Add', ['d', 'r'], ['s']),
                h.make_node('MaxPool', ['s'], ['p'], kernel_shape=[2, 2], strides=[2, 2]),
                h.make_node('Conv', ['p', 'we'], ['e'], group=24, strides=[2, 2], pads=[1, 1, 1, 1]),
                h.make_node('Conv', ['e', 'wf'], ['y'])],
               [('x', x24)], [('wa', fw(24, 24, 1, 1)), ('wb', fw(72, 24, 1, 1)), ('bb', fw(72)),
                              ('wc', fw(72, 1, 3, 3)), ('wd', fw(24, 72, 1, 1)),
                              ('we', fw(24, 1, 3, 3)), ('wf', fw(40, 24, 1, 1))], ['y'])
    # squeeze-and-excitation blocks (MobileNetV3, EfficientNet): a conv and a depthwise conv,
    # the global pooling, two convs and a hard sigmoid make the scale, its Mul by `mul` feeds a
    # last conv; dyadic values throughout (8x8 pixels, a hard sigmoid of slope 1/4), so the sums
    # stay exact
    def se_block(ch, mul, tail):
        N = h.make_node
        nodes = [N('Conv', ['x', 'wa', 'ba'], ['a']), N('Relu', ['a'], ['ar']),
                 N('Conv', ['ar', 'wb'], ['b'], group=ch, pads=[1, 1, 1, 1]), N('Relu', ['b'], ['br']),
                 N('GlobalAveragePool', ['br'], ['g']), N('Conv', ['g', 'wc', 'bc'], ['c']),
                 N('Relu', ['c'], ['cr']), N('Conv', ['cr', 'wd', 'bd'], ['d']),
                 N('HardSigmoid', ['d'], ['f'], alpha=0.25, beta=0.5), N('Mul', mul, ['m'])]
        inits = [('wa', fw(ch, 24, 1, 1)), ('ba', fw(ch)), ('wb', fw(ch, 1, 3, 3)), ('wc', fw(24, ch, 1, 1)),
                 ('bc', fw(24)), ('wd', fw(ch, 24, 1, 1)), ('bd', fw(ch)), ('we', fw(24, ch, 1, 1))]
        return nodes + tail, inits

    # batch 2: the factors differ per image, the pooling and the Mul run opaque between the convs
    x8 = fw(2, 24, 8, 8)
    for ch in (72, 32):
        nodes, inits = se_block(ch, ['br', 'f'], [h.make_node('Conv', ['m', 'we'], ['e']),
                                                   h.make_node('Add', ['e', 'x'], ['y'])])
        graph_case(f'test_fl_opaque_se_block_{ch}', nodes, [('x', x8)], inits, ['y'])
    # batch 1 at 8x8 pixels: the next conv's weights are more than an eighth of X
    # (core/fuse_conv_io.c, fuse_se_scale), so the Mul runs as a step of its own; the conv's
    # bias, a BatchNormalization folded in, and the residual Add on the fused conv; 40 channels:
    # X opaque with channels off the 16 grid (at 16x16, at the end of this file, the scale goes
    # into the weights)
    x1 = fw(1, 24, 8, 8)
    for ch in (72, 40):
        nodes, inits = se_block(ch, ['f', 'br'], [
            h.make_node('Conv', ['m', 'we', 'be'], ['e']),
            h.make_node('BatchNormalization', ['e', 'bn_s', 'bn_b', 'bn_m', 'bn_v'], ['en']),
            h.make_node('Add', ['x', 'en'], ['y'])])
        graph_case(f'test_fl_se_scale_weights_{ch}', nodes, [('x', x1)],
                   inits + [('be', fw(24)), ('bn_s', f(24)), ('bn_b', f(24)), ('bn_m', f(24)),
                            ('bn_v', np.abs(f(24)) + 0.5)], ['y'])
    # a Sigmoid scale computed by the graph, not by a conv, before a 3x3, a 1-D and a 3-D conv:
    # the 3-D one takes it into its weights, the others' weights are more than an eighth of X
    # here (they take it at the end of this file)
    def sigmoid_scale_case(name, xs, ws, data):
        rank = len(xs)
        graph_case(f'test_fl_se_scale_weights_{name}',
                   [N('Conv', ['x', 'wa'], ['a']),
                    N('GlobalAveragePool', ['a'], ['g']), N('Sigmoid', ['g'], ['sg']),
                    N('Mul', ['a', 'sg'], ['m']), N('Conv', ['m', 'wb'], ['y'], pads=[1] * (2 * (rank - 2)))],
                   [('x', data(*xs))], [('wa', data(32, 32, *([1] * (rank - 2)))), ('wb', data(*ws))],
                   ['y'])

    for name, xs, ws in (('3x3', (1, 32, 16, 16), (8, 32, 3, 3)), ('1d', (1, 32, 64), (8, 32, 3)),
                         ('3d', (1, 32, 6, 6, 6), (8, 32, 1, 1, 1))):
        sigmoid_scale_case(name, xs, ws, f)
    # weights larger than X: the Mul stays a step of its own
    graph_case('test_fl_se_scale_big_weights',
               [N('Conv', ['x', 'wa'], ['a']), N('GlobalAveragePool', ['a'], ['g']),
                N('Sigmoid', ['g'], ['sg']), N('Mul', ['a', 'sg'], ['m']), N('Conv', ['m', 'wb'], ['y'])],
               [('x', f(1, 64, 4, 4))], [('wa', f(64, 64, 1, 1)), ('wb', f(96, 64, 1, 1))], ['y'])
    # convs reading X through a Transpose from channels last and writing Y through one to
    # channels last (ConvNeXt): a stem conv, LayerNorm2d, a block's depthwise conv, LayerNorm
    # and MLP in channels last, its layer scale and residual, then a downsampling conv
    for ch in (32, 24):
        graph_case(f'test_fl_conv_channels_last_block_{ch}',
                   [N('Conv', ['x', 'w0', 'b0'], ['s'], strides=[2, 2]),
                    N('Transpose', ['s'], ['st'], perm=[0, 2, 3, 1]),
                    N('LayerNormalization', ['st', 'g0', 'be0'], ['sn'], axis=-1),
                    N('Transpose', ['sn'], ['a'], perm=[0, 3, 1, 2]),
                    N('Conv', ['a', 'wd', 'bd'], ['d'], group=ch, pads=[3, 3, 3, 3]),
                    N('Transpose', ['d'], ['dt'], perm=[0, 2, 3, 1]),
                    N('LayerNormalization', ['dt', 'g1', 'be1'], ['dn'], axis=-1),
                    N('MatMul', ['dn', 'm1'], ['h1']), N('Gelu', ['h1'], ['h1g']),
                    N('MatMul', ['h1g', 'm2'], ['h2']),
                    N('Transpose', ['h2'], ['h2t'], perm=[0, 3, 1, 2]),
                    N('Mul', ['ls', 'h2t'], ['l']), N('Add', ['l', 'a'], ['r']),
                    N('Transpose', ['r'], ['rt'], perm=[0, 2, 3, 1]),
                    N('LayerNormalization', ['rt', 'g2', 'be2'], ['rn'], axis=-1),
                    N('Transpose', ['rn'], ['rnt'], perm=[0, 3, 1, 2]),
                    N('Conv', ['rnt', 'wy'], ['cy'], strides=[2, 2]), N('Relu', ['cy'], ['y'])],
                   [('x', f(1, 3, 20, 20))],
                   [('w0', f(ch, 3, 2, 2)), ('b0', f(ch)), ('g0', f(ch)), ('be0', f(ch)),
                    ('wd', f(ch, 1, 7, 7)), ('bd', f(ch)), ('g1', f(ch)), ('be1', f(ch)),
                    ('m1', f(ch, 4 * ch)), ('m2', f(4 * ch, ch)), ('ls', f(ch, 1, 1)),
                    ('g2', f(ch)), ('be2', f(ch)), ('wy', f(2 * ch, ch, 2, 2))], ['y'], opset=20)
    # 1-D and 3-D convs with their channels last on both sides, a post-op before the Transpose;
    # a Transpose of another order (read by a conv, and written by one) stays a step of its own
    graph_case('test_fl_conv_channels_last_1d',
               [N('Transpose', ['x'], ['xc'], perm=[0, 2, 1]),
                N('Conv', ['xc', 'wa'], ['a'], pads=[1, 1]), N('Relu', ['a'], ['ar']),
                N('Transpose', ['ar'], ['y'], perm=[0, 2, 1])],
               [('x', f(2, 30, 16))], [('wa', f(24, 16, 3))], ['y'])
    graph_case('test_fl_conv_channels_last_3d',
               [N('Transpose', ['x'], ['xc'], perm=[0, 4, 1, 2, 3]),
                N('Conv', ['xc', 'wa', 'ba'], ['a'], strides=[1, 2, 2]),
                N('Transpose', ['a'], ['y'], perm=[0, 2, 3, 4, 1])],
               [('x', f(1, 4, 8, 8, 16))], [('wa', f(32, 16, 1, 3, 3)), ('ba', f(32))], ['y'])
    graph_case('test_fl_conv_channels_other_orders',
               [N('Transpose', ['x'], ['xc'], perm=[0, 3, 2, 1]),
                N('Conv', ['xc', 'wa'], ['a']),
                N('Transpose', ['a'], ['y'], perm=[0, 3, 2, 1])],
               [('x', f(1, 6, 5, 16))], [('wa', f(32, 16, 1, 1))], ['y'])
    # a classifier's head: the last conv's opaque output pooled straight into a plain [N, C, 1, 1]
    # (the two layouts are one), channels on the 16 grid or off it; batch 2
    xh = fw(2, 24, 7, 7)
    for ch, pool in ((32, 'GlobalAveragePool'), (48, 'GlobalMaxPool'), (40, 'GlobalAveragePool')):
        graph_case(f'test_fl_head_{pool.lower()}_{ch}',
                   [N('Conv', ['x', 'wa'], ['a']), N('Relu', ['a'], ['ar']),
                    N('Conv', ['ar', 'wb'], ['b'], group=ch, pads=[1, 1, 1, 1]),
                    N(pool, ['b'], ['g']), N('Flatten', ['g'], ['fl']),
                    N('Gemm', ['fl', 'wg', 'bg'], ['y'], transB=1)],
                   [('x', xh)], [('wa', fw(ch, 24, 1, 1)), ('wb', fw(ch, 1, 3, 3)),
                                 ('wg', fw(10, ch)), ('bg', fw(10))], ['y'])
    # (the cases below draw from a generator of their own, so the cases after them keep theirs)
    rng_cl = np.random.default_rng(12)

    def f_cl(*shape):
        return rng_cl.standard_normal(shape).astype(np.float32)

    def fw_cl(*shape):
        return rng_cl.integers(-1, 2, shape).astype(np.float32)

    # global pooling of an opaque tensor over many pixels: reduced in runs of pixels, then the
    # runs combined (kernels_cpu/common/opaque.c), 2-D and 3-D (onnx's reference GlobalMaxPool
    # fails on 3-D)
    for pool, name, xs, ws in (('GlobalAveragePool', '2d', (2, 24, 40, 40), (40, 24, 3, 3)),
                               ('GlobalMaxPool', '2d', (2, 24, 40, 40), (40, 24, 3, 3)),
                               ('GlobalAveragePool', '3d', (1, 24, 6, 20, 20), (40, 24, 1, 3, 3))):
        graph_case(f'test_fl_opaque_{pool.lower()}_runs_{name}',
                   [N('Conv', ['x', 'wa'], ['a']), N('Relu', ['a'], ['ar']), N(pool, ['ar'], ['g']),
                    N('Conv', ['g', 'wb'], ['y'])],
                   [('x', f_cl(*xs))],
                   [('wa', f_cl(*ws)), ('wb', f_cl(16, 40, *([1] * (len(xs) - 2))))], ['y'])
    # channels-last Concats whose input 0 dies there: at one pixel (N 1, 1x1) the Concat starts in
    # its bytes (KF_INPLACE_PREFIX), at more it copies pixel by pixel
    for name, hw in (('1x1', 1), ('3x3', 3)):
        graph_case(f'test_fl_concat_opaque_prefix_{name}',
                   [N('Conv', ['x', 'wa'], ['a']), N('Conv', ['x', 'wb'], ['b']),
                    N('Concat', ['a', 'b'], ['cat'], axis=1), N('Conv', ['cat', 'wc'], ['y'])],
                   [('x', fw_cl(1, 16, hw, hw))],
                   [('wa', fw_cl(24, 16, 1, 1)), ('wb', fw_cl(40, 16, 1, 1)),
                    ('wc', fw_cl(8, 64, 1, 1))], ['y'])
    # the factors first, a GlobalMaxPool, and a Mul of two tensors of one shape
    graph_case('test_fl_opaque_mul_forms',
               [h.make_node('Conv', ['x', 'wa'], ['a']),
                h.make_node('HardSigmoid', ['a'], ['as'], alpha=0.25, beta=0.5),
                h.make_node('GlobalMaxPool', ['as'], ['g']),
                h.make_node('Conv', ['g', 'wb'], ['f']), h.make_node('Relu', ['f'], ['fs']),
                h.make_node('Mul', ['fs', 'as'], ['m']),
                h.make_node('Conv', ['x', 'wc'], ['c']), h.make_node('Mul', ['m', 'c'], ['mc']),
                h.make_node('Conv', ['mc', 'wd'], ['y'])],
               [('x', x8)], [('wa', fw(40, 24, 1, 1)), ('wb', fw(40, 40, 1, 1)),
                             ('wc', fw(40, 24, 1, 1)), ('wd', fw(8, 40, 1, 1))], ['y'])

    # MatMul chains: an Add of per-column constants (the bias, either operand, [N], [1,1,N] or
    # one value), then activations and an Add of a same-shaped tensor, run as the product's
    # oneDNN bias and post-ops (core/fuse.c)
    a3 = f(2, 5, 8)
    for name, nodes, inits in (
            ('bias_gelu', [N('MatMul', ['x', 'w'], ['m']), N('Add', ['bias', 'm'], ['b']),
                           N('Gelu', ['b'], ['y'])], [('bias', f(12))]),
            ('bias_tanh_gelu_residual',
             [N('MatMul', ['x', 'w'], ['m']), N('Add', ['m', 'bias'], ['b']),
              N('Gelu', ['b'], ['g'], approximate='tanh'), N('Add', ['g', 'r'], ['y'])],
             [('bias', f(1, 1, 12))]),
            ('scalar_bias_relu', [N('MatMul', ['x', 'w'], ['m']), N('Add', ['m', 'bias'], ['b']),
                                  N('Relu', ['b'], ['y'])], [('bias', np.array(0.25, np.float32))]),
            ('residual_first', [N('MatMul', ['x', 'w'], ['m']), N('Add', ['r', 'm'], ['y'])], []),
            # the biased product is read twice: the chain ends at the bias
            ('bias_read_twice', [N('MatMul', ['x', 'w'], ['m']), N('Add', ['m', 'bias'], ['b']),
                                 N('Sigmoid', ['b'], ['s']), N('Add', ['b', 's'], ['y'])],
             [('bias', f(12))])):
        graph_case(f'test_fl_matmul_{name}', nodes, [('x', a3), ('r', f(2, 5, 12))],
                   [('w', f(8, 12))] + inits, ['y'], opset=20)
    # a product of two inputs (attention's Q K^T), batched, with a per-column constant and Tanh
    graph_case('test_fl_matmul_batched_inputs',
               [N('MatMul', ['q', 'k'], ['m']), N('Add', ['m', 'bias'], ['b']), N('Tanh', ['b'], ['y'])],
               [('q', f(2, 3, 4, 8)), ('k', f(2, 3, 8, 6))], [('bias', f(6))], ['y'])
    # a single row times a constant B (a classifier at batch 1) runs on B packed in panels of 64
    # columns (kernels_cpu/math/gemm.c gemv_run): Gemm with transB, alpha, and C as one value,
    # [N] or [1, N] (beta), 64 and 100 columns (a padded panel); a MatMul of a [1, 1, K] row with
    # its bias, each post-op kind, and a residual
    x1 = f(1, 70)
    for name, n, attrs, c in (('transb_alpha', 100, {'transB': 1, 'alpha': 0.5}, f(100)),
                              ('beta_row', 64, {'beta': 2.0}, f(1, 64)),
                              ('scalar_c', 100, {}, np.array([1.5], np.float32)),
                              ('no_c', 130, {'transA': 1}, None)):
        w = f(n, 70) if attrs.get('transB') else f(70, n)
        xa = x1.T.copy() if attrs.get('transA') else x1
        graph_case(f'test_fl_gemv_gemm_{name}',
                   [N('Gemm', ['x', 'w'] + (['c'] if c is not None else []), ['y'], **attrs)],
                   [('x', xa)], [('w', w)] + ([('c', c)] if c is not None else []), ['y'], opset=13)
    r1 = f(1, 1, 96)
    for name, post in (('relu', [N('LeakyRelu', ['b'], ['y'], alpha=0.1)]),
                       ('clip', [N('Clip', ['b', 'lo', 'hi'], ['y'])]),
                       ('sigmoid', [N('Sigmoid', ['b'], ['y'])]),
                       ('tanh', [N('Tanh', ['b'], ['y'])]),
                       ('hardsigmoid', [N('HardSigmoid', ['b'], ['y'], alpha=0.3, beta=0.4)]),
                       ('silu', [N('Sigmoid', ['b'], ['s']), N('Mul', ['b', 's'], ['y'])]),
                       ('hardswish', [N('HardSwish', ['b'], ['y'])]),
                       ('gelu', [N('Gelu', ['b'], ['y'])]),
                       ('gelu_tanh', [N('Gelu', ['b'], ['y'], approximate='tanh')]),
                       ('scaled_residual', [N('Mul', ['b', 'half'], ['h']), N('Relu', ['h'], ['hr']),
                                            N('Add', ['hr', 'r'], ['y'])])):
        graph_case(f'test_fl_gemv_matmul_{name}',
                   [N('MatMul', ['x', 'w'], ['m']), N('Add', ['m', 'bias'], ['b'])] + post,
                   [('x', f(1, 1, 40)), ('r', r1)],
                   [('w', f(40, 96) * np.float32(0.25)), ('bias', f(96)), ('lo', np.array(-0.5, np.float32)),
                    ('hi', np.array(0.7, np.float32)), ('half', np.array(0.5, np.float32))], ['y'],
                   opset=20)
    # the fused step's addend dies there: its output takes the addend's bytes (KF_INPLACE_ADDEND)
    # and adds onto it in place; a conv (channels last and plain, 16 and 24 channels), a conv over no
    # input channels (the bias alone, plus the addend), a MatMul, and a single-row MatMul
    for ch in (16, 24):
        graph_case(f'test_fl_inplace_addend_conv_{ch}',
                   [N('Conv', ['x', 'wa'], ['a']), N('Relu', ['a'], ['ar']),
                    N('Conv', ['ar', 'wb'], ['b'], pads=[1, 1, 1, 1]), N('Relu', ['b'], ['br']),
                    N('Conv', ['br', 'wc', 'bc'], ['c']), N('Add', ['c', 'ar'], ['s']),
                    N('Relu', ['s'], ['sr']), N('Conv', ['sr', 'wd'], ['d']), N('Add', ['sr', 'd'], ['y'])],
                   [('x', f(1, 8, 9, 9))], [('wa', f(ch, 8, 1, 1)), ('wb', f(ch, ch, 3, 3)),
                                            ('wc', f(ch, ch, 1, 1)), ('bc', f(ch)),
                                            ('wd', f(ch, ch, 1, 1))], ['y'])
    # (the reference evaluator refuses a conv over no channels: the expected output is written out)
    xe, be = f(1, 4, 3, 3), f(4)
    ge = h.make_graph([N('Relu', ['x'], ['a']), N('Conv', ['e', 'w', 'b'], ['c']), N('Add', ['c', 'a'], ['s']),
                       N('Neg', ['s'], ['y'])],
                      'g', [h.make_tensor_value_info('x', TP.FLOAT, [1, 4, 3, 3]),
                            h.make_tensor_value_info('e', TP.FLOAT, [1, 0, 3, 3])],
                      [h.make_tensor_value_info('y', TP.FLOAT, [1, 4, 3, 3])],
                      initializer=[nh.from_array(np.zeros((4, 0, 1, 1), np.float32), 'w'), nh.from_array(be, 'b')])
    s.write('test_fl_inplace_addend_empty_conv', h.make_model(ge, opset_imports=[h.make_opsetid('', 17)]),
            [('x', xe), ('e', np.zeros((1, 0, 3, 3), np.float32))],
            [('y', -(np.maximum(xe, 0) + be.reshape(1, 4, 1, 1)))])
    # the same between convs: its Y and its addend opaque (channels last), the bias and the
    # addend written in that layout (a generator of its own: the cases after keep their data)
    rng_e = np.random.default_rng(13)
    xo, wa, bo, wd = (rng_e.integers(-1, 2, sh).astype(np.float32)
                      for sh in ((1, 16, 3, 2), (16, 16, 1, 1), (16,), (8, 16, 1, 1)))
    go = h.make_graph([N('Conv', ['x', 'wa'], ['a']), N('Conv', ['e', 'w', 'b'], ['c']),
                       N('Add', ['c', 'a'], ['s']), N('Conv', ['s', 'wd'], ['y'])],
                      'g', [h.make_tensor_value_info('x', TP.FLOAT, [1, 16, 3, 2]),
                            h.make_tensor_value_info('e', TP.FLOAT, [1, 0, 3, 2])],
                      [h.make_tensor_value_info('y', TP.FLOAT, [1, 8, 3, 2])],
                      initializer=[nh.from_array(np.zeros((16, 0, 1, 1), np.float32), 'w'),
                                   nh.from_array(bo, 'b'), nh.from_array(wa, 'wa'), nh.from_array(wd, 'wd')])
    so = np.einsum('mc,nchw->nmhw', wa[:, :, 0, 0], xo) + bo.reshape(1, 16, 1, 1)
    s.write('test_fl_inplace_addend_empty_conv_opaque',
            h.make_model(go, opset_imports=[h.make_opsetid('', 17)]),
            [('x', xo), ('e', np.zeros((1, 0, 3, 2), np.float32))],
            [('y', np.einsum('mc,nchw->nmhw', wd[:, :, 0, 0], so).astype(np.float32))])
    for name, shape in (('rows', (2, 6, 32)), ('single_row', (1, 1, 96))):
        k = shape[-1]
        graph_case(f'test_fl_inplace_addend_matmul_{name}',
                   [N('MatMul', ['x', 'w1'], ['r']), N('Relu', ['r'], ['t']), N('MatMul', ['t', 'w2'], ['m']),
                    N('Add', ['m', 'bias'], ['b']), N('Add', ['b', 'r'], ['s']), N('Neg', ['s'], ['y'])],
                   [('x', f(*shape[:-1], 16))], [('w1', f(16, k)), ('w2', f(k, k)), ('bias', f(k))], ['y'])
    # DenseNet's dense block: each Concat appends a layer's features to the previous Concat, which
    # dies there, so the Concats grow one buffer (KF_INPLACE_PREFIX); the convs read it through
    # pre-ops (plain) or directly (channels last, 16 and 32 channels); at batch 2 the rows interleave
    # and every Concat copies. Small integers and halves: every sum is exact.
    for name, batch, pre in (('plain', 1, True), ('blocked', 1, False), ('batch2', 2, True)):
        nodes, inits, cur, ch = [], [], 'x', 16
        for i in range(4):
            src = cur
            if pre:
                nodes += [N('Mul', [cur, f's{i}'], [f'n{i}']), N('Add', [f'n{i}', f'b{i}'], [f'a{i}']),
                          N('Relu', [f'a{i}'], [f'r{i}'])]
                inits += [(f's{i}', np.full((ch, 1, 1), 0.5, np.float32)), (f'b{i}', fw(ch, 1, 1))]
                src = f'r{i}'
            nodes += [N('Conv', [src, f'w{i}'], [f'c{i}'], pads=[1, 1, 1, 1]),
                      N('Concat', [cur, f'c{i}'], [f'cat{i}'], axis=1)]
            inits.append((f'w{i}', fw(16, ch, 3, 3)))
            cur, ch = f'cat{i}', ch + 16
        nodes.append(N('Conv', [cur, 'wy'], ['y']))
        graph_case(f'test_fl_concat_grows_in_place_{name}', nodes, [('x', fw(batch, 16, 6, 6))],
                   inits + [('wy', fw(8, ch, 1, 1))], ['y'])
    # input 0 read again after the Concat, given twice, and Concats along the last axis and axis 0
    graph_case('test_fl_concat_prefix_kept',
               [N('Relu', ['x'], ['a']), N('Concat', ['a', 'x'], ['c'], axis=1), N('Neg', ['c'], ['cr']),
                N('Concat', ['cr', 'cr'], ['d'], axis=1), N('Neg', ['d'], ['dn']),
                N('Concat', ['dn', 'a'], ['e'], axis=1), N('Relu', ['x'], ['b']),
                N('Concat', ['b', 'x'], ['g'], axis=-1), N('Sigmoid', ['x'], ['s']),
                N('Concat', ['s', 'x'], ['k'], axis=0), N('Relu', ['e'], ['y1']), N('Relu', ['g'], ['y2']),
                N('Relu', ['k'], ['y3']),
                N('Relu', ['x'], ['p']), N('Concat', ['p', 'x'], ['p1'], axis=1),
                N('Concat', ['p', 's'], ['p2'], axis=1), N('Sub', ['p1', 'p2'], ['y4'])],
               [('x', f(1, 1, 3, 5))], [], ['y1', 'y2', 'y3', 'y4'])
    # Views (core/exec_view.c): a Gather of one constant index, a Split, and a Transpose moving only
    # dims of 1 read their input's bytes in place. Each view is read after in-place steps could
    # have reused its bytes, by steps that could take them in place, and beside its root.
    i64 = lambda v: np.array(v, np.int64)  # noqa: E731
    graph_case('test_fl_view_gather_qkv',
               [N('Relu', ['x'], ['r']), N('Gather', ['r', 'i0'], ['q'], axis=1),
                N('Gather', ['r', 'i1'], ['k'], axis=1), N('Gather', ['r', 'im1'], ['v'], axis=1),
                N('Sigmoid', ['q'], ['qs']), N('Neg', ['k'], ['kn']), N('Mul', ['qs', 'kn'], ['qk']),
                N('Add', ['qk', 'v'], ['y1']), N('ReduceSum', ['r'], ['y2'], keepdims=0)],
               [('x', f(1, 3, 4, 8))], [('i0', i64(0)), ('i1', i64(1)), ('im1', i64(-1))], ['y1', 'y2'])
    graph_case('test_fl_view_split_parts',
               [N('Relu', ['x'], ['r']), N('Split', ['r', 'sp'], ['a', 'b', 'c'], axis=2),
                N('Neg', ['a'], ['an']), N('Exp', ['c'], ['ce']), N('Gather', ['b', 'i1'], ['bg'], axis=2),
                N('Concat', ['an', 'ce'], ['y1'], axis=2), N('Relu', ['bg'], ['y2']),
                N('Concat', ['c', 'a'], ['cat'], axis=2), N('Sigmoid', ['cat'], ['y3'])],
               [('x', f(1, 1, 9, 5))], [('sp', i64([2, 3, 4])), ('i1', i64([2]))], ['y1', 'y2', 'y3'])
    # torchvision's multi-head attention: [1, S, E] -> [S, 1, E] (a view), its in-projection split
    # by Gathers of a transposed tensor; a Transpose that moves bytes and a Split along a later
    # axis stay copies
    graph_case('test_fl_view_transpose_units',
               [N('Relu', ['x'], ['r']), N('Transpose', ['r'], ['t'], perm=[1, 0, 2]),
                N('MatMul', ['t', 'w'], ['m']), N('Reshape', ['m', 'shp'], ['m4']),
                N('Transpose', ['m4'], ['mt'], perm=[2, 0, 1, 3]), N('Gather', ['mt', 'i0'], ['q']),
                N('Gather', ['mt', 'i2'], ['v']), N('Add', ['q', 'v'], ['qv']), N('Tanh', ['qv'], ['y1']),
                N('Split', ['t', 'sp'], ['t0', 't1'], axis=2), N('Sub', ['t1', 't0'], ['y2']),
                N('Neg', ['t'], ['y3'])],
               [('x', f(1, 7, 6))], [('w', f(6, 12)), ('shp', i64([7, 1, 3, 4])), ('i0', i64(0)),
                                     ('i2', i64(2)), ('sp', i64([3, 3]))], ['y1', 'y2', 'y3'])
    # a view inside its root, relabelled by a Reshape, then the first input of a Concat that
    # could grow in place (it must not: the view does not start its root), its root read no more
    graph_case('test_fl_view_reshaped_into_concat',
               [N('Relu', ['x'], ['r']), N('Gather', ['r', 'i1'], ['g'], axis=1),
                N('Reshape', ['g', 'shp'], ['gr']), N('Neg', ['z'], ['zn']),
                N('Concat', ['gr', 'zn'], ['cat'], axis=1), N('Sigmoid', ['cat'], ['y'])],
               [('x', f(1, 3, 4, 6)), ('z', f(1, 2, 24))], [('i1', i64(1)), ('shp', i64([1, 1, 24]))], ['y'])
    # a Split part that starts inside its root before a Concat (its bytes would overlap the
    # Concat's first), and a root whose last reader could take its bytes while a view of it is
    # still to be read
    graph_case('test_fl_view_split_part_into_concat',
               [N('Relu', ['x'], ['r']), N('Split', ['r', 'sp'], ['p0', 'p1'], axis=1), N('Neg', ['p0'], ['y1']),
                N('Concat', ['p1', 'z'], ['cat'], axis=1), N('Sigmoid', ['cat'], ['y2'])],
               [('x', f(1, 4, 6)), ('z', f(1, 2, 6))], [('sp', i64([1, 3]))], ['y1', 'y2'])
    graph_case('test_fl_view_outlives_root_reader',
               [N('Relu', ['x'], ['r']), N('Gather', ['r', 'i1'], ['g'], axis=1), N('Sigmoid', ['r'], ['s']),
                N('ReduceSum', ['s', 'ax'], ['sr']), N('Add', ['g', 'sr'], ['y'])],
               [('x', f(1, 3, 8))], [('i1', i64(1)), ('ax', i64([1]))], ['y'])
    # a view of a graph input, and views that are graph outputs, are copies
    graph_case('test_fl_view_of_graph_input',
               [N('Gather', ['x', 'i1'], ['y1'], axis=0), N('Split', ['x', 'sp'], ['y2', 'y3'], axis=0),
                N('Transpose', ['x'], ['xt'], perm=[1, 0, 2]), N('Relu', ['xt'], ['y4'])],
               [('x', f(2, 1, 5))], [('i1', i64(1)), ('sp', i64([1, 1]))], ['y1', 'y2', 'y3', 'y4'])
    # a per-row constant is no bias: the Add stays a step of its own
    graph_case('test_fl_matmul_row_constant',
               [N('MatMul', ['x', 'w'], ['m']), N('Add', ['m', 'c'], ['b']), N('Relu', ['b'], ['y'])],
               [('x', a3)], [('w', f(8, 12)), ('c', f(5, 1))], ['y'])

    # LayerNormalization spelled out over the last axis (exporters before opset 17) becomes the
    # op (core/rules/layer_norm.c): Pow or d * d, with and without the bias, axes as input (opset 18);
    # a mean over another axis, or a gamma of another length, stays as written
    def layer_norm_nodes(square, beta, opset, axis=-1):
        axes = {}
        extra = []
        if opset >= 18:
            mean = lambda i, o: N('ReduceMean', [i, 'ax'], [o])
            extra.append(('ax', np.array([axis], np.int64)))
        else:
            mean = lambda i, o: N('ReduceMean', [i], [o], axes=[axis])
        nodes = [mean('x', 'mu'), N('Sub', ['x', 'mu'], ['d']),
                 N('Pow', ['d', 'two'], ['d2']) if square == 'pow' else N('Mul', ['d', 'd'], ['d2']),
                 mean('d2', 'var'), N('Add', ['var', 'eps'], ['ve']), N('Sqrt', ['ve'], ['sd']),
                 N('Div', ['d', 'sd'], ['n']), N('Mul', ['n', 'gamma'], ['y' if not beta else 'ng'])]
        if beta:
            nodes.append(N('Add', ['ng', 'beta'], ['y']))
        return nodes, extra
    xl = f(2, 7, 12)
    for name, square, beta, opset, gamma_len, axis in (('pow_beta', 'pow', True, 13, 12, -1),
                                                       ('square_no_beta', 'mul', False, 13, 12, -1),
                                                       ('axes_input', 'pow', True, 18, 12, -1),
                                                       ('positive_axis', 'pow', True, 13, 12, 2),
                                                       ('middle_axis', 'pow', True, 13, 1, 1)):
        nodes, extra = layer_norm_nodes(square, beta, opset, axis)
        inits = [('two', np.array(2.0, np.float32)), ('eps', np.array(1e-5, np.float32)),
                 ('gamma', f(gamma_len)), ('beta', f(gamma_len))][:4 if beta else 3] + extra
        graph_case(f'test_fl_layernorm_decomposed_{name}', nodes, [('x', xl)], inits, ['y'], opset=opset)
    # gamma through an Identity (the TorchScript exporter shares equal initializers so)
    nodes, _ = layer_norm_nodes('pow', True, 13)
    graph_case('test_fl_layernorm_decomposed_shared_gamma', [N('Identity', ['g0'], ['gamma'])] + nodes,
               [('x', xl)], [('two', np.array(2.0, np.float32)), ('eps', np.array(1e-5, np.float32)),
                             ('g0', f(12)), ('beta', f(12))], ['y'], opset=13)

    # Gemm chains (GPT-2's Conv1D): activations and a residual Add, also past a Reshape that
    # keeps the columns; a C added by rows is already a sum, so the residual Add stays a step
    x2 = f(10, 8)
    for name, nodes, inits, extra in (
            ('gelu_residual_reshaped',
             [N('Gemm', ['x', 'w', 'c'], ['m']), N('Reshape', ['m', 'sr'], ['mr']),
              N('Gelu', ['mr'], ['g'], approximate='tanh'), N('Add', ['r3', 'g'], ['y'])],
             [('c', f(12)), ('sr', np.array([2, 5, 12], np.int64))], [('r3', f(2, 5, 12))]),
            ('rows_relu', [N('Gemm', ['x', 'w', 'c'], ['m'], beta=0.5), N('Relu', ['m'], ['y'])],
             [('c', f(10, 12))], []),
            ('rows_residual', [N('Gemm', ['x', 'w', 'c'], ['m'], alpha=2.0), N('Add', ['m', 'r2'], ['y'])],
             [('c', f(10, 12))], [('r2', f(10, 12))]),
            # a Reshape that moves the columns ends the chain
            ('reshape_other_columns',
             [N('Gemm', ['x', 'w', 'c'], ['m']), N('Reshape', ['m', 'sr'], ['mr']), N('Tanh', ['mr'], ['y'])],
             [('c', f(12)), ('sr', np.array([10, 3, 4], np.int64))], [])):
        graph_case(f'test_fl_gemm_{name}', nodes, [('x', x2)] + extra, [('w', f(8, 12))] + inits, ['y'],
                   opset=20)

    # Attention's products read their operands and write their result through the Transposes,
    # relabelling Reshapes and scalar factors around them (strided views, core/fuse.c)
    B, S, H, D = 2, 5, 3, 4
    x = f(B, S, H * D)

    def shape(*d):
        return np.array(d, np.int64)

    def proj(name, bias=True):  # x @ w_<name> (+ b_<name>)
        nodes = [N('MatMul', ['x', f'w_{name}'], [f'{name}_m'])]
        inits = [(f'w_{name}', f(H * D, H * D))]
        if bias:
            nodes.append(N('Add', [f'b_{name}', f'{name}_m'], [f'{name}_p']))
            inits.append((f'b_{name}', f(H * D)))
        return nodes, inits, f'{name}_p' if bias else f'{name}_m'

    qn, qi, q = proj('q')
    kn, ki, k = proj('k', bias=False)
    vn, vi, v = proj('v')
    common = qn + kn + vn
    common_inits = qi + ki + vi + [('s4', shape(B, S, H, D)), ('s3', shape(B, S, H * D)),
                                   ('sh', shape(B, H, S, D)), ('c1', np.array(0.5, np.float32)),
                                   ('c2', np.array([0.7], np.float32)), ('c3', np.array(2.0, np.float32))]
    # Whisper's: Q scaled after its bias and again after its Transpose, K scaled after its
    # Transpose (the constant first), an identity Reshape between the product and its Transpose.
    # These two run as one fused attention (below); with the probabilities also a graph output
    # ("_probs") they stay two products that read and write through views.
    for suffix, outs in (('', ['y']), ('_probs', ['y', 'pr'])):
        graph_case(f'test_fl_matmul_views_whisper{suffix}', common + [
            N('Mul', [q, 'c1'], ['qs']), N('Reshape', ['qs', 's4'], ['q4']),
            N('Transpose', ['q4'], ['qt'], perm=[0, 2, 1, 3]), N('Mul', ['qt', 'c1'], ['qts']),
            N('Reshape', [k, 's4'], ['k4']), N('Transpose', ['k4'], ['kt'], perm=[0, 2, 3, 1]),
            N('Mul', ['c2', 'kt'], ['kts']),
            N('Reshape', [v, 's4'], ['v4']), N('Transpose', ['v4'], ['vt'], perm=[0, 2, 1, 3]),
            N('MatMul', ['qts', 'kts'], ['sc']), N('Softmax', ['sc'], ['pr'], axis=-1),
            N('MatMul', ['pr', 'vt'], ['o']), N('Reshape', ['o', 'sh'], ['o2']),
            N('Transpose', ['o2'], ['ot'], perm=[0, 2, 1, 3]), N('Reshape', ['ot', 's3'], ['y'])],
            [('x', x)], common_inits, outs)
        # BERT's (TorchScript): K transposed by (0, 2, 3, 1), the scores divided and masked
        graph_case(f'test_fl_matmul_views_bert{suffix}', common + [
            N('Reshape', [q, 's4'], ['q4']), N('Transpose', ['q4'], ['qt'], perm=[0, 2, 1, 3]),
            N('Reshape', [k, 's4'], ['k4']), N('Transpose', ['k4'], ['kt'], perm=[0, 2, 3, 1]),
            N('Reshape', [v, 's4'], ['v4']), N('Transpose', ['v4'], ['vt'], perm=[0, 2, 1, 3]),
            N('MatMul', ['qt', 'kt'], ['sc']), N('Div', ['sc', 'c3'], ['sd']),
            N('Add', ['sd', 'mask'], ['sm']), N('Softmax', ['sm'], ['pr'], axis=-1),
            N('MatMul', ['pr', 'vt'], ['o']), N('Transpose', ['o'], ['ot'], perm=[0, 2, 1, 3]),
            N('Reshape', ['ot', 's3'], ['y'])],
            [('x', x), ('mask', f(B, 1, 1, S))], common_inits, outs)
    # the dynamo exporter's K: two Transposes through Reshapes that merge and split the heads,
    # and a product whose result is also a graph output (read twice: no view of it)
    graph_case('test_fl_matmul_views_dynamo', common + [
        N('Reshape', [q, 's4'], ['q4']), N('Transpose', ['q4'], ['qt'], perm=[0, 2, 1, 3]),
        N('Reshape', [k, 's4'], ['k4']), N('Transpose', ['k4'], ['kt'], perm=[0, 2, 1, 3]),
        N('Reshape', ['kt', 'sbh'], ['k3']), N('Transpose', ['k3'], ['k3t'], perm=[0, 2, 1]),
        N('Reshape', ['k3t', 'skt'], ['kk']), N('Mul', ['kk', 'c1'], ['kks']),
        N('MatMul', ['qt', 'kks'], ['sc']), N('Softmax', ['sc'], ['pr'], axis=-1),
        N('Reshape', [v, 's4'], ['v4']), N('Transpose', ['v4'], ['vt'], perm=[0, 2, 1, 3]),
        N('MatMul', ['pr', 'vt'], ['o']), N('Transpose', ['o'], ['ot'], perm=[0, 2, 1, 3]),
        N('Reshape', ['ot', 's3'], ['y'])],
        [('x', x)], common_inits + [('sbh', shape(B * H, S, D)), ('skt', shape(B, H, D, S))],
        ['y', 'sc'])
    # torch's nn.MultiheadAttention (ViT's encoder): q, k and v from one projection of the
    # sequence-first input, [S, B, 3E] -> [S, B, 3, E] -> Unsqueeze -> Transpose -> Squeeze ->
    # Gather of one index each, the heads folded into the batch ([S, B*H, D] -> [B*H, S, D]) and
    # split again. The fused attention reads all three straight from the projection (a select
    # and a regrouped view each); "_q_out" also hands out q, so the shared links stay steps and
    # each walk starts after its Gather; "_index_1d" gathers with one-element index tensors;
    # "_out_proj" ends in the out-projection's rows ([S*B, E] through a Gemm, back to [S, B, E],
    # transposed to [B, S, E]), whose last Transpose moves into the attention's output view and
    # whose Gemm becomes a MatMul of the rows as they come; "_out_proj_residual": a Gemm without
    # transB or C, then the residual Add (which the product then takes).
    def packed_mha(suffix, outs, index_dims=(), out_proj=False):
        nodes = [N('Transpose', ['x'], ['xs'], perm=[1, 0, 2]), N('MatMul', ['xs', 'w_in'], ['pm']),
                 N('Add', ['b_in', 'pm'], ['pa']), N('Reshape', ['pa', 's5'], ['p4']),
                 N('Unsqueeze', ['p4', 'ax0'], ['p5']),
                 N('Transpose', ['p5'], ['pt'], perm=[3, 1, 2, 0, 4]),
                 N('Squeeze', ['pt', 'ax3'], ['p3'])]
        inits = [('w_in', f(H * D, 3 * H * D)), ('b_in', f(3 * H * D)),
                 ('s5', shape(S, B, 3, H * D)), ('ax0', shape(0)), ('ax3', shape(3)),
                 ('sfold', shape(S, B * H, D)), ('sheads', shape(B, H, S, D)),
                 ('sflat', shape(S * B, H * D)), ('c1', np.array(0.5, np.float32))]
        for i, n in enumerate('qkv'):
            inits.append((f'i_{n}', np.array(i, np.int64).reshape(index_dims)))
            g = [N('Gather', ['p3', f'i_{n}'], [f'{n}g'], axis=0)]
            if index_dims:
                g.append(N('Squeeze', [f'{n}g', 'ax0'], [f'{n}s']))
            nodes += g + [N('Reshape', [f'{n}s' if index_dims else f'{n}g', 'sfold'], [f'{n}f']),
                          N('Transpose', [f'{n}f'], [f'{n}t'], perm=[1, 0, 2]),
                          N('Reshape', [f'{n}t', 'sheads'], [f'{n}h'])]
        nodes += [N('Mul', ['qh', 'c1'], ['qm']), N('Transpose', ['kh'], ['ktr'], perm=[0, 1, 3, 2]),
                  N('Mul', ['ktr', 'c1'], ['km']), N('MatMul', ['qm', 'km'], ['sc']),
                  N('Softmax', ['sc'], ['pr'], axis=-1), N('MatMul', ['pr', 'vh'], ['o']),
                  N('Transpose', ['o'], ['ot'], perm=[2, 0, 1, 3]),
                  N('Reshape', ['ot', 'sflat'], ['of' if out_proj else 'y'])]
        if out_proj:
            gemm = (N('Gemm', ['of', 'w_o', 'b_o'], ['proj'], transB=1) if out_proj != 'residual'
                    else N('Gemm', ['of', 'w_o'], ['proj']))
            last = 'y' if out_proj != 'residual' else 'yt'
            nodes += [gemm, N('Reshape', ['proj', 'sbe'], ['p3d']),
                      N('Transpose', ['p3d'], [last], perm=[1, 0, 2])]
            if out_proj == 'residual':
                nodes.append(N('Add', ['x', last], ['y']))
            inits += [('w_o', f(H * D, H * D)), ('b_o', f(H * D)), ('sbe', shape(S, B, H * D))]
        graph_case(f'test_fl_attention_packed_mha{suffix}', nodes, [('x', x)], inits, outs)

    packed_mha('', ['y'])
    packed_mha('_q_out', ['y', 'qg'])
    packed_mha('_index_1d', ['y'], index_dims=(1,))
    packed_mha('_out_proj', ['y'], out_proj=True)
    packed_mha('_out_proj_residual', ['y'], out_proj='residual')

    # ViT's patch embedding: a Conv whose stride is its kernel, flattened and transposed to
    # [N, patches, M], becomes one Gemm of all patches (core/rules/patch_embedding.c); a rectangular patch
    # without bias too, and (left a Conv) patches that overlap
    for name, xs, ws, bias, strides in (('', (2, 3, 16, 16), (8, 3, 4, 4), True, (4, 4)),
                                        ('_rect_no_bias', (1, 2, 12, 10), (5, 2, 3, 2), False, (3, 2)),
                                        ('_overlapping', (1, 3, 16, 16), (8, 3, 4, 4), True, (2, 2))):
        gh, gw = (xs[2] - ws[2]) // strides[0] + 1, (xs[3] - ws[3]) // strides[1] + 1
        ins = ['x', 'w', 'b'] if bias else ['x', 'w']
        inits = [('w', f(*ws)), ('sflat', shape(xs[0], ws[0], gh * gw))] + ([('b', f(ws[0]))] if bias else [])
        graph_case(f'test_fl_patch_embedding{name}',
                   [N('Conv', ins, ['c'], kernel_shape=list(ws[2:]), strides=list(strides)),
                    N('Reshape', ['c', 'sflat'], ['cf']), N('Transpose', ['cf'], ['y'], perm=[0, 2, 1])],
                   [('x', f(*xs))], inits, ['y'])
    # Reshapes no strided view can follow (merging a transposed S with D): the walk stops short,
    # and the product reads a copy
    graph_case('test_fl_matmul_views_unmergeable', common + [
        N('Reshape', [q, 's4'], ['q4']), N('Transpose', ['q4'], ['qt'], perm=[0, 2, 1, 3]),
        N('Reshape', ['qt', 'sm'], ['qm']), N('Reshape', ['qm', 'sh'], ['qb']),
        N('Reshape', [k, 's4'], ['k4']), N('Transpose', ['k4'], ['kt'], perm=[0, 2, 3, 1]),
        N('MatMul', ['qb', 'kt'], ['y'])],
        [('x', x)], common_inits + [('sm', shape(B, H, S * D))], ['y'])
    # scalar factors after a product merge into one linear post-op (oneDNN 2.7 applies the first
    # linear post-op's factor to every later one); a HardSigmoid after one ends the chain
    graph_case('test_fl_matmul_factors',
               [N('MatMul', ['q', 'k'], ['m']), N('Div', ['m', 'c3'], ['md']), N('Mul', ['md', 'c1'], ['mm']),
                N('Relu', ['mm'], ['r']), N('Mul', ['r', 'c2'], ['rm']),
                N('HardSigmoid', ['rm'], ['y'], alpha=0.3, beta=0.4)],
               [('q', f(2, 3, 4, 8)), ('k', f(2, 3, 8, 6))],
               [('c1', np.array(0.5, np.float32)), ('c2', np.array([0.7], np.float32)),
                ('c3', np.array(2.0, np.float32))], ['y'])
    # Attention spelled out runs as one step of the Attention kernel (core/fuse.c): the cases
    # above that end in Softmax and P*V take that path too; these add the other forms it takes
    # and some it must leave alone (compared with the reference either way)
    def attention(name, q, kt, v, mask=None, pre=(), post=(), opset=17, axis=-1, outputs=('y',),
                  tail=(), zero_nan=False, inputs=None):
        nodes = list(pre) + [N('MatMul', ['q', 'kt'], ['sc'])]
        cur = 'sc'
        for i, (op, c) in enumerate(post):
            nodes.append(N(op, [cur, c], [f'sc{i}']))
            cur = f'sc{i}'
        ins = list(zip(inputs or ('q', 'k' if pre else 'kt', 'v'), (q, kt, v)))
        if mask is not None:
            nodes.append(N('Add', ['mask', cur], ['scm']))
            cur = 'scm'
            ins.append(('mask', mask))
        nodes.append(N('Softmax', [cur], ['pr'], axis=axis))
        if zero_nan == 'half':  # a float16 export computed in float: IsNaN(Cast(P))
            nodes += [N('Cast', ['pr'], ['pr16'], to=TP.FLOAT16), N('IsNaN', ['pr16'], ['nan'])]
        elif zero_nan:  # torch's export: Where(IsNaN(P), 0, P)
            nodes.append(N('IsNaN', ['pr'], ['nan']))
        if zero_nan:
            nodes.append(N('Where', ['nan', 'zero', 'pr'], ['pz']))
        nodes += [N('MatMul', ['pz' if zero_nan else 'pr', 'v'], ['o' if tail else 'y'])] + list(tail)
        graph_case(name, nodes, ins, [('c1', np.array(0.25, np.float32)), ('c3', np.array(2.0, np.float32)),
                                      ('zero', np.array(0.0, np.float32))], list(outputs), opset=opset)

    # several blocks of query rows per head; K^T a tensor of its own (its rows are K's columns);
    # a 2-D mask of large negatives; the scores divided, then multiplied
    attention('test_fl_attention_long_rows', f(1, 2, 300, 16), f(1, 2, 16, 280), f(1, 2, 280, 24),
              mask=np.where(rng.random((300, 280)) < 0.3, -1e4, 0).astype(np.float32),
              post=[('Div', 'c3'), ('Mul', 'c1')])
    # rank 3 (heads folded into the batch), a cross attention (T != S, Dv != Dk), K read through
    # a Transpose, a mask [1, S, T], a factor before the product
    attention('test_fl_attention_3d_cross', f(6, 7, 8), f(6, 9, 8), f(6, 9, 5), mask=f(1, 7, 9),
              pre=[N('Transpose', ['k'], ['kt0'], perm=[0, 2, 1]), N('Mul', ['kt0', 'c1'], ['kt'])],
              outputs=('y',), tail=[N('Identity', ['o'], ['y'])])
    # a mask broadcast along the keys ([B, H, S, 1]); opset 11's Softmax over the last axis
    attention('test_fl_attention_mask_per_row', f(2, 3, 5, 4), f(2, 3, 4, 6), f(2, 3, 6, 4),
              mask=f(2, 3, 5, 1), opset=11, axis=3, tail=[N('Transpose', ['o'], ['y'], perm=[0, 2, 1, 3])])
    # torch's export of a scaled dot product zeroes rows a mask leaves empty (here rows 1 and 4
    # of the first head: the softmax makes them NaN, the output rows are 0)
    empty = np.zeros((1, 2, 6, 7), np.float32)
    empty[0, 0, [1, 4], :] = -np.inf
    attention('test_fl_attention_empty_rows_zeroed', f(1, 2, 6, 4), f(1, 2, 4, 7), f(1, 2, 7, 3),
              mask=empty, post=[('Mul', 'c1')], zero_nan=True, opset=18)
    attention('test_fl_attention_empty_rows_zeroed_half', f(1, 2, 6, 4), f(1, 2, 4, 7),
              f(1, 2, 7, 3), mask=empty, post=[('Mul', 'c1')], zero_nan='half', opset=18)
    # a causal mask of torch.finfo(float).min, the last 3 keys padded, and a row masked out
    # entirely: the products would stop at key 6 but for that row (its probabilities are
    # uniform over all 9 keys)
    keys, rows = np.arange(9)[None, :], np.arange(9)[:, None]
    lowest = np.where((keys > rows) | (keys >= 6), np.finfo(np.float32).min, 0).astype(np.float32)
    lowest[4, :] = np.finfo(np.float32).min
    attention('test_fl_attention_causal_lowest', f(1, 2, 9, 4), f(1, 2, 4, 9), f(1, 2, 9, 5),
              mask=lowest[None, None], post=[('Mul', 'c1')], zero_nan=True, opset=18)
    # a causal band of -inf over 300 positions: computed in blocks of 150 rows, the first block
    # stopping at key 150
    band = np.where(np.arange(300)[None, :] > np.arange(300)[:, None], -np.inf, 0).astype(np.float32)
    attention('test_fl_attention_causal_blocks', f(1, 2, 300, 8), f(1, 2, 8, 300), f(1, 2, 300, 8),
              mask=band, post=[('Mul', 'c1')])
    # the longest chain the fusion takes in: 8 factors on each of Q and K^T, 8 Transposes on V,
    # 7 factors on the scores, the float16 NaN test, 8 Transposes on the output (44 steps into
    # one); and factors on V, which scale the output rather than the scores, stay steps of their own
    def factors(src, dst, n):
        names = [src] + [f'{dst}{i}' for i in range(1, n)] + [dst]
        return [N('Mul', [names[i], 'c1' if i % 2 else 'c3'], [names[i + 1]]) for i in range(n)]
    perm = [[1, 0, 2, 3], [0, 2, 1, 3], [0, 1, 3, 2], [2, 1, 0, 3]] * 2
    tail = [N('Transpose', ['o' if i == 0 else f'ot{i}'], ['y' if i == 7 else f'ot{i + 1}'],
              perm=perm[i]) for i in range(8)]
    attention('test_fl_attention_longest_chain', f(2, 3, 5, 4), f(2, 3, 4, 6), f(2, 3, 6, 4),
              pre=factors('qin', 'q', 8) + factors('k', 'kt', 8) +
              [N('Transpose', ['vin' if i == 0 else f'vt{i}'], ['v' if i == 7 else f'vt{i + 1}'],
                 perm=[1, 0, 2, 3]) for i in range(8)],
              post=[('Mul', 'c1' if i % 2 else 'c3') for i in range(7)], zero_nan='half',
              tail=tail, inputs=('qin', 'k', 'vin'))
    attention('test_fl_attention_scaled_values', f(2, 3, 5, 4), f(2, 3, 4, 6), f(2, 3, 6, 4),
              pre=factors('vin', 'v', 2), post=[('Mul', 'c1')], inputs=('q', 'kt', 'vin'))
    # left as they are: a softmax over another axis, probabilities also a graph output
    attention('test_fl_attention_other_axis', f(2, 3, 5, 4), f(2, 3, 4, 5), f(2, 3, 5, 4), axis=2,
              tail=[N('Identity', ['o'], ['y'])])
    attention('test_fl_attention_probs_out', f(2, 3, 5, 4), f(2, 3, 4, 6), f(2, 3, 6, 4),
              mask=f(2, 1, 1, 6), outputs=('y', 'pr'), tail=[N('Identity', ['o'], ['y'])])
    graph_case('test_fl_conv_factor_hardsigmoid',
               [N('Conv', ['x', 'w'], ['c']), N('Relu', ['c'], ['r']), N('Div', ['r', 'c3'], ['d']),
                N('HardSigmoid', ['d'], ['y'], alpha=0.3, beta=0.4)],
               [('x', fw(1, 16, 7, 7))], [('w', fw(16, 16, 3, 3)), ('c3', np.array(4.0, np.float32))], ['y'])

    # ReduceMean over every axis after 1, kept (the dynamo exporter's adaptive average pooling)
    # becomes a GlobalAveragePool, which stays opaque between the convs; other means stay
    for opset, axes_kind in ((13, 'attr'), (18, 'input')):
        def mean(x, y, axes, keepdims=1):
            if axes_kind == 'attr':
                return [N('ReduceMean', [x], [y], axes=axes, keepdims=keepdims)], []
            name = f'{y}_axes'
            return [N('ReduceMean', [x, name], [y], keepdims=keepdims)], [(name, np.array(axes, np.int64))]
        se, se_axes = mean('ar', 'g', [-1, -2])
        other, other_axes = mean('ar', 'o', [1, 3], keepdims=0)
        graph_case(f'test_fl_reducemean_as_gap_opset{opset}',
                   [N('Conv', ['x', 'wa'], ['a']), N('Relu', ['a'], ['ar'])] + se +
                   [N('Conv', ['g', 'wb'], ['f']), N('HardSigmoid', ['f'], ['fs'], alpha=0.25, beta=0.5),
                    N('Mul', ['ar', 'fs'], ['m']), N('Conv', ['m', 'wc'], ['y'])] + other,
                   [('x', fw(2, 24, 8, 8))],
                   [('wa', fw(40, 24, 1, 1)), ('wb', fw(40, 40, 1, 1)), ('wc', fw(8, 40, 1, 1))]
                   + se_axes + other_axes, ['y', 'o'], opset=opset)

    # 3x3 stride-1 convs between opaque tensors (run by Winograd's algorithm: oneDNN 2.6's F(2,3)
    # or F(4,3) once, onyx's own F(2x2, 3x3) now, kernels_cpu/conv/winograd.c); positive data,
    # so every output is far from 0 and rtol alone judges it
    def fpos(*shape):
        return rng.uniform(0.5, 1.5, shape).astype(np.float32)

    for ch, hw in ((64, 14), (128, 28)):
        graph_case(f'test_fl_conv3x3_winograd_{ch}',
                   [N('Conv', ['x', 'wa', 'ba'], ['a'], pads=[1, 1, 1, 1]), N('Relu', ['a'], ['ar']),
                    N('Conv', ['ar', 'wb'], ['y'], pads=[1, 1, 1, 1])],
                   [('x', fpos(1, 16, hw, hw))],
                   [('wa', fpos(ch, 16, 3, 3)), ('ba', fpos(ch)), ('wb', fpos(ch, ch, 3, 3))], ['y'])

    # grouped convs whose groups are off the 16-channel grid, computed in the layouts oneDNN picks
    # (ShuffleNet's 1x1 convs with 6 input channels per group, RegNet's 8)
    graph_case('test_fl_grouped_off_grid',
               [N('Conv', ['x', 'wa', 'ba'], ['a'], group=4), N('Relu', ['a'], ['ar']),
                N('Conv', ['ar', 'wb'], ['b'], group=14, pads=[1, 1, 1, 1]),
                N('Conv', ['b', 'wc'], ['y'], group=2, strides=[2, 2])],
               [('x', fw(2, 24, 10, 10))],
               [('wa', fw(112, 6, 1, 1)), ('ba', fw(112)), ('wb', fw(112, 8, 3, 3)),
                ('wc', fw(40, 56, 1, 1))], ['y'])

    # Common subexpressions (core/graph_cse.c): each "layer" turns the same mask into the scores'
    # addend from its own Constant nodes of equal values (BERT's TorchScript export), so the
    # second layer's Greater and then its Where (through the first's canonical output) are
    # duplicates, one of them a graph output; the Adds read different scores, and a Transpose
    # with another perm and a Gemm with another alpha are not duplicates.
    def const(name, v):
        return N('Constant', [], [name], value=nh.from_array(np.array(v, np.float32)))
    graph_case('test_fl_cse_mask_layers',
               [const('z_a', 0.0), const('z_b', 0.0), const('n_a', -1e4), const('n_b', -1e4),
                N('Greater', ['mf', 'z_a'], ['g_a']), N('Greater', ['mf', 'z_b'], ['g_b']),
                N('Where', ['g_a', 'z_a', 'n_a'], ['w_a']), N('Where', ['g_b', 'z_b', 'n_b'], ['w_b']),
                N('Add', ['x', 'w_a'], ['s_a']), N('Add', ['x2', 'w_b'], ['s_b']),
                N('Softmax', ['s_a'], ['p_a'], axis=-1), N('Softmax', ['s_b'], ['p_b'], axis=-1),
                N('Transpose', ['x'], ['t1'], perm=[0, 1, 3, 2]),
                N('Transpose', ['x'], ['t2'], perm=[0, 1, 3, 2]),
                N('Transpose', ['x'], ['t3'], perm=[0, 2, 3, 1]),
                N('Add', ['t1', 't2'], ['t12']),
                N('Gemm', ['ga', 'gb'], ['m1'], alpha=0.5), N('Gemm', ['ga', 'gb'], ['m2'], alpha=2.0),
                N('Gemm', ['ga', 'gb'], ['m3'], alpha=0.5), N('Sub', ['m1', 'm2'], ['m12'])],
               [('x', f(2, 3, 4, 4)), ('x2', f(2, 3, 4, 4)), ('mf', f(2, 1, 4, 4)), ('ga', f(3, 5)),
                ('gb', f(5, 2))], [],
               ['p_a', 'p_b', 'w_b', 't12', 't3', 'm12', 'm3'])
    # 3x3 stride-1 convs between opaque tensors, enough 2x2 output tiles for Winograd
    # (kernels_cpu/conv/winograd.c): folded BatchNormalization, a residual Add then Relu, pads 0
    # (21 -> 19: a last half tile per row) with Clip, output channels off its 64-wide blocks.
    # Small integers throughout (BatchNormalization's factors 1/2 and 1): Winograd's transforms
    # multiply by halves, so every value stays exact and any order of summing gives the same.
    bn_inits = [('bn_s', rng.integers(1, 3, 48).astype(np.float32)), ('bn_b', fw(48)),
                ('bn_m', fw(48)), ('bn_v', np.full(48, 4.0, np.float32))]
    graph_case('test_fl_winograd_chain',
               [N('Conv', ['x', 'wa', 'ba'], ['a']), N('Relu', ['a'], ['ar']),
                N('Conv', ['ar', 'wb'], ['b'], pads=[1, 1, 1, 1]),
                N('BatchNormalization', ['b', 'bn_s', 'bn_b', 'bn_m', 'bn_v'], ['bb'], epsilon=0.0),
                N('Relu', ['bb'], ['br']),
                N('Conv', ['br', 'wc', 'bc'], ['c'], pads=[1, 1, 1, 1]),
                N('Add', ['c', 'br'], ['cs']), N('Relu', ['cs'], ['cr']),
                N('Conv', ['cr', 'wd', 'bd'], ['d']),
                N('Clip', ['d', 'lo', 'hi'], ['dc']),
                N('Conv', ['dc', 'we'], ['y'])],
               [('x', fw(1, 16, 21, 21))],
               [('wa', fw(32, 16, 1, 1)), ('ba', fw(32)), ('wb', fw(48, 32, 3, 3))] + bn_inits +
               [('wc', fw(48, 48, 3, 3)), ('bc', fw(48)), ('wd', fw(80, 48, 3, 3)), ('bd', fw(80)),
                ('lo', np.array(-40.0, np.float32)), ('hi', np.array(300.0, np.float32)),
                ('we', fw(16, 80, 1, 1))], ['y'])
    # transformed weights past the L2 (192 x 192 channels: 2.4 MB): an item takes all 49 tiles
    # of the 14x14 image for half the output channels
    graph_case('test_fl_winograd_wide',
               [N('Conv', ['x', 'wa'], ['a']), N('Conv', ['a', 'wb', 'bb'], ['b'], pads=[1, 1, 1, 1]),
                N('Relu', ['b'], ['br']), N('Conv', ['br', 'wc'], ['y'])],
               [('x', fw(1, 192, 14, 14))],
               [('wa', fw(192, 192, 1, 1)), ('wb', fw(192, 192, 3, 3)), ('bb', fw(192)),
                ('wc', fw(16, 192, 1, 1))], ['y'])
    # the squeeze-and-excitation scale taken into the next conv's weights per run (weights at
    # most an eighth of X: core/fuse_conv_io.c, fuse_se_scale): the batch-1 blocks above at
    # 16x16 pixels (dyadic still: 256 of them), and the 3x3 and 1-D convs on larger inputs, with
    # positive data (every output far from 0: rtol alone judges it)
    # (a BatchNormalization of factors 1/2 and 1, epsilon 0, keeps the sums exact)
    x16 = fw(1, 24, 16, 16)
    for ch in (72, 40):
        nodes, inits = se_block(ch, ['f', 'br'], [
            h.make_node('Conv', ['m', 'we', 'be'], ['e']),
            h.make_node('BatchNormalization', ['e', 'bn_s', 'bn_b', 'bn_m', 'bn_v'], ['en'],
                        epsilon=0.0),
            h.make_node('Add', ['x', 'en'], ['y'])])
        graph_case(f'test_fl_se_scale_weights_16x16_{ch}', nodes, [('x', x16)],
                   inits + [('be', fw(24)), ('bn_s', rng.integers(1, 3, 24).astype(np.float32)),
                            ('bn_b', fw(24)), ('bn_m', fw(24)), ('bn_v', np.full(24, 4.0, np.float32))],
                   ['y'])

    def fp(*shape):
        return rng.uniform(0.5, 1.5, shape).astype(np.float32)

    for name, xs, ws in (('3x3_24x24', (1, 32, 24, 24), (8, 32, 3, 3)),
                         ('1d_192', (1, 32, 192), (8, 32, 3))):
        sigmoid_scale_case(name, xs, ws, fp)
