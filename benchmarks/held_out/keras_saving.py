"""Held-out: Keras's guide "Save, serialize, and export models" (Keras 3) as a user writes it
with tf.keras: model.save to a .keras file and load_model, one's own layer, function and
model with get_config/from_config registered with register_keras_serializable or given as
custom_objects (and in a custom_object_scope), serialize_keras_object and
deserialize_keras_object, the config and JSON of a model, weights files (.weights.h5),
get_weights/set_weights between models of one architecture, and a model trained by a custom
loop, saved, loaded and trained on. Weights from numpy, so that TF and tracer must agree."""

import json
import os
import tempfile
import time

import numpy as np
from engine import tf, which

rng = np.random.default_rng(0)
folder = tempfile.mkdtemp()
x = rng.normal(size=(64, 4)).astype(np.float32)
y = (x @ np.array([[1.0], [-0.5], [0.25], [2.0]], np.float32) + 0.1).astype(np.float32)


def numbers(values):
    return " ".join(f"{v:.5f}" for v in np.asarray(values).reshape(-1)[:6])


def set_numpy_weights(model, seed):
    draw = np.random.default_rng(seed)
    model.set_weights(
        [draw.normal(0.0, 0.4, w.shape).astype(np.float32) for w in model.get_weights()]
    )


def show_config(label, config):
    """A config as JSON with sorted keys, so that both engines print it alike."""
    print(which, label, json.dumps(config, sort_keys=True, default=str))


# --- model.save and load_model -------------------------------------------------------------


def get_model():
    inputs = tf.keras.Input(shape=(4,))
    hidden = tf.keras.layers.Dense(8, activation="relu")(inputs)
    outputs = tf.keras.layers.Dense(1)(hidden)
    model = tf.keras.Model(inputs, outputs)
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="mean_squared_error")
    return model


model = get_model()
set_numpy_weights(model, 1)
history = model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
print(which, "fit", numbers(history.history["loss"]))
path = os.path.join(folder, "my_model.keras")
model.save(path)
reconstructed = tf.keras.models.load_model(path)
print(which, "loaded", type(reconstructed).__name__, [layer.name for layer in reconstructed.layers])
print(
    which,
    "predict equal",
    np.allclose(model.predict(x, verbose=0), reconstructed.predict(x, verbose=0)),
)
# The optimizer's state came back too, so the reconstructed model trains on as the first.
more = model.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0)
more_loaded = reconstructed.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0)
print(which, "fit on", numbers(more.history["loss"]), numbers(more_loaded.history["loss"]))
print(
    which,
    "optimizer",
    type(reconstructed.optimizer).__name__,
    int(reconstructed.optimizer.iterations),
)

# --- one's own objects ---------------------------------------------------------------------


