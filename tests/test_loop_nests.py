"""How codegen/loops.py shapes a kernel's loops: loops folded into one (`foldable_axes`) and
transposing reads in tiles (`transposing_tile`): which loops fold or tile, and that the
compiled kernels give numpy's values, exactly where numpy's are exact."""

import re
import warnings

import numpy as np
import pytest

import tracer as tt
from codegen.affine import Affine, offset
from codegen.loops import (
    INDEX,
    PARALLEL_MIN,
    ROWS_PARALLEL_MIN,
    SHORT_LOOP,
    TILE_ABOVE,
    TILE_COLUMNS,
    TILE_ROWS,
    VECTOR_BYTES,
    fold,
    foldable_axes,
    identity_map,
    loops_over,
    transposing_tile,
)
from tracer.ir import dims

rng = np.random.default_rng(7)


def _offsets(*maps_and_shapes):
    return [offset(index_map, shape) for index_map, shape in maps_and_shapes]


def test_a_contiguous_copy_folds_into_one_loop():
    shape = (3, 4, 5, 6)
    index = identity_map(4)
    loops = loops_over(shape)
    folded = foldable_axes([loops], _offsets((index, shape), (index, shape)))
    assert folded == {0, 1, 2}
    assert fold(loops, folded) == [(INDEX[3], 360)]


def test_a_nest_long_enough_for_threads_keeps_its_outer_loop_apart():
    shape = (4, 512, 8, 16)  # 2^18 iterations: the outer loop may be shared by threads
    index = identity_map(4)
    loops = loops_over(shape)
    folded = foldable_axes([loops], _offsets((index, shape), (index, shape)))
    assert fold(loops, folded) == [(INDEX[0], 4), (INDEX[3], 512 * 8 * 16)]
    assert ROWS_PARALLEL_MIN <= 4 * 512 * 8 * 16


def test_a_bias_broadcast_over_rows_folds_the_rows_only():
    shape = (2, 5, 5, 8)
    index = identity_map(4)
    bias = (index[3],)
    folded = foldable_axes([loops_over(shape)], _offsets((index, shape), (bias, (8,))))
    assert folded == {0, 1}
    assert fold(loops_over(shape), folded) == [(INDEX[2], 50), (INDEX[3], 8)]


def test_a_transposed_read_folds_only_what_both_sides_walk_together():
    shape = (4, 3, 2)  # out[i0, i1, i2] = x[i2, i0, i1], x of shape (2, 4, 3)
    index = identity_map(3)
    transposed = (index[2], index[0], index[1])
    folded = foldable_axes([loops_over(shape)], _offsets((index, shape), (transposed, (2, 4, 3))))
    assert folded == {0}  # i0 and i1 are contiguous in both; i2 is not


def test_loops_of_one_iteration_go_but_each_run_keeps_a_loop():
    shape = (1, 7, 1)
    index = identity_map(3)
    loops = loops_over(shape)
    folded = foldable_axes([loops], _offsets((index, shape)))
    assert fold(loops, folded) == [(INDEX[1], 7)]
    ones = loops_over((1, 1))
    assert fold(ones, foldable_axes([ones], _offsets((identity_map(2), (1, 1))))) == [(INDEX[1], 1)]


def test_runs_fold_apart_and_sizes_known_only_at_run_time_do_not_fold():
    shape = (2, 3, 4, 5)
    index = identity_map(4)
    offsets = _offsets((index, shape))
    kept, reduced = loops_over(shape)[:2], loops_over(shape)[2:]
    assert foldable_axes([kept, reduced], offsets) == {0, 2}  # never 1 into 2: other runs
    loops = [(INDEX[0], dims.Dim.symbol("d0")), (INDEX[1], 3)]
    assert foldable_axes([loops], [Affine(0, ((0, 3), (1, 1)))]) == frozenset()


