"""Compiling C source into a loadable cffi (API mode) module, through the cache.

cffi writes the module's C wrapper (`ffi.emit_c_code`) and one direct compiler call builds
it: about 0.15 s for a small module, where `ffi.compile()` spends most of 0.6 s in
setuptools. Built with -O3 for this CPU (-march=native, part of the cache key) and without
-ffast-math, so NaN, Inf and signed zeros behave as in numpy; -fno-math-errno only lets
sqrt compile to one instruction, and -fwrapv gives integers numpy's wrap-around.
"""

import contextlib
import functools
import hashlib
import importlib.machinery
import importlib.util
import io
import json
import os
import platform
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time

import cffi

from codegen import cache

FLAGS = [
    "-O3",
    "-march=native",
    "-fPIC",
    "-shared",
    "-std=gnu11",
    "-fwrapv",
    "-fno-math-errno",
    "-w",
]
# With glibc's libmvec, loops calling libm vectorize: `omp declare simd` in the prologue names
# the vector variants (accurate to 4 ulp, NaN and Inf handled), -fopenmp-simd honours the
# pragmas (and nothing else of OpenMP), and GCC must not merge sin and cos into sincos,
# which has no vector variant. With OpenMP, large loop nests also run on every core
# (-fopenmp: the `parallel for` pragmas the lowering puts on them).
VECTOR_MATH_FLAGS = [
    "-fopenmp-simd",
    "-fno-builtin-sin",
    "-fno-builtin-cos",
    "-fno-builtin-sinf",
    "-fno-builtin-cosf",
]
TRACER_VERSION = "0.1.0"
CDEF = "int tracer_run(char **args);"


class CompilerUnavailable(RuntimeError):
    """No working C compiler: tt.function(backend='auto') falls back to the interpreter."""


class CompileError(RuntimeError):
    """The compiler rejected generated code: a bug in tracer, reported with the compiler's words."""


def compiler():
    return os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or "cc"


@functools.lru_cache(maxsize=4)
def toolchain(cc):
    """What this compiler is and can do: {"identity": version banner, "vector_math": bool,
    "threads": bool (OpenMP)}.

    Asking costs two compiler runs, so the answer is kept in the cache directory, keyed by
    the compiler binary's path, size and modification time: a warm process runs no
    compiler at all.
    """
    path = shutil.which(cc) or cc
    try:
        info = os.stat(path)
    except OSError:
        raise CompilerUnavailable(f"no C compiler found at {cc!r}") from None
    stamp = f"{os.path.realpath(path)}:{info.st_size}:{info.st_mtime_ns}"
    record_path = os.path.join(cache.cache_root(), "toolchains.json")
    try:
        with open(record_path) as handle:
            records = json.load(handle)
    except (OSError, ValueError):
        records = {}
    if set(records.get(stamp, ())) != {"identity", "vector_math", "threads"}:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(3) as pool:  # three compiler runs at once: 50 ms off a cold start
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
        staging = f"{record_path}.{os.getpid()}"
        with open(staging, "w") as handle:
            json.dump(records, handle, indent=1, sort_keys=True)
        os.replace(staging, record_path)
    return records[stamp]


def compiler_identity(cc):
    return toolchain(cc)["identity"]


def vector_math():
    return toolchain(compiler())["vector_math"]


def threads():
    return toolchain(compiler())["threads"]


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
        return subprocess.run(command, capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@functools.lru_cache(maxsize=1)
def blas():
    """(include dir, lib dir, library name) of scipy-openblas32, or None if it is not installed."""
    try:
        import scipy_openblas32
    except ImportError:
        return None
    return (
        scipy_openblas32.get_include_dir(),
        scipy_openblas32.get_lib_dir(),
        scipy_openblas32.get_library(),
    )


def _flags():
    flags = FLAGS + (VECTOR_MATH_FLAGS if vector_math() else [])
    return flags + ["-fopenmp"] if threads() else flags


def _cpu():
    try:
        with open("/proc/cpuinfo") as handle:
            flags = next((line for line in handle if line.startswith("flags")), "")
    except OSError:
        flags = ""
    return platform.machine() + hashlib.sha256(flags.encode()).hexdigest()[:12]


def cache_key(source, uses_blas):
    cc = compiler()
    parts = [
        source,
        compiler_identity(cc),
        " ".join(_flags()),
        TRACER_VERSION,
        sys.implementation.cache_tag,
        sysconfig.get_config_var("EXT_SUFFIX") or "",
        _cpu(),
        repr(blas() if uses_blas else None),
    ]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


_loaded = {}  # key -> (module, meta): the in-process cache in front of the disk


def load(source, uses_blas):
    """The compiled module for `source` (building it unless cached) and its metadata."""
    key = cache_key(source, uses_blas)
    if key in _loaded:
        return _loaded[key]
    found = cache.lookup(key)
    if found is not None:
        meta = dict(found[1], cached=True)
        module = _import(found[0], meta["name"])
    else:
        path, meta = cache.publish(key, functools.partial(_build, source, key, uses_blas))
        meta = dict(meta, cached=False)
        module = _import(path, meta["name"])
    _loaded[key] = (module, meta)
    return module, meta


def _build(source, key, uses_blas, directory):
    name = f"_tracer_{key[:20]}"
    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    ffi.set_source(name, source)
    c_path = os.path.join(directory, "module.c")
    with contextlib.redirect_stdout(io.StringIO()):  # cffi announces "generating ..."
        ffi.emit_c_code(c_path)
    library = name + (sysconfig.get_config_var("EXT_SUFFIX") or ".so")
    includes = [f"-I{sysconfig.get_paths()['include']}"]
    libraries = ["-lmvec", "-lm"] if vector_math() else ["-lm"]
    if uses_blas:
        include, lib, lib_name = blas()
        includes.append(f"-I{include}")
        libraries += [f"-L{lib}", f"-l{lib_name}", f"-Wl,-rpath,{lib}"]
    command = [
        compiler(),
        *_flags(),
        *includes,
        c_path,
        "-o",
        os.path.join(directory, library),
        *libraries,
    ]
    start = time.perf_counter()
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    except OSError as error:
        raise CompilerUnavailable(
            f"the C compiler {command[0]!r} could not be run: {error}"
        ) from None
    if result.returncode != 0:
        raise CompileError(
            f"C compilation failed ({' '.join(command[:3])} ...):\n{result.stderr[-4000:]}"
        )
    return library, {"name": name, "compile_seconds": round(time.perf_counter() - start, 4)}


def _import(path, name):
    # NOTE: OpenMP's threads spin after each parallel loop by default, and then compete
    # with OpenBLAS's threads in the matmul that follows (a batch_jacobian ran 2x slower).
    # libgomp reads this when the first module loads it; a user's own setting wins.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    loader = importlib.machinery.ExtensionFileLoader(name, path)
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module
