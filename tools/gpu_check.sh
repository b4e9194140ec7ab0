#!/bin/bash
# The CUDA checks of `make test-gpu` on a GPU machine that has no network and
# its own Python (NumPy, Numba, CuPy, PyTorch, pytest, pytest-xdist and a C
# compiler there, nothing installed into it): ckernels is built into
# /tmp/site for that interpreter; cffi and pycparser come as wheels in the
# folder $WHEELS (default .whl), fetched beforehand on a machine with network:
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#     --implementation cp --platform manylinux2014_x86_64 -d .whl cffi pycparser
# Logs go to $OUT (default /tmp/ck-gpu): build, ctest, pytest (+ a summary per file),
# bench_cuda and bench_device_strings on CUDA.  Time limits: PYT (pytest), BT
# (bench_cuda), BT2 (bench_device_strings) seconds; NOCTEST=1 skips the C tests.
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/ck-gpu}; WHEELS=${WHEELS:-.whl}; PY=${PY:-python3}; mkdir -p "$OUT"
T0=$(date +%s); el() { echo "[t+$(( $(date +%s) - T0 ))s] $*"; }
el probe
nvidia-smi -L
$PY -c "import sys,numpy,numba;print(sys.version.split()[0],'numpy',numpy.__version__,'numba',numba.__version__)"
$PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
  "$WHEELS"/cffi-*.whl "$WHEELS"/pycparser-*.whl || exit 3
export PYTHONPATH=/tmp/site
el build
$PY -m pip install --no-index --no-deps --no-build-isolation --no-compile --target /tmp/site \
  -C build-dir=/tmp/ckbuild . > "$OUT/build.log" 2>&1 || { tail -60 "$OUT/build.log"; exit 4; }
$PY -c "import ckernels" || exit 5
if [ -z "$NOCTEST" ]; then
  el ctest
  ( cmake -S . -B /tmp/cbuild >/dev/null &&
    cmake --build /tmp/cbuild -j"$(nproc)" --target test_cuda_loader test_cuda_nvrtc test_context_cuda >/dev/null &&
    ctest --test-dir /tmp/cbuild -L cuda --output-on-failure ) > "$OUT/ctest.log" 2>&1
  tail -6 "$OUT/ctest.log"
fi
el pytest
# One pytest process per test file, $(nproc) at a time: each process imports
# (and compiles the module-level functions of) its own file only, where
# pytest-xdist would have every worker collect every file.
mkdir -p /tmp/pyt; rm -f /tmp/pyt/*.log
# The files that can hold a test selected by `-k cuda` (as `make test-gpu`):
# every test file that names CUDA, the device tests (whose [cuda] ids come from
# the conftest's device_ctx fixture) among them.
{ ls tests/python/device/test_*.py; grep -rlw cuda tests/python --include='test_*.py'; } | grep -v test_notebooks | sort -u |
  PY=$PY PYT=${PYT:-300} xargs -P "$(nproc)" -I{} sh -c \
  'n=$(basename {} .py); timeout "$PYT" $PY -m pytest {} -k cuda -q -p no:cacheprovider \
     -rfEs --tb=short > /tmp/pyt/$n.log 2>&1; echo "$n rc $? $(tail -1 /tmp/pyt/$n.log)"' \
  | sort > "$OUT/pytest_summary.log"
for l in /tmp/pyt/*.log; do echo "=== $l"; cat "$l"; done > "$OUT/pytest.log"
cat "$OUT/pytest_summary.log"
grep -hE "^(FAILED|ERROR)" /tmp/pyt/*.log | head -60
el bench
timeout "${BT:-150}" $PY benchmarks/bench_cuda.py > "$OUT/bench.log" 2>&1; echo "bench rc $?"
cat "$OUT/bench.log"
CK_BENCH_DEVICE=cuda timeout "${BT2:-100}" $PY benchmarks/bench_device_strings.py \
  > "$OUT/bench_devstr.log" 2>&1; echo "bench_device_strings rc $?"
cat "$OUT/bench_devstr.log"
el done
