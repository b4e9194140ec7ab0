"""String arguments in device C: what the emitter does with ``str`` values.

A string argument of a jitted function on a device (a row of a
:class:`~ckernels.device.varlen.DeviceVarArray` of strings, Arrow's layout) is
the ``unicode_type`` the CPU function sees; in C a view of its UTF-8 bytes in
the device buffer::

    typedef struct { __global const uchar *p; long n; } ck_str_t;

``s[i]`` is a view too (one code point of ``s``, nothing copied).  A string
literal is a program constant (OpenCL ``__constant``, CUDA ``__device__``),
used where it is used, never a variable.  The operations are the functions of
``ckernel/utf8_view.h`` (installed with the package, placed in front of the
program once and instantiated per pair of address spaces): ``len(s)`` (code
points), ``s[i]`` (``IndexError("string index out of range")`` as on the
CPU), ``ord(c)``, ``==``/``!=``/``<``/``<=``/``>``/``>=`` between strings,
``sub in s``, ``s.find(sub[, start[, end]])``, ``s.startswith(p[, start[,
end]])``, ``s.endswith(...)``, ``s.strip([chars])``/``lstrip``/``rstrip`` (views of
``s``), ``s.split()``/``rsplit()``/``splitlines()`` (lazy lists of views).  A row of strings (a ``var * string`` argument) is typed
as Numba's ``List(unicode_type)`` and in C ``ck_strlist_t`` (pointers to the
row's ``n + 1`` string offsets and to the bytes): ``len(row)``, ``row[i]``,
``for s in row``.  Everything else on strings (string results, other methods,
iteration over a string) is the emitter's one-line ``NotSupportedError``.
"""

from __future__ import annotations

import functools
import hashlib
import operator
import os

from .numba_types import _unlit

_HEADER = "ckernel/utf8_view.h"
STR_T = "ck_str_t"
_CMP = {operator.eq: "== 0", operator.ne: "!= 0", operator.lt: "< 0", operator.le: "<= 0",
        operator.gt: "> 0", operator.ge: ">= 0"}


@functools.lru_cache(maxsize=None)
def installed_header(name: str) -> str:
    """The text of ``ckernel/<name>`` as installed with the package (the
    headers the emitter places in front of a program: ``utf8_view.h`` here,
    ``format_view.h`` in :mod:`.formatting`)."""
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), "include", "ckernel", name)
    with open(path, encoding="utf-8") as f:
        return f.read()


def utf8_view_h() -> str:
    """The text of ``ckernel/utf8_view.h`` as installed with the package."""
    return installed_header("utf8_view.h")


def is_str(t) -> bool:
    """A string, or an optional one (``?string`` arguments: read as a string
    after the presence check, :func:`operand`)."""
    from numba.core import types
    if isinstance(t, types.Optional):
        t = t.type
    return isinstance(t, (types.UnicodeType, types.StringLiteral))


def c_type(fe) -> str:
    """``ck_str_t``, with the header's functions, declared on first use."""
    d = fe.d
    prog = fe.prog
    if _HEADER not in prog.helpers:
        g = d.global_space
        c = "__constant" if d.global_space else ""
        prog.helpers[_HEADER] = (
            f"#define CK_SV_FN {d.function_prefix}\n#define CK_SV_I64 {d.int64}\n"
            f"#define CK_SV_U8 {d.uint8}\n{utf8_view_h()}\n"
            f"typedef struct {{ {d.pointer(d.uint8, True)}p; {d.int64} n; }} {STR_T};\n"
            f"CK_UTF8_VIEW_ONE(g, {g})\nCK_UTF8_VIEW_ONE(c, {c})\n"
            f"CK_UTF8_VIEW_TWO(gg, g, {g}, g, {g})\nCK_UTF8_VIEW_TWO(gc, g, {g}, c, {c})\n"
            f"CK_UTF8_VIEW_TWO(cg, c, {c}, g, {g})\nCK_UTF8_VIEW_TWO(cc, c, {c}, c, {c})\n")
    return STR_T


