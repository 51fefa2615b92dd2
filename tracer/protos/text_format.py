"""The protocol buffer text format of a message, as TensorFlow's protobuf (upb) prints it for
repr and str: a field a line (`value: 3`), a message in braces, two spaces a level, a map
entry as a `key` and a `value` message in the order map_order.py gives.

>>> from tracer.train import Int64List
>>> print(Int64List(value=[1, -2]), end="")
value: 1
value: -2
"""

import math
import struct

from tracer.protos import map_order
from tracer.protos.fields import MAP, MESSAGE, MESSAGES

# the escapes of C's string syntax that upb writes; other bytes outside printable ASCII are
# three octal digits
_ESCAPES = {ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t", ord('"'): '\\"'}
_ESCAPES.update({ord("'"): "\\'", ord("\\"): "\\\\"})


def message_text(message, indent=0):
    """The text of `message`'s set fields, each line indented by `indent` spaces."""
    lines = []
    _write(message, " " * indent, lines)
    return "".join(lines)


def _write(message, pad, lines):
    for field, value in message.ListFields():
        name = field.name
        if field.shape == MESSAGE:
            _block(f"{pad}{name}", value, pad, lines)
        elif field.shape == MESSAGES:
            for element in value:
                _block(f"{pad}{name}", element, pad, lines)
        elif field.shape == MAP:
            for key in map_order.text(value.keys()):
                lines.append(f'{pad}{name} {{\n{pad}  key: "{_escaped(key.encode(), True)}"\n')
                _block(f"{pad}  value", value[key], pad + "  ", lines)
                lines.append(f"{pad}}}\n")
        else:
            shown = _SCALARS[field.of.name]
            lines += [f"{pad}{name}: {shown(v)}\n" for v in value]


def _block(head, message, pad, lines):
    lines.append(f"{head} {{\n")
    _write(message, pad + "  ", lines)
    lines.append(f"{pad}}}\n")


def _float(value):
    """A float32 in the shortest of 6 or 9 significant digits that reads back as itself."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    short = f"{value:.6g}"
    if struct.unpack("<f", struct.pack("<f", float(short)))[0] == value:
        return short
    return f"{value:.9g}"


def _escaped(data, utf8=False):
    """`data` (bytes) in C's string syntax; with `utf8` (a string field), bytes past ASCII
    stay as they are (the text keeps the string's characters)."""
    out = []
    for byte in data:
        if byte in _ESCAPES:
            out.append(_ESCAPES[byte])
        elif 0x20 <= byte < 0x7F or (utf8 and byte >= 0x80):
            out.append(chr(byte))
        else:
            out.append(f"\\{byte:03o}")
    text = "".join(out)
    return text.encode("latin-1").decode("utf-8") if utf8 else text


_SCALARS = {"int64": str, "float": _float, "bytes": lambda v: f'"{_escaped(v)}"'}
