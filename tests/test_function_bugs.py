"""Regressions from issue 46: tt.cond branches of other structures, a tt.Module whose
__init__ skips Module's, a recursive tt.function, a tensor made in a loop and kept in a
Python list, and `del` and `else` in converted loops. Each docstring gives what TensorFlow
2.21 does with the same program (`tf` for `tt`); tracer matches it."""

import numpy as np
import pytest

import tracer as tt
from tracer.errors import OperatorNotAllowedInGraphError

# --- 1. tt.cond whose branches return other structures --------------------------------------


@pytest.mark.parametrize(
    "true_fn, false_fn, difference",
    [
        (lambda x: {"a": x}, lambda x: {"b": x}, "keys ['a'] and one with keys ['b']"),
        (lambda x: [x, x], lambda x: [x], "a list of length 2 and one of length 1"),
        (lambda x: (x, [x]), lambda x: (x, (x,)), "a list and a tuple"),
    ],
    ids=["dict-keys", "list-lengths", "nested"],
)
def test_cond_branches_of_other_structures_raise(true_fn, false_fn, difference):
    """TF: dicts with other keys, and (x, [x]) against (x, (x,)), raise
    `TypeError: true_fn and false_fn arguments to tf.cond must have the same number, type,
    and overall structure of return values.` (lists of other lengths: an AssertionError
    `[2, 1]` from its internals). Before, dicts with other keys returned the false branch's
    tensor under the true branch's key."""

    @tt.function
    def f(x):
        return tt.cond(x > 0, lambda: true_fn(x), lambda: false_fn(x))

    with pytest.raises(TypeError, match="same number, type, and overall structure") as info:
        f(tt.constant(1.0))
    assert difference in str(info.value)


def test_cond_branches_of_the_same_structure_still_work():
    """TF: {'a': 2.0, 'b': -1.0} for x = 1 and {'a': -1.0, 'b': 2.0} for x = -1."""

    @tt.function
    def f(x):
        return tt.cond(x > 0, lambda: {"a": 2 * x, "b": -x}, lambda: {"b": -2 * x, "a": x})

    assert {k: float(v) for k, v in f(tt.constant(1.0)).items()} == {"a": 2.0, "b": -1.0}
    assert {k: float(v) for k, v in f(tt.constant(-1.0)).items()} == {"a": -1.0, "b": 2.0}


def test_eager_cond_runs_the_chosen_branch_only():
    """TF, eagerly: tf.cond(True, lambda: {'a': 1.0}, lambda: {'b': 1.0}) gives {'a': 1.0}:
    only the chosen branch runs, so nothing compares the structures."""
    result = tt.cond(tt.constant(True), lambda: {"a": 1.0}, lambda: {"b": 1.0})
    assert list(result) == ["a"]


# --- 2. a tt.Module subclass that does not call Module.__init__ ----------------------------


class NoSuperInit(tt.Module):
    def __init__(self, value):
        self.v = tt.Variable(value)

    @tt.function
    def __call__(self, x):
        return x * self.v


def test_module_without_super_init_works_for_many_instances():
    """TF: two instances are made, `variables` and `trainable_variables` find `v`, a
    tf.function method gives 2.0 and 9.0 on the two, repr is object's
    (`<__main__.M object at 0x...>`); only `name` and `name_scope` raise AttributeError.
    Before, the second instance's call raised `AttributeError: '_name'` (repr in the
    message that says why the function is traced again)."""
    a, b = NoSuperInit(1.0), NoSuperInit(3.0)
    assert float(a(tt.constant(2.0))) == 2.0
    assert float(b(tt.constant(3.0))) == 9.0
    assert len(a.trainable_variables) == len(b.variables) == 1
    assert repr(a).startswith(f"<{__name__}.NoSuperInit object at 0x")
    with pytest.raises(AttributeError):
        _ = a.name


# --- 3. a recursive tt.function -----------------------------------------------------------


@tt.function
def factorial(n):
    if n == 0:
        return tt.constant(1.0)
    return n * factorial(n - 1)


@tt.function
def power(x, n):
    if n == 0:
        return tt.ones_like(x)
    return x * power(x, n - 1)


@tt.function
def endless(x, n):
    return tt.cond(n > 0, lambda: x * endless(x, n - 1), lambda: x)


