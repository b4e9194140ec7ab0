#!/usr/bin/env python3
"""Check the layering of the Python package (the twin of tools/check_layers.py).

The modules of ``numba_ext/`` (the package ``ckernels``) sit in the ranks of
:data:`RANKS`, lowest first; arrows point one way, down that list:

  1. every import -- at module level or inside a function, ``import x``,
     ``from x import y`` and relative forms alike -- goes to a module of the
     same rank or a lower one.  Importing a module runs its parent packages'
     ``__init__`` first, so the parents of an imported module count too
     (except the importer's own parents, which are already running); taking
     a *name* from an ancestor package (``from .. import __version__``) is an
     import of that package's ``__init__``;
  2. no two modules depend on each other through a cycle (inside a rank too);
  3. every module of the package has a rank (a new module is placed in the
     table when it is added).

Two kinds of upward arrows are allowed, each visible in the source as an
import inside a function and listed here with its reason: imports of the
optional leaves (:data:`LAZY_LEAVES`: the rich displays and the Dask target,
imported on first use by the objects they serve, and importing none of them
at module level), and the pairs of :data:`LAZY_UP`.  Everything else that
points up is an error, printed with the file and line.

Usage: check_py_layers.py [PACKAGE_DIR]   (default: numba_ext/ next to tools/)
Exit status 0 when the package is layered, 1 otherwise.
"""
from __future__ import annotations

import ast
import fnmatch
import os
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_layers import sccs  # noqa: E402  (Tarjan's strongly connected components)

ROOT = "ckernels"

