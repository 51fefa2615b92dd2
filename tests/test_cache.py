"""The on-disk cache of compiled modules, across processes; and the fallback without a compiler."""

import json
import os
import pathlib
import shutil
import stat
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tests import processes

REPO = pathlib.Path(__file__).resolve().parent.parent

PROGRAM = textwrap.dedent(
    """
    import json, sys, warnings
    import numpy as np
    import tracer as tt

    @tt.function(backend=sys.argv[1])
    def f(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.reduce_sum(tt.sin(x) * x)
        return y, tape.gradient(y, x)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        x = tt.constant(np.linspace(0, 1, 7))
        y, g = f(x)
        concrete = f.get_concrete_function(x)
    meta = getattr(concrete._executable, "meta", {})
    print(json.dumps({"y": float(y), "g": g.numpy().tolist(), "backend": concrete.backend,
                      "cached": meta.get("cached"), "warnings": [str(w.message) for w in caught]}))
    """
)


def run(cache, backend="c", compiler=None, env=None):
    """The program in a new process on `cache`, whose machine's records beside the
    installation (codegen/machine_records.py) are its own too: under its own
    PYTHONPYCACHEPREFIX."""
    env = dict(
        os.environ,
        TRACER_CACHE_DIR=str(cache),
        PYTHONPATH=str(REPO),
        PYTHONPYCACHEPREFIX=f"{cache}-pycache",
    ) | (env or {})
    processes.with_bytecode(env["PYTHONPYCACHEPREFIX"])
    if compiler is not None:
        env["CC"] = str(compiler)
    result = subprocess.run(
        [sys.executable, "-c", PROGRAM, backend],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    return result


def expected():
    import numpy as np

    x = np.linspace(0, 1, 7)
    return float(np.sum(np.sin(x) * x)), (np.cos(x) * x + np.sin(x)).tolist()


@pytest.fixture
def logging_compiler(tmp_path):
    """A compiler that logs every call and hands it to the real one."""
    log = tmp_path / "compiler.log"
    wrapper = tmp_path / "cc"
    real = shutil.which("cc") or shutil.which("gcc")
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec {real} "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    return wrapper, log


def compilations(log):
    """The compiler's runs that compile or link (not its answers: --version, where its
    libgcc.a is)."""
    queries = ("--version", "-print-libgcc-file-name")
    return (
        [line for line in log.read_text().splitlines() if not any(q in line for q in queries)]
        if log.exists()
        else []
    )


def test_a_second_process_reuses_the_module_without_compiling(tmp_path, logging_compiler):
    compiler, log = logging_compiler
    cache = tmp_path / "cache"
    first = run(cache, compiler=compiler)
    assert first.returncode == 0, first.stderr
    built = compilations(log)
    assert any(".so" in line and "_tracer_" in line for line in built)
    calls_after_first = len(log.read_text().splitlines())
    second = run(cache, compiler=compiler)
    assert second.returncode == 0, second.stderr
    assert (
        len(log.read_text().splitlines()) == calls_after_first
    )  # no compiler run, not even `cc --version`
    out = json.loads(second.stdout)
    assert out["cached"] is True and out["backend"] == "c"
    y, g = expected()
    assert abs(out["y"] - y) < 1e-12 and max(abs(a - b) for a, b in zip(out["g"], g)) < 1e-12
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700


BLAS_PROGRAM = textwrap.dedent(
    """
    import json
    import numpy as np
    import tracer as tt

    @tt.function(backend="c")
    def f(a, b):
        with tt.GradientTape() as tape:
            tape.watch(a)
            y = tt.reduce_sum(tt.tanh(a @ b))
        return y, tape.gradient(y, a)

    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((40, 30)), rng.standard_normal((30, 50))
    y, g = f(tt.constant(a), tt.constant(b))
    meta = f.get_concrete_function(tt.constant(a), tt.constant(b))._executable.meta
    t = np.tanh(a @ b)
    import ctypes  # the process's global names: the BLAS's must not be among them
    shown = hasattr(ctypes.CDLL(None), "scipy_cblas_dgemm")
    print(json.dumps({"cached": meta["cached"], "y": abs(float(y) - t.sum()),
                      "g": float(np.abs(g.numpy() - (1 - t * t) @ b.T).max()), "shown": shown}))
    """
)


@pytest.mark.skipif(__import__("codegen.build").build.blas() is None, reason="no BLAS installed")
def test_a_module_calling_the_blas_runs_when_built_and_when_loaded_by_another_process(tmp_path):
    """A process that only loads the module from the cache finds the BLAS too; and the
    BLAS's names stay the module's own: loaded with them global, scipy imported later would
    bind its BLAS calls to tracer's OpenBLAS instead of its own (other bits)."""
    env = dict(os.environ, TRACER_CACHE_DIR=str(tmp_path), PYTHONPATH=str(REPO))
    for cached in (False, True):
        done = subprocess.run(
            [sys.executable, "-c", BLAS_PROGRAM],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            cwd=REPO,
        )
        assert done.returncode == 0, done.stderr
        out = json.loads(done.stdout)
        assert out["cached"] is cached and out["shown"] is False
        assert out["y"] < 1e-9 and out["g"] < 1e-12


def test_a_new_cache_builds_its_first_module_with_one_compiler_run(tmp_path, logging_compiler):
    """No probes: the first build assumes OpenMP and vector math, and its success records
    them for later processes."""
    compiler, log = logging_compiler
    cache = tmp_path / "cache"
    first = run(cache, compiler=compiler)
    assert first.returncode == 0, first.stderr
    (built,) = compilations(log)
    assert "-fopenmp" in built.split() and "-lmvec" in built.split() and "probe" not in built
    (record,) = json.loads((cache / "toolchains.json").read_text())["records"].values()
    assert record["threads"] is True and record["vector_math"] is True


def test_a_first_build_that_fails_on_an_assumed_feature_probes_and_builds_again(tmp_path):
    """A compiler without OpenMP: the build that assumed it fails, the probes find out, and
    the module is built again without it: the right values from C, no warning."""
    log = tmp_path / "compiler.log"
    wrapper = tmp_path / "cc"
    real = shutil.which("cc") or shutil.which("gcc")
    wrapper.write_text(
        f'#!/bin/sh\necho "$@" >> {log}\n'
        'for a in "$@"; do [ "$a" = "-fopenmp" ] && { echo "no OpenMP" >&2; exit 1; }; done\n'
        f'exec {real} "$@"\n'
    )
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    cache = tmp_path / "cache"
    result = run(cache, compiler=wrapper)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["backend"] == "c" and out["warnings"] == []
    y, g = expected()
    assert abs(out["y"] - y) < 1e-12 and max(abs(a - b) for a, b in zip(out["g"], g)) < 1e-12
    (record,) = json.loads((cache / "toolchains.json").read_text())["records"].values()
    assert record["threads"] is False and record["vector_math"] is True
    modules = [line for line in compilations(log) if "_tracer_" in line]
    assert len(modules) == 2 and "-fopenmp" not in modules[1].split()


def test_a_module_links_again_with_the_compilers_own_linker_where_gold_fails(
    tmp_path, logging_compiler
):
    """A gold on PATH that fails: the link runs again without it and the module is right;
    a later process does not try that gold. A compile error is not run twice, whatever its
    paths are called."""
    compiler, log = logging_compiler
    broken = tmp_path / "bin" / "ld.gold"
    broken.parent.mkdir()
    broken.write_text('#!/bin/sh\necho "ld.gold: error: broken" >&2\nexit 1\n')
    broken.chmod(broken.stat().st_mode | stat.S_IEXEC)
    path = f"{broken.parent}{os.pathsep}{os.environ['PATH']}"
    result = run(tmp_path / "cache", compiler=compiler, env={"PATH": path})
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["backend"] == "c" and out["warnings"] == []
    y, g = expected()
    assert abs(out["y"] - y) < 1e-12 and max(abs(a - b) for a, b in zip(out["g"], g)) < 1e-12
    links = [line.split() for line in compilations(log) if "_tracer_" in line]
    assert ["-fuse-ld=gold" in link for link in links] == [True, False]
    for entry in (tmp_path / "cache").iterdir():  # the module, not the record of gold
        if entry.is_dir() and not entry.name.startswith("."):
            shutil.rmtree(entry)
    log.write_text("")
    again = run(tmp_path / "cache", compiler=compiler, env={"PATH": path})
    assert again.returncode == 0 and json.loads(again.stdout)["cached"] is False
    links = [line.split() for line in compilations(log) if "_tracer_" in line]
    assert ["-fuse-ld=gold" in link for link in links] == [False]  # not tried again

    from codegen import build
    from codegen.errors import CompileError

    source = "int tracer_run(char **args) { return undeclared; }\n"
    log.write_text("")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CC", str(compiler))
        patch.setenv("TRACER_CACHE_DIR", str(tmp_path / "ld"))  # "ld" in the error's paths
        with pytest.raises(CompileError, match="undeclared"):
            build.load(source, uses_blas=False)
    assert len([line for line in compilations(log) if "_tracer_" in line]) == 1


def test_gold_is_not_blamed_for_a_link_that_fails_with_every_linker(tmp_path, monkeypatch):
    """A library missing at the link: gold's link fails, the compiler's own too, and the
    error is the link's; nothing records gold as failed."""
    from codegen import build
    from codegen.errors import CompileError

    real = shutil.which("cc") or shutil.which("gcc")
    wrapper = tmp_path / "cc"  # every link asks for a library that is not there
    wrapper.write_text(
        '#!/bin/sh\nfor a in "$@"; do [ "$a" = "-c" ] && exec ' + real + ' "$@"; done\n'
        f'exec {real} "$@" -ltracer_no_such_library\n'
    )
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("CC", str(wrapper))
    monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(CompileError, match="tracer_no_such_library"):
        build.load("int tracer_run(char **args) { (void)args; return 0; }\n", uses_blas=False)
    assert not (tmp_path / "cache" / "gold-failed").exists()


def test_a_record_of_gold_that_is_not_a_small_file_is_not_read(tmp_path):
    """`gold-failed` as a pipe (a read would wait for ever) or a directory: the module
    builds with gold, and the record is never trusted."""
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    os.mkfifo(cache / "gold-failed")
    first = run(cache)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["backend"] == "c"
    os.remove(cache / "gold-failed")
    (cache / "gold-failed").mkdir()
    for entry in cache.iterdir():  # the module again, not the record
        if entry.is_dir() and not entry.name.startswith((".", "gold")):
            shutil.rmtree(entry)
    again = run(cache)
    assert again.returncode == 0, again.stderr
    out = json.loads(again.stdout)
    y, g = expected()
    assert out["cached"] is False and abs(out["y"] - y) < 1e-12


def test_a_damaged_entry_is_detected_and_rebuilt(tmp_path, logging_compiler):
    compiler, log = logging_compiler
    cache = tmp_path / "cache"
    assert run(cache, compiler=compiler).returncode == 0
    before = len(compilations(log))
    (library,) = cache.glob("*/*.so")
    library.write_bytes(library.read_bytes()[:1000])  # truncated, as by a crash or a full disk
    again = run(cache, compiler=compiler)
    assert again.returncode == 0, again.stderr
    out = json.loads(again.stdout)
    assert out["cached"] is False and len(compilations(log)) == before + 1
    assert abs(out["y"] - expected()[0]) < 1e-12


def _compiled_templates(prefix):
    """Where a process with PYTHONPYCACHEPREFIX=`prefix` keeps the compiled templates."""
    import jinja2

    tag = f"jinja2-{jinja2.__version__}.{sys.implementation.cache_tag}"
    return prefix / str(REPO / "templates").lstrip(os.sep) / tag


def test_compiled_templates_are_kept_beside_the_bytecode_and_damaged_ones_are_compiled_again(
    tmp_path,
):
    cache, prefix = tmp_path / "cache", tmp_path / "pycache"
    env = {"PYTHONPYCACHEPREFIX": str(prefix), "PYTHONDONTWRITEBYTECODE": ""}
    assert run(cache, env=env).returncode == 0
    kept = sorted(_compiled_templates(prefix).iterdir())
    assert kept and not (cache / ".templates").exists()
    assert stat.S_IMODE(_compiled_templates(prefix).stat().st_mode) == 0o755
    for path in kept:
        path.write_bytes(b"not jinja2 bytecode")
    shutil.rmtree(cache)  # the module, its plan and the C: the C is rendered again
    again = run(cache, env=env)  # from the damaged compiled templates
    assert again.returncode == 0, again.stderr
    out = json.loads(again.stdout)
    assert out["cached"] is False and abs(out["y"] - expected()[0]) < 1e-12
    assert all(path.read_bytes() != b"not jinja2 bytecode" for path in kept)
    assert "damaged compiled template" in again.stderr


def test_a_pipe_or_a_link_in_a_compiled_templates_place_is_passed_over(tmp_path):
    """A compiled template is a regular file of a bounded size: a pipe in its place would
    block the render, a link to /dev/zero read without end; each is compiled again."""
    cache, prefix = tmp_path / "cache", tmp_path / "pycache"
    env = {"PYTHONPYCACHEPREFIX": str(prefix), "PYTHONDONTWRITEBYTECODE": ""}
    assert run(cache, env=env).returncode == 0
    kept = sorted(_compiled_templates(prefix).iterdir())
    for k, path in enumerate(kept):
        path.unlink()
        if k % 2:
            os.mkfifo(path)
        else:
            path.symlink_to("/dev/zero")
    shutil.rmtree(cache)
    again = run(cache, env=env)  # (a hang fails: run's timeout)
    assert again.returncode == 0, again.stderr
    assert abs(json.loads(again.stdout)["y"] - expected()[0]) < 1e-12
    assert all(path.is_file() and not path.is_symlink() for path in kept)


@pytest.mark.parametrize("beside", ["writable by others", "no bytecode written"])
def test_compiled_templates_go_to_the_private_cache_where_not_to_be_kept_beside(tmp_path, beside):
    cache, prefix = tmp_path / "cache", tmp_path / "pycache"
    shared = _compiled_templates(prefix)
    shared.mkdir(parents=True)
    env = {"PYTHONPYCACHEPREFIX": str(prefix), "PYTHONDONTWRITEBYTECODE": ""}
    if beside == "writable by others":
        shared.chmod(0o777)  # a planted compiled template there could render other C
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    assert run(cache, env=env).returncode == 0
    assert not list(shared.iterdir())
    kept = sorted((cache / ".templates").iterdir())
    assert kept and stat.S_IMODE((cache / ".templates").stat().st_mode) == 0o700


def test_without_bytecode_the_compiled_templates_beside_are_read_and_never_written(tmp_path):
    """Under PYTHONDONTWRITEBYTECODE, as Python reads bytecode it may not write: the compiled
    templates beside the templates are used, a damaged one is passed over (and left), and
    what is missing is compiled into the private cache."""
    cache, prefix = tmp_path / "cache", tmp_path / "pycache"
    env = {"PYTHONPYCACHEPREFIX": str(prefix), "PYTHONDONTWRITEBYTECODE": ""}
    assert run(cache, env=env).returncode == 0
    beside = _compiled_templates(prefix)
    kept = {path: path.read_bytes() for path in beside.iterdir()}
    assert len(kept) >= 2
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    shutil.rmtree(cache)
    again = run(cache, env=env)
    assert again.returncode == 0, again.stderr
    assert {path: path.read_bytes() for path in beside.iterdir()} == kept
    assert not list((cache / ".templates").iterdir())  # every one was found beside
    damaged = sorted(kept)[0]
    damaged.write_bytes(b"not jinja2 bytecode")
    shutil.rmtree(cache)
    third = run(cache, env=env)
    assert third.returncode == 0, third.stderr
    out = json.loads(third.stdout)
    assert out["cached"] is False and abs(out["y"] - expected()[0]) < 1e-12
    assert damaged.read_bytes() == b"not jinja2 bytecode"  # never written
    assert [path.name for path in (cache / ".templates").iterdir()] == [damaged.name]


def test_two_processes_compiling_the_same_module_at_once_both_succeed(tmp_path):
    cache = tmp_path / "cache"
    env = dict(os.environ, TRACER_CACHE_DIR=str(cache), PYTHONPATH=str(REPO))
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", PROGRAM, "c"],
            env=env,
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    outputs = [p.communicate(timeout=120) for p in processes]
    assert all(p.returncode == 0 for p in processes), [e for _, e in outputs]
    assert len({json.loads(o)["y"] for o, _ in outputs}) == 1
    assert len(list(cache.glob("*/meta.json"))) == 1
    assert not list(cache.glob(".build-*"))  # no staging directory left behind


def test_auto_falls_back_to_the_interpreter_with_one_warning_when_no_compiler_works(tmp_path):
    missing = tmp_path / "no-such-cc"
    result = run(tmp_path / "cache", backend="auto", compiler=missing)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["backend"] == "interpreter"
    assert len(out["warnings"]) == 1 and "numpy interpreter" in out["warnings"][0]
    assert abs(out["y"] - expected()[0]) < 1e-12
    forced = run(tmp_path / "cache", backend="c", compiler=missing)
    assert forced.returncode != 0 and "CompilerUnavailable" in forced.stderr


def test_moving_the_code_to_other_lines_reuses_the_module_with_the_new_lines_shown(tmp_path):
    """The key hashes the C without its comments, which are all that name the user's lines."""
    program = PROGRAM + "print(json.dumps({'c': str(concrete.c_source())}))\n"

    def run_file(text, name):
        path = tmp_path / name
        path.write_text(text)
        env = dict(os.environ, TRACER_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(REPO))
        done = subprocess.run(
            [sys.executable, str(path), "c"], env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        first, second = done.stdout.splitlines()[-2:]
        return json.loads(first), json.loads(second)["c"]

    line = next(k for k, text in enumerate(program.splitlines(), 1) if "y = tt.reduce_sum" in text)
    out, c = run_file(program, "model.py")
    assert out["cached"] is False and f"model.py:{line} " in c
    moved, moved_c = run_file("# a comment\n\n\n" + program, "model.py")
    assert moved["cached"] is True  # no compile
    assert f"model.py:{line + 3} " in moved_c and f"model.py:{line} " not in moved_c
    assert (moved["y"], moved["g"]) == (out["y"], out["g"])
    # lines of more digits, a longer file name: the C's comments are longer, nothing else
    renamed, renamed_c = run_file("\n" * 100 + program, "a_much_longer_model_name.py")
    assert renamed["cached"] is True
    assert f"a_much_longer_model_name.py:{line + 100} " in renamed_c
    changed, _ = run_file(program.replace("tt.sin(x) * x", "tt.sin(x) * x * 2.0"), "model.py")
    assert changed["cached"] is False  # what the code computes is in the key
    np.testing.assert_allclose(changed["y"], 2 * out["y"], rtol=1e-12)
