"""The package's structure: every module imports, the import graph (module-level
and function-level imports alike) has no cycle, no dispatch on class-name
strings, no two classes of one name."""

import ast
import importlib
import pathlib

import pytest

import ckernels

PKG = pathlib.Path(ckernels.__file__).parent


def _modules():
    out = {}
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG).with_suffix("")
        parts = ["ckernels", *rel.parts]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(name, path):
    """Package modules that ``name`` imports anywhere in its source."""
    is_pkg = path.name == "__init__.py"
    base = name.split(".") if is_pkg else name.split(".")[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        targets = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                mod = ".".join(base[:len(base) - node.level + 1] +
                               ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            targets = [mod] + [f"{mod}.{a.name}" for a in node.names]
        for t in targets:
            while t and t not in MODULES:
                t = t.rpartition(".")[0]
            if t and t.startswith("ckernels") and t != name:
                found.add(t)
    return found


def test_every_module_imports():
    for name in MODULES:
        if name == "ckernels.demo":
            continue
        importlib.import_module(name)


def test_no_import_cycles():
    graph = {name: _imports(name, path) for name, path in MODULES.items()}
    # a package's __init__ re-exporting its submodules is not a cycle with them
    for name in graph:
        graph[name] = {t for t in graph[name]
                       if not (name.startswith(t + ".") and MODULES[t].name == "__init__.py")}
    state, stack = {}, []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph[n]):
            if state.get(m) == 1:
                cycle = stack[stack.index(m):] + [m]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if m not in state:
                visit(m)
        stack.pop()
        state[n] = 2
    for n in sorted(graph):
        if n not in state:
            visit(n)


def test_layers_point_one_way():
    graph = {name: _imports(name, path) for name, path in MODULES.items()}
    for name, deps in graph.items():
        if name.startswith("ckernels.context"):
            assert not any(d.startswith("ckernels.jit") for d in deps), (name, deps)
        if name.startswith("ckernels._numba"):
            assert not any(d.startswith(("ckernels.jit", "ckernels.context")) for d in deps)


def test_no_class_name_dispatch_and_unique_class_names():
    seen = {}
    for name, path in MODULES.items():
        src = path.read_text()
        assert ".__name__ ==" not in src and ".__name__ in (" not in src, name
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                assert node.name not in seen, (node.name, name, seen.get(node.name))
                seen[node.name] = name
    assert seen["Program"] == "ckernels.context.program"
    assert seen["DeviceArray"] == "ckernels.context.device_array"


def test_public_names():
    ocl = ckernels.opencl   # an attribute of the package without importing it
    from ckernels.context import Buffer, Context, DeviceArray, Program
    assert ckernels.Context is Context and ckernels.Buffer is Buffer
    assert ckernels.DeviceArray is DeviceArray and ocl.DeviceArray is DeviceArray
    assert callable(ckernels.jit) and ckernels.jit.__module__ == "ckernels.jit.decorator"
    for n in ("to_device", "empty", "array", "to", "same_context", "from_pyopencl",
              "from_pyopencl_buffer", "to_pyopencl"):
        assert callable(getattr(ocl, n))
    assert Program.__module__ == "ckernels.context.program"
