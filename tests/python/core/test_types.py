"""ckernels.types: builtins, parsing/printing, equality, constructors, errors."""

import pickle

import numpy as np
import pytest

import ckernels
from ckernels import errors, types as T

ROUND_TRIP = [
    "int32", "bool", "float16", "complex64", "complex128", "string",
    "3 * int32", "strided * float64", "var * string", "3 * var * string",
    "strided * strided * uint8", "strided * var * 2 * int64",
    "{x: float64, name: string}", "strided * {x: float64, tags: var * string}",
    "pointer[int32]", "var * var * var * int8", "{}", "{a: {b: {c: int16}}}",
    "2 * {x: int8, y: 3 * float32}",
]


@pytest.mark.parametrize("text", ROUND_TRIP)
def test_parse_print_round_trip(text):
    t = T.parse(text)
    assert str(t) == text
    assert T.parse(str(t)) == t
    assert hash(T.parse(text)) == hash(t)


@pytest.mark.parametrize("text, canonical", [
    ("complex[float64]", "complex128"),
    ("complex[float32]", "complex64"),
    ("  3*var *  string ", "3 * var * string"),
    ("{ x :float64,name:string }", "{x: float64, name: string}"),
])
def test_canonical_forms(text, canonical):
    assert str(T.parse(text)) == canonical


@pytest.mark.parametrize("text, fragment", [
    ("", "column 0"),
    ("3 *", "expected a type"),
    ("int33", "int33"),
    ("3 * int32 garbage", "column"),
    ("{x: int32, x: int8}", "x"),
    ("var * strided * int32", "strided"),
])
def test_parse_errors_name_position(text, fragment):
    with pytest.raises(errors.ParseError) as info:
        T.parse(text)
    assert "ck_type_parse" in str(info.value)
    assert fragment in str(info.value)
    assert isinstance(info.value, ValueError)


def test_builtins():
    expect = {"bool": (1, 1), "int8": (1, 1), "int16": (2, 2), "int32": (4, 4),
              "int64": (8, 8), "uint8": (1, 1), "uint16": (2, 2), "uint32": (4, 4),
              "uint64": (8, 8), "float16": (2, 2), "float32": (4, 4), "float64": (8, 8),
              "complex64": (8, 4), "complex128": (16, 8)}
    assert [str(t) for t in T.BUILTIN_TYPES] == list(expect)
    for t in T.BUILTIN_TYPES:
        assert t.is_builtin and t.arrmeta_size == 0 and t.ndim == 0
        assert (t.data_size, t.data_alignment) == expect[str(t)]
        assert t.to_numpy_dtype() == np.dtype(str(t) if str(t) != "bool" else "?")
        assert T.Type(t.to_numpy_dtype()) == t
        assert repr(t) == f"ckernels.types.{t}"
    assert T.bool is T.bool_


def test_equality_and_hash():
    a = T.parse("3 * {x: float64, tags: var * string}")
    b = T.fixed_dim(3, T.struct({"x": T.float64, "tags": T.var_dim(T.string)}))
    assert a == b and hash(a) == hash(b)
    assert a != T.parse("4 * {x: float64, tags: var * string}")
    assert T.int32 != T.uint32
    assert T.int32 == "int32" and T.int32 == np.int32
    assert len({a, b, T.int32, T.parse("int32")}) == 2


def test_structure_queries():
    t = T.parse("strided * 3 * {x: float64, name: string}")
    assert t.ndim == 2 and t.id == "strided_dim"
    assert t.element == T.parse("3 * {x: float64, name: string}")
    assert t.element.fixed_size == 3
    st = t.dtype
    assert st.id == "struct"
    assert [(n, str(ft)) for n, ft in st.fields] == [("x", "float64"), ("name", "string")]
    assert st.data_size == 24 and st.data_alignment == 8
    assert T.string.data_size == 16 and T.string.arrmeta_size == 8
    assert T.parse("var * int32").arrmeta_size == 24
    assert T.parse("3 * int32").data_size == 12
    assert T.int32.element is None


