"""The numpy interpreter and the generated C agree on every op of the catalogue: values, first
and second derivatives, traced into one compiled function per case. The profiled C target's
module of each is the same C with probes around each step (tests/profiled_c.py).

float64 results agree to 1e-10 and float32 results to 1e-5, relative, and both match eager mode.
"""

import re

import numpy as np
import pytest

import tracer as tt
from tests.profiled_c import assert_profiled_c_is_c_with_probes
from tests.test_gradients import ALL_CASES

rng = np.random.default_rng(11)


def derivatives(function, count):
    """A function returning f(xs), d<f, w>/dxs and d<d<f, w>/dxs, v>/dxs, with w, v fixed,
    the derivatives dense."""

    def run(*xs):
        with tt.GradientTape(persistent=True) as outer:
            outer.watch(list(xs))
            with tt.GradientTape() as inner:
                inner.watch(list(xs))
                value = function(*xs)
                weight = tt.cast(tt.constant(_fixed(value.shape, 1)), value.dtype)
                loss = (
                    tt.reduce_sum(tt.math.real(value * weight))
                    if value.dtype.is_complex
                    else tt.reduce_sum(value * weight)
                )
            grads = inner.gradient(loss, list(xs), unconnected_gradients="zero")
            along = tt.add_n(
                [tt.reduce_sum(tt.cast(g, tt.float64) * _fixed(g.shape, 2)) for g in grads]
            )
        second = outer.gradient(along, list(xs), unconnected_gradients="zero")
        # dense, as the catalogue's callers compare them (a gather's is an IndexedSlices)
        return [value, *map(tt.convert_to_tensor, (*grads, *second))]

    return run


def _fixed(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape)


def _compare(results, reference, dtype):
    tolerance = 1e-10 if dtype == np.float64 else 1e-5
    for got, want in zip(results, reference):
        got, want = np.asarray(got), np.asarray(want)
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance * 1e-3)


@pytest.mark.parametrize("name", sorted(ALL_CASES))
def test_interpreter_and_c_agree_on_values_and_two_orders_of_derivatives(name):
    function, args = ALL_CASES[name]
    inputs = [tt.constant(a, dtype=np.asarray(a).dtype) for a in args]
    run = derivatives(function, len(args))
    eager = run(*inputs)
    compiled = tt.function(run, backend="c")
    interpreted = tt.function(run, backend="interpreter")
    c_results = compiled(*inputs)
    concrete = compiled.get_concrete_function(*inputs)
    assert concrete.backend == "c"
    # the profiler's module (the profiled C target) is this code with probes around each step
    assert_profiled_c_is_c_with_probes(concrete.stages.final)
    dtype = np.result_type(*[np.asarray(a) for a in args])
    _compare(c_results, interpreted(*inputs), dtype)
    _compare(c_results, eager, dtype)


FLOAT32_CASES = [
    "add",
    "mul",
    "div",
    "exp",
    "log",
    "tanh",
    "sigmoid",
    "softplus",
    "matmul",
    "reduce_sum",
    "reduce_max",
    "softmax",
    "log_softmax",
    "sparse_softmax_cross_entropy",
    "gather",
    "concat",
    "tile",
]


@pytest.mark.parametrize("name", FLOAT32_CASES)
def test_float32_agrees_to_1e_5(name):
    function, args = ALL_CASES[name]
    inputs = [tt.constant(np.asarray(a, dtype=np.float32)) for a in args]
    run = derivatives(function, len(args))
    c_results = tt.function(run, backend="c")(*inputs)
    _compare(c_results, tt.function(run, backend="interpreter")(*inputs), np.float32)