def test_recursion_on_a_python_value_traces():
    """TF: factorial(3) with a Python int gives tf.Tensor(6.0); power(1.5, 3) gives 3.375
    and its gradient 6.75. Before: KeyError 'factorial' (the converted function's own name
    was a cell nothing filled)."""
    assert float(factorial(3)) == 6.0
    x = tt.constant(1.5)
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = power(x, 3)
    np.testing.assert_allclose(float(y), 1.5**3, rtol=1e-6)
    np.testing.assert_allclose(float(tape.gradient(y, x)), 3 * 1.5**2, rtol=1e-6)


def test_recursion_on_a_tensor_names_the_function():
    """TF: `StagingError` wrapping `RecursionError: maximum recursion depth exceeded` (both
    branches of the tf.cond are traced, so the recursion has no end)."""
    with pytest.raises(RecursionError) as info:
        endless(tt.constant(2.0), tt.constant(2))
    notes = info.value.__notes__
    assert "tt.function endless calls itself without end when traced" in notes[-1]
    assert len(notes) == 2  # once, not once per level


# --- 4. a tensor made in a converted loop, kept in a Python list -----------------------------


@tt.function
def appended_in_tensor_loop(x):
    out = []
    for i in tt.range(3):
        out.append(x * tt.cast(i, tt.float32))
    return out


@tt.function
def appended_in_tensor_loop_from_outside_only(x):
    out = []
    for i in tt.range(3):
        out.append(x * 2.0)
    return out


@tt.function
def appended_in_python_loop(x):
    out = []
    for i in range(3):
        out.append(x * i)
    return tt.stack(out)


@pytest.mark.parametrize("f", [appended_in_tensor_loop, appended_in_tensor_loop_from_outside_only])
def test_tensor_loop_body_value_kept_in_a_list_raises(f):
    """TF: `InaccessibleTensorError` (a ValueError): "<tf.Tensor 'while/mul:0' ...> is out
    of scope and cannot be used here", for both. Before: KeyError <id> from the C lowering,
    or (x * 2.0) a list of one tensor where Python's loop gives three."""
    with pytest.raises(ValueError, match=r"made inside a loop's body .*test_function_bugs.py"):
        f(tt.constant(2.0))


def test_python_loop_appends_unroll():
    """TF: tf.Tensor([0. 2. 4.]) (a Python range unrolls)."""
    np.testing.assert_array_equal(appended_in_python_loop(tt.constant(2.0)).numpy(), [0, 2, 4])


# --- 5. `del` and `else` in converted loops -------------------------------------------------


@tt.function
def deletes_in_loop(x):
    for i in tt.range(3):
        t = x * 2.0
        x = x + t
        del t
    return x


@tt.function
def for_else_breaking_on_a_tensor(x):
    for i in tt.range(5):
        if x > 10.0:
            break
        x = x * 2.0
    else:
        x = x - 100.0
    return x


@tt.function
def while_else(x):
    while x < 100.0:
        x = x * 2.0
    else:
        x = x - 1000.0
    return x


@tt.function
def for_else_over_python_range(x):
    for i in range(3):
        x = x * 2.0
    else:
        x = x - 100.0
    return x


def test_del_in_a_tensor_loop():
    """TF: tf.Tensor(27.0) (x triples 3 times). Before: UnboundLocalError for `t`."""
    assert float(deletes_in_loop(tt.constant(1.0))) == 27.0


@pytest.mark.parametrize("f", [for_else_breaking_on_a_tensor, while_else])
def test_loop_else_with_a_tensor_raises(f):
    """TF: autograph does not convert the function ("for/else statement not yet supported",
    "while/else ..."), so it raises OperatorNotAllowedInGraphError (a TypeError) at the
    tensor used as a Python bool or iterated. Before: NotImplementedError that `break` is
    unsupported, which it is in a loop without `else`."""
    with pytest.raises(OperatorNotAllowedInGraphError, match="`else` clause"):
        f(tt.constant(1.0))


def test_loop_else_on_python_values_runs_as_python():
    """TF: tf.Tensor(-92.0) for a for/else over range(3)."""
    assert float(for_else_over_python_range(tt.constant(1.0))) == -92.0


def test_dimensions_that_change_by_different_sizes_become_unknowns_of_their_own():
    # the unknown dimensions of one axis are one size (a batch) until two arguments' first
    # dimensions change to different sizes: then each argument has its own, and every later
    # call, of equal or different sizes, runs the second trace
    total = tt.function(lambda a, b: tt.reduce_sum(a) + 2 * tt.reduce_sum(b))
    for rows_a, rows_b in [(20, 3), (30, 4), (40, 40), (50, 5), (60, 60)]:
        a, b = np.ones((rows_a, 2)), np.ones((rows_b, 2))
        assert total(a, b).numpy() == 2 * rows_a + 4 * rows_b
    assert total.experimental_get_tracing_count() == 2


