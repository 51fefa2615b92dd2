"""`python -m tracer`: doctor, ir, export, report and cache.

python -m tracer doctor                       what tracer can use here, and which backend "auto" picks
python -m tracer ir model.py:loss --args "f32[128,784], i32[128]" [--stage optimized|traced|...|c]
python -m tracer export model.py:step --args "f32[?,3], f64[]" --out DIR [--prefix NAME]
                 [--vjp] [--jacobian] [--hessian] [--variables frozen|arguments] [--native]
python -m tracer export model.keras --out DIR [--derivatives vjp,jacobian] [--args ...]
                 (a Keras model's forward pass, inputs as the file gives them unless --args)
python -m tracer report model.py:step --args "f32[3,4], f32[4]" --out report.html [--profile N]
                 (the one-page compile report; --profile N times N calls on random arguments)
python -m tracer cache info | clear
"""

import argparse
import importlib.util
import inspect
import os
import platform
import re
import shutil
import sys
import time
import traceback

import numpy as np

from tracer.concrete import IR_STAGES

_SPEC = re.compile(r"\s*(\w+)\[([^\[\]]*)\]\s*")
_SIZE = re.compile(r"\s*([0-9]+|\?)\s*", re.ASCII)  # ASCII digits: int() reads others too
_LARGEST_SIZE = 2**63 - 1  # an int64_t, as the exported C takes sizes
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


class _Parser(argparse.ArgumentParser):
    """argparse's parser, whose every error is one line, `PROG: error: MESSAGE`, exit
    status 2 (`--help` shows the usage)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {' '.join(str(message).split())}\n")


def main(argv=None):
    parser = _Parser(prog="python -m tracer", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser(
        "doctor", help="check the C compiler, BLAS and cache; say which backend 'auto' uses"
    )
    ir = commands.add_parser("ir", help="print a function's IR at a stage, or its C")
    ir.add_argument("target", help="SCRIPT.py:FUNCTION")
    ir.add_argument(
        "--args", required=True, type=parse_specs, help='argument specs, e.g. "f32[3,4], f32[4]"'
    )
    ir.add_argument("--stage", default=IR_STAGES[-1], choices=(*IR_STAGES, "c"))
    ir.set_defaults(error=ir.error)
    export = commands.add_parser(
        "export", help="write a function (and derivatives) as standalone C: .h, .c, Makefile"
    )
    export.set_defaults(error=export.error)
    export.add_argument("target", help="SCRIPT.py:FUNCTION, or MODEL.keras")
    export.add_argument(
        "--args",
        type=parse_specs,
        help='argument specs, ? for a size given at run time: "f32[?,3], f64[]" (a .keras '
        "model's default: its inputs, the batch size given at run time)",
    )
    export.add_argument("--out", required=True, help="the directory to write to")
    export.add_argument("--prefix", help="the C name of the function (default: its own)")
    for kind in ("vjp", "jacobian", "hessian"):
        export.add_argument(f"--{kind}", action="store_true", help=f"also export the {kind}")
    export.add_argument(
        "--derivatives",
        type=_derivative_kinds,
        default=(),
        help="the derivatives to export too, by name: vjp,jacobian,hessian",
    )
    export.add_argument("--variables", choices=("frozen", "arguments"))
    export.add_argument("--native", action="store_true", help="-march=native in the Makefile")
    report = commands.add_parser(
        "report", help="write a function's one-page compile report: one self-contained HTML file"
    )
    report.set_defaults(error=report.error)
    report.add_argument("target", help="SCRIPT.py:FUNCTION")
    report.add_argument(
        "--args", required=True, type=parse_specs, help='argument specs, e.g. "f32[3,4], f32[4]"'
    )
    report.add_argument("--out", required=True, help="the HTML file to write")
    report.add_argument(
        "--profile",
        type=int,
        metavar="N",
        help="run the function N times on random arguments under the profiler, and show the times",
    )
    cache = commands.add_parser("cache", help="the on-disk cache of compiled modules")
    cache.add_argument("action", choices=("info", "clear"))
    options = parser.parse_args(argv)
    commands = {
        "doctor": doctor,
        "ir": print_ir,
        "export": export_command,
        "report": report_command,
        "cache": cache_command,
    }
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

    function = _load(options)
    if not isinstance(function, tt.Function):
        function = tt.function(function, backend="c" if options.stage == "c" else "auto")
    try:
        concrete = function.get_concrete_function(*options.args)
        text = concrete.c_source() if options.stage == "c" else concrete.ir(options.stage)
    except Exception as error:  # the user's function: one line, as every error here
        options.error(f"tracing {options.target} raised {_one_line(error)}")
    print(text)
    return 0


def report_command(options):
    import tracer as tt
    from tracer.report import write_report

    function = _load(options)
    if not isinstance(function, tt.Function):
        function = tt.function(function)
    if options.profile is not None and options.profile < 1:
        options.error(f"argument --profile: run the function at least once, not {options.profile}")
    try:
        function.get_concrete_function(*options.args)
        profile = _profiled(function, options) if options.profile else None
    except Exception as error:  # the user's function: one line, as every error here
        options.error(f"tracing {options.target} raised {_one_line(error)}")
    try:
        write_report(function, options.out, profile=profile, args=options.args)
    except OSError as error:
        options.error(f"argument --out: cannot write {options.out!r}: {error.strerror or error}")
    print(f"wrote {options.out}")
    return 0


def _profiled(function, options):
    """The profile of `options.profile` calls of `function` on random arguments of the
    specs' shapes (tracer.profiler)."""
    if importlib.util.find_spec("tracer.profiler") is None:
        options.error("argument --profile: this tracer has no profiler (tracer.profiler)")
    from tracer import profiler

    if any(size is None for spec in options.args for size in spec.shape):
        options.error("argument --profile: give every size (no ?) to run the function")
    generator = np.random.default_rng(0)
    arguments = [_random(spec, generator) for spec in options.args]
    with profiler.profile() as profile:
        for _ in range(options.profile):
            function(*arguments)
    return profile


