"""String results in device C: what the emitter does with ``str`` values a
jitted function builds (``s + t``, ``str(i)``, ``f"item-{i}"``, ``s * n``,
``s.replace(a, b)``, ``s.upper()``, ``s.lower()`` and the other case maps,
``sep.join(s.split(...))``)
and with slices.

There is no ``malloc`` on a device.  A function with a ``string`` result is
run twice by its kernels (:mod:`ckernels.jit.device_strings`): a *sizing*
pass and a *writing* pass, from the one emitted function.  Text is written
through two *sinks* (``ck_sink_t {pointer, bytes so far, writing?}``),
parameters of the function: ``ck_res``, the work item's place in the
result's data buffer, and ``ck_scr``, its place in a scratch buffer.  In the
sizing pass the sinks only count (nothing is read back from them); the host
scans the counts into offsets (``ck_device_scan_exclusive_i64``) and
allocates exactly; the writing pass writes the same bytes at those offsets.

* A string built by concatenation (``+``, f-strings: Numba makes them ``+``
  chains of ``format_value`` fields), ``str(int)``, ``str(bool)``, ``s * n``
  or ``replace`` that is used once, as a piece of the next concatenation in
  the same block (its operands unchanged in between), is *fused*: written
  straight into that concatenation, never stored (``f"item-{i}"`` writes
  ``item-`` and the digits, nothing else).
* The built string a ``return`` returns (made in the return's block) is
  written into ``ck_res`` directly: the result, in place.
* Any other built string is written into ``ck_scr`` and is a view
  (``ck_str_t``) of it there; the kernel copies a returned view into place.
* Slices ``s[a:b]`` (step 1) of a string that is not built here are views
  (no copy).
* A function with a ``var * string`` result (its output parameter or its
  returned list, :mod:`.arena`, :mod:`.out_lists`) has only ``ck_scr``: a
  built string appended just after it is built (``out.append(w.upper())``)
  is written into a sink on the row itself (``Builds.row_roots``), where the
  append places it; others go to ``ck_scr`` and the append copies them.

Because the sizing pass cannot read what it does not write, text built in the
function may only be concatenated, repeated or returned; reading it
(``len``, comparisons, ``find``, indexing, slicing, ``replace``/``upper``/
``lower`` of it) is a one-line ``NotSupportedError`` (apply those to the
arguments or slices of them).  ``str(float)`` (Python's shortest repr) and
f-string fields with format specs or conversions (``f"{x:.2f}"``,
``{i:05d}``, ``{s:>10}``) are the C core's formatting compiled into the
program (:mod:`.formatting`, ``ckernel/format_view.h``).  ``upper``/``lower``/
``casefold``/``title``/``capitalize``/``swapcase`` are Python's full Unicode case
mappings, from the C core's tables compiled into the
program (:mod:`.case_map`).
"""

from __future__ import annotations

import operator

from . import case_map as _case_map
from . import formatting as _formatting
from . import strings as _strings
from .numba_types import _unlit

SINK_T = "ck_sink_t"
_SPACES = ("g", "c")


# ---------------------------------------------------------------- C helpers --
def _space(fe, s: str) -> str:
    d = fe.d
    if s == "g":
        return d.global_space
    return "__constant" if d.global_space else ""


