"""The threads tracer's C code runs on (compiled modules and the installed eager kernels):
one pool, tracer's own (runtime/thread_pool.c), for tracer's loops and its matrix products
alike, as large as the cores this process may really use, whose idle threads sleep (on a
quiet machine, after a short spin).

A machine that other processes share takes cores away from a pool for milliseconds at a
time. Threads that wait on each other then wait on the one that has no core, and a
spinning thread takes a core that the other processes, or the pool's own late thread,
wanted. So:

- the modules' BLAS (scipy-openblas32, not numpy's own) runs on the thread that calls it,
  and a large product is cut into parts that tracer's threads take as they come free
  (templates/matmul.c.j2): a thread held off its core takes fewer parts;
- a loop's shares are claimed, not assigned: the calling thread runs the share of a
  worker that has not come, and waits only for shares a worker has started;
- the pool has as many threads as the process may use cores: its affinity mask, and a
  cgroup's CPU quota (a container limited to two cores of a larger machine); where other
  processes' ready threads are more than twice the cores, workers of a reserve (up to as
  many again) join the loops (the scheduler gives each runnable thread its turn: a pool of the cores'
  size got only their part of such a machine, its caller running most of each loop alone);
- idle threads sleep, but for a short spin first while no other process wants the cores
  (the pool looks at the machine again as loops start, every 5 to 50 ms): waking a
  sleeping thread is slow where its core has halted (a virtual machine's idle core), and
  every parallel loop of a step paid it.

A user's own OMP_NUM_THREADS, OMP_WAIT_POLICY and GOMP_SPINCOUNT win (read as OpenMP reads
them). docs/threads.md has the rules' measurements. The MPI processes of a job on one node
share its cores: tracer.distribute sets OMP_NUM_THREADS for that, and no spin, before the
pool is configured. Every library of tracer's with parallel loops is handed the pool's table
when it loads (runtime/native.py's `pool_table`: its extensions, codegen/build.py's modules).
"""

import ctypes
import math
import os
import threading

# the pause loop's iterations an idle thread of a quiet machine's pool waits before it
# sleeps: a third of a millisecond on a CPU whose pause is short, more on one whose
# pause is long (docs/threads.md, rule 3)
QUIET_SPIN_COUNT = 30000
# the pauses a caller spins for the shares its workers have started, at the least, before it
# sleeps: they run now, mostly for microseconds
CALLER_SPIN_COUNT = 1000
SPIN_ALWAYS = 1 << 62  # OMP_WAIT_POLICY=ACTIVE: an idle worker never sleeps
_state = {"blas": None, "threads": 0}  # threads: the program's choice (0: none)
_blas_lock = threading.Lock()  # modules load in several threads at once


def usable_cores():
    """How many cores this process may run on at once: its affinity mask, bounded by its
    cgroup's CPU quota where one is set."""
    cores = _affinity() or os.cpu_count() or 1
    quota = cgroup_quota()
    return max(1, min(cores, math.ceil(quota))) if quota else cores


