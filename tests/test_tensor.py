"""Tensors, variables and dtypes, as API.md ("Tensors and dtypes", "Variables") fixes them.

Values are checked against numpy; strings whose format the API fixes are checked exactly.
"""

import operator

import numpy as np
import pytest

import tracer as tt

ALL_DTYPES = [
    ("float16", np.float16, True, False, False),
    ("float32", np.float32, True, False, False),
    ("float64", np.float64, True, False, False),
    ("int32", np.int32, False, True, False),
    ("int64", np.int64, False, True, False),
    ("bool", np.bool_, False, False, False),
    ("complex64", np.complex64, False, False, True),
    ("complex128", np.complex128, False, False, True),
]


def _values(t):
    """The tensor's value as a numpy array, checking it is a tracer Tensor first."""
    assert isinstance(t, tt.Tensor), f"expected a tracer Tensor, got {type(t).__name__}"
    return np.asarray(t.numpy())


def assert_tensor(t, expected, dtype=None, rtol=1e-12):
    """`t` is a Tensor with the value, shape and (numpy) dtype of `expected`."""
    got = _values(t)
    expected = np.asarray(expected)
    assert t.shape == expected.shape
    assert got.dtype == (expected.dtype if dtype is None else np.dtype(dtype))
    if got.dtype.kind in "fc":
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=0)
    else:
        np.testing.assert_array_equal(got, expected)


# --- dtypes -----------------------------------------------------------------------------


@pytest.mark.parametrize("name, np_type, floating, integer, complex_", ALL_DTYPES)
def test_dtype_objects(name, np_type, floating, integer, complex_):
    dtype = getattr(tt, name)
    assert isinstance(dtype, tt.DType)
    assert dtype.name == name
    assert dtype.is_floating is floating
    assert dtype.is_integer is integer
    assert dtype.is_complex is complex_
    assert dtype.as_numpy_dtype is np_type
    assert dtype == np_type
    assert dtype == np.dtype(np_type)
    assert not (dtype != np_type)


def test_dtypes_differ_from_each_other_and_from_other_numpy_dtypes():
    names = [row[0] for row in ALL_DTYPES]
    for a in names:
        for b in names:
            assert (getattr(tt, a) == getattr(tt, b)) is (a == b)
            assert (getattr(tt, a) == np.dtype(b)) is (a == b)
    assert tt.float32 != np.float64
    assert tt.int32 != np.int64
    assert tt.float32 != "not a dtype at all"


def test_as_dtype_accepts_names_numpy_types_and_dtypes():
    assert tt.as_dtype("float64") is tt.float64
    assert tt.as_dtype(np.int32) is tt.int32
    assert tt.as_dtype(np.dtype("complex64")) is tt.complex64
    assert tt.as_dtype(tt.bool) is tt.bool


def test_dtype_of_tensor_compares_equal_to_numpy_dtype():
    t = tt.constant(np.zeros(3, dtype=np.float64))
    assert t.dtype == tt.float64
    assert t.dtype == np.float64
    assert t.dtype is tt.float64


# --- constant / convert_to_tensor default dtypes ------------------------------------------


@pytest.mark.parametrize("make", [tt.constant, tt.convert_to_tensor])
@pytest.mark.parametrize(
    "value, dtype",
    [
        (1.5, tt.float32),
        (3, tt.int32),
        (True, tt.bool),
        (False, tt.bool),
        (1 + 2j, tt.complex128),
        ([1.0, 2.0], tt.float32),
        ([1, 2, 3], tt.int32),
        ([1, 2.5], tt.float32),
        ([[1, 2], [3, 4]], tt.int32),
        ([True, False], tt.bool),
        ((1.0, 2.0), tt.float32),
        (np.array([1.0, 2.0]), tt.float64),
        (np.array([1.0, 2.0], dtype=np.float32), tt.float32),
        (np.array([1.0], dtype=np.float16), tt.float16),
        (np.array([1, 2], dtype=np.int64), tt.int64),
        (np.array([1, 2], dtype=np.int32), tt.int32),
        (np.array([True]), tt.bool),
        (np.array([1j], dtype=np.complex64), tt.complex64),
        (np.float64(2.0), tt.float64),
        (np.float32(2.0), tt.float32),
        (np.int64(7), tt.int64),
    ],
)
def test_default_dtypes(make, value, dtype):
    t = make(value)
    assert isinstance(t, tt.Tensor)
    assert t.dtype == dtype
    assert t.dtype is dtype
    np.testing.assert_array_equal(t.numpy(), np.asarray(value))
    assert t.shape == np.asarray(value).shape


