"""Models written by the converters people use (skl2onnx for scikit-learn, onnxmltools for LightGBM
and XGBoost), run by onyx through its onnxruntime-compatible API and checked two ways: against
onnxruntime on the same file (labels exactly, scores rtol 1e-4 / atol 1e-5) and against the
library's own predict / predict_proba (tolerances documented where each is used)."""
import numpy as np
import pytest

import onyx.ort as ort

real_ort = pytest.importorskip('onnxruntime')
sklearn = pytest.importorskip('sklearn')
skl2onnx = pytest.importorskip('skl2onnx')

from skl2onnx.common.data_types import FloatTensorType, StringTensorType  # noqa: E402
from sklearn.datasets import load_iris, make_classification, make_regression  # noqa: E402

# scikit-learn 1.9 deprecates SVC(probability=True) and its probA_/probB_, which skl2onnx reads;
# onnxmltools and the boosting libraries warn about their own internals.
pytestmark = pytest.mark.filterwarnings('ignore::FutureWarning', 'ignore::DeprecationWarning',
                                        'ignore::UserWarning')

RTOL, ATOL = 1e-4, 1e-5   # onyx against onnxruntime (the float yardstick)


# ------------------------------------------------------------------------------------------------
# data: small, seeded, float32 from the start so that the trees' thresholds are chosen on the very
# values the ONNX model later sees (TreeEnsemble compares in float32)

@pytest.fixture(scope='module')
def binary():
    x, y = make_classification(n_samples=300, n_features=8, n_informative=5, random_state=0)
    return x.astype(np.float32), y


@pytest.fixture(scope='module')
def multiclass():
    x, y = make_classification(n_samples=300, n_features=8, n_informative=6, n_classes=4,
                               n_clusters_per_class=1, random_state=1)
    return x.astype(np.float32), y


@pytest.fixture(scope='module')
def regression():
    x, y = make_regression(n_samples=300, n_features=8, n_informative=6, noise=5.0, random_state=2)
    return x.astype(np.float32), y.astype(np.float32)


@pytest.fixture(scope='module')
def iris():
    x, y = load_iris(return_X_y=True)
    return x.astype(np.float32), y


# ------------------------------------------------------------------------------------------------
# running and comparing

def run_both(model, feeds):
    """Runs the serialized model with onyx and with onnxruntime; returns both output lists."""
    data = model.SerializeToString()
    got = ort.InferenceSession(data, providers=['CPUExecutionProvider']).run(None, feeds)
    quiet = real_ort.SessionOptions()
    quiet.log_severity_level = 3   # onnxmltools declares XGBoost's binary label as [1]: ORT warns
    want = real_ort.InferenceSession(data, quiet, providers=['CPUExecutionProvider']).run(None, feeds)
    return got, want


def assert_same_as_ort(got, want):
    """Integer and string outputs exactly, float outputs to RTOL/ATOL, ZipMap's lists of dicts key
    for key (same keys, same order)."""
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        where = f'output {i}'
        if isinstance(w, list):
            assert isinstance(g, list) and len(g) == len(w), where
            for r, (gm, wm) in enumerate(zip(g, w)):
                assert list(gm) == list(wm), f'{where} row {r}: keys {list(gm)} != {list(wm)}'
                np.testing.assert_allclose(np.array(list(gm.values())), np.array(list(wm.values())),
                                           rtol=RTOL, atol=ATOL, err_msg=f'{where} row {r}')
            continue
        assert isinstance(g, np.ndarray), f'{where}: {type(g).__name__}'
        assert g.dtype == w.dtype and g.shape == w.shape, f'{where}: {g.dtype}{g.shape} != {w.dtype}{w.shape}'
        if w.dtype.kind in 'f':
            np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL, err_msg=where)
        else:
            np.testing.assert_array_equal(g, w, err_msg=where)


