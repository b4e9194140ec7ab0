"""Rewriting a string array in place does not grow without bound (issue 29):
``f(x, out=s)`` into a ckernels string array that alone owns its strings
writes into a fresh arena and drops the old one (``ckernels.host.rewrite``).
Measured by the arena's byte counts, never by time.  When something else
holds the strings (a view, an Arrow export) the old arena is kept and stays
valid; a write that fails part way keeps every element readable."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ckernels
from ckernels.host.rewrite import arena_stats

N = 20_000


@ckernels.jit("string(int64, int64)")
def label(i, gen):
    return f"item-{i}-generation-{gen}-" + "x" * (i % 7)


@ckernels.jit("string(int64)")
def fails_at_7(i):
    if i == 7:
        raise ValueError("no seven")
    return f"new-{i}"


def _expected(gen):
    return [f"item-{i}-generation-{gen}-" + "x" * (i % 7) for i in range(N)]


def test_rewrites_of_a_sole_owner_stay_bounded():
    x = ckernels.asarray(np.arange(N))
    s = label(x, 0)
    first = arena_stats(s._a)
    assert first is not None and first[1] > 0
    peak = 0
    for gen in range(1, 301):
        label(x, gen, out=s)
        cap, used = arena_stats(s._a)
        peak = max(peak, cap)
    assert s.tolist() == _expected(300)
    # one generation of strings (plus the arena's chunk rounding), not 300:
    # before the fix the arena held every generation (~300x)
    assert peak <= 4 * first[0] + (1 << 20), (peak, first)
    assert used <= 2 * first[1], (used, first)


def test_a_view_keeps_the_old_arena_and_reads_right():
    x = ckernels.asarray(np.arange(N))
    s = label(x, 0)
    v = s[::2]                 # shares s's data and arena
    before = arena_stats(s._a)[1]
    label(x, 1, out=s)
    assert arena_stats(s._a)[1] > before          # appended, nothing dropped
    assert v.tolist() == _expected(1)[::2] and s.tolist() == _expected(1)
    del v
    label(x, 2, out=s)       # sole owner again: a fresh arena
    assert arena_stats(s._a)[1] <= before + 64
    assert s.tolist() == _expected(2)


def test_a_view_as_destination_writes_into_the_shared_arena():
    x = ckernels.asarray(np.arange(N))
    s = label(x, 0)
    label(x[::2], 5, out=s[::2])
    want = _expected(0)
    want[::2] = [f"item-{i}-generation-5-" + "x" * (i % 7) for i in range(0, N, 2)]
    assert s.tolist() == want


def test_an_arrow_export_keeps_reading_its_strings():
    pa = pytest.importorskip("pyarrow")
    x = ckernels.asarray(np.arange(N))
    s = label(x, 0)
    exported = pa.array(s)
    for gen in range(1, 4):
        label(x, gen, out=s)
    assert exported.to_pylist() == _expected(0)
    assert s.tolist() == _expected(3)


def test_numpy_out_and_a_numpy_string_destination_are_unaffected():
    x = np.arange(10)
    out = np.empty(10, dtype=np.dtypes.StringDType())
    label(x, 1, out=out)
    assert out.tolist() == [f"item-{i}-generation-1-" + "x" * (i % 7) for i in range(10)]


FAILING = textwrap.dedent('''
    import json
    import numpy as np
    import ckernels
    from ckernels.host.rewrite import arena_stats

    @ckernels.jit("string(int64)")
    def old(i):
        return f"old-{i}"

    @ckernels.jit("string(int64)")
    def fails_at_7(i):
        if i == 7:
            raise ValueError("no seven")
        return f"new-{i}"

    x = ckernels.asarray(np.arange(50000))
    s = old(x)
    errors = []
    for _ in range(3):
        try:
            fails_at_7(x, out=s)
        except ValueError as e:
            errors.append(str(e))
    values = s.tolist()
    ok = all(v in (f"old-{i}", f"new-{i}") for i, v in enumerate(values))
    print(json.dumps({"errors": errors, "ok": ok, "seven": values[7],
                      "stats": arena_stats(s._a)}))
''')


def test_a_failing_rewrite_leaves_every_element_readable():
    """Some elements got the new arena's strings, the others keep the old
    ones: the old arena takes over the new one's chunks (a fresh interpreter:
    a dangling string would read freed memory)."""
    p = subprocess.run([sys.executable, "-c", FAILING], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert len(out["errors"]) == 3 and all("no seven" in e for e in out["errors"])
    assert out["ok"] and out["seven"] == "old-7"


def test_failing_rewrite_in_process_keeps_values():
    x = ckernels.asarray(np.arange(100))
    s = label(x, 0)
    with pytest.raises(ValueError, match="no seven"):
        fails_at_7(x, out=s)
    values = s.tolist()
    assert values[7] == _expected(0)[7]
    assert all(v in (_expected(0)[i], f"new-{i}") for i, v in enumerate(values))


@ckernels.jit("string(string)")
def twice(s):
    return s + "|" + s


def test_the_source_is_the_destination():
    """``f(s, out=s)``: the function reads the old strings (the old arena lives
    until the write is over) and the old generation is dropped after it."""
    s = ckernels.array([f"w{i}" for i in range(5000)])
    for k in range(3):
        twice(s, out=s)
        used = arena_stats(s._a)[1]
        want = [("|".join([f"w{i}"] * 2 ** (k + 1))) for i in range(5000)]
        assert s.tolist() == want
        assert used == sum(len(w) for w in want)      # this generation only
