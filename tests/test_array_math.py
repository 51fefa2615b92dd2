"""codegen/array_math.py: C's erf over whole arrays, the eager kernel's way for arrays of 64
elements and more, against math.erf element by element (glibc's vector erf is within 4 ulp),
special values, shapes and strides included; and erf's eager gradient at that size against
its analytic value; the eager sin, cos, exp, log and tanh of large arrays, a compiled
module's bits within a few ulp of numpy's; the same loops installed built with tracer
(runtime/array_math.c) give a built module's bits and need no compiler."""

import importlib.util
import math
import os
import subprocess
import sys
import types

import numpy as np
import pytest

import tracer as tt
from codegen import array_math, build
from runtime import native
from runtime.kernels import LARGE_FLOATING_FROM
from tracer.ops.math_ops import ERF_OVER_ARRAYS_FROM, _erf_kernel

rng = np.random.default_rng(20261130)
SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-300, -1e-30, 6.0, -6.5, 27.0]


def _reference(x):
    return np.array([math.erf(v) for v in x.astype(np.float64).ravel()]).reshape(x.shape)


@pytest.mark.parametrize("dtype, rtol", [(np.float64, 1e-15), (np.float32, 1e-6)])
def test_erf_over_an_array_is_maths_erf_within_a_few_ulp(dtype, rtol):
    x = np.concatenate([rng.standard_normal(3000) * 3, SPECIAL]).astype(dtype)
    result = array_math.apply("erf", x)
    assert result is not None and result.dtype == dtype and result.shape == x.shape
    expected = _reference(x)
    np.testing.assert_allclose(result, expected, rtol=rtol, atol=np.finfo(dtype).tiny)
    assert np.signbit(result[x == 0]).tolist() == np.signbit(x[x == 0]).tolist()


def test_the_kernel_takes_any_layout_and_float16():
    x = rng.standard_normal((40, 30))[:, ::3].T  # 10 x 40, not contiguous
    assert x.size >= ERF_OVER_ARRAYS_FROM
    np.testing.assert_allclose(_erf_kernel(x), _reference(x), rtol=1e-15)
    half = x.astype(np.float16)
    result = _erf_kernel(half)
    assert result.dtype == np.float16
    np.testing.assert_array_equal(result, _reference(half).astype(np.float16))


def test_other_functions_and_types_are_refused_by_name():
    with pytest.raises(ValueError, match="erf"):
        array_math.apply("lgamma", np.zeros(3))
    with pytest.raises(ValueError, match="float32 or float64"):
        array_math.apply("erf", np.zeros(3, np.int32))
    with pytest.raises(ValueError, match="not cross_entropy"):  # its labels: cross_entropy()
        array_math.apply("cross_entropy", np.zeros((2, 3)), np.zeros((2, 3)))


def test_erfs_eager_gradient_over_a_large_array_is_its_analytic_value():
    x = tt.constant(rng.standard_normal(4096))
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = tt.reduce_sum(tt.math.erf(x))
    expected = 2 / np.sqrt(np.pi) * np.exp(-(x.numpy() ** 2))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), expected, rtol=1e-14)
    np.testing.assert_allclose(y.numpy(), _reference(x.numpy()).sum(), rtol=1e-13)


