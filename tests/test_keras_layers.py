"""tt.keras.layers and tt.keras.Sequential: values against numpy, Keras's names, shapes and
weight order, training-mode behaviour, and the same numbers eager and compiled."""

import numpy as np
import pytest

import tracer as tt

rng = np.random.default_rng(5)
layers = tt.keras.layers


def test_dense_computes_its_formula_and_names_weights_as_keras():
    layer = layers.Dense(3, activation="tanh", name="proj")
    x = rng.standard_normal((4, 5)).astype(np.float32)
    y = layer(x)
    kernel, bias = layer.get_weights()
    assert [v.path for v in layer.weights] == ["proj/kernel", "proj/bias"]  # Keras 3's
    assert [v.name for v in layer.weights] == ["proj/kernel:0", "proj/bias:0"]  # as the guides
    assert kernel.shape == (5, 3) and not bias.any()
    np.testing.assert_allclose(y.numpy(), np.tanh(x @ kernel + bias), rtol=1e-6)
    limit = np.sqrt(6 / (5 + 3))  # Glorot uniform
    assert np.all(np.abs(kernel) <= limit)
    assert layer.count_params() == 18


def test_layer_names_are_unique_per_class_in_snake_case():
    class ConvProbe2D(layers.Layer):
        pass

    assert [ConvProbe2D().name for _ in range(2)] == ["conv_probe2d", "conv_probe2d_1"]
    assert ConvProbe2D(name="mine").name == "mine"


class Scaled(layers.Layer):
    """A subclassed layer: a weight of its own made in build, a Dense made in __init__."""

    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.inner = layers.Dense(units, name="inner")

    def build(self, input_shape):
        self.scale = self.add_weight("scale", (1,), initializer="ones")
        self.counter = self.add_weight("counter", (), dtype="int32", trainable=False)

    def call(self, inputs):
        self.counter.assign_add(1)
        return self.inner(inputs) * self.scale


def test_subclassed_layers_build_once_and_list_their_weights_before_their_layers():
    layer = Scaled(2, name="scaled")
    assert layer.weights == [] and not layer.built
    x = tt.constant(rng.standard_normal((3, 4)), dtype=tt.float32)
    layer(x)
    layer(x)
    assert [v.path for v in layer.weights] == [
        "scaled/scale",
        "scaled/counter",
        "scaled/inner/kernel",  # the inner layer was built inside scaled's call
        "scaled/inner/bias",
    ]
    assert [v.path for v in layer.trainable_weights] == [
        "scaled/scale",
        "scaled/inner/kernel",
        "scaled/inner/bias",
    ]
    assert [v.path for v in layer.non_trainable_weights] == ["scaled/counter"]
    assert int(layer.counter.numpy()) == 2
    with tt.GradientTape() as tape:
        loss = tt.reduce_sum(layer(x))
    grads = tape.gradient(loss, layer.trainable_weights)
    kernel, bias = layer.inner.kernel.numpy(), layer.inner.bias.numpy()
    np.testing.assert_allclose(grads[0].numpy(), [np.sum(x.numpy() @ kernel + bias)], rtol=1e-5)


def test_freezing_a_layer_stops_its_gradients_and_lists():
    model = tt.keras.Sequential([layers.Dense(3), layers.Dense(1)])
    x = tt.constant(rng.standard_normal((2, 4)), dtype=tt.float32)
    model(x)
    model.layers[0].trainable = False
    assert len(model.trainable_variables) == 2 and len(model.non_trainable_variables) == 2
    with tt.GradientTape() as tape:
        y = tt.reduce_sum(model(x))
    assert tape.gradient(y, model.layers[0].kernel) is None  # no longer watched
    model.trainable = True
    assert len(model.trainable_variables) == 4


def test_sequential_keeps_its_layers_names_and_casts_inputs():
    model = tt.keras.Sequential([layers.Dense(4, name="hidden"), layers.Dense(1, name="out")])
    y = model(np.ones((2, 3)))  # float64 input, float32 layers
    assert y.dtype == tt.float32 and y.shape == (2, 1)
    assert [v.path for v in model.variables] == [  # built in the model's scope (Keras 3)
        f"{model.name}/hidden/kernel",
        f"{model.name}/hidden/bias",
        f"{model.name}/out/kernel",
        f"{model.name}/out/bias",
    ]
    assert tt.keras.models.Sequential is tt.keras.Sequential is tt.layers.Sequential
    with pytest.raises(TypeError, match="Sequential.add takes a layer"):
        model.add(3)


def test_set_weights_checks_the_count():
    layer = layers.Dense(2)
    layer(np.ones((1, 2), np.float32))
    layer.set_weights([np.eye(2), np.array([1.0, -1.0])])
    np.testing.assert_array_equal(layer(np.ones((1, 2), np.float32)).numpy(), [[2.0, 0.0]])
    with pytest.raises(ValueError, match="has 2 weights, given 1"):
        layer.set_weights([np.eye(2)])


def test_flatten_and_embedding():
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    np.testing.assert_array_equal(layers.Flatten()(x).numpy(), x.reshape(2, 12))
    embedding = layers.Embedding(10, 3)
    ids = np.array([[1, 2], [2, 9]])
    with tt.GradientTape() as tape:
        out = embedding(ids)
        table = embedding.embeddings.numpy()
        loss = tt.reduce_sum(out)
    np.testing.assert_array_equal(out.numpy(), table[ids])
    assert np.all(np.abs(table) <= 0.05)
    grad = tape.gradient(loss, embedding.embeddings)
    assert isinstance(grad, tt.IndexedSlices)
    dense = np.zeros((10, 3))
    np.add.at(dense, grad.indices.numpy(), grad.values.numpy())
    np.testing.assert_array_equal(dense[[1, 2, 9], 0], [1.0, 2.0, 1.0])


