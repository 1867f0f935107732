"""Models written by skl2onnx, checked against scikit-learn and onnxruntime: SVC probabilities
past two classes (libsvm's pairwise coupling), a model that lists one opset domain twice, and the
lists of dicts of a ZipMap output (built in bulk by backend/python/onyx/_values.py)."""
import numpy as np
import pytest

import onyx

sklearn = pytest.importorskip('sklearn')
skl2onnx = pytest.importorskip('skl2onnx')
ort = pytest.importorskip('onnxruntime')

# scikit-learn 1.9 deprecates SVC(probability=True) and its probA_/probB_, which skl2onnx reads
pytestmark = pytest.mark.filterwarnings('ignore::FutureWarning')

from sklearn.datasets import load_iris  # noqa: E402


@pytest.fixture(scope='module')
def iris():
    x, y = load_iris(return_X_y=True)
    return x.astype(np.float32), y


def ort_run(model, feeds):
    sess = ort.InferenceSession(model.SerializeToString(), providers=['CPUExecutionProvider'])
    return sess.run(None, feeds)


@pytest.mark.parametrize('kernel', ['rbf', 'linear', 'poly', 'sigmoid'])
def test_svc_probabilities_match_scikit_learn(iris, kernel):
    from sklearn.svm import SVC
    x, y = iris
    clf = SVC(probability=True, kernel=kernel, random_state=0).fit(x, y)
    expected = clf.predict_proba(x)
    model = skl2onnx.to_onnx(clf, x[:1], options={'zipmap': False})
    label, proba = onyx.Session(model.SerializeToString()).run(None, {'X': x})
    np.testing.assert_allclose(proba, expected, atol=1e-4)
    ort_label, ort_proba = ort_run(model, {'X': x})
    np.testing.assert_allclose(proba, ort_proba, atol=1e-4)
    np.testing.assert_array_equal(label, ort_label)
    np.testing.assert_array_equal(label, clf.predict(x))


def test_duplicate_opset_imports(iris):
    # skl2onnx 1.20 lists the default domain twice (at one version) for this regressor; onnx's
    # checker and onnxruntime accept that.
    from sklearn.ensemble import GradientBoostingRegressor
    x, y = iris
    reg = GradientBoostingRegressor(n_estimators=5, random_state=0).fit(x, y.astype(np.float32))
    model = skl2onnx.to_onnx(reg, x[:1])
    domains = [o.domain for o in model.opset_import]
    if len(domains) == len(set(domains)):
        pytest.skip('this skl2onnx writes each domain once')
    (got,) = onyx.Session(model.SerializeToString()).run(None, {'X': x})
    np.testing.assert_allclose(got.ravel(), reg.predict(x), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('string_labels', [False, True])
def test_zipmap_lists_of_dicts(iris, string_labels):
    from sklearn.linear_model import LogisticRegression
    x, y = iris
    if string_labels:
        y = np.array(['setosa', 'versicolor', 'virginica'], dtype=object)[y]
    clf = LogisticRegression(max_iter=500).fit(x, y)
    model = skl2onnx.to_onnx(clf, x[:1])
    sess = onyx.Session(model.SerializeToString())
    for rows in (x[:1], x[:7], x):
        label, maps = sess.run(None, {'X': rows})
        ort_label, ort_maps = ort_run(model, {'X': rows})
        np.testing.assert_array_equal(label, ort_label)
        assert len(maps) == len(ort_maps) == len(rows)
        for got, want in zip(maps, ort_maps):
            assert list(got) == list(want)
            np.testing.assert_allclose(list(got.values()), list(want.values()), rtol=1e-5, atol=1e-6)
    # no rows: an empty list
    label, maps = sess.run(None, {'X': x[:0]})
    assert maps == [] and len(label) == 0
