"""Processes whose collective calls differ, in kind or in number, end in a clear error on
every process: never a hang, a crash inside MPI or a huge allocation (agreement.py). The
jobs are tests/distributed/mismatches.py's, each on 2 processes under mpiexec. Skipped
without the `mpi` extra."""

import json
import types

import pytest

from tests.distributed.mismatches import LAST_CALLS, STEP
from tests.test_distribute import needs_mpi, needs_mpiexec, under_mpiexec

TIMEOUT = 60  # seconds for a whole job, start-up included: a hang fails here


def run_job(case, tmp_path):
    """Run CASE on 2 processes; returns (what each rank saved, the completed process)."""
    done = under_mpiexec(["-m", "tests.distributed.mismatches", case, tmp_path], 2, TIMEOUT)
    assert done.returncode == 0, done.stdout + done.stderr
    return [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)], done


@needs_mpiexec
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("last", list(LAST_CALLS))
def test_a_call_that_meets_another_processs_extra_step_is_an_error_on_both(
    last, compiled, tmp_path
):
    saved, _ = run_job(f"{last}_{'compiled' if compiled else 'eager'}", tmp_path)
    different = "the processes made different collective calls at this point (rank 0: "
    assert saved[0]["error"].startswith(f"ValueError: {last}: {different}{last}("), saved[0]
    assert saved[1]["error"].startswith(f"ValueError: allreduce: {different}{last}("), saved[1]
    for got in saved:
        assert (
            f"; rank 1: {STEP}). Every process must make the same collective calls"
            in (got["error"])
        )
        assert got["after"] == 2.0  # both made as many calls: the job goes on


@needs_mpiexec
def test_the_reviewers_job_ends_with_the_error_instead_of_hanging(tmp_path):
    """Rank 0 takes 1 step and broadcasts an object; rank 1 takes 2 steps: before, rank 1
    waited forever in its second step and rank 0 in its exit."""
    script = tmp_path / "hang.py"
    script.write_text(
        "import numpy as np, tracer as tt, tracer.distribute as hvd\n"
        "hvd.init()\n"
        "grad = tt.constant(np.ones(49, np.float32))\n"
        "for step in range(1 if hvd.rank() == 0 else 2):\n"
        "    hvd.allreduce(grad)\n"
        "if hvd.rank() == 0:\n"
        "    print('rank 0:', hvd.broadcast_object('best epoch: 3', root_rank=0), flush=True)\n"
    )
    done = under_mpiexec([script], 2, TIMEOUT)
    said = done.stdout + done.stderr
    assert done.returncode != 0, said
    assert "rank 0: best epoch" not in done.stdout
    # the uncaught error ends the job (process.py's hook): whichever process aborts first
    assert "of 2 failed: ValueError: " in said, said
    shown = f"(rank 0: broadcast_object(root_rank=0); rank 1: {STEP})"
    assert f"different collective calls at this point {shown}" in said, said


@needs_mpiexec
def test_calls_of_one_kind_with_different_arguments_are_an_error_on_both(tmp_path):
    saved, _ = run_job("ops", tmp_path)
    for got in saved:
        assert got["error"] == (
            "ValueError: allreduce: the processes passed different tensors or arguments "
            "(rank 0: allreduce(op='Sum', tensors=[float32[]]); "
            "rank 1: allreduce(op='Average', tensors=[float32[]]))"
        )
        assert got["after"] == 2.0
    saved, _ = run_job("roots", tmp_path)
    for got in saved:
        assert got["error"].endswith(
            "(rank 0: broadcast_object(root_rank=0); rank 1: broadcast_object(root_rank=1))"
        )
        assert got["after"] == 2.0


@needs_mpi
def test_a_call_the_departed_processes_never_matched_raises_after_a_grace_period(monkeypatch):
    """Once every other process has left after making the call, it completes at once, unless
    their calls did not match this one: then ProcessLeftError, not a wait forever."""
    from tracer.distribute import departures

    monkeypatch.setattr(departures, "GRACE", 0.05)
    never = types.SimpleNamespace(Test=lambda: False)
    watch = types.SimpleNamespace(rank=0, size=2)
    with pytest.raises(
        departures.ProcessLeftError,
        match="rank 0 of 2 waited 0.05 s in allreduce .its call 3. after every other",
    ):
        departures._finish_alone(never, watch, 3, "allreduce")
    looks = iter([False, False, True])
    departures._finish_alone(types.SimpleNamespace(Test=lambda: next(looks)), watch, 3, "x")