@tf.keras.utils.register_keras_serializable(package="MyLayers")
class CustomLayer(tf.keras.layers.Layer):
    def __init__(self, factor, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def call(self, x):
        return x * self.factor

    def get_config(self):
        config = super().get_config()
        config.update({"factor": self.factor})
        return config


@tf.keras.utils.register_keras_serializable(package="my_package", name="custom_fn")
def custom_fn(x):
    return x**2


def get_custom_model():
    inputs = tf.keras.Input(shape=(4,))
    mid = CustomLayer(0.5)(inputs)
    outputs = tf.keras.layers.Dense(1, activation=custom_fn)(mid)
    model = tf.keras.Model(inputs, outputs)
    model.compile(optimizer="rmsprop", loss="mean_squared_error")
    return model


model = get_custom_model()
set_numpy_weights(model, 2)
path = os.path.join(folder, "custom_model.keras")
model.save(path)
reconstructed = tf.keras.models.load_model(path)
print(which, "custom layer", type(reconstructed.layers[1]).__name__, reconstructed.layers[1].factor)
print(which, "custom predict", numbers(reconstructed.predict(x[:3], verbose=0)))
show_config("custom layer config", reconstructed.layers[1].get_config())
print(which, "activation", tf.keras.utils.serialize_keras_object(custom_fn))


class Unregistered(tf.keras.layers.Layer):
    def __init__(self, offset, **kwargs):
        super().__init__(**kwargs)
        self.offset = offset

    def call(self, x):
        return x + self.offset

    def get_config(self):
        return {**super().get_config(), "offset": self.offset}


inputs = tf.keras.Input(shape=(4,))
outputs = tf.keras.layers.Dense(2)(Unregistered(1.5)(inputs))
model = tf.keras.Model(inputs, outputs)
set_numpy_weights(model, 3)
path = os.path.join(folder, "unregistered.keras")
model.save(path)
try:
    tf.keras.models.load_model(path)
    print(which, "unregistered loaded without custom_objects")
except (TypeError, ValueError) as error:
    print(which, "unregistered:", type(error).__name__)
custom_objects = {"Unregistered": Unregistered}
loaded = tf.keras.models.load_model(path, custom_objects=custom_objects)
print(which, "custom_objects", numbers(loaded.predict(x[:2], verbose=0)))
with tf.keras.utils.custom_object_scope(custom_objects):
    scoped = tf.keras.models.load_model(path)
print(which, "custom_object_scope", numbers(scoped.predict(x[:2], verbose=0)))

# A model of one's own: its config is its constructor's argument.


@tf.keras.utils.register_keras_serializable(package="my_package")
class CustomModel(tf.keras.Model):
    def __init__(self, hidden_units):
        super().__init__()
        self.hidden_units = hidden_units
        self.dense_layers = [tf.keras.layers.Dense(u) for u in hidden_units]

    def call(self, inputs):
        x = inputs
        for layer in self.dense_layers:
            x = layer(x)
        return x

    def get_config(self):
        return {"hidden_units": self.hidden_units}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


model = CustomModel([16, 8, 1])
model(x[:2])
set_numpy_weights(model, 7)
model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="mean_squared_error")
history = model.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0)
print(which, "custom model fit", numbers(history.history["loss"]))
path = os.path.join(folder, "custom_model_subclassed.keras")
model.save(path)
loaded = tf.keras.models.load_model(path)
print(which, "custom model loaded", type(loaded).__name__, loaded.hidden_units)
print(
    which,
    "custom model equal",
    np.allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0)),
)
more = model.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0)
more_loaded = loaded.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0)
print(
    which,
    "custom model fit on",
    numbers(more.history["loss"]),
    numbers(more_loaded.history["loss"]),
)

# --- serialize_keras_object / deserialize_keras_object ------------------------------------

layer = CustomLayer(3.0, name="triple")
serialized = tf.keras.utils.serialize_keras_object(layer)
show_config("serialized", serialized)
restored = tf.keras.utils.deserialize_keras_object(serialized)
print(which, "deserialized", type(restored).__name__, restored.name, restored.factor)
dense_serialized = tf.keras.utils.serialize_keras_object(tf.keras.layers.Dense(3, name="d3"))
show_config("serialized dense", dense_serialized)
dense = tf.keras.utils.deserialize_keras_object(dense_serialized)
print(which, "deserialized dense", type(dense).__name__, dense.name, dense.units)
loss = tf.keras.utils.deserialize_keras_object(
    tf.keras.utils.serialize_keras_object(
        tf.keras.losses.CategoricalCrossentropy(from_logits=True, label_smoothing=0.1)
    )
)
print(which, "deserialized loss", type(loss).__name__)
show_config("loss config", loss.get_config())

# --- configs and JSON ----------------------------------------------------------------------

layer = tf.keras.layers.Dense(3, activation="relu")
layer_config = layer.get_config()
show_config("dense config", {k: v for k, v in layer_config.items() if k != "name"})
new_layer = tf.keras.layers.Dense.from_config(layer_config)
print(which, "from_config", new_layer.units, new_layer.activation.__name__)

sequential = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(2, name="only")])
config = sequential.get_config()
print(which, "sequential config keys", sorted(config), [c["class_name"] for c in config["layers"]])
new_sequential = tf.keras.Sequential.from_config(config)
print(which, "sequential from_config", [layer.name for layer in new_sequential.layers])

model = get_model()
set_numpy_weights(model, 4)
json_config = model.to_json()
parsed = json.loads(json_config)
print(which, "json", parsed["class_name"], sorted(parsed["config"]))
print(which, "json layers", [lyr["class_name"] for lyr in parsed["config"]["layers"]])
new_model = tf.keras.models.model_from_json(json_config)
print(which, "model_from_json", [w.shape for w in new_model.get_weights()])
new_model.set_weights(model.get_weights())
print(
    which,
    "json predict equal",
    np.allclose(new_model.predict(x[:5], verbose=0), model.predict(x[:5], verbose=0)),
)

# A layer whose build takes more than a shape keeps its own build config.


