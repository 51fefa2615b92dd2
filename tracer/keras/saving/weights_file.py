"""Keras 3's HDF5 weights layout (`.weights.h5`, and `model.weights.h5` inside a `.keras` zip).

Keras walks the model as it walks any object it saves, and gives every layer it meets one
group, `<path>/vars`, whose attribute `name` is the layer's name and whose datasets `0`, `1`,
... are the layer's own variables in order:

    vars                        the model's own variables (none for Sequential or Functional)
    layers/dense/vars/0, 1      the first Dense layer of `model.layers`: kernel, bias
    layers/dense_1/vars/0, 1    the second Dense layer
    layers/dropout/vars         a layer without variables still has its (empty) group
    optimizer/vars/0, ...       a compiled model's optimizer: iterations, learning rate,
                                slots (optimizer_state.py)

A path is made of attribute names, except inside a list: there an item is named by its class
in snake case, made unique by a counter (`dense`, `dense_1`), not by the layer's name, so two
instances of one architecture have the same paths. Sequential and Functional models list
`layers` first, then every attribute in sorted order with private ones (`_x`) last; a layer
met twice is saved once, under its first path.

h5py is imported by the functions that need it; a file is read from and written to bytes in
memory. Only what the file itself holds is read: no links, no external or virtual storage
(both read other files), and h5py's errors on a damaged file are given as ValueErrors.
"""

import contextlib
import io
import re

import numpy as np

from tracer.keras.layers.layer import Layer
from tracer.keras.saving import optimizer_state

# NOTE: attributes of tracer's own layers and models that are not the user's sub-layers
_SKIP = frozenset({"_own_weights", "_scope", "_inbound_nodes", "_outbound_nodes"})
# what h5py raises on a damaged file: OSError, KeyError (an object it cannot open),
# RuntimeError (a link or group it cannot read), OverflowError (an absurd address)
_DAMAGED = (OSError, KeyError, RuntimeError, OverflowError)


def h5py():
    """The h5py module, or an ImportError that names tracer's `keras` extra."""
    try:
        import h5py
    except ImportError:
        raise ImportError(
            "reading and writing Keras files needs h5py: pip install 'tracer[keras]'"
        ) from None
    return h5py


def saveables(model):
    """`(path, layer)` for every layer Keras would save, the model first (path "")."""
    yield from _walk(model, "", set())


def own_variables(layer):
    """The variables Keras keeps in `layer`'s group: those made by `add_weight`, trainable
    ones first (Keras lists a layer's trainable variables, then its non-trainable ones)."""
    weights = list(layer._own_weights)
    if not layer.trainable:  # every weight reads as non-trainable then: keep the order made
        return weights
    return [v for v in weights if v.trainable] + [v for v in weights if not v.trainable]


def write(model):
    """The bytes of a `.weights.h5` file of `model`'s weights."""
    buffer = io.BytesIO()
    with h5py().File(buffer, "w") as file:
        for path, layer in saveables(model):
            group = file.create_group(_vars_path(path))
            group.attrs["name"] = layer.name
            for i, variable in enumerate(own_variables(layer)):
                group.create_dataset(str(i), data=np.asarray(variable.numpy()))
        optimizer = optimizer_state.arrays(model)
        if optimizer is not None:
            group = file.create_group("optimizer/vars")
            group.attrs["name"] = model.optimizer.name
            for i, value in enumerate(optimizer):
                group.create_dataset(str(i), data=value)
    return buffer.getvalue()


def read(model, data, skip_mismatch=False):
    """Set `model`'s weights (and its optimizer's state, when it has an optimizer and the
    file holds one) from the bytes of a `.weights.h5` file; returns the warnings to give
    (layers skipped with `skip_mismatch`, an optimizer state that does not fit). Raises
    ValueError, naming the layer, when a layer's variables are missing or differ in number or
    shape, unless `skip_mismatch`; naming the group or dataset, when the file is damaged or
    keeps values outside itself."""
    skipped = []
    try:
        file = h5py().File(io.BytesIO(data), "r")
    except _DAMAGED as error:
        raise ValueError(f"the weights are not an HDF5 file ({error})") from None
    with file:
        updates = []
        for path, layer in saveables(model):
            variables = own_variables(layer)
            try:
                stored = _stored(file, _vars_path(path))
                if stored and not variables and not layer.built:
                    raise ValueError(
                        f"layer {layer.name!r} is not built, so it has no variables for the "
                        f"{len(stored)} the file holds (nothing gave its input shape)"
                    )
                updates.extend(_matched(layer, variables, stored))
            except ValueError as error:
                if not skip_mismatch:
                    raise
                skipped.append(f"skipped loading the weights of layer {layer.name!r}: {error}")
        # NOTE: assign only once every layer matched, so a refused file leaves the model as it was
        for variable, value in updates:
            variable.assign(value)
        stored = _stored(file, "optimizer/vars")
        if stored and getattr(model, "optimizer", None) is not None:
            problem = optimizer_state.restore(model, stored)
            skipped += [problem] if problem else []
    return skipped


def _walk(obj, path, seen):
    if id(obj) in seen:
        return
    seen.add(id(obj))
    yield path, obj
    for attribute, child in _children(obj):
        child_path = f"{path}/{attribute}" if path else attribute
        if isinstance(child, Layer):
            yield from _walk(child, child_path, seen)
        elif isinstance(child, (list, tuple, dict)):
            yield from _walk_container(child, child_path, seen)


