"""A pipeline's elements in files: what `save`, `snapshot` and `cache(filename)` write, and
`load` and later passes read (tracer's own format, not TensorFlow's).

A store is a JSON manifest (the element_spec, the number of elements, the shard files in
order) beside its shard files. A shard is a zip of .npy arrays, stored uncompressed, holding
a run of elements leaf by leaf: for each leaf, its elements' ranks and sizes, then their
values one after another; a string leaf as its strings' lengths and bytes, a ragged leaf as
its flat values and row splits, a sparse leaf as its indices, values and dense shape. Only
numbers and bytes are stored: nothing read is unpickled or evaluated.

    store = Store(directory, "tracer-dataset.json", "shard-")
    writer = store.writer(spec)
    for element in elements:
        writer.add(element)
    writer.commit()
    saved = store.read()            # .spec, .count
    for element in saved.elements():
        ...

Files read are not trusted: a manifest or shard that is not what this module writes (a file
name with a directory in it, a link, an array of another dtype or of sizes that do not add
up, an element that does not fit the spec) is a DataLossError naming the file, which is
also a ValueError; a missing manifest is a NotFoundError (also a FileNotFoundError). Files
are written under temporary names in the store's directory and renamed into place, the
manifest last, so that a store is complete or absent; nothing is written outside it.
"""

import json
import os
import re
import secrets
import tempfile
import zipfile

import numpy as np

from tracer import nest
from tracer.data.ragged_elements import RaggedArrays
from tracer.data.sparse_elements import SparseArrays
from tracer.dtypes import as_dtype
from tracer.errors import DataLossError, NotFoundError, mixed
from tracer.ragged_tensor import RaggedTensorSpec
from tracer.signature import TensorSpec
from tracer.sparse_tensor import SparseTensorSpec
from tracer.tensor_shape import is_unknown_rank

FORMAT = "tracer.data elements"
VERSION = 1
# a shard is written once it holds this many elements, or about this many bytes
SHARD_ELEMENTS = 4096
SHARD_BYTES = 64 << 20
_MANIFEST_BYTES = 64 << 20  # a larger manifest is refused unread
_MAX_DEPTH = 64  # how deeply a spec may nest
_MAX_RANK = 64
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,254}\Z")
# the dtypes of what a store holds (by name)
_STORABLE = frozenset(
    "bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 float32 float64 "
    "complex64 complex128 string".split()
)

Corrupt = mixed(DataLossError, ValueError)
Missing = mixed(NotFoundError, FileNotFoundError)


class Store:
    """The manifest `manifest` in `directory` and its shards, named `shard_prefix`..."""

    def __init__(self, directory, manifest, shard_prefix):
        self.directory = os.fspath(directory)
        self.manifest = os.path.join(self.directory, manifest)
        self._prefix = shard_prefix

    def exists(self):
        return os.path.lexists(self.manifest)

    def read(self):
        """The store as its manifest describes it (Stored); NotFoundError where there is none,
        DataLossError where it is not one this module wrote."""
        if not self.exists():
            raise Missing(f"no stored elements: {self.manifest!r} does not exist")
        manifest = _read_manifest(self.manifest)
        try:
            spec = _spec_from_json(manifest["element_spec"], 0)
            count = _count(manifest["count"])
            shards = [(self._shard_path(s["file"]), _count(s["count"])) for s in manifest["shards"]]
        except (KeyError, TypeError, ValueError) as error:
            raise Corrupt(
                f"{self.manifest!r} is not a manifest of stored elements ({error})"
            ) from None
        if sum(n for _, n in shards) != count:
            raise Corrupt(f"{self.manifest!r}: its shards' counts do not add up to {count}")
        return Stored(spec, count, shards)

    def writer(self, spec):
        """A Writer of elements of `spec` into this store."""
        return Writer(self, spec)

    def kept_while_passing(self, upstream):
        """The elements of the stage `upstream`, each written here as it passes: kept when
        the pass ends, nothing kept where it is left unfinished (a GeneratorExit too)."""
        writer = self.writer(upstream.spec())
        try:
            for element in upstream.arrays():
                writer.add(element)
                yield element
        except BaseException:
            writer.abandon()
            raise
        writer.commit()

    def _shard_path(self, name):
        if not isinstance(name, str) or not _NAME.match(name) or not name.startswith(self._prefix):
            raise ValueError(f"a shard name {name!r} is not one tracer writes")
        return os.path.join(self.directory, name)

    def _listed_shards(self):
        """The shard files the manifest there now lists (none where it cannot be read)."""
        try:
            return [path for path, _ in self.read().shards]
        except (Corrupt, Missing):
            return []


