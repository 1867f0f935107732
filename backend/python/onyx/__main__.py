"""`python -m onyx ...` (and the `onyx` script a pip install puts on PATH): the onyx CLI (info, run,
bench, profile). Runs the `onyx` program bundled beside the package's libonyx, or the source tree's
build/onyx."""
import os
import sys


def _program():
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (os.path.join(here, '_native', 'onyx'),
                      os.path.join(here, '..', '..', '..', 'build', 'onyx')):
        if os.access(candidate, os.X_OK):
            return os.path.normpath(candidate)
    return None


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    program = _program()
    if program is None:
        sys.stderr.write('onyx: the onyx program is not bundled with this package and no source '
                         'tree build/onyx was found (run `make` in the checkout)\n')
        return 2
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(program, [program] + argv)
    return 0  # not reached


if __name__ == '__main__':
    sys.exit(main())
