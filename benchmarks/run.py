"""The benchmark suite: every workload on tracer (eager and compiled), the hand-written numpy
reference, and TensorFlow, JAX and PyTorch when they are installed. Each measurement runs in
a process of its own (with --quick, each system's measurements share one: a smoke test,
whose timings matter not); results are checked against numpy before they are timed.

    python3 benchmarks/run.py                 # the full sizes (a few minutes)
    python3 benchmarks/run.py --quick         # tiny sizes, a smoke test
    python3 benchmarks/run.py --json out.json --only B2,B3
    python3 benchmarks/run.py --only B2,B3 --threads 1    # each worker on one core, pools of 1
    python3 benchmarks/run.py --only B2,B3 --threads 1,2  # the tables at 1, then at 2 cores
    python3 benchmarks/run.py --only B2,B3 --contended    # another process keeps a core busy
    python3 benchmarks/run.py --only B2,B9 --loaded 4     # quiet, then with 4 busy processes

Prints one table of times, each with its ratio to the numpy reference, and for tracer the
ratio to the best peer (< 1 means tracer is faster).

A shared machine has slow spells (everything, numpy included, 1.5-2x slower for a while), so
the whole suite runs `--rounds` times (3 by default) and each system keeps its fastest
round's median: every system gets the same chances of a quiet spell, and a spell that meets
one system's only measurement no longer decides a ratio. The JSON keeps every round.
"""

import argparse
import contextlib
import json
import os
import platform
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import load  # noqa: E402
from data import WORKLOADS  # noqa: E402
from systems import MODULES, PEERS  # noqa: E402

TITLES = {
    "B1": "B1 200-op scalar chain, record + gradient (per op)",
    "B2": "B2 MLP step 128x784-512-10",
    "B3": "B3 fused gradient, 4M float32",
    "B4": "B4 jacobian tanh(W@x+b) 256x256",
    "B4b": "B4b batch_jacobian, batch 64",
    "B5": "B5 hessian, 100 variables",
    "B7": "B7 compiled scalar gradient, per call",
    "B9": "B9 whole training step (B2 + Adam), batch 128",
    "B9b": "B9b whole training step, batch 1",
    "B9u": "B9u whole training step, batch 128, compiled for any batch size",
    "B10": "B10 loop gradient: 1,000 Euler steps of 256 floats, value and gradients",
    "B12": "B12 Hessian-vector product of the B5 function, forward over reverse",
    "B18": "B18 LSTM objective and gradient, 2 layers x 1,023 steps, a Python loop (unrolled)",
    "B18w": "B18w the B18 LSTM with its time steps one loop (tt.range, tf.range, lax.scan)",
    "B19": "B19 CNN step: 2 x (conv 3x3 SAME, relu, max pool 2x2), dense 10, batch 64 of 28x28x1",
    "B20": "B20 GP negative log marginal likelihood (RBF, 512 points, float64) and its gradient",
    "B24": "B24 transformer block training step (pre-LN, causal attention, GELU MLP, MSE, Adam), "
    "batch 8 x 64, width 128, 4 heads",
    "B24L": "B24L transformer block training step, batch 32 x 128, width 256, 8 heads",
    "B28": "B28 text and numbers: 256 numbers parsed from strings, a 1,000-step loop, written back",
    "B29": "B29 small Keras-style training step (Dense 64 relu, Dense 10, Adam), batch 32 of 20",
    "B30": "B30 small Keras-style model's inference outside a tape (Dense 64 relu, Dense 10), "
    "batch 32 of 20",
    "B31": "B31 k-means cost (GradBench's kmeans): 10,000 points, 1,000 centroids, 16 coordinates",
    "B32": "B32 GradBench's ode: 10 Runge-Kutta steps of 100,000 float64, y and the last one's "
    "gradient",
    "B33": "B33 MobileNet-style step: conv 3x3, depthwise 3x3, pointwise, max pool 3x3/2 SAME, "
    "mean, dense 10, batch 32 of 32x32x3",
    "B34": "B34 input pipeline: 8,192 rows of 784, from_tensor_slices, shuffle, map, batch 128, "
    "one pass",
}
SYSTEMS = ("numpy", "tracer-eager", "tracer-compiled", "tracer-profiled", *PEERS)
# tracer-profiled: tracer-compiled with a tt.profiler profile on, for the workloads whose
# profiler overhead is measured (its ratio to tracer-compiled is printed beside it)
PROFILED = ("B2", "B3", "B9")
# the first call includes tracing and compiling (tracer's cache is empty: each worker gets a
# fresh one), reported too
SHOWS_FIRST_CALL = (
    "B10", "B18", "B18w", "B19", "B20", "B24", "B24L", "B28", "B29", "B31", "B32", "B33",
)  # fmt: skip
# ... and the first call of a second process, where the system keeps what it compiled on disk
# (tracer's cache; torch.compile's C++ of its kernels): the workloads whose compile is long
SHOWS_WARM_FIRST_CALL = ("B18",)
CACHES_ON_DISK = ("tracer-compiled", "torch-compile")


