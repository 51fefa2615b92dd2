"""tt.py_function: TensorFlow 2.21's outputs for the same calls, eagerly and in tt.function."""

import logging

import numpy as np
import pytest

import tracer as tt
from tracer.errors import RunsAsPython


def log_huber(x, m):
    if tt.abs(x) <= m:
        return x**2
    return m**2 * (1 - 2 * tt.math.log(m) + tt.math.log(x**2))


@pytest.mark.parametrize(
    "x, expected, slope",
    [(1.0, 1.0, 2.0), (3.0, 4.0 * (1 - 2 * np.log(2.0) + np.log(9.0)), 8.0 / 3.0)],
)
def test_eagerly_the_function_runs_on_tensors_and_its_ops_are_differentiated(x, expected, slope):
    x, m = tt.constant(x), tt.constant(2.0)
    with tt.GradientTape() as tape:
        tape.watch([x, m])
        y = tt.py_function(func=log_huber, inp=[x, m], Tout=tt.float32)
    assert y.dtype == tt.float32 and y.shape == ()
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-6)
    (dx,) = tape.gradient(y, [x])
    np.testing.assert_allclose(dx.numpy(), slope, rtol=1e-6)  # TF: 2.0 at x = 1


def test_results_are_converted_to_tout_as_tensorflow_converts_them():
    x = tt.constant(1.0)
    pair = tt.py_function(lambda a: [a, a * 2], [x], [tt.float32, tt.float32])
    assert isinstance(pair, list) and [float(t) for t in pair] == [1.0, 2.0]
    assert tt.py_function(lambda a: None, [x], []) == []
    converted = tt.py_function(lambda a: np.float64(1.0), [x], tt.float32)  # numpy: converted
    assert converted.dtype == tt.float32 and float(converted) == 1.0
    three = tt.py_function(lambda a: 3, [x], tt.int64)
    assert three.dtype == tt.int64 and int(three) == 3
    summed = tt.py_function(lambda a, b: a + b, [1.0, 2.0], tt.float32)  # Python inputs
    assert summed.dtype == tt.float32 and float(summed) == 3.0


def test_a_tensor_of_another_dtype_or_count_is_an_invalid_argument():
    x = tt.constant(1.0)
    with pytest.raises(
        tt.errors.InvalidArgumentError, match="int32 tensor where Tout asks for float32"
    ):
        tt.py_function(lambda a: tt.constant(1, tt.int32), [x], tt.float32)
    with pytest.raises(tt.errors.InvalidArgumentError, match="returned 1 value.*Tout gives 2"):
        tt.py_function(lambda a: [a], [x], [tt.float32, tt.float32])
    with pytest.raises(TypeError, match="Missing required argument: 'Tout'"):
        tt.py_function(lambda a: a, [x])


def test_as_a_decorator():
    @tt.py_function(Tout=tt.float32)
    def doubled(a):
        return a * 2

    assert float(doubled(tt.constant(1.5))) == 3.0


def test_compiled_without_results_it_runs_at_every_call_iteration_and_branch_taken():
    seen = []

    @tt.function
    def f(v, n):
        tt.py_function(lambda t: seen.append(("call", int(t))), inp=[v], Tout=[])
        for i in tt.range(n):
            tt.py_function(lambda t: seen.append(("loop", int(t))), inp=[i], Tout=[])
        if v > 1:
            tt.py_function(lambda: seen.append(("branch", None)), inp=[], Tout=[])
        return v + 1

    assert int(f(tt.constant(1), tt.constant(2))) == 2
    assert int(f(tt.constant(2), tt.constant(1))) == 3
    assert f.experimental_get_tracing_count() == 1
    assert seen == [
        ("call", 1),
        ("loop", 0),
        ("loop", 1),
        ("call", 2),
        ("loop", 0),
        ("branch", None),
    ]
    assert f.get_concrete_function(tt.constant(1), tt.constant(2)).backend == "c"