@pytest.mark.parametrize("make", [tt.constant, tt.convert_to_tensor])
def test_large_python_ints_and_empty_lists(make):
    assert make(2**40).dtype == tt.int64
    assert make(2**40).numpy() == 2**40
    empty = make([])
    assert empty.dtype == tt.float32 and empty.shape == (0,)


@pytest.mark.parametrize("make", [tt.constant, tt.convert_to_tensor])
def test_explicit_dtype(make):
    t = make(2, dtype=tt.float64)
    assert t.dtype == tt.float64
    assert t.numpy() == 2.0
    t = make([1, 2], dtype=tt.float32)
    assert t.dtype == tt.float32
    assert_tensor(t, np.array([1.0, 2.0], dtype=np.float32))
    t = make(np.array([1.5, 2.5]), dtype=tt.float32)
    assert_tensor(t, np.array([1.5, 2.5], dtype=np.float32))
    t = make(3.0, dtype=np.float64)
    assert t.dtype == tt.float64


def test_convert_to_tensor_passes_tensors_through_and_reads_variables():
    t = tt.constant([1.0, 2.0])
    assert tt.convert_to_tensor(t) is t
    v = tt.Variable([3.0, 4.0])
    read = tt.convert_to_tensor(v)
    assert type(read) is tt.Tensor
    assert_tensor(read, np.array([3.0, 4.0], dtype=np.float32))


def test_constant_with_shape_fills_a_scalar():
    t = tt.constant(0.5, shape=(2, 3))
    assert t.shape == (2, 3)
    assert_tensor(t, np.full((2, 3), 0.5, dtype=np.float32))
    t = tt.constant(7, shape=[4])
    assert_tensor(t, np.full((4,), 7, dtype=np.int32))
    t = tt.constant(1.0, dtype=tt.float64, shape=(2,))
    assert_tensor(t, np.ones(2))


def test_constant_with_shape_reshapes_a_value_of_the_same_size():
    t = tt.constant([1, 2, 3, 4, 5, 6], shape=(2, 3))
    assert_tensor(t, np.arange(1, 7, dtype=np.int32).reshape(2, 3))
    t = tt.constant(np.arange(6.0), shape=(3, 2))
    assert_tensor(t, np.arange(6.0).reshape(3, 2))


def test_constant_with_an_incompatible_shape_raises_type_error():
    # TensorFlow: "Eager execution of tf.constant with unsupported shape" (a TypeError).
    with pytest.raises(TypeError):
        tt.constant([1, 2, 3], shape=(2, 2))


def test_constant_copies_its_numpy_input():
    array = np.array([1.0, 2.0])
    t = tt.constant(array)
    array[0] = 100.0
    assert_tensor(t, np.array([1.0, 2.0]))


def test_constant_of_nested_list_with_tensors():
    t = tt.constant([tt.constant(1.0), 2.0])
    assert_tensor(t, np.array([1.0, 2.0], dtype=np.float32))


# --- str / repr ---------------------------------------------------------------------------


def test_str_and_repr_of_a_scalar():
    t = tt.constant(6.0)
    assert str(t) == "tracer.Tensor(6.0, shape=(), dtype=float32)"
    assert repr(t) == "<tracer.Tensor: shape=(), dtype=float32, numpy=6.0>"


def test_str_and_repr_of_computed_scalar():
    x = tt.constant(3.0)
    t = x * x - 3.0
    assert str(t) == "tracer.Tensor(6.0, shape=(), dtype=float32)"
    assert repr(t) == "<tracer.Tensor: shape=(), dtype=float32, numpy=6.0>"
    t = tt.constant([1.0, 6.0])[1]
    assert str(t) == "tracer.Tensor(6.0, shape=(), dtype=float32)"
    assert repr(t) == "<tracer.Tensor: shape=(), dtype=float32, numpy=6.0>"


def test_str_and_repr_of_other_scalars():
    assert str(tt.constant(3)) == "tracer.Tensor(3, shape=(), dtype=int32)"
    assert repr(tt.constant(3)) == "<tracer.Tensor: shape=(), dtype=int32, numpy=3>"
    assert str(tt.constant(True)) == "tracer.Tensor(True, shape=(), dtype=bool)"
    assert repr(tt.constant(False)) == "<tracer.Tensor: shape=(), dtype=bool, numpy=False>"
    assert str(tt.constant(2.5, dtype=tt.float64)) == "tracer.Tensor(2.5, shape=(), dtype=float64)"


