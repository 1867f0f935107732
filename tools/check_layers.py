#!/usr/bin/env python3
"""Checks that core/ is a stack of layers: no include or call circle among its files, and no
include of ops/, kernels_*/ or backend/ from core (docs/ARCHITECTURE.md).

The graph's nodes are core's modules: a source with the header of its name (core/x.c and
core/x.h are one module, named core/x.c; core/x.cc where there is no core/x.c), and each header
that has no source of its name (types and inline functions only, as core/kernel.h). A module
depends on each module whose header it includes (#include "core/..." lines) and on each module
that defines a symbol its object uses (nm on the built objects: undefined against defined global
symbols). Any circle in that graph is an error, named with the edges that make it. Counting a
header as the source behind it is what makes the check whole: a file that includes x.h depends
on x.c, whose calls may lead back to it, so a header may name one module's interface only (a
header the interface of several files hides a circle through its name).

  tools/check_layers.py [--root DIR] [--obj DIR] [--list]

--obj is the folder of the built objects (build/obj: its core/ part is read); without it only
the includes are checked. --list prints every module's dependencies, bottom layer first.
"""
import argparse
import os
import re
import subprocess
import sys

FORBIDDEN = ("ops/", "kernels_cpu/", "kernels_cuda/", "backend/")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


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


def module_of(path, root):
    """The module a core file belongs to: core/x.h is core/x.c's (or core/x.cc's where there is
    no core/x.c); a header without a source of its name, and any source, is its own."""
    if not path.endswith(".h"):
        return path
    base = path[: -len(".h")]
    for ext in (".c", ".cc"):
        if os.path.exists(os.path.join(root, base + ext)):
            return base + ext
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


def call_edges(root, obj_root, edges, errors):
    core_obj = os.path.join(obj_root, "core")
    objects = []
    for folder, _, files in os.walk(core_obj):
        for f in files:
            if f.endswith(".o"):
                objects.append(os.path.join(folder, f))
    if not objects:
        errors.append(f"no objects under {core_obj}: build first (make)")
        return
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
        call_edges(root, os.path.abspath(args.obj), edges, errors)
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
