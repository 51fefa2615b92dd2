"""The framework objects' surface as TensorFlow 2.21 shows it: TensorShape, TensorSpec, DType,
Variable (open shapes, synchronization and aggregation, sliced assign, scatter updates, the
classes of its errors), the random ops (eager draws equal to compiled ones; the truncated
normal, stateless categorical, Poisson, split and fold_in), `tt.shape_n` and
`complex(tensor)`.

Each expected value written here is what TensorFlow 2.21 printed for the same program
(benchmarks/held_out/api_surface.py runs most of them on both engines); where tracer keeps
another value on purpose (its own random streams), the test says so. Ops that run inside
functions are checked eagerly and in both backends (`MODES`).
"""

import statistics

import numpy as np
import pytest

import tracer as tt

MODES = [
    ("eager", lambda f: f),
    ("c", lambda f: tt.function(f, backend="c")),
    ("interpreter", lambda f: tt.function(f, backend="interpreter")),
]


def in_every_mode(build, calls=1):
    """{mode: [numpy results of `calls` calls]} of `build()`'s step, built afresh for each
    mode (its variables and seeds made again), run eagerly and as a tt.function."""
    results = {}
    for mode, wrap in MODES:
        step = wrap(build())
        results[mode] = [tt.nest.map_structure(lambda t: t.numpy(), step()) for _ in range(calls)]
    return results


def assert_same_in_every_mode(results, rtol=0.0):
    eager = results["eager"]
    for mode in ("c", "interpreter"):
        for a, b in zip(tt.nest.flatten(eager), tt.nest.flatten(results[mode])):
            np.testing.assert_allclose(b, a, rtol=rtol, err_msg=mode)


# --- TensorShape ---------------------------------------------------------------------------


def test_a_shape_equals_the_list_and_tuple_of_its_sizes_as_tensorflows():
    """TF 2.21: [True, True, True, True, False, True, True, False, False]."""
    a = tt.TensorShape([1, 2])
    got = [
        a == [1, 2],
        a == (1, 2),
        a == tt.TensorShape([1, 2]),
        a != [2, 1],
        a == [1, None],
        tt.TensorShape([None]) == tt.TensorShape([None]),
        tt.TensorShape(None) == tt.TensorShape(None),
        tt.TensorShape([1]) == [1, 2],
        a == None,  # noqa: E711 (what a user writes)
    ]
    assert got == [True, True, True, True, False, True, True, False, False]
    # TF 2.21: an unknown rank equals None; a float is no size; [1, 2] == shape reflects
    assert tt.TensorShape(None) == None  # noqa: E711
    assert (tt.TensorShape([1, 2]) == (1.0, 2.0)) is False
    assert ((1.0, 2.0) == tt.TensorShape([1, 2])) is False
    assert [1, 2] == tt.TensorShape([1, 2]) and not ([1, 2] != tt.TensorShape([1, 2]))
    assert tt.TensorShape([1]) == 1 and tt.TensorShape([1, 2]) == np.array([1, 2])
    assert {tt.TensorShape([1, 2]): "a"}[(1, 2)] == "a"
    assert hash(tt.TensorShape([1, None])) == hash((1, None))


def test_shapes_concatenate_with_plus_on_either_side():
    """TF 2.21: (TensorShape([2, None, 4]), TensorShape(None), TensorShape([None]),
    TensorShape([1, 2, 3]), TensorShape([1, 5]), TensorShape([5, 1]))."""
    got = (
        tt.TensorShape([2, None]).concatenate([4]),
        tt.TensorShape([1]).concatenate(tt.TensorShape(None)),
        tt.TensorShape([]).concatenate([None]),
        tt.TensorShape([1]) + tt.TensorShape([2, 3]),
        tt.TensorShape([1]) + [5],
        [5] + tt.TensorShape([1]),
    )
    assert [repr(s) for s in got] == [
        "TensorShape([2, None, 4])",
        "TensorShape(None)",
        "TensorShape([None])",
        "TensorShape([1, 2, 3])",
        "TensorShape([1, 5])",
        "TensorShape([5, 1])",
    ]
    assert all(isinstance(s, tt.TensorShape) for s in got)
    assert repr((2,) + tt.TensorShape([1])) == "TensorShape([2, 1])"
    assert tt.TensorShape(None) + [1] is tt.TensorShape(None)


