"""tt.py_function: TensorFlow 2.21's outputs for the same calls, eagerly and in tt.function."""

import numpy as np
import pytest

import tracer as tt
from tracer.tracing import RunsAsPython


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


def test_compiled_with_results_the_function_runs_as_python_at_each_call():
    calls = []

    @tt.function
    def g(v):
        out = tt.py_function(lambda t: calls.append(1) or t * 2, inp=[v], Tout=tt.float32)
        return out + 1

    with pytest.warns(
        UserWarning, match=r"g calls tt.py_function with results at .*test_py_function.py:\d+"
    ) as warned:
        first = g(tt.constant([1.0, 2.0]))
    assert warned[0].filename == __file__  # at the user's call
    np.testing.assert_array_equal(first.numpy(), [3.0, 5.0])  # TF's values
    np.testing.assert_array_equal(g(tt.constant([1.0, 3.0])).numpy(), [3.0, 7.0])
    assert len(calls) == 2  # each call, none at trace time
    with pytest.raises(RunsAsPython, match="runs as Python at each call"):
        g.get_concrete_function(tt.constant([1.0]))
