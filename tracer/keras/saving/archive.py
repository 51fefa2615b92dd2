"""The `.keras` zip: `metadata.json`, `config.json` and `model.weights.h5`, as Keras 3 writes them.

A `.keras` file is someone else's zip, so reading it never extracts anything to disk: the
members are read into memory, each after its declared size is checked against a limit and
against the bytes it takes in the zip (a decompression bomb declares far more than it stores),
and never past that size. Of Keras's `assets/`, the lookup layers' `vocabulary.txt` files are
read (`vocabularies`); other members are ignored.
"""

import json
import lzma
import os
import zipfile
import zlib

CONFIG = "config.json"
METADATA = "metadata.json"
WEIGHTS = "model.weights.h5"

# NOTE: limits on what a file may make tracer read into memory; a real config is kilobytes, a
# real weights file what the model's parameters take.
MAX_JSON_BYTES = 64 << 20
MAX_WEIGHTS_BYTES = 16 << 30
MAX_MEMBERS = 100_000
# a member may declare at most this many times the bytes it stores, once past BOMB_FLOOR:
# Keras and tracer store members uncompressed (1:1); re-zipped, float weights deflate to
# about 1.1:1 (a small model's mostly empty HDF5 headers to ~20:1), while a bomb of zeros
# reaches DEFLATE's ~1032:1. At 50:1 a 3 MB file can claim 150 MB, not gigabytes.
MAX_EXPANSION = 50
BOMB_FLOOR = 1 << 20
# what zipfile raises for a damaged zip, or one it cannot read (encrypted, an unknown
# compression method or zip version), besides BadZipFile; bz2 gives corrupt data as OSError
_DAMAGED = (
    zipfile.BadZipFile,
    RuntimeError,
    EOFError,
    UnicodeDecodeError,
    zlib.error,
    lzma.LZMAError,
)


def write(file, metadata, config, weights):
    """Write a `.keras` zip of the two JSON dicts and the weights file's bytes to `file` (an
    open binary file). Members are stored uncompressed, in Keras's order."""
    with zipfile.ZipFile(file, "w", compression=zipfile.ZIP_STORED) as archive:
        archive.writestr(METADATA, json.dumps(metadata))
        archive.writestr(CONFIG, json.dumps(config))
        archive.writestr(WEIGHTS, weights)


def read(source, weights=True):
    """`(metadata, config, weights bytes or None)` from a `.keras` zip (a path or an open
    binary file); `weights=False` leaves the weights unread. Raises ValueError when the file
    is not a zip, lacks `config.json` or `model.weights.h5`, or holds members too large."""
    try:
        archive = zipfile.ZipFile(source, "r")
    except _DAMAGED as error:
        raise ValueError(f"{label(source)} is not a .keras file (a zip): {error}") from None
    with archive:
        infos = archive.infolist()
        if len(infos) > MAX_MEMBERS:
            raise ValueError(f"{label(source)} holds {len(infos)} members; refusing to read it")
        members = {}
        for info in infos:
            if info.filename in members:
                raise ValueError(f"{label(source)} holds {info.filename!r} twice")
            members[info.filename] = info
        for name in (CONFIG, WEIGHTS):
            if name not in members:
                raise ValueError(_missing(source, name, members))
        config = _json(archive, members[CONFIG], source)
        metadata = _json(archive, members[METADATA], source) if METADATA in members else {}
        data = _member(archive, members[WEIGHTS], MAX_WEIGHTS_BYTES, source) if weights else None
    if not isinstance(config, dict):
        raise ValueError(f"{label(source)}: config.json holds no model config (a JSON object)")
    return metadata, config, data


VOCABULARY = "vocabulary.txt"
ASSETS = "assets/"


def vocabularies(source):
    """{the layer's path in the model ("layers/text_vectorization/_lookup_layer"): the text
    of its vocabulary.txt} for each of the zip's `assets/.../vocabulary.txt` members, each
    read under the JSON members' limits."""
    found = {}
    with zipfile.ZipFile(source, "r") as archive:
        for info in archive.infolist():
            name = info.filename
            if name.startswith(ASSETS) and name.endswith("/" + VOCABULARY):
                data = _member(archive, info, MAX_JSON_BYTES, source)
                try:
                    found[name[len(ASSETS) : -len(VOCABULARY) - 1]] = data.decode("utf-8")
                except UnicodeDecodeError as error:
                    raise ValueError(
                        f"{label(source)}: {name} is not UTF-8 text ({error})"
                    ) from None
    return found


def is_zip(path):
    """Whether the file at `path` starts as a zip does (so `load_weights` can tell a `.keras`
    file from an HDF5 one whatever its name)."""
    with open(path, "rb") as file:
        return file.read(4) == b"PK\x03\x04"


def _missing(source, name, members):
    if name == WEIGHTS and "model.weights.npz" in members:
        return (
            f"{label(source)} holds its weights as model.weights.npz; tracer reads only "
            "Keras's default, model.weights.h5"
        )
    return f"{label(source)} is not a complete .keras file: it has no {name}"


def _json(archive, info, source):
    text = _member(archive, info, MAX_JSON_BYTES, source)
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as error:  # RecursionError: absurdly deep nesting
        raise ValueError(f"{label(source)}: {info.filename} is not valid JSON ({error})") from None


def _member(archive, info, limit, source):
    """The bytes of the member `info`, refused when it declares more than `limit` bytes, or
    more than MAX_EXPANSION times what it stores. What it stores is bounded by the zip's
    file: zipfile takes the stored size from the zip's directory and stops at the end of the
    compressed stream whatever that size says, so a bomb could declare any."""
    size = info.file_size
    if size > limit:
        raise ValueError(
            f"{label(source)}: {info.filename} declares {size} bytes, more than the "
            f"{limit} tracer reads (tracer.keras.saving.archive.MAX_*_BYTES)"
        )
    length = _length(source)
    if info.compress_size > length:
        raise ValueError(
            f"{label(source)}: {info.filename} declares that it stores {info.compress_size} "
            f"bytes, but the whole file holds {length}"
        )
    if size > BOMB_FLOOR and size > MAX_EXPANSION * info.compress_size:
        raise ValueError(
            f"{label(source)}: {info.filename} declares {size} bytes but stores only "
            f"{info.compress_size}; refusing a likely decompression bomb"
        )
    try:
        with archive.open(info, "r") as member:
            data = member.read(size)  # zipfile stops at the declared size and checks the CRC
    except (*_DAMAGED, OSError) as error:
        raise ValueError(
            f"{label(source)}: {info.filename} cannot be read ({type(error).__name__}: {error})"
        ) from None
    if len(data) != size:
        raise ValueError(
            f"{label(source)}: {info.filename} holds {len(data)} bytes, not the {size} it declares"
        )
    return data


def _length(source):
    """The bytes in the file of the zip `source` (a path or an open binary file)."""
    if isinstance(source, (str, os.PathLike)):
        return os.path.getsize(source)
    return source.seek(0, os.SEEK_END)


def label(source):
    if isinstance(source, (str, os.PathLike)):
        return repr(os.fspath(source))
    name = getattr(source, "name", None)
    return repr(name) if isinstance(name, str) else "the file"