def test_sizes_are_checked_as_tensorflows():
    """TF 2.21: TensorShape([-1]) is ValueError "Dimension -1 must be >= 0", [2.5] a
    TypeError; numpy ints become ints."""
    with pytest.raises(ValueError, match="Dimension -1 must be >= 0"):
        tt.TensorShape([-1])
    with pytest.raises(TypeError):
        tt.TensorShape([2.5])
    with pytest.raises(TypeError):
        tt.TensorShape(2.5)
    assert [type(d) for d in tt.TensorShape([np.int64(2), 3])] == [int, int]
    assert tt.TensorShape(np.int64(2)) == [2]


def test_most_specific_compatible_shape_and_the_rank_checks():
    """TF 2.21: (TensorShape([2, None, None]), TensorShape(None), TensorShape(None),
    TensorShape([2, 3, None])), with_rank: (TensorShape([None, 3]), TensorShape([None, None,
    None]), TensorShape([None, 3]), TensorShape([None, 3])), and its errors."""
    a = tt.TensorShape([2, 3, None])
    got = (
        a.most_specific_compatible_shape([2, 4, 5]),
        a.most_specific_compatible_shape([2, 3]),
        a.most_specific_compatible_shape(tt.TensorShape(None)),
        a.most_specific_compatible_shape([2, 3, 7]),
    )
    assert [repr(s) for s in got] == [
        "TensorShape([2, None, None])",
        "TensorShape(None)",
        "TensorShape(None)",
        "TensorShape([2, 3, None])",
    ]
    s = tt.TensorShape([None, 3])
    got = (
        s.with_rank(2),
        tt.TensorShape(None).with_rank(3),
        s.with_rank_at_least(1),
        s.with_rank_at_most(4),
    )
    assert [repr(x) for x in got] == [
        "TensorShape([None, 3])",
        "TensorShape([None, None, None])",
        "TensorShape([None, 3])",
        "TensorShape([None, 3])",
    ]
    with pytest.raises(ValueError, match=r"^Shape \(None, 3\) must have rank 3$"):
        s.with_rank(3)
    with pytest.raises(ValueError, match=r"^Shape \(1, 2\) must have rank at least 3$"):
        tt.TensorShape([1, 2]).with_rank_at_least(3)
    with pytest.raises(ValueError, match=r"^Shape \(1, 2\) must have rank at most 1$"):
        tt.TensorShape([1, 2]).with_rank_at_most(1)
    with pytest.raises(ValueError, match=r"^Shape \(None, 3\) is not fully defined$"):
        s.assert_is_fully_defined()
    with pytest.raises(ValueError, match=r"^Shape <unknown> is not fully defined$"):
        tt.TensorShape(None).assert_is_fully_defined()
    assert tt.TensorShape([2, 3]).assert_is_fully_defined() is None
    with pytest.raises(ValueError, match=r"^Shapes \(None, 3\) and \[2, 4\] are incompatible$"):
        s.assert_is_compatible_with([2, 4])
    with pytest.raises(ValueError, match=r"^Shapes \(None, 3\) and \(2, 4\) are incompatible$"):
        s.assert_is_compatible_with(tt.TensorShape([2, 4]))


def test_symbolic_sizes_keep_working_in_a_traced_function():
    """A size known only when the function runs (d0) is unknown to the new methods too."""
    seen = {}

    @tt.function(input_signature=[tt.TensorSpec([None, 3])])
    def f(x):
        s = x.shape
        seen["plus"] = s + [4]
        seen["specific"] = s.most_specific_compatible_shape([5, 3])
        seen["rank"] = s.with_rank(2)
        return tt.reshape(x, s[:1] + (3, 1))

    assert f(np.zeros([2, 3], np.float32)).shape == (2, 3, 1)
    assert len(seen["plus"]) == 3 and seen["plus"][1:] == [3, 4]
    assert seen["specific"] == [None, 3] and seen["rank"] is not None