#: the ranks, lowest first: (name, module patterns; ``*`` matches within a
#: dotted name).  A module takes the rank of the first pattern it matches.
RANKS = [
    ("core", ["ckernels._ffi", "ckernels._arrays", "ckernels._pybuffer", "ckernels._ufuncs",
              "ckernels._convert", "ckernels._arrow", "ckernels._native", "ckernels.errors",
              "ckernels.dtypes",
              "ckernels.dialects", "ckernels.opnames", "ckernels._cargs", "ckernels._threads",
              "ckernels._foreign", "ckernels._trust", "ckernels.progress"]),
    ("objects", ["ckernels.memory", "ckernels.types"]),
    ("backends", ["ckernels.backends", "ckernels.backends.raw", "ckernels.backends.dlpack",
                  "ckernels.backends.cl_interop", "ckernels.backends.opencl",
                  "ckernels.backends.cuda"]),
    ("context", ["ckernels.context", "ckernels.context.buffer", "ckernels.context.program",
                 "ckernels.context.device_program", "ckernels.context.device_validity",
                 "ckernels.context.handle"]),
    ("surface", ["ckernels.ufuncs", "ckernels.arraylike", "ckernels.arraylike.*", "ckernels.string_operands"]),
    ("host.arrmeta", ["ckernels.host", "ckernels.host.arrmeta", "ckernels.host.arrow",
                      "ckernels.host.arguments", "ckernels.host.sharing",
                      "ckernels.host.records", "ckernels.host.rewrite",
                      "ckernels.host.time_values"]),
    ("host.convert", ["ckernels.host.convert", "ckernels.host.nulls"]),
    ("host.fastpath", ["ckernels.host.fastpath", "ckernels.host.creation",
                       "ckernels.host.time_reduce", "ckernels.host.apply"]),
    ("host.array", ["ckernels.host.array", "ckernels.host.dictionary"]),
    ("kernels", ["ckernels.kernels", "ckernels.capi", "ckernels.lowlevel"]),
    ("device.base", ["ckernels.device", "ckernels.device.base", "ckernels.device.arrow"]),
    ("device.launch", ["ckernels.device.launch"]),
    ("device.ops", ["ckernels.device.ops", "ckernels.device.ops.*"]),
    ("device.array", ["ckernels.device.array"]),
    ("device.interop", ["ckernels.device.interop", "ckernels.device.varlen",
                        "ckernels.device.nulls", "ckernels.device.arrow_import"]),
    ("user_kernels", ["ckernels.user_kernels", "ckernels.user_kernels.source",
                      "ckernels.user_kernels.args",
                      "ckernels.user_kernels.compile", "ckernels.user_kernels.build"]),
    ("device.place", ["ckernels.device.place"]),
    ("routing", ["ckernels.routing", "ckernels.pyopencl_interop", "ckernels.containers"]),
    ("ops", ["ckernels.ops"]),
    ("numba", ["ckernels._numba", "ckernels._numba.*", "ckernels.nb"]),
    ("jit.types", ["ckernels.jit.structs", "ckernels.jit.dims", "ckernels.jit.time_elements",
                   "ckernels.jit.signature"]),
    ("jit.cpu", ["ckernels.jit.llvm_passes", "ckernels.jit.error_path", "ckernels.jit.time_numba",
                 "ckernels.jit.string_elements",
                 "ckernels.jit.fstrings", "ckernels.jit.string_builder", "ckernels.jit.cpu_codegen",
                 "ckernels.jit.cpu_element",
                 "ckernels.jit.option_rows", "ckernels.jit.cpu_dims_results", "ckernels.jit.cpu_dims",
                 "ckernels.jit.native_cache",
                 "ckernels.jit.operands",
                 "ckernels.jit.result_check", "ckernels.jit.string_views",
                 "ckernels.jit.struct_results", "ckernels.jit.cpu"]),
    ("jit.emit", ["ckernels.jit.c_emit", "ckernels.jit.c_emit.*"]),
    ("jit.targets", ["ckernels.jit.device", "ckernels.jit.device_dims", "ckernels.jit.device_var",
                     "ckernels.jit.device_nulls",
                     "ckernels.jit.device_strings", "ckernels.jit.device_append",
                     "ckernels.jit.device_split", "ckernels.jit.device_null_strings",
                     "ckernels.jit.fastcall", "ckernels.jit.targets"]),
    ("jit.face", ["ckernels.jit.numpy_ufunc", "ckernels.jit.pickling"]),
    ("jit.kernel", ["ckernels.jit.kernel"]),
    ("jit", ["ckernels.jit", "ckernels.jit.decorator"]),
    ("leaves", ["ckernels.dask", "ckernels.display", "ckernels.display.*", "ckernels.demo",
                "ckernels.opencl", "ckernels"]),
    ("compat", ["ckernels.context.backend_cuda", "ckernels.context.backend_opencl",
                "ckernels.context.dlpack", "ckernels.context.device_array",
                "ckernels.context.device_ops", "ckernels.context.user_kernels",
                "ckernels.context.user_kernel_args", "ckernels.context.user_kernel_compile",
                "ckernels.context.context", "ckernels.context.kernel_source",
                "ckernels._dispatch", "ckernels.host.layout"]),
]

#: optional leaves anything may import inside a function (on first use)
LAZY_LEAVES = ("ckernels.display", "ckernels.dask")

#: (importer, imported): upward imports allowed inside functions, and why
LAZY_UP: dict = {}

#: package -> the names it exported before a module moved above it, found on
#: first use by the package's ``__getattr__`` (old public spellings such as
#: ``from ckernels.context import Context``): the keys of the dict named
#: ``COMPAT`` in the package's ``__init__`` (read from the source by
#: :func:`compat_names`, so the package holds the one list).  Those lazy
#: imports are not arrows of the package: no module of the package may take
#: one of these names from the package (it imports them from their modules),
#: so only user code follows them -- the checker proves it.
COMPAT_NAMES: dict = {}


def compat_names(mods: dict) -> dict:
    """``{package: set of names}`` from each package ``__init__``'s module-level
    ``COMPAT = {"name": "module", ...}`` (constant keys)."""
    out = {}
    for name, path in mods.items():
        if os.path.basename(path) != "__init__.py":
            continue
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        for node in tree.body:
            if (isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Dict)
                    and any(isinstance(t, ast.Name) and t.id == "COMPAT" for t in
                            (node.targets if isinstance(node, ast.Assign) else [node.target]))):
                out[name] = {k.value for k in node.value.keys if isinstance(k, ast.Constant)}
    return out


