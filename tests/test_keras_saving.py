"""Keras 3's `.keras` and `.weights.h5` files: files written by TensorFlow's Keras 3.15
(tests/data/keras, see its README) load in tracer with Keras's outputs, tracer's files load back
in tracer (and in Keras: checked by hand, see docs/keras_files.md), and a file that is not
what it claims to be is refused with an error that says why."""

import doctest
import io
import json
import os
import pathlib
import struct
import sys
import tempfile
import zipfile

import numpy as np
import pytest

import tracer as tt
from tracer.keras import saving
from tracer.keras.layers.input_layer import Input
from tracer.keras.saving import archive, weights_file

h5py = pytest.importorskip("h5py")  # a guard: the test extra installs h5py

DATA = pathlib.Path(__file__).parent / "data" / "keras"
layers = tt.keras.layers
rng = np.random.default_rng(11)


def expected(name):
    data = np.load(DATA / f"{name}.npz")
    return data["x"], data["y"]


# --- the same architectures, built in tracer ---------------------------------------------------


def mlp():
    return tt.keras.Sequential(
        [
            layers.Dense(8, activation="relu", input_shape=(4,)),
            layers.Dropout(0.25),
            layers.Dense(3, activation="tanh"),
            layers.Dense(2),
        ]
    )


def cnn():
    return tt.keras.Sequential(
        [
            layers.Conv2D(4, 3, padding="same", activation="relu", input_shape=(8, 8, 2)),
            layers.MaxPooling2D(),
            layers.Conv2D(3, (2, 2), use_bias=False),
            layers.Flatten(),
            layers.Dense(2, activation="softmax"),
        ]
    )


def embedding():
    return tt.keras.Sequential(
        [
            layers.Embedding(10, 4, input_shape=(5,)),
            layers.Flatten(),
            layers.Dense(1, activation="sigmoid"),
        ]
    )


def functional():
    x = Input((4,), name="features")
    h = layers.Dropout(0.5)(layers.Dense(6, activation="relu", name="hidden")(x))
    return tt.keras.Model(x, layers.Dense(2, name="out")(h), name="chain")


ARCHITECTURES = {"mlp": mlp, "cnn": cnn, "embedding": embedding, "functional": functional}


# --- Keras's files in tracer -------------------------------------------------------------------


@pytest.mark.parametrize("name", ["mlp", "cnn", "embedding", "functional"])
def test_a_keras_file_loads_with_kerass_outputs(name):
    model = tt.keras.models.load_model(DATA / f"{name}.keras")
    x, y = expected(name)
    np.testing.assert_allclose(model(x, training=False).numpy(), y, rtol=1e-5, atol=1e-6)


def test_a_functional_keras_file_with_a_merge_layer_loads():
    if not hasattr(layers, "Add"):
        pytest.skip("tracer has no Add layer yet")
    model = tt.keras.models.load_model(DATA / "functional_add.keras")
    x, y = expected("functional_add")
    np.testing.assert_allclose(model(x).numpy(), y, rtol=1e-5, atol=1e-6)


def test_a_loaded_model_keeps_kerass_layer_names_and_settings():
    model = tt.keras.models.load_model(DATA / "cnn.keras")
    conv, pool, conv_1, flatten, dense = model.layers
    assert (conv.filters, conv.kernel_size, conv.padding, conv.strides) == (
        4,
        (3, 3),
        "SAME",
        (1, 1),
    )
    assert (pool.pool_size, conv_1.use_bias, dense.units) == ((2, 2), False, 2)
    assert conv.activation is tt.keras.activations.relu
    assert [type(layer).__name__ for layer in model.layers][3] == "Flatten"
    assert conv.name == "conv2d" and model.built


@pytest.mark.parametrize("name", list(ARCHITECTURES))
@pytest.mark.parametrize("suffix", [".weights.h5", ".keras"])
def test_kerass_weights_load_into_a_model_built_in_tracer(name, suffix):
    model = ARCHITECTURES[name]()
    model.load_weights(DATA / f"{name}{suffix}")
    x, y = expected(name)
    np.testing.assert_allclose(model(x, training=False).numpy(), y, rtol=1e-5, atol=1e-6)


