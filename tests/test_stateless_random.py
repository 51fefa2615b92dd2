"""tt.random.stateless_uniform and stateless_normal: the draw is a function of a seed tensor.

The unit uniforms (the primitive `stateless_random_uniform_unit`) and the integer draws are
the same bits in eager mode, the interpreter and C. Scaled and normal draws are ordinary
tracer ops on them: bit-for-bit the same in eager mode and the interpreter, and in C equal
up to rounding (C may fuse a product and a sum into one fma; libm's log and cos are not
numpy's), as every op of the catalogue is.
"""

import logging
import math

import numpy as np
import pytest

import tracer as tt

BACKENDS = ("interpreter", "c")
FLOATS = (tt.float32, tt.float64)
ULPS = {tt.float32: dict(rtol=2e-6, atol=1e-6), tt.float64: dict(rtol=1e-14, atol=1e-14)}


def _everywhere(draw, *args):
    """The draw of `draw(*args)` eagerly and from a function compiled by each backend."""
    results = {"eager": draw(*args).numpy()}
    for backend in BACKENDS:
        results[backend] = tt.function(draw, backend=backend)(*args).numpy()
    return results


# --- the stream -----------------------------------------------------------------------------

MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


def _splitmix64(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def _reference(seed, indices, bits):
    """The stream in Python integers: what tracer/ops/random_ops.py's docstring specifies."""
    a, b = (s & MASK for s in seed)
    key = _splitmix64(_splitmix64((a + GOLDEN) & MASK) ^ b)
    return [_splitmix64((key + (i + 1) * GOLDEN) & MASK) >> (64 - bits) for i in indices]


@pytest.mark.parametrize("seed", [(0, 0), (1, 2), (-5, 2**40), (2**63 - 1, -(2**63))])
def test_the_stream_is_splitmix64_of_the_seed_and_the_index(seed):
    indices = [0, 1, 2, 9, 65_535, 65_536, 65_537, 69_999]  # across the kernel's chunks
    for dtype, bits in ((tt.float32, 24), (tt.float64, 53)):
        draw = tt.random.stateless_uniform([7, 10_000], tt.constant(seed, tt.int64), dtype=dtype)
        integers = draw.numpy().ravel()[indices] * 2.0**bits
        np.testing.assert_array_equal(integers, _reference(seed, indices, bits))
    for dtype, bits in ((tt.float16, 11), (tt.float32, 24), (tt.float64, 53)):
        # a draw of a few values: made with Python's numbers, the same bits
        few = tt.random.stateless_uniform([2, 3], tt.constant(seed, tt.int64), dtype=dtype)
        integers = few.numpy().astype(np.float64).ravel() * 2.0**bits
        np.testing.assert_array_equal(integers, _reference(seed, range(6), bits))


@pytest.mark.parametrize("dtype", [tt.float16, *FLOATS])
@pytest.mark.parametrize("seed_dtype", [tt.int32, tt.int64])
def test_unit_draws_are_the_same_bits_in_eager_mode_the_interpreter_and_c(dtype, seed_dtype):
    seed = tt.constant([-7, 123456], seed_dtype)
    results = _everywhere(lambda s: tt.random.stateless_uniform([3, 50, 700], s, dtype=dtype), seed)
    assert results["eager"].dtype == dtype.as_numpy_dtype
    assert results["eager"].shape == (3, 50, 700)
    for backend in BACKENDS:
        np.testing.assert_array_equal(results[backend], results["eager"])


@pytest.mark.parametrize("dtype", FLOATS)
def test_scaled_and_normal_draws_agree_across_backends(dtype):
    seed = tt.constant([3, 4], tt.int64)
    draws = {
        "up to maxval": lambda s: tt.random.stateless_uniform([1000], s, maxval=5.0, dtype=dtype),
        "between": lambda s: tt.random.stateless_uniform(
            [1000], s, minval=-2.0, maxval=3.0, dtype=dtype
        ),
        "normal": lambda s: tt.random.stateless_normal([1000], s, dtype=dtype),
        "scaled normal": lambda s: tt.random.stateless_normal(
            [1000], s, mean=1.0, stddev=2.0, dtype=dtype
        ),
    }
    for name, draw in draws.items():
        results = _everywhere(draw, seed)
        np.testing.assert_array_equal(results["interpreter"], results["eager"], err_msg=name)
        np.testing.assert_allclose(results["c"], results["eager"], **ULPS[dtype], err_msg=name)
    # a product alone is rounded once everywhere: the same bits
    results = _everywhere(draws["up to maxval"], seed)
    np.testing.assert_array_equal(results["c"], results["eager"])


@pytest.mark.parametrize("dtype", [tt.int32, tt.int64])
def test_integer_draws_are_the_same_in_every_backend_and_cover_their_range(dtype):
    seed = tt.constant([11, 12])
    results = _everywhere(
        lambda s: tt.random.stateless_uniform([20_000], s, minval=-3, maxval=4, dtype=dtype), seed
    )
    for backend in BACKENDS:
        np.testing.assert_array_equal(results[backend], results["eager"])
    values, counts = np.unique(results["eager"], return_counts=True)
    assert results["eager"].dtype == dtype.as_numpy_dtype
    np.testing.assert_array_equal(values, np.arange(-3, 4))
    assert np.all(np.abs(counts - 20_000 / 7) < 5 * np.sqrt(20_000 / 7))


@pytest.mark.parametrize(
    "dtype, low, high",
    [(tt.int32, -(2**31), 2**31 - 1), (tt.int64, -(2**62) + 1, 2**62), (tt.int64, 0, 2**63 - 1)],
)
def test_the_widest_integer_ranges_stay_in_range_in_every_backend(dtype, low, high):
    results = _everywhere(
        lambda s: tt.random.stateless_uniform([10_000], s, minval=low, maxval=high, dtype=dtype),
        tt.constant([1, 1]),
    )
    for backend in BACKENDS:
        np.testing.assert_array_equal(results[backend], results["eager"])
    values = results["eager"]
    assert values.min() >= low and values.max() < high
    quarter = (high - low) // 4
    assert values.min() < low + quarter and values.max() > high - quarter


# --- seeds in compiled functions ------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_compiled_function_draws_anew_for_each_seed_without_retracing(backend):
    draw = tt.function(lambda seed: tt.random.stateless_uniform([64], seed), backend=backend)
    first = draw(tt.constant([1, 2])).numpy()
    second = draw(tt.constant([1, 3])).numpy()
    third = draw(tt.constant([2, 2])).numpy()
    again = draw(tt.constant([1, 2])).numpy()
    assert draw.experimental_get_tracing_count() == 1
    np.testing.assert_array_equal(again, first)
    for other in (second, third):
        assert not np.any(other == first)
    np.testing.assert_array_equal(first, tt.random.stateless_uniform([64], [1, 2]).numpy())


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_seed_computed_from_a_step_counter_gives_a_new_dropout_mask_each_step(backend):
    step = tt.Variable(0, dtype=tt.int64)

    @tt.function(backend=backend)
    def dropout(x):
        step.assign_add(1)
        keep = tt.random.stateless_uniform(x.shape, tt.stack([step, 7])) >= 0.5
        return x * tt.cast(keep, x.dtype) * 2.0

    x = tt.ones([256])
    masks = [dropout(x).numpy() for _ in range(3)]
    assert dropout.experimental_get_tracing_count() == 1
    assert not np.array_equal(masks[0], masks[1]) and not np.array_equal(masks[1], masks[2])
    for k, mask in enumerate(masks, start=1):
        expected = tt.random.stateless_uniform([256], tt.constant([k, 7], tt.int64)).numpy()
        np.testing.assert_array_equal(mask, np.where(expected >= 0.5, 2.0, 0.0))


def test_unknown_dimensions_draw_at_the_size_of_each_call():
    @tt.function(input_signature=[tt.TensorSpec([None, 3]), tt.TensorSpec([2], tt.int32)])
    def scale(x, seed):
        return x * tt.random.stateless_uniform(x.shape, seed)

    seed = tt.constant([5, 6])
    for rows in (2, 5):
        want = tt.random.stateless_uniform([rows, 3], seed).numpy()
        np.testing.assert_array_equal(scale(tt.ones([rows, 3]), seed).numpy(), want)
    assert scale.experimental_get_tracing_count() == 1


def test_a_batch_of_seeds_is_one_op():
    seeds = tt.constant([[1, 2], [3, 4], [1, 2]])
    batched = tt.function(
        lambda s: tt.vectorized_map(lambda seed: tt.random.stateless_uniform([4], seed), s)
    )
    values = batched(seeds).numpy()
    for row, seed in zip(values, ([1, 2], [3, 4], [1, 2])):
        np.testing.assert_array_equal(row, tt.random.stateless_uniform([4], seed).numpy())
    ir = batched.get_concrete_function(seeds).ir()
    assert ir.count("stateless_random_uniform_unit") == 1 and "i32[3,2]" in ir


# --- statistics -----------------------------------------------------------------------------


def _ks_statistic(sample, cdf):
    """Kolmogorov–Smirnov's D: the largest gap between the sample's CDF and `cdf`."""
    x = np.sort(sample)
    n = len(x)
    f = cdf(x)
    return max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n))


