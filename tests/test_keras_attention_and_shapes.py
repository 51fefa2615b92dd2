"""Keras's Attention, AdditiveAttention, Dot, PReLU and the 1-D ZeroPadding, Cropping and
UpSampling layers against numpy's formulas (Keras 3.15's: masked scores minus 1e9, query
steps the query's mask skips give zeros), finite differences, and the .keras round trip."""

import os

import numpy as np
import pytest

import tracer as tt

layers = tt.keras.layers
rng = np.random.default_rng(41)


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def reference(layer, query, value, key, query_mask=None, value_mask=None, causal=False):
    query, value, key = (t.astype(np.float64) for t in (query, value, key))
    if isinstance(layer, layers.AdditiveAttention):
        scale = layer.scale.numpy() if layer.use_scale else 1.0
        scores = (scale * np.tanh(query[:, :, None] + key[:, None])).sum(-1)
    elif layer.score_mode == "concat":
        summed = query[:, :, None] + key[:, None]
        summed = summed * float(layer.scale.numpy()) if layer.use_scale else summed
        scores = float(layer.concat_score_weight.numpy()) * np.tanh(summed).sum(-1)
    else:
        scores = query @ key.transpose(0, 2, 1)
        scores = scores * float(layer.scale.numpy()) if layer.use_scale else scores
    allowed = np.ones(scores.shape, bool)
    if value_mask is not None:
        allowed &= value_mask[:, None, :]
    if causal:
        allowed &= np.tril(np.ones(scores.shape[1:], bool))[None]
    weights = softmax(np.where(allowed, scores, scores - 1e9))
    out = weights @ value
    if query_mask is not None:
        out = np.where(query_mask[..., None], out, 0.0)
    return out, weights


LAYERS = {
    "dot": lambda: layers.Attention(),
    "dot_scaled": lambda: layers.Attention(use_scale=True),
    "concat": lambda: layers.Attention(use_scale=True, score_mode="concat"),
    "additive": lambda: layers.AdditiveAttention(),
    "additive_plain": lambda: layers.AdditiveAttention(use_scale=False),
}


@pytest.mark.parametrize("kind", LAYERS)
@pytest.mark.parametrize("case", ["plain", "masks", "causal"])
def test_attention_follows_kerass_formulas(kind, case):
    query, value, key = (rng.normal(size=(2, n, 3)).astype(np.float32) for n in (4, 5, 5))
    layer = LAYERS[kind]()
    masks = None
    query_mask = np.array([[1, 1, 1, 0], [1, 1, 0, 0]], bool)
    value_mask = np.array([[1, 1, 1, 1, 0], [1, 0, 1, 1, 1]], bool)
    if case == "causal":
        value = key = query
    inputs = [query, value, key]
    if case == "masks":
        masks = [query_mask, value_mask]
    layer(inputs)
    for w in layer.weights:
        w.assign(rng.normal(size=w.shape).astype(np.float32))
    out, weights = reference(
        layer, query, value, key, *(masks or [None, None]), causal=case == "causal"
    )
    kwargs = {"mask": masks, "use_causal_mask": case == "causal", "return_attention_scores": True}
    compiled = tt.function(lambda q, v, k: layer([q, v, k], **kwargs))
    for got, scores in (layer(inputs, **kwargs), compiled(*inputs)):
        np.testing.assert_allclose(got.numpy(), out, rtol=2e-5, atol=2e-6)
        np.testing.assert_allclose(scores.numpy(), weights, rtol=2e-5, atol=2e-6)


def test_attention_takes_the_masks_earlier_layers_pass_on():
    ids = np.array([[1, 2, 3, 0], [2, 0, 0, 0]], np.int32)
    embed = layers.Embedding(4, 3, mask_zero=True)
    h = embed(ids)
    out = layers.Attention()([h, h])
    mask = ids != 0
    expected, _ = reference(layers.Attention(), h.numpy(), h.numpy(), h.numpy(), mask, mask)
    np.testing.assert_allclose(out.numpy(), expected, rtol=2e-5, atol=2e-6)
    np.testing.assert_array_equal(out._keras_mask.numpy(), mask)


