"""A process that ends while the others still make collective calls ends the job, on every
process, within seconds, with a message that names it; a job whose processes all end at the
same point ends as before. Each test runs tests/distributed/exits.py under mpiexec: rank 1
takes 2 training steps and leaves (sys.exit(0), sys.exit(1), returns, calls shutdown()),
rank 0 goes on training (one allreduce per step). Skipped without the `mpi` extra."""

import time

import pytest

from tests.test_distribute import needs_mpiexec, under_mpiexec

TIMEOUT = 60  # seconds for a whole job, start-up and compiles included: a hang fails here
ENDS_WITHIN = 10  # seconds from rank 1's leaving to the end of the job


def run_exits(how, processes, tmp_path):
    """Run tests/distributed/exits.py HOW; returns (the completed process, the seconds from
    rank 1's leaving to the end of the job, or None where it did not leave)."""
    done = under_mpiexec(["-m", "tests.distributed.exits", how, tmp_path], processes, TIMEOUT)
    ended = time.time()
    left = tmp_path / "left"
    return done, (ended - float(left.read_text()) if left.exists() else None)


@needs_mpiexec
@pytest.mark.parametrize("how", ["exit0", "exit1", "return", "shutdown", "compiled"])
def test_a_process_that_leaves_early_ends_the_job_with_a_message_naming_it(how, tmp_path):
    done, seconds = run_exits(how, 2, tmp_path)
    said = done.stderr + done.stdout
    assert done.returncode != 0, said
    assert seconds is not None and seconds < ENDS_WITHIN, (seconds, said)
    # rank 0's uncaught ProcessLeftError: a line naming both, then MPI_Abort ends the job
    assert "tracer.distribute: process 0 of 2 failed: tracer.distribute.ProcessLeftError: " in said
    assert "rank 1 of 2 left the job after " in said
    assert "collective calls, while rank 0 waited for it in allreduce (its call " in said


@needs_mpiexec
def test_every_process_still_waiting_raises(tmp_path):
    done, seconds = run_exits("return", 3, tmp_path)
    said = done.stderr + done.stdout
    assert done.returncode != 0, said
    assert seconds is not None and seconds < ENDS_WITHIN, (seconds, said)
    assert "rank 1 of 3 left the job after " in said


@needs_mpiexec
def test_the_error_can_be_caught(tmp_path):
    done, seconds = run_exits("caught", 2, tmp_path)
    assert done.returncode == 0, done.stderr
    assert seconds < ENDS_WITHIN
    caught = (tmp_path / "caught").read_text()
    assert caught.startswith("rank 1 of 2 left the job after "), caught
    assert "while rank 0 waited for it in allreduce" in caught


@needs_mpiexec
@pytest.mark.parametrize("how", ["together", "checkpoint"])
@pytest.mark.parametrize("processes", [2, 3])
def test_processes_that_end_at_the_same_point_end_as_usual(how, processes, tmp_path):
    """With "checkpoint", rank 0 works alone for 1.5 s after the last step: the others wait."""
    done, _ = run_exits(how, processes, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "left the job" not in done.stderr and "tracer.distribute" not in done.stderr
