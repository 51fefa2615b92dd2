"""tt.einsum and tt.linalg's matrix structure ops (trace, diag, diag_part, set_diag, band_part,
matvec, adjoint, matrix_transpose): values against numpy, TensorFlow's semantics and errors,
float32 and float64, compiled code and batching. Gradients to second order, eager =
interpreter = C, forward mode and vectorized jacobians are checked over the catalogue
(tests/catalogue/einsum_and_matrix.py)."""

import numpy as np
import pytest

import tracer as tt
from tracer.ops.matrix_ops import band_mask

rng = np.random.default_rng(7)


def normal(*shape, dtype=np.float64):
    return rng.standard_normal(shape).astype(dtype)


def tolerance(dtype):
    return dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)


# --- einsum: values ---------------------------------------------------------------------------

EQUATIONS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bij,jk->bik", [(2, 3, 4), (4, 5)]),
    ("ij,kj->ik", [(2, 3), (4, 3)]),
    ("ji,jk->ik", [(3, 2), (3, 4)]),
    ("ji,kj", [(3, 2), (4, 3)]),
    ("aij,ajk->ika", [(2, 3, 4), (2, 4, 5)]),
    ("ijk,jil->kl", [(2, 3, 4), (3, 2, 5)]),
    ("ij,j->i", [(3, 4), (4,)]),
    ("i,i", [(3,), (3,)]),
    ("i,j->ij", [(2,), (3,)]),
    ("bi,bi->b", [(3, 4), (3, 4)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("ij,ij->", [(3, 4), (3, 4)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("iii->i", [(2, 2, 2)]),
    ("ijj->ji", [(2, 3, 3)]),
    ("iji->ij", [(3, 2, 3)]),
    ("ij->", [(2, 3)]),
    ("ij->i", [(2, 3)]),
    ("ij->ji", [(2, 3)]),
    ("ij", [(2, 3)]),
    ("ji", [(2, 3)]),
    ("Ab", [(2, 3)]),
    ("bA", [(2, 3)]),
    ("...ij,...jk->...ik", [(2, 1, 2, 3), (5, 3, 4)]),
    ("...ij,...j->...i", [(3, 4), (2, 4)]),
    ("...i,...i->...", [(1, 3), (2, 3)]),
    ("ab...,b...->a...", [(2, 3, 4), (3, 4)]),
    ("a...a->...", [(2, 3, 2)]),
    ("...,...", [(2, 3), (3,)]),
    ("ij->...ij", [(2, 3)]),
    (",i->i", [(), (3,)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ij,jk,k->i", [(2, 3), (3, 4), (4,)]),
    ("abc,cd,bd->ad", [(2, 3, 4), (4, 5), (3, 5)]),
    ("i,j,k->ijk", [(2,), (3,), (2,)]),
    ("ij,jk->ik", [(2, 0), (0, 3)]),
    (" i j , j k -> i k ", [(2, 3), (3, 4)]),
]


@pytest.mark.parametrize("equation,shapes", EQUATIONS, ids=[e for e, _ in EQUATIONS])
def test_einsum_matches_numpy(equation, shapes):
    arrays = [normal(*s) for s in shapes]
    expected = np.einsum(equation.replace(" ", ""), *arrays)
    got = tt.einsum(equation, *arrays).numpy()
    assert got.shape == expected.shape and got.dtype == np.float64
    np.testing.assert_allclose(got, expected, **tolerance(np.float64))


def test_einsum_compiled_matches_numpy_in_float32_and_float64():
    equations = ["bij,bjk->bik", "ii->i", "...ij,...jk->...ik", "ij,jk,k->i", "i,j->ij"]
    shapes = [[(2, 3, 4), (2, 4, 5)], [(3, 3)], [(2, 1, 2, 3), (5, 3, 4)]]
    shapes += [[(2, 3), (3, 4), (4,)], [(2,), (3,)]]
    for dtype in (np.float32, np.float64):
        for equation, shape in zip(equations, shapes):
            arrays = [normal(*s, dtype=dtype) for s in shape]
            compiled = tt.function(lambda *xs, e=equation: tt.einsum(e, *xs), backend="c")
            got = compiled(*arrays).numpy()
            assert got.dtype == dtype
            np.testing.assert_allclose(got, np.einsum(equation, *arrays), **tolerance(dtype))


def test_einsum_of_integers_and_of_complex_values():
    a = rng.integers(-5, 5, (2, 3)).astype(np.int32)
    b = rng.integers(-5, 5, (3, 4)).astype(np.int32)
    got = tt.einsum("ij,jk->ik", a, b)
    assert got.dtype == tt.int32
    np.testing.assert_array_equal(got.numpy(), a @ b)
    z = normal(2, 3) + 1j * normal(2, 3)
    w = normal(3, 3) + 1j * normal(3, 3)
    np.testing.assert_allclose(
        tt.einsum("ij,jk,kk->ik", z, w, w).numpy(), np.einsum("ij,jk,kk->ik", z, w, w)
    )


def test_implicit_output_is_the_labels_appearing_once_sorted_with_uppercase_first():
    x = normal(2, 3)
    assert tt.einsum("ba", x).shape == (3, 2)
    assert tt.einsum("Ab", x).shape == (2, 3)  # 'A' sorts before 'b', as in TensorFlow
    assert tt.einsum("bA", x).shape == (3, 2)
    # '...' axes come first; a label repeated across operands is summed
    assert tt.einsum("j...,jk", normal(3, 2, 5), normal(3, 4)).shape == (2, 5, 4)


def test_a_python_list_operand_takes_the_first_tensors_dtype():
    got = tt.einsum("i,i->", tt.constant([1.0, 2.0]), [3, 4])
    assert got.dtype == tt.float32 and float(got) == 11.0


# --- einsum: what it compiles to -----------------------------------------------------------


def _optimized_ir(function, *args):
    return tt.function(function).get_concrete_function(*args).ir("optimized")


def test_a_batched_matmul_equation_is_one_matmul_and_nothing_else():
    ir = _optimized_ir(
        lambda a, b: tt.einsum("bij,bjk->bik", a, b), tt.ones((2, 3, 4)), tt.ones((2, 4, 5))
    )
    assert ir.count("matmul") == 1 and "transpose" not in ir and "reshape" not in ir


def test_operands_laid_out_the_other_way_round_are_read_through_the_transpose_flags():
    ir = _optimized_ir(lambda a, b: tt.einsum("ji,kj->ik", a, b), tt.ones((3, 2)), tt.ones((4, 3)))
    assert "matmul[transpose_a=True, transpose_b=True]" in ir and "transpose %" not in ir


def test_three_operands_are_contracted_in_the_cheaper_order():
    # left to right would make a 40 x 40 matrix product first; the greedy order does two matvecs
    ir = _optimized_ir(
        lambda a, b, c: tt.einsum("ij,jk,k->i", a, b, c),
        tt.ones((40, 40)),
        tt.ones((40, 40)),
        tt.ones((40,)),
    )
    assert ir.count("matmul") == 2 and "f32[40,40] = matmul" not in ir


def test_dot_products_along_a_batch_are_one_fused_loop():
    ir = _optimized_ir(lambda a, b: tt.einsum("bi,bi->b", a, b), tt.ones((8, 64)), tt.ones((8, 64)))
    assert "matmul" not in ir and ir.count("fused") == 1


def test_einsum_gradients_of_a_diagonal_and_a_product_match_numpy():
    x, a, b = normal(3, 3), normal(2, 3), normal(3, 4)
    xs = [tt.constant(v) for v in (x, a, b)]
    weight = normal(2, 4)
    with tt.GradientTape() as tape:
        tape.watch(xs)
        y = tt.reduce_sum(tt.einsum("ii->i", xs[0]) * [1.0, 2.0, 3.0])
        y += tt.reduce_sum(tt.einsum("ij,jk->ik", xs[1], xs[2]) * weight)
    gx, ga, gb = tape.gradient(y, xs)
    np.testing.assert_allclose(gx.numpy(), np.diag([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(ga.numpy(), weight @ b.T)
    np.testing.assert_allclose(gb.numpy(), a.T @ weight)


def test_einsum_gradient_in_float32_compiled():
    a, b = normal(2, 3, 4, dtype=np.float32), normal(2, 4, 5, dtype=np.float32)

    @tt.function
    def grads(a, b):
        with tt.GradientTape() as tape:
            tape.watch([a, b])
            y = tt.reduce_sum(tt.einsum("bij,bjk->bik", a, b) ** 2)
        return tape.gradient(y, [a, b])

    ga, gb = grads(a, b)
    c = a @ b
    assert ga.dtype == tt.float32
    np.testing.assert_allclose(ga.numpy(), 2 * c @ np.swapaxes(b, 1, 2), rtol=1e-5)
    np.testing.assert_allclose(gb.numpy(), 2 * np.swapaxes(a, 1, 2) @ c, rtol=1e-5)


# --- einsum: errors -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "equation,shapes,pattern",
    [
        ("ij,jk->ik", [(2, 3, 1), (3, 2)], r"operand 0 has rank 3, but its subscripts 'ij' name 2"),
        ("...ijk", [(2, 3)], r"operand 0 has rank 2, but its subscripts '...ijk' name at least 3"),
        (
            "ij,jk->ik",
            [(2, 3), (4, 2)],
            r"label 'j' .* size 3 in operand 0 but size 4 in operand 1",
        ),
        ("ii->i", [(2, 3)], r"label 'i' .* size 2 in operand 0 but size 3 in operand 0"),
        ("ij,ij->ij", [(3, 1), (3, 4)], r"label 'j' .* size 1 in operand 0 but size 4"),
        ("i1,jk", [(2, 3), (3, 4)], r"'1' in the equation 'i1,jk' is not a label"),
        ("ij.,jk->ik", [(2, 3), (3, 2)], r"'\.' in the equation .* is not a label"),
        ("ij,jk->ik", [(2, 3)], r"subscripts for 2 operand\(s\), but 1 operand\(s\) were given"),
        ("ij->ij->", [(2, 3)], r"more than one '->'"),
        ("ij->ii", [(3, 3)], r"names 'i' more than once"),
        ("ij->k", [(3, 3)], r"names 'k', which no operand has"),
        (
            "...ij->ij",
            [(2, 3, 4)],
            r"'\.\.\.' of '\.\.\.ij->ij' cover 1 axes, but the output has no",
        ),
        ("...ij,...jk->...ik", [(2, 2, 3), (3, 3, 4)], r"axes under '\.\.\.' do not broadcast"),
    ],
)
def test_einsum_errors_say_what_is_wrong(equation, shapes, pattern):
    with pytest.raises(ValueError, match=pattern):
        tt.einsum(equation, *[normal(*s) for s in shapes])


def test_einsum_refuses_mixed_dtypes_no_operands_and_unknown_arguments():
    with pytest.raises(TypeError, match="operand 0 is float64 but operand 1 is float32"):
        tt.einsum("i,i", tt.constant(normal(3)), tt.constant(normal(3, dtype=np.float32)))
    with pytest.raises(ValueError, match="given no operands"):
        tt.einsum("ij")
    with pytest.raises(TypeError, match="unexpected keyword argument 'axis'"):
        tt.einsum("ij", normal(2, 2), axis=0)
    assert tt.einsum("ij->j", normal(2, 2), name="e", optimize="greedy").shape == (2,)


# --- matrix ops: values ---------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_trace_and_diag_part_of_batches_of_rectangular_matrices(dtype):
    for shape in [(3, 3), (2, 3, 4), (2, 1, 4, 3), (2, 0, 3)]:
        x = normal(*shape, dtype=dtype)
        diagonal = tt.linalg.diag_part(x)
        assert diagonal.dtype == dtype
        np.testing.assert_array_equal(diagonal.numpy(), np.diagonal(x, axis1=-2, axis2=-1))
        np.testing.assert_allclose(
            tt.linalg.trace(x).numpy(), np.trace(x, axis1=-2, axis2=-1), **tolerance(dtype)
        )


def test_diag_builds_square_or_rectangular_matrices_with_padding():
    d = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(tt.linalg.diag(d).numpy(), [np.diag(row) for row in d])
    v = tt.constant([1.0, 2.0])
    # TensorFlow's shapes: one of num_rows/num_cols given, the other is the diagonal's length
    np.testing.assert_array_equal(tt.linalg.diag(v, num_rows=3).numpy(), [[1, 0], [0, 2], [0, 0]])
    np.testing.assert_array_equal(tt.linalg.diag(v, num_cols=3).numpy(), [[1, 0, 0], [0, 2, 0]])
    np.testing.assert_array_equal(
        tt.linalg.diag(v, num_rows=2, num_cols=4).numpy(), [[1, 0, 0, 0], [0, 2, 0, 0]]
    )
    np.testing.assert_array_equal(tt.linalg.diag(v, padding_value=9).numpy(), [[1, 9], [9, 2]])
    ints = tt.linalg.diag(tt.constant([1, 2], dtype=tt.int64))
    assert ints.dtype == tt.int64


def test_set_diag_on_wide_and_tall_matrices_as_tensorflow():
    wide = np.arange(24.0).reshape(2, 3, 4)
    expected = wide.copy()
    expected[:, [0, 1, 2], [0, 1, 2]] = 1.0
    np.testing.assert_array_equal(tt.linalg.set_diag(wide, np.ones((2, 3))).numpy(), expected)
    tall = np.arange(24.0).reshape(2, 4, 3)
    expected = tall.copy()
    expected[:, [0, 1, 2], [0, 1, 2]] = -1.0
    np.testing.assert_array_equal(tt.linalg.set_diag(tall, -np.ones((2, 3))).numpy(), expected)


def test_band_part_keeps_the_band_and_negative_bounds_keep_a_whole_triangle():
    x = normal(2, 4, 5)
    i, j = np.arange(4)[:, None], np.arange(5)[None, :]
    for lower, upper in [(0, 0), (1, 0), (0, -1), (-1, 0), (2, 1), (-1, -1), (4, 5)]:
        keep = ((lower < 0) | (i - j <= lower)) & ((upper < 0) | (j - i <= upper))
        np.testing.assert_array_equal(
            tt.linalg.band_part(x, lower, upper).numpy(), np.where(keep, x, 0.0)
        )
    ones = tt.ones((3, 3), dtype=tt.int32)
    np.testing.assert_array_equal(
        tt.linalg.band_part(ones, 0, -1).numpy(), np.triu(np.ones((3, 3)))
    )
    assert tt.linalg.band_part(x, tt.constant(1), tt.constant(0)).shape == (2, 4, 5)


def test_matvec_broadcasts_batches_and_transposes():
    a, b = normal(2, 3, 4), normal(4)
    np.testing.assert_allclose(tt.linalg.matvec(a, b).numpy(), a @ b)
    a, b = normal(3, 4), normal(2, 4)
    np.testing.assert_allclose(tt.linalg.matvec(a, b).numpy(), b @ a.T)
    a = normal(4, 3)
    np.testing.assert_allclose(tt.linalg.matvec(a, b, transpose_a=True).numpy(), b @ a)
    z = normal(2, 2) + 1j * normal(2, 2)
    v = np.array([1 + 1j, 1 + 1j])
    np.testing.assert_allclose(tt.linalg.matvec(z, v, adjoint_a=True).numpy(), z.conj().T @ v)


def test_adjoint_and_matrix_transpose_conjugate_only_when_asked():
    z = normal(2, 3, 2) + 1j * normal(2, 3, 2)
    swapped = np.swapaxes(z, -1, -2)
    np.testing.assert_array_equal(tt.linalg.matrix_transpose(z).numpy(), swapped)
    np.testing.assert_array_equal(
        tt.linalg.matrix_transpose(z, conjugate=True).numpy(), swapped.conj()
    )
    np.testing.assert_array_equal(tt.linalg.adjoint(z).numpy(), swapped.conj())
    x = normal(3, 2)
    np.testing.assert_array_equal(tt.linalg.adjoint(x).numpy(), x.T)


def test_linalg_eye_norm_and_einsum_are_the_top_level_functions():
    assert tt.linalg.eye is tt.eye and tt.linalg.norm is tt.norm and tt.linalg.einsum is tt.einsum
    np.testing.assert_array_equal(tt.linalg.eye(2, 3).numpy(), np.eye(2, 3))


# --- matrix ops: gradients (as TensorFlow's), compiled code, batching -------------------------


def test_gradients_are_tensorflows():
    x, d = normal(2, 3, 4), normal(2, 3)
    g = normal(2, 3, 4)
    xs = [tt.constant(x), tt.constant(d)]
    with tt.GradientTape(persistent=True) as tape:
        tape.watch(xs)
        set_diag = tt.reduce_sum(tt.linalg.set_diag(xs[0], xs[1]) * g)
        band = tt.reduce_sum(tt.linalg.band_part(xs[0], 0, 1) * g)
        trace = tt.reduce_sum(tt.linalg.trace(xs[0]) * [2.0, 3.0])
        diag = tt.reduce_sum(tt.linalg.diag(xs[1], num_cols=4) * g)
    rows, columns = [0, 1, 2], [0, 1, 2]
    gx, gd = tape.gradient(set_diag, xs)
    expected = g.copy()
    expected[:, rows, columns] = 0  # set_diag's input loses its diagonal's gradient
    np.testing.assert_array_equal(gx.numpy(), expected)
    np.testing.assert_array_equal(gd.numpy(), g[:, rows, columns])
    i, j = np.arange(3)[:, None], np.arange(4)[None, :]
    np.testing.assert_array_equal(
        tape.gradient(band, xs[0]).numpy(), np.where((i - j <= 0) & (j - i <= 1), g, 0)
    )
    expected = np.zeros((2, 3, 4))
    expected[:, rows, columns] = [[2.0], [3.0]]
    np.testing.assert_array_equal(tape.gradient(trace, xs[0]).numpy(), expected)
    np.testing.assert_array_equal(tape.gradient(diag, xs[1]).numpy(), g[:, rows, columns])


def test_a_band_mask_is_computed_inside_the_loop_that_reads_it():
    concrete = tt.function(lambda x: tt.linalg.band_part(x, 1, -1)).get_concrete_function(
        tt.ones((2, 80, 80))
    )
    ir = concrete.ir("optimized")
    assert "const" not in ir and ir.count("fused") == 1 and "band_mask" in ir
    assert "<= 1" in concrete.c_source()


@pytest.mark.parametrize("lower,upper", [(0, 0), (2, -1), (-1, 1), (-1, -1)])
def test_band_mask_kernel_and_c_agree(lower, upper):
    compiled = tt.function(lambda: tt.cast(band_mask((2, 70, 90), lower, upper), tt.float32))
    np.testing.assert_array_equal(
        compiled().numpy(), band_mask((2, 70, 90), lower, upper).numpy().astype(np.float32)
    )


def test_shape_polymorphic_compiled_functions():
    @tt.function(
        input_signature=[
            tt.TensorSpec([None, 3, 3], tt.float64),
            tt.TensorSpec([None, 3], tt.float64),
        ]
    )
    def f(x, d):
        square = tt.einsum("bij,bjk->bik", x, x)
        return tt.linalg.set_diag(square, d) + tt.linalg.trace(x)[:, None, None]

    for batch in (1, 4):
        x, d = normal(batch, 3, 3), normal(batch, 3)
        expected = x @ x
        expected[:, [0, 1, 2], [0, 1, 2]] = d
        expected += np.trace(x, axis1=1, axis2=2)[:, None, None]
        np.testing.assert_allclose(f(x, d).numpy(), expected)


def test_vectorized_map_of_einsum_and_matrix_ops_matches_a_python_loop():
    def per_example(x):
        return tt.linalg.set_diag(tt.einsum("ij,jk->ik", x, x), tt.linalg.diag_part(x) * 2.0)

    xs = normal(4, 3, 3)
    looped = np.stack([per_example(tt.constant(x)).numpy() for x in xs])
    np.testing.assert_allclose(tt.vectorized_map(per_example, tt.constant(xs)).numpy(), looped)


def test_vectorized_and_looped_jacobians_agree():
    a, b = tt.constant(normal(2, 3)), tt.constant(normal(3, 3))
    with tt.GradientTape(persistent=True) as tape:
        tape.watch([a, b])
        y = tt.linalg.band_part(tt.einsum("ij,jk->ik", a, tt.linalg.set_diag(b, a[0])), 0, 1)
    for source in (a, b):
        vectorized = tape.jacobian(y, source)
        looped = tape.jacobian(y, source, experimental_use_pfor=False)
        np.testing.assert_allclose(vectorized.numpy(), looped.numpy())


# --- other diagonals than the main one (k, align) -----------------------------------------

# The values TensorFlow 2.21 printed for the same calls (tf.linalg.diag_part, diag, set_diag),
# on MATRICES = arange(1, 25) as (2, 3, 4) float32, DIAGONALS = arange(1, 10) as (3, 3)
MATRICES = np.arange(1, 25, dtype=np.float32).reshape(2, 3, 4)
DIAGONALS = np.arange(1, 10, dtype=np.float32).reshape(3, 3)
TF_DIAGONALS = [
    (lambda: tt.linalg.diag_part(MATRICES, k=-1), [[5, 10], [17, 22]]),
    (
        lambda: tt.linalg.diag_part(MATRICES, k=(-1, 1), padding_value=9),
        [[[2, 7, 12], [1, 6, 11], [5, 10, 9]], [[14, 19, 24], [13, 18, 23], [17, 22, 9]]],
    ),
    (
        lambda: tt.linalg.diag_part(MATRICES, k=(1, 2), padding_value=9, align="LEFT_LEFT"),
        [[[3, 8, 9], [2, 7, 12]], [[15, 20, 9], [14, 19, 24]]],
    ),
    (
        lambda: tt.linalg.diag_part(MATRICES, k=(1, 2), padding_value=9, align="RIGHT_RIGHT"),
        [[[9, 3, 8], [2, 7, 12]], [[9, 15, 20], [14, 19, 24]]],
    ),
    (
        lambda: tt.linalg.diag_part(MATRICES, k=(-2, 3), padding_value=9, align="LEFT_RIGHT"),
        [
            [[4, 9, 9], [3, 8, 9], [2, 7, 12], [1, 6, 11], [9, 5, 10], [9, 9, 9]],
            [[16, 9, 9], [15, 20, 9], [14, 19, 24], [13, 18, 23], [9, 17, 22], [9, 9, 21]],
        ],
    ),
    (
        lambda: tt.linalg.diag(DIAGONALS[0], k=1, num_cols=5),
        [[0, 1, 0, 0, 0], [0, 0, 2, 0, 0], [0, 0, 0, 3, 0]],
    ),
    (
        lambda: tt.linalg.diag(DIAGONALS, k=(-1, 1), padding_value=-1),
        [[4, 2, -1], [7, 5, 3], [-1, 8, 6]],
    ),
    (
        lambda: tt.linalg.diag(DIAGONALS, k=(0, 2), num_rows=3, align="LEFT_RIGHT"),
        [[7, 4, 1], [0, 8, 5], [0, 0, 9]],
    ),
    (
        lambda: tt.linalg.diag(DIAGONALS, k=(-2, 0), num_cols=3, align="RIGHT_RIGHT"),
        [[1, 0, 0], [5, 2, 0], [9, 6, 3]],
    ),
    (
        lambda: tt.linalg.set_diag(
            MATRICES,
            np.arange(100, 118, dtype=np.float32).reshape(2, 3, 3),
            k=(-1, 1),
            align="LEFT_LEFT",
        ),  # fmt: skip
        [
            [[103, 100, 3, 4], [106, 104, 101, 8], [9, 107, 105, 102]],
            [[112, 109, 15, 16], [115, 113, 110, 20], [21, 116, 114, 111]],
        ],
    ),
    (
        lambda: tt.linalg.set_diag(MATRICES, np.float32([[7, 8], [5, 6]]), k=-1),
        [
            [[1, 2, 3, 4], [7, 6, 7, 8], [9, 8, 11, 12]],
            [[13, 14, 15, 16], [5, 18, 19, 20], [21, 6, 23, 24]],
        ],
    ),
]


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("case", range(len(TF_DIAGONALS)))
def test_other_diagonals_are_tensorflows(case, compiled):
    function, expected = TF_DIAGONALS[case]
    got = tt.function(function)() if compiled else function()
    np.testing.assert_array_equal(got.numpy(), np.float32(expected))


def test_the_gradients_of_other_diagonals_are_tensorflows():
    x, d = tt.constant(MATRICES), tt.constant(DIAGONALS)
    weights = np.arange(12, dtype=np.float32).reshape(4, 3)
    with tt.GradientTape(persistent=True) as tape:
        tape.watch([x, d])
        part = tt.linalg.diag_part(x, k=(-1, 2), padding_value=5.0)
        read = tt.reduce_sum(part * part)
        laid = tt.linalg.diag(d, k=(-1, 1), num_rows=4, padding_value=2.0)
        written = tt.reduce_sum(laid**2 * weights)
    np.testing.assert_array_equal(
        tape.gradient(read, x).numpy(),
        [
            [[2, 4, 6, 0], [10, 12, 14, 16], [0, 20, 22, 24]],
            [[26, 28, 30, 0], [34, 36, 38, 40], [0, 44, 46, 48]],
        ],
    )
    np.testing.assert_array_equal(
        tape.gradient(written, d).numpy(), [[0, 4, 30], [0, 40, 96], [42, 112, 198]]
    )


def test_other_diagonals_refuse_what_tensorflow_refuses_naming_it():
    matrices = tt.constant(MATRICES)
    with pytest.raises(tt.errors.InvalidArgumentError, match=r"k = \(1, 0\): the first"):
        tt.linalg.diag_part(matrices, k=(1, 0))
    for k in (4, -3):  # diagonals of 3 x 4 matrices run from -2 to 3
        with pytest.raises(ValueError, match="outside 3 x 4 matrices .* from -2 to 3"):
            tt.linalg.diag_part(matrices, k=k)
    with pytest.raises(ValueError, match="align must be one of"):
        tt.linalg.diag_part(matrices, k=1, align="CENTER")
    with pytest.raises(ValueError, match="do not fit 5 x 6 matrices"):
        tt.linalg.diag(DIAGONALS[0], k=1, num_rows=5, num_cols=6)
    with pytest.raises(ValueError, match=r"diagonals -1..1 are 3 rows of `diagonal`"):
        tt.linalg.diag(DIAGONALS[:2], k=(-1, 1))
    with pytest.raises(ValueError, match="are 2 long, but `diagonal` has 3"):
        tt.linalg.set_diag(matrices, tt.zeros((2, 3)), k=2)
    with pytest.raises(ValueError, match="k must be an int or a pair"):
        tt.linalg.diag_part(matrices, k=(0, 1, 2))


# --- matrix ops: errors -------------------------------------------------------------------


def test_matrix_ops_refuse_bad_arguments_naming_them():
    with pytest.raises(ValueError, match=r"trace: `x` must be a \(batch of\) matrices"):
        tt.linalg.trace(tt.ones(3))
    with pytest.raises(ValueError, match="diag_part: `input` must be"):
        tt.linalg.diag_part(tt.ones(3))
    with pytest.raises(ValueError, match="diag: `diagonal` must have rank 1"):
        tt.linalg.diag(tt.constant(3.0))
    with pytest.raises(ValueError, match="does not fit 1 x 2 matrices"):
        tt.linalg.diag(tt.ones(2), num_rows=1)
    with pytest.raises(ValueError, match=r"`diagonal` must have shape \(2, 3\)"):
        tt.linalg.set_diag(tt.ones((2, 3, 4)), tt.ones((2, 4)))
    with pytest.raises(ValueError, match="`num_lower` must be negative or at most 3"):
        tt.linalg.band_part(tt.ones((3, 3)), 5, 0)
    with pytest.raises(ValueError, match="`num_upper` must be negative or at most 4"):
        tt.linalg.band_part(tt.ones((3, 4)), 0, 5)
    with pytest.raises(ValueError, match="only one of `transpose_a` and `adjoint_a`"):
        tt.linalg.matvec(tt.ones((2, 2)), tt.ones(2), transpose_a=True, adjoint_a=True)
    with pytest.raises(ValueError, match="matvec: `b` must be"):
        tt.linalg.matvec(tt.ones((2, 2)), tt.constant(1.0))
    with pytest.raises(ValueError, match="matrix_transpose: `a` must be"):
        tt.linalg.matrix_transpose(tt.ones(3))


@pytest.mark.parametrize("dtype, atol", [(np.float64, 1e-9), (np.float32, 2e-3)])
def test_a_few_outputs_over_long_columns_are_summed_in_chunks_in_c(dtype, atol):
    """a^T b with a (20000, 9) and b (20000, 32), a convolution's weight gradient: the module
    sums rows in chunks on the cores instead of calling the BLAS (linalg_ops._split_k); the
    values are numpy's (entries of size ~140), the bits the same at every call."""
    rng = np.random.default_rng(0)
    a = rng.normal(size=(20000, 9)).astype(dtype)
    b = rng.normal(size=(20000, 32)).astype(dtype)
    product = tt.function(lambda a, b: tt.matmul(a, b, transpose_a=True), backend="c")
    got = [product(a, b).numpy() for _ in range(5)]
    np.testing.assert_allclose(got[0], a.T.astype(np.float64) @ b, rtol=0, atol=atol)
    assert all(np.array_equal(g, got[0]) for g in got) and got[0].dtype == dtype
    assert "ordered" in product.get_concrete_function(a, b).c_source()
    small = tt.function(lambda a, b: tt.matmul(a, b, transpose_a=True), backend="c")
    assert "ordered" not in small.get_concrete_function(a[:100], b[:100]).c_source()

    specs = [tt.TensorSpec([None, 3], dtype), tt.TensorSpec(a.shape, dtype)]

    @tt.function(backend="c", input_signature=specs + [tt.TensorSpec(b.shape, dtype)])
    def with_a_size_known_when_it_runs(x, a, b):  # every kernel then takes the sizes
        return x * 2.0, tt.matmul(a, b, transpose_a=True)

    x = np.ones((4, 3), dtype)
    doubled, same = with_a_size_known_when_it_runs(x, a, b)
    np.testing.assert_array_equal(same.numpy(), got[0])
    np.testing.assert_array_equal(doubled.numpy(), 2 * x)


@pytest.mark.parametrize("backend", ["eager", "c", "interpreter"])
@pytest.mark.parametrize("ord", ["fro", "euclidean", 1, 2, np.inf])
@pytest.mark.parametrize("axis", [(0, 1), (1, 0), (-1, -3)])
def test_norm_over_two_axes_is_a_matrix_norm_as_numpys(backend, ord, axis):
    """tf.norm over two axes is the matrix norm (ord 1 the largest column sum, np.inf the
    largest row sum, 2 the largest singular value); it was the vector norm of all elements
    (5.5 for ord=1 was 11.4, for ord=2 4.06 was the Frobenius 4.65)."""
    matrices = normal(3, 4, 5)
    run = (lambda f: f) if backend == "eager" else (lambda f: tt.function(f, backend=backend))
    x = tt.constant(matrices)
    value = run(lambda m: tt.norm(m, ord=ord, axis=axis, keepdims=True))(x).numpy()
    want_ord = "fro" if ord == "euclidean" else ord
    np.testing.assert_allclose(
        value, np.linalg.norm(matrices, want_ord, axis=axis, keepdims=True), rtol=1e-12
    )
    if ord == 2:  # d sigma_max / dA = u1 v1^T
        with tt.GradientTape() as tape:
            tape.watch(x)
            largest = tt.reduce_sum(tt.norm(x, ord=2, axis=(1, 2)))
        got = tape.gradient(largest, x).numpy()
        u, _, vt = np.linalg.svd(matrices)
        np.testing.assert_allclose(got, u[..., :, :1] * vt[..., :1, :], atol=1e-12)


def test_vector_p_norms_and_refused_matrix_orders():
    v = np.array([1.0, -2.0, 3.0])
    np.testing.assert_allclose(tt.norm(tt.constant(v), ord=3).numpy(), np.linalg.norm(v, 3))
    with pytest.raises(ValueError, match="matrix norm"):
        tt.norm(tt.constant(normal(2, 2)), ord=3, axis=(0, 1))


def test_eigvalsh_normalize_and_matrix_rank_as_tensorflows():
    """TF 2.21: eigvalsh of [[2, 1], [1, 3]] is [1.3819659, 3.6180334]; normalize of
    [[3, 4], [0, 5]] over axis 1 is ([[.6, .8], [0, 1]], [[5], [5]]); the rank of
    [[1, 2], [2, 4]] is 1, of eye(3) 3, of diag(1, 1e-9) with tol 1e-6 [1] (int64)."""
    np.testing.assert_allclose(
        tt.linalg.eigvalsh(tt.constant([[2.0, 1.0], [1.0, 3.0]])).numpy(),
        [1.3819659, 3.6180334],
        rtol=1e-6,
    )
    unit, size = tt.linalg.normalize(tt.constant([[3.0, 4.0], [0.0, 5.0]]), axis=1)
    np.testing.assert_allclose(unit.numpy(), [[0.6, 0.8], [0.0, 1.0]], rtol=1e-6)
    np.testing.assert_allclose(size.numpy(), [[5.0], [5.0]])
    rank = tt.function(tt.linalg.matrix_rank, backend="c")
    assert int(rank(tt.constant([[1.0, 2.0], [2.0, 4.0]]))) == 1
    assert int(tt.linalg.matrix_rank(tt.eye(3))) == 3
    small = tt.linalg.matrix_rank(tt.constant([[[1.0, 0.0], [0.0, 1e-9]]]), tol=1e-6)
    assert small.dtype == tt.int64 and small.numpy().tolist() == [1]
