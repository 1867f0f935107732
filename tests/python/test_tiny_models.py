"""The tiny exports of tests/models/tiny (tools/zoo/export.py --tiny: a 2-layer BERT, a small CNN
with SiLU and squeeze-excitation, a 2-layer ViT, each from both torch exporters) run through onyx
and compared with the outputs onnxruntime gave on the same inputs, saved beside each model. They
carry the exporters' real patterns (spelled-out GELU and SiLU, LayerNormalization, attention
masks, shape arithmetic) into make test without torch."""
import glob
import json
import os

import numpy as np
import pytest

import onyx

TINY = os.path.join(os.path.dirname(__file__), '..', 'models', 'tiny')
MODELS = sorted(glob.glob(os.path.join(TINY, '*.onnx')))


def _load(path):
    base = path[:-len('.onnx')]
    inputs = dict(np.load(base + '.inputs.npz'))
    expected = dict(np.load(base + '.expected.npz'))
    return inputs, expected


@pytest.mark.parametrize('path', MODELS, ids=[os.path.basename(p) for p in MODELS])
def test_tiny_model_matches_onnxruntime(path):
    inputs, expected = _load(path)
    sess = onyx.Session(path, threads=2)
    names = [o.name for o in sess.get_outputs()]
    got = dict(zip(names, sess.run(None, inputs)))
    assert set(expected) <= set(got)
    for name, want in expected.items():
        np.testing.assert_allclose(got[name], want, rtol=1e-3, atol=1e-5, err_msg=name)


@pytest.mark.parametrize('path', MODELS, ids=[os.path.basename(p) for p in MODELS])
def test_tiny_model_other_batch(path):
    """A second batch size: onyx plans it anew; each row must equal the single-row result."""
    inputs, _ = _load(path)
    sess = onyx.Session(path, threads=1)
    full = sess.run(None, inputs)
    first = sess.run(None, {k: v[:1] for k, v in inputs.items()})
    for a, b in zip(full, first):
        np.testing.assert_allclose(a[:1], b, rtol=1e-4, atol=1e-5)


def test_tiny_models_present():
    # three tiny models from each of the two exporters, under 2 MB in all
    assert len(MODELS) == 6
    size = sum(os.path.getsize(p) for p in glob.glob(os.path.join(TINY, '*')))
    assert size < 2 * 1024 * 1024
    for path in MODELS:
        spec = json.load(open(path.replace('.dynamo.onnx', '.onnx')[:-len('.onnx')] + '.json'))
        assert spec['inputs']
