"""`Dataset.save(path)`, `Dataset.load(path)` and `Dataset.snapshot(path)`: a pipeline's
elements written to a directory and read back (tracer/data/element_store.py says how; the
files are tracer's own, not TensorFlow's).

`save` runs a pass and writes its elements into `path` (the directory is made; what it held
before from a save is replaced once the new elements are all written). `load` reads them,
with the element_spec and cardinality of what was saved. `snapshot` writes the elements of
its first complete pass into `path/<fingerprint of the pipeline>/`, and every later pass,
also of a later program that builds the same pipeline, reads them from there instead of
running the pipeline (a pass left unfinished writes nothing).
"""

import os

from tracer.data.element_store import Corrupt, Missing, Store, same_spec
from tracer.data.fingerprint import fingerprint

MANIFEST = "tracer-dataset.json"
SHARDS = "shard-"


def save(stage, path):
    """Write the elements of a pass over `stage` into the directory `path`."""
    path = os.fspath(path)
    os.makedirs(path, exist_ok=True)
    _write(Store(path, MANIFEST, SHARDS), stage.spec(), stage.arrays())


def _write(store, spec, elements):
    writer = store.writer(spec)
    try:
        for element in elements:
            writer.add(element)
    except BaseException:
        writer.abandon()
        raise
    writer.commit()


class Loaded:
    """`load(path)`: the elements `save` wrote there, read at each pass."""

    def __init__(self, path, element_spec=None):
        path = os.fspath(path)
        try:
            self._stored = Store(path, MANIFEST, SHARDS).read()
        except Missing:
            raise Missing(
                f"tt.data.Dataset.load: {path!r} holds no dataset that tracer saved (no "
                f"{MANIFEST} there)"
            ) from None
        self._spec = self._stored.spec if element_spec is None else element_spec
        if not same_spec(self._spec, self._stored.spec):
            raise ValueError(
                f"tt.data.Dataset.load: the element_spec given, {element_spec}, is not the one "
                f"saved in {path!r}: {self._stored.spec}"
            )

    def arrays(self):
        yield from self._stored.elements(self._spec)

    def cardinality(self):
        return self._stored.count

    def spec(self):
        return self._spec


class Snapshot:
    """`snapshot(path)`: the upstream's elements, written by its first complete pass under
    `path` and read from there by every later pass."""

    def __init__(self, upstream, path):
        self._upstream = upstream
        self._root = os.fspath(path)
        self._key = fingerprint(upstream)  # (now: the pipeline as it is built)

    def arrays(self):
        store = Store(os.path.join(self._root, self._key), MANIFEST, SHARDS)
        if store.exists():
            stored = store.read()
            if not same_spec(stored.spec, self._upstream.spec()):
                raise Corrupt(
                    f"the snapshot in {store.directory!r} holds elements of {stored.spec}, "
                    f"not the pipeline's {self._upstream.spec()}"
                )
            yield from stored.elements(self._upstream.spec())
            return
        os.makedirs(store.directory, exist_ok=True)
        yield from store.kept_while_passing(self._upstream)

    def cardinality(self):
        return self._upstream.cardinality()

    def spec(self):
        return self._upstream.spec()