def test_str_and_repr_of_a_vector():
    t = tt.constant([1.0, 2.0])
    assert str(t) == "tracer.Tensor([1. 2.], shape=(2,), dtype=float32)"
    assert repr(t) == (
        "<tracer.Tensor: shape=(2,), dtype=float32, numpy=array([1., 2.], dtype=float32)>"
    )
    t = tt.constant([1, 2, 3])
    assert str(t) == "tracer.Tensor([1 2 3], shape=(3,), dtype=int32)"
    assert repr(t) == (
        "<tracer.Tensor: shape=(3,), dtype=int32, numpy=array([1, 2, 3], dtype=int32)>"
    )


def test_str_of_a_matrix_starts_the_values_on_a_new_line():
    t = tt.constant([[1, 2], [3, 4]])
    assert str(t) == "tracer.Tensor(\n[[1 2]\n [3 4]], shape=(2, 2), dtype=int32)"


# --- shape, ndim, numpy and Python conversions --------------------------------------------


def test_shape_compares_equal_to_a_tuple():
    t = tt.constant(np.zeros((2, 3, 4)))
    assert t.shape == (2, 3, 4)
    assert tuple(t.shape) == (2, 3, 4)
    assert t.shape[0] == 2 and t.shape[-1] == 4
    assert len(t.shape) == 3
    assert all(isinstance(d, int) for d in t.shape)
    assert tt.constant(1.0).shape == ()
    assert tt.constant([1.0]).shape == (1,)
    assert tt.constant(np.zeros((0, 3))).shape == (0, 3)


def test_a_shapes_dims_are_dimensions():
    """TensorFlow 2.21 printed [Dimension(16), Dimension(None), Dimension(256)] for
    TensorShape([16, None, 256]).dims (the shape's items are ints), `?` for str(dims[1]),
    and [] for TensorShape([]).dims."""
    shape = tt.TensorShape([16, None, 256])
    assert repr(shape.dims) == "[Dimension(16), Dimension(None), Dimension(256)]"
    assert str(shape.dims[1]) == "?" and type(shape[0]) is int
    assert shape.dims[0].is_compatible_with(16) and shape.dims[1].is_compatible_with(16)
    assert tt.TensorShape([]).dims == []
    assert [d.value for d in tt.constant(np.zeros((2, 3))).shape.dims] == [2, 3]


def test_a_shape_of_known_rank_is_true():
    """TensorFlow 2.21 printed True for bool(TensorShape(s)) with s = [], [0], [1], [None],
    [1, 10, 100] and [None, None, None] (a known rank, a scalar's too); len() and iteration
    of a scalar tensor still raise."""
    for dims in ([], [0], [1], [None], [1, 10, 100], [None, None, None]):
        assert bool(tt.TensorShape(dims)) is True
    scalar = tt.constant(1.0)
    assert scalar.shape and scalar.shape == () and len(scalar.shape) == 0
    with pytest.raises(TypeError, match="len"):
        len(scalar)
    with pytest.raises(TypeError, match="iteration"):
        iter(scalar)
    assert tt.vectorized_map(lambda r: r * 2.0, tt.constant([1.0, 2.0])).numpy().tolist() == [
        2.0,
        4.0,
    ]


