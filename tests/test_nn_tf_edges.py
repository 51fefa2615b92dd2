"""tt.nn against TensorFlow 2.21 where a review found them apart: float16 moments, softmaxes
of rows holding +inf, the dense softmax cross-entropy's gradient and broadcast labels,
convolutions with no filters or several batch axes, and the functions of tf.nn built as
compositions. Constants marked "TF 2.21" are TensorFlow 2.21's outputs (CPU, float64 unless
stated); the other references are numpy computations of TensorFlow's documented formulas.
Each case runs eagerly and compiled by both backends.
"""

import numpy as np
import pytest

import tracer as tt

BACKENDS = ["eager", "interpreter", "c"]


def _run(backend, function, *args):
    if backend == "eager":
        return function(*args)
    return tt.function(function, backend=backend)(*args)


def _value_and_gradients(f, *xs):
    """f(*xs) and the gradients of sum(f(*xs)) with respect to each of xs."""
    with tt.GradientTape() as tape:
        for x in xs:
            tape.watch(x)
        y = f(*xs)
        total = tt.reduce_sum(y)
    return (y, *tape.gradient(total, list(xs)))


def _close(actual, expected, **tolerance):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), **tolerance)


# --- moments -------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_moments_of_float16_sum_in_float32_as_tensorflow(backend):
    # in float16, 32768 + 40960 overflows; TensorFlow computes in float32 and casts back
    x = tt.constant([32768.0, 40960.0, 49152.0], tt.float16)
    mean, variance = _run(backend, lambda a: tt.nn.moments(a, [0]), x)
    assert mean.dtype == tt.float16 and variance.dtype == tt.float16
    wide = np.array([32768.0, 40960.0, 49152.0], np.float32)
    assert float(mean) == 40960.0
    with np.errstate(over="ignore"):
        assert float(variance) == float(np.float16(np.var(wide)))  # inf: 4.47e7 is past float16

    def run(a):
        with tt.GradientTape() as tape:
            tape.watch(a)
            mean, variance = tt.nn.moments(a, [0], keepdims=True)
            total = tt.reduce_sum(mean + 2.0 * variance)
        return mean, variance, tape.gradient(total, a)

    small = tt.constant([[1.0, 2.0], [3.0, 5.0]], tt.float16)
    mean, variance, gradient = _run(backend, run, small)
    # TF 2.21, float16
    _close(mean, [[2.0, 3.5]])
    _close(variance, [[1.0, 2.25]])
    _close(gradient, [[-1.5, -2.5], [2.5, 3.5]])
    assert gradient.dtype == tt.float16


