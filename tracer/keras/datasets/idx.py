"""The IDX format of the MNIST family's files: two zero bytes, a type byte, the number of
dimensions, each dimension as a big-endian 32-bit count, then the values in C order. A file
is read only where its header and its length agree; otherwise ValueError names it."""

import gzip

import numpy as np

_TYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_idx(path, gzipped=False):
    """The array the IDX file at `path` holds (gzip-compressed where `gzipped`)."""
    with gzip.open(path, "rb") if gzipped else open(path, "rb") as handle:
        data = handle.read()
    if len(data) < 4 or data[:2] != b"\0\0" or data[2] not in _TYPES:
        raise ValueError(f"{path}: not an IDX file (its first bytes are {data[:4]!r})")
    rank = data[3]
    header = 4 + 4 * rank
    if len(data) < header:
        raise ValueError(f"{path}: an IDX header of {rank} dimensions, cut short")
    shape = tuple(int(n) for n in np.frombuffer(data, ">u4", rank, offset=4))
    dtype = np.dtype(_TYPES[data[2]])
    expected = header + int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if len(data) != expected:
        raise ValueError(
            f"{path}: an IDX file of shape {shape} and type {dtype} holds {expected} bytes, "
            f"not {len(data)}"
        )
    return np.frombuffer(data, dtype, offset=header).reshape(shape).astype(dtype.newbyteorder("="))
