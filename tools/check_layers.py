#!/usr/bin/env python3
"""Checks that core/ is a stack of layers: no include or call circle among its files, and no
include of ops/, kernels_*/ or backend/ from core (docs/ARCHITECTURE.md).

The graph's nodes are core's modules: a source with the header of its name (core/x.c and
core/x.h are one module, named core/x.c; core/x.cc where there is no core/x.c), a header that
HEADERS below names as the interface of a source of another name (one module with it), and
each other header (types and inline functions only, as core/kernel.h, or a table's
declarations), a module of its own. A module
depends on each module whose header it includes (#include "core/..." lines) and on each module
that defines a symbol its object uses (nm on the built objects: undefined against defined global
symbols). Any circle in that graph is an error, named with the edges that make it. Counting a
header as the source behind it is what makes the check whole: a file that includes x.h depends
on x.c, whose calls may lead back to it, so a header may name one module's interface only (a
header the interface of several files hides a circle through its name). So, with --obj, each
function a core header declares must be defined by that header's source (HEADERS: its sources),
and a header of no source declares none that a core object defines.

  tools/check_layers.py [--root DIR] [--obj DIR] [--list]

--obj is the folder of the built objects (build/obj: its core/ part is read); without it only
the includes are checked. --list prints every module's dependencies, bottom layer first.
"""
import argparse
import fnmatch
import os
import re
import subprocess
import sys

FORBIDDEN = ("ops/", "kernels_cpu/", "kernels_cuda/", "backend/")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')

# The core headers with no source of their name, each with what it is: (sources, why). Sources
# None: types and inline functions only, a module of its own (the check verifies that it declares
# no function a core object defines). One source: the header is that source's interface, one
# module with it. Patterns: a header of declarations each of which one of the matching files
# defines (a table's entries): a module of its own, since tying it to all of them would tie them
# to each other; its callers depend on what they call through the calls themselves.
HEADERS = {
    "core/kernel.h": (None, "the kernel interface every device's table implements (kernel, "
                      "kernel_prep, kernel_call, their flags) and inline accessors; what a kernel "
                      "calls of the executor is declared by core/exec_run.h and core/exec_frame.h"),
    "core/op_schema.h": (None, "the operator-schema types the core works with; the schemas are "
                         "ops/'s, reached through an op_registry"),
    "core/op_params.h": (None, "a node's resolved parameters: their kinds, union and accessors"),
    "core/exec_env.h": (None, "the settings a session prepares under and a run's limits, which "
                        "the backend fills and every executor layer reads"),
    "core/exec_internal.h": (None, "the types the plan layers share (plan values and steps, "
                             "plans, run contexts, subgraphs, frames); each layer declares its "
                             "functions in its own source's header"),
    "core/fuse_chain.h": (None, "the chain a fused step carries, as kernels receive it"),
    "core/parallel_tbb.h": (("core/parallel.cc",), "the C interface of the TBB shim, which is "
                            "C++ and so cannot be core/parallel.c, core/parallel.h's source"),
    "core/fuse_internal.h": (("core/fuse_*.c",), "what the CPU fusion pass's files share: the "
                             "pass's state, and each idea's entry point, defined by the idea's "
                             "file and called by the driver core/fuse.c"),
    "core/rules/rules.h": (("core/rules/*.c",), "the rule table's declarations: each rule's "
                           "apply function is defined by its family's file"),
}


def source_of(obj_path, root):
    """The source an object was built from: core/x.o from core/x.c, core/x.cc.o from core/x.cc."""
    if obj_path.endswith(".cc.o"):
        return obj_path[: -len(".o")]
    base = obj_path[: -len(".o")]
    return base + (".cc" if os.path.exists(os.path.join(root, base + ".cc")) and
                   not os.path.exists(os.path.join(root, base + ".c")) else ".c")


def core_sources(root):
    out = []
    for folder, _, files in os.walk(os.path.join(root, "core")):
        for f in files:
            if f.endswith((".c", ".h", ".cc")):
                out.append(os.path.relpath(os.path.join(folder, f), root))
    return sorted(out)


def own_source(path, root):
    """core/x.c for core/x.h (core/x.cc where there is no core/x.c), or None."""
    base = path[: -len(".h")]
    for ext in (".c", ".cc"):
        if os.path.exists(os.path.join(root, base + ext)):
            return base + ext
    return None


def header_sources(path, root):
    """The sources (patterns) that define what header `path` declares: its own, HEADERS', or ()
    for a header of types and inline functions."""
    own = own_source(path, root)
    if own:
        return (own,)
    return HEADERS.get(path, (None, ""))[0] or ()


def module_of(path, root):
    """The module a core file belongs to: core/x.h is core/x.c's (or core/x.cc's where there is
    no core/x.c), or the one source HEADERS names; any other header, and any source, is its
    own."""
    if not path.endswith(".h"):
        return path
    sources = header_sources(path, root)
    if len(sources) == 1 and not any(c in sources[0] for c in "*?["):
        return sources[0]
    return path


def add_edge(edges, a, b, why):
    if a != b:
        edges.setdefault(a, {}).setdefault(b, set()).add(why)


