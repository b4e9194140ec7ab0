"""The one comparison of a device result with its oracle (the CPU jit or
NumPy) for the device tests (device/test_opencl_api.py, jit/test_opencl_jit.py,
and through them jit/test_cuda_codegen.py and device/test_cuda_device.py).

Same dtype and shape; integers and bools exactly; floats: NaN where the oracle
has NaN, the same infinities, finite values within 2 ULP (devices may round
transcendental functions differently from the host's libm).  A result that
sums several library functions compares with ``terms``, the sum of the terms'
magnitudes: each term may be off by a few ulp of itself (CUDA documents up to
2-4 ulp for atan2, hypot, pow), which is many ulp of a sum that cancels, so
the bound there is 4 ulp of ``terms``."""

import numpy as np


def compare(got, want, name, terms=None):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, name
    if want.dtype.kind == "f":
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=name)
        np.testing.assert_array_equal(np.isinf(got), np.isinf(want), err_msg=name)
        fin = np.isfinite(want)
        if terms is not None:
            bound = 4 * np.finfo(want.dtype).eps * np.broadcast_to(terms, want.shape)[fin]
            np.testing.assert_array_less(np.abs(got[fin] - want[fin]), bound + np.finfo(
                want.dtype).tiny, err_msg=name)
        else:
            np.testing.assert_array_max_ulp(got[fin], want[fin], maxulp=2)
        inf = np.isinf(want)
        np.testing.assert_array_equal(got[inf], want[inf], err_msg=name)
    else:
        np.testing.assert_array_equal(got, want, err_msg=name)
