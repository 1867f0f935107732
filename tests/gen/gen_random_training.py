# Random, training-optimizer, BitCast and Det cases. Seeded random ops must reproduce onnx's
# reference bit for bit (numpy's legacy RandomState), in every float type and with non-default
# scale/mean/high/low, which the node tests do not cover.
import numpy as np

from common import case

TRAIN = 'ai.onnx.preview.training'


def generate(s):
    rng = np.random.default_rng(3)

    def f(*shape, dt=np.float32):
        return rng.standard_normal(shape).astype(dt)

    for dt, name in ((1, 'f32'), (11, 'f64'), (10, 'f16')):
        case(s, f'test_rnd_normal_{name}', 'RandomNormal', [],
             attrs={'shape': [3, 7], 'dtype': dt, 'seed': 5.0, 'scale': 2.5, 'mean': -1.25})
        case(s, f'test_rnd_uniform_{name}', 'RandomUniform', [],
             attrs={'shape': [4, 1, 5], 'dtype': dt, 'seed': 17.0, 'high': 3.0, 'low': -2.0})
    # an odd count leaves the polar method's second normal unused
    case(s, 'test_rnd_normal_like_int_in', 'RandomNormalLike',
         [rng.integers(0, 9, (5, 3)).astype(np.int32)], attrs={'dtype': 1, 'seed': 1.0})
    case(s, 'test_rnd_uniform_like_f16', 'RandomUniformLike', [f(2, 9, dt=np.float16)],
         attrs={'seed': 123.0, 'high': 10.0, 'low': 5.0})
    case(s, 'test_rnd_uniform_like_big', 'RandomUniformLike', [f(200, 200)], attrs={'seed': 7.0})
    p = rng.uniform(0, 1, 64)
    p[:4] = [0.0, 1.0, 0.5, 1.0]
    case(s, 'test_rnd_bernoulli_f64_seed', 'Bernoulli', [p], attrs={'seed': 9.0})
    case(s, 'test_rnd_bernoulli_bool_seed', 'Bernoulli', [p.astype(np.float32)],
         attrs={'seed': 2.0, 'dtype': 9})
    case(s, 'test_rnd_bernoulli_i32_seed', 'Bernoulli', [p.astype(np.float16).reshape(8, 8)],
         attrs={'seed': 4.0, 'dtype': 6})

    case(s, 'test_trn_det_f64_batch', 'Det', [f(2, 3, 5, 5, dt=np.float64)])
    sing = f(4, 4)
    sing[2] = sing[0] * 2
    case(s, 'test_trn_det_singular', 'Det', [sing])
    case(s, 'test_trn_det_1x1', 'Det', [f(6, 1, 1)])
    case(s, 'test_trn_bitcast_f16_i16', 'BitCast', [f(3, 4, dt=np.float16)], attrs={'to': 5}, opset=26)
    case(s, 'test_trn_bitcast_u64_f64', 'BitCast',
         [rng.integers(0, 2**62, (7,), dtype=np.uint64)], attrs={'to': 11}, opset=26)

    # training optimizers in double, with two tensors per node (reference: onnx's evaluator)
    def train_case(name, op, inputs, n_out, **attrs):
        from onnx import helper as h
        from common import reference, value_info, declare_outputs
        names = [f'x{i}' for i in range(len(inputs))]
        outs = [f'y{i}' for i in range(n_out)]
        node = h.make_node(op, names, outs, domain=TRAIN, **attrs)
        graph = h.make_graph([node], name, [value_info(n, v) for n, v in zip(names, inputs)],
                             [h.make_empty_tensor_value_info(o) for o in outs])
        model = h.make_model(graph, opset_imports=[h.make_opsetid('', 21), h.make_opsetid(TRAIN, 1)])
        feeds = list(zip(names, inputs))
        res = reference(model, feeds)
        declare_outputs(model, res)
        s.write(name, model, feeds, [(o, r) for o, r in zip(outs, res)])

    r, t0, t3 = np.array(0.05), np.array(0, dtype=np.int64), np.array(3, dtype=np.int64)
    x1, x2 = f(3, dt=np.float64), f(2, 2, dt=np.float64)
    train_case('test_trn_adagrad_f64', 'Adagrad', [r, t3, x1, x2, f(3, dt=np.float64),
               f(2, 2, dt=np.float64), np.abs(f(3, dt=np.float64)), np.abs(f(2, 2, dt=np.float64))],
               4, decay_factor=0.2, epsilon=1e-4, norm_coefficient=0.01)
    train_case('test_trn_momentum_t0_f64', 'Momentum', [r, t0, x1, f(3, dt=np.float64),
               f(3, dt=np.float64)], 2, alpha=0.9, beta=0.5, mode='standard', norm_coefficient=0.1)

    # Gradient through Sub, Div and Neg with broadcasting and a constant (expected by hand)
    from onnx import helper as h
    from onnx import numpy_helper as nh
    from common import value_info
    a, b = f(2, 3), f(3)
    cst = (np.abs(f(2, 1)) + 0.5).astype(np.float32)
    nodes = [h.make_node('Sub', ['a', 'b'], ['d']), h.make_node('Div', ['d', 'c'], ['e']),
             h.make_node('Neg', ['e'], ['y']),
             h.make_node('Gradient', ['a', 'b'], ['ga', 'gb'], domain=TRAIN, xs=['a', 'b'], y='y')]
    y = -((a - b) / cst)
    ga = np.broadcast_to(-1.0 / cst, a.shape).astype(np.float32)
    gb = np.full(3, (1.0 / cst).sum(), dtype=np.float32)
    graph = h.make_graph(nodes, 'grad', [value_info('a', a), value_info('b', b)],
                         [value_info('y', y), value_info('ga', ga), value_info('gb', gb)],
                         initializer=[nh.from_array(cst, 'c')])
    model = h.make_model(graph, opset_imports=[h.make_opsetid('', 21), h.make_opsetid(TRAIN, 1)])
    s.write('test_trn_gradient_sub_div_neg', model, [('a', a), ('b', b)],
            [('y', y), ('ga', ga), ('gb', gb)])

    # Unseeded draws: only what every draw must give can be checked (a zero-width range, zero
    # scale, certain outcomes).
    case(s, 'test_rnd_uniform_unseeded_point', 'RandomUniform', [],
         expected=[np.full((3, 4), 2.5, np.float32)], attrs={'shape': [3, 4], 'high': 2.5, 'low': 2.5})
    case(s, 'test_rnd_normal_unseeded_scale0', 'RandomNormal', [],
         expected=[np.full((5,), -1.5, np.float64)],
         attrs={'shape': [5], 'dtype': 11, 'scale': 0.0, 'mean': -1.5})
    certain = np.array([[0.0, 1.0, 1.0], [0.0, 0.0, 1.0]], np.float32)
    case(s, 'test_rnd_bernoulli_unseeded_certain', 'Bernoulli', [certain], expected=[certain])
    logits = np.array([[0.0, -np.inf, -np.inf], [-np.inf, 3.0, -np.inf]], np.float32)
    case(s, 'test_rnd_multinomial_certain', 'Multinomial', [logits],
         expected=[np.array([[0] * 6, [1] * 6], np.int64)],
         attrs={'sample_size': 6, 'dtype': 7, 'seed': 3.0})
