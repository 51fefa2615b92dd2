"""`python -m tracer`: doctor, ir and cache.

python -m tracer doctor                       what tracer can use here, and which backend "auto" picks
python -m tracer ir model.py:loss --args "f32[128,784], i32[128]" [--stage optimized|traced|...|c]
python -m tracer export model.py:step --args "f32[?,3], f64[]" --out DIR [--prefix NAME]
                 [--vjp] [--jacobian] [--hessian] [--variables frozen|arguments] [--native]
python -m tracer cache info | clear
"""

import argparse
import importlib.util
import os
import platform
import re
import shutil
import sys
import time

import numpy as np

from tracer.concrete import IR_STAGES

_SPEC = re.compile(r"\s*(f16|f32|f64|i32|i64|bool|c64|c128)\[([\d,\s?]*)\]\s*")
_DTYPES = {
    "f16": "float16",
    "f32": "float32",
    "f64": "float64",
    "i32": "int32",
    "i64": "int64",
    "bool": "bool",
    "c64": "complex64",
    "c128": "complex128",
}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tracer", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser(
        "doctor", help="check the C compiler, BLAS and cache; say which backend 'auto' uses"
    )
    ir = commands.add_parser("ir", help="print a function's IR at a stage, or its C")
    ir.add_argument("target", help="SCRIPT.py:FUNCTION")
    ir.add_argument("--args", required=True, help='argument specs, e.g. "f32[3,4], f32[4]"')
    ir.add_argument("--stage", default=IR_STAGES[-1], choices=(*IR_STAGES, "c"))
    export = commands.add_parser(
        "export", help="write a function (and derivatives) as standalone C: .h, .c, Makefile"
    )
    export.add_argument("target", help="SCRIPT.py:FUNCTION")
    export.add_argument(
        "--args", required=True, help='argument specs, ? for a size given at run time: "f32[?,3]"'
    )
    export.add_argument("--out", required=True, help="the directory to write to")
    export.add_argument("--prefix", help="the C name of the function (default: its own)")
    for kind in ("vjp", "jacobian", "hessian"):
        export.add_argument(f"--{kind}", action="store_true", help=f"also export the {kind}")
    export.add_argument("--variables", choices=("frozen", "arguments"))
    export.add_argument("--native", action="store_true", help="-march=native in the Makefile")
    cache = commands.add_parser("cache", help="the on-disk cache of compiled modules")
    cache.add_argument("action", choices=("info", "clear"))
    options = parser.parse_args(argv)
    commands = {"doctor": doctor, "ir": print_ir, "export": export_command, "cache": cache_command}
    return commands[options.command](options)


def doctor(options):
    import tracer as tt
    from codegen import build, cache

    print(
        f"tracer {tt.__version__} on Python {platform.python_version()} ({platform.machine()}), numpy {np.__version__}"
    )
    compiler = build.compiler()
    try:
        toolchain = build.toolchain(compiler)
    except build.CompilerUnavailable as error:
        print(f"C compiler: none that works ({error})")
        print(
            "backend='auto' will use: the numpy interpreter (every result is the same, only slower); "
            "install a C compiler (gcc or clang) or set CC to compile"
        )
        _print_cache(cache)
        return 0
    print(f"C compiler: {shutil.which(compiler) or compiler} ({toolchain['identity']})")
    print(
        f"vector math (glibc libmvec): {'yes' if toolchain['vector_math'] else 'no (transcendental loops stay scalar)'}"
    )
    blas = build.blas()
    print(
        f"BLAS: {'scipy-openblas32 in ' + blas[1] if blas else 'none (matmul compiles to C loops)'}"
    )
    ok = _test_kernel()
    _print_cache(cache)
    print(
        f"backend='auto' will use: {'C (the test kernel compiled and ran correctly)' if ok else 'the numpy interpreter'}"
    )
    return 0 if ok else 1


