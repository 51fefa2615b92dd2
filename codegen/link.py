"""Direct links: a module's objects linked by ld.gold itself, not through the compiler's
driver.

The driver's link of a small module is mostly the driver, collect2 and the linker finding
and reading the libraries' symbol tables. What the linker
takes from a library is its name (DT_NEEDED: the dynamic loader resolves every symbol when
the module loads, RTLD_NOW) and, where the library defines symbol versions, the version of
each symbol the module calls: glibc keeps old versions of exp, log, pow, memcpy... and binds
a reference without a version to the oldest (log(-1) is then +NaN, not numpy's -NaN). So
what the driver links is learnt once for a compiler, its flags and the libraries asked for:
the first module built under them is linked through the driver with --no-as-needed (its
DT_NEEDED then names every shared library the driver links); once it has loaded, the
process's mappings say which file the loader found for each name, and the compiler names
its own static library (libgcc.a: half-precision and complex helpers are linked into
modules). The machine's records keep that (`links.json`: codegen/machine_records.py). Later
links give gold the objects, libgcc.a, the files of the libraries that define versions (C's,
its maths, OpenMP's), and for the others (the BLAS) an empty library of that name
(codegen/elf.py), with none of the driver's searching.

What the driver's link has and a direct one lacks: the start files (crti/crtbeginS: the
init/fini glue of C++ constructors and transactional memory, which modules do not use) and
libc_nonshared.a (atexit and the like: modules call none). As with the driver, a module
names only the libraries gold read that it calls (--as-needed); a stub, which defines
nothing, is named always (the BLAS, whose module calls it).
Where a direct link fails, or makes a module that does not load where the driver's link of
it loads, the driver links and the record says so: direct links are not tried again under
that key (codegen/build.py).
"""

import contextlib
import hashlib
import json
import os
import re
import struct

from codegen import elf, machine_records

# a library's name as the dynamic loader looks it up: a file name, not a directory's
_LIBRARY_NAME = re.compile(r"(?!\.\.?\Z)[A-Za-z0-9_.+-]{1,128}\Z")
_ELF_ERRORS = (OSError, ValueError, struct.error, IndexError, OverflowError)
MAX_LIBRARIES = 64  # a module names a handful: a record naming more is not sound
LINKS = "links.json"  # the machine's records of direct links (codegen/machine_records.py)


def key_of(compiler_stamp, flags, libraries):
    """The key of what a direct link needs, for a compiler (its stamp), its flags and the
    libraries asked for."""
    return hashlib.sha256(json.dumps([compiler_stamp, flags, libraries]).encode()).hexdigest()


def record(key):
    """What the cache knows of direct links under `key`: {"needed": [library names],
    "files": {name: path of the library gold reads}, "libgcc": path}, {"direct": False}
    (they failed: the driver links), or None (not learnt yet, or not sound: the driver
    links, and `learn` records what it linked)."""
    found = machine_records.read(LINKS).get(key)
    return found if found is not None and _sound(found) else None


def learn(key, library, libgcc):
    """Record, for the direct links under `key`, what the driver linked into `library`
    (linked with --no-as-needed, and loaded in this process) and where libgcc.a is; an
    answer that is not sound turns them off. Where a library it names is not found among
    the files this process maps and a file named like it was replaced since it was loaded
    ("(deleted)": a package upgraded meanwhile), nothing is recorded: a later build learns
    again."""
    try:
        needed = elf.names(library)[1]
        mapped, deleted = _mapped_libraries(needed)
    except _ELF_ERRORS:  # not the ELF file it should be, or no mappings to read
        _write(key, {"direct": False})
        return
    missing = [name.split(".so")[0] for name in needed if name not in mapped]
    if not missing:
        files = {name: mapped[name][0] for name in needed if mapped[name][1]}
        found = {"needed": needed, "files": files, "libgcc": libgcc}
        _write(key, found if _sound(found) else {"direct": False})
    elif not any(file.startswith(stem) for stem in missing for file in deleted):
        _write(key, {"direct": False})  # a library without the name it is loaded by


def disable(key):
    """Direct links under `key` failed where the driver's succeeded: not tried again."""
    _write(key, {"direct": False})


def command(gold, found, objects, output, rpath, directory):
    """The ld.gold command that links `objects` into `output` with what `found` (`record`)
    names; writes the stubs into `directory`. `rpath`: where the loader finds the BLAS."""
    with open(objects[0], "rb") as handle:
        like = handle.read(20)
    libraries = []  # in the driver's order, each with its own --as-needed state
    for name in found["needed"]:
        path = found["files"].get(name)
        if path is None:
            path = os.path.join(directory, name)
            with open(path, "wb") as handle:
                handle.write(elf.stub(like, name))
        libraries += ["--as-needed" if name in found["files"] else "--no-as-needed", path]
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
        *libraries,
        *[part for path in rpath for part in ("-rpath", path)],
    ]


def _mapped_libraries(names):
    """({name: (path, whether it defines symbol versions)} of the shared libraries called
    `names` (DT_SONAME) that this process has mapped (/proc/self/maps), the names of the
    mapped files replaced since). The files named after a name (libm.so.6,
    libgomp.so.1.0.0) are read first, the others only for the names still missing
    (libopenblasp-r0.3.21.so is libopenblas.so.0, libm-2.31.so libm.so.6)."""
    with open("/proc/self/maps") as handle:
        fields = [line.split(None, 5) for line in handle]
    paths = sorted({f[5].strip() for f in fields if len(f) == 6 and f[5].startswith("/")})
    deleted = [os.path.basename(p) for p in paths if p.endswith(" (deleted)")]
    named = [p for p in paths if os.path.basename(p).startswith(tuple(names))]
    found = {}
    for path in named + [p for p in paths if p not in named]:
        if set(names) <= set(found):
            break
        with contextlib.suppress(*_ELF_ERRORS):
            soname, _, versioned = elf.names(path)
            if soname in names:
                found.setdefault(soname, (path, versioned))
    return found, deleted


def _sound(found):
    """Whether a record read back is one this module writes: its names plain file names, its
    files and libgcc regular files, each file the library of its name."""
    if found == {"direct": False}:
        return True
    if not (
        isinstance(found, dict)
        and set(found) == {"needed", "files", "libgcc"}
        and isinstance(found["needed"], list)
        and len(found["needed"]) <= MAX_LIBRARIES
        and all(isinstance(n, str) and _LIBRARY_NAME.match(n) for n in found["needed"])
        and isinstance(found["files"], dict)
        and set(found["files"]) <= set(found["needed"])
        and all(_regular_file(path) for path in (found["libgcc"], *found["files"].values()))
    ):
        return False
    try:
        return all(elf.names(path)[0] == name for name, path in found["files"].items())
    except _ELF_ERRORS:
        return False


def _regular_file(path):
    try:
        return isinstance(path, str) and os.path.isabs(path) and os.path.isfile(path)
    except ValueError:  # a NUL in it
        return False


def _write(key, found):
    records = machine_records.read(LINKS)
    records[key] = found
    with contextlib.suppress(OSError):  # not written: a later build learns again
        machine_records.write(LINKS, records)
