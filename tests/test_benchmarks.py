"""The benchmark suite runs, on tiny sizes, and every tracer result agrees with numpy (the
worker checks each one before timing it). Timings are printed, never asserted."""

import importlib.util
import json
import pathlib
import shutil
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
NEW_MODULE = "tracer new module (cache of an earlier build)"  # benchmarks/compile_time.py


def run_suite(tmp_path, *options):
    """(the completed `run.py --quick` with `options`, its JSON results)."""
    out = tmp_path / "results.json"
    command = [sys.executable, str(REPO / "benchmarks" / "run.py"), "--quick", "--json", str(out)]
    result = subprocess.run(
        command + list(options), capture_output=True, text=True, timeout=600, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    return result, json.loads(out.read_text())


SYSTEMS = "tracer-eager,tracer-compiled"
# the first part also runs numpy's timings, a peer (not installed here: its worker says
# "skipped") and the profiler's system; the others leave them out (each worker checks its
# results against numpy's whatever the systems)
MORE_SYSTEMS = ",numpy,tracer-profiled,torch-eager"


def _timed_checks(result, results):
    for workload in ("B1", "B2", "B3", "B4", "B4b", "B5", "B7"):
        row = results[workload]
        assert row["numpy"]["status"] == "ok"
        for system in ("tracer-eager", "tracer-compiled"):
            if system == "tracer-compiled" and workload == "B1":
                continue
            assert row[system]["status"] == "ok", (workload, system, row[system])
            assert row[system]["error"] <= 1e-3 and row[system]["seconds"] > 0
        assert row["torch-eager"]["status"] in ("ok", "skipped", "n/a")
        profiled = row["tracer-profiled"]
        if workload in ("B2", "B3"):  # a profile on: the same values
            assert profiled["status"] == "ok" and profiled["error"] <= 1e-3, profiled
        else:
            assert profiled["status"] == "n/a"
    assert results["B6"]["tracer warm (second process)"]["status"] == "ok"
    assert results["B8"]["non-persistent"]["held_after_step"] == 0
    assert results["B8"]["persistent"]["held_after_step"] > 0
    assert "B2 MLP step" in result.stdout and "x numpy" in result.stdout
    # B3's two bounds: the copy's and the transcendental calls' alone
    assert results["B3 vector-math bound seconds"] > 0 and "vector-math bound:" in result.stdout


def _first_call_checks(result, results):
    for workload, systems in (
        ("B18", ("tracer-eager", "tracer-compiled")),
        ("B18w", ("tracer-compiled",)),
        ("B19", ("tracer-eager", "tracer-compiled")),
        ("B20", ("tracer-eager", "tracer-compiled")),
        ("B33", ("tracer-eager", "tracer-compiled")),
    ):
        _check_first_call(results, workload, systems)


def _transformer_and_text_checks(result, results):
    for workload in ("B24", "B24L", "B28", "B29", "B30", "B31", "B32"):
        _check_first_call(results, workload, ("tracer-eager", "tracer-compiled"))
    # the input pipeline: one system of tracer's (its map is a tt.function either way)
    _check_first_call(results, "B34", ("tracer-compiled",))
    assert results["B34"]["tracer-eager"]["status"] == "n/a"


def _check_first_call(results, workload, systems):
    for system in systems:
        assert results[workload][system]["status"] == "ok", (workload, system)
        assert results[workload][system]["error"] <= 1e-4
        assert results[workload][system]["first_call_seconds"] > 0


def _export_checks(result, results):
    exported = {row["workload"] for row in results["export_c"]["rows"]}
    assert exported == {"B13", "B14", "B15"}
    assert all(isinstance(row["tracer"], (int, float)) for row in results["export_c"]["rows"])


def _gradient_checks(result, results):
    tracer = results["B16"]["tracer"]
    assert tracer["status"] == "ok", tracer
    for name in ("mlp", "elementwise", "rnn"):
        workload = tracer["workloads"][name]
        assert workload["status"] == "ok" and workload["ratio"] > 0, (name, workload)
    assert results["B16"]["jax-jit"]["status"] in ("ok", "skipped")
    assert results["B17"]["bound_ns_per_element"] > 0
    for n in ("1000", "10000"):
        assert results["B17"][n]["tracer"]["status"] == "ok", results["B17"][n]
        assert results["B17"][n]["tracer"]["ns_per_element"] > 0


def _compile_and_mpi_checks(result, results):
    for n in ("2",):  # (--quick's one size)
        row = results["B22"][n]
        for system in ("tracer", "tracer-tiered", "tracer warm (second process)", NEW_MODULE):
            assert row[system]["status"] == "ok", (n, system, row[system])
            assert row[system]["error"] <= 1e-3 and row[system]["first_seconds"] > 0
        assert row["tracer-tiered"]["backend"] == "c"
        # a machine's first module learns the link (unless the machine's records are beside
        # the installation: codegen/machine_records.py); a new module links by gold alone
        assert row["tracer"]["link"] in (
            ("driver", "direct") if shutil.which("ld.gold") else ("driver",)
        )
        assert row[NEW_MODULE]["link"] == ("direct" if shutil.which("ld.gold") else "driver")
    assert results["B21"]["status"] in ("ok", "skipped")  # skipped without the mpi extra
    if results["B21"]["status"] == "ok":
        for processes in ("1", "2"):
            row = results["B21"]["processes"][processes]
            assert row["B9 seconds"] > 0 and row["allreduce seconds"] > 0, row
            assert row["batch_per_process"] == 8 // int(processes)


def _keras_fit_checks(result, results):
    """B25: tracer's fit ran both models; each peer ran or was skipped (not installed), and
    whatever ran trained as tracer did (the same losses, within the script's tolerance)."""
    for model in ("mlp", "cnn"):
        row = results["B25"][model]
        tracer = row["tracer"]
        assert tracer["status"] == "ok", (model, tracer)
        assert tracer["epoch_seconds"] > 0 and tracer["first_epoch_seconds"] > 0
        assert len(tracer["losses"]) == 1 + results["B25"]["epochs"]
        assert tracer["losses"][-1] < tracer["losses"][0]  # it learns
        for system, r in row.items():
            assert r["status"] in ("ok", "skipped"), (model, system, r)
            if r["status"] == "ok" and system != "tracer":
                assert r["loss_difference"]["first"] <= 1e-4, (model, system, r)
    assert "B25 Keras fit" in result.stdout


def _retrace_checks(result, results):
    """B26: tracer's calls at four new lengths gave numpy's values with at most two traces
    (the second length makes the length symbolic), and so did its calls at four sizes of a
    square matrix (its sides one symbol); each peer ran or was skipped."""
    report = results["B26"]
    for system in ("tracer", "tracer-tiered"):
        assert report[system]["status"] == "ok", (system, report[system])
        assert report[system]["traces"] == 2 and report[system]["total_seconds"] > 0
    square = report["square"]
    assert square["tracer"]["status"] == "ok" and square["tracer"]["traces"] == 2, square
    for system in ("jax-jit", "tf-function"):
        assert report[system]["status"] in ("ok", "skipped"), (system, report[system])
        assert square[system]["status"] in ("ok", "skipped"), (system, square[system])
    assert "B26 a new shape at every call" in result.stdout


def _gmm_first_call_checks(result, results):
    """B27: tracer's gmm ran (tiny sizes) and timed both first calls; each peer ran and
    agreed with it, or was skipped."""
    report = results["B27"]
    tracer = report["tracer"]
    assert tracer["status"] == "ok", tracer
    assert tracer["first_objective_seconds"] > 0 and tracer["steady_gradient_seconds"] > 0
    for system in ("jax-jit", "tf-function"):
        assert report[system]["status"] in ("ok", "skipped"), (system, report[system])
    assert "B27 GradBench's gmm" in result.stdout


# The suite's workloads in parts that parallel test workers run at once; together, every
# workload `run.py` runs by default.
PARTS = {
    "B1-B11": ("B1,B2,B3,B4,B4b,B5,B7,B6,B8,B11", _timed_checks),
    "B9-B20, B33": ("B9,B9b,B9u,B10,B12,B18,B18w,B19,B20,B33", _first_call_checks),
    "B24-B34": ("B24,B24L,B28,B29,B30,B31,B32,B34", _transformer_and_text_checks),
    "exported C": ("B13", _export_checks),
    "B16-B17": ("B16,B17,B23", _gradient_checks),
    "B21-B22": ("B21,B22", _compile_and_mpi_checks),
    "B25": ("B25", _keras_fit_checks),
    "B26": ("B26", _retrace_checks),
    "B27": ("B27", _gmm_first_call_checks),
}
# run.py's own list
SCRIPT_WORKLOADS = {
    *("B6", "B8", "B11", "B13", "B16", "B17", "B21", "B22", "B23", "B25", "B26", "B27")
}


def test_the_parts_cover_every_workload_of_the_suite():
    spec = importlib.util.spec_from_file_location("bench_data", REPO / "benchmarks" / "data.py")
    data = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(data)
    chosen = [w for workloads, _ in PARTS.values() for w in workloads.split(",")]
    assert len(chosen) == len(set(chosen))
    assert set(chosen) == set(data.WORKLOADS) | SCRIPT_WORKLOADS


@pytest.mark.parametrize("part", PARTS)
def test_the_suite_runs_on_tiny_sizes(tmp_path, part):
    workloads, check = PARTS[part]
    systems = SYSTEMS + (MORE_SYSTEMS if part == "B1-B11" else "")
    check(*run_suite(tmp_path, "--only", workloads, "--systems", systems))


def test_the_suite_runs_on_one_core_and_two_and_under_load(tmp_path):
    """--threads 1,2 measures each worker pinned to one core with pools of one thread, then
    on two; --contended keeps a core busy with another process, --loaded N measures again
    beside N busy processes; the busy processes are gone when the suite ends."""
    result, results = run_suite(
        tmp_path,
        "--only",
        "B2",
        "--systems",
        "numpy,tracer-compiled",
        "--threads",
        "1,2",
        "--contended",
    )
    assert results["threads"] == [1, 2] and results["contended"] is True
    for count in ("1", "2"):
        assert results[count]["B2"]["tracer-compiled"]["status"] == "ok"
        assert results[count]["B2"]["tracer-compiled"]["error"] <= 1e-3
        assert f"each worker on {count} core(s)" in result.stdout
    assert "B2" not in results  # only by thread count
    result, one = run_suite(
        tmp_path, "--only", "B2", "--systems", "numpy", "--threads", "1", "--loaded", "2"
    )
    assert one["threads"] == 1 and one["B2"]["numpy"]["status"] == "ok"
    loaded = one["loaded"]
    assert loaded["processes"] == 2 and loaded["B2"]["numpy"]["status"] == "ok"
    quiet, busy = one["B2"]["numpy"]["seconds"], loaded["B2"]["numpy"]["seconds"]
    assert f"B2    numpy {busy / quiet:.2f}x" in result.stdout
    assert "=== with 2 other busy processes ===" in result.stdout
    busy = _busy_programs()
    assert not any(program in line for line in _command_lines() for program in busy)


def _busy_programs():
    """The programs of `benchmarks/load.py`'s busy processes (other tests that run at the
    same time have loops of their own, so a bare `while True` proves nothing)."""
    spec = importlib.util.spec_from_file_location("bench_load", REPO / "benchmarks" / "load.py")
    load = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(load)
    return (load.MATMUL_LOOP.encode(), load.PYTHON_LOOP.encode())


def _command_lines():
    """Every process's command line (processes that end meanwhile are skipped)."""
    for path in pathlib.Path("/proc").glob("[0-9]*/cmdline"):
        try:
            yield path.read_bytes()
        except OSError:
            continue
