"""ai.onnx.ml ops that take maps (DictVectorizer) or must refuse malformed models (SVM*, CategoryMapper,
FeatureVectorizer): through the Python API, since the C conformance runner feeds tensors only."""
import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as h

import onyx


def ml_model(node, inputs, outputs):
    graph = h.make_graph([node], 'g', inputs, outputs)
    return h.make_model(graph, opset_imports=[h.make_opsetid('', 19), h.make_opsetid('ai.onnx.ml', 1)])


def map_input(key, value):
    return h.make_value_info('x', h.make_map_type_proto(key, h.make_tensor_type_proto(value, [])))


def dict_vectorizer(key, value, seq=False, **vocab):
    node = h.make_node('DictVectorizer', ['x'], ['y'], domain='ai.onnx.ml', **vocab)
    x = map_input(key, value)
    if seq:
        x = h.make_value_info('x', h.make_sequence_type_proto(x.type))
    return onyx.Session(ml_model(node, [x], [h.make_tensor_value_info('y', value, None)]))


def test_dict_vectorizer_string_keys():
    s = dict_vectorizer(TP.STRING, TP.FLOAT, string_vocabulary=['a', 'c', 'b', 'z'])
    # the spec's example; keys outside the vocabulary are ignored (as the reference does)
    (y,) = s.run(None, {'x': {'a': np.float32(4), 'c': np.float32(8), 'q': np.float32(1)}})
    assert y.dtype == np.float32 and y.shape == (4,)
    np.testing.assert_array_equal(y, [4, 8, 0, 0])
    (y,) = s.run(None, {'x': {'z': np.float32(-1.5)}})
    np.testing.assert_array_equal(y, [0, 0, 0, -1.5])


def test_dict_vectorizer_int_keys_double_values():
    s = dict_vectorizer(TP.INT64, TP.DOUBLE, int64_vocabulary=[10, -3, 7])
    (y,) = s.run(None, {'x': {7: 0.25, 10: 1e300}})
    assert y.dtype == np.float64
    np.testing.assert_array_equal(y, [1e300, 0, 0.25])


def test_dict_vectorizer_string_values_and_repeated_word():
    s = dict_vectorizer(TP.INT64, TP.STRING, int64_vocabulary=[1, 2, 1])
    (y,) = s.run(None, {'x': {1: 'one', 5: 'five'}})
    assert y.tolist() == ['one', '', 'one']


def test_dict_vectorizer_int64_values():
    s = dict_vectorizer(TP.STRING, TP.INT64, string_vocabulary=['x', 'y'])
    (y,) = s.run(None, {'x': {'y': 3, 'x': -2}})
    assert y.dtype == np.int64
    assert y.tolist() == [-2, 3]


def test_dict_vectorizer_sequence_of_maps():
    # onnx's reference also takes a list of maps: one row each
    s = dict_vectorizer(TP.STRING, TP.FLOAT, seq=True, string_vocabulary=['a', 'b', 'c'])
    (y,) = s.run(None, {'x': [{'a': np.float32(1)}, {'c': np.float32(2), 'b': np.float32(3)}]})
    np.testing.assert_array_equal(y, [[1, 0, 0], [0, 3, 2]])


def test_dict_vectorizer_key_type_mismatch():
    with pytest.raises(onyx.OnyxError, match='do not match string_vocabulary'):
        dict_vectorizer(TP.INT64, TP.FLOAT, string_vocabulary=['a'])


def test_dict_vectorizer_needs_one_vocabulary():
    with pytest.raises(onyx.OnyxError, match='exactly one of int64_vocabulary and string_vocabulary'):
        dict_vectorizer(TP.STRING, TP.FLOAT)


def svm(op, n_out=2, features=2, **attrs):
    attrs = {k: v for k, v in attrs.items() if v is not None}  # None: left out
    node = h.make_node(op, ['x'], [f'y{i}' for i in range(n_out)], domain='ai.onnx.ml', **attrs)
    outs = [h.make_empty_tensor_value_info(f'y{i}') for i in range(n_out)]
    return ml_model(node, [h.make_tensor_value_info('x', TP.FLOAT, [None, features])], outs)


def classifier(features=2, **override):
    # 2 classes, 1 + 2 support vectors of 2 features
    attrs = dict(features=features, kernel_type='RBF', kernel_params=[0.5, 0.0, 0], vectors_per_class=[1, 2],
                 support_vectors=[0.0, 0.0, 1.0, 1.0, -1.0, 1.0], coefficients=[1.0, -0.5, -0.5], rho=[0.1],
                 classlabels_ints=[0, 1])
    attrs.update(override)
    return svm('SVMClassifier', **attrs)


def test_svm_classifier_runs():
    s = onyx.Session(classifier())
    y, z = s.run(None, {'x': np.array([[0, 0], [1, 1]], np.float32)})
    assert y.tolist() == [0, 1] and z.shape == (2, 2)
    np.testing.assert_allclose(z[:, 0], -z[:, 1])


