"""Stored plans (codegen/plans.py): a process that traces a graph an earlier one compiled
skips the passes and the lowering, with the same values; a plan for another graph is never
used, and a damaged one is removed and made again."""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tracer as tt
from codegen import build, plans
from codegen.lower import ModulePlan
from tests.processes import run_with_errors
from tracer.ir import Graph, Literal, Node
from tracer.ir.digest import graph_digest

REPO = pathlib.Path(__file__).resolve().parent.parent

PROGRAM = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import tracer as tt

    SCALE = float(sys.argv[1])

    @tt.function
    def f(x, w):
        with tt.GradientTape() as tape:
            tape.watch(w)
            y = tt.reduce_sum(tt.tanh(x @ w) * SCALE)
        return y, tape.gradient(y, w)

    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    w = np.linspace(0.5, -0.5, 8, dtype=np.float32).reshape(4, 2)
    y, g = f(x, w)
    concrete = f.get_concrete_function(x, w)
    print(json.dumps({"y": float(y), "g": g.numpy().tolist(), "backend": concrete.backend,
                      "passes_ran": concrete._stages is not None, "ir": concrete.ir()}))
    """
)


def run(cache, scale=2.0):
    out, errors = run_with_errors(PROGRAM, cache, str(scale))
    x = np.linspace(-1, 1, 12, dtype=np.float64).reshape(3, 4)
    w = np.linspace(0.5, -0.5, 8, dtype=np.float64).reshape(4, 2)
    t = np.tanh(x @ w)
    np.testing.assert_allclose(out["y"], scale * t.sum(), rtol=1e-5)
    np.testing.assert_allclose(out["g"], x.T @ (scale * (1 - t**2)), rtol=1e-5, atol=1e-6)
    assert out["backend"] == "c"
    return out, errors


def stored(cache):
    return sorted((cache / ".plans").iterdir())


def test_a_second_process_runs_the_stored_plan_without_the_passes(tmp_path):
    first, _ = run(tmp_path)
    assert first["passes_ran"] and len(stored(tmp_path)) == 1
    second, _ = run(tmp_path)
    assert not second["passes_ran"]  # the module came from the plan
    assert second["ir"] == first["ir"]  # the stages are still there when asked for


def test_a_changed_constant_is_another_graph_and_another_plan(tmp_path):
    run(tmp_path, scale=2.0)
    other, _ = run(tmp_path, scale=3.0)  # values checked against scale 3 in `run`
    assert other["passes_ran"] and len(stored(tmp_path)) == 2


def _damage(path, kind):
    data = path.read_bytes()
    magic, digest, body = data[:14], data[14:78], data[79:]
    header, _, blobs = body.partition(b"\n")

    def signed(new_header):  # a well-formed file with a header that does not check
        new_body = json.dumps(new_header).encode() + b"\n" + blobs
        return magic + plans.hashlib.sha256(new_body).hexdigest().encode() + b"\n" + new_body

    fields = json.loads(header)
    if kind == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif kind == "flipped":
        path.write_bytes(data[:-10] + bytes([data[-10] ^ 1]) + data[-9:])
    elif kind == "garbage":
        path.write_bytes(os.urandom(len(data)))
    elif kind == "directory":
        path.unlink()
        path.mkdir()
    elif kind == "object dtype":
        path.write_bytes(signed(dict(fields, input_dtypes=["|O"] * len(fields["input_dtypes"]))))
    elif kind == "output out of range":
        path.write_bytes(signed(dict(fields, outputs=[["buffer", 99]] * len(fields["outputs"]))))
    elif kind == "not an exception":
        path.write_bytes(signed(dict(fields, errors=[[1, "print", "x"]])))
    elif kind == "wrong length":
        path.write_bytes(signed(dict(fields, blobs=[s + 1 for s in fields["blobs"]])))
    elif kind == "bad places":
        path.write_bytes(signed(dict(fields, places=[["f.py", "3"]] * len(fields["places"]))))
    elif kind == "other key":
        path.write_bytes(signed(dict(fields, key="0" * 64)))
    else:
        raise AssertionError(kind)
    assert digest  # the original was signed


KINDS = (
    "truncated",
    "flipped",
    "garbage",
    "directory",
    "object dtype",
    "output out of range",
    "not an exception",
    "wrong length",
    "bad places",
    "other key",
)


@pytest.fixture(scope="module")
def cache_with_a_plan(tmp_path_factory):
    """A cache in which a process stored the plan of PROGRAM (each test damages a copy)."""
    cache = tmp_path_factory.mktemp("cache_with_a_plan")
    run(cache)
    return cache


@pytest.mark.parametrize("kind", KINDS)
def test_a_damaged_plan_is_removed_and_made_again(tmp_path, kind, cache_with_a_plan):
    cache = tmp_path / "cache"
    shutil.copytree(cache_with_a_plan, cache, symlinks=True)
    (path,) = stored(cache)
    _damage(path, kind)
    again, errors = run(cache)  # the right values: `run` checks them
    assert again["passes_ran"]
    assert "removing the damaged stored plan" in errors
    repaired, _ = run(cache)
    assert not repaired["passes_ran"]


def test_the_same_function_traced_again_in_a_process_finds_its_plan(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path))  # not a plan of an earlier run

    def loss(x):
        return tt.reduce_sum(tt.exp(-x * x) * tt.sin(x))

    x = np.linspace(-1, 2, 50)
    first, second = tt.function(loss), tt.function(loss)
    want = np.sum(np.exp(-x * x) * np.sin(x))
    np.testing.assert_allclose(first(x).numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(second(x).numpy(), want, rtol=1e-12)
    assert first.get_concrete_function(x)._stages is not None
    assert second.get_concrete_function(x)._stages is None  # no pass ran


def test_no_plan_is_stored_for_dimensions_known_only_at_run_time(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path))  # (other workers store plans meanwhile)
    before = len(plans.entries())

    @tt.function(input_signature=[tt.TensorSpec([None, 3], tt.float64)])
    def total(x):
        return tt.reduce_sum(x * x, axis=1)

    x = np.arange(12.0).reshape(4, 3)
    np.testing.assert_allclose(total(x).numpy(), (x * x).sum(1))
    assert len(plans.entries()) == before


def test_a_plan_that_calls_python_or_raises_a_class_of_its_own_is_not_stored(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path))

    class Mine(ValueError):
        pass

    plan = ModulePlan()
    plan.source = "int tracer_run(char **args) { return 0; }"
    key = plans.PlanKey("a" * 64, ())
    plan.host_calls = [("allreduce", {}, np.float32, 1)]
    plans.store(key, plan, False)
    plan.host_calls, plan.errors = [], {1: (Mine, "no")}
    plans.store(key, plan, False)
    assert plans.restore(key) is None
    # a stored plan names the builtin class; loading makes it TensorFlow's again (tt.errors)
    plan.errors = {1: (tt.errors.as_tf(IndexError), "index 5 is out of range")}
    plans.store(key, plan, False)
    restored, uses_blas = plans.restore(key)
    assert restored.errors == plan.errors and restored.source == plan.source and not uses_blas


def _graph(value, location=("f.py", 3), attrs=None):
    x = Node("input", (), {"name": "x"}, (2,), tt.float32)
    c = Node("const", (), {"value": Literal(np.float32(value))}, (), tt.float32)
    y = Node("mul", (x, c), attrs or {}, (2,), tt.float32, location)
    return Graph([x], [x, c, y], [y])


def test_the_digest_is_the_same_for_the_same_graph_and_differs_for_any_change():
    digest = graph_digest(_graph(2.0)).hex
    assert digest == graph_digest(_graph(2.0)).hex
    assert digest != graph_digest(_graph(3.0)).hex
    assert graph_digest(_graph(0.0)).hex != graph_digest(_graph(-0.0)).hex
    assert graph_digest(_graph(2.0, attrs={"k": 1})) != graph_digest(_graph(2.0, attrs={"k": 1.0}))


def test_the_digest_numbers_the_users_lines_and_returns_them_beside_it():
    moved = graph_digest(_graph(2.0, location=("/elsewhere/f.py", 40)))
    assert moved.hex == graph_digest(_graph(2.0)).hex
    assert moved.places == (("/elsewhere/f.py", 40),)
    assert graph_digest(_graph(2.0)).places == (("f.py", 3),)
    assert graph_digest(_graph(2.0, location=("f.py", 3, "grad of mul"))).hex != moved.hex

    def two_lines(first, second):
        x = Node("input", (), {"name": "x"}, (2,), tt.float32)
        y = Node("neg", (x,), {}, (2,), tt.float32, first)
        z = Node("exp", (y,), {}, (2,), tt.float32, second)
        return graph_digest(Graph([x], [x, y, z], [z]))

    apart, together = two_lines(("f.py", 3), ("f.py", 4)), two_lines(("f.py", 3), ("f.py", 3))
    assert apart.hex != together.hex  # which nodes share a line is part of the structure
    assert apart.hex == two_lines(("g.py", 9), ("f.py", 3)).hex
    assert together.places == (("f.py", 3),)


def test_a_graph_with_a_value_it_does_not_hold_has_no_digest():
    assert graph_digest(_graph(2.0, attrs={"callback": print})) is None
    x = Node("input", (), {"name": "x"}, (2,), tt.float32)
    captured = Node("const", (), {}, (2,), tt.float32)  # an eager value not in the IR
    y = Node("add", (x, captured), {}, (2,), tt.float32)
    assert graph_digest(Graph([x], [x, captured, y], [y])) is None


def test_a_plan_that_cannot_be_written_leaves_the_compiled_function_working(monkeypatch):
    def full(key, content):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(plans, "_write", full)

    @tt.function
    def f(x):
        return tt.reduce_max(tt.abs(x - 0.25))

    x = np.linspace(-1, 3, 9)
    np.testing.assert_allclose(f(x).numpy(), 2.75)
    assert f.get_concrete_function(x).backend == "c"


def test_a_plans_folder_that_is_not_a_folder_is_repaired(tmp_path):
    run(tmp_path)
    shutil.rmtree(tmp_path / ".plans")
    (tmp_path / ".plans").write_text("in the way")
    again, errors = run(tmp_path)
    assert again["passes_ran"] and "which is not a directory" in errors
    assert len(stored(tmp_path)) == 1 and not run(tmp_path)[0]["passes_ran"]


@pytest.mark.parametrize("kind", ["deep json", "huge shape", "blob of the source"])
def test_a_plan_with_a_valid_digest_and_a_hostile_header_is_refused(tmp_path, monkeypatch, kind):
    monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path))
    plan = ModulePlan()
    plan.source = "int tracer_run(char **args) { return 0; }"
    plan.constants = [np.arange(3.0)]
    key = plans.PlanKey("b" * 64, ())
    plans.store(key, plan, False)
    (path,) = plans.entries()
    body = open(path, "rb").read()[79:]
    header, _, blobs = body.partition(b"\n")
    fields = json.loads(header)
    if kind == "deep json":
        header = b"[" * 100_000 + b"]" * 100_000
    elif kind == "huge shape":
        fields["constants"][0]["shape"] = [2**70]
        header = json.dumps(fields).encode()
    else:
        fields["constants"][0]["blob"] = 0
        header = json.dumps(fields).encode()
    new_body = header + b"\n" + blobs
    digest = plans.hashlib.sha256(new_body).hexdigest().encode()
    open(path, "wb").write(plans.MAGIC + digest + b"\n" + new_body)
    assert plans.restore(key) is None  # refused, not raised
    assert not plans.entries()  # and removed


TIERED = textwrap.dedent(
    """
    import json
    import numpy as np
    import tracer as tt

    f = tt.function(lambda x: tt.tanh(x) * 3, backend="tiered")
    x = tt.constant(np.linspace(-2, 2, 7))
    first = f(x).numpy()
    concrete = f.get_concrete_function(x)
    at_first = concrete.backend
    concrete._executable.wait()
    print(json.dumps({"at_first": at_first, "backend": concrete.backend,
                      "passes_ran": concrete._stages is not None,
                      "error": float(np.abs(first - np.tanh(x.numpy()) * 3).max())}))
    """
)


def test_tiered_runs_a_stored_plan_whose_module_is_cached_from_its_first_call(tmp_path):
    environment = dict(os.environ, TRACER_CACHE_DIR=str(tmp_path), PYTHONPATH=str(REPO))

    def run_tiered():
        out = subprocess.run(
            [sys.executable, "-c", TIERED], env=environment, capture_output=True, text=True
        )
        assert out.returncode == 0, out.stderr[-2000:]
        result = json.loads(out.stdout)
        assert result["backend"] == "c" and result["error"] < 1e-12
        return result

    first = run_tiered()  # the interpreter first (unless the build was quicker), then C
    assert first["passes_ran"] and len(stored(tmp_path)) == 1
    second = run_tiered()  # the plan the first one's build stored, its module in the cache
    assert second["at_first"] == "c" and not second["passes_ran"]
    for entry in tmp_path.iterdir():  # the modules (named by their keys), not the plan
        if entry.is_dir() and len(entry.name) == 64:
            shutil.rmtree(entry)
    third = run_tiered()  # a plan whose module is gone: no waiting for a build
    assert third["at_first"] == "interpreter" and third["passes_ran"]


def test_a_load_that_builds_nothing_does_not_wait_for_another_threads_build(tmp_path, monkeypatch):
    """Two tiered functions of one graph, the plan's module gone: the second's first call
    runs on the interpreter while the first's thread builds, rather than wait for it."""
    monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path))
    source = "int tracer_probe_not_built(void) { return 7; }"
    key = build.cache_key(source, False)
    lock = build._key_locks.setdefault(key, build.threading.Lock())
    answers = []
    asking = build.threading.Thread(
        target=lambda: answers.append(build.load(source, False, build_missing=False)), daemon=True
    )
    with lock:  # another thread's build of this module, under way
        asking.start()
        asking.join(timeout=30)
        assert not asking.is_alive() and answers == [None]  # it did not wait
    assert build.load(source, False, build_missing=False) is None  # and nothing was built
    assert not any(len(entry.name) == 64 for entry in tmp_path.iterdir())


