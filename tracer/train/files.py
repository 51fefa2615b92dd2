"""The checkpoint file format, written atomically and read without trusting it.

A checkpoint saved at `PATH` is one file, `PATH.npz`: a zip archive in the layout of
`np.savez` (uncompressed; `np.load` reads it) holding one `.npy` member per saved variable,
under its object path (`model/layers/0/kernel`, `optimizer/slots/model/layers/0/kernel/m`),
and an index under the key `.index`: UTF-8 JSON of `{"format": "tracer-checkpoint",
"version": 1, "values": {path: {"dtype", "shape", "sha256"}}}`. The file is written under a
temporary name in the same directory, flushed to disk and renamed into place, so a save that
dies midway leaves the previous checkpoint as it was.

Reading trusts nothing in the file: only a regular file is read (a FIFO, a device or a
directory is refused without blocking), each member must be stored uncompressed and lie
within the file, each `.npy` header must describe exactly the bytes its member holds (so no
header can make the reader allocate more than the file's size), and the archive, the index
and every array (dtype, shape, digest) are checked before anything is restored. Anything
malformed is a `CheckpointError`: a damaged file is an error, never a partial restore.

The directory's list of checkpoints, the file `checkpoint`, names files of that directory
only: an entry that is not a plain file name, or whose file (through symlinks) lies outside
the directory, is refused.
"""

import contextlib
import hashlib
import json
import math
import os
import stat
import struct
import tempfile
import zipfile

import numpy as np

FORMAT = "tracer-checkpoint"
VERSION = 1
INDEX = ".index"
SUFFIX = ".npz"
MEMBER_SUFFIX = ".npy"
STATE = "checkpoint"  # the directory's list of checkpoints, as TensorFlow names it
MAX_STATE_BYTES = 16 << 20  # a list of a few hundred thousand checkpoints
MAX_MEMBER_NAME_BYTES = 0xFFFF - len(MEMBER_SUFFIX)  # the zip format's 16-bit name length
NUMERIC_KINDS = "biufc"  # the numpy kinds of tracer's dtypes: bool, int, uint, float, complex