def test_constructor_errors():
    with pytest.raises(errors.CKernelError):
        T.var_dim(T.strided_dim(T.int32))  # var needs a fixed-size element
    with pytest.raises(errors.CKernelError):
        T.fixed_dim(-1, T.int32)
    with pytest.raises(errors.CKOverflowError):
        T.fixed_dim(2**62, T.int64)
    with pytest.raises(errors.CKernelError):
        T.struct([("a", T.int8), ("a", T.int8)])
    with pytest.raises(errors.CKernelError):
        T.bytes_type(3)
    with pytest.raises(errors.CKTypeError):
        T.parse(42)
    with pytest.raises(errors.CKTypeError):
        T.from_numpy_dtype(np.dtype(">i4"))
    with pytest.raises(errors.CKTypeError):
        T.from_numpy_dtype(np.dtype("U3"))


def test_numpy_struct_dtype():
    dt = np.dtype([("x", np.float64), ("n", np.int8), ("y", np.int32)], align=True)
    t = T.from_numpy_dtype(dt)
    assert str(t) == "{x: float64, n: int8, y: int32}"
    assert t.to_numpy_dtype() == dt
    with pytest.raises(errors.CKTypeError, match="align"):
        T.from_numpy_dtype(np.dtype([("x", np.float64), ("n", np.int8), ("y", np.int32)]))


def test_pickle_and_display():
    t = T.parse("var * {a: int32}")
    assert pickle.loads(pickle.dumps(t)) == t
    assert "Type('var * {a: int32}')" in repr(t)
    assert "<table>" in t._repr_html_()


# ---- constructors given type strings and type objects -------------------------
# A type string used to become a temporary Type that died (freeing its C type)
# before the C constructor ran: var_dim("string") used a freed type.  Run in a
# subprocess (a regression may crash), with memory churn between the calls so
# that freed memory would be reused, and every result checked.
_CONSTRUCTOR_SCRIPT = r"""
import gc, numpy as np, ckernels
from ckernels import types as T
elements = ["string", "int32", "3 * int8", "{a: string, b: float64}", "var * int16",
            T.string, T.int32, T.parse("3 * int8"), T.parse("{a: string, b: float64}"),
            T.parse("var * int16"), np.float64, np.dtype("int8")]
made = []
for rep in range(50):
    for e in elements:
        el = T.as_type(e)
        got = [T.fixed_dim(2, e), T.strided_dim(e), T.var_dim(e), T.pointer(e),
               T.struct({"f": e})]
        want = [f"2 * {el}", f"strided * {el}", f"var * {el}", f"pointer[{el}]",
                f"{{f: {el}}}"]
        junk = [T.parse("{x: string, y: var * string}") for _ in range(5)]   # reuse memory
        del el, junk
        gc.collect()
        assert [str(t) for t in got] == want, ([str(t) for t in got], want)
        assert got[2].element == T.as_type(e) and got[3].element == T.as_type(e)
        made.extend(got)
del made
gc.collect()
print("OK", ckernels.live_count())
"""


def test_constructors_keep_string_arguments_alive():
    import subprocess
    import sys
    p = subprocess.run([sys.executable, "-c", _CONSTRUCTOR_SCRIPT], capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    assert p.stdout.split()[0] == "OK"


@pytest.mark.parametrize("element", ["string", T.string, "2 * float32", T.parse("2 * float32"),
                                     np.int16])
def test_constructors_with_strings_and_types(element):
    el = T.as_type(element)
    assert str(T.var_dim(element)) == f"var * {el}"
    assert str(T.strided_dim(element)) == f"strided * {el}"
    assert str(T.fixed_dim(4, element)) == f"4 * {el}"
    assert str(T.pointer(element)) == f"pointer[{el}]"
    assert T.struct([("a", element), ("b", "int8")]).fields[0] == ("a", el)
    # arrays of the new types allocate and free memblocks (balance fixture)
    a = ckernels.empty(T.fixed_dim(2, T.var_dim(element)))
    assert a.shape[0] == 2
