"""Keras 3's entries of objects outside a file: `serialize_keras_object` and
`deserialize_keras_object`, functions of one's own as activations, `custom_object_scope`, and
the config keys Keras 3.15 writes; the expected entries were printed by TF 2.21 (Keras 3.15)."""

import io

import numpy as np
import pytest

import tracer as tt

pytest.importorskip("h5py")  # (.keras files)

keras = tt.keras
utils = tt.keras.utils
POLICY = {
    "module": "keras",
    "class_name": "DTypePolicy",
    "config": {"name": "float32"},
    "registered_name": None,
}
GLOROT = {
    "module": "keras.initializers",
    "class_name": "GlorotUniform",
    "config": {"seed": None, "input_axes": None, "output_axes": None},
    "registered_name": None,
}


@utils.register_keras_serializable(package="my_package", name="custom_fn")
def custom_fn(x):
    return x**2


def plain_fn(x):
    return x + 1.0


@utils.register_keras_serializable(package="MyLayers")
class CustomLayer(keras.layers.Layer):
    def __init__(self, factor, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def call(self, x):
        return x * self.factor

    def get_config(self):
        return {**super().get_config(), "factor": self.factor}


class Plain(keras.layers.Layer):
    def __init__(self, offset=1.0, **kwargs):
        super().__init__(**kwargs)
        self.offset = offset

    def call(self, x):
        return x + self.offset

    def get_config(self):
        return {**super().get_config(), "offset": self.offset}


def function_entry(name):
    return {"module": "builtins", "class_name": "function", "config": name, "registered_name": "function"}  # fmt: skip


def test_a_function_is_keras_entry_of_a_function_by_its_registered_name():
    assert utils.serialize_keras_object(custom_fn) == function_entry("my_package>custom_fn")
    assert utils.serialize_keras_object(plain_fn) == function_entry("plain_fn")
    assert keras.layers.Dense(1, activation=custom_fn).get_config()["activation"] == (
        function_entry("my_package>custom_fn")
    )
    assert utils.deserialize_keras_object(function_entry("my_package>custom_fn")) is custom_fn
    entry = function_entry("plain_fn")
    assert utils.deserialize_keras_object(entry, custom_objects={"plain_fn": plain_fn}) is plain_fn
    assert utils.serialize_keras_object([1, "a", None, 3.5]) == [1, "a", None, 3.5]


def model_with(activation, layer):
    inputs = keras.Input((3,))
    model = keras.Model(inputs, keras.layers.Dense(2, activation=activation)(layer(inputs)))
    model.set_weights([np.arange(6, dtype=np.float32).reshape(3, 2) / 6, np.ones(2, np.float32)])
    return model


def test_functions_and_layers_of_ones_own_go_through_a_file():
    x = np.array([[1.0, -2.0, 0.5]], np.float32)
    model = model_with(custom_fn, CustomLayer(0.5))
    file = io.BytesIO()
    model.save(file)
    loaded = keras.models.load_model(io.BytesIO(file.getvalue()))
    assert loaded.layers[2].activation is custom_fn and loaded.layers[1].factor == 0.5
    np.testing.assert_allclose(loaded(x).numpy(), model(x).numpy(), rtol=1e-6)

    model = model_with(plain_fn, Plain(1.5))
    file = io.BytesIO()
    model.save(file)
    with pytest.raises(TypeError, match="could not locate class 'Plain'"):
        keras.models.load_model(io.BytesIO(file.getvalue()))
    custom = {"Plain": Plain, "plain_fn": plain_fn}
    loaded = keras.models.load_model(io.BytesIO(file.getvalue()), custom_objects=custom)
    np.testing.assert_allclose(loaded(x).numpy(), model(x).numpy(), rtol=1e-6)
    with utils.custom_object_scope(custom):
        assert utils.get_custom_objects()["Plain"] is Plain
        scoped = keras.models.load_model(io.BytesIO(file.getvalue()))
    assert "Plain" not in utils.get_custom_objects()
    np.testing.assert_allclose(scoped(x).numpy(), model(x).numpy(), rtol=1e-6)


def test_serialize_and_deserialize_layers_as_keras_does():
    entry = utils.serialize_keras_object(CustomLayer(2.0, name="c"))
    assert entry == {
        "module": None,
        "class_name": "CustomLayer",
        "config": {"name": "c", "trainable": True, "dtype": POLICY, "factor": 2.0},
        "registered_name": "MyLayers>CustomLayer",
    }
    again = utils.deserialize_keras_object(entry)
    assert type(again) is CustomLayer and again.factor == 2.0 and again.name == "c"
    plain = utils.serialize_keras_object(Plain(name="p"))
    assert plain["module"] is None and plain["registered_name"] == "Plain"
    with pytest.raises(TypeError, match="could not locate class 'Plain'"):
        utils.deserialize_keras_object(plain)
    assert type(utils.deserialize_keras_object(plain, custom_objects={"Plain": Plain})) is Plain

    dense = keras.layers.Dense(2, name="dd")
    dense.build((None, 3))
    entry = utils.serialize_keras_object(dense)
    assert entry["build_config"] == {"input_shape": [None, 3]}
    assert entry["config"]["kernel_initializer"] == GLOROT
    assert entry["config"]["quantization_config"] is None
    again = utils.deserialize_keras_object(entry)
    assert again.built and again.kernel.shape == (3, 2) and again.units == 2


def test_serialize_and_deserialize_losses_and_optimizers():
    loss = keras.losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1)
    entry = utils.serialize_keras_object(loss)
    assert entry["module"] == "keras.losses" and entry["registered_name"] is None
    again = utils.deserialize_keras_object(entry)
    assert type(again) is type(loss) and again.get_config() == loss.get_config()
    optimizer = utils.deserialize_keras_object(
        utils.serialize_keras_object(keras.optimizers.Adam(0.5))
    )
    assert type(optimizer).__name__ == "Adam" and float(optimizer.learning_rate) == 0.5


