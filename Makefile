# ckernels -- set-up and entry points.  Every target sets up what it needs,
# idempotently, on a fresh Debian 12 machine (apt-get for system packages,
# pip into .venv for Python packages).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMPS := .stamps
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

# Debian packages: C toolchain and checkers, OpenCL on the CPU (PoCL).
APT_PACKAGES := build-essential cmake valgrind clang libclang-rt-14-dev \
	pocl-opencl-icd ocl-icd-opencl-dev opencl-c-headers clinfo

VALGRIND_WRAPPER := valgrind;--error-exitcode=1;--leak-check=full;--errors-for-leak-kinds=definite,indirect,possible;--show-leak-kinds=definite,indirect,possible;--quiet

.PHONY: all setup system-deps cuda-tools install test test-c test-gpu test-python sanitize demo bench fuzz clean notebooks-html

all: test

# ---- set-up ---------------------------------------------------------------
system-deps: $(STAMPS)/apt
$(STAMPS)/apt:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@mkdir -p $(STAMPS) && touch $@

# NVRTC and ptxas, to compile generated CUDA C to PTX and assemble it in every
# test run (no GPU needed).  Taken from the CUDA toolkit when there is one
# ($$CUDA_HOME, else /usr/local/cuda); otherwise the PyPI wheels
# nvidia-cuda-nvrtc (libnvrtc) and nvidia-cuda-nvcc (ptxas; its other
# dependencies are not needed) go into .venv, where the library and the
# tests look for them (nvidia/cu13/{lib,bin}).
CUDA_ROOT ?= $(if $(CUDA_HOME),$(CUDA_HOME),/usr/local/cuda)
cuda-tools: $(STAMPS)/cuda-tools
$(STAMPS)/cuda-tools:
	@if ls $(CUDA_ROOT)/lib64/libnvrtc.so* >/dev/null 2>&1 && [ -x $(CUDA_ROOT)/bin/ptxas ]; then \
	  echo "NVRTC and ptxas: CUDA toolkit in $(CUDA_ROOT)"; \
	else \
	  $(MAKE) --no-print-directory $(PY) && \
	  echo "NVRTC and ptxas: no CUDA toolkit in $(CUDA_ROOT), installing the wheels into $(VENV)" && \
	  $(PIP) install -q nvidia-cuda-nvrtc && \
	  $(PIP) install -q --no-deps nvidia-cuda-nvcc; \
	fi
	@mkdir -p $(STAMPS) && touch $@

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

$(STAMPS)/pydeps: pyproject.toml | $(PY)
	$(PIP) install -q "scikit-build-core>=0.10" "cffi>=1.17" "numpy>=2.0"
	@mkdir -p $(STAMPS) && touch $@

# The package is rebuilt incrementally (build/py/<wheel tag>, asked for with
# -C build-dir: a plain `pip install .` builds outside the source tree) on
# every run: cheap, and never stale.
install: system-deps $(STAMPS)/pydeps
	$(PIP) install -q --no-build-isolation -C build-dir=build/py/{wheel_tag} ".[test]"

setup: install

# ---- tests ----------------------------------------------------------------
test-c: system-deps cuda-tools
	cmake -S . -B build/c -DCK_WERROR=ON -DCK_TEST_WRAPPER= -DCK_TEST_SCALE= >/dev/null
	cmake --build build/c -j$(JOBS)
	ctest --test-dir build/c --output-on-failure -j$(JOBS)

# One pytest worker per core (pytest-xdist), each test file on one worker so
# that the jitted functions a file shares are compiled once; the slowest files
# first, notebooks and doc pages one by one (tests/python/ci_schedule.py).
# build/pytest-junit.xml: each test's seconds, for tools/ci_weights.py.
test-python: install
	$(PY) -m pytest tests/python -q -n $(JOBS) --dist loadfile --durations=40 \
	  --junitxml=build/pytest-junit.xml

test: setup test-c test-python

