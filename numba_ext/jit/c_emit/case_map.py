"""Unicode case mapping in device C: ``s.upper()``, ``s.lower()``,
``s.casefold()``, ``s.title()``, ``s.capitalize()`` and ``s.swapcase()`` of any
text on OpenCL and CUDA, with Python's full mappings (``"ß".upper() ==
"SS"``, ``"ŉ".upper() == "ʼN"``, ``"ǆ".title() == "ǅ"``) and the final sigma
of ``lower`` (``"ΟΔΟΣ".lower() == "οδος"``, also where ``title``,
``capitalize`` and ``swapcase`` lower a capital sigma), the rules of the C
core's ``src/lib/strings/utf8_case.c`` (CPython's ``do_title``,
``do_capitalize``, ``do_swapcase``).

The tables are the C core's: read once per process from its Unicode
records (the generated ``unicode_tables.c``, Python's Unicode version)
through the public ``ck_unicode_flags_range`` (every code point's flags in one
call) and ``ck_unicode_case`` (the mappings of the Cased ones), and cut down to
what case mapping needs, so they fit a device's constant memory (OpenCL
``__constant``, CUDA ``__constant__``: 64 KiB on every device; see
:func:`table_bytes`):

* ``CK_UC_IX1[cp >> 6]``: the block of 64 code points (code points past the
  last block with case data have none);
* ``CK_UC_IX2[(block << 6) | (cp & 63)]``: the record of a code point;
* ``CK_UC_REC[r] = {lower, upper, title, fold, flags}``: a mapping is a delta
  (``cp + delta``) or, with flag ``4 << k`` (k: 0 lower, 1 upper, 2 title,
  3 fold), ``(count << 24) | index`` into ``CK_UC_EXT`` (full mappings of
  several code points); flag 1: Cased, flag 2: Case_Ignorable (the final
  sigma's context), flag 64: Uppercase, flag 128: Lowercase (``swapcase``).

Code points that are not Cased map to themselves in the C core (checked by
``tests/python/device/test_device_case.py`` against CPython for every code
point and mapping), so only Cased ones are asked for their mappings.
"""

from __future__ import annotations

import functools

_HELPER = "ck_uc_tables"
SINK_T = "ck_sink_t"   # the sink of :mod:`.string_results` (declared by the caller)
_SHIFT = 6
_FIELDS = 5     # lower, upper, title, fold, flags
#: the operations of ``case_fn`` (its ``op`` argument)
OPS = {"lower": 0, "upper": 1, "casefold": 2, "title": 3, "capitalize": 4, "swapcase": 5}