TRANSCENDENTAL = ("sin", "cos", "exp", "log", "tanh")
# exp's overflow and subnormal results, tanh's saturation, log's domain
SPECIAL_TRANSCENDENTAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e30, 88.5, 710.0]
SPECIAL_TRANSCENDENTAL += [-100.0, -750.0, -1.0, 1e-300]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", TRANSCENDENTAL)
def test_eager_transcendental_ops_of_large_arrays_give_a_compiled_modules_bits(name, dtype):
    """From LARGE_FLOATING_FROM elements the eager op runs the installed vector loop: the
    bits of the op compiled alone, within 4 ulp of numpy's (glibc's vector maths), the
    special values and signed zeros as numpy has them; below, numpy's own bits."""
    size = LARGE_FLOATING_FROM + 37  # a tail of no whole vector
    x = (rng.standard_normal(size) * 30).astype(dtype)
    with np.errstate(all="ignore"):
        x[: len(SPECIAL_TRANSCENDENTAL)] = SPECIAL_TRANSCENDENTAL
        expected = getattr(np, name)(x)
    op = getattr(tt.math, name)
    eager = op(tt.constant(x)).numpy()
    compiled = tt.function(op)(tt.constant(x)).numpy()
    assert eager.dtype == dtype and eager.tobytes() == compiled.tobytes()
    np.testing.assert_array_equal(np.isnan(eager), np.isnan(expected))
    infinite = np.isinf(expected)
    np.testing.assert_array_equal(eager[infinite], expected[infinite])
    finite = np.isfinite(expected)
    tolerance = 4 * np.finfo(dtype).eps
    np.testing.assert_allclose(
        eager[finite], expected[finite], rtol=tolerance, atol=np.finfo(dtype).tiny
    )
    assert np.signbit(eager[x == 0]).tolist() == np.signbit(expected[x == 0]).tolist()
    small = op(tt.constant(x[:1000])).numpy()
    with np.errstate(all="ignore"):
        assert small.tobytes() == getattr(np, name)(x[:1000]).tobytes()


def test_the_eager_gradient_of_large_transcendental_terms_is_the_analytic_one():
    """B3's function and a logarithm over 2^17 float64 elements: the eager gradient,
    through the installed loops forward and backward, against the derivative written out."""
    x = rng.standard_normal(1 << 17)
    t = tt.constant(x)
    with tt.GradientTape() as tape:
        tape.watch(t)
        terms = tt.sin(t) * tt.exp(-t * t) + tt.tanh(t) * t + tt.math.log(1 + t * t)
        y = tt.reduce_sum(terms)
    expected = (
        np.cos(x) * np.exp(-x * x)
        - 2 * x * np.sin(x) * np.exp(-x * x)
        + (1 - np.tanh(x) ** 2) * x
        + np.tanh(x)
        + 2 * x / (1 + x * x)
    )
    np.testing.assert_allclose(tape.gradient(y, t).numpy(), expected, rtol=1e-13, atol=1e-15)


# ---- the loops installed with tracer (runtime/array_math.c) --------------------------------

INSTALLED = importlib.util.find_spec("runtime._array_math") is not None


def test_the_installed_loops_header_is_what_this_file_writes():
    with open(array_math.LOOPS_HEADER) as handle:
        assert handle.read() == array_math.loops_header(), "run python -m codegen.array_math"


def test_the_extension_is_built_with_the_flags_of_the_modules_it_stands_for():
    extension = native.EXTENSIONS["array_math"]
    not_code = ("-W", "-shared", "-fPIC", "-pipe", "-fno-use-linker-plugin")
    modules = [*build.FLAGS, *build.VECTOR_MATH_FLAGS, "-fopenmp"]
    assert {f for f in modules if not f.startswith(not_code)} <= set(extension.flags)
    assert "mvec" in extension.libraries


def test_an_extension_built_from_other_loops_is_refused_with_the_cure():
    stale = types.SimpleNamespace(LOOPS_KEY="0" * 16)
    assert "python -m codegen.array_math" in array_math._same_loops(stale)
    current = array_math.loops_key(array_math.loops_header_body())
    assert array_math._same_loops(types.SimpleNamespace(LOOPS_KEY=current)) == ""


