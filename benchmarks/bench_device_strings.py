"""Strings and var dims on OpenCL (PoCL on the host's cores) against the CPU.

All in one run, on N rows (1M by default; ``CK_BENCH_DEVSTR_N`` overrides):

- ragged row sums (row lengths uniform in [0, 20], mean 10): the jitted
  ``float64(var * float64)`` on a device ``N * var * float64`` (one work item
  per row, ``jit/device_var.py``) against the same function on the host array
  (the CPU jit, the library's threads) -- goal <= 1.5x;
- moving ``f"item-{i}"`` strings: upload (``ctx.array`` of a host string array:
  one write per Arrow buffer) and download (``.get()``: one read per buffer and a
  zero-copy import) against a host-side copy of the same array (``Array.copy``);
- Arrow's C device interface: ``__arrow_c_device_array__`` of the device
  strings (no copy: a few structs) against the host array's export.

- jitted ``len(s)`` (``int64(string)``, ``ckernel/utf8_view.h`` in the device
  program) over the N device strings against the same function over the host
  strings (the CPU jit) -- goal <= 1.5x.

- ``f"item-{i}"`` (``string(int64)``) built on OpenCL over N int64 (the sizing
  pass, the device scan, the writing pass: ``jit/device_strings.py``) and read
  back (``.get()``) against the CPU jit over the host int64 -- goal <= 2.0x.

- ``str(x) + f"|{x:.2f}"`` (``string(float64)``: ``ckernel/format_view.h`` in
  the device program; Ryu and exact fixed-precision digits) built on OpenCL and
  read back against the CPU jit (``text.h``: Ryu and ``snprintf``).

- ``s.title()`` (``string(string)``: the case tables of ``jit/c_emit/case_map.py``
  in the device program) over the N ``item-{i}`` strings with one Greek word in
  ten, built on OpenCL and read back, against the CPU jit (``ck_str_title``).

- ``out.append(f"{w}-{i}")`` for the words of each string (``var * string(string)``:
  text built in the function appended to a row, sized by the sizing pass, two scans,
  written by the writing pass straight into the row: ``jit/device_split.py``) over
  the same strings, built on OpenCL and read back, against the CPU jit.

- ``out.append(None if x < 0.5 else x * 2.0)`` over the ragged rows (``var *
  ?float64(var * float64)``: the device arena with a presence byte per item,
  compaction of values and bytes, the bytes packed into the child bitmap:
  ``jit/device_append.py``), built on OpenCL and read back, against the CPU jit.

``CK_BENCH_DEVSTR_ONLY=item`` (or ``=append``: the appended-text row; ``=optrows``:
the ``var * ?float64`` rows) measures the ``f"item-{i}"`` row alone (for the issue's 10M
rows on a GPU).  ``ratio X.XXx`` is the device time
over the CPU one (> 1: the device is slower).  Without an OpenCL platform the
script says so and exits 0.  ``CK_BENCH_DEVICE=cuda`` runs the same on a CUDA
GPU (the labels name the device kind).
"""

from __future__ import annotations

import os
import sys

import numpy as np

import ckernels

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import best, report  # noqa: E402

N = int(os.environ.get("CK_BENCH_DEVSTR_N", 1_000_000))


@ckernels.jit("float64(var * float64)")
def row_sum(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i]
    return s


@ckernels.jit("string(int64)")
def item(i):
    return f"item-{i}"


@ckernels.jit("string(float64)")
def ftext(x):
    return str(x) + f"|{x:.2f}"


@ckernels.jit("int64(string)")
def slen(s):
    return len(s)


@ckernels.jit("string(string)")
def titled(s):
    return s.title()


@ckernels.jit("var * string(string)")
def tagged_words(s, out):
    i = 0
    for w in s.split():
        out.append(f"{w}-{i}")
        i += 1


@ckernels.jit("var * ?float64(var * float64)")
def doubled_or_null(r, out):
    for x in r:
        out.append(None if x < 0.5 else x * 2.0)


def option_rows(ctx, dev_name: str, host) -> None:
    dev = ctx.array(host)
    got = doubled_or_null(dev)
    assert got.get().tolist()[-50:] == doubled_or_null(host).tolist()[-50:]
    t_dev = best(lambda: doubled_or_null(dev).get(), reps=5)
    t_cpu = best(lambda: doubled_or_null(host), reps=5)
    report(f"var * ?float64 rows (out.append(None | x)) built on {dev_name} and read back",
           t_dev, "the CPU jit", t_cpu)


def _ragged():
    rng = np.random.default_rng(0)
    lengths = rng.integers(0, 21, N)
    flat = rng.random(int(lengths.sum()))
    rows = np.split(flat, np.cumsum(lengths)[:-1])
    return ckernels.array([r.tolist() for r in rows], type=f"{N} * var * float64")