def test_ops_standing_alone_outside_any_fused_kernel_lower_to_c():
    """The C backend also runs graphs the fusion pass has not seen: each op is its own loop."""
    from codegen.compile import compile_graph
    from runtime.interpreter import evaluate

    def f(x, y):
        return tt.reduce_sum(tt.maximum(x, y) * y - x, axis=1), tt.transpose(x)[1:, ::2]

    x, y = tt.constant(rng.standard_normal((3, 4))), tt.constant(rng.standard_normal((3, 4)))
    unfused = (
        tt.function(f, backend="interpreter").get_concrete_function(x, y).stages["deduplicated"]
    )
    assert not any(n.op == "fused" for n in unfused.nodes)
    compiled = compile_graph(unfused, "unfused")([x.numpy(), y.numpy()])
    for got, want in zip(compiled, evaluate(unfused, [x.numpy(), y.numpy()])):
        np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(
    "op", ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_mean"]
)
def test_reductions_that_keep_the_innermost_axis_match_numpy(op, dtype):
    """Reductions over leading axes loop over the kept innermost axis inside (an array of
    accumulators, in blocks when the axis is long): values, NaN and Inf as numpy's."""
    from codegen.loops import COLUMN_BLOCK

    reduce = getattr(tt, op) if hasattr(tt, op) else getattr(tt.math, op)
    numpy_reduce = {
        "reduce_sum": np.sum,
        "reduce_prod": np.prod,
        "reduce_max": np.max,
        "reduce_min": np.min,
        "reduce_mean": np.mean,
    }[op]
    short = rng.uniform(0.5, 1.5, (6, 5, 37)).astype(dtype)
    short[1, 2, 3], short[4, 0, 30], short[2, 3, 36] = np.nan, np.inf, -np.inf
    long = rng.uniform(0.99, 1.01, (90, COLUMN_BLOCK + 500)).astype(
        dtype
    )  # two blocks, shared by threads
    long[7, COLUMN_BLOCK + 3], long[80, 5] = np.nan, -np.inf
    cases = [
        (short, 0, "acc[37]"),
        (short, 1, "acc[37]"),
        (short, (0, 1), "acc[37]"),
        (long, 0, "block_start"),
    ]
    for data, axis, form in cases:
        for keepdims in (False, True):
            compiled = tt.function(
                lambda x: reduce(x * 1.0, axis=axis, keepdims=keepdims), backend="c"
            )
            got = compiled(tt.constant(data)).numpy()
            assert form in compiled.get_concrete_function(tt.constant(data))._executable.c_source
            want = numpy_reduce(data, axis=axis, keepdims=keepdims)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-12 if dtype == np.float64 else 1e-5)


@pytest.mark.parametrize("shape", [(5, 0), (0, 5), (0, 3000)])
def test_sums_and_products_over_leading_axes_of_empty_arrays_are_numpy_s(shape):
    data = np.full(shape, 1.5)
    for reduce, numpy_reduce in ((tt.reduce_sum, np.sum), (tt.reduce_prod, np.prod)):
        got = tt.function(lambda x: reduce(x * 2.0, axis=0), backend="c")(tt.constant(data)).numpy()
        np.testing.assert_array_equal(got, numpy_reduce(data * 2.0, axis=0))


def test_an_expression_computed_in_two_kernels_rounds_the_same_in_both():
    """reduce_max's gradient finds the maximum again by comparing x with max(x), and compiled
    code computes x = a * a + b * b once in the reduction's kernel and again in the
    gradient's. Contracted to a fused multiply-add in one and not the other (GCC's default
    in GNU C), the two differed in the last bit: no element of a column equalled its maximum,
    and its gradient divided 0 by a count of 0."""
    a, b = rng.standard_normal((2, 200, 3, 3))

    def gradient(a, b):
        with tt.GradientTape() as tape:
            tape.watch(a)
            y = tt.reduce_sum(tt.reduce_max(a * a + b * b, axis=-2))
        return tape.gradient(y, a)

    compiled = tt.function(gradient, backend="c")(a, b).numpy()
    x = a * a + b * b
    want = np.where(x == x.max(axis=-2, keepdims=True), 2 * a, 0.0)
    np.testing.assert_allclose(compiled, want, rtol=1e-12, atol=0)


