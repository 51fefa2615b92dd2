"""tracer's thread pool behind OpenMP's entry points (runtime/thread_pool.c,
runtime/openmp_entries.h): each kind of loop GCC makes of tracer's pragmas runs every
iteration once, shares as OpenMP cuts them, ordered sections in order, reductions whole;
without the pool each loop runs whole on the calling thread; a module that calls another
entry point is refused."""

import collections
import ctypes
import json
import os
import pathlib
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

from codegen import build
from codegen.errors import CompileError, CompilerUnavailable
from runtime import native, thread_pools

REPO = pathlib.Path(__file__).resolve().parent.parent

LOOPS = r"""
#include <complex.h>
#include <omp.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

void shares(long n, int *share, int *team) {
    #pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) { share[i] = omp_get_thread_num(); team[i] = omp_get_num_threads(); }
}

void dynamic(long n, long *hits) {
    #pragma omp parallel for schedule(dynamic, 3)
    for (long i = 0; i < n; i++) hits[i] += 1;
}

void dynamic_down(long n, long *hits) {
    #pragma omp parallel for schedule(dynamic, 3)
    for (long i = n - 1; i >= 0; i -= 2) hits[i] += 1;
}

void dynamic_if(long n, int on, long *hits) {
    #pragma omp parallel for collapse(2) schedule(dynamic, 1) if(on)
    for (long i = 0; i < n; i++)
        for (long j = 0; j < 3; j++) hits[i * 3 + j] += 1;
}

void ordered(long n, long *order) {
    long at = 0;
    #pragma omp parallel for schedule(dynamic, 1) ordered
    for (long i = 0; i < n; i++) {
        volatile double x = 0;
        for (long r = 0; r < (i % 7) * 2000; r++) x += r;  /* uneven work before the section */
        #pragma omp ordered
        order[at++] = i;
    }
}

double sum(long n, const double *x) {
    double total = 0;
    double _Complex imaginary = 0;
    #pragma omp parallel for reduction(+:total) reduction(+:imaginary)
    for (long i = 0; i < n; i++) { total += x[i]; imaginary += x[i] * I; }
    return total - cimag(imaginary);
}

void who(long n, long *thread) {
    #pragma omp parallel for schedule(dynamic, 1)
    for (long i = 0; i < n; i++) { usleep(2000); thread[i] = syscall(SYS_gettid); }
}

void claims(long loops, long *thread, long *order) {
    static _Atomic long at;
    for (long l = 0; l < loops; l++) {
        at = 0;
        #pragma omp parallel
        {
            const long share = l * omp_get_num_threads() + omp_get_thread_num();
            volatile double x = 0;
            for (long r = 0; r < 20000; r++) x += r;  /* a late thread's shares are taken */
            thread[share] = syscall(SYS_gettid);
            order[share] = atomic_fetch_add(&at, 1);
        }
    }
}

void dynamic_claims(long loops, long n, long *thread, long *order) {
    static _Atomic long at;
    for (long l = 0; l < loops; l++) {
        at = 0;
        #pragma omp parallel for schedule(dynamic, 1)
        for (long i = 0; i < n; i++) {
            volatile double x = 0;
            for (long r = 0; r < 20000; r++) x += r;  /* a late thread's chunks are taken */
            thread[l * n + i] = syscall(SYS_gettid);
            order[l * n + i] = atomic_fetch_add(&at, 1);
        }
    }
}

void nested(long n, int *inner) {
    #pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) {
        int team = 0;
        #pragma omp parallel for reduction(+:team)
        for (int j = 0; j < 4; j++) team += omp_get_num_threads();
        inner[i] = team;
    }
}
"""


def _compiled(tmp_path, text, name="loops", entries="header"):
    """The shared library of C `text`, compiled as a module's C is, with OpenMP's entries:
    compiled in (`entries` "header") or linked as the object built with the extensions
    ("object")."""
    try:
        if not build.threads():
            pytest.skip("the C compiler here has no OpenMP")
        compiler = build.compiler()
    except CompilerUnavailable:
        pytest.skip("no C compiler")
    if entries == "object" and not os.path.isfile(build.OPENMP_ENTRIES_OBJECT):
        pytest.skip("the entry points' object was not built here")
    source, library = tmp_path / f"{name}.c", tmp_path / f"{name}.so"
    source.write_text(text)
    command = [compiler, "-O2", "-fPIC", "-shared", "-fopenmp", str(source)]
    if entries == "header":
        command[-1:-1] = ["-include", build.OPENMP_ENTRIES]
    else:
        command.append(build.OPENMP_ENTRIES_OBJECT)
    subprocess.run([*command, "-o", str(library)], check=True, capture_output=True)
    return str(library)