def test_a_variable_holding_a_fortran_ordered_array_is_updated_in_place():
    """TF: the variable is 3.0 everywhere after two `assign_add(1)` (its layout is no concern
    of the program's). Before: ValueError "ndarray is not C-contiguous" from the compiled call,
    as in a compiled training step of an LSTM, whose orthogonal recurrent kernel is a
    transposed Q."""
    v = tt.Variable(np.asfortranarray(np.ones((3, 4), np.float32)))
    bump = tt.function(lambda: v.assign_add(tt.ones((3, 4))))
    bump()
    bump()
    np.testing.assert_array_equal(v.numpy(), np.full((3, 4), 3.0, np.float32))


@pytest.mark.parametrize("backend", ["c", "interpreter"])
def test_a_watched_eager_constant_gets_its_gradient_in_a_traced_function(backend):
    """`tape.watch(w)` of an eager tensor captured by a tt.function (the tf_numpy guide's
    model weights) gave a None gradient: the graph read w as a new constant, not the node
    the tape watched. Now as eagerly, alone and under vectorized_map."""
    w = tt.constant([[1.0, 2.0], [3.0, 4.0]])

    def gradient(x):
        with tt.GradientTape() as tape:
            tape.watch(w)
            loss = tt.reduce_sum(tt.matmul(tt.expand_dims(x, 0), w) ** 2)
        return tape.gradient(loss, w)

    xs = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], np.float32)
    expected = [2.0 * np.outer(x, x @ w.numpy()) for x in xs]
    compiled = tt.function(gradient, backend=backend)
    np.testing.assert_allclose(compiled(tt.constant(xs[2])).numpy(), expected[2])
    batched = tt.function(lambda x: tt.vectorized_map(gradient, x), backend=backend)
    np.testing.assert_allclose(batched(tt.constant(xs)).numpy(), expected)


@pytest.mark.parametrize("backend", ["c", "interpreter"])
def test_what_a_traced_function_computes_from_a_watched_capture_keeps_its_gradient(backend):
    """A captured eager tensor watched inside a tt.function, then used in ops on eager
    values alone before it meets a variable (a PINN's collocation points: `tf.concat` of
    the captured t and x, then the network): those ops ran at trace time, and their results
    entered the graph as constants of their own, cut from the watched one. TF 2.21 gives
    d/dx (x x) w = 2 w x = [2, 4] and d2/dx2 w x x = 2 w = [4, 4]; tracer gave None for the
    first and [2, 2] for the second (the inner gradient's own products of x were cut too).
    Now as eagerly: every quantity against its analytic value."""
    x = tt.constant([0.5, 1.0], tt.float64)
    w = tt.Variable(tt.constant(2.0, tt.float64))
    ones = tt.ones([2], tt.float64)

    def derivatives():
        with tt.GradientTape(persistent=True) as outer:
            outer.watch(x)
            with tt.GradientTape() as inner:
                inner.watch(x)
                y = (x * x) * w
            dy = inner.gradient(y, x)
            z = tt.concat([x, x * x], 0) * w
        with tt.autodiff.ForwardAccumulator(x, ones) as accumulator:
            v = (x * x * x) * w
        return [dy, outer.gradient(dy, x), outer.jacobian(z, x), accumulator.jvp(v)]

    compiled = tt.function(derivatives, backend=backend)
    xs, ws = x.numpy(), 2.0
    expected = [
        2 * ws * xs,
        np.full(2, 2 * ws),
        np.concatenate([np.eye(2) * ws, np.diag(2 * ws * xs)]),
        3 * ws * xs**2,
    ]
    for got, want in zip(compiled(), expected):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    for got, want in zip(derivatives(), expected):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)

    def summed_in_a_loop():  # the tape inside a loop's body
        total = tt.zeros([2], tt.float64)
        for _ in tt.range(3):
            with tt.GradientTape() as tape:
                tape.watch(x)
                y = (x * x) * w
            total += tape.gradient(y, x)
        return total

    looped = tt.function(summed_in_a_loop, backend=backend)
    np.testing.assert_allclose(looped().numpy(), 3 * expected[0], rtol=1e-12)


