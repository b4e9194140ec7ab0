"""str methods in jitted code, per row, against the columnar peers.

1M strings (names, emails, comments; half the rows with non-ASCII text),
one library thread.  Each jitted function takes its ``string`` argument as
a UTF-8 view and its methods call the C string library (docs/strings.md);
the peers are the same operation in ``np.strings`` (StringDType),
``pyarrow.compute`` and polars, each on its own representation of the same
data (no conversion timed), except the chains, which run end to end from a
pyarrow column to a pyarrow column.

    CK_NUM_THREADS=1 python benchmarks/bench_str_methods.py   (CK_BENCH_N, CK_BENCH_REPS)
    ... bench_str_methods.py lower title chains   (only these methods / parts)

Ratios are jitted time / the fastest peer's time in the same run (> 1:
slower).  The machine this runs on is shared and loaded: read ratios, not
absolute times.
"""
from __future__ import annotations

import os
import random
import sys

import numpy as np
from _timing import best

import ckernels

N = int(os.environ.get("CK_BENCH_N", 1_000_000))
REPS = int(os.environ.get("CK_BENCH_REPS", 3))

try:
    import pyarrow as pa
    import pyarrow.compute as pc
except ImportError:     # pragma: no cover - optional peer
    pa = pc = None
try:
    import polars as pl
except ImportError:     # pragma: no cover - optional peer
    pl = None


def make_rows(mixed: bool) -> list[str]:
    rng = random.Random(11)
    first = ["alice", "Bob", "carol", "DAVE", "eve", "frank", "grace", "heidi"]
    last = ["smith", "Jones", "miller", "Brown", "davis", "wilson"]
    words = ["the", "quick", "Brown", "fox", "jumps", "over", "lazy", "dog", "42", "data"]
    if mixed:
        first += ["José", "Zoë", "Łukasz", "Ωmega", "東京"]
        last += ["Müller", "Straße", "Ελλάδα", "naïve"]
        words += ["café", "Über", "größe", "ΣΟΦΙΑ", "日本語", "😀"]
    out = []
    for i in range(N):
        pool_f = first if (not mixed or i % 2) else first[-5:]
        pool_l = last if (not mixed or i % 2) else last[-4:]
        pool_w = words if (not mixed or i % 2) else words[-6:] + words[:4]
        k = i % 3
        if k == 0:
            out.append(f"  {rng.choice(pool_f)} {rng.choice(pool_l)} ")
        elif k == 1:
            out.append(f"{rng.choice(pool_f)}.{rng.choice(pool_l)}@Example{i % 7}.COM")
        else:
            out.append(" ".join(rng.choice(pool_w) for _ in range(rng.randint(2, 8))))
    return out


# ---- the jitted functions ----------------------------------------------------
@ckernels.jit("string(string)")
def j_lower(s):
    return s.lower()


@ckernels.jit("string(string)")
def j_upper(s):
    return s.upper()


@ckernels.jit("string(string)")
def j_strip(s):
    return s.strip()


@ckernels.jit("int64(string)")
def j_split_count(s):
    return len(s.split())


@ckernels.jit("int64(string)")
def j_find(s):
    return s.find("@")


@ckernels.jit("string(string)")
def j_replace(s):
    return s.replace("o", "0")


@ckernels.jit("bool(string)")
def j_startswith(s):
    return s.startswith("a")


@ckernels.jit("string(string)")
def j_title(s):
    return s.title()


@ckernels.jit("bool(string)")
def j_isdigit(s):
    return s.isdigit()


@ckernels.jit("string(string)")
def j_clean(s):
    return " ".join(s.split()).title()


@ckernels.jit("string(string)")
def j_domain(e):
    return e[e.find("@") + 1:].lower()


def peers(op):
    """{name: (make_input(rows), fn(input))} of the peers for ``op``."""
    ns = np.strings
    sd = np.dtypes.StringDType()
    np_in = (lambda rows: np.array(rows, dtype=sd))
    pa_in = (lambda rows: pa.array(rows, type=pa.large_string()))
    pl_in = (lambda rows: pl.Series(rows))
    table = {
        "lower": [("np.strings", np_in, ns.lower), ("pyarrow", pa_in, pc.utf8_lower),
                  ("polars", pl_in, lambda s: s.str.to_lowercase())],
        "upper": [("np.strings", np_in, ns.upper), ("pyarrow", pa_in, pc.utf8_upper),
                  ("polars", pl_in, lambda s: s.str.to_uppercase())],
        "strip": [("np.strings", np_in, ns.strip),
                  ("pyarrow", pa_in, pc.utf8_trim_whitespace),
                  ("polars", pl_in, lambda s: s.str.strip_chars())],
        "split (count)": [("pyarrow", pa_in,
                           lambda a: pc.list_value_length(pc.utf8_split_whitespace(a))),
                          ("polars", pl_in,
                           lambda s: s.str.strip_chars().str.split(" ").list.len())],
        "find": [("np.strings", np_in, lambda a: ns.find(a, "@")),
                 ("pyarrow", pa_in, lambda a: pc.find_substring(a, "@")),
                 ("polars", pl_in, lambda s: s.str.find("@", literal=True))],
        "replace": [("np.strings", np_in, lambda a: ns.replace(a, "o", "0")),
                    ("pyarrow", pa_in, lambda a: pc.replace_substring(a, "o", "0")),
                    ("polars", pl_in, lambda s: s.str.replace_all("o", "0", literal=True))],
        "startswith": [("np.strings", np_in, lambda a: ns.startswith(a, "a")),
                       ("pyarrow", pa_in, lambda a: pc.starts_with(a, "a")),
                       ("polars", pl_in, lambda s: s.str.starts_with("a"))],
        "title": [("np.strings", np_in, ns.title), ("pyarrow", pa_in, pc.utf8_title),
                  ("polars", pl_in, lambda s: s.str.to_titlecase())],
        "isdigit": [("np.strings", np_in, ns.isdigit), ("pyarrow", pa_in, pc.utf8_is_digit)],
    }
    return [(n, i, f) for n, i, f in table[op]
            if (n != "pyarrow" or pa is not None) and (n != "polars" or pl is not None)]


