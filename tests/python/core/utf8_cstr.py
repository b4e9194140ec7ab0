"""Python's str methods run by the C library (ckernel/utf8.h) through cffi.

``C`` calls one C function on UTF-8 text and returns Python values (spans
become the strings they view).  ``CStr`` is a ``str`` subclass whose methods
are those calls: CPython's own Lib/test/string_tests.py runs against it as a
peer suite (tests/python/core/test_utf8_strings.py).  Arguments Python would refuse
by type are refused by ``str`` itself (the methods fall back to it for the
error), so the C functions see only what a jitted caller could pass.
"""
from __future__ import annotations

import ckernels.errors as errors
from ckernels.lowlevel import ffi, lib

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)

_BASE = {errors.CKValueError: ValueError, errors.CKTypeError: TypeError,
         errors.CKIndexError: IndexError, errors.CKOverflowError: OverflowError}


def _raise(status: int):
    msg = ffi.string(lib.ck_last_error()).decode()
    base = ValueError
    for c, b in _BASE.items():
        if c.status == status:
            base = b
    raise base(msg.split(": ", 1)[1] if ": " in msg else msg)


def check(status: int) -> None:
    if status != 0:
        _raise(status)


def clamp(i):
    """A Python int as the C functions take it (clamped to int64)."""
    return max(INT64_MIN, min(INT64_MAX, i))


class Arena:
    def __enter__(self):
        p = ffi.new("ck_memblock **")
        check(lib.ck_pod_memblock_new(0, p))
        self.mb = p[0]
        return self.mb

    def __exit__(self, *exc):
        lib.ck_memblock_decref(self.mb)


def _text(r) -> str:
    n = r.end - r.begin
    return ffi.unpack(r.begin, n).decode("utf-8") if n else ""


def _view(b: bytes, sp) -> str:
    return b[sp.offset:sp.offset + sp.length].decode("utf-8")


class C:
    """Each method: the C function's answer for Python str arguments."""

    @staticmethod
    def build(fn, s: str, *args) -> str:
        b = s.encode("utf-8")
        out = ffi.new("ck_string *")
        with Arena() as mb:
            check(fn(mb, b, len(b), *args, out))
            return _text(out)

    @staticmethod
    def spans(fn, s: str, *args) -> list:
        b = s.encode("utf-8")
        sp = ffi.new("ck_str_span **")
        k = ffi.new("int64_t *")
        with Arena() as mb:
            check(fn(mb, b, len(b), *args, sp, k))
            return [_view(b, sp[0][i]) for i in range(k[0])]

    @staticmethod
    def lower(s):
        return C.build(lib.ck_str_lower, s)

    @staticmethod
    def upper(s):
        return C.build(lib.ck_str_upper, s)

    @staticmethod
    def casefold(s):
        return C.build(lib.ck_str_casefold, s)

    @staticmethod
    def title(s):
        return C.build(lib.ck_str_title, s)

    @staticmethod
    def capitalize(s):
        return C.build(lib.ck_str_capitalize, s)

    @staticmethod
    def swapcase(s):
        return C.build(lib.ck_str_swapcase, s)

    @staticmethod
    def pred(name: str, s: str) -> bool:
        b = s.encode("utf-8")
        return bool(getattr(lib, "ck_str_" + name)(b, len(b)))

    @staticmethod
    def split(s, sep=None, maxsplit=-1):
        sb = ffi.NULL if sep is None else sep.encode("utf-8")
        return C.spans(lib.ck_str_split, s, sb, 0 if sep is None else len(sb), clamp(maxsplit))

    @staticmethod
    def rsplit(s, sep=None, maxsplit=-1):
        sb = ffi.NULL if sep is None else sep.encode("utf-8")
        return C.spans(lib.ck_str_rsplit, s, sb, 0 if sep is None else len(sb), clamp(maxsplit))

    @staticmethod
    def splitlines(s, keepends=False):
        return C.spans(lib.ck_str_splitlines, s, bool(keepends))

    @staticmethod
    def search(name, s, sub, start=0, end=INT64_MAX):
        b, sb = s.encode("utf-8"), sub.encode("utf-8")
        return getattr(lib, "ck_str_" + name)(b, len(b), sb, len(sb), clamp(start), clamp(end))

    @staticmethod
    def index(name, s, sub, start=0, end=INT64_MAX):
        b, sb = s.encode("utf-8"), sub.encode("utf-8")
        out = ffi.new("int64_t *")
        check(getattr(lib, "ck_str_" + name)(b, len(b), sb, len(sb), clamp(start), clamp(end),
                                             out))
        return out[0]

    @staticmethod
    def partition(name, s, sep):
        b, sb = s.encode("utf-8"), sep.encode("utf-8")
        out = ffi.new("ck_str_span[3]")
        check(getattr(lib, "ck_str_" + name)(b, len(b), sb, len(sb), out))
        return tuple(_view(b, out[i]) for i in range(3))

    @staticmethod
    def strip(s, chars=None, which=3):
        b = s.encode("utf-8")
        cb = ffi.NULL if chars is None else chars.encode("utf-8")
        out = ffi.new("ck_str_span *")
        check(lib.ck_str_strip(b, len(b), cb, 0 if chars is None else len(cb), which, out))
        return _view(b, out[0])

    @staticmethod
    def remove(name, s, affix):
        b, ab = s.encode("utf-8"), affix.encode("utf-8")
        return _view(b, getattr(lib, "ck_str_" + name)(b, len(b), ab, len(ab)))

    @staticmethod
    def replace(s, old, new, count=-1):
        ob, nb = old.encode("utf-8"), new.encode("utf-8")
        b = s.encode("utf-8")
        out = ffi.new("ck_string *")
        with Arena() as mb:
            check(lib.ck_str_replace(mb, b, len(b), ob, len(ob), nb, len(nb), clamp(count), out))
            return _text(out)

    @staticmethod
    def join(sep, items):
        bs = [x.encode("utf-8") for x in items]
        keep = [ffi.from_buffer(x) for x in bs]
        arr = ffi.new("ck_string[]", max(1, len(bs)))
        for i, (x, p) in enumerate(zip(bs, keep)):
            arr[i].begin = ffi.cast("char *", p)
            arr[i].end = ffi.cast("char *", p) + len(x)
        sb = sep.encode("utf-8")
        out = ffi.new("ck_string *")
        with Arena() as mb:
            check(lib.ck_str_join(mb, sb, len(sb), arr, len(bs), out))
            return _text(out)

    @staticmethod
    def slice(s, start, stop, step):
        none, lo = INT64_MIN, -INT64_MAX  # INT64_MIN is None: real bounds stop above it
        return C.build(lib.ck_str_slice, s, none if start is None else max(lo, clamp(start)),
                       none if stop is None else max(lo, clamp(stop)),
                       1 if step is None else clamp(step))

    @staticmethod
    def getitem(s, i):
        b = s.encode("utf-8")
        out = ffi.new("ck_str_span *")
        check(lib.ck_str_getitem(b, len(b), clamp(i), out))
        return _view(b, out[0])