def _literal(fe, value: str) -> tuple[str, str]:
    """A string constant of the program: (array name, byte length)."""
    d = fe.d
    c_type(fe)
    data = value.encode("utf-8")
    name = "ck_strlit_" + hashlib.sha1(data).hexdigest()[:12]
    space = "__constant" if d.global_space else "__device__"
    body = ", ".join(str(b) for b in data) or "0"
    fe.prog.helper(name, f"{space} const {d.uint8} {name}[] = {{{body}}};\n")
    return name, f"{len(data)}{d.int64_suffix}"


def operand(fe, var, loc, built_ok=False) -> tuple[str, str, str]:
    """A string operand: (address space suffix ``g``/``c``, pointer, length).
    Text built by the function is refused unless ``built_ok`` (its bytes are
    only written, in the writing pass: :mod:`.string_results`)."""
    from numba.core import types
    t = fe.tyof(var)
    if not built_ok and fe.string_built(var):
        raise fe.fail("reading a string built in the function on a device (built text "
                      "is only concatenated, repeated or returned: apply the operation to an "
                      "argument or a slice of one)", loc)
    if isinstance(t, types.StringLiteral):
        name, n = _literal(fe, t.literal_value)
        return "c", name, n
    v = fe.use(var, loc)
    if isinstance(t, types.Optional):   # None raises Numba's TypeError first
        v = fe.cast(v, t, t.type)
    return "g", f"{v}.p", f"{v}.n"


def _receiver(fe, func_var):
    """The string a bound method (``s.find``) was taken from."""
    from numba.core import ir
    defn = fe.tir.func_ir.get_definition(func_var)
    if isinstance(defn, ir.Expr) and defn.op == "getattr":
        return defn.value
    return None


def binop(fe, dst, tt, fn, lhs, rhs, loc) -> list[str] | None:
    """Comparisons and ``in`` with string operands; None when neither operand
    is a string."""
    if not (is_str(fe.tyof(lhs)) or is_str(fe.tyof(rhs))):
        return None
    if fn is operator.contains:       # lhs: the container (Numba's order)
        if not (is_str(fe.tyof(lhs)) and is_str(fe.tyof(rhs))):
            raise fe.fail("'in' between a string and a non-string", loc)
        sa, pa, na = operand(fe, lhs, loc)
        sb, pb, nb = operand(fe, rhs, loc)
        return [f"{dst} = ck_sv_contains_{sa}{sb}({pa}, {na}, {pb}, {nb});"]
    rel = _CMP.get(fn)
    if rel is None or not (is_str(fe.tyof(lhs)) and is_str(fe.tyof(rhs))):
        name = getattr(fn, "__name__", fn)
        raise fe.fail(f"operator {name} on {_unlit(fe.tyof(lhs))} and "
                      f"{_unlit(fe.tyof(rhs))} (string results are built on the CPU)", loc)
    sa, pa, na = operand(fe, lhs, loc)
    sb, pb, nb = operand(fe, rhs, loc)
    return [f"{dst} = (ck_sv_cmp_{sa}{sb}({pa}, {na}, {pb}, {nb}) {rel});"]


def getitem(fe, dst, tt, e, loc) -> list[str] | None:
    """``s[i]`` of a string with an integer index: a view of one code point."""
    from numba.core import types
    base = e.value
    if not is_str(fe.tyof(base)):
        return None
    if e.op == "static_getitem":
        idx = e.index if isinstance(e.index, int) else None
        if idx is None and e.index_var is not None and isinstance(
                _unlit(fe.tyof(e.index_var)), types.Integer):
            idx_c = fe.use_as(e.index_var, types.int64, loc)
        elif idx is not None:
            idx_c = fe.d.int_literal(idx, types.int64)
        else:
            raise fe.fail("slicing strings on a device (string results are built on "
                          "the CPU)", loc)
    else:
        if not isinstance(_unlit(fe.tyof(e.index)), types.Integer):
            raise fe.fail("slicing strings on a device (string results are built on "
                          "the CPU)", loc)
        idx_c = fe.use_as(e.index, types.int64, loc)
    s, p, n = operand(fe, base, loc)
    if s != "g":
        raise fe.fail("indexing a string constant", loc)
    code = fe.prog.error_code(IndexError, ("string index out of range",))
    i64 = fe.d.int64
    return [f"{{ {i64} ck_o, ck_l;",
            f"  if (!ck_sv_getitem_g({p}, {n}, {idx_c}, &ck_o, &ck_l)) {fe.raise_code(code)}",
            f"  {dst}.p = {p} + ck_o; {dst}.n = ck_l; }}"]


