"""The C library's allocator, set for the arrays eager ops make: large ones from the heap,
and freed memory kept for the next step instead of handed back to the system.

numpy takes an array's memory from malloc. glibc maps an allocation above its mmap
threshold (128 KB at first, rising to the largest block freed, at most 32 MB) as new pages,
and hands the top of its heap back once more than its trim threshold (twice that) lies
free there. An eager training step allocates and frees tens of megabytes of arrays of many
sizes, so every step mapped and faulted in thousands of fresh zeroed pages. Fixing the
thresholds (32 MB, the largest glibc's own rule reaches; 256 MB kept free at most, or a
sixteenth of the machine's memory where that is less) keeps those pages in the process from
one step to the next (docs/memory.md; the figures are in benchmarks/RESULTS.md).

Only on glibc, and not where the user has set the allocator's parameters themselves (the
MALLOC_*_ variables, GLIBC_TUNABLES) or TRACER_MALLOC=system: theirs win, as their
OMP_NUM_THREADS does (runtime/thread_pools.py).
"""

import ctypes
import os
import sys

MMAP_THRESHOLD = 32 << 20  # bytes: larger allocations are mapped pages of their own
# bytes free at the heap's top before they go back to the system: a large transformer
# step (B24L) frees some 200 MB of temporaries at its end, which 64 MB handed back
TRIM_THRESHOLD = 256 << 20
LEAST_TRIM_THRESHOLD = 64 << 20  # where a sixteenth of the machine's memory is less still
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt's parameter numbers (malloc.h)
_USERS_OWN = (
    "MALLOC_MMAP_THRESHOLD_",
    "MALLOC_TRIM_THRESHOLD_",
    "MALLOC_TOP_PAD_",
    "MALLOC_MMAP_MAX_",
)


def tune():
    """Set glibc's thresholds, once a process, where this module's rules allow; whether
    they were set."""
    if _state["tuned"] is not None:
        return _state["tuned"]
    _state["tuned"] = False
    if not _allowed(os.environ):
        return False
    mallopt = _glibc_mallopt()
    if mallopt is None:
        return False
    _state["tuned"] = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(_M_TRIM_THRESHOLD, trim_threshold())
    )
    return _state["tuned"]


_state = {"tuned": None}


def trim_threshold():
    """TRIM_THRESHOLD, or a sixteenth of the machine's memory where that is less (at least
    LEAST_TRIM_THRESHOLD): the memory a process may keep free for its next step."""
    try:
        memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return TRIM_THRESHOLD
    return max(LEAST_TRIM_THRESHOLD, min(TRIM_THRESHOLD, memory // 16))


def _allowed(environment):
    """Whether the user left the allocator's parameters to tracer."""
    if environment.get("TRACER_MALLOC", "").strip().lower() == "system":
        return False
    if any(name in environment for name in _USERS_OWN):
        return False
    return "glibc.malloc." not in environment.get("GLIBC_TUNABLES", "")


def _glibc_mallopt():
    """glibc's mallopt, or None elsewhere (another C library, another system)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return None
    if not (hasattr(libc, "gnu_get_libc_version") and hasattr(libc, "mallopt")):
        return None  # gnu_get_libc_version: glibc's alone (musl's mallopt does nothing)
    mallopt = libc.mallopt
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return mallopt
