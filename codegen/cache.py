"""The on-disk cache of compiled modules: content-addressed, lock-free, trusting nothing it reads.

    $TRACER_CACHE_DIR (default ~/.cache/tracer, or $XDG_CACHE_HOME/tracer), mode 0700
      <key>/module.c         the C source
      <key>/<library>        the compiled shared library (<name>.so)
      <key>/meta.json        {"key", "library", "sha256" of the library, ...}, written last
      .build-<pid>-<random>/ a build in progress (or of a process that died: removed later)

The key hashes everything that changes the binary: the C source, the compiler's identity
and version, the flags, tracer's version and the CPU (the code is built
for the machine it runs on). A module is built in a private temporary directory beside the
entries and published by renaming that directory: two processes building the same module
both succeed, and the loser of the race loads the winner's copy.

Nothing read back is trusted. The directory must be the user's own and writable by no one
else (as ssh treats a key file), or nothing is loaded from it. Every file is read through
`open_regular`: a regular file, not a link, of a bounded size (a pipe, a device or a link to
one in its place would block the process or never end). An entry is loaded only when its
metadata parses, names the entry's key and the library its caller asks for, and the
library's SHA-256 matches the metadata's; anything else (truncated, altered, of the wrong
type, a directory, a pipe or a link where a file belongs) is removed with one log line and
built again.
"""

import contextlib
import errno
import hashlib
import json
import logging
import os
import shutil
import stat
import sys
import tempfile
import time

from codegen.errors import UnsafeCacheDirectory, UnusableCacheDirectory

log = logging.getLogger("tracer.cache")

STAGING_PREFIX = ".build-"
STALE_STAGING_SECONDS = 24 * 3600  # a build this old is dead, whatever its pid says
SEALED_MAX_BYTES = 1 << 20  # a record file (`read_sealed`) holds a few kB
META_MAX_BYTES = 1 << 20  # an entry's meta.json holds a few hundred bytes
LIBRARY_MAX_BYTES = 1 << 30  # a module's library: a few MB, tens for a graph of 10^5 nodes
_checked_roots = set()


def cache_root():
    """The cache directory, made (mode 0700) if missing, and refused if it is not safe."""
    root = os.environ.get("TRACER_CACHE_DIR")
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "tracer")
    if root not in _checked_roots:
        try:
            os.makedirs(root, mode=0o700, exist_ok=True)
        except OSError as error:
            raise UnusableCacheDirectory(_unusable(root, _why_not_made(root, error))) from error
        check_private(root)
        # NOTE: access() answers for this user (root writes to a mode 0500 directory too)
        if not os.access(root, os.W_OK | os.X_OK):
            raise UnusableCacheDirectory(_unusable(root, "this user cannot write to it"))
        _checked_roots.add(root)
    return root


def beside_installation(folder, tag, make=True):
    """The folder `tag` beside the installed `folder` where Python keeps its bytecode
    (`folder/__pycache__/tag`, or under `sys.pycache_prefix`), made if missing (with `make`),
    when it belongs to this user or `folder`'s owner with no one else allowed to write to it
    (then it is as trusted as the installation) and, with `make`, can be written; else None."""
    if sys.pycache_prefix:
        beside = os.path.join(sys.pycache_prefix, os.path.abspath(folder).lstrip(os.sep), tag)
    else:
        beside = os.path.join(folder, "__pycache__", tag)
    try:
        if make and not os.path.isdir(beside):
            os.makedirs(os.path.dirname(beside), exist_ok=True)
            with contextlib.suppress(FileExistsError):  # made by another process meanwhile
                os.mkdir(beside)
                os.chmod(beside, 0o755)  # whatever the umask: group or others writing is refused
        info, owner = os.stat(beside), os.stat(folder).st_uid
    except OSError:  # a read-only installation, ...
        return None
    trusted = (
        stat.S_ISDIR(info.st_mode)
        and info.st_uid in (owner, os.getuid())
        and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    )
    return beside if trusted and (not make or os.access(beside, os.W_OK)) else None


