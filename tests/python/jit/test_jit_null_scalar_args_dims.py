"""Scalar ``?T`` arguments of signatures with dims (docs/nulls.md, "Option
elements under dims"): ``var * ?string(?string)`` in the output-parameter
form crashed the process (the argument was unpacked as Numba's
``Optional(str)`` straight from the ``ck_string`` slot, and a later
argument read its option record), and a list of ``None`` returned beside a
list of optional strings failed to compile (Numba's ``list_to_list``
assertion).  The calls run in a subprocess (a regression would crash it);
the oracle is the same Python function applied to ``to_pylist()``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("pyarrow")

_FUNCS = r'''
def f_out(s, out):                       # the crashing form
    if s is None:
        out.append(None)
        return
    out.append(s)


def f_joined(s, mode):                   # list(none) beside list(?str)
    if mode == 0:
        if s is None:
            return [None, None]
        return [s, None]
    if s is None:
        return [None]
    return [w if w else None for w in s.split(" ")]


def f_shifted(x, row, out):              # a scalar ?float64 before a row
    out.append(x)
    for v in row:
        out.append(None if v is None or x is None else v + x)


def f_plus(x, row):                      # nulls in the row propagate
    return (-1.0 if x is None else x) + row.sum()
'''

_SCRIPT = _FUNCS + r'''
import gc, json
import numpy as np
import pyarrow as pa
from numba.core.runtime import nrt as _nrt
import ckernels
_nrt._nrt.memsys_enable_stats()

out_ = ckernels.jit("var * ?string(?string)")(f_out)
joined = ckernels.jit("var * ?string(?string, int64)")(f_joined)
shifted = ckernels.jit("var * ?float64(?float64, var * ?float64)")(f_shifted)
plus = ckernels.jit("float64(?float64, var * float64)")(f_plus)

TEXT = ["a b", None, "c  d", "", "é ü", None, "x", "  "]
res = {}
res["out_plain"] = out_(pa.array(["a", "b"])).to_pylist()       # the reported call
for k in range(8):                       # bit offsets 0-7
    a = pa.array(["p"] * k + TEXT).slice(k)
    res[f"out_{k}"] = out_(a).to_pylist()
    res[f"joined0_{k}"] = joined(a, 0).to_pylist()
    res[f"joined1_{k}"] = joined(a, 1).to_pylist()
res["out_large"] = out_(pa.array(TEXT, pa.large_string())).to_pylist()
res["out_ck"] = out_(ckernels.array(TEXT)).tolist()
try:
    import polars as pl
    res["out_polars"] = out_(pl.Series(TEXT)).to_list()
    res["joined_polars"] = joined(pl.Series(TEXT), 1).to_list()
except ImportError:
    pass
xs = [1.0, None, 2.5, -4.0]
rows = [[1.0, None], [2.0], [], [None, 3.0]]
res["shifted"] = shifted(pa.array(xs), pa.array(rows)).to_pylist()
res["shifted_slice"] = shifted(pa.array(xs).slice(1), pa.array(rows).slice(1)).to_pylist()
res["plus"] = plus(pa.array(xs + [None]), pa.array(rows + [[None]])).to_pylist()
res["shifted_numpy"] = shifted(np.array([1.0, 2.0, 3.0, 4.0]), pa.array(rows)).to_pylist()

a = pa.array(TEXT)
gc.collect()
s0 = _nrt.rtsys.get_allocation_stats()
for _ in range(50):
    joined(a, 0)
    joined(a, 1)
    out_(a)
gc.collect()
s1 = _nrt.rtsys.get_allocation_stats()
res["nrt"] = [(s1.alloc - s0.alloc) - (s1.free - s0.free),
              (s1.mi_alloc - s0.mi_alloc) - (s1.mi_free - s0.mi_free)]
print(json.dumps(res))
'''

_ns: dict = {}
exec(_FUNCS, _ns)


def _out_rows(fn, *columns):
    rows = []
    for vals in zip(*columns):
        r = []
        fn(*vals, r)
        rows.append(r)
    return rows


TEXT = ["a b", None, "c  d", "", "é ü", None, "x", "  "]


@pytest.fixture(scope="module")
def results():
    p = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True,
                       timeout=900)
    assert p.returncode == 0, (p.returncode, p.stderr[-3000:])
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_option_string_argument_into_var_option_string_out_parameter(results):
    assert results["out_plain"] == [["a"], ["b"]]
    expect = _out_rows(_ns["f_out"], TEXT)
    for k in range(8):
        assert results[f"out_{k}"] == expect, k
    assert results["out_large"] == expect
    assert results["out_ck"] == expect
    if "out_polars" in results:
        assert results["out_polars"] == expect


def test_list_of_none_joined_with_list_of_optional_strings(results):
    for mode in (0, 1):
        expect = [_ns["f_joined"](s, mode) for s in TEXT]
        for k in range(8):
            assert results[f"joined{mode}_{k}"] == expect, (mode, k)
    if "joined_polars" in results:
        assert results["joined_polars"] == [_ns["f_joined"](s, 1) for s in TEXT]


def test_scalar_option_argument_before_a_row(results):
    xs = [1.0, None, 2.5, -4.0]
    rows = [[1.0, None], [2.0], [], [None, 3.0]]
    f = _ns["f_shifted"]
    assert results["shifted"] == _out_rows(f, xs, rows)
    assert results["shifted_slice"] == _out_rows(f, xs[1:], rows[1:])
    # the null-propagating variant: its row argument's record follows x's
    sums = [(-1.0 if x is None else x) + sum(r) if None not in r else None
            for x, r in zip(xs + [None], rows + [[None]])]
    assert results["plus"] == sums
    assert results["shifted_numpy"] == _out_rows(f, [1.0, 2.0, 3.0, 4.0], rows)


def test_converted_lists_leak_nothing(results):
    assert results["nrt"] == [0, 0]


def test_cache_key_of_a_function_with_a_comprehension_is_stable():
    # the returned-list form holds a nested code object (the comprehension),
    # whose repr has an address: its key differed in every process, so
    # cache=True never loaded its kernel
    import ckernels
    src = "def joined(s):\n    return [w if w else None for w in s.split(' ')]\n"
    keys, held = set(), []             # held: no code object address reused
    for _ in range(2):
        ns: dict = {}
        exec(compile(src, "<same source>", "exec"), ns)
        held.append(ckernels.jit(ns["joined"]))
        keys.add(held[-1]._code_key())
    assert len(keys) == 1
    ns = {}
    exec(compile(src.replace("' '", "','"), "<same source>", "exec"), ns)
    assert ckernels.jit(ns["joined"])._code_key() not in keys