def test_a_plan_holding_large_constants_is_not_stored(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path))  # (other workers store plans meanwhile)
    plan = ModulePlan()
    plan.source = "int tracer_run(char **args) { return 0; }"
    plan.constants = [np.zeros(plans.MAX_CONSTANT_BYTES // 8 + 1)]
    before = len(plans.entries())
    plans.store(plans.PlanKey("c" * 64, ()), plan, False)
    assert len(plans.entries()) == before


MOVABLE = textwrap.dedent(
    """
    import json
    import numpy as np
    import tracer as tt
    {padding}
    @tt.function
    def f(x, w, k):
        with tt.GradientTape() as tape:
            tape.watch(w)
            y = tt.reduce_sum(tt.tanh(x @ w) * 2.0)
        return y, tape.gradient(y, w), tt.pow(k, k)

    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    w = np.linspace(0.5, -0.5, 8, dtype=np.float32).reshape(4, 2)
    y, g, _ = f(x, w, np.array([2, 3], np.int32))
    try:
        f(x, w, np.array([2, -1], np.int32))
        error = None
    except ValueError as raised:
        error = str(raised)
    concrete = f.get_concrete_function(x, w, np.array([2, 3], np.int32))
    print(json.dumps({{"y": float(y), "g": g.numpy().tolist(), "error": error,
                      "passes_ran": concrete._stages is not None, "c": concrete.c_source()}}))
    """
)


def run_from(folder, cache, name="moved.py", padding=0):
    """MOVABLE run from `folder/name`, with `padding` lines above the function; its output
    with the values checked and the line of the tape's block, the one the tanh is on."""
    folder.mkdir(exist_ok=True)
    program = MOVABLE.format(padding="#\n" * padding)
    (folder / name).write_text(program)
    environment = dict(os.environ, TRACER_CACHE_DIR=str(cache), PYTHONPATH=str(REPO))
    completed = subprocess.run(
        [sys.executable, name], env=environment, capture_output=True, text=True, cwd=folder
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    out = json.loads(completed.stdout)
    x = np.linspace(-1, 1, 12).reshape(3, 4)
    t = np.tanh(x @ np.linspace(0.5, -0.5, 8).reshape(4, 2))
    np.testing.assert_allclose(out["y"], 2 * t.sum(), rtol=1e-5)
    np.testing.assert_allclose(out["g"], x.T @ (2 * (1 - t**2)), rtol=1e-5, atol=1e-6)
    lines = program.splitlines()
    tanh_line = 1 + next(k for k, line in enumerate(lines) if "tt.tanh" in line)
    pow_line = 1 + next(k for k, line in enumerate(lines) if "tt.pow" in line)
    assert out["error"].endswith(f"(at {name}:{pow_line})")
    return out, tanh_line


def test_code_moved_to_other_lines_or_folders_runs_the_stored_plan_with_its_lines_renamed(
    tmp_path,
):
    cache = tmp_path / "cache"
    first, line = run_from(tmp_path / "a", cache)
    assert first["passes_ran"] and len(stored(cache)) == 1
    for folder, padding in [("b", 0), ("b", 3), ("c", 11)]:  # another path, other lines
        moved, moved_line = run_from(tmp_path / folder, cache, padding=padding)
        assert not moved["passes_ran"] and len(stored(cache)) == 1  # and the message: run_from
        assert (
            f"moved.py:{moved_line} " in moved["c"]
            and f"moved.py:{moved_line} (grad of" in moved["c"]
        )
        if moved_line != line:
            assert f"moved.py:{line} " not in moved["c"]
        assert build.code_of(moved["c"]) == build.code_of(first["c"])  # the same module
    renamed, _ = run_from(tmp_path / "d", cache, name="renamed.py", padding=2)
    assert not renamed["passes_ran"] and "moved.py" not in renamed["c"]


def test_a_restored_plan_renames_its_places_in_comments_and_messages_only(tmp_path, monkeypatch):
    monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path))
    plan = ModulePlan()
    plan.source = '/* f.py:3 */ int f_py_3 = 0; /* at f.py:30 (grad of exp) */ char *s = " f.py:3";'
    plan.errors = {1: (ValueError, "pow: negative (at f.py:3)"), 2: (ValueError, "(at f.py:30)")}
    key = plans.PlanKey("d" * 64, (("f.py", 3), ("f.py", 30)))
    plans.store(key, plan, False)
    restored, _ = plans.restore(plans.PlanKey(key.name, (("f.py", 5), ("g.py", 3))))
    assert restored.source == (
        '/* f.py:5 */ int f_py_3 = 0; /* at g.py:3 (grad of exp) */ char *s = " f.py:3";'
    )
    assert restored.errors == {
        1: (ValueError, "pow: negative (at f.py:5)"),
        2: (ValueError, "(at g.py:3)"),
    }
    assert plans.restore(key)[0].source == plan.source


@pytest.mark.parametrize(
    "then, now",
    [
        ((("f.py", 3), ("f.py", 3)), (("f.py", 3), ("f.py", 4))),  # two folders' f.py (the key
        # tells them apart too: test_places_that_read_alike_are_part_of_the_key)
        ((("my f.py", 3),), (("my f.py", 4),)),  # a name the comments do not delimit
        ((("my f.py", 7), ("f.py", 7)), (("my f.py", 7), ("f.py", 9))),  # one holds the other
    ],
)
def test_places_that_cannot_be_renamed_exactly_leave_the_plan_unused(
    tmp_path, monkeypatch, then, now
):
    monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path))
    plan = ModulePlan()
    plan.source = "int tracer_run(char **args) { return 0; }"
    plans.store(plans.PlanKey("e" * 64, then), plan, False)
    assert plans.restore(plans.PlanKey("e" * 64, now)) is None
    assert plans.restore(plans.PlanKey("e" * 64, then))  # kept: it is sound


