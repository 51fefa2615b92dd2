"""Compiling C source into a shared library, through the cache, and loading it.

The library is plain C (no Python.h, whose parsing would weigh on a small module's
compiler run) compiled by the compiler (one run, or one per translation unit: codegen/units.py), linked by
it or by gold directly (codegen/link.py), and loaded with cffi's ABI-level backend: its entry
point `tracer_run` is called through libffi from the Python call path (a little more per
call than an extension module's wrapper) and by address from `runtime/fast_call.c`. Built
with -O3 for this CPU (-march=native, part of the cache key) and without
-ffast-math, so NaN, Inf and signed zeros behave as in numpy; -fno-math-errno only lets
sqrt compile to one instruction, and -fwrapv gives integers numpy's wrap-around.
-ffp-contract=off rounds every product as written, as numpy does: GNU C would otherwise fuse
a * b + c into one multiply-add where it chooses, so that an expression computed in two
kernels (a reduction's and its gradient's, which compares x with max(x)) could differ in its
last bit. -fno-trapping-math lets GCC compute what a select leaves out (no program reads the
floating-point exception flags a module would raise): with trapping maths it keeps a loop
scalar, behind a branch per element, where a float select is widened to double in only one
of its arms (a relu's gradient summed into a bias's double accumulators); the values are the
same either way (tests/test_selects_in_sums.py).
"""

import concurrent.futures
import contextlib
import functools
import hashlib
import importlib.machinery
import importlib.util
import json
import os
import platform
import re
import shutil
import signal
import stat
import struct
import subprocess
import tempfile
import threading
import time

import _cffi_backend

from codegen import cache, elf, link, machine_records
from codegen import units as module_units
from codegen.errors import CompileError, CompilerUnavailable, LoadError
from runtime import native, thread_pools

FLAGS = [
    "-O3",
    "-march=native",
    *native.WIDE_VECTORS,  # the installed kernels' vector width: runtime/native.py says why
    "-fPIC",
    "-shared",
    "-std=gnu11",
    "-fwrapv",
    "-fno-math-errno",
    "-fno-trapping-math",
    "-ffp-contract=off",
    # the C library's names are declared by the module (codegen/libc.py): one used but not
    # declared, or declared otherwise than the compiler knows it, stops the build
    "-Werror=implicit-function-declaration",
    "-Werror=builtin-declaration-mismatch",
    "-pipe",  # the assembly passed through a pipe, not a file: a faster small build
    "-fno-use-linker-plugin",  # no LTO: the linker need not load GCC's plugin
]
# With glibc's libmvec, loops calling libm vectorize: `omp declare simd` in the prologue names
# the vector variants (accurate to 4 ulp, NaN and Inf handled), -fopenmp-simd honours the
# pragmas (and nothing else of OpenMP), and GCC must not merge sin and cos into sincos,
# which has no vector variant. Nor may it treat exp as its builtin: a loop whose exp
# argument is a select (tr_exp's range shift, tracer/ops/math_ops.py) then stays scalar,
# where the declaration's `const` lets it vectorize. With OpenMP, large loop nests also run
# on every core (-fopenmp: the `parallel for` pragmas the lowering puts on them).
VECTOR_MATH_FLAGS = [
    "-fopenmp-simd",
    "-fno-builtin-sin",
    "-fno-builtin-cos",
    "-fno-builtin-sinf",
    "-fno-builtin-cosf",
    "-fno-builtin-exp",
    "-fno-builtin-expf",
]
TRACER_VERSION = "0.1.0"
ENTRY_POINT = ("tracer_run", "int(*)(char **)")  # the name and C type of a module's entry
# the variable a module's watched loops call back through (templates/watch.c.j2), and its type
WATCH_VARIABLE = ("tracer_watch", "int(*)(void)")


def compile_timeout():
    """Seconds one compiler run may take (TRACER_COMPILE_TIMEOUT, default 600)."""
    return float(os.environ.get("TRACER_COMPILE_TIMEOUT", 600))


def compiler():
    return _compiler(os.environ.get("CC"), os.environ.get("PATH"))


@functools.lru_cache(maxsize=4)
def _compiler(cc, path):
    """$CC, else cc or gcc as found on $PATH (`path`: a new PATH searches again)."""
    return cc or shutil.which("cc", path=path) or shutil.which("gcc", path=path) or "cc"


