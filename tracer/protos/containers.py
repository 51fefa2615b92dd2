"""The containers of a message's repeated and map fields (tracer/protos/message.py), with the
Python protocol buffer API's behaviour: a list of scalars whose values are checked and
converted as they go in, a list of messages, and a map from strings to messages whose
missing keys are made as they are read. Each change marks its owner message as set
(`Message._touch`), as protobuf's does."""

import operator

import numpy as np

_INT64 = (-(1 << 63), (1 << 63) - 1)


class ScalarKind:
    """How the values of a repeated scalar field go in: `convert(values)` checks a sequence
    of Python values and gives them as stored (TypeError or ValueError otherwise)."""

    def __init__(self, name, convert):
        self.name, self.convert = name, convert


def _int64s(values, field):
    out = []
    for value in values:
        if isinstance(value, (bool, np.bool_)):
            raise TypeError(f"Field {field}: Expected an int, got a boolean.")
        value = operator.index(value)
        if not _INT64[0] <= value <= _INT64[1]:
            raise ValueError(f"Value out of range: {value}")
        out.append(value)
    return out


def _floats(values, field):
    if isinstance(values, np.ndarray) and values.ndim == 1 and values.dtype.kind in "fiu":
        reals = values
    else:
        reals = []
        for value in values:
            if isinstance(value, (str, bytes)):
                raise TypeError(f"must be real number, not {type(value).__name__}")
            reals.append(float(value))
    with np.errstate(over="ignore"):  # (a double past float32's range is its infinity)
        return np.asarray(reals, np.float64).astype(np.float32).tolist()


def _bytes(values, field):
    out = []
    for value in values:
        if not isinstance(value, bytes):
            raise TypeError(f"expected bytes, {type(value).__name__} found")
        out.append(bytes(value))
    return out


INT64 = ScalarKind("int64", _int64s)
FLOAT = ScalarKind("float", _floats)
BYTES = ScalarKind("bytes", _bytes)


class RepeatedScalarContainer:
    """A repeated int64, float or bytes field: a list whose values are checked."""

    __slots__ = ("_owner", "_kind", "_field", "_values")
    __hash__ = None

    def __init__(self, owner, kind, field):
        self._owner, self._kind, self._field, self._values = owner, kind, field, []

    def _changed(self):
        self._owner._touch()

    def _converted(self, values):
        return self._kind.convert(values, self._field)

    def append(self, value):
        self._values += self._converted([value])
        self._changed()

    def extend(self, values):
        if isinstance(values, RepeatedScalarContainer) and values._kind is self._kind:
            self._values += values._values  # (checked as they went in there)
        else:
            self._values += self._converted(
                values if isinstance(values, np.ndarray) else list(values)
            )
        self._changed()

    def insert(self, index, value):
        self._values.insert(index, self._converted([value])[0])
        self._changed()

    def remove(self, value):
        self._values.remove(value)
        self._changed()

    def pop(self, index=-1):
        value = self._values.pop(index)
        self._changed()
        return value

    def sort(self, *, key=None, reverse=False):
        self._values.sort(key=key, reverse=reverse)
        self._changed()

    def reverse(self):
        self._values.reverse()
        self._changed()

    def clear(self):
        self._values.clear()
        self._changed()

    def MergeFrom(self, other):
        self.extend(other)

    def __getitem__(self, index):
        return self._values[index]

    def __setitem__(self, index, value):
        if isinstance(index, slice):
            self._values[index] = self._converted(list(value))
        else:
            self._values[index] = self._converted([value])[0]
        self._changed()

    def __delitem__(self, index):
        del self._values[index]
        self._changed()

    def __len__(self):
        return len(self._values)

    def __iter__(self):
        return iter(self._values)

    def __contains__(self, value):
        return value in self._values

    def __eq__(self, other):
        if isinstance(other, RepeatedScalarContainer):
            return self._values == other._values
        if isinstance(other, (list, tuple)):
            return self._values == list(other)
        return NotImplemented

    def __repr__(self):
        return repr(self._values)