@pytest.mark.parametrize("backend", ["c", "interpreter"])
def test_a_watched_capture_read_inside_loops_and_branches_keeps_its_derivatives(backend):
    """A captured eager tensor a tape (or a forward accumulator) in a tt.function watches,
    read inside a tt.while_loop body, a tt.cond branch or a tt.scan function: the loop or
    branch took it as a constant of its own, not as a capture, so only the paths outside it
    counted (TF 2.21: 3 x^2 for x^3 through a loop, where tracer gave x^2; 2 x through a
    cond, where tracer gave None). Analytic values, x = [0.3, -1.2, 0.7]."""
    x = tt.constant([0.3, -1.2, 0.7], tt.float64)
    v = tt.constant([1.0, 0.0, 2.0], tt.float64)

    def cubed(x):
        return tt.while_loop(lambda i, h: i < 2, lambda i, h: (i + 1, h * x), [0, x])[1]

    def derivatives():
        with tt.GradientTape(persistent=True) as outer:
            outer.watch(x)
            with tt.GradientTape(persistent=True) as tape:
                tape.watch(x)
                h = cubed(x)
                total = tt.reduce_sum(h)
                branch = tt.cond(
                    tt.reduce_sum(x) < 0, lambda: tt.reduce_sum(x * x), lambda: tt.reduce_sum(x)
                )
                prefix = tt.reduce_sum(tt.scan(lambda a, e: a * e, x))
            slope = tape.gradient(branch, x)
        with tt.autodiff.ForwardAccumulator(x, v) as accumulator:
            tangent = accumulator.jvp(cubed(x))
        return [
            tape.gradient(total, x),
            tape.jacobian(h, x),
            slope,
            outer.gradient(slope, x),
            tape.gradient(prefix, x),
            tangent,
        ]

    a, b, c = x.numpy()
    expected = [
        3 * x.numpy() ** 2,
        np.diag(3 * x.numpy() ** 2),
        2 * x.numpy(),
        np.full(3, 2.0),
        [1 + b + b * c, a + a * c, a * b],
        3 * x.numpy() ** 2 * v.numpy(),
    ]
    compiled = tt.function(derivatives, backend=backend)
    for got, want in zip(compiled(), expected):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("backend", ["c", "interpreter"])
def test_a_variable_argument_assigned_a_constant_keeps_its_gradient(backend):
    """A tt.Variable given to a tt.function as an argument, assigned a constant, then read
    under a tape with a tensor argument: the read was a leaf the graph did not read (TF 2.21
    gives x; tracer gave None), and with an assign_add between two reads a wrong number."""
    x = tt.constant([0.3, -1.2, 0.7], tt.float64)
    v = tt.Variable([0.5, -1.0, 2.0], dtype=tt.float64)

    def before(v, x):
        v.assign([1.0, 2.0, 3.0])
        with tt.GradientTape() as tape:
            y = tt.reduce_sum(v * x)
        return tape.gradient(y, v)

    def between(v, x):  # y = (v.x) ((v + x).(v + x)), its gradient at v = [1, 2, 3]
        v.assign([1.0, 2.0, 3.0])
        with tt.GradientTape() as tape:
            a = tt.reduce_sum(v * x)
            v.assign_add(x)
            b = tt.reduce_sum(v * v)
            y = a * b
        return tape.gradient(y, v)

    w, xs = np.array([1.0, 2.0, 3.0]), x.numpy()
    expected = xs * np.sum((w + xs) ** 2) + 2 * np.sum(w * xs) * (w + xs)
    np.testing.assert_allclose(tt.function(before, backend=backend)(v, x).numpy(), xs)
    np.testing.assert_allclose(tt.function(between, backend=backend)(v, x).numpy(), expected)


@pytest.mark.parametrize("backend", ["c", "interpreter"])
def test_a_variable_assigned_before_a_loop_or_branch_keeps_its_gradient_through_it(backend):
    """A variable assigned in a tt.function (a constant, or a tensor) and then read inside a
    tt.cond, a tt.while_loop or a tt.scan under a tape: the op captured the assigned value,
    which no tape watched (TF 2.21 gives the values below; tracer gave None, or left out the
    read inside the scan)."""
    w = tt.Variable(0.0, dtype=tt.float64)
    x = tt.constant(1.3, tt.float64)

    def branch(x):
        w.assign(0.9)
        with tt.GradientTape() as tape:
            y = tt.cond(x > 0, lambda: x * w, lambda: x)
        return tape.gradient(y, w)

    def loop(x):  # y <- y w + x three times from y = x: x (1 + w + w^2 + w^3)
        w.assign(x * 0.5)
        with tt.GradientTape() as tape:
            _, y = tt.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, y * w + x), (0, x))
        return tape.gradient(y, w)

    def scan(x):  # sum over k of (x + w) w^k for k = 0, 1, 2, plus w once outside
        w.assign_add(0.25)
        with tt.GradientTape() as tape:
            terms = tt.scan(lambda a, _: a * w, tt.zeros([3], tt.float64), initializer=x + w)
            y = tt.reduce_sum(terms) + w
        return tape.gradient(y, w)

    assert float(tt.function(branch, backend=backend)(x)) == pytest.approx(1.3, rel=1e-15)
    v = 0.65
    assert float(tt.function(loop, backend=backend)(x)) == pytest.approx(
        1.3 * (1 + 2 * v + 3 * v**2), rel=1e-14
    )
    w.assign(0.5)
    v = 0.75  # the scan's terms: (x + w) w, (x + w) w^2, (x + w) w^3
    expected = sum((k + 1) * v**k * (1.3 + v) + v ** (k + 1) for k in range(3)) + 1
    assert float(tt.function(scan, backend=backend)(x)) == pytest.approx(expected, rel=1e-14)