#: modules built from C (src/python/*.c, the cffi module): core, no imports;
#: any other ``ckernels._<name>`` without a Python source is taken for one too
EXTENSIONS = ("ckernels._ffi", "ckernels._arrays", "ckernels._pybuffer", "ckernels._ufuncs",
              "ckernels._convert", "ckernels._arrow")


def modules(pkg_dir: str) -> dict[str, str]:
    """Dotted module name -> path of every Python module of the package."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(pkg_dir):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for f in sorted(filenames):
            if not f.endswith(".py"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), pkg_dir)[:-3].split(os.sep)
            parts = [ROOT, *rel]
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = os.path.join(dirpath, f)
    return out


def rank_of(name: str):
    parts = name.split(".")
    if len(parts) == 2 and parts[1].startswith("_") and name not in _PY_MODULES and \
            not name.startswith("ckernels._numba"):
        return 0                 # a module built from C: core
    for i, (_, patterns) in enumerate(RANKS):
        if any(fnmatch.fnmatchcase(name, p) for p in patterns):
            return i
    return None


def _ancestors(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:k]) for k in range(1, len(parts))]


def imports(name: str, path: str, known: set):
    """``(found, unreadable, compat_taken)``: ``(imported module, inside a
    function, line)`` for every import of a package module in ``name``'s
    source -- statements and ``importlib.import_module``/``__import__`` calls
    with a constant name -- parents of imported modules included (see the
    module docstring); ``(line, function)`` of every dynamic import whose
    name is not a constant; ``(line, package, name)`` of every name of
    :data:`COMPAT_NAMES` taken from its package."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    is_pkg = os.path.basename(path) == "__init__.py"
    base = name.split(".") if is_pkg else name.split(".")[:-1]
    own_parents = set(_ancestors(name)) | ({name} if is_pkg else set())
    found, unreadable, compat_taken = [], [], []

    def resolve(target: str) -> str | None:
        parts = target.split(".")
        if len(parts) == 2 and parts[0] == ROOT and parts[1].startswith("_") and \
                target not in known:
            return target        # a module built from C
        while target and target not in known:
            target = target.rpartition(".")[0]
        return target if target.startswith(ROOT) else None

    def add(target, lazy, line, whole_module):
        if target is None or target == name:
            return
        if target in own_parents and whole_module:
            return      # a sibling module taken from the package: its parent runs already
        found.append((target, lazy, line))
        for parent in _ancestors(target):
            if parent.startswith(ROOT) and parent not in own_parents:
                found.append((parent, lazy, line))

    def dynamic(call, lazy):
        """``importlib.import_module(...)``, ``import_module(...)`` and
        ``__import__(...)``: the module a constant name gives, else a problem."""
        f = call.func
        fname = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
        if fname not in ("import_module", "__import__"):
            return
        if isinstance(f, ast.Attribute) and not (isinstance(f.value, ast.Name) and
                                                 f.value.id == "importlib"):
            return
        arg = call.args[0] if call.args else None
        if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
            unreadable.append((call.lineno, fname))
            return
        target = arg.value
        if target.startswith("."):          # relative to the package given (this one's)
            level = len(target) - len(target.lstrip("."))
            rest = target[level:]
            target = ".".join(base[:len(base) - level + 1] + ([rest] if rest else []))
        add(resolve(target), lazy, call.lineno, True)

    def walk(node, lazy, compat):
        for child in ast.iter_child_nodes(node):
            inner = lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                               ast.Lambda))
            # the package's own __getattr__ of COMPAT_NAMES: user code's way in
            inner_compat = compat or (is_pkg and name in COMPAT_NAMES and node is tree and
                                      isinstance(child, ast.FunctionDef) and
                                      child.name == "__getattr__")
            if inner_compat:
                walk(child, inner, True)
                continue
            if isinstance(child, ast.Import):
                for a in child.names:
                    t = resolve(a.name)
                    add(t, lazy, child.lineno, True)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    mod = ".".join(base[:len(base) - child.level + 1] +
                                   ([child.module] if child.module else []))
                else:
                    mod = child.module or ""
                for a in child.names:
                    full = f"{mod}.{a.name}"
                    if a.name in COMPAT_NAMES.get(mod, ()):
                        compat_taken.append((child.lineno, mod, a.name))
                    if full in known:            # a module taken from its package
                        add(full, lazy, child.lineno, True)
                        if mod not in own_parents:
                            add(resolve(mod), lazy, child.lineno, False)
                    else:                        # a name: the module that defines it
                        add(resolve(mod), lazy, child.lineno, False)
            elif isinstance(child, ast.Call):
                dynamic(child, lazy)
            walk(child, inner, compat)
    walk(tree, False, False)
    return found, unreadable, compat_taken