OPS = {"lower": j_lower, "upper": j_upper, "strip": j_strip, "split (count)": j_split_count,
       "find": j_find, "replace": j_replace, "startswith": j_startswith, "title": j_title,
       "isdigit": j_isdigit}


def kernels(rows_by_kind, ops) -> None:
    print(f"-- kernels, {N} rows, best of {REPS}: jitted / fastest peer")
    own = {}
    for kind, rows in rows_by_kind.items():
        a = ckernels.array(rows, dtype="string")
        inputs = {}
        for op, f in ops.items():
            t = best(lambda: f(a), REPS)
            own[(kind, op)] = t
            times = {}
            for name, make, fn in peers(op):
                if name not in inputs:
                    inputs[name] = make(rows)
                x = inputs[name]
                times[name] = best(lambda: fn(x), REPS)
            fastest = min(times, key=times.get)
            print(f"{kind:6s} {op:14s} jit {t * 1e3:8.1f} ms  " +
                  "  ".join(f"{n} {v * 1e3:7.1f}" for n, v in times.items()) +
                  f"   ratio {t / times[fastest]:5.2f}x ({fastest})")
    print("-- the same on mixed / on ASCII-only text (jitted)")
    for op in ops:
        print(f"{op:14s} {own[('mixed', op)] / own[('ascii', op)]:5.2f}x")


def chains(rows) -> None:
    print("-- chains end to end, pyarrow column -> pyarrow column: jitted / polars")
    col = pa.array(rows, type=pa.large_string())

    def run(f):
        return pa.array(f(ckernels.from_arrow(col)))

    s = pl.Series(rows) if pl is not None else None
    cases = [
        ('" ".join(s.split()).title()', j_clean,
         lambda: pl.from_arrow(col).str.split(" ").list.eval(
             pl.element().filter(pl.element() != "")).list.join(" ").str.to_titlecase()),
        ('e[e.find("@") + 1:].lower()', j_domain,
         lambda: pl.from_arrow(col).str.split_exact("@", 1).struct.field("field_1")
         .fill_null(pl.from_arrow(col)).str.to_lowercase()),
        ("len(c.split())", j_split_count,
         lambda: pl.from_arrow(col).str.strip_chars().str.split(" ").list.len()),
    ]
    for name, f, peer in cases:
        t = best(lambda: run(f), REPS)
        line = f"{name:30s} jit {t * 1e3:8.1f} ms"
        if s is not None:
            tp = best(peer, REPS)
            line += f"  polars {tp * 1e3:8.1f} ms  ratio {t / tp:5.2f}x"
        print(line)


def handwritten(rows) -> None:
    """len(c.split()) against a numba.njit loop over the Arrow UTF-8 buffer
    (ASCII whitespace only: what a hand-written loop does)."""
    import numba
    col = pa.array(rows, type=pa.large_string())
    _, offs, data = col.buffers()
    offsets = np.frombuffer(offs, dtype=np.int64)[:len(col) + 1]
    text = np.frombuffer(data, dtype=np.uint8)

    @numba.njit(cache=False)
    def count_words(offsets, text, out):
        for i in range(len(offsets) - 1):
            n = 0
            inword = False
            for p in range(offsets[i], offsets[i + 1]):
                c = text[p]
                sp = c == 32 or (c >= 9 and c <= 13)
                if not sp and not inword:
                    n += 1
                inword = not sp
            out[i] = n
        return out

    out = np.empty(len(col), dtype=np.int64)
    a = ckernels.from_arrow(col)
    t = best(lambda: j_split_count(a), REPS)
    th = best(lambda: count_words(offsets, text, out), REPS)
    print(f"-- len(c.split()) jit {t * 1e3:.1f} ms / hand-written numba.njit loop over the "
          f"Arrow buffer {th * 1e3:.1f} ms: ratio {t / th:.2f}x")


def main(args) -> None:
    """``args``: method names of OPS, "chains", "handwritten" (none: all)."""
    rows = {"ascii": make_rows(False), "mixed": make_rows(True)}
    ops = {op: f for op, f in OPS.items() if not args or op in args}
    if ops:
        kernels(rows, ops)
    if pa is not None and (not args or "chains" in args):
        chains(rows["mixed"])
    if pa is not None and (not args or "handwritten" in args):
        handwritten(rows["mixed"])


if __name__ == "__main__":
    main(sys.argv[1:])
