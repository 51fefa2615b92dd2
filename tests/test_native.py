"""tracer's four extensions load from one place (runtime/native.py) under one interface
version; a stale or missing one leaves its definition running, with one warning or none;
and each C path gives its definition's bits.

The detailed cross-checks live beside each path: tests/test_fast_apply.py (the eager op
path), tests/test_fast_call.py (the compiled call), tests/test_eager_fast_paths.py (the
straight-line program). Here, one case set runs through the first three, each both ways; the installed convolution
kernels' own cross-check is tests/test_installed_kernels.py.
"""

import ast
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import types
import warnings

import numpy as np
import pytest

import tracer as tt
from runtime import fast_call, native
from runtime import straight_line as straight_line_module
from runtime.straight_line import PythonProgram, straight_line
from tracer.ops import core

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILT = {
    name: importlib.util.find_spec(extension.module) is not None
    for name, extension in native.EXTENSIONS.items()
}
needs_all_built = pytest.mark.skipif(not all(BUILT.values()), reason="extensions not built here")


@pytest.fixture
def fresh_loader(monkeypatch):
    """runtime.native as at the start of a process: nothing loaded yet."""
    monkeypatch.setattr(native, "_loaded", {})
    monkeypatch.delenv("TRACER_SANITIZE", raising=False)


def test_the_table_names_each_extension_and_its_source():
    assert sorted(native.EXTENSIONS) == [
        "array_math",
        "conv_kernels",
        "fast_apply",
        "fast_call",
        "straight_line",
        "thread_pool",
    ]
    for extension in native.EXTENSIONS.values():
        with open(extension.source) as handle:
            source = handle.read()
        short = extension.module.rsplit(".", 1)[-1]
        assert f"PyInit_{short}(void)" in source
        (defined,) = re.findall(r"^#define INTERFACE (\d+)", source, re.M)
        assert int(defined) == native.INTERFACE, extension.source


