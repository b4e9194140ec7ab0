"""Struct results holding strings (``{name: string, n: int64}(string)``): the
function returns a tuple / namedtuple / struct, each string field's text is
written into that field's arena of the result (``ck_jit_struct_kernel``,
``ckernel/jit.h``; ``docs/structs.md``).  The same function run by CPython
is the oracle.  Functions are compiled once, at module level."""
import collections
import gc

import pytest

import ckernels
from ckernels import errors

pa = pytest.importorskip("pyarrow")

REC = "{name: string, n: int64}"
NEST = "{who: {name: string, score: float64}, tag: string, ok: bool}"
WORDS = ["", "a", "héllo", "ÅNGSTRÖM", "東京 tower", "😀 x", "straße", "word " * 12]


def py_label(s):
    return s.upper(), len(s)


label = ckernels.jit(f"{REC}(string)")(py_label)

P = collections.namedtuple("P", "n name")      # the struct's fields, another order


def py_nested(s, x):
    return (s.title(), x * 2.0), f"{s}:{x:.1f}", len(s) > 3


nested = ckernels.jit(f"{NEST}(string, float64)")(py_nested)


@ckernels.jit(f"{REC}({REC})")
def same(p):
    return p                                   # a struct argument, copied


@ckernels.jit(f"{REC}({REC})")
def bump(p):
    return P(p.n + 1, p.name)                  # by field name; a view of the argument


@ckernels.jit(f"{REC}(?string)")
def aware(s):
    if s is None:
        return "<none>", -1
    t = None if s == "x" else s                # an Optional str for the field
    return t, len(s)


def _rec(name, n):
    return {"name": name, "n": n}


def test_tuple_result_matches_python():
    r = label(WORDS)
    assert str(r.type) == f"strided * {REC}"
    assert r.tolist() == [_rec(*py_label(w)) for w in WORDS]
    assert label("abc") == _rec("ABC", 3)


def test_text_lives_in_the_field_arena():
    """A view of the string field outlives the result: the field's own arena
    holds the text (one arena per field, not the kernel's)."""
    r = nested(["ab", "cdef"], 1.25)
    names, tags = r["who"]["name"], r["tag"]
    del r
    gc.collect()
    assert names.tolist() == ["Ab", "Cdef"]
    assert tags.tolist() == ["ab:1.2", "cdef:1.2"]


def test_nested_struct_with_two_string_fields():
    r = nested(WORDS, 0.75)
    want = [py_nested(w, 0.75) for w in WORDS]
    assert r.tolist() == [{"who": {"name": a, "score": b}, "tag": t, "ok": ok}
                          for (a, b), t, ok in want]


def test_struct_argument_copied_into_the_result():
    a = ckernels.array([_rec("zz", 1), _rec("éé", 2), _rec("", 3)], REC)
    r1, r2 = same(a), bump(a)
    del a
    gc.collect()                               # the argument's arenas are gone
    assert r1.tolist() == [_rec("zz", 1), _rec("éé", 2), _rec("", 3)]
    assert r2.tolist() == [_rec("zz", 2), _rec("éé", 3), _rec("", 4)]


def test_many_rows_on_the_library_threads():
    words = [f"w{i}é" * (i % 7) for i in range(60_000)]
    assert label(words).tolist() == [_rec(*py_label(w)) for w in words]


def test_out_rewritten():
    out = ckernels.array([_rec("old", 0)] * 3, REC)
    label(["a", "bb", "ccc"], out=out)
    assert out.tolist() == [_rec("A", 1), _rec("BB", 2), _rec("CCC", 3)]
    label(["d", "", "é"], out=out)
    assert out.tolist() == [_rec("D", 1), _rec("", 0), _rec("É", 1)]


def test_nulls_propagate_and_null_aware():
    a = ckernels.array(["ab", None, "c"])
    r = label(a)
    assert str(r.type) == f"strided * ?{REC}"
    assert r.tolist() == [_rec("AB", 2), None, _rec("C", 1)]
    assert aware(a).tolist() == [_rec("ab", 2), _rec("<none>", -1), _rec("c", 1)]


def test_pyarrow_in_struct_out():
    r = label(pa.array(["p", None, "qé"]))
    assert isinstance(r, (pa.Array, pa.ChunkedArray))
    assert r.to_pylist() == [_rec("P", 1), None, _rec("QÉ", 2)]


def test_none_for_a_string_field_names_it():
    with pytest.raises(errors.CKTypeError, match="None for string field 'name'"):
        aware(["a", "x"])


def test_wrong_value_for_a_string_field():
    def f(s):
        return 3, 1
    with pytest.raises(TypeError, match="result.name is .*int.*the field is a string"):
        ckernels.jit(f"{REC}(string)")(f)


def test_var_dims_in_struct_results_still_refused():
    with pytest.raises(TypeError, match="var dims inside structs are arguments only"):
        ckernels.jit("{name: string, xs: var * float64}(string)")