@tf.keras.utils.register_keras_serializable(package="my_custom_package")
class LayerWithCustomBuild(tf.keras.layers.Layer):
    def __init__(self, units=32, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def call(self, inputs):
        return tf.matmul(inputs, self.w) + self.b

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


layer = LayerWithCustomBuild(units=3)
layer.layer_init = "ones"
layer.build((4,), "ones")
path = os.path.join(folder, "custom_build.keras")
tf.keras.Sequential([tf.keras.Input((4,)), layer]).save(path)
loaded = tf.keras.models.load_model(path)
print(which, "custom build", sorted(layer.get_config()), numbers(loaded.predict(x[:2], verbose=0)))

cloned = tf.keras.models.clone_model(get_model())
print(which, "clone_model", type(cloned).__name__, [type(lyr).__name__ for lyr in cloned.layers])

# --- weights: get_weights/set_weights and .weights.h5 --------------------------------------


def create_layer():
    layer = tf.keras.layers.Dense(64, activation="relu", name="dense_2")
    layer.build((None, 784))
    return layer


layer_1 = create_layer()
layer_1.set_weights([rng.normal(size=(784, 64)).astype(np.float32), np.zeros(64, np.float32)])
layer_2 = create_layer()
layer_2.set_weights(layer_1.get_weights())
print(
    which,
    "layer transfer",
    all(np.array_equal(a, b) for a, b in zip(layer_1.get_weights(), layer_2.get_weights())),
)

functional = get_model()
set_numpy_weights(functional, 5)


class SubclassedModel(tf.keras.Model):
    def __init__(self, units=8):
        super().__init__()
        self.units = units
        self.hidden = tf.keras.layers.Dense(units, activation="relu")
        self.out = tf.keras.layers.Dense(1)

    def call(self, inputs):
        return self.out(self.hidden(inputs))


subclassed = SubclassedModel()
subclassed(tf.ones((1, 4)))
subclassed.set_weights(functional.get_weights())
print(which, "model transfer", numbers(subclassed(x[:2])), numbers(functional(x[:2])))

weights_path = os.path.join(folder, "my_model.weights.h5")
functional.save_weights(weights_path)
fresh = get_model()
fresh.load_weights(weights_path)
print(which, "load_weights", numbers(fresh.predict(x[:2], verbose=0)))
print(which, "weights", [tuple(w.shape) for w in fresh.weights])

# --- export: a SavedModel for inference ---------------------------------------------------

export_path = os.path.join(folder, "exported")
functional.export(export_path, verbose=False)
reloaded_artifact = tf.saved_model.load(export_path)
print(
    which,
    "export serve",
    numbers(reloaded_artifact.serve(x[:2])),
    numbers(reloaded_artifact.serve(x[:1])),
)

# --- a model trained with a custom loop, saved, loaded and trained on -----------------------

loss_fn = tf.keras.losses.MeanSquaredError()


def train(model, optimizer, epochs):
    @tf.function
    def train_step(xb, yb):
        with tf.GradientTape() as tape:
            loss = loss_fn(yb, model(xb, training=True))
        grads = tape.gradient(loss, model.trainable_weights)
        optimizer.apply_gradients(zip(grads, model.trainable_weights))
        return loss

    losses, times = [], []
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(16)
    for _ in range(epochs):
        start = time.perf_counter()
        for xb, yb in dataset:
            loss = train_step(xb, yb)
        times.append(time.perf_counter() - start)
        losses.append(float(loss))
    return losses, times


inputs = tf.keras.Input(shape=(4,))
outputs = tf.keras.layers.Dense(1)(
    CustomLayer(2.0)(tf.keras.layers.Dense(8, activation="tanh")(inputs))
)
model = tf.keras.Model(inputs, outputs)
set_numpy_weights(model, 6)
model.compile(optimizer=tf.keras.optimizers.SGD(0.02), loss=loss_fn)
losses, _ = train(model, model.optimizer, 3)
print(which, "custom loop", numbers(losses))
path = os.path.join(folder, "custom_loop.keras")
model.save(path)
restored = tf.keras.models.load_model(path)
print(which, "restored", type(restored.optimizer).__name__, int(restored.optimizer.iterations))
losses_a, times = train(model, model.optimizer, 3)
losses_b, _ = train(restored, restored.optimizer, 3)
print(which, "continued", numbers(losses_a))
print(which, "restored continued", numbers(losses_b))
print(which, f"custom loop epoch {min(times[1:]) * 1e3:.2f} ms ({len(x) // 16} steps)")