# --threads N: the workers' thread pools (OpenMP, OpenBLAS, XLA's and PyTorch's through
# their affinity) and the cores they may run on
THREADS = {"count": None}


def _thread_environment(environment):
    count = THREADS["count"]
    if count is None:
        return environment
    names = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
    return dict(environment, **dict.fromkeys(names, str(count)))


def _on_cores():
    """Run the worker on the first `--threads` cores (as `taskset -c 0-(N-1)`)."""
    count = THREADS["count"]
    if count is not None:
        os.sched_setaffinity(0, range(count))


WORKER = os.path.join(HERE, "worker.py")


def run_worker(workload, system, quick):
    command = [sys.executable, WORKER, workload, system] + (["--quick"] if quick else [])
    with tempfile.TemporaryDirectory(prefix="tracer-bench-cache-") as cache:
        environment = _worker_environment(cache)
        result = _worker_result(command, environment)
        _add_warm_first_call(result, workload, system, command, environment)
    return result


def run_workers_quick(workloads, system):
    """{workload: result} of `system` on `workloads` in one worker process with one empty
    cache (--quick), and B18's first call again in a second process with that cache."""
    with tempfile.TemporaryDirectory(prefix="tracer-bench-cache-") as cache:
        environment = _worker_environment(cache)
        command = [sys.executable, WORKER, ",".join(workloads), system, "--quick"]
        lines = _worker_lines(command, environment)
        if len(lines) != len(workloads):  # it failed on the next one: each alone says which
            return {}
        results = dict(zip(workloads, lines))
        for workload, result in results.items():
            alone = [sys.executable, WORKER, workload, system, "--quick"]
            _add_warm_first_call(result, workload, system, alone, environment)
    return results


def _worker_environment(cache):
    """The environment of a worker whose compile caches are in `cache`: every system's first
    call with an empty one, tracer's and the C++ of torch.compile's kernels (kept in
    /tmp/torchinductor_<user> otherwise, where a run before this one left B18's: 4.1 s first
    calls instead of 33.7 s). Python writes bytecode, as by default: with
    PYTHONDONTWRITEBYTECODE set, tracer keeps no machine records beside the installation
    (codegen/machine_records.py), so every worker's first build learnt the compiler's link
    again, which a user's process does only on an installation's first run."""
    inductor = os.path.join(cache, "torchinductor")
    environment = dict(os.environ, TRACER_CACHE_DIR=cache, TORCHINDUCTOR_CACHE_DIR=inductor)
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    return _thread_environment(environment)


def _add_warm_first_call(result, workload, system, command, environment):
    """Where the workload shows it, the first call of `command` in a second process whose
    caches the first one filled, as `result["warm_first_call_seconds"]`."""
    if result["status"] == "ok" and workload in SHOWS_WARM_FIRST_CALL and system in CACHES_ON_DISK:
        warm = _worker_result([*command, "--first-call-only"], environment)
        if warm["status"] == "ok":
            result["warm_first_call_seconds"] = warm["first_call_seconds"]


def _worker_lines(command, environment):
    """The JSON lines a worker printed, [] where it failed or timed out."""
    result = _run_worker(command, environment)
    if result is None or result.returncode != 0:
        return []
    return [json.loads(line) for line in result.stdout.strip().splitlines()]


def _run_worker(command, environment):
    """The completed worker process, None where it timed out."""
    try:
        return subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=900,
            env=environment,
            preexec_fn=_on_cores,
        )
    except subprocess.TimeoutExpired:
        return None


def _worker_result(command, environment):
    result = _run_worker(command, environment)
    if result is None:
        return {"status": "failed", "detail": "timed out"}
    if result.returncode != 0 or not result.stdout.strip():
        return {
            "status": "failed",
            "detail": (result.stderr.strip().splitlines() or ["no output"])[-1][:200],
        }
    return json.loads(result.stdout.strip().splitlines()[-1])


def run_script(name, quick, as_workers=False):
    """The JSON the benchmark script `name` prints last; `as_workers`: on the workers' cores
    and thread counts (--threads)."""
    command = [sys.executable, os.path.join(HERE, name)] + (["--quick"] if quick else [])
    options = {}
    if as_workers:
        options = dict(env=_thread_environment(dict(os.environ)), preexec_fn=_on_cores)
    result = subprocess.run(command, capture_output=True, text=True, timeout=900, **options)
    if result.returncode != 0:
        return {
            "status": "failed",
            "detail": (result.stderr.strip().splitlines() or ["no output"])[-1][:200],
        }
    return json.loads(result.stdout.strip().splitlines()[-1])


