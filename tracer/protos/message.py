"""Protocol buffer messages declared in Python, with the API of Python's protobuf package
(which tracer does not depend on) for the messages TensorFlow users build by hand:
construction from keyword arguments, fields as attributes, `SerializeToString` /
`FromString`, `==`, and the text format as repr.

A message class lists its fields (fields.py); each is a repeated scalar (int64 and float packed, as
proto3 packs them; bytes), a message (set once anything in it is, as protobuf's presence
works), a repeated message, or a map<string, message>:

    class Int64List(Message):
        FULL_NAME = "tensorflow.Int64List"
        FIELDS = (Field("value", 1, REPEATED, containers.INT64),)

Serialized bytes are the C++ and upb serializers' for the same message: fields in number
order, a map's entries in the order upb's deterministic serialization gives (map_order.py),
unknown fields read from bytes kept and written last.
"""

import struct

from tracer.protos import containers, map_order, wire
from tracer.protos.fields import MAP, MESSAGE, MESSAGES, REPEATED
from tracer.protos.text_format import message_text
from tracer.protos.wire import DecodeError

_NOT_ASSIGNABLE = {
    MESSAGE: 'Assignment not allowed to message field "{}" in protocol message object.',
    REPEATED: 'Assignment not allowed to map, or repeated field "{}" in protocol message object.',
}


class _Property:
    """A message's attribute for one field: read, it is the field's value (made empty at
    first); assigned, an AttributeError, as protobuf's."""

    __slots__ = ("field",)

    def __init__(self, field):
        self.field = field

    def __get__(self, message, owner=None):
        return self if message is None else message._get(self.field)

    def __set__(self, message, value):
        kind = MESSAGE if self.field.shape == MESSAGE else REPEATED
        raise AttributeError(_NOT_ASSIGNABLE[kind].format(self.field.name))