def test_a_compiled_keras_file_loads_compiled_with_its_optimizer_state():
    model = tt.keras.models.load_model(DATA / "mlp_compiled.keras")
    optimizer = model.optimizer
    assert model.compiled and isinstance(optimizer, tt.optimizers.Adam)
    assert optimizer.learning_rate.numpy() == pytest.approx(0.01)
    assert optimizer.iterations.numpy() == 1  # Keras's fit took one step
    with h5py.File(DATA / "mlp_compiled.weights.h5", "r") as file:
        stored = file["optimizer/vars"]
        assert len(stored) == 2 + 2 * len(model.trainable_variables)
        last = model.trainable_variables[-1]  # Keras's order: m, v of each variable in turn
        np.testing.assert_array_equal(optimizer.get_slot(last, "m").numpy(), stored["12"][()])
        np.testing.assert_array_equal(optimizer.get_slot(last, "v").numpy(), stored["13"][()])
    x, y = expected("mlp_compiled")
    np.testing.assert_allclose(model(x).numpy(), y, rtol=1e-5, atol=1e-6)
    plain = tt.keras.models.load_model(DATA / "mlp_compiled.keras", compile=False)
    assert not plain.compiled


# --- tracer's files ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(ARCHITECTURES))
def test_tracers_keras_file_loads_back_with_the_same_outputs(name, tmp_path):
    model = ARCHITECTURES[name]()
    x, _ = expected(name)
    y = model(x).numpy()
    model.save(tmp_path / "m.keras")
    loaded = tt.keras.models.load_model(tmp_path / "m.keras")
    assert [type(a) for a in loaded.layers] == [type(b) for b in model.layers]
    np.testing.assert_array_equal(loaded(x).numpy(), y)


def test_a_sequential_built_by_its_first_call_saves_its_input_shape(tmp_path):
    model = tt.keras.Sequential([layers.Conv2D(2, 3), layers.Flatten(), layers.Dense(1)])
    x = rng.standard_normal((2, 5, 5, 3)).astype(np.float32)
    y = model(x).numpy()
    model.save(tmp_path / "m.keras")
    loaded = tt.keras.models.load_model(tmp_path / "m.keras")
    np.testing.assert_array_equal(loaded(x).numpy(), y)


def test_save_weights_then_load_weights_into_a_new_model(tmp_path):
    first, second = cnn(), cnn()
    first.save_weights(tmp_path / "w.weights.h5")
    second.load_weights(tmp_path / "w.weights.h5")
    x, _ = expected("cnn")
    np.testing.assert_array_equal(second(x).numpy(), first(x).numpy())


def test_tracers_weights_file_has_kerass_layout():
    """The groups and shapes of Keras's own file for the same architecture."""
    buffer = io.BytesIO(weights_file.write(mlp()))
    with h5py.File(buffer, "r") as ours, h5py.File(DATA / "mlp.weights.h5", "r") as keras:
        assert _layout(ours) == _layout(keras)
        assert ours["layers/dense_1/vars"].attrs["name"] == mlp_layer_name(ours)


def mlp_layer_name(file):
    return file["layers/dense_1/vars"].attrs["name"]


def _layout(file):
    entries = []
    file.visititems(lambda name, item: entries.append((name, getattr(item, "shape", None))))
    return [e for e in entries if not e[0].startswith("optimizer")]


def test_a_compiled_model_saves_what_compile_was_given(tmp_path):
    model = mlp()
    model.compile(optimizer=tt.optimizers.Adam(0.005), loss="mse", metrics=["mae"])
    model.save(tmp_path / "m.keras")
    config = json.loads(zipfile.ZipFile(tmp_path / "m.keras").read("config.json"))
    compiled = config["compile_config"]
    assert compiled["optimizer"]["class_name"] == "Adam"
    assert compiled["optimizer"]["config"]["learning_rate"] == pytest.approx(0.005)
    assert (compiled["loss"], compiled["metrics"]) == ("mse", ["mae"])
    loaded = tt.keras.models.load_model(tmp_path / "m.keras")
    assert loaded.compiled and loaded.optimizer.learning_rate.numpy() == pytest.approx(0.005)


def test_loss_and_metric_objects_and_optimizer_options_in_compile_config(tmp_path):
    model = mlp()
    model.compile(
        optimizer="sgd",
        loss=tt.keras.losses.MeanSquaredError(reduction="sum"),
        metrics=[tt.keras.metrics.MeanAbsoluteError()],
    )
    model.save(tmp_path / "m.keras")
    loaded = tt.keras.models.load_model(tmp_path / "m.keras")
    assert loaded.loss.reduction == "sum"
    assert type(loaded._compile_config["metrics"][0]) is tt.keras.metrics.MeanAbsoluteError

    def clip(config):
        config["compile_config"]["optimizer"]["config"]["clipnorm"] = 1.0
        return config

    path = rewrite(DATA / "mlp_compiled.keras", tmp_path / "c.keras", clip)
    loaded = tt.keras.models.load_model(path)  # a Keras file's clipnorm is read (no warning)
    assert loaded.compiled and loaded.optimizer.clipnorm == 1.0