def _affinity():
    """The number of cores in this process's affinity mask (None where it cannot be read)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None


def cgroup_quota(root="/sys/fs/cgroup"):
    """The CPU quota of this process's cgroup in cores (2.5 where it may use 250 ms each
    100 ms), or None where none is set or none can be read (cgroup v2's cpu.max, v1's
    cpu.cfs_quota_us over cpu.cfs_period_us)."""
    for path, parse in (
        (os.path.join(root, "cpu.max"), _cgroup2_quota),
        (os.path.join(root, "cpu", "cpu.cfs_quota_us"), _cgroup1_quota),
    ):
        try:
            with open(path) as handle:
                text = handle.read()
        except OSError:
            continue
        return parse(text, os.path.dirname(path))
    return None


def _cgroup2_quota(text, _folder):
    fields = text.split()
    if len(fields) != 2 or fields[0] == "max":
        return None
    try:
        quota, period = int(fields[0]), int(fields[1])
    except ValueError:
        return None
    return quota / period if quota > 0 and period > 0 else None


def _cgroup1_quota(text, folder):
    try:
        quota = int(text.strip())
        with open(os.path.join(folder, "cpu.cfs_period_us")) as handle:
            period = int(handle.read().strip())
    except (OSError, ValueError):
        return None
    return quota / period if quota > 0 and period > 0 else None


def settings():
    """(threads, spin, caller_spin, watch, reserve) for the pool (runtime/thread_pool.c's
    `configure`): as many threads as usable cores, or the user's OMP_NUM_THREADS, or the
    program's `choose_threads`; idle workers spin QUIET_SPIN_COUNT pauses before they sleep
    while the machine is quiet, and none while it is not (`watch`: the pool looks at the
    machine again as it runs), or what the user's GOMP_SPINCOUNT or OMP_WAIT_POLICY say
    (ACTIVE: spin always; PASSIVE: sleep at once), always; where a cgroup CPU quota is set,
    no spin (the quota counts a spin as work and throttles the process once it is spent). A
    caller waiting for the shares its workers have started spins at least
    CALLER_SPIN_COUNT. Where a watched machine's other ready threads are more than twice its
    cores, a reserve of up to as many workers again joins the loops (docs/threads.md, rule 4),
    unless the thread count is the user's or the program's: a count chosen is kept."""
    from_environment = _count(os.environ.get("OMP_NUM_THREADS", "").split(",")[0])
    chosen = _state["threads"] or from_environment
    threads = chosen or usable_cores()
    spin = _count(os.environ.get("GOMP_SPINCOUNT", ""), allow_zero=True)
    policy = os.environ.get("OMP_WAIT_POLICY", "").strip().upper()
    if spin is None and policy in ("ACTIVE", "PASSIVE"):
        spin = SPIN_ALWAYS if policy == "ACTIVE" else 0
    if spin is None and cgroup_quota() is not None:
        spin = 0
    if spin is not None:
        return threads, spin, CALLER_SPIN_COUNT, False, 0
    reserve = 0 if chosen or threads == 1 else threads
    return threads, QUIET_SPIN_COUNT, CALLER_SPIN_COUNT, True, reserve


def choose_threads(count):
    """The pool's size as the program chooses it (tt.config.threading), over
    OMP_NUM_THREADS and the usable cores; 0 for no choice. Read at the pool's next
    configuration (runtime/native.py's `configure_pool`)."""
    _state["threads"] = count


def chosen_threads():
    """The program's choice of the pool's size, 0 where it made none."""
    return _state["threads"]


def _count(text, allow_zero=False):
    """The whole number `text` names (GOMP_SPINCOUNT's "infinite" is SPIN_ALWAYS), or None
    where it names none."""
    text = text.strip().lower()
    if text == "infinite" and allow_zero:
        return SPIN_ALWAYS
    if not text.isdigit() or (int(text) == 0 and not allow_zero):
        return None
    return min(int(text), SPIN_ALWAYS)


def blas_on_calling_thread(folder, name):
    """Make the modules' OpenBLAS (lib`name` in `folder`) run each call on the thread that
    makes it, once per process, before the first module that links it loads it: loaded with
    OPENBLAS_NUM_THREADS=1 (it then starts no threads of its own), or told so where it was
    loaded before. The variable is set for the load alone, so that children, and numpy's
    own OpenBLAS, keep theirs."""
    with _blas_lock:
        if _state["blas"] is None:
            _state["blas"] = folder
            _load_on_one_thread(folder, name)


def _load_on_one_thread(folder, name):
    paths = [os.path.join(folder, f"lib{name}{suffix}") for suffix in (".so", ".dylib")]
    path = next((p for p in paths if os.path.isfile(p)), None)
    if path is None:
        return
    previous = os.environ.get("OPENBLAS_NUM_THREADS")
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        library = ctypes.CDLL(path)
    except OSError:
        return
    finally:
        if previous is None:
            del os.environ["OPENBLAS_NUM_THREADS"]
        else:
            os.environ["OPENBLAS_NUM_THREADS"] = previous
    for setter in ("scipy_openblas_set_num_threads", "openblas_set_num_threads"):
        if hasattr(library, setter):
            getattr(library, setter)(1)
            return