# The CUDA tests: the C tests labelled "cuda" (ctest -L cuda), the Python
# tests named for CUDA (pytest -k cuda: the tests marked `cuda`, the CUDA
# parametrisations of the device tests; the generated CUDA C through
# NVRTC/ptxas and the host shim everywhere; contexts, jitted calls and
# CuPy/numba-cuda/PyTorch interop on a GPU) and the CUDA benchmark.
# tools/gpu_check.sh runs the same on a GPU machine without network.  On a
# machine without a GPU the device tests are reported as skipped with the
# reason and the benchmark says so and exits 0.
test-gpu: install cuda-tools
	cmake -S . -B build/c -DCK_WERROR=ON >/dev/null
	cmake --build build/c -j$(JOBS)
	ctest --test-dir build/c -L cuda -V
	$(PY) -m pytest tests/python -q -k cuda -rs
	$(PY) benchmarks/bench_cuda.py

sanitize: system-deps
	cmake -S . -B build/asan -DCK_WERROR=ON -DCK_SANITIZE=ON >/dev/null
	cmake --build build/asan -j$(JOBS)
	ctest --test-dir build/asan --output-on-failure -j$(JOBS)
	# the valgrind pass runs build/c's binaries (the wrapper and the scale are
	# test properties only: no second build), then puts the plain runs back
	cmake -S . -B build/c -DCK_WERROR=ON "-DCK_TEST_WRAPPER=$(VALGRIND_WRAPPER)" -DCK_TEST_SCALE=20 >/dev/null
	cmake --build build/c -j$(JOBS)
	ctest --test-dir build/c --output-on-failure -j$(JOBS)
	cmake -S . -B build/c -DCK_WERROR=ON -DCK_TEST_WRAPPER= -DCK_TEST_SCALE= >/dev/null

# The type-string parser and the Arrow importer under libFuzzer (clang),
# bounded: FUZZ_SECONDS and FUZZ_ARROW_SECONDS.
FUZZ_SECONDS ?= 60
FUZZ_ARROW_SECONDS ?= 30
fuzz: system-deps
	cmake -S tests/fuzz -B build/fuzz -DCMAKE_C_COMPILER=clang >/dev/null
	cmake --build build/fuzz -j$(JOBS)
	mkdir -p build/fuzz/corpus build/fuzz/corpus_arrow
	build/fuzz/fuzz_type_parse -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	  -dict=tests/fuzz/type.dict build/fuzz/corpus tests/fuzz/corpus
	build/fuzz/fuzz_arrow_import -max_total_time=$(FUZZ_ARROW_SECONDS) -print_final_stats=1 \
	  build/fuzz/corpus_arrow tests/fuzz/corpus_arrow

# ---- main job, benchmarks -------------------------------------------------
demo: setup
	$(PY) -m ckernels.demo

# Every notebook executed, exported to HTML and photographed by headless
# Chromium (Debian's chromium), with a demo page of every object's display:
# build/notebooks/<name>.html and <name>-N.png, to look at.
notebooks-html: setup
	$(PIP) install -q --no-build-isolation ".[render]"
	@command -v chromium >/dev/null || { echo "notebooks-html needs chromium: apt-get install chromium"; exit 1; }
	$(PY) tools/render_notebooks.py --out build/notebooks --demo

bench: setup
	$(PIP) install -q ".[bench]" --no-build-isolation
	cmake -S . -B build/bench -DCMAKE_BUILD_TYPE=Release -DCK_BUILD_TESTS=OFF -DCK_BUILD_BENCHMARKS=ON >/dev/null
	cmake --build build/bench -j$(JOBS)
	build/bench/benchmarks/bench_memory
	build/bench/benchmarks/bench_kernels
	$(PY) benchmarks/run.py
	$(PY) benchmarks/bench_jit.py
	$(PY) benchmarks/bench_dispatch.py
	$(PY) benchmarks/bench_dims.py
	$(PY) benchmarks/bench_arrays.py
	$(PY) benchmarks/bench_strings.py
	$(PY) benchmarks/bench_dictionary.py
	$(PY) benchmarks/bench_opencl.py
	$(PY) benchmarks/bench_device_strings.py
	$(PY) benchmarks/bench_cuda.py
	$(PY) benchmarks/bench_dask.py

clean:
	rm -rf build $(STAMPS)
