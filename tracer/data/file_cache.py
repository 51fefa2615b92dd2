"""`cache(filename)`: the elements of the first complete pass written to a file, and read
from it by later passes, and by later programs that make the same pipeline with the same
filename (TensorFlow's cache files, in tracer's own format).

The file is `<filename>.tracer-cache.npz`, beside `filename`: numpy arrays only (read with
`allow_pickle=False`), written to a temporary file in the same directory and renamed into
place once the pass is complete, so that a pass left unfinished leaves no cache behind. A
file read back is not trusted: its elements must have the structure, dtypes and shapes the
pipeline gives, or the pass stops with a ValueError naming the file.
"""

import os
import tempfile
import zipfile

import numpy as np

from tracer import nest

SUFFIX = ".tracer-cache.npz"


class FileCache:
    def __init__(self, upstream, filename):
        self._upstream = upstream
        self._path = os.fspath(filename) + SUFFIX
        directory = os.path.dirname(os.path.abspath(self._path))
        if not os.path.isdir(directory):
            raise ValueError(f"cache({filename!r}): the directory {directory!r} does not exist")

    def arrays(self):
        if os.path.exists(self._path):
            yield from self._read()
            return
        seen = []
        for element in self._upstream.arrays():
            seen.append(element)
            yield element
        self._write(seen)

    def cardinality(self):
        return self._upstream.cardinality()

    def spec(self):
        return self._upstream.spec()

    def _write(self, elements):
        arrays = {"count": np.array(len(elements), np.int64)}
        for i, element in enumerate(elements):
            for k, leaf in enumerate(nest.flatten(element)):
                arrays[f"e{i}_{k}"] = np.asarray(leaf)
        directory = os.path.dirname(os.path.abspath(self._path))
        handle, temporary = tempfile.mkstemp(prefix=".tracer-cache-", dir=directory)
        try:
            with os.fdopen(handle, "wb") as file:
                np.savez(file, **arrays)
            os.replace(temporary, self._path)
        except BaseException:
            os.unlink(temporary)
            raise

    def _read(self):
        spec = self._upstream.spec()
        wanted = nest.flatten(spec)
        try:
            with np.load(self._path, allow_pickle=False) as stored:
                count = int(stored["count"])
                for i in range(count):
                    leaves = [stored[f"e{i}_{k}"] for k in range(len(wanted))]
                    for leaf, leaf_spec in zip(leaves, wanted):
                        if not leaf_spec.admits(leaf.shape, leaf.dtype):
                            raise ValueError(
                                f"element {i} holds a {leaf.dtype} array of shape "
                                f"{leaf.shape}, where the pipeline gives {leaf_spec}"
                            )
                    yield nest.pack_sequence_as(spec, leaves)
        except (KeyError, OSError, TypeError, ValueError, zipfile.BadZipFile) as error:
            raise ValueError(
                f"the cache file {self._path!r} does not hold this pipeline's elements "
                f"({error}); delete it to cache the pipeline again"
            ) from None
