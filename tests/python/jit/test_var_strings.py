"""Lists of strings in jitted code: ``var * string`` results (returned lists
and tuples of ``str`` or string views, or an output parameter's ``append``),
``var * string`` arguments iterated as views, and Arrow ``list<string>``
imports, against CPython's ``str`` methods and pyarrow.

The functions are compiled once, at import."""

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ckernels
from ckernels import errors

SETTINGS = settings(max_examples=30, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

TEXTS = ["", "a", "  hello  world ", "josé  GARCÍA\tñandú", "a,b,,c", "x" * 40 + " y",
         "naïve café ☕ 東京 𝄞", "one two three four five six seven eight nine ten"]


# ---------------------------------------------------------------- kernels --
@ckernels.jit("var * string(string)")
def tokens(s):
    return s.split()


@ckernels.jit("var * string(string)")
def comma_fields(s):
    return s.split(",")


@ckernels.jit("var * string(string)")
def upper_alpha(s, out):         # the filtered tokens of a row, as an output parameter
    for t in s.split():
        if t.isalpha() and len(t) > 1:
            out.append(t.upper())


@ckernels.jit("var * string(string)")
def pair(s):
    return (s, s + "!")


@ckernels.jit("var * string(var * string)")
def keep_long(words):
    return [w for w in words if len(w) > 2]


@ckernels.jit("var * string(var * string)")
def keep_long_out(words, out):
    for w in words:
        if len(w) > 2:
            out.append(w)


@ckernels.jit("int64(var * string)")
def total_chars(words):
    n = 0
    for w in words:
        n += len(w)
    return n


def _rows(a):
    return a.tolist() if hasattr(a, "tolist") else list(a)


# ------------------------------------------------------------------ tests --
@pytest.mark.parametrize("fn, oracle", [
    (tokens, lambda s: s.split()),
    (comma_fields, lambda s: s.split(",")),
    (upper_alpha, lambda s: [t.upper() for t in s.split() if t.isalpha() and len(t) > 1]),
    (pair, lambda s: [s, s + "!"]),
])
def test_string_lists_against_cpython(fn, oracle):
    got = _rows(fn(np.array(TEXTS, dtype=np.dtypes.StringDType())))
    assert got == [oracle(s) for s in TEXTS]


@SETTINGS
@given(st.lists(st.text(st.characters(blacklist_categories=("Cs",)), max_size=30),
                max_size=20))
def test_tokens_random_unicode(texts):
    got = _rows(tokens(ckernels.array(texts, type=f"{len(texts)} * string")))
    assert got == [s.split() for s in texts]


def test_result_type_and_scalar_call():
    r = tokens(ckernels.array(["a b", "c"]))
    assert str(r.type).endswith("var * string")
    assert _rows(r) == [["a", "b"], ["c"]]
    assert _rows(tokens("x y z")) == ["x", "y", "z"]


@pytest.mark.parametrize("fn", [keep_long, keep_long_out])
def test_var_string_arguments_iterate_as_views(fn):
    rows = [["ab", "abc", "josé", ""], [], ["東京都", "x"], ["long word"] * 30]
    a = ckernels.array(rows, type="var * var * string")
    want = [[w for w in r if len(w) > 2] for r in rows]
    assert _rows(fn(a)) == want
    assert total_chars(a).tolist() == [sum(len(w) for w in r) for r in rows]


def test_rows_survive_their_input():
    a = ckernels.array(["alpha beta", "gamma"])
    r = tokens(a)
    del a
    import gc
    gc.collect()
    assert _rows(r) == [["alpha", "beta"], ["gamma"]]


def test_large_rows_grow():
    s = " ".join(f"w{i}é" for i in range(5000))
    assert _rows(tokens(ckernels.array([s, s[:50]]))) == [
        s.split(), s[:50].split()]


def test_many_rows_threads():
    texts = [f"r{i} " * (i % 7) + "end" for i in range(20000)]
    got = _rows(tokens(ckernels.array(texts, type=f"{len(texts)} * string")))
    assert got == [s.split() for s in texts]


def test_to_arrow_round_trip():
    r = tokens(ckernels.array(TEXTS))
    pa_list = pa.array([s.split() for s in TEXTS], type=pa.list_(pa.string()))
    got = pa.array(r)
    assert got.to_pylist() == pa_list.to_pylist()


def test_fixed_string_results_refused():
    with pytest.raises(errors.NotSupportedError, match="var \\* string"):
        @ckernels.jit("3 * string(string)")
        def three(s):
            return [s, s, s]


# ------------------------------------------------- Arrow list<string> import --
@pytest.mark.parametrize("typ", [pa.list_(pa.string()), pa.large_list(pa.string()),
                                 pa.list_(pa.large_string()), pa.list_(pa.string_view()),
                                 pa.large_list(pa.string_view())])
def test_arrow_list_of_strings_import(typ):
    rows = [["a", "bé", ""], [], ["東京", "long text beyond twelve bytes"]] * 3
    arr = pa.array(rows, type=typ).slice(1, 7)
    a = ckernels.from_arrow(arr)
    assert _rows(a) == arr.to_pylist()
    assert total_chars(a).tolist() == [sum(len(w) for w in r) for r in arr.to_pylist()]


def test_arrow_list_of_strings_text_is_not_copied():
    arr = pa.array([["alpha", "beta"], ["gamma"]], type=pa.list_(pa.string()))
    a = ckernels.from_arrow(arr)
    text = arr.values.buffers()[2]
    assert a.tolist() == [["alpha", "beta"], ["gamma"]]
    # the first string's bytes are Arrow's
    assert text.address <= _string_address(a) < text.address + text.size


def _string_address(a):
    """The address of the first string's bytes of a ``var * string`` array."""
    from ckernels._native import ffi
    pre = ffi.cast("ck_array_preamble *", a._a)
    slot = ffi.cast("ck_var_dim_data *", pre.data)
    s = ffi.cast("ck_string *", slot.begin)
    return int(ffi.cast("uintptr_t", s.begin))
