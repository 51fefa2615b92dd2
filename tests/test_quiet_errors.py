"""A NaN or an infinity is a result, as in TensorFlow, not a numpy RuntimeWarning: eager ops
(the C op path and the Python one) and straight-line programs (a tape's gradient, in C and
in Python) run with numpy's floating-point errors ignored, and the program's own numpy calls
keep the modes it set (runtime/quiet_errors.h, runtime.kernels `errors_ignored`)."""

import warnings

import numpy as np
import pytest

import tracer as tt
from tracer.ops import core

INF = np.float32(np.inf)


def _eager_results():
    """Ops whose values overflow or are invalid, with what numpy gives for each."""
    x = tt.constant([INF, -INF, np.float32(3e38)])
    row, column = tt.reshape(x, (1, 3)), tt.reshape(x, (3, 1))
    return [
        (x - x, [np.nan, np.nan, 0.0]),
        (x + x, [INF, -INF, INF]),
        (x * 0.0, [np.nan, np.nan, 0.0]),
        (tt.square(x), [INF, INF, INF]),
        (tt.reduce_sum(x), np.nan),
        (tt.reduce_mean(x), np.nan),
        (tt.math.reduce_variance(x), np.nan),
        (tt.math.cumsum(x), [INF, np.nan, np.nan]),
        (tt.matmul(row, column), [[INF]]),
        (tt.nn.l2_loss(x), INF),
    ]


@pytest.fixture(params=["C", "Python"])
def op_path(request):
    was = core.fast_apply.set_enabled(request.param == "C")
    try:
        yield request.param
    finally:
        core.fast_apply.set_enabled(was)


def test_eager_ops_give_nan_and_inf_without_warnings_or_the_programs_raise_mode(op_path):
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        results = _eager_results()
        assert np.geterr()["invalid"] == "raise"  # the program's modes, as it set them
        with pytest.raises(FloatingPointError):
            np.array([np.inf]) - np.array([np.inf])  # its own numpy calls: as it asked
    for got, want in results:
        np.testing.assert_array_equal(got.numpy(), np.asarray(want, np.float32))


def test_a_gradient_with_nan_gives_it_without_warnings_in_c_and_in_python(monkeypatch):
    """d/dx sum(x * y) at y = inf - inf: the straight-line program's values, quietly, in
    its C form and in the Python loop."""
    import runtime.straight_line as module

    x = tt.Variable([1.0, 2.0])
    for program in {module.Program, module.PythonProgram}:
        monkeypatch.setattr(module, "Program", program)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with tt.GradientTape() as tape:
                y = tt.constant([np.inf, 1.0]) - tt.constant([np.inf, 0.0])
                loss = tt.reduce_sum(x * y * y)
            gradient = tape.gradient(loss, x).numpy()
        np.testing.assert_array_equal(gradient, [np.nan, 1.0])


def test_the_programs_modes_come_back_after_a_kernel_that_raised(op_path):
    """A kernel's error passes through, and numpy's modes are the program's after it."""
    with np.errstate(invalid="raise", over="warn"):
        before = np.geterr()
        with pytest.raises(tt.errors.InvalidArgumentError, match="out of range"):
            tt.gather(tt.constant([1.0, 2.0]), tt.constant([5]))
        assert np.geterr() == before
        with pytest.raises(FloatingPointError):
            np.array([np.inf]) - np.array([np.inf])