@pytest.mark.parametrize(
    "optimizer",
    [
        tt.optimizers.Adam(0.01),
        tt.optimizers.SGD(0.1, momentum=0.9),
        tt.optimizers.RMSprop(0.01, momentum=0.5, centered=True),
        tt.optimizers.Adagrad(0.1),
    ],
    ids=lambda optimizer: type(optimizer).__name__,
)
def test_the_optimizer_state_goes_through_the_file(tmp_path, optimizer):
    model = mlp()
    model.compile(optimizer=optimizer, loss="mse")
    variables = model.trainable_variables
    for _ in range(2):
        optimizer.apply_gradients(
            (tt.constant(rng.standard_normal(v.shape), v.dtype), v) for v in variables
        )
    model.save(tmp_path / "m.keras")
    loaded = tt.keras.models.load_model(tmp_path / "m.keras")
    assert loaded.optimizer.iterations.numpy() == 2
    assert loaded.optimizer.learning_rate.numpy() == pytest.approx(optimizer.learning_rate.numpy())
    ours = [v.numpy() for v in optimizer.variables()[1:]]
    theirs = [v.numpy() for v in loaded.optimizer.variables()[1:]]
    assert len(ours) == len(theirs) > 0
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a, b)


def test_the_archive_holds_kerass_members_and_metadata(tmp_path):
    mlp().save(tmp_path / "m.keras")
    with zipfile.ZipFile(tmp_path / "m.keras") as file:
        assert file.namelist() == ["metadata.json", "config.json", "model.weights.h5"]
        metadata = json.loads(file.read("metadata.json"))
        config = json.loads(file.read("config.json"))
    assert set(metadata) >= {"keras_version", "date_saved"}
    assert config["class_name"] == "Sequential" and config["build_config"]["input_shape"] == [
        None,
        4,
    ]
    assert config["config"]["layers"][0]["class_name"] == "InputLayer"


def test_save_and_load_through_open_files():
    buffer = io.BytesIO()
    model = mlp()
    model.save(buffer)
    x, _ = expected("mlp")
    loaded = tt.keras.models.load_model(io.BytesIO(buffer.getvalue()))
    np.testing.assert_array_equal(loaded(x).numpy(), model(x).numpy())


# --- paths, overwriting, unbuilt models ----------------------------------------------------------


def test_overwrite_false_refuses_an_existing_file(tmp_path):
    path = tmp_path / "m.keras"
    path.write_bytes(b"mine")
    with pytest.raises(FileExistsError, match="overwrite=False"):
        mlp().save(path, overwrite=False)
    weights = tmp_path / "m.weights.h5"
    weights.write_bytes(b"mine")
    with pytest.raises(FileExistsError):
        mlp().save_weights(weights, overwrite=False)
    assert path.read_bytes() == weights.read_bytes() == b"mine"
    mlp().save(path)  # overwrite=True by default
    assert zipfile.is_zipfile(path)


def test_kerass_suffix_rules(tmp_path):
    model = mlp()
    with pytest.raises(ValueError, match=r"\.keras"):
        model.save(tmp_path / "m.h5")
    with pytest.raises(ValueError, match=r"must end in \.weights\.h5"):
        model.save_weights(tmp_path / "m.h5")
    with pytest.raises(ValueError, match="legacy"):
        model.load_weights(tmp_path / "m.h5")
    with pytest.raises(ValueError, match="not supported"):
        model.load_weights(tmp_path / "m.ckpt")
    with pytest.raises(ValueError, match="not found"):
        tt.keras.models.load_model(tmp_path / "absent.keras")
    with pytest.raises(ValueError, match="save_format"):
        model.save(tmp_path / "m.keras", save_format="tf")
    assert list(tmp_path.iterdir()) == []


def test_unbuilt_models_as_in_keras(tmp_path):
    model = tt.keras.Sequential([layers.Dense(3)])
    with pytest.raises(ValueError, match="not been built"):
        model.save_weights(tmp_path / "m.weights.h5")
    with pytest.raises(ValueError, match="not been built"):
        model.load_weights(DATA / "mlp.weights.h5")
    with pytest.warns(UserWarning, match="not been built"):
        model.save(tmp_path / "m.keras")