# --- TensorSpec ----------------------------------------------------------------------------


def test_spec_equality_counts_the_name_and_compatibility_takes_tensors_only():
    """TF 2.21: equality (False, True, True, True); is_compatible_with 'True ; True ; False ;
    False ; True ; True' (a numpy array is not a tf.Tensor, so never compatible)."""
    a = tt.TensorSpec([2], tt.float32)
    assert (
        a == tt.TensorSpec([2], tt.float32, name="n"),
        a != tt.TensorSpec([2], tt.int32),
        a == tt.TensorSpec((2,), "float32"),
        tt.TensorSpec(None) == tt.TensorSpec(None),
    ) == (False, True, True, True)
    assert hash(a) == hash(tt.TensorSpec([2], name="n"))  # TF 2.21: True
    s = tt.TensorSpec([None, 3], tt.float32)
    got = (
        s.is_compatible_with(tt.TensorSpec(None, tt.float32)),
        tt.TensorSpec(None, tt.float32).is_compatible_with(s),
        s.is_compatible_with(np.zeros([1, 3], np.float32)),
        s.is_compatible_with(np.zeros([1, 3])),
        s.is_compatible_with(tt.TensorSpec([2, 3], tt.float32, name="other")),
        tt.TensorSpec([], tt.int32).is_compatible_with(tt.constant(1)),
    )
    assert got == (True, True, False, False, True, True)
    assert not tt.TensorSpec([2]).is_compatible_with(tt.Variable([1.0, 2.0]))  # TF 2.21


def test_a_spec_of_unknown_rank_has_a_shape_of_unknown_rank():
    """TF 2.21: TensorSpec(None).shape is TensorShape(None) (rank None, as_list a ValueError,
    equal to TensorShape(None)); the spec prints shape=<unknown> and is compatible with a
    tensor of any rank and its dtype; a tf.function of that signature gives 2.0, [3. 5.],
    [[4.] [6.]] for x * 2 + rank(x); a py_function's map has a spec of rank None and gives
    [0, 2, 4]."""
    spec = tt.TensorSpec(None)
    assert spec.shape.rank is None and spec.shape.ndims is None
    assert repr(spec.shape) == "TensorShape(None)" and spec.shape == tt.TensorShape(None)
    with pytest.raises(ValueError, match="as_list\\(\\) is not defined on an unknown"):
        spec.shape.as_list()
    assert repr(spec) == "TensorSpec(shape=<unknown>, dtype=tt.float32, name=None)"
    assert spec == tt.TensorSpec(tt.TensorShape(None))
    assert tt.TensorSpec.from_spec(spec).shape.rank is None
    assert spec.is_compatible_with(tt.constant(1.0)) and spec.is_compatible_with(tt.zeros([2, 3]))
    assert not spec.is_compatible_with(tt.zeros([2], tt.int32))

    @tt.function(input_signature=[tt.TensorSpec(None)])
    def f(x):
        return x * 2 + tt.cast(tt.rank(x), tt.float32)

    assert f(tt.constant(1.0)).numpy() == 2.0
    np.testing.assert_array_equal(f(tt.constant([1.0, 2.0])).numpy(), [3.0, 5.0])
    np.testing.assert_array_equal(f(tt.constant([[1.0], [2.0]])).numpy(), [[4.0], [6.0]])

    ds = tt.data.Dataset.range(3).map(lambda x: tt.py_function(lambda v: v * 2, [x], tt.int64))
    assert ds.element_spec.shape.rank is None
    assert repr(ds.element_spec) == "TensorSpec(shape=<unknown>, dtype=tt.int64, name=None)"
    assert list(ds.as_numpy_iterator()) == [0, 2, 4]
    assert list(ds.cache().as_numpy_iterator()) == [0, 2, 4]


