"""backend="tiered": the first calls on the interpreter while a thread builds the C module,
C once it is built; the values are the same throughout."""

import threading

import numpy as np
import pytest

import codegen.build
import tracer as tt
from tracer import executables


def _model(backend, salt):
    """A compiled Adam step of a small model: (step, its input, its variables). `salt` in
    the loss gives each test a module of its own, so its build is cold."""
    rng = np.random.default_rng(0)
    w = tt.Variable(rng.normal(size=(6, 4)))
    b = tt.Variable(np.zeros(4))
    optimizer = tt.optimizers.Adam(0.05)
    x = tt.constant(rng.normal(size=(16, 6)))

    @tt.function(backend=backend)
    def step(x):
        with tt.GradientTape() as tape:
            loss = tt.reduce_mean(tt.tanh(x @ w + b) ** 2) * salt
        optimizer.apply_gradients(zip(tape.gradient(loss, [w, b]), [w, b]))
        return loss

    return step, x, [w, b]


def _training(backend, steps, salt):
    """(losses, final weights, the concrete function) of `steps` steps."""
    step, x, variables = _model(backend, salt)
    losses = [float(step(x)) for _ in range(steps)]
    return losses, [v.numpy() for v in variables], step.get_concrete_function(x)


def _salt():
    return 1.0 + np.random.default_rng().uniform()


def test_tiered_steps_run_on_the_interpreter_then_in_c_with_the_same_values():
    salt = _salt()
    step, x, variables = _model("tiered", salt)
    concrete = None
    losses, backends = [], []
    for k in range(6):
        losses.append(float(step(x)))
        concrete = step.get_concrete_function(x)
        backends.append(concrete.backend)
        if k == 2:
            concrete._executable.wait()
    assert backends[0] == "interpreter"  # the first result came before the module
    assert backends[-1] == "c" and "tracer_run" in concrete.c_source()
    expected_losses, expected_weights, _ = _training("interpreter", 6, salt)
    np.testing.assert_allclose(losses, expected_losses, rtol=1e-12)
    for got, want in zip(variables, expected_weights):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-15)


def test_a_build_that_fails_leaves_the_interpreter_with_one_warning(monkeypatch):
    monkeypatch.setattr(codegen.build, "run_compiler", lambda command: (1, "error: forced"))
    salt = _salt()
    with pytest.warns(UserWarning, match="CompileError.*runs step on the numpy interpreter"):
        losses, _, concrete = _training("tiered", 3, salt)
        concrete._executable.wait()
    assert concrete.backend == "interpreter"
    reference, _, _ = _training("interpreter", 3, salt)
    np.testing.assert_allclose(losses, reference, rtol=1e-12)


def test_tiered_under_a_tape_and_inside_another_function():
    @tt.function(backend="tiered")
    def f(x):
        return tt.reduce_sum(tt.sin(x) * x)

    x = tt.constant([0.3, -1.2, 2.0])
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    np.testing.assert_allclose(
        tape.gradient(y, x).numpy(), np.cos(x.numpy()) * x.numpy() + np.sin(x.numpy()), rtol=1e-6
    )
    outer = tt.function(lambda v: f(v) * 2.0, backend="tiered")
    np.testing.assert_allclose(
        float(outer(x)), 2 * np.sum(np.sin(x.numpy()) * x.numpy()), rtol=1e-6
    )


class _Now:
    run = staticmethod(lambda arrays: "now")


@pytest.mark.parametrize(
    "message, reported",
    [
        ("cannot schedule new futures after interpreter shutdown", False),  # the program ends
        ("something else", True),
    ],
)
def test_a_build_stopped_by_the_programs_exit_ends_quietly(message, reported, monkeypatch):
    """A build thread that reaches the compilers while the program exits (Python's thread
    pools then refuse work) ends without a traceback; any other error is reported."""
    seen = []
    monkeypatch.setattr(threading, "excepthook", lambda arguments: seen.append(arguments))

    def later():
        raise RuntimeError(message)

    tiered = executables.Tiered(_Now(), later, "exiting")
    tiered.wait()
    assert tiered([]) == "now" and tiered.current.__class__ is _Now
    assert [str(a.exc_value) for a in seen] == ([message] if reported else [])


def test_jit_compile_true_refuses_tiered():
    with pytest.raises(ValueError, match="asks for backend 'c'"):
        tt.function(lambda x: x, backend="tiered", jit_compile=True)


def test_a_module_built_before_the_function_is_ready_takes_the_c_call_path(monkeypatch):
    """The C call path is set up for the executable in use, not for the tiered wrapper (whose
    module may be built before the function has finished setting itself up)."""
    start = executables.Tiered.__init__

    def built_at_once(self, *args, **kwargs):
        start(self, *args, **kwargs)
        self.wait()

    monkeypatch.setattr(executables.Tiered, "__init__", built_at_once)
    f = tt.function(lambda x: tt.reduce_sum(x * 2.5), backend="tiered")
    x = tt.constant(np.arange(4.0))
    assert float(f(x)) == 15.0 and f.get_concrete_function(x).backend == "c"
