"""Keras's unique names: `dense`, `dense_1`, ... per base name, for the process (layers,
Inputs and KerasTensors take theirs from here)."""

import collections

_name_counts = collections.Counter()


def unique_layer_name(base):
    count = _name_counts[base]
    _name_counts[base] += 1
    return base if count == 0 else f"{base}_{count}"


def reset():
    """Forget the names given (Keras's clear_session): the next `dense` is `dense` again."""
    _name_counts.clear()