def _stamp(cc):
    """(the compiler's path, the key of its record: its real path, size and mtime)."""
    path = shutil.which(cc) or cc
    try:
        info = os.stat(path)
    except OSError:
        raise CompilerUnavailable(f"no C compiler found at {cc!r}") from None
    return path, f"{os.path.realpath(path)}:{info.st_size}:{info.st_mtime_ns}"


# the machine's records of its compilers (codegen/machine_records.py)
TOOLCHAINS = "toolchains.json"


def _write_toolchains(records):
    machine_records.write(TOOLCHAINS, records)


@functools.lru_cache(maxsize=4)
def toolchain(cc):
    """What this compiler is and can do: {"identity": version banner, "vector_math": bool,
    "threads": bool (OpenMP)}, probed where no record has it.

    Probing costs two compiler runs, so the answer is kept in the cache directory, keyed by
    the compiler binary's path, size and modification time: a warm process runs no
    compiler at all.
    """
    path, stamp = _stamp(cc)
    records = _read_toolchains()
    if stamp not in records:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(3) as pool:  # three compiler runs at once, for a cold start
            identity = pool.submit(_identity, path)
            vector_math = pool.submit(
                _probe, path, VECTOR_MATH_PROBE, [*VECTOR_MATH_FLAGS, "-lmvec", "-lm"]
            )
            threads = pool.submit(_probe, path, THREADS_PROBE, ["-fopenmp"])
            records[stamp] = {
                "identity": identity.result(),
                "vector_math": vector_math.result(),
                "threads": threads.result(),
            }
        _write_toolchains(records)
    return records[stamp]


@functools.lru_cache(maxsize=4)
def _current(cc):
    """The compiler's record; where there is none yet, the assumption that it has every
    feature (marked "assumed"), which the first module built confirms (`confirm_toolchain`)
    and a failed build replaces by probes (`probe_toolchain`): a healthy machine's first
    build then runs the compiler once, not three times."""
    path, stamp = _stamp(cc)
    record = _read_toolchains().get(stamp)
    if record is not None:
        return record
    return {"identity": _identity(path), "vector_math": True, "threads": True, "assumed": True}


def toolchain_assumed():
    """Whether the flags in use are the assumption of `_current`, not yet confirmed."""
    return "assumed" in _current(compiler())


def confirm_toolchain():
    """Record the assumed toolchain: a module was built with every feature."""
    cc = compiler()
    record = _current(cc)
    if "assumed" in record:
        _, stamp = _stamp(cc)
        records = _read_toolchains()
        records.setdefault(stamp, {name: record[name] for name in _TOOLCHAIN_FIELDS})
        _write_toolchains(records)
        _current.cache_clear()


def probe_toolchain():
    """Replace the assumption by what the probes find (a build under it failed)."""
    toolchain.cache_clear()
    _current.cache_clear()
    return toolchain(compiler())


_TOOLCHAIN_FIELDS = {"identity": str, "vector_math": bool, "threads": bool}


def _read_toolchains():
    """{stamp: record} from the toolchain records, each copy used only where every record's
    fields and their types are sound (codegen/machine_records.py)."""
    return machine_records.read(TOOLCHAINS, _sound_toolchains)


def _sound_toolchains(records):
    return all(
        isinstance(record, dict)
        and set(record) == set(_TOOLCHAIN_FIELDS)
        and all(isinstance(record[k], t) for k, t in _TOOLCHAIN_FIELDS.items())
        for record in records.values()
    )


def compiler_identity(cc):
    return _current(cc)["identity"]


def vector_math():
    return _current(compiler())["vector_math"]


def threads():
    return _current(compiler())["threads"]


def _identity(cc):
    """The compiler's version banner, or CompilerUnavailable."""
    try:
        result = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise CompilerUnavailable(f"no C compiler could be run as {cc!r}: {error}") from None
    if result.returncode != 0:
        raise CompilerUnavailable(f"{cc} --version failed: {result.stderr.strip()[:200]}")
    return result.stdout.splitlines()[0] if result.stdout else cc


VECTOR_MATH_PROBE = (
    "#pragma omp declare simd notinbranch\nfloat expf(float);\n"
    "void f(float *x) {\n#pragma omp simd\nfor (int i = 0; i < 64; i++) x[i] = expf(x[i]);\n}\n"
)
THREADS_PROBE = (
    "void f(float *x) {\n#pragma omp parallel for\nfor (int i = 0; i < 64; i++) x[i] += 1;\n}\n"
)


