"""tt.TensorArray: TensorFlow's documented examples, loop outputs (eager and compiled), and
gradients through them."""

import logging

import numpy as np
import pytest

import tracer as tt

BACKENDS = ["interpreter", "c"]


def test_dynamic_size_as_in_tensorflows_docs():
    ta = tt.TensorArray(tt.float32, size=0, dynamic_size=True, clear_after_read=False)
    ta = ta.write(0, 10)
    ta = ta.write(1, 20)
    ta = ta.write(2, 30)
    assert ta.read(0).numpy() == 10.0 and ta.read(1).numpy() == 20.0
    np.testing.assert_array_equal(ta.stack().numpy(), [10.0, 20.0, 30.0])
    assert ta.size().numpy() == 3


def test_fibonacci_as_in_tensorflows_docs():
    def fibonacci(n):
        ta = tt.TensorArray(tt.float32, size=0, dynamic_size=True)
        ta = ta.unstack([0.0, 1.0])
        for i in range(2, n):
            ta = ta.write(i, ta.read(i - 1) + ta.read(i - 2))
        return ta.stack()

    want = [0.0, 1.0, 1.0, 2.0, 3.0, 5.0, 8.0]
    np.testing.assert_array_equal(fibonacci(7).numpy(), want)
    np.testing.assert_array_equal(tt.function(fibonacci)(7).numpy(), want)


def trajectory(x, steps=5):
    """The states of a loop, collected in a TensorArray."""
    states = tt.TensorArray(x.dtype, size=steps)

    def body(i, states, s):
        s = tt.sin(s) * 1.5 + 0.1
        return i + 1, states.write(i, s), s

    _, states, _ = tt.while_loop(
        lambda i, states, s: i < steps, body, (0, states, x), maximum_iterations=steps
    )
    return states.stack()


def test_loop_outputs_eagerly_and_compiled():
    x = tt.constant([0.2, -0.4, 1.0], tt.float64)
    want, s = [], x.numpy()
    for _ in range(5):
        s = np.sin(s) * 1.5 + 0.1
        want.append(s)
    for run in [trajectory] + [tt.function(trajectory, backend=b) for b in BACKENDS]:
        np.testing.assert_allclose(run(x).numpy(), want, rtol=1e-14)