def _kernel_loops(c_source, name):
    """The extents of the `for` loops of the kernel whose name contains `name`."""
    body = re.search(rf"\bk\d+_{name}\w*\([^)]*\) \{{\n(.*?)\n\}}", c_source, re.S)
    assert body is not None, f"no kernel {name} in the module"
    return [int(e) for e in re.findall(r"for \(int64_t i\d+ = 0; i\d+ < (\d+);", body.group(1))]


def test_a_compiled_pad_copies_rows_whole_and_gives_numpy_s_values():
    x = rng.standard_normal((6, 5, 4, 3)).astype(np.float32)
    paddings = [[0, 0], [1, 2], [2, 1], [0, 0]]
    pad = tt.function(lambda x: tt.pad(x, paddings))
    np.testing.assert_array_equal(pad(tt.constant(x)).numpy(), np.pad(x, paddings))
    source = pad.get_concrete_function(tt.constant(x)).c_source()
    # the interior's rows of 4 x 3 copied whole; each border's rows written whole
    assert _kernel_loops(source, "pad") == [6, 5, 12, 6, 21, 6, 42, 6, 5, 6, 6, 5, 3]


def test_compiled_sums_over_contiguous_axes_match_numpy():
    x = rng.standard_normal((7, 6, 5, 9))

    def sums(x):
        return (
            tt.reduce_sum(x, axis=[0, 1, 2]),  # the bias gradient's sum: one reduced loop
            tt.reduce_sum(x, axis=[1, 2, 3]),
            tt.reduce_max(x, axis=[2, 3]),
            tt.reduce_sum(tt.reshape(x, (42, 45)) * 2.0),
        )

    compiled = tt.function(sums)
    for got, want in zip(
        compiled(tt.constant(x)),
        (x.sum((0, 1, 2)), x.sum((1, 2, 3)), x.max((2, 3)), (2 * x).sum()),
    ):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    source = compiled.get_concrete_function(tt.constant(x)).c_source()
    assert re.search(r"i\d+ < 210;", source)  # the first sum's 7 * 6 * 5 reduced rows


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_copies_and_broadcasts_whose_loops_fold_give_numpy_s_bits(dtype):
    x = rng.standard_normal((4, 3, 5, 2)).astype(dtype)
    bias = rng.standard_normal(2).astype(dtype)

    def f(x, bias):
        return (
            tt.tile(x, [1, 2, 1, 1]),
            tt.concat([x, x * 2], axis=1),
            x + bias,
            tt.transpose(x, [1, 0, 2, 3]) * 3,
            tt.zeros_like(x) + 1,
        )

    got = tt.function(f)(tt.constant(x), tt.constant(bias))
    want = (
        np.tile(x, [1, 2, 1, 1]),
        np.concatenate([x, x * 2], axis=1),
        x + bias,
        np.transpose(x, [1, 0, 2, 3]) * dtype(3),
        np.zeros_like(x) + 1,
    )
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w)


