"""Shapes and ranges computed from the shapes of tensors inside a traced function
(tracer/ops/dim_values.py): `tt.ones([tt.shape(x)[0], 3])` and `tt.range(tt.shape(x)[0])`
keep an unknown size unknown, so one trace (one compiled module) serves every size, with
the values numpy gives for each (issue 51)."""

import numpy as np
import pytest

import tracer as tt

ANY_LENGTH = [tt.TensorSpec([None], tt.float32)]
LENGTHS = (5, 7, 1)


def _each_length(function, backend="auto"):
    traced = tt.function(function, input_signature=ANY_LENGTH, backend=backend)
    results = [traced(tt.constant(np.arange(n, dtype=np.float32))).numpy() for n in LENGTHS]
    assert traced.experimental_get_tracing_count() == 1
    return results


@pytest.mark.parametrize("backend", ["c", "interpreter"])
def test_shapes_made_from_a_shape_keep_its_unknown_size(backend):
    ones = _each_length(lambda x: tt.ones([tt.shape(x)[0] * 2, 3]), backend)
    assert [r.shape for r in ones] == [(10, 3), (14, 3), (2, 3)]
    assert all(np.all(r == 1) for r in ones)
    column = _each_length(lambda x: tt.reshape(x, [tt.shape(x)[0], -1]) * 2, backend)
    for n, r in zip(LENGTHS, column):
        np.testing.assert_array_equal(r, 2 * np.arange(n, dtype=np.float32)[:, None])
    zeros = _each_length(lambda x: tt.zeros(tt.shape(x)[:1]) + tt.fill(tt.shape(x), 2.0), backend)
    assert [r.tolist() for r in zeros] == [[2.0] * n for n in LENGTHS]


@pytest.mark.parametrize("backend", ["c", "interpreter"])
def test_a_range_of_a_shape_is_a_tensor_of_that_unknown_length(backend):
    ranges = _each_length(lambda x: tt.range(tt.shape(x)[0]), backend)
    assert [r.tolist() for r in ranges] == [list(range(n)) for n in LENGTHS]
    shifted = _each_length(lambda x: tt.range(2, tt.shape(x)[0] + 3), backend)
    assert [r.tolist() for r in shifted] == [list(range(2, n + 3)) for n in LENGTHS]
    weighted = _each_length(lambda x: x * tt.cast(tt.range(tt.size(x)), tt.float32), backend)
    for n, r in zip(LENGTHS, weighted):
        np.testing.assert_array_equal(r, np.arange(n) ** 2)


def test_automatic_dynamic_shapes_keep_such_functions_to_two_traces():
    """Without an input_signature: the second length makes the length unknown, and the
    third reuses that trace (before, tt.ones(tt.shape(x)) refused the unknown length and the
    function was traced again for every length)."""
    traced = tt.function(
        lambda x: (
            tt.reduce_sum(tt.ones(tt.shape(x)) * x)
            + tt.cast(tt.reduce_sum(tt.range(tt.shape(x)[0])), tt.float32)
        )
    )
    for n in (4, 6, 9):
        x = np.arange(n, dtype=np.float32)
        assert traced(tt.constant(x)).numpy() == 2 * x.sum()
    assert traced.experimental_get_tracing_count() == 2


def test_shapes_computed_from_data_run_the_function_as_python(caplog):
    """TF 2.21's tf.function makes ones([sum(x)]) of [1, 2] (3 ones): its graph takes a size
    computed when it runs; tracer's function runs as Python then, with a log line (it
    raised)."""
    with caplog.at_level("WARNING", logger="tracer.function"):
        ones = tt.function(lambda x: tt.ones([tt.cast(tt.reduce_sum(x), tt.int32)]))(
            tt.constant([1.0, 2.0])
        )
    assert ones.numpy().tolist() == [1.0, 1.0, 1.0]
    assert "computes a shape or size when it runs" in caplog.text
    # d0 - 1 could be negative, so the signature's trace cannot make the range: each call
    # is traced with its own length
    below = tt.function(lambda x: tt.range(tt.shape(x)[0] - 1), input_signature=ANY_LENGTH)
    for n in (2, 5):
        assert below(tt.constant(np.ones(n, np.float32))).numpy().tolist() == list(range(n - 1))


