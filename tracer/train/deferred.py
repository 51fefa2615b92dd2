"""Restored values whose variables do not exist yet, applied when they are made.

`tt.train.Checkpoint.restore` before a model's first call (the usual start of a resumed
training script) finds no variables to assign: Keras layers make theirs when they build, and
a `tt.Module` may set `self.w = tt.Variable(...)` on its first call. As TensorFlow's deferred
restoration does, such a value waits on the deepest module its path reaches, under the
attribute the path goes on with (`model/w`: module `model`, attribute `w`), and is assigned
when that attribute is set (a variable, or a module or list holding it: then the value
goes on waiting below it if its variable is not there yet). A layer also offers everything
waiting on it once it has built, for weights held where no attribute is set
(`self._own_weights`, a list made before).

NOTE: while anything waits, `Module` has a `__setattr__` (`_set_and_restore`), installed by
`wait` and removed once nothing waits (values consumed, or their modules collected), so that
setting a module's attribute costs nothing more the rest of the time: a Python `__setattr__`
costs about 130 ns a set, and a Keras layer sets two attributes a call. A value may wait as
long as its module lives (a checkpoint of a larger model, restored with expect_partial), so
the check in `__setattr__` is a set of ids, not the weak dictionary (850 ns a set).
"""

import weakref

from tracer.module import Module
from tracer.train import graph

pending = weakref.WeakKeyDictionary()  # module -> {attribute name: [Restoration]}
_waiting_ids = set()  # id() of the modules in `pending`: what Module.__setattr__ checks


class Restoration:
    """A saved variable whose variable is not made yet: its saved path `key`, its path below
    the module it waits on, its value (None when only its slots are saved), its slots
    [(optimizer, slot name, value, saved path)], and `assign(variable, restoration)`, which
    checks and assigns them all."""

    __slots__ = ("key", "path", "value", "slots", "assign", "done")

    def __init__(self, key, path, assign):
        self.key, self.path, self.assign = key, path, assign
        self.value, self.slots, self.done = None, [], False


def wait(module, restoration):
    """Keep `restoration` (its path below `module`, a module or a checkpoint) until the
    attribute it names is set."""
    if module not in pending:
        pending[module] = {}
        _waiting_ids.add(id(module))
        weakref.finalize(module, _forget, id(module)).atexit = False
    name = graph.unescape(restoration.path.partition("/")[0])
    pending[module].setdefault(name, []).append(restoration)
    if "__setattr__" not in vars(Module):
        Module.__setattr__ = _set_and_restore


def offer(obj, restoration):
    """Assign `restoration` when its variable now exists below `obj`; else wait on the
    deepest module its path reaches. A path that ends elsewhere (not at a variable, or not
    below a module) is dropped: `assert_consumed` names it."""
    variable = graph.resolve(obj, restoration.path)
    if variable is not None:
        restoration.assign(variable, restoration)
        restoration.done = True
        return
    place = graph.waiting_place(obj, restoration.path)
    if place is not None:
        module, restoration.path = place
        wait(module, restoration)


def restore_built(layer):
    """Offer what waits on `layer` again: it has just made its weights."""
    waiting = pending.pop(layer, {})
    _forget(id(layer))
    for restorations in waiting.values():
        for restoration in restorations:
            offer(layer, restoration)


def _set_and_restore(module, name, value):
    """`Module.__setattr__` while values wait: set, then offer the values waiting for it."""
    object.__setattr__(module, name, value)
    attribute_set(module, name)


def attribute_set(obj, name):
    """`obj`'s attribute `name` has just been set (a module's, or a checkpoint's object):
    offer the values waiting for it."""
    if id(obj) in _waiting_ids:
        waiting = pending[obj]
        restorations = waiting.pop(name, ())
        if not waiting:
            del pending[obj]
            _forget(id(obj))
        for restoration in restorations:
            offer(obj, restoration)


def _forget(module_id):
    """Nothing waits on the module `module_id` any more (or it was collected)."""
    _waiting_ids.discard(module_id)
    if not _waiting_ids and vars(Module).get("__setattr__") is _set_and_restore:
        del Module.__setattr__
