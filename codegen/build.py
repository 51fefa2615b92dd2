"""Compiling C source into a loadable cffi (API mode) module, through the cache.

cffi writes the module's C wrapper (`ffi.emit_c_code`) and one direct compiler call builds
it: about 0.15 s for a small module, where `ffi.compile()` spends most of 0.6 s in
setuptools. Built with -O3 for this CPU (-march=native, part of the cache key) and without
-ffast-math, so NaN, Inf and signed zeros behave as in numpy; -fno-math-errno only lets
sqrt compile to one instruction, and -fwrapv gives integers numpy's wrap-around.
"""

import contextlib
import functools
import io
import hashlib
import importlib.machinery
import importlib.util
import os
import platform
import shutil
import subprocess
import sys
import sysconfig
import time

import cffi

from codegen import cache

FLAGS = ["-O3", "-march=native", "-fPIC", "-shared", "-std=gnu11", "-fwrapv", "-fno-math-errno", "-w"]
TRACER_VERSION = "0.1.0"
CDEF = "int tracer_run(char **args);"


class CompilerUnavailable(RuntimeError):
    """No working C compiler: tt.function(backend='auto') falls back to the interpreter."""


class CompileError(RuntimeError):
    """The compiler rejected generated code: a bug in tracer, reported with the compiler's words."""


def compiler():
    return os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or "cc"


@functools.lru_cache(maxsize=4)
def compiler_identity(cc):
    """The compiler's version banner, or CompilerUnavailable."""
    try:
        result = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise CompilerUnavailable(f"no C compiler could be run as {cc!r}: {error}") from None
    if result.returncode != 0:
        raise CompilerUnavailable(f"{cc} --version failed: {result.stderr.strip()[:200]}")
    return result.stdout.splitlines()[0] if result.stdout else cc


@functools.lru_cache(maxsize=1)
def blas():
    """(include dir, lib dir, library name) of scipy-openblas32, or None if it is not installed."""
    try:
        import scipy_openblas32
    except ImportError:
        return None
    return scipy_openblas32.get_include_dir(), scipy_openblas32.get_lib_dir(), scipy_openblas32.get_library()


def _cpu():
    try:
        with open("/proc/cpuinfo") as handle:
            flags = next((line for line in handle if line.startswith("flags")), "")
    except OSError:
        flags = ""
    return platform.machine() + hashlib.sha256(flags.encode()).hexdigest()[:12]


def cache_key(source, uses_blas):
    cc = compiler()
    parts = [source, compiler_identity(cc), " ".join(FLAGS), TRACER_VERSION, sys.implementation.cache_tag,
             sysconfig.get_config_var("EXT_SUFFIX") or "", _cpu(), repr(blas() if uses_blas else None)]
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
    command = [compiler(), *FLAGS, f"-I{sysconfig.get_paths()['include']}", c_path, "-o",
               os.path.join(directory, library), "-lm"]
    if uses_blas:
        include, lib, lib_name = blas()
        command[len(FLAGS) + 1 : len(FLAGS) + 1] = [f"-I{include}"]
        command += [f"-L{lib}", f"-l{lib_name}", f"-Wl,-rpath,{lib}"]
    start = time.perf_counter()
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    except OSError as error:
        raise CompilerUnavailable(f"the C compiler {command[0]!r} could not be run: {error}") from None
    if result.returncode != 0:
        raise CompileError(f"C compilation failed ({' '.join(command[:3])} ...):\n{result.stderr[-4000:]}")
    return library, {"name": name, "compile_seconds": round(time.perf_counter() - start, 4)}


def _import(path, name):
    loader = importlib.machinery.ExtensionFileLoader(name, path)
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module