def call(fe, dst, tt, e, fnty, sig, loc) -> list[str] | None:
    """``len(s)``, ``ord(c)`` and the string methods; None when the call is
    not about strings."""
    from numba.core import types
    args = e.args
    key = getattr(fnty, "typing_key", None)
    got = list_len(fe, dst, tt, e, fnty, loc)
    if got is not None:
        return got
    if key is len and len(args) == 1 and is_str(fe.tyof(args[0])):
        s, p, n = operand(fe, args[0], loc)
        return [f"{dst} = {fe.cast(f'ck_sv_len_{s}({p}, {n})', types.int64, tt)};"]
    if key is ord and len(args) == 1 and is_str(fe.tyof(args[0])):
        s, p, n = operand(fe, args[0], loc)
        code = fe.prog.error_code(TypeError, ("ord() expected a character",))
        i64 = fe.d.int64
        return [f"{{ {i64} ck_c = ck_sv_ord_{s}({p}, {n});",
                f"  if (ck_c < 0) {fe.raise_code(code)}",
                f"  {dst} = {fe.cast('ck_c', types.int64, tt)}; }}"]
    if not isinstance(fnty, types.BoundFunction) or not is_str(fnty.this):
        return None     # float("inf") and the like: the emitter's; others refused there
    tk = fnty.typing_key
    method = tk[-1] if isinstance(tk, tuple) else str(tk).rsplit(".", 1)[-1]
    recv = _receiver(fe, e.func)
    if recv is None:
        raise fe.fail(f"str.{method}", loc)
    if method in ("strip", "lstrip", "rstrip"):
        return _strip(fe, dst, method, recv, args, loc)
    if method in ("split", "rsplit", "splitlines"):
        return split(fe, dst, recv, args, loc, method)
    if method not in ("find", "startswith", "endswith") or not 1 <= len(args) <= 3:
        raise fe.fail(f"str.{method}() on a device", loc)
    if not is_str(fe.tyof(args[0])):
        raise fe.fail(f"str.{method}() with a {fe.tyof(args[0])} argument", loc)
    sa, pa, na = operand(fe, recv, loc)
    sb, pb, nb = operand(fe, args[1 - 1], loc)
    bounds = []
    for k, default in ((1, "0"), (2, None)):
        if len(args) > k and not isinstance(fe.tyof(args[k]), (types.NoneType, types.Omitted)):
            if not isinstance(_unlit(fe.tyof(args[k])), types.Integer):
                raise fe.fail(f"str.{method}() with a {fe.tyof(args[k])} bound", loc)
            bounds.append(fe.use_as(args[k], types.int64, loc))
        else:
            bounds.append(default if default is not None else na)
    r = f"ck_sv_{method}_{sa}{sb}({pa}, {na}, {pb}, {nb}, {bounds[0]}, {bounds[1]})"
    return [f"{dst} = {fe.cast(r, sig.return_type, tt)};"]