def test_a_missing_h5py_names_the_keras_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "h5py", None)
    with pytest.raises(ImportError, match=r"tracer\[keras\]"):
        weights_file.write(mlp())


# --- untrusted files ----------------------------------------------------------------------------


def rewrite(source, target, config=None, weights=None, drop=()):
    """A copy of the .keras file `source` with its config or weights replaced."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for name in old.namelist():
            if name in drop:
                continue
            data = old.read(name)
            if name == "config.json" and config is not None:
                data = json.dumps(config(json.loads(data)))
            if name == "model.weights.h5" and weights is not None:
                data = weights
            new.writestr(name, data)
    return target


def set_layer(index, **changes):
    def change(config):
        entry = config["config"]["layers"][index]
        for key, value in changes.items():
            if key in ("class_name", "module"):
                entry[key] = value
            else:
                entry["config"][key] = value
        return config

    return change


def test_a_layer_tracer_lacks_is_named(tmp_path):
    path = rewrite(DATA / "mlp.keras", tmp_path / "m.keras", set_layer(1, class_name="ConvLSTM2D"))
    with pytest.raises(ValueError, match="a layer ConvLSTM2D that tracer does not have"):
        tt.keras.models.load_model(path)


def test_a_custom_layer_needs_custom_objects(tmp_path):
    change = set_layer(2, class_name="MyDropout", module="mypackage")
    path = rewrite(DATA / "mlp.keras", tmp_path / "m.keras", change)
    # Keras 3.15 raises TypeError ("Could not locate class") for a class of one's own
    with pytest.raises(TypeError, match="MyDropout.*custom_objects"):
        tt.keras.models.load_model(path)
    model = tt.keras.models.load_model(path, custom_objects={"MyDropout": FromConfigDropout})
    assert type(model.layers[1]) is FromConfigDropout


class Scale(layers.Layer):
    """A user's layer with a weight and a config of its own."""

    def __init__(self, factor=2.0, **kwargs):
        super().__init__(**kwargs)
        self.factor = factor

    def build(self, input_shape):
        self.w = self.add_weight("w", (input_shape[-1],), initializer="ones")

    def call(self, x):
        return x * self.w * self.factor

    def get_config(self):
        return {"factor": self.factor}

    @classmethod
    def from_config(cls, config):
        return cls(factor=config["factor"], name=config["name"])


def test_a_users_layer_goes_through_the_file_with_custom_objects(tmp_path):
    model = tt.keras.Sequential([layers.Dense(3, input_shape=(2,)), Scale(3.0)])
    model.layers[1].w.assign([1.0, 2.0, 3.0])
    x = rng.standard_normal((2, 2)).astype(np.float32)
    model.save(tmp_path / "m.keras")
    with pytest.raises(TypeError, match="could not locate class 'Scale'"):
        tt.keras.models.load_model(tmp_path / "m.keras")
    loaded = tt.keras.models.load_model(tmp_path / "m.keras", custom_objects={"Scale": Scale})
    assert loaded.layers[1].factor == 3.0
    np.testing.assert_array_equal(loaded(x).numpy(), model(x).numpy())


class FromConfigDropout(layers.Dropout):
    @classmethod
    def from_config(cls, config):
        return cls(config["rate"], name=config["name"])


@pytest.mark.parametrize("safe_mode", [True, False])
def test_code_in_a_file_is_never_run(tmp_path, safe_mode):
    def add_lambda(config):
        config["config"]["layers"].append(
            {
                "module": "keras.layers",
                "class_name": "Lambda",
                "config": {"name": "evil", "function": {"class_name": "__lambda__"}},
            }
        )
        return config

    path = rewrite(DATA / "mlp.keras", tmp_path / "m.keras", add_lambda)
    with pytest.raises(ValueError, match="never runs code"):
        tt.keras.models.load_model(path, safe_mode=safe_mode)


@pytest.mark.parametrize(
    "change, message",
    [
        (set_layer(4, units=5), r"dense_2/kernel has shape \(3, 5\), the file's has \(3, 2\)"),
        (set_layer(1, use_bias=False), "has 1 variables"),
        (set_layer(1, dtype="mixed_bfloat16"), "dtype policy"),
        (set_layer(1, kernel_regularizer={"class_name": "Mine"}), "unknown regularizer"),
        (set_layer(1, lora_rank=4), "lora_rank=4"),
    ],
)
def test_a_config_that_does_not_match_is_refused(tmp_path, change, message):
    path = rewrite(DATA / "mlp.keras", tmp_path / "m.keras", change)
    with pytest.raises(ValueError, match=message):
        tt.keras.models.load_model(path)