def dram_bound_seconds(quick):
    """The time to read x and write its gradient (B3) at the bandwidth numpy copies with."""
    import numpy as np
    from data import FULL, QUICK
    from timing import median_seconds

    source = np.ones(64 * 1024 * 1024 // 4, np.float32)  # 64 MiB, well past the caches
    target = np.empty_like(source)
    seconds = median_seconds(lambda: np.copyto(target, source), 5, warmup=1)
    bandwidth = 2 * source.nbytes / seconds  # bytes read and written per second
    n = (QUICK if quick else FULL)["B3"]
    return 2 * n * 4 / bandwidth, bandwidth


def format_time(seconds, workload, ops):
    if workload == "B1":
        return f"{seconds / ops * 1e6:.2f} us/op"
    if seconds < 1e-4:  # per-call times (B7) need microseconds to be read against their aim
        return f"{seconds * 1e6:.2f} us"
    return f"{seconds * 1e3:.3f} ms" if seconds < 10 else f"{seconds:.1f} s"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes and few repeats")
    parser.add_argument("--json", help="also write every result to this file")
    parser.add_argument(
        "--only",
        help="comma-separated workloads (B1,B2,B3,B4,B4b,B5,B6,B7,B8,B9,B9b,B9u,B10,B11,B12,B18,B18w,B19,B20,B24,B24L,B28,B29,B30,B31,B32,B33,B34; "
        "B13,B14,B15 run together: exported C against CasADi; B16 cheap-gradient ratios; B17 elementwise gradient by size; B21 data-parallel steps on MPI; B22 compile time of an N-layer chain; "
        "B23 jacobian through a compiled loop, vectorized and row by row, against JAX, TF, torch; "
        "B25 Keras fit per epoch, tt.keras against Keras 3 on TensorFlow, JAX and torch; "
        "B26 a new shape at every call: lse's 20 lengths in a row, then a square matrix's inverse at 10 sizes; "
        "B27 GradBench's gmm (d 20, k 10, n 1,000): first calls and steady gradient, and the "
        "first calls of the program edited and run again on the same cache)",
    )
    parser.add_argument(
        "--systems", help=f"comma-separated systems (default: all of {', '.join(SYSTEMS)})"
    )
    parser.add_argument(
        "--rounds",
        type=int,
        help="runs of the whole suite; each system keeps its fastest (default 3, 1 with --quick)",
    )
    parser.add_argument(
        "--threads",
        type=_thread_counts,
        help="run each worker on this many cores with thread pools of that size (default: all); "
        "several, comma-separated (1,2), measure the timed workloads at each",
    )
    parser.add_argument(
        "--contended",
        action="store_true",
        help="keep one core busy with another process while measuring (a loaded machine)",
    )
    parser.add_argument(
        "--loaded",
        type=int,
        metavar="N",
        help="after the quiet run, measure the timed workloads again with N other busy "
        "processes (numpy matmul loops and pure-Python loops, alternately), and print each "
        "system's loaded / quiet ratio",
    )
    options = parser.parse_args(argv)
    with load.one_busy_core() if options.contended else contextlib.nullcontext():
        return _run(options)


def _thread_counts(text):
    counts = [int(part) for part in text.split(",")]
    if min(counts) < 1 or len(set(counts)) < len(counts):
        raise argparse.ArgumentTypeError(f"thread counts must be positive and distinct: {text!r}")
    return counts


def _run(options):
    chosen = (
        options.only.split(",")
        if options.only
        else [
            *WORKLOADS,
            *("B6", "B8", "B11", "B13", "B16", "B17", "B21", "B22", "B23", "B25", "B26", "B27"),
        ]
    )
    systems = [
        s for s in (options.systems.split(",") if options.systems else SYSTEMS) if s in MODULES
    ]
    workloads = [w for w in chosen if w in WORKLOADS]
    rounds = options.rounds or (1 if options.quick else 3)
    from data import make

    counts = (options.threads or [None])[: None if workloads else 1]  # B6 alone: once
    results = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.platform()}",
        "quick": options.quick,
        "rounds": rounds,
        # the counts measured at; one as a number, as before several could be given
        "threads": counts[0] if len(counts) == 1 else counts,
        "contended": options.contended,
    }
    if options.loaded:
        results["loaded"] = {"processes": options.loaded}
    startups = []  # B6's, measured in the rounds of the first thread count
    for number, count in enumerate(counts):
        THREADS["count"] = count
        wanted = startups if number == 0 and "B6" in chosen else None
        timed = measure(workloads, systems, rounds, options.quick, wanted)
        if len(counts) > 1:
            print(f"\n=== each worker on {count} core(s), thread pools of {count} ===")
            results[str(count)] = timed
        else:
            results.update(timed)
        for workload in workloads:
            ops = make(workload, options.quick).get("ops", 1) if workload == "B1" else 1
            print_workload(workload, timed[workload], ops)
            if workload == "B3":
                print_dram_bound(timed)
        if options.loaded and workloads:
            with load.busy_processes(options.loaded):
                loaded = measure(workloads, systems, rounds, options.quick, None)
            if len(counts) > 1:
                results["loaded"][str(count)] = loaded
            else:
                results["loaded"].update(loaded)
            print(f"\n=== with {options.loaded} other busy processes ===")
            for workload in workloads:
                ops = make(workload, options.quick).get("ops", 1) if workload == "B1" else 1
                print_workload(workload, loaded[workload], ops)
            print_loaded_ratios(workloads, timed, loaded)
    if "B6" in chosen:
        results["B6"] = fastest_startup(startups)
        print("\nB6 time to first result (a new process each)")
        for name, r in results["B6"].items():
            text = (
                f"import {r['import_seconds']:.2f} s, first result {r['first_result_seconds']:.3f} s"
                if r["status"] == "ok"
                else r["status"] + ": " + r.get("detail", "")
            )
            print(f"  {name:32} {text}")
    if "B8" in chosen or "B11" in chosen:
        memory = run_script("memory.py", options.quick)
        results["B8"], results["B11"] = memory.get("B8", memory), memory.get("B11", memory)
    if "B8" in chosen:
        print("\nB8 memory of the B2 step on an eager tape")
        for name, r in results["B8"].items():
            if "peak_bytes" in r:
                print(
                    f"  {name:16} peak {r['peak_bytes'] / 1e6:.1f} MB, held while recorded "
                    f"{r['held_while_recorded'] / 1e6:.2f} MB, held after the step {r['held_after_step'] / 1e6:.2f} MB"
                )
    if "B11" in chosen:
        print_loop_memory(results["B11"])
    if {"B13", "B14", "B15"} & set(chosen):
        results["export_c"] = run_export_c(options.quick)
    for workload, (script, show) in SCRIPTS.items():  # workloads with a script of their own
        if workload in chosen:
            results[workload] = run_script(script, options.quick)
            show(results[workload])
            if options.loaded and workload in SCRIPTS_LOADED:
                with load.busy_processes(options.loaded):
                    results["loaded"][workload] = run_script(script, options.quick)
                print(f"\n=== {workload} with {options.loaded} other busy processes ===")
                show(results["loaded"][workload])
    if "B23" in chosen:
        results["B23"] = measure_loop_jacobian(options.quick)
        print_loop_jacobian(results["B23"])
        if options.loaded:
            with load.busy_processes(options.loaded):
                results["loaded"]["B23"] = measure_loop_jacobian(options.quick)
            condition = f", with {options.loaded} other busy processes"
            print_loop_jacobian(results["loaded"]["B23"], condition)
            print_loop_jacobian_loaded(results["B23"], results["loaded"]["B23"])
    if options.json:
        with open(options.json, "w") as handle:
            json.dump(results, handle, indent=1)
    return 0