class Message:
    """The base of tracer's protocol buffer messages (see the module's text)."""

    FULL_NAME = ""
    FIELDS = ()
    __slots__ = ("_values", "_present", "_parent", "_unknown")
    __hash__ = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._BY_NAME = {f.name: f for f in cls.FIELDS}
        cls._BY_NUMBER = {f.number: f for f in cls.FIELDS}
        cls._ONEOFS = {}
        for f in cls.FIELDS:
            setattr(cls, f.name, _Property(f))
            if f.oneof:
                cls._ONEOFS.setdefault(f.oneof, []).append(f.name)

    def __init__(self, *args, **fields):
        if args:
            raise TypeError("No positional arguments allowed")
        self._values, self._present, self._parent, self._unknown = {}, set(), None, b""
        if fields:
            self._set_from(fields)

    # --- fields -------------------------------------------------------------------------

    def _get(self, field):
        value = self._values.get(field.name)
        if value is None:
            if field.shape == MESSAGE:
                value = field.of()
                value._parent = (self, field.name)
            elif field.shape == REPEATED:
                value = containers.RepeatedScalarContainer(
                    self, field.of, f"{self.FULL_NAME}.{field.name}"
                )
            elif field.shape == MESSAGES:
                value = containers.RepeatedCompositeContainer(self, field.of)
            else:
                value = containers.MessageMapContainer(self, field.of)
            self._values[field.name] = value
        return value

    def _set_from(self, value):
        """Take the fields of `value`: a message of this class (copied) or a dict of fields
        by name, as the constructor takes them (a field's value a message, or a dict)."""
        if isinstance(value, Message):
            if type(value) is not type(self):
                raise TypeError(
                    "Parameter to CopyFrom() must be instance of same class: expected "
                    f"{type(self)} got {type(value)}."
                )
            self.MergeFrom(value)
            return
        for name, given in value.items():
            field = self._BY_NAME.get(name)
            if field is None:
                raise ValueError(f'Protocol message {type(self).__name__} has no "{name}" field.')
            if given is None:
                continue
            if field.shape == MESSAGE:
                child = self._get(field)
                child._set_from(given)
                child._touch()
            elif field.shape == MAP:
                container = self._get(field)
                for key, entry in given.items():
                    container._put(key, entry)
            else:
                self._get(field).extend(given)

    def _touch(self):
        """Something in this message changed: it is set in the message that holds it."""
        if self._parent is not None:
            owner, name = self._parent
            if name is None:  # (an element of a list or map)
                owner._touch()
            else:
                owner._set_present(name)

    def _set_present(self, name):
        if name in self._present:
            return
        group = self._BY_NAME[name].oneof
        for other in self._ONEOFS.get(group, ()) if group else ():
            if other != name:
                self._forget(other)
        self._present.add(name)
        self._touch()

    def _forget(self, name):
        """Clear field `name`; a message it held is its own from now on."""
        self._present.discard(name)
        value = self._values.pop(name, None)
        if value is None:
            return
        if isinstance(value, Message):
            value._parent = None
        elif isinstance(
            value, (containers.RepeatedCompositeContainer, containers.MessageMapContainer)
        ):
            for message in (
                value.values() if isinstance(value, containers.MessageMapContainer) else value
            ):
                message._parent = None

    def _set_fields(self):
        """(field, value) of each field that is set, in number order."""
        out = []
        for field in self.FIELDS:
            value = self._values.get(field.name)
            if value is None:
                continue
            if field.shape == MESSAGE and field.name not in self._present:
                continue
            if field.shape != MESSAGE and not len(value):
                continue
            out.append((field, value))
        return out

    # --- protobuf's methods -------------------------------------------------------------------

    def HasField(self, name):
        """Whether message field (or oneof group) `name` is set."""
        if name in self._ONEOFS:
            return any(member in self._present for member in self._ONEOFS[name])
        field = self._BY_NAME.get(name)
        if field is None or field.shape != MESSAGE:
            raise ValueError(
                f'Protocol message {type(self).__name__} has no singular "{name}" field.'
            )
        return name in self._present

    def WhichOneof(self, group):
        """The name of the field of oneof `group` that is set, or None."""
        if group not in self._ONEOFS:
            raise ValueError(f'Protocol message has no oneof "{group}" field.')
        return next((m for m in self._ONEOFS[group] if m in self._present), None)

    def ClearField(self, name):
        if name not in self._BY_NAME:
            raise ValueError(f'Protocol message {type(self).__name__} has no "{name}" field.')
        self._forget(name)
        self._touch()

    def Clear(self):
        for name in list(self._values):
            self._forget(name)
        self._unknown = b""

    def ListFields(self):
        """(field, value) of each field that is set; a field has `name` and `number`."""
        return self._set_fields()

    def MergeFrom(self, other):
        """Add `other`'s fields to this one's: messages merged, lists extended, map entries
        replaced."""
        if type(other) is not type(self):
            raise TypeError(
                "Parameter to MergeFrom() must be instance of same class: expected "
                f"{type(self).__name__} got {type(other).__name__}."
            )
        other._merge_into(self)
        self._touch()

    def _merge_into(self, target):
        """MergeFrom's work, without its checks: copies of this message's fields added to
        `target`'s (a message of this class)."""
        for field, value in self._set_fields():
            shape = field.shape
            if shape == REPEATED:
                target._get(field)._values += value._values  # (checked as they went in)
            elif shape == MESSAGE:
                value._merge_into(target._get(field))
                target._set_present(field.name)
            elif shape == MESSAGES:
                messages = target._get(field)._messages
                for message in value:
                    messages.append(message._copy(target))
            else:
                entries = target._get(field)._entries
                for key, message in value.items():
                    if key in entries:
                        entries[key]._parent = None
                    entries[key] = message._copy(target)
        target._unknown += self._unknown

    def _copy(self, owner):
        """A copy of this message, an element of a list or map of `owner`."""
        copy = type(self)()
        self._merge_into(copy)
        copy._parent = (owner, None)
        return copy

    def CopyFrom(self, other):
        """Make this message a copy of `other` (of the same class)."""
        if type(other) is not type(self):
            raise TypeError(
                "Parameter to CopyFrom() must be instance of same class: expected "
                f"{type(self)} got {type(other)}."
            )
        if other is self:
            return
        self.Clear()
        self.MergeFrom(other)

    def SetInParent(self):
        self._touch()

    def IsInitialized(self):
        return True  # (proto3: no required fields)

    def ByteSize(self):
        return len(self.SerializeToString())

    def SerializeToString(self, deterministic=None):
        """The message's bytes. Map entries are always in upb's deterministic order (its
        default order changes from process to process)."""
        return b"".join(self._encoded())

    SerializePartialToString = SerializeToString

    def _encoded(self):
        parts = []
        for field, value in self._set_fields():
            encode = _ENCODERS[field.shape if field.shape != REPEATED else field.of.name]
            parts.append(encode(field.number, value))
        parts.append(self._unknown)
        return parts

    @classmethod
    def FromString(cls, data):
        """The message of the bytes `data`; DecodeError where they are not one."""
        message = cls()
        message.MergeFromString(data)
        return message

    def ParseFromString(self, data):
        """Make this message the one of the bytes `data`; returns how many were read."""
        self.Clear()
        return self.MergeFromString(data)

    def MergeFromString(self, data):
        data = bytes(data)
        try:
            self._merge_bytes(data)
        except DecodeError as error:
            raise DecodeError(
                f"Error parsing message with type '{self.FULL_NAME}': {error}"
            ) from None
        self._touch()
        return len(data)

    def _merge_bytes(self, data):
        for number, wire_type, value, start, end in wire.fields(data):
            field = self._BY_NUMBER.get(number)
            shape = None if field is None else field.shape
            if shape == REPEATED:
                values = _DECODERS[field.of.name](wire_type, value)
                if values is not None:
                    self._get(field)._values += values
                    continue
            elif shape is not None and wire_type == wire.LENGTH:
                if shape == MESSAGE:
                    self._get(field)._merge_bytes(value)
                    self._set_present(field.name)
                elif shape == MESSAGES:
                    message = field.of()
                    message._merge_bytes(value)
                    message._parent = (self, None)
                    self._get(field)._messages.append(message)
                else:
                    key, entry = _map_entry(value, field.of)
                    self._get(field)._entries[key] = entry
                    entry._parent = (self, None)
                continue
            self._unknown += data[start:end]  # (an unknown field, or one of another wire type)

    # --- Python's protocols ---------------------------------------------------------------

    def __eq__(self, other):
        if not isinstance(other, Message):
            return NotImplemented
        return type(other) is type(self) and self.SerializeToString() == other.SerializeToString()

    def __repr__(self):
        return message_text(self)

    __str__ = __repr__

    def __deepcopy__(self, memo=None):
        copy = type(self)()
        copy.MergeFrom(self)
        return copy

    __copy__ = __deepcopy__

    def __reduce__(self):
        return type(self).FromString, (self.SerializeToString(),)


