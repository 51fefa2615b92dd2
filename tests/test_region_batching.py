"""Batching rules of `while`, `cond` and `recompute` (tracer/control/region_batching.py): a vectorized
jacobian through a compiled loop or branch is one batched loop or branch, equal to the
looped jacobian (experimental_use_pfor=False) and to float64 finite differences; and
tt.vectorized_map over a function with a loop or a branch equals the Python loop of it."""

import re

import numpy as np
import pytest

import tracer as tt
from tracer import nest
from tracer.control.subgraph import trace_function
from tracer.ops.registry import NotVectorizable
from tracer.passes.vectorize import vectorize

BACKENDS = ["interpreter", "c"]
X = np.array([0.3, -0.2, 0.5])
W = np.array([0.7, 1.1, -0.4])


def _three_steps(x, w, limit=5):
    step = lambda i, s: (i + 1, tt.sin(s * w) + 0.5 * s * s)  # noqa: E731
    return tt.while_loop(lambda i, s: i < 3, step, (0, x), maximum_iterations=limit)[1]


def _with_a_constant_variable(x, w):
    """`a` never depends on x or w: it stays unbatched in the batched loop."""
    step = lambda i, s, a: (i + 1, tt.tanh(s * w) * a, a * 0.5 + 1.0)  # noqa: E731
    zero, one = tt.constant(0), tt.constant(1.0, tt.float64)
    return tt.while_loop(lambda i, s, a: i < 4, step, (zero, x, one), maximum_iterations=6)[1]


def _with_a_variable_that_becomes_batched(x, w):
    """`t` enters as zeros and the body makes it depend on x and w (the fixed point)."""
    step = lambda i, s, t: (i + 1, tt.sin(s) * w, t + s * s)  # noqa: E731
    zeros = tt.zeros((3,), tt.float64)
    return tt.while_loop(lambda i, s, t: i < 3, step, (0, x, zeros), maximum_iterations=3)[2]


def _until_large(x, w):
    """A condition on the values: unbatched in a jacobian (the seeds never reach it)."""
    cond = lambda s: tt.reduce_sum(s * s) < 4.0  # noqa: E731
    return tt.while_loop(cond, lambda s: s * 1.5 + w * 0.1, [x], maximum_iterations=20)[0]


def _nested(x, w):
    def body(i, s):
        inner = tt.while_loop(lambda j, u: j < 2, lambda j, u: (j + 1, tt.sin(u) * w), (0, s))
        return i + 1, inner[1] + s

    return tt.while_loop(lambda i, s: i < 2, body, (0, x), maximum_iterations=2)[1]


def _branch_in_body(x, w):
    def body(i, s):
        turned = tt.cond(tt.reduce_sum(s) > 0.0, lambda: tt.sin(s) * w, lambda: s * s)
        return i + 1, turned + 0.1 * s

    return tt.while_loop(lambda i, s: i < 3, body, (0, x), maximum_iterations=3)[1]


def _branch(threshold):
    def f(x, w):
        return tt.cond(tt.reduce_sum(x) > threshold, lambda: tt.sin(x) * w, lambda: x * x * w)

    return f


def _branch_with_an_unbatched_side(x, w):
    return tt.cond(tt.reduce_sum(x) > 0.0, lambda: w * 2.0, lambda: tt.exp(x) * w)


CASES = {
    "loop, bounded": _three_steps,
    "loop, unbounded": lambda x, w: _three_steps(x, w, limit=None),
    "loop, a variable independent of the batch": _with_a_constant_variable,
    "loop, a variable made dependent by the body": _with_a_variable_that_becomes_batched,
    "loop, a condition on the values": _until_large,
    "loop in a loop": _nested,
    "branch in a loop": _branch_in_body,
    "branch, true": _branch(-10.0),
    "branch, false": _branch(10.0),
    "branch, one side independent of x": _branch_with_an_unbatched_side,
}


def _jacobians(f, use_pfor):
    def jacobians(x, w):
        with tt.GradientTape(persistent=True) as tape:
            tape.watch([x, w])
            y = f(x, w)
        return tape.jacobian(y, [x, w], experimental_use_pfor=use_pfor)

    return jacobians


