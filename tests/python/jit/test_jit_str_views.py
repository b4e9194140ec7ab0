"""str methods of jitted ``string`` arguments run on the C string library over
UTF-8 views (numba_ext/_numba/str_methods.py, numba_ext/jit/string_views.py),
with CPython's str methods as the oracle.  Each jitted function is compiled
once (module level) and covers several methods through a selector."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ckernels
from ckernels._numba.stringtype import CkStringType

TEXT = st.one_of(
    st.text(alphabet="ab cAB@.-_|1234\t\nßΣσςİﬁé東😀\u0301\u2028", max_size=24),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=16))
SUBS = st.sampled_from(["", "a", "b", "ab", " ", "Σ", "é", "@", "|", "東😀", "xyz"])
SETTINGS = settings(max_examples=12, deadline=None)

CASES = ["lower", "upper", "casefold", "title", "capitalize", "swapcase", "strip", "lstrip",
         "rstrip", "join_split", "zfill", "center", "expandtabs", "repeat", "slice",
         "rev", "strip_chars", "removeprefix", "removesuffix", "part0", "rpart2", "split_1"]


@ckernels.jit("string(string, int64)")
def text_of(s, k):
    if k == 0:
        return s.lower()
    elif k == 1:
        return s.upper()
    elif k == 2:
        return s.casefold()
    elif k == 3:
        return s.title()
    elif k == 4:
        return s.capitalize()
    elif k == 5:
        return s.swapcase()
    elif k == 6:
        return s.strip()
    elif k == 7:
        return s.lstrip()
    elif k == 8:
        return s.rstrip()
    elif k == 9:
        return " ".join(s.split()).title()
    elif k == 10:
        return s.zfill(7)
    elif k == 11:
        return s.center(9, "*")
    elif k == 12:
        return s.expandtabs(4)
    elif k == 13:
        return s * 2
    elif k == 14:
        return s[1:-1]
    elif k == 15:
        return s[::-1]
    elif k == 16:
        return s.strip("ab ")
    elif k == 17:
        return s.removeprefix("a")
    elif k == 18:
        return s.removesuffix("b")
    elif k == 19:
        return s.partition("|")[0]
    elif k == 20:
        return s.rpartition("|")[2]
    return "+".join(s.split(None, 1))


def py_text_of(s, k):
    name = CASES[k]
    if name == "join_split":
        return " ".join(s.split()).title()
    return {"zfill": lambda: s.zfill(7), "center": lambda: s.center(9, "*"),
            "expandtabs": lambda: s.expandtabs(4), "repeat": lambda: s * 2,
            "slice": lambda: s[1:-1], "rev": lambda: s[::-1],
            "strip_chars": lambda: s.strip("ab "), "removeprefix": lambda: s.removeprefix("a"),
            "removesuffix": lambda: s.removesuffix("b"), "part0": lambda: s.partition("|")[0],
            "rpart2": lambda: s.rpartition("|")[2],
            "split_1": lambda: "+".join(s.split(None, 1))}.get(
        name, lambda: getattr(s, name)())()


PREDICATES = ["isdigit", "isdecimal", "isnumeric", "isalpha", "isalnum", "isspace", "islower",
              "isupper", "istitle", "isascii", "isidentifier", "isprintable"]


@ckernels.jit("bool(string, int64)")
def pred(s, k):
    if k == 0:
        return s.isdigit()
    elif k == 1:
        return s.isdecimal()
    elif k == 2:
        return s.isnumeric()
    elif k == 3:
        return s.isalpha()
    elif k == 4:
        return s.isalnum()
    elif k == 5:
        return s.isspace()
    elif k == 6:
        return s.islower()
    elif k == 7:
        return s.isupper()
    elif k == 8:
        return s.istitle()
    elif k == 9:
        return s.isascii()
    elif k == 10:
        return s.isidentifier()
    return s.isprintable()


@ckernels.jit("int64(string, string, int64)")
def search(s, sub, k):
    if k == 0:
        return s.find(sub)
    elif k == 1:
        return s.rfind(sub)
    elif k == 2:
        return s.count(sub)
    elif k == 3:
        return s.find(sub, 1, -1)
    elif k == 4:
        return int(s.startswith(sub))
    elif k == 5:
        return int(s.endswith(sub))
    elif k == 6:
        return int(sub in s)
    elif k == 7:
        return len(s.split(sub)) if len(sub) > 0 else -1
    elif k == 8:
        return len(s.rsplit(sub, 2)) if len(sub) > 0 else -1
    elif k == 9:
        return len(s)
    return len(s.splitlines())


def py_search(s, sub, k):
    return [s.find(sub), s.rfind(sub), s.count(sub), s.find(sub, 1, -1),
            int(s.startswith(sub)), int(s.endswith(sub)), int(sub in s),
            len(s.split(sub)) if sub else -1, len(s.rsplit(sub, 2)) if sub else -1,
            len(s), len(s.splitlines())][k]


@ckernels.jit("string(string, string, string)")
def replace(s, old, new):
    return s.replace(old, new)


@ckernels.jit("string(string, string)")
def piece(s, sep):
    out = s[:0]
    for w in s.split(sep):
        if len(w) > len(out):
            out = w
    return out


@ckernels.jit("int64(string)")
def words(c):
    return len(c.split())


@ckernels.jit("string(string)")
def domain(e):
    return e[e.find("@") + 1:].lower()


@ckernels.jit("string(string)")
def concat(s):            # `+` is not on the view: the old path
    return s + "!"


def _views(f) -> bool:
    """Whether f's compiled code takes its string arguments as views."""
    return any(isinstance(t, CkStringType) for sig in f.dispatcher.overloads
               for t in sig)