def measure(workloads, systems, rounds, quick, startups):
    """The timed workloads' rows, each system's fastest round with every round's seconds,
    and B3's DRAM bound; in each round, B6's startup measurement is appended to `startups`
    unless it is None."""
    every_round = {w: {s: [] for s in systems} for w in workloads}
    bounds, vector_math = [], []
    for number in range(1, rounds + 1):
        print(f"round {number} of {rounds} ...", file=sys.stderr, flush=True)
        measured = {}  # (workload, system) -> result, of the --quick processes
        if quick:
            for system in systems:
                chosen = [w for w in workloads if system != "tracer-profiled" or w in PROFILED]
                results = run_workers_quick(chosen, system) if chosen else {}
                measured.update(((w, system), r) for w, r in results.items())
        for workload in workloads:
            for system in systems:
                earlier = every_round[workload][system]
                if (
                    earlier and earlier[-1]["status"] != "ok"
                ):  # skipped, n/a, wrong or failed: once is enough
                    continue
                if system == "tracer-profiled" and workload not in PROFILED:
                    earlier.append({"status": "n/a"})  # (no worker process to say so)
                    continue
                result = measured.get((workload, system))
                earlier.append(result or run_worker(workload, system, quick))
            if workload == "B3":
                bounds.append(dram_bound_seconds(quick))
                vector_math.append(run_script("vector_math_bound.py", quick, as_workers=True))
        if startups is not None:
            startups.append(run_script("startup.py", quick))
    timed = {}
    for workload in workloads:
        timed[workload] = {s: fastest(r) for s, r in every_round[workload].items()}
        for system, measured in every_round[workload].items():
            timed[workload][system]["round_seconds"] = [
                r["seconds"] for r in measured if r["status"] == "ok"
            ]
    if bounds:
        timed["B3 DRAM bound seconds"], timed["B3 copy bandwidth"] = min(bounds)
        timed["B3 vector-math bound seconds"] = min(
            (r["seconds"] for r in vector_math if r["status"] == "ok"), default=None
        )
    return timed


