"""tracer.distribute across processes: each test runs a job of 2 or 3 processes under
mpiexec (tests/distributed/worker.py) and checks what every process saved: against the
other processes, against the same training on one process, and against values computed
here. Needs the `mpi` extra (`pip install 'tracer[mpi]'`); skipped without it."""

import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig

import numpy as np
import pytest

from tests.distributed import worker

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMEOUT = 240  # seconds for one job, compiles included; a hang fails the test instead


def _mpiexec():
    for place in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        candidate = os.path.join(place, "mpiexec")
        if os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("mpiexec")


MPIEXEC = _mpiexec()
HAS_MPI4PY = importlib.util.find_spec("mpi4py") is not None
needs_mpi = pytest.mark.skipif(
    not HAS_MPI4PY, reason="the mpi extra is not installed: pip install 'tracer[mpi]'"
)
needs_mpiexec = pytest.mark.skipif(
    not HAS_MPI4PY or MPIEXEC is None, reason="no mpiexec: pip install 'tracer[mpi]'"
)


def under_mpiexec(arguments, processes, timeout):
    """`python arguments...` on `processes` processes under mpiexec, run from the repository
    with it importable: the completed process."""
    return subprocess.run(
        [MPIEXEC, "-n", str(processes), sys.executable, *map(str, arguments)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": ROOT},
    )


def run_job(scenario, processes, tmp_path, check=True):
    """Run `scenario` on `processes` processes (None: as a plain process, without mpiexec);
    returns ([what each rank saved], the completed process)."""
    command = [sys.executable, "-m", "tests.distributed.worker", scenario, str(tmp_path)]
    if processes is not None:
        command = [MPIEXEC, "-n", str(processes), *command]
    done = subprocess.run(
        command,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env={**os.environ, "PYTHONPATH": ROOT},
    )
    if check:
        assert done.returncode == 0, done.stdout + done.stderr
    count = processes or 1
    saved = [dict(np.load(tmp_path / f"rank{r}.npz")) for r in range(count)] if check else []
    return saved, done


def _same_on_every_rank(saved):
    for other in saved[1:]:
        assert other.keys() == saved[0].keys()
        for key in saved[0]:
            np.testing.assert_array_equal(other[key], saved[0][key], err_msg=key)


def _padded_items(n, processes):
    """The items of a global batch of n that `shard` hands out over `processes` processes."""
    per_process = -(-n // processes)
    return np.arange(per_process * processes) % n


@needs_mpiexec
@pytest.mark.parametrize(
    "kind", ["tape", "compiled", "aggregated", "graph", "graph_interpreter", "graph_optimizer"]
)
def test_two_processes_train_as_one_process_on_the_whole_batch(kind, tmp_path):
    saved, _ = run_job(kind, 2, tmp_path)
    _same_on_every_rank(saved)
    alone = worker.train("compiled", seed=100, distributed=False)
    for key, value in alone.items():
        np.testing.assert_allclose(saved[0][key], value, rtol=1e-10, atol=1e-12, err_msg=key)
    start = worker.model(100)
    start(worker.data()[0][0])
    assert not np.allclose(saved[0]["w0"], start.variables[0].numpy())  # it did train


@needs_mpiexec
def test_three_processes_split_an_uneven_batch_as_horovod_does(tmp_path):
    saved, _ = run_job("uneven", 3, tmp_path)
    _same_on_every_rank(saved)
    alone = worker.train(
        "compiled", batch=13, seed=100, distributed=False, items=_padded_items(13, 3)
    )
    for key, value in alone.items():
        np.testing.assert_allclose(saved[0][key], value, rtol=1e-10, atol=1e-12, err_msg=key)


@needs_mpiexec
@pytest.mark.parametrize("processes", [2, 3])
def test_collectives(processes, tmp_path):
    saved, _ = run_job("collectives", processes, tmp_path)
    ranks = range(processes)
    bases = [np.arange(6, dtype=np.float32).reshape(2, 3) + r for r in ranks]
    expected = {
        "average": np.mean(bases, axis=0),
        "sum": np.sum(bases, axis=0),
        "min": np.min(bases, axis=0),
        "max": np.max(bases, axis=0),
        "product": np.prod(bases, axis=0),
        "scaled": 3.0 * np.mean([2.0 * b for b in bases], axis=0),
        "float16": np.float16(np.mean([r + 0.5 for r in ranks])),
        "int_sum": np.sum([[r, 2 * r] for r in ranks], axis=0),
        "grouped0": np.mean(bases, axis=0),
        "grouped1": [np.mean(list(ranks))],
        "grouped2": [np.mean(list(ranks)), 1.0],
        "gathered": np.concatenate([np.full((r + 1, 2), r) for r in ranks]),
        "broadcast": [processes - 1, processes],
        "object": 1,
        "objects": [10 * r for r in ranks],
    }
    table = np.arange(12.0).reshape(6, 2)
    dense = np.zeros_like(table)
    for r in ranks:
        for row in (r, r + 1, 0):
            dense[row] += 2 * table[row] / processes
    expected["sparse_dense"] = dense
    expected["sparse_indices"] = np.concatenate([[r, r + 1, 0] for r in ranks])
    expected["as_dense"] = sum(np.eye(6)[r][:, None] * 2 * table[r] for r in ranks) / processes
    for got in saved:
        for key, value in expected.items():
            np.testing.assert_allclose(got[key], value, rtol=1e-6, err_msg=key)
            assert got[key].dtype == np.asarray(got[key]).dtype
        assert str(got["sparse_type"]) == "IndexedSlices"  # gathered, never densified
        assert got["sparse_values"].shape == (3 * processes, 2)
        assert got["float16"].dtype == np.float16 and got["int_sum"].dtype == np.int32


@needs_mpiexec
@pytest.mark.parametrize("processes", [2, 3])
def test_the_allreduce_op_in_every_backend_to_second_order(processes, tmp_path):
    """Horovod's rule: the gradient (and tangent) of a Sum or Average is the same reduction
    of the cotangent (tangent). Here y_r = S w_r with S the sum over ranks of x_r^2."""
    saved, _ = run_job("op", processes, tmp_path)
    xs = [np.array([1.0, -2.0, 0.5]) * (r + 1) for r in range(processes)]
    ws = [np.array([0.5, 1.0, 2.0]) + r for r in range(processes)]
    total, w_sum = sum(x * x for x in xs), sum(ws)
    for r, got in enumerate(saved):
        grad = 2 * w_sum * xs[r]
        expected = {"value": total * ws[r], "grad": grad, "second": 8 * w_sum**2 * xs[r]}
        for backend in ("eager", "interpreter", "c"):
            for name, value in expected.items():
                np.testing.assert_allclose(got[f"{backend}_{name}"], value, rtol=1e-12)
        np.testing.assert_allclose(got["tangent"], w_sum / processes, rtol=1e-12)
        assert str(got["callback_error"]) == "failed on purpose in the callback"
        assert str(got["export_error"]).startswith(
            "ExportError: <lambda>: allreduce (at worker.py:"
        )
        assert "calls back into Python" in str(got["export_error"])


@needs_mpiexec
def test_tensors_that_differ_between_processes_are_an_error_on_every_process(tmp_path):
    saved, _ = run_job("mismatch", 2, tmp_path)
    for got in saved:
        assert str(got["allreduce"]).startswith(
            "allreduce: the processes passed different tensors or arguments (rank 0: "
            "allreduce(op='Average', tensors=[float32[1]]); rank 1: allreduce(op='Average', "
            "tensors=[float32[2]]))"
        )
        assert "rank 0: allgather(shape_past_the_first_axis=(1,), dtype='<f4'); " in str(
            got["allgather"]
        )
        assert "different tensors" in str(got["broadcast"])
        assert got["after"] == 2.0


@needs_mpiexec
def test_an_error_in_one_process_ends_the_whole_job(tmp_path):
    _, done = run_job("failure", 2, tmp_path, check=False)  # TIMEOUT bounds a hang
    assert done.returncode != 0
    # the reason comes first: the launcher may cut what a process wrote last
    said = done.stderr + done.stdout
    assert "process 1 of 2 failed: RuntimeError: process 1 failed on purpose" in said


@needs_mpi
def test_without_mpiexec_it_is_one_process(tmp_path):
    saved, _ = run_job("size", None, tmp_path)
    assert saved[0]["size"] == 1 and saved[0]["rank"] == 0


@needs_mpi
def test_shard_gives_every_process_as_many_items_and_covers_the_data(tmp_path):
    (saved,), _ = run_job("shards", None, tmp_path)
    for n in (12, 13, 2, 0):
        for drop in (False, True):
            parts = [saved[f"{n}_{drop}_{r}_y"] for r in range(3)]
            count = n // 3 if drop else -(-n // 3)
            assert all(len(p) == count for p in parts), (n, drop)
            for r, part in enumerate(parts):
                np.testing.assert_array_equal(saved[f"{n}_{drop}_{r}_x"], part * 10)
                np.testing.assert_array_equal(part, np.arange(r, 3 * count, 3) % max(n, 1))
            everything = np.concatenate(parts)
            assert set(everything) == set(range(n if not drop else 3 * (n // 3)))
    assert "one common first axis" in str(saved["error"])


@needs_mpi
def test_misuse_gets_a_clear_error(tmp_path):
    (saved,), _ = run_job("errors", None, tmp_path)
    expected = {
        "aggregated_in_trace": "TypeError: DistributedOptimizer: backward_passes_per_step adds",
        "broadcast_in_trace": "TypeError: broadcast_variables takes concrete tensors",
        "average_of_ints": "TypeError: allreduce: the Average of int32 tensors",
        "bools": "TypeError: allreduce combines numbers, not bool values",
        "root_rank": "ValueError: broadcast: root_rank 3 is not a rank of a job of 1",
        "scalar_gather": "ValueError: allgather: the tensor must have at least one axis",
        "min_of_slices": "ValueError: allreduce: an IndexedSlices is summed or averaged, not Min",
        "bad_op": "ValueError: allreduce: `op` is one of Average, Sum, Min, Max, Product",
    }
    for name, start in expected.items():
        assert str(saved[name]).startswith(start), (name, str(saved[name]))


@needs_mpi
def test_one_process_trains_as_without_distribute(tmp_path):
    saved, _ = run_job("compiled", None, tmp_path)
    alone = worker.train("compiled", seed=100, distributed=False)
    for key, value in alone.items():
        np.testing.assert_allclose(saved[0][key], value, rtol=1e-12, atol=1e-14, err_msg=key)


def test_without_mpi4py_the_import_error_says_how_to_install_it():
    code = "import sys; sys.modules['mpi4py'] = None; import tracer.distribute"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode != 0
    assert "ImportError: tracer.distribute needs mpi4py" in done.stderr
    assert "pip install 'tracer[mpi]'" in done.stderr


@needs_mpiexec
def test_the_example_trains_on_two_processes_with_identical_weights():
    script = os.path.join(ROOT, "examples", "distributed_mlp.py")
    done = subprocess.run(
        [MPIEXEC, "-n", "2", sys.executable, script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    assert "2 process(es), 300 points each" in done.stdout
    assert "weights identical on every process: True" in done.stdout
    held_out = float(done.stdout.split("held out ")[1].split("%")[0])
    assert held_out > 95.0, done.stdout
    losses = [float(line.split("loss ")[1]) for line in done.stdout.splitlines() if "loss" in line]
    assert losses[-1] < 0.05 * losses[0]
