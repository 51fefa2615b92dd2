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
                                    and the SHA-256 of the line before it; or: the cache key
                                    of a C that borrows from its process's modules alone,
                                    b, the keys of what the module built for it borrowed
                                    from the cache's modules too, the SHA-256

A module built for a C that borrowed from the cache's modules (the second kind of line) is
found again where the same C is lowered: its kernels are borrowed again, where they are
offered still (`borrowed_for`), not those that modules cached since then offer.

Lines are appended in one write each (processes appending at once lose nothing); a reader
reads the file again only when another process changed it. Where a line would take it past
MAX_BYTES, the writer writes it again through a rename: its newest lines (MAX_BYTES / 2 of
them) and the new one (a line another process appends meanwhile is lost). The index only
saves compiles: a line that does not check (its digest, its fields: a write cut short) is
left out with one log line; a file that is not a regular one, or is larger than
2 * MAX_BYTES, lends nothing (the next line written keeps the newest half of a larger one);
a module gone from the cache lends nothing.
"""

import hashlib
import os
import re
import stat
import tempfile
import threading
from typing import NamedTuple

from codegen import cache

NAME = "kernels.log"
MAX_BYTES = 1 << 17  # some fifty modules of 35 kernels
MAX_LINE = MAX_BYTES // 4  # a module of some 500 kernels
MAX_LENDERS = 8  # the modules one lowering loads for their kernels

# a key, 1, 0 or b, keys of kernels, the digest of the rest
_LINE = re.compile(r"[0-9a-f]{64} [01b]( [0-9a-f]{64})+ [0-9a-f]{64}\Z")
_lock = threading.Lock()
_index = {}  # path -> (its size and modification time, Index)
_left_out = set()  # module keys whose modules are not in the cache (`leave_out`)
_reading = True  # whether this process borrows through the index (`read_none`)


class Index(NamedTuple):
    """What the index says: {module key: (uses_blas, its kernels' keys)}, {kernel key: the
    newest module offering it}, {cache key of a C: the keys its module borrowed}."""

    modules: dict
    offering: dict
    borrowings: dict

    def add(self, key, kind, kernels):
        """Take in a line's `key`, `kind` ("0", "1" or "b") and `kernels`."""
        if kind == "b":
            self.borrowings[key] = kernels
        else:
            self.modules[key] = (kind == "1", kernels)
            self.offering.update(dict.fromkeys(kernels, key))


def _path():
    return os.path.join(cache.cache_root(), NAME)


def record(module_key, kernels, uses_blas):
    """Append that the cached module `module_key` offers the kernels of the keys `kernels`,
    in its table's order (`uses_blas`: it calls the BLAS)."""
    if kernels and module_key not in _read(_path()).modules:
        _append(module_key, "1" if uses_blas else "0", kernels)


def record_borrowing(source_key, kernels):
    """Append that the module built for the C of cache key `source_key` (which borrows from
    its process's modules alone) borrowed the kernels of the keys `kernels`."""
    if _read(_path()).borrowings.get(source_key) != kernels:
        _append(source_key, "b", kernels)


def _append(key, kind, kernels):
    """Append a line; where the index would grow past MAX_BYTES, write it again with its
    newest lines and this one. A line longer than MAX_LINE is not written."""
    path = _path()
    text = " ".join([key, kind, *kernels])
    line = f"{text} {_digest(text)}\n".encode()
    if len(line) > MAX_LINE:
        return
    # not through a link, nor blocking on a pipe put in its place
    flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
    descriptor = os.open(path, flags, 0o600)
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            return
        if info.st_size + len(line) > MAX_BYTES:
            _keep_newest(path, descriptor, info.st_size, line)
            return
        os.write(descriptor, line)
        info = os.fstat(descriptor)
    finally:
        os.close(descriptor)
    with _lock:  # what this process read of the file, and its own line: where no other
        known = _index.pop(path, None)  # process wrote since, the file as it is now
        if known is not None and known[0][0] + len(line) == info.st_size:
            known[1].add(key, kind, list(kernels))
            _index[path] = ((info.st_size, info.st_mtime_ns), known[1])


def _keep_newest(path, descriptor, size, line):
    """Write the index at `path` (open as `descriptor`, of `size` bytes) again, through a
    rename: its last MAX_BYTES / 2 bytes (the whole lines of them), then `line`."""
    start = max(size - MAX_BYTES // 2, 0)
    tail = os.pread(descriptor, size - start, start)
    if start:  # from the first whole line
        tail = tail[tail.find(b"\n") + 1 :] if b"\n" in tail else b""
    staging_descriptor, staging = tempfile.mkstemp(prefix=".tmp-", dir=os.path.dirname(path))
    try:
        with os.fdopen(staging_descriptor, "wb") as handle:
            handle.write(tail + line)
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
    index = _read(_path())
    counts = {}
    for found in wanted:
        module_key = index.offering.get(found)
        if module_key is not None and module_key not in _left_out:
            counts[module_key] = counts.get(module_key, 0) + 1
    chosen = sorted(counts, key=lambda module_key: -counts[module_key])[:MAX_LENDERS]
    return [(module_key, *index.modules[module_key]) for module_key in chosen]


def borrowed_for(source_key):
    """The keys of the kernels the module built for the C of cache key `source_key` borrowed
    (`record_borrowing`), or None."""
    return _read(_path()).borrowings.get(source_key) if _reading else None


def _read(path):
    """The Index of the file at `path`, read again where it changed."""
    try:
        info = os.stat(path)
        stamp = (info.st_size, info.st_mtime_ns)
    except OSError:
        return Index({}, {}, {})
    known = _index.get(path)
    if known is not None and known[0] == stamp:
        return known[1]
    try:
        with cache.open_regular(path, 2 * MAX_BYTES) as handle:
            lines = handle.read().decode("ascii").splitlines()
    except (OSError, ValueError) as error:  # a pipe, a link, a larger file, not text
        cache.log.warning("tracer: not reading the kernel index %s (%s)", path, error)
        lines = []
    index, unsound = Index({}, {}, {}), 0
    for line in lines:
        fields = line.split(" ")
        if not _LINE.match(line) or _digest(line[: -len(fields[-1]) - 1]) != fields[-1]:
            unsound += 1
            continue
        index.add(fields[0], fields[1], fields[2:-1])
    if unsound:
        cache.log.warning("tracer: %d lines of the kernel index %s do not check", unsound, path)
    with _lock:
        _index[path] = (stamp, index)
    return index


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