def _why_not_made(root, error):
    if isinstance(error, FileExistsError):
        return "it exists and is not a directory"
    if isinstance(error, NotADirectoryError):
        return "a part of its path is a file, not a directory"
    return f"it could not be made ({type(error).__name__}: {error.strerror or error})"


def _unusable(root, reason):
    return (
        f"cannot use the cache directory {root}: {reason}; set TRACER_CACHE_DIR to a directory "
        "of your own that can be written"
    )


def check_private(path):
    """UnsafeCacheDirectory unless `path` is a directory of this user that no one else may
    write to."""
    info = os.stat(path)
    problem = None
    if not stat.S_ISDIR(info.st_mode):
        problem = "it is not a directory"
    elif hasattr(os, "getuid") and info.st_uid != os.getuid():
        problem = f"it is owned by user id {info.st_uid}, not by this user ({os.getuid()})"
    elif info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        problem = f"others can write to it (mode {stat.S_IMODE(info.st_mode):04o})"
    if problem:
        raise UnsafeCacheDirectory(
            f"refusing the cache directory {path}: {problem}, so a module found there could "
            "have been planted; use a directory of your own with mode 0700 (chmod 700 it), or "
            "set TRACER_CACHE_DIR to one"
        )


_KINDS = {  # what a file that is not a regular one is, for the log line
    stat.S_IFIFO: "a pipe",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFDIR: "a directory",
    stat.S_IFSOCK: "a socket",
}


def open_regular(path, max_bytes):
    """`path` opened for reading in binary, where it is a regular file of at most `max_bytes`;
    ValueError naming what it is where it is not (a link, a pipe, a device, a directory, a
    larger file), OSError where it cannot be opened. The cache's files are all written by
    renames, never as links; a pipe is opened without blocking and refused, and a link is
    not followed (one to /dev/zero would be read forever)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise ValueError(f"{path} is a symbolic link, not a file") from error
        raise
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            kind = _KINDS.get(stat.S_IFMT(info.st_mode), "not a regular file")
            raise ValueError(f"{path} is {kind}, not a regular file")
        if info.st_size > max_bytes:
            raise ValueError(f"{path} holds {info.st_size} bytes, more than {max_bytes}")
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def read_regular(path, max_bytes):
    """The bytes of the regular file `path` (`open_regular`), at most `max_bytes` of them."""
    with open_regular(path, max_bytes) as handle:
        size = os.fstat(handle.fileno()).st_size  # (a read of max_bytes sizes its buffer so)
        data = handle.read(size + 1)
    if len(data) > size:  # grown since it was opened
        raise ValueError(f"{path} grew while it was read")
    return data


def file_hash(path, max_bytes=LIBRARY_MAX_BYTES):
    """The SHA-256 (hex) of the regular file `path` (`open_regular`), read in chunks of 1 MiB
    up to `max_bytes`."""
    digest = hashlib.sha256()
    left = max_bytes
    with open_regular(path, max_bytes) as handle:
        while chunk := handle.read(min(1 << 20, left + 1)):
            left -= len(chunk)
            if left < 0:  # grown since it was opened
                raise ValueError(f"{path} holds more than {max_bytes} bytes")
            digest.update(chunk)
    return digest.hexdigest()


def lookup(key, library):
    """(path of the library, meta) of a sound entry for `key` whose library file is named
    `library`, or None (an unsound one is removed)."""
    entry = os.path.join(cache_root(), key)
    if not os.path.lexists(entry):
        return None
    try:
        meta = json.loads(read_regular(os.path.join(entry, "meta.json"), META_MAX_BYTES))
        if (meta.get("key"), meta.get("library")) == (key, library):
            path = os.path.join(entry, library)
            if file_hash(path) == meta.get("sha256"):
                return path, meta
        reason = "its metadata or library does not match"
    # unreadable, not a regular file, not JSON, not a dict, nested deeper than Python's stack
    except (OSError, ValueError, AttributeError, RecursionError) as error:
        reason = f"{type(error).__name__}: {error}"
    log.warning("tracer: removing the damaged cache entry %s (%s); building it again", key, reason)
    remove(entry)
    return None


def remove(path):
    """Remove a file, a link or a directory tree, whichever `path` is."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def publish(key, library, build):
    """Build into a private directory with `build(directory) -> meta` (which writes the file
    `library` there), then publish it as the entry for `key`; returns (path of the library,
    meta)."""
    root = cache_root()
    remove_dead_builds()
    try:
        staging = tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-", dir=root)
    except OSError as error:  # made read-only, or removed, since it was checked
        reason = f"a build directory could not be made ({type(error).__name__}: {error})"
        raise UnusableCacheDirectory(_unusable(root, reason)) from error
    try:
        meta = build(staging)
        meta = dict(
            meta,
            key=key,
            library=library,
            sha256=file_hash(os.path.join(staging, library)),
        )
        write_json(os.path.join(staging, "meta.json"), meta)
        entry = os.path.join(root, key)
        try:
            os.rename(staging, entry)
        except OSError:  # another process published it first (or a damaged entry is in the way)
            shutil.rmtree(staging, ignore_errors=True)
            found = lookup(key, library)
            if found is None:
                raise
            return found
        return os.path.join(entry, library), meta
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def write_json(path, value):
    """Write `value` as JSON to `path` through a temporary file and a rename (never half a file)."""
    descriptor, staging = tempfile.mkstemp(prefix=".tmp-", dir=os.path.dirname(path))
    try:
        with os.fdopen(descriptor, "w") as handle:
            json.dump(value, handle, indent=1, sort_keys=True)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)  # a directory in the file's place
        os.replace(staging, path)
    except BaseException:
        remove(staging)
        raise


