"""The C string library (ckernel/utf8.h) against CPython's str methods.

* the generated Unicode tables agree with the running Python for every code
  point (flags directly, mappings and the context rules -- Cased,
  Case_Ignorable, final sigma -- through whole-string calls);
* hypothesis over random Unicode (every plane, combining marks, casing
  specials, line breaks, empty and long strings; surrogates are refused at
  the boundary: UTF-8 cannot hold them);
* the regressions of Numba's str methods listed in issue 28;
* CPython's Lib/test/string_tests.py run as a peer suite against ``CStr``
  (tests/python/core/utf8_cstr.py): every check counted, the differences listed.
"""
from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ckernels.lowlevel import ffi, lib

from utf8_cstr import INT64_MAX, INT64_MIN, C, CStr

CODE_POINTS = [cp for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]

# ---- tables -----------------------------------------------------------------


def test_version_is_the_running_pythons():
    assert ffi.string(lib.ck_unicode_version()).decode() == unicodedata.unidata_version


def test_flags_every_code_point():
    F = lib.ck_unicode_flags
    bits = [("isalpha", lib.CK_UNICODE_ALPHA), ("isdecimal", lib.CK_UNICODE_DECIMAL),
            ("isdigit", lib.CK_UNICODE_DIGIT), ("isnumeric", lib.CK_UNICODE_NUMERIC),
            ("isspace", lib.CK_UNICODE_SPACE)]
    bad = []
    for cp in CODE_POINTS:
        c = chr(cp)
        f = F(cp)
        for name, bit in bits:
            if getattr(c, name)() != bool(f & bit):
                bad.append((hex(cp), name))
        if c.isidentifier() != bool(f & lib.CK_UNICODE_XID_START):
            bad.append((hex(cp), "xid_start"))
        if ("a" + c).isidentifier() != bool(f & lib.CK_UNICODE_XID_CONTINUE):
            bad.append((hex(cp), "xid_continue"))
        if (len(("a" + c + "b").splitlines()) == 2) != bool(f & lib.CK_UNICODE_LINEBREAK):
            bad.append((hex(cp), "linebreak"))
        if (unicodedata.category(c) == "Lt") != bool(f & lib.CK_UNICODE_TITLE):
            bad.append((hex(cp), "title"))
        # one-character islower/isupper/istitle read LOWER/UPPER/TITLE
        if c.islower() != bool(f & lib.CK_UNICODE_LOWER and
                               not f & (lib.CK_UNICODE_UPPER | lib.CK_UNICODE_TITLE)):
            bad.append((hex(cp), "islower"))
        if c.isupper() != bool(f & lib.CK_UNICODE_UPPER and
                               not f & (lib.CK_UNICODE_LOWER | lib.CK_UNICODE_TITLE)):
            bad.append((hex(cp), "isupper"))
        if c.istitle() != bool(f & (lib.CK_UNICODE_UPPER | lib.CK_UNICODE_TITLE)):
            bad.append((hex(cp), "istitle"))
        if unicodedata.decimal(c, -1) != lib.ck_unicode_decimal(cp):
            bad.append((hex(cp), "decimal"))
        if unicodedata.digit(c, -1) != lib.ck_unicode_digit(cp):
            bad.append((hex(cp), "digit"))
    assert bad == []
    assert F(0x110000) == 0


def _all(sep: str = "", before: str = "", after: str = "") -> str:
    return sep.join(before + chr(cp) + after for cp in CODE_POINTS)


@pytest.mark.parametrize("method", ["lower", "upper", "casefold", "title", "capitalize",
                                    "swapcase"])
@pytest.mark.parametrize("layout", ["joined", "spaced", "after_a", "sigma_after",
                                    "sigma_after_a"])
def test_case_mappings_every_code_point(method, layout):
    """One call over every code point: c.X() for each (spaced), and the
    context rules: whether c is cased (title of "a" after c) and case
    ignorable (the final sigma after c, with and without a cased letter
    before it)."""
    text = {"joined": lambda: _all(),
            "spaced": lambda: _all(" "),
            "after_a": lambda: _all("", "", "a"),
            "sigma_after": lambda: _all(" ", "", "\u03a3"),
            "sigma_after_a": lambda: _all(" ", "a", "\u03a3")}[layout]()
    got = getattr(C, method)(text)
    want = getattr(text, method)()
    if got != want:
        g, w = got.split(" "), want.split(" ")
        diff = [(a, b) for a, b in zip(g, w) if a != b][:10]
        pytest.fail(f"{method} {layout}: {len(g)} vs {len(w)} pieces, first differences {diff}")