@pytest.mark.parametrize("backend", ["c", "interpreter"])
def test_compiled_with_results_func_runs_once_per_call_in_the_compiled_code(backend):
    """TF's guide: a tf.function calling a py_function prints `Tracing.` once, and the
    py_function's `Executing eagerly.` once per call (the first call too). The results
    have the shapes of the traced call's run, and the rest of the function compiles."""
    events = []

    @tt.py_function(Tout=[tt.float64, tt.int32])
    def split(x, k):
        events.append("func")
        return x * k, tt.shape(x)

    @tt.function(backend=backend)
    def f(x, k):
        events.append("trace")
        scaled, shape = split(x, k)
        return tt.reduce_sum(scaled**2) + tt.cast(shape[0], tt.float64)

    x = np.array([1.0, -2.0, 3.0])
    for k in (2.0, 2.0, -1.5):
        got = f(tt.constant(x), tt.constant(np.float64(k)))
        np.testing.assert_allclose(got.numpy(), np.sum((x * k) ** 2) + 3.0, rtol=1e-12)
    assert events == ["trace", "func", "func", "func"]
    concrete = f.get_concrete_function(tt.constant(x), tt.constant(np.float64(1.0)))
    assert concrete.backend == backend
    assert "py_function_result" in {n.op for n in concrete.stages.final.nodes}


def test_results_whose_shape_changes_run_the_function_as_python_from_that_call(caplog):
    """Compiled code holds the traced shapes; a call whose results come back in another
    shape finishes as Python, with `func` run once all the same, and so do later calls."""
    calls = []

    @tt.function
    def total(n):
        r = tt.py_function(
            lambda n: calls.append(int(n)) or np.arange(int(n), dtype=np.float32),
            inp=[n],
            Tout=tt.float32,
        )
        return tt.reduce_sum(r) * 2.0

    with caplog.at_level(logging.WARNING, logger="tracer"):
        got = [float(total(tt.constant(n))) for n in (3, 3, 5, 4)]
    assert got == [6.0, 6.0, 20.0, 12.0]
    assert calls == [3, 3, 5, 4]
    [notice] = caplog.records
    assert "shape (5,) in this call and (3,) when traced" in notice.getMessage()
    assert total.experimental_get_tracing_count() == 1


def test_under_a_tape_in_a_loop_or_from_specs_the_function_runs_as_python(caplog):
    """Where the results' shapes cannot be known from the call being traced, or a tape
    must record `func`'s ops, the tt.function runs as Python (TF's values, gradients)."""
    square = tt.py_function(Tout=tt.float32)(lambda t: t * t)

    @tt.function
    def f(x):
        return square(x) + 1.0

    x = tt.constant([1.0, 3.0])
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [2.0, 6.0])
    np.testing.assert_array_equal(f(x).numpy(), [2.0, 10.0])  # and compiled without a tape

    @tt.function
    def in_a_loop(x):
        for _ in tt.range(2):
            x = square(x)
        return x

    with caplog.at_level(logging.WARNING, logger="tracer"):
        np.testing.assert_array_equal(in_a_loop(tt.constant([2.0])).numpy(), [16.0])
    assert "not known while it is traced" in caplog.records[0].getMessage()
    with pytest.raises(RunsAsPython, match="runs as Python at each call"):
        in_a_loop.get_concrete_function(tt.TensorSpec([1], tt.float32))


@pytest.mark.parametrize("n", [5, 1000])
def test_a_compiled_function_called_again_from_its_own_py_function_keeps_its_call(n):
    """A module's call keeps its arguments, workspace and sizes in per-thread arrays: a call
    of the same function from within it (its py_function calling it again, on the same
    thread) must not take them from the outer call, which reads them again after the
    callback (its values were off by e, or the heap was corrupted)."""
    again = [False]

    def calls_f_again(x):
        if again[0]:
            again[0] = False
            f(tt.constant(np.ones(n)))
        return x

    @tt.function
    def f(x):
        back = tt.py_function(calls_f_again, [x], tt.float64)
        return tt.exp(x) + back * x

    x = np.linspace(0.0, 1.0, n)
    f(tt.constant(x))
    again[0] = True
    got = f(tt.constant(x)).numpy()
    assert not again[0]  # the inner call ran
    np.testing.assert_allclose(got, np.exp(x) + x * x, rtol=1e-15, atol=1e-15)