def sink_type(fe) -> str:
    """``ck_sink_t`` and its writers of views in either address space."""
    d = fe.d
    prog = fe.prog
    _strings.c_type(fe)
    if SINK_T in prog.helpers:
        return SINK_T
    i64, u64, u8, fn = d.int64, d.uint64, d.uint8, d.function_prefix
    w = d.pointer(u8)
    text = [f"typedef struct {{ {w}p; {i64} n; int w; }} {SINK_T};\n"]
    for s in _SPACES:
        a = _space(fe, s)
        a = f"{a} " if a else ""
        text.append(
            f"{fn} void ck_sk_put_{s}({SINK_T} *k, {a}const {u8} *s, {i64} n) {{\n"
            f"  if (k->w) {{ {w}o = k->p + k->n; for ({i64} i = 0; i < n; i++) o[i] = s[i]; }}\n"
            f"  k->n += n;\n}}\n"
            f"{fn} void ck_sk_rep_{s}({SINK_T} *k, {a}const {u8} *s, {i64} n, {i64} t) {{\n"
            f"  for ({i64} j = 0; j < t; j++) ck_sk_put_{s}(k, s, n);\n}}\n")

    # str() of integers: Python's digits (exact at INT64_MIN)
    text.append(
        f"{fn} void ck_sk_u64({SINK_T} *k, {u64} m, int neg) {{\n"
        f"  {i64} len = 1 + neg; {u64} t = m;\n"
        f"  while (t >= 10) {{ t /= 10; len++; }}\n"
        f"  if (k->w) {{ {w}o = k->p + k->n; {i64} j = len;\n"
        f"    do {{ o[--j] = ({u8})('0' + m % 10); m /= 10; }} while (m);\n"
        f"    if (neg) o[0] = '-'; }}\n"
        f"  k->n += len;\n}}\n"
        f"{fn} void ck_sk_i64({SINK_T} *k, {i64} v) {{\n"
        f"  ck_sk_u64(k, v < 0 ? ({u64})0 - ({u64})v : ({u64})v, v < 0);\n}}\n"
        f"{fn} void ck_sk_bool({SINK_T} *k, bool v) {{\n"
        f"  if (k->w) {{ {w}o = k->p + k->n;\n"
        f"    if (v) {{ o[0] = 'T'; o[1] = 'r'; o[2] = 'u'; o[3] = 'e'; }}\n"
        f"    else {{ o[0] = 'F'; o[1] = 'a'; o[2] = 'l'; o[3] = 's'; o[4] = 'e'; }} }}\n"
        f"  k->n += v ? 4 : 5;\n}}\n")
    prog.helpers[SINK_T] = "".join(text)
    return SINK_T


def _replace_fn(fe, ss, so, sn) -> str:
    """``ck_sk_replace_<ss><so><sn>``: ``s.replace(old, new, count)`` written
    into a sink (s, old, new in address spaces ss, so, sn; Python's rules: an
    empty ``old`` inserts ``new`` before every code point and at the end;
    ``count < 0``: all)."""
    sink_type(fe)
    d = fe.d
    name = f"ck_sk_replace_{ss}{so}{sn}"
    if name in fe.prog.helpers:
        return name
    i64, u8 = d.int64, d.uint8

    def a(s):
        sp = _space(fe, s)
        return f"{sp} " if sp else ""
    fe.prog.helpers[name] = (
        f"{d.function_prefix} void {name}({SINK_T} *k, {a(ss)}const {u8} *s, {i64} n, "
        f"{a(so)}const {u8} *o, {i64} m, {a(sn)}const {u8} *r, {i64} rn, {i64} count) {{\n"
        f"  {i64} i = 0, last = 0, done = 0;\n"
        f"  if (m == 0) {{\n"
        f"    while (i <= n) {{\n"
        f"      if (count >= 0 && done >= count) break;\n"
        f"      ck_sk_put_{sn}(k, r, rn); done++;\n"
        f"      if (i == n) {{ last = n; break; }}\n"
        f"      {i64} j = i + 1; while (j < n && (s[j] & 0xC0) == 0x80) j++;\n"
        f"      ck_sk_put_{ss}(k, s + i, j - i); i = j; last = j;\n"
        f"    }}\n"
        f"    ck_sk_put_{ss}(k, s + last, n - last); return;\n"
        f"  }}\n"
        f"  while (i + m <= n && (count < 0 || done < count)) {{\n"
        f"    {i64} t = 0; while (t < m && s[i + t] == o[t]) t++;\n"
        f"    if (t == m) {{ ck_sk_put_{ss}(k, s + last, i - last); ck_sk_put_{sn}(k, r, rn);\n"
        f"      i += m; last = i; done++; }} else i++;\n"
        f"  }}\n"
        f"  ck_sk_put_{ss}(k, s + last, n - last);\n}}\n")
    return name


