"""core/ is a stack of layers (docs/ARCHITECTURE.md): tools/check_layers.py finds no include or
call circle among its modules (a source with the header of its name) and no include of ops/,
kernels_*/ or backend/; and the check itself finds each kind of fault in a small tree made for
it."""
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CHECK = os.path.join(ROOT, "tools", "check_layers.py")


def objects_dir():
    """build/obj of the library under test (ONYX_LIB, else build/libonyx.so)."""
    lib = os.environ.get("ONYX_LIB", os.path.join(ROOT, "build", "libonyx.so"))
    return os.path.join(os.path.dirname(os.path.abspath(lib)), "obj")


def run_check(*args):
    return subprocess.run([sys.executable, CHECK, *args], capture_output=True, text=True)


def test_core_has_no_circle():
    obj = objects_dir()
    assert os.path.isdir(os.path.join(obj, "core")), f"no objects under {obj}: build first"
    r = run_check("--root", ROOT, "--obj", obj, "--list")
    assert r.returncode == 0, r.stderr
    listed = dict(line.split(":", 1) for line in r.stdout.splitlines())
    # the plan layers, as docs/ARCHITECTURE.md draws them: each only above what it calls
    level = {name.split()[1]: int(name.split()[0]) for name in listed}
    order = ["plan.c", "plan_step.c", "exec_place.c", "fuse.c", "plan_build.c", "exec_run.c"]
    assert [level[f] for f in order] == sorted(level[f] for f in order), listed
    assert level["planner.c"] < level["plan_build.c"]
    assert level["plan_prepare.c"] < level["exec_place.c"]
    # the fusion passes: the CPU's driver (fuse.c) over one file per idea, each over the node
    # matchers (fuse_match.c) that the device epilogue pass (fuse_device.c) shares
    ideas = ["fuse_attention.c", "fuse_postops.c", "fuse_preops.c", "fuse_blocked.c",
             "fuse_views.c", "fuse_conv_io.c"]
    for f in ideas:
        assert level["fuse_match.c"] < level[f] < level["fuse.c"], (f, listed)
    assert level["fuse_match.c"] < level["fuse_device.c"] < level["plan_build.c"], listed
    # headers are modules of their sources: exec_frame.c (a kernel's frame) below the plan
    # layers, the types-only headers (kernel.h, exec_env.h, exec_internal.h) below every layer
    # that includes them, and the TBB shim's C interface one module with its C++ source
    assert level["exec_frame.c"] < level["exec_place.c"], listed
    assert level["kernel.h"] < level["exec_env.h"] < level["exec_internal.h"] < level["plan.c"]
    assert "parallel_tbb.h" not in level and "exec.h" not in level, listed


def write(root, path, text):
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as fh:
        fh.write(text)


def test_check_finds_an_include_circle_and_an_ops_include(tmp_path):
    root = str(tmp_path)
    write(root, "core/a.h", '#include "core/b.h"\n')
    write(root, "core/b.h", '#include "core/a.h"\n#include "ops/shape_common.h"\n')
    r = run_check("--root", root)
    assert r.returncode == 1
    assert "a circle among core/a.h, core/b.h" in r.stderr
    assert "core/b.h includes ops/shape_common.h" in r.stderr


@pytest.mark.skipif(not shutil.which("cc") or not shutil.which("nm"), reason="needs cc and nm")
def test_check_finds_a_call_circle(tmp_path):
    root, obj = str(tmp_path / "src"), str(tmp_path / "obj")
    write(root, "core/low.c", "void high(void);\nvoid low(void) { high(); }\n")
    write(root, "core/high.c", "void low(void);\nvoid high(void) { low(); }\n")
    write(root, "core/alone.c", "void low(void);\nvoid alone(void) { low(); }\n")
    os.makedirs(os.path.join(obj, "core"))
    for name in ("low", "high", "alone"):
        subprocess.run(["cc", "-c", os.path.join(root, "core", name + ".c"), "-o",
                        os.path.join(obj, "core", name + ".o")], check=True)
    r = run_check("--root", root, "--obj", obj)
    assert r.returncode == 1
    assert "a circle among core/high.c, core/low.c" in r.stderr
    assert "core/low.c -> core/high.c (calls high)" in r.stderr
    assert "alone" not in r.stderr


@pytest.mark.skipif(not shutil.which("cc") or not shutil.which("nm"), reason="needs cc and nm")
def test_check_counts_a_header_as_its_source(tmp_path):
    """low.c calls up into high.c, and high.c only includes low.h: a circle once low.h is
    low.c's, which counting headers apart hid. A header without a source of its name (types.h)
    stays a module of its own."""
    root, obj = str(tmp_path / "src"), str(tmp_path / "obj")
    write(root, "core/types.h", "typedef int number;\n")
    write(root, "core/low.h", '#include "core/types.h"\nnumber low(void);\n')
    write(root, "core/low.c", '#include "core/low.h"\nint high(void);\n'
                              "number low(void) { return high(); }\n")
    write(root, "core/high.c", '#include "core/low.h"\nint high(void) { return 1; }\n')
    os.makedirs(os.path.join(obj, "core"))
    for name in ("low", "high"):
        subprocess.run(["cc", "-I", root, "-c", os.path.join(root, "core", name + ".c"), "-o",
                        os.path.join(obj, "core", name + ".o")], check=True)
    r = run_check("--root", root, "--obj", obj)
    assert r.returncode == 1
    assert "a circle among core/high.c, core/low.c" in r.stderr
    assert "core/high.c -> core/low.c (core/high.c includes core/low.h)" in r.stderr
    assert "core/low.c -> core/high.c (calls high)" in r.stderr
    assert "types.h" not in r.stderr
    listed = run_check("--root", root, "--list").stdout
    assert " low.c: types.h" in listed and " types.h: " in listed


@pytest.mark.skipif(not shutil.which("cc") or not shutil.which("nm"), reason="needs cc and nm")
def test_check_ties_a_declaration_to_its_source(tmp_path):
    """A header declares its own source's functions: api.h (api.c's) declaring a function
    other.c defines, and a header of no source (types.h) declaring one, are reported with the
    file nm says defines it; inline functions, typedefs of function pointers and api.c's own
    functions are not."""
    root, obj = str(tmp_path / "src"), str(tmp_path / "obj")
    write(root, "core/types.h", "typedef struct pair { int a, b; } pair;\n"
                                "typedef int (*callback)(pair p);\n"
                                "static inline int twice(int x) { return 2 * x; }\n"
                                "int other(void);\n")
    write(root, "core/api.h", '#include "core/types.h"\n/* api(x) */\nint api(int x);\n'
                              "int other(void);\nint (*hook)(void);\n")
    write(root, "core/api.c", '#include "core/api.h"\nint api(int x) { return twice(x); }\n')
    write(root, "core/other.c", "int other(void) { return 2; }\n")
    os.makedirs(os.path.join(obj, "core"))
    for name in ("api", "other"):
        subprocess.run(["cc", "-I", root, "-c", os.path.join(root, "core", name + ".c"), "-o",
                        os.path.join(obj, "core", name + ".o")], check=True)
    r = run_check("--root", root, "--obj", obj)
    assert r.returncode == 1
    assert "core/api.h declares other, which core/other.c defines, not core/api.c" in r.stderr
    assert "core/types.h declares other, which core/other.c defines: a header of no source" \
        in r.stderr
    assert "declares api" not in r.stderr and "twice" not in r.stderr
    assert "callback" not in r.stderr and "hook" not in r.stderr
    assert "circle" not in r.stderr