def test_a_shape_of_unknown_rank():
    """TensorFlow 2.21 printed, for TensorShape(None): TensorShape(None) <unknown> None None
    None False False None (repr, str, rank, ndims, dims, bool, is_fully_defined,
    num_elements); == TensorShape(None) True, == () False, [0] None, [1:] TensorShape(None);
    these ValueErrors for len, as_list and iteration; concatenating gives TensorShape(None);
    and TensorSpec(TensorShape(None)) prints shape=<unknown>."""
    unknown = tt.TensorShape(None)
    assert (repr(unknown), str(unknown)) == ("TensorShape(None)", "<unknown>")
    assert unknown.rank is None and unknown.ndims is None and unknown.dims is None
    assert not unknown and not unknown.is_fully_defined() and unknown.num_elements() is None
    assert unknown == tt.TensorShape(None) and unknown != () and unknown != tt.TensorShape([])
    assert unknown[0] is None and repr(unknown[1:]) == "TensorShape(None)"
    with pytest.raises(ValueError, match="^Cannot take the length of shape with unknown rank.$"):
        len(unknown)
    with pytest.raises(
        ValueError, match="^as_list\\(\\) is not defined on an unknown TensorShape.$"
    ):
        unknown.as_list()
    with pytest.raises(ValueError, match="^Cannot iterate over a shape with unknown rank.$"):
        list(unknown)
    assert repr(unknown.concatenate([2])) == repr(tt.TensorShape([1]).concatenate(unknown))
    assert repr(tt.TensorShape(unknown)) == "TensorShape(None)"
    assert str(tt.TensorSpec(unknown, tt.float32)) == (
        "TensorSpec(shape=<unknown>, dtype=tt.float32, name=None)"
    )
    x = tt.constant([1.0, 2.0])
    x.set_shape(unknown)
    assert tt.ensure_shape(x, unknown) is not None


def test_tensors_and_variables_are_unhashable():
    # TensorFlow 2: `==` is elementwise, so tensors and variables cannot be dict keys.
    with pytest.raises(TypeError):
        hash(tt.constant(1.0))
    with pytest.raises(TypeError):
        hash(tt.Variable(1.0))
    assert {tt.float32: "f"}[tt.float32] == "f"


def test_ndim():
    assert tt.constant(1.0).ndim == 0
    assert tt.constant([1.0, 2.0]).ndim == 1
    assert tt.constant(np.zeros((2, 3, 4))).ndim == 3
    assert tt.Variable(np.zeros((2, 5))).ndim == 2


def test_numpy_returns_the_value():
    array = np.arange(6.0).reshape(2, 3)
    t = tt.constant(array)
    out = t.numpy()
    assert isinstance(out, np.ndarray)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, array)
    scalar = tt.constant(2.5).numpy()
    assert np.ndim(scalar) == 0
    assert scalar.dtype == np.float32
    assert scalar == 2.5


def test_np_asarray_of_a_tensor():
    array = np.arange(6, dtype=np.int64).reshape(3, 2)
    t = tt.constant(array)
    out = np.asarray(t)
    assert out.dtype == np.int64
    assert out.shape == (3, 2)
    np.testing.assert_array_equal(out, array)
    np.testing.assert_array_equal(np.asarray(t, dtype=np.float64), array.astype(np.float64))
    np.testing.assert_allclose(np.sum(tt.constant([1.0, 2.0, 3.5])), 6.5)


def test_python_scalar_conversions():
    assert float(tt.constant(2.5)) == 2.5
    assert isinstance(float(tt.constant(2)), float)
    assert int(tt.constant(7)) == 7
    assert int(tt.constant(3.75)) == 3
    assert isinstance(int(tt.constant(7)), int)
    assert bool(tt.constant(True)) is True
    assert bool(tt.constant(False)) is False
    assert bool(tt.constant(0.0)) is False
    assert bool(tt.constant(2.0)) is True
    assert float(tt.constant(1.5, dtype=tt.float64) * 2) == 3.0


def test_python_control_flow_on_tensor_comparisons():
    x = tt.constant(3.0)
    assert (x > 2.0) and not (x < 2.0)
    branch = "big" if x > 2 else "small"
    assert branch == "big"


def test_float_of_a_many_element_tensor_raises():
    with pytest.raises(TypeError):
        float(tt.constant([1.0, 2.0]))


def test_len():
    assert len(tt.constant([1.0, 2.0, 3.0])) == 3
    assert len(tt.constant(np.zeros((4, 2)))) == 4
    assert len(tt.Variable([1.0, 2.0])) == 2
    with pytest.raises(TypeError):
        len(tt.constant(1.0))


def test_iteration_over_the_first_axis():
    array = np.arange(6.0).reshape(3, 2)
    rows = list(tt.constant(array))
    assert len(rows) == 3
    for row, expected in zip(rows, array):
        assert_tensor(row, expected)
    scalars = list(tt.constant([4, 5, 6]))
    assert [int(s) for s in scalars] == [4, 5, 6]
    assert all(isinstance(s, tt.Tensor) and s.shape == () for s in scalars)


def test_iteration_over_a_scalar_raises():
    with pytest.raises(TypeError):
        iter(tt.constant(1.0))


# --- indexing -----------------------------------------------------------------------------

INDEX_ARRAY = np.arange(60.0).reshape(3, 4, 5)