def write_sealed(path, records):
    """Write the dict `records` to `path` with its digest, which `read_sealed` checks."""
    write_json(path, {"records": records, "sha256": _digest(records)})


def read_sealed(path, remove_damaged=True):
    """The records `write_sealed` wrote to `path`, or {} where there are none or they are
    not sound (the file is then removed, with `remove_damaged`, and one log line): a record
    only speeds things up, and its reader checks each one's fields too. Only a regular file
    of at most SEALED_MAX_BYTES is read (`open_regular`: a pipe in its place would block the
    build)."""
    try:
        stored = json.loads(read_regular(path, SEALED_MAX_BYTES))
        records = stored["records"]
        if isinstance(records, dict) and stored["sha256"] == _digest(records):
            return records
        reason = "its digest does not match"
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError) as error:
        reason = f"{type(error).__name__}: {error}"
    log.warning("tracer: ignoring the damaged record %s (%s)", path, reason)
    if remove_damaged:
        remove(path)
    return {}


def _digest(value):
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def dead_builds():
    """Staging directories whose build is over: their process is gone, or they are old."""
    root = cache_root()
    found = []
    for name in os.listdir(root):
        if not name.startswith(STAGING_PREFIX):
            continue
        path = os.path.join(root, name)
        pid = name[len(STAGING_PREFIX) :].split("-", 1)[0]
        try:
            age = time.time() - os.lstat(path).st_mtime
        except OSError:
            continue
        if age > STALE_STAGING_SECONDS or not (pid.isdigit() and _alive(int(pid))):
            found.append(path)
    return found


def remove_dead_builds():
    for path in dead_builds():
        remove(path)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def entries():
    """(key, size in bytes) of every entry, for `python -m tracer cache info`."""
    root = cache_root()
    result = []
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name)
        if os.path.isdir(path) and not name.startswith("."):
            size = sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path))
            result.append((name, size))
    return result
