"""Direct links: a module's objects linked by ld.gold itself, not through the compiler's
driver, with the libraries the driver would link named by empty stubs.

The driver's link of a small module takes 15-17 ms: ~4 ms for the driver and collect2, ~8 ms
for the linker reading the libraries' symbol tables (libc's alone 2 ms), which tells it only
that the module may use them; the dynamic loader resolves every symbol when the module
loads (RTLD_NOW), from the libraries the module names (DT_NEEDED). So what the driver links
is learnt from one of its links, for a compiler, its flags and the libraries asked for: the
first module built under them is linked through the driver with --no-as-needed (its
DT_NEEDED then names every shared library the driver links), and the compiler names its
own static library (libgcc.a: half-precision and complex helpers are linked into modules).
The cache's `links.json` keeps that; each later link gives gold the objects, libgcc.a and
one stub per name (codegen/elf.py): ~4 ms.

What the driver's link has and a direct one lacks: the start files (crti/crtbeginS: the
init/fini glue of C++ constructors and transactional memory, which modules do not use) and
libc_nonshared.a (atexit and the like: modules call none); --as-needed, so a module names
every library the driver links (libgomp loads with a module that runs no loop on threads).
Where a direct link fails, or makes a module that does not load, the driver links and the
record says so: direct links are not tried again under that key (codegen/build.py).
"""

import contextlib
import hashlib
import json
import os
import re
import struct

from codegen import cache, elf

# a library's name as the dynamic loader looks it up: no directory
_LIBRARY_NAME = re.compile(r"[A-Za-z0-9_.+-]+\Z")


def key_of(compiler_stamp, flags, libraries):
    """The key of what a direct link needs, for a compiler (its stamp), its flags and the
    libraries asked for."""
    return hashlib.sha256(json.dumps([compiler_stamp, flags, libraries]).encode()).hexdigest()


def record(key):
    """What the cache knows of direct links under `key`: {"needed": [library names],
    "libgcc": path}, {"direct": False} (they failed: the driver links), or None (not
    learnt yet: the driver links, and `learn` records what it linked)."""
    return _read().get(key)


def learn(key, library, libgcc):
    """Record what the driver linked into `library` (linked with --no-as-needed) and the
    path of libgcc.a, for the direct links under `key`; an answer that is not sound turns
    them off."""
    try:
        record = {"needed": elf.names(library)[1], "libgcc": libgcc}
    except (OSError, ValueError, struct.error, IndexError):  # not the ELF file it should be
        record = {"direct": False}
    records = _read()
    records[key] = record if _sound(record) else {"direct": False}
    _write(records)


def disable(key):
    """Direct links under `key` failed where the driver's succeeded: not tried again."""
    records = _read()
    records[key] = {"direct": False}
    _write(records)


def command(gold, found, objects, output, rpath, directory):
    """The ld.gold command that links `objects` into `output` with what `found` (`record`)
    names; writes the stubs into `directory`. `rpath`: where the loader finds the BLAS."""
    with open(objects[0], "rb") as handle:
        like = handle.read(20)
    stubs = []
    for name in found["needed"]:
        path = os.path.join(directory, name)
        with open(path, "wb") as handle:
            handle.write(elf.stub(like, name))
        stubs.append(path)
    return [
        gold,
        "-shared",
        "--eh-frame-hdr",
        "--build-id",
        "--hash-style=gnu",
        "-o",
        output,
        *objects,
        found["libgcc"],
        "--no-as-needed",
        *stubs,
        *[part for path in rpath for part in ("-rpath", path)],
    ]


def _sound(record):
    """Whether a record read back is one this module writes, its names plain file names and
    its libgcc an existing file: anything else is not used."""
    if record == {"direct": False}:
        return True
    return (
        isinstance(record, dict)
        and set(record) == {"needed", "libgcc"}
        and isinstance(record["needed"], list)
        and all(isinstance(n, str) and _LIBRARY_NAME.match(n) for n in record["needed"])
        and isinstance(record["libgcc"], str)
        and os.path.isabs(record["libgcc"])
        and os.path.isfile(record["libgcc"])
    )


def _path():
    return os.path.join(cache.cache_root(), "links.json")


def _read():
    records = cache.read_sealed(_path())
    return {key: record for key, record in records.items() if _sound(record)}


def _write(records):
    with contextlib.suppress(OSError):  # not written: a later process probes again
        cache.write_sealed(_path(), records)