def test_a_files_regularizers_and_constraints_are_read(tmp_path):
    change = set_layer(
        1,
        kernel_constraint={"class_name": "NonNeg", "config": {}},
        bias_regularizer={"class_name": "L1", "config": {"l1": 0.25}},
    )
    model = tt.keras.models.load_model(rewrite(DATA / "mlp.keras", tmp_path / "m.keras", change))
    dense = model.layers[0]
    assert isinstance(dense.kernel_constraint, tt.keras.constraints.NonNeg)
    assert dense.kernel.constraint is dense.kernel_constraint
    np.testing.assert_allclose(
        [float(v) for v in model.losses], [0.25 * np.abs(dense.bias.numpy()).sum()], rtol=1e-6
    )


def test_mismatched_weights_are_refused_or_skipped(tmp_path):
    model = mlp()
    before = [w.copy() for w in model.get_weights()]
    with pytest.raises(ValueError, match="layer 'dense.*shape"):
        model.load_weights(DATA / "cnn.weights.h5")
    assert all(np.array_equal(a, b) for a, b in zip(before, model.get_weights()))
    small = tt.keras.Sequential([layers.Dense(8, input_shape=(4,)), layers.Dense(2)])
    small.save_weights(tmp_path / "s.weights.h5")
    with pytest.warns(UserWarning, match="skipped"):
        model.load_weights(tmp_path / "s.weights.h5", skip_mismatch=True)
    assert np.array_equal(model.get_weights()[0], small.get_weights()[0])


@pytest.mark.parametrize("member", ["config.json", "model.weights.h5"])
def test_a_missing_member_is_named(tmp_path, member):
    path = rewrite(DATA / "mlp.keras", tmp_path / "m.keras", drop=(member,))
    with pytest.raises(ValueError, match=f"no {member}"):
        tt.keras.models.load_model(path)


def test_files_that_are_not_keras_files(tmp_path):
    (tmp_path / "text.keras").write_text("hello")
    with pytest.raises(ValueError, match="not a .keras file"):
        tt.keras.models.load_model(tmp_path / "text.keras")
    path = rewrite(DATA / "mlp.keras", tmp_path / "m.keras", weights=b"not hdf5")
    with pytest.raises(ValueError, match="not an HDF5 file"):
        tt.keras.models.load_model(path)
    path = rewrite(DATA / "mlp.keras", tmp_path / "j.keras", config=lambda c: [c])
    with pytest.raises(ValueError, match="no model config"):
        tt.keras.models.load_model(path)


def test_absurd_sizes_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(archive, "MAX_WEIGHTS_BYTES", 1000)
    with pytest.raises(ValueError, match="declares .* more than"):
        tt.keras.models.load_model(DATA / "mlp.keras")
    monkeypatch.undo()
    path = tmp_path / "bomb.keras"
    with zipfile.ZipFile(DATA / "mlp.keras") as old, zipfile.ZipFile(path, "w") as new:
        new.writestr("config.json", old.read("config.json"))
        new.writestr("model.weights.h5", b"\0" * (4 << 20), zipfile.ZIP_DEFLATED)  # ~1000:1
    with pytest.raises(ValueError, match="decompression bomb"):
        tt.keras.models.load_model(path)


@pytest.mark.parametrize("units", [10**9, 20_000_000])
def test_a_config_declaring_weights_larger_than_the_file_is_refused_before_building(
    tmp_path, units
):
    """A Dense layer of a billion units (terabytes) or of twenty million (gigabytes, which
    the machine would make before comparing them with the file's) in a file of kilobytes:
    a ValueError naming the layer and its weight, with nothing made."""
    path = rewrite(DATA / "mlp.keras", tmp_path / "large.keras", config=set_layer(1, units=units))
    with pytest.raises(
        ValueError, match=r"layer 'dense.*' would make its weight 'kernel' of shape"
    ):
        tt.keras.models.load_model(path)
    assert tt.keras.models.load_model(DATA / "mlp.keras").count_params() > 0


