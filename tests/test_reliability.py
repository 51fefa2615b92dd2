"""Builds under threads, a cache that trusts nothing it reads, compile failures and time-outs
under backend="auto", and bad inputs: issue 18's cases, each a test."""

import hashlib
import json
import os
import pathlib
import shutil
import stat
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import tracer as tt
from runtime import native
from tests import processes

REPO = pathlib.Path(__file__).resolve().parent.parent
REAL_CC = shutil.which("cc") or shutil.which("gcc")

PROGRAM = textwrap.dedent(
    """
    import json, sys, warnings
    import numpy as np
    import tracer as tt

    @tt.function(backend=sys.argv[1])
    def f(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.reduce_sum(tt.nn.relu(x) * tt.sin(x))
        return y, tape.gradient(y, x)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y, g = f(tt.constant([0.5, -2.0, 10.0]))
    concrete = f.get_concrete_function(tt.constant([0.5, -2.0, 10.0]))
    meta = getattr(concrete._executable, "meta", {})
    print(json.dumps({"y": float(y), "g": g.numpy().tolist(), "backend": concrete.backend,
                      "cached": meta.get("cached"), "warnings": [str(w.message) for w in caught]}))
    """
)
X = np.array([0.5, -2.0, 10.0], np.float32)
WANT_Y = float(np.sum(np.maximum(X, 0) * np.sin(X)))
WANT_G = ((X > 0) * (np.sin(X) + X * np.cos(X))).tolist()


def run(cache, backend="c", env=None, program=PROGRAM):
    environment = dict(os.environ, TRACER_CACHE_DIR=str(cache), PYTHONPATH=str(REPO))
    # the compiled templates too
    environment["PYTHONPYCACHEPREFIX"] = processes.with_bytecode(cache / ".pycache")
    environment["PYTHONDONTWRITEBYTECODE"] = ""
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-c", program, backend],
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )


def result(completed):
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "Traceback" not in completed.stderr, completed.stderr[-3000:]
    out = json.loads(completed.stdout)
    np.testing.assert_allclose(out["y"], WANT_Y, rtol=1e-6)
    np.testing.assert_allclose(out["g"], WANT_G, rtol=1e-6)
    return out


@pytest.fixture(scope="module")
def populated(tmp_path_factory):
    """A cache holding the program's module, its toolchain record and compiled templates."""
    cache = tmp_path_factory.mktemp("populated") / "cache"
    assert result(run(cache))["cached"] is False
    return cache


def _damaged_copy(populated, tmp_path):
    cache = tmp_path / "cache"
    shutil.copytree(populated, cache)
    cache.chmod(0o700)
    return cache


def _targets(cache):
    (entry,) = [p for p in cache.iterdir() if p.is_dir() and not p.name.startswith(".")]
    return {
        "library": next(entry.glob("*.so")),
        "meta": entry / "meta.json",
        "toolchain": cache / "toolchains.json",
        "links": cache / "links.json",
        "template": sorted((cache / ".pycache").rglob("*.cache"))[0],
    }


