"""`return` inside converted loops and tensor `if`s (tracer/autograph/returns.py): the values
of plain Python (the function run eagerly, and with tt.config.run_functions_eagerly), the
same on the interpreter and in compiled C, TensorFlow 2.21's values where it converts the
function, gradients against float64 finite differences, and TensorFlow's error kinds, with
the user's line, where the ways of a tensor condition return different things."""

import contextlib
import inspect

import numpy as np
import pytest

import tracer as tt
from tracer import autograph

BACKENDS = ["interpreter", "c"]


# --- functions that return inside loops ---------------------------------------------------


def first_doubling_above_five(v):
    for i in tt.range(10):
        if v > 5.0:
            return v
        v = v * 2.0
    return v


def while_returns_early(v):
    while v < 100.0:
        if v > 5.0:
            return v + 1000.0
        v = v * 2.0
    return v


def nested_loops(v):
    for i in tt.range(4):
        for j in tt.range(4):
            if v > 20.0:
                return v + tt.cast(i * 10 + j, tt.float32)
            v = v * 2.0
        v = v + 1.0
    return -v


def with_break_and_continue(v):
    s = 0.0
    for i in tt.range(10):
        if v > 100.0:
            return s
        if v < 3.0:
            v = v + 1.0
            continue
        if s > 40.0:
            break
        s = s + v
        v = v * 2.0
    return -s


def more_after_the_loop(v):
    for i in tt.range(3):
        v = v + 1.0
        if v > 2.0:
            return v
    v = v * 10.0
    return v


def returns_a_pair(v):
    for i in tt.range(5):
        if v > 5.0:
            return v, v * 3.0
        v = v * 2.0
    return v, -v


def first_row_above(x, limit):
    for row in x:
        if tt.reduce_sum(row) > limit:
            return row
    return tt.zeros_like(x[0])


def returns_in_both_branches(v):
    for i in tt.range(3):
        if v > 5.0:
            return v
        else:
            return -v
    return v * 0.0


def while_returns_in_both_branches(v):
    while v < 100.0:
        v = v * 2.0
        if v > 5.0:
            return v
        else:
            return -v
    return v * 0.0


def nested_ifs_that_return(v):
    if v > 0.0:
        v = v * 2.0
        if v > 10.0:
            return v
        v = v + 1.0
        return v
    return -v


def returns_before_and_inside_a_loop(v):
    if v < 0.0:
        return -v
    for i in tt.range(5):
        if v > 5.0:
            return v
        v = v * 2.0
    return v


def nested_whiles(v):
    i = 0
    while i < 10:
        j = 0
        while j < 3:
            if v > 50.0:
                return v
            v = v + 1.0
            j = j + 1
        v = v * 2.0
        i = i + 1
    return v


def returns_a_dict_from_a_with(v, n):
    for i in tt.range(n):
        with contextlib.nullcontext():
            if v > 5.0:
                return {"value": v, "step": tt.cast(i, tt.float32)}
        v = v * 2.0
    return {"value": v, "step": tt.constant(-1.0)}


class Scaled:
    def __init__(self, scale):
        self.scale = scale

    def first_above_scale(self, v):
        for i in tt.range(4):
            if v > self.scale:
                return v * self.scale
            v = v + 1.0
        return v


def returns_under_a_python_flag(v, early):
    for i in tt.range(3):
        if early:
            return v
        v = v * 2.0
    return v


CASES = [
    (first_doubling_above_five, [1.0, 100.0, -1.0]),
    (while_returns_early, [1.0, 150.0, 0.5]),
    (nested_loops, [1.0, 30.0, -1.0]),
    (with_break_and_continue, [1.0, 4.0, 200.0, -50.0]),
    (more_after_the_loop, [0.5, -10.0]),
    (returns_a_pair, [1.0, 10.0, -1.0]),
    (returns_in_both_branches, [1.0, 10.0]),
    (while_returns_in_both_branches, [1.0, 1000.0]),
    (nested_ifs_that_return, [6.0, 2.0, -2.0]),
    (returns_before_and_inside_a_loop, [-3.0, 1.0, 7.0]),
    (nested_whiles, [1.0, 60.0]),
]


def _numpy(result):
    if isinstance(result, (tuple, list)):
        return [np.asarray(r) for r in result]
    return np.asarray(result)


def _assert_same(got, want):
    got, want = _numpy(got), _numpy(want)
    if isinstance(want, list):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("function, inputs", CASES, ids=[c[0].__name__ for c in CASES])
def test_a_return_in_a_loop_gives_python_s_value_with_one_trace(function, inputs, backend):
    compiled = tt.function(function, backend=backend)
    for value in inputs:
        x = tt.constant(value)
        _assert_same(compiled(x), function(x))  # eagerly: Python's own loops and returns
    assert compiled.experimental_get_tracing_count() == 1
    graph = compiled.get_concrete_function(tt.constant(inputs[0])).ir("traced")
    assert "cond[" in graph


