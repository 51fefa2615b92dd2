"""tracer's CPython extensions: which there are, their one interface version, loading, builds.

Four paths of tracer have a copy in C, one set of eager loops is installed built, and so is
the thread pool, each an optional extension module:

    fast_apply     tracer.ops._fast_apply    the eager op path        tracer.ops.core._apply
    fast_call      runtime._fast_call        a compiled function's    the Python function of
                                             call                     runtime/compiled.py
    straight_line  runtime._straight_line    a straight-line program  runtime.straight_line.
                                                                      PythonProgram
    conv_kernels   runtime._conv_kernels     convolution and pooling  each module's own
                                             kernels for compiled     (templates/
                                             modules                  patch_product.c.j2,
                                                                      windows.c.j2)
    array_math     runtime._array_math       eager erf, GELU and      codegen/array_math.py's
                                             softmax loops            module, built at the
                                                                      first call
    thread_pool    runtime._thread_pool      the threads of every     each parallel loop on
                                             parallel loop            the calling thread

The last column is the definition; the C file repeats it only where a benchmark shows the
need, and a test holds the two to the same bits (docs/native-paths.md).

Each extension exports `INTERFACE`, which must equal this module's: one number for the
six, raised whenever any of them changes what it takes or does. An editable install whose
extensions were not rebuilt then runs the Python paths, with one RuntimeWarning per
extension, never a stale C copy. A missing extension (no compiler at install time) is
silent: the Python paths are complete. A user may add its own check (`load(name, check)`):
fast_apply's user runs both paths on probe ops; the check needs tracer's classes, which
runtime may not import, so the check is the user's and the verdict is this module's.

Under TRACER_SANITIZE (docs/reliability.md) the six are not imported but compiled from
their sources with those sanitizers (`build`) into a directory of this user's, and imported
from there; later processes find them built."""

import atexit
import contextlib
import ctypes
import hashlib
import importlib
import importlib.util
import os
import platform
import re
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
import threading
import warnings
from typing import NamedTuple

INTERFACE = 19  # every extension's INTERFACE (#define INTERFACE in its .c file) must equal it

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# On x86, vectors of 512 bits wherever the CPU has them (AVX-512): the convolution kernels'
# register blocks (7 positions by 64 float32 channels, tracer/ops/patch_product_ops.py's
# BLOCKS) are sized for them, and GCC's tuning for Intel's AVX-512 CPUs prefers 256-bit
# vectors, whose blocks then spill (half the speed). The compiled modules take the same flag
# (codegen/build.py's FLAGS), so an installed kernel keeps the bits of a module's own.
WIDE_VECTORS = (
    ("-mprefer-vector-width=512",)
    if platform.machine().lower() in ("x86_64", "amd64", "i386", "i686")
    else ()
)


class Extension(NamedTuple):
    """One of tracer's extensions: its import name, its C file, what it is, what runs
    where it is not used, the compiler's flags it needs besides Python's, and the libraries
    it links besides Python's."""

    module: str
    source: str
    role: str
    instead: str
    flags: tuple = ()
    libraries: tuple = ()


EXTENSIONS = {
    "fast_apply": Extension(
        "tracer.ops._fast_apply",
        os.path.join(_ROOT, "tracer", "ops", "fast_apply.c"),
        "the eager op path in C",
        "the Python path",
    ),
    "fast_call": Extension(
        "runtime._fast_call",
        os.path.join(_ROOT, "runtime", "fast_call.c"),
        "the compiled call path in C",
        "the Python path",
    ),
    # the threads of every parallel loop of tracer's (runtime/openmp_entries.h)
    "thread_pool": Extension(
        "runtime._thread_pool",
        os.path.join(_ROOT, "runtime", "thread_pool.c"),
        "tracer's thread pool",
        "each parallel loop on the thread that calls it",
        ("-O2", "-pthread"),
    ),
    "straight_line": Extension(
        "runtime._straight_line",
        os.path.join(_ROOT, "runtime", "straight_line.c"),
        "the straight-line program in C",
        "the Python loop",
    ),
    # built for this CPU, with OpenMP and the rounding of the compiled modules
    # (codegen/build.py's FLAGS), whose kernels it stands for
    "conv_kernels": Extension(
        "runtime._conv_kernels",
        os.path.join(_ROOT, "runtime", "conv_kernels.c"),
        "the convolution and pooling kernels installed with tracer",
        "each module's own",
        (
            "-O3",
            "-march=native",
            *WIDE_VECTORS,
            "-fopenmp",
            "-ffp-contract=off",
            "-fno-math-errno",
            "-fno-trapping-math",
            "-fwrapv",
        ),
    ),
    # the loops of codegen/array_math.py's modules, with those modules' flags and glibc's
    # vector maths (codegen/build.py's FLAGS and VECTOR_MATH_FLAGS): without libmvec, no build
    "array_math": Extension(
        "runtime._array_math",
        os.path.join(_ROOT, "runtime", "array_math.c"),
        "the eager erf, GELU and softmax loops installed with tracer",
        "a module built at the first call",
        (
            "-O3",
            "-march=native",
            *WIDE_VECTORS,
            "-std=gnu11",
            "-fopenmp",
            "-ffp-contract=off",
            "-fno-math-errno",
            "-fno-trapping-math",
            "-fwrapv",
            "-fopenmp-simd",
            "-fno-builtin-sin",
            "-fno-builtin-cos",
            "-fno-builtin-sinf",
            "-fno-builtin-cosf",
            "-fno-builtin-exp",
            "-fno-builtin-expf",
        ),
        ("mvec", "m"),
    ),
}

