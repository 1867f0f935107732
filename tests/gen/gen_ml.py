# ai.onnx.ml family cases: the classic scikit-learn converter ops (feature transforms, label
# encoding, linear models, tree ensembles in both attribute layouts) that the ONNX node tests do
# not cover, checked against onnx's reference evaluator.
import numpy as np
from onnx import TensorProto as TP
from onnx import helper as h

from common import elem_type, reference


def ml_case(s, name, op, x, attrs, n_out=1, ml_opset=3, expected=None, dup_opsets=False):
    """A one-node ai.onnx.ml model on input x; outputs declared from the expected values.
    dup_opsets: every opset_import entry twice, as skl2onnx writes some models."""
    node = h.make_node(op, ['x'], [f'y{i}' for i in range(n_out)], domain='ai.onnx.ml', **attrs)
    x = np.asarray(x)
    shape = list(x.shape)
    graph = h.make_graph([node], name, [h.make_tensor_value_info('x', elem_type(x.dtype), shape)],
                         [h.make_empty_tensor_value_info(f'y{i}') for i in range(n_out)])
    model = h.make_model(graph, opset_imports=[h.make_opsetid('', 19), h.make_opsetid('ai.onnx.ml', ml_opset)])
    if dup_opsets:
        model.opset_import.extend([h.make_opsetid('ai.onnx.ml', ml_opset), h.make_opsetid('', 19)])
    results = reference(model, [('x', x)]) if expected is None else expected
    for o, r in zip(model.graph.output, results):
        r = np.asarray(r)
        o.CopyFrom(h.make_tensor_value_info(o.name, elem_type(r.dtype), list(r.shape)))
    s.write(f'test_ml_{name}', model, [('x', x)], [(f'y{i}', r) for i, r in enumerate(results)])


def trees(rng, n_trees, depth, n_features, n_out, classifier):
    """Random complete trees in the TreeEnsembleRegressor/Classifier attribute layout."""
    a = {k: [] for k in ('nodes_treeids', 'nodes_nodeids', 'nodes_featureids', 'nodes_values', 'nodes_modes',
                         'nodes_truenodeids', 'nodes_falsenodeids', 'nodes_missing_value_tracks_true',
                         'nodes_hitrates')}
    out = 'class' if classifier else 'target'
    o = {f'{out}_treeids': [], f'{out}_nodeids': [], f'{out}_ids': [], f'{out}_weights': []}
    modes = ['BRANCH_LEQ', 'BRANCH_LT', 'BRANCH_GTE', 'BRANCH_GT', 'BRANCH_EQ', 'BRANCH_NEQ']
    for t in range(n_trees):
        n_inner = 2 ** depth - 1
        for i in range(2 ** (depth + 1) - 1):
            a['nodes_treeids'].append(t)
            a['nodes_nodeids'].append(i)
            a['nodes_hitrates'].append(1.0)
            if i < n_inner:
                a['nodes_featureids'].append(int(rng.integers(0, n_features)))
                a['nodes_values'].append(float(np.float32(rng.standard_normal())))
                a['nodes_modes'].append(modes[int(rng.integers(0, 4))] if i % 5 else 'BRANCH_LEQ')
                a['nodes_truenodeids'].append(2 * i + 1)
                a['nodes_falsenodeids'].append(2 * i + 2)
                a['nodes_missing_value_tracks_true'].append(int(i % 2))
            else:
                a['nodes_featureids'].append(0)
                a['nodes_values'].append(0.0)
                a['nodes_modes'].append('LEAF')
                a['nodes_truenodeids'].append(0)
                a['nodes_falsenodeids'].append(0)
                a['nodes_missing_value_tracks_true'].append(0)
                for k in range(n_out if classifier else 1):
                    o[f'{out}_treeids'].append(t)
                    o[f'{out}_nodeids'].append(i)
                    o[f'{out}_ids'].append(k if classifier else int(rng.integers(0, n_out)))
                    o[f'{out}_weights'].append(float(np.float32(rng.uniform(-1, 1))))
    a.update(o)
    return a