def print_dram_bound(timed):
    """B3's two bounds (memory and the transcendental calls alone), and tracer's distance
    to the larger."""
    bound, bandwidth = timed["B3 DRAM bound seconds"], timed["B3 copy bandwidth"]
    calls = timed.get("B3 vector-math bound seconds")
    compiled = timed["B3"].get("tracer-compiled", {})
    larger = max(bound, calls or 0.0)
    distance = (
        f"; tracer compiled is {compiled['seconds'] / larger:.2f}x the larger"
        if compiled.get("seconds")
        else ""
    )
    vector = (
        f", vector-math bound: {calls * 1e3:.2f} ms (tanh, sin, cos and exp alone: "
        "benchmarks/vector_math_bound.py)"
        if calls
        else ""
    )
    print(
        f"  DRAM bound: {bound * 1e3:.2f} ms (reading x and writing the gradient at "
        f"{bandwidth / 1e9:.1f} GB/s, numpy's copy bandwidth){vector}{distance}"
    )


def run_export_c(quick):
    """B13-B15 (benchmarks/export_c.py): tracer's exported C and CasADi's generated C,
    called from C programs; its table is printed as it is, its figures returned."""
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        out = os.path.join(directory, "export_c.json")
        command = [sys.executable, os.path.join(HERE, "export_c.py"), "--json", out]
        result = subprocess.run(
            command + (["--quick"] if quick else []), capture_output=True, text=True, timeout=1800
        )
        print("\n" + result.stdout.strip())
        if result.returncode != 0:
            detail = (result.stderr.strip().splitlines() or ["no output"])[-1][:200]
            print(f"  failed: {detail}")
            return {"status": "failed", "detail": detail}
        with open(out) as handle:
            return json.load(handle)


def print_cheap_gradient(report):
    """B16: value-and-gradient time over forward time, per workload and compiled system."""
    print("\nB16 cheap-gradient ratio: value and gradient / forward alone, compiled")
    if report.get("status") == "failed":
        print(f"  failed: {report.get('detail', '')}")
        return
    for system, result in report.items():
        if result["status"] != "ok":
            print(f"  {system:12} {result['status']}: {result.get('detail', '')}")
            continue
        cells = [
            f"{name} {w['ratio']:.2f}x ({w['forward_seconds'] * 1e3:.3f} -> "
            f"{w['value_and_grad_seconds'] * 1e3:.3f} ms)"
            if w["status"] == "ok"
            else f"{name} {w['status']}"
            for name, w in result["workloads"].items()
        ]
        print(f"  {system:12} " + "; ".join(cells))


def print_size_scaling(report):
    """B17: ns per element of the elementwise gradient at each size, against the bound."""
    print("\nB17 elementwise gradient (B3's function) by size, compiled, ns per element")
    if report.get("status") == "failed":
        print(f"  failed: {report.get('detail', '')}")
        return
    print(f"  bandwidth bound {report['bound_ns_per_element']:.3f} ns (read x, write the gradient)")
    for n, row in report.items():
        if n == "bound_ns_per_element":
            continue
        cells = [
            f"{system} {r['ns_per_element']:.3f} ns"
            if r["status"] == "ok"
            else f"{system} {r['status']}"
            for system, r in row.items()
        ]
        print(f"  n={int(n):>8}: " + "; ".join(cells))