def test_gradients_through_a_tensor_array_against_finite_differences():
    x = tt.constant([0.2, -0.4, 1.0], tt.float64)
    weights = tt.constant(np.arange(15.0).reshape(5, 3) / 10)

    def loss(x):
        return tt.reduce_sum(trajectory(x) * weights)

    def grad(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = loss(x)
        return tape.gradient(y, x)

    v = np.array([1.0, -2.0, 0.5])
    eps = 1e-6
    numeric = (loss(x + eps * v).numpy() - loss(x - eps * v).numpy()) / (2 * eps)
    for run in [grad] + [tt.function(grad, backend=b) for b in BACKENDS]:
        np.testing.assert_allclose(np.dot(run(x).numpy(), v), numeric, rtol=1e-7)


def test_errors_name_what_is_wrong():
    ta = tt.TensorArray(tt.float32, size=2)
    with pytest.raises(ValueError, match="not yet been written"):
        ta.read(0)
    with pytest.raises(ValueError, match="index 2 is out of range .* size 2"):
        ta.write(2, 1.0)
    with pytest.raises(TypeError, match="TensorArray of float32: cannot write a int32"):
        ta.write(0, tt.constant(1))
    written = ta.write(0, tt.ones(3))
    with pytest.raises(ValueError, match=r"elements of shape \(3,\): cannot write .* \(2,\)"):
        written.write(1, tt.ones(2))
    with pytest.raises(ValueError, match="needs a size known when tracing"):
        tt.function(lambda x: tt.TensorArray(tt.float32, size=None).write(x, 1.0).stack())(0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_index_known_only_when_running_is_checked(backend):
    def write_at(i):
        return tt.TensorArray(tt.float32, size=3).write(i, 1.0).stack()

    f = tt.function(write_at, backend=backend)
    np.testing.assert_array_equal(f(tt.constant(1)).numpy(), [0.0, 1.0, 0.0])
    with pytest.raises(IndexError, match=r"out of range \[0, 3\)"):
        f(tt.constant(5))


def test_a_loop_that_collects_until_it_breaks_runs_as_python():
    """A TensorArray(dynamic_size=True) written at the loop's counter until a `break` (the
    actor-critic tutorial's episode) has a size known only when the function runs: the
    function runs as Python, with TensorFlow's values, and says why once."""

    @tt.function
    def collect(limit, n):
        values = tt.TensorArray(tt.float32, size=0, dynamic_size=True)
        for t in tt.range(n):
            values = values.write(t, tt.cast(t, tt.float32) ** 2)
            if t >= limit:
                break
        return values.stack()

    np.testing.assert_array_equal(collect(tt.constant(3), 10).numpy(), [0.0, 1.0, 4.0, 9.0])
    np.testing.assert_array_equal(collect(tt.constant(1), 10).numpy(), [0.0, 1.0])
    assert collect._runs_as_python

    @tt.function
    def sized_at_run_time(x):
        squares = tt.TensorArray(tt.float32, size=tt.shape(x)[0])
        for i in tt.range(tt.shape(x)[0]):
            squares = squares.write(i, x[i] ** 2)
        return squares.stack()

    np.testing.assert_array_equal(
        sized_at_run_time(tt.constant([1.0, 2.0, 3.0])).numpy(), [1.0, 4.0, 9.0]
    )


@pytest.mark.parametrize("backend", ["c", "interpreter"])
def test_a_size_from_an_integer_argument_is_traced_for_each_value(backend, caplog):
    """A TensorArray whose size, or a tt.range made a tensor, comes from a scalar integer
    tensor argument (a neural ODE's step count) needs its value to compile: the function is
    traced for each value of such arguments, each a constant, where it ran as Python at every
    call (23 times slower than compiled in the held-out program); from a fourth value on it
    runs as Python. Values against numpy's recurrence at each step count."""
    traces = []

    @tt.function(backend=backend)
    def rollout(x, steps):
        traces.append(steps)
        states = tt.TensorArray(tt.float64, size=steps + 1).write(0, x)
        for i in tt.range(steps):
            x = x * 0.5 + tt.cast(i, tt.float64)
            states = states.write(i + 1, x)
        return states.stack(), tt.reduce_sum(tt.range(steps))

    def expected(x, steps):
        rows = [x]
        for i in range(steps):
            rows.append(rows[-1] * 0.5 + i)
        return np.array(rows), sum(range(steps))

    x = np.array([1.0, -2.0])
    with caplog.at_level(logging.INFO, logger="tracer.function"):
        for steps in (4, 4, 6, 4, 6, 2):
            stacked, total = rollout(tt.constant(x), tt.constant(steps))
            want_stacked, want_total = expected(x, steps)
            np.testing.assert_allclose(stacked.numpy(), want_stacked, rtol=1e-15)
            assert int(total) == want_total
    assert not rollout._runs_as_python
    known = [t for t in traces if hasattr(t, "numpy")]  # (the first trace's is symbolic)
    assert [int(t.numpy()) for t in known] == [4, 6, 2]  # a trace for each value
    assert all(t.dtype == tt.int32 for t in known)  # of the argument's dtype
    ranged = tt.function(lambda n: tt.range(n), backend=backend)(tt.constant(3, tt.int64))
    assert ranged.dtype == tt.int64 and ranged.numpy().tolist() == [0, 1, 2]  # TF 2.21's
    assert "traced for each value of its scalar integer tensor arguments" in caplog.text
    with caplog.at_level(logging.WARNING, logger="tracer.function"):
        stacked, _ = rollout(tt.constant(x), tt.constant(3))
    np.testing.assert_allclose(stacked.numpy(), expected(x, 3)[0], rtol=1e-15)
    assert rollout._runs_as_python and "runs as Python at each call" in caplog.text


@pytest.mark.parametrize("backend", [None, "c", "interpreter"])
def test_split_writes_pieces_of_the_given_lengths(backend):
    """TF 2.21: split([0.3, -1.2, 0.7], [1, 2]) reads back (0.3) and (-1.2, 0.7); the
    gradient of sum(concat * [1, 10, 100]) + sum(read(1)) of v * v at v = [0.3, -1.2, 0.7]
    is [0.6, -24, 141.4]. tracer's TensorArray had no split."""
    v = tt.constant([0.3, -1.2, 0.7], tt.float64)

    def pieces_and_gradient(v):
        with tt.GradientTape() as tape:
            tape.watch(v)
            array = tt.TensorArray(tt.float64, size=2, infer_shape=False).split(v * v, [2, 1])
            weights = tt.constant([1.0, 10.0, 100.0], tt.float64)
            total = tt.reduce_sum(array.concat() * weights) + tt.reduce_sum(array.read(1))
        split = tt.TensorArray(tt.float64, size=2, infer_shape=False).split(v, [1, 2])
        return split.read(0), split.read(1), tape.gradient(total, v)

    run = (
        pieces_and_gradient
        if backend is None
        else tt.function(pieces_and_gradient, backend=backend)
    )
    first, second, gradient = run(v)
    np.testing.assert_array_equal(first.numpy(), [0.3])
    np.testing.assert_array_equal(second.numpy(), [-1.2, 0.7])
    np.testing.assert_allclose(gradient.numpy(), [0.6, -24.0, 141.4], rtol=1e-14)
    with pytest.raises(tt.errors.InvalidArgumentError, match="sum to the value's length"):
        tt.TensorArray(tt.float64, size=2).split(v, [1, 1])