def test_the_table_reads_alone_with_the_standard_library(tmp_path):
    """setup.py reads runtime/native.py as a file of its own, in a build environment that
    may hold neither numpy nor the package `runtime` (pip's isolated build): a top-level
    import of anything else there breaks `pip install` on a fresh machine."""
    program = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('table', {native.__file__!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        "print(sorted(module.EXTENSIONS))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-I", "-S", "-c", program], cwd=tmp_path, capture_output=True, text=True
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    assert "conv_kernels" in completed.stdout


@needs_all_built
@pytest.mark.skipif(
    bool(os.environ.get("TRACER_SANITIZE")),
    reason="codegen.compile and tracer.backprop put sanitized builds of their own in place",
)
def test_each_extension_loads_and_reports_the_interface_version(recwarn):
    for name in native.EXTENSIONS:
        module = native.load(name)
        assert module is not None and module.INTERFACE == native.INTERFACE, name
    # the users took the modules the loader gave
    assert core.fast_apply is native.load("fast_apply")
    assert fast_call._extension is native.load("fast_call")
    assert straight_line_module.Program is native.load("straight_line").Program
    assert not [w for w in recwarn if "built for another version" in str(w.message)]


@needs_all_built
@pytest.mark.parametrize("name", sorted(native.EXTENSIONS))
def test_an_extension_of_another_interface_is_refused_with_one_warning(
    name, fresh_loader, monkeypatch
):
    monkeypatch.setattr(native, "INTERFACE", native.INTERFACE + 1)
    role = re.escape(native.EXTENSIONS[name].role)
    with pytest.warns(RuntimeWarning, match=f"{role} .*built for another version of tracer"):
        assert native.load(name) is None
    with warnings.catch_warnings():  # once: the answer is kept
        warnings.simplefilter("error")
        assert native.load(name) is None


@pytest.mark.parametrize("name", sorted(native.EXTENSIONS))
def test_a_missing_extension_is_none_without_a_warning(name, fresh_loader, monkeypatch):
    monkeypatch.setitem(sys.modules, native.EXTENSIONS[name].module, None)  # import fails
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert native.load(name) is None


def test_a_check_that_fails_or_raises_refuses_the_module_and_says_why():
    module = types.SimpleNamespace(INTERFACE=native.INTERFACE, __file__="other.so")
    assert native.accept("fast_call", module, lambda m: "") is module
    with pytest.warns(RuntimeWarning, match=r"\(other.so\) .*\(the node differs\)"):
        assert native.accept("fast_call", module, lambda m: "the node differs") is None

    def raising(m):
        raise AttributeError("no attribute 'record'")

    with pytest.warns(RuntimeWarning, match=r"AttributeError: no attribute 'record'\); the Py"):
        assert native.accept("fast_apply", module, raising) is None
    with pytest.warns(RuntimeWarning, match="interface is None, not"):
        assert native.accept("straight_line", types.SimpleNamespace(), None) is None


# without the extensions, or with all of them refused: tracer runs, silently or with a warning
# each
WITHOUT_PROGRAM = """
import sys, warnings
{setup}
import numpy as np
import tracer as tt
from runtime import fast_call, native, straight_line
from tracer.ops import core

x = tt.constant(np.array([0.5, 1.5]))
with tt.GradientTape() as tape:
    tape.watch(x)
    y = tt.reduce_sum(tt.sin(x) * x)
g = tape.gradient(y, x)
f = tt.function(lambda v: v * 2.0 + 1.0)
image = tt.constant(np.linspace(-1.0, 1.0, 2 * 6 * 6 * 3).reshape(2, 6, 6, 3))
kernel = tt.constant(np.linspace(0.5, -0.5, 3 * 3 * 3 * 4).reshape(3, 3, 3, 4))
@tt.function
def cnn(image, kernel):  # compiled with the installed convolution kernels where they load
    with tt.GradientTape() as tape:
        tape.watch(kernel)
        features = tt.nn.relu(tt.nn.conv2d(image, kernel, 1, "SAME"))
        y = tt.reduce_sum(tt.nn.max_pool2d(features, 2, 2, "VALID") ** 2)
    return y, tape.gradient(y, kernel)
y2, g2 = cnn(image, kernel)
z = tt.nn.gelu(tt.constant(np.linspace(-3.0, 3.0, 4096)))  # the installed loops, or a module
print(core.fast_apply, fast_call._extension, straight_line.Program is straight_line.PythonProgram)
print(repr([float(y), g.numpy().tolist(), f(x).numpy().tolist(), float(y2), g2.numpy().tolist(), z.numpy().tolist()]))
"""
HIDDEN = "\n".join(f"sys.modules[{e.module!r}] = None" for e in native.EXTENSIONS.values())


def _run(setup, *options):
    """The program after `setup`, in a new process with a cache of its own (a plan stored by
    another process would skip the lowering, where the convolution kernels are loaded)."""
    program = WITHOUT_PROGRAM.format(setup=setup)
    with tempfile.TemporaryDirectory() as cache:
        return subprocess.run(
            [sys.executable, *options, "-c", program],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=dict(os.environ, PYTHONPATH=ROOT, TRACER_SANITIZE="", TRACER_CACHE_DIR=cache),
            timeout=300,
        )


def test_tracer_imports_and_runs_without_the_extensions():
    completed = _run(HIDDEN, "-W", "error::RuntimeWarning")
    assert completed.returncode == 0, completed.stderr[-3000:]
    first, second = completed.stdout.splitlines()
    assert first == "None None True"  # every path in Python
    y, g, f, _, _, _ = ast.literal_eval(second)
    x = np.array([0.5, 1.5])
    assert float(y) == pytest.approx(np.sum(np.sin(x) * x), rel=1e-15)
    np.testing.assert_allclose(np.array(g, float), np.cos(x) * x + np.sin(x), rtol=1e-15)
    np.testing.assert_array_equal(np.array(f, float), x * 2.0 + 1.0)


@needs_all_built
def test_extensions_of_another_interface_leave_the_same_values_with_a_warning_each():
    stale = "import runtime.native\nruntime.native.INTERFACE += 1"
    completed = _run(stale)
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert completed.stderr.count("built for another version of tracer") == len(native.EXTENSIONS)
    for extension in native.EXTENSIONS.values():
        assert extension.role in completed.stderr
    without = _run(HIDDEN)
    assert completed.stdout.splitlines() == without.stdout.splitlines()
    with_them = _run("")
    assert with_them.stdout.splitlines()[1] == without.stdout.splitlines()[1]  # the same bits


# ---- each C path and its Python definition, on one case set ----------------------------------

RNG = np.random.default_rng(45)
CASES = {
    "float32 arithmetic": (
        lambda a, b: tt.reduce_sum(tt.tanh(a * b - a / (b * b + 1.0)) + a, axis=0),
        [RNG.standard_normal((3, 4)).astype(np.float32), RNG.standard_normal(4).astype(np.float32)],
    ),
    "float64 with attributes": (
        lambda a, b: tt.reduce_max(tt.exp(a) @ tt.transpose(b), axis=1, keepdims=True),
        [RNG.standard_normal((2, 3)), RNG.standard_normal((5, 3))],
    ),
    "int32, wrapping": (
        lambda a, b: a * b + b,
        [np.array([2**30, -7, 3], np.int32), np.array([4, 5, -6], np.int32)],
    ),
    "complex128": (
        lambda a, b: a * tt.math.conj(b) - b,
        [
            RNG.standard_normal(3) + 1j * RNG.standard_normal(3),
            RNG.standard_normal(3) + 1j * RNG.standard_normal(3),
        ],
    ),
}
DIFFERENTIABLE = ["float32 arithmetic", "float64 with attributes", "complex128"]


def _real_sum(value):
    return tt.reduce_sum(tt.math.real(value) if value.dtype.is_complex else value)


def _value_and_gradients(function, arrays):
    inputs = [tt.constant(a) for a in arrays]
    with tt.GradientTape() as tape:
        tape.watch(inputs)
        y = _real_sum(function(*inputs))
    return [y.numpy(), *(g.numpy() for g in tape.gradient(y, inputs))]


def _assert_same_bits(got, want):
    assert len(got) == len(want)
    for a, b in zip(got, want):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes()


@pytest.mark.skipif(core.fast_apply is None, reason="the eager op path in C is not in use")
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_eager_op_path_in_c_gives_the_python_paths_bits(name):
    function, arrays = CASES[name]
    run = _value_and_gradients if name in DIFFERENTIABLE else _values
    run(function, arrays)  # the shape rules remembered: the C path takes the next run
    fast = run(function, arrays)
    was = core.fast_apply.set_enabled(False)
    try:
        slow = run(function, arrays)
    finally:
        core.fast_apply.set_enabled(was)
    _assert_same_bits(fast, slow)


def _values(function, arrays):
    return [function(*map(tt.constant, arrays)).numpy()]


@pytest.mark.skipif(not fast_call.available(), reason="the compiled call path in C is not in use")
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_compiled_call_in_c_gives_the_python_calls_bits(name, monkeypatch):
    function, arrays = CASES[name]
    inputs = [tt.constant(a) for a in arrays]
    compiled = tt.function(function)
    compiled(*inputs)
    fast = compiled(*inputs)
    assert compiled._fast is not None  # the second call took the Entry
    monkeypatch.setattr(fast_call, "_extension", None)
    python = tt.function(function)
    python(*inputs)
    slow = python(*inputs)
    assert python._fast is None
    _assert_same_bits([fast.numpy()], [slow.numpy()])


@pytest.mark.skipif(
    straight_line_module.Program is PythonProgram,
    reason="the straight-line program in C is not in use",
)
@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_the_straight_line_program_in_c_gives_the_python_loops_bits(name, monkeypatch):
    function, arrays = CASES[name]

    def gradients(*inputs):
        with tt.GradientTape() as tape:
            tape.watch(inputs)
            y = _real_sum(function(*inputs))
        return tape.gradient(y, list(inputs))

    traced = tt.function(gradients, backend="interpreter")
    graph = traced.get_concrete_function(*map(tt.constant, arrays)).stages["deduplicated"]
    fast = straight_line(graph)
    monkeypatch.setattr(straight_line_module, "Program", PythonProgram)
    slow = straight_line(graph)
    assert type(fast) is not PythonProgram and type(slow) is PythonProgram
    _assert_same_bits(fast(*arrays), slow(*arrays))


# ---- sanitizer builds ---------------------------------------------------------------------------


def _sanitizer_runtimes():
    cc = shutil.which("cc") or shutil.which("gcc") or "gcc"
    found = [
        subprocess.run([cc, f"-print-file-name={lib}"], capture_output=True, text=True).stdout
        for lib in ("libasan.so", "libubsan.so")
    ]
    return [path.strip() for path in found if os.path.isabs(path.strip())]


@pytest.mark.slow
@pytest.mark.skipif(len(_sanitizer_runtimes()) != 2, reason="no sanitizer runtimes")
def test_build_compiles_extensions_with_the_sanitizers_once(tmp_path, monkeypatch):
    """Two small extensions, for the build's contract (its names, its reuse, its refusal):
    every extension's sanitized build is loaded and checked by the sanitized programs of
    tests/test_reliability.py, which build them all once into the directory processes share
    (conv_kernels.c alone takes the compiler most of a minute under both sanitizers)."""
    monkeypatch.setattr(
        native, "EXTENSIONS", {n: native.EXTENSIONS[n] for n in ("fast_call", "thread_pool")}
    )
    paths = native.build("address,undefined", str(tmp_path))
    assert sorted(paths) == ["fast_call", "thread_pool"]
    for name, path in paths.items():
        assert os.path.dirname(path) == str(tmp_path)
        symbols = subprocess.run(["nm", "-D", path], capture_output=True, text=True).stdout
        assert "__asan" in symbols and "__ubsan" in symbols, name
    built = {path: os.stat(path).st_mtime_ns for path in paths.values()}
    assert native.build("address,undefined", str(tmp_path)) == paths  # found, not built again
    assert {path: os.stat(path).st_mtime_ns for path in paths.values()} == built
    assert sorted(os.listdir(tmp_path)) == sorted(map(os.path.basename, paths.values()))
    with pytest.raises(ValueError, match="give sanitizer names"):
        native.build("address; rm -rf /", str(tmp_path))


def test_an_extension_with_parallel_loops_is_found_by_other_threads_only_with_the_pool(
    monkeypatch,
):
    """Configuring the pool runs Python code, during which another thread may look the
    extension up: it must not find one whose loops do not yet have the pool (a loop that
    started without it and found it at its next share's claim read a team it never joined,
    and crashed)."""
    name = next(n for n, e in native.EXTENSIONS.items() if "-fopenmp" in e.flags)
    if native.load(name) is None or not native.pool_table():
        pytest.skip("no extension with parallel loops, or no pool, was built here")
    published_while_configuring = []
    real_table = native.pool_table

    def table():
        published_while_configuring.append(name in native._loaded)
        return real_table()

    monkeypatch.setattr(native, "_loaded", {})
    monkeypatch.setattr(native, "pool_table", table)
    assert native.load(name) is not None
    assert published_while_configuring == [False]