def print_compile_time(report):
    """B22: the first call of the chain, cold and warm, and later calls, per N."""
    print(
        "\nB22 compile time: N layers tanh(x @ W), value and gradients; first call in a new process"
        " (after the import, timed apart)"
    )
    if report.get("status") == "failed":
        print(f"  failed: {report.get('detail', '')}")
        return
    names = [
        "tracer",
        "tracer-tiered",
        "tracer warm (second process)",
        "tracer-tiered warm (second process)",
        "tracer warm, code moved (lines added, another folder)",
        "tracer new module (cache of an earlier build)",
        "jax-jit",
        "tf-function",
    ]
    for n, row in report.items():
        cells = []
        for name in names:
            r = row.get(name, {})
            if r.get("status") != "ok":
                cells.append(f"{name} {r.get('status', 'n/a')}")
                continue
            text = f"{name} {r['first_seconds']:.3f} s (import {r['import_seconds']:.2f} s)"
            if "c_ready_seconds" in r:
                text += f" (C from {r['c_ready_seconds']:.2f} s)"
            cells.append(f"{text}, later {r['later_seconds'] * 1e3:.3f} ms")
        print(f"  N={n}: " + "; ".join(cells))


def print_distributed(report):
    """B21: each step's time on 1 and 2 processes, and what the allreduce costs in it."""
    print("\nB21 data-parallel B2 and B9 steps (global batch split over the processes, MPI)")
    if report.get("status") != "ok":
        print(f"  {report.get('status')}: {report.get('detail', '')}")
        return
    for processes, r in report["processes"].items():
        if r.get("status") == "failed":
            print(f"  {processes} process(es): failed: {r['detail']}")
            continue
        steps = "; ".join(
            f"{name} {r[f'{name} seconds'] * 1e3:.3f} ms (without the allreduce "
            f"{r[f'{name} local seconds'] * 1e3:.3f} ms: the reduction is "
            f"{1 - r[f'{name} local seconds'] / r[f'{name} seconds']:.0%} of the step)"
            for name in ("B2", "B9")
        )
        print(
            f"  {processes} process(es), batch {r['batch_per_process']} each: {steps}; "
            f"grouped_allreduce of {r['allreduce floats']} floats alone "
            f"{r['allreduce seconds'] * 1e3:.3f} ms"
        )


def print_loop_memory(report):
    """B11: each peak in bytes and in states of the loop, against sqrt(steps) states."""
    print("\nB11 peak memory of the B10 gradient, every state kept and checkpointed")
    if "state_bytes" not in report:
        print(f"  {report.get('status', 'failed')}: {report.get('detail', '')}")
        return
    state, steps = report["state_bytes"], report["steps"]
    print(
        f"  {steps} steps of a {state} B state; sqrt(steps) states = {steps**0.5 * state / 1e3:.1f} kB"
    )
    for name, peak in report.items():
        if isinstance(peak, int) and "," in name:
            print(f"  {name:26} peak {peak / 1e3:9.1f} kB = {peak / state:7.1f} states")


def fastest(measured):
    """The fastest round, or the last one when a round was not ok (a wrong result is never hidden)."""
    if measured[-1]["status"] != "ok":
        return dict(measured[-1])
    return dict(min(measured, key=lambda r: r["seconds"]))


def fastest_startup(startups):
    """B6 over rounds: per process kind, the round with the fastest first result (a round that
    was not ok is kept instead, as in `fastest`)."""
    failed = [report for report in startups if "status" in report]  # the script itself failed
    if failed:
        return failed[-1]
    best = {}
    for report in startups:
        for name, r in report.items():
            kept = best.get(name)
            if (
                kept is None
                or kept["status"] == "ok"
                and (
                    r["status"] != "ok" or r["first_result_seconds"] < kept["first_result_seconds"]
                )
            ):
                best[name] = r
    return best


def print_workload(workload, row, ops):
    print(f"\n{TITLES[workload]}")
    reference = row.get("numpy", {}).get("seconds")
    peers = [r["seconds"] for s, r in row.items() if s in PEERS and r["status"] == "ok"]
    best_peer = min(peers) if peers else None
    for system, r in row.items():
        if system == "tracer-profiled" and workload not in PROFILED:
            continue
        if r["status"] != "ok":
            print(f"  {system:16} {r['status']}{': ' + r['detail'] if r.get('detail') else ''}")
            continue
        text = f"  {system:16} {format_time(r['seconds'], workload, ops):>14}"
        if reference:
            text += f"   {r['seconds'] / reference:7.2f}x numpy"
        if system.startswith("tracer") and best_peer:
            text += f"   {r['seconds'] / best_peer:7.2f}x best peer"
        compiled = row.get("tracer-compiled", {})
        if system == "tracer-profiled" and compiled.get("status") == "ok":
            text += f"   {r['seconds'] / compiled['seconds']:7.2f}x tracer-compiled (profiler on)"
        if workload in SHOWS_FIRST_CALL and system not in ("numpy",):
            text += f"   first call {r['first_call_seconds']:.2f} s"
        if "warm_first_call_seconds" in r:
            text += f", {r['warm_first_call_seconds']:.2f} s in a second process (caches warm)"
        print(text)


