"""runtime/allocator.py: after `import tracer`, large arrays freed and allocated again reuse
the process's pages instead of faulting in fresh ones; TRACER_MALLOC=system and the user's
own allocator settings leave glibc's rules as they are."""

import os
import subprocess
import sys

import pytest

from runtime import allocator

pytestmark = pytest.mark.skipif(
    allocator._glibc_mallopt() is None, reason="glibc's mallopt: Linux with the GNU C library"
)

# COUNT arrays of 16 MB made and freed, five times after two to warm up: the page faults
FAULTS = """
import resource
import numpy as np
import tracer  # noqa: F401
def step():
    arrays = [np.ones(4 << 20, np.float32) for _ in range({count})]
    del arrays
for _ in range(2):
    step()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(5):
    step()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults(count=3, **settings):
    environment = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    environment.pop("TRACER_MALLOC", None)
    environment.update(settings)
    done = subprocess.run(
        [sys.executable, "-c", FAULTS.format(count=count)],
        env=environment,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return int(done.stdout.strip())


def test_freed_arrays_pages_are_reused_after_import():
    tuned, system = _faults(), _faults(TRACER_MALLOC="system")
    # glibc's own rules hand the 48 MB back at each step (more than its trim threshold)
    assert system >= 1000
    assert tuned <= system // 20


@pytest.mark.skipif(
    allocator.trim_threshold() < 200 << 20, reason="a machine of under 3.2 GB keeps less"
)
def test_a_step_freeing_192_mb_reuses_its_pages():
    # twelve arrays of 16 MB: more than the 64 MB an earlier threshold kept (B24L's step)
    tuned, system = _faults(count=12), _faults(count=12, TRACER_MALLOC="system")
    assert system >= 4000
    assert tuned <= system // 20


@pytest.mark.parametrize(
    "memory, kept",
    [(64 << 30, 256 << 20), (4 << 30, 256 << 20), (2 << 30, 128 << 20), (512 << 20, 64 << 20)],
)
def test_the_memory_kept_free_is_at_most_a_sixteenth_of_the_machines(monkeypatch, memory, kept):
    pages = {"SC_PHYS_PAGES": memory // 4096, "SC_PAGE_SIZE": 4096}
    monkeypatch.setattr(os, "sysconf", pages.__getitem__)
    assert allocator.trim_threshold() == kept


def test_the_users_own_allocator_settings_win():
    # always trim: every step faults its pages in again, tracer or not
    assert _faults(MALLOC_TRIM_THRESHOLD_="0") >= 1000


@pytest.mark.parametrize(
    "environment, allowed",
    [
        ({}, True),
        ({"TRACER_MALLOC": "system"}, False),
        ({"TRACER_MALLOC": " System "}, False),
        ({"MALLOC_MMAP_THRESHOLD_": "131072"}, False),
        ({"MALLOC_TOP_PAD_": "0"}, False),
        ({"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=0"}, False),
        ({"GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX512F"}, True),
    ],
)
def test_when_tracer_sets_the_thresholds(environment, allowed):
    assert allocator._allowed(environment) is allowed


def test_this_process_was_tuned_at_import_where_allowed():
    assert allocator.tune() is allocator._allowed(os.environ)