def test_case_mapping_single_code_points():
    for cp in (0xDF, 0x130, 0x149, 0x390, 0x3A3, 0x1E9E, 0xFB03, 0x1F88, 0x10400, 0x1E900):
        c = chr(cp)
        for which, name in enumerate(("lower", "upper", "title", "casefold")):
            out = ffi.new("uint32_t[3]")
            k = lib.ck_unicode_case(cp, which, out)
            assert "".join(chr(out[i]) for i in range(k)) == getattr(c, name)(), (hex(cp), name)


# ---- hypothesis over random Unicode --------------------------------------------

SPECIAL = list(" \t\n\r\x0b\x0c\x1c\x1d\x1e\x85\xa0\u1680\u2000\u2028\u2029\u3000"
               "\u03a3\u03c3\u03c2\xdf\u0130\u0131\u0149\u0390\ufb03\u01c5\u01c6\u1f88"
               "\u0301\u0308\u20ac\U0001f600\U00010400'.:_-+0123456789aAzZ\u0663\xb2\xbd")
CHARS = st.characters(blacklist_categories=("Cs",))
TEXT = st.text(alphabet=st.one_of(CHARS, st.sampled_from(SPECIAL)), max_size=40)
LONG = st.text(alphabet=st.one_of(st.sampled_from("ab \u03a3\xe9"), CHARS), min_size=200,
               max_size=600)
ANY = st.one_of(TEXT, LONG)
INDEX = st.one_of(st.integers(-50, 50), st.sampled_from([INT64_MIN, INT64_MAX, 2**63 - 1,
                                                          -(2**63), 10**30, -(10**30)]))
SETTINGS = settings(max_examples=150, deadline=None)

PREDICATES = ["isdigit", "isdecimal", "isnumeric", "isalpha", "isalnum", "isspace",
              "islower", "isupper", "istitle", "isascii", "isidentifier"]


def test_predicates_every_two_byte_code_point():
    """The predicates read U+0000-U+07FF from their own flags table
    (ck__flags2): each code point alone, after "A" (istitle's state, XID
    continue) and doubled, against the running Python."""
    bad = []
    for cp in range(0x800):
        c = chr(cp)
        for s in (c, "A" + c, c + c):
            for p in PREDICATES:
                if C.pred(p, s) != getattr(s, p)():
                    bad.append((hex(cp), s, p))
    assert not bad, bad[:10]


@SETTINGS
@given(ANY)
def test_case_and_predicates(s):
    for m in ("lower", "upper", "casefold", "title", "capitalize", "swapcase"):
        assert getattr(C, m)(s) == getattr(s, m)(), m
    for p in PREDICATES:
        assert C.pred(p, s) == getattr(s, p)(), p
    b = s.encode()
    assert lib.ck_str_length(b, len(b)) == len(s)
    assert bool(lib.ck_str_is_ascii(b, len(b))) == s.isascii()


@SETTINGS
@given(ANY, TEXT)
def test_search(s, sub):
    if len(s) > 3 and not sub:
        sub = s[1:3]
    for start, end in ((0, INT64_MAX), (2, -1), (-5, 7), (len(s), INT64_MAX)):
        assert C.search("find", s, sub, start, end) == s.find(sub, start, end)
        assert C.search("rfind", s, sub, start, end) == s.rfind(sub, start, end)
        assert C.search("count", s, sub, start, end) == s.count(sub, start, end)
        assert bool(C.search("startswith", s, sub, start, end)) == s.startswith(sub, start, end)
        assert bool(C.search("endswith", s, sub, start, end)) == s.endswith(sub, start, end)
    assert (sub in CStr(s)) == (sub in s)


@SETTINGS
@given(ANY, st.one_of(st.none(), st.sampled_from([" ", "a", "ab", "\u03a3", "\u2028"]), TEXT),
       st.integers(-2, 5))
def test_split(s, sep, maxsplit):
    if sep == "":
        sep = None
    assert C.split(s, sep, maxsplit) == s.split(sep, maxsplit)
    assert C.rsplit(s, sep, maxsplit) == s.rsplit(sep, maxsplit)
    assert C.splitlines(s) == s.splitlines()
    assert C.splitlines(s, True) == s.splitlines(True)
    if sep is not None:
        assert C.partition("partition", s, sep) == s.partition(sep)
        assert C.partition("rpartition", s, sep) == s.rpartition(sep)
    assert C.strip(s) == s.strip()
    assert C.strip(s, None, 1) == s.lstrip()
    assert C.strip(s, None, 2) == s.rstrip()
    chars = (sep or "") + s[:2]
    assert C.strip(s, chars) == s.strip(chars)
    assert C.strip(s, chars, 1) == s.lstrip(chars)
    assert C.strip(s, chars, 2) == s.rstrip(chars)