def _damage(path, kind):
    data = path.read_bytes()
    if kind == "missing":
        path.unlink()
    elif kind == "directory":
        path.unlink()
        path.mkdir()
        (path / "inside").write_text("x")
    else:
        damaged = {
            "truncated": data[: len(data) // 3],
            "flipped": data[: len(data) // 2]
            + bytes([data[len(data) // 2] ^ 0x10])
            + data[len(data) // 2 + 1 :],
            "json list": b"[]",
            "wrong types": json.dumps(
                {"key": 5, "name": [], "library": {}, "sha256": None, "records": "x"}
            ).encode(),
        }[kind]
        path.write_bytes(damaged)


# each file damaged in the ways its reader tells apart (a file of zeros or of random bytes
# fails as a truncated one does: a library's digest, a record's parse)
JSON_DAMAGES = ("truncated", "flipped", "json list", "wrong types", "directory")
DAMAGES = (
    [("library", kind) for kind in ("truncated", "flipped", "missing", "directory")]
    + [(target, kind) for target in ("meta", "toolchain") for kind in JSON_DAMAGES]
    + [
        pytest.param(
            "links",
            kind,
            marks=pytest.mark.skipif(shutil.which("ld.gold") is None, reason="gold's record"),
        )
        for kind in JSON_DAMAGES
    ]
    + [("template", kind) for kind in ("truncated", "flipped", "directory")]
)


@pytest.mark.parametrize("target, kind", DAMAGES)
def test_every_kind_of_cache_damage_is_repaired_in_the_next_call(populated, tmp_path, target, kind):
    cache = _damaged_copy(populated, tmp_path)
    damaged = _targets(cache)[target]
    _damage(damaged, kind)
    if target in ("toolchain", "links"):  # and the machine's copy beside the installation
        (beside,) = (cache / ".pycache").rglob(f"machine/{damaged.name}")
        _damage(beside, kind)
    if target in ("template", "links"):  # read when C is rendered, linked: make the module again
        for entry in cache.iterdir():
            if entry.is_dir() and (entry.name == ".plans" or not entry.name.startswith(".")):
                shutil.rmtree(entry)
    out = result(run(cache))  # the right numbers, no exception
    assert out["backend"] == "c" and not out["warnings"]
    assert out["cached"] is (target == "toolchain")  # a damaged module is built again
    again = result(run(cache))
    assert again["cached"] is True  # repaired: the next process loads it
    if target == "links":  # learnt again from the link through the compiler
        (record,) = json.loads((cache / "links.json").read_text())["records"].values()
        assert "needed" in record


def test_a_library_that_matches_its_digest_but_does_not_load_is_built_again(populated, tmp_path):
    cache = _damaged_copy(populated, tmp_path)
    targets = _targets(cache)
    targets["library"].write_bytes(b"\x7fELF, but not a shared library")
    meta = json.loads(targets["meta"].read_text())
    meta["sha256"] = hashlib.sha256(targets["library"].read_bytes()).hexdigest()
    targets["meta"].write_text(json.dumps(meta))  # as a planted entry would be
    completed = run(cache)
    out = result(completed)
    assert out["backend"] == "c" and out["cached"] is False and not out["warnings"]
    assert "does not load" in completed.stderr or "could not be loaded" in completed.stderr
    assert result(run(cache))["cached"] is True


def test_a_module_that_cannot_be_loaded_falls_back_under_auto_and_raises_under_c(monkeypatch):
    from codegen import build
    from codegen.errors import LoadError

    def refuse(self, path, uses_blas):
        raise LoadError(f"the compiled module {path} could not be loaded: noexec")

    monkeypatch.setattr(build.Library, "__init__", refuse)
    monkeypatch.setattr(build, "_loaded", {})

    def f(x):
        return tt.reduce_sum(tt.sin(x) * x * 1.25)  # a module of its own

    x = tt.constant(X.astype(np.float64))
    with pytest.warns(UserWarning, match="could not be loaded"):
        y = tt.function(f, backend="auto")(x)
    assert abs(float(y) - float(np.sum(np.sin(X.astype(np.float64)) * X * 1.25))) < 1e-12
    with pytest.raises(LoadError, match="noexec"):
        tt.function(f, backend="c")(x)


EXIT_WHILE_THREADS_RUN = textwrap.dedent(
    """
    import sys, threading, time
    import numpy as np
    import tracer as tt

    @tt.function(backend="c")
    def f(x):
        for _ in range(20):
            x = tt.sin(x) * 1.0001
        return tt.reduce_sum(x)

    x = tt.constant(np.random.default_rng(0).random(2_000_000))
    f(x)

    def loop():
        while True:
            f(x)

    for _ in range(4):
        threading.Thread(target=loop, daemon=True).start()
    time.sleep(0.3)
    print("exiting", flush=True)
    """
)


def test_the_process_exits_cleanly_while_daemon_threads_run_compiled_code(tmp_path):
    """Modules stay mapped until the process is gone (RTLD_NODELETE): freeing a library's
    handle at exit unmapped code that daemon threads were running (a crash in 3 of 9 runs)."""
    for _ in range(4):
        completed = run(tmp_path / "cache", program=EXIT_WHILE_THREADS_RUN)
        assert completed.returncode == 0, (completed.returncode, completed.stderr[-2000:])
        assert completed.stdout.strip() == "exiting"


def test_builds_of_processes_that_died_are_counted_and_removed(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    dead = cache / ".build-999999999-abc"  # no such process
    dead.mkdir()
    (dead / "module.c").write_text("int x;")
    alive = cache / f".build-{os.getpid()}-def"  # this process: still building
    alive.mkdir()
    env = dict(os.environ, TRACER_CACHE_DIR=str(cache))
    info = subprocess.run(
        [sys.executable, "-m", "tracer", "cache", "info"], env=env, capture_output=True, text=True
    )
    assert "1 unfinished builds" in info.stdout, info.stdout + info.stderr
    result(run(cache))  # a build removes the dead one
    assert not dead.exists() and alive.exists()
    dead.mkdir()
    cleared = subprocess.run(
        [sys.executable, "-m", "tracer", "cache", "clear"], env=env, capture_output=True, text=True
    )
    assert "1 modules, 1 stored plans and 1 unfinished builds" in cleared.stdout, cleared.stdout
    assert not dead.exists() and not (cache / ".plans").exists()


def test_a_cache_others_can_write_is_refused_and_auto_falls_back(tmp_path):
    cache = tmp_path / "shared"
    cache.mkdir()
    cache.chmod(0o777)
    forced = run(cache, "c")
    assert forced.returncode != 0
    assert "UnsafeCacheDirectory" in forced.stderr and "others can write to it" in forced.stderr
    out = result(run(cache, "auto"))
    assert out["backend"] == "interpreter" and len(out["warnings"]) == 1
    assert "refusing the cache directory" in out["warnings"][0]
    assert not any(p.name.endswith(".so") for p in cache.rglob("*"))  # nothing built there


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0, reason="chown needs root")
def test_a_cache_owned_by_another_user_is_refused(tmp_path):
    cache = tmp_path / "foreign"
    cache.mkdir(mode=0o700)
    os.chown(cache, 12345, 12345)
    forced = run(cache, "c")
    assert forced.returncode != 0 and "owned by user id 12345" in forced.stderr


def _compiler(tmp_path, body):
    """A `cc` that runs `body` (sh) when asked to build a module, and the real compiler
    otherwise (version banner, probes)."""
    wrapper = tmp_path / "cc"
    wrapper.write_text(
        f'#!/bin/sh\ncase "$*" in *module.c*)\n{body}\n;;\nesac\nexec {REAL_CC} "$@"\n'
    )
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    return str(wrapper)


def test_a_compile_error_falls_back_under_auto_with_one_warning_naming_it(tmp_path):
    cc = _compiler(tmp_path, "echo \"error: unsupported masking for 'vmovsh'\" >&2\nexit 1")
    out = result(run(tmp_path / "cache", "auto", env={"CC": cc}))
    assert out["backend"] == "interpreter" and len(out["warnings"]) == 1
    assert "CompileError" in out["warnings"][0]
    forced = run(tmp_path / "cache", "c", env={"CC": cc})
    assert forced.returncode != 0 and "vmovsh" in forced.stderr


def test_a_compile_past_its_time_limit_ends_the_compiler_and_its_children(tmp_path):
    pids = tmp_path / "pids"
    cc = _compiler(tmp_path, f"sleep 300 &\necho $! >> {pids}\nsleep 300")
    start = time.perf_counter()
    out = result(run(tmp_path / "cache", "auto", env={"CC": cc, "TRACER_COMPILE_TIMEOUT": "2"}))
    assert time.perf_counter() - start < 60
    assert out["backend"] == "interpreter" and "ran past 2 s" in out["warnings"][0]
    for pid in map(int, pids.read_text().split()):  # the compiler's child is gone too
        for _ in range(50):
            if not _running(pid):
                break
            time.sleep(0.1)
        assert not _running(pid)


def test_compilers_run_at_once_end_together_when_one_fails_or_runs_past_its_limit(
    tmp_path, monkeypatch
):
    """A module's translation units compile at once (codegen.build.run_compilers): a unit
    that fails ends the others at once, their children too; past the time limit, all end."""
    from codegen import build
    from codegen.errors import CompileError

    pids = tmp_path / "pids"
    slow = ["sh", "-c", f"sleep 300 & echo $! >> {pids}; sleep 300"]
    start = time.perf_counter()
    (ok, _), (failed, errors), (stopped, _) = build.run_compilers(
        [["true"], ["sh", "-c", "sleep 0.2; echo 'error: no' >&2; exit 3"], slow]
    )
    assert time.perf_counter() - start < 30
    assert (ok, failed, stopped) == (0, 3, -9) and "error: no" in errors
    monkeypatch.setenv("TRACER_COMPILE_TIMEOUT", "1")
    with pytest.raises(CompileError, match="ran past 1 s"):
        build.run_compilers([slow, slow])
    for pid in map(int, pids.read_text().split()):  # the compilers' children are gone too
        for _ in range(50):
            if not _running(pid):
                break
            time.sleep(0.1)
        assert not _running(pid)


def test_the_error_of_a_failed_unit_is_reported_not_that_of_one_it_stopped(monkeypatch):
    """Units stopped because another failed (killed, status < 0) say nothing: the error
    raised is the failed unit's, whatever their order."""
    from codegen import build
    from codegen import units as module_units
    from codegen.errors import CompileError

    run_compilers = build.run_compilers

    def units_fail(commands):
        if len(commands) == 1:  # the compiler's probes
            return run_compilers(commands)
        return [(-9, ""), (1, "unit1.c:3: error: the cause")]

    monkeypatch.setattr(module_units, "count", lambda source: 2)
    monkeypatch.setattr(build, "run_compilers", units_fail)
    f = tt.function(lambda x: tt.sin(x) * 3.25 + 0.125, backend="c")
    with pytest.raises(CompileError, match="the cause"):
        f(tt.constant(np.arange(7.0)))


def _running(pid):
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


THREADS_PROGRAM = textwrap.dedent(
    """
    import sys, threading
    import numpy as np
    import tracer as tt

    results = {}

    def work(k):
        f = tt.function(lambda x: tt.reduce_sum(tt.sin(x) * float(k)), backend="c")
        same = tt.function(lambda x: tt.reduce_sum(tt.cos(x)), backend="c")
        x = tt.constant(np.linspace(0, 1, 5))
        results[k] = (float(f(x)), float(same(x)), id(same.get_concrete_function(x)._executable.meta))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    x = np.linspace(0, 1, 5)
    assert all(abs(results[k][0] - k * np.sin(x).sum()) < 1e-12 for k in range(6)), results
    assert all(abs(results[k][1] - np.cos(x).sum()) < 1e-12 for k in range(6)), results
    assert len({results[k][2] for k in range(6)}) == 1  # one build of the shared function
    print("the program's own output")
    """
)


def test_threads_compiling_at_once_keep_the_program_s_stdout(tmp_path):
    for attempt in range(2):
        completed = run(tmp_path / f"cache{attempt}", program=THREADS_PROGRAM)
        assert completed.returncode == 0, completed.stderr[-3000:]
        assert completed.stdout == "the program's own output\n"
        assert "Traceback" not in completed.stderr


def test_bad_inputs_give_clear_errors_or_the_right_number():
    with pytest.raises(TypeError, match="cannot convert None"):
        tt.constant(1.0) + None
    with pytest.raises(TypeError, match="cannot convert 'x'"):
        tt.multiply(tt.constant(1.0), "x")
    with pytest.raises(ValueError, match="delta must not be 0"):
        tt.range(0, 10, 0)
    with pytest.raises(TypeError, match="keys that sort.*int, str"):
        tt.function(lambda d: d[1] + d["a"])({1: tt.constant(1.0), "a": tt.constant(2.0)})
    with pytest.raises(OverflowError, match="does not fit"):
        tt.constant(1) + 2**31
    # an empty reduce_max is the identity of max, as in TensorFlow, eager and compiled
    empty = tt.zeros((0,))
    assert float(tt.reduce_max(empty)) == -np.inf
    assert float(tt.function(tt.reduce_max, backend="c")(empty)) == -np.inf

    reciprocal = tt.function(lambda s: tt.constant(1.0) / s, backend="c")
    assert float(reciprocal(0.0)) == np.inf and float(reciprocal(-0.0)) == -np.inf


def test_a_rank_the_c_backend_cannot_compile_falls_back_or_says_so():
    from codegen.errors import UnsupportedGraph

    x = tt.ones([1] * 33)
    with pytest.raises(UnsupportedGraph, match="rank up to 32.*rank 33"):
        tt.function(lambda x: x * 2.0, backend="c")(x)
    with pytest.warns(UserWarning, match="UnsupportedGraph"):
        y = tt.function(lambda x: x * 2.0)(x)
    assert y.shape == x.shape and float(tt.reduce_sum(y)) == 2.0


def test_out_of_range_gather_indices_are_an_error_in_every_backend():
    params, indices = tt.constant([1.0, 2.0, 3.0]), tt.constant([0, 5])
    for backend in ("c", "interpreter"):
        with pytest.raises(IndexError, match=r"out of range \[0, 3\)"):
            tt.function(tt.gather, backend=backend)(params, indices)
    with pytest.raises(Exception, match="5"):
        tt.gather(params, indices)


def test_a_compiled_functions_value_error_names_the_users_line_in_every_backend():
    """An index out of range and a matrix that is not positive definite, found when the
    function runs: the C module and the interpreter both name the line of the op."""

    def picked(p, i):
        return tt.gather(p, i) * 2.0

    def factor(a):
        return tt.linalg.cholesky(a) + 1.0

    cases = [
        (picked, (tt.constant([1.0, 2.0, 3.0]), tt.constant([0, 5])), IndexError),
        (factor, (tt.constant([[1.0, 2.0], [2.0, 1.0]]),), np.linalg.LinAlgError),
    ]
    for function, args, kind in cases:
        where = f"(at test_reliability.py:{function.__code__.co_firstlineno + 1})"
        for backend in ("c", "interpreter"):
            with pytest.raises(kind) as raised:
                tt.function(function, backend=backend)(*args)
            assert where in str(raised.value), (backend, str(raised.value))


SANITIZED_PROGRAM = textwrap.dedent(
    """
    import sys
    import numpy as np
    import tracer as tt

    x = tt.constant(np.linspace(-1, 1, 12).reshape(3, 4))
    for _ in range(2):  # the eager op path in C; its sweep of the rules, then of the build
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.reduce_sum(tt.tanh(x @ tt.transpose(x)) @ tt.gather(x, [0, 2, 1]) * x[:, 1:2])
        assert tape.gradient(y, x).shape == (3, 4)
    f = tt.function(lambda x: tt.reduce_sum(tt.sin(x) * tt.gather(x, [2, 0, 1])), backend="c")
    assert abs(float(f(x)) - np.sum(np.sin(x.numpy()) * x.numpy()[[2, 0, 1]])) < 1e-12
    try:
        tt.function(tt.gather, backend="c")(x, tt.constant([7]))
    except IndexError:
        pass
    import subprocess
    from runtime import native

    for extension in native.EXTENSIONS.values():  # built by runtime.native, with the sanitizers
        path = sys.modules[extension.module].__file__
        symbols = subprocess.run(["nm", "-D", path], capture_output=True, text=True).stdout
        print(extension.module, "__asan" in symbols and "__ubsan" in symbols)
    """
)


def _sanitizer_runtimes():
    cc = REAL_CC or "gcc"
    found = [
        subprocess.run(
            [cc, f"-print-file-name={lib}"], capture_output=True, text=True
        ).stdout.strip()
        for lib in ("libasan.so", "libubsan.so")
    ]
    return found if all(os.path.isabs(path) for path in found) else None


def _run_sanitized(cache, program):
    """`program` in a new process with TRACER_SANITIZE=address,undefined, the runtimes
    preloaded (Python itself is not built with them)."""
    env = {
        "TRACER_SANITIZE": "address,undefined",
        "LD_PRELOAD": ":".join(_sanitizer_runtimes()),
        "ASAN_OPTIONS": "detect_leaks=0",
    }
    return run(cache, program=program, env=env)


needs_sanitizers = pytest.mark.skipif(
    _sanitizer_runtimes() is None, reason="the compiler has no sanitizer runtimes"
)


@pytest.fixture(scope="module")
def sanitized_cache(tmp_path_factory):
    """One cache for the sanitized programs: the eager path's sanitized build (most of their
    time) is made once."""
    return tmp_path_factory.mktemp("sanitized") / "cache"


@pytest.mark.slow
@needs_sanitizers
def test_tracer_sanitize_builds_modules_and_the_eager_path_with_sanitizers(sanitized_cache):
    cache = sanitized_cache
    completed = _run_sanitized(cache, SANITIZED_PROGRAM)
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "runtime error" not in completed.stderr and "AddressSanitizer" not in completed.stderr
    assert completed.stdout.split() == [
        word for extension in native.EXTENSIONS.values() for word in (extension.module, "True")
    ]
    libraries = list(cache.glob("*/*.so"))
    assert len(libraries) >= 2  # two compiled functions
    for library in libraries:
        symbols = subprocess.run(["nm", "-D", str(library)], capture_output=True, text=True).stdout
        assert "__asan" in symbols and "__ubsan" in symbols, library


EMPTY_LOOP_PROGRAM = textwrap.dedent(
    """
    import numpy as np
    import tracer as tt

    def grown(x):
        body = lambda i, y: (i + 1, y + 0.1 * x)
        _, y = tt.while_loop(lambda i, y: i < 2, body, (0, x), maximum_iterations=2)
        return tt.cond(tt.reduce_sum(x) > 0.0, lambda: y * 2.0, lambda: tt.sin(y))

    def value_and_gradient(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = grown(x)
            total = tt.reduce_sum(y)
        return y, tape.gradient(total, x)

    y, g = tt.function(value_and_gradient, backend="c")(tt.constant(np.zeros((0, 3))))
    assert y.shape == (0, 3) and g.shape == (0, 3)
    """
)


@pytest.mark.slow
@needs_sanitizers
def test_a_loop_and_a_cond_of_empty_tensors_copy_no_bytes_in_compiled_code(sanitized_cache):
    """The fuzzer's find: their copies moved one element (a block's least size, not the
    value's), past the end of the caller's empty buffers, which AddressSanitizer reports."""
    completed = _run_sanitized(sanitized_cache, EMPTY_LOOP_PROGRAM)
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "AddressSanitizer" not in completed.stderr and "runtime error" not in completed.stderr


def test_what_the_fuzzer_found_stays_fixed():
    # a compiled function returned a gradient's IndexedSlices holding its trace's tensors
    params = tt.constant(np.array([[1.0, 2.0], [3.0, 4.0]]))

    def rows_gradient(p):
        with tt.GradientTape() as tape:
            tape.watch(p)
            y = tt.reduce_sum(tt.gather(p, [1, 1]) * 3.0)
        return tape.gradient(y, p)

    for backend in ("interpreter", "c"):
        grad = tt.function(rows_gradient, backend=backend)(params)
        assert isinstance(grad, tt.IndexedSlices)
        np.testing.assert_array_equal(grad.numpy(), [[0.0, 0.0], [6.0, 6.0]])
    # an exclusive scan along an empty axis
    empty = tt.constant(np.zeros((0, 3)))
    assert tt.math.cumprod(empty, axis=0, exclusive=True).shape == (0, 3)
    # the gradient of a gather of rows of width 0
    thin = tt.constant(np.zeros((2, 0)))
    with tt.GradientTape() as tape:
        tape.watch(thin)
        y = tt.reduce_sum(tt.gather(thin, [0]))
    assert tape.gradient(y, thin, unconnected_gradients="zero").shape == (2, 0)
    # the gradient of a product over an empty axis: ones, of the input's shape
    with tt.GradientTape() as tape:
        tape.watch(empty)
        y = tt.reduce_sum(tt.reduce_prod(empty, axis=0))
    assert tape.gradient(y, empty).shape == (0, 3)
    # adding a complex zero literal (the simplifier read its sign with np.signbit)
    z = tt.complex(tt.constant([1.5, -2.0], tt.float64), tt.constant([0.5, 1.0], tt.float64))
    for zero in (complex(0.0, 0.0), complex(-0.0, -0.0)):
        for backend in ("interpreter", "c"):
            got = tt.function(lambda z: z + tt.constant(zero, tt.complex128), backend=backend)(z)
            np.testing.assert_array_equal(got.numpy(), z.numpy() + zero)