def test_spec_from_tensor_and_its_sizes():
    """TF 2.21: from_tensor gives shape=(1, 3), dtype=int32 and the name given (None
    eagerly); a numpy array is a ValueError; TensorSpec([-1]) a ValueError."""
    t = tt.constant([[1, 2, 3]])
    spec = tt.TensorSpec.from_tensor(t)
    assert (spec.shape, spec.dtype, spec.name) == ((1, 3), tt.int32, None)
    assert tt.TensorSpec.from_tensor(t, name="t").name == "t"
    assert tt.TensorSpec.from_tensor(tt.constant("s")).dtype == tt.string
    with pytest.raises(ValueError):
        tt.TensorSpec.from_tensor(np.zeros(2))
    with pytest.raises(ValueError):
        tt.TensorSpec.from_tensor(tt.Variable([1, 2]))
    with pytest.raises(ValueError, match="Dimension -1 must be >= 0"):
        tt.TensorSpec([-1])
    assert tt.TensorSpec.from_spec(tt.TensorSpec([2], name="q"), name="r").name == "r"


# --- DType ---------------------------------------------------------------------------------


def test_as_dtype_reads_names_and_types_as_tensorflow():
    """TF 2.21: 'float' and float are float32; None, int, complex, str, bytes, 'int' and 2.5
    are TypeErrors; np.str_, np.bytes_ and np.object_ are tf.string."""
    assert tt.as_dtype("float") is tt.float32 and tt.as_dtype(float) is tt.float32
    assert tt.as_dtype("double") is tt.float64 and tt.as_dtype("half") is tt.float16
    assert tt.as_dtype(bool) is tt.bool and tt.as_dtype(object) is tt.string
    for kind in (np.object_, np.str_, np.bytes_, np.dtype("U5"), np.dtype("S3")):
        assert tt.as_dtype(kind) is tt.string
    assert tt.as_dtype(np.dtype("<i8")) is tt.int64 and tt.as_dtype(np.float32) is tt.float32
    for bad in (None, int, complex, str, bytes, "int", "long", "floaty", 2.5, np.longdouble):
        with pytest.raises(TypeError):
            tt.as_dtype(bad)
    # equality reads the same way (TF 2.21: True, False, True, False, False)
    equal = (tt.float32.__eq__(float), tt.float64.__eq__(float), tt.float64 == "double")
    assert equal == (True, False, True)
    assert not tt.int64.__eq__(int) and (tt.float32 == None) is False  # noqa: E711
    assert tt.zeros([1], dtype=float).dtype == tt.float32
    assert tt.cast(1, "float").dtype == tt.float32


def test_limits_and_is_compatible_with():
    """TF 2.21: '(0, 2147483647) ; (0, 255)', float32 (0, 1), bool (0, True), float16 a
    ValueError; is_compatible_with 'True ; False ; True ; True'."""
    assert tt.int32.limits == (0, 2147483647) and tt.uint8.limits == (0, 255)
    assert tt.float32.limits == (0, 1) and tt.float64.limits == (0, 1)
    assert tt.bool.limits == (0, True) and tt.int64.limits == (0, 2**63 - 1)
    for dtype in (tt.float16, tt.complex64, tt.string):
        with pytest.raises(ValueError, match="does not have defined limits"):
            _ = dtype.limits
    got = (
        tt.float32.is_compatible_with(tt.float32),
        tt.float32.is_compatible_with(tt.float64),
        tt.float32.is_compatible_with("float32"),
        tt.int32.is_compatible_with(np.int32),
    )
    assert got == (True, False, True, True)
    with pytest.raises(TypeError):
        tt.float32.is_compatible_with("x")


# --- Variable ------------------------------------------------------------------------------