def zip_entries(data):
    """`(central directory entry, local header)` offsets of each member of the zip `data`."""
    end = data.rindex(b"PK\x05\x06")
    (count,) = struct.unpack_from("<H", data, end + 10)
    (entry,) = struct.unpack_from("<I", data, end + 16)
    for _ in range(count):
        name, extra, comment = struct.unpack_from("<3H", data, entry + 28)
        yield entry, struct.unpack_from("<I", data, entry + 42)[0]
        entry += 46 + name + extra + comment


@pytest.mark.parametrize(
    "claimed, message", [(4 << 20, "the whole file holds"), (None, "decompression bomb")]
)
def test_a_bomb_that_claims_to_store_more_is_refused(tmp_path, claimed, message):
    # zipfile reads a deflated member to the end of its stream whatever stored size the
    # directory gives, so a claimed size must not let a bomb pass the expansion check
    path = tmp_path / "bomb.keras"
    with zipfile.ZipFile(DATA / "mlp.keras") as old, zipfile.ZipFile(path, "w") as new:
        new.writestr("config.json", old.read("config.json"))
        new.writestr("model.weights.h5", b"\0" * (4 << 20), zipfile.ZIP_DEFLATED)
    data = bytearray(path.read_bytes())
    entry = list(zip_entries(data))[-1][0]
    struct.pack_into("<I", data, entry + 20, claimed or len(data))  # the stored size
    path.write_bytes(data)
    with pytest.raises(ValueError, match=f"model.weights.h5 .*{message}"):
        tt.keras.models.load_model(path)


def damaged_zip(kind):
    """Keras's mlp.keras with every member marked encrypted, or compressed by a method
    zipfile lacks (99, AES), or needing a zip version it lacks, or with config.json's bytes
    changed under its CRC."""
    data = bytearray((DATA / "mlp.keras").read_bytes())
    for central, local in zip_entries(data):
        if kind == "encrypted":
            data[central + 8] |= 1
            data[local + 6] |= 1
        elif kind == "method":
            struct.pack_into("<H", data, central + 10, 99)
            struct.pack_into("<H", data, local + 8, 99)
        elif kind == "version":
            data[central + 6] = 99
    if kind == "crc":
        data[data.index(b"Sequential")] ^= 0x20
    return bytes(data)


@pytest.mark.parametrize(
    "kind, message",
    [
        ("encrypted", "config.json cannot be read .*encrypted"),
        ("method", "config.json cannot be read .*compression method"),
        ("crc", "config.json cannot be read .*CRC"),
        ("version", "not a .keras file .*zip file version"),
    ],
)
def test_a_damaged_or_unreadable_zip_raises_valueerror(tmp_path, kind, message):
    path = tmp_path / "m.keras"
    path.write_bytes(damaged_zip(kind))
    with pytest.raises(ValueError, match=f"m.keras'.*{message}"):
        tt.keras.models.load_model(path)


def test_links_in_the_weights_file_are_refused(tmp_path):
    buffer = io.BytesIO()
    with h5py.File(DATA / "mlp.weights.h5", "r") as keras, h5py.File(buffer, "w") as file:
        keras.copy("layers", file)
        keras.copy("vars", file)
        del file["layers/dense/vars/0"]
        file["layers/dense/vars/0"] = h5py.ExternalLink("/etc/passwd", "/x")
    path = rewrite(DATA / "mlp.keras", tmp_path / "m.keras", weights=buffer.getvalue())
    with pytest.raises(ValueError, match="ExternalLink"):
        tt.keras.models.load_model(path)


def weights_with_kernel(make):
    """The bytes of Keras's mlp.weights.h5 with the first Dense layer's kernel made again by
    `make(group, kernel)`, which writes the array `kernel` as the dataset `0` of `group`."""
    buffer = io.BytesIO()
    with h5py.File(DATA / "mlp.weights.h5", "r") as keras, h5py.File(buffer, "w") as file:
        keras.copy("layers", file)
        keras.copy("vars", file)
        kernel = file["layers/dense/vars/0"][()]
        del file["layers/dense/vars/0"]
        make(file["layers/dense/vars"], kernel)
    return buffer.getvalue()


