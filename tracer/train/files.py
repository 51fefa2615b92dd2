"""The checkpoint file format, written atomically and read without trusting it.

A checkpoint saved at `PATH` is one file, `PATH.npz`: a numpy zip archive (`np.savez`,
uncompressed) holding one array per saved variable, under its object path
(`model/layers/0/kernel`, `optimizer/slots/model/layers/0/kernel/m`), and an index under
the key `.index`: UTF-8 JSON of `{"format": "tracer-checkpoint", "version": 1, "values":
{path: {"dtype", "shape", "sha256"}}}`. The file is written under a temporary name in the
same directory, flushed to disk and renamed into place, so a save that dies midway leaves
the previous checkpoint as it was. Reading checks the archive, the index and every array
(dtype, shape, digest) before anything is restored: a damaged file is an error, never a
partial restore.
"""

import contextlib
import hashlib
import io
import json
import os
import tempfile
import zipfile

import numpy as np

FORMAT = "tracer-checkpoint"
VERSION = 1
INDEX = ".index"
SUFFIX = ".npz"


class CheckpointError(ValueError):
    """A checkpoint file that is missing, damaged, or not one of tracer's."""


def write(path, arrays):
    """Write {object path: numpy array} as the checkpoint `path` (the file `path.npz`)."""
    target = path + SUFFIX
    directory = os.path.dirname(os.path.abspath(target))
    os.makedirs(directory, exist_ok=True)
    index = {
        "format": FORMAT,
        "version": VERSION,
        "values": {key: _describe(array) for key, array in arrays.items()},
    }
    members = {INDEX: np.frombuffer(json.dumps(index).encode(), dtype=np.uint8), **arrays}
    descriptor, staging = tempfile.mkstemp(prefix=".ckpt-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(descriptor, "wb") as file:
            np.savez(file, **members)
            file.flush()
            os.fsync(file.fileno())
        os.replace(staging, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(staging)
        raise
    return path


def read(path):
    """{object path: numpy array} of the checkpoint `path`, every array checked."""
    target = path + SUFFIX
    try:
        with open(target, "rb") as file:
            data = file.read()
    except FileNotFoundError:
        raise CheckpointError(f"no checkpoint at {path!r} (no file {target!r})") from None
    except IsADirectoryError:
        raise CheckpointError(f"{target!r} is a directory, not a checkpoint") from None
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            members = {key: archive[key] for key in archive.files}
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, KeyError) as error:
        raise CheckpointError(f"checkpoint {target!r} is damaged: {error}") from None
    index = _index(members.pop(INDEX, None), target)
    described = index["values"]
    if set(described) != set(members):
        missing = sorted(set(described) ^ set(members))
        raise CheckpointError(
            f"checkpoint {target!r} is damaged: index and arrays differ at {missing}"
        )
    for key, array in members.items():
        if _describe(array) != described[key]:
            raise CheckpointError(
                f"checkpoint {target!r} is damaged: the value of {key!r} does not match its index"
            )
    return members


def remove(path):
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path + SUFFIX)


def exists(path):
    return os.path.isfile(path + SUFFIX)


def _describe(array):
    array = np.ascontiguousarray(array)
    return {
        "dtype": array.dtype.str,
        "shape": list(array.shape),
        "sha256": hashlib.sha256(array.tobytes()).hexdigest(),
    }


def _index(raw, target):
    if raw is None:
        raise CheckpointError(f"{target!r} is not a tracer checkpoint (it has no index)")
    try:
        index = json.loads(raw.tobytes().decode())
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CheckpointError(f"checkpoint {target!r} is damaged: its index is {error}") from None
    if not isinstance(index, dict) or index.get("format") != FORMAT:
        raise CheckpointError(f"{target!r} is not a tracer checkpoint")
    if index.get("version") != VERSION:
        raise CheckpointError(
            f"checkpoint {target!r} has format version {index.get('version')!r}; this tracer "
            f"reads version {VERSION}"
        )
    values = index.get("values")
    if not isinstance(values, dict):
        raise CheckpointError(f"checkpoint {target!r} is damaged: its index has no values")
    return index


STATE = "checkpoint"  # the directory's list of checkpoints, as TensorFlow names it


def write_state(directory, paths):
    """Record `paths` (oldest first; the last is the latest) in `directory`, atomically."""
    names = [os.path.relpath(path, directory) for path in paths]
    text = json.dumps({"format": FORMAT, "checkpoints": names}, indent=1)
    descriptor, staging = tempfile.mkstemp(prefix=".state-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(descriptor, "w") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(staging, os.path.join(directory, STATE))
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(staging)
        raise


def read_state(directory):
    """The checkpoints `directory` records, oldest first ([] when it records none)."""
    target = os.path.join(directory, STATE)
    try:
        with open(target, "rb") as file:
            state = json.loads(file.read().decode())
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CheckpointError(f"the checkpoint list {target!r} is damaged: {error}") from None
    names = state.get("checkpoints") if isinstance(state, dict) else None
    if state.get("format") != FORMAT or not isinstance(names, list):
        raise CheckpointError(f"{target!r} is not a tracer checkpoint list")
    if not all(isinstance(name, str) and not os.path.isabs(name) for name in names):
        raise CheckpointError(f"the checkpoint list {target!r} is damaged: bad entries")
    return [os.path.join(directory, name) for name in names]


def latest_checkpoint(checkpoint_dir):
    """The path of the latest checkpoint listed in `checkpoint_dir`, or None."""
    listed = [path for path in read_state(os.fspath(checkpoint_dir)) if exists(path)]
    return listed[-1] if listed else None