def _strip(fe, dst, method, recv, args, loc) -> list[str]:
    """``s.strip([chars])``, ``lstrip``, ``rstrip``: a view of ``s`` (no
    copy; Python's whitespace without ``chars``)."""
    from numba.core import types
    sa, pa, na = operand(fe, recv, loc)
    if sa != "g":
        raise fe.fail(f"str.{method}() of a string constant", loc)
    left, right = int(method != "rstrip"), int(method != "lstrip")
    i64 = fe.d.int64
    chars = args[0] if args and not isinstance(fe.tyof(args[0]), (
        types.NoneType, types.Omitted)) else None
    if len(args) > 1 or (chars is not None and not is_str(fe.tyof(chars))):
        raise fe.fail(f"str.{method}() with these arguments", loc)
    if chars is None:
        call = f"ck_sv_strip_g({pa}, {na}, {left}, {right}, &ck_a, &ck_b);"
    else:
        sb, pb, nb = operand(fe, chars, loc)
        call = f"ck_sv_stripc_g{sb}({pa}, {na}, {pb}, {nb}, {left}, {right}, &ck_a, &ck_b);"
    return [f"{{ {i64} ck_a, ck_b; {call}",
            f"  {dst}.p = {pa} + ck_a; {dst}.n = ck_b - ck_a; }}"]


# ---- a row of strings (``var * string``): a list of views --------------------------------
LIST_T = "ck_strlist_t"
ITER_T = "ck_strlist_iter_t"
PAIR_T = "ck_str_pair_t"


def is_list(t) -> bool:
    from numba.core import types
    return isinstance(t, types.List) and isinstance(t.dtype, types.UnicodeType)


def list_c_type(fe, t) -> str | None:
    """The C types of a row of strings (``List(unicode_type)``: the row's
    ``n + 1`` offsets into the data), its iterator and the iterator's
    (string, bool) pair; None for other types."""
    from numba.core import types
    d = fe.d
    if is_list(t):
        c_type(fe)
        return fe.prog.helper(LIST_T, _list_c(fe))
    if isinstance(t, types.ListIter) and is_list(t.container):
        list_c_type(fe, t.container)
        return ITER_T
    if isinstance(t, types.Pair) and isinstance(t.first_type, types.UnicodeType):
        c_type(fe)
        return fe.prog.helper(PAIR_T, f"typedef struct {{ {STR_T} first; bool second; }} "
                                      f"{PAIR_T};\n")
    return None