def test_a_variable_of_a_shape_left_open_takes_assigns_of_any_fitting_shape():
    """TF 2.21: (TensorShape(None), TensorShape(None), [1 2 3 4], "... shape=<unknown> ...");
    with [None, 3]: shape stays [None, 3], tf.shape [4 3]; [4, 2] a ValueError; assign_add
    of another shape than the value's an InvalidArgumentError; validate_shape=False keeps
    the initial value's shape, TensorShape([2]), and refuses [1, 2, 3]."""
    v = tt.Variable([1.0, 2.0], shape=tt.TensorShape(None))
    before = v.shape
    v.assign([1.0, 2.0, 3.0, 4.0])
    assert repr(before) == repr(v.shape) == "TensorShape(None)"
    np.testing.assert_array_equal(v.numpy(), [1, 2, 3, 4])
    assert "shape=<unknown>" in repr(v)
    w = tt.Variable(tt.zeros([2, 3]), shape=[None, 3])
    w.assign(tt.ones([4, 3]))
    assert w.shape == [None, 3] and tt.shape(w).numpy().tolist() == [4, 3]
    assert float(tt.reduce_sum(w)) == 12.0
    with pytest.raises(ValueError):
        w.assign(tt.ones([4, 2]))
    with pytest.raises(tt.errors.InvalidArgumentError):
        w.assign_add(tt.ones([2, 3]))
    with pytest.raises(ValueError):
        tt.Variable(tt.zeros([2, 3]), shape=[4, 3])
    fixed = tt.Variable([1, 2], validate_shape=False)
    assert fixed.shape == [2]
    with pytest.raises(ValueError):
        fixed.assign([1, 2, 3])


@pytest.mark.parametrize("backend", ["c", "interpreter"])
def test_a_function_reading_a_variable_of_an_open_shape_runs_as_python(backend):
    """TF 2.21 (eager and tf.function): ([1 2 11 12], [4]) | ([1 2 11 12 11 12 21 22], [8])."""
    v = tt.Variable([1.0, 2.0], shape=tt.TensorShape(None))

    @tt.function(backend=backend)
    def step():
        v.assign(tt.concat([v, v + 10.0], 0))
        return v.read_value(), tt.shape(v)

    first, second = step(), step()
    np.testing.assert_array_equal(first[0].numpy(), [1, 2, 11, 12])
    np.testing.assert_array_equal(second[0].numpy(), [1, 2, 11, 12, 11, 12, 21, 22])
    assert first[1].numpy().tolist() == [4] and second[1].numpy().tolist() == [8]


def test_synchronization_aggregation_and_the_trainable_default():
    """TF 2.21: ('ON_READ', 'SUM', False, 'AUTO', 'MEAN', True, True); trainable=True with
    ON_READ is kept, (True, 'ON_READ', 'NONE'); a string mode is a ValueError."""
    v = tt.Variable(
        0.0,
        synchronization=tt.VariableSynchronization.ON_READ,
        aggregation=tt.VariableAggregation.SUM,
    )
    w = tt.Variable(0.0, aggregation=tt.VariableAggregation.MEAN)
    got = (
        v.synchronization.name,
        v.aggregation.name,
        v.trainable,
        w.synchronization.name,
        w.aggregation.name,
        w.trainable,
        v.synchronization == tt.VariableSynchronization.ON_READ,
    )
    assert got == ("ON_READ", "SUM", False, "AUTO", "MEAN", True, True)
    u = tt.Variable(0.0, trainable=True, synchronization=tt.VariableSynchronization.ON_READ)
    assert (u.trainable, u.synchronization.name, u.aggregation.name) == (True, "ON_READ", "NONE")
    with pytest.raises(ValueError):
        tt.Variable(0.0, synchronization="ON_READ")
    with pytest.raises(ValueError):
        tt.Variable(0.0, aggregation="sum")