def proba_array(probs, classes):
    """A classifier's probability output as an (N, C) array in `classes` order, whether it came
    out as a tensor or as ZipMap's list of dicts."""
    if isinstance(probs, list):
        return np.array([[row[c] for c in classes] for row in probs], dtype=np.float64)
    return np.asarray(probs, dtype=np.float64)


def check_classifier(model, feeds, clf_labels, clf_proba, classes, proba_atol):
    """onyx against onnxruntime, then onyx against the library: probabilities to proba_atol and
    labels exactly (the data sets here have no row near a tie)."""
    got, want = run_both(model, feeds)
    assert_same_as_ort(got, want)
    np.testing.assert_allclose(proba_array(got[1], classes), clf_proba, atol=proba_atol)
    np.testing.assert_array_equal(got[0], clf_labels)
    return got


# ------------------------------------------------------------------------------------------------
# skl2onnx

def test_random_forest_classifier(multiclass):
    from sklearn.ensemble import RandomForestClassifier
    x, y = multiclass
    clf = RandomForestClassifier(n_estimators=20, max_depth=6, random_state=0).fit(x, y)
    model = skl2onnx.to_onnx(clf, x[:1])
    # averaged leaf frequencies: float32 sums of 20 values
    check_classifier(model, {'X': x}, clf.predict(x), clf.predict_proba(x), clf.classes_, 1e-5)