@pytest.mark.parametrize('override, message', [
    (dict(vectors_per_class=[2, 2]), 'not a multiple of the 4 vectors'),      # 6 values for 4 vectors
    (dict(vectors_per_class=[3]), 'vectors_per_class has 1 entries for 2 class labels'),
    (dict(vectors_per_class=[1, -2]), 'out of range'),
    (dict(coefficients=[1.0, -0.5]), 'coefficients has 2 values, expected at least 3'),
    (dict(rho=None), 'rho has 0 values'),
    (dict(prob_a=[1.0]), 'prob_a has 1 values but prob_b has 0'),
    (dict(kernel_type='CUBIC'), "kernel_type 'CUBIC'"),
    (dict(kernel_params=[0.5, 0.0]), 'kernel_params has 2 values, expected 3'),
    (dict(classlabels_ints=None), 'needs classlabels_ints or classlabels_strings'),
    (dict(post_transform='SQUARE'), "post_transform 'SQUARE'"),
])
def test_svm_classifier_refuses_malformed(override, message):
    with pytest.raises(onyx.OnyxError, match=message) as e:
        onyx.Session(classifier(**override))
    assert e.value.status == 'ONYX_ERR_INVALID_MODEL'


def test_svm_classifier_feature_count():
    model = svm('SVMClassifier', features=3, kernel_type='LINEAR', vectors_per_class=[1, 1],
                support_vectors=[0.0, 0.0, 1.0, 1.0], coefficients=[1.0, -1.0], rho=[0.0], classlabels_ints=[0, 1])
    with pytest.raises(onyx.OnyxError, match='X has 3 columns but the model has 2 features') as e:
        onyx.Session(model)
    assert e.value.status == 'ONYX_ERR_SHAPE'


def test_svm_classifier_feature_count_at_run_time():
    s = onyx.Session(classifier(features=None))
    with pytest.raises(onyx.OnyxError, match='X has 3 columns'):
        s.run(None, {'x': np.zeros((2, 3), np.float32)})


def test_svm_classifier_liblinear_coefficients():
    with pytest.raises(onyx.OnyxError, match='5 coefficients do not split into 2 class rows'):
        onyx.Session(svm('SVMClassifier', coefficients=[1.0] * 5, rho=[0.0], classlabels_ints=[0, 1]))


@pytest.mark.parametrize('override, message', [
    (dict(n_supports=4), 'not a multiple of n_supports 4'),
    (dict(coefficients=[1.0, 2.0]), 'coefficients has 2 values, expected at least 3'),
    (dict(n_supports=-1), 'n_supports -1 is out of range'),
    (dict(kernel_type='linear_ish'), "kernel_type 'linear_ish'"),
    (dict(rho=None), 'rho is empty'),
])
def test_svm_regressor_refuses_malformed(override, message):
    attrs = dict(kernel_type='rbf', kernel_params=[0.5, 0.0, 0], n_supports=3,
                 support_vectors=[0.0, 0.0, 1.0, 1.0, -1.0, 1.0], coefficients=[1.0, -0.5, 0.25], rho=[0.1])
    attrs.update(override)
    with pytest.raises(onyx.OnyxError, match=message) as e:
        onyx.Session(svm('SVMRegressor', n_out=1, **attrs))
    assert e.value.status == 'ONYX_ERR_INVALID_MODEL'


def test_svm_regressor_lowercase_kernel_runs():
    # the reference lowers kernel_type, so 'rbf' is accepted
    s = onyx.Session(svm('SVMRegressor', n_out=1, kernel_type='rbf', kernel_params=[0.5, 0.0, 0], n_supports=1,
                         support_vectors=[0.0, 0.0], coefficients=[2.0], rho=[0.5]))
    (y,) = s.run(None, {'x': np.array([[0, 0], [1, 1]], np.float32)})
    np.testing.assert_allclose(y.ravel(), [2.5, 2 * np.exp(-1.0) + 0.5], rtol=1e-6)


def test_category_mapper_list_lengths():
    node = h.make_node('CategoryMapper', ['x'], ['y'], domain='ai.onnx.ml', cats_strings=['a', 'b'],
                       cats_int64s=[1])
    model = ml_model(node, [h.make_tensor_value_info('x', TP.STRING, [2])],
                     [h.make_tensor_value_info('y', TP.INT64, [2])])
    with pytest.raises(onyx.OnyxError, match='cats_int64s has 1 entries but cats_strings has 2'):
        onyx.Session(model)


def feature_vectorizer(dims, shapes):
    node = h.make_node('FeatureVectorizer', [f'x{i}' for i in range(len(shapes))], ['y'], domain='ai.onnx.ml',
                       inputdimensions=dims)
    return ml_model(node, [h.make_tensor_value_info(f'x{i}', TP.FLOAT, s) for i, s in enumerate(shapes)],
                    [h.make_tensor_value_info('y', TP.FLOAT, None)])


def test_feature_vectorizer_refuses():
    with pytest.raises(onyx.OnyxError, match='inputdimensions has 1 entries for 2 inputs'):
        onyx.Session(feature_vectorizer([2], [[3, 2], [3, 1]]))
    with pytest.raises(onyx.OnyxError, match='input 1 has 4 rows, input 0 has 3'):
        onyx.Session(feature_vectorizer([2, 1], [[3, 2], [4, 1]]))


def test_feature_vectorizer_flattens_trailing_dims():
    # like onnxruntime: [N, a, b] reads as N rows of a*b features
    x0 = np.arange(8, dtype=np.float32).reshape(2, 2, 2)
    with pytest.raises(onyx.OnyxError, match='input 1 has 1 rows, input 0 has 2'):
        onyx.Session(feature_vectorizer([5, 1], [[2, 2, 2], [2]]))
    s = onyx.Session(feature_vectorizer([5], [[2, 2, 2]]))
    (y,) = s.run(None, {'x0': x0})
    np.testing.assert_array_equal(y, [[0, 1, 2, 3, 0], [4, 5, 6, 7, 0]])
