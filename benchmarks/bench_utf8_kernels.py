"""The C string library's kernels (ckernel/utf8.h) against CPython's str
methods on the same text: one C call over one large text (about 8 MB of
names, emails and words; ASCII-only and mixed with non-ASCII), so the cffi
call costs nothing next to the kernel.  The text is UTF-8 bytes for C and a
decoded str for CPython (each in its own representation, no conversion
timed).  This measures the kernels, not jitted code (issue 28 section 3's
per-row benchmarks need the jit wiring).

    python benchmarks/bench_utf8_kernels.py      (CK_BENCH_MB, CK_BENCH_REPS)

Ratios are C time / CPython time in the same run (> 1: slower than CPython).
"""
from __future__ import annotations

import os
import random

from _timing import best, report

from ckernels.lowlevel import ffi, lib

MB = float(os.environ.get("CK_BENCH_MB", 8))


def make_text(mixed: bool) -> str:
    rng = random.Random(7)
    words = ["alice", "bob", "Smith", "mail", "example", "com", "hello", "World", "data",
             "  ", "1234", "the", "quick", "Brown", "fox"]
    if mixed:
        words += ["José", "Müller", "straße", "Ωμέγα", "東京", "naïve", "Ελλάδα", "😀"]
    out, size = [], 0
    while size < MB * 1e6:
        w = rng.choice(words)
        out.append(w)
        size += len(w.encode()) + 1
    return " ".join(out)


def c_build(fn, b, *args):
    out = ffi.new("ck_string *")
    p = ffi.new("ck_memblock **")
    lib.ck_pod_memblock_new(0, p)
    try:
        assert fn(p[0], b, len(b), *args, out) == 0
    finally:
        lib.ck_memblock_decref(p[0])


def c_split_count(b):
    sp, k = ffi.new("ck_str_span **"), ffi.new("int64_t *")
    p = ffi.new("ck_memblock **")
    lib.ck_pod_memblock_new(0, p)
    try:
        assert lib.ck_str_split(p[0], b, len(b), ffi.NULL, 0, -1, sp, k) == 0
    finally:
        lib.ck_memblock_decref(p[0])
    return k[0]


def main() -> None:
    for mixed in (False, True):
        s = make_text(mixed)
        b = s.encode()
        kind = "mixed" if mixed else "ascii"
        print(f"-- {kind}: {len(b) / 1e6:.1f} MB UTF-8, {len(s) / 1e6:.1f} M code points")
        needle = "zebra"  # absent: a full scan
        cases = [
            ("lower", lambda: c_build(lib.ck_str_lower, b), lambda: s.lower()),
            ("upper", lambda: c_build(lib.ck_str_upper, b), lambda: s.upper()),
            ("title", lambda: c_build(lib.ck_str_title, b), lambda: s.title()),
            ("casefold", lambda: c_build(lib.ck_str_casefold, b), lambda: s.casefold()),
            ("split() count", lambda: c_split_count(b), lambda: len(s.split())),
            ("find (absent)", lambda: lib.ck_str_find(b, len(b), needle.encode(), 5, 0, 2**63 - 1),
             lambda: s.find(needle)),
            ("count(' ')", lambda: lib.ck_str_count(b, len(b), b" ", 1, 0, 2**63 - 1),
             lambda: s.count(" ")),
            ("replace('o', '0')", lambda: c_build(lib.ck_str_replace, b, b"o", 1, b"0", 1, -1),
             lambda: s.replace("o", "0")),
            ("validate (bytes.decode)", lambda: lib.ck_utf8_check(b, len(b), ffi.NULL),
             lambda: b.decode()),
        ]
        alnum = s.replace(" ", "").replace("\U0001f600", "")
        ab = alnum.encode()
        cases.append(("isalnum (all)", lambda: lib.ck_str_isalnum(ab, len(ab)),
                      lambda: alnum.isalnum()))
        for name, fc, fp in cases:
            report(f"{kind} {name}", best(fc), "CPython str", best(fp))


if __name__ == "__main__":
    main()
