"""Values restored into layers that were not built yet, applied when they are.

`tt.train.Checkpoint.restore` before a model's first call (the usual start of a resumed
training script) finds no variables to assign: Keras layers make theirs on their first
call. Their values wait here, keyed by the layer, as TensorFlow's deferred restoration
does, and the layer applies them right after it builds (with the optimizer slots saved for
those variables).
"""

import weakref

pending = weakref.WeakKeyDictionary()  # layer -> [Restoration]


class Restoration:
    """A saved variable below a layer: its path from the layer, its value (None when only its
    slots are saved) and its slots [(optimizer, slot name, value)]."""

    __slots__ = ("path", "value", "slots", "apply", "done")

    def __init__(self, path, apply):
        self.path, self.value, self.slots, self.apply = path, None, [], apply
        self.done = False


def wait_for(layer, restoration):
    pending.setdefault(layer, []).append(restoration)


def restore_built(layer):
    """Apply what waits for `layer`, now built."""
    for restoration in pending.pop(layer, ()):
        restoration.apply(layer, restoration)
        restoration.done = True