# ------------------------------------------------------------------ analysis --
def is_str_type(t) -> bool:
    from numba.core import types
    if isinstance(t, types.Optional):
        t = t.type
    return isinstance(_unlit(t), types.UnicodeType)


def _method(fnty):
    tk = fnty.typing_key
    return tk[-1] if isinstance(tk, tuple) else str(tk).rsplit(".", 1)[-1]


def _build_kind(fe, target, value):
    """What a statement ``target = value`` builds: ``"cat"``, ``"fmt"``
    (str/format of a value), ``"rep"``, ``"replace"``, ``"case"``,
    ``"lit"`` (a literal made a value), or None (not a build)."""
    from numba.core import ir, types
    from ..fstrings import format_value, str_value
    tt = fe.tyof(target)
    if isinstance(value, ir.Expr) and value.op == "call" and is_str_type(tt) and \
            getattr(fe.tyof(value.func), "typing_key", None) is format_value:
        return "fmt"            # typed as a literal when its spec is refused: checked first
    if isinstance(tt, types.StringLiteral) or not is_str_type(tt):
        return None
    if isinstance(value, ir.Const) and isinstance(value.value, str):
        return "lit"            # a literal assigned to a str variable
    if not isinstance(value, ir.Expr):
        return None
    op = value.op
    if op in ("binop", "inplace_binop"):
        fn = value.fn if op == "binop" else value.immutable_fn
        if fn is operator.add:
            return "cat"
        if fn is operator.mul:
            return "rep"
        return None
    if op == "cast" and isinstance(fe.tyof(value.value), types.StringLiteral):
        return "lit"
    if op == "call":
        fnty = fe.tyof(value.func)
        # the typing key: the IR's definitions table keeps the global ``str``
        # that jit.fstrings rewrote into str_value
        if getattr(fnty, "typing_key", None) in (str_value, format_value):
            return "fmt"
        if isinstance(fnty, types.BoundFunction) and _strings.is_str(fnty.this):
            m = _method(fnty)
            if m in _case_map.OPS:
                return "case"
            if m == "replace":
                return "replace"
            if m == "join":
                return "join"
    return None


