"""onnx's own BackendTest runner over every test kind (node, simple, pytorch-converted,
pytorch-operator, real), driving onyx through its onnx.backend.base.Backend adapter. Tests in the
C runner's expected-failures list are expected failures here too; one that passes fails the run
(an unexpected success), as in the C runner."""
import os
import tempfile

import numpy as np
import onnx.backend.test

import draws
import expected_failures
import onyx.backend

# The real/ light models write their generated inputs under $ONNX_HOME; keep them out of $HOME.
os.environ.setdefault('ONNX_HOME', os.path.join(tempfile.gettempdir(), 'onyx-onnx-home'))


DRAWS = draws.load()
# The rep and inputs of the latest run, for the draw checks, which run the model again, and the
# name of the test that runs (onnx builds node tests in memory: they have no data folder).
LAST_RUN = {}


class RememberingRep(onyx.backend.OnyxRep):
    def run(self, inputs, **kwargs):
        LAST_RUN.update(rep=self, inputs=inputs)
        return super().run(inputs, **kwargs)


class DriveEveryTest(onyx.backend.OnyxBackend):
    """onnx's runner skips a test when is_compatible says no; here every test goes through prepare
    instead, so an unsupported op shows up as a (listed) failure, never as a silent skip."""

    @classmethod
    def is_compatible(cls, model, device='CPU', **kwargs):  # noqa: ARG003
        return True

    @classmethod
    def prepare(cls, model, device='CPU', **kwargs):
        return RememberingRep(super().prepare(model, device, **kwargs).session)


class BackendTest(onnx.backend.test.BackendTest):
    """onnx's runner with two changes. It compares the items of a sequence output by passing each
    item where it expects a list of outputs, so a sequence holding a 0-d tensor
    (test_loop16_seq_none) cannot be compared by any backend: here each item is compared as a
    one-output list, with onnx's own checks. And the tests of tests/conformance/random_draws.txt
    are checked as random draws, as the C runner does, found by the test's name."""

    def _add_test(self, category, test_name, test_func, report_item, devices=('CPU', 'CUDA'),
                  **kwargs):
        def named(*args, **kw):
            LAST_RUN['test'] = test_name
            return test_func(*args, **kw)
        super()._add_test(category, test_name, named, report_item, devices, **kwargs)

    @classmethod
    def assert_similar_outputs(cls, ref_outputs, outputs, rtol, atol, model_dir=None):
        kind = DRAWS.get(LAST_RUN.get('test'))
        if kind:
            rep, inputs = LAST_RUN['rep'], LAST_RUN['inputs']
            draws.check_bernoulli(kind, rep.run, inputs, outputs[0], ref_outputs[0])
            return
        assert len(outputs) == len(ref_outputs), f'{len(outputs)} outputs, expected {len(ref_outputs)}'
        for ref, out in zip(ref_outputs, outputs):
            if isinstance(out, (list, tuple)):
                assert isinstance(ref, (list, tuple)), f'got a sequence, expected {type(ref)} ({model_dir})'
                assert len(out) == len(ref), f'sequence of {len(out)} items, expected {len(ref)}'
                for ref_item, out_item in zip(ref, out):
                    super().assert_similar_outputs([ref_item], [out_item], rtol, atol, model_dir)
            else:
                super().assert_similar_outputs([ref], [out], rtol, atol, model_dir)


# onnx's node cases draw their inputs from numpy's global generator as they are built: seeded, they
# are the data tools/conformance/gen_node_data.py writes for onyx-test-runner
np.random.seed(0)
backend_test = BackendTest(DriveEveryTest, __name__)
for device in ('cpu', 'cuda'):
    for name in expected_failures.load(device):
        backend_test.xfail(f'^{name}_{device}$')

globals().update(backend_test.test_cases)


def test_every_draw_check_names_a_test():
    """A draw check keyed by a name no test has would stop running without a word."""
    names = {case.name for case in onnx.backend.test.loader.load_node_model_tests()}
    assert set(DRAWS) <= names, sorted(set(DRAWS) - names)