KS_LIMIT = 1.95  # sqrt(n) D above it has probability 0.001 for a sample of the distribution


@pytest.mark.parametrize("dtype", FLOATS)
def test_uniform_statistics(dtype):
    u = tt.random.stateless_uniform([400_000], [2024, 1], dtype=dtype).numpy().astype(np.float64)
    assert u.min() >= 0.0 and u.max() < 1.0
    assert abs(u.mean() - 0.5) < 0.002 and abs(u.var() - 1 / 12) < 0.001
    assert np.sqrt(len(u)) * _ks_statistic(u, lambda x: x) < KS_LIMIT
    scaled = tt.random.stateless_uniform([100_000], [2024, 2], minval=-1.0, maxval=3.0).numpy()
    assert scaled.min() >= -1.0 and scaled.max() < 3.0
    assert abs(scaled.mean() - 1.0) < 0.02 and abs(scaled.var() - 16 / 12) < 0.02


_PHI = np.frompyfunc(lambda x: 0.5 * (1.0 + math.erf(x / math.sqrt(2.0))), 1, 1)


@pytest.mark.parametrize("dtype", FLOATS)
def test_normal_statistics(dtype):
    z = tt.random.stateless_normal([200_000], [99, 7], dtype=dtype).numpy().astype(np.float64)
    assert abs(z.mean()) < 0.01 and abs(z.var() - 1.0) < 0.015
    assert abs(np.mean(z**3)) < 0.03 and abs(np.mean(z**4) - 3.0) < 0.06
    assert np.sqrt(len(z)) * _ks_statistic(z, lambda x: _PHI(x).astype(np.float64)) < KS_LIMIT
    w = tt.random.stateless_normal([100_000], [99, 8], mean=-2.0, stddev=0.5, dtype=dtype).numpy()
    assert abs(w.mean() + 2.0) < 0.01 and abs(w.std() - 0.5) < 0.01


