"""The one table of element types (ckernels.dtypes) and the one rule for Python
scalars (NEP 50), with NumPy as the oracle."""

import ast
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import ckernels
from ckernels import dtypes, errors
from ckernels._native import ffi, lib

PKG = pathlib.Path(ckernels.__file__).parent


# ------------------------------------------------------------------- the table --
def test_rows_agree_with_the_library():
    ids = dict(ffi.typeof("ck_type_id").elements)   # value -> name
    assert [d.name for d in dtypes.BUILTINS] == [
        ids[i][len("CK_TYPE_"):].lower() for i in range(1, lib.CK_BUILTIN_TYPE_COUNT)]
    for d in dtypes.ALL:
        t = ckernels.types.parse(d.name)
        assert t.type_id == d.type_id and str(t) == d.name
        assert t.data_size == d.size
        if d.builtin:
            assert t.to_numpy_dtype() == d.numpy and d.numpy.itemsize == d.size
            assert d.kind == d.numpy.kind
            assert ckernels.types.from_numpy_dtype(d.numpy) == t
            if d.cffi is not None:
                assert ffi.sizeof(d.cffi) == d.size
    assert dtypes.by_name["string"].size == ffi.sizeof("ck_string")


def test_derived_tables():
    from ckernels import types
    from ckernels.jit import SUPPORTED_TYPES
    from ckernels import dialects
    assert {n for n, _, _ in types._BUILTINS.values()} == {d.name for d in dtypes.BUILTINS}
    assert SUPPORTED_TYPES == tuple(d.name for d in dtypes.JIT)
    assert "float16" not in SUPPORTED_TYPES and "string" in SUPPORTED_TYPES
    assert [d.name for d in dialects.get("opencl").element_types()] == [
        "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "float32", "float64"]
    # the CUDA column covers what the OpenCL one does
    assert dialects.get("cuda").element_types() == dialects.get("opencl").element_types()
    assert dialects.get("opencl").int64 == "long" and dialects.get("opencl").uint8 == "uchar"


def test_no_other_hand_written_tables():
    """Element type names are spelled out only in dtypes.py (plus the named
    builtin Type objects of types.py)."""
    offenders = []
    pat = re.compile(r"[\"'](u?int(8|16|32|64)|float(16|32|64)|complex(64|128))[\"']")
    for path in PKG.rglob("*.py"):
        if path.name in ("dtypes.py", "demo.py"):
            continue
        src = path.read_text()
        exports = set()   # __all__ lists name the builtin Type objects, not a table
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
                exports.update(range(node.lineno, node.end_lineno + 1))
        for n, line in enumerate(src.splitlines(), 1):
            if n not in exports and len(pat.findall(line)) >= 2:
                offenders.append(f"{path.relative_to(PKG)}:{n}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


def test_importing_ckernels_does_not_import_numba():
    code = ("import sys, ckernels; from ckernels import dtypes; "
            "from ckernels import dialects; "
            "assert dialects.get('opencl').ctype(dtypes.by_name['int8']) == 'char'; "
            "print('numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_lazy_numba_types():
    from numba.core import types as nbt
    for d in dtypes.JIT:
        assert d.numba is not None and dtypes.of_numba(d.numba) is d
    assert dtypes.by_name["float16"].numba is None
    assert dtypes.of_numba(nbt.Optional(nbt.int32)).name == "int32"
    assert dtypes.of_numba(nbt.IntegerLiteral(3)).name == "int64"
    assert dtypes.of_numba(nbt.unicode_type).name == "string"
    assert dtypes.of_numba(nbt.UniTuple(nbt.int8, 2)) is None


def test_table_is_immutable():
    with pytest.raises(AttributeError):
        dtypes.by_name["int8"].size = 3
    assert repr(dtypes.by_name["int8"]) == "ckernels.dtypes.by_name['int8']"
    from ckernels import dialects, errors
    with pytest.raises(errors.InvalidArgumentError, match="dialect"):
        dialects.get("metal")


# Every element type of the table through NumPy, Numba (the CPU jit) and each
# device's C type (OpenCL here; the CUDA column is compiled by the CUDA target).
@pytest.fixture(scope="module")
def identity():
    return ckernels.jit([f"{d.name}({d.name})" for d in dtypes.BUILTINS if d.jit])(
        lambda x: x)


def _values(d):
    if d.kind == "b":
        return np.array([True, False, True])
    if d.kind in "iu":
        info = np.iinfo(d.numpy)
        return np.array([info.min, 0, 1, info.max], dtype=d.numpy)
    if d.kind == "f":
        return np.array([-1.5, 0.0, np.inf, np.finfo(d.numpy).max], dtype=d.numpy)
    return np.array([1 + 2j, -0.5j, 0], dtype=d.numpy)


@pytest.mark.parametrize("name", [d.name for d in dtypes.BUILTINS if d.jit])
def test_round_trip_every_element_type(name, identity, new_opencl_context):
    d = dtypes.by_name[name]
    v = _values(d)
    got = identity(v)
    assert got.dtype == d.numpy and np.array_equal(got, v)
    assert identity.compiled[(name,)].sig.text == f"{name}({name})"
    from ckernels import dialects
    opencl_c = dialects.get("opencl").ctype(d)
    src = identity.source("opencl", f"{name}({name})") if opencl_c else None
    if opencl_c is None:
        with pytest.raises(errors.NotSupportedError):
            identity.source("opencl", f"{name}({name})")
        return
    assert f"{opencl_c} x0 = " in src or (name == "bool" and "bool x0 = " in src)
    ctx = new_opencl_context()
    dev = identity(ctx.array(v))
    assert dev.dtype == d.numpy and np.array_equal(dev.to_numpy(), v)


# -------------------------------------------------------------- the scalar rule --
VALUES = [True, False, 0, 1, -1, 127, 300, -129, 2**31, 2**63, -2**63 - 1, 2**64, 1.5, -0.0,
          1e300, float("nan"), 1j, 1e300 + 1j]


@pytest.mark.parametrize("name", [d.name for d in dtypes.BUILTINS])
def test_weak_result_is_numpys_result_type(name):
    for v in VALUES:
        want = np.result_type(dtypes.by_name[name].numpy, v)
        assert dtypes.weak_result(name, v) == want.name, (name, v)
        assert dtypes.weak_matches(name, v) == (want.name == name)


def test_weak_scalar_type_against_several_operands():
    names = [d.name for d in dtypes.BUILTINS]
    rng = np.random.default_rng(3)
    for _ in range(300):
        strong = list(rng.choice(names, size=rng.integers(1, 3)))
        v = VALUES[rng.integers(len(VALUES))]
        want = np.result_type(*[dtypes.by_name[n].numpy for n in strong], v)
        got = dtypes.promote(dtypes.weak_scalar_type(v, strong), *strong)
        assert got == want.name, (strong, v)


def test_scalar_types_on_their_own():
    for v in [True, 1, 2**63, 1.5, 1j, np.float32(1), np.int8(3), "s", np.str_("s")]:
        got = dtypes.scalar_type(v)
        want = "string" if isinstance(v, str) else np.result_type(v).name
        assert got == want, v
    with pytest.raises(errors.CKOverflowError, match="int64 or uint64"):
        dtypes.scalar_type(2**64)
    assert dtypes.scalar_type(object()) is None
    assert dtypes.is_weak(1) and dtypes.is_weak(1.0) and dtypes.is_weak(1j)
    assert not dtypes.is_weak(True) and not dtypes.is_weak(np.float64(1))


@pytest.mark.parametrize("name", [d.name for d in dtypes.BUILTINS])
def test_ops_follow_numpy_with_python_scalars(name):
    a = np.ones(2, dtype=name)
    for v in [True, 1, -1, 300, 2**64, 1.5, 1j]:
        try:
            with np.errstate(all="ignore"):
                res = np.add(a, v)
        except OverflowError:
            with pytest.raises(OverflowError):
                ckernels.ops.add(a, v)
            with pytest.raises(OverflowError):
                ckernels.ops.add(ckernels.asarray(a), v)
            continue
        want = res.dtype
        # NumPy operands: the operation's ufunc, NumPy's conversions
        with np.errstate(all="ignore"):
            got = ckernels.ops.add(a, v)
            assert got.dtype == want and ckernels.ops.add(v, a).dtype == want, (name, v)
        # ckernels arrays: the registry's path, checked conversions
        ca = ckernels.asarray(a)
        if res.dtype.kind in "fc" and not np.isfinite(res).all():
            # the same type, but NumPy's conversion of the scalar overflowed to
            # inf where ckernels' checked conversion raises
            with pytest.raises(OverflowError):
                ckernels.ops.add(ca, v)
            continue
        got = ckernels.ops.add(ca, v)
        assert str(got.dtype) == want.name, (name, v)
        assert str(ckernels.ops.add(v, ca).dtype) == want.name, (name, v)


def test_jit_selects_signatures_by_the_same_rule():
    f = ckernels.jit(["int8(int8, int8)", "float32(float32, float32)",
                      "complex64(complex64, complex64)"])(lambda x, y: x + y)
    # the ufunc (NumPy operands) and the general path (ckernels arrays) agree
    for wrap, no_loop in ((np.asarray, "no signature of .* takes under the .safe. casting rule"),
                          (ckernels.asarray, "no signature")):
        i8, f32 = wrap(np.ones(2, np.int8)), wrap(np.ones(2, np.float32))
        assert str(f(i8, 1).dtype) == "int8"             # weak int keeps int8
        assert str(f(f32, 1.5).dtype) == "float32"       # weak float keeps float32
        assert str(f(f32, 1j).dtype) == "complex64"      # complex: the complex64 loop
        with pytest.raises(OverflowError):
            f(i8, 300)                                   # int8 chosen, 300 does not fit
        assert str(f(i8, 1.5).dtype) == "float32"        # first loop int8 casts to safely
        with pytest.raises(TypeError, match=no_loop):
            f(wrap(np.ones(2, np.int64)), 1)             # int64 casts safely to none
