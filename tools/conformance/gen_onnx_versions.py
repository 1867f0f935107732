"""Writes ops/onnx_versions.h: the version history of every op of the standard ONNX domains and
each domain's newest opset, from the installed onnx package's own schemas. The registry
(ops/registry.c) reads it to tell which version of an op a model asks for, so that a version onyx
does not implement is refused by name instead of running as an older one.

With --attributes it writes tests/unit/onnx_attributes.h instead: every version's attributes and
their types (and those of onnxruntime's com.microsoft ops, when onnxruntime is installed), for the
unit test that holds each onyx schema to what the op really has.

usage: gen_onnx_versions.py [--attributes] > FILE   (with the pinned onnx installed)
"""
import collections
import sys

import onnx
from onnx import defs


def main():
    history = collections.defaultdict(set)
    for s in defs.get_all_schemas_with_history():
        history[(s.domain, s.name)].add(s.since_version)
    domains = defs.C.schema_version_map()
    print(f'/* The standard ONNX domains and their ops\' versions as onnx {onnx.__version__} '
          'defines '
          'them: written by\n * tools/conformance/gen_onnx_versions.py from onnx\'s schemas; '
          'regenerate it, don\'t edit it.\n * ONNX_DOMAIN(domain, newest opset); '
          'ONNX_OP(domain, op, since_version...). */')
    for domain, (_, newest) in sorted(domains.items()):
        print(f'ONNX_DOMAIN("{domain}", {newest})')
    for (domain, name), versions in sorted(history.items()):
        listed = ', '.join(str(v) for v in sorted(versions))
        print(f'ONNX_OP("{domain}", "{name}", {listed})')


def attr_line(domain, name, version, attributes):
    """One ONNX_ATTRS entry, its list split into adjacent literals to stay within 100 columns."""
    words = [f'{a}:{attributes[a].type.name}' for a in sorted(attributes)]
    head = f'ONNX_ATTRS("{domain}", "{name}", {version}, '
    pieces, line = [], ''
    for w in words:
        if line and len(line) + len(w) + 20 > 90:
            pieces.append(line)
            line = ''
        line += w + ' '
    pieces.append(line.rstrip())
    if len(pieces) == 1 and len(head) + len(pieces[0]) < 96:
        return f'{head}"{pieces[0]}")'
    return head.rstrip() + '\n    ' + '\n    '.join(f'"{p}"' for p in pieces) + ')'


def attributes():
    print(f'/* Every op version\'s attributes and their types, as onnx {onnx.__version__} '
          '(and, for com.microsoft and\n * its default-domain additions, onnxruntime) define them: written '
          'by\n * tools/conformance/gen_onnx_versions.py --attributes; regenerate it, don\'t edit '
          'it.\n * ONNX_ATTRS(domain, op, since_version, "name:TYPE ..."). */')
    for s in sorted(defs.get_all_schemas_with_history(),
                    key=lambda s: (s.domain, s.name, s.since_version)):
        print(attr_line(s.domain, s.name, s.since_version, s.attributes))
    try:
        from onnxruntime.capi import onnxruntime_pybind11_state as ort
    except ImportError:
        return
    # com.microsoft, and the ops onnxruntime adds to the default domain
    # (SimplifiedLayerNormalization)
    standard = {(s.domain, s.name) for s in defs.get_all_schemas_with_history()}
    contrib = [s for s in ort.get_all_operator_schema()
               if s.domain == 'com.microsoft'
               or (s.domain == '' and (s.domain, s.name) not in standard)]
    for s in sorted(contrib, key=lambda s: (s.name, s.since_version)):
        print(attr_line(s.domain, s.name, s.since_version, s.attributes))


if __name__ == '__main__':
    attributes() if sys.argv[1:] == ['--attributes'] else main()