SLICES = {
    "differences": lambda x: x[1:] - x[:-1],
    "last three": lambda x: x[-3:] * 2.0,
    "first two": lambda x: x[:2] + 1.0,
    "inside": lambda x: x[1:-1],
}


@pytest.mark.parametrize("backend", ["c", "interpreter"])
@pytest.mark.parametrize("name", sorted(SLICES))
def test_slices_of_an_unknown_axis_give_numpys_values_at_every_length(name, backend):
    """A slice of step 1 with int bounds keeps the axis unknown; a length it cannot serve
    (`x[1:]` of an empty x needs one element) is traced with its own sizes, as Python slices."""
    function = SLICES[name]
    traced = tt.function(function, backend=backend)
    for n in (5, 7, 1, 0, 9, 2):
        x = np.arange(n, dtype=np.float32)
        np.testing.assert_array_equal(traced(tt.constant(x)).numpy(), function(x))
    # the first length, the general trace, and the lengths too short for it
    short = {"differences": 1, "last three": 3, "first two": 2, "inside": 2}[name]
    assert traced.experimental_get_tracing_count() == 2 + sum(n < short for n in (1, 0, 2))


def test_the_gradient_through_slices_of_an_unknown_axis():
    def loss(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            d = x[1:] - x[:-1]
            y = tt.reduce_sum(d * d) + tt.reduce_sum(x[-2:] ** 3)
        return y, tape.gradient(y, x)

    traced = tt.function(loss, input_signature=[tt.TensorSpec([None], tt.float64)])
    for n in (3, 6, 2, 1, 0):
        x = np.linspace(0.1, 1.0, n)
        d = x[1:] - x[:-1]
        want = np.zeros(n)
        want[1:] += 2 * d
        want[:-1] -= 2 * d
        want[-2:] += 3 * x[-2:] ** 2
        y, g = traced(tt.constant(x))
        assert y.numpy() == pytest.approx(np.sum(d * d) + np.sum(x[-2:] ** 3))
        np.testing.assert_allclose(g.numpy(), want, rtol=1e-12)
    assert traced.experimental_get_tracing_count() == 3  # the signature's, then 1 and 0
    general = traced.get_concrete_function()
    with pytest.raises(ValueError, match=r"\(d0 - 2\) >= 0 .* this call has d0 = 1"):
        general(tt.constant(np.ones(1)))


@pytest.mark.parametrize("backend", ["c", "interpreter"])
def test_int_indices_of_an_unknown_axis_and_their_gradient(backend):
    """x[0] and x[-1] on an axis of unknown size: one trace for every length that has the
    element, the same values and gradient as numpy's; an empty x raises TensorFlow's
    out-of-bounds error, as eagerly."""

    def loss(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = x[0] * x[-1] * 3.0
        return y, tape.gradient(y, x)

    traced = tt.function(loss, input_signature=[tt.TensorSpec([None], tt.float64)], backend=backend)
    for x in (np.array([1.0, 2.0, 3.0]), np.array([2.0, 5.0]), np.array([4.0])):
        want = np.zeros_like(x)
        want[0] += 3.0 * x[-1]
        want[-1] += 3.0 * x[0]
        y, g = traced(tt.constant(x))
        assert y.numpy() == 3.0 * x[0] * x[-1]
        np.testing.assert_array_equal(g.numpy(), want)
    assert traced.experimental_get_tracing_count() == 1
    with pytest.raises(tt.errors.InvalidArgumentError, match="index 0 is out of bounds"):
        traced(tt.constant(np.zeros(0)))


def test_a_for_over_a_tensor_or_a_range_of_unknown_length_is_one_loop():
    @tt.function(input_signature=ANY_LENGTH)
    def over_rows(x):
        total = 0.0
        for value in x:  # autograph: a loop over the rows, however many
            total += value * value
        return total

    @tt.function(input_signature=ANY_LENGTH)
    def over_range(x):
        total = 0.0
        for i in tt.range(tt.shape(x)[0]):
            total += x[i]
        return total

    for n in LENGTHS:
        x = np.arange(n, dtype=np.float32)
        assert over_rows(tt.constant(x)).numpy() == np.sum(x * x)
        assert over_range(tt.constant(x)).numpy() == np.sum(x)
    assert over_rows.experimental_get_tracing_count() == 1