def _strings(values):
    return ckernels.array(list(values), dtype="string")


@SETTINGS
@given(st.lists(TEXT, min_size=1, max_size=6))
def test_text_methods_match_cpython(values):
    a = _strings(values)
    for k in range(len(CASES)):
        assert text_of(a, k).tolist() == [py_text_of(s, k) for s in values], CASES[k]


@SETTINGS
@given(st.lists(TEXT, min_size=1, max_size=6))
def test_predicates_match_cpython(values):
    a = _strings(values)
    for k, name in enumerate(PREDICATES):
        assert pred(a, k).tolist() == [getattr(s, name)() for s in values], name


@SETTINGS
@given(st.lists(st.tuples(TEXT, SUBS), min_size=1, max_size=6))
def test_search_matches_cpython(pairs):
    a = _strings(s for s, _ in pairs)
    b = _strings(sub for _, sub in pairs)
    for k in range(11):
        assert search(a, b, k).tolist() == [py_search(s, sub, k) for s, sub in pairs], k


@SETTINGS
@given(TEXT, SUBS, SUBS)
def test_replace_matches_cpython(s, old, new):
    assert replace(_strings([s]), _strings([old]), _strings([new])).tolist() == [
        s.replace(old, new)]


def test_the_methods_take_views():
    for f in (text_of, pred, search, replace, piece, words, domain, cut, stepped, cut_len):
        _ = f.dispatcher  # compiled at decoration (explicit signatures)
        assert _views(f), f.__name__
    assert not _views(concat)
    assert concat(_strings(["é"])).tolist() == ["é!"]


def test_numba_regressions():
    # Numba's methods got these wrong; the C library gets them right
    assert text_of(_strings(["a b  c d"]), CASES.index("split_1")).tolist() == ["a+b  c d"]
    assert replace(_strings([""]), _strings([""]), _strings(["A"])).tolist() == ["A"]
    assert search(_strings(["a||b||c||d"]), _strings(["|"]), 8).tolist() == [3]
    # zfill of "" read the byte after its result (a '-' there moved in front)
    zf = CASES.index("zfill")
    assert text_of(_strings(["-5", "", "-", ""]), zf).tolist() == [
        "-000005", "0000000", "-000000", "0000000"]


def test_split_iteration_and_pieces():
    assert piece(_strings(["ab,cdé,f", "", "x"]), _strings([",", ",", ","])).tolist() == [
        "cdé", "", "x"]
    assert words(_strings(["  two words ", "", "É é\u2028x"])).tolist() == [2, 0, 3]
    assert domain(_strings(["Ann@Exämple.COM", "none"])).tolist() == ["exämple.com", "none"]


def test_errors_are_pythons():
    @ckernels.jit("int64(string)")
    def idx(s):
        return s.index("z") + int(s[:1])

    with pytest.raises(ValueError, match="substring not found"):
        idx(_strings(["abc"]))
    with pytest.raises(ValueError, match=r"invalid literal for int\(\) with base 10: 'a'"):
        idx(_strings(["az"]))
    assert idx(_strings(["7z"])).tolist() == [8]


def test_numpy_strings_in_and_out():
    x = np.array(["Ab", "ÉCOLE"], dtype=np.dtypes.StringDType())
    assert text_of(x, 0).tolist() == ["ab", "école"]


# ---- slices of step 1: views found inline (numba_ext/_numba/str_slice.py) ----
@ckernels.jit("string(string, int64, int64, int64)")
def cut(s, a, b, k):
    if k == 0:
        return s[a:b]
    if k == 1:
        return s[a:]
    if k == 2:
        return s[:b]
    if k == 3:
        return s[a:b:1]
    if k == 4:
        return s.lower()[a:b]          # a view of the made text, returned
    return s[a:b][b:a]