@SETTINGS
@given(ANY, TEXT, TEXT, st.integers(-1, 4))
def test_build(s, old, new, count):
    if len(s) > 4 and old and s.find(old) < 0:
        old = s[2:4]
    assert C.replace(s, old, new, count) == s.replace(old, new, count)
    assert C.join(new, s.split()) == new.join(s.split())
    assert CStr(s).removeprefix(old) == s.removeprefix(old)
    assert CStr(s).removesuffix(old) == s.removesuffix(old)
    w = len(s) + count * 3
    fill = (new or "*")[0]
    for m in ("ljust", "rjust", "center"):
        assert getattr(CStr(s), m)(w, fill) == getattr(s, m)(w, fill)
    assert CStr(s).zfill(w) == s.zfill(w)
    assert CStr(s).expandtabs(count * 2) == s.expandtabs(count * 2)
    assert CStr(s) * count == s * count


@SETTINGS
@given(ANY, st.one_of(st.none(), INDEX), st.one_of(st.none(), INDEX),
       st.one_of(st.none(), INDEX.filter(lambda x: x != 0)))
def test_slices(s, start, stop, step):
    assert C.slice(s, start, stop, step) == s[start:stop:step]
    if start is not None:
        try:
            want = s[start]
        except IndexError:
            with pytest.raises(IndexError, match="string index out of range"):
                C.getitem(s, start)
        else:
            assert C.getitem(s, start) == want


@SETTINGS
@given(ANY, ANY)
def test_compare_hash(a, b):
    ab, bb = a.encode(), b.encode()
    c = lib.ck_str_compare(ab, len(ab), bb, len(bb))
    assert (c < 0, c == 0, c > 0) == (a < b, a == b, a > b)
    assert bool(lib.ck_str_equal(ab, len(ab), bb, len(bb))) == (a == b)
    if a == b:
        assert lib.ck_str_hash(ab, len(ab)) == lib.ck_str_hash(bb, len(bb))


@SETTINGS
@given(st.binary(max_size=20) | TEXT.map(str.encode))
def test_utf8_check_is_bytes_decode(b):
    n = ffi.new("int64_t *")
    st_ = lib.ck_utf8_check(b, len(b), n)
    try:
        s = b.decode("utf-8")
    except UnicodeDecodeError as e:
        assert st_ == lib.CK_ERR_VALUE
        assert ffi.string(lib.ck_last_error()).decode().endswith(str(e))
    else:
        assert st_ == 0 and n[0] == len(s)


def test_surrogates_are_refused():
    b = "\ud800".encode("utf-8", "surrogatepass")
    assert lib.ck_utf8_check(b, len(b), ffi.NULL) == lib.CK_ERR_VALUE
    out, n = ffi.new("char[4]"), ffi.new("int64_t *")
    assert lib.ck_str_chr(0xD800, out, n) == lib.CK_ERR_VALUE
    assert lib.ck_str_chr(0x1F600, out, n) == 0 and ffi.unpack(out, n[0]).decode() == "\U0001f600"
    assert lib.ck_str_chr(0x110000, out, n) == lib.CK_ERR_VALUE


# ---- int(), float(), repr() ------------------------------------------------------------

INT_TEXT = st.one_of(
    TEXT, st.integers(-(2**70), 2**70).map(str),
    st.from_regex(r"[ \t\u3000]*[+-]?(0[xXoObB]_?)?[0-9a-fA-F_\u0663\u0967]{0,22}[ \n]*",
                  fullmatch=True))
FLOAT_TEXT = st.one_of(
    TEXT, st.floats().map(repr), st.floats().map(lambda x: repr(x).upper()),
    st.from_regex(r"\s*[+-]?([0-9_\u0663]{0,8}\.?[0-9_]{0,8}([eE][+-]?[0-9_]{0,4})?"
                  r"|[iI][nN][fF]([iI][nN][iI][tT][yY])?|[nN][aA][nN]|0x1p3)\s*", fullmatch=True))


def _c_error():
    return ffi.string(lib.ck_last_error()).decode().split(": ", 1)[1]


