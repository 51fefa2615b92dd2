"""`tt.train.Checkpoint`: save and restore the variables of models and optimizers.

`save(prefix)` numbers checkpoints (`prefix-1`, `prefix-2`, ...) with the checkpoint's own
`save_counter` and records them in the directory's list; `write(path)` writes exactly `path`.
`restore(path)` assigns every saved value whose object path exists, after checking them all
(a value whose shape or dtype differs from its variable's is an error that names both, and
nothing is assigned); values for variables not made yet (a layer not built, a module's
attribute not set) wait for them (tracer/train/deferred.py). `read` is
`restore` without the save counter, for files made by `write`. A save that fails changes
nothing: the save counter goes back, the directory's list is left as it was, and a file the
save made is removed. The file format is in tracer/train/files.py; the names of objects in
tracer/train/graph.py.
"""

import os

import numpy as np

from tracer import dtypes
from tracer.context import outside_trace
from tracer.errors import NotFoundError
from tracer.module import Module
from tracer.optimizers import Optimizer
from tracer.train import deferred, files, graph
from tracer.variable import Variable

SAVE_COUNTER = "save_counter"


class Checkpoint:
    """The objects to save, by name: `tt.train.Checkpoint(model=model, optimizer=optimizer)`.

    >>> checkpoint = tt.train.Checkpoint(v=tt.Variable(1.0))
    >>> path = checkpoint.save("/tmp/doc/ckpt")       # '/tmp/doc/ckpt-1'
    """

    _takes_new_objects = True  # a restored value may wait for an object set on it later

    def __init__(self, /, root=None, **kwargs):  # (any name may be an object's: `self=`)
        objects = dict(kwargs) if root is None else {"root": root, **kwargs}
        if SAVE_COUNTER in objects:
            raise ValueError(
                f"Checkpoint: {SAVE_COUNTER!r} names the checkpoint's own save counter; give "
                f"the object {objects[SAVE_COUNTER]!r} another name"
            )
        for name, obj in objects.items():
            _check_saved(name, obj)
        self._objects = objects
        self._save_counter = None
        graph.walk(self)  # a name the checkpoint cannot store is an error here, not at save

    def __getattr__(self, name):
        """`checkpoint.step`: an object the checkpoint was given, or set on it later."""
        objects = self.__dict__.get("_objects", {})
        if name in objects:
            return objects[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __setattr__(self, name, value):
        """`checkpoint.net = model` adds an object to save, as a keyword argument does; a
        value restored before it was set (deferred restoration) is assigned now."""
        if name.startswith("_"):
            object.__setattr__(self, name, value)
            return
        if name == SAVE_COUNTER:
            raise AttributeError(f"Checkpoint: {SAVE_COUNTER!r} is the checkpoint's own")
        _check_saved(name, value)
        self._objects[name] = value
        graph.walk(self)
        deferred.attribute_set(self, name)

    @property
    def save_counter(self):
        """How many times `save` has run (restored with the checkpoint); made on first use."""
        if self._save_counter is None:
            with outside_trace():
                self._save_counter = Variable(
                    0, trainable=False, name=SAVE_COUNTER, dtype=dtypes.int64
                )
        return self._save_counter

    def _checkpoint_children(self):
        counter = {SAVE_COUNTER: self._save_counter} if self._save_counter is not None else {}
        return {**self._objects, **counter}

    def write(self, file_prefix):
        """Write the variables to `file_prefix` (the file `file_prefix.npz`); returns it."""
        variables, optimizers = graph.walk(self)
        arrays = {path: np.array(v.numpy()) for path, v in variables.items()}
        for key, *_, slot in graph.slot_entries(variables, optimizers):
            arrays[key] = np.array(slot.numpy())
        return files.write(os.fspath(file_prefix), arrays)

    def save(self, file_prefix):
        """Write the next numbered checkpoint, `file_prefix-N`, and list it in its directory."""
        path = f"{os.fspath(file_prefix)}-{int(self.save_counter.numpy()) + 1}"
        directory = os.path.dirname(os.path.abspath(path))
        listed = [p for p in files.read_state(directory) if p != os.path.abspath(path)]
        return self._save_recorded(
            path, lambda: files.write_state(directory, [*listed, os.path.abspath(path)])
        )

    def _save_recorded(self, path, record):
        """Advance the save counter, write `path` and run `record()` (which lists it); when a
        step fails, undo the others, so that a failed save changes nothing.

        NOTE: a file already at `path` (a number saved again after a restore) is replaced
        atomically once written; that replacement alone is not undone.
        """
        counter = self.save_counter
        before = int(counter.numpy())
        existed = files.exists(path)
        written = False
        counter.assign(before + 1)
        try:
            self.write(path)
            written = True
            record()
        except BaseException:
            counter.assign(before)
            if written and not existed:
                files.remove(path)
            raise
        return path

    def restore(self, save_path):
        """Assign the saved values; `save_path` None (no checkpoint yet) restores nothing, and
        its status's assertions fail, as TensorFlow's do."""
        if save_path is None:
            return CheckpointLoadStatus(self, None, [], [])
        self.save_counter  # noqa: B018  (made, so that the saved count has a variable to go to)
        return _restore(self, files.read(os.fspath(save_path)), skip=())

    def read(self, save_path):
        """`restore` for a file made by `write`: the save counter is left as it is."""
        return _restore(self, files.read(os.fspath(save_path)), skip=(SAVE_COUNTER,))


def _check_saved(name, obj):
    if not isinstance(obj, (Module, Optimizer, Variable, Checkpoint, list, tuple, dict)) and (
        not hasattr(obj, "_checkpoint_children")
    ):
        raise TypeError(
            f"Checkpoint: {name}={obj!r} is not something a checkpoint saves (a tt.Module or "
            "layer, an optimizer, a Variable, a dataset iterator, or a list or dict of them)"
        )


def list_variables(ckpt_dir_or_file):
    """[(path, shape)] of the values in a checkpoint (a path, or a directory: its latest)."""
    return sorted(load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map().items())


def load_variable(ckpt_dir_or_file, name):
    """The saved value at path `name`, as a numpy array."""
    values = files.read(_checkpoint_path(ckpt_dir_or_file))
    if name not in values:
        raise ValueError(f"the checkpoint has no value {name!r}; it has {sorted(values)}")
    return values[name]


def load_checkpoint(ckpt_dir_or_file):
    """A reader of a checkpoint's saved values (a path, or a directory: its latest), as
    `tf.train.load_checkpoint` returns."""
    return CheckpointReader(files.read(_checkpoint_path(ckpt_dir_or_file)))


class CheckpointReader:
    """The values of one checkpoint by their saved paths (tracer's paths,
    `net/l1/kernel`, not TensorFlow's `.../.ATTRIBUTES/VARIABLE_VALUE` keys)."""

    def __init__(self, values):
        self._values = values

    def get_variable_to_shape_map(self):
        return {key: list(value.shape) for key, value in self._values.items()}

    def get_variable_to_dtype_map(self):
        return {key: dtypes.as_dtype(value.dtype) for key, value in self._values.items()}

    def has_tensor(self, key):
        return key in self._values

    def get_tensor(self, key):
        """The saved value at `key`, a numpy array (a copy)."""
        if key not in self._values:
            raise NotFoundError(None, None, f"Key {key} not found in checkpoint")
        return np.array(self._values[key])


def _checkpoint_path(ckpt_dir_or_file):
    path = os.fspath(ckpt_dir_or_file)
    if not os.path.isdir(path):
        return path
    latest = files.latest_checkpoint(path)
    if latest is None:
        raise files.CheckpointError(f"no checkpoint listed in the directory {path!r}")
    return latest


class CheckpointLoadStatus:
    """What a restore matched: `assert_consumed()` fails when a saved value found no variable
    (yet), `assert_existing_objects_matched()` when a variable of the checkpoint's objects got
    no value."""

    def __init__(self, checkpoint, values, unmatched, waiting):
        self._checkpoint, self._values = checkpoint, values
        self._unmatched, self._waiting = unmatched, waiting

    def assert_consumed(self):
        self._given()
        waiting = [r.key for r in self._waiting if not r.done]
        if self._unmatched or waiting:
            raise AssertionError(
                f"saved values not restored: {self._unmatched} matched no variable, "
                f"{waiting} wait for their layers to be built, or for their modules' "
                "attributes or checkpoints' objects to be set"
            )
        return self.assert_existing_objects_matched()

    def assert_existing_objects_matched(self):
        self._given()
        variables, _ = graph.walk(self._checkpoint)
        missing = sorted(path for path in variables if path not in self._values)
        if missing:
            raise AssertionError(f"variables with no saved value: {missing}")
        return self

    def expect_partial(self):
        return self

    def _given(self):
        if self._values is None:
            raise AssertionError("no checkpoint was given (save_path=None): nothing was restored")


def _restore(checkpoint, values, skip):
    """Check every saved value against its variable, then assign them all."""
    variables, optimizers = graph.walk(checkpoint)
    assignments, waiting, unmatched = [], {}, []
    for key in sorted(values):
        if key in skip:
            continue
        value = values[key]
        slot = graph.split_slot_path(key, optimizers)
        path = slot[1] if slot else key
        variable = variables.get(path)
        if slot and slot[2] not in slot[0]._slot_starts():
            unmatched.append(key)
        elif variable is not None:
            _check(variable, value, key)
            assignments.append((variable, value, slot))
        elif (place := graph.waiting_place(checkpoint, path)) is not None:
            module, below = place
            if (id(module), below) not in waiting:
                restoration = deferred.Restoration(path, below, _assign_waiting)
                waiting[(id(module), below)] = module, restoration
            restoration = waiting[(id(module), below)][1]
            if slot:
                restoration.slots.append((slot[0], slot[2], value, key))
            else:
                restoration.value = value
        else:
            unmatched.append(key)
    with outside_trace():
        for variable, value, slot in assignments:
            _assign(variable, value, slot)
    for module, restoration in waiting.values():  # (after the checks: an error leaves none)
        deferred.wait(module, restoration)
    return CheckpointLoadStatus(checkpoint, values, unmatched, [r for _, r in waiting.values()])


def _assign(variable, value, slot):
    target = variable if slot is None else slot[0]._slots_of(variable)[slot[2]]
    target.assign(value)


def _assign_waiting(variable, restoration):
    """Assign a value that waited for its variable to be made (checked first, like the
    others)."""
    if restoration.value is not None:
        _check(variable, restoration.value, restoration.key)
    for _, _, value, key in restoration.slots:
        _check(variable, value, key)
    with outside_trace():
        if restoration.value is not None:
            variable.assign(restoration.value)
        for optimizer, name, value, _ in restoration.slots:
            optimizer._slots_of(variable)[name].assign(value)


def _check(variable, value, key):
    if tuple(value.shape) != tuple(variable.shape) or value.dtype != variable.dtype.as_numpy_dtype:
        raise ValueError(
            f"cannot restore {variable.path or variable.name}: it has shape "
            f"{tuple(variable.shape)} and dtype "
            f"{variable.dtype.name}, the checkpoint's value {key!r} has shape "
            f"{tuple(value.shape)} and dtype {value.dtype.name}"
        )
