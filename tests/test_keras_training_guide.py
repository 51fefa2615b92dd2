"""What Keras's training guide and TensorFlow's generative tutorials, run as held-out
programs, needed of tt.keras, each against the values TensorFlow 2.21 (Keras 3.15) printed
for the same program: metrics' add_weight, a None loss in a list, custom losses and
metrics in a loaded model's compile, per-output losses as Keras's compiled step logs them,
evaluate's dict order, TensorFlow's initializer names, and Conv2DTranspose in a functional
model of unknown batch."""

import os

import numpy as np
import pytest

import tracer as tt

rng = np.random.default_rng(0)
X = rng.normal(size=(10, 3)).astype(np.float32)
YA = rng.normal(size=(10, 1)).astype(np.float32)
YB = rng.normal(size=(10, 1)).astype(np.float32)


class CustomMSE(tt.keras.losses.Loss):
    def __init__(self, regularization_factor=0.1, name="custom_mse"):
        super().__init__(name=name)
        self.regularization_factor = regularization_factor

    def call(self, y_true, y_pred):
        mse = tt.reduce_mean(tt.square(y_true - y_pred))
        return mse + tt.reduce_mean(tt.square(0.5 - y_pred)) * self.regularization_factor

    def get_config(self):
        return {"regularization_factor": self.regularization_factor, "name": self.name}


class Positives(tt.keras.metrics.Metric):
    def __init__(self, name="positives", **kwargs):
        super().__init__(name=name, **kwargs)
        self.count = self.add_weight(shape=(), name="count", initializer="zeros")

    def update_state(self, y_true, y_pred, sample_weight=None):
        self.count.assign_add(tt.reduce_sum(tt.cast(y_pred > 0, "float32")))

    def result(self):
        return self.count


def _two_outputs(first="a", second="b"):
    inputs = tt.keras.Input((3,))
    outputs = [
        tt.keras.layers.Dense(1, name=first)(inputs),
        tt.keras.layers.Dense(1, name=second)(inputs),
    ]
    model = tt.keras.Model(inputs, outputs)
    model.set_weights(
        [np.random.default_rng(1).normal(size=w.shape).astype(np.float32) for w in model.weights]
    )
    return model


def test_per_output_losses_are_logged_as_kerass_compiled_and_eager_steps_log_them():
    """A compiled step weighs each batch's per-output loss as one (Keras on TensorFlow does
    not know the batch's size there), an eager one by its size; the total either way by
    size (TensorFlow 2.21: 1.55428/1.65103 compiled, 1.54327/1.55579 eager, total 3.09906)."""
    model = _two_outputs()
    for eager, (a_loss, b_loss) in ((False, (1.55428, 1.65103)), (True, (1.54327, 1.55579))):
        model.compile(
            optimizer=tt.keras.optimizers.SGD(0.0), loss=["mse", "mse"], run_eagerly=eager
        )
        history = model.fit(X, [YA, YB], batch_size=4, shuffle=False, verbose=0).history
        np.testing.assert_allclose(
            [history["a_loss"][0], history["b_loss"][0]], [a_loss, b_loss], rtol=1e-4
        )
        np.testing.assert_allclose(history["loss"][0], 3.09906, rtol=1e-4)
        logs = model.evaluate(X, [YA, YB], batch_size=4, verbose=0, return_dict=True)
        assert list(logs) == ["a_loss", "b_loss", "loss"]


def test_a_none_loss_leaves_its_output_without_one():
    inputs = tt.keras.Input((3,))
    model = tt.keras.Model(
        inputs,
        [tt.keras.layers.Dense(1)(inputs), tt.keras.layers.Dense(3, activation="softmax")(inputs)],
    )
    model.compile(optimizer="sgd", loss=[None, tt.keras.losses.CategoricalCrossentropy()])
    targets = np.eye(3, dtype=np.float32)[[0, 1, 2, 0, 1, 2, 0, 1, 2, 0]]
    history = model.fit(X, [YA, targets], batch_size=8, verbose=0).history
    assert list(history) == ["loss"]
    with pytest.raises(ValueError, match="Expected keys"):
        two = _two_outputs()
        two.compile(optimizer="sgd", loss={"a": "mse"})
        two.fit(X, {"a": YA, "b": YB}, verbose=0)


def test_a_loaded_model_compiles_with_custom_objects(tmp_path):
    model = tt.keras.Sequential([tt.keras.Input((3,)), tt.keras.layers.Dense(1)])
    model.set_weights([np.full((3, 1), 0.1, np.float32), np.zeros(1, np.float32)])
    model.compile(
        optimizer="adam", loss=CustomMSE(regularization_factor=0.2), metrics=[Positives()]
    )
    model.fit(X[:8], YA[:8], verbose=0, shuffle=False)
    path = os.path.join(tmp_path, "custom.keras")
    model.save(path)
    loaded = tt.keras.models.load_model(
        path, custom_objects={"CustomMSE": CustomMSE, "Positives": Positives}
    )
    assert type(loaded.loss) is CustomMSE and loaded.loss.regularization_factor == 0.2
    expected = model.evaluate(X[:8], YA[:8], verbose=0)
    np.testing.assert_allclose(loaded.evaluate(X[:8], YA[:8], verbose=0), expected, rtol=1e-6)