class Stored:
    """The elements a manifest lists: `spec`, `count`, and `elements()` read shard by shard."""

    def __init__(self, spec, count, shards):
        self.spec, self.count, self.shards = spec, count, shards

    def elements(self, structure=None):
        """The elements, shard by shard, each leaf checked against `spec`; packed as
        `structure` is (a spec the same as `spec`: `same_spec`), or as `spec`."""
        structure = self.spec if structure is None else structure
        leaves = nest.flatten(self.spec, expand_composites=False)
        for path, count in self.shards:
            with _Shard(path) as shard:
                columns = [_read_leaf(shard, str(k), spec, count) for k, spec in enumerate(leaves)]
            for row in zip(*columns) if columns else [()] * count:
                yield nest.pack_sequence_as(structure, list(row), expand_composites=False)


def same_spec(spec, stored):
    """Whether the elements of `stored` (a spec read back) are those of `spec`: the same
    leaves in the same structure, a namedtuple where a tuple was stored."""
    if nest.structure_difference(_as_stored(spec), stored) is not None:
        return False
    flat = nest.flatten(spec, expand_composites=False)
    return flat == nest.flatten(stored, expand_composites=False)


def _as_stored(spec):
    """`spec` with its namedtuples as tuples, as a store keeps them."""
    if isinstance(spec, dict):
        return {key: _as_stored(item) for key, item in spec.items()}
    if isinstance(spec, tuple):
        return tuple(_as_stored(item) for item in spec)
    return spec


class Writer:
    """Elements added one by one, written a shard at a time; `commit` publishes them (and
    removes the shards of what the store held before), `abandon` removes what it wrote."""

    def __init__(self, store, spec):
        self._store, self._spec = store, spec
        self._json = _spec_to_json(spec, 0)  # (refuses a spec it cannot store, before a write)
        self._leaves = nest.flatten(spec, expand_composites=False)
        self._token = secrets.token_hex(4)  # (new names: a reader of the old store reads on)
        self._pending, self._bytes, self._written = [], 0, []

    def add(self, element):
        self._pending.append(nest.flatten(element))
        self._bytes += sum(_nbytes(leaf) for leaf in self._pending[-1])
        if len(self._pending) >= SHARD_ELEMENTS or self._bytes >= SHARD_BYTES:
            self._flush()

    def commit(self):
        """The manifest written (renamed into place): the store is complete from now on."""
        self._flush()
        old = self._store._listed_shards()
        manifest = {
            "format": FORMAT,
            "version": VERSION,
            "element_spec": self._json,
            "count": sum(n for _, n in self._written),
            "shards": [{"file": os.path.basename(p), "count": n} for p, n in self._written],
        }
        _publish(self._store.manifest, json.dumps(manifest).encode())
        kept = {p for p, _ in self._written}
        for path in old:
            if path not in kept:
                _remove(path)

    def abandon(self):
        for path, _ in self._written:
            _remove(path)
        self._written, self._pending = [], []

    def _flush(self):
        if not self._pending and self._written:
            return
        arrays = {}
        for k, spec in enumerate(self._leaves):
            _put_leaf(arrays, str(k), spec, [row[k] for row in self._pending])
        name = f"{self._store._prefix}{self._token}-{len(self._written):05d}.npz"
        path = os.path.join(self._store.directory, name)
        _publish(path, arrays)
        self._written.append((path, len(self._pending)))
        self._pending, self._bytes = [], 0


# --- the spec as JSON ------------------------------------------------------------------------


def _spec_to_json(spec, depth):
    if depth > _MAX_DEPTH:
        raise ValueError("the element_spec nests too deeply to store")
    if isinstance(spec, dict):
        keys = nest.sorted_keys(spec)
        for key in keys:
            if type(key) not in (str, int):
                raise TypeError(f"a dict key {key!r} cannot be stored (str or int keys)")
        return {
            "dict": [[key, _spec_to_json(spec[key], depth + 1)] for key in keys],
        }
    if isinstance(spec, tuple):  # (a namedtuple is stored as a tuple)
        return {"tuple": [_spec_to_json(item, depth + 1) for item in spec]}
    if isinstance(spec, RaggedTensorSpec):
        return {"ragged": [list(spec.shape), spec.dtype.name, spec.ragged_rank]}
    if isinstance(spec, SparseTensorSpec):
        return {"sparse": [list(spec.shape), spec.dtype.name]}
    if type(spec) is TensorSpec:
        return {
            "tensor": [None if is_unknown_rank(spec.shape) else list(spec.shape), spec.dtype.name]
        }
    raise TypeError(f"elements of spec {spec!r} cannot be stored (tensors, ragged and sparse)")


