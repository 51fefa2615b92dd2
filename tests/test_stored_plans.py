"""Stored plans (codegen/plans.py): a process that traces a graph an earlier one compiled
skips the passes and the lowering, with the same values; a plan for another graph is never
used, and a damaged one is removed and made again."""

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tracer as tt
from codegen import plans
from codegen.lower import ModulePlan
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
                      "passes_ran": "stages" in vars(concrete), "ir": concrete.ir()}))
    """
)


def run(cache, scale=2.0):
    environment = dict(os.environ, TRACER_CACHE_DIR=str(cache), PYTHONPATH=str(REPO))
    completed = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(scale)],
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    out = json.loads(completed.stdout)
    x = np.linspace(-1, 1, 12, dtype=np.float64).reshape(3, 4)
    w = np.linspace(0.5, -0.5, 8, dtype=np.float64).reshape(4, 2)
    t = np.tanh(x @ w)
    np.testing.assert_allclose(out["y"], scale * t.sum(), rtol=1e-5)
    np.testing.assert_allclose(out["g"], x.T @ (scale * (1 - t**2)), rtol=1e-5, atol=1e-6)
    assert out["backend"] == "c"
    return out, completed.stderr


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
    "other key",
)


@pytest.mark.parametrize("kind", KINDS)
def test_a_damaged_plan_is_removed_and_made_again(tmp_path, kind):
    run(tmp_path)
    (path,) = stored(tmp_path)
    _damage(path, kind)
    again, errors = run(tmp_path)  # the right values: `run` checks them
    assert again["passes_ran"]
    assert "removing the damaged stored plan" in errors
    repaired, _ = run(tmp_path)
    assert not repaired["passes_ran"]


def test_the_same_function_traced_again_in_a_process_finds_its_plan():
    def loss(x):
        return tt.reduce_sum(tt.exp(-x * x) * tt.sin(x))

    x = np.linspace(-1, 2, 50)
    first, second = tt.function(loss), tt.function(loss)
    want = np.sum(np.exp(-x * x) * np.sin(x))
    np.testing.assert_allclose(first(x).numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(second(x).numpy(), want, rtol=1e-12)
    assert "stages" in vars(first.get_concrete_function(x))
    assert "stages" not in vars(second.get_concrete_function(x))


def test_no_plan_is_stored_for_dimensions_known_only_at_run_time():
    before = len(plans.entries())

    @tt.function(input_signature=[tt.TensorSpec([None, 3], tt.float64)])
    def total(x):
        return tt.reduce_sum(x * x, axis=1)

    x = np.arange(12.0).reshape(4, 3)
    np.testing.assert_allclose(total(x).numpy(), (x * x).sum(1))
    assert len(plans.entries()) == before


def test_a_plan_that_calls_python_or_raises_a_class_of_its_own_is_not_stored(tmp_path):
    class Mine(ValueError):
        pass

    plan = ModulePlan()
    plan.source = "int tracer_run(char **args) { return 0; }"
    key = "a" * 64
    plan.host_calls = [("allreduce", {}, np.float32, 1)]
    plans.store(key, plan, False)
    plan.host_calls, plan.errors = [], {1: (Mine, "no")}
    plans.store(key, plan, False)
    assert plans.restore(key) is None
    plan.errors = {1: (IndexError, "index 5 is out of range")}
    plans.store(key, plan, False)
    restored, uses_blas = plans.restore(key)
    assert restored.errors == plan.errors and restored.source == plan.source and not uses_blas


def _graph(value, location=("f.py", 3), attrs=None):
    x = Node("input", (), {"name": "x"}, (2,), tt.float32)
    c = Node("const", (), {"value": Literal(np.float32(value))}, (), tt.float32)
    y = Node("mul", (x, c), attrs or {}, (2,), tt.float32, location)
    return Graph([x], [x, c, y], [y])


def test_the_digest_is_the_same_for_the_same_graph_and_differs_for_any_change():
    digest = graph_digest(_graph(2.0))
    assert digest == graph_digest(_graph(2.0))
    assert digest != graph_digest(_graph(3.0))
    assert graph_digest(_graph(0.0)) != graph_digest(_graph(-0.0))
    assert digest != graph_digest(_graph(2.0, location=("f.py", 4)))
    assert graph_digest(_graph(2.0, attrs={"k": 1})) != graph_digest(_graph(2.0, attrs={"k": 1.0}))


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