def _probe(cc, source_text, flags):
    """Whether `cc` builds a shared library from `source_text` with `flags`."""
    directory = tempfile.mkdtemp(prefix="tracer-probe-")
    try:
        source = os.path.join(directory, "probe.c")
        with open(source, "w") as handle:
            handle.write(source_text)
        command = [
            cc,
            "-O3",
            "-march=native",
            "-fPIC",
            "-shared",
            source,
            "-o",
            os.path.join(directory, "probe.so"),
            *flags,
        ]
        return run_compiler(command)[0] == 0
    except (CompilerUnavailable, CompileError):
        return False
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@functools.lru_cache(maxsize=1)
def blas():
    """(include dir, lib dir, library name) of scipy-openblas32, or None if it is not installed.

    Read from the package's folder, as its get_include_dir, get_lib_dir and get_library
    give them, without importing it (its import reads package metadata, slow in a cold
    first call); a folder laid out otherwise is asked through the package."""
    spec = importlib.util.find_spec("scipy_openblas32")
    if spec is None:
        return None
    for folder in spec.submodule_search_locations or ():
        folder = os.path.abspath(folder)  # the library's path is written into the module
        include, lib = os.path.join(folder, "include"), os.path.join(folder, "lib")
        with contextlib.suppress(OSError):
            names = [n for n in os.listdir(lib) if n.startswith("libscipy_openblas")]
            if len(names) == 1 and os.path.isfile(os.path.join(include, "cblas.h")):
                return include, lib, os.path.splitext(names[0])[0][3:]
    try:
        import scipy_openblas32
    except ImportError:
        return None
    return (
        scipy_openblas32.get_include_dir(),
        scipy_openblas32.get_lib_dir(),
        scipy_openblas32.get_library(),
    )


def sanitizers():
    """The sanitizers TRACER_SANITIZE names ("address,undefined"), or "" for none."""
    value = os.environ.get("TRACER_SANITIZE", "").strip()
    if value and not all(part.isalpha() for part in value.split(",")):
        raise ValueError(f"TRACER_SANITIZE={value!r}: give sanitizer names, as 'address,undefined'")
    return value


# With OpenMP, a module defines the entry points its parallel loops call, which hand them to
# tracer's pool: it links the object of them built with the extensions (setup.py), or where
# there is none, every unit starts with them (weak, so that the units' copies link as one)
OPENMP_ENTRIES = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "runtime", "openmp_entries.h"
)
OPENMP_ENTRIES_OBJECT = os.path.join(os.path.dirname(OPENMP_ENTRIES), "openmp_entries.o")


def entries_object():
    """[the installed object of the OpenMP entry points] where a module links it: where
    modules have threads and the object was built after the header (an object left from an
    older header is not used), else []."""
    return [OPENMP_ENTRIES_OBJECT] if threads() and _entries_object_current() else []


@functools.cache
def _entries_object_current():
    """Whether the object is there and no older than the header it was built from."""
    try:
        return os.stat(OPENMP_ENTRIES_OBJECT).st_mtime_ns >= os.stat(OPENMP_ENTRIES).st_mtime_ns
    except OSError:
        return False


def _flags():
    flags = FLAGS + (VECTOR_MATH_FLAGS if vector_math() else [])
    if threads():  # without the entry points' object, every unit compiles them itself
        flags = flags + ["-fopenmp"] + ([] if entries_object() else ["-include", OPENMP_ENTRIES])
    if sanitizers():  # every report is fatal, with a usable stack
        flags = [f for f in flags if f != "-O3"] + [
            "-O1",
            "-g",
            "-fno-omit-frame-pointer",
            f"-fsanitize={sanitizers()}",
            "-fno-sanitize-recover=all",
        ]
    return flags


@functools.cache
def _cpu():
    try:
        with open("/proc/cpuinfo") as handle:
            flags = next((line for line in handle if line.startswith("flags")), "")
    except OSError:
        flags = ""
    return platform.machine() + hashlib.sha256(flags.encode()).hexdigest()[:12]


# C's comments, or a string or character literal (kept: a comment marker may sit in one)
_COMMENT_OR_LITERAL = re.compile(
    r'("(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\')|/\*.*?\*/|//[^\n]*', re.S
)


