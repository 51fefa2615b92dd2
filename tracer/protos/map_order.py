"""The order of a map<string, ...> field's entries where TensorFlow's protobuf (upb) puts them
in a deterministic order: its text format (repr) and its deterministic serialization.

upb sorts string keys with a comparison that gives the reverse of the bytes' order where two
keys differ at a byte, and the shorter first where one is the start of the other. That is
the ascending order of the keys with each byte complemented. Its serializer writes a message
from its end backwards, so the serialized entries come in the reverse of that order. (Its
default serialization follows its hash table, whose order changes from process to process:
tracer always writes the deterministic one.)

>>> text(["a", "b", "ab", ""]), serialized(["a", "b", "ab", ""])
(['', 'b', 'a', 'ab'], ['ab', 'a', 'b', ''])
"""


def _complemented(key):
    return bytes(255 - b for b in key.encode("utf-8"))


def text(keys):
    """The keys in the order repr prints their entries."""
    return sorted(keys, key=_complemented)


def serialized(keys):
    """The keys in the order the serialized message holds their entries."""
    return text(keys)[::-1]
