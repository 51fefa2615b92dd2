"""One thread pool for compiled code (runtime/thread_pools.py): the modules' OpenBLAS on the
calling thread, large products cut into parts for tracer's threads, a pool sized from the
cores the process may use. Values against numpy in float64, and the same bits whatever the
thread count."""

import json
import os
import pathlib
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tracer as tt
from codegen import conv_kernels
from runtime import thread_pools
from tracer.ops.linalg_ops import GEMM_PARALLEL_MIN

REPO = pathlib.Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    ("text", "cores"),
    [("200000 100000\n", 2.0), ("150000 100000\n", 1.5), ("max 100000\n", None), ("x y", None)],
)
def test_a_cgroup_v2_quota_is_read_in_cores(tmp_path, text, cores):
    (tmp_path / "cpu.max").write_text(text)
    assert thread_pools.cgroup_quota(str(tmp_path)) == cores


def test_a_cgroup_v1_quota_is_read_in_cores(tmp_path):
    (tmp_path / "cpu").mkdir()
    (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text("50000\n")
    (tmp_path / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    assert thread_pools.cgroup_quota(str(tmp_path)) == 0.5
    (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text("-1\n")  # no quota
    assert thread_pools.cgroup_quota(str(tmp_path)) is None


def test_no_cgroup_files_means_no_quota(tmp_path):
    assert thread_pools.cgroup_quota(str(tmp_path)) is None


def test_the_usable_cores_are_at_most_the_affinity_mask():
    assert 1 <= thread_pools.usable_cores() <= len(os.sched_getaffinity(0))


def _products(rng):
    """(a, b, transpose_a, transpose_b): products of at least GEMM_PARALLEL_MIN multiply-adds,
    cut along rows and along columns, with sides that are no multiple of 16, batched."""
    shapes = [
        ((300, 70), (70, 100), False, False),  # rows
        ((70, 90), (90, 333), False, False),  # columns
        ((70, 300), (100, 70), True, True),  # rows, both transposed
        ((90, 70), (333, 70), False, True),  # columns, b transposed
        ((3, 2, 40, 65), (2, 65, 90), False, False),  # a batch, broadcast
        ((60, 1000), (60, 20), True, False),  # a transposed
        ((5000, 8), (5000, 30), True, False),  # few outputs of long columns: summed in chunks
    ]
    for a_shape, b_shape, ta, tb in shapes:
        yield rng.standard_normal(a_shape), rng.standard_normal(b_shape), ta, tb


def _expected(a, b, ta, tb):
    a = np.swapaxes(a, -1, -2) if ta else a
    return np.matmul(a, np.swapaxes(b, -1, -2) if tb else b)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_products_cut_into_parts_give_numpys_values(dtype):
    rng = np.random.default_rng(0)
    for a, b, ta, tb in _products(rng):
        a, b = a.astype(dtype), b.astype(dtype)
        want = _expected(a.astype(np.float64), b.astype(np.float64), ta, tb)
        m, k = want.shape[-2], (a.shape[-2] if ta else a.shape[-1])
        assert np.prod(want.shape) * k >= GEMM_PARALLEL_MIN, (a.shape, b.shape)
        product = tt.function(
            lambda a, b, ta=ta, tb=tb: tt.matmul(a, b, transpose_a=ta, transpose_b=tb),
            backend="c",
        )
        tolerance = 1e-4 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(product(a, b).numpy(), want, rtol=tolerance, atol=tolerance)
        assert m > 1


def test_a_product_of_a_size_unknown_when_compiled_is_cut_along_it():
    rng = np.random.default_rng(1)
    w = rng.standard_normal((200, 300))
    product = tt.function(
        lambda x: tt.matmul(x, w),
        input_signature=[tt.TensorSpec([None, 200], tt.float64)],
        backend="c",
    )
    for rows in (1, 17, 250):
        x = rng.standard_normal((rows, 200))
        np.testing.assert_allclose(product(x).numpy(), x @ w, rtol=1e-12, atol=1e-12)
    source = product.get_concrete_function().c_source()
    # its parts are rows (the last argument but the operands), by the module's loop or the
    # installed kernels' (codegen/conv_kernels.py, `_gemm_parts`)
    assert "tr_gemm_parts_d(0, 0, d0, 300, 200, 200, 300, 300, 1, a, b, out)" in source
    assert "last - first" in source or "gemm_parts_f64" in source


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_modules_products_call_one_function_and_give_numpys_values(dtype, blas_past_most_macs):
    """The products of a module that are not batches call one function for their type
    (templates/gemm_parts.c.j2), which cuts each as its own kernel did: rows or columns,
    transposed or not, large enough for the threads or not (the first three past the
    installed small products, codegen/blocked_products.py's MOST_MACS)."""
    rng = np.random.default_rng(5)
    a, b, c = (rng.standard_normal(s).astype(dtype) for s in ((600, 900), (900, 257), (257, 900)))

    def products(a, b, c):
        return [
            a @ b,
            tt.matmul(a, c, transpose_b=True),
            tt.matmul(b, a, transpose_a=True, transpose_b=True),
            tt.matmul(c[:3], b[:, :5]),
        ]

    compiled = tt.function(products, backend="c")
    got = [r.numpy() for r in compiled(a, b, c)]
    want = [a @ b, a @ c.T, b.T @ a.T, c[:3] @ b[:, :5]]
    tolerance = 1e-3 if dtype == np.float32 else 1e-11
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=tolerance, atol=tolerance)
    source = compiled.get_concrete_function(a, b, c).c_source()
    name = "tr_gemm_parts_" + ("s" if dtype == np.float32 else "d")
    assert (
        len(
            re.findall(
                rf"^static \w* ?void {name}\(|^TR_PART TR_NOINLINE void {name}\(", source, re.M
            )
        )
        == 1
    )
    assert source.count(f"    {name}(") == 4  # one call in each product's kernel


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_large_triangular_solve_cut_into_parts_gives_numpys_values(dtype, monkeypatch):
    """The right-hand sides of a large solve are cut into parts for the threads, as a
    product's columns are (each column's solution is its own), and each part is solved by
    halves of the triangle: the module's own template, as on a CPU without the installed
    blocked solves (tests/test_blocked_solves.py has those), nor the installed kernels' parts
    (tests/test_installed_kernels.py has those)."""
    monkeypatch.setattr(conv_kernels.blocked_products, "solve_geometry", lambda *args: None)
    monkeypatch.setattr(conv_kernels, "available", lambda: False)
    rng = np.random.default_rng(6)
    lower = np.tril(rng.standard_normal((2, 160, 160))) + 20 * np.eye(160)
    rhs = rng.standard_normal((2, 160, 213))
    lower, rhs = lower.astype(dtype), rhs.astype(dtype)
    assert 160 * 160 * 213 >= GEMM_PARALLEL_MIN
    tolerance = 1e-4 if dtype == np.float32 else 1e-12
    for is_lower in (True, False):
        for adjoint in (False, True):
            a = lower if is_lower else np.swapaxes(lower, -1, -2)
            solve = tt.function(
                lambda a, b, is_lower=is_lower, adjoint=adjoint: tt.linalg.triangular_solve(
                    a, b, lower=is_lower, adjoint=adjoint
                ),
                backend="c",
            )
            op = np.swapaxes(a, -1, -2) if adjoint else a
            want = np.linalg.solve(op.astype(np.float64), rhs.astype(np.float64))
            np.testing.assert_allclose(solve(a, rhs).numpy(), want, rtol=tolerance, atol=tolerance)
    source = solve.get_concrete_function(a, rhs).c_source()
    assert "X + first" in source
    assert "tr_solve_halves_" in source  # 160 rows: two halves and a GEMM between them


GRADIENT_AT_THREAD_COUNTS = textwrap.dedent(
    """
    import ctypes, json, os
    import numpy as np
    import tracer as tt
    from runtime import native

    rng = np.random.default_rng(2)
    x = tt.constant(rng.standard_normal((256, 300)).astype(np.float32))
    w = tt.Variable(rng.standard_normal((300, 200)).astype(np.float32) * 0.05)

    @tt.function(backend="c")
    def step(x):
        with tt.GradientTape() as tape:
            loss = tt.reduce_sum(tt.tanh(tt.matmul(tt.tanh(tt.matmul(x, w)), w, transpose_b=True)))
        return loss, tape.gradient(loss, w)

    loss, gradient = step(x)
    def openblas(fragment):
        with open("/proc/self/maps") as maps:
            paths = sorted({l.split()[-1] for l in maps if fragment in l})
        return ctypes.CDLL(paths[0]) if paths else None
    modules_blas = openblas("scipy_openblas32/lib/libscipy_openblas")
    print(json.dumps({
        "loss": float(loss), "gradient": gradient.numpy().tobytes().hex(),
        "modules_blas_threads": modules_blas.scipy_openblas_get_num_threads(),
        "pool": native.load("thread_pool").settings(),
        "openblas_threads_variable": os.environ.get("OPENBLAS_NUM_THREADS"),
    }))
    """
)


def _run(program, tmp_path, args=(), **env):
    environment = dict(os.environ, TRACER_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(REPO))
    for name in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OPENBLAS_NUM_THREADS"):
        environment.pop(name, None)
    environment.update(env)
    completed = subprocess.run(
        [sys.executable, "-c", program, *args], env=environment, capture_output=True, text=True
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads(completed.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_a_step_on_any_thread_count_agrees_and_the_blas_runs_on_the_calling_thread(tmp_path):
    """A training step on 1, 2 and 5 threads gives numpy's loss, and the same bits in two
    processes of the same thread count (each part of a product is the same call of the
    BLAS whichever thread takes it); the modules' OpenBLAS runs on one thread, loaded so
    without leaving OPENBLAS_NUM_THREADS to children; the pool has the threads asked for,
    and its idle threads spin always where the user says so."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((256, 300)).astype(np.float32).astype(np.float64)
    w = (rng.standard_normal((300, 200)).astype(np.float32) * 0.05).astype(np.float64)
    h = np.tanh(x @ w)
    z = h @ w.T
    want = np.sum(np.tanh(z))
    dz = 1 - np.tanh(z) ** 2
    want_gradient = dz.T @ h + x.T @ ((dz @ w) * (1 - h**2))
    for count in ("1", "2", "5"):
        run = _run(GRADIENT_AT_THREAD_COUNTS, tmp_path, OMP_NUM_THREADS=count)
        again = _run(GRADIENT_AT_THREAD_COUNTS, tmp_path, OMP_NUM_THREADS=count)
        assert (run["loss"], run["gradient"]) == (again["loss"], again["gradient"])
        np.testing.assert_allclose(run["loss"], want, rtol=1e-4)
        gradient = np.frombuffer(bytes.fromhex(run["gradient"]), np.float32).reshape(300, 200)
        np.testing.assert_allclose(gradient, want_gradient, rtol=1e-3, atol=1e-3)
        assert run["modules_blas_threads"] == 1
        assert run["pool"][0] == int(count)
        assert run["openblas_threads_variable"] is None
    chosen = _run(GRADIENT_AT_THREAD_COUNTS, tmp_path, OMP_WAIT_POLICY="ACTIVE")
    assert chosen["pool"][1] == thread_pools.SPIN_ALWAYS


def test_under_a_cpu_quota_idle_workers_never_spin(monkeypatch):
    """A quota counts a spin as work, and throttles the process once it is spent."""
    for name in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OMP_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(thread_pools, "cgroup_quota", lambda: 2.0)
    monkeypatch.setattr(thread_pools, "usable_cores", lambda: 2)
    assert thread_pools.settings() == (2, 0, thread_pools.CALLER_SPIN_COUNT, False, 0)


@pytest.fixture
def no_user_settings(monkeypatch):
    """No thread setting of the user's (the environment is restored afterwards)."""
    for name in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OMP_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_idle_threads_spin_briefly_while_the_machine_is_quiet(no_user_settings):
    """As many threads as usable cores; idle workers spin QUIET_SPIN_COUNT pauses, watched:
    the pool spins only while the machine is quiet, and a reserve of as many workers again
    joins the loops while it is not (tests/test_openmp_entries.py); a caller waits for its
    workers' shares with at least CALLER_SPIN_COUNT."""
    no_user_settings.setattr(thread_pools, "cgroup_quota", lambda: None)
    for cores in (1, 2, 6):
        no_user_settings.setattr(thread_pools, "usable_cores", lambda: cores)
        assert thread_pools.settings() == (
            cores,
            thread_pools.QUIET_SPIN_COUNT,
            thread_pools.CALLER_SPIN_COUNT,
            True,
            cores if cores > 1 else 0,  # a pool of one thread runs every loop whole
        )
    no_user_settings.setitem(thread_pools._state, "threads", 3)  # the program's count
    assert thread_pools.settings()[0::4] == (3, 0)


@pytest.mark.parametrize(
    "name, value, threads, spin",
    [
        ("OMP_WAIT_POLICY", "ACTIVE", None, thread_pools.SPIN_ALWAYS),
        ("OMP_WAIT_POLICY", "passive", None, 0),
        ("GOMP_SPINCOUNT", "7", None, 7),
        ("GOMP_SPINCOUNT", "infinite", None, thread_pools.SPIN_ALWAYS),
        ("OMP_NUM_THREADS", "3", 3, thread_pools.QUIET_SPIN_COUNT),
        ("OMP_NUM_THREADS", "5,2", 5, thread_pools.QUIET_SPIN_COUNT),
        ("OMP_NUM_THREADS", "0", None, thread_pools.QUIET_SPIN_COUNT),  # not a count: ignored
        ("GOMP_SPINCOUNT", "many", None, thread_pools.QUIET_SPIN_COUNT),
    ],
)
def test_a_users_thread_settings_win(no_user_settings, name, value, threads, spin):
    """A spin the user chose is kept whatever the machine (not watched)."""
    no_user_settings.setattr(thread_pools, "cgroup_quota", lambda: None)
    no_user_settings.setenv(name, value)
    watched = name not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT") or value == "many"
    cores = thread_pools.usable_cores()
    assert thread_pools.settings() == (
        threads or cores,
        spin,
        thread_pools.CALLER_SPIN_COUNT,
        watched,
        cores if watched and threads is None and cores > 1 else 0,  # a count chosen is kept
    )


POOL_AS_LOADED = textwrap.dedent(
    """
    import ctypes, json, sys
    from runtime import native, thread_pools

    extension = native.load(sys.argv[1])
    pool = native.load("thread_pool")
    if extension is None or pool is None:
        print(json.dumps(None))
    else:
        entries = ctypes.c_void_p.in_dll(ctypes.CDLL(extension.__file__), "tr_pool").value
        print(json.dumps({"settings": pool.settings(), "attached": entries == pool.table()}))
    """
)


@pytest.mark.parametrize("extension", ["conv_kernels", "array_math"])
def test_an_installed_extension_runs_its_loops_on_the_pool(tmp_path, extension):
    """Whichever of tracer's libraries with parallel loops loads first (here an installed
    extension, as an eager product's kernel does before any module is built), the pool is
    configured then (OMP_NUM_THREADS=3: its size), and the library's OpenMP entry points are
    handed its table."""
    found = _run(POOL_AS_LOADED, tmp_path, (extension,), OMP_NUM_THREADS="3")
    if found is None:
        pytest.skip(f"the {extension} extension or the pool is not built here")
    assert found["settings"][0] == 3
    assert found["attached"]


SHARED_NODE = textwrap.dedent(
    """
    import json, os
    from runtime import native, thread_pools
    from tracer.distribute import process

    process._loaded_openblas = lambda: []  # numpy's OpenBLAS left alone
    native.pool_table()  # the pool configured before the job starts
    process._share_cores(2)
    threads, spin, _, _ = native.load("thread_pool").settings()
    print(json.dumps({"spin": spin, "threads": threads, "cores": thread_pools.usable_cores()}))
    """
)


def test_the_processes_of_a_job_sharing_a_node_never_spin(tmp_path):
    """tracer.distribute divides the cores among a node's processes, and their idle threads
    sleep at once (each other's threads want the cores). In a process of its own: importing
    tracer.distribute registers its collective ops, which the fuzzer's catalogue test counts."""
    pytest.importorskip("mpi4py", reason="tracer.distribute needs mpi4py: pip install -e '.[mpi]'")
    found = _run(SHARED_NODE, tmp_path)
    assert found["spin"] == 0
    assert found["threads"] == max(1, found["cores"] // 2)


def test_a_program_sizes_the_pool_as_tensorflows_threading_does():
    """tt.config.threading.set_intra_op_parallelism_threads: the pool's size from the next
    loop on (values as numpy's on one thread and back on the default); 0 is the default;
    the inter-op count is recorded; a count that is not one is refused, naming the call."""
    from runtime import native

    threading = tt.config.threading
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((300, 400)), rng.standard_normal((400, 500))
    product = tt.function(lambda a, b: tt.matmul(a, b), backend="c")
    default = thread_pools.settings()[0]
    try:
        for count in (1, 3, 0):
            threading.set_intra_op_parallelism_threads(count)
            assert threading.get_intra_op_parallelism_threads() == count
            np.testing.assert_allclose(product(a, b).numpy(), a @ b, rtol=1e-12, atol=1e-12)
            pool = native.load("thread_pool")
            if pool is not None:
                assert pool.settings()[0] == (count or default)
        threading.set_inter_op_parallelism_threads(4)
        assert threading.get_inter_op_parallelism_threads() == 4
        for wrong, error in (
            (-1, ValueError),
            (1 << 16, ValueError),
            (2.0, TypeError),
            (True, TypeError),
        ):
            with pytest.raises(error, match="set_intra_op_parallelism_threads: num_threads"):
                threading.set_intra_op_parallelism_threads(wrong)
        assert threading.get_intra_op_parallelism_threads() == 0
    finally:
        threading.set_intra_op_parallelism_threads(0)
        threading.set_inter_op_parallelism_threads(0)


_NUMPYS_IMPORT_SEEN = """
import os, sys

seen = []


class Watch:
    def find_spec(self, name, path=None, target=None):
        if name == "numpy":
            seen.append(os.environ.get("OPENBLAS_THREAD_TIMEOUT"))


if sys.argv[1] == "numpy first":
    import numpy
sys.meta_path.insert(0, Watch())
import tracer

print(seen, os.environ.get("OPENBLAS_THREAD_TIMEOUT"))
"""


@pytest.mark.parametrize(
    "given, numpy_first, seen",
    [(None, False, "['20'] None"), ("7", False, "['7'] 7"), (None, True, "[] None")],
)
def test_tracer_imports_numpy_with_its_openblas_threads_spinning_briefly(given, numpy_first, seen):
    """numpy's OpenBLAS reads OPENBLAS_THREAD_TIMEOUT as it loads: tracer sets it for numpy's
    import alone (runtime/numpy_first.py), leaves a user's own value as it is, and changes
    nothing where numpy was imported first."""
    environment = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    if given is not None:
        environment["OPENBLAS_THREAD_TIMEOUT"] = given
    argument = "numpy first" if numpy_first else "tracer first"
    result = subprocess.run(
        [sys.executable, "-c", _NUMPYS_IMPORT_SEEN, argument],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == seen