def test_configs_have_the_keys_keras_3_15_writes():
    assert keras.initializers.GlorotUniform().get_config() == GLOROT["config"]
    config = keras.layers.Dense(3, activation="relu").get_config()
    assert config["quantization_config"] is None and config["dtype"] == POLICY
    assert keras.layers.Dense.from_config(config).units == 3
    with pytest.raises(NotImplementedError, match="quantization_config"):
        keras.layers.Dense(3, quantization_config={"mode": "int8"})
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
    assert model.get_config()["layers"][0]["config"] == {
        "batch_shape": [None, 4],
        "dtype": "float32",
        "sparse": False,
        "ragged": False,
        "name": "input_layer",
        "optional": False,
    }


def test_variance_scaling_fans_along_given_axes():
    init = keras.initializers.VarianceScaling(
        1.0, "fan_in", "uniform", seed=0, input_axes=[0], output_axes=[1, 2]
    )
    values = init((4, 2, 8)).numpy()
    # fan_in 4 (axis 0), not 8 (the default fans of a 3-d kernel): the limit is sqrt(3 / 4)
    assert np.sqrt(3.0 / 8) < np.abs(values).max() <= np.sqrt(3.0 / 4)
    assert init.get_config()["input_axes"] == [0]


@utils.register_keras_serializable(package="my_package")
class CustomModel(keras.Model):
    """Keras's saving guide's model of one's own: its config is its constructor's argument."""

    def __init__(self, hidden_units):
        super().__init__()
        self.hidden_units = hidden_units
        self.dense_layers = [keras.layers.Dense(u) for u in hidden_units]

    def call(self, inputs):
        for layer in self.dense_layers:
            inputs = layer(inputs)
        return inputs

    def get_config(self):
        return {"hidden_units": self.hidden_units}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def test_a_subclassed_model_with_a_config_goes_through_a_file():
    x = np.linspace(-1, 1, 10, dtype=np.float32).reshape(2, 5)
    model = CustomModel([4, 3])
    model(x)
    draw = np.random.default_rng(0)
    model.set_weights([draw.normal(size=w.shape).astype(np.float32) for w in model.get_weights()])
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    model.fit(x, np.ones((2, 3), np.float32), verbose=0)
    file = io.BytesIO()
    model.save(file)
    # the entry TF 2.21 (Keras 3.15) writes for this model, less its compile_config
    entry = tt.keras.saving.archive.read(io.BytesIO(file.getvalue()))[1]
    assert {k: v for k, v in entry.items() if k != "compile_config"} == {
        "module": None,
        "class_name": "CustomModel",
        "config": {"hidden_units": [4, 3]},
        "registered_name": "my_package>CustomModel",
        "build_config": {"input_shape": [2, 5]},
    }
    loaded = keras.models.load_model(io.BytesIO(file.getvalue()))
    assert type(loaded) is CustomModel and int(loaded.optimizer.iterations) == 1
    np.testing.assert_array_equal(loaded(x).numpy(), model(x).numpy())

    class NoConfig(keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = keras.layers.Dense(1)

        def call(self, inputs):
            return self.dense(inputs)

    plain = NoConfig()
    plain(x)
    with pytest.raises(ValueError, match="needs a get_config method"):
        plain.save(io.BytesIO())


@utils.register_keras_serializable(package="my_custom_package")
class LayerWithCustomBuild(keras.layers.Layer):
    """The saving guide's layer whose build takes more than a shape: its config starts from
    the base one (`dict(units=..., **super().get_config())`), its build config is its own."""

    def __init__(self, units=32, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def call(self, inputs):
        return tt.matmul(inputs, self.w) + self.b

    def get_config(self):
        return dict(units=self.units, **super().get_config())

    def build(self, input_shape, layer_init):
        self.w = self.add_weight(shape=(input_shape[-1], self.units), initializer=layer_init)
        self.b = self.add_weight(shape=(self.units,), initializer=layer_init)

    def get_build_config(self):
        return {"layer_init": self.layer_init, "input_shape": (4,)}

    def build_from_config(self, config):
        self.layer_init = config["layer_init"]
        self.build(config["input_shape"], config["layer_init"])


def test_a_layer_of_ones_own_builds_from_its_own_build_config():
    layer = LayerWithCustomBuild(units=2)
    assert layer.get_config() == {
        "units": 2,
        "name": layer.name,
        "trainable": True,
        "dtype": POLICY,
    }
    layer.layer_init = "ones"
    layer.build((4,), "ones")
    file = io.BytesIO()
    with pytest.warns(UserWarning, match="not been built"):  # (Keras warns so too)
        keras.Sequential([layer]).save(file)
    loaded = keras.models.load_model(io.BytesIO(file.getvalue()))
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    # printed by TF 2.21 for this model, loaded back
    want = [[-1.9090909957885742] * 2, [1.0, 1.0], [3.909090995788574] * 2]
    np.testing.assert_allclose(loaded(x).numpy(), want, rtol=1e-6)


def test_a_subclass_of_a_keras_layer_extends_that_layers_config():
    class Wide(keras.layers.Dense):
        def get_config(self):
            return {**super().get_config(), "extra": 1}

    config = Wide(3, activation="relu").get_config()
    assert config["units"] == 3 and config["activation"] == "relu" and config["extra"] == 1
    assert config["kernel_initializer"] == GLOROT


def test_export_serves_the_model_for_any_batch_size(tmp_path):
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    sequential = keras.Sequential(
        [keras.Input((4,)), keras.layers.Dense(2, kernel_initializer="ones")]
    )
    sequential.export(str(tmp_path / "sequential"), verbose=False)
    served = tt.saved_model.load(str(tmp_path / "sequential"))
    # printed by TF 2.21: export(...) then tf.saved_model.load(...).serve(x)
    want = [[-2.909090995788574] * 2, [0.0, 0.0], [2.909090995788574] * 2]
    np.testing.assert_allclose(served.serve(x).numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(served.serve(x[:1]).numpy(), want[:1], rtol=1e-6)
    model = CustomModel([3, 2])
    model(x)
    model.export(str(tmp_path / "subclassed"), verbose=False)
    served = tt.saved_model.load(str(tmp_path / "subclassed"))
    np.testing.assert_allclose(served.serve(x[:2]).numpy(), model(x[:2]).numpy(), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="onnx"):
        model.export(str(tmp_path / "o"), format="onnx")


def test_a_layer_built_by_hand_is_not_built_again_by_its_call():
    """Keras's build leaves the layer built (TF 2.21: one pair of weights, its first call's
    inputs need not be what build was given)."""
    builds = []

    class Counted(keras.layers.Layer):
        def build(self, input_shape):
            builds.append(input_shape)
            self.w = self.add_weight(shape=(input_shape[-1], 2), initializer="ones")

        def call(self, x):
            return tt.matmul(x, self.w)

    layer = Counted()
    layer.build((None, 3))
    assert layer.built
    layer(np.ones((1, 3), np.float32))
    assert builds == [(None, 3)] and len(layer.weights) == 1


@utils.register_keras_serializable(package="my_custom_package")
class ModelWithCustomCompile(keras.Model):
    """The saving guide's model that keeps its own compile config."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense1 = keras.layers.Dense(8, activation="relu")
        self.dense2 = keras.layers.Dense(4, activation="softmax")

    def call(self, x):
        return self.dense2(self.dense1(x))

    def get_config(self):
        return {}

    def compile(self, optimizer, loss_fn):
        super().compile(optimizer=optimizer, loss=loss_fn)
        self.model_optimizer = optimizer
        self.loss_fn = loss_fn

    def get_compile_config(self):
        return {"model_optimizer": self.model_optimizer, "loss_fn": self.loss_fn}

    def compile_from_config(self, config):
        optimizer = utils.deserialize_keras_object(config["model_optimizer"])
        loss_fn = utils.deserialize_keras_object(config["loss_fn"])
        self.compile(optimizer=optimizer, loss_fn=loss_fn)


def test_a_model_of_ones_own_compiles_from_its_own_compile_config():
    x = np.linspace(-1, 1, 20, dtype=np.float32).reshape(5, 4)
    y = np.eye(4, dtype=np.float32)[[0, 1, 2, 3, 0]]
    model = ModelWithCustomCompile()
    model(x)
    draw = np.random.default_rng(0)
    model.set_weights([draw.normal(size=w.shape).astype(np.float32) for w in model.get_weights()])
    model.compile(optimizer="adam", loss_fn="categorical_crossentropy")
    # the losses TF 2.21 prints for this program: fit, then fit again after save and load
    first = model.fit(x, y, verbose=0, shuffle=False).history["loss"]
    np.testing.assert_allclose(first, [3.0958800315856934], rtol=1e-5)
    file = io.BytesIO()
    model.save(file)
    loaded = keras.models.load_model(io.BytesIO(file.getvalue()))
    assert loaded.loss_fn == "categorical_crossentropy"
    assert type(loaded.optimizer).__name__ == "Adam"
    again = loaded.fit(x, y, verbose=0, shuffle=False).history["loss"]
    np.testing.assert_allclose(again, [3.0763847827911377], rtol=1e-5)