def _map_entry(data, value_class):
    """(key, message) of a map entry's bytes: key 1 (a UTF-8 string), value 2."""
    key, value = b"", value_class()
    for number, wire_type, field, _, _ in wire.fields(data):
        if wire_type != wire.LENGTH:
            continue
        if number == 1:
            key = field
        elif number == 2:
            value._merge_bytes(field)
    try:
        return key.decode("utf-8"), value
    except UnicodeDecodeError:
        raise DecodeError("a map key is not UTF-8") from None


def _packed(encode_values):
    def encode(number, values):
        return wire.length_delimited(number, encode_values(values))

    return encode


_ENCODERS = {
    "int64": _packed(lambda values: b"".join(map(wire.varint, values))),
    "float": _packed(lambda values: struct.pack(f"<{len(values)}f", *values)),
    "bytes": lambda number, values: b"".join(wire.length_delimited(number, v) for v in values),
    MESSAGE: lambda number, message: wire.length_delimited(number, b"".join(message._encoded())),
    MESSAGES: lambda number, messages: b"".join(
        wire.length_delimited(number, b"".join(m._encoded())) for m in messages
    ),
    MAP: lambda number, entries: b"".join(
        wire.length_delimited(
            number,
            wire.length_delimited(1, key.encode("utf-8"))
            + wire.length_delimited(2, b"".join(entries[key]._encoded())),
        )
        for key in map_order.serialized(entries)
    ),
}

# the values of a repeated scalar field's occurrence, packed (LENGTH) or one (its own
# wire type); None for another wire type (kept as an unknown field, as upb keeps it)
_DECODERS = {
    "int64": lambda wire_type, value: (
        wire.packed_varints(value)
        if wire_type == wire.LENGTH
        else [wire.signed64(value)]
        if wire_type == wire.VARINT
        else None
    ),
    "float": lambda wire_type, value: (
        wire.packed_floats(value)
        if wire_type == wire.LENGTH
        else list(struct.unpack("<f", value))
        if wire_type == wire.FIXED32
        else None
    ),
    "bytes": lambda wire_type, value: [bytes(value)] if wire_type == wire.LENGTH else None,
}