def test_sliced_assign_in_every_mode():
    """TF 2.21 (eager and tf.function): ([-1 20 30 4], [[1 0] [3 0]]); a slice is a plain
    Tensor with `assign` (and no assign_add)."""

    def build():
        v = tt.Variable([1.0, 2.0, 3.0, 4.0])
        m = tt.Variable([[1, 2], [3, 4]])

        def step():
            v[1:3].assign([20.0, 30.0])
            v[0].assign(-1.0)
            m[:, 1].assign([0, 0])
            return v.read_value(), m.read_value()

        return step

    results = in_every_mode(build)
    assert_same_in_every_mode(results)
    v, m = results["eager"][0]
    np.testing.assert_array_equal(v, [-1, 20, 30, 4])
    np.testing.assert_array_equal(m, [[1, 0], [3, 0]])
    x = tt.Variable([1.0, 2.0, 3.0, 4.0])
    assert type(x[1:3]) is tt.Tensor and not hasattr(tt.constant(1.0), "assign")
    with pytest.raises(AttributeError):
        x[1:3].assign_add([1.0, 1.0])
    with pytest.raises(tt.errors.InvalidArgumentError):  # TF 2.21: cannot broadcast [3] to [2]
        x[1:3].assign([5.0, 6.0, 7.0])
    np.testing.assert_array_equal(x[1:3].assign(1.0).numpy(), [1, 1, 1, 4])


@pytest.mark.parametrize("backend", ["c", "interpreter"])
def test_a_sliced_assign_with_an_index_known_when_the_function_runs(backend):
    w = tt.Variable(np.arange(6.0).reshape(2, 3))

    @tt.function(backend=backend)
    def f(i):
        w[i].assign([7.0, 8.0, 9.0])
        w[:, 0].assign(tt.zeros([2], tt.float64))
        return w.read_value()

    np.testing.assert_array_equal(f(tt.constant(1)).numpy(), [[0, 1, 2], [0, 8, 9]])
    np.testing.assert_array_equal(f(tt.constant(0)).numpy(), [[0, 8, 9], [0, 8, 9]])


def test_scatter_updates_in_every_mode():
    """TF 2.21: ([1 20 3 40 5], [201 20 3 40 6], [201 20 0 40 6]) and [[3 3] [1.5 1.5]
    [9 9]]; an index out of range is an InvalidArgumentError, a list a TypeError."""

    def build():
        v = tt.Variable([1, 2, 3, 4, 5])
        w = tt.Variable([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])

        def step():
            v.scatter_nd_update([[1], [3]], [20, 40])
            a = v.read_value()
            v.scatter_nd_add([[0], [0], [4]], [100, 100, 1])
            b = v.read_value()
            v.scatter_nd_sub([[2]], [3])
            w.scatter_update(tt.IndexedSlices(tt.constant([[9.0, 9.0]]), tt.constant([2])))
            w.scatter_add(
                tt.IndexedSlices(tt.constant([[1.0, 1.0], [1.0, 1.0]]), tt.constant([0, 0]))
            )
            w.scatter_sub(tt.IndexedSlices(tt.constant([[0.5, 0.5]]), tt.constant([1])))
            return a, b, v.read_value(), w.read_value()

        return step

    results = in_every_mode(build)
    assert_same_in_every_mode(results)
    a, b, c, w = results["eager"][0]
    assert (a.tolist(), b.tolist(), c.tolist()) == (
        [1, 20, 3, 40, 5],
        [201, 20, 3, 40, 6],
        [201, 20, 0, 40, 6],
    )
    np.testing.assert_array_equal(w, [[3, 3], [1.5, 1.5], [9, 9]])
    v = tt.Variable([1.0, 2.0])
    with pytest.raises(tt.errors.InvalidArgumentError):
        v.scatter_nd_update([[3]], [5.0])
    with pytest.raises(TypeError):
        v.scatter_update([1])
    np.testing.assert_array_equal(v.scatter_nd_update([[0]], [5]).numpy(), [5, 2])