class TrainingSeen(tt.keras.layers.Layer):
    """The identity, keeping the `training` each call received (its default True)."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def call(self, inputs, training=True):
        self.seen.append(training)
        return inputs


def test_a_sequential_passes_training_only_where_given_as_keras_does():
    # Keras (TensorFlow 2.21's, run): a layer of a Sequential called without `training`
    # takes its call's own default, not None
    seen = TrainingSeen()
    model = tt.keras.Sequential([layers.Dense(3, activation="relu"), seen])
    x = rng.standard_normal((2, 4)).astype(np.float32)
    first = model(x).numpy()
    model(x, training=False)
    model(x, training=True)
    assert seen.seen == [True, False, True]
    dense = model.layers[0]
    expected = np.maximum(x @ dense.kernel.numpy() + dense.bias.numpy(), 0)
    np.testing.assert_array_equal(first, expected)  # relu, the op itself, as numpy's


def test_dropout_scales_what_it_keeps_and_is_the_identity_outside_training():
    dropout = layers.Dropout(0.4, seed=7)
    x = np.ones((200, 50), np.float32)
    np.testing.assert_array_equal(dropout(x).numpy(), x)
    first, second = dropout(x, training=True).numpy(), dropout(x, training=True).numpy()
    assert set(np.unique(first)) == {0.0, np.float32(1 / 0.6)}
    assert abs(np.mean(first == 0) - 0.4) < 0.02  # 10,000 draws: 5 standard deviations
    assert not np.array_equal(first, second)  # a new mask per call


def test_dropout_in_a_compiled_step_draws_a_new_mask_per_call_as_eager_does():
    def run(compiled):
        dropout = layers.Dropout(0.5, seed=3)

        def call(x):
            return dropout(x, training=True)

        call = tt.function(call) if compiled else call
        return [call(np.ones((4, 8), np.float32)).numpy() for _ in range(3)]

    eager, compiled = run(False), run(True)
    for got, want in zip(compiled, eager):
        np.testing.assert_array_equal(got, want)
    assert not np.array_equal(compiled[0], compiled[1])


def _conv_reference(x, kernel, stride):
    kh, kw, _, _ = kernel.shape
    n, h, w, _ = x.shape
    rows, cols = (h - kh) // stride + 1, (w - kw) // stride + 1
    out = np.zeros((n, rows, cols, kernel.shape[-1]))
    for i in range(rows):
        for j in range(cols):
            patch = x[:, i * stride : i * stride + kh, j * stride : j * stride + kw, :]
            out[:, i, j, :] = np.tensordot(patch, kernel, axes=3)
    return out


def test_conv2d_and_max_pooling_layers():
    x = rng.standard_normal((2, 7, 7, 3)).astype(np.float32)
    conv = layers.Conv2D(4, 3, strides=2, activation="relu", bias_initializer="ones")
    y = conv(x)
    kernel = conv.kernel.numpy()
    assert kernel.shape == (3, 3, 3, 4) and y.shape == (2, 3, 3, 4)
    np.testing.assert_allclose(
        y.numpy(), np.maximum(_conv_reference(x, kernel, 2) + 1, 0), rtol=1e-5, atol=1e-5
    )
    pooled = layers.MaxPool2D(2)(x)
    want = x[:, :6, :6].reshape(2, 3, 2, 3, 2, 3).max(axis=(2, 4))
    np.testing.assert_array_equal(pooled.numpy(), want)
    same = layers.Conv2D(2, (3, 3), padding="same")
    assert same(x).shape == (2, 7, 7, 2)
    with pytest.raises(ValueError, match="padding must be one of"):
        layers.Conv2D(2, 3, padding="full")


def test_a_small_convnet_trains_compiled_as_it_does_eagerly():
    images = rng.standard_normal((8, 8, 8, 1)).astype(np.float32)
    labels = rng.integers(0, 2, 8)

    def train(compiled):
        tt.random.set_seed(0)
        model = tt.keras.Sequential(
            [
                layers.Conv2D(4, 3, activation="relu"),
                layers.MaxPool2D(2),
                layers.Flatten(),
                layers.Dense(2),
            ]
        )
        optimizer = tt.keras.optimizers.SGD(0.1)
        loss_fn = tt.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

        def step(x, y):
            with tt.GradientTape() as tape:
                loss = loss_fn(y, model(x))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        step = tt.function(step) if compiled else step
        return [float(step(images, labels)) for _ in range(4)]

    eager, compiled = train(False), train(True)
    np.testing.assert_allclose(compiled, eager, rtol=1e-5)
    assert compiled[-1] < compiled[0]


class TwoLayers(tt.keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = layers.Dense(4, activation="relu")
        self.out = layers.Dense(1)

    def call(self, inputs, training=False):
        return self.out(self.hidden(inputs))


def test_subclassed_models_nest_their_layers_names_and_need_compile_before_fit():
    model = TwoLayers()
    x = rng.standard_normal((3, 2)).astype(np.float32)
    y = model(x)
    hidden = np.maximum(x @ model.hidden.kernel.numpy(), 0)  # biases start at zero
    np.testing.assert_allclose(y.numpy(), hidden @ model.out.kernel.numpy(), rtol=1e-5)
    prefix = model.name
    assert [v.path for v in model.trainable_variables] == [
        f"{prefix}/{model.hidden.name}/kernel",
        f"{prefix}/{model.hidden.name}/bias",
        f"{prefix}/{model.out.name}/kernel",
        f"{prefix}/{model.out.name}/bias",
    ]
    with pytest.raises(ValueError, match="must be compiled first"):  # Keras 3's class
        model.fit(x, y)


def test_a_subclassed_model_lists_its_layers_and_gets_one_by_name_or_index():
    """Keras's `layers` of a subclassed model are the layers it holds, in the order set, and
    `get_layer` finds them (word2vec's `get_layer('w2v_embedding')`), with Keras's errors;
    Sequential's get_layer too (messages printed by TF 2.21)."""

    class Pair(tt.keras.Model):
        def __init__(self):
            super().__init__()
            self.first = tt.keras.layers.Dense(2, name="aa")
            self.second = tt.keras.layers.Dense(3, name="bb")

        def call(self, x):
            return self.second(self.first(x))

    model = Pair()
    model(tt.zeros((1, 2)))
    assert [layer.name for layer in model.layers] == ["aa", "bb"]
    assert model.get_layer("bb") is model.second and model.get_layer(index=0) is model.first
    assert model.get_layer(index=-1) is model.second
    with pytest.raises(ValueError, match=r"No such layer: zz. Existing layers are: \['aa', 'bb'\]"):
        model.get_layer("zz")
    with pytest.raises(ValueError, match="index 5 but model only has 2 layers"):
        model.get_layer(index=5)
    with pytest.raises(ValueError, match="Provide only a layer name or a layer index"):
        model.get_layer("aa", 0)
    with pytest.raises(ValueError, match="Provide either a layer name or layer index"):
        model.get_layer()
    with pytest.raises(AttributeError, match="`Model.layers` attribute is reserved"):
        model.layers = []
    sequential = tt.keras.Sequential([tt.keras.layers.Dense(2, name="only")])
    assert sequential.get_layer("only") is sequential.layers[0]


def test_input_layer_takes_keras_2s_input_shape_and_starts_a_sequential():
    """Keras 3 takes `InputLayer(input_shape=...)` with a warning (the CVAE tutorial's
    encoder), and a Sequential that starts with an InputLayer builds at once, its layers
    not counting it: Keras 3.15's output shapes and weights."""
    with pytest.warns(UserWarning, match="Argument `input_shape` is deprecated"):
        first = layers.InputLayer(input_shape=(28, 28, 1))
    assert first.batch_shape == (None, 28, 28, 1)
    assert layers.InputLayer(batch_input_shape=(4, 3)).batch_shape == (4, 3)
    model = tt.keras.Sequential(
        [first, layers.Conv2D(2, 3, strides=2), layers.Flatten(), layers.Dense(4)]
    )
    assert model.built and model.output_shape == (None, 4)
    assert [type(layer).__name__ for layer in model.layers] == ["Conv2D", "Flatten", "Dense"]
    assert [w.shape for w in model.get_weights()] == [(3, 3, 1, 2), (2,), (338, 4), (4,)]


def test_a_layers_trainable_weights_come_before_its_other_weights_as_in_keras():
    """Keras 3 lists a layer's own trainable weights first, then the others, each in the
    order they were made, then its sub-layers': get_weights and set_weights follow it (the
    order Keras 3.15 printed for this layer)."""

    class Mine(layers.Layer):
        def build(self, shape):
            self.fixed = self.add_weight(
                name="fixed", shape=(3,), initializer="zeros", trainable=False
            )
            self.kernel = self.add_weight(name="kernel", shape=(shape[-1], 2), initializer="ones")
            self.counts = self.add_weight(
                name="counts", shape=(1,), initializer="zeros", trainable=False
            )
            self.bias = self.add_weight(name="bias", shape=(2,), initializer="zeros")
            self.inner = layers.Dense(4)
            self.inner.build(shape)

        def call(self, inputs):
            return inputs @ self.kernel + self.bias

    layer = Mine()
    layer(np.ones((1, 5), np.float32))
    assert [w.shape for w in layer.get_weights()] == [(5, 2), (2,), (3,), (1,), (5, 4), (4,)]
    assert [w.path.split("/")[-1] for w in layer.non_trainable_weights] == ["fixed", "counts"]
    layer.set_weights([np.full(w.shape, k, np.float32) for k, w in enumerate(layer.get_weights())])
    assert [
        float(w.numpy().ravel()[0]) for w in (layer.fixed, layer.kernel, layer.counts, layer.bias)
    ] == [2.0, 0.0, 3.0, 1.0]


def test_identity_initializer_as_keras():
    init = tt.keras.initializers.get("identity")
    assert type(init).__name__ == "Identity"
    np.testing.assert_array_equal(
        tt.keras.initializers.Identity(gain=2.0)((2, 3)).numpy(), [[2, 0, 0], [0, 2, 0]]
    )
    assert tt.keras.initializers.Identity()((2, 2), dtype="float64").dtype == tt.float64
    assert type(tt.keras.initializers.get("IdentityInitializer")).__name__ == "Identity"
    with pytest.raises(
        ValueError, match="only be used for 2D matrices. Received: shape=.2, 2, 2. of rank 3"
    ):
        tt.keras.initializers.Identity()((2, 2, 2))