def include_edges(root, edges, errors):
    for path in core_sources(root):
        mod = module_of(path, root)
        edges.setdefault(mod, {})
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as fh:
            for line in fh:
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = m.group(1)
                if target.startswith(FORBIDDEN):
                    errors.append(f"{path} includes {target}: core includes nothing above it")
                elif target.startswith("core/"):
                    add_edge(edges, mod, module_of(target, root), f"{path} includes {target}")


def nm_symbols(obj):
    """(defined, undefined) global symbol names of one object."""
    out = subprocess.run(["nm", "-g", obj], check=True, capture_output=True, text=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] not in ("U", "w", "v"):
            defined.add(parts[2])
    return defined, undefined


def declared_functions(text):
    """The functions a header declares: prototypes at file scope, not inline definitions,
    typedefs or pointers to functions."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = text.replace("\\\n", " ")
    text = re.sub(r"#\s*ifdef\s+__cplusplus.*?#\s*endif", " ", text, flags=re.S)
    text = re.sub(r"^\s*#[^\n]*", " ", text, flags=re.M)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    while True:  # bodies and initializers, innermost first
        shorter = re.sub(r"\{[^{}]*\}", "{}", text)
        if shorter == text:
            break
        text = shorter
    text = re.sub(r"\)\s*\{\}", ");", text)  # an inline definition ends its statement
    names = []
    for stmt in text.split(";"):
        words = re.findall(r"\w+", stmt)
        if "(" not in stmt or not words or words[0] == "typedef" or "static" in words:
            continue
        head, rest = stmt.split("(", 1)
        name = re.search(r"(\w+)\s*$", head)
        if name and not rest.lstrip().startswith("*"):
            names.append(name.group(1))
    return names


def declaration_errors(root, defs, errors):
    """Each function a core header declares is defined by that header's source(s)."""
    if os.path.exists(os.path.join(root, "tools", "check_layers.py")):  # the table's own tree
        for path in HEADERS:
            if not os.path.exists(os.path.join(root, path)):
                errors.append(f"HEADERS lists {path}, which is not there")
    for path in core_sources(root):
        if not path.endswith(".h"):
            continue
        sources = header_sources(path, root)
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as fh:
            declared = declared_functions(fh.read())
        for name in declared:
            owner = defs.get(name)
            if owner is None or any(fnmatch.fnmatch(owner, s) for s in sources):
                continue
            if sources:
                errors.append(f"{path} declares {name}, which {owner} defines, not "
                              f"{' or '.join(sources)}: a header declares its own source's "
                              "functions")
            else:
                errors.append(f"{path} declares {name}, which {owner} defines: a header of no "
                              "source holds types and inline functions only (declare it in "
                              "its source's header, or map the header in HEADERS)")


def call_edges(root, obj_root, edges, errors):
    core_obj = os.path.join(obj_root, "core")
    objects = []
    for folder, _, files in os.walk(core_obj):
        for f in files:
            if f.endswith(".o"):
                objects.append(os.path.join(folder, f))
    if not objects:
        errors.append(f"no objects under {core_obj}: build first (make)")
        return {}
    defs, uses = {}, {}
    for obj in sorted(objects):
        mod = source_of(os.path.relpath(obj, obj_root), root)
        if not os.path.exists(os.path.join(root, mod)):
            continue  # left by a build of a file since renamed or removed
        d, u = nm_symbols(obj)
        for sym in d:
            defs[sym] = mod
        uses.setdefault(mod, set()).update(u)
    for mod, syms in uses.items():
        edges.setdefault(mod, {})
        for sym in syms:
            if sym in defs:
                add_edge(edges, mod, defs[sym], f"calls {sym}")
    return defs


def cycles(edges):
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, {}))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(edges.get(nxt, {})))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    comp.append(m)
                    if m == node:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def layers(edges):
    """Files by layer: 0 for those that depend on no other core file, then one above the
    highest of their dependencies (only meaningful without cycles)."""
    level = {}

    def depth(m, seen=()):
        if m in level:
            return level[m]
        if m in seen:
            return 0
        level[m] = 1 + max((depth(d, seen + (m,)) for d in edges.get(m, {})), default=-1)
        return level[m]

    for m in edges:
        depth(m)
    return level


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--obj", help="folder of the built objects (build/obj)")
    ap.add_argument("--list", action="store_true", help="print the dependency graph")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    edges, errors = {}, []
    include_edges(root, edges, errors)
    if args.obj:
        defs = call_edges(root, os.path.abspath(args.obj), edges, errors)
        if defs:
            declaration_errors(root, defs, errors)
    for comp in cycles(edges):
        inside = set(comp)
        lines = [f"  {a} -> {b} ({', '.join(sorted(edges[a][b])[:3])})"
                 for a in comp for b in sorted(edges.get(a, {})) if b in inside]
        errors.append("a circle among " + ", ".join(comp) + ":\n" + "\n".join(lines))
    if args.list:
        level = layers(edges)
        for m in sorted(edges, key=lambda m: (level[m], m)):
            deps = ", ".join(d.removeprefix("core/") for d in sorted(edges[m]))
            print(f"{level[m]:2d} {m.removeprefix('core/')}: {deps}")
    for e in errors:
        print("check_layers: " + e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