def _random(spec, generator):
    """An array of `spec`'s shape and dtype: normal values, small integers, or coin flips."""
    dtype = np.dtype(spec.dtype.as_numpy_dtype)
    shape = tuple(spec.shape)
    if dtype.kind == "b":
        return generator.random(shape) < 0.5
    if dtype.kind in "iu":
        return generator.integers(0, 10, shape).astype(dtype)
    if dtype.kind == "c":
        return (generator.standard_normal(shape) + 1j * generator.standard_normal(shape)).astype(
            dtype
        )
    return generator.standard_normal(shape).astype(dtype)


def export_command(options):
    import tracer as tt

    if options.target.endswith(".keras"):
        function, options.args = _load_keras_model(options)
        options.variables = options.variables or "frozen"  # the file's weights, in the C
    elif options.args is None:
        options.error("the following arguments are required: --args")
    else:
        function = _load(options)
    derivatives = [
        kind
        for kind in ("vjp", "jacobian", "hessian")
        if getattr(options, kind) or kind in options.derivatives
    ]
    if os.path.exists(options.out) and not os.path.isdir(options.out):
        options.error(f"argument --out: {options.out!r} is a file, not a directory")
    try:
        paths = tt.export_c(
            function,
            options.args,
            options.out,
            prefix=options.prefix,
            derivatives=derivatives,
            variables=options.variables,
            native=options.native,
        )
    except ValueError as error:  # tt.ExportError: what cannot be exported, and why
        options.error(str(error))
    except OSError as error:
        where = error.filename or options.out
        options.error(f"argument --out: cannot write {where!r}: {error.strerror or error}")
    except Exception as error:  # the user's function: one line, as every error here
        options.error(f"tracing {options.target} raised {_one_line(error)}")
    print("\n".join(f"wrote {path}" for path in paths))
    return 0


def _derivative_kinds(text):
    kinds = tuple(k.strip() for k in text.split(",") if k.strip())
    unknown = [k for k in kinds if k not in ("vjp", "jacobian", "hessian")]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown derivatives {unknown}; choose from vjp, jacobian, hessian"
        )
    return kinds


def _load_keras_model(options):
    """(the forward pass of the model a .keras file holds, its argument specs): the
    model's inputs with the batch size given at run time, unless --args says otherwise."""
    from tracer.keras.models import load_model

    if not os.path.isfile(options.target):
        options.error(f"argument target: no file {options.target!r}")
    try:
        model = load_model(options.target, compile=False)
    except (ValueError, OSError, ImportError) as error:  # what the file holds that cannot load
        options.error(f"argument target: {options.target}: {_one_line(error)}")
    specs = options.args if options.args is not None else _keras_input_specs(model, options)

    def forward(*inputs):
        return model(inputs[0] if len(inputs) == 1 else list(inputs), training=False)

    stem = re.sub(r"\W", "_", os.path.basename(options.target)[: -len(".keras")])
    forward.__name__ = stem if stem[:1].isalpha() else f"model_{stem}"
    return forward, specs


def _keras_input_specs(model, options):
    """TensorSpecs of a loaded model's inputs, the batch axis unknown."""
    from tracer.signature import TensorSpec

    inputs = getattr(model, "inputs", None)
    if inputs:  # a functional model's Inputs
        return [TensorSpec([None, *t.shape[1:]], t.dtype) for t in inputs]
    shape = getattr(model, "_input_shape", None)
    if shape is None or any(d is None for d in shape[1:]):
        options.error(
            f"argument --args: {options.target} does not give its input shape; "
            'say it, e.g. --args "f32[?,4]"'
        )
    first = model.layers[0] if getattr(model, "layers", None) else None
    dtype = "int32" if type(first).__name__ == "Embedding" else "float32"  # indices
    return [TensorSpec([None, *shape[1:]], dtype)]