_PY_MODULES: set = set()


def check(pkg_dir: str) -> list[str]:
    mods = modules(pkg_dir)
    _PY_MODULES.clear()
    _PY_MODULES.update(mods)
    known = set(mods) | set(EXTENSIONS)
    COMPAT_NAMES.clear()
    COMPAT_NAMES.update(compat_names(mods))
    problems = []
    for name in sorted(mods):
        if rank_of(name) is None:
            problems.append(f"{mods[name]}: module {name} has no rank (add it to RANKS in "
                            "tools/check_py_layers.py)")
    edges: dict[str, set] = {}
    for name, path in sorted(mods.items()):
        r = rank_of(name)
        found, unreadable, compat_taken = imports(name, path, known)
        for line, fn in unreadable:
            problems.append(f"{path}:{line}: {name} calls {fn} with a name that is not a "
                            "constant: an import the checker cannot read (import the "
                            "module, or give its name as a string)")
        for line, pkg, attr in compat_taken:
            problems.append(f"{path}:{line}: {name} takes {attr} from {pkg}, an old "
                            f"spelling kept for users (COMPAT_NAMES): import it from its "
                            "module")
        for target, lazy, line in found:
            t_rank = rank_of(target)
            allowed = lazy and (target.startswith(LAZY_LEAVES) or any(
                a == name and (b == target or b.startswith(target + ".")) for a, b in LAZY_UP))
            if allowed:
                continue
            edges.setdefault(name, set()).add(target)
            if r is not None and t_rank is not None and t_rank > r:
                where = "inside a function" if lazy else "at module level"
                problems.append(f"{path}:{line}: {name} (rank {RANKS[r][0]}) imports {target} "
                                f"(rank {RANKS[t_rank][0]}) {where}: an upward import")
    for comp in sccs(sorted(mods), edges):
        if len(comp) > 1:
            problems.append("import cycle among: " + ", ".join(sorted(comp)))
    for (a, b), _ in LAZY_UP.items():
        if a not in mods:
            problems.append(f"LAZY_UP names {a}, which is no module of the package")
    return problems


def table() -> str:
    """The rank table as text (docs/architecture.md shows the same)."""
    lines = []
    for i, (rank, patterns) in enumerate(RANKS):
        names = ", ".join(re.sub(r"^ckernels\.?", "", p) or "ckernels" for p in patterns)
        lines.append(f"{i:2d} {rank:14s} {names}")
    return "\n".join(lines)


def main(argv) -> int:
    if len(argv) > 1 and argv[1] == "--table":
        print(table())
        return 0
    pkg = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "numba_ext")
    problems = check(pkg)
    for p in problems:
        print(p)
    if problems:
        print(f"check_py_layers: {len(problems)} problem(s)")
        return 1
    print(f"check_py_layers: {len(modules(pkg))} modules in {len(RANKS)} ranks, imports "
          "point down, no cycles")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
