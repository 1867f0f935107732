"""Per-kind pass counts of the BackendTest run, printed at the end so they can be set beside the C
runner's (onyx-test-runner prints the same split)."""
import collections
import re

_KIND = re.compile(r'OnnxBackend(\w+?)ModelTest')
_counts = collections.defaultdict(collections.Counter)


def pytest_runtest_logreport(report):
    m = _KIND.search(report.nodeid)
    if not m or not report.nodeid.endswith('_cpu'):
        return
    if report.when == 'call' or (report.when == 'setup' and report.outcome != 'passed'):
        outcome = 'xfailed' if hasattr(report, 'wasxfail') and report.outcome == 'skipped' else report.outcome
        _counts[m.group(1)][outcome] += 1


def pytest_terminal_summary(terminalreporter):
    if not _counts:
        return
    terminalreporter.write_sep('-', 'onnx BackendTest on CPU, per kind')
    for kind, c in sorted(_counts.items()):
        terminalreporter.write_line(f'{kind:<18} passed {c["passed"]:>5}  expected failures {c["xfailed"]:>4}'
                                    f'  failed {c["failed"]:>3}  skipped {c["skipped"]:>3}')
