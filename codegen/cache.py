"""The on-disk cache of compiled modules: content-addressed, lock-free, safe against races.

    $TRACER_CACHE_DIR (default ~/.cache/tracer, or $XDG_CACHE_HOME/tracer), mode 0700
      <key>/module.c         the C source
      <key>/<name>.so        the compiled module
      <key>/meta.json        {"key", "name", "sha256" of the .so, "compile_seconds", ...}

The key hashes everything that changes the binary: the C source, the compiler's identity
and version, the flags, tracer's version, the Python ABI and the CPU (the code is built
for the machine it runs on). A module is built in a private temporary directory beside the
entries and published by renaming that directory: two processes building the same module
both succeed, and the loser of the race loads the winner's copy. An entry whose .so does
not match its recorded hash is damaged: it is removed and built again.
"""

import hashlib
import json
import os
import shutil
import tempfile


def cache_root():
    root = os.environ.get("TRACER_CACHE_DIR")
    if not root:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "tracer")
    os.makedirs(root, mode=0o700, exist_ok=True)
    return root


def file_hash(path):
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def lookup(key):
    """(path of the .so, meta) of a sound entry for `key`, or None (a damaged one is removed)."""
    entry = os.path.join(cache_root(), key)
    try:
        with open(os.path.join(entry, "meta.json")) as handle:
            meta = json.load(handle)
        library = os.path.join(entry, meta["library"])
        if file_hash(library) == meta["sha256"]:
            return library, meta
    except (OSError, ValueError, KeyError):
        if not os.path.isdir(entry):
            return None
    shutil.rmtree(entry, ignore_errors=True)
    return None


def publish(key, build):
    """Build into a private directory with `build(directory) -> (library file name, meta)`,
    then publish it as the entry for `key`; returns (path of the .so, meta)."""
    root = cache_root()
    staging = tempfile.mkdtemp(prefix=".build-", dir=root)
    try:
        library_name, meta = build(staging)
        meta = dict(
            meta,
            key=key,
            library=library_name,
            sha256=file_hash(os.path.join(staging, library_name)),
        )
        with open(os.path.join(staging, "meta.json"), "w") as handle:
            json.dump(meta, handle, indent=1, sort_keys=True)
        entry = os.path.join(root, key)
        try:
            os.rename(staging, entry)
        except OSError:  # another process published it first: use theirs
            shutil.rmtree(staging, ignore_errors=True)
            found = lookup(key)
            if found is None:
                raise
            return found
        return os.path.join(entry, library_name), meta
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


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