_loaded = {}  # name -> the extension module in use, or None
_pool = {"table": None}  # the address of the thread pool's table, once configured
_pool_lock = threading.Lock()  # one configuration, whichever thread comes first
_NOT_LOADED = object()
_loading = threading.RLock()  # held while an extension is found (pool_table loads the pool's)
_sanitized = {}  # name -> the extension built with TRACER_SANITIZE's sanitizers


def load(name, check=None):
    """The extension `name` (a key of EXTENSIONS) accepted for use (`accept`), or None where
    it was not built or was refused. Found once per process: later calls return the first
    answer, so a refused extension warns once. An extension with parallel loops (compiled
    with -fopenmp) is handed tracer's thread pool (`pool_table`).

    >>> load("straight_line").INTERFACE == INTERFACE  # where it was built
    True
    """
    found = _loaded.get(name, _NOT_LOADED)
    if found is not _NOT_LOADED:
        return found
    with _loading:  # one thread finds it; another sees it only once it has the pool
        if name not in _loaded:
            module = _find(name)
            accepted = None if module is None else accept(name, module, check)
            if accepted is not None and "-fopenmp" in EXTENSIONS[name].flags:
                table = pool_table()
                if table:  # its OpenMP entry points' (runtime/openmp_entries.h)
                    ctypes.c_void_p.in_dll(ctypes.CDLL(module.__file__), "tr_pool").value = table
            # published last: a parallel loop that started without the pool and found it in
            # its next share's claim read a team it never joined (a crash)
            _loaded[name] = accepted
        return _loaded[name]


def pool_table():
    """The address of the thread pool's function table (runtime/thread_pool.c), configured
    by runtime/thread_pools.py's `settings` at the first call; 0 where the pool was not
    built (each parallel loop then runs on the thread that calls it)."""
    with _pool_lock:
        if _pool["table"] is None:
            pool = load("thread_pool")
            if pool is not None:
                pool.configure(*_pool_settings())
            _pool["table"] = 0 if pool is None else pool.table()
        return _pool["table"]


def configure_pool():
    """The pool configured by runtime/thread_pools.py's `settings` now, where it was
    already (tracer.distribute's settings, a program's thread count, may come after the
    first parallel loop); its next loop uses them."""
    with _pool_lock:
        if _pool["table"]:
            load("thread_pool").configure(*_pool_settings())


def _pool_settings():
    # (here, not above: setup.py reads this file alone, outside the package)
    from runtime import thread_pools

    return thread_pools.settings()


def accept(name, module, check=None):
    """`module` when it is the extension `name` of this tracer: its INTERFACE is INTERFACE
    and `check(module)` returns '' (else what differs; an exception counts as a difference).
    Otherwise None, with a RuntimeWarning that names the module, the difference and the cure."""
    difference = _difference(module, check)
    if not difference:
        return module
    extension = EXTENSIONS[name]
    warnings.warn(
        f"tracer: {extension.role} ({getattr(module, '__file__', module)}) was built for another "
        f"version of tracer ({difference}); {extension.instead} runs instead. Reinstall tracer "
        "(pip install -e .) to rebuild it.",
        RuntimeWarning,
        stacklevel=3,
    )
    return None


def _difference(module, check):
    interface = getattr(module, "INTERFACE", None)
    if interface != INTERFACE:
        return f"its interface is {interface}, not {INTERFACE}"
    if check is None:
        return ""
    try:
        return check(module)
    except Exception as refused:  # a function it lacks, a table it fills otherwise, ...
        return f"{type(refused).__name__}: {refused}"