INDICES = [
    0,
    2,
    -1,
    -3,
    slice(1, 3),
    slice(None, None, 2),
    slice(None, None, -1),
    slice(-2, None),
    slice(2, 0, -1),
    slice(5, 10),
    slice(0, 0),
    (1, 2),
    (1, 2, 3),
    (-1, -1, -1),
    (slice(None), 1),
    (slice(None), slice(1, 3), slice(None, None, 2)),
    (slice(None, None, -1), slice(None, None, -2)),
    (1, slice(None, None, -2), 4),
    None,
    (None, 0),
    (slice(None), None, 2),
    (None, Ellipsis, None),
    Ellipsis,
    (Ellipsis, 0),
    (0, Ellipsis),
    (Ellipsis, slice(1, 4, 2)),
    (1, Ellipsis, None, 2),
    (np.int64(1), np.int32(-1)),
]


@pytest.mark.parametrize("index", INDICES, ids=repr)
def test_indexing_matches_numpy(index):
    t = tt.constant(INDEX_ARRAY)
    assert_tensor(t[index], INDEX_ARRAY[index])


@pytest.mark.parametrize("index", [0, -1, slice(1, None), slice(None, None, -1), None, Ellipsis])
def test_indexing_a_vector(index):
    array = np.array([1, 2, 3, 4], dtype=np.int32)
    assert_tensor(tt.constant(array)[index], array[index])


def test_indexing_with_a_scalar_int_tensor():
    array = np.arange(5.0)
    t = tt.constant(array)
    assert_tensor(t[tt.constant(3)], array[3])


def test_indexing_a_variable():
    v = tt.Variable(INDEX_ARRAY)
    out = v[1, ::2]
    assert type(out) is tt.Tensor
    assert_tensor(out, INDEX_ARRAY[1, ::2])


# --- operators ----------------------------------------------------------------------------

RNG = np.random.default_rng(0)
A = RNG.uniform(0.5, 3.0, size=(2, 3))
B = RNG.uniform(0.5, 3.0, size=(2, 3))
SIGNED_A = RNG.uniform(-3.0, 3.0, size=(2, 3))
SIGNED_B = np.array([[1.5, -2.0, 0.7], [-0.3, 2.2, -1.1]])
ROW = np.array([1.5, -0.5, 2.0])

BINARY = [
    operator.add,
    operator.sub,
    operator.mul,
    operator.truediv,
    operator.floordiv,
    operator.mod,
    operator.pow,
]
INTEGER_BINARY = [operator.add, operator.sub, operator.mul, operator.floordiv, operator.mod]
COMPARISONS = [operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne]


@pytest.mark.parametrize("op", BINARY, ids=lambda f: f.__name__)
def test_binary_operators_match_numpy(op):
    x, y = (SIGNED_A, SIGNED_B) if op is not operator.pow else (A, SIGNED_B)
    assert_tensor(op(tt.constant(x), tt.constant(y)), op(x, y))


@pytest.mark.parametrize("op", BINARY, ids=lambda f: f.__name__)
def test_binary_operators_broadcast_like_numpy(op):
    x = A if op is operator.pow else SIGNED_A
    assert_tensor(op(tt.constant(x), tt.constant(ROW)), op(x, ROW))
    column = np.array([[2.0], [0.5]])
    assert_tensor(
        op(tt.constant(column), tt.constant(ROW if op is not operator.pow else A[0])),
        op(column, ROW if op is not operator.pow else A[0]),
    )
    assert_tensor(op(tt.constant(x), tt.constant(1.75, dtype=tt.float64)), op(x, 1.75))


@pytest.mark.parametrize("op", BINARY, ids=lambda f: f.__name__)
def test_binary_operators_on_float32_keep_float32(op):
    x = A.astype(np.float32)
    y = B.astype(np.float32)
    out = op(tt.constant(x), tt.constant(y))
    assert out.dtype == tt.float32
    np.testing.assert_allclose(out.numpy(), op(x, y), rtol=1e-5)


@pytest.mark.parametrize("op", INTEGER_BINARY, ids=lambda f: f.__name__)
def test_integer_operators_match_numpy(op):
    x = np.array([[7, -7, 9], [0, 5, -11]], dtype=np.int32)
    y = np.array([[2, 2, -4], [3, -5, 3]], dtype=np.int32)
    assert_tensor(op(tt.constant(x), tt.constant(y)), op(x, y))


