"""Test-wide settings: compiled modules go to a private cache, so tests start cold and leave
the user's cache alone; the cache is removed when the run ends (TRACER_CACHE_DIR set in the
environment keeps its own, to look at the modules). The long tests run first."""

import os
import shutil
import tempfile

_PRIVATE_CACHE = None
if "TRACER_CACHE_DIR" not in os.environ:
    _PRIVATE_CACHE = os.environ["TRACER_CACHE_DIR"] = tempfile.mkdtemp(prefix="tracer-test-cache-")

import tracer.passes.pipeline  # noqa: E402 (after the cache is chosen)

tracer.passes.pipeline.VERIFY_EACH_PASS = True  # every pass's result goes through the verifier


def pytest_sessionfinish(session, exitstatus):
    if _PRIVATE_CACHE is not None:  # ~40 MB a run, in /tmp
        shutil.rmtree(_PRIVATE_CACHE, ignore_errors=True)


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
