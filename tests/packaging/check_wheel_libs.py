"""Checks that a manylinux wheel carries what its native files link (make test-manylinux, and
tests/packaging/test_install.sh): every ELF file's DT_NEEDED is found inside the wheel through that
file's rpath, as the dynamic loader would find it, or is a library of the manylinux policy's
whitelist (libc, libm, libstdc++, ...); no rpath points outside the wheel; the libraries libonyx
dlopen()s (OpenBLAS) are where its rpath finds them. Prints the policy and the bundled files.
    check_wheel_libs.py WHEEL        (run with .venv-wheel's python: auditwheel's policy file)
"""
import json
import os
import re
import sys
import tempfile
import zipfile

from elftools.common.exceptions import ELFError
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile

import auditwheel

DLOPENED = {'onyx/_native/libonyx.so.0': ['libopenblas.so.0']}  # kernels_cpu/common/blas.c


def policy_whitelist(wheel_name):
    m = re.search(r'-(manylinux_(\d+)_(\d+))_x86_64', wheel_name)
    if not m:
        sys.exit(f'{wheel_name}: no manylinux_X_Y_x86_64 tag')
    path = os.path.join(os.path.dirname(auditwheel.__file__), 'policy', 'manylinux-policy.json')
    for policy in json.load(open(path)):
        if policy['name'] == m.group(1):
            # the dynamic loader counts as part of glibc, which every policy assumes
            return m.group(1), set(policy['lib_whitelist']) | {'ld-linux-x86-64.so.2'}
    sys.exit(f'{wheel_name}: auditwheel knows no policy {m.group(1)}')


def dynamic(path):
    """(DT_NEEDED list, rpath entries) of an ELF file, or None when it is not one."""
    try:
        with open(path, 'rb') as f:
            elf = ELFFile(f)
            needed, rpath = [], []
            for section in elf.iter_sections():
                if isinstance(section, DynamicSection):
                    for tag in section.iter_tags():
                        if tag.entry.d_tag == 'DT_NEEDED':
                            needed.append(tag.needed)
                        elif tag.entry.d_tag in ('DT_RPATH', 'DT_RUNPATH'):
                            rpath += (tag.rpath if tag.entry.d_tag == 'DT_RPATH'
                                      else tag.runpath).split(':')
            return needed, rpath
    except ELFError:
        return None


def main():
    wheel = sys.argv[1]
    policy, whitelist = policy_whitelist(os.path.basename(wheel))
    errors, bundled = [], []
    with tempfile.TemporaryDirectory() as root:
        zipfile.ZipFile(wheel).extractall(root)
        for d, _, names in os.walk(root):
            for n in sorted(names):
                path = os.path.join(d, n)
                rel = os.path.relpath(path, root)
                info = None if n.endswith('.py') else dynamic(path)
                if info is None:
                    continue
                bundled.append(f'{rel} ({os.path.getsize(path) / 2**20:.1f} MiB)')
                needed, rpath = info
                dirs = []
                for entry in filter(None, rpath):
                    if not entry.startswith('$ORIGIN'):
                        errors.append(f'{rel}: rpath entry {entry} is not relative to the file')
                        continue
                    full = os.path.normpath(entry.replace('$ORIGIN', d, 1))
                    if os.path.relpath(full, root).startswith('..'):
                        errors.append(f'{rel}: rpath entry {entry} points outside the wheel')
                    dirs.append(full)
                for lib in needed + DLOPENED.get(rel, []):
                    if any(os.path.isfile(os.path.join(x, lib)) for x in dirs):
                        continue
                    if lib in whitelist and lib not in DLOPENED.get(rel, []):
                        continue
                    errors.append(f'{rel} needs {lib}: neither in the wheel (rpath {rpath}) nor '
                                  f'in the {policy} whitelist')
    print(f'{os.path.basename(wheel)}: policy {policy}, {len(bundled)} native files:')
    for b in bundled:
        print('  ' + b)
    for e in errors:
        print('FAIL: ' + e)
    sys.exit(1 if errors else 0)


if __name__ == '__main__':
    main()