@pytest.mark.parametrize(
    "storage, message",
    [("external", "keeps its values in an external file"), ("virtual", "is a virtual dataset")],
)
def test_datasets_stored_outside_the_weights_file_are_refused(tmp_path, storage, message):
    # external storage would read any file on the machine (a FIFO hangs the load), a virtual
    # dataset other HDF5 files (or its fill value when they are missing)
    outside = tmp_path / "outside"

    def make(group, kernel):
        if storage == "external":
            outside.write_bytes(kernel.tobytes())
            unlimited = [(str(outside), 0, h5py.h5f.UNLIMITED)]
            group.create_dataset("0", kernel.shape, kernel.dtype, external=unlimited)
        else:
            with h5py.File(outside, "w") as other:
                other["kernel"] = kernel
            layout = h5py.VirtualLayout(kernel.shape, kernel.dtype)
            layout[:] = h5py.VirtualSource(str(outside), "kernel", kernel.shape)
            group.create_virtual_dataset("0", layout)

    path = rewrite(DATA / "mlp.keras", tmp_path / "m.keras", weights=weights_with_kernel(make))
    with pytest.raises(ValueError, match=f"layers/dense/vars/0 {message}"):
        tt.keras.models.load_model(path)


def gzip_kernel(group, kernel):
    group.create_dataset("0", data=kernel, chunks=kernel.shape, compression="gzip")


def damaged_weights(kind):
    """Keras's mlp.weights.h5 with one thing damaged: h5py raised KeyError, RuntimeError,
    OverflowError and OSError for these, not ValueError."""
    if kind == "compressed chunk":
        data = bytearray(weights_with_kernel(gzip_kernel))
        with h5py.File(io.BytesIO(bytes(data)), "r") as file:
            chunk = file["layers/dense/vars/0"].id.get_chunk_info(0)
        middle = chunk.byte_offset + chunk.size // 2
        data[middle - 8 : middle + 8] = bytes(16)
        return bytes(data)
    data = bytearray((DATA / "mlp.weights.h5").read_bytes())
    if kind == "object header":
        with h5py.File(DATA / "mlp.weights.h5", "r") as file:
            data[h5py.h5o.get_info(file["layers/dense/vars/0"].id).addr] ^= 0xFF  # its version
    elif kind == "b-tree":
        data = data.replace(b"TREE", b"TREX")  # the signatures of the groups' B-trees
    elif kind == "end of file":
        data[48:56] = (1 << 63).to_bytes(8, "little")  # the superblock's end-of-file address
    return bytes(data)


@pytest.mark.parametrize("kind", ["object header", "b-tree", "end of file", "compressed chunk"])
def test_a_damaged_weights_file_raises_valueerror(tmp_path, kind):
    path = tmp_path / "d.weights.h5"
    path.write_bytes(damaged_weights(kind))
    with pytest.raises(ValueError, match="weights file is damaged|not an HDF5 file"):
        mlp().load_weights(path)


def test_a_chunked_compressed_dataset_loads():
    model = mlp()
    weights_file.read(model, weights_with_kernel(gzip_kernel))
    with h5py.File(DATA / "mlp.weights.h5", "r") as keras:
        np.testing.assert_array_equal(model.layers[0].kernel.numpy(), keras["layers/dense/vars/0"])


class Net(tt.keras.Model):
    """A subclassed model: its weights file uses attribute names, and class names in lists."""

    def __init__(self):
        super().__init__()
        self.encoder = layers.Dense(3, activation="relu")
        self.blocks = [layers.Dense(3), layers.Dense(2)]

    def call(self, x):
        x = self.encoder(x)
        for block in self.blocks:
            x = block(x)
        return x


def test_a_subclassed_model_saves_weights_in_kerass_layout_but_no_config(tmp_path):
    first, second = Net(), Net()
    x = rng.standard_normal((2, 4)).astype(np.float32)
    first(x), second(x)
    first.save_weights(tmp_path / "n.weights.h5")
    with h5py.File(tmp_path / "n.weights.h5", "r") as file:
        groups = []
        file.visititems(lambda name, item: groups.append(name) if name.endswith("vars") else None)
    # what Keras 3.15 writes for the same class (checked with TensorFlow 2.21)
    assert groups == ["blocks/dense/vars", "blocks/dense_1/vars", "encoder/vars", "vars"]
    second.load_weights(tmp_path / "n.weights.h5")
    np.testing.assert_array_equal(second(x).numpy(), first(x).numpy())
    with pytest.raises(ValueError, match="subclassed model"):
        first.save(tmp_path / "n.keras")


def test_a_sequential_inside_a_model_goes_through_the_file(tmp_path):
    inner = tt.keras.Sequential([layers.Dense(3, activation="relu", input_shape=(4,))])
    x = Input((4,))
    model = tt.keras.Model(x, layers.Dense(2)(inner(x)))
    outer = tt.keras.Sequential([inner, layers.Dense(1)])
    data = rng.standard_normal((2, 4)).astype(np.float32)
    for i, saved in enumerate((model, outer)):
        y = saved(data).numpy()
        saved.save(tmp_path / f"m{i}.keras")
        loaded = tt.keras.models.load_model(tmp_path / f"m{i}.keras")
        assert type(loaded.layers[1 - i]) is tt.keras.Sequential
        np.testing.assert_array_equal(loaded(data).numpy(), y)