@functools.lru_cache(maxsize=16)  # a module's key is asked by its lowering, then its build
def code_of(source):
    """`source` without its comments: what the compiler compiles. The cache key hashes this,
    so moving the user's code to other lines (which only the comments name) reuses the
    module; the C shown to the user (`c_source()`) is always the current text."""
    return _COMMENT_OR_LITERAL.sub(lambda m: m.group(1) or " ", source)


def rewrite_comments(source, rewrite):
    """`source` with each comment replaced by `rewrite(comment)`: the code, and so the cache
    key, stay the same."""
    return _COMMENT_OR_LITERAL.sub(lambda m: m.group(1) or rewrite(m.group(0)), source)


def cache_key(source, uses_blas):
    return hashlib.sha256(
        "\0".join([code_of(source), build_identity(uses_blas)]).encode()
    ).hexdigest()


def build_identity(uses_blas=False):
    """The digest of what a module's code compiles with besides its C: the compiler, its
    switches, the OpenMP entry points, tracer's version, the CPU and the BLAS."""
    parts = [
        compiler_identity(compiler()),
        " ".join(_flags()),
        _openmp_entries() if threads() else "",
        TRACER_VERSION,
        _cpu(),
        repr(blas() if uses_blas else None),
    ]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


@functools.cache
def _openmp_entries():
    """The text of runtime/openmp_entries.h, which every module with OpenMP compiles."""
    with open(OPENMP_ENTRIES) as handle:
        return handle.read()


_loaded = {}  # key -> (module, meta): the in-process cache in front of the disk
_key_locks = {}  # key -> the lock its build holds: one build per module in a process
_key_locks_guard = threading.Lock()
# link keys under which neither a direct nor a driver link made a module this process could
# load (a cache on a noexec mount): it links through the compiler alone, and the record stays
# for processes where modules load
_UNLOADABLE = set()


def load(source, uses_blas, build_missing=True):
    """The compiled module for `source` (building it unless cached) and its metadata. Threads
    asking for the same module wait for one build. With `build_missing` False: None where
    the module is not built yet or another thread is building it (nothing is compiled or
    waited for)."""
    key = cache_key(source, uses_blas)
    found = _loaded.get(key)
    if found is not None:
        return found
    with _key_locks_guard:
        lock = _key_locks.setdefault(key, threading.Lock())
    if not lock.acquire(blocking=build_missing):
        return None  # another thread is building it: a caller that builds nothing does not wait
    try:
        if key not in _loaded:
            loaded = _load_from_disk(source, key, uses_blas, build_missing)
            if loaded is None:
                return None
            _loaded[key] = loaded
    finally:
        lock.release()
    return _loaded[key]


def is_cached(key):
    """Whether the module of the cache key `key` is loaded or has an entry in the cache (not
    checked: `load` checks it)."""
    return key in _loaded or os.path.isdir(os.path.join(cache.cache_root(), key))


def cached(key, uses_blas):
    """The module of the cache's entry `key` (a module that calls the BLAS: `uses_blas`),
    loaded where this process has not loaded it yet, or None where the cache holds no sound
    one that loads, or another thread is building it (nothing is waited for)."""
    if key in _loaded:
        return _loaded[key][0]
    with _key_locks_guard:
        lock = _key_locks.setdefault(key, threading.Lock())
    if not lock.acquire(blocking=False):
        return None
    try:
        if key not in _loaded:
            found = cache.lookup(key, _library_name(key))
            if found is None:
                return None
            try:
                _loaded[key] = Library(found[0], uses_blas), dict(found[1], cached=True)
            except LoadError:
                return None
    finally:
        lock.release()
    return _loaded[key][0]


def _library_name(key):
    return f"_tracer_{key[:20]}.so"


def _load_from_disk(source, key, uses_blas, build_missing):
    library = _library_name(key)
    found = cache.lookup(key, library)
    if found is not None:
        try:
            return Library(found[0], uses_blas), dict(found[1], cached=True)
        except LoadError as error:  # sound by its digest, yet it does not load: built again
            cache.log.warning(
                "tracer: removing the cache entry %s (%s); building it again", key, error
            )
            cache.remove(os.path.dirname(found[0]))
    if not build_missing:
        return None
    gold = None if sanitizers() else _gold()
    link_key = _link_key(uses_blas) if gold is not None else None
    if link_key in _UNLOADABLE:
        gold = link_key = None
    known = link.record(link_key) if link_key is not None else None
    if link_key is None or known is not None:
        return _built(source, key, library, uses_blas, gold, link_key, known)
    # the first build under this key learns the link, and where libgcc.a is: asked after
    # the build (2 ms), as a compiler running beside it would count as a busy core and the
    # module be compiled as one unit (codegen/units.py's `free_cores`)
    loaded, meta = _built(source, key, library, uses_blas, gold, link_key, known)
    if meta["link"] == "driver":  # loaded: the loader found each library it names
        libgcc = _answer(_start_compiler([compiler(), "-print-libgcc-file-name"]))
        link.learn(link_key, os.path.join(cache.cache_root(), key, library), libgcc)
    return loaded, meta


