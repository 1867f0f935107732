# ai.onnx.ml family cases, second part: SVMClassifier / SVMRegressor (every kernel, one-vs-one votes,
# Platt probabilities, the binary cases, liblinear mode, one-class), CategoryMapper and
# FeatureVectorizer. Expectations from onnx's reference evaluator, cast to the spec's output types
# (the reference keeps X's dtype for the scores); CategoryMapper, which it lacks, by hand; the Platt
# probabilities of more than two classes from onnxruntime, which couples them as libsvm (and
# scikit-learn) do, where the reference's coupling is off by up to 0.1.
import numpy as np
from onnx import helper as h

from common import elem_type, reference


def _model(name, op, inputs, attrs, n_out):
    node = h.make_node(op, [n for n, _ in inputs], [f'y{i}' for i in range(n_out)], domain='ai.onnx.ml', **attrs)
    graph = h.make_graph([node], name, [h.make_tensor_value_info(n, elem_type(np.asarray(v).dtype), list(np.shape(v)))
                                        for n, v in inputs],
                         [h.make_empty_tensor_value_info(f'y{i}') for i in range(n_out)])
    return h.make_model(graph, opset_imports=[h.make_opsetid('', 19), h.make_opsetid('ai.onnx.ml', 1)])


def _spec_types(r):
    """The reference's result in the spec's output type: float scores, object strings."""
    r = np.asarray(r)
    if r.dtype.kind == 'U':
        return r.astype(object)
    if r.dtype.kind == 'f' or (r.dtype.kind == 'i' and r.dtype != np.int64):
        return r.astype(np.float32)
    return r


def ort(model, inputs):
    import onnxruntime
    sess = onnxruntime.InferenceSession(model.SerializeToString(), providers=['CPUExecutionProvider'])
    return sess.run(None, dict(inputs))


def ml_case(s, name, op, inputs, attrs, n_out=1, expected=None, ref_inputs=None, libsvm=False):
    """A one-node ai.onnx.ml model; inputs: (name, value) pairs. ref_inputs: what the reference runs
    on instead (int inputs, where it would truncate the float scores to ints). libsvm: onnxruntime
    computes the expectation (SVM probabilities of more than two classes)."""
    model = _model(name, op, inputs, attrs, n_out)
    if expected is None and libsvm:
        expected = ort(model, inputs)
    if expected is None:
        ref_model = _model(name, op, ref_inputs, attrs, n_out) if ref_inputs else model
        expected = reference(ref_model, ref_inputs or inputs)
    results = [_spec_types(r) for r in expected]
    for o, r in zip(model.graph.output, results):
        o.CopyFrom(h.make_tensor_value_info(o.name, elem_type(r.dtype), list(r.shape)))
    s.write(f'test_ml_{name}', model, inputs, [(f'y{i}', r) for i, r in enumerate(results)])