def _finite_differences(f, x, w, eps=1e-6):
    """The jacobians of eager `f` (float64) with respect to x and w, by central differences."""
    columns = []
    for position in range(2):
        point = [x, w]
        column = []
        for k in range(point[position].size):
            shifted = []
            for sign in (1.0, -1.0):
                moved = [p.copy() for p in point]
                moved[position][k] += sign * eps
                shifted.append(f(*(tt.constant(m) for m in moved)).numpy())
            column.append((shifted[0] - shifted[1]) / (2 * eps))
        columns.append(np.stack(column, axis=-1))
    return columns


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_a_jacobian_through_a_compiled_loop_or_branch_is_vectorized(name, backend):
    """With pfor on (the default), a NotVectorizable op would raise (see jacobian.py): the
    values come from the batched loop or branch."""
    f = CASES[name]
    x, w = tt.constant(X), tt.constant(W)
    vectorized = tt.function(_jacobians(f, True), backend=backend)(x, w)
    looped = tt.function(_jacobians(f, False), backend=backend)(x, w)
    eager = _jacobians(f, True)(x, w)
    numeric = _finite_differences(f, X, W)
    for got, want, by_rows, by_python in zip(vectorized, numeric, looped, eager):
        np.testing.assert_allclose(got.numpy(), by_rows.numpy(), rtol=1e-12, atol=1e-14)
        # eagerly a branch not taken is not recorded: a jacobian it alone connects is None
        by_python = np.zeros(got.shape) if by_python is None else by_python.numpy()
        np.testing.assert_allclose(got.numpy(), by_python, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_batch_jacobian_through_a_compiled_loop(backend):
    xs = tt.constant(np.array([[0.3, -0.2, 0.5], [0.1, 0.4, -0.6]]))

    def batch_jacobian(xs, use_pfor):
        with tt.GradientTape(persistent=True) as tape:
            tape.watch(xs)
            y = _three_steps(xs, tt.constant(W))
        return tape.batch_jacobian(y, xs, experimental_use_pfor=use_pfor)

    got = tt.function(lambda xs: batch_jacobian(xs, True), backend=backend)(xs).numpy()
    looped = tt.function(lambda xs: batch_jacobian(xs, False), backend=backend)(xs).numpy()
    np.testing.assert_allclose(got, looped, rtol=1e-12, atol=1e-14)
    for row, x in enumerate(xs.numpy()):  # each example's own jacobian, by differences
        (want, _) = _finite_differences(_three_steps, x, W)
        np.testing.assert_allclose(got[row], want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_gradient_of_a_vectorized_jacobian_runs_back_through_the_batched_loop(backend):
    """Second order: the batched backward loop has a gradient of its own (its stacks)."""

    def gradient_of_jacobian(x, w, use_pfor):
        with tt.GradientTape() as outer:
            outer.watch(x)
            (j, _) = _jacobians(_three_steps, use_pfor)(x, w)
            total = tt.reduce_sum(j * j)
        return outer.gradient(total, x)

    x, w = tt.constant(X), tt.constant(W)
    got = tt.function(lambda x, w: gradient_of_jacobian(x, w, True), backend=backend)(x, w)
    want = tt.function(lambda x, w: gradient_of_jacobian(x, w, False), backend=backend)(x, w)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
    eps = 1e-6

    def total(x):
        (j, _) = _jacobians(_three_steps, True)(tt.constant(x), w)
        return np.sum(j.numpy() ** 2)

    numeric = [(total(X + eps * e) - total(X - eps * e)) / (2 * eps) for e in np.eye(3)]
    np.testing.assert_allclose(got.numpy(), numeric, rtol=1e-6)


def _loops_in_c(rows, use_pfor):
    """The number of loops (each breaks out on its condition) in the C of a jacobian through
    a compiled loop, for an x of `rows` elements."""
    x = tt.constant(np.linspace(0.1, 0.9, rows))
    compiled = tt.function(_jacobians(_three_steps, use_pfor), backend="c")
    source = compiled.get_concrete_function(x, x).c_source()
    return len(re.findall(r"\) break;", source))


def test_the_c_of_a_vectorized_jacobian_through_a_loop_has_one_backward_loop():
    """The forward loop and one backward loop working on every row, whatever the rows;
    with pfor off, a loop over the rows holds the backward loop."""
    assert _loops_in_c(3, True) == _loops_in_c(30, True) == 2
    assert _loops_in_c(3, False) == 3


def _looped(fn, elems):
    rows = [fn(e) for e in elems]
    if isinstance(rows[0], (list, tuple)):
        return [tt.stack([row[k] for row in rows]) for k in range(len(rows[0]))]
    return tt.stack(rows)


def _doubling_until(limit):
    """A loop whose number of iterations differs between elements (its condition is batched)."""

    def fn(x):
        cond = lambda i, s: tt.reduce_sum(s) < 10.0  # noqa: E731
        step = lambda i, s: (i + 1, s * 2.0 + 0.1)  # noqa: E731
        return tt.while_loop(cond, step, (0, x), maximum_iterations=limit)

    return fn


def _branch_per_element(x):
    return tt.cond(tt.reduce_sum(x) > 1.0, lambda: tt.sin(x) * 3.0, lambda: x * x)


def _switch_per_element(x):
    """Index 0, 1, 2 or out of range (the last branch) by the element's sum."""
    index = tt.cast(tt.floor(tt.reduce_sum(x)), tt.int32)
    return tt.switch_case(index, [lambda: x * 2.0, lambda: tt.sin(x), lambda: -x, lambda: x * x])


def _case_per_element(x):
    total = tt.reduce_sum(x)
    return tt.case(
        [(total > 3.0, lambda: tt.exp(x)), (total > 1.0, lambda: x * 3.0)], default=lambda: -x
    )


SHARED = tt.constant(np.array([0.5, -1.0]))


def _branch_on_a_shared_value(x):
    return tt.cond(tt.reduce_sum(SHARED) > 0.0, lambda: x * 2.0, lambda: tt.exp(x))


def _loop_in_a_branch_per_element(x):
    def doubled():
        return tt.while_loop(lambda s: tt.reduce_max(s) < 5.0, lambda s: s * 2.0, [x])[0]

    return tt.cond(x[0] > 0.0, doubled, lambda: -x)


def _gradient_through_a_per_element_loop(x):
    """Inside: the backward loop runs each element's own count of steps (a batched condition)."""
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = _doubling_until(None)(x)[1]
        total = tt.reduce_sum(tt.sin(y * x))
    return tape.gradient(total, x)


MAPPED = {
    "per-element gradient through a per-element loop": _gradient_through_a_per_element_loop,
    "per-element loop, bounded": _doubling_until(20),
    "per-element loop, bounded below the end": _doubling_until(2),
    "per-element loop, unbounded": _doubling_until(None),
    "per-element branch": _branch_per_element,
    "per-element switch_case": _switch_per_element,
    "per-element case": _case_per_element,
    "shared branch": _branch_on_a_shared_value,
    "loop in a per-element branch": _loop_in_a_branch_per_element,
    "recomputed function": tt.recompute_grad(lambda e: tt.tanh(e * e) * tt.reduce_sum(e)),
}


@pytest.mark.parametrize("name", sorted(MAPPED))
def test_vectorized_map_over_a_loop_or_branch_equals_the_python_loop(name):
    fn = MAPPED[name]
    elems = tt.constant(np.array([[0.5, 1.0], [2.0, 3.0], [0.1, 0.2], [-0.4, 0.3]]))
    want = nest.flatten(_looped(fn, elems))
    mapped = lambda e: tt.vectorized_map(fn, e, fallback_to_while_loop=False)  # noqa: E731
    runs = [mapped] + [tt.function(mapped, backend=backend) for backend in BACKENDS]
    for run in runs:
        for got, expected in zip(nest.flatten(run(elems)), want):
            np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-14)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_gradient_through_a_per_element_loop_reads_its_stacks(backend):
    """Rows that finished early keep their values in the batched loop: the gradient through
    it, from its stacked states, is that of each element's own loop."""
    fn = lambda x: _doubling_until(6)(x)[1] * x  # noqa: E731
    elems = tt.constant(np.array([[0.5, 1.0], [2.0, 3.0], [0.1, 0.2]]))

    def gradient(elems, mapped):
        with tt.GradientTape() as tape:
            tape.watch(elems)
            y = tt.vectorized_map(fn, elems, False) if mapped else _looped(fn, elems)
            total = tt.reduce_sum(tt.sin(y))
        return tape.gradient(total, elems)

    got = tt.function(lambda e: gradient(e, True), backend=backend)(elems).numpy()
    np.testing.assert_allclose(got, gradient(elems, False).numpy(), rtol=1e-13)
    # d/dx sum(sin(s(x) * x)): after n steps s = 2^n x + 0.1 (2^n - 1), n fixed near x
    want = []
    for x in elems.numpy():
        n = 0
        while np.sum(x * 2.0**n + 0.1 * (2.0**n - 1)) < 10.0 and n < 6:
            n += 1
        s = x * 2.0**n + 0.1 * (2.0**n - 1)
        want.append(np.cos(s * x) * (s + x * 2.0**n))
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_a_branch_with_a_side_effect_is_not_batched_where_rows_differ():
    def fn(x):
        def loud():
            tt.print("true branch")
            return x * 2.0

        return tt.cond(tt.reduce_sum(x) > 0.0, loud, lambda: x)

    @tt.function
    def batched(x):
        traced = trace_function(fn, [x[0]], "a test function")
        vectorize(traced.graph, traced.graph.inputs[:1], 2)
        return x

    with pytest.raises(NotVectorizable, match=r"a branch of a tt.cond has a side effect \(print"):
        batched(tt.constant(np.ones((2, 3))))