def _built(source, key, library, uses_blas, gold, link_key, known):
    """Build the module and load it (see `_build`); a module gold linked directly that does
    not load is built again, linked by the compiler, and where that one loads, direct links
    are turned off; where it does not either, this process links through the compiler."""
    build = functools.partial(_build, source, library, uses_blas, gold, link_key, known)
    path, meta = cache.publish(key, library, build)
    try:
        return Library(path, uses_blas), dict(meta, cached=False)
    except LoadError as error:
        if meta.get("link") != "direct":
            raise
        cache.log.warning("tracer: %s; linking it through the compiler", error)
        cache.remove(os.path.dirname(path))
        build = functools.partial(_build, source, library, uses_blas, None, None, None)
        path, meta = cache.publish(key, library, build)
        try:
            loaded = Library(path, uses_blas)
        except LoadError as error:  # not the direct link's fault
            if "undefined symbol" not in str(error):  # no module loads (a noexec cache)
                _UNLOADABLE.add(link_key)
            raise
        link.disable(link_key)
        return loaded, dict(meta, cached=False)


def _answer(query):
    """What the compiler `query` printed, or "" where it failed."""
    try:
        out, _ = query.communicate(timeout=compile_timeout())
    except subprocess.TimeoutExpired:
        _stop(query)
        query.communicate()
        return ""
    return out.strip() if query.returncode == 0 else ""


def _libraries(uses_blas):
    """The link arguments of a module: the C library's maths (and its vector variants), and
    the BLAS where the module calls it."""
    libraries = ["-lmvec", "-lm"] if vector_math() else ["-lm"]
    if uses_blas:
        _, lib, lib_name = blas()
        libraries += [f"-L{lib}", f"-l{lib_name}", f"-Wl,-rpath,{lib}"]
    return libraries


def _link_key(uses_blas):
    """The key of what a direct link (codegen/link.py) needs with this compiler, its flags
    and a module's libraries."""
    return link.key_of(_stamp(compiler())[1], _flags(), _libraries(uses_blas))


def _gold():
    """The path of ld.gold, unless there is none or it failed (`_linked`)."""
    gold = shutil.which("ld.gold")
    return None if gold is None or _gold_failed(gold) else gold


def _build(source, library, uses_blas, gold, link_key, known, directory):
    """Write the module's C into `directory` and compile it into the shared library
    `library` there; returns the metadata of the build. It is linked by `gold` directly
    where `known` (codegen/link.py's record under `link_key`) says how, else by the
    compiler: with --no-as-needed where there is no record yet, so that `link.learn` finds
    every library the compiler links named in the module."""
    c_path = os.path.join(directory, "module.c")
    with open(c_path, "w") as handle:
        handle.write(source)
    includes, libraries = [], _libraries(uses_blas)
    if uses_blas:
        includes.append(f"-I{blas()[0]}")
    output = os.path.join(directory, library)
    units = module_units.count(source)
    direct = known if known is not None and "needed" in known else None
    learning = ["-Wl,--no-as-needed"] if link_key is not None and known is None else []
    start = time.perf_counter()
    linked = "driver"
    entries = entries_object()
    if units == 1 and direct is None:  # compiled and linked by one compiler run
        _linked(
            [compiler(), *_flags(), *includes, c_path, *entries, "-o", output, *learning]
            + libraries
        )
    else:
        objects, temporary = _objects(source, units, includes, directory)
        objects += entries
        if direct is not None and _linked_directly(gold, direct, objects, output, uses_blas):
            linked = "direct"
        else:
            _linked([compiler(), *_flags(), *objects, "-o", output, *learning, *libraries])
            if direct is not None:  # the driver links what gold alone did not
                link.disable(link_key)
        for path in temporary:
            os.remove(path)
    _check_openmp_entries(output)
    return {
        "compile_seconds": round(time.perf_counter() - start, 4),
        "units": units,
        "link": linked,
    }


