"""The ``.pyi`` stubs beside the package (issue 30) say what the six compiled
modules export: every public name of ``_ffi``, ``_ufuncs``, ``_arrays``,
``_convert``, ``_arrow`` and ``_pybuffer`` is in its stub and every name of the
stub is in the module; a class's bases and attributes match; the stubs are
installed next to the modules."""

import ast
import builtins
import importlib
import pathlib

import pytest

import ckernels

REPO = pathlib.Path(__file__).resolve().parents[3]
MODULES = ["_ffi", "_ufuncs", "_arrays", "_convert", "_arrow", "_pybuffer"]


def _stub(name):
    return ast.parse((REPO / "numba_ext" / f"{name}.pyi").read_text())


def _names(body):
    """Public names a stub body defines (not its imports), by kind."""
    out = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out[node.name] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = node
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    out[t.id] = node
    return {k: v for k, v in out.items() if not k.startswith("_") or k.startswith("__")}


@pytest.mark.parametrize("name", MODULES)
def test_stub_lists_what_the_module_exports(name):
    mod = importlib.import_module(f"ckernels.{name}")
    assert mod.__file__.endswith((".so", ".pyd")), mod.__file__     # built from C
    stub = _names(_stub(name).body)
    exported = {n for n in dir(mod) if not n.startswith("__")}
    assert set(stub) == exported, (sorted(set(stub) - exported), sorted(exported - set(stub)))
    for n, node in stub.items():
        obj = getattr(mod, n)
        if isinstance(node, ast.FunctionDef):
            assert callable(obj) and not isinstance(obj, type), n
        elif isinstance(node, ast.ClassDef):
            assert isinstance(obj, type), n
            bases = [b.id for b in node.bases if isinstance(b, ast.Name)]
            assert [b.__name__ for b in obj.__bases__] == (bases or ["object"]), n
            members = _names(node.body)
            own = {a for a in vars(obj) if not a.startswith("__")}
            declared = {a for a in members if not a.startswith("__")}
            assert declared == own, (n, sorted(declared ^ own))
            for dunder in (a for a in members if a.startswith("__")):
                assert hasattr(obj, dunder), (n, dunder)
        elif isinstance(node, ast.AnnAssign):
            ann = node.annotation
            if isinstance(ann, ast.Name) and hasattr(builtins, ann.id):
                assert isinstance(obj, getattr(builtins, ann.id)), n
            else:
                assert type(obj).__name__ == (ann.id if isinstance(ann, ast.Name)
                                              else ann.attr), n


@pytest.mark.parametrize("name", MODULES)
def test_stubs_are_installed_next_to_the_modules(name):
    installed = pathlib.Path(ckernels.__file__).parent / f"{name}.pyi"
    assert installed.read_text() == (REPO / "numba_ext" / f"{name}.pyi").read_text()


def test_a_missing_name_is_caught():
    """The comparison is not vacuous: a stub without one of the module's names
    (or with one the module lacks) differs."""
    stub = _names(_stub("_arrow").body)
    mod = importlib.import_module("ckernels._arrow")
    exported = {n for n in dir(mod) if not n.startswith("__")}
    assert "export_stream" in stub and set(stub) - {"export_stream"} != exported
    assert set(stub) | {"not_there"} != exported
