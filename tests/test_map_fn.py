"""tt.map_fn: TensorFlow 2.21's results for the examples of its API page, eager =
interpreter = C, nested structures, fn_output_signature checked, no elements, gradients
against float64 finite differences, and clear errors. (Values, derivatives of two orders,
forward mode and exported C against the other constructs: tests/test_region_catalogue.py.)"""

import numpy as np
import pytest

import tracer as tt

BACKENDS = ["interpreter", "c"]


def _everywhere(f):
    """f itself, then f traced for each backend."""
    return [f] + [tt.function(f, backend=backend) for backend in BACKENDS]


def test_tensorflows_examples():
    """tf.map_fn's documented examples, with the outputs TensorFlow 2.21 prints."""
    for run in _everywhere(lambda x: tt.map_fn(lambda t: t * t, x)):
        got = run(tt.constant([3, 2, 1]))
        np.testing.assert_array_equal(got.numpy(), [9, 4, 1])
        assert got.dtype == tt.int32
    add = lambda a, b: tt.map_fn(lambda t: t[0] + t[1], (a, b), fn_output_signature=tt.int64)  # noqa: E731
    for run in _everywhere(add):
        got = run(tt.constant([1, 2, 3], tt.int64), tt.constant([10, 20, 30], tt.int64))
        np.testing.assert_array_equal(got.numpy(), [11, 22, 33])
    pair = lambda x: tt.map_fn(lambda t: (t, -t), x, fn_output_signature=(tt.int64, tt.int64))  # noqa: E731
    for run in _everywhere(pair):
        positive, negative = run(tt.constant([1, 2, 3], tt.int64))
        np.testing.assert_array_equal(positive.numpy(), [1, 2, 3])
        np.testing.assert_array_equal(negative.numpy(), [-1, -2, -3])


def test_rows_of_a_matrix_into_a_dict_of_other_dtypes():
    rows = np.arange(12.0).reshape(4, 3)

    def f(x):
        return tt.map_fn(
            lambda row: {"total": tt.reduce_sum(row), "big": tt.cast(row > 4.0, tt.int32)}, x
        )

    for run in _everywhere(f):
        got = run(tt.constant(rows))
        np.testing.assert_allclose(got["total"].numpy(), rows.sum(axis=1))
        np.testing.assert_array_equal(got["big"].numpy(), (rows > 4.0).astype(np.int32))
        assert got["big"].dtype == tt.int32


@pytest.mark.parametrize("length", [0, 1, 2, 5])
def test_any_number_of_elements(length):
    """No elements give an empty result of the shape fn gives (fn runs once on zeros)."""
    x = np.linspace(-1.0, 1.0, length * 2).reshape(length, 2)
    for run in _everywhere(lambda t: tt.map_fn(lambda row: tt.exp(row) * row[0], t)):
        got = run(tt.constant(x)).numpy()
        assert got.shape == (length, 2)
        np.testing.assert_allclose(got, np.exp(x) * x[:, :1], rtol=1e-12)


def test_gradient_against_finite_differences():
    """The gradient of a loss through map_fn, with respect to the elements and to a value
    fn reads from outside, eagerly and compiled, against central differences in float64."""
    x0 = np.array([[0.3, -0.2], [0.7, 0.1], [-0.5, 0.4]])
    w0 = np.array([0.9, -1.3])

    def loss(x, w):
        return tt.reduce_sum(tt.map_fn(lambda row: tt.sin(row * w) * tt.reduce_sum(row), x))

    def value_and_gradients(x, w):
        with tt.GradientTape() as tape:
            tape.watch([x, w])
            y = loss(x, w)
        return y, *tape.gradient(y, [x, w])

    def numeric(f, a, b):
        grads = []
        for which, base in ((0, a), (1, b)):
            g = np.zeros_like(base)
            for index in np.ndindex(base.shape):
                step = np.zeros_like(base)
                step[index] = 1e-6
                args = [a, b]
                args[which] = base + step
                up = float(f(*map(tt.constant, args)))
                args[which] = base - step
                down = float(f(*map(tt.constant, args)))
                g[index] = (up - down) / 2e-6
            grads.append(g)
        return grads

    want = numeric(loss, x0, w0)
    for run in _everywhere(value_and_gradients):
        _, dx, dw = run(tt.constant(x0), tt.constant(w0))
        np.testing.assert_allclose(dx.numpy(), want[0], rtol=1e-7, atol=1e-9)
        np.testing.assert_allclose(dw.numpy(), want[1], rtol=1e-7, atol=1e-9)


def test_back_prop_false_stops_the_gradient():
    x = tt.constant([1.0, 2.0])
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = tt.reduce_sum(tt.map_fn(lambda t: t * t, x, back_prop=False))
    assert tape.gradient(y, x) is None


def test_clear_errors():
    with pytest.raises(ValueError, match="tt.map_fn: the tensors of elems need an axis 0"):
        tt.map_fn(lambda t: t, tt.constant(3.0))
    with pytest.raises(ValueError, match="different lengths along axis 0: 2, 3"):
        tt.map_fn(lambda t: t[0], (tt.constant([1, 2]), tt.constant([1, 2, 3])))
    with pytest.raises(TypeError, match="fn must be callable"):
        tt.map_fn(3, tt.constant([1.0]))
    with pytest.raises(TypeError, match=r"fn returned float32\[\] for result 0, where "):
        tt.map_fn(
            lambda t: tt.cast(t, tt.float32), tt.constant([1, 2]), fn_output_signature=tt.int32
        )
    with pytest.raises(TypeError, match=r"fn_output_signature says float32\[2\]"):
        tt.map_fn(
            lambda t: t, tt.constant([1.0, 2.0]), fn_output_signature=tt.TensorSpec([2], tt.float32)
        )
    with pytest.raises(TypeError, match="do not have the structure of fn_output_signature"):
        tt.map_fn(lambda t: (t, t), tt.constant([1.0]), fn_output_signature=tt.float32)
    with pytest.raises(
        ValueError, match=r"result 0 is int32\[1\] on the first element and int32\[2\]"
    ):
        tt.map_fn(lambda t: t[: tt.cast(t[0], tt.int32)], tt.constant([[1, 5], [2, 5]]))
