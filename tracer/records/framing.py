"""TFRecord framing: TensorBoard's event files and `tf.io.TFRecordWriter`'s files hold it.

A record is its length (uint64, little-endian), the masked CRC32C of those 8 bytes, the
data, and the masked CRC32C of the data (each CRC a uint32, little-endian):

>>> frame(b"").hex(" ")
'00 00 00 00 00 00 00 00 29 03 98 07 d8 ea 82 a2'

A file is read as untrusted data: both CRCs are checked, a length is believed only as far
as its CRC vouches for it, and the data is read a bounded chunk at a time, so that a
damaged length costs no more memory than the file holds.
"""

import struct

from tracer.errors import DataLossError
from tracer.records.crc32c import crc32c, masked_crc32c

__all__ = ["crc32c", "frame", "masked_crc32c", "read_framed", "read_records"]

_HEADER = 12  # the length and its CRC
_FOOTER = 4  # the data's CRC
_CHUNK = 1 << 20  # bytes read at a time


def frame(data):
    """The record of `data` (bytes)."""
    length = struct.pack("<Q", len(data))
    return b"".join(
        (
            length,
            struct.pack("<I", masked_crc32c(length)),
            data,
            struct.pack("<I", masked_crc32c(data)),
        )
    )


def read_records(raw):
    """The data of each record in `raw` (the bytes of a file), checking both CRCs; a
    ValueError names the first damaged record."""
    records, at = [], 0
    while at < len(raw):
        header = raw[at : at + _HEADER]
        if len(header) < _HEADER:
            raise ValueError(f"record {len(records)}: truncated length at byte {at}")
        (length,) = struct.unpack("<Q", header[:8])
        if struct.unpack("<I", header[8:])[0] != masked_crc32c(header[:8]):
            raise ValueError(f"record {len(records)}: bad CRC of its length at byte {at}")
        data = raw[at + _HEADER : at + _HEADER + length]
        footer = raw[at + _HEADER + length : at + _HEADER + _FOOTER + length]
        if len(footer) < _FOOTER or struct.unpack("<I", footer)[0] != masked_crc32c(data):
            raise ValueError(f"record {len(records)}: bad or missing CRC of its data")
        records.append(data)
        at += _HEADER + _FOOTER + length
    return records


def read_framed(stream, cut_short="Read less bytes than requested"):
    """The data of each record of the binary file object `stream`, as TensorFlow's reader
    gives them: DataLossError with its messages where a CRC is wrong ("corrupted record at
    N", N the offset of the length or of the data) or a record is cut short ("truncated
    record at N' failed with " + `cut_short`, N the record's offset); a last header cut
    short ends the file without an error, as there."""
    at = 0
    while True:
        header = _read(stream, _HEADER)
        if len(header) < _HEADER:
            return
        if struct.unpack("<I", header[8:])[0] != masked_crc32c(header[:8]):
            hint = " (Is this even a TFRecord file?)" if at == 0 else ""
            raise DataLossError(None, None, f"corrupted record at {at}{hint}")
        (length,) = struct.unpack("<Q", header[:8])
        data = _read(stream, length)
        footer = _read(stream, _FOOTER) if len(data) == length else b""
        if len(footer) < _FOOTER:
            raise DataLossError(None, None, f"truncated record at {at}' failed with {cut_short}")
        if struct.unpack("<I", footer)[0] != masked_crc32c(data):
            raise DataLossError(None, None, f"corrupted record at {at + _HEADER}")
        yield data
        at += _HEADER + length + _FOOTER


def _read(stream, count):
    """Up to `count` bytes of `stream`, fewer only at its end, read a chunk at a time (a
    read of `count` at once would allocate all of it first)."""
    if count <= _CHUNK:
        return _read_small(stream, count)
    parts = []
    while count > 0:
        wanted = min(count, _CHUNK)
        parts.append(_read_small(stream, wanted))
        if len(parts[-1]) < wanted:  # the end of the stream
            break
        count -= wanted
    return b"".join(parts)


def _read_small(stream, count):
    """`count` bytes of `stream` (fewer only at its end: a stream may give less at once)."""
    data = stream.read(count)
    while len(data) < count:
        more = stream.read(count - len(data))
        if not more:
            break
        data += more
    return data
