"""Numba's extension entry point (``_ckernels_numba:init``): a plain
``numba.njit`` program imports no ckernels module at its first compilation; a
program that imported ckernels gets the extension then; one that imports
ckernels after Numba's first compilation gets it when ckernels meets Numba.
Also: a program that imports ckernels to compute imports no display module (they
come on first use). Fresh interpreters (the entry point runs once per process)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("numba")


def _run(src):
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(src)], capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_plain_njit_program_imports_no_ckernels_module():
    out = _run("""
        import json, sys, warnings
        warnings.simplefilter("error")      # a failing extension would warn
        import numba

        @numba.njit
        def f(x):
            return x + 1

        assert f(1) == 2
        print(json.dumps({"ck": sorted(m for m in sys.modules if m.split(".")[0] == "ckernels"),
                          "entry": "_ckernels_numba" in sys.modules}))
    """)
    assert out["entry"]            # the entry point ran
    assert out["ck"] == []         # and imported nothing of ckernels


def test_a_program_using_ckernels_gets_the_extension_at_numbas_first_compile():
    out = _run("""
        import json, sys
        import ckernels
        import numba

        @numba.njit
        def f(x):
            return x + 1

        f(1)
        print(json.dumps({"ext": "ckernels._numba.memblock" in sys.modules}))
    """)
    assert out["ext"]


def test_ckernels_imported_after_numbas_first_compile():
    out = _run("""
        import json, sys
        import numba

        @numba.njit
        def f(x):
            return x + 1

        f(1)                                # the entry points ran: no ckernels yet
        import ckernels

        @numba.njit
        def same(mb):
            return mb                       # a borrowed memblock back: a new owner

        @numba.njit
        def total(a):
            s = 0.0
            for i in range(a.shape[0]):
                s += a[i]
            return s

        mb = ckernels.MemBlock.fixed_size_pod(16, 8)
        back = same(mb)
        a = ckernels.array([1.0, 2.0, 3.5])
        print(json.dumps({"type": type(back).__name__, "addr": back.address == mb.address,
                          "total": total(a), "plain": f(2)}))
    """)
    assert out == {"type": "MemBlock", "addr": True, "total": 6.5, "plain": 3}


# ---- what a computing program imports (issue 23's fresh-process time, timed in
# benchmarks/bench_jit.py cold): not the display modules ----------------------------
def test_a_computing_program_imports_no_display_module():
    out = _run("""
        import json, math, sys
        import numpy as np
        import ckernels

        @ckernels.jit("float64(float64, float64)")
        def f(x, y):
            return math.sin(x) * 2.5 + y * y

        r = f(np.ones(4), np.ones(4))
        assert np.allclose(np.asarray(r), np.sin(1.0) * 2.5 + 1.0)
        print(json.dumps(sorted(m for m in sys.modules
                                if m.startswith(("ckernels.display", "xml")))))
    """)
    assert out == []


def test_show_bench_and_display_are_there_on_first_use():
    out = _run("""
        import json, sys
        import ckernels
        before = "ckernels.display" in sys.modules
        from ckernels import show
        a = ckernels.zeros(3)
        print(json.dumps({
            "before": before,
            "same": show is ckernels.display.show and ckernels.bench is ckernels.display.bench,
            "dir": all(n in dir(ckernels) for n in ("show", "bench", "display")),
            "all": all(hasattr(ckernels, n) for n in ckernels.__all__),
            "html": a._repr_html_().startswith("<div"),
            "picture": type(show(a)).__name__,
        }))
    """)
    assert out == {"before": False, "same": True, "dir": True, "all": True, "html": True,
                   "picture": "Picture"}


def test_unknown_attributes_are_attribute_errors():
    out = _run("""
        import json
        import ckernels
        try:
            ckernels.no_such_name
        except AttributeError as e:
            print(json.dumps(str(e)))
    """)
    assert out == "module 'ckernels' has no attribute 'no_such_name'"