@ckernels.jit("string(string, int64, int64, int64)")
def stepped(s, a, b, c):
    return s[a:b:c]                    # step 1 inline, others ck_str_slice


PY_CUT = [lambda s, a, b: s[a:b], lambda s, a, b: s[a:], lambda s, a, b: s[:b],
          lambda s, a, b: s[a:b:1], lambda s, a, b: s.lower()[a:b],
          lambda s, a, b: s[a:b][b:a]]


@ckernels.jit("int64(string, int64, int64)")
def cut_len(s, a, b):
    return len(s[a:b]) + len(s[-a:]) + len(s[:-b])


BIG = 2**63 - 1
BOUNDS = st.one_of(st.integers(-45, 45), st.sampled_from([BIG, -BIG - 1, -BIG, 2**62]))
LONG = st.text(alphabet="abcdefgh XYZ.ßé東😀\u0301", min_size=0, max_size=60)


STEPS = st.one_of(st.sampled_from([1, 1, -1, 2, -3, BIG, -BIG - 1]), st.integers(-9, 9)).filter(
    lambda c: c != 0)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.one_of(TEXT, LONG), BOUNDS, BOUNDS, STEPS), min_size=1,
                max_size=8))
def test_slices_match_cpython(rows):
    s = _strings(r[0] for r in rows)
    a = np.array([r[1] for r in rows], dtype=np.int64)
    b = np.array([r[2] for r in rows], dtype=np.int64)
    c = np.array([r[3] for r in rows], dtype=np.int64)
    for k, f in enumerate(PY_CUT):
        assert cut(s, a, b, k).tolist() == [f(*r[:3]) for r in rows], k
    assert stepped(s, a, b, c).tolist() == [t[x:y:z] for t, x, y, z in rows]
    assert cut_len(s, a, b).tolist() == [
        len(t[x:y]) + len(t[-x:] if x != -BIG - 1 else t) + len(t[:-y] if y != -BIG - 1 else "")
        for t, x, y, _ in rows]


def test_slice_walks_words_from_the_nearer_end():
    # code points across 8-byte words: every start/stop of a 40-code-point text
    # mixing 1-4 byte sequences, from the front and from the back
    t = "ab東😀é.xyzß" * 4
    rows = [(t, i, j) for i in range(-42, 43, 3) for j in range(-42, 43, 5)]
    s = _strings(r[0] for r in rows)
    a = np.array([r[1] for r in rows], dtype=np.int64)
    b = np.array([r[2] for r in rows], dtype=np.int64)
    for k in (0, 1, 2, 4):
        assert cut(s, a, b, k).tolist() == [PY_CUT[k](*r) for r in rows], k


def test_slice_step_regressions():
    s = _strings(["abcdef", "éé東"])
    z = np.zeros(2, dtype=np.int64)
    # s[3:0:2**63 - 1] crashed Numba's str; CPython gives ""
    assert stepped(s, z + 3, z, z + BIG).tolist() == ["", ""]
    assert stepped(s, z + 1, z + BIG, z - BIG - 1).tolist() == ["", ""]
    assert stepped(s, z + 1, z - BIG - 1, z - BIG - 1).tolist() == ["b", "é"]
    assert stepped(s, z - BIG - 1, z + 3, z + 2).tolist() == ["ac", "é東"]
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        stepped(s, z, z, z)


# ---- the lead-byte filter of isdigit/isdecimal/isnumeric/isspace ----------
def test_lead_masks_cover_every_code_point():
    from ckernels._numba.str_methods import LEAD_MASKS
    need = dict.fromkeys(LEAD_MASKS, 0)
    for cp in range(0x80, 0x110000):
        c = chr(cp)
        if 0xD800 <= cp <= 0xDFFF or not (c.isnumeric() or c.isspace()):
            continue
        bit = 1 << (c.encode()[0] - 0xC0)
        for name in need:
            if getattr(c, name)():
                need[name] |= bit
    assert {k: v & ~LEAD_MASKS[k] for k, v in need.items()} == dict.fromkeys(LEAD_MASKS, 0)


def test_predicates_after_ascii_and_at_every_lead():
    chars = ["²", "¼", "٣", "۴", "߅", "१", "፩", "①", "〇", "一", "六", "１", "𝟎", "é", "Ω",
             "東", "😀", "\x85", "\xa0", "\u1680", "\u2000", "\u3000", "ß"]
    values = chars + [a + b for a in chars for b in ("1", " ", "a")] + \
        [b + a for a in chars for b in ("1", " ", "a")]
    a = _strings(values)
    for k, name in enumerate(PREDICATES):
        assert pred(a, k).tolist() == [getattr(s, name)() for s in values], name
