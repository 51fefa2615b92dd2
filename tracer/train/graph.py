"""What a checkpoint saves and under which names: the variables reachable from its root.

Objects are walked breadth first from the checkpoint's named children: a Module's attributes
(public names sorted, then private ones), list and tuple items by position, dict items by
key, an optimizer's `iterations`. The first path that reaches a variable names it
(`model/layers/0/kernel`); each object is visited once. An optimizer's slot variables are
named after the variable they belong to: `optimizer/slots/model/layers/0/kernel/m`.

Paths cannot collide: each name is escaped as TensorFlow escapes it (`.` -> `..`, `/` ->
`.S`) before the names are joined with `/`, so `{'a/b': v}` saves `a.Sb` and `{'a': {'b':
w}}` saves `a/b`. Dict keys must be strings, as in TensorFlow (`{1: v, '1': w}` would
otherwise name two variables `1`), and a name holding a NUL character is refused (zip member
names end at the first NUL). Both are a ValueError naming the object.
"""

import re

from tracer.module import Module
from tracer.optimizers import Optimizer
from tracer.variable import Variable

SLOTS = "slots"
_ESCAPED = re.compile(r"\.([.S])")


def escape(name):
    """`name` as one segment of an object path, escaped as TensorFlow's
    `escape_local_name` does, so that distinct names give distinct paths.

    >>> escape("a/b"), escape("v.1")
    ('a.Sb', 'v..1')
    """
    if "\x00" in name:
        raise ValueError(
            f"the name {name!r} holds a NUL character, which a checkpoint cannot store"
        )
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"the name {name!r} is not valid Unicode text (UTF-8)") from None
    return name.replace(".", "..").replace("/", ".S")


def unescape(segment):
    """The name that `escape` turned into `segment`."""
    return _ESCAPED.sub(lambda match: "." if match[1] == "." else "/", segment)


def children(obj, path=None):
    """(escaped name, child) pairs of the objects a walk goes through below `obj` (at `path`,
    for error messages)."""
    try:
        return [(escape(name), value) for name, value in _named(obj) if _walked(value)]
    except ValueError as error:
        where = "given to the checkpoint" if path is None else f"at {path!r}"
        raise ValueError(f"cannot checkpoint the objects {where}: {error}") from None


def _named(obj):
    if isinstance(obj, Optimizer):
        return [("iterations", obj.iterations)]
    if isinstance(obj, (list, tuple)):
        return [(str(i), item) for i, item in enumerate(obj)]
    if isinstance(obj, dict):
        for key, value in obj.items():
            if not isinstance(key, str) and _walked(value):
                raise ValueError(
                    f"the dict key {key!r} ({type(key).__name__}, holding a "
                    f"{type(value).__name__}) is not a string; checkpoints name dict items by "
                    "their string keys, as TensorFlow's do (use str keys, or keep the dict out "
                    "of the checkpoint)"
                )
        return [(key, obj[key]) for key in obj if isinstance(key, str)]
    if isinstance(obj, Module):
        attributes = vars(obj)
    elif hasattr(obj, "_checkpoint_children"):  # a Checkpoint: the objects it was given
        attributes = obj._checkpoint_children()
    else:
        return []
    public = sorted(name for name in attributes if not name.startswith("_"))
    private = sorted(name for name in attributes if name.startswith("_"))
    return [(name, attributes[name]) for name in public + private]


def child(obj, name):
    """The child `name` of `obj`, or None."""
    for key, value in children(obj):
        if key == name:
            return value
    return None


def walk(root):
    """({path: Variable}, {path: Optimizer}) of everything reachable from `root`."""
    variables, optimizers = {}, {}
    seen = {id(root)}
    frontier = [(None, root)]
    while frontier:
        following = []
        for path, obj in frontier:
            for name, value in children(obj, path):
                if id(value) in seen:
                    continue
                seen.add(id(value))
                value_path = name if path is None else f"{path}/{name}"
                if isinstance(value, Variable):
                    variables[value_path] = value
                else:
                    if isinstance(value, Optimizer):
                        optimizers[value_path] = value
                    following.append((value_path, value))
        frontier = following
    return variables, optimizers


def slot_entries(variables, optimizers):
    """[(saved path, optimizer, variable, slot name, slot variable)] of the slots of saved
    variables."""
    path_of = {id(v): path for path, v in variables.items()}
    entries = []
    for optimizer_path, optimizer in optimizers.items():
        for variable, named in optimizer._slots.values():
            variable_path = path_of.get(id(variable))
            if variable_path is None:
                continue
            for name, slot in named.items():
                key = f"{optimizer_path}/{SLOTS}/{variable_path}/{escape(name)}"
                entries.append((key, optimizer, variable, name, slot))
    return entries


def split_slot_path(key, optimizers):
    """(optimizer, variable path, slot name) when `key` names a slot, else None."""
    for optimizer_path, optimizer in optimizers.items():
        prefix = f"{optimizer_path}/{SLOTS}/"
        if key.startswith(prefix) and key.count("/") > prefix.count("/"):
            variable_path, _, name = key[len(prefix) :].rpartition("/")
            return optimizer, variable_path, unescape(name)
    return None


def waiting_place(root, path):
    """(module, the rest of `path`) when `path` below `root` stops at an attribute not set
    yet: the deepest module (or checkpoint, which takes objects set on it later) on the
    path, where its value waits (TensorFlow's deferred restoration); None when the path
    reaches no module or exists whole."""
    place = None
    obj = root
    parts = path.split("/")
    for position, name in enumerate(parts):
        if isinstance(obj, Variable):
            return None
        if isinstance(obj, Module) or getattr(obj, "_takes_new_objects", False):
            place = obj, "/".join(parts[position:])
        obj = child(obj, name)
        if obj is None:
            return place
    return None


def resolve(obj, path):
    """The variable at `path` below `obj`, or None."""
    for name in path.split("/"):
        obj = child(obj, name)
        if obj is None:
            return None
    return obj if isinstance(obj, Variable) else None


def _walked(value):
    return isinstance(value, (Variable, Module, Optimizer, list, tuple, dict)) or hasattr(
        value, "_checkpoint_children"
    )