class RepeatedCompositeContainer:
    """A repeated message field: a list of messages of one class, each the list's own."""

    __slots__ = ("_owner", "_class", "_messages")
    __hash__ = None

    def __init__(self, owner, message_class):
        self._owner, self._class, self._messages = owner, message_class, []

    def _adopted(self, value):
        """A new message of the list, a copy of `value` (a message or a dict of fields)."""
        message = self._class()
        message._set_from(value)
        message._parent = (self._owner, None)
        return message

    def add(self, **fields):
        """A new message at the end, made with `fields`; returned to be filled in."""
        message = self._adopted(fields)
        self._messages.append(message)
        self._owner._touch()
        return message

    def append(self, value):
        self._messages.append(self._adopted(value))
        self._owner._touch()

    def extend(self, values):
        self._messages += [self._adopted(v) for v in values]
        self._owner._touch()

    def insert(self, index, value):
        self._messages.insert(index, self._adopted(value))
        self._owner._touch()

    def remove(self, value):
        self._messages.remove(value)
        self._owner._touch()

    def pop(self, index=-1):
        message = self._messages.pop(index)
        message._parent = None
        self._owner._touch()
        return message

    def clear(self):
        del self[:]

    def MergeFrom(self, other):
        self.extend(other)

    def __getitem__(self, index):
        return self._messages[index]

    def __delitem__(self, index):
        removed = self._messages[index]
        for message in removed if isinstance(removed, list) else [removed]:
            message._parent = None
        del self._messages[index]
        self._owner._touch()

    def __len__(self):
        return len(self._messages)

    def __iter__(self):
        return iter(self._messages)

    def __eq__(self, other):
        if isinstance(other, (RepeatedCompositeContainer, list, tuple)):
            return list(self) == list(other)
        return NotImplemented

    def __repr__(self):
        return repr(self._messages)


class MessageMapContainer:
    """A map<string, message> field: reading a missing key makes its (empty) message, as
    protobuf's message maps do; a value is changed in place, never assigned."""

    __slots__ = ("_owner", "_class", "_entries")
    __hash__ = None

    def __init__(self, owner, message_class):
        self._owner, self._class, self._entries = owner, message_class, {}

    def __getitem__(self, key):
        key = _map_key(key)
        message = self._entries.get(key)
        if message is None:
            message = self._class()
            message._parent = (self._owner, None)
            self._entries[key] = message
            self._owner._touch()
        return message

    def get_or_create(self, key):
        return self[key]

    def _put(self, key, value):
        """Set `key` to a copy of `value` (a message or a dict of fields)."""
        message = self[key]
        message.Clear()
        message._set_from(value)

    def __setitem__(self, key, value):
        raise ValueError("Message objects may not be assigned")

    def __delitem__(self, key):
        self._entries.pop(_map_key(key))._parent = None
        self._owner._touch()

    def clear(self):
        for message in self._entries.values():
            message._parent = None
        self._entries.clear()
        self._owner._touch()

    def get(self, key, default=None):
        return self._entries.get(_map_key(key), default)

    def __contains__(self, key):
        return _map_key(key) in self._entries

    def __len__(self):
        return len(self._entries)

    def __iter__(self):
        return iter(self._entries)

    def keys(self):
        return self._entries.keys()

    def values(self):
        return self._entries.values()

    def items(self):
        return self._entries.items()

    def MergeFrom(self, other):
        for key, value in other.items():
            self._put(key, value)

    def __eq__(self, other):
        if isinstance(other, (MessageMapContainer, dict)):
            return dict(self.items()) == dict(other.items())
        return NotImplemented

    def __repr__(self):
        return repr(self._entries)


def _map_key(key):
    if isinstance(key, bytes):
        return key.decode("utf-8")
    if not isinstance(key, str):
        raise TypeError("bad argument type for built-in operation")
    return key