def test_the_classes_of_assign_errors_and_string_values():
    """TF 2.21: a tensor of another dtype is a ValueError (tracer's is also the TypeError it
    raised before), an update of another shape an InvalidArgumentError (also a ValueError);
    tf.Variable("s").numpy() is b's', a bytes."""
    with pytest.raises(ValueError) as caught:
        tt.Variable(1.0).assign(tt.constant(1))
    assert isinstance(caught.value, TypeError)
    with pytest.raises(tt.errors.InvalidArgumentError) as caught:
        tt.Variable([1.0, 2.0]).assign_add([1.0, 2.0, 3.0])
    assert isinstance(caught.value, ValueError)
    with pytest.raises(tt.errors.InvalidArgumentError):
        tt.Variable([1.0, 2.0]).assign_sub([1.0, 2.0, 3.0])
    value = tt.Variable("s").numpy()
    assert value == b"s" and type(value) is bytes


# --- random ----------------------------------------------------------------------------------
# tracer's streams are its own (not TensorFlow's values); what holds as in TensorFlow: with an
# op seed, eager draws and a tt.function's draws are the same values


@pytest.mark.parametrize(
    "draw",
    [
        lambda: tt.random.uniform([3], seed=7),
        lambda: tt.random.uniform([8], minval=-3, maxval=3, dtype=tt.int32, seed=11),
        lambda: tt.random.uniform([4], minval=0, maxval=2**40, dtype=tt.int64, seed=12),
        lambda: tt.random.normal([3], dtype=tt.float64, seed=2),
        lambda: tt.random.truncated_normal([3], seed=3),
        lambda: tt.random.categorical(tt.math.log([[0.5, 0.3, 0.2]]), 6, seed=4),
        lambda: tt.random.shuffle(tt.range(10), seed=4),
    ],
    ids=["uniform", "int32", "int64", "normal", "truncated", "categorical", "shuffle"],
)
def test_eager_and_compiled_draws_agree_for_the_same_seeds(draw):
    def build():
        tt.random.set_seed(1)
        return draw

    results = in_every_mode(build, calls=2)
    assert_same_in_every_mode(results, rtol=1e-6)
    first, second = results["eager"]
    assert not np.array_equal(first, second)  # each call draws anew, as TensorFlow's


def test_set_seed_restarts_an_op_seeds_stream():
    """TF 2.21: a, b, a again after set_seed: (True, False)."""
    tt.random.set_seed(5)
    a = tt.random.uniform([2], seed=1)
    b = tt.random.uniform([2], seed=1)
    tt.random.set_seed(5)
    c = tt.random.uniform([2], seed=1)
    assert bool(tt.reduce_all(a == c)) and not bool(tt.reduce_all(a == b))


def test_truncated_normals_stay_within_two_standard_deviations():
    """The law of TensorFlow's truncated normal: |x - mean| < 2 stddev, standard deviation
    0.8796 stddev; the normal quantile is AS241's (to 1e-15 of Python's own)."""
    x = tt.random.stateless_truncated_normal([200_000], seed=[1, 2], dtype=tt.float64).numpy()
    assert np.abs(x).max() < 2.0 and abs(x.mean()) < 0.01 and abs(x.std() - 0.8796) < 0.005
    y = tt.random.truncated_normal([1000], mean=5.0, stddev=0.1, seed=1).numpy()
    assert y.dtype == np.float32 and np.abs(y - 5.0).max() < 0.2
    from tracer.random_stateless import _truncated_quantile

    p = np.linspace(0.023, 0.977, 101)
    want = [statistics.NormalDist().inv_cdf(q) for q in p]
    np.testing.assert_allclose(_truncated_quantile(tt.constant(p)).numpy(), want, atol=1e-15)
    with pytest.raises(TypeError):
        tt.random.truncated_normal([3], dtype=tt.int32)
    assert tt.random.stateless_truncated_normal([3], [1, 2], dtype=tt.float16).dtype == tt.float16