def _children(obj):
    """Keras's order: a model's `layers` first, then the attributes, private ones last."""
    if _is_layered(obj):
        yield "layers", list(obj.layers)
    names = sorted((n for n in vars(obj) if n not in _SKIP), key=_name_key)
    for name in names:
        yield name, vars(obj)[name]


def _is_layered(obj):
    """Whether `obj` is a Sequential or Functional model (Keras walks their `layers` first)."""
    return any(cls.__name__ in ("Sequential", "Functional") for cls in type(obj).__mro__)


def _walk_container(items, path, seen, _depth=0):
    if isinstance(items, dict):
        items = list(items.values())
    used = {}
    for item in items:
        if isinstance(item, Layer):
            yield from _walk(
                item, f"{path}/{_unique(_snake_case(type(item).__name__), used)}", seen
            )
        elif isinstance(item, (list, tuple, dict)) and _depth < 32:
            yield from _walk_container(
                item, f"{path}/{_unique('container', used)}", seen, _depth + 1
            )


def _name_key(name):
    return f"~{name}" if name.startswith("_") else name


def _unique(name, used):
    if name in used:
        used[name] += 1
        return f"{name}_{used[name]}"
    used[name] = 0
    return name


def _snake_case(name):
    """Keras's: `Dense` -> `dense`, `MaxPooling2D` -> `max_pooling2d`, `Conv2D` -> `conv2d`."""
    name = re.sub(r"\W+", "", name)
    name = re.sub("(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub("([a-z])([A-Z])", r"\1_\2", name).lower()


def _vars_path(path):
    return f"{path}/vars" if path else "vars"


def _stored(file, path):
    """The datasets `0`, `1`, ... of the group at `path` (none when it is absent), as
    `_Dataset`s, each only if it is a plain dataset of numbers held in this file."""
    with _damaged(path):
        group = _hard(file, path, "group")
        if group is None:
            return []
        count = len(group)
        values = []
        for i in range(count):
            dataset = _hard(group, str(i), "dataset")
            if dataset is None:
                raise ValueError(f"{path} holds {count} entries but no {i}")
            if dataset.dtype.kind not in "biuf":
                raise ValueError(f"{path}/{i} holds {dataset.dtype}, not numbers")
            _check_storage(dataset, f"{path}/{i}")
            values.append(_Dataset(f"{path}/{i}", dataset))
    return values


class _Dataset:
    """A dataset of the file: its shape, and its values read by indexing (`dataset[()]`),
    where a damaged file's error is a ValueError that names the dataset."""

    __slots__ = ("_dataset", "path", "shape")

    def __init__(self, path, dataset):
        self.path, self.shape, self._dataset = path, dataset.shape, dataset

    def __getitem__(self, key):
        with _damaged(self.path):
            return self._dataset[key]


@contextlib.contextmanager
def _damaged(path):
    """h5py's errors on a damaged file, raised as the ValueError of any other bad file."""
    try:
        yield
    except _DAMAGED as error:
        raise ValueError(
            f"the weights file is damaged at {path} ({type(error).__name__}: {error})"
        ) from None


def _check_storage(dataset, path):
    """Refuse a dataset whose values are not held in the file: external storage reads them
    from any file on the machine (a FIFO hangs the read), a virtual dataset from datasets in
    other files (or its fill value when they are missing)."""
    h5d = h5py().h5d
    properties = dataset.id.get_create_plist()
    if properties.get_layout() not in (h5d.CONTIGUOUS, h5d.CHUNKED, h5d.COMPACT):
        raise ValueError(
            f"{path} is a virtual dataset (its values are other files'); tracer reads only "
            "datasets held in the file"
        )
    if properties.get_external_count():
        raise ValueError(
            f"{path} keeps its values in an external file; tracer reads only datasets held "
            "in the file"
        )


def _hard(parent, path, kind):
    """The group or dataset at `path` below `parent`, refusing links (which may point to
    other files); None when absent."""
    h5 = h5py()
    node = parent
    for part in path.split("/"):
        if not isinstance(node, h5.Group) or part not in node:
            return None
        link = node.get(part, getlink=True)
        if not isinstance(link, h5.HardLink):
            raise ValueError(f"{path} is a {type(link).__name__}; tracer reads only plain HDF5")
        node = node[part]
    wanted = h5.Group if kind == "group" else h5.Dataset
    if not isinstance(node, wanted):
        raise ValueError(f"{path} is not an HDF5 {kind}")
    return node


def _matched(layer, variables, stored):
    """`(variable, value)` pairs, or ValueError when the counts or shapes differ."""
    if len(stored) != len(variables):
        names = [v.path or v.name for v in variables]
        raise ValueError(
            f"layer {layer.name!r} has {len(variables)} variables {names}, but the file holds "
            f"{len(stored)} for it"
        )
    pairs = []
    for variable, dataset in zip(variables, stored):
        if tuple(dataset.shape) != tuple(variable.shape):
            raise ValueError(
                f"layer {layer.name!r}: variable {variable.path or variable.name} has shape "
                f"{tuple(variable.shape)}, the file's has {tuple(dataset.shape)}"
            )
        pairs.append((variable, dataset[()].astype(variable.dtype.as_numpy_dtype)))
    return pairs