def test_func_runs_eagerly_while_its_function_is_traced():
    """The run of `func` that gives its results' shapes while tt.function traces runs
    outside the trace, as every later run does: a Variable it reads is read, and an assign it
    makes happens then, once, instead of joining the traced graph."""
    scale = tt.Variable(3.0)
    times = tt.Variable(0.0)

    def counted(x):
        if float(x) == 1.0:
            times.assign_add(1.0)
        return x * scale

    f = tt.function(lambda x: tt.py_function(counted, [x], tt.float32))
    for value in (1.0, 2.0, 3.0, 4.0):
        assert f(tt.constant(value)).numpy() == 3.0 * value
    assert times.numpy() == 1.0


def test_func_runs_once_a_call_when_a_new_size_is_traced():
    """A new size's trace from specs cannot run `func` (its results' shapes come from a run
    on the call's values): that call is traced with its values, which runs `func` once, and
    the function stays compiled (it ran func twice and ran as Python from then on)."""
    calls = []

    def doubled(x):
        calls.append(x.shape[0])
        return x.numpy() * 2

    f = tt.function(lambda x: tt.py_function(doubled, [x], tt.float64) + 1.0)
    sizes = [3, 3, 4, 5, 5]
    for n in sizes:
        np.testing.assert_array_equal(f(tt.constant(np.ones(n))).numpy(), np.full(n, 3.0))
    assert calls == sizes
    assert not f._runs_as_python


@pytest.mark.parametrize("compiled", [False, True])
def test_func_returning_none_for_a_result_is_an_error(compiled):
    """None is no value of Tout's dtype (numpy made it a float NaN): as TensorFlow, an error."""
    call = lambda x: tt.py_function(lambda a: None, [x], tt.float32)  # noqa: E731
    run = tt.function(call) if compiled else call
    with pytest.raises(tt.errors.InvalidArgumentError, match="returned None"):
        run(tt.constant(1.0))


def test_numpy_function_hands_func_arrays_and_gives_no_gradient():
    """tt.numpy_function as TensorFlow 2.21's tf.numpy_function (its printed outputs): `func`
    gets ndarrays (a 0-d one for a scalar), its results become tensors of Tout, a tape sees
    nothing inside it (gradient None), and it works as a decorator and in a tt.function."""
    seen = []

    def f(a, b):
        seen.append((type(a), a.shape, type(b), b.dtype))
        return (a * 2).astype(np.float32), np.array(b + 1, np.int32)

    x, n = tt.constant([1.0, 2.0]), tt.constant(3)
    doubled, plus_one = tt.numpy_function(f, [x, n], [tt.float32, tt.int32])
    assert seen == [(np.ndarray, (2,), np.ndarray, np.int32)]
    assert doubled.numpy().tolist() == [2.0, 4.0] and int(plus_one) == 4
    assert plus_one.dtype == tt.int32

    @tt.numpy_function(Tout=tt.float32)
    def sinh(a):
        return np.sinh(a)

    np.testing.assert_allclose(sinh(x).numpy(), [1.1752012, 3.6268604], rtol=1e-6)
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = tt.numpy_function(lambda a: a * a, [x], tt.float32)
    assert tape.gradient(y, x) is None
    h = tt.function(lambda v: tt.numpy_function(lambda a: a + 1, [v], tt.float32) * 2)
    assert h(x).numpy().tolist() == [4.0, 6.0]
    assert float(tt.numpy_function(lambda a: 1.5, [x], tt.float64)) == 1.5


def test_numpy_function_in_a_loop_of_a_traced_function_runs_each_iteration():
    """The step of an environment in a `for t in tt.range(n)` loop (the actor-critic
    tutorial's pattern): the function runs as Python, calling `func` once an iteration."""
    steps = []

    @tt.numpy_function(Tout=[tt.float32, tt.int32])
    def step(state):
        steps.append(float(state))
        return np.float32(state + 1.0), np.array(state >= 2.0, np.int32)

    @tt.function
    def run(state, n):
        total = tt.constant(0.0)
        for _ in tt.range(n):
            state, done = step(state)
            total += state
            if tt.cast(done, tt.bool):
                break
        return total

    assert float(run(tt.constant(0.0), 10)) == 1.0 + 2.0 + 3.0
    assert steps == [0.0, 1.0, 2.0]