@pytest.mark.parametrize("barrier", [True, False])
@pytest.mark.parametrize("slow", [True, False])
def test_float32_squares_below_the_normal_range_keep_numpys_bits_in_c(
    tmp_path, monkeypatch, slow, barrier
):
    """Where the CPU makes subnormals slowly (codegen/subnormals.py, set here either way), a
    module's loops that square float32 values run numpy's operations until a call meets
    subnormals, then try every product, quotient and square root on float's grid, none
    reading or making a subnormal (a CPU's slow path), and keep the faster for 63 calls or
    more (at least twice over here, whichever wins on this CPU); where it makes them at little
    cost, the loops are written once, numpy's operations. The bits stay numpy's in all of
    them, over squares of every magnitude, subnormal ones, signed zeros, subnormal inputs,
    NaN, infinities and overflow; with the rounding's barrier against GCC's narrowing and
    with the select on NaN that stands for it where a compiler lacks the builtin."""
    from codegen import forms, loops, lower, subnormals

    monkeypatch.setattr(subnormals, "slow", lambda: slow)
    monkeypatch.setenv("TRACER_CACHE_DIR", str(tmp_path / "cache"))  # no plan stored before
    if not barrier:
        text = loops.FLOAT_GRID.texts["float"].template
        text = text.replace("__has_builtin(__builtin_assoc_barrier)", "0")
        monkeypatch.setattr(
            lower, "FLOAT_GRID", forms.Helper("float_grid", float=text, typed=False)
        )
    rng = np.random.default_rng(5)
    exponents = rng.integers(-160, 70, 20_000)
    g = rng.choice([-1.0, 1.0], 20_000) * rng.uniform(1, 2, 20_000) * 2.0**exponents
    g = g.astype(np.float32)
    g[:10] = [0.0, -0.0, np.nan, np.inf, -np.inf, 1e-45, -1e-40, 2.0**-63, 2.0**-75, 1e20]
    v = np.abs(rng.standard_normal(20_000) * 2.0 ** rng.integers(-140, 0, 20_000))
    v = v.astype(np.float32)
    tiny = np.finfo(np.float32).tiny
    assert np.sum((g != 0) & (np.abs(g.astype(np.float64)) ** 2 < tiny)) > 100

    def second_moment(v, g):
        second = v * 0.999 + g * g * 0.001
        return second, g * g - v, tt.sqrt(second) + g * g, v * 0.9 / (tt.sqrt(second) + 1e-7)

    compiled = tt.function(second_moment, backend="c")
    with np.errstate(over="ignore", invalid="ignore"):  # the squares that overflow
        want = [r.numpy() for r in second_moment(tt.constant(v), tt.constant(g))]
        calls = [compiled(tt.constant(v), tt.constant(g)) for _ in range(132)]
    source = compiled.get_concrete_function(v, g).c_source()
    assert ("tr_float_grid(" in source and "_grid(" in source and "_plain(" in source) == slow
    assert ("tr_grid_sqrt(" in source) == slow  # the roots, from float's, subnormals widened
    assert ("__has_builtin(__builtin_assoc_barrier)" in source) == (slow and barrier)
    compiled.get_concrete_function(v, g).export_c(str(tmp_path), prefix="moment")
    exported = "".join(p.read_text() for p in tmp_path.iterdir() if p.is_file())
    assert "float_grid" not in exported  # exported C stays plain C99: numpy's operations
    for got in calls:  # the first on numpy's operations, which meets the subnormals, the
        # second on the grid, timed against it
        for got_part, want_part in zip((r.numpy() for r in got), want):
            np.testing.assert_array_equal(np.isnan(got_part), np.isnan(want_part))
            numbers = ~np.isnan(want_part)
            np.testing.assert_array_equal(
                got_part[numbers].view(np.uint32), want_part[numbers].view(np.uint32)
            )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_exp_sigmoid_and_softplus_where_exp_is_subnormal_or_zero_match_numpy(dtype):
    """glibc's vector exp takes a slow path below -87 (float) or -708 (double), and the C
    form shifts such arguments into its fast range (tr_exp): the values stay numpy's, to a
    few ulps, and to a few of the smallest subnormals where they are subnormal; NaN, -inf
    and +inf come through; a causal mask's -1e9 gives 0."""
    info = np.finfo(dtype)
    low = -87.0 if dtype == np.float32 else -708.0
    x = np.concatenate(
        [
            np.linspace(low - 20.0, low + 3.0, 4001),  # the subnormal results and the bound
            [-1e9, -1e30, -np.inf, np.inf, np.nan, 0.0, -1.0, 80.0, 700.0 * (dtype == np.float64)],
            -np.geomspace(1e-3, 1e3, 64),
        ]
    ).astype(dtype)
    for op in (tt.exp, tt.nn.sigmoid, tt.nn.softplus):
        want = op(tt.constant(x)).numpy()  # eagerly: numpy's
        for backend in ("c", "interpreter"):
            got = tt.function(op, backend=backend)(tt.constant(x)).numpy()
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
            np.testing.assert_allclose(
                got, want, rtol=8 * info.eps, atol=4 * info.smallest_subnormal, err_msg=backend
            )
    zeros = np.array([-1e9, low - 60.0, -np.inf], dtype)  # below where exp is subnormal
    assert tt.function(tt.exp, backend="c")(tt.constant(zeros)).numpy().tolist() == [0.0] * 3


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_eager_sigmoid_is_the_two_sided_formula_bit_for_bit(dtype):
    """Eager sigmoid is 1 / (1 + e) where x >= 0 and e / (1 + e) below, e = exp(-|x|) (the
    C form's tr_sigmoid, on numpy's exp), computed by one division: the same bits as the
    two branches selected, signed zeros, infinities and NaN included."""
    rng = np.random.default_rng(7)
    x = np.concatenate(
        [rng.standard_normal(997) * 30, [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30]]
    ).astype(dtype)
    with np.errstate(all="ignore"):
        e = np.exp(-np.abs(x))
        want = np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(dtype)
    for value in (x, x[:7], x.reshape(-1, 4)[:3]):  # prefixes of x: whole, 1-D, 2-D
        got = tt.sigmoid(tt.constant(value)).numpy()
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, want[: value.size].reshape(value.shape))
    scalar = dtype(-3.0)
    want_scalar = np.exp(scalar) / (1 + np.exp(scalar))
    assert tt.sigmoid(tt.constant(scalar)).numpy() == want_scalar


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_a_comparison_counted_as_a_number_is_a_select_in_c(dtype):
    """A bool cast to a number (reduce_max's gradient counts the elements equal to the
    maximum) is written as a select in C: GCC vectorizes no loop that converts a C bool to a
    number, and such a kernel ran its exp one element at a time (GradBench's lse gradient at
    2.4x jax.jit's time). The counts and masks are numpy's, NaN comparing unequal."""
    x = rng.standard_normal(5000).astype(np.float64)
    x[[7, 4000]] = x.max() + 1.0
    x[11] = np.nan

    def masked(x):
        mask = tt.cast(tt.equal(x, tt.reduce_max(tt.where(tt.math.is_nan(x), 0.0, x))), dtype)
        return tt.reduce_sum(mask), mask * tt.cast(3, dtype), tt.exp(x) * tt.cast(mask, x.dtype)

    compiled = tt.function(masked, backend="c")
    got = [r.numpy() for r in compiled(tt.constant(x))]
    biggest = np.nanmax(x)
    mask = (x == biggest).astype(dtype)
    assert got[0] == 2 and got[0].dtype == dtype
    np.testing.assert_array_equal(got[1], mask * dtype(3))
    np.testing.assert_allclose(got[2], np.exp(x) * mask, rtol=1e-14)  # (glibc's vector exp)
    for run in (tt.function(masked, backend="interpreter"), masked):
        count, scaled, exps = (r.numpy() for r in run(tt.constant(x)))
        assert count == got[0]
        np.testing.assert_array_equal(scaled, got[1])
        np.testing.assert_allclose(exps, got[2], rtol=1e-14)
    source = compiled.get_concrete_function(tt.constant(x)).c_source()
    ctype = {np.float32: "float", np.float64: "double", np.int32: "int32_t"}[dtype]
    assert f"? ({ctype})1 : ({ctype})0)" in source
    assert not re.search(rf"\(\({ctype}\)\(t\d+\)\)", source)  # no bool converted by a cast