def _list_c(fe) -> str:
    """``ck_strlist_t``: a row of strings (``o``: its ``n + 1`` offsets into
    ``d``) or the pieces of ``d[:dn].split(sep, mx)`` (``o`` NULL; ``sn < 0``:
    split on whitespace, ``-2``: ``splitlines`` (``ke``: keepends); a literal
    separator is held in ``sc``, an argument's at ``sp``; ``n``: the count of
    pieces; ``rsplit``: ``r0 >= 0`` is the end of its first piece, the
    remainder kept whole, and ``rg`` matches the separator from the right),
    with its iterator and ``ck_strlist_next`` (the next string: a view)."""
    d = fe.d
    i64, u8, fn = d.int64, d.uint8, d.function_prefix
    gi, gu = d.pointer(i64, True), d.pointer(u8, True)
    return (
        f"typedef struct {{ {gi}o; {gu}d; {i64} n; {i64} dn; {gu}sp; {i64} sn; {i64} mx; "
        f"int lit; {u8} sc[{SEP_MAX}]; {i64} r0; int rg; int ke; }} {LIST_T};\n"
        f"typedef struct {{ {LIST_T} l; {i64} i; {i64} pos; }} {ITER_T};\n"
        # the separator at byte j?
        f"{fn} int ck_split_at(const {LIST_T} *l, {i64} j) {{\n"
        f"  {i64} t = 0;\n"
        f"  while (t < l->sn && l->d[j + t] == (l->lit ? l->sc[t] : l->sp[t])) t++;\n"
        f"  return t == l->sn;\n}}\n"
        # the bytes of a line boundary of str.splitlines at byte j (0: none)
        f"{fn} int ck_split_lb(const {LIST_T} *l, {i64} j) {{\n"
        f"  {u8} c = l->d[j];\n"
        f"  if (c == 13) return j + 1 < l->dn && l->d[j + 1] == 10 ? 2 : 1;\n"
        f"  if ((c >= 10 && c <= 12) || (c >= 28 && c <= 30)) return 1;\n"
        f"  if (c == 0xC2 && j + 1 < l->dn && l->d[j + 1] == 0x85) return 2;\n"
        f"  if (c == 0xE2 && j + 2 < l->dn && l->d[j + 1] == 0x80 && "
        f"(l->d[j + 2] == 0xA8 || l->d[j + 2] == 0xA9)) return 3;\n"
        f"  return 0;\n}}\n"
        # the next piece of a split from byte *pos (*done pieces made): [*a, *b)
        f"{fn} int ck_split_next(const {LIST_T} *l, {i64} *pos, {i64} *done, {i64} *a, "
        f"{i64} *b) {{\n"
        f"  {i64} i = *pos, n = l->dn; int w;\n"
        f"  if (l->r0 >= 0 && *done == 0) {{\n"
        f"    *a = 0; *b = l->r0; *pos = l->sn < 0 ? l->r0 : l->r0 + l->sn; *done = 1; "
        f"return 1;\n"
        f"  }}\n"
        f"  if (l->sn == -2) {{\n"
        f"    if (i >= n) return 0;\n"
        f"    {i64} j = i; w = 0;\n"
        f"    while (j < n && (w = ck_split_lb(l, j)) == 0) j++;\n"
        f"    *a = i; *b = l->ke ? j + w : j; *pos = j + w; *done += 1; return 1;\n"
        f"  }}\n"
        f"  if (l->sn < 0) {{\n"
        f"    while (i < n && (w = ck_sv_space_g(l->d, n, i)) > 0) i += w;\n"
        f"    if (i >= n) {{ *pos = n; return 0; }}\n"
        f"    {i64} j = n;\n"
        f"    if (l->mx < 0 || *done < l->mx) {{ j = i; while (j < n && ck_sv_space_g(l->d, n, j) "
        f"== 0) j++; }}\n"
        f"    *a = i; *b = j; *pos = j; *done += 1; return 1;\n"
        f"  }}\n"
        f"  if (i > n) return 0;\n"
        # rsplit of a separator that overlaps itself: the leftmost match of the
        # scan from the right (its matches in [i, n) are those of the whole text)
        f"  if (l->rg) {{\n"
        f"    {i64} f = -1, j = n - l->sn;\n"
        f"    while (j >= i) {{ if (ck_split_at(l, j)) {{ f = j; j -= l->sn; }} else j--; }}\n"
        f"    if (f >= 0) {{ *a = i; *b = f; *pos = f + l->sn; *done += 1; return 1; }}\n"
        f"  }} else if (l->mx < 0 || *done < l->mx) {{\n"
        f"    for ({i64} j = i; j + l->sn <= n; j++) {{\n"
        f"      if (ck_split_at(l, j)) {{ *a = i; *b = j; *pos = j + l->sn; *done += 1; "
        f"return 1; }}\n"
        f"    }}\n"
        f"  }}\n"
        f"  *a = i; *b = n; *pos = n + 1; *done += 1; return 1;\n"
        f"}}\n"
        # the pieces of s.rsplit(sep, mx) from those of s.split(sep) (*l with mx -1,
        # count counted): r0, rg and the count
        f"{fn} void ck_rsplit_init({LIST_T} *l, {i64} mx) {{\n"
        f"  {i64} n = l->dn;\n"
        f"  if (l->sn < 0) {{\n"
        f"    if (mx < 0 || l->n <= mx) return;\n"
        f"    {i64} p = 0, k = 0, a = 0, b = 0;\n"
        f"    while (k < l->n - mx) ck_split_next(l, &p, &k, &a, &b);\n"
        f"    l->r0 = b; l->n = mx + 1; return;\n"
        f"  }}\n"
        f"  for ({i64} t = 1; t < l->sn; t++) {{\n"
        f"    {i64} u = 0; while (u < t && (l->lit ? l->sc[u] == l->sc[l->sn - t + u] : "
        f"l->sp[u] == l->sp[l->sn - t + u])) u++;\n"
        f"    if (u == t) {{ l->rg = 1; break; }}\n"
        f"  }}\n"
        f"  if (mx == 0) {{ l->r0 = n; l->n = 1; return; }}\n"
        f"  {i64} cnt = 0, j = n - l->sn, at = -1;\n"
        f"  while (j >= 0) {{\n"
        f"    if (!ck_split_at(l, j)) {{ j--; continue; }}\n"
        f"    if (mx >= 0 && cnt == mx) {{ l->r0 = at; l->n = mx + 1; return; }}\n"
        f"    cnt++; at = j; j -= l->sn;\n"
        f"  }}\n"
        f"  l->n = cnt + 1;\n"
        f"}}\n"
        f"{fn} int ck_strlist_next({ITER_T} *it, {STR_T} *s) {{\n"
        f"  if (it->l.o) {{\n"
        f"    if (it->i >= it->l.n) return 0;\n"
        f"    s->p = it->l.d + it->l.o[it->i]; s->n = it->l.o[it->i + 1] - it->l.o[it->i];\n"
        f"    it->i += 1; return 1;\n"
        f"  }}\n"
        f"  {i64} a, b;\n"
        f"  if (!ck_split_next(&it->l, &it->pos, &it->i, &a, &b)) return 0;\n"
        f"  s->p = it->l.d + a; s->n = b - a; return 1;\n"
        f"}}\n"
        # l[k] (0 <= k < l.n)
        f"{fn} {STR_T} ck_strlist_at({LIST_T} l, {i64} k) {{\n"
        f"  {ITER_T} it; it.l = l; it.i = 0; it.pos = 0; {STR_T} s; s.p = l.d; s.n = 0;\n"
        f"  if (l.o) {{ s.p = l.d + l.o[k]; s.n = l.o[k + 1] - l.o[k]; return s; }}\n"
        f"  for ({i64} j = 0; j <= k; j++) ck_strlist_next(&it, &s);\n"
        f"  return s;\n"
        f"}}\n")