def _load(options):
    """The function `options.target` (SCRIPT.py:FUNCTION) names, its script run as a
    module, and checked to take as many arguments as `options.args` gives."""
    path, _, name = options.target.rpartition(":")
    if not path or not name:
        options.error(f"argument target: write SCRIPT.py:FUNCTION, not {options.target!r}")
    if not os.path.isfile(path):
        options.error(f"argument target: no script {path!r}")
    spec = importlib.util.spec_from_file_location("tracer_cli_target", path)
    if spec is None:
        options.error(f"argument target: {path!r} is not a Python script (SCRIPT.py)")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        spec.loader.exec_module(module)
    except Exception as error:  # the script's own: its line, in one line
        options.error(f"argument target: running {path} raised {_one_line(error, path)}")
    function = getattr(module, name, None)
    if not callable(function):
        what = "no function" if function is None else "no function, but a value, named"
        options.error(f"argument target: {path} has {what} {name!r}")
    python = getattr(function, "python_function", function)
    try:
        signature = inspect.signature(python)
    except (TypeError, ValueError):  # a callable with no signature to check
        return function
    try:
        signature.bind(*options.args)
    except TypeError as error:
        count = len(options.args)
        options.error(
            f"argument --args: {count} spec{'s' if count != 1 else ''} for {name}{signature}: "
            f"{error}"
        )
    return function


def _one_line(error, path=None):
    """`error` as `Type: message (FILE:LINE)`, the line its traceback last has in `path`."""
    where = ""
    if path is not None and not isinstance(error, SyntaxError):  # (its message has the line)
        frames = traceback.extract_tb(error.__traceback__)
        lines = [f.lineno for f in frames if os.path.abspath(f.filename) == os.path.abspath(path)]
        where = f" ({os.path.basename(path)}:{lines[-1]})" if lines else ""
    return f"{type(error).__name__}: {error}{where}"


def parse_specs(text):
    """TensorSpecs for a comma-separated list of specs like "f32[3,4], i32[], f64[?,3]":
    a dtype (f16 f32 f64 i32 i64 bool c64 c128) and its sizes in brackets, separated by
    commas, each an integer or ? (a size known only at run time). Anything else raises
    argparse.ArgumentTypeError, naming the spec it cannot read."""
    import tracer as tt

    example = '(write e.g. "f32[3,4], f64[?], i32[]")'
    specs = []
    for part in _split_specs(text):
        match = _SPEC.fullmatch(part)
        if match is None:
            raise argparse.ArgumentTypeError(
                f"cannot read the argument spec {part.strip()!r} {example}"
            )
        dtype, sizes = match.groups()
        if dtype not in _DTYPES:
            raise argparse.ArgumentTypeError(
                f"cannot read the argument spec {part.strip()!r}: its dtype is one of "
                f"{', '.join(_DTYPES)}, not {dtype!r}"
            )
        sizes = sizes.split(",") if sizes.strip() else []
        if not all(_SIZE.fullmatch(size) for size in sizes):
            raise argparse.ArgumentTypeError(
                f"cannot read the argument spec {part.strip()!r}: its sizes are integers or ?, "
                "separated by commas"
            )
        shape = [None if size.strip() == "?" else int(size) for size in sizes]
        if any(size is not None and size > _LARGEST_SIZE for size in shape):
            raise argparse.ArgumentTypeError(
                f"cannot read the argument spec {part.strip()!r}: a size is at most 2**63-1"
            )
        specs.append(tt.TensorSpec(shape, getattr(tt, _DTYPES[dtype])))
    return specs


def _split_specs(text):
    """`text` cut at the commas outside brackets (no part for an empty `text`); an empty
    part or an unbalanced bracket raises argparse.ArgumentTypeError."""
    if not text.strip():
        return []  # (a function of no arguments)
    parts, depth, start = [], 0, 0
    for k, char in enumerate(text):
        depth += {"[": 1, "]": -1}.get(char, 0)
        if depth not in (0, 1):
            raise argparse.ArgumentTypeError(f"unbalanced brackets in the argument specs {text!r}")
        if char == "," and depth == 0:
            parts.append(text[start:k])
            start = k + 1
    parts.append(text[start:])
    if depth:
        raise argparse.ArgumentTypeError(f"unbalanced brackets in the argument specs {text!r}")
    if any(not part.strip() for part in parts):
        raise argparse.ArgumentTypeError(
            f'an empty argument spec in {text!r} (write e.g. "f32[3,4], f64[?], i32[]")'
        )
    return parts


def cache_command(options):
    from codegen import cache, kernel_index, plans

    if options.action == "clear":
        entries, dead = cache.entries(), cache.dead_builds()
        for key, _ in entries:
            shutil.rmtree(os.path.join(cache.cache_root(), key), ignore_errors=True)
        stored = plans.clear()
        kernel_index.clear()
        cache.remove_dead_builds()
        print(
            f"removed {len(entries)} modules, {stored} stored plans and {len(dead)} "
            f"unfinished builds from {cache.cache_root()}"
        )
    else:
        _print_cache(cache)
    return 0