def _spec_from_json(value, depth):
    if depth > _MAX_DEPTH or not isinstance(value, dict) or len(value) != 1:
        raise ValueError(f"not a stored spec: {str(value)[:80]}")
    ((kind, body),) = value.items()
    if kind == "dict":
        pairs = [_list(pair, 2) for pair in _list(body)]
        keys = [_key(key) for key, _ in pairs]
        if len(set(keys)) != len(keys):
            raise ValueError("a stored dict spec repeats a key")
        return {key: _spec_from_json(item, depth + 1) for key, item in pairs}
    if kind == "tuple":
        return tuple(_spec_from_json(item, depth + 1) for item in _list(body))
    if kind == "tensor":
        shape, dtype = _list(body, 2)
        return TensorSpec(None if shape is None else _shape(shape), _dtype(dtype))
    if kind == "ragged":
        shape, dtype, rank = _list(body, 3)
        return RaggedTensorSpec(_shape(shape), _dtype(dtype), _count(rank))
    if kind == "sparse":
        shape, dtype = _list(body, 2)
        return SparseTensorSpec(_shape(shape), _dtype(dtype))
    raise ValueError(f"not a stored spec kind: {kind!r}")


def _key(key):
    if type(key) not in (str, int):
        raise ValueError(f"a stored dict key {key!r} is not a str or int")
    return key


def _list(value, length=None):
    if type(value) is not list or (length is not None and len(value) != length):
        raise ValueError(f"not a stored list: {str(value)[:80]}")
    return value


def _shape(value):
    dims = _list(value)
    if len(dims) > _MAX_RANK or any(d is not None and (type(d) is not int or d < 0) for d in dims):
        raise ValueError(f"not a stored shape: {dims}")
    return dims


def _dtype(name):
    if name not in _STORABLE:
        raise ValueError(f"not a dtype tracer stores: {str(name)[:40]!r}")
    return as_dtype(name)


def _count(value):
    if type(value) is not int or value < 0:
        raise ValueError(f"not a count: {value!r}")
    return value