class Builds:
    """The string builds of one function (see the module docstring):
    ``kinds`` (target name -> kind), ``built`` (names holding built text),
    ``fused`` (built into their one consumer), ``roots`` (written into the
    result in place), ``scratch`` (whether anything goes to ``ck_scr``)."""

    def __init__(self, fe):
        from numba.core import ir
        fir = fe.tir.func_ir
        self.kinds: dict = {}
        defs: dict = {}
        uses: dict = {}
        where: dict = {}
        for label, blk in fir.blocks.items():
            for idx, st in enumerate(blk.body):
                if isinstance(st, ir.Del):
                    continue
                if isinstance(st, ir.Assign):
                    defs.setdefault(st.target.name, []).append((label, idx, st))
                    reads = st.value.list_vars() if isinstance(st.value, ir.Expr) else \
                        ([st.value] if isinstance(st.value, ir.Var) else [])
                    k = _build_kind(fe, st.target, st.value)
                    if k is not None:
                        self.kinds[st.target.name] = k
                        where[st.target.name] = (label, idx, st)
                else:
                    reads = st.list_vars()
                for v in reads:
                    uses.setdefault(v.name, []).append((label, idx, st))
        # names holding built text: builds and copies of them
        built = set(self.kinds)
        changed = True
        while changed:
            changed = False
            for name, ds in defs.items():
                if name in built:
                    continue
                for _, _, st in ds:
                    v = st.value
                    src = v if isinstance(v, ir.Var) else \
                        v.value if isinstance(v, ir.Expr) and v.op == "cast" else None
                    if src is not None and src.name in built:
                        built.add(name)
                        changed = True
                        break
        self.built = built
        self.fused: set = set()
        self.reads: dict = {}       # fused/built name -> names its text reads
        order = sorted(where.items(), key=lambda kv: (kv[1][0], kv[1][1]))
        for name, (label, idx, st) in order:
            kind = self.kinds[name]
            r = set()
            for v in (st.value.list_vars() if isinstance(st.value, ir.Expr) else ()):
                r.add(v.name)
                if v.name in self.fused:
                    r |= self.reads[v.name]
            self.reads[name] = r
            if kind in ("case", "lit") or len(defs.get(name, ())) != 1:
                continue
            us = uses.get(name, [])
            if len(us) != 1:
                continue
            ul, ui, ust = us[0]
            if ul != label or ui <= idx or not isinstance(ust, ir.Assign) or \
                    self.kinds.get(ust.target.name) != "cat":
                continue
            blk = fir.blocks[label].body
            if any(isinstance(s, ir.Assign) and s.target.name in r for s in blk[idx + 1:ui]):
                continue
            self.fused.add(name)
        self.roots: set = set()
        for label, blk in fir.blocks.items():
            body = [s for s in blk.body if not isinstance(s, ir.Del)]
            if not body or not isinstance(body[-1], ir.Return):
                continue
            rv = body[-1].value.name
            ds = defs.get(rv, [])
            if len(ds) != 1 or ds[0][0] != label:
                continue
            st = ds[0][2]
            if self.kinds.get(rv) == "lit":
                self.roots.add(rv)
                continue
            if not (isinstance(st.value, ir.Expr) and st.value.op == "cast"):
                continue
            x = st.value.value.name
            xd = defs.get(x, [])
            if x in self.kinds and x not in self.fused and len(xd) == 1 and xd[0][0] == label \
                    and len(uses.get(x, [])) == 1:
                self.roots.add(x)
        #: built text appended to a row of a ``var * string`` result just
        #: after it is built (name -> the row's IR variable): written
        #: straight into the row's bytes
        self.row_roots: dict = {}
        for name, (label, idx, st) in where.items():
            if name in self.fused or name in self.roots or len(defs.get(name, ())) != 1:
                continue
            recv = _row_append_of(fe, name, uses.get(name, []), label, idx)
            if recv is not None:
                self.row_roots[name] = recv
        self.scratch = any(n not in self.fused and n not in self.roots and
                           n not in self.row_roots for n in self.kinds)


def _row_append_of(fe, name, uses, label, idx):
    """The row (IR variable) ``name`` is appended to, when that append is its
    one use, in its block, with only method lookups between (nothing else
    written into the row in between); else None."""
    from numba.core import ir
    from . import arena as _arena
    if len(uses) != 1:
        return None
    ul, ui, ust = uses[0]
    if ul != label or ui <= idx or not isinstance(ust, ir.Assign) or \
            not isinstance(ust.value, ir.Expr) or ust.value.op != "call" or \
            [a.name for a in ust.value.args] != [name]:
        return None
    fir = fe.tir.func_ir
    defn = fir.get_definition(ust.value.func)
    if not (isinstance(defn, ir.Expr) and defn.op == "getattr" and defn.attr == "append"):
        return None
    recv = defn.value
    ol = getattr(fe, "out_list", None)
    if not (_arena.is_string_builder(fe.tyof(recv)) or (
            ol is not None and recv.name in ol.names and
            _arena.is_string_builder(ol.builder))):
        return None
    for st in fir.blocks[label].body[idx + 1:ui]:
        if isinstance(st, ir.Del):
            continue
        if isinstance(st, ir.Assign) and isinstance(st.value, ir.Expr) and \
                st.value.op == "getattr":
            continue
        return None
    return recv