def test_tensorflows_initializer_names_and_transposed_convolutions_of_any_batch():
    np.testing.assert_array_equal(tt.constant_initializer(3.0)((2,)).numpy(), [3.0, 3.0])
    assert tt.zeros_initializer()((2,)).numpy().tolist() == [0.0, 0.0]
    assert tt.ones_initializer()((1,)).numpy().tolist() == [1.0]
    assert tt.random_normal_initializer(0.0, 0.02)((2, 3)).shape == (2, 3)
    draws = tt.random_uniform_initializer(-1.0, 1.0)((1000,)).numpy()
    assert draws.min() >= -1.0 and draws.max() <= 1.0
    inputs = tt.keras.Input(shape=[2, 2, 8])
    layer = tt.keras.layers.Conv2DTranspose(4, 4, strides=2, padding="same")
    model = tt.keras.Model(inputs, layer(inputs))
    assert model.output_shape == (None, 4, 4, 4)
    images = rng.normal(size=(3, 2, 2, 8)).astype(np.float32)
    direct = tt.nn.conv2d_transpose(images, layer.kernel, (3, 4, 4, 4), 2) + layer.bias
    np.testing.assert_allclose(model(images).numpy(), direct.numpy(), rtol=1e-6)


def test_integer_columns_normalize_and_string_inputs_load(tmp_path):
    """The structured-data tutorial's Normalization of an int64 column (Keras converts it to
    float32 first), and a model of a string Input saved and loaded (TensorFlow 2.21's
    values)."""
    layer = tt.keras.layers.Normalization(axis=None)
    layer.adapt(
        tt.data.Dataset.from_tensor_slices(np.array([[1], [2], [3], [6]], np.int64)).batch(2)
    )
    normalized = layer(np.array([[1], [2]], np.int64))
    assert normalized.dtype == tt.float32
    np.testing.assert_allclose(normalized.numpy().ravel(), [-1.069045, -0.5345225], rtol=1e-6)
    given = tt.keras.layers.Normalization(mean=3.0, variance=2.0)(np.array([[1], [2]]))
    np.testing.assert_allclose(given.numpy().ravel(), [-1.4142135, -0.70710677], rtol=1e-6)
    inputs = tt.keras.Input(shape=(1,), name="Type", dtype="string")
    lookup = tt.keras.layers.StringLookup(vocabulary=["Cat", "Dog"])
    model = tt.keras.Model(
        {"Type": inputs}, tt.keras.layers.CategoryEncoding(num_tokens=3)(lookup(inputs))
    )
    path = os.path.join(tmp_path, "types.keras")
    model.save(path)
    loaded = tt.keras.models.load_model(path)
    encoded = loaded({"Type": tt.constant([["Dog"], ["Cat"], ["Cow"]])})
    np.testing.assert_array_equal(encoded.numpy(), [[0, 0, 1], [0, 1, 0], [1, 0, 0]])


def test_what_the_transfer_learning_guide_reads_of_layers():
    """A layer's input and output (a model of a base model's inner values), trainable set
    back to True leaving BatchNormalization's moving statistics fixed, Dropout(0.0) without
    a seed, and an iterator's next(): TensorFlow 2.21's values."""
    inputs = tt.keras.Input((4,))
    dense, norm = tt.keras.layers.Dense(3), tt.keras.layers.BatchNormalization()
    model = tt.keras.Model(inputs, norm(dense(inputs)))
    assert dense.output.shape == norm.input.shape == norm.output.shape == (None, 3)
    inner = tt.keras.Model(model.inputs, [layer.output for layer in model.layers[1:]])
    assert [tuple(o.shape) for o in inner(np.ones((2, 4), np.float32))] == [(2, 3), (2, 3)]
    with pytest.raises(AttributeError, match="has never been called"):
        getattr(tt.keras.layers.Dense(2), "output")  # noqa: B009
    norm.trainable = False
    norm.trainable = True
    assert (len(norm.trainable_weights), len(norm.non_trainable_weights)) == (2, 2)
    dropped = tt.keras.Model(inputs, tt.keras.layers.Dense(1)(tt.keras.layers.Dropout(0.0)(inputs)))
    assert (len(dropped.variables), len(dropped.non_trainable_variables)) == (2, 0)
    batches = tt.data.Dataset.from_tensor_slices((np.arange(6.0), np.arange(6))).batch(4)
    first = batches.as_numpy_iterator().next()
    np.testing.assert_array_equal(first[0], [0.0, 1.0, 2.0, 3.0])


