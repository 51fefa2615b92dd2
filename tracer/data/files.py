"""Stages that read files (tracer/data/specs.py says what a stage is): `TextLineDataset`'s lines
and `Dataset.list_files`' names. A file is read when a pass reaches it, as tf.data reads
it; what it holds is data, never trusted to be text of any one encoding (lines are bytes,
as TensorFlow's string tensors hold them)."""

import glob
import gzip
import os
import zlib

import numpy as np

from tracer import nest
from tracer.data.specs import UNKNOWN
from tracer.errors import DataLossError, InvalidArgumentError, NotFoundError
from tracer.signature import TensorSpec

# the compression_type names TensorFlow takes ("" and None: none)
_COMPRESSIONS = ("", "GZIP", "ZLIB")
_CHUNK = 1 << 20  # bytes read at a time


class TextLines:
    """`TextLineDataset(filenames)`: each line of each file in turn, without its "\\n" and
    with no "\\r" (TensorFlow drops every one); a last line without "\\n" is a line too. `filenames`: a name, names, or the
    stage of a dataset of names, read each pass."""

    def __init__(self, filenames, compression_type):
        compression = compression_type or ""
        if compression not in _COMPRESSIONS:
            raise ValueError(
                f"TextLineDataset: compression_type must be one of {list(_COMPRESSIONS)}, not "
                f"{compression_type!r}"
            )
        self._names, self._compression = filenames, compression

    def arrays(self):
        names = self._names.arrays() if hasattr(self._names, "arrays") else iter(self._names)
        for name in names:
            for line in read_lines(path_of(name), self._compression):
                yield string_scalar(line)

    def cardinality(self):
        return UNKNOWN

    def spec(self):
        return TensorSpec((), "string")


def file_names(filenames):
    """TextLineDataset's `filenames` as a list of names, or the stage of a dataset of them
    (read each pass)."""
    stage = getattr(filenames, "_stage", None)  # (a tt.data.Dataset's)
    if stage is not None:
        return stage
    value = getattr(filenames, "_value", filenames)  # (a string tensor's array)
    return [value] if isinstance(value, (str, bytes, os.PathLike)) else np.ravel(value).tolist()


def matching_files(patterns):
    """The names of the files each glob pattern of `patterns` (one, or several) matches,
    sorted; a relative pattern names them from "./", as TensorFlow's glob does. InvalidArgumentError where none matches."""
    value = getattr(patterns, "_value", patterns)
    patterns = [value] if isinstance(value, (str, bytes, os.PathLike)) else np.ravel(value).tolist()
    found = []  # (a file two patterns match is named twice, as by TensorFlow)
    for pattern in map(path_of, patterns):
        found += glob.glob(pattern if os.path.isabs(pattern) else os.path.join(".", pattern))
    if not found:
        shown = ", ".join(map(path_of, patterns))
        raise InvalidArgumentError(None, None, f"No files matched pattern: {shown}")
    return sorted(found)


def read_lines(path, compression):
    """The lines of the file at `path` (bytes), read a chunk at a time; DataLossError, naming
    the file, where its compressed data is not."""
    try:
        yield from _read_lines(path, compression)
    except (gzip.BadGzipFile, zlib.error, EOFError) as error:
        raise DataLossError(None, None, f"{path}: not {compression} data ({error})") from None


def _read_lines(path, compression):
    try:
        handle = gzip.open(path, "rb") if compression == "GZIP" else open(path, "rb")
    except FileNotFoundError:
        raise NotFoundError(None, None, f"{path}; No such file or directory") from None
    with handle:
        inflate = zlib.decompressobj() if compression == "ZLIB" else None
        rest = b""
        while True:
            read = handle.read(_CHUNK)
            chunk = read
            if inflate is not None:  # (a read may inflate to nothing yet)
                chunk = inflate.decompress(read) if read else inflate.flush()
            if not read and not chunk:
                break
            *lines, rest = (rest + chunk.replace(b"\r", b"")).split(b"\n")
            yield from lines
        if rest:
            yield rest


def path_of(name):
    """A file name given as str, bytes, a path or a 0-d string array."""
    name = name[()] if isinstance(name, np.ndarray) else name
    return os.fsdecode(name) if isinstance(name, (bytes, os.PathLike)) else str(name)


def string_scalar(value):
    """A 0-d string array holding the bytes `value`, as a pipeline's string elements are."""
    array = np.empty((), object)
    array[()] = value
    return array


def string_array(names):
    """`names` (str) as a 1-D string array of their bytes, for from_tensor_slices."""
    return np.array([os.fsencode(n) for n in nest.flatten(names)], dtype=object)