def test_different_seeds_give_unrelated_streams():
    seeds = [[0, 0], [0, 1], [1, 0], [1, 1], [-1, 0], [2**31 - 1, 0]]
    draws = [tt.random.stateless_uniform([50_000], s, dtype=tt.float64).numpy() for s in seeds]
    correlations = np.corrcoef(draws)[np.triu_indices(len(seeds), 1)]
    assert np.all(np.abs(correlations) < 0.02)
    assert len({tuple(d[:4]) for d in draws}) == len(seeds)


def test_float16_normals_are_float32_normals_rounded():
    half = tt.random.stateless_normal([100], [1, 2], dtype=tt.float16).numpy()
    single = tt.random.stateless_normal([100], [1, 2], dtype=tt.float32).numpy()
    assert half.dtype == np.float16
    np.testing.assert_array_equal(half, single.astype(np.float16))


# --- gradients ------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["eager", *BACKENDS])
def test_the_gradient_of_x_times_a_draw_is_the_draw(backend):
    def value_and_gradient(x, seed):
        with tt.GradientTape() as tape:
            tape.watch(x)
            u = tt.random.stateless_uniform([5], seed, dtype=tt.float64)
            y = tt.reduce_sum(x * u)
        return u, tape.gradient(y, x)

    if backend != "eager":
        value_and_gradient = tt.function(value_and_gradient, backend=backend)
    u, g = value_and_gradient(tt.constant(np.arange(5.0)), tt.constant([8, 9]))
    np.testing.assert_array_equal(g.numpy(), u.numpy())


def test_no_gradient_reaches_the_seed(caplog):
    seed = tt.constant([1, 2])
    with tt.GradientTape() as tape, caplog.at_level(logging.WARNING, logger="tracer"):
        tape.watch(seed)
        u = tt.random.stateless_normal([3], seed)
    assert "floating" in caplog.records[0].getMessage()  # logged, as TensorFlow logs it
    assert tape.gradient(u, seed) is None


# --- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: tt.random.stateless_uniform([2], [1, 2, 3]), ValueError, "seed must have shape"),
        (lambda: tt.random.stateless_uniform([2], [[1, 2]]), ValueError, "seed must have shape"),
        (lambda: tt.random.stateless_normal([2], 5), ValueError, "seed must have shape"),
        (lambda: tt.random.stateless_uniform([2], [1.0, 2.0]), TypeError, "seed must be an int"),
        (lambda: tt.random.stateless_normal([2], [1, 2], dtype=tt.int32), TypeError, "dtype"),
        (lambda: tt.random.stateless_uniform([2, -1], [1, 2]), ValueError, "shape .* negative"),
        (lambda: tt.random.stateless_normal([-3], [1, 2]), ValueError, "shape .* negative"),
        (lambda: tt.random.stateless_uniform([2.5], [1, 2]), TypeError, "shape must hold"),
        (
            lambda: tt.random.stateless_uniform([2], [1, 2], dtype=tt.int32),
            ValueError,
            "maxval must be given",
        ),
        (
            lambda: tt.random.stateless_uniform([2], [1, 2], minval=3, maxval=3, dtype=tt.int64),
            ValueError,
            "minval .* less than maxval",
        ),
        (
            lambda: tt.random.stateless_uniform([2], [1, 2], -(2**62), 2**62, dtype=tt.int64),
            ValueError,
            "maxval - minval must be less than 2..63",
        ),
        (lambda: tt.random.stateless_uniform([2], [1, 2], dtype=tt.bool), TypeError, "dtype"),
    ],
)
def test_bad_arguments_raise_naming_the_argument(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_a_symbolic_seed_is_checked_when_traced():
    draw = tt.function(lambda seed: tt.random.stateless_uniform([2], seed))
    with pytest.raises(ValueError, match="seed must have shape"):
        draw(tt.constant([1, 2, 3]))
    with pytest.raises(TypeError, match="seed must be an int"):
        draw(tt.constant([1.0, 2.0]))