@pytest.mark.skipif(not INSTALLED, reason="the extension was not built here")
@pytest.mark.parametrize("type_name", ["float32", "float64"])
def test_the_installed_loops_give_the_bits_of_a_module_built_from_them(type_name, monkeypatch):
    installed = array_math._installed_entry(type_name)
    assert installed is not None, "built from other loops or for another CPU: pip install -e ."
    built = array_math._built_entry(type_name)
    if built is None:
        pytest.skip("no module can be built here")
    shapes = [(5,), (3, 100), (64, 64), (2, 1), (8, 4, 64, 64), (300, 700), (1027,)]
    for name, arity in {**array_math.ELEMENTWISE, **array_math.ROWS}.items():
        for shape in shapes:  # tails of rows and of blocks, and loops on the threads
            arrays = [(rng.standard_normal(shape) * 4).astype(type_name) for _ in range(arity)]
            flat = arrays[0].reshape(-1)
            flat[: len(SPECIAL)] = np.array(SPECIAL, type_name)[: flat.size]
            results = []
            for run in (installed, built):
                monkeypatch.setitem(array_math._entries, type_name, run)
                results.append(array_math.apply(name, *arrays).tobytes())
            assert results[0] == results[1], (name, shape)
    for shape in [(5,), (3, 100), (64, 10), (2, 1), (1000, 200)]:  # the labeled rows
        logits = (rng.standard_normal(shape) * 4).astype(type_name)
        logits.reshape(-1)[: len(SPECIAL)] = np.array(SPECIAL, type_name)[: logits.size]
        labels = rng.integers(0, shape[-1], shape[:-1])
        for backprop in (False, True):
            results = []
            for run in (installed, built):
                monkeypatch.setitem(array_math._entries, type_name, run)
                results.append(array_math.cross_entropy(labels, logits, backprop).tobytes())
            assert results[0] == results[1], ("cross_entropy", shape, backprop)


@pytest.mark.skipif(not INSTALLED, reason="the extension was not built here")
def test_eager_gelu_and_softmax_need_no_compiler_where_the_loops_are_installed(tmp_path):
    program = (
        "import numpy as np, tracer as tt\n"
        "from codegen import array_math\n"
        "x = np.linspace(-5.0, 5.0, 64 * 256, dtype=np.float32).reshape(64, 256)\n"
        "g, s = tt.nn.gelu(tt.constant(x)).numpy(), tt.nn.softmax(tt.constant(x)).numpy()\n"
        "assert array_math._entry('float32') is not None\n"
        "np.save('gelu.npy', g); np.save('softmax.npy', s)\n"
    )
    environment = dict(os.environ, CC=str(tmp_path / "no-such-cc"), TRACER_CACHE_DIR=str(tmp_path))
    completed = subprocess.run(
        [sys.executable, "-c", program],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    x = np.linspace(-5.0, 5.0, 64 * 256).reshape(64, 256)
    gelu = 0.5 * x * (1 + _reference(x / np.sqrt(2)))
    softmax = np.exp(x - x.max(-1, keepdims=True))
    softmax /= softmax.sum(-1, keepdims=True)
    # float32's 1 + erf(x / sqrt(2)) near x = -5 keeps an ulp of 1: x / 2 * 1.2e-7 apart
    np.testing.assert_allclose(np.load(tmp_path / "gelu.npy"), gelu, rtol=2e-6, atol=4e-7)
    np.testing.assert_allclose(np.load(tmp_path / "softmax.npy"), softmax, rtol=2e-6, atol=1e-12)
    assert not list(tmp_path.rglob("*.so"))  # nothing was built


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "activation, gate",
    [
        (tt.tanh, lambda y, g: g * (1 - y * y)),
        (tt.sigmoid, lambda y, g: g * (y * (1 - y))),
    ],
)
def test_large_eager_tanh_and_sigmoid_gradients_are_one_loop_with_numpys_bits(
    activation, gate, dtype, monkeypatch
):
    """From ARITHMETIC_ON_THREADS_FROM elements the eager gradients of tanh and the sigmoid
    are array_math's loop of their C form (one pass on the threads, not numpy's three): the
    same operations in the same order, so numpy's bits, NaN, infinities and signed zeros
    among the cotangents included."""
    size = 1 << 17
    calls, loop = [], array_math.apply
    monkeypatch.setattr(array_math, "apply", lambda *a: calls.append(a[0]) or loop(*a))
    x = tt.constant((rng.standard_normal(size) * 4).astype(dtype))
    g = (rng.standard_normal(size)).astype(dtype)
    g[:5] = [np.nan, np.inf, -np.inf, -0.0, 0.0]
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = activation(x)
    got = tape.gradient(y, x, output_gradients=tt.constant(g)).numpy()
    assert calls.count(f"{activation.__name__}_grad") == 1  # (tanh itself is one too)
    with np.errstate(all="ignore"):
        want = gate(y.numpy(), g)
    assert got.dtype == dtype
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    numbers = ~np.isnan(want)
    assert got[numbers].tobytes() == want[numbers].tobytes()
