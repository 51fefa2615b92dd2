"""CRC32C (Castagnoli), the checksum of TFRecord framing, in Python and numpy.

CRC32C is not zlib's CRC32 (another polynomial), and tracer depends on no package that has
it. Short data (a summary's scalar event) runs a byte at a time on one 256-entry table
(about 6 MB/s); longer data runs in numpy, on what makes a CRC linear over GF(2):

- a zero register is unchanged by leading zero bytes, and the usual all-ones start is the
  same as a zero start with the first four bytes inverted (it is XORed into them);
- from a zero register, a block's CRC is the XOR over its bytes of a table entry per
  (distance from the block's end, byte value): `_BLOCK` bytes are one gather and one XOR
  reduction in numpy;
- a register carried over one block of zeros is another linear map, four 256-entry tables
  (one per byte of the register): the blocks' CRCs chain in a short Python loop.

About 130 MB/s on long data (TensorFlow's C++ is faster still; tracer's files are read in
Python anyway).

>>> hex(crc32c(b"123456789"))  # the standard check value
'0xe3069283'
"""

import numpy as np

_POLYNOMIAL = 0x82F63B78  # CRC32C's polynomial, bits reversed
_BLOCK = 1024  # bytes a row of the numpy path
_NUMPY_FROM = 128  # shorter data runs the byte loop (faster there: numpy's calls cost ~15 us)


def _table():
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ (_POLYNOMIAL if crc & 1 else 0)
        table.append(crc)
    return tuple(table)


_TABLE = _table()


def _crc_bytes(data):
    crc = 0xFFFFFFFF
    table = _TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _zero_bytes(registers, count):
    """Each register (a uint32 array) carried over `count` zero bytes."""
    table = np.array(_TABLE, np.uint32)
    for _ in range(count):
        registers = table[registers & 0xFF] ^ (registers >> 8)
    return registers


class _Tables:
    """The numpy path's tables, made at its first use (about 1 MiB, a few milliseconds)."""

    def __init__(self):
        # by_distance[d * 256 + b]: the register after byte b then d zero bytes, from zero
        rows = [np.array(_TABLE, np.uint32)]
        for _ in range(_BLOCK - 1):
            rows.append(_zero_bytes(rows[-1], 1))
        self.by_distance = np.concatenate(rows)
        # where each byte of a block reads by_distance: its distance from the block's end
        self.offsets = (np.arange(_BLOCK - 1, -1, -1) * 256).astype(np.intp)
        # a register over a block of zeros: the XOR of one entry per byte of the register
        starts = (
            np.arange(256, dtype=np.uint32)[None, :] << (8 * np.arange(4, dtype=np.uint32))[:, None]
        )
        self.over_block = [row.tolist() for row in _zero_bytes(starts, _BLOCK)]


_tables = None


def _crc_numpy(data):
    global _tables
    if _tables is None:
        _tables = _Tables()
    padding = -len(data) % _BLOCK
    buffer = np.zeros(padding + len(data), np.uint8)
    buffer[padding:] = np.frombuffer(data, np.uint8)
    buffer[padding : padding + 4] ^= 0xFF  # the all-ones start, as data
    blocks = buffer.reshape(-1, _BLOCK)
    parts = np.bitwise_xor.reduce(_tables.by_distance[blocks + _tables.offsets], axis=1)
    t0, t1, t2, t3 = _tables.over_block
    crc = 0
    for part in parts.tolist():
        crc = t0[crc & 0xFF] ^ t1[(crc >> 8) & 0xFF] ^ t2[(crc >> 16) & 0xFF] ^ t3[crc >> 24] ^ part
    return crc ^ 0xFFFFFFFF


def crc32c(data):
    """CRC32C of `data` (bytes, or any buffer of bytes).

    >>> crc32c(b"")
    0
    """
    if len(data) >= _NUMPY_FROM:
        return _crc_numpy(data)
    return _crc_bytes(data)


def masked_crc32c(data):
    """The CRC as TFRecords store it: rotated right by 15 bits plus a constant, so that a
    CRC of data that holds CRCs is not itself trivial."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF
