"""The machine's records: what the C compiler can do (`toolchains.json`, codegen/build.py)
and what the direct links name (`links.json`, codegen/link.py).

They describe the machine's compiler and libraries, not a program, so besides the cache
directory they are kept beside the installation, as Python keeps bytecode (`codegen/
__pycache__/machine/`, or under `sys.pycache_prefix`; cache.beside_installation says when
that folder is trusted). A process whose cache is empty (a new TRACER_CACHE_DIR: a test's, a
CI job's, a program's own) finds them there, and its first build runs no `cc --version` and
links with gold alone instead of through the compiler's driver, which is where records are
learnt (about 10 ms of a first call: benchmarks/RESULTS.md). Both copies are read, the
cache's over the installation's where both hold a key, and each is checked as a record of
the cache is (a sealed file, every record's fields): a record only speeds a build up, and
one that is wrong for this machine fails the way it would in the cache (a direct link that
fails is turned off in both). Where Python may not write bytecode (PYTHONDONTWRITEBYTECODE)
the installation's copy is read and never written, as Python treats bytecode.
"""

import contextlib
import os
import sys

from codegen import cache

FOLDER = "machine"


def read(name, sound=None):
    """{key: record} of the records file `name`: the installation's, then the cache's over
    them; a copy whose records `sound` refuses (where given) is left out, with one log line
    (and removed where this process may write it, as `cache.read_sealed` removes a damaged
    file)."""
    records = {}
    for path, writable in _copies(name):
        found = cache.read_sealed(path, remove_damaged=writable)
        if sound is None or sound(found):
            records.update(found)
        else:
            cache.log.warning("tracer: ignoring the damaged record %s (its fields)", path)
            if writable:
                cache.remove(path)
    return records


def write(name, records):
    """Write `records` as the records file `name`, beside the installation (where it may be
    written: a copy that cannot be is only a later process's probe or learning link) and to
    the cache."""
    folder, writable = _beside()
    if writable:
        with contextlib.suppress(OSError):
            cache.write_sealed(os.path.join(folder, name), records)
    cache.write_sealed(os.path.join(cache.cache_root(), name), records)


def installation_folder(make=True):
    """The folder beside the installation that holds the machine's records (made, and
    writable, with `make`), or None."""
    return cache.beside_installation(os.path.dirname(os.path.abspath(__file__)), FOLDER, make)


def _beside():
    """(the folder beside the installation or None, whether this process may write to it):
    not where Python writes no bytecode, nor in a read-only installation, whose records are
    still read."""
    folder = None if sys.dont_write_bytecode else installation_folder()
    if folder is not None:
        return folder, True
    return installation_folder(make=False), False


def _copies(name):
    """[(path, whether this process may write it)] of the records file `name`: beside the
    installation first, then in the cache."""
    folder, writable = _beside()
    copies = [] if folder is None else [(os.path.join(folder, name), writable)]
    return [*copies, (os.path.join(cache.cache_root(), name), True)]