# --- softmaxes of rows holding +inf ----------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_log_softmax_and_softmax_of_a_row_with_inf_or_nan_are_nan(backend, dtype):
    # TF 2.21: log_softmax and softmax (TensorFlow's own kernels; the oneDNN float32 softmax
    # gives [0, nan, 0] for the first row) are NaN throughout, value and gradient
    weights = tt.constant([[1.0, 2.0, 3.0]], dtype)

    def f(x):
        log_p = _value_and_gradients(lambda a: tt.nn.log_softmax(a) * weights, x)
        p = _value_and_gradients(lambda a: tt.nn.softmax(a) * weights, x)
        return (*log_p, *p)

    for row in [[1.0, np.inf, 2.0], [np.nan, 1.0, 2.0], [-np.inf] * 3]:
        for result in _run(backend, f, tt.constant([row], dtype)):
            assert np.isnan(result.numpy()).all(), (row, result)
    # a -inf logit beside finite ones takes no part (TF 2.21)
    log_p, gradient = f(tt.constant([[1.0, -np.inf, 2.0]], dtype))[:2]
    _close(log_p, [[-1.31326169, -np.inf, -0.31326169 * 3]], rtol=1e-6)
    _close(gradient, [[-0.61364853, 2.0, -1.38635147]], rtol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_log_softmax_over_the_first_axis_with_inf_as_tensorflow(backend):
    x = tt.constant([[1.0, np.inf], [2.0, 0.0]], tt.float64)
    value = _run(backend, lambda a: tt.nn.log_softmax(a, axis=0), x)
    # TF 2.21
    _close(value, [[-1.31326169, np.nan], [-0.31326169, np.nan]], rtol=1e-7)


# --- softmax_cross_entropy_with_logits -----------------------------------------------------

LOGITS = [[1.0, 2.0, 3.0]]
# TF 2.21: labels -> (loss, gradient with respect to the logits); the gradient with respect to
# the labels is -log_softmax(logits) = [2.40760596, 1.40760596, 0.40760596] for each
XENT = {
    (1.0, 1.0, 0.0): (3.81521193, [-0.90996943, -0.75527153, 0.66524096]),
    (0.5, 0.0, 0.0): (1.20380298, [-0.40996943, 0.24472847, 0.66524096]),
    (0.0, 0.0, 0.0): (0.0, [0.09003057, 0.24472847, 0.66524096]),
    (2.0, 0.0, 1.0): (5.22281789, [-1.90996943, 0.24472847, -0.33475904]),
    (0.2, 0.3, 0.5): (1.10760596, [-0.10996943, -0.05527153, 0.16524096]),
}


@pytest.mark.parametrize("backend", BACKENDS)
def test_softmax_cross_entropy_gradient_is_softmax_minus_labels(backend):
    for labels, (expected_loss, expected_gradient) in XENT.items():
        loss, d_logits, d_labels = _run(
            backend,
            lambda a, b: _value_and_gradients(
                lambda a, b: tt.nn.softmax_cross_entropy_with_logits(labels=b, logits=a), a, b
            ),
            tt.constant(LOGITS, tt.float64),
            tt.constant([labels], tt.float64),
        )
        _close(loss, [expected_loss], rtol=1e-7, atol=1e-12)
        _close(d_logits, [expected_gradient], rtol=1e-7)
        _close(d_labels, [[2.40760596, 1.40760596, 0.40760596]], rtol=1e-7)


@pytest.mark.parametrize("backend", BACKENDS)
def test_softmax_cross_entropy_second_derivative_is_the_softmax_jacobian(backend):
    # TensorFlow's gradient of the gradient (_SoftmaxCrossEntropyWithLogitsGrad's grad_grad
    # term): the softmax's Jacobian, whatever the labels sum to
    logits = np.array([[1.0, 2.0, 3.0]])
    v = np.array([[1.0, 2.0, 3.0]])

    def f(x):
        with tt.GradientTape() as outer:
            outer.watch(x)
            with tt.GradientTape() as inner:
                inner.watch(x)
                loss = tt.nn.softmax_cross_entropy_with_logits(
                    labels=tt.constant([[1.0, 1.0, 0.0]], tt.float64), logits=x
                )
            total = tt.reduce_sum(inner.gradient(loss, x) * v)
        return outer.gradient(total, x)

    s = np.exp(logits) / np.exp(logits).sum()
    _close(_run(backend, f, tt.constant(logits)), s * (v - (v * s).sum()), rtol=1e-10)


@pytest.mark.parametrize("backend", BACKENDS)
def test_softmax_cross_entropy_broadcasts_labels(backend):
    logits = tt.constant([[1.0, 2.0, 3.0], [0.0, 0.0, 1.0]], tt.float64)
    loss, gradient = _run(
        backend,
        lambda a: _value_and_gradients(
            lambda a: tt.nn.softmax_cross_entropy_with_logits(
                labels=tt.constant([[0.2, 0.3, 0.5]], tt.float64), logits=a
            ),
            a,
        ),
        logits,
    )
    # TF 2.21
    _close(loss, [1.10760596, 1.05144471], rtol=1e-7)
    _close(
        gradient,
        [[-0.10996943, -0.05527153, 0.16524096], [0.01194156, -0.08805844, 0.07611688]],
        rtol=1e-6,
    )
    for shape in [(3,), (2, 1), (1, 1)]:
        halves = tt.fill(shape, tt.constant(0.5, tt.float64))
        loss = _run(backend, lambda b: tt.nn.softmax_cross_entropy_with_logits(b, logits), halves)
        _close(loss, [2.11140895, 1.82716707], rtol=1e-7)  # TF 2.21


def test_softmax_cross_entropy_does_not_broadcast_the_logits():
    with pytest.raises(ValueError, match="must broadcast to logits shape"):
        tt.nn.softmax_cross_entropy_with_logits(tt.ones((2, 3)), tt.ones((1, 3)))


# --- convolutions --------------------------------------------------------------------------


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_conv2d_with_no_filters_is_empty_as_tensorflow(padding):
    x = tt.constant(np.ones((1, 3, 3, 2)))
    w = tt.zeros([1, 1, 2, 0], tt.float64)
    for backend in BACKENDS:
        y, dx, dw = _run(
            backend,
            lambda a, b: _value_and_gradients(lambda a, b: tt.nn.conv2d(a, b, 1, padding), a, b),
            x,
            w,
        )
        assert y.shape == (1, 3, 3, 0) and dw.shape == (1, 1, 2, 0)  # TF 2.21
        _close(dx, np.zeros((1, 3, 3, 2)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_conv2d_takes_several_batch_axes(backend):
    image = np.arange(2 * 3 * 4 * 4, dtype=np.float64).reshape(2, 3, 4, 4, 1)
    kernel = np.arange(1.0, 5.0).reshape(2, 2, 1, 1) * np.array([1.0, -0.5])

    def f(a, b):
        return _value_and_gradients(lambda a, b: tt.nn.conv2d(a, b, 1, "VALID") ** 2, a, b)

    y, dx, dw = _run(backend, f, tt.constant(image), tt.constant(kernel))
    flat, dflat, dw_flat = f(tt.constant(image.reshape(6, 4, 4, 1)), tt.constant(kernel))
    assert y.shape == (2, 3, 3, 3, 2)  # TF 2.21
    _close(y, flat.numpy().reshape(2, 3, 3, 3, 2))
    _close(dx, dflat.numpy().reshape(image.shape))
    _close(dw, dw_flat)
    six = _run(
        backend,
        lambda a: tt.nn.conv2d(a, tt.constant(kernel), 1, "SAME"),
        tt.ones((2, 1, 3, 4, 4, 1), tt.float64),
    )
    assert six.shape == (2, 1, 3, 4, 4, 2)  # TF 2.21


# --- tf.nn functions composed of primitives ------------------------------------------------

X = np.array([[-2.0, -0.5, 0.0], [0.5, 1.5, 3.0]])
Z = np.array([[0.0, 1.0, 0.5], [1.0, 0.0, 2.0]])
SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805
# name -> (function of two float64 tensors, numpy reference of TensorFlow's formula)
COMPOSITES = {
    "selu": (
        lambda x, z: tt.nn.selu(x),
        lambda x, z: SELU_SCALE * np.where(x > 0, x, SELU_ALPHA * np.expm1(x)),
    ),
    "leaky_relu": (lambda x, z: tt.nn.leaky_relu(x), lambda x, z: np.where(x > 0, x, 0.2 * x)),
    "swish": (
        lambda x, z: tt.nn.swish(x, beta=1.5),
        lambda x, z: x / (1 + np.exp(-1.5 * x)),
    ),
    "silu": (lambda x, z: tt.nn.silu(x), lambda x, z: x / (1 + np.exp(-x))),
    "bias_add": (
        lambda x, z: tt.nn.bias_add(x, z[0]),
        lambda x, z: x + z[0],
    ),
    "bias_add_nchw": (
        lambda x, z: tt.nn.bias_add(tt.reshape(x, (1, 2, 3, 1)), z[:, 0], data_format="NCHW"),
        lambda x, z: x.reshape(1, 2, 3, 1) + z[:, 0].reshape(2, 1, 1),
    ),
    "l2_normalize": (
        lambda x, z: tt.nn.l2_normalize(x, axis=1),
        lambda x, z: x / np.sqrt(np.maximum((x * x).sum(1, keepdims=True), 1e-12)),
    ),
    "batch_normalization": (
        lambda x, z: tt.nn.batch_normalization(x, z[0], z[1] + 0.5, 0.25, 2.0, 1e-3),
        lambda x, z: (x - z[0]) / np.sqrt(z[1] + 0.5 + 1e-3) * 2.0 + 0.25,
    ),
    "weighted_cross_entropy_with_logits": (
        lambda x, z: tt.nn.weighted_cross_entropy_with_logits(z / 2, x, 3.0),
        lambda x, z: (
            -(
                3.0 * z / 2 * np.log(1 / (1 + np.exp(-x)))
                + (1 - z / 2) * np.log(1 - 1 / (1 + np.exp(-x)))
            )
        ),
    ),
    "log_poisson_loss": (
        lambda x, z: tt.nn.log_poisson_loss(z, x, compute_full_loss=True),
        lambda x, z: (
            np.exp(x)
            - x * z
            + np.where(
                z > 1,
                z * np.log(np.maximum(z, 1)) - z + 0.5 * np.log(2 * np.pi * np.maximum(z, 1)),
                0,
            )
        ),
    ),
    "normalize_moments": (
        lambda x, z: tt.stack(tt.nn.normalize_moments(4.0, x, z + 9.0, 0.5)),
        lambda x, z: np.stack([x / 4 + 0.5, (z + 9) / 4 - (x / 4) ** 2]),
    ),
    "compute_average_loss": (
        lambda x, z: tt.nn.compute_average_loss(x, sample_weight=z, global_batch_size=8),
        lambda x, z: (x * z).sum() / 8,
    ),
    "embedding_lookup": (
        lambda x, z: tt.nn.embedding_lookup([x], tt.constant([1, 0, 1])),
        lambda x, z: x[[1, 0, 1]],
    ),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(COMPOSITES))
def test_composites_equal_tensorflows_formula(backend, name):
    function, reference = COMPOSITES[name]
    value = _run(backend, function, tt.constant(X), tt.constant(Z))
    _close(value, reference(X, Z), rtol=1e-12, atol=1e-14)


def test_selu_gradient_at_zero_is_the_linear_branchs():
    x = tt.constant([0.0], tt.float64)
    _close(_value_and_gradients(tt.nn.selu, x)[1], [SELU_SCALE])  # TF 2.21: 1.0507
    _close(_value_and_gradients(tt.nn.leaky_relu, x)[1], [0.2])  # TF 2.21


@pytest.mark.parametrize("backend", BACKENDS)
def test_in_top_k_and_zero_fraction(backend):
    predictions = tt.constant([[0.1, 0.9, 0.9, 0.3], [np.nan, 0.2, 0.1, 0.0]])
    targets = tt.constant([2, 0])
    found = _run(backend, lambda p, t: tt.nn.in_top_k(t, p, 1), predictions, targets)
    assert found.numpy().tolist() == [True, False]  # a tie counts in; a NaN target does not
    fraction = _run(backend, tt.nn.zero_fraction, tt.constant([[0.0, 1.0], [0.0, 0.0]]))
    assert fraction.dtype == tt.float32 and float(fraction) == 0.75


def test_dropout_keeps_one_minus_rate_and_scales_as_tensorflow():
    x = tt.ones((200, 100))
    y = tt.nn.dropout(x, 0.25, seed=1).numpy()
    assert set(np.unique(y)) <= {0.0, np.float32(1 / 0.75)}
    assert abs((y != 0).mean() - 0.75) < 0.02
    rows = tt.nn.dropout(x, 0.5, noise_shape=(200, 1), seed=2).numpy()
    assert all(len(set(row)) == 1 for row in rows)  # the draw broadcasts along the rows
    assert tt.nn.dropout(x, 0.0) is x or np.array_equal(tt.nn.dropout(x, 0.0).numpy(), x.numpy())


@pytest.mark.parametrize("backend", ["c", "interpreter"])
def test_dropout_in_a_compiled_function_draws_a_new_mask_at_every_call(backend):
    """As tf.nn.dropout in a tf.function: each call draws its own mask (a draw made while
    tracing would be the same at every call), keeping 1 - rate of the values on average."""
    f = tt.function(lambda x: tt.nn.dropout(x, 0.5), backend=backend)
    x = tt.ones((100, 100))
    masks = [f(x).numpy() != 0 for _ in range(3)]
    assert not np.array_equal(masks[0], masks[1]) and not np.array_equal(masks[1], masks[2])
    for kept in masks:
        assert abs(kept.mean() - 0.5) < 0.03