def test_values_written_out_python_s_and_tensorflow_s():
    """Values by hand (Python's semantics) for what TensorFlow 2.21 refuses to convert (it
    raises NotImplementedError: "a return statement cannot be placed inside this TensorFlow
    loop"), and TensorFlow 2.21's outputs where it converts the function."""
    f = tt.function(first_doubling_above_five)
    assert [float(f(tt.constant(v))) for v in (1.0, 100.0, -1.0)] == [8.0, 100.0, -1024.0]
    assert float(tt.function(while_returns_early)(tt.constant(1.0))) == 1008.0
    assert float(tt.function(nested_loops)(tt.constant(1.0))) == 34.0 + 11.0  # i=1, j=1
    assert float(tt.function(more_after_the_loop)(tt.constant(-10.0))) == -70.0
    assert [float(t) for t in tt.function(returns_a_pair)(tt.constant(1.0))] == [8.0, 24.0]
    # TensorFlow 2.21's outputs (tf.function):
    g = tt.function(returns_in_both_branches)
    assert [float(g(tt.constant(v))) for v in (1.0, 10.0)] == [-1.0, 10.0]
    assert float(tt.function(while_returns_in_both_branches)(tt.constant(1.0))) == -2.0
    h = tt.function(nested_ifs_that_return)
    assert [float(h(tt.constant(v))) for v in (6.0, 2.0, -2.0)] == [12.0, 5.0, 2.0]
    # a loop that runs no iteration: Python's value; TensorFlow 2.21 fails at run time
    # ("loop must iterate at least once to initialize the function return value")
    assert float(tt.function(while_returns_in_both_branches)(tt.constant(1000.0))) == 0.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_loop_over_the_rows_of_a_tensor_returns_a_row(backend):
    f = tt.function(first_row_above, backend=backend)
    x = tt.constant(np.arange(12.0).reshape(4, 3))
    for limit in (-1.0, 4.0, 20.0, 100.0):
        want = np.arange(12.0).reshape(4, 3)[np.arange(12.0).reshape(4, 3).sum(1) > limit]
        want = want[0] if len(want) else np.zeros(3)
        np.testing.assert_array_equal(f(x, tt.constant(limit, tt.float64)).numpy(), want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_dict_returned_from_a_with_and_a_method_that_returns(backend):
    f = tt.function(returns_a_dict_from_a_with, backend=backend)
    for v, n in ((1.0, 5), (1.0, 2), (10.0, 0)):
        got = f(tt.constant(v), tt.constant(n))
        want = returns_a_dict_from_a_with(tt.constant(v), tt.constant(n))
        assert {k: float(t) for k, t in got.items()} == {k: float(t) for k, t in want.items()}
    assert {k: float(t) for k, t in f(tt.constant(1.0), tt.constant(5)).items()} == {
        "value": 8.0,
        "step": 3.0,
    }
    model = Scaled(3.0)
    g = tt.function(model.first_above_scale, backend=backend)
    assert [float(g(tt.constant(v))) for v in (1.0, -5.0)] == [12.0, -1.0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_return_under_a_python_condition_in_a_tensor_loop(backend):
    """A `return` that a Python value decides (a hyperparameter): where it does not run, the
    flag it would set is never set (TensorFlow 2.21 refuses this function)."""
    for early, want in ((False, 8.0), (True, 1.0)):
        f = tt.function(returns_under_a_python_flag, backend=backend)
        assert float(f(tt.constant(1.0), early)) == want


def test_python_conditions_keep_python_s_semantics():
    """With Python values, the rewritten returns run as Python's: loops over `range`, and
    the conditions on Python floats, return at the same points."""

    def search(v, limit):
        total = 0.0
        for i in range(10):
            for j in range(10):
                if i * j > limit:
                    return total + v
                if j > i:
                    break
                total = total + j
        return -total

    f = tt.function(search)
    for limit in (3, 20, 1000):
        assert float(f(tt.constant(1.0), limit)) == float(search(1.0, limit))
    assert autograph.convert(search)(1.0, 20) == search(1.0, 20)  # no tensor at all


@pytest.mark.parametrize("function, inputs", CASES, ids=[c[0].__name__ for c in CASES])
def test_run_functions_eagerly_gives_the_same_values(function, inputs):
    traced = [tt.function(function)(tt.constant(v)) for v in inputs]
    tt.config.run_functions_eagerly(True)
    try:
        eager = [tt.function(function)(tt.constant(v)) for v in inputs]
    finally:
        tt.config.run_functions_eagerly(False)
    for got, want in zip(traced, eager):
        _assert_same(got, want)


# --- gradients ---------------------------------------------------------------------------


def grow_until_large(x):
    for i in tt.range(6):
        if tt.reduce_sum(x * x) > 10.0:
            return tt.sin(x) * x
        x = x * 1.5 + 0.1
    return x * x


def _finite_difference(f, x, direction, eps=1e-6):
    plus = f(tt.constant(x + eps * direction)).numpy().sum()
    minus = f(tt.constant(x - eps * direction)).numpy().sum()
    return (plus - minus) / (2 * eps)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradients_through_a_return_in_a_loop_match_finite_differences(backend):
    def inside(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.reduce_sum(autograph.convert(grow_until_large)(x))  # (a callee: converted)
        return y, tape.gradient(y, x)

    compiled = tt.function(grow_until_large, backend=backend)
    with_tape_inside = tt.function(inside, backend=backend)
    rng = np.random.default_rng(0)
    for x in (np.array([0.3, -0.2, 0.5]), np.array([2.0, 1.5, -2.5]), np.array([0.01, 0.0, 0.0])):
        direction = rng.normal(size=3)
        numeric = _finite_difference(grow_until_large, x, direction)
        t = tt.constant(x)
        with tt.GradientTape() as tape:  # the tape outside the tt.function
            tape.watch(t)
            y = tt.reduce_sum(compiled(t))
        outside = tape.gradient(y, t).numpy()
        value, grad = with_tape_inside(t)
        np.testing.assert_allclose(value.numpy(), grow_until_large(t).numpy().sum(), rtol=1e-12)
        np.testing.assert_allclose(outside @ direction, numeric, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(grad.numpy() @ direction, numeric, rtol=1e-6, atol=1e-8)


# --- errors: what TensorFlow raises, with the user's line ----------------------------------


def falls_off_after_the_loop(v):
    for i in tt.range(3):
        if v > 5.0:
            return v
        v = v * 2.0


def returns_another_dtype_after_the_loop(v):
    for i in tt.range(3):
        if v > 5.0:
            return v
        v = v * 2.0
    return tt.constant(1, tt.int32)


def returns_another_structure_after_the_loop(v):
    for i in tt.range(3):
        if v > 5.0:
            return v, v
        v = v * 2.0
    return v


def returns_none_in_the_loop(v):
    for i in tt.range(3):
        if v > 5.0:
            return None
        v = v * 2.0
    return v


def returns_none_everywhere(v):
    for i in tt.range(3):
        if v > 5.0:
            return
        v = v * 2.0


def falls_off_after_an_if(v):
    if v > 0.0:
        return v


def returns_in_a_python_loop_under_a_tensor(v):
    for i in range(3):
        if v > 5.0:
            return v
        v = v * 2.0
    return v


def _line(function, text):
    """`test_autograph_return.py:N`, N the line of `function` that starts with `text`."""
    lines, first = inspect.getsourcelines(function)
    k = next(k for k, line in enumerate(lines) if line.strip().startswith(text))
    return f"test_autograph_return.py:{first + k}"


def test_one_way_returning_nothing_is_tensorflow_s_value_error():
    # TensorFlow 2.21: ValueError "the else branch must also have a return statement" (for
    # a tensor `if`; it refuses the loops with NotImplementedError)
    where = _line(falls_off_after_the_loop, "for")
    with pytest.raises(ValueError, match=f"returns nothing .*after the loop at {where}"):
        tt.function(falls_off_after_the_loop)(tt.constant(1.0))
    where = _line(returns_none_in_the_loop, "for")
    with pytest.raises(ValueError, match=f"returns nothing .*inside the loop at {where}"):
        tt.function(returns_none_in_the_loop)(tt.constant(1.0))
    where = _line(falls_off_after_an_if, "if")
    with pytest.raises(ValueError, match=f"false branch of the `if` at {where} returns nothing"):
        tt.function(falls_off_after_an_if)(tt.constant(1.0))
    # where every way returns None, the function does (as Python)
    assert tt.function(returns_none_everywhere)(tt.constant(1.0)) is None


def test_other_dtypes_or_structures_are_tensorflow_s_type_error():
    # TensorFlow 2.21: TypeError "'retval_' has dtype float32 in the main branch, but dtype
    # int32 in the else branch", and a TypeError of nest for the structures
    where = _line(returns_another_dtype_after_the_loop, "for")
    with pytest.raises(TypeError, match=f"condition at {where} .*float32 and int32"):
        tt.function(returns_another_dtype_after_the_loop)(tt.constant(1.0))
    where = _line(returns_another_structure_after_the_loop, "for")
    with pytest.raises(TypeError, match=f"condition at {where} .*a tuple and a Tensor"):
        tt.function(returns_another_structure_after_the_loop)(tt.constant(1.0))


def test_a_python_loop_cannot_return_under_a_tensor_condition():
    where = _line(returns_in_a_python_loop_under_a_tensor, "for")
    with pytest.raises(NotImplementedError, match=f"`for` at {where} .*returns under a tensor"):
        tt.function(returns_in_a_python_loop_under_a_tensor)(tt.constant(1.0))
    assert float(tt.function(returns_in_a_python_loop_under_a_tensor)(1.0)) == 8.0
