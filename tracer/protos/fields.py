"""A message's field declarations (tracer/protos/message.py), apart so that the text format
(text_format.py) reads them without importing the messages."""

REPEATED, MESSAGE, MESSAGES, MAP = "repeated", "message", "messages", "map"


class Field:
    """A field's declaration: `name`, `number`, its `shape` (REPEATED, MESSAGE, MESSAGES or
    MAP), what it holds (`of`: a containers.ScalarKind, or a message class) and the
    `oneof` group it belongs to, if any."""

    __slots__ = ("name", "number", "shape", "of", "oneof")

    def __init__(self, name, number, shape, of, oneof=None):
        self.name, self.number, self.shape, self.of, self.oneof = name, number, shape, of, oneof
