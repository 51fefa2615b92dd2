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
else (as ssh treats a key file), or nothing is loaded from it. An entry is loaded only when
its metadata parses, names the entry's key and the library its caller asks for, and the
library's SHA-256 matches the metadata's; anything else (truncated, altered, of the wrong
type, a directory where a file belongs) is removed with one log line and built again.
"""

import contextlib
import hashlib
import json
import logging
import os
import shutil
import stat
import tempfile
import time

from codegen.errors import UnsafeCacheDirectory, UnusableCacheDirectory

log = logging.getLogger("tracer.cache")

STAGING_PREFIX = ".build-"
STALE_STAGING_SECONDS = 24 * 3600  # a build this old is dead, whatever its pid says
SEALED_MAX_BYTES = 1 << 20  # a record file (`read_sealed`) holds a few kB
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


def file_hash(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def lookup(key, library):
    """(path of the library, meta) of a sound entry for `key` whose library file is named
    `library`, or None (an unsound one is removed)."""
    entry = os.path.join(cache_root(), key)
    if not os.path.lexists(entry):
        return None
    try:
        with open(os.path.join(entry, "meta.json"), "rb") as handle:
            meta = json.loads(handle.read().decode())
        if (meta.get("key"), meta.get("library")) == (key, library):
            path = os.path.join(entry, library)
            if file_hash(path) == meta.get("sha256"):
                return path, meta
        reason = "its metadata or library does not match"
    except (OSError, ValueError, AttributeError) as error:  # unreadable, not JSON, not a dict
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


def read_sealed(path):
    """The records `write_sealed` wrote to `path`, or {} where there are none or they are
    not sound (the file is then removed, with one log line): a record only speeds things up,
    and its reader checks each one's fields too. Only a regular file of at most
    SEALED_MAX_BYTES is read (a pipe in its place would block the build)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(descriptor, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_size > SEALED_MAX_BYTES:
                raise ValueError("not a regular file of its size")
            stored = json.loads(handle.read(SEALED_MAX_BYTES).decode())
        records = stored["records"]
        if isinstance(records, dict) and stored["sha256"] == _digest(records):
            return records
        reason = "its digest does not match"
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError) as error:
        reason = f"{type(error).__name__}: {error}"
    log.warning("tracer: ignoring the damaged record %s (%s)", path, reason)
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
