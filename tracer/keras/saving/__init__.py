"""Keras 3's model files: `.keras` (config and weights in one zip) and `.weights.h5`.

    model.save("mlp.keras")                          # Keras loads it too
    model = tt.keras.models.load_model("mlp.keras")  # also a file Keras wrote
    model.save_weights("mlp.weights.h5")             # weights only, Keras's layout
    model.load_weights("mlp.weights.h5")             # or from a .keras file

The formats are Keras 3's (see docs/keras_files.md): `archive` reads and writes the zip,
`weights_file` the HDF5 layout of the weights, `layer_configs` and `model_configs` the JSON
configs. A `.keras` file is treated as untrusted input: it is read in memory, never extracted,
and nothing in it is run. HDF5 needs h5py (`pip install 'tracer[keras]'`).
"""

import datetime
import importlib.metadata
import io
import os
import sys
import warnings

from tracer.keras import extensions
from tracer.keras.layers import budget
from tracer.keras.registration import (
    get_registered_name,
    get_registered_object,
    register_keras_serializable,
)
from tracer.keras.saving import archive, model_configs, vocabularies, weights_file

# The Keras version whose format tracer writes (metadata.json's keras_version).
KERAS_FORMAT_VERSION = "3.15.1"
_LEGACY_SUFFIXES = (".h5", ".hdf5")


def save_model(model, filepath, overwrite=True, zipped=True, **kwargs):
    """Write `model` (Sequential or functional) to a `.keras` file: its config, its
    weights and, when compiled, what `compile` was given and the optimizer's state.
    `filepath` is a path ending in `.keras`, or a binary file open for writing;
    `overwrite=False` raises FileExistsError for an existing path.

    >>> model = tt.keras.Sequential([tt.keras.layers.Dense(2, input_shape=(3,))])
    >>> file = io.BytesIO()
    >>> model.save(file)
    >>> tt.keras.models.load_model(io.BytesIO(file.getvalue())).layers[0].units
    2
    """
    if "save_format" in kwargs:
        raise ValueError(
            "the save_format argument is gone in Keras 3: give a file path ending in .keras"
        )
    if kwargs:
        raise ValueError(f"invalid keyword arguments for save_model: {sorted(kwargs)}")
    if zipped is False:
        raise ValueError("tracer writes zipped .keras files only (zipped=True)")
    if _is_path(filepath) and not os.fspath(filepath).endswith(".keras"):
        raise ValueError(
            "invalid file path extension for saving: a model is saved as a .keras file "
            f"(tracer does not write Keras 2's legacy .h5 files). Received: filepath={filepath}"
        )
    if not model.built:
        warnings.warn(
            "you are saving a model that has not been built yet: it may hold no weights; "
            "call it on some data first",
            stacklevel=3,
        )
    config = model_configs.model_config(model)
    weights = weights_file.write(model)
    metadata = {
        "keras_version": KERAS_FORMAT_VERSION,
        "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S"),
        "tracer_version": _tracer_version(),
    }
    buffer = io.BytesIO()
    archive.write(buffer, metadata, config, weights)
    _write(filepath, buffer.getvalue(), overwrite)


def save_weights(model, filepath, overwrite=True):
    """Write `model`'s weights to a `.weights.h5` file in Keras 3's layout, which Keras's
    `load_weights` reads into a model of the same architecture."""
    if _is_path(filepath) and not os.fspath(filepath).endswith(".weights.h5"):
        raise ValueError(f"the file name must end in .weights.h5. Received: filepath={filepath}")
    if not model.built:
        raise ValueError(
            "you are saving a model that has not been built yet: build it first by calling "
            "it on some data"
        )
    _write(filepath, weights_file.write(model), overwrite)