#: the longest literal separator of ``split`` held in a list's C struct
SEP_MAX = 16


def split(fe, dst, recv, args, loc, method="split") -> list[str]:
    """``s.split([sep[, maxsplit]])``, ``s.rsplit(...)`` and
    ``s.splitlines([keepends])`` of a string argument (or a view of one): the
    pieces as a lazy list of views (``ck_strlist_t`` with ``o`` NULL):
    nothing is copied or allocated; its count is found here (one pass; an
    ``rsplit`` with a ``maxsplit`` also finds where its remainder ends), the
    pieces again by ``for``, indexing (a walk) or ``join``."""
    from numba.core import types
    list_c_type(fe, types.List(types.unicode_type))
    sa, pa, na = operand(fe, recv, loc)
    if sa != "g":
        raise fe.fail(f"str.{method}() of a string constant", loc)
    given = [a for a in args if not isinstance(fe.tyof(a), types.Omitted)]
    most = 1 if method == "splitlines" else 2
    if len(args) > most:
        raise fe.fail(f"str.{method}() with more than {most} arguments", loc)
    i64 = fe.d.int64
    out = [f"{dst}.o = 0; {dst}.d = {pa}; {dst}.dn = {na}; {dst}.mx = -1; "
           f"{dst}.lit = 0; {dst}.sp = {pa}; {dst}.sn = -1; {dst}.r0 = -1; {dst}.rg = 0; "
           f"{dst}.ke = 0;"]
    if method == "splitlines":
        out.append(f"{dst}.sn = -2;")
        if given:
            kt = _unlit(fe.tyof(given[0]))
            if not isinstance(kt, (types.Boolean, types.Integer)):
                raise fe.fail(f"str.splitlines() with a {fe.tyof(given[0])} keepends", loc)
            out.append(f"{dst}.ke = ({fe.use(given[0], loc)}) != 0;")
    sep = args[0] if args and method != "splitlines" and not isinstance(
        fe.tyof(args[0]), (types.NoneType, types.Omitted)) else None
    mx = "-1"
    if method != "splitlines" and len(args) == 2 and \
            not isinstance(fe.tyof(args[1]), types.Omitted):
        if not isinstance(_unlit(fe.tyof(args[1])), types.Integer):
            raise fe.fail(f"str.{method}() with a {fe.tyof(args[1])} maxsplit", loc)
        mx = fe.use_as(args[1], types.int64, loc)
    if method == "split":
        out.append(f"{dst}.mx = {mx};")
    if sep is not None:
        if not is_str(fe.tyof(sep)):
            raise fe.fail(f"str.{method}() with a {fe.tyof(sep)} separator", loc)
        st = fe.tyof(sep)
        if isinstance(st, types.StringLiteral):
            data = st.literal_value.encode("utf-8")
            if len(data) > SEP_MAX:
                raise fe.fail(f"str.{method}() with a literal separator over {SEP_MAX} bytes "
                              "on a device", loc)
            out.append(f"{dst}.lit = 1; {dst}.sn = {len(data)};" + "".join(
                f" {dst}.sc[{j}] = {b};" for j, b in enumerate(data)))
        else:
            ss, ps, ns = operand(fe, sep, loc)
            out.append(f"{dst}.sp = {ps}; {dst}.sn = {ns};")
        code = fe.prog.error_code(ValueError, ("empty separator",))
        out.append(f"if ({dst}.sn == 0) {fe.raise_code(code)}")
    out.append(f"{{ {i64} ck_p = 0, ck_k = 0, ck_a, ck_b; "
               f"while (ck_split_next(&{dst}, &ck_p, &ck_k, &ck_a, &ck_b)) {{}} {dst}.n = ck_k; }}")
    if method == "rsplit":
        out.append(f"ck_rsplit_init(&{dst}, {mx});")
    return out


