"""The job's processes: MPI through mpi4py, set up by `init`.

An uncaught exception in any process of a job of several aborts the whole job
(`MPI_Abort`), so that the others do not wait forever in their next collective call; a
process that ends otherwise (it returns, or calls sys.exit) makes those of the others that
still wait for it raise ProcessLeftError (departures.py).

Processes on one host share its cores: unless OMP_NUM_THREADS or OPENBLAS_NUM_THREADS
say otherwise, `init` gives each process cores / (processes on the host) threads of
OpenMP and OpenBLAS. Left at one per core each, their threads spin against each other and
against MPI's polling, and a step slows down many times over.
"""

import ctypes
import os
import sys
import time
from traceback import format_exception_only

from runtime import native, thread_pools
from tracer.distribute import departures

INSTALL = "pip install 'tracer[mpi]'"  # installs mpi4py and mpich


def mpi():
    """mpi4py's MPI module, or an ImportError that says how to install it."""
    try:
        from mpi4py import MPI
    except (ImportError, RuntimeError) as error:
        raise ImportError(
            f"tracer.distribute needs mpi4py and an MPI library ({error}); install them with: "
            f"{INSTALL}"
        ) from error
    return MPI


mpi()  # `import tracer.distribute` fails at once, with the command, where MPI is missing


class _Job:
    comm = None  # the communicator of all processes, once init() has run
    local = None  # the processes on this host
    cross = None  # the processes of this local rank, one per host


_job = _Job()


def init(comm=None):
    """Set up the job: all processes of `comm` (an mpi4py communicator; MPI.COMM_WORLD by
    default). Idempotent for the same communicator."""
    MPI = mpi()
    comm = MPI.COMM_WORLD if comm is None else comm
    if _job.comm is comm:
        return
    _job.comm = comm
    _job.local = comm.Split_type(MPI.COMM_TYPE_SHARED, key=comm.rank)
    _job.cross = comm.Split(color=_job.local.rank, key=comm.rank)
    if _job.local.size > 1:
        _share_cores(_job.local.size)
    if comm.size > 1:
        departures.start(comm, MPI)
        if sys.excepthook is not _abort_job:
            _abort_job.previous = sys.excepthook
            sys.excepthook = _abort_job


def _share_cores(processes):
    """Threads per process for OpenMP and the BLAS: the cores this process may use (its
    affinity mask and cgroup quota, runtime/thread_pools.py) / `processes`,
    where the user has not set them, and idle threads that never spin (runtime/thread_pools.py
    spins a little on a quiet machine). The pool, whose threads also drive the compiled
    modules' BLAS, reads the environment: now, where it runs already, else when it starts;
    an OpenBLAS already loaded (numpy's) is told now."""
    per_process = max(1, thread_pools.usable_cores() // processes)
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(name, str(per_process))
    # idle threads sleep at once: the job's other processes want the cores
    os.environ.setdefault("GOMP_SPINCOUNT", "0")
    native.configure_pool()
    for library in _loaded_openblas():
        for setter in (
            "scipy_openblas_set_num_threads64_",
            "scipy_openblas_set_num_threads",
            "openblas_set_num_threads64_",
            "openblas_set_num_threads",
        ):
            function = getattr(library, setter, None)
            if function is not None:
                function(int(os.environ["OPENBLAS_NUM_THREADS"]))
                break


def _loaded_openblas():
    """The OpenBLAS libraries this process has loaded (Linux; none found elsewhere)."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "openblas" in line.lower()}
    except OSError:
        return []
    return [ctypes.CDLL(path) for path in sorted(paths) if os.path.isfile(path)]


def _abort_job(kind, value, traceback):
    """Say which process failed and why, print the error as Python would, then end every
    process of the job.

    The launcher forwards each process's output through a pipe, and MPI_Abort tears the
    job down at once: the last lines written could be lost (a traceback cut before its
    message, one run in a few under load). So the one-line reason comes first, and the
    launcher gets a moment to forward the rest before the abort."""
    comm = _job.comm
    sys.stderr.write(
        f"tracer.distribute: process {comm.rank} of {comm.size} failed: "
        f"{''.join(format_exception_only(kind, value)).strip()}\n"
    )
    sys.stderr.flush()
    _abort_job.previous(kind, value, traceback)
    sys.stderr.flush()
    sys.stdout.flush()
    time.sleep(ABORT_GRACE)
    comm.Abort(1)


ABORT_GRACE = 0.2  # seconds the launcher has to forward a failed process's last output


def shutdown():
    """Leave the job: tell the other processes, wait until each has left or shut down too,
    and forget the job (MPI itself is finalized when the process exits). A process that ends
    without calling it leaves the same way at exit."""
    departures.leave()
    if sys.excepthook is _abort_job:
        sys.excepthook = _abort_job.previous
    _job.comm = _job.local = _job.cross = None


def is_initialized():
    return _job.comm is not None


def communicator():
    """The job's communicator; init() must have run."""
    if _job.comm is None:
        raise ValueError("tracer.distribute has not been initialized; call init() first")
    return _job.comm


def rank():
    """This process's index in the job, from 0."""
    return communicator().rank


def size():
    """The number of processes in the job."""
    return communicator().size


def local_rank():
    """This process's index among the processes on its host."""
    communicator()
    return _job.local.rank


def local_size():
    """The number of processes on this host."""
    communicator()
    return _job.local.size


def cross_rank():
    """This host's index among the hosts (the rank among processes of the same local rank)."""
    communicator()
    return _job.cross.rank


def cross_size():
    """The number of hosts (processes with this local rank)."""
    communicator()
    return _job.cross.size