def _check_openmp_entries(library):
    """Refuse a module whose loops call an OpenMP entry point that runtime/openmp_entries.h
    does not define: it would reach an OpenMP library that knows nothing of tracer's pool,
    whose threads its other calls name."""
    try:
        missing = sorted(n for n in elf.undefined(library) if n.startswith(("GOMP_", "omp_")))
    except (OSError, ValueError, struct.error) as error:
        raise CompileError(f"the compiled module {library} could not be read: {error}") from None
    if missing:
        raise CompileError(
            f"the compiled module calls OpenMP's {', '.join(missing)}, which tracer's thread "
            "pool does not define (runtime/openmp_entries.h)"
        )


def _objects(source, units, includes, directory):
    """Compile `source` as `units` translation units at once: (the objects, every file
    written)."""
    commands, temporary = [], []
    texts = [source] if units == 1 else module_units.sources(source, units)
    for u, text in enumerate(texts):
        unit_path, object_path = (os.path.join(directory, f"unit{u}{e}") for e in (".c", ".o"))
        with open(unit_path, "w") as handle:
            handle.write(text)
        temporary += [unit_path, object_path]
        unit = [] if units == 1 else [f"-DTR_UNIT={u}"]
        commands.append(
            [compiler(), *_flags(), *includes, *unit, "-c", unit_path, "-o", object_path]
        )
    results = list(zip(commands, run_compilers(commands)))
    # the unit that failed first, not one stopped because of it (killed: status < 0)
    for command, (returncode, errors) in sorted(results, key=lambda r: r[1][0] < 0):
        _check_compiled(command, returncode, errors)
    return temporary[1::2], temporary


def _linked_directly(gold, direct, objects, output, uses_blas):
    """Whether gold linked `objects` into `output` with what `direct` names (a stub that
    cannot be written, objects that are not ELF, a gold gone missing: not linked, the
    compiler links)."""
    stubs = os.path.join(os.path.dirname(output), "stubs")
    rpath = [blas()[1]] if uses_blas else []
    try:
        os.mkdir(stubs)
        command = link.command(gold, direct, objects, output, rpath, stubs)
        return run_compiler(command)[0] == 0
    except (OSError, ValueError, CompilerUnavailable):
        return False
    finally:
        cache.remove(stubs)


def _linked(command):
    """Run the compiler `command`, which links a module: with gold where ld.gold is found (a
    small module's link is faster: it reads the libraries faster), and where gold's link
    fails and the compiler's own linker's succeeds, with that one, recording that gold
    (the cache's `gold-failed`: later processes do not try it again)."""
    gold = _gold()
    if gold is None:
        return _check_compiled(command, *run_compiler(command))
    returncode, errors = run_compiler([*command, "-fuse-ld=gold"])
    if returncode == 0 or not _LINKER_FAILED.search(errors):
        return _check_compiled(command, returncode, errors)
    _check_compiled(command, *run_compiler(command))
    with contextlib.suppress(OSError, CompilerUnavailable):  # a record not written: gold again
        cache.write_json(_gold_record(), _stamp(gold)[1])


def _gold_record():
    return os.path.join(cache.cache_root(), "gold-failed")


def _gold_failed(gold):
    """Whether a link with this gold (its path, size and modification time) failed. The
    record is read only where it is a plain file of a few bytes, and can only turn gold off:
    a damaged one costs a slower link, nothing else."""
    try:
        info = os.lstat(_gold_record())
        if not stat.S_ISREG(info.st_mode) or info.st_size > 4096:
            return False
        with open(_gold_record(), "rb") as handle:
            return json.loads(handle.read().decode()) == _stamp(gold)[1]
    except (OSError, ValueError, CompilerUnavailable):
        return False


def _check_compiled(command, returncode, errors):
    if returncode != 0:
        raise CompileError(f"C compilation failed ({' '.join(command[:3])} ...):\n{errors[-4000:]}")


# what the linker, GCC's and Clang's drivers say where the linker failed or could not run
_LINKER_FAILED = re.compile(r"^(collect2: |\S*\bld(\.gold)?: )|fuse-ld|linker command failed", re.M)


def run_compiler(command):
    """(exit status, stderr) of the compiler run as `command`, in a process group of its own:
    a time-out (CompileError) or an interrupt ends the whole group, cc1 and the assembler too."""
    (result,) = run_compilers([command])
    return result