def generate(s):
    rng = np.random.default_rng(7)

    def f(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    x = f(6, 5)
    x[1, 2] = np.nan
    # skl2onnx 1.20 lists a domain twice at one version: onnx's checker and onnxruntime accept it
    ml_case(s, 'scaler_dup_opsets', 'Scaler', f(4, 3), {'offset': [0.5, -1.0, 2.0], 'scale': [2.0, 0.5, 1.0]},
            dup_opsets=True)
    # ArrayFeatureExtractor takes its indices as a second input: built by hand.
    for name, data, idx in (('afe_f32', f(3, 4, 7), np.array([6, 0, -1], np.int64)),
                            ('afe_1d', f(7), np.array([2, 3], np.int64)),
                            ('afe_str', np.array([['a', 'b', 'c'], ['d', 'e', 'f']], object),
                             np.array([2, 0], np.int64))):
        node = h.make_node('ArrayFeatureExtractor', ['x', 'i'], ['y0'], domain='ai.onnx.ml')
        graph = h.make_graph([node], name, [h.make_tensor_value_info('x', elem_type(data.dtype), list(data.shape)),
                                            h.make_tensor_value_info('i', TP.INT64, list(idx.shape))],
                             [h.make_empty_tensor_value_info('y0')])
        model = h.make_model(graph, opset_imports=[h.make_opsetid('', 19), h.make_opsetid('ai.onnx.ml', 1)])
        (res,) = reference(model, [('x', data), ('i', idx)])
        model.graph.output[0].CopyFrom(h.make_tensor_value_info('y0', elem_type(res.dtype), list(res.shape)))
        s.write(f'test_ml_{name}', model, [('x', data), ('i', idx)], [('y0', res)])

    ml_case(s, 'binarizer_f64', 'Binarizer', rng.standard_normal((3, 4)), {'threshold': 0.25})
    ml_case(s, 'binarizer_i32', 'Binarizer', rng.integers(-5, 5, (3, 4)).astype(np.int32), {'threshold': 1.0})
    ml_case(s, 'scaler_cols', 'Scaler', f(4, 3), {'offset': [0.5, -1.0, 2.0], 'scale': [2.0, 0.5, -1.0]})
    # The spec makes Scaler's output float; onnx's reference keeps an int input's type.
    xi = rng.integers(-9, 9, (4, 3)).astype(np.int64)
    ml_case(s, 'scaler_one_i64', 'Scaler', xi, {'offset': [1.0], 'scale': [0.25]},
            expected=[((xi - 1.0) * 0.25).astype(np.float32)])
    for norm in ('MAX', 'L1', 'L2'):
        ml_case(s, f'normalizer_{norm.lower()}', 'Normalizer', f(5, 4), {'norm': norm})
    ml_case(s, 'normalizer_zero_row', 'Normalizer', np.zeros((2, 3), np.float32), {'norm': 'L2'})
    ml_case(s, 'imputer_nan', 'Imputer', x, {'imputed_value_floats': [1.0, 2.0, 3.0, 4.0, 5.0], 'replaced_value_float': np.nan})
    ml_case(s, 'imputer_i64', 'Imputer', rng.integers(-2, 3, (4, 3)).astype(np.int64),
            {'imputed_value_int64s': [9], 'replaced_value_int64': 0})
    ml_case(s, 'ohe_ints', 'OneHotEncoder', np.array([[1, 5, 3], [3, 1, 7]], np.int64), {'cats_int64s': [1, 3, 5, 7]})
    ml_case(s, 'ohe_strings', 'OneHotEncoder', np.array(['b', 'zz', 'a'], object),
            {'cats_strings': ['a', 'b', 'c'], 'zeros': 1})
    ml_case(s, 'label_encoder_v1', 'LabelEncoder', np.array(['b', 'q', 'a'], object),
            {'classes_strings': ['a', 'b', 'c'], 'default_int64': 99}, ml_opset=1,
            expected=[np.array([1, 99, 0], np.int64)])
    # the other direction of v1: int64 indices to class names (its keys were read as strings: a crash)
    ml_case(s, 'label_encoder_v1_ints', 'LabelEncoder', np.array([2, 0, 5, -1, 1], np.int64),
            {'classes_strings': ['a', 'b', 'c'], 'default_string': 'zz'}, ml_opset=1,
            expected=[np.array(['c', 'a', 'zz', 'zz', 'b'], object)])
    ml_case(s, 'label_encoder_float_str', 'LabelEncoder', np.array([0.5, np.nan, 2.0, 7.0], np.float32),
            {'keys_floats': [2.0, np.nan, 0.5], 'values_strings': ['two', 'nan', 'half'], 'default_string': '-'},
            ml_opset=2, expected=[np.array(['half', 'nan', 'two', '-'], object)])
    ml_case(s, 'label_encoder_repeated_key', 'LabelEncoder', np.array([1, 2, 3], np.int64),
            {'keys_int64s': [1, 2, 1], 'values_floats': [10.0, 20.0, 30.0]}, ml_opset=2,
            expected=[np.array([30.0, 20.0, -0.0], np.float32)])
    w = f(3, 5)
    ml_case(s, 'linear_regressor', 'LinearRegressor', f(4, 5),
            {'coefficients': w.ravel().tolist(), 'intercepts': [0.5, -1.0, 2.0], 'targets': 3})
    for post in ('NONE', 'SOFTMAX', 'LOGISTIC', 'SOFTMAX_ZERO'):
        ml_case(s, f'linear_classifier_{post.lower()}', 'LinearClassifier', f(4, 5),
                {'coefficients': w.ravel().tolist(), 'intercepts': [0.5, -1.0, 2.0],
                 'classlabels_ints': [4, 5, 6], 'post_transform': post}, n_out=2)
    ml_case(s, 'linear_classifier_binary', 'LinearClassifier', f(6, 5),
            {'coefficients': w[0].tolist(), 'intercepts': [0.1], 'classlabels_strings': ['no', 'yes']}, n_out=2)
    big = f(300, 6)
    big[::7, 1] = np.nan
    for agg in ('SUM', 'AVERAGE', 'MIN', 'MAX'):
        a = trees(rng, 5, 3, 6, 2, classifier=False)
        ml_case(s, f'tree_regressor_{agg.lower()}', 'TreeEnsembleRegressor', big,
                dict(a, n_targets=2, aggregate_function=agg, base_values=[0.5, -0.5]))
    a = trees(rng, 4, 3, 6, 3, classifier=True)
    for post in ('NONE', 'SOFTMAX', 'LOGISTIC'):
        ml_case(s, f'tree_classifier_{post.lower()}', 'TreeEnsembleClassifier', big,
                dict(a, classlabels_int64s=[10, 20, 30], post_transform=post), n_out=2)
    ml_case(s, 'tree_classifier_strings', 'TreeEnsembleClassifier', big[:20],
            dict(a, classlabels_strings=['x', 'y', 'z']), n_out=2)
    b = trees(rng, 3, 2, 6, 1, classifier=True)
    ml_case(s, 'tree_classifier_binary', 'TreeEnsembleClassifier', big[:30],
            dict(b, classlabels_int64s=[0, 1], post_transform='LOGISTIC'), n_out=2)
