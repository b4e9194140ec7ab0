"""What a fresh interpreter pays before its first result (issue 23: import
ckernels, decorate a numeric function, call it once, against numba.vectorize;
timed in benchmarks/bench_jit.py ``cold``): the modules a computing program
never uses are not imported.  Fresh interpreters, one per test."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap


def _run(src):
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(src)], capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


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