def builds(fe) -> Builds | None:
    """The function's :class:`Builds` (None where it builds no string)."""
    b = getattr(fe, "_builds", False)
    if b is False:
        b = fe._builds = Builds(fe) if fe.tir.func_ir is not None else None
    return b


def is_built(fe, var) -> bool:
    b = builds(fe)
    return b is not None and var.name in b.built


# ---------------------------------------------------------------- emission --
def _view(fe, var, loc, what="text"):
    """(space, pointer, length) of a string operand that is a view: an
    argument, a slice, a literal, or built text already stored."""
    b = builds(fe)
    if b is not None and var.name in b.fused:
        raise fe.fail(f"{what} of a fused string", loc)
    return _strings.operand(fe, var, loc, built_ok=True)


def _readable(fe, var, loc, what):
    if is_built(fe, var):
        raise fe.fail(f"{what} of a string built in the function on a device (its text "
                      "is only written, in the writing pass: apply it to an argument or a "
                      "slice of one)", loc)
    return _strings.operand(fe, var, loc)


def _pieces(fe, var, loc) -> list[str]:
    """C statements writing the text of ``var`` into the sink ``K``."""
    b = builds(fe)
    if var.name in b.fused:
        return _expr_pieces(fe, _def(fe, var), b.kinds[var.name], loc)
    s, p, n = _view(fe, var, loc)
    return [f"ck_sk_put_{s}(K, {p}, {n});"]


def _def(fe, var):
    return fe.tir.func_ir.get_definition(var)


def _field_parts(fe, e):
    """(value, spec, conversion) of ``str(value)`` or an f-string field
    ``format_value(value, spec, conversion)`` (spec and conversion None when
    empty)."""
    from ..fstrings import constant_text
    if len(e.args) != 3:
        return e.args[0], None, None
    spec = constant_text(fe.tir.func_ir, e.args[1])
    conv = constant_text(fe.tir.func_ir, e.args[2])
    return e.args[0], spec or None, conv or None