def _str_arg(x) -> bool:
    return isinstance(x, str)


def _int_arg(x) -> bool:
    return isinstance(x, int) or hasattr(x, "__index__")


def _bounds(args):
    """start, end of find/count/startswith (None allowed) as ints."""
    out = []
    for a, d in zip(args, (0, INT64_MAX)):
        out.append(d if a is None else a.__index__())
    while len(out) < 2:
        out.append((0, INT64_MAX)[len(out)])
    return out


class CStr(str):
    """str whose methods are the C library's (types checked by str first)."""

    def _fallback(self, name, *args, **kw):
        return getattr(str, name)(self, *args, **kw)

    def lower(self):
        return C.lower(self)

    def upper(self):
        return C.upper(self)

    def casefold(self):
        return C.casefold(self)

    def title(self):
        return C.title(self)

    def capitalize(self):
        return C.capitalize(self)

    def swapcase(self):
        return C.swapcase(self)

    for _name in ("isdigit", "isdecimal", "isnumeric", "isalpha", "isalnum", "isspace",
                  "islower", "isupper", "istitle", "isascii", "isidentifier"):
        locals()[_name] = (lambda name: lambda self: C.pred(name, self))(_name)

    def split(self, sep=None, maxsplit=-1):
        if (sep is not None and not _str_arg(sep)) or not _int_arg(maxsplit):
            return self._fallback("split", sep, maxsplit)
        return C.split(self, sep, maxsplit.__index__())

    def rsplit(self, sep=None, maxsplit=-1):
        if (sep is not None and not _str_arg(sep)) or not _int_arg(maxsplit):
            return self._fallback("rsplit", sep, maxsplit)
        return C.rsplit(self, sep, maxsplit.__index__())

    def splitlines(self, keepends=False):
        if not _int_arg(keepends):
            return self._fallback("splitlines", keepends)
        return C.splitlines(self, keepends)

    def _search(self, name, sub, *args):
        if not _str_arg(sub) or len(args) > 2 or not all(a is None or _int_arg(a) for a in args):
            return self._fallback(name, sub, *args)
        return _bounds(args)

    def find(self, sub, *args):
        b = self._search("find", sub, *args)
        return b if not isinstance(b, list) else C.search("find", self, sub, *b)

    def rfind(self, sub, *args):
        b = self._search("rfind", sub, *args)
        return b if not isinstance(b, list) else C.search("rfind", self, sub, *b)

    def count(self, sub, *args):
        b = self._search("count", sub, *args)
        return b if not isinstance(b, list) else C.search("count", self, sub, *b)

    def index(self, sub, *args):
        b = self._search("index", sub, *args)
        return b if not isinstance(b, list) else C.index("index", self, sub, *b)

    def rindex(self, sub, *args):
        b = self._search("rindex", sub, *args)
        return b if not isinstance(b, list) else C.index("rindex", self, sub, *b)

    def _affix(self, name, affix, *args):
        if len(args) > 2 or not all(a is None or _int_arg(a) for a in args):
            return self._fallback(name, affix, *args)
        if isinstance(affix, tuple) and all(_str_arg(a) for a in affix):
            return any(C.search(name, self, a, *_bounds(args)) for a in affix)
        if not _str_arg(affix):
            return self._fallback(name, affix, *args)
        return C.search(name, self, affix, *_bounds(args))

    def startswith(self, prefix, *args):
        return self._affix("startswith", prefix, *args)

    def endswith(self, suffix, *args):
        return self._affix("endswith", suffix, *args)

    def __contains__(self, sub):
        if not _str_arg(sub):
            return str.__contains__(self, sub)
        b, sb = self.encode("utf-8"), sub.encode("utf-8")
        return bool(lib.ck_str_contains(b, len(b), sb, len(sb)))

    def partition(self, sep):
        if not _str_arg(sep):
            return self._fallback("partition", sep)
        return C.partition("partition", self, sep)

    def rpartition(self, sep):
        if not _str_arg(sep):
            return self._fallback("rpartition", sep)
        return C.partition("rpartition", self, sep)

    def _strip(self, name, which, chars=None):
        if chars is not None and not _str_arg(chars):
            return self._fallback(name, chars)
        return C.strip(self, chars, which)

    def strip(self, chars=None):
        return self._strip("strip", 3, chars)

    def lstrip(self, chars=None):
        return self._strip("lstrip", 1, chars)

    def rstrip(self, chars=None):
        return self._strip("rstrip", 2, chars)

    def removeprefix(self, prefix):
        if not _str_arg(prefix):
            return self._fallback("removeprefix", prefix)
        return C.remove("removeprefix", self, prefix)

    def removesuffix(self, suffix):
        if not _str_arg(suffix):
            return self._fallback("removesuffix", suffix)
        return C.remove("removesuffix", self, suffix)

    def replace(self, old, new, count=-1):
        if not _str_arg(old) or not _str_arg(new) or not _int_arg(count):
            return self._fallback("replace", old, new, count)
        return C.replace(self, old, new, count.__index__())

    def join(self, iterable):
        items = list(iterable) if not isinstance(iterable, (list, tuple)) else iterable
        if not all(_str_arg(x) for x in items):
            return self._fallback("join", items)
        return C.join(self, items)

    def _pad(self, name, width, fill=" "):
        if not _int_arg(width) or not _str_arg(fill):
            return self._fallback(name, width, fill)
        fb = fill.encode("utf-8")
        align = {"ljust": 1, "rjust": 2, "center": 3}[name]
        return C.build(lib.ck_str_pad, self, clamp(width.__index__()), fb, len(fb), align)

    def ljust(self, width, fill=" "):
        return self._pad("ljust", width, fill)

    def rjust(self, width, fill=" "):
        return self._pad("rjust", width, fill)

    def center(self, width, fill=" "):
        return self._pad("center", width, fill)

    def zfill(self, width):
        if not _int_arg(width):
            return self._fallback("zfill", width)
        return C.build(lib.ck_str_zfill, self, clamp(width.__index__()))

    def expandtabs(self, tabsize=8):
        if not _int_arg(tabsize):
            return self._fallback("expandtabs", tabsize)
        return C.build(lib.ck_str_expandtabs, self, clamp(tabsize.__index__()))

    def __mul__(self, n):
        if not _int_arg(n):
            return str.__mul__(self, n)
        return C.build(lib.ck_str_repeat, self, clamp(n.__index__()))

    __rmul__ = __mul__

    def __getitem__(self, key):
        if isinstance(key, slice):
            if not all(x is None or _int_arg(x) for x in (key.start, key.stop, key.step)):
                return str.__getitem__(self, key)
            idx = lambda x: None if x is None else x.__index__()  # noqa: E731
            return C.slice(self, idx(key.start), idx(key.stop), idx(key.step))
        if not _int_arg(key):  # str's own TypeError, naming the key's type as str would
            return str.__getitem__(self, str(key) if isinstance(key, str) else key)
        return C.getitem(self, key.__index__())

    def __hash__(self):
        return str.__hash__(self)