def print_loaded_ratios(workloads, quiet, loaded):
    """Each system's time with the other processes busy over its quiet time, and the same
    ratio of the peer fastest when loaded, which tracer-compiled's should not exceed."""
    print("\nloaded / quiet, each system's own times")
    for workload in workloads:
        ratios = {
            system: loaded[workload][system]["seconds"] / r["seconds"]
            for system, r in quiet[workload].items()
            if r["status"] == "ok" and loaded[workload].get(system, {}).get("status") == "ok"
        }
        peers = [system for system in ratios if system in PEERS]
        cells = [f"{system} {ratio:.2f}x" for system, ratio in ratios.items()]
        print(f"  {workload:5} " + ", ".join(cells))
        if "tracer-compiled" in ratios and peers:
            fastest = min(peers, key=lambda system: loaded[workload][system]["seconds"])
            print(
                f"        tracer-compiled {ratios['tracer-compiled']:.2f}x against the fastest "
                f"loaded peer's ({fastest}) {ratios[fastest]:.2f}x"
            )


def measure_loop_jacobian(quick):
    """B23 (benchmarks/loop_jacobian.py): the jacobian through a compiled loop, vectorized and
    row by row, tracer and its peers each in a process of their own, on `--threads` cores."""
    command = [sys.executable, os.path.join(HERE, "loop_jacobian.py")] + (
        ["--quick"] if quick else []
    )
    try:  # 12 processes: beside `--loaded` busy ones, more than a worker's 900 s
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=2400,
            env=_thread_environment(dict(os.environ)),
            preexec_fn=_on_cores,
        )
    except subprocess.TimeoutExpired:
        return {"status": "failed", "detail": "timed out"}
    if done.returncode != 0 or not done.stdout.strip():
        return {
            "status": "failed",
            "detail": (done.stderr.strip().splitlines() or ["no output"])[-1][:200],
        }
    return json.loads(done.stdout.strip().splitlines()[-1])


def print_loop_jacobian(report, condition=""):
    """B23: each system's forms in ms, row by row over vectorized, tracer's over each form."""
    print(
        f"\nB23 jacobian through a compiled loop ({report.get('steps')} steps of "
        f"{report.get('size')} float64){condition}: the median call, each form's fastest of "
        f"{report.get('rounds')} rounds"
    )
    if "tracer" not in report:
        print(f"  {report.get('status')}: {report.get('detail', '')}")
        return
    tracer = report["tracer"]
    for system, r in report.items():
        if not isinstance(r, dict):
            continue
        if r["status"] not in ("ok", "wrong"):
            print(f"  {system:12} {r['status']}: {r.get('detail', '')}")
            continue
        cells = []
        for form in ("vectorized", "row by row"):
            if form not in r:
                continue
            text = f"{form} {r[form]['seconds'] * 1e3:9.3f} ms"
            if system != "tracer" and tracer.get("status") == "ok":
                text += f" (tracer/this {tracer[form]['seconds'] / r[form]['seconds']:5.2f}x)"
            cells.append(text)
        if "row by row" in r:
            ratio = r["row by row"]["seconds"] / r["vectorized"]["seconds"]
            cells.append(f"row by row / vectorized {ratio:.1f}x")
        print(f"  {system:12} " + "; ".join(cells) + ("   WRONG" if r["status"] == "wrong" else ""))


def print_loop_jacobian_loaded(quiet, loaded):
    """B23: each system's form loaded over its quiet time."""
    print("\nB23 loaded / quiet, each system's own times")
    for system, r in quiet.items():
        if not isinstance(r, dict) or r.get("status") != "ok":
            continue
        busy = loaded.get(system, {})
        cells = [
            f"{form} {busy[form]['seconds'] / r[form]['seconds']:.2f}x"
            for form in ("vectorized", "row by row")
            if form in r and busy.get("status") == "ok"
        ]
        print(f"  {system:12} " + (", ".join(cells) or busy.get("status", "n/a")))