def _expr_pieces(fe, e, kind, loc) -> list[str]:
    from numba.core import types
    if kind == "cat":
        lhs, rhs = e.lhs, e.rhs
        if not (is_str_type(fe.tyof(lhs)) and is_str_type(fe.tyof(rhs))):
            raise fe.fail(f"'+' of {_unlit(fe.tyof(lhs))} and {_unlit(fe.tyof(rhs))}", loc)
        return _pieces(fe, lhs, loc) + _pieces(fe, rhs, loc)
    if kind == "lit":
        from numba.core import ir
        if isinstance(e, ir.Const):
            name, n = _strings._literal(fe, e.value)
            return [f"ck_sk_put_c(K, {name}, {n});"]
        s, p, n = _strings.operand(fe, e.value, loc)
        return [f"ck_sk_put_{s}(K, {p}, {n});"]
    if kind == "rep":
        a, t = e.lhs, e.rhs
        if not is_str_type(fe.tyof(a)):
            a, t = t, a
        if not isinstance(_unlit(fe.tyof(t)), types.Integer):
            raise fe.fail(f"'*' of a string and {fe.tyof(t)}", loc)
        s, p, n = _view(fe, a, loc)
        return [f"ck_sk_rep_{s}(K, {p}, {n}, {fe.use_as(t, types.int64, loc)});"]
    if kind == "fmt":
        v, spec, conv = _field_parts(fe, e)
        vt = _unlit(fe.tyof(v))
        if spec is None and conv is None:
            if isinstance(vt, types.Boolean):
                return [f"ck_sk_bool(K, {fe.use(v, loc)});"]
            if isinstance(vt, types.Integer):
                if vt.signed:
                    return [f"ck_sk_i64(K, {fe.use_as(v, types.int64, loc)});"]
                return [f"ck_sk_u64(K, {fe.use_as(v, types.uint64, loc)}, 0);"]
            if is_str_type(vt) or isinstance(fe.tyof(v), types.StringLiteral):
                return _pieces(fe, v, loc)
        if is_str_type(vt) or isinstance(fe.tyof(v), types.StringLiteral):
            if conv not in (None, "s"):
                raise fe.fail(f"the f-string conversion !{conv} of a string (quoting)", loc)
            if spec is None:
                return _pieces(fe, v, loc)
            return _formatting.text(fe, sink_type(fe), *_readable(fe, v, loc, "a format spec"),
                                    spec)
        return _formatting.number(fe, sink_type(fe), v, spec, conv, loc)
    if kind == "replace":
        args = e.args
        if not 2 <= len(args) <= 3:
            raise fe.fail("str.replace() with other than 2 or 3 arguments", loc)
        recv = _strings._receiver(fe, e.func)
        ss, ps, ns = _readable(fe, recv, loc, "str.replace()")
        so, po, no = _readable(fe, args[0], loc, "str.replace()")
        sn, pn, nn = _readable(fe, args[1], loc, "str.replace()")
        count = "-1"
        if len(args) == 3 and not isinstance(fe.tyof(args[2]), (types.Omitted, types.NoneType)):
            if not isinstance(_unlit(fe.tyof(args[2])), types.Integer):
                raise fe.fail(f"str.replace() with a {fe.tyof(args[2])} count", loc)
            count = fe.use_as(args[2], types.int64, loc)
        fn = _replace_fn(fe, ss, so, sn)
        return [f"{fn}(K, {ps}, {ns}, {po}, {no}, {pn}, {nn}, {count});"]
    if kind == "case":
        fnty = fe.tyof(e.func)
        m = _method(fnty)
        if e.args:
            raise fe.fail(f"str.{m}() with arguments", loc)
        recv = _strings._receiver(fe, e.func)
        s, p, n = _readable(fe, recv, loc, f"str.{m}()")
        fn = _case_map.case_fn(fe, s, _space(fe, s))
        return [f"{fn}(K, {p}, {n}, {_case_map.OPS[m]});"]
    if kind == "join":
        if len(e.args) != 1 or not _strings.is_list(fe.tyof(e.args[0])):
            raise fe.fail("str.join() of other than s.split(...) on a device",
                          loc)
        recv = _strings._receiver(fe, e.func)
        ss, ps, ns = _readable(fe, recv, loc, "str.join()")
        it, st = _strings.ITER_T, _strings.STR_T
        return [f"{{ {it} ck_it; ck_it.l = {fe.use(e.args[0], loc)}; ck_it.i = 0; "
                f"ck_it.pos = 0; {st} ck_s; int ck_f = 1;",
                f"  while (ck_strlist_next(&ck_it, &ck_s)) {{ if (!ck_f) "
                f"ck_sk_put_{ss}(K, {ps}, {ns}); ck_f = 0; ck_sk_put_g(K, ck_s.p, ck_s.n); }} }}"]
    raise fe.fail(f"building strings by {kind}", loc)  # pragma: no cover