# What opening or reading a malformed zip raises, besides our own CheckpointError.
_ZIP_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    ValueError,
    OSError,
    EOFError,
    KeyError,
    NotImplementedError,
    RuntimeError,
    struct.error,
    UnicodeDecodeError,
    OverflowError,
)
_HEADER_READERS = {
    (1, 0): np.lib.format.read_array_header_1_0,
    (2, 0): np.lib.format.read_array_header_2_0,
}
_FILE_KINDS = (  # what a path that is not a regular file is, for error messages
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class CheckpointError(ValueError):
    """A checkpoint file, or a directory's list of checkpoints, that is missing, damaged, or
    not one of tracer's."""


def write(path, arrays):
    """Write {object path: numpy array} as the checkpoint `path` (the file `path.npz`).

    >>> write("/tmp/doc/exact", {"v": np.ones(3)})
    '/tmp/doc/exact'
    """
    target = path + SUFFIX
    directory = os.path.dirname(os.path.abspath(target))
    os.makedirs(directory, exist_ok=True)
    for key, array in arrays.items():
        _check_key(key)
        if np.asarray(array).dtype.kind not in NUMERIC_KINDS:  # a tt.string variable's
            raise TypeError(
                f"cannot save {key!r}: it holds strings, and checkpoints hold numbers and "
                "bools (string variables are not saved yet)"
            )
    index = {
        "format": FORMAT,
        "version": VERSION,
        "values": {key: _describe(array) for key, array in arrays.items()},
    }
    members = {INDEX: np.frombuffer(json.dumps(index).encode(), dtype=np.uint8), **arrays}
    descriptor, staging = tempfile.mkstemp(prefix=".ckpt-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(descriptor, "wb") as file:
            _write_archive(file, members)
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
        file = _open_regular(target)
    except (FileNotFoundError, NotADirectoryError):
        raise CheckpointError(f"no checkpoint at {path!r} (no file {target!r})") from None
    with file:
        size = os.fstat(file.fileno()).st_size
        try:
            members = _read_archive(file, size, target)
        except CheckpointError:
            raise
        except _ZIP_ERRORS as error:
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
    """Delete the checkpoint `path` (its file `path.npz`); a missing file is no error."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path + SUFFIX)


def exists(path):
    return os.path.isfile(path + SUFFIX)


def _check_key(key):
    """Refuse a member name the zip format would change (and so mix up with another)."""
    if not isinstance(key, str) or "\x00" in key or key == INDEX:
        raise ValueError(f"{key!r} cannot name a value in a checkpoint")
    try:
        size = len(key.encode("utf-8"))
    except UnicodeEncodeError:
        raise ValueError(f"{key!r} cannot name a value in a checkpoint (not UTF-8)") from None
    if size > MAX_MEMBER_NAME_BYTES:
        raise ValueError(f"the object path {key[:60]!r}... is too long for a checkpoint")


def _write_archive(file, members):
    """`np.savez`'s layout, written member by member (np.savez's keyword arguments would
    clash with object paths such as `file`)."""
    with zipfile.ZipFile(file, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for key, array in members.items():
            with archive.open(key + MEMBER_SUFFIX, "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(array), allow_pickle=False)


def _read_archive(file, size, target):
    """{key: array} of the archive in `file` (`size` bytes), each member checked before its
    array is allocated."""
    with zipfile.ZipFile(file) as archive:
        infos = archive.infolist()
        _check_layout(infos, size, target)
        return {
            info.filename[: -len(MEMBER_SUFFIX)]: _read_member(archive, info, target)
            for info in infos
        }


def _check_layout(infos, size, target):
    names = [info.filename for info in infos]
    if len(set(names)) != len(names):
        raise CheckpointError(f"checkpoint {target!r} is damaged: it repeats a member name")
    for info in infos:
        if not info.filename.endswith(MEMBER_SUFFIX):
            raise CheckpointError(
                f"checkpoint {target!r} is damaged: its member {info.filename!r} is not a .npy"
            )
        if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 0x1:
            raise CheckpointError(
                f"checkpoint {target!r} is damaged: its member {info.filename!r} is compressed "
                "or encrypted (tracer writes them stored)"
            )
        if info.file_size != info.compress_size or info.header_offset + info.file_size > size:
            raise CheckpointError(
                f"checkpoint {target!r} is damaged: its member {info.filename!r} claims "
                f"{info.file_size} bytes that the {size}-byte file does not hold"
            )
    # NOTE: members may overlap in a crafted zip; their total must fit in the file too.
    if sum(info.file_size for info in infos) > size:
        raise CheckpointError(
            f"checkpoint {target!r} is damaged: its members claim more bytes than the file has"
        )


def _read_member(archive, info, target):
    """The array of one `.npy` member, after checking that its header's shape and dtype
    describe exactly the bytes the member holds."""
    name = info.filename
    with archive.open(info) as member:
        version = np.lib.format.read_magic(member)
        if version not in _HEADER_READERS:
            raise CheckpointError(
                f"checkpoint {target!r} is damaged: {name!r} has .npy version {version}"
            )
        shape, fortran_order, dtype = _HEADER_READERS[version](member)
        if dtype.kind not in NUMERIC_KINDS or dtype.hasobject:
            raise CheckpointError(
                f"checkpoint {target!r} is damaged: {name!r} holds dtype {dtype}, which no "
                "variable has"
            )
        count = math.prod(shape)
        nbytes = count * dtype.itemsize
        if member.tell() + nbytes != info.file_size:
            raise CheckpointError(
                f"checkpoint {target!r} is damaged: {name!r} claims shape {shape} of {dtype} "
                f"({nbytes} bytes), but the member holds {info.file_size - member.tell()}"
            )
        data = member.read(nbytes)
    if len(data) != nbytes:
        raise CheckpointError(f"checkpoint {target!r} is damaged: {name!r} is truncated")
    flat = np.frombuffer(data, dtype=dtype, count=count)
    return flat.reshape(shape, order="F" if fortran_order else "C").copy(order="K")


def _open_regular(target):
    """`target` opened for binary reading, when it is a regular file. A missing file is
    FileNotFoundError (or NotADirectoryError), anything else wrong a CheckpointError.

    NOTE: O_NONBLOCK makes opening a FIFO return at once instead of waiting for a writer;
    fstat of the opened descriptor (not of the name, which may have changed) then refuses
    anything but a regular file, so no read can block or be endless (/dev/zero).
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        descriptor = os.open(target, flags)
    except (FileNotFoundError, NotADirectoryError):
        raise
    except OSError as error:
        raise CheckpointError(f"cannot open {target!r}: {error.strerror}") from error
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            kind = next((word for test, word in _FILE_KINDS if test(mode)), "not a regular file")
            raise CheckpointError(f"{target!r} is {kind}, not a checkpoint file")
        os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def _describe(array):
    array = np.ascontiguousarray(array)
    return {
        "dtype": array.dtype.str,
        "shape": list(array.shape),
        "sha256": hashlib.sha256(array.tobytes()).hexdigest(),
    }


def _json(raw, what):
    """The JSON document in the bytes `raw`; `what` names it in the error."""
    try:
        return json.loads(raw.decode())
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        # ValueError: JSONDecodeError, and integers longer than Python converts
        raise CheckpointError(f"{what} is damaged: {type(error).__name__}: {error}") from None


def _index(raw, target):
    if raw is None:
        raise CheckpointError(f"{target!r} is not a tracer checkpoint (it has no index)")
    index = _json(raw.tobytes(), f"the index of checkpoint {target!r}")
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


def write_state(directory, paths):
    """Record `paths` (oldest first; the last is the latest), all files of `directory`, in
    its list, atomically."""
    directory = os.path.abspath(directory)
    names = []
    for path in paths:
        if os.path.dirname(os.path.abspath(path)) != directory:
            raise ValueError(f"the checkpoint {path!r} is not in the directory {directory!r}")
        names.append(os.path.basename(path))
    text = json.dumps({"format": FORMAT, "checkpoints": names}, indent=1)
    descriptor, staging = tempfile.mkstemp(prefix=".state-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(staging, os.path.join(directory, STATE))
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(staging)
        raise


def read_state(directory):
    """The checkpoints `directory` records, oldest first ([] when it records none); every
    entry is a checkpoint of that directory, or the list is refused."""
    target = os.path.join(directory, STATE)
    try:
        file = _open_regular(target)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except CheckpointError as error:
        raise CheckpointError(f"the checkpoint list is unreadable: {error}") from None
    with file:
        raw = file.read(MAX_STATE_BYTES + 1)
    if len(raw) > MAX_STATE_BYTES:
        raise CheckpointError(
            f"the checkpoint list {target!r} is damaged: it is over {MAX_STATE_BYTES} bytes"
        )
    state = _json(raw, f"the checkpoint list {target!r}")
    names = state.get("checkpoints") if isinstance(state, dict) else None
    if not isinstance(state, dict) or state.get("format") != FORMAT or not isinstance(names, list):
        raise CheckpointError(f"{target!r} is not a tracer checkpoint list")
    paths = [_confined(directory, name, target) for name in names]
    return list(dict.fromkeys(paths))  # each once, in the order first listed


def plain_name(name):
    """Whether `name` names a file of a directory: a string with no separator, not `..`."""
    return (
        isinstance(name, str)
        and name not in ("", ".", "..")
        and "\x00" not in name
        and not any(sep and sep in name for sep in (os.sep, os.altsep))
    )


def _confined(directory, name, listing):
    """The path of the checkpoint `name` listed in `listing`, when it is a file of
    `directory` (symlinks followed); else the list is refused."""
    if not plain_name(name):
        raise CheckpointError(
            f"the checkpoint list {listing!r} is damaged: its entry {name!r} is not the name "
            "of a checkpoint in its directory"
        )
    path = os.path.join(directory, name)
    real = os.path.realpath(path + SUFFIX)
    if os.path.dirname(real) != os.path.realpath(directory):
        raise CheckpointError(
            f"the checkpoint list {listing!r} is refused: its entry {name!r} leads out of the "
            f"directory, to {real!r}"
        )
    return path


def latest_checkpoint(checkpoint_dir):
    """The path of the latest checkpoint listed in `checkpoint_dir`, or None."""
    listed = [path for path in read_state(os.fspath(checkpoint_dir)) if exists(path)]
    return listed[-1] if listed else None
