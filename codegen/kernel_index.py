"""Which cached module lends which kernels: the cache's index that lets a module borrow the
kernels of modules that other processes compiled (codegen/shared_kernels.py).

A program edited and run again (a constant changed, a loss with one term more, a gradient
asked of a loss an earlier run compiled) lowers a module whose kernels are mostly, word
for word, those of a module its earlier runs left in the cache. Each module that lends
kernels writes their keys here, under its cache key; a module lowered later, in any process
on the same cache, that would compile a kernel of a key found here loads the module that
offers it from the cache (its digest checked, as for any cached module) and calls it as it
calls a kernel of a module loaded earlier in its own process.

    $TRACER_CACHE_DIR/kernels.log   a line a module: its cache key, 1 where it calls the
                                    BLAS (else 0), the keys of its table's kernels in order,
                                    and the SHA-256 of the line before it

Lines are appended in one write each (processes writing at once lose nothing); a reader
reads the file again only when another process changed it. Where it grows past MAX_BYTES, the writer
keeps its newest lines (MAX_BYTES / 2 of them) through a rename. The index only saves
compiles: a line that does not check (its digest, its fields: a write cut short) is left
out with one log line, a file that cannot be read lends nothing, and a module gone from
the cache lends nothing.
"""

import hashlib
import os
import re
import stat
import tempfile
import threading

from codegen import cache

NAME = "kernels.log"
MAX_BYTES = 1 << 17  # some fifty modules of 35 kernels
MAX_LENDERS = 8  # the modules one lowering loads for their kernels

# a module's key, 1 or 0, its kernels' keys, the digest of the rest
_LINE = re.compile(r"[0-9a-f]{64} [01]( [0-9a-f]{64})+ [0-9a-f]{64}\Z")
_lock = threading.Lock()
_index = {}  # path -> (its size and modification time, {module key: (blas, keys)}, {key: module})
_left_out = set()  # module keys whose modules are not in the cache (`leave_out`)
_reading = True  # whether this process borrows through the index (`read_none`)


def _path():
    return os.path.join(cache.cache_root(), NAME)


def record(module_key, kernels, uses_blas):
    """Append that the cached module `module_key` offers the kernels of the keys `kernels`,
    in its table's order (`uses_blas`: it calls the BLAS)."""
    path = _path()
    if not kernels or module_key in _read(path)[0]:
        return
    text = " ".join([module_key, "1" if uses_blas else "0", *kernels])
    line = f"{text} {_digest(text)}\n".encode()
    # not through a link, nor blocking on a pipe put in its place
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
    descriptor = os.open(path, flags, 0o600)
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return
        os.write(descriptor, line)
        info = os.fstat(descriptor)
    finally:
        os.close(descriptor)
    if info.st_size > MAX_BYTES:
        _keep_newest(path)
        return
    with _lock:  # what this process knows of the file now: its own line added
        _, modules, offering = _index.get(path, (None, {}, {}))
        modules[module_key] = (bool(uses_blas), list(kernels))
        offering.update(dict.fromkeys(kernels, module_key))
        _index[path] = ((info.st_size, info.st_mtime_ns), modules, offering)


def _keep_newest(path):
    """Rewrite the index with its newest lines, MAX_BYTES / 2 of them at most."""
    with cache.open_regular(path, 2 * MAX_BYTES) as handle:
        lines = handle.read().splitlines(keepends=True)
    kept, size = [], 0
    for line in reversed(lines):
        size += len(line)
        if size > MAX_BYTES // 2:
            break
        kept.append(line)
    descriptor, staging = tempfile.mkstemp(prefix=".tmp-", dir=os.path.dirname(path))
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.writelines(reversed(kept))
        os.replace(staging, path)
    except BaseException:
        cache.remove(staging)
        raise


def lenders(keys):
    """[(module key, uses_blas, its table's kernel keys)] of the cached modules that offer
    kernels of `keys`: those that offer most first, at most MAX_LENDERS."""
    wanted = {k for k in keys if k is not None}
    if not wanted or not _reading:
        return []
    modules, offering = _read(_path())
    counts = {}
    for found in wanted:
        module_key = offering.get(found)
        if module_key is not None and module_key not in _left_out:
            counts[module_key] = counts.get(module_key, 0) + 1
    chosen = sorted(counts, key=lambda module_key: -counts[module_key])[:MAX_LENDERS]
    return [(module_key, *modules[module_key]) for module_key in chosen]


def _read(path):
    """({module key: (uses_blas, kernel keys)}, {kernel key: the newest module offering it})
    of the index at `path`, read again where it changed."""
    try:
        info = os.stat(path)
        stamp = (info.st_size, info.st_mtime_ns)
    except OSError:
        return {}, {}
    known = _index.get(path)
    if known is not None and known[0] == stamp:
        return known[1:]
    try:
        with cache.open_regular(path, 2 * MAX_BYTES) as handle:
            lines = handle.read().decode("ascii").splitlines()
    except (OSError, ValueError) as error:  # a pipe, a link, a larger file, not text
        cache.log.warning("tracer: not reading the kernel index %s (%s)", path, error)
        lines = []
    modules, offering, unsound = {}, {}, 0
    for line in lines:
        fields = line.split(" ")
        if not _LINE.match(line) or _digest(line[: -len(fields[-1]) - 1]) != fields[-1]:
            unsound += 1
            continue
        module_key, blas, kernels = fields[0], fields[1] == "1", fields[2:-1]
        modules[module_key] = (blas, kernels)
        offering.update(dict.fromkeys(kernels, module_key))
    if unsound:
        cache.log.warning("tracer: %d lines of the kernel index %s do not check", unsound, path)
    with _lock:
        _index[path] = (stamp, modules, offering)
    return modules, offering


def _digest(text):
    return hashlib.sha256(text.encode()).hexdigest()


def leave_out(module_key):
    """Leave out the module `module_key` for this process: it is not in the cache."""
    with _lock:
        _left_out.add(module_key)


def read_none():
    """Lend nothing from the index in this process from now on (the tests: a module's C then
    does not depend on what other tests, in this process or beside it, cached)."""
    global _reading
    _reading = False


def clear():
    """Remove the index (`python -m tracer cache clear`)."""
    cache.remove(_path())
