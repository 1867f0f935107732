"""The expected-failures list of the C conformance runner (tests/conformance/<device>_expected_
failures.txt), read here so that both runners skip exactly the same tests: one list, not two."""
import os

CONFORMANCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'conformance')


def load(device='cpu'):
    """{test name: reason} from the list of `device` (empty when the file does not exist)."""
    path = os.path.join(CONFORMANCE, f'{device}_expected_failures.txt')
    out = {}
    if not os.path.exists(path):
        return out
    with open(path, encoding='utf-8') as f:
        for line in f:
            body, _, reason = line.partition('#')
            name = body.strip()
            if name:
                out[name] = reason.strip()
    return out