def test_places_that_read_alike_are_part_of_the_key():
    def key(first, second):
        x = Node("input", (), {"name": "x"}, (2,), tt.float32)
        y = Node("neg", (x,), {}, (2,), tt.float32, first)
        z = Node("exp", (y,), {}, (2,), tt.float32, second)
        return plans.plan_key(Graph([x], [x, y, z], [z]), "f", None)

    apart = key(("a/f.py", 3), ("b/f.py", 4))
    assert apart.name == key(("c/g.py", 30), ("b/f.py", 3)).name
    assert apart.places == (("f.py", 3), ("f.py", 4))
    assert key(("a/f.py", 3), ("b/f.py", 3)).name != apart.name  # both read `f.py:3`


def test_a_move_that_cannot_be_renamed_runs_the_passes_and_stores_the_plan_again(tmp_path):
    cache = tmp_path / "cache"
    assert run_from(tmp_path / "a", cache, name="my moved.py")[0]["passes_ran"]
    moved, line = run_from(tmp_path / "b", cache, name="my moved.py", padding=4)
    assert moved["passes_ran"] and f"my moved.py:{line} " in moved["c"]  # and the message
    assert len(stored(cache)) == 1
    assert not run_from(tmp_path / "c", cache, name="my moved.py", padding=4)[0]["passes_ran"]