def test_a_slice_gradient_whose_rows_fold_matches_numpy():
    x = tt.constant(rng.standard_normal((5, 4, 6)))

    @tt.function
    def gradient(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.reduce_sum(_square(x[1:4]))
        return tape.gradient(y, x)

    want = np.zeros((5, 4, 6))
    want[1:4] = 2 * x.numpy()[1:4]
    np.testing.assert_allclose(gradient(x).numpy(), want, rtol=1e-15)


def _square(x):
    return x * x


def test_a_dimension_known_only_at_run_time_is_not_folded_and_values_hold():
    spec = tt.TensorSpec([None, 3, 4], tt.float64)
    f = tt.function(lambda x: tt.reduce_sum(x * 2.0, axis=[1, 2]), input_signature=[spec])
    for rows in (2, 5):
        x = rng.standard_normal((rows, 3, 4))
        np.testing.assert_allclose(f(tt.constant(x)).numpy(), (2 * x).sum((1, 2)), rtol=1e-12)
    assert f.experimental_get_tracing_count() == 1


def test_a_transposing_read_tiles_the_last_two_loops_and_a_plain_one_does_not():
    shape = (160, 96)  # out[i0, i1] = x[i1, i0], x of shape (96, 160)
    index = identity_map(2)
    transposed = _offsets(((index[1], index[0]), (96, 160)), (index, shape))
    assert transposing_tile(loops_over(shape), transposed) == (TILE_COLUMNS, TILE_ROWS)
    plain = _offsets((index, shape), (index, shape))
    assert transposing_tile(loops_over(shape), plain) is None
    assert transposing_tile(loops_over((160, 8)), transposed) is None  # too short to tile
    small = _offsets(((index[1], index[0]), (48, 64)), (index, (64, 48)))
    assert TILE_ABOVE > 64 * 48
    assert transposing_tile(loops_over((64, 48)), small) is None  # in the L1 row by row


def _tiles(source):
    return re.findall(
        r"for \(int64_t (i\d+)_tile = 0; \1_tile < (\d+); \1_tile \+= (\d+)\)", source
    )


@pytest.mark.parametrize(
    "shape, perm",
    [
        ((512, 512), (1, 0)),  # rows a power of two bytes apart, the worst case for caches
        ((137, 203), (1, 0)),  # tails in both loops
        ((37, 203), (1, 0)),  # small enough to stay row by row
        ((6, 140, 70), (0, 2, 1)),
        ((3, 33, 5, 65), (3, 1, 2, 0)),
        ((16, 300), (1, 0)),
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.complex128])
def test_compiled_transposes_in_tiles_give_numpy_s_values(shape, perm, dtype):
    x = (rng.standard_normal(shape) * 100).astype(dtype)
    if np.iscomplexobj(x):
        x = x + 1j * rng.standard_normal(shape)
    f = tt.function(lambda x: tt.transpose(x, perm) * 2)
    np.testing.assert_array_equal(f(tt.constant(x)).numpy(), np.transpose(x, perm) * dtype(2))
    inner, outer = shape[perm[-1]], shape[perm[-2]]  # the last two loops' extents
    tiled = bool(_tiles(f.get_concrete_function(tt.constant(x)).c_source()))
    assert tiled == (inner >= 2 * TILE_ROWS and outer >= TILE_ROWS and inner * outer >= TILE_ABOVE)


def test_a_transpose_s_gradient_in_tiles_matches_finite_differences():
    x = tt.constant(rng.standard_normal((96, 160)))
    w = tt.constant(rng.standard_normal((160, 96)))

    @tt.function
    def value_and_gradient(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.reduce_sum(tt.sin(tt.transpose(x)) * w)
        return y, tape.gradient(y, x)

    _, gradient = value_and_gradient(x)
    assert _tiles(value_and_gradient.get_concrete_function(x).c_source())
    np.testing.assert_allclose(gradient.numpy(), np.cos(x.numpy()) * w.numpy().T, rtol=1e-13)
    step, v = 1e-6, x.numpy()
    probe = np.zeros_like(v)
    probe[3, 5] = step
    up = value_and_gradient(tt.constant(v + probe))[0].numpy()
    down = value_and_gradient(tt.constant(v - probe))[0].numpy()
    assert abs((up - down) / (2 * step) - gradient.numpy()[3, 5]) < 1e-7


def test_sums_that_read_across_run_in_tiles_and_maxima_keep_their_order():
    x = rng.standard_normal((4, 128, 128))
    w = rng.standard_normal((160, 160))

    def sums(x, w):
        return (
            tt.reduce_sum((w + tt.transpose(w)) * 0.5 * w),  # a Cholesky gradient's sum
            tt.reduce_sum(x * tt.transpose(x, [0, 2, 1]), axis=[1, 2]),  # kept: the batch
        )

    f = tt.function(sums)
    got = f(tt.constant(x), tt.constant(w))
    want = (((w + w.T) * 0.5 * w).sum(), (x * np.transpose(x, [0, 2, 1])).sum((1, 2)))
    for g, e in zip(got, want):
        np.testing.assert_allclose(g.numpy(), e, rtol=1e-12)
    tiles = _tiles(f.get_concrete_function(tt.constant(x), tt.constant(w)).c_source())
    assert len(tiles) == 2 * 2  # both sums, each over two loops of tiles

    # a maximum runs in tiles too, and again in order where it met a NaN (the first wins)
    v = rng.standard_normal((160, 160))
    v[7, 90], v[100, 3] = _nan(1), _nan(2)  # the second comes first in v.T's order
    peak = tt.function(lambda v: tt.reduce_max(tt.transpose(v) * 2.0))
    assert peak(tt.constant(v)).numpy().tobytes() == _nan(2).tobytes()
    assert len(_tiles(peak.get_concrete_function(tt.constant(v)).c_source())) == 2


@pytest.mark.parametrize("shape", [(512, 512), (137, 203)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_reads_across_a_tiled_loop_calling_vector_maths_are_staged(shape, dtype):
    """A tiled nest that calls exp copies its transposed read into a buffer per tile row
    (`stage_across_reads`: GCC calls the vector exp only over contiguous loads): an
    elementwise nest and a sum (as in B20's Cholesky gradient) give numpy's values, and
    where the tiles have no tails the elementwise one gives the bits of the same loop over
    an operand transposed beforehand (contiguous, the vector exp); a maximum, which runs
    again in order after a NaN, is not staged."""
    x = (rng.standard_normal(shape) * 2).astype(dtype)
    w = rng.standard_normal(shape[::-1]).astype(dtype)

    def program(x, w):
        t = tt.transpose(x)
        staged_sum = tt.reduce_sum(0.5 * (tt.transpose(w) + x) * tt.exp(-x * x))
        return tt.exp(-t * t) * w, staged_sum, tt.reduce_max(tt.exp(tt.transpose(w)))

    staged = tt.function(program)
    got = [r.numpy() for r in staged(tt.constant(x), tt.constant(w))]
    source = staged.get_concrete_function(tt.constant(x), tt.constant(w)).c_source()
    # the exp's nest and the sum's (one kernel or two) each copy and read one buffer
    assert len(re.findall(r"stage\d\[i\d - i\d_tile\] = p\d\[", source)) == 2
    assert len(re.findall(r"\)stage\d\[i\d - i\d_tile\];", source)) == 2
    maximum = source[source.index("void k", source.index("reduce_max_transpose")) :]
    assert "stage" not in maximum[: maximum.index("\n}\n")]
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    rtol = 1e-12 if dtype == np.float64 else 2e-5
    np.testing.assert_allclose(got[0], np.exp(-x64.T * x64.T) * w64, rtol=rtol)
    reference = (0.5 * (w64.T + x64) * np.exp(-x64 * x64)).sum()
    np.testing.assert_allclose(got[1], reference, rtol=rtol * 10)
    np.testing.assert_allclose(got[2], np.exp(w64).max(), rtol=rtol)
    if all(extent % TILE_ROWS == 0 for extent in shape):
        contiguous = tt.function(lambda t, w: tt.exp(-t * t) * w)
        want = contiguous(tt.constant(np.ascontiguousarray(x.T)), tt.constant(w)).numpy()
        assert got[0].dtype == dtype and got[0].tobytes() == want.tobytes()


def _nan(payload):
    """A quiet NaN whose low bits are `payload`."""
    return np.array([0x7FF8000000000000 + payload], np.uint64).view(np.float64)[0]


def _in_order(values, sign):
    """The max (sign -1) or min (+1) of `values` taken one at a time in their order, as
    tr_maximum and tr_minimum take them: the first NaN wins, and the first of tied values."""
    best = sign * np.inf
    for value in values:
        if not (best != best or (best >= value if sign < 0 else best <= value)):
            best = value
    return best


@pytest.mark.parametrize("reduce, sign", [(tt.reduce_max, -1), (tt.reduce_min, +1)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_maxima_run_on_vectors_and_threads_and_keep_the_ordered_value(reduce, sign, dtype):
    """A max or min over a long axis runs reassociated (vectors, threads: an OpenMP max
    reduction) and, where it met a NaN or its value is a zero, again in order, so each value
    is the ordered loop's: the first NaN (its payload), the first of tied zeros (its sign),
    infinities (a row of -inf only), and values with no NaN or zero untouched; over every
    element and over rows."""
    n = 1 << 18
    cases = {
        "plain": rng.standard_normal(n),
        "nans": rng.standard_normal(n),
        "zeros": -sign * -(np.abs(rng.standard_normal(n)) + 1.0),
        "infinities": rng.standard_normal(n),
    }
    cases["nans"][[9000, 200_000, 7]] = [_nan(3), _nan(4), _nan(5)]  # the one at 7 first
    cases["zeros"][[70_001, 5, 200_000]] = [0.0, -0.0, 0.0]  # -0.0 first
    cases["infinities"][[11, 12]] = [np.inf, -np.inf]
    cases["all infinite"] = np.full(n, sign * np.inf)  # a fully masked row's max: -inf
    whole = tt.function(lambda x: reduce(x))
    rows = tt.function(lambda x: reduce(tt.reshape(x, (64, n // 64)), axis=1))
    for name, values in cases.items():
        values = values.astype(dtype)
        x = tt.constant(values)
        assert whole(x).numpy().tobytes() == dtype(_in_order(values, sign)).tobytes(), name
        want = [_in_order(row, sign) for row in values.reshape(64, -1)]
        assert rows(x).numpy().tobytes() == np.array(want, dtype).tobytes(), name
    source = whole.get_concrete_function(x).c_source()
    assert f"reduction({'max' if sign < 0 else 'min'}:acc)" in source
    assert "acc != 0 && acc > -" in source and "acc_nan != 0" in source
    # the reassociated step is one comparison (a vector max or min), the rerun the helper's
    assert re.search(rf"acc = (t\d+) {'>' if sign < 0 else '<'} acc \? \1 : acc;", source)
    assert re.search(r"acc = tr_(maximum|minimum)_f(32|64)\(acc, ", source)


@pytest.mark.parametrize("shape", [(3, 50, 70), (200, 96)])
def test_reversed_reads_fold_and_tile_with_negative_strides(shape):
    x = rng.standard_normal(shape).astype(np.float32)
    axes = list(range(len(shape)))
    perm = axes[:-2] + axes[-2:][::-1]

    def f(x):
        return (
            tt.reverse(x, axes) + 1.0,  # every stride -1: one loop, read backwards
            tt.reverse(tt.transpose(x, perm), axes[-2:]) * 3.0,  # read across, backwards
        )

    compiled = tt.function(f)
    got = compiled(tt.constant(x))
    want = (np.flip(x) + 1.0, np.flip(np.transpose(x, perm), axes[-2:]) * np.float32(3.0))
    for g, e in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), e)
    source = compiled.get_concrete_function(tt.constant(x)).c_source()
    size = int(np.prod(shape))
    assert re.search(rf"i\d+ < {size};", source)  # the reversed copy, folded
    if shape[-1] * shape[-2] >= TILE_ABOVE:
        assert _tiles(source)


def _gates(x, w):
    """Three sigmoids and a tanh of slices of one product, as an LSTM's gates: one fused
    kernel of four results, each `x.shape[0] // 4` elements."""
    gates = x * w
    size = x.shape[0] // 4
    parts = [gates[k * size : (k + 1) * size] for k in range(4)]
    return [tt.sigmoid(p) for p in parts[:3]] + [tt.tanh(parts[3])]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", [1, 7, 14, 17, 33])
def test_a_short_loop_calling_libm_runs_over_whole_vectors_and_stores_its_elements_only(
    dtype, size
):
    """A short loop calling libm runs to a whole number of vectors: where the CPU masks them
    (AVX-512) its loads and stores past the extent masked, elsewhere its reads and results
    in buffers of whole vectors (TR_PADDED). The four results (neighbours in the module's
    workspace) are numpy's to the functions' rounding, and each element is the one the same
    kernel gives in a long loop of whole vectors (the same function at the same width)."""
    lanes = VECTOR_BYTES // np.dtype(dtype).itemsize
    x, w = (rng.standard_normal(4 * size).astype(dtype) * 3 for _ in range(2))
    compiled = tt.function(_gates)
    concrete = compiled.get_concrete_function(tt.constant(x), tt.constant(w))
    whole = -(-size // lanes) * lanes
    source = concrete.c_source()
    assert f"< {whole}; i0++)" in source
    assert f"TR_PICK(padded_in0[i0], (TR_LANE(i0, {size}) ?" in source
    assert f", if (TR_LANE(i0, {size})) out" in source and "TR_PICK(padded_out0[i0] = " in source
    assert f"i0 < {size}; i0++) {{ padded_in0[i0] = " in source  # filled to the extent
    got = [r.numpy() for r in compiled(tt.constant(x), tt.constant(w))]
    gates = (x * w).reshape(4, size)
    expected = [1 / (1 + np.exp(-g.astype(np.float64))) for g in gates[:3]] + [np.tanh(gates[3])]
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=4 * np.finfo(dtype).eps, atol=0)
    # the same elements at the front of a long loop of whole vectors: the same bits
    long = (SHORT_LOOP // lanes + 1) * lanes
    xs, ws = (np.pad(a.reshape(4, size), ((0, 0), (0, long - size)), "wrap") for a in (x, w))
    wide = tt.function(_gates)(tt.constant(xs.ravel()), tt.constant(ws.ravel()))
    for g, v in zip(got, wide):
        np.testing.assert_array_equal(g, v.numpy()[:size])


@pytest.mark.parametrize(
    "f, reason",
    [
        (lambda x: x * 3.0 + 1.0, "no libm call"),
        (lambda x: tt.exp(tt.cast(tt.cast(x, tt.int32) // 2, tt.float32)), "integer values"),
    ],
)
def test_a_short_loop_without_libm_or_with_integers_runs_to_its_extent(f, reason):
    x = tt.constant(rng.standard_normal(14).astype(np.float32))
    concrete = tt.function(f).get_concrete_function(x)
    assert "TR_PICK(padded_" not in concrete.c_source(), reason
    assert "i0 < 14; i0++)" in concrete.c_source()
    np.testing.assert_allclose(
        concrete(x).numpy(), tt.function(f, backend="interpreter")(x).numpy(), rtol=1e-6
    )


def test_a_long_loop_calling_libm_runs_to_its_extent():
    x = tt.constant(rng.standard_normal(SHORT_LOOP + 1).astype(np.float32))
    source = tt.function(tt.tanh).get_concrete_function(x).c_source()
    assert f"< {SHORT_LOOP + 1}; i0++)" in source and "TR_LANE(i0" not in source


def test_a_max_keeps_a_loop_apart_from_a_sum_over_the_same_elements():
    """A sum and a max over every element of the same values are two loops: in one, a NaN or
    a zero would run the sum again in order with the max. Each runs reassociated (its OpenMP
    reduction clause), and the values are numpy's to glibc's vector sin and cos."""
    x = np.random.default_rng(12).standard_normal(1 << 16)

    def f(x):
        squares = tt.sin(x) * x
        return tt.reduce_sum(squares), tt.reduce_max(squares), tt.cos(x) * squares

    compiled = tt.function(f)
    source = compiled.get_concrete_function(tt.constant(x)).c_source()
    assert re.search(r"reduction\(\+:acc\w*\)", source)
    assert re.search(r"reduction\(max:acc\)", source)
    total, peak, third = (r.numpy() for r in compiled(tt.constant(x)))
    squares = np.sin(x) * x
    np.testing.assert_allclose(total, squares.sum(), rtol=1e-12)  # (glibc's vector sin: ulps)
    np.testing.assert_allclose(peak, squares.max(), rtol=1e-14)
    np.testing.assert_allclose(third, np.cos(x) * squares, rtol=1e-14)


@pytest.mark.parametrize("reduce, reference", [(tt.reduce_max, np.max), (tt.reduce_min, np.min)])
def test_a_max_or_min_of_bools_compiles(reduce, reference):
    """A max of bools is any, a min all: compiled over every element, rows and columns, with
    no fallback to the interpreter (a warning, an error here), numpy's values."""
    v = rng.random((300, 701)) < 0.002
    v[7] = True
    v[:, 3] = False
    compiled = tt.function(lambda x: (reduce(x), reduce(x, axis=1), reduce(x, axis=0)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = [g.numpy() for g in compiled(tt.constant(v))]
    for g, want in zip(got, [reference(v), reference(v, axis=1), reference(v, axis=0)]):
        np.testing.assert_array_equal(g, want)
        assert g.dtype == np.bool_


@pytest.mark.parametrize(
    "shape, key",
    [
        ((1000,), np.s_[1:]),
        ((1000,), np.s_[:-1]),
        ((40, 30), np.s_[3:17, 5:]),
        ((6, 40, 30), np.s_[:, 1:39, 2:29]),
        ((40, 30), np.s_[10:10]),
        ((40, 30), np.s_[::2, 1:]),
        ((40, 30), np.s_[5, 1:]),
    ],
)
def test_a_slices_gradient_zeroes_only_around_what_the_slice_read(shape, key):
    """slice_grad writes each element once around a box of whole ranges (its zeros only
    outside the box), else zeros everything first: numpy's values either way."""
    x = np.random.default_rng(4).standard_normal(shape)

    def gradient(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.reduce_sum(tt.sin(x[key]))
        return tape.gradient(y, x)

    expected = np.zeros(shape)
    expected[key] = np.cos(x[key])
    compiled = tt.function(gradient, backend="c")
    np.testing.assert_allclose(compiled(tt.constant(x)).numpy(), expected, rtol=1e-14, atol=0)
    source = compiled.get_concrete_function(tt.constant(x)).c_source()
    assert "slice_grad" in source or np.asarray(x[key]).size in (0, x.size)


def test_loops_of_sizes_known_at_run_time_take_threads_from_parallel_min():
    """A loop whose length is known only when the module runs (a `[None]` signature, or
    automatic dynamic shapes) is shared among threads where it runs ROWS_PARALLEL_MIN
    iterations or more (an elementwise loop, each thread whole rows of its result), or
    PARALLEL_MIN (a sum over everything, whose shares make partial sums), whatever the dims'
    stand-in estimates; the `if` clause names `parallel`, so that the loop keeps its vectors
    where it runs on one thread. numpy's values either side of both."""

    @tt.function(input_signature=[tt.TensorSpec([None], tt.float64)], backend="c")
    def lse(x):
        a = tt.reduce_max(x)
        return tt.exp(x - a) * 2.0, a + tt.math.log(tt.reduce_sum(tt.exp(x - a)))

    source = lse.get_concrete_function().c_source()
    clauses = re.findall(r"#pragma omp parallel for[^\n]*", source)
    assert len(clauses) == 3, clauses  # the max, the elementwise loop and the sum
    assert sum(f"if(parallel: d0 >= {PARALLEL_MIN})" in clause for clause in clauses) == 2
    assert sum(f"if(parallel: d0 >= {ROWS_PARALLEL_MIN})" in clause for clause in clauses) == 1
    for n in (1000, ROWS_PARALLEL_MIN + 12345, PARALLEL_MIN + 12345):
        x = rng.standard_normal(n)
        scaled, value = lse(tt.constant(x))
        np.testing.assert_allclose(scaled.numpy(), np.exp(x - x.max()) * 2.0, rtol=1e-15)
        np.testing.assert_allclose(value.numpy(), np.log(np.sum(np.exp(x))), rtol=1e-13)