def run_compilers(commands):
    """[(exit status, stderr)] of the compilers run as `commands`, all at once, each in a
    process group of its own: a time-out (CompileError), an interrupt or a failed one ends
    every group still running, cc1 and the assembler too."""
    processes = []
    pool = concurrent.futures.ThreadPoolExecutor(len(commands))  # each reads one's pipes
    try:
        for command in commands:
            processes.append(_start_compiler(command))
        waits = {pool.submit(p.communicate, timeout=compile_timeout()): p for p in processes}
        for wait in concurrent.futures.as_completed(waits):
            wait.result()  # a time-out raises here
            if waits[wait].returncode != 0:
                break  # one failed: what the others make is of no use
        for process in processes:
            if process.returncode is None:
                _stop(process)
        errors = [wait.result()[1] for wait in waits]  # each has ended, and is reaped
        return [(process.returncode, text) for process, text in zip(processes, errors)]
    except BaseException as error:
        for process in processes:
            if process.returncode is None:  # not reaped: its group is its own still
                _stop(process)
        pool.shutdown(wait=True)  # the pipes close as the processes end
        for process in processes:
            process.communicate()  # reaped, its pipes closed
        if isinstance(error, subprocess.TimeoutExpired):
            raise CompileError(
                f"the C compiler ran past {compile_timeout():g} s (TRACER_COMPILE_TIMEOUT) and "
                "was stopped"
            ) from None
        raise
    finally:
        pool.shutdown(wait=True)


def _start_compiler(command):
    try:
        return subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
    except OSError as error:
        raise CompilerUnavailable(
            f"the C compiler {command[0]!r} could not be run: {error}"
        ) from None


def _stop(process):
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


class Library:
    """A built module, loaded: `ffi` (cffi's backend, which parses C types without pycparser)
    and `run`, its entry point as a cffi function pointer. Loaded modules stay loaded for
    the process (`load` keeps each), as extension modules do: the C call path holds the
    entry point's address."""

    ffi = _cffi_backend.FFI()
    _entry_type = ffi.typeof(ENTRY_POINT[1])

    def __init__(self, path, uses_blas):
        if uses_blas:
            found = blas()
            if found is not None:
                thread_pools.blas_on_calling_thread(found[1], found[2])
        # NOTE: RTLD_NODELETE: the handle's dlclose, when Python frees it at exit, must not
        # unmap code that a thread still runs (calls release the GIL)
        flags = os.RTLD_NOW | os.RTLD_LOCAL | getattr(os, "RTLD_NODELETE", 0)
        self.path = path
        try:
            self._handle = _cffi_backend.load_library(path, flags)
            self._attach_pool()
            self.run = self._handle.load_function(self._entry_type, ENTRY_POINT[0])
        except (OSError, AttributeError) as error:  # a noexec cache, a library gone missing
            raise LoadError(f"the compiled module {path} could not be loaded: {error}") from None

    def _attach_pool(self):
        """Hand the module's parallel loops to tracer's pool: its `tr_pool` (the OpenMP
        entry points, runtime/openmp_entries.h) is the pool's table."""
        table = native.pool_table() if threads() else 0
        if table:
            ctype = self.ffi.typeof("void *")
            self._handle.write_variable(ctype, "tr_pool", self.ffi.cast(ctype, table))

    def set_pointer(self, name, array):
        """Point the module's `int64_t *` variable `name` at `array` (int64, contiguous, kept
        alive by the caller), or at nothing (None)."""
        ctype = self.ffi.typeof("int64_t *")
        pointer = self.ffi.NULL if array is None else self.ffi.cast(ctype, array.ctypes.data)
        self._handle.write_variable(ctype, name, pointer)

    def read_table(self, name, length):
        """The `length` addresses in the module's array `void *const name[]`."""
        table = self._handle.read_variable(self.ffi.typeof(f"void *[{length}]"), name)
        return [int(self.ffi.cast("uintptr_t", address)) for address in table]

    def set_table(self, name, address):
        """Point the module's `void **` variable `name` at the table at `address`."""
        ctype = self.ffi.typeof("void * *")
        self._handle.write_variable(ctype, name, self.ffi.cast(ctype, address))

    def set_watch(self, function):
        """Make `function` (a cffi `int(*)(void)`) the one the module's watched loops call
        back (its plan's `watch`; runtime/interrupts.py)."""
        name, ctype = WATCH_VARIABLE
        self._handle.write_variable(self.ffi.typeof(ctype), name, function)