def test_integer_power():
    x = np.array([2, 3, -4], dtype=np.int32)
    y = np.array([3, 2, 3], dtype=np.int32)
    assert_tensor(tt.constant(x) ** tt.constant(y), x**y)
    assert_tensor(tt.constant(x) ** 2, x**2)


def test_int32_true_division_gives_float64():
    x = np.array([1, 7, -9], dtype=np.int32)
    y = np.array([2, 2, 4], dtype=np.int32)
    out = tt.constant(x) / tt.constant(y)
    assert out.dtype == tt.float64
    assert_tensor(out, x / y, dtype=np.float64)
    out = tt.constant(x) / 2
    assert out.dtype == tt.float64
    assert_tensor(out, x / 2, dtype=np.float64)
    out = 1 / tt.constant(y)
    assert out.dtype == tt.float64
    assert_tensor(out, 1 / y, dtype=np.float64)


def test_matmul_operator():
    a = RNG.normal(size=(2, 3))
    b = RNG.normal(size=(3, 4))
    assert_tensor(tt.constant(a) @ tt.constant(b), a @ b)
    batch_a = RNG.normal(size=(5, 2, 3))
    batch_b = RNG.normal(size=(5, 3, 4))
    assert_tensor(tt.constant(batch_a) @ tt.constant(batch_b), batch_a @ batch_b)
    assert_tensor(tt.constant(batch_a) @ tt.constant(b), batch_a @ b)
    assert_tensor(tt.matmul(a, b), a @ b)


def test_matmul_with_a_python_list_on_the_left():
    w = RNG.normal(size=(3, 2))
    out = [[1.0, 2.0, 3.0]] @ tt.constant(w)
    assert_tensor(out, np.array([[1.0, 2.0, 3.0]]) @ w)


def test_unary_operators():
    assert_tensor(-tt.constant(SIGNED_A), -SIGNED_A)
    assert_tensor(abs(tt.constant(SIGNED_A)), np.abs(SIGNED_A))
    ints = np.array([-3, 0, 4], dtype=np.int32)
    assert_tensor(-tt.constant(ints), -ints)
    assert_tensor(abs(tt.constant(ints)), np.abs(ints))
    assert_tensor(-tt.constant(2.0), np.float32(-2.0))


@pytest.mark.parametrize("op", COMPARISONS, ids=lambda f: f.__name__)
def test_comparisons_return_bool_tensors(op):
    x = np.array([1.0, 2.0, 3.0, 2.0])
    y = np.array([2.0, 2.0, 1.0, 5.0])
    out = op(tt.constant(x), tt.constant(y))
    assert isinstance(out, tt.Tensor)
    assert out.dtype == tt.bool
    assert_tensor(out, op(x, y))
    assert_tensor(op(tt.constant(x), 2.0), op(x, 2.0))
    assert_tensor(op(2.0, tt.constant(x)), op(2.0, x))
    column = np.array([[2.0], [3.0]])
    assert_tensor(op(tt.constant(x), tt.constant(column)), op(x, column))


@pytest.mark.parametrize("op", BINARY, ids=lambda f: f.__name__)
def test_python_scalar_takes_the_tensor_dtype(op):
    for dtype in (np.float16, np.float32, np.float64):
        x = A.astype(dtype)
        right = op(tt.constant(x), 2)
        left = op(2, tt.constant(x))
        assert right.dtype == dtype and left.dtype == dtype
        tol = 1e-2 if dtype == np.float16 else 1e-5
        np.testing.assert_allclose(right.numpy(), op(x, dtype(2)), rtol=tol)
        np.testing.assert_allclose(left.numpy(), op(dtype(2), x), rtol=tol)
        right = op(tt.constant(x), 1.5)
        assert right.dtype == dtype
        np.testing.assert_allclose(right.numpy(), op(x, dtype(1.5)), rtol=tol)


@pytest.mark.parametrize("op", INTEGER_BINARY, ids=lambda f: f.__name__)
def test_python_int_with_integer_tensors(op):
    for dtype in (np.int32, np.int64):
        x = np.array([5, -6, 7], dtype=dtype)
        assert_tensor(op(tt.constant(x), 3), op(x, dtype(3)))
        assert_tensor(op(3, tt.constant(x)), op(dtype(3), x))