def load_weights(model, filepath, skip_mismatch=False):
    """Set `model`'s weights from a `.weights.h5` or `.keras` file (Keras's or tracer's) of a
    model of the same architecture: layers are matched by their place in the model, not by
    name. A layer whose variables differ in number or shape raises ValueError, or with
    `skip_mismatch=True` keeps its weights (with a warning).

    >>> path = os.path.join(tempfile.mkdtemp(), "mlp.weights.h5")
    >>> first = tt.keras.Sequential([tt.keras.layers.Dense(2, input_shape=(3,))])
    >>> first.save_weights(path)
    >>> second = tt.keras.Sequential([tt.keras.layers.Dense(2, input_shape=(3,))])
    >>> second.load_weights(path)
    >>> bool((second.layers[0].kernel.numpy() == first.layers[0].kernel.numpy()).all())
    True
    """
    if not model.built:
        raise ValueError(
            "you are loading weights into a model that has not been built yet: build it "
            "first by calling it on some data"
        )
    path = os.fspath(filepath)
    if path.endswith(".keras"):
        _check_exists(path)
        data = archive.read(path)[2]
    elif path.endswith(".weights.h5"):
        data = _read_weights_file(path)
    elif path.endswith(_LEGACY_SUFFIXES):
        raise ValueError(
            f"{path!r} is named as a Keras 2 (legacy) HDF5 file, which tracer does not read; "
            "tracer reads .keras and .weights.h5 files"
        )
    else:
        raise ValueError(
            f"file format not supported: filepath={path}. tracer reads Keras 3's .keras and "
            ".weights.h5 files"
        )
    for message in weights_file.read(model, data, skip_mismatch=skip_mismatch):
        warnings.warn(message, stacklevel=3)


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    """The model a `.keras` file holds, built and with its weights; compiled as it was,
    with its optimizer's state, when it was saved compiled and `compile` is True.

    `custom_objects` maps class names to the user's layer classes. `safe_mode` is accepted
    for Keras's signature: tracer never runs code from a file, so a file holding a Lambda
    layer or a serialized function is refused either way.
    """
    del safe_mode  # NOTE: always safe (see the docstring)
    if _is_path(filepath):
        path = os.fspath(filepath)
        _check_exists(path)
        if path.endswith(_LEGACY_SUFFIXES):
            raise ValueError(
                f"{path!r} is a Keras 2 (legacy) HDF5 model, which tracer does not read; "
                "load it in Keras and save it again as .keras"
            )
        if not path.endswith(".keras"):
            raise ValueError(
                f"file format not supported: filepath={path}. tracer loads Keras 3's .keras files"
            )
    _, config, data = archive.read(filepath)
    # the weights the config declares fit in the file's (stored as Keras stores them, or
    # compressed no more than a zip member may be)
    limit = archive.MAX_EXPANSION * len(data) + archive.BOMB_FLOOR
    with budget.bounded(limit, archive.label(filepath)):
        model = model_configs.model_from_config(config, custom_objects, compile=compile)
    for message in weights_file.read(model, data):
        warnings.warn(message, stacklevel=3)
    vocabularies.restore(model, archive.vocabularies(filepath))
    return model


def _is_path(filepath):
    return isinstance(filepath, (str, os.PathLike))


def _check_exists(path):
    if not os.path.isfile(path):
        raise ValueError(f"file not found: filepath={path}")


def _read_weights_file(path):
    _check_exists(path)
    size = os.path.getsize(path)
    if size > archive.MAX_WEIGHTS_BYTES:
        raise ValueError(f"{path!r} holds {size} bytes, more than tracer reads")
    with open(path, "rb") as file:
        return file.read()


def _write(filepath, data, overwrite):
    """Write `data` to the path (or the open file) given, and nowhere else; the bytes are
    complete before the file is opened, so a failure while saving leaves an older file."""
    if not _is_path(filepath):
        filepath.write(data)
        return
    try:
        with open(filepath, "wb" if overwrite else "xb") as file:
            file.write(data)
    except FileExistsError:
        raise FileExistsError(
            f"{os.fspath(filepath)!r} exists and overwrite=False: not overwriting it"
        ) from None


def _tracer_version():
    """The installed tracer's version (metadata.json's tracer_version)."""
    try:
        return importlib.metadata.version("tracer")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree, not installed
        return "unknown"


__all__ = [
    "get_registered_name",
    "get_registered_object",
    "load_model",
    "load_weights",
    "register_keras_serializable",
    "save_model",
    "save_weights",
]


extensions.saving = sys.modules[__name__]  # what Model.save and load_model use
