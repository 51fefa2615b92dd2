"""`cache(filename)`: the elements of the first complete pass written beside `filename`, and
read from there by later passes, and by later programs that make the same pipeline with the
same filename (TensorFlow's cache files, in tracer's own format).

The files are `<filename>.index`, the name of TensorFlow's index file (here a JSON
manifest), and `<filename>.data-...` shards beside it (tracer/data/element_store.py): written
under temporary names and renamed into place, the index last, once the pass is complete, so
that a pass left unfinished leaves no cache behind. Files read back are not trusted: their
elements must have the structure, dtypes and shapes the pipeline gives, or the pass stops
with a ValueError naming the file (a DataLossError too).
"""

import os

from tracer.data.element_store import Corrupt, Store, same_spec

INDEX = ".index"


class FileCache:
    def __init__(self, upstream, filename):
        self._upstream = upstream
        path = os.path.abspath(os.fspath(filename))
        directory, name = os.path.split(path)
        if not os.path.isdir(directory):
            raise ValueError(f"cache({filename!r}): the directory {directory!r} does not exist")
        self._store = Store(directory, name + INDEX, name + ".data-")

    def arrays(self):
        if self._store.exists():
            yield from self._read()
            return
        yield from self._store.kept_while_passing(self._upstream)

    def cardinality(self):
        return self._upstream.cardinality()

    def spec(self):
        return self._upstream.spec()

    def _read(self):
        try:
            stored = self._store.read()
            spec = self._upstream.spec()
            if not same_spec(spec, stored.spec):
                raise Corrupt(f"it holds elements of {stored.spec}, the pipeline gives {spec}")
        except Corrupt as error:
            raise Corrupt(
                f"the cache file {self._store.manifest!r} does not hold this pipeline's elements "
                f"({error}); delete it to cache the pipeline again"
            ) from None
        yield from stored.elements(spec)