def test_reflected_operators_with_python_scalars():
    x = np.array([0.5, 2.0, 4.0])
    t = tt.constant(x)
    assert_tensor(3 - t, 3 - x)
    assert_tensor(3 / t, 3 / x)
    assert_tensor(2**t, 2**x)
    assert_tensor(7 // t, 7 // x)
    assert_tensor(7 % t, 7 % x)


@pytest.mark.parametrize(
    "first, second",
    [
        (tt.float32, tt.float64),
        (tt.float32, tt.int32),
        (tt.int32, tt.int64),
        (tt.float16, tt.float32),
    ],
)
@pytest.mark.parametrize("op", BINARY + [operator.matmul] + COMPARISONS, ids=lambda f: f.__name__)
def test_mixing_dtypes_raises_type_error_naming_both(first, second, op):
    x = tt.constant(np.ones((2, 2)), dtype=first)
    y = tt.constant(np.ones((2, 2)), dtype=second)
    with pytest.raises(TypeError) as info:
        op(x, y)
    message = str(info.value)
    assert first.name in message and second.name in message


def test_numpy_array_on_the_left_returns_a_tracer_tensor():
    t = tt.constant([1.0, 2.0, 3.0])
    left = np.array([2.0, 3.0, 4.0], dtype=np.float32)
    for op, expected in [
        (operator.mul, left * t.numpy()),
        (operator.add, left + t.numpy()),
        (operator.sub, left - t.numpy()),
        (operator.truediv, left / t.numpy()),
    ]:
        out = op(left, t)
        assert type(out) is tt.Tensor
        assert out.dtype == tt.float32
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)
    out = np.ones(3) * t  # a float64 array converts to the tensor's dtype, as in TensorFlow
    assert type(out) is tt.Tensor
    assert out.dtype == tt.float32
    np.testing.assert_allclose(out.numpy(), [1.0, 2.0, 3.0])
    out = np.ones(3, dtype=np.float32) > t
    assert type(out) is tt.Tensor
    assert out.dtype == tt.bool
    np.testing.assert_array_equal(out.numpy(), [False, False, False])


def test_numpy_scalar_on_the_left_returns_a_tracer_tensor():
    t = tt.constant([1.0, 2.0])
    for scalar in (np.float32(2.0), np.float64(2.0)):
        out = scalar * t
        assert type(out) is tt.Tensor
        assert out.dtype == tt.float32
        np.testing.assert_array_equal(out.numpy(), [2.0, 4.0])
    out = np.float32(5.0) - t
    assert type(out) is tt.Tensor
    np.testing.assert_array_equal(out.numpy(), [4.0, 3.0])


def test_numpy_array_on_the_left_of_matmul():
    a = np.arange(6.0).reshape(2, 3)
    w = tt.constant(np.arange(12.0).reshape(3, 4))
    out = a @ w
    assert type(out) is tt.Tensor
    assert_tensor(out, a @ w.numpy())


def test_tensors_are_immutable_values():
    x = tt.constant([1.0, 2.0])
    y = x
    x = x + 1.0
    assert_tensor(y, np.array([1.0, 2.0], dtype=np.float32))
    assert_tensor(x, np.array([2.0, 3.0], dtype=np.float32))


# --- Variables ----------------------------------------------------------------------------


def test_variable_names():
    assert tt.Variable(3.0, name="x0").name == "x0:0"
    assert tt.Variable(3.0).name == "Variable:0"
    assert tt.Variable(3.0, name="w").name == "w:0"


def test_eager_variables_with_the_same_name_are_not_renamed():
    # TensorFlow 2 eager: names are not made unique.
    assert tt.Variable(1.0, name="same").name == "same:0"
    assert tt.Variable(2.0, name="same").name == "same:0"


def test_variable_trainable():
    assert tt.Variable(1.0).trainable is True
    assert tt.Variable(1.0, trainable=False).trainable is False


def test_variable_shape_dtype_and_value():
    v = tt.Variable([[1.0, 2.0], [3.0, 4.0]])
    assert v.shape == (2, 2)
    assert v.dtype == tt.float32
    assert v.ndim == 2
    np.testing.assert_array_equal(v.numpy(), [[1.0, 2.0], [3.0, 4.0]])
    assert tt.Variable(1).dtype == tt.int32
    assert tt.Variable(np.zeros(3)).dtype == tt.float64
    v = tt.Variable(1, dtype=tt.float64)
    assert v.dtype == tt.float64
    assert v.numpy() == 1.0
    v = tt.Variable(tt.constant([5.0, 6.0]))
    np.testing.assert_array_equal(v.numpy(), [5.0, 6.0])
    assert float(tt.Variable(2.5)) == 2.5
    np.testing.assert_array_equal(np.asarray(tt.Variable([1, 2])), [1, 2])