@settings(max_examples=400, deadline=None)
@given(INT_TEXT, st.sampled_from([0, 2, 8, 10, 16, 36]))
def test_int_parse(s, base):
    b = s.encode()
    out = ffi.new("int64_t *")
    status = lib.ck_str_to_int64(b, len(b), base, out)
    try:
        want = int(s, base)
    except ValueError as e:
        assert status == lib.CK_ERR_VALUE and _c_error() == str(e)
    else:
        if -(2**63) <= want < 2**63:
            assert status == 0 and out[0] == want
        else:
            assert status == lib.CK_ERR_OVERFLOW


@settings(max_examples=400, deadline=None)
@given(FLOAT_TEXT)
def test_float_parse(s):
    b = s.encode()
    out = ffi.new("double *")
    status = lib.ck_str_to_double(b, len(b), out)
    try:
        want = float(s)
    except ValueError as e:
        assert status == lib.CK_ERR_VALUE and _c_error() == str(e)
    else:
        assert status == 0
        assert repr(out[0]) == repr(want)


@SETTINGS
@given(ANY)
def test_repr(s):
    assert C.build(lib.ck_str_repr, s) == repr(s)
    assert C.pred("isprintable", s) == s.isprintable()


# ---- Numba's bugs (issue 28): each a regression test --------------------------------


def test_numba_regressions():
    s = "abcdefgh"
    assert C.slice(s, 3, 0, 2**63 - 1) == s[3:0:2**63 - 1] == ""  # Numba: crash
    assert C.split(" a b c ", None, 1) == " a b c ".split(None, 1) == ["a", "b c "]
    assert C.rsplit("a||b||c||d", "|", 2) == "a||b||c||d".rsplit("|", 2) == ["a||b||c", "", "d"]
    assert C.replace("", "", "A") == "".replace("", "A") == "A"  # Numba: "AA"
    assert CStr("prefix-x").removeprefix("prefix-") == "x"
    assert CStr("x.txt").removesuffix(".txt") == "x"


# ---- CPython's string_tests as a peer suite ----------------------------------------------

string_tests = pytest.importorskip("test.string_tests")
import unittest  # noqa: E402

PEER_METHODS = [
    "test_count", "test_find", "test_rfind", "test_index", "test_rindex",
    "test_find_periodic_pattern", "test_find_shift_table_overflow", "test_lower", "test_upper",
    "test_expandtabs", "test_split", "test_rsplit", "test_replace", "test_removeprefix",
    "test_removesuffix", "test_capitalize", "test_additional_split", "test_additional_rsplit",
    "test_strip_whitespace", "test_strip", "test_ljust", "test_rjust", "test_center",
    "test_swapcase", "test_zfill", "test_islower", "test_isupper", "test_istitle",
    "test_isspace", "test_isalpha", "test_isalnum", "test_isascii", "test_isdigit", "test_title",
    "test_splitlines", "test_capitalize_nonascii", "test_startswith", "test_endswith",
    "test___contains__", "test_subscript", "test_slice", "test_extended_getslice", "test_mul",
    "test_join", "test_partition", "test_rpartition", "test_none_arguments",
    "test_find_etc_raise_correct_error_messages",
]


class _Peer(string_tests.CommonTest, string_tests.MixinStrUnicodeUserStringTest,
            unittest.TestCase):
    type2test = CStr
    results: list = []

    def _record(self, kind, fn, *args, **kw):
        try:
            fn(*args, **kw)
        except Exception as e:  # noqa: BLE001 - every difference is recorded
            self.results.append((False, kind, args[:4], repr(e)[:200]))
        else:
            self.results.append((True, kind, args[:4], ""))

    def checkequal(self, result, obj, methodname, *args, **kwargs):
        self._record("equal", super().checkequal, result, obj, methodname, *args, **kwargs)

    def checkraises(self, exc, obj, methodname, *args, expected_msg=None):
        self._record("raises", super().checkraises, exc, obj, methodname, *args,
                     expected_msg=expected_msg)


def run_peer_suite():
    """(passed, failed checks, differences) of string_tests against CStr."""
    _Peer.results = []
    method_errors = []
    for name in PEER_METHODS:
        try:
            getattr(_Peer(name), name)()
        except Exception as e:  # noqa: BLE001
            method_errors.append((name, repr(e)[:200]))
    passed = sum(1 for r in _Peer.results if r[0])
    diffs = [r for r in _Peer.results if not r[0]]
    return passed, diffs, method_errors


def test_cpython_string_tests_peer_suite():
    passed, diffs, method_errors = run_peer_suite()
    print(f"\nstring_tests against the C library: {passed} checks pass, {len(diffs)} differ,"
          f" {len(method_errors)} test methods stopped by a direct assertion")
    for d in diffs + method_errors:
        print("  ", d)
    assert passed > 1500
    assert diffs == [] and method_errors == []
