"""Keras's MultiHeadAttention and EinsumDense (tracer/keras/layers/attention.py,
einsum_dense.py) against numpy's equations, finite differences, masks' analytic
properties, and a file TensorFlow's Keras wrote (tests/data/keras/attention.keras)."""

import pathlib

import numpy as np
import pytest

import tracer as tt

layers = tt.keras.layers
DATA = pathlib.Path(__file__).parent / "data" / "keras"
rng = np.random.default_rng(9)


def reference(layer, query, value, key=None, mask=None):
    """(the output, the attention probabilities) by Keras's equations in float64; `mask`
    (batch, T, S) bools."""
    key = value if key is None else key
    weights = {
        "/".join(w.path.split("/")[-2:]): w.numpy().astype(np.float64) for w in layer.weights
    }

    def project(x, name):
        y = np.einsum("abc,cde->abde", x.astype(np.float64), weights[f"{name}/kernel"])
        return y + weights[f"{name}/bias"] if f"{name}/bias" in weights else y

    q = project(query, "query") / np.sqrt(layer.key_dim)
    k, v = project(key, "key"), project(value, "value")
    scores = np.einsum("aecd,abcd->acbe", k, q)
    if mask is not None:
        scores = np.where(mask[:, None], scores, -1e9)
    scores = np.exp(scores - scores.max(-1, keepdims=True))
    probabilities = scores / scores.sum(-1, keepdims=True)
    if mask is not None:  # Keras's Softmax zeroes masked places (a row of them all gives 0s)
        probabilities = np.where(mask[:, None], probabilities, 0.0)
    attended = np.einsum("acbe,aecd->abcd", probabilities, v)
    out = np.einsum("abcd,cde->abe", attended, weights["attention_output/kernel"])
    if "attention_output/bias" in weights:
        out = out + weights["attention_output/bias"]
    return out, probabilities


def inputs():
    return (
        rng.normal(size=(2, 5, 6)).astype(np.float32),
        rng.normal(size=(2, 4, 6)).astype(np.float32),
        rng.normal(size=(2, 4, 6)).astype(np.float32),
    )


def with_random_biases(layer):
    for w in layer.weights:
        if w.path.endswith("/bias"):
            w.assign(rng.normal(size=w.shape).astype(np.float32))


@pytest.mark.parametrize(
    "options",
    [{}, {"value_dim": 3}, {"output_shape": 7}, {"use_bias": False}],
    ids=["plain", "value_dim", "output_shape", "no_bias"],
)
@pytest.mark.parametrize("case", ["value", "key", "attention_mask", "causal", "scores"])
def test_attention_follows_kerass_equations(options, case):
    query, value, key = inputs()
    layer = layers.MultiHeadAttention(2, 4, **options)
    if case == "causal":
        value = key = query
    layer(query, value)
    with_random_biases(layer)
    kwargs, mask = {}, None
    if case == "key":
        kwargs["key"] = key
    if case == "attention_mask":
        mask = rng.random((2, 5, 4)) > 0.4
        kwargs["attention_mask"] = mask
    if case == "causal":
        kwargs["use_causal_mask"] = True
        mask = np.broadcast_to(np.tril(np.ones((5, 5), bool)), (2, 5, 5))
    if case == "scores":
        kwargs["return_attention_scores"] = True
    out, probabilities = reference(layer, query, value, kwargs.get("key"), mask)
    compiled = tt.function(lambda q, v: layer(q, v, **kwargs))
    interpreted = tt.function(lambda q, v: layer(q, v, **kwargs), backend="interpreter")
    for run in (
        lambda: layer(query, value, **kwargs),
        lambda: compiled(query, value),
        lambda: interpreted(query, value),
    ):
        result = run()
        if case == "scores":
            result, scores = result
            np.testing.assert_allclose(scores.numpy(), probabilities, rtol=2e-5, atol=2e-6)
        np.testing.assert_allclose(result.numpy(), out, rtol=2e-5, atol=2e-5)


def test_weights_and_config_are_kerass():
    layer = layers.MultiHeadAttention(3, 2, value_dim=4, name="mha")
    layer(np.zeros((1, 2, 5), np.float32), np.zeros((1, 3, 5), np.float32))
    assert [(v.path, tuple(v.shape)) for v in layer.weights] == [  # Keras 3's paths
        ("mha/query/kernel", (5, 3, 2)),
        ("mha/query/bias", (3, 2)),
        ("mha/key/kernel", (5, 3, 2)),
        ("mha/key/bias", (3, 2)),
        ("mha/value/kernel", (5, 3, 4)),
        ("mha/value/bias", (3, 4)),
        ("mha/attention_output/kernel", (3, 4, 5)),
        ("mha/attention_output/bias", (5,)),
    ]
    assert [v.name for v in layer.weights[:2]] == ["mha/query/kernel:0", "mha/query/bias:0"]


def padded_ids():
    ids = rng.integers(1, 12, size=(3, 6)).astype(np.int32)
    lengths = [6, 2, 4]
    for row, length in enumerate(lengths):
        ids[row, length:] = 0
    return ids, lengths


