"""Shared fixtures: every test must leave the library's live-memblock count
where it found it (after collecting garbage), so leaks fail the test that
caused them."""

import gc

import pytest

import ckernels


@pytest.fixture(autouse=True)
def _memblock_balance(request):
    gc.collect()
    before = ckernels.live_count()
    yield
    gc.collect()
    after = ckernels.live_count()
    if "allow_memblock_leak" not in request.keywords:
        assert after == before, f"memblocks leaked: {after - before}"


@pytest.fixture(scope="session")
def new_opencl_context():
    """A factory of new OpenCL contexts; the test is skipped (with the library's
    reason) when no OpenCL platform is available."""
    def make():
        try:
            return ckernels.Context("opencl")
        except ckernels.errors.BackendError as exc:
            pytest.skip(f"no OpenCL platform: {exc}")
    return make


def pytest_configure(config):
    config.addinivalue_line("markers", "allow_memblock_leak: skip the balance check")