def test_the_new_stateless_ops_in_every_mode():
    """TF 2.21's dtypes and shapes: stateless_categorical int64 (2, 8), stateless_poisson
    int32 (6,), stateless_split of an int64 seed int64 (3, 2), stateless_fold_in with a
    Python int int32 (2,) ending with the data."""

    def build():
        def step():
            seed = tt.constant([8, 9], tt.int64)
            logits = tt.math.log([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]])
            return (
                tt.random.stateless_truncated_normal([6], seed=seed),
                tt.random.stateless_categorical(logits, 8, seed=seed),
                tt.random.stateless_poisson([6], seed=seed, lam=3.0),
                tt.random.stateless_poisson(
                    [2, 3], seed=seed, lam=[1.0, 5.0, 50.0], dtype=tt.float32
                ),
                tt.random.experimental.stateless_split(seed, num=3),
                tt.random.experimental.stateless_fold_in(seed, 7),
            )

        return step

    results = in_every_mode(build)
    assert_same_in_every_mode(results, rtol=1e-6)
    truncated, categorical, poisson, rates, split, folded = results["eager"][0]
    assert categorical.dtype == np.int64 and categorical.shape == (2, 8)
    assert set(categorical[1].tolist()) <= {0, 1, 2}
    assert poisson.dtype == np.int32 and poisson.shape == (6,) and (poisson >= 0).all()
    assert rates.dtype == np.float32 and rates.shape == (2, 3)
    assert split.dtype == np.int64 and split.shape == (3, 2) and len(set(split.ravel())) == 6
    assert folded.dtype == np.int32 and folded.shape == (2,) and folded[1] == 7
    s32 = tt.constant([1, 2], tt.int32)
    assert tt.random.experimental.stateless_split(s32).dtype == tt.int32
    assert tt.random.experimental.stateless_fold_in(s32, 2**40).dtype == tt.int64


def test_poisson_and_categorical_laws_and_errors():
    counts = tt.random.stateless_poisson([100_000], seed=[3, 4], lam=4.0).numpy()
    assert abs(counts.mean() - 4.0) < 0.05 and abs(counts.var() - 4.0) < 0.1
    zero = tt.random.stateless_poisson([5], seed=[3, 4], lam=0.0).numpy()
    assert zero.tolist() == [0] * 5  # TF 2.21: a rate of 0 (or below) draws 0
    with pytest.raises(tt.errors.InvalidArgumentError):  # TF 2.21: must end with lam's shape
        tt.random.stateless_poisson([2, 3], [1, 2], lam=[[1.0], [2.0]])
    with pytest.raises(TypeError):
        tt.random.stateless_poisson([3], [1, 2], lam=3.0, dtype=tt.uint8)
    classes = tt.random.stateless_categorical(
        tt.math.log([[0.2, 0.8]]), 20_000, seed=[5, 6]
    ).numpy()
    assert abs(classes.mean() - 0.8) < 0.02
    assert tt.random.stateless_categorical([[0.0, 1.0]], 0, [1, 2]).shape == (1, 0)
    with pytest.raises(ValueError):  # TF 2.21: ValueError, dtypes are int32 and int64
        tt.random.stateless_categorical([[0.0, 1.0]], 3, [1, 2], dtype=tt.float32)


# --- shape_n, complex ------------------------------------------------------------------------


def test_shape_n_in_every_mode():
    """TF 2.21: ([int32 [1 2], int32 [3]], [int64 [1 2], int64 [3]])."""

    def build():
        x, y = tt.constant([[1.0, 2.0]]), tt.constant([1.0, 2.0, 3.0])
        return lambda: (tt.shape_n([x, y]), tt.shape_n([x, y], out_type=tt.int64))

    results = in_every_mode(build)
    assert_same_in_every_mode(results)
    (a, b), (c, d) = results["eager"][0]
    assert a.tolist() == [1, 2] and b.tolist() == [3] and a.dtype == np.int32
    assert c.dtype == np.int64 and d.tolist() == [3]


def test_complex_of_a_tensor():
    """TF 2.21: complex(tf.constant(1 + 2j)) is (1+2j)."""
    assert complex(tt.constant(1 + 2j)) == 1 + 2j
    assert complex(tt.constant(1.5)) == 1.5 + 0j
    with pytest.raises(TypeError):
        complex(tt.constant([1.0, 2.0]))
