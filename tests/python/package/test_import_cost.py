"""What a fresh ``import ckernels`` and a first jitted CPU function load: the
device operation table, the device launch plans, the C emitter of device
kernels and the CUDA backend load on first use only (their import is a cost
every process paid before, measured by the ``cold`` row of
``benchmarks/bench_hardening.py``)."""
import json
import subprocess
import sys

_PROBE = r"""
import json, math, sys
import numpy as np
import ckernels
after_import = set(sys.modules)

@ckernels.jit("float64(float64, float64)")
def f(x, y):
    return math.sin(x) * 2.5 + y * y

assert f(np.ones(4), np.ones(4)).tolist() == [math.sin(1.0) * 2.5 + 1.0] * 4
print(json.dumps({"import": sorted(after_import), "call": sorted(sys.modules)}))
"""

_LAZY = ("ckernels.device.ops", "ckernels.device.launch", "ckernels.jit.device",
         "ckernels.jit.c_emit", "ckernels.backends.cuda")


def test_device_code_is_not_loaded_by_a_cpu_function():
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                         check=True).stdout
    loaded = json.loads(out.strip().splitlines()[-1])
    for phase in ("import", "call"):
        assert not [m for m in loaded[phase] if m.startswith(_LAZY)], phase


def test_lazy_modules_load_on_use():
    import ckernels
    from ckernels.backends import BACKENDS, hook
    assert sorted(BACKENDS) == ["cuda", "opencl"] and len(BACKENDS) == 2
    assert BACKENDS["cuda"].__name__ == "ckernels.backends.cuda"
    assert hook("cpu", "prepare") is None and BACKENDS.get("cpu") is None
    assert ckernels.jit  # the device target is imported by a device call or f.source(name)