def test_a_shared_layer_saved_once_under_its_first_path():
    shared = layers.Dense(2, input_shape=(2,))
    model = tt.keras.Sequential([shared])
    model(np.ones((1, 2), np.float32))
    paths = [path for path, _ in weights_file.saveables(model)]
    assert paths == ["", "layers/dense"]


def test_saving_public_names_and_examples():
    assert saving.__all__ == [
        "get_registered_name",
        "get_registered_object",
        "load_model",
        "load_weights",
        "register_keras_serializable",
        "save_model",
        "save_weights",
    ]
    globs = {"tt": tt, "io": io, "os": os, "tempfile": tempfile}
    for module in (saving, archive, weights_file):
        result = doctest.testmod(module, extraglobs=globs, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0, module.__name__


def test_a_registered_layer_of_ones_own_loads_without_custom_objects(tmp_path):
    """Keras's idiom: `register_keras_serializable`, `super().get_config()`, and no
    from_config of one's own: the file names the class `package>name`."""

    @tt.keras.saving.register_keras_serializable(package="Tests")
    class Shift(layers.Layer):
        def __init__(self, amount=1.0, **kwargs):
            super().__init__(**kwargs)
            self.amount = amount

        def call(self, x):
            return x + self.amount

        def get_config(self):
            config = super().get_config()
            config.update(amount=self.amount)
            return config

    assert tt.keras.utils.get_registered_name(Shift) == "Tests>Shift"
    assert tt.keras.utils.get_registered_object("Tests>Shift") is Shift
    model = tt.keras.Sequential([tt.keras.Input((2,)), Shift(2.5, name="shift"), layers.Dense(1)])
    model.save(tmp_path / "m.keras")
    loaded = tt.keras.models.load_model(tmp_path / "m.keras")
    assert type(loaded.layers[0]) is Shift and loaded.layers[0].amount == 2.5
    x = rng.standard_normal((3, 2)).astype(np.float32)
    np.testing.assert_allclose(loaded(x).numpy(), model(x).numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="does not have a get_config"):
        tt.keras.utils.register_keras_serializable()(type("Plain", (), {}))


def test_a_layer_whose_argument_has_no_config_is_refused_by_name(tmp_path):
    # an RNN of a cell: Keras writes the cell's config, which tracer's saving does not
    model = tt.keras.Sequential(
        [tt.keras.Input((5, 3)), tt.keras.layers.RNN(tt.keras.layers.LSTMCell(4), name="rnn")]
    )
    with pytest.raises(ValueError, match=r"layer 'rnn'.* argument cell=LSTMCell \(RNN\)"):
        model.save(tmp_path / "rnn.keras")


def test_a_constant_initializer_of_an_array_goes_through_the_file_as_keras_writes_it(tmp_path):
    """The imbalanced-data tutorial's output bias, Constant(np.log([pos / neg])): its config
    holds the array as Keras 3.15 writes one (printed by TF 2.21), which tracer reads back,
    as it reads Keras's `__tensor__` form."""
    bias = tt.keras.initializers.Constant(np.log([0.02]))
    keras_form = {"class_name": "__numpy__", "config": {"value": [-3.912023005428146], "dtype": "float64"}}  # fmt: skip
    assert bias.get_config() == {"value": keras_form}
    model = tt.keras.Sequential(
        [tt.keras.Input((3,)), layers.Dense(1, activation="sigmoid", bias_initializer=bias)]
    )
    model.save(tmp_path / "biased.keras")
    loaded = tt.keras.models.load_model(tmp_path / "biased.keras")
    np.testing.assert_allclose(loaded.layers[-1].bias_initializer((1,)).numpy(), [-3.912023])
    tensor_form = {"class_name": "__tensor__", "config": {"value": [1.5], "dtype": "float32"}}
    constant = tt.keras.initializers.get(
        {"class_name": "Constant", "config": {"value": tensor_form}}
    )
    np.testing.assert_array_equal(constant((2,)).numpy(), [1.5, 1.5])
    assert tt.keras.initializers.Constant(np.float32(2.0)).get_config() == {"value": 2.0}