@functools.lru_cache(maxsize=None)
def case_tables() -> dict:
    """The compact tables (``ix1``, ``ix2``, ``rec``, ``ext``, ``limit``:
    the first code point without case data after the tables), as NumPy
    arrays and lists."""
    import numpy as np
    from ..._ffi import ffi, lib
    from ..._native import check
    flags = np.zeros(0x110000, np.uint32)
    check(lib.ck_unicode_flags_range(0, 0x110000, ffi.cast(
        "uint32_t *", ffi.from_buffer(flags))))
    cased = (flags & lib.CK_UNICODE_CASED) != 0
    ign = (flags & lib.CK_UNICODE_CASE_IGNORABLE) != 0
    rf = cased.astype(np.int64) | (ign.astype(np.int64) << 1) | \
        (((flags & lib.CK_UNICODE_UPPER) != 0).astype(np.int64) << 6) | \
        (((flags & lib.CK_UNICODE_LOWER) != 0).astype(np.int64) << 7)
    out = ffi.new("uint32_t[3]")
    ext: list[int] = []
    ext_at: dict = {}
    recs: dict = {(0, 0, 0, 0, 0): 0}
    idx = np.nonzero(rf)[0]
    ids = np.zeros(len(idx), np.int64)
    for j, cp in enumerate(idx.tolist()):
        f = int(rf[cp])
        vals = []
        for which, bit in ((lib.CK_CASE_LOWER, 4), (lib.CK_CASE_UPPER, 8),
                           (lib.CK_CASE_TITLE, 16), (lib.CK_CASE_FOLD, 32)):
            if not f & 1:
                vals.append(0)
                continue
            k = lib.ck_unicode_case(cp, which, out)
            seq = tuple(out[i] for i in range(k))
            if k == 1:
                vals.append(seq[0] - cp)
                continue
            if seq not in ext_at:
                ext_at[seq] = len(ext)
                ext.extend(seq)
            vals.append((k << 24) | ext_at[seq])
            f |= bit
        ids[j] = recs.setdefault((*vals, f), len(recs))
    size = 1 << _SHIFT
    limit = (int(idx[-1]) // size + 1) * size
    per = np.zeros(limit, np.int64)
    per[idx] = ids
    blocks, ix1 = np.unique(per.reshape(-1, size), axis=0, return_inverse=True)
    rec = [None] * len(recs)
    for key, r in recs.items():
        rec[r] = key
    return {"ix1": ix1.reshape(-1), "ix2": blocks.reshape(-1), "rec": rec,
            "ext": ext or [0], "limit": limit}


def _width(n: int) -> int:
    return 1 if n <= 256 else 2


def table_bytes() -> int:
    """Bytes of constant memory the tables take in a program."""
    t = case_tables()
    return (_width(len(t["ix2"]) >> _SHIFT) * len(t["ix1"]) + _width(len(t["rec"])) *
            len(t["ix2"]) + 4 * _FIELDS * len(t["rec"]) + 4 * len(t["ext"]))


def _tables_c(fe) -> None:
    prog = fe.prog
    if _HELPER in prog.helpers:
        return
    d = fe.d
    t = case_tables()
    u8, u16, u32, i32 = d.uint8, d.uint16, d.uint32, d.int32
    fn, w = d.function_prefix, d.pointer(d.uint8)
    space = "__constant const" if d.global_space else "__constant__ const"
    t1 = u8 if _width(len(t["ix2"]) >> _SHIFT) == 1 else u16
    t2 = u8 if _width(len(t["rec"])) == 1 else u16

    def arr(ct, name, vals):
        return f"{space} {ct} {name}[{len(vals)}] = {{{','.join(str(v) for v in vals)}}};\n"
    rec = ",".join("{" + ",".join(str(v) for v in r) + "}" for r in t["rec"])
    prog.helpers[_HELPER] = (
        arr(t1, "CK_UC_IX1", t["ix1"].tolist()) + arr(t2, "CK_UC_IX2", t["ix2"].tolist()) +
        f"{space} {i32} CK_UC_REC[{len(t['rec'])}][{_FIELDS}] = {{{rec}}};\n" +
        arr(u32, "CK_UC_EXT", t["ext"]) +
        f"{fn} {u32} ck_uc_at({u32} cp) {{\n"
        f"  if (cp >= {t['limit']}u) return 0;\n"
        f"  return CK_UC_IX2[(({u32})CK_UC_IX1[cp >> {_SHIFT}] << {_SHIFT}) | "
        f"(cp & {(1 << _SHIFT) - 1}u)];\n}}\n"
        # one code point written as UTF-8
        f"{fn} void ck_sk_cp({SINK_T} *k, {u32} c) {{\n"
        f"  int n = c < 0x80u ? 1 : c < 0x800u ? 2 : c < 0x10000u ? 3 : 4;\n"
        f"  if (k->w) {{ {w}o = k->p + k->n;\n"
        f"    if (n == 1) o[0] = ({u8})c;\n"
        f"    else if (n == 2) {{ o[0] = ({u8})(0xC0u | (c >> 6)); "
        f"o[1] = ({u8})(0x80u | (c & 63u)); }}\n"
        f"    else if (n == 3) {{ o[0] = ({u8})(0xE0u | (c >> 12)); "
        f"o[1] = ({u8})(0x80u | ((c >> 6) & 63u)); o[2] = ({u8})(0x80u | (c & 63u)); }}\n"
        f"    else {{ o[0] = ({u8})(0xF0u | (c >> 18)); o[1] = ({u8})(0x80u | ((c >> 12) & 63u));\n"
        f"      o[2] = ({u8})(0x80u | ((c >> 6) & 63u)); o[3] = ({u8})(0x80u | (c & 63u)); }} }}\n"
        f"  k->n += n;\n}}\n"
        # mapping k (0 lower, 1 upper, 2 title, 3 fold) of cp, record r
        f"{fn} void ck_uc_map({SINK_T} *k, {u32} cp, {u32} r, int m) {{\n"
        f"  {i32} v = CK_UC_REC[r][m];\n"
        f"  if (CK_UC_REC[r][4] & (4 << m)) {{\n"
        f"    {u32} cnt = ({u32})v >> 24, x = ({u32})v & 0xFFFFFFu;\n"
        f"    for ({u32} j = 0; j < cnt; j++) ck_sk_cp(k, CK_UC_EXT[x + j]);\n"
        f"  }} else ck_sk_cp(k, ({u32})(({i32})cp + v));\n}}\n")


def case_fn(fe, s: str, space: str) -> str:
    """``ck_sk_ucase_<s>(K, p, n, op)``: ``p[:n].lower()``, ``.upper()``,
    ``.casefold()``, ``.title()``, ``.capitalize()`` or ``.swapcase()`` (op:
    ``OPS[name]``) of valid UTF-8 in address space ``s`` (qualifier ``space``)
    written into the sink ``K`` (``ck_sink_t``, declared by the caller)."""
    _tables_c(fe)
    name = f"ck_sk_ucase_{s}"
    prog = fe.prog
    if name in prog.helpers:
        return name
    d = fe.d
    u8, u32, i32, i64, fn = d.uint8, d.uint32, d.int32, d.int64, d.function_prefix
    a = f"{space} " if space else ""
    prog.helpers[name] = (
        f"{fn} {u32} ck_uc_dec_{s}({a}const {u8} *s, {i64} i, int *len) {{\n"
        f"  {u32} b = s[i];\n"
        f"  if (b < 0x80u) {{ *len = 1; return b; }}\n"
        f"  if (b < 0xE0u) {{ *len = 2; return ((b & 31u) << 6) | (s[i + 1] & 63u); }}\n"
        f"  if (b < 0xF0u) {{ *len = 3; return ((b & 15u) << 12) | ((s[i + 1] & 63u) << 6) | "
        f"(s[i + 2] & 63u); }}\n"
        f"  *len = 4; return ((b & 7u) << 18) | ((s[i + 1] & 63u) << 12) | "
        f"((s[i + 2] & 63u) << 6) | (s[i + 3] & 63u);\n}}\n"
        # is the capital sigma at byte i final (CPython's handle_capital_sigma)?
        f"{fn} int ck_uc_final_{s}({a}const {u8} *s, {i64} n, {i64} i) {{\n"
        f"  {i64} p = i; {u32} c = 0; int found = 0, len;\n"
        f"  while (p > 0) {{\n"
        f"    {i64} q = p - 1; while (q > 0 && (s[q] & 0xC0) == 0x80) q--;\n"
        f"    c = ck_uc_dec_{s}(s, q, &len); p = q;\n"
        f"    if (!(CK_UC_REC[ck_uc_at(c)][4] & 2)) {{ found = 1; break; }}\n"
        f"  }}\n"
        f"  if (!found || !(CK_UC_REC[ck_uc_at(c)][4] & 1)) return 0;\n"
        f"  p = i + 2;\n"
        f"  while (p < n) {{\n"
        f"    c = ck_uc_dec_{s}(s, p, &len); {i32} f = CK_UC_REC[ck_uc_at(c)][4];\n"
        f"    if (!(f & 2)) return !(f & 1);\n"
        f"    p += len;\n"
        f"  }}\n"
        f"  return 1;\n}}\n"
        # op: OPS; pc: the character before is cased (title)
        f"{fn} void {name}({SINK_T} *k, {a}const {u8} *s, {i64} n, int op) {{\n"
        f"  {i64} i = 0; int pc = 0;\n"
        f"  while (i < n) {{\n"
        f"    {u8} b = s[i];\n"
        f"    if (b < 0x80) {{\n"
        f"      int lo = b >= 'a' && b <= 'z', hi = b >= 'A' && b <= 'Z', to;\n"
        f"      if (op == 3) {{ to = pc ? 0 : 1; pc = lo || hi; }}\n"
        f"      else if (op == 4) to = i == 0;\n"
        f"      else if (op == 5) to = lo;\n"
        f"      else to = op == 1;\n"
        f"      if (to ? lo : hi) b ^= 0x20;\n"
        f"      if (k->w) k->p[k->n] = b;\n"
        f"      k->n++; i++; continue;\n"
        f"    }}\n"
        f"    int len; {u32} cp = ck_uc_dec_{s}(s, i, &len), r = ck_uc_at(cp);\n"
        f"    {i32} f = CK_UC_REC[r][4];\n"
        # the mapping: 0..3 as above, 4 the lowercase one with the final sigma, -1 none
        f"    int m = op == 0 ? 4 : op == 1 ? 1 : op == 2 ? 3 : op == 3 ? (pc ? 4 : 2) :\n"
        f"      op == 4 ? (i == 0 ? 2 : 4) : (f & 64) ? 4 : (f & 128) ? 1 : -1;\n"
        f"    pc = f & 1;\n"
        f"    if (m < 0) ck_sk_cp(k, cp);\n"
        f"    else if (m == 4 && cp == 0x3A3u) "
        f"ck_sk_cp(k, ck_uc_final_{s}(s, n, i) ? 0x3C2u : 0x3C3u);\n"
        f"    else ck_uc_map(k, cp, r, m == 4 ? 0 : m);\n"
        f"    i += len;\n"
        f"  }}\n}}\n")
    return name


__all__ = ["OPS", "case_tables", "case_fn", "table_bytes"]
