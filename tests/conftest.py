"""Test-wide settings: compiled modules go to a private cache, so tests start cold and leave
the user's cache alone; the cache is removed when the run ends (TRACER_CACHE_DIR set in the
environment keeps its own, to look at the modules). The long tests run first."""

import os
import shutil
import tempfile

import pytest

_PRIVATE_CACHE = None
if "TRACER_CACHE_DIR" not in os.environ:
    _PRIVATE_CACHE = os.environ["TRACER_CACHE_DIR"] = tempfile.mkdtemp(prefix="tracer-test-cache-")

import tracer.passes.pipeline  # noqa: E402 (after the cache is chosen)
from runtime import numpy_first  # noqa: E402

# every process the tests start spins numpy's OpenBLAS threads as briefly as tracer's import
# makes them (runtime/numpy_first.py), also where it imports numpy first: each such process
# spent a tenth of a second of a core on them
os.environ.setdefault(numpy_first.VARIABLE, str(numpy_first.SPIN_POWER))

tracer.passes.pipeline.VERIFY_EACH_PASS = True  # every pass's result goes through the verifier


def pytest_sessionfinish(session, exitstatus):
    if _PRIVATE_CACHE is not None:  # ~40 MB a run, in /tmp
        shutil.rmtree(_PRIVATE_CACHE, ignore_errors=True)


def pytest_xdist_auto_num_workers(config):
    """`-n auto`'s workers: one more than the cores this process may run on. Tests wait on
    other processes (a compile's time limit, MPI ranks, a sleeping child), and a worker
    that waits leaves its core idle; the extra worker takes it (the suite on 2 cores: 495 s
    with two workers, 462 s with three)."""
    return len(os.sched_getaffinity(0)) + 1 if hasattr(os, "sched_getaffinity") else None


# the modules whose tests each run for many seconds (a C compiler on a whole catalogue, the
# benchmark suite in processes of its own)
LONG_RUNNING_MODULES = ("tests/test_benchmarks.py", "tests/test_export.py")


def pytest_collection_modifyitems(config, items):
    """The long tests first: pytest-xdist hands out tests in this order, and a long one
    started last would keep one worker busy alone at the end of the run."""
    items.sort(
        key=lambda item: (
            not (item.get_closest_marker("slow") or item.nodeid.startswith(LONG_RUNNING_MODULES))
        )
    )


@pytest.fixture(autouse=True)
def kernels_lent_within_the_test():
    """A test's modules borrow only the kernels of modules loaded in it
    (codegen/shared_kernels.py): which tests ran before it in its worker does not change
    its C."""
    from codegen import shared_kernels

    shared_kernels.forget()


@pytest.fixture(autouse=True)
def machine_records_in_the_cache_alone(monkeypatch):
    """A test's cache starts without the machine's records (codegen/machine_records.py): the
    copy beside the installation, which earlier processes wrote, would skip the probes and
    the learning links whose tests start from an empty cache."""
    from codegen import machine_records

    monkeypatch.setattr(machine_records, "installation_folder", lambda make=True: None)


@pytest.fixture
def blas_past_most_macs(monkeypatch, tmp_path):
    """Products past MOST_MACS multiply-adds go to the BLAS, as on a CPU whose BLAS runs
    AVX-512 kernels of its own (codegen/blocked_products.py's `most_macs`), for the tests of
    that route; the eager routes' cached choices forgotten around it, and the modules in a
    cache of its own (no stored plan made under the other rule)."""
    from codegen import array_blas, blocked_products

    monkeypatch.setattr(blocked_products, "most_macs", lambda: blocked_products.MOST_MACS)
    monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path / "blas-past-most-macs"))
    array_blas._plan.cache_clear()
    array_blas._blocked_products.cache_clear()
    yield
    array_blas._plan.cache_clear()
    array_blas._blocked_products.cache_clear()