def test_a_returned_size_or_shape_is_an_int32_tensor_after_the_trace_generalizes():
    """TF 2.21: `return x.shape[0]` gives int32 tensors 2, 3 and 4 for three sizes, and
    `return x.shape` int32 [2, 2] then [3, 2]; tracer returned the unknown dimension's
    symbol d0 once the trace took the size as unknown (and a TensorShape at first)."""
    size = tt.function(lambda x: x.shape[0])
    got = [size(tt.ones([n])) for n in (2, 3, 4)]
    assert [g.dtype for g in got] == [tt.int32] * 3 and [int(g) for g in got] == [2, 3, 4]
    shape = tt.function(lambda x: {"shape": x.shape, "scale": 3.0})
    for rows in (2, 3, 5):
        result = shape(tt.ones([rows, 2]))
        assert result["shape"].dtype == tt.int32
        assert result["shape"].numpy().tolist() == [rows, 2] and float(result["scale"]) == 3.0


def test_a_call_its_parameters_refuse_traces_nothing():
    """TF 2.21: f(x) and f(x, y, z) of `def f(x, y)` raise TypeError and count no trace
    (tracer counted each)."""
    f = tt.function(lambda x, y: x + y)
    for args in ((1.0,), (1.0, 2.0, 3.0)):
        with pytest.raises(TypeError, match="binding the call"):
            f(*[tt.constant(a) for a in args])
    assert f.experimental_get_tracing_count() == 0
    assert float(f(tt.constant(1.0), tt.constant(2.0))) == 3.0
    assert f.experimental_get_tracing_count() == 1


def test_a_function_that_changes_a_list_it_was_given_is_refused():
    """TF 2.21 raises ValueError ("should not modify its Python input arguments") for a
    function that appends to a list argument; tracer ran it on its own copy, silently (the
    caller's list stayed empty, and each trace saw a length of 1)."""

    @tt.function
    def counted(x, seen):
        seen.append(1)
        return x * len(seen)

    seen = []
    with pytest.raises(ValueError, match="should not modify its Python input arguments"):
        counted(tt.constant(1.0), seen)

    @tt.function
    def copied(x, seen):
        seen = [*seen, 1]  # a copy: allowed
        return x * len(seen)

    assert float(copied(tt.constant(2.0), [0, 0])) == 6.0


def test_a_concrete_function_takes_python_numbers_and_describes_itself():
    """TF 2.21: a concrete function of TensorSpec([], float32) called with 3.0 gives 6.0
    (tracer raised TypeError); structured_input_signature, output_shapes, output_dtypes and
    variables are TensorFlow's attributes (tracer had none of them)."""
    weight = tt.Variable(2.0)
    f = tt.function(lambda x, n=3: {"y": x * weight, "z": tt.cast(x, tt.int32)})
    concrete = f.get_concrete_function(tt.TensorSpec([None, 2], tt.float32))
    assert concrete.structured_input_signature == (
        (tt.TensorSpec([None, 2], tt.float32), 3),
        {},
    )
    assert concrete.output_shapes == {
        "y": tt.TensorShape([None, 2]),
        "z": tt.TensorShape([None, 2]),
    }
    assert concrete.output_dtypes == {"y": tt.float32, "z": tt.int32}
    assert concrete.variables == (weight,) and concrete.trainable_variables == (weight,)
    doubled = tt.function(lambda x: x * 2.0).get_concrete_function(tt.TensorSpec([], tt.float32))
    assert float(doubled(3.0)) == 6.0 and doubled(3).dtype == tt.float32
    with pytest.raises(TypeError, match="tensor argument 0"):
        doubled("three")