def test_convolutions_of_images_of_any_size_in_a_functional_model(tmp_path):
    """Input(shape=(None, None, 3)) into Conv2D, pooling and Conv1D (VGG without its top,
    fully convolutional models): the output shapes TensorFlow 2.21 gives, and the values of
    calls on two image sizes; the model saves and loads."""
    inputs = tt.keras.layers.Input(shape=(None, None, 3))
    features = tt.keras.layers.Conv2D(2, 3, padding="same")(inputs)
    pooled = tt.keras.layers.Conv2D(4, 3)(tt.keras.layers.MaxPooling2D()(features))
    model = tt.keras.Model(
        inputs, [features, pooled, tt.keras.layers.GlobalAveragePooling2D()(pooled)]
    )
    assert model.output_shape == [(None, None, None, 2), (None, None, None, 4), (None, 4)]
    model.set_weights([np.full(w.shape, 0.1, np.float32) for w in model.weights])
    sums = [float(tt.reduce_sum(o)) for o in model(tt.ones((1, 9, 11, 3)))]
    np.testing.assert_allclose(sums, [484.8, 123.36, 20.56], rtol=1e-5)
    assert [tuple(o.shape) for o in model(tt.ones((2, 16, 8, 3)))] == [
        (2, 16, 8, 2),
        (2, 6, 2, 4),
        (2, 4),
    ]
    path = os.path.join(tmp_path, "any_size.keras")
    model.save(path)
    loaded = tt.keras.models.load_model(path)
    np.testing.assert_allclose(
        [float(tt.reduce_sum(o)) for o in loaded(tt.ones((1, 9, 11, 3)))], sums, rtol=1e-6
    )
    sequence = tt.keras.Input(shape=(None, 10))
    conv1d = tt.keras.Model(sequence, tt.keras.layers.Conv1D(3, 3)(sequence))
    assert conv1d.output_shape == (None, None, 3) and conv1d(
        np.ones((2, 7, 10), np.float32)
    ).shape == (2, 5, 3)


def test_what_the_translation_tutorial_calls_and_saves(tmp_path):
    """TensorFlow's neural-machine-translation tutorial: attention called with its inputs
    by keyword, recurrent layers' and cells' initial states, and an export module of an
    eagerly built attention layer, a string op's pattern and a lookup's vocabulary saved
    and loaded (TensorFlow 2.21's values)."""
    attention = tt.keras.layers.MultiHeadAttention(key_dim=4, num_heads=1)
    query, value = tt.ones((1, 2, 4)), tt.ones((1, 3, 4))
    out, scores = attention(query=query, value=value, return_attention_scores=True)
    assert (out.shape, scores.shape) == ((1, 2, 4), (1, 1, 2, 3))
    with pytest.raises(TypeError, match="called without inputs"):
        tt.keras.layers.Dense(2)(units=3)
    assert [
        tuple(s.shape) for s in tt.keras.layers.GRU(4, return_state=True).get_initial_state(3)
    ] == [(3, 4)]
    assert [tuple(s.shape) for s in tt.keras.layers.LSTM(4).get_initial_state(3)] == [
        (3, 4),
        (3, 4),
    ]
    assert [tuple(s.shape) for s in tt.keras.layers.LSTMCell(4).get_initial_state(batch_size=2)] == [(2, 4), (2, 4)]  # fmt: skip

    class Export(tt.Module):
        def __init__(self):
            self.attention = attention
            self.ids = tt.keras.layers.StringLookup(
                vocabulary=["a", "b"], mask_token="", oov_token="[UNK]"
            )

        @tt.function(input_signature=[tt.TensorSpec([None, 3, 4], tt.float32)])
        def attend(self, x):
            return self.attention(x, x)

        @tt.function(input_signature=[tt.TensorSpec([None], tt.string)])
        def clean(self, texts):
            return tt.strings.regex_replace(texts, r" *\[END\] *$", "")

        @tt.function(input_signature=[tt.TensorSpec([None], tt.string)])
        def lookup(self, words):
            return self.ids(words)

    exported = Export()
    expected = exported.attend(tt.ones((2, 3, 4))).numpy()
    tt.saved_model.save(exported, str(tmp_path))
    loaded = tt.saved_model.load(str(tmp_path))
    np.testing.assert_allclose(loaded.attend(tt.ones((2, 3, 4))).numpy(), expected, rtol=1e-6)
    assert loaded.clean(tt.constant(["a b [END]", "c [END] "])).numpy().tolist() == [b"a b", b"c"]
    assert loaded.lookup(tt.constant(["b", "a", "c", ""])).numpy().tolist() == [3, 2, 1, 0]
