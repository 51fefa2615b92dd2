"""tt.nn.sparse_softmax_cross_entropy_with_logits, one primitive (and its gradient another):
values against scipy, TensorFlow's answers at infinite logits and bad labels, every backend,
and batching over the labels.

The catalogue (tests/test_gradients.py CASES) puts both primitives through derivatives of
two orders, forward mode, jacobians and C export; these are what it does not reach.
"""

import numpy as np
import pytest
from scipy.special import log_softmax, softmax

import tracer as tt

BACKENDS = ["eager", "interpreter", "c"]
loss_of = tt.nn.sparse_softmax_cross_entropy_with_logits


def _run(backend, function, *args):
    if backend == "eager":
        return function(*args)
    return tt.function(function, backend=backend)(*args)


@pytest.mark.parametrize("backend", BACKENDS)
def test_loss_and_gradient_over_two_leading_axes_equal_scipy(backend):
    rng = np.random.default_rng(3)
    logits = rng.standard_normal((2, 5, 7)) * 3
    labels = rng.integers(0, 7, (2, 5))

    def loss_and_gradient(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            loss = loss_of(labels, x)
            total = tt.reduce_sum(loss * 1.5)
        return loss, tape.gradient(total, x)

    loss, gradient = _run(backend, loss_and_gradient, tt.constant(logits))
    expected = -np.take_along_axis(log_softmax(logits, -1), labels[..., None], -1)[..., 0]
    np.testing.assert_allclose(loss.numpy(), expected, rtol=1e-12)
    one_hot = np.eye(7)[labels]
    np.testing.assert_allclose(gradient.numpy(), 1.5 * (softmax(logits, -1) - one_hot), atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_infinite_logits_give_tensorflows_answers(backend):
    """TF 2.21: a -inf logit that is not the label's adds nothing (loss 1.3132616, its
    gradient 0); a row holding +inf or NaN is NaN."""
    logits = tt.constant([[0.0, -np.inf, 1.0], [np.inf, 0.0, 1.0], [np.nan, 0.0, 1.0]])

    def loss_and_gradient(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            loss = loss_of([0, 1, 1], x)
        return loss, tape.gradient(loss, x)

    loss, gradient = _run(backend, loss_and_gradient, logits)
    np.testing.assert_allclose(loss.numpy()[0], 1.3132616, rtol=1e-6)
    assert np.isnan(loss.numpy()[1:]).all()
    np.testing.assert_allclose(gradient.numpy()[0], [-0.7310586, 0.0, 0.7310586], rtol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "bad, dtype",
    [(3, "int32"), (-1, "int32"), (-(2**31), "int32"), (2**31 - 1, "int32")]
    + [(-1, "int64"), (-(2**63), "int64"), (2**40, "int64")],
)
def test_a_label_outside_the_classes_is_invalid_argument_error(backend, bad, dtype):
    """TensorFlow raises InvalidArgumentError ("Received a label value of 3 which is outside
    the valid range of [0, 3)"), eagerly and in tf.function; so does every backend here,
    never reading past the row (each type's extremes: the eager check reads the labels as
    unsigned integers)."""
    labels = tt.constant([0, bad], dtype)
    with pytest.raises(tt.errors.InvalidArgumentError, match=r"valid range of \[0, 3\)"):
        _run(backend, lambda x: loss_of(labels, x), tt.zeros((2, 3))).numpy()


@pytest.mark.parametrize("backend", BACKENDS)
def test_float16_logits_are_computed_in_float32(backend):
    """TF 2.21 gives 1.407 (float16) for logits [1, 2, 3] and label 1."""
    logits = tt.constant([[1.0, 2.0, 3.0]], tt.float16)
    loss = _run(backend, lambda x: loss_of(tt.constant([1], tt.int64), x), logits)
    assert loss.dtype == tt.float16
    np.testing.assert_allclose(loss.numpy().astype(np.float64), 1.4076059644, rtol=1e-3)


def test_labels_and_logits_batched_together_or_alone_equal_a_loop():
    rng = np.random.default_rng(4)
    logits = rng.standard_normal((4, 3, 5))
    labels = rng.integers(0, 5, (4, 3)).astype(np.int32)

    def loss_and_backprop(labels, logits):
        with tt.GradientTape() as tape:
            tape.watch(logits)
            loss = tt.reduce_sum(loss_of(labels, logits) ** 2)
        return loss, tape.gradient(loss, logits)

    looped = [loss_and_backprop(tt.constant(a), tt.constant(b)) for a, b in zip(labels, logits)]
    both = tt.vectorized_map(lambda ab: loss_and_backprop(*ab), (labels, logits))
    labels_only = tt.vectorized_map(lambda a: loss_and_backprop(a, tt.constant(logits[0])), labels)
    for k, (loss, gradient) in enumerate(looped):
        np.testing.assert_allclose(both[0].numpy()[k], loss.numpy(), rtol=1e-12)
        np.testing.assert_allclose(both[1].numpy()[k], gradient.numpy(), rtol=1e-12)
    single = loss_and_backprop(tt.constant(labels[2]), tt.constant(logits[0]))
    np.testing.assert_allclose(labels_only[0].numpy()[2], single[0].numpy(), rtol=1e-12)
    np.testing.assert_allclose(labels_only[1].numpy()[2], single[1].numpy(), rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_empty_batch_gives_an_empty_loss_and_gradient(backend):
    def loss_and_gradient(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            loss = loss_of(tt.zeros((0,), tt.int32), x)
        return loss, tape.gradient(loss, x)

    for classes in (3, 0):
        loss, gradient = _run(backend, loss_and_gradient, tt.zeros((0, classes)))
        assert loss.shape == (0,) and gradient.shape == (0, classes)


def test_shape_and_dtype_errors_name_the_shapes():
    with pytest.raises(ValueError, match=r"labels shape \(3,\) must equal logits shape \(2, 4\)"):
        loss_of(tt.constant([0, 1, 2]), tt.zeros((2, 4)))
    with pytest.raises(TypeError, match="labels must be int32 or int64, got float32"):
        loss_of(tt.constant([0.0, 1.0]), tt.zeros((2, 4)))
    with pytest.raises(TypeError, match="logits must be a real floating tensor, got int32"):
        loss_of(tt.constant([0, 1]), tt.zeros((2, 4), tt.int32))


def test_an_eager_tape_records_the_loss_as_one_op():
    """The reason it is a primitive: a training step's tape holds one node for the loss,
    where the composition held about fourteen."""
    logits = tt.Variable(np.zeros((4, 3), np.float32))
    with tt.GradientTape() as tape:
        loss_of([0, 1, 2, 0], logits)
    ops = [line.split(" = ")[1].split()[0].split("[")[0] for line in tape.ir().splitlines()]
    assert ops == ["variable", "const", "sparse_softmax_cross_entropy"]


@pytest.mark.parametrize("label_dtype", [np.int8, np.uint8, np.int32, np.int64])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_installed_rows_give_scipys_values_and_numpys_path_to_rounding(dtype, label_dtype):
    """The eager kernels' pass a row (codegen/array_math.py's `cross_entropy`, where the
    loops are installed) against scipy in float64 and the numpy passes they stand for."""
    from codegen import array_math
    from tracer.ops import cross_entropy_ops

    rng = np.random.default_rng(11)
    logits = (rng.standard_normal((3, 40, 10)) * 4).astype(dtype)
    labels = rng.integers(0, 10, (3, 40)).astype(label_dtype)
    expected_loss = -np.take_along_axis(
        log_softmax(logits.astype(np.float64), -1), labels[..., None].astype(np.int64), -1
    )[..., 0]
    expected_gradient = softmax(logits.astype(np.float64), -1) - np.eye(10)[labels]
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    for backprop, expected in ((False, expected_loss), (True, expected_gradient)):
        installed = array_math.cross_entropy(labels, logits, backprop)
        if installed is None:
            pytest.skip("the eager loops were not installed here")
        assert installed.dtype == dtype and installed.shape == expected.shape
        np.testing.assert_allclose(installed, expected, rtol=tolerance, atol=tolerance)
        kernel = cross_entropy_ops._backprop_kernel if backprop else cross_entropy_ops._loss_kernel
        assert kernel(labels, logits).tobytes() == installed.tobytes()  # the eager kernel's
        exps, shifted, rows = cross_entropy_ops._rows(labels, logits)
        if backprop:
            exps /= exps.sum(axis=-1, keepdims=True)
            exps[np.arange(rows.size), rows] -= 1
            numpy_path = exps.reshape(logits.shape)
        else:
            numpy_path = np.log(exps.sum(axis=-1)) - shifted[np.arange(rows.size), rows]
            numpy_path = numpy_path.reshape(labels.shape)
        np.testing.assert_allclose(installed, numpy_path, rtol=tolerance, atol=tolerance)
