"""`python -m onyx ...` (and the `onyx` script a pip install puts on PATH): the onyx CLI (info, run,
bench, profile). Runs the `onyx` program bundled beside the package's libonyx, or the source tree's
build/onyx. `generate` is this package's own (onyx.genai: it tokenizes in Python)."""
import argparse
import os
import sys


def _program():
    here = os.path.dirname(os.path.abspath(__file__))
    for candidate in (os.path.join(here, '_native', 'onyx'),
                      os.path.join(here, '..', '..', '..', 'build', 'onyx')):
        if os.access(candidate, os.X_OK):
            return os.path.normpath(candidate)
    return None


def generate(argv):
    """onyx generate MODEL_DIR --prompt TEXT [options]: a builder model folder's continuation of
    the prompt, streamed to stdout."""
    ap = argparse.ArgumentParser(prog='onyx generate', description=generate.__doc__)
    ap.add_argument('model_dir')
    ap.add_argument('--prompt', required=True)
    ap.add_argument('--max-length', type=int, default=None, help='tokens in all, prompt included')
    ap.add_argument('--min-length', type=int, default=None)
    ap.add_argument('--do-sample', action='store_true', help='sample (default: greedy)')
    ap.add_argument('--top-k', type=int, default=None)
    ap.add_argument('--top-p', type=float, default=None)
    ap.add_argument('--temperature', type=float, default=None)
    ap.add_argument('--repetition-penalty', type=float, default=None)
    ap.add_argument('--seed', type=int, default=None)
    ap.add_argument('--threads', type=int, default=None)
    a = ap.parse_args(argv)
    from . import genai
    search = {k: v for k, v in (('min_length', a.min_length), ('top_k', a.top_k),
                                ('top_p', a.top_p), ('temperature', a.temperature),
                                ('repetition_penalty', a.repetition_penalty),
                                ('random_seed', a.seed)) if v is not None}
    if a.do_sample:
        search['do_sample'] = True

    def out(piece):
        sys.stdout.write(piece)
        sys.stdout.flush()
    try:
        genai.generate(a.model_dir, a.prompt, max_length=a.max_length, stream=out,
                       threads=a.threads, **search)
    except genai.GenaiError as e:
        sys.stderr.write(f'onyx generate: {e}\n')
        return 1
    sys.stdout.write('\n')
    return 0


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ['generate']:
        return generate(argv[1:])
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