def _pointer(array):
    return array.ctypes.data_as(ctypes.c_void_p)


def _loops(path):
    library = ctypes.CDLL(path)
    library.sum.restype = ctypes.c_double
    return library


def _check_loops(library, threads):
    """Every kind of loop, on a pool of `threads` (1: no pool), against what it must give: a
    static loop cut as OpenMP cuts it for twice as many threads (the pool's shares)."""
    n = 100
    share, team = np.zeros(n, np.int32), np.zeros(n, np.int32)
    library.shares(ctypes.c_long(n), _pointer(share), _pointer(team))
    shares = 2 * threads if threads > 1 else 1
    cut = [n // shares + (t < n % shares) for t in range(shares)]  # as OpenMP cuts it
    assert share.tolist() == [t for t, size in enumerate(cut) for _ in range(size)]
    assert set(team.tolist()) == {shares}
    hits = np.zeros(1000, np.int64)
    for _ in range(50):
        library.dynamic(ctypes.c_long(1000), _pointer(hits))
    assert set(hits.tolist()) == {50}
    for n in (1, 2, 101, 1000):  # a loop counting down, by twos, in chunks of three
        hits = np.zeros(n, np.int64)
        library.dynamic_down(ctypes.c_long(n), _pointer(hits))
        assert hits.tolist() == [int((n - 1 - i) % 2 == 0) for i in range(n)]
    for on in (0, 1):
        hits = np.zeros(3 * 40, np.int64)
        library.dynamic_if(ctypes.c_long(40), ctypes.c_int(on), _pointer(hits))
        assert set(hits.tolist()) == {1}
    order = np.full(200, -1, np.int64)
    library.ordered(ctypes.c_long(200), _pointer(order))
    assert order.tolist() == list(range(200))
    x = np.random.default_rng(0).standard_normal(100_000)
    assert library.sum(ctypes.c_long(x.size), _pointer(x)) == pytest.approx(0.0, abs=1e-9)
    inner = np.zeros(16, np.int32)
    library.nested(ctypes.c_long(16), _pointer(inner))
    assert set(inner.tolist()) == {4}  # a loop inside a share runs whole on its thread


def _on_the_pool(program, tmp_path, entries="header", **env):
    """What `program` (ON_THE_POOL_START and more) prints, run in a process of its own with
    the loops' library (its entry points as `_compiled` takes them) and `env` (no wait
    setting of the user's)."""
    path = _compiled(tmp_path, LOOPS, entries=entries)
    environment = dict(os.environ, PYTHONPATH=str(REPO))
    for name in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OMP_NUM_THREADS"):
        environment.pop(name, None)
    environment.update({name: value for name, value in env.items() if value is not None})
    completed = subprocess.run(
        [sys.executable, "-c", program, path, str(REPO / "tests")],
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    if completed.stdout.strip() == "no pool":
        pytest.skip("the thread pool is not built here")
    return completed.stdout.strip()


@pytest.mark.parametrize("entries", ["header", "object"])
def test_without_the_pool_each_loop_runs_whole_on_the_calling_thread(tmp_path, entries):
    _check_loops(_loops(_compiled(tmp_path, LOOPS, entries=entries)), 1)


# a program's start: the loops' library (argv[1]) on the pool, or "no pool" printed
ON_THE_POOL_START = """
import ctypes, os, sys
sys.path.insert(0, sys.argv[2])
from runtime import native
import test_openmp_entries as t

table = native.pool_table()
if not table:
    print("no pool")
    sys.exit(0)
library = t._loops(sys.argv[1])
ctypes.c_void_p.in_dll(library, "tr_pool").value = table
"""

ON_THE_POOL = ON_THE_POOL_START + textwrap.dedent(
    """
    t._check_loops(library, 3)
    child = os.fork()
    if child == 0:  # the child's loops start workers of their own
        t._check_loops(library, 3)
        os._exit(0)
    _, status = os.waitpid(child, 0)
    assert status == 0, status
    print("checked")
    """
)


@pytest.mark.parametrize("entries", ["header", "object"])
def test_on_the_pool_every_loop_gives_what_openmp_would_and_after_a_fork(tmp_path, entries):
    """Three threads on any machine (more than it has cores, here: workers that come late);
    the same checks in a forked child, whose pool starts its own workers. The entry points
    compiled into the library or linked as the installed object."""
    assert _on_the_pool(ON_THE_POOL, tmp_path, entries, OMP_NUM_THREADS="3") == "checked"


CLAIMS = ON_THE_POOL_START + textwrap.dedent(
    """
    import json, threading
    import numpy as np

    loops, team = 200, 6  # three threads' shares
    thread, order = np.zeros(loops * team, np.int64), np.zeros(loops * team, np.int64)
    library.claims(ctypes.c_long(loops), t._pointer(thread), t._pointer(order))
    print(json.dumps({"caller": threading.get_native_id(), "thread": thread.tolist(),
                      "order": order.tolist()}))
    """
)


def test_each_thread_claims_its_own_block_of_a_static_loops_shares_first(tmp_path):
    """Three threads, two shares each: in every loop, each thread runs the shares of its own
    block first, in order (the caller the first block, a worker the same block in every
    loop), then those left of the others', from the last back: so each thread runs the same
    part of every loop where they keep pace. A late worker's shares are run by the others;
    where the scheduler kept one worker late in most loops (three threads on two cores), its
    block cannot be told, and the pool is watched again (three times at most)."""
    _check_blocks(tmp_path, CLAIMS, team=6, block=2)


DYNAMIC_CLAIMS = ON_THE_POOL_START + textwrap.dedent(
    """
    import json, threading
    import numpy as np

    loops, n = 200, 12  # three threads' blocks of four chunks
    thread, order = np.zeros(loops * n, np.int64), np.zeros(loops * n, np.int64)
    library.dynamic_claims(ctypes.c_long(loops), ctypes.c_long(n), t._pointer(thread),
                           t._pointer(order))
    print(json.dumps({"caller": threading.get_native_id(), "thread": thread.tolist(),
                      "order": order.tolist()}))
    """
)


def test_each_thread_claims_its_own_block_of_a_dynamic_loops_chunks_first(tmp_path):
    """A dynamic loop of twelve chunks on three threads: its chunks are dealt in three blocks
    of four, as a static loop's shares are, and each thread runs its own block's chunks
    first, in order, then the others' from their backs, the last block's first. So a thread
    runs the same rows of every loop where the threads keep pace (a product's parts, an
    elementwise loop's rows), instead of whichever it came first to."""
    _check_blocks(tmp_path, DYNAMIC_CLAIMS, team=12, block=4)


def _check_blocks(tmp_path, program, team, block):
    """Runs `program` until each thread had a block of its own (three times at most), and
    checks that in every loop each ran its own block's shares first, in order, then others'
    from the last back."""
    for _ in range(3):
        loops, blocks, caller = _claims(tmp_path, program, team, block)
        if blocks[caller] == 0 and len(set(blocks.values())) == len(blocks):  # a block each
            break
    else:
        raise AssertionError(f"no run where each thread had a block of its own: {blocks}")
    for runs in loops:
        for thread, shares in runs.items():
            own = [s for s in shares if s // block == blocks[thread]]
            assert shares[: len(own)] == own == sorted(own), (thread, shares)
            taken = shares[len(own) :]
            assert taken == sorted(taken, reverse=True), (thread, shares)


def _claims(tmp_path, program, team, block):
    """(each loop's {thread: [its shares in the order it ran them]}, each thread's block as
    most loops show it, the caller) of a run of `program` on a pool of three threads, whose
    loops have `team` shares, `block` a thread."""
    found = json.loads(_on_the_pool(program, tmp_path, OMP_NUM_THREADS="3"))
    loops = []
    for at in range(0, len(found["thread"]), team):
        runs = {}
        for share in sorted(range(team), key=lambda k: found["order"][at + k]):
            runs.setdefault(found["thread"][at + share], []).append(share)
        assert sorted(s for shares in runs.values() for s in shares) == list(range(team))
        loops.append(runs)
    firsts = collections.defaultdict(collections.Counter)  # the block of each one's first share
    for runs in loops:
        for thread, shares in runs.items():
            firsts[thread][shares[0] // block] += 1
    blocks = {thread: counts.most_common(1)[0][0] for thread, counts in firsts.items()}
    return loops, blocks, found["caller"]


WATCHED = ON_THE_POOL_START + textwrap.dedent(
    """
    import json, subprocess, time
    import numpy as np

    pool = native.load("thread_pool")
    x = np.random.default_rng(0).standard_normal(100_000)
    quiet_sum = library.sum(ctypes.c_long(x.size), t._pointer(x))
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(3 * os.cpu_count() + 1)]
    try:
        time.sleep(0.5)
        hits = np.zeros(1000, np.int64)
        end = time.monotonic() + 0.5
        while time.monotonic() < end:
            library.dynamic(ctypes.c_long(hits.size), t._pointer(hits))
        thread = np.zeros(48, np.int64)
        library.who(ctypes.c_long(thread.size), t._pointer(thread))
        print(json.dumps({
            "spins": list(pool.settings()[1:3]),
            "threads": pool.settings()[0],
            "threads_now": pool.threads_now(),
            "threads_seen": len(set(thread.tolist())),
            "same_sum": library.sum(ctypes.c_long(x.size), t._pointer(x)) == quiet_sum,
        }))
    finally:
        for process in busy:
            process.kill()
    """
)


@pytest.mark.parametrize("chosen", [None, "2"])
def test_once_other_processes_want_the_cores_workers_sleep_and_the_reserve_joins(tmp_path, chosen):
    """Other processes that come after the pool was configured (busy loops more than three
    times the cores): within the loops of half a second the pool's workers sleep at once, a
    caller spins no more than CALLER_SPIN_COUNT, and a reserve of as many workers again
    joins the loops (a loop of sleeping iterations runs on more threads than the pool's),
    where the user did not choose the thread count (OMP_NUM_THREADS=2: two threads at
    most). A static loop's reduction gives the bits it gave before they came."""
    found = json.loads(_on_the_pool(WATCHED, tmp_path, OMP_NUM_THREADS=chosen))
    assert found["spins"] == [0, thread_pools.CALLER_SPIN_COUNT]
    assert found["same_sum"]
    threads = found["threads"]
    if chosen or threads == 1:
        assert found["threads_now"] == threads
        assert found["threads_seen"] <= threads
    else:
        assert found["threads_now"] == 2 * threads
        assert found["threads_seen"] > threads


def test_loops_started_from_several_threads_at_once_each_run_whole(tmp_path):
    """One loop has the pool at a time; the others run on their own threads meanwhile."""
    table = native.pool_table()
    if not table:
        pytest.skip("the thread pool is not built here")
    library = _loops(_compiled(tmp_path, LOOPS))
    ctypes.c_void_p.in_dll(library, "tr_pool").value = table
    arrays = [np.zeros(20_000, np.int64) for _ in range(4)]

    def count(hits):
        for _ in range(200):
            library.dynamic(ctypes.c_long(hits.size), _pointer(hits))

    workers = [threading.Thread(target=count, args=(hits,)) for hits in arrays]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert all(set(hits.tolist()) == {200} for hits in arrays)


def test_a_module_that_calls_an_entry_point_the_pool_lacks_is_refused(tmp_path):
    """omp_get_wtime is OpenMP's, not the pool's: the module would reach an OpenMP library
    that knows nothing of the pool's threads."""
    path = _compiled(tmp_path, "#include <omp.h>\ndouble now(void) { return omp_get_wtime(); }\n")
    with pytest.raises(CompileError, match="omp_get_wtime"):
        build._check_openmp_entries(path)
    build._check_openmp_entries(_compiled(tmp_path, LOOPS, "fine"))  # every entry defined


def test_the_pools_settings_are_checked():
    pool = native.load("thread_pool")
    if pool is None:
        pytest.skip("the thread pool is not built here")
    for wrong in (
        (0, 0, 0, False, 0),
        (2, -1, 0, False, 0),
        (2, 0, -5, True, 2),
        (2, 0, 0, True, -1),
    ):
        with pytest.raises(ValueError, match="a pool of 1 to"):
            pool.configure(*wrong)
    threads, spin, wait_spin, _ = pool.settings()
    assert threads >= 1 and 0 <= spin <= wait_spin


def test_modules_link_the_entry_points_object_while_it_is_newer_than_the_header(tmp_path):
    """The object built with the extensions stands for the header in a module's link (no
    unit compiles the header then); an object older than the header (the header edited, the
    extensions not built again), or none, leaves each unit compiling the header."""
    if not build.threads():
        pytest.skip("the C compiler here has no OpenMP")
    header, built = tmp_path / "openmp_entries.h", tmp_path / "openmp_entries.o"
    header.write_text("")
    built.write_bytes(b"")
    made = os.stat(header).st_mtime_ns
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(build, "OPENMP_ENTRIES", str(header))
            patch.setattr(build, "OPENMP_ENTRIES_OBJECT", str(built))
            for seconds, used in ((1, True), (-1, False), (None, False)):
                if seconds is None:
                    built.unlink()
                else:
                    os.utime(built, ns=(made + seconds * 10**9,) * 2)
                build._entries_object_current.cache_clear()
                assert build.entries_object() == ([str(built)] if used else [])
                assert ("-include" in build._flags()) is not used
    finally:
        build._entries_object_current.cache_clear()


def test_where_the_extensions_are_built_so_is_the_entry_points_object():
    """setup.py builds the object with the extensions: where the pool was built, modules
    link the object (a build that dropped it would cost every unit the header again)."""
    if native.load("thread_pool") is None or not build.threads():
        pytest.skip("the extensions are not built here")
    assert build.entries_object() == [build.OPENMP_ENTRIES_OBJECT]