def test_additive_attention_gradient_matches_finite_differences():
    layer = layers.AdditiveAttention(dtype="float64")
    query, value = rng.normal(size=(1, 2, 3)), rng.normal(size=(1, 3, 3))
    layer([query, value])

    def loss(q):
        return tt.reduce_sum(tt.sin(layer([q, tt.constant(value)])))

    value_q = tt.constant(query)
    with tt.GradientTape() as tape:
        tape.watch(value_q)
        y = loss(value_q)
    analytic = tape.gradient(y, value_q).numpy().ravel()
    numeric = []
    for k in range(query.size):
        plus, minus = query.ravel().copy(), query.ravel().copy()
        plus[k] += 1e-6
        minus[k] -= 1e-6
        up = float(loss(tt.constant(plus.reshape(query.shape))))
        numeric.append((up - float(loss(tt.constant(minus.reshape(query.shape))))) / 2e-6)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("axes, normalize", [(1, False), (1, True), (2, False), ((1, 1), True)])
def test_dot_is_a_batched_contraction(axes, normalize):
    if axes == 1:
        x, y = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    elif axes == 2:
        x, y = rng.normal(size=(3, 2, 4)), rng.normal(size=(3, 5, 4))
    else:
        x, y = rng.normal(size=(3, 2, 4)), rng.normal(size=(3, 2, 6))
    ax, ay = (axes, axes) if isinstance(axes, int) else axes
    if normalize:
        x = x / np.linalg.norm(x, axis=ax, keepdims=True)
        y = y / np.linalg.norm(y, axis=ay, keepdims=True)
    expected = np.stack([np.tensordot(a, b, axes=(ax - 1, ay - 1)) for a, b in zip(x, y)])
    expected = expected.reshape(3, -1) if expected.ndim == 1 else expected
    got = layers.Dot(axes=axes, normalize=normalize)([x, y]).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_prelu_and_the_one_dimensional_shape_layers():
    images = rng.normal(size=(2, 3, 4, 5)).astype(np.float32)
    prelu = layers.PReLU(shared_axes=[1, 2])
    prelu(images)
    assert tuple(prelu.alpha.shape) == (1, 1, 5)
    alpha = rng.normal(size=(1, 1, 5)).astype(np.float32)
    prelu.alpha.assign(alpha)
    np.testing.assert_allclose(
        prelu(images).numpy(), np.where(images > 0, images, alpha * images), rtol=1e-6
    )
    s = rng.normal(size=(2, 5, 3)).astype(np.float32)
    np.testing.assert_array_equal(
        layers.ZeroPadding1D((1, 2))(s).numpy(), np.pad(s, ((0, 0), (1, 2), (0, 0)))
    )
    np.testing.assert_array_equal(layers.Cropping1D((1, 2))(s).numpy(), s[:, 1:3])
    np.testing.assert_array_equal(layers.UpSampling1D(3)(s).numpy(), np.repeat(s, 3, axis=1))
    with pytest.raises(ValueError, match="leaves no step"):
        layers.Cropping1D((3, 2))(s)


def test_the_new_layers_go_through_a_keras_file(tmp_path):
    pytest.importorskip("h5py")
    a, b = tt.keras.Input((4, 3)), tt.keras.Input((5, 3))
    h = layers.Add()([layers.Attention(use_scale=True)([a, b]), layers.AdditiveAttention()([a, b])])
    h = layers.Cropping1D((1, 1))(
        layers.UpSampling1D(2)(layers.ZeroPadding1D(1)(layers.PReLU()(h)))
    )
    model = tt.keras.Model([a, b], layers.Dot(axes=(1, 1))([h, h]))
    q, v = (
        rng.normal(size=(2, 4, 3)).astype(np.float32),
        rng.normal(size=(2, 5, 3)).astype(np.float32),
    )
    model.save(tmp_path / "m.keras")
    again = tt.keras.models.load_model(tmp_path / "m.keras")
    np.testing.assert_allclose(again([q, v]).numpy(), model([q, v]).numpy(), rtol=1e-6)