def _find(name):
    """The module of extension `name`: built with TRACER_SANITIZE's sanitizers when that is
    set, else the installed one; None where it was not built."""
    sanitize = os.environ.get("TRACER_SANITIZE", "").strip()
    if sanitize:
        if not _sanitized:
            for built, path in build(sanitize, _sanitized_directory()).items():
                _sanitized[built] = _import_file(EXTENSIONS[built].module, path)
        return _sanitized[name]
    try:
        return importlib.import_module(EXTENSIONS[name].module)
    except ImportError:
        return None


def _sanitized_directory():
    """Where the sanitized builds go: tracer-native-<uid> in the temporary directory, kept for
    later processes, where it is this user's and no one else may write to it; else a new
    private one, removed at exit (a directory another user made could hold planted code)."""
    path = os.path.join(tempfile.gettempdir(), f"tracer-native-{os.getuid()}")
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, 0o700)
    info = os.lstat(path)
    if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o022:
        return path
    path = tempfile.mkdtemp(prefix="tracer-native-")
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def build(sanitize, directory):
    """{name: path of the library} of every extension compiled into `directory` with the
    sanitizers `sanitize` ("address,undefined"): each report fatal, with a usable stack.
    The compiler is $CC, else cc or gcc; they compile at once. A library's name holds
    a hash of its source, the compiler and the flags: one already there is used again, and a
    new one appears whole (written aside, then renamed), so processes may share `directory`.

    >>> paths = build("address,undefined", tempfile.mkdtemp())
    >>> sorted(paths) == sorted(EXTENSIONS)
    True
    """
    if not all(part.isalpha() for part in sanitize.split(",")):
        raise ValueError(
            f"TRACER_SANITIZE={sanitize!r}: give sanitizer names, as 'address,undefined'"
        )
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or "cc"
    # -O0: every access is checked as at -O1, and the six compile in a sixth of the time
    # (conv_kernels.c's many specialised loops are most of it)
    flags = ["-O0", "-g", "-fno-omit-frame-pointer", f"-fsanitize={sanitize}"]
    flags += ["-fno-sanitize-recover=all", "-fPIC", "-shared"]
    flags.append(f"-I{sysconfig.get_paths()['include']}")
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    paths, compilers = {}, {}
    for name, extension in EXTENSIONS.items():
        own = [f for f in extension.flags if not f.startswith("-O")]  # the sanitizers' -O0
        with open(extension.source, "rb") as handle:
            text = handle.read() + _headers_of(extension.source)
            key = hashlib.sha256(text + "\0".join([cc, *flags, *own]).encode()).hexdigest()
        short_name = extension.module.rsplit(".", 1)[-1]
        paths[name] = os.path.join(directory, f"{short_name}-{key[:16]}{suffix}")
        if not os.path.exists(paths[name]):
            staging = f"{paths[name]}.{os.getpid()}.tmp"
            libraries = [f"-l{name}" for name in extension.libraries]
            command = [cc, *flags, *own, extension.source, *libraries, "-o", staging]
            compilers[name] = subprocess.Popen(command, stderr=subprocess.PIPE, text=True), staging
    errors = {name: process.communicate()[1] for name, (process, _) in compilers.items()}
    failed = [name for name, (process, _) in compilers.items() if process.returncode != 0]
    for name, (_, staging) in compilers.items():
        if failed:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(staging)
        else:
            os.replace(staging, paths[name])
    if failed:
        raise RuntimeError(
            f"building {EXTENSIONS[failed[0]].source} with -fsanitize={sanitize} failed:\n"
            f"{errors[failed[0]][-4000:]}"
        )
    return paths


def _headers_of(source):
    """The text of tracer's headers that `source` includes (`#include "x.h"`, a path from
    its folder: `"../../runtime/quiet_errors.h"`)."""
    folder = os.path.dirname(source)
    with open(source) as handle:
        names = re.findall(r'^#include "([^"]+)"', handle.read(), re.M)
    texts = []
    for name in names:
        with open(os.path.join(folder, name), "rb") as handle:
            texts.append(handle.read())
    return b"".join(texts)


def _import_file(qualified_name, path):
    """The extension module at `path`, imported as `qualified_name` (in sys.modules: a later
    `import` of that name finds this build, not the installed one)."""
    spec = importlib.util.spec_from_file_location(qualified_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[qualified_name] = module
    spec.loader.exec_module(module)
    return module