def print_keras_fit(report):
    """B25: each system's median epoch and first epoch, tracer's over each peer's, and how
    far each system's losses are from tracer's."""
    print(
        f"\nB25 Keras fit, seconds per epoch: the median of {report.get('epochs', '?')} epochs "
        "after the first (batch 64, shuffle=False, Adam), each system's fastest of "
        f"{report.get('rounds', '?')} rounds; the first epoch (tracing and compiling) apart"
    )
    if report.get("status") == "failed":
        print(f"  failed: {report.get('detail', '')}")
        return
    for model, row in report.items():
        if not isinstance(row, dict):
            continue
        print(f"  {model}:")
        tracer = row.get("tracer", {})
        for system, r in row.items():
            if r["status"] not in ("ok", "wrong"):
                print(f"    {system:14} {r['status']}: {r.get('detail', '')}")
                continue
            text = (
                f"    {system:14} {r['epoch_seconds'] * 1e3:9.1f} ms/epoch   first epoch "
                f"{r['first_epoch_seconds']:6.2f} s   loss {r['losses'][-1]:.5f}"
            )
            if system != "tracer" and tracer.get("status") == "ok":
                text += (
                    f"   tracer/this {tracer['epoch_seconds'] / r['epoch_seconds']:5.2f}x"
                    f" (first epoch {tracer['first_epoch_seconds'] / r['first_epoch_seconds']:.2f}x)"
                )
            if "loss_difference" in r:
                difference = r["loss_difference"]
                text += f"   losses vs tracer {difference['first']:.1e}, {difference['last']:.1e}"
            if r["status"] == "wrong":
                text += "   WRONG"
            print(text)


def print_retrace(report):
    """B26: the total of 20 calls of lse and its gradient, a new length at each, and the
    traces they made, per system; tracer's total over each peer's."""
    print(
        f"\nB26 a new shape at every call: logsumexp and its gradient at "
        f"{len(report.get('sizes', []))} lengths in a row, a fresh process, an empty cache"
    )
    _print_systems(
        report,
        lambda r: (
            f"total {r['total_seconds']:7.3f} s   last ten {r['last_ten_seconds'] * 1e3:8.2f} ms"
            f"   traces {r['traces']}"
        ),
        ("total_seconds",),
    )
    square = report.get("square", {})
    print(
        f"  then the sum of a square matrix's inverse and square, and its gradient, at "
        f"{len(square.get('sizes', []))} sizes in a row"
    )
    _print_systems(
        square,
        lambda r: f"total {r['total_seconds']:7.3f} s   traces {r['traces']}",
        ("total_seconds",),
    )


def print_gmm_first_call(report):
    """B27: each system's first objective, first gradient and steady gradient; tracer's
    over each peer's."""
    sizes = report.get("sizes", {})
    print(
        f"\nB27 GradBench's gmm (d {sizes.get('d')}, k {sizes.get('k')}, n {sizes.get('n')}), "
        "compiled, a fresh process with an empty cache"
    )
    _print_systems(
        report,
        lambda r: (
            f"first objective {r['first_objective_seconds']:6.3f} s   first gradient "
            f"{r['first_gradient_seconds']:6.3f} s   steady gradient "
            f"{r['steady_gradient_seconds'] * 1e3:7.3f} ms"
        ),
        ("first_objective_seconds", "first_gradient_seconds", "steady_gradient_seconds"),
    )
    print("  the program edited (a penalty on the means) and run again on the same cache")
    edited = {s: r["edited"] for s, r in report.items() if isinstance(r, dict) and "edited" in r}
    _print_systems(
        edited,
        lambda r: (
            f"first objective {r['first_objective_seconds']:6.3f} s   first gradient "
            f"{r['first_gradient_seconds']:6.3f} s"
        ),
        ("first_objective_seconds", "first_gradient_seconds"),
    )


def _print_systems(report, row, ratios):
    """One line per system of a script's report (its other entries, as "sizes", skipped):
    `row(result)`, and for a peer tracer's `ratios` fields over its own."""
    if report.get("status") == "failed":
        print(f"  failed: {report.get('detail', '')}")
        return
    tracer = report.get("tracer", {})
    for system, r in report.items():
        if not isinstance(r, dict) or "status" not in r:
            continue
        if r["status"] != "ok":
            print(f"  {system:14} {r['status']}: {r.get('detail', '')}")
            continue
        text = f"  {system:14} {row(r)}"
        if system != "tracer" and tracer.get("status") == "ok":
            text += "   tracer/this " + " / ".join(f"{tracer[f] / r[f]:.3f}x" for f in ratios)
        print(text)


# the workloads measured by a script of their own (each process per measurement inside it)
SCRIPTS = {
    "B16": ("cheap_gradient.py", print_cheap_gradient),
    "B17": ("size_scaling.py", print_size_scaling),
    "B22": ("compile_time.py", print_compile_time),
    "B21": ("distributed.py", print_distributed),
    "B25": ("keras_fit.py", print_keras_fit),
    "B26": ("retrace.py", print_retrace),
    "B27": ("gmm_first_call.py", print_gmm_first_call),
}
# those of them measured again beside the busy processes of --loaded
SCRIPTS_LOADED = {"B26", "B27"}


if __name__ == "__main__":
    sys.exit(main())