def svc(rng, classes, per_class, features, kernel, proba=False, post='NONE', labels=None, positive=False,
        params=(0.3, 0.5, 3), centers=None):
    """An SVMClassifier in SVM_SVC mode with random support vectors and dual coefficients. centers:
    one point per class that its support vectors scatter around, with the dual coefficients' signs of
    a trained model (so that the votes follow the nearest center)."""
    vectors = sum(per_class)
    coef = rng.uniform(-3, 3, (classes - 1) * vectors)
    sv = rng.standard_normal((vectors, features))
    if centers is not None:
        owner = np.repeat(np.arange(classes), per_class)
        sv = centers[owner] + 0.5 * sv
        rows = np.arange(classes - 1)[:, None]
        coef = (np.abs(coef.reshape(classes - 1, vectors)) * np.where(rows >= owner[None, :], 1, -1)).ravel()
    if positive:
        coef = np.abs(coef)
    a = dict(kernel_type=kernel, kernel_params=list(params), vectors_per_class=list(per_class),
             support_vectors=sv.astype(np.float32).ravel().tolist(),
             coefficients=coef.astype(np.float32).tolist(),
             rho=rng.uniform(-1, 1, classes * (classes - 1) // 2).astype(np.float32).tolist(),
             post_transform=post)
    a.update(labels or dict(classlabels_ints=list(range(10, 10 + classes))))
    if proba:
        pairs = classes * (classes - 1) // 2
        a['prob_a'] = rng.uniform(-3, -1, pairs).astype(np.float32).tolist()
        a['prob_b'] = rng.uniform(-0.2, 0.2, pairs).astype(np.float32).tolist()
    return a


def generate(s):
    rng = np.random.default_rng(11)

    def f(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    x = f(7, 4)
    # SVM_SVC: every kernel, multiclass votes (with a tie-prone 4-class case), int and string labels.
    for kernel in ('LINEAR', 'POLY', 'RBF', 'SIGMOID'):
        ml_case(s, f'svm_classifier_{kernel.lower()}', 'SVMClassifier', [('x', x)],
                svc(rng, 3, (2, 3, 2), 4, kernel), n_out=2)
    ml_case(s, 'svm_classifier_4class_strings', 'SVMClassifier', [('x', f(9, 3))],
            svc(rng, 4, (1, 2, 1, 3), 3, 'RBF', labels=dict(classlabels_strings=['a', 'b', 'c', 'd'])), n_out=2)
    ml_case(s, 'svm_classifier_softmax', 'SVMClassifier', [('x', x)],
            svc(rng, 3, (2, 2, 2), 4, 'RBF', post='SOFTMAX'), n_out=2)
    centers = 2 * f(4, 4)
    xc = centers[np.arange(12) % 4] + 0.7 * f(12, 4)
    ml_case(s, 'svm_classifier_centers', 'SVMClassifier', [('x', xc)],
            svc(rng, 4, (2, 3, 2, 2), 4, 'RBF', params=(0.3, 0.0, 0), centers=centers), n_out=2)
    ml_case(s, 'svm_classifier_centers_proba', 'SVMClassifier', [('x', xc)],
            svc(rng, 4, (2, 3, 2, 2), 4, 'RBF', proba=True, params=(0.3, 0.0, 0), centers=centers), n_out=2,
            libsvm=True)
    # Platt probabilities: 2 classes (where libsvm and the reference agree) and 3 or 4 (libsvm's
    # coupling, as onnxruntime and scikit-learn).
    for classes, per, post in ((2, (3, 2), 'NONE'), (3, (2, 1, 2), 'NONE'), (4, (2, 2, 1, 2), 'NONE'),
                               (3, (2, 2, 2), 'LOGISTIC')):
        ml_case(s, f'svm_classifier_proba_{classes}_{post.lower()}', 'SVMClassifier', [('x', x)],
                svc(rng, classes, per, 4, 'RBF', proba=True, post=post), n_out=2, libsvm=classes > 2)
    # Binary: one score written as [-s, s] (transformed), or one column under PROBIT; all-positive
    # coefficients pick the second label (the reference's rule).
    for post in ('NONE', 'LOGISTIC', 'SOFTMAX', 'SOFTMAX_ZERO', 'PROBIT'):
        ml_case(s, f'svm_classifier_binary_{post.lower()}', 'SVMClassifier', [('x', x)],
                svc(rng, 2, (3, 2), 4, 'RBF', post=post, params=(0.2, 0.0, 0)), n_out=2)
    ml_case(s, 'svm_classifier_binary_positive', 'SVMClassifier', [('x', x)],
            svc(rng, 2, (2, 2), 4, 'LINEAR', positive=True), n_out=2)
    # String labels in the binary case: the reference fails there (it reads classlabels_ints), so the
    # expectation is its int result mapped to the strings.
    a = svc(rng, 2, (2, 3), 4, 'POLY', labels=dict(classlabels_ints=[0, 1]))
    y, z = reference(_model('b', 'SVMClassifier', [('x', x)], a, 2), [('x', x)])
    a_str = dict(a, classlabels_strings=['neg', 'pos'])
    del a_str['classlabels_ints']
    ml_case(s, 'svm_classifier_binary_strings', 'SVMClassifier', [('x', x)], a_str, n_out=2,
            expected=[np.array(['neg', 'pos'], object)[y], z])
    # liblinear mode (no support vectors): one coefficient row per class, rho[0] for all.
    w = f(3, 4)
    ml_case(s, 'svm_classifier_linear_mode', 'SVMClassifier', [('x', x)],
            dict(coefficients=w.ravel().tolist(), rho=[0.25], classlabels_ints=[1, 2, 3]), n_out=2)
    ml_case(s, 'svm_classifier_linear_mode_2', 'SVMClassifier', [('x', x)],
            dict(coefficients=w[:2].ravel().tolist(), rho=[-0.1], classlabels_ints=[5, 6],
                 post_transform='LOGISTIC'), n_out=2)
    ml_case(s, 'svm_classifier_linear_mode_1', 'SVMClassifier', [('x', x)],
            dict(coefficients=w[0].tolist(), rho=[0.1], classlabels_ints=[7]), n_out=2)
    # Other input types: double directly; ints through the reference on the same values as doubles.
    a = svc(rng, 3, (2, 2, 2), 4, 'RBF')
    xd = rng.standard_normal((5, 4))
    ml_case(s, 'svm_classifier_f64', 'SVMClassifier', [('x', xd)], a, n_out=2)
    xi = rng.integers(-2, 3, (5, 4)).astype(np.int64)
    ml_case(s, 'svm_classifier_i64', 'SVMClassifier', [('x', xi)], a, n_out=2,
            ref_inputs=[('x', xi.astype(np.float64))])
    ml_case(s, 'svm_classifier_i32', 'SVMClassifier', [('x', xi.astype(np.int32))], a, n_out=2,
            ref_inputs=[('x', xi.astype(np.float64))])
    x1 = f(4)
    ml_case(s, 'svm_classifier_1d', 'SVMClassifier', [('x', x1)], a, n_out=2,
            expected=reference(_model('r', 'SVMClassifier', [('x', x1[None])], a, 2), [('x', x1[None])]))
    # Enough rows to split across threads.
    big = f(3000, 12)
    centers = 1.5 * f(3, 12)
    near = centers[rng.integers(0, 3, 3000)] + big
    ml_case(s, 'svm_classifier_par', 'SVMClassifier', [('x', near)],
            svc(rng, 3, (10, 12, 8), 12, 'RBF', proba=True, params=(0.1, 0.0, 0), centers=centers), n_out=2,
            libsvm=True)

    # SVMRegressor: support vectors with each kernel, liblinear mode, one-class.
    for kernel in ('LINEAR', 'POLY', 'RBF', 'SIGMOID'):
        ml_case(s, f'svm_regressor_{kernel.lower()}', 'SVMRegressor', [('x', x)],
                dict(kernel_type=kernel, kernel_params=[0.3, 0.5, 2], n_supports=5,
                     support_vectors=f(5, 4).ravel().tolist(), coefficients=f(5).tolist(), rho=[0.5]))
    ml_case(s, 'svm_regressor_linear_mode', 'SVMRegressor', [('x', x)],
            dict(coefficients=f(4).tolist(), rho=[-0.25]))
    ml_case(s, 'svm_regressor_one_class', 'SVMRegressor', [('x', x)],
            dict(kernel_type='RBF', kernel_params=[0.5, 0.0, 0], n_supports=4, one_class=1,
                 support_vectors=f(4, 4).ravel().tolist(), coefficients=[0.25] * 4, rho=[-0.3]))
    ml_case(s, 'svm_regressor_f64', 'SVMRegressor', [('x', xd)],
            dict(kernel_type='RBF', kernel_params=[0.3, 0.0, 0], n_supports=3,
                 support_vectors=f(3, 4).ravel().tolist(), coefficients=f(3).tolist(), rho=[0.1]))
    ml_case(s, 'svm_regressor_par', 'SVMRegressor', [('x', big)],
            dict(kernel_type='RBF', kernel_params=[0.05, 0.0, 0], n_supports=20,
                 support_vectors=f(20, 12).ravel().tolist(), coefficients=f(20).tolist(), rho=[0.1]))

    # CategoryMapper (not in the reference): both directions, defaults, a repeated category (the
    # first wins, as in onnxruntime).
    cats = dict(cats_strings=['cat', 'dog', 'eel', 'dog'], cats_int64s=[3, 7, 9, 11])
    xs = np.array([['dog', 'x', 'cat'], ['eel', '', 'dog']], object)
    ml_case(s, 'category_mapper_to_int', 'CategoryMapper', [('x', xs)], dict(cats, default_int64=-5),
            expected=[np.array([[7, -5, 3], [9, -5, 7]], np.int64)])
    xi = np.array([9, 4, 3, 11, 7], np.int64)
    ml_case(s, 'category_mapper_to_string', 'CategoryMapper', [('x', xi)], dict(cats, default_string='?'),
            expected=[np.array(['eel', '?', 'cat', 'dog', 'dog'], object)])
    ml_case(s, 'category_mapper_default', 'CategoryMapper', [('x', xi[:2])], cats,
            expected=[np.array(['eel', '_Unused'], object)])

    # FeatureVectorizer: cut, padded and exact inputs of every type into float rows.
    parts = [('a', f(3, 2)), ('b', rng.integers(-9, 9, (3, 4)).astype(np.int64)), ('c', rng.standard_normal((3, 1))),
             ('d', rng.integers(-9, 9, (3, 3)).astype(np.int32))]
    ml_case(s, 'feature_vectorizer', 'FeatureVectorizer', parts, dict(inputdimensions=[2, 2, 3, 3]))
    # A 1-D input is one row [1, C] (the spec and onnxruntime; the reference makes it a column).
    v, b = f(3), f(1, 2)
    ml_case(s, 'feature_vectorizer_1d', 'FeatureVectorizer', [('a', v), ('b', b)], dict(inputdimensions=[4, 1]),
            expected=[np.concatenate([v, [0.0], b[0, :1]])[None, :].astype(np.float32)])
