"""Processes that leave the job: a process whose program ends (it returns, calls sys.exit, or
calls shutdown()) while the others still make collective calls makes them raise
ProcessLeftError, naming it, instead of waiting for it forever.

Every collective call of tracer.distribute is started non-blocking (Iallreduce, Ibcast, ...)
and waited for in `wait`, together with a receive of the notice that any other process sends
when it leaves (`leave`: at exit, or in shutdown()), on a duplicate of the job's communicator.
A notice holds the number of collective calls its process completed. A process waiting in
its call k raises on a notice of fewer than k calls; a notice of k or more comes from a
process that completed this call and then left, so the call completes and the next one raises.

    rank 0: ... allreduce (call 5) waits: Waitany(call 5, notice)
    rank 1: ... (4 calls) returns -> atexit: leave() sends "4 calls" to rank 0
    rank 0: ProcessLeftError: rank 1 of 2 left the job after 4 collective calls, while ...

Leaving, a process also waits until every process has left (a non-blocking barrier, looked
at a few times a second, so that a process that ends first does not spin on a core that the
others need) and receives their notices: a job whose processes all end at the same point
ends as before, with no message, and one process may still work alone at the end (write a
checkpoint) while the others wait for it. A call that the others made before they left
completes at once; one that does not within GRACE seconds (their calls did not match it)
raises ProcessLeftError too. An uncaught exception ends the job at once instead
(process.py's exception hook), as does a process that is killed (through the launcher).
"""

import atexit
import time

import numpy as np

TAG = 1  # of the notices, on the watch's own communicator
POLL = (0.001, 0.1)  # seconds between two looks at the others while leaving: first, at most
GRACE = 10.0  # seconds a call may take to complete once every other process has left


class ProcessLeftError(RuntimeError):
    """A process left the job while this one waited for it in a collective call."""


ProcessLeftError.__module__ = "tracer.distribute"  # as it is exported, in tracebacks


class _Watch:
    """What this process knows of the processes that have left the job."""

    def __init__(self, comm, MPI):
        self.MPI = MPI
        self.waitany = MPI.Request.Waitany
        self.comm = comm.Dup()  # the notices and the final barrier, apart from the user's calls
        self.rank, self.size = comm.rank, comm.size
        self.calls = 0  # collective calls this process completed
        self.left = {}  # rank -> the collective calls it had completed when it left
        self.heard = np.empty(2, np.int64)  # a notice: (its rank, its collective calls)
        self.notice = self._listen()

    def _listen(self):
        """The receive of the next notice, or None when every other process has sent one."""
        if len(self.left) == self.size - 1:
            return None
        return self.comm.Irecv(self.heard, source=self.MPI.ANY_SOURCE, tag=TAG)

    def record_notice(self):
        self.left[int(self.heard[0])] = int(self.heard[1])
        self.notice = self._listen()

    def check(self, call, what):
        """Raise ProcessLeftError if a process left before making collective call `call`."""
        early = sorted(r for r, calls in self.left.items() if calls < call)
        if early:
            first, also = early[0], ", ".join(str(r) for r in early[1:])
            raise ProcessLeftError(
                f"rank {first} of {self.size} left the job after {self.left[first]} collective "
                f"calls, while rank {self.rank} waited for it in {what} (its call {call})"
                + (f"; rank(s) {also} left too" if also else "")
                + ". A process whose program ends (it returns, or calls sys.exit or shutdown()) "
                "while the others still make collective calls ends the job"
            )


_watch = None  # this process's _Watch, from init() (of a job of several) to leave()


def start(comm, MPI):
    """Watch for the processes of `comm` that leave (init() calls this, with mpi4py's `MPI`
    that process.mpi imported)."""
    global _watch
    _watch = _Watch(comm, MPI)


def wait(request, what):
    """Wait for `request`, this process's part of a collective call named `what` (as the
    user called it: "allreduce", ...); raise ProcessLeftError on every process still in
    the call where one has left the job without making it.

        wait(comm.Iallreduce(MPI.IN_PLACE, buffer, op=MPI.SUM), "allreduce")
    """
    watch = _watch
    if watch is None:  # one process, or no init(): nobody can leave
        request.Wait()
        return
    call = watch.calls + 1
    if watch.left:
        watch.check(call, what)
    while watch.notice is not None and watch.waitany([request, watch.notice]):
        watch.record_notice()
        watch.check(call, what)
    if watch.notice is None:  # every other process has left, after making this call
        _finish_alone(request, watch, call, what)
    watch.calls = call


def _finish_alone(request, watch, call, what):
    """Wait for `request` once every other process has left the job after making this call:
    where their calls matched this one it completes at once, but where they did not (calls
    of the user's own on the job's communicator in between) it never would. So it is looked
    at a few times a second, for GRACE seconds at most, as leave() looks at the barrier."""
    deadline = time.monotonic() + GRACE
    pause = POLL[0]
    while not request.Test():
        if time.monotonic() > deadline:
            raise ProcessLeftError(
                f"rank {watch.rank} of {watch.size} waited {GRACE:g} s in {what} (its call "
                f"{call}) after every other process had left the job having made that call: "
                "their calls did not match this one (collective calls of the program's own on "
                "the job's communicator in between?)"
            )
        time.sleep(pause)
        pause = min(2 * pause, POLL[1])


def leave():
    """Tell the other processes that this one leaves the job, wait until each has left too,
    and receive their notices. At exit and in shutdown(); nothing once done."""
    global _watch
    watch, _watch = _watch, None
    if watch is None:
        return
    sent = np.array([watch.rank, watch.calls], np.int64)
    sends = [watch.comm.Isend(sent, dest=r, tag=TAG) for r in range(watch.size) if r != watch.rank]
    everyone = watch.comm.Ibarrier()
    pause = POLL[0]
    while not everyone.Test():
        time.sleep(pause)
        pause = min(2 * pause, POLL[1])
    while watch.notice is not None:
        watch.notice.Wait()
        watch.record_notice()
    watch.MPI.Request.Waitall(sends)
    watch.comm.Free()


atexit.register(leave)  # NOTE: before MPI_Finalize, which mpi4py calls after every atexit hook
