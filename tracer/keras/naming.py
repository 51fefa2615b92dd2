"""Keras's names: the unique ones of layers, `dense`, `dense_1`, ... per base name, for the
process (layers, Inputs and KerasTensors take theirs from here), and the paths of the
variables of layers and metrics (`keras_named`)."""

import collections
import contextlib

_name_counts = collections.Counter()


def unique_layer_name(base):
    count = _name_counts[base]
    _name_counts[base] += 1
    return base if count == 0 else f"{base}_{count}"


def reset():
    """Forget the names given (Keras's clear_session): the next `dense` is `dense` again."""
    _name_counts.clear()


# the names of the models whose layers are being built (`path_scope`): Keras 3's paths
# start with them ("sequential/dense/kernel"), where the variables' names do not
_path_prefix = []


@contextlib.contextmanager
def path_scope(name):
    """Within it, the paths of the weights made start with `name`: a Sequential building its
    layers."""
    _path_prefix.append(f"{name}/")
    try:
        yield
    finally:
        _path_prefix.pop()


def keras_named(variable):
    """`variable` with Keras 3's `path`: the scopes it was made in and its name, without
    ":0" ("dense/kernel", "sequential/dense/kernel" for a layer a Sequential builds); its
    `name` stays TensorFlow's, as the guides print it ("dense/kernel:0")."""
    full = variable.name
    variable.path = "".join(_path_prefix) + (full[: -len(":0")] if full.endswith(":0") else full)
    return variable