def test_input_shape_and_input_dim_arguments_warn_as_keras_3_does():
    # Keras 3.15's warning, from the layer's super().__init__ line (TF 2.21 showed keras's
    # dense.py), once however made; input_dim wins
    message = "Do not pass an `input_shape`/`input_dim` argument to a layer"
    with pytest.warns(UserWarning, match=message) as caught:
        dense = tt.keras.layers.Dense(2, input_shape=(3,))
    assert len(caught) == 1
    assert caught[0].filename.endswith(os.path.join("keras", "layers", "core.py"))

    class Scaled(tt.keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)  # the line a layer of one's own is warned at

    with pytest.warns(UserWarning, match=message) as caught:
        tt.keras.layers.Flatten(input_shape=(28, 28))  # Keras's Flatten has an __init__
        Scaled(input_shape=(2,))
    assert caught[0].filename.endswith(os.path.join("keras", "layers", "layer.py"))
    assert caught[1].filename == __file__
    with pytest.warns(UserWarning, match=message):
        model = tt.keras.Sequential([tt.keras.layers.Dense(2, input_dim=5)])
    assert model.layers[0].kernel.shape == (5, 2) and dense._input_shape_argument == (None, 3)
    with pytest.warns(UserWarning, match=message), pytest.raises(TypeError, match="input_shape"):
        tt.keras.layers.Dense(2, input_dim=5, input_shape=(4,))


def test_sequential_shapes_set_shape_specs_and_tensorflows_keras_names():
    """What TensorFlow's time-series and DCGAN tutorials read: a Sequential's input and
    output shapes, `Tensor.set_shape`, a TensorSpec's shape as a TensorShape, and
    `tf.initializers`, `tf.losses` and `tf.metrics` as Keras's modules (TensorFlow 2.21's
    values)."""
    model = tt.keras.Sequential()
    model.add(tt.keras.layers.Dense(4, input_shape=(3,)))
    assert (model.input_shape, model.output_shape) == ((None, 3), (None, 4))
    model = tt.keras.Sequential(
        [
            tt.keras.Input((7, 7, 2)),
            tt.keras.layers.Conv2DTranspose(4, 3, strides=2, padding="same"),
        ]
    )
    assert model.output_shape == (None, 14, 14, 4)
    with pytest.raises(AttributeError, match="has no defined output shape yet"):
        getattr(tt.keras.Sequential([tt.keras.layers.Dense(4)]), "output_shape")  # noqa: B009
    x = tt.constant(np.zeros((3, 7, 5), np.float32))[:, 0:6, :]
    x.set_shape([None, 6, None])
    with pytest.raises(
        ValueError,
        match=r"shape \(3, 6, 5\) is not compatible with supplied shape \(None, 5, None\)",
    ):
        x.set_shape([None, 5, None])
    batches = tt.data.Dataset.from_tensor_slices(np.zeros((10, 7, 5), np.float32)).batch(4)

    def split(x):
        first = x[:, 0:6, :]
        first.set_shape([None, 6, None])
        return first

    assert batches.map(split).element_spec.shape.as_list() == [None, 6, 5]
    assert tt.TensorSpec([None, 3]).shape.as_list() == [None, 3]
    dense = tt.keras.layers.Dense(3, kernel_initializer=tt.initializers.zeros())
    np.testing.assert_array_equal(dense(tt.ones((1, 2))).numpy(), np.zeros((1, 3)))
    assert tt.losses.MeanSquaredError is tt.keras.losses.MeanSquaredError
    assert tt.metrics.Mean is tt.keras.metrics.Mean