def test_variable_from_a_callable():
    v = tt.Variable(lambda: tt.ones((2,)) * 3.0)
    np.testing.assert_array_equal(v.numpy(), [3.0, 3.0])


def test_assign():
    v = tt.Variable([1.0, 2.0])
    v.assign([5.0, 6.0])
    np.testing.assert_array_equal(v.numpy(), [5.0, 6.0])
    v.assign(tt.constant([7.0, 8.0]))
    np.testing.assert_array_equal(v.numpy(), [7.0, 8.0])
    v.assign(np.array([0.5, 0.25], dtype=np.float32))
    np.testing.assert_array_equal(v.numpy(), [0.5, 0.25])
    assert v.dtype == tt.float32
    assert v.shape == (2,)


def test_assign_add_and_assign_sub():
    v = tt.Variable([1.0, 2.0], dtype=tt.float64)
    v.assign_add([0.5, 0.25])
    np.testing.assert_allclose(v.numpy(), [1.5, 2.25])
    v.assign_sub(tt.constant([1.0, 1.0], dtype=tt.float64))
    np.testing.assert_allclose(v.numpy(), [0.5, 1.25])
    s = tt.Variable(2.0)
    s.assign_add(1.0)
    assert s.numpy() == 3.0
    s.assign_sub(0.5)
    assert s.numpy() == 2.5
    i = tt.Variable(3)
    i.assign_add(4)
    assert i.numpy() == 7 and i.dtype == tt.int32


@pytest.mark.parametrize("method", ["assign", "assign_add", "assign_sub"])
def test_assign_with_a_wrong_shape_raises_value_error(method):
    v = tt.Variable([1.0, 2.0])
    with pytest.raises(ValueError):
        getattr(v, method)([1.0, 2.0, 3.0])
    with pytest.raises(ValueError):
        getattr(v, method)(tt.ones((2, 2)))
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])


def test_value_and_read_value_are_snapshots():
    v = tt.Variable([1.0, 2.0])
    snapshot = v.value()
    read = v.read_value()
    assert type(snapshot) is tt.Tensor and type(read) is tt.Tensor
    v.assign([10.0, 20.0])
    np.testing.assert_array_equal(snapshot.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(read.numpy(), [1.0, 2.0])
    v.assign_add([1.0, 1.0])
    np.testing.assert_array_equal(snapshot.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(v.value().numpy(), [11.0, 21.0])
    before = v + 0.0
    v.assign_sub([11.0, 21.0])
    np.testing.assert_array_equal(before.numpy(), [11.0, 21.0])


def test_ops_on_variables_return_tensors():
    v = tt.Variable(2.0, name="x2")
    out = v + 1
    assert type(out) is tt.Tensor
    assert not isinstance(out, tt.Variable)
    assert out.dtype == tt.float32
    assert out.numpy() == 3.0
    cases = [(v * v, 4.0), (1 - v, -1.0), (-v, -2.0), (v**3, 8.0), (tt.sin(v), np.sin(2.0))]
    for result, expected in cases:
        assert type(result) is tt.Tensor
        np.testing.assert_allclose(result.numpy(), expected, rtol=1e-6)
    w = tt.Variable([1.0, 2.0])
    out = tt.reduce_sum(w * w)
    assert type(out) is tt.Tensor
    assert out.numpy() == 5.0


def test_variable_comparisons_give_bool_tensors():
    v = tt.Variable([1.0, 3.0])
    out = v > 2.0
    assert type(out) is tt.Tensor
    np.testing.assert_array_equal(out.numpy(), [False, True])


def test_equality_with_none_or_unbroadcastable_shapes_is_a_python_answer_as_in_tensorflow():
    x = tt.constant([1.0, 2.0])
    assert (x == None) is False  # noqa: E711 - the operator itself is under test
    assert (x != None) is True  # noqa: E711
    assert (x == tt.constant([1.0, 2.0, 3.0])).numpy() == False
    assert (x != tt.constant([1.0, 2.0, 3.0])).numpy() == True
    np.testing.assert_array_equal((x == tt.constant([1.0, 5.0])).numpy(), [True, False])