def test_random_forest_regressor(regression):
    from sklearn.ensemble import RandomForestRegressor
    x, y = regression
    reg = RandomForestRegressor(n_estimators=20, max_depth=6, random_state=0).fit(x, y)
    model = skl2onnx.to_onnx(reg, x[:1])
    got, want = run_both(model, {'X': x})
    assert_same_as_ort(got, want)
    # targets of magnitude ~100 summed in float32
    np.testing.assert_allclose(got[0].ravel(), reg.predict(x), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize('data', ['binary', 'multiclass'])
def test_gradient_boosting_classifier(data, request):
    from sklearn.ensemble import GradientBoostingClassifier
    x, y = request.getfixturevalue(data)
    clf = GradientBoostingClassifier(n_estimators=30, max_depth=3, random_state=0).fit(x, y)
    model = skl2onnx.to_onnx(clf, x[:1])
    # Two classes: every leaf scores class 0 and the model has ONE base value (the prior's
    # log-odds) for its two class labels, which onnxruntime adds to that score.
    # Decision functions summed in float32 then through the sigmoid / softmax.
    check_classifier(model, {'X': x}, clf.predict(x), clf.predict_proba(x), clf.classes_, 1e-5)


def test_gradient_boosting_regressor(regression):
    from sklearn.ensemble import GradientBoostingRegressor
    x, y = regression
    reg = GradientBoostingRegressor(n_estimators=30, max_depth=3, random_state=0).fit(x, y)
    model = skl2onnx.to_onnx(reg, x[:1])
    got, want = run_both(model, {'X': x})
    assert_same_as_ort(got, want)
    np.testing.assert_allclose(got[0].ravel(), reg.predict(x), rtol=1e-5, atol=1e-4)


def test_svc_probability_multiclass(iris):
    from sklearn.svm import SVC
    x, y = iris
    clf = SVC(probability=True, random_state=0).fit(x, y)
    model = skl2onnx.to_onnx(clf, x[:1])
    # libsvm's pairwise coupling iterates to its own stopping tolerance in double
    check_classifier(model, {'X': x}, clf.predict(x), clf.predict_proba(x), clf.classes_, 1e-4)


def test_logistic_regression_pipeline_with_column_transformer():
    """StandardScaler on the numeric columns, OneHotEncoder on a string column, LogisticRegression,
    and skl2onnx's default ZipMap output: two graph inputs, probabilities as a list of dicts keyed
    by string class labels."""
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler
    rng = np.random.default_rng(3)
    n = 240
    num = (rng.normal(size=(n, 3)) * [1.0, 10.0, 0.1]).astype(np.float32)
    cat = rng.choice(['red', 'green', 'blue', 'grey'], size=(n, 1))
    score = num[:, 0] + 0.1 * num[:, 1] - 5 * num[:, 2] + (cat[:, 0] == 'red') - (cat[:, 0] == 'blue')
    y = np.where(score > 0.5, 'yes', np.where(score < -0.5, 'no', 'maybe'))
    x = np.empty((n, 4), dtype=object)
    x[:, :3] = num
    x[:, 3:] = cat
    pipe = Pipeline([
        ('prep', ColumnTransformer([('num', StandardScaler(), [0, 1, 2]),
                                    ('cat', OneHotEncoder(handle_unknown='ignore'), [3])])),
        ('clf', LogisticRegression(max_iter=1000)),
    ]).fit(x, y)
    model = skl2onnx.to_onnx(pipe, initial_types=[('num', FloatTensorType([None, 3])),
                                                  ('cat', StringTensorType([None, 1]))])
    feeds = {'num': num, 'cat': cat.astype(object)}
    got = check_classifier(model, feeds, pipe.predict(x), pipe.predict_proba(x), pipe.classes_, 1e-5)
    assert isinstance(got[1], list) and isinstance(got[1][0], dict), 'expected ZipMap output'
    assert sorted(got[1][0]) == sorted(pipe.classes_)
    # a category never seen in training: OneHotEncoder's handle_unknown='ignore' gives zeros
    unseen = cat.copy()
    unseen[::5] = 'purple'
    x2 = x.copy()
    x2[:, 3:] = unseen
    check_classifier(model, {'num': num, 'cat': unseen.astype(object)}, pipe.predict(x2),
                     pipe.predict_proba(x2), pipe.classes_, 1e-5)


def test_mlp_classifier(multiclass):
    from sklearn.neural_network import MLPClassifier
    x, y = multiclass
    clf = MLPClassifier(hidden_layer_sizes=(16, 8), max_iter=300, random_state=0).fit(x, y)
    model = skl2onnx.to_onnx(clf, x[:1], options={'zipmap': False})
    # two float32 matmuls + softmax against scikit-learn's float64
    check_classifier(model, {'X': x}, clf.predict(x), clf.predict_proba(x), clf.classes_, 1e-5)


def test_kmeans(iris):
    from sklearn.cluster import KMeans
    x, _ = iris
    km = KMeans(n_clusters=3, n_init=3, random_state=0).fit(x)
    model = skl2onnx.to_onnx(km, x[:1])
    got, want = run_both(model, {'X': x})
    assert_same_as_ort(got, want)
    label, scores = got
    np.testing.assert_array_equal(label, km.predict(x))
    # skl2onnx's scores are the distances to the centres (KMeans.transform) computed as
    # sqrt(|x|^2 - 2 x.c + |c|^2) in float32: the squares carry an absolute error of a few float32
    # ulps of |x|^2 + |c|^2 (cancellation), so they are compared to that, against float64
    exact = km.transform(x.astype(np.float64))
    scale = (x.astype(np.float64) ** 2).sum(1, keepdims=True) + (km.cluster_centers_ ** 2).sum(1)
    assert np.all(np.abs(scores.astype(np.float64) ** 2 - exact ** 2) <= 8 * np.finfo(np.float32).eps * scale)


# ------------------------------------------------------------------------------------------------
# onnxmltools: LightGBM and XGBoost

def _onnxmltools():
    return pytest.importorskip('onnxmltools')


def _initial_types(x):
    # onnxmltools checks its inputs against its own FloatTensorType, not skl2onnx's
    from onnxmltools.convert.common.data_types import FloatTensorType as MLFloat
    return [('X', MLFloat([None, x.shape[1]]))]


@pytest.mark.parametrize('data', ['binary', 'multiclass'])
def test_lightgbm_classifier(data, request):
    lightgbm = pytest.importorskip('lightgbm')
    onnxmltools = _onnxmltools()
    x, y = request.getfixturevalue(data)
    clf = lightgbm.LGBMClassifier(n_estimators=30, num_leaves=15, verbose=-1, random_state=0, n_jobs=1).fit(x, y)
    model = onnxmltools.convert_lightgbm(clf, initial_types=_initial_types(x))
    # LightGBM sums its trees in double, the ONNX TreeEnsemble in float32
    check_classifier(model, {'X': x}, clf.predict(x), clf.predict_proba(x), clf.classes_, 1e-5)


def test_lightgbm_binary_positive_leaves():
    """One tree on mildly unbalanced data: every leaf weight is positive, some raw scores are in
    (0, 0.5]. onnxruntime 1.30 labels a two-class TreeEnsembleClassifier whose weights are all
    positive by raw score > 0.5 even under a LOGISTIC post-transform, so it calls those rows class 0
    while LightGBM (probability > 0.5) calls them 1. onyx takes the label from the probabilities:
    its labels are checked against LightGBM, its probabilities against both."""
    lightgbm = pytest.importorskip('lightgbm')
    onnxmltools = _onnxmltools()
    x, y = make_classification(n_samples=400, n_features=8, n_informative=5, weights=[0.4, 0.6],
                               flip_y=0.0, random_state=0)
    x = x.astype(np.float32)
    clf = lightgbm.LGBMClassifier(n_estimators=1, num_leaves=4, verbose=-1, n_jobs=1).fit(x, y)
    model = onnxmltools.convert_lightgbm(clf, initial_types=_initial_types(x))
    (tree,) = [n for n in model.graph.node if n.op_type == 'TreeEnsembleClassifier']
    weights = next(a.floats for a in tree.attribute if a.name == 'class_weights')
    assert min(weights) > 0, 'the data no longer gives all-positive leaves'
    got, want = run_both(model, {'X': x})
    assert_same_as_ort(got[1:], want[1:])
    proba = proba_array(got[1], clf.classes_)
    np.testing.assert_allclose(proba, clf.predict_proba(x), atol=1e-5)
    np.testing.assert_array_equal(got[0], clf.predict(x))


def test_lightgbm_regressor(regression):
    lightgbm = pytest.importorskip('lightgbm')
    onnxmltools = _onnxmltools()
    x, y = regression
    reg = lightgbm.LGBMRegressor(n_estimators=30, num_leaves=15, verbose=-1, random_state=0, n_jobs=1).fit(x, y)
    model = onnxmltools.convert_lightgbm(reg, initial_types=_initial_types(x))
    got, want = run_both(model, {'X': x})
    assert_same_as_ort(got, want)
    np.testing.assert_allclose(got[0].ravel(), reg.predict(x), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize('data', ['binary', 'multiclass'])
def test_xgboost_classifier(data, request):
    xgboost = pytest.importorskip('xgboost')
    onnxmltools = _onnxmltools()
    x, y = request.getfixturevalue(data)
    clf = xgboost.XGBClassifier(n_estimators=30, max_depth=4, random_state=0, n_jobs=1).fit(x, y)
    model = onnxmltools.convert_xgboost(clf, initial_types=_initial_types(x))
    # XGBoost itself predicts in float32: the same arithmetic in another order
    check_classifier(model, {'X': x}, clf.predict(x), clf.predict_proba(x), clf.classes_, 1e-5)


def test_xgboost_regressor(regression):
    xgboost = pytest.importorskip('xgboost')
    onnxmltools = _onnxmltools()
    x, y = regression
    reg = xgboost.XGBRegressor(n_estimators=30, max_depth=4, random_state=0, n_jobs=1).fit(x, y)
    model = onnxmltools.convert_xgboost(reg, initial_types=_initial_types(x))
    got, want = run_both(model, {'X': x})
    assert_same_as_ort(got, want)
    np.testing.assert_allclose(got[0].ravel(), reg.predict(x), rtol=1e-5, atol=1e-4)
