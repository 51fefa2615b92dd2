"""Keras's names: the unique ones of layers, `dense`, `dense_1`, ... per base name, for the
process (layers, Inputs and KerasTensors take theirs from here), and the names and paths of
the variables of layers and metrics (`keras_named`)."""

import collections

_name_counts = collections.Counter()


def unique_layer_name(base):
    count = _name_counts[base]
    _name_counts[base] += 1
    return base if count == 0 else f"{base}_{count}"


def reset():
    """Forget the names given (Keras's clear_session): the next `dense` is `dense` again."""
    _name_counts.clear()


def keras_named(variable):
    """`variable` named as Keras 3 names the variables of layers, metrics and optimizers:
    `name` its own ("kernel"), `path` with the scopes it was made in ("dense/kernel",
    "sequential/dense/kernel" inside a Sequential), where a tt.Variable's name is
    TensorFlow's, the scopes and ":0" ("dense/kernel:0")."""
    full = variable.name
    variable.path = full[: -len(":0")] if full.endswith(":0") else full
    variable.name = variable.path.rsplit("/", 1)[-1]
    return variable