def _test_kernel():
    import tracer as tt

    start = time.perf_counter()
    try:
        f = tt.function(lambda x, w: tt.reduce_sum(tt.tanh(x @ w) * 2.0 + 1.0, axis=1), backend="c")
        x = np.linspace(-1, 1, 12).reshape(3, 4)
        w = np.linspace(0, 2, 8).reshape(4, 2)
        got = f(tt.constant(x), tt.constant(w)).numpy()
    except Exception as error:  # doctor reports any failure instead of stopping at it
        print(f"test kernel: failed: {type(error).__name__}: {error}")
        return False
    correct = np.allclose(got, np.sum(np.tanh(x @ w) * 2 + 1, axis=1), rtol=1e-12)
    print(
        f"test kernel: compiled and ran in {time.perf_counter() - start:.2f} s, "
        f"{'results match numpy' if correct else 'RESULTS DIFFER FROM NUMPY'}"
    )
    return correct


def _print_cache(cache):
    from codegen import plans

    entries, stored = cache.entries(), plans.entries()
    size = sum(size for _, size in entries) + sum(os.path.getsize(p) for p in stored)
    dead = len(cache.dead_builds())
    print(
        f"cache: {cache.cache_root()} ({len(entries)} modules and {len(stored)} stored plans, "
        f"{size / 1e6:.1f} MB; {dead} unfinished builds of processes that ended)"
    )


def print_ir(options):
    import tracer as tt

    function = _load(options.target, "ir")
    if not isinstance(function, tt.Function):
        function = tt.function(function, backend="c" if options.stage == "c" else "auto")
    concrete = function.get_concrete_function(*parse_args(options.args))
    print(concrete.c_source() if options.stage == "c" else concrete.ir(options.stage))
    return 0


def export_command(options):
    import tracer as tt

    function = _load(options.target, "export")
    derivatives = [kind for kind in ("vjp", "jacobian", "hessian") if getattr(options, kind)]
    try:
        paths = tt.export_c(
            function,
            parse_args(options.args),
            options.out,
            prefix=options.prefix,
            derivatives=derivatives,
            variables=options.variables,
            native=options.native,
        )
    except tt.ExportError as error:
        raise SystemExit(f"export: {error}") from None
    print("\n".join(f"wrote {path}" for path in paths))
    return 0


def _load(target, command):
    """The function `target` (SCRIPT.py:FUNCTION) names, its script run as a module."""
    path, _, name = target.rpartition(":")
    if not path or not name:
        raise SystemExit(f"{command}: give the function as SCRIPT.py:FUNCTION")
    spec = importlib.util.spec_from_file_location("tracer_cli_target", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec.loader.exec_module(module)
    if not hasattr(module, name):
        raise SystemExit(f"{command}: {path} has no function {name!r}")
    return getattr(module, name)


def parse_args(text):
    """TensorSpecs for specs like "f32[3,4], i32[], f64[?,3]" (? for a size known only at
    run time)."""
    import tracer as tt

    specs = []
    for part in re.findall(r"[a-z0-9]+\[[^\]]*\]", text):
        match = _SPEC.fullmatch(part)
        if match is None:
            raise SystemExit(f"cannot read the argument spec {part!r} (write e.g. f32[3,4])")
        sizes = [d for d in match.group(2).replace(" ", "").split(",") if d]
        shape = [None if d == "?" else int(d) for d in sizes]
        specs.append(tt.TensorSpec(shape, getattr(tt, _DTYPES[match.group(1)])))
    if not specs:
        raise SystemExit(f'no argument specs in {text!r} (write e.g. "f32[3,4], f32[4]")')
    return specs


def cache_command(options):
    from codegen import cache, plans

    if options.action == "clear":
        entries, dead = cache.entries(), cache.dead_builds()
        for key, _ in entries:
            shutil.rmtree(os.path.join(cache.cache_root(), key), ignore_errors=True)
        stored = plans.clear()
        cache.remove_dead_builds()
        print(
            f"removed {len(entries)} modules, {stored} stored plans and {len(dead)} "
            f"unfinished builds from {cache.cache_root()}"
        )
    else:
        _print_cache(cache)
    return 0
