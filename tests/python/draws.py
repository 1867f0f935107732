"""The random-draw checks of tests/conformance/random_draws.txt, as onyx-test-runner --draws does
them: outputs that no generator can reproduce bit for bit are checked as draws (type, shape, 0/1
values, frequencies over repeated runs, or reproducibility from a seed)."""
import os

import numpy as np

LIST = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'conformance', 'random_draws.txt')
RUNS = 400


def load(path=LIST):
    """{test name: kind}."""
    out = {}
    with open(path, encoding='utf-8') as f:
        for line in f:
            body = line.partition('#')[0].split()
            if body:
                out[body[0]] = body[1]
    return out


def check_bernoulli(kind, run, inputs, got, expected):
    """run(inputs) → outputs; got/expected: output 0 of the first run and the recorded one."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype and got.shape == expected.shape, \
        f'a {got.dtype}{got.shape} draw, recorded {expected.dtype}{expected.shape}'
    assert np.isin(got, [0, 1]).all(), f'not 0/1 draws: {got}'
    if kind == 'bernoulli-seeded':
        np.testing.assert_array_equal(np.asarray(run(inputs)[0]), got, 'a second run from the seed differs')
        return
    p = np.asarray(inputs[0], np.float64)
    if kind == 'bernoulli-inverted':
        p = 1 - p
    counts = got.astype(np.float64)
    for _ in range(RUNS - 1):
        counts += np.asarray(run(inputs)[0], np.float64)
    freq = counts / RUNS
    bound = 5 * np.sqrt(p * (1 - p) / RUNS) + 0.02
    assert (np.abs(freq - p) <= bound).all(), f'frequencies {freq} for probabilities {p}'