def assign(fe, target, value, loc) -> list[str] | None:
    """The statement ``target = value`` when it builds a string (None when
    not): nothing for a fused build, else the text written into its sink and
    ``target`` made a view of it."""
    from numba.core import ir, types
    if isinstance(fe.tyof(target), types.SliceType) and isinstance(value, ir.Expr) and \
            value.op == "call":
        return []       # a slice object: read where a string is sliced (slice_view)
    b = builds(fe)
    kind = _build_kind(fe, target, value)
    if b is None or kind is None:
        return None
    if not (fe.builds_strings or fe.builds_rows):
        what = {"cat": "'+' of strings", "rep": "'*' of a string", "fmt": "str()",
                "lit": "a string value", "replace": "str.replace()"}.get(kind)
        if what is None:
            what = f"str.{_method(fe.tyof(value.func))}()"
        raise fe.fail(f"{what} building a string in a function whose result is not a "
                      "string or a row of strings (device code builds text only as its "
                      "result)", loc)
    if isinstance(fe.tyof(target), types.StringLiteral):
        raise fe.fail("an f-string field typed as a constant", loc)
    if target.name in b.fused:
        return []
    sink_type(fe)
    k = "ck_res" if target.name in b.roots else "ck_scr"
    dst = fe.var(target.name)
    i64 = fe.d.int64
    body = _expr_pieces(fe, value, kind, loc)
    row = b.row_roots.get(target.name)
    if row is not None:     # into the row's bytes, where its append puts it
        from .arena import SROW_T
        r = fe.var(row.name)
        lines = ["{ " + f"{SROW_T} *ck_rr = {r}; {SINK_T} ck_rk = {{ ck_rr->d + ck_rr->at, 0, "
                 f"ck_rr->w }}; {SINK_T} *K = &ck_rk; {i64} ck_b = 0;"]
    else:
        lines = ["{ " + f"{SINK_T} *K = {k}; {i64} ck_b = K->n;"]
    lines += ["  " + ln for ln in body]
    if isinstance(fe.tyof(target), types.Optional):     # a literal made a ?string
        lines.append(f"  {dst}.v.p = K->p + ck_b; {dst}.v.n = K->n - ck_b; {dst}.ok = 1; }}")
    else:
        lines.append(f"  {dst}.p = K->p + ck_b; {dst}.n = K->n - ck_b; }}")
    return lines


def slice_view(fe, dst, e, loc) -> list[str] | None:
    """``s[a:b]`` (step 1 or None) of a string view: a view of code points."""
    from numba.core import types
    base = e.value
    idx_var = e.index_var if e.op == "static_getitem" else e.index
    if idx_var is None or not isinstance(_unlit(fe.tyof(idx_var)), types.SliceType):
        return None
    s, p, n = _readable(fe, base, loc, "slicing")
    if s != "g":
        raise fe.fail("slicing a string constant", loc)
    sl = _def(fe, idx_var)
    args = list(getattr(sl, "args", ()))
    if not args or len(args) > 3:
        raise fe.fail("this slice of a string", loc)
    if len(args) == 3 and not isinstance(fe.tyof(args[2]), types.NoneType):
        st = fe.tyof(args[2])
        if not (isinstance(st, types.IntegerLiteral) and st.literal_value == 1):
            raise fe.fail("string slices with a step on a device", loc)
    i64 = fe.d.int64
    lo = args[0] if len(args) >= 2 else None
    hi = args[1] if len(args) >= 2 else args[0]
    out = [f"{{ {i64} ck_L = ck_sv_len_g({p}, {n}), ck_lo = 0, ck_hi = ck_L;"]
    for v, name in ((lo, "ck_lo"), (hi, "ck_hi")):
        if v is None or isinstance(fe.tyof(v), types.NoneType):
            continue
        vt = _unlit(fe.tyof(v))
        if not isinstance(vt.type if isinstance(vt, types.Optional) else vt, types.Integer):
            raise fe.fail(f"a string slice bound of type {fe.tyof(v)}", loc)
        x = fe.use_as(v, types.int64, loc)
        out.append(f"  {name} = {x}; if ({name} < 0) {{ {name} += ck_L; if ({name} < 0) "
                   f"{name} = 0; }} else if ({name} > ck_L) {name} = ck_L;")
    out += ["  if (ck_hi < ck_lo) ck_hi = ck_lo;",
            f"  {{ {i64} ck_a = ck_sv_offset_g({p}, {n}, ck_lo), "
            f"ck_z = ck_sv_offset_g({p}, {n}, ck_hi);",
            f"    {dst}.p = {p} + ck_a; {dst}.n = ck_z - ck_a; }} }}"]
    return out


__all__ = ["SINK_T", "Builds", "builds", "is_built", "assign", "slice_view", "sink_type",
           "is_str_type"]
