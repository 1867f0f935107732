#!/usr/bin/env python3
# Writes the generated op regression suite: ONNX backend-style test dirs (model.onnx,
# test_data_set_0/{input,output}_N.pb) under OUT/ok (small cases) and OUT/par (large cases, run one
# at a time so that their kernels split across threads). Deterministic: fixed seeds.
#   .venv/bin/python tests/gen/make_cases.py OUT
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import glob  # noqa: E402
import importlib  # noqa: E402

import numpy as np  # noqa: E402

from common import Suite  # noqa: E402

# Every tests/gen/gen_<family>.py module is a family: it defines generate(suite).
FAMILIES = sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'gen_*.py')))


def main(argv):
    if len(argv) != 2:
        sys.stderr.write('usage: make_cases.py OUT\n')
        return 2
    suite = Suite(argv[1])
    # numpy warns on the overflows and invalid values that some cases are about.
    with np.errstate(all='ignore'):
        for name in FAMILIES:
            importlib.import_module(name).generate(suite)
    print(f'make_cases: {suite.counts["ok"]} cases in {argv[1]}/ok, {suite.counts["par"]} large ones in '
          f'{argv[1]}/par')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
