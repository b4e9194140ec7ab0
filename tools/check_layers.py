#!/usr/bin/env python3
"""Check the layering of libckernel's sources (run by ctest: test_layers).

The C sources live in one folder per layer under src/lib/.  Arrows point one
way, down this list (a layer may use any layer below it, never one above it
or beside it):

    jit                      leaves built around generated code
    ops | devices | interop  the operation registry | contexts and buffers |
                             the Arrow C data interface
    kernels                  builder, assignment, lifting, application, pool
    arrays                   array preamble, views, variable-length elements
    types | strings          type descriptors and the parser | UTF-8 str methods
    memory                   memblocks and arenas
    core                     errors, allocation hooks, ABI table, number text

Checks, each failure printed with the file, the symbol or include line:
  1. calls and data references between object files (from `nm`): none goes
     up or sideways a layer, and no two source files depend on each other
     through a cycle (inside a layer too);
  2. `#include "<layer>/<file>.h"` (private headers) only of the same layer or
     a layer below, and every private header is named *_internal.h;
  3. every symbol an object file exports is either a public CK_API function
     (declared in src/include/ckernel/) or internal (prefix `ck__`): one
     prefix for everything internal.

Usage: check_layers.py --nm NM --src SRC_DIR OBJECT.o...
(each object's path ends in lib/<layer>/<file>.c.o, as CMake names them).
"""
import argparse
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_exports import public_names  # noqa: E402

RANK = {"core": 0, "memory": 1, "types": 2, "strings": 2, "arrays": 3, "kernels": 4,
        "ops": 5, "devices": 5, "interop": 5, "jit": 6}


def may_use(a, b):
    """May a file of layer a depend on a file of layer b?"""
    return a == b or RANK[b] < RANK[a]


def source_of(obj):
    m = re.search(r"lib/([a-z_]+)/([A-Za-z0-9_]+)\.c\.o(bj)?$", obj.replace(os.sep, "/"))
    if not m:
        sys.exit(f"check_layers: cannot tell the source of object {obj}")
    return f"{m.group(1)}/{m.group(2)}"


def sccs(nodes, edges):
    """Tarjan's strongly connected components (iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(comp)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nm", default="nm")
    ap.add_argument("--src", required=True, help="the src/ folder")
    ap.add_argument("objects", nargs="+")
    args = ap.parse_args()
    lib = os.path.join(args.src, "lib")
    problems = []

    # 1. the symbol graph
    defined, undefined = {}, {}
    exported = {}
    for obj in args.objects:
        src = source_of(obj)
        out = subprocess.run([args.nm, obj], check=True, capture_output=True,
                             text=True).stdout
        undefined[src] = set()
        exported[src] = set()
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == "U":
                undefined[src].add(parts[1])
            elif len(parts) == 3 and parts[1] in "TDBRVWGS":
                defined[parts[2]] = src
                # names the compiler or a sanitizer made (__odr_asan.x, x.cold)
                if not parts[2].startswith("__") and "." not in parts[2]:
                    exported[src].add(parts[2])
    edges = {}
    for src, syms in undefined.items():
        for sym in sorted(syms):
            to = defined.get(sym)
            if to is None or to == src:
                continue
            edges.setdefault(src, set()).add(to)
            la, lb = src.split("/")[0], to.split("/")[0]
            if not may_use(la, lb):
                problems.append(f"{src}.c uses {sym} of {to}.c: layer {la} must "
                                f"not depend on layer {lb}")
    for comp in sccs(sorted(undefined), edges):
        if len(comp) > 1:
            problems.append("cycle between source files: " +
                            " <-> ".join(sorted(c + ".c" for c in comp)))

    # 2. private includes
    inc = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/([A-Za-z0-9_]+\.h)"', re.M)
    for layer in sorted(os.listdir(lib)):
        ldir = os.path.join(lib, layer)
        if not os.path.isdir(ldir):
            continue
        if layer not in RANK:
            problems.append(f"src/lib/{layer}/ is not a known layer ({', '.join(RANK)})")
            continue
        for f in sorted(os.listdir(ldir)):
            path = os.path.join(ldir, f)
            if f.endswith(".h") and not f.endswith("_internal.h"):
                problems.append(f"src/lib/{layer}/{f}: private headers are named "
                                "<concept>_internal.h")
            if not f.endswith((".c", ".h")):
                continue
            for hl, hf in inc.findall(open(path, encoding="utf-8").read()):
                if hl == "ckernel":
                    continue
                if hl not in RANK:
                    problems.append(f"src/lib/{layer}/{f} includes {hl}/{hf}: no such layer")
                elif not may_use(layer, hl):
                    problems.append(f"src/lib/{layer}/{f} includes {hl}/{hf}: layer "
                                    f"{layer} must not depend on layer {hl}")

    # 3. exported names
    public = public_names(os.path.join(args.src, "include"))
    for src, syms in sorted(exported.items()):
        for sym in sorted(syms):
            if not sym.startswith("ck__") and sym not in public:
                problems.append(f"{src}.c exports {sym}: neither a CK_API function of "
                                "a public header nor internal (ck__ prefix)")

    if problems:
        print(f"check_layers: {len(problems)} problem(s)")
        for p in problems:
            print("  " + p)
        return 1
    nfiles = len(undefined)
    nedges = sum(len(v) for v in edges.values())
    print(f"check_layers: {nfiles} source files, {nedges} dependencies between them, "
          "no upward or sideways layer dependency, no cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