def list_expr(fe, dst, tt, e, loc) -> list[str] | None:
    """``len(row)``, ``row[i]``, ``for s in row`` over a row of strings; None
    when ``e`` is about something else."""
    from numba.core import types
    op = e.op
    if op == "getiter" and is_list(fe.tyof(e.value)):
        return [f"{dst}.l = {fe.use(e.value, loc)}; {dst}.i = 0; {dst}.pos = 0;"]
    if op == "iternext" and isinstance(fe.tyof(e.value), types.ListIter) and \
            is_list(fe.tyof(e.value).container):
        it = fe.use(e.value, loc)
        return [f"{dst}.second = ck_strlist_next(&{it}, &{dst}.first);"]
    if op in ("pair_first", "pair_second") and isinstance(fe.tyof(e.value), types.Pair) and \
            isinstance(fe.tyof(e.value).first_type, types.UnicodeType):
        field = "first" if op == "pair_first" else "second"
        return [f"{dst} = {fe.use(e.value, loc)}.{field};"]
    if op in ("getitem", "static_getitem") and is_list(fe.tyof(e.value)):
        iv = e.index_var if op == "static_getitem" else e.index
        if iv is None or not isinstance(_unlit(fe.tyof(iv)), types.Integer):
            raise fe.fail("slicing a row of strings on a device", loc)
        x = fe.use(e.value, loc)
        i = fe.use_as(iv, types.int64, loc)
        code = fe.prog.error_code(IndexError, ("index out of range",))
        i64 = fe.d.int64
        return [f"{{ {i64} ck_k = {i} < 0 ? {i} + {x}.n : {i};",
                f"  if (ck_k < 0 || ck_k >= {x}.n) {fe.raise_code(code)}",
                f"  {dst} = ck_strlist_at({x}, ck_k); }}"]
    return None


def list_len(fe, dst, tt, e, fnty, loc) -> list[str] | None:
    from numba.core import types
    key = getattr(fnty, "typing_key", None)
    if key is len and len(e.args) == 1 and is_list(fe.tyof(e.args[0])):
        return [f"{dst} = {fe.cast(fe.use(e.args[0], loc) + '.n', types.int64, tt)};"]
    return None
