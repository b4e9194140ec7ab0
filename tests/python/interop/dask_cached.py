"""A ``cache=True`` jitted function for the Dask compile-cache test: importing
this module compiles it (or loads it from NUMBA_CACHE_DIR); the time that
took and the cache statistics are recorded at import."""

import math
import time

import ckernels

_t0 = time.perf_counter()


@ckernels.jit("float64(float64)", cache=True)
def logistic(x):
    return 1.0 / (1.0 + math.exp(-x))


DECORATE_SECONDS = time.perf_counter() - _t0


def report():
    st = logistic.stats
    return {"seconds": DECORATE_SECONDS,
            "dispatcher_hits": sum(st.dispatcher_hits.values()),
            "dispatcher_misses": sum(st.dispatcher_misses.values()),
            "kernel_hits": sum(st.kernel_hits.values()),
            "kernel_misses": sum(st.kernel_misses.values())}
