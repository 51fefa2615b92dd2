"""TFRecord framing, as TensorBoard's event files use it.

A record is its length (uint64, little-endian), the masked CRC32C of those 8 bytes, the
data, and the masked CRC32C of the data (each CRC a uint32, little-endian):

>>> frame(b"").hex(" ")
'00 00 00 00 00 00 00 00 29 03 98 07 d8 ea 82 a2'

CRC32C (Castagnoli) is not zlib's CRC32 (another polynomial), and tracer depends on no
package that has it; it runs here in pure Python on one 256-entry table. Summaries are small
(a scalar's event is about 50 bytes, an image's PNG a few kilobytes), so a byte at a time is
fast enough; a numpy version would need a sequential loop all the same.
"""

import struct

_POLYNOMIAL = 0x82F63B78  # CRC32C's polynomial, bits reversed


def _table():
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ (_POLYNOMIAL if crc & 1 else 0)
        table.append(crc)
    return tuple(table)


_TABLE = _table()


def crc32c(data):
    """CRC32C of `data` (bytes).

    >>> hex(crc32c(b"123456789"))  # the standard check value
    '0xe3069283'
    """
    crc = 0xFFFFFFFF
    table = _TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data):
    """The CRC as records store it: rotated right by 15 bits plus a constant, so that a CRC
    of data that holds CRCs is not itself trivial."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


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
        header = raw[at : at + 12]
        if len(header) < 12:
            raise ValueError(f"record {len(records)}: truncated length at byte {at}")
        (length,) = struct.unpack("<Q", header[:8])
        if struct.unpack("<I", header[8:])[0] != masked_crc32c(header[:8]):
            raise ValueError(f"record {len(records)}: bad CRC of its length at byte {at}")
        data = raw[at + 12 : at + 12 + length]
        footer = raw[at + 12 + length : at + 16 + length]
        if len(footer) < 4 or struct.unpack("<I", footer)[0] != masked_crc32c(data):
            raise ValueError(f"record {len(records)}: bad or missing CRC of its data")
        records.append(data)
        at += 16 + length
    return records