def test_an_embeddings_mask_keeps_attention_off_the_padding():
    """Self-attention over right-padded ids gives, for each real step, what it gives on the
    unpadded sequence; the residual Add passes the mask on, so the mean pools real steps."""
    ids, lengths = padded_ids()
    embed = layers.Embedding(12, 6, mask_zero=True)
    attend = layers.MultiHeadAttention(2, 3)
    inputs = tt.keras.Input((None,), dtype="int32")
    h = embed(inputs)
    pooled = layers.GlobalAveragePooling1D()(layers.Add()([h, attend(h, h)]))
    model = tt.keras.Model(inputs, pooled)
    result = model(ids).numpy()
    for row, length in enumerate(lengths):
        alone = ids[row : row + 1, :length]
        h_alone = embed(alone)
        expected = (h_alone + attend(h_alone, h_alone)).numpy()[0].mean(axis=0)
        np.testing.assert_allclose(result[row], expected, rtol=1e-5, atol=1e-6)


def test_merge_layers_combine_masks_as_kerass():
    ids, _ = padded_ids()
    embed = layers.Embedding(12, 2, mask_zero=True)
    h = embed(ids)
    other = embed(np.where(np.arange(6) < 3, ids, 0))  # fewer steps kept
    np.testing.assert_array_equal(layers.Add()([h, other])._keras_mask.numpy(), ids != 0)
    assert getattr(layers.Add()([h, tt.constant(h.numpy())]), "_keras_mask", None) is None
    joined = layers.Concatenate(axis=1)([h, tt.constant(h.numpy())])
    np.testing.assert_array_equal(
        joined._keras_mask.numpy(), np.concatenate([ids != 0, np.ones_like(ids, bool)], axis=1)
    )


def test_gradient_matches_finite_differences_in_float64():
    layer = layers.MultiHeadAttention(2, 3, dtype="float64")
    query = rng.normal(size=(1, 3, 4))
    layer(query, query)
    mask = np.tril(np.ones((1, 3, 3), bool))

    def loss(q):
        return tt.reduce_sum(tt.sin(layer(q, q, attention_mask=mask)))

    value = tt.constant(query)
    with tt.GradientTape() as tape:
        tape.watch(value)
        y = loss(value)
    analytic = tape.gradient(y, value).numpy().ravel()
    numeric = np.zeros(query.size)
    for k in range(query.size):
        plus, minus = query.ravel().copy(), query.ravel().copy()
        plus[k] += 1e-6
        minus[k] -= 1e-6
        numeric[k] = (
            float(loss(tt.constant(plus.reshape(query.shape))))
            - float(loss(tt.constant(minus.reshape(query.shape))))
        ) / 2e-6
    np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-8)


def test_dropout_acts_on_the_probabilities_in_training_only():
    query, value, _ = inputs()
    layer = layers.MultiHeadAttention(2, 4, dropout=0.5, seed=2)
    _, probabilities = layer(query, value, return_attention_scores=True)
    out, _ = reference(layer, query, value)
    np.testing.assert_allclose(layer(query, value).numpy(), out, rtol=2e-5, atol=2e-5)
    trained = layer(query, value, training=True).numpy()
    assert not np.allclose(trained, out, atol=1e-3)
    assert np.all(np.isfinite(trained))


def test_einsum_dense():
    x = rng.normal(size=(2, 3, 4)).astype(np.float32)
    dense = layers.EinsumDense(
        "abc,cde->abde", output_shape=(None, 2, 5), bias_axes="de", activation="relu"
    )
    y = dense(x).numpy()
    assert tuple(dense.kernel.shape) == (4, 2, 5) and tuple(dense.bias.shape) == (2, 5)
    dense.bias.assign(rng.normal(size=(2, 5)).astype(np.float32))
    expected = np.maximum(
        np.einsum("abc,cde->abde", x, dense.kernel.numpy()) + dense.bias.numpy(), 0
    )
    np.testing.assert_allclose(dense(x).numpy(), expected, rtol=1e-5, atol=1e-6)
    assert y.shape == (2, 3, 2, 5)
    elided = layers.EinsumDense("...b,bc->...c", output_shape=3, bias_axes="c")
    assert elided(x).shape == (2, 3, 3)
    with pytest.raises(ValueError, match="not of the form"):
        layers.EinsumDense("abc", output_shape=3)
    with pytest.raises(ValueError, match="bias axis 'z'"):
        layers.EinsumDense("ab,bc->ac", output_shape=3, bias_axes="z")
    with pytest.raises(ValueError, match="output_shape"):
        layers.EinsumDense("ab,bc->ac", output_shape=(3, 4))(x[:, 0])


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="num_heads must be a positive int"):
        layers.MultiHeadAttention(0, 4)
    with pytest.raises(NotImplementedError, match="attention_axes"):
        layers.MultiHeadAttention(2, 4, attention_axes=(1, 2))
    with pytest.raises(ValueError, match=r"must be \(batch, time, features\)"):
        layers.MultiHeadAttention(2, 4)(np.zeros((2, 3), np.float32), np.zeros((2, 3), np.float32))


def test_kerass_attention_file_loads_with_kerass_outputs(tmp_path):
    pytest.importorskip("h5py")
    data = np.load(DATA / "attention.npz")
    model = tt.keras.models.load_model(DATA / "attention.keras")
    np.testing.assert_allclose(model(data["x"]).numpy(), data["y"], rtol=1e-5, atol=1e-6)
    model.save(tmp_path / "again.keras")
    again = tt.keras.models.load_model(tmp_path / "again.keras")
    np.testing.assert_allclose(again(data["x"]).numpy(), data["y"], rtol=1e-5, atol=1e-6)
    model.load_weights(DATA / "attention.weights.h5")
    np.testing.assert_allclose(model(data["x"]).numpy(), data["y"], rtol=1e-5, atol=1e-6)