def _read_manifest(path):
    if os.path.islink(path) or not os.path.isfile(path):
        raise Corrupt(f"{path!r} is not a regular file")
    try:
        with open(path, "rb") as file:
            text = file.read(_MANIFEST_BYTES + 1)
        if len(text) > _MANIFEST_BYTES:
            raise ValueError("it is larger than any manifest tracer writes")
        manifest = json.loads(text.decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as error:
        raise Corrupt(f"{path!r} is not a manifest of stored elements ({error})") from None
    if (
        not isinstance(manifest, dict)
        or manifest.get("format") != FORMAT
        or manifest.get("version") != VERSION
    ):
        raise Corrupt(f"{path!r} is not a manifest of stored elements (version {VERSION})")
    return manifest


# --- leaves --------------------------------------------------------------------------------


def _put_leaf(arrays, name, spec, leaves):
    """The elements' `leaves` of `spec` as arrays named `name`.*."""
    if isinstance(spec, RaggedTensorSpec):
        parts = [_ragged(leaf, spec) for leaf in leaves]
        _put_arrays(arrays, f"{name}.flat", [p.flat for p in parts], spec.dtype)
        for j in range(spec.ragged_rank):
            _put_arrays(arrays, f"{name}.s{j}", [p.splits[j] for p in parts], as_dtype("int64"))
    elif isinstance(spec, SparseTensorSpec):
        _put_arrays(arrays, f"{name}.indices", [p.indices for p in leaves], as_dtype("int64"))
        _put_arrays(arrays, f"{name}.values", [p.values for p in leaves], spec.dtype)
        shapes = [np.asarray(p.shape, np.int64) for p in leaves]
        _put_arrays(arrays, f"{name}.shape", shapes, as_dtype("int64"))
    else:
        _put_arrays(arrays, name, [np.asarray(leaf) for leaf in leaves], spec.dtype)


def _ragged(leaf, spec):
    if type(leaf) is RaggedArrays:
        return leaf
    return RaggedArrays(np.asarray(leaf), [])  # (a ragged row of ragged rank 0: dense)


def _put_arrays(arrays, name, parts, dtype):
    arrays[f"{name}.ndim"] = np.array([p.ndim for p in parts], np.int64)
    arrays[f"{name}.dims"] = np.array([d for p in parts for d in p.shape], np.int64)
    if dtype.is_string:
        strings = [_bytes(s) for p in parts for s in p.reshape(-1).tolist()]
        arrays[f"{name}.lengths"] = np.array([len(s) for s in strings], np.int64)
        arrays[f"{name}.bytes"] = np.frombuffer(b"".join(strings), np.uint8)
    else:
        numpy_dtype = np.dtype(dtype.as_numpy_dtype)
        flat = [np.asarray(p, numpy_dtype).reshape(-1) for p in parts]
        arrays[f"{name}.values"] = np.concatenate(flat) if flat else np.zeros(0, numpy_dtype)


def _bytes(value):
    return value.encode() if isinstance(value, str) else bytes(value)


def _read_leaf(shard, name, spec, count):
    """The `count` elements' leaves of `spec` stored as `name`.*, each checked against it."""
    if isinstance(spec, RaggedTensorSpec):
        flat = _read_arrays(shard, f"{name}.flat", spec.dtype, count)
        levels = [
            _read_arrays(shard, f"{name}.s{j}", as_dtype("int64"), count)
            for j in range(spec.ragged_rank)
        ]
        leaves = [
            _checked_ragged(shard, f, [s[k] for s in levels], spec) for k, f in enumerate(flat)
        ]
    elif isinstance(spec, SparseTensorSpec):
        indices = _read_arrays(shard, f"{name}.indices", as_dtype("int64"), count)
        values = _read_arrays(shard, f"{name}.values", spec.dtype, count)
        shapes = _read_arrays(shard, f"{name}.shape", as_dtype("int64"), count)
        leaves = [_checked_sparse(shard, *parts, spec) for parts in zip(indices, values, shapes)]
    else:
        leaves = _read_arrays(shard, name, spec.dtype, count)
        for leaf in leaves:
            if not spec.admits(leaf.shape, spec.dtype):
                raise Corrupt(
                    f"{shard.path!r}: an element of shape {leaf.shape} where {spec} is stored"
                )
    return leaves


def _checked_ragged(shard, flat, splits, spec):
    rank = len(spec.shape)
    if flat.ndim != rank - spec.ragged_rank:
        raise Corrupt(f"{shard.path!r}: a ragged element's values of rank {flat.ndim}")
    inner = len(flat)
    for level in reversed(splits):
        if level.ndim != 1 or len(level) < 1 or level[0] != 0 or level[-1] != inner:
            raise Corrupt(f"{shard.path!r}: a ragged element's row splits do not fit its values")
        if np.any(np.diff(level) < 0):
            raise Corrupt(f"{shard.path!r}: a ragged element's row splits decrease")
        inner = len(level) - 1
    leaf = RaggedArrays(flat, splits)
    if spec.shape[0] is not None and spec.ragged_rank and len(splits[0]) - 1 != spec.shape[0]:
        raise Corrupt(f"{shard.path!r}: a ragged element of another row count than {spec}")
    return leaf


def _checked_sparse(shard, indices, values, shape, spec):
    rank = len(spec.shape)
    if shape.shape != (rank,) or indices.ndim != 2 or indices.shape[1] != rank:
        raise Corrupt(f"{shard.path!r}: a sparse element of another rank than {spec}")
    if values.shape != (indices.shape[0],) or np.any(indices < 0) or np.any(indices >= shape):
        raise Corrupt(f"{shard.path!r}: a sparse element's indices do not fit its shape")
    if any(d is not None and d != int(s) for d, s in zip(spec.shape, shape)):
        raise Corrupt(f"{shard.path!r}: a sparse element of another shape than {spec}")
    return SparseArrays(indices, values, [int(s) for s in shape])


def _read_arrays(shard, name, dtype, count):
    """The `count` arrays stored as `name`.* (their ranks, sizes and values)."""
    ndim = shard.array(f"{name}.ndim", np.int64)
    if ndim.shape != (count,) or np.any(ndim < 0) or np.any(ndim > _MAX_RANK):
        raise Corrupt(f"{shard.path!r}: {name}.ndim does not list {count} ranks")
    dims = shard.array(f"{name}.dims", np.int64)
    if len(dims) != int(ndim.sum()) or np.any(dims < 0):
        raise Corrupt(f"{shard.path!r}: {name}.dims does not fit {name}.ndim")
    shapes, at = [], 0
    for rank in ndim.tolist():
        shapes.append(tuple(dims[at : at + rank].tolist()))
        at += rank
    sizes = [_size(shape) for shape in shapes]
    if dtype.is_string:
        lengths = shard.array(f"{name}.lengths", np.int64)
        data = shard.array(f"{name}.bytes", np.uint8).tobytes()
        if len(lengths) != sum(sizes) or np.any(lengths < 0) or int(lengths.sum()) != len(data):
            raise Corrupt(f"{shard.path!r}: {name}'s strings do not add up")
        ends = np.cumsum(lengths).tolist()
        starts = [0, *ends[:-1]]
        strings = [data[a:b] for a, b in zip(starts, ends)]
        values = np.empty(len(strings), object)
        values[:] = strings
    else:
        values = shard.array(f"{name}.values", np.dtype(dtype.as_numpy_dtype))
        if len(values) != sum(sizes):
            raise Corrupt(f"{shard.path!r}: {name}.values does not hold its elements' values")
    out, at = [], 0
    for shape, size in zip(shapes, sizes):
        out.append(values[at : at + size].reshape(shape))
        at += size
    return out


def _size(shape):
    size = 1
    for d in shape:
        size *= d
    return size


def _nbytes(leaf):
    if type(leaf) is RaggedArrays:
        return leaf.flat.nbytes + sum(s.nbytes for s in leaf.splits)
    if type(leaf) is SparseArrays:
        return leaf.indices.nbytes + leaf.values.nbytes
    return getattr(leaf, "nbytes", 8)


# --- files ---------------------------------------------------------------------------------


class _Shard:
    """A shard file opened for reading: `array(name, dtype)` reads the 1-D array `name`,
    after its header says it is one of `dtype` that the file holds whole."""

    def __init__(self, path):
        self.path = path
        if os.path.islink(path) or not os.path.isfile(path):
            raise Corrupt(f"{path!r}: the shard is not a regular file (a link, or missing)")
        try:
            self._zip = zipfile.ZipFile(path)
            self._entries = {info.filename: info for info in self._zip.infolist()}
        except (OSError, zipfile.BadZipFile, ValueError) as error:
            raise Corrupt(f"{path!r} is not a shard of stored elements ({error})") from None

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self._zip.close()

    def array(self, name, dtype):
        info = self._entries.get(f"{name}.npy")
        if info is None or info.compress_type != zipfile.ZIP_STORED:
            raise Corrupt(f"{self.path!r} does not hold the array {name} as tracer stores it")
        try:
            with self._zip.open(info) as file:
                version = np.lib.format.read_magic(file)
                if version == (1, 0):
                    shape, fortran, stored = np.lib.format.read_array_header_1_0(file)
                elif version == (2, 0):
                    shape, fortran, stored = np.lib.format.read_array_header_2_0(file)
                else:
                    raise ValueError(f"npy version {version}")
                if stored != dtype or stored.hasobject or fortran or len(shape) != 1:
                    raise ValueError(f"a {stored} array of shape {shape}, not 1-D {dtype}")
                size = shape[0] * stored.itemsize
                if size > info.file_size:
                    raise ValueError("its header claims more values than the file holds")
                data = file.read(size)
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as error:
            raise Corrupt(f"{self.path!r}: the array {name} cannot be read ({error})") from None
        if len(data) != size:
            raise Corrupt(f"{self.path!r}: the array {name} is cut short")
        return np.frombuffer(data, stored).copy()


def _publish(path, content):
    """`content` (bytes, or {name: 1-D array} for a shard) written to a temporary file in
    `path`'s directory, then renamed to `path`."""
    directory = os.path.dirname(path)
    handle, temporary = tempfile.mkstemp(prefix=".tracer-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(handle, "wb") as file:
            if isinstance(content, bytes):
                file.write(content)
            else:
                with zipfile.ZipFile(file, "w", zipfile.ZIP_STORED) as shard:
                    for name, array in content.items():
                        with shard.open(f"{name}.npy", "w", force_zip64=True) as entry:
                            np.lib.format.write_array(entry, array, allow_pickle=False)
        os.replace(temporary, path)
    except BaseException:
        _remove(temporary)
        raise


def _remove(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