def append_row(ctx, dev_name: str, words) -> None:
    dw = ctx.array(words)
    assert tagged_words(dw).tolist()[-11:] == tagged_words(words).tolist()[-11:]
    t_dev = best(lambda: tagged_words(dw).get(), reps=5)
    t_cpu = best(lambda: tagged_words(words), reps=5)
    report(f"out.append(f\"{{w}}-{{i}}\") rows built on {dev_name} and read back", t_dev,
           "the CPU jit", t_cpu)


def _words():
    return ckernels.array([f"item-{i}" if i % 10 else f"ΟΔΟΣ σοφία {i}" for i in range(N)])


def item_row(ctx, dev_name: str) -> None:
    idx = np.arange(N, dtype=np.int64)
    didx = ctx.array(idx)
    built = item(didx)
    assert built.tolist()[-3:] == [f"item-{i}" for i in range(N - 3, N)]
    t_dev = best(lambda: item(didx).get(), reps=5)
    t_cpu = best(lambda: item(idx), reps=5)
    report(f"f\"item-{{i}}\" built on {dev_name} and read back", t_dev, "the CPU jit", t_cpu)


def main() -> None:
    kind = os.environ.get("CK_BENCH_DEVICE", "opencl")
    try:
        ctx = ckernels.Context(kind)
    except ckernels.errors.BackendError as exc:
        print(f"bench_device_strings: no {kind} device ({exc}); nothing to measure")
        return
    print(f"bench_device_strings: N = {N:,} on {ctx.describe()}")
    dev_name = {"opencl": "OpenCL", "cuda": "CUDA"}.get(kind, kind)
    if os.environ.get("CK_BENCH_DEVSTR_ONLY") == "item":
        item_row(ctx, dev_name)
        return
    if os.environ.get("CK_BENCH_DEVSTR_ONLY") == "append":
        append_row(ctx, dev_name, _words())
        return
    host = _ragged()
    if os.environ.get("CK_BENCH_DEVSTR_ONLY") == "optrows":
        option_rows(ctx, dev_name, host)
        return
    dev = ctx.array(host)
    want = np.asarray(row_sum(host))
    got = row_sum(dev).get()
    assert np.allclose(got, want), "device row sums differ from the CPU jit"
    t_dev = best(lambda: row_sum(dev).get(), reps=5)
    t_cpu = best(lambda: row_sum(host), reps=5)
    report(f"ragged row sums on {dev_name} (+ result read)", t_dev, "the CPU jit", t_cpu)

    strings = ckernels.array([f"item-{i}" for i in range(N)])
    d = ctx.array(strings)
    assert d[N - 1] == f"item-{N - 1}"
    t_up = best(lambda: ctx.array(strings), reps=5)
    t_copy = best(lambda: strings.copy(), reps=5)
    report("upload N strings (2 writes)", t_up, "host Array.copy", t_copy)
    t_down = best(lambda: d.get(), reps=5)
    report("download N strings (2 reads)", t_down, "host Array.copy", t_copy)
    t_x = best(lambda: d.__arrow_c_device_array__(), reps=5)
    t_hx = best(lambda: strings.__arrow_c_array__(), reps=5)
    report("__arrow_c_device_array__ (no copy)", t_x, "host __arrow_c_array__", t_hx)
    item_row(ctx, dev_name)
    assert slen(d).get().tolist()[-3:] == np.asarray(slen(strings)).tolist()[-3:]
    t_dev = best(lambda: slen(d).get(), reps=5)
    t_cpu = best(lambda: slen(strings), reps=5)
    report(f"jitted len(s) on {dev_name} (+ result read)", t_dev, "the CPU jit", t_cpu)
    x = rng.standard_normal(N) * 10.0 ** rng.integers(-5, 6, N)
    dx = ctx.array(x)
    assert ftext(dx).tolist()[-3:] == [ftext.py_func(v) for v in x[-3:].tolist()]
    t_dev = best(lambda: ftext(dx).get(), reps=5)
    t_cpu = best(lambda: ftext(x), reps=5)
    report(f"str(x) + f\"|{{x:.2f}}\" built on {dev_name} and read back", t_dev, "the CPU jit",
           t_cpu)
    words = _words()
    dw = ctx.array(words)
    assert titled(dw).tolist()[-11:] == [titled.py_func(v) for v in words.tolist()[-11:]]
    t_dev = best(lambda: titled(dw).get(), reps=5)
    t_cpu = best(lambda: titled(words), reps=5)
    report(f"s.title() built on {dev_name} and read back", t_dev, "the CPU jit", t_cpu)
    append_row(ctx, dev_name, words)
    option_rows(ctx, dev_name, host)


if __name__ == "__main__":
    main()
