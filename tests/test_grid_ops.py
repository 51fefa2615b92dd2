"""tt.meshgrid and tt.sequence_mask against numpy and TensorFlow's documented outputs,
eagerly and compiled, with meshgrid's gradient."""

import numpy as np
import pytest

import tracer as tt


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("backend", [None, "c"])
def test_meshgrid_is_numpys_and_sums_its_gradient_back_to_each_vector(indexing, backend):
    rng = np.random.default_rng(0)
    vectors = [rng.standard_normal(n) for n in (2, 3, 4)]
    weights = rng.standard_normal((3, 2, 4) if indexing == "xy" else (2, 3, 4))

    def grids_and_gradients(*xs):
        with tt.GradientTape() as tape:
            for x in xs:
                tape.watch(x)
            grids = tt.meshgrid(*xs, indexing=indexing)
            loss = sum(tt.reduce_sum(g * weights * (k + 1)) for k, g in enumerate(grids))
        return grids, tape.gradient(loss, list(xs))

    run = grids_and_gradients if backend is None else tt.function(grids_and_gradients)
    grids, grads = run(*(tt.constant(v) for v in vectors))
    for got, want in zip(grids, np.meshgrid(*vectors, indexing=indexing)):
        np.testing.assert_array_equal(got.numpy(), want)
    axes = (1, 0, 2) if indexing == "xy" else (0, 1, 2)
    for k, (grad, axis) in enumerate(zip(grads, axes)):
        others = tuple(a for a in range(3) if a != axis)
        np.testing.assert_allclose(grad.numpy(), (k + 1) * weights.sum(axis=others), rtol=1e-12)


@pytest.mark.parametrize("backend", [None, "c"])
def test_sequence_mask_marks_each_lengths_first_positions(backend):
    lengths = np.array([[1, 3], [0, 2]], np.int32)

    def masks(lengths):
        return tt.sequence_mask(lengths, 4), tt.sequence_mask(lengths, 3, dtype=tt.float32)

    run = masks if backend is None else tt.function(masks)
    boolean, floats = run(tt.constant(lengths))
    want = np.arange(4) < lengths[..., None]
    assert boolean.dtype == tt.bool and boolean.shape == (2, 2, 4)
    np.testing.assert_array_equal(boolean.numpy(), want)
    np.testing.assert_array_equal(floats.numpy(), want[..., :3].astype(np.float32))
    # TensorFlow's documented example: maxlen is the largest length where not given
    np.testing.assert_array_equal(
        tt.sequence_mask([1, 3, 2]).numpy(),
        [[True, False, False], [True, True, True], [True, True, False]],
    )


def test_sequence_mask_and_meshgrid_refuse_what_they_cannot_take():
    with pytest.raises(TypeError, match="lengths must be integers"):
        tt.sequence_mask([1.0, 2.0], 3)

    @tt.function(input_signature=[tt.TensorSpec([2], tt.int32)])
    def unbounded(lengths):
        return tt.sequence_mask(lengths)

    # its length max(lengths) known only when it runs (TF 2.21 takes it): it runs as Python
    np.testing.assert_array_equal(
        unbounded(tt.constant([1, 2])).numpy(), [[True, False], [True, True]]
    )
    with pytest.raises(ValueError, match='indexing must be "xy" or "ij"'):
        tt.meshgrid([1, 2], indexing="yx")
