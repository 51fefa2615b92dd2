"""TensorFlow semantics that `import tracer as tt` must keep (issue 46), each checked against
TensorFlow 2.21, whose output is quoted in the test's docstring."""

import logging

import numpy as np
import pytest

import tracer as tt


def _value(tensor, dtype):
    assert isinstance(tensor, tt.Tensor), type(tensor)
    assert tensor.dtype == dtype
    return tensor.numpy().tolist()


@pytest.mark.parametrize(
    "number, dtype",
    [(3, tt.int32), (2.5, tt.float32), (True, tt.bool)],
)
def test_function_returns_python_number_as_tensor(number, dtype):
    """TF 2.21: `tf.function(lambda: 3)()` is `<tf.Tensor: shape=(), dtype=int32, numpy=3>`;
    2.5 gives dtype=float32, True gives dtype=bool."""
    f = tt.function(lambda: number)
    for _ in range(2):  # the traced call and a later one
        assert _value(f(), dtype) == number


def test_function_returns_none_as_none():
    """TF 2.21: a tf.function returning None returns None (NoneType)."""
    assert tt.function(lambda: None)() is None


def test_function_converts_numbers_inside_structures():
    """TF 2.21, for `return (1, x, {"a": 2.0, "b": None}, [True, 3])` with x = 1.0:
    (<tf.Tensor: dtype=int32, numpy=1>, <tf.Tensor: dtype=float32, numpy=1.0>,
    {'a': <tf.Tensor: dtype=float32, numpy=2.0>, 'b': None},
    [<tf.Tensor: dtype=bool, numpy=True>, <tf.Tensor: dtype=int32, numpy=3>])"""

    @tt.function
    def f(x):
        return (1, x, {"a": 2.0, "b": None}, [True, 3])

    for _ in range(2):
        one, x, mapping, items = f(tt.constant(1.0))
        assert _value(one, tt.int32) == 1
        assert _value(x, tt.float32) == 1.0
        assert _value(mapping["a"], tt.float32) == 2.0
        assert mapping["b"] is None
        assert _value(items[0], tt.bool) is True
        assert _value(items[1], tt.int32) == 3


def test_function_number_beside_tensor_and_under_tape():
    """TF 2.21: `return x + 1, 7` with x = int32 1 gives
    (<tf.Tensor: dtype=int32, numpy=2>, <tf.Tensor: dtype=int32, numpy=7>)."""

    @tt.function
    def f(x):
        return x + 1, 7

    assert [_value(t, tt.int32) for t in f(tt.constant(1))] == [2, 7]
    assert [_value(t, tt.int32) for t in f(tt.constant(2))] == [3, 7]

    x = tt.Variable(2.0)
    with tt.GradientTape() as tape:
        square, seven = tt.function(lambda v: (v * v, 7))(x)
    assert _value(seven, tt.int32) == 7
    assert float(tape.gradient(square, x)) == 4.0


@pytest.mark.parametrize(
    "op, x, y, dtype, expected",
    [
        (tt.maximum, 0.0, [1, -1], tt.float32, [1.0, 0.0]),
        (tt.minimum, 0.0, [1, -1], tt.float32, [0.0, -1.0]),
        (tt.add, 1.0, [1, 2], tt.float32, [2.0, 3.0]),
        (tt.maximum, 0.0, (1, -1), tt.float32, [1.0, 0.0]),
        (tt.multiply, 2.0, [[1, 2], [3, 4]], tt.float32, [[2.0, 4.0], [6.0, 8.0]]),
        (tt.pow, 2.0, [1, 2], tt.float32, [2.0, 4.0]),
        (tt.maximum, 0.0, 1, tt.float32, 1.0),
        (tt.maximum, [1, 2], [3, 0], tt.int32, [3, 2]),
    ],
)
def test_binary_op_converts_operands_to_first_dtype(op, x, y, dtype, expected):
    """TF 2.21, with no tensor operand the first operand's dtype is the one the other takes:
    tf.maximum(0., [1, -1]) -> float32 [1., 0.]; tf.minimum(0., [1, -1]) -> float32 [0., -1.];
    tf.add(1.0, [1, 2]) -> float32 [2., 3.]; tf.maximum(0., (1, -1)) -> float32 [1., 0.];
    tf.multiply(2.0, [[1, 2], [3, 4]]) -> float32 [[2., 4.], [6., 8.]];
    tf.pow(2.0, [1, 2]) -> float32 [2., 4.]; tf.maximum(0., 1) -> float32 1.0;
    tf.maximum([1, 2], [3, 0]) -> int32 [3, 2]."""
    assert _value(op(x, y), dtype) == expected


def test_binary_op_list_takes_tensor_dtype():
    """TF 2.21: tf.maximum(tf.constant(0., tf.float64), [1, -1]) -> float64 [1., 0.];
    tf.maximum(tf.constant([1., 2.]), [3, 0]) -> float32 [3., 2.]."""
    assert _value(tt.maximum(tt.constant(0.0, tt.float64), [1, -1]), tt.float64) == [1.0, 0.0]
    assert _value(tt.maximum(tt.constant([1.0, 2.0]), [3, 0]), tt.float32) == [3.0, 2.0]


def test_binary_op_refuses_float_for_int_first_operand():
    """TF 2.21: tf.maximum(1, 0.5) raises TypeError "Cannot convert 0.5 to EagerTensor of
    dtype int32" (the int first operand fixes int32)."""
    with pytest.raises(TypeError, match="0.5"):
        tt.maximum(1, 0.5)


def test_concat_of_lists_takes_first_dtype():
    """TF 2.21: tf.concat([[1.5], [2]], 0) -> float32 [1.5, 2.]."""
    assert _value(tt.concat([[1.5], [2]], 0), tt.float32) == [1.5, 2.0]


def test_split_cuts_as_tensorflow_does():
    """tf.split(x, [1, -1, 2], axis=1) of a (4, 6) x: shapes [4, 1], [4, 3], [4, 2];
    tf.split(x, 2): [2, 6] twice; 4 equal parts, two -1s, or sizes adding up to 5 raise
    InvalidArgumentError."""
    x = np.arange(24.0).reshape(4, 6)
    parts = tt.split(x, [1, -1, 2], axis=1)
    for part, want in zip(parts, np.split(x, [1, 4], axis=1)):
        np.testing.assert_array_equal(part.numpy(), want)
    assert [p.shape for p in tt.split(x, 2)] == [(2, 6), (2, 6)]
    with pytest.raises(tt.errors.InvalidArgumentError, match="4 equal parts"):
        tt.split(x, 4, axis=1)
    with pytest.raises(tt.errors.InvalidArgumentError, match="at most one -1"):
        tt.split(x, [-1, -1], axis=1)
    with pytest.raises(ValueError, match="add up to 5"):
        tt.split(x, [2, 3], axis=1)


def test_moments_variance_and_std_are_numpys_population_statistics():
    """tf.nn.moments([[1., 2.], [3., 6.]], axes=[0]): [2. 4.] [1. 4.]; reduce_std of it on
    axis 1: [0.5 1.5]; reduce_variance([1+2j, 3-1j]): 3.25, float64."""
    m, v = tt.nn.moments(tt.constant([[1.0, 2.0], [3.0, 6.0]]), axes=[0])
    assert m.numpy().tolist() == [2.0, 4.0] and v.numpy().tolist() == [1.0, 4.0]
    assert tt.math.reduce_std(tt.constant([[1.0, 2.0], [3.0, 6.0]]), axis=1).numpy().tolist() == [
        0.5,
        1.5,
    ]
    variance = tt.math.reduce_variance(tt.constant([1 + 2j, 3 - 1j]))
    assert variance.dtype == tt.float64 and float(variance) == 3.25
    x = np.random.default_rng(3).standard_normal((5, 4, 3))
    mean, variance = tt.nn.moments(x, axes=[0, 2])
    np.testing.assert_allclose(mean.numpy(), x.mean(axis=(0, 2)), rtol=1e-12)
    np.testing.assert_allclose(variance.numpy(), x.var(axis=(0, 2)), rtol=1e-12)
    mean, variance = tt.nn.moments(x, axes=[1], keepdims=True)
    assert mean.shape == variance.shape == (5, 1, 3)
    np.testing.assert_allclose(tt.math.reduce_std(x, axis=1).numpy(), x.std(axis=1), rtol=1e-12)
    z = x[..., 0] + 1j * x[..., 1]
    variance = tt.math.reduce_variance(z)
    assert variance.dtype == tt.float64
    np.testing.assert_allclose(variance.numpy(), np.var(z), rtol=1e-12)


def test_a_first_trace_that_makes_variables_is_made_again_as_in_tensorflow(capsys):
    class Scaled(tt.Module):
        def __init__(self):
            super().__init__()
            self.v = None

        @tt.function
        def __call__(self, x):
            print("tracing")
            if self.v is None:
                self.v = tt.Variable(2.0)
            return self.v * x

    m = Scaled()
    assert float(m(tt.constant(1.0))) == 2.0
    assert m.__call__.experimental_get_tracing_count() == 2  # TF 2.21: 2, "tracing" twice
    assert float(m(tt.constant(3.0))) == 6.0
    assert m.__call__.experimental_get_tracing_count() == 2
    assert capsys.readouterr().out == "tracing\ntracing\n"


def test_a_variable_made_at_every_call_is_refused_on_the_first_call():
    @tt.function
    def f(x):
        v = tt.Variable(1.0)
        return v + x

    with pytest.raises(
        ValueError, match="only supports singleton tt.Variables created on the first call"
    ):
        f(tt.constant(1.0))


class _FruitType(tt.types.experimental.TraceType):
    """A trace type of the user's: one trace per fruit class, whatever the instance."""

    def __init__(self, fruit):
        self.kind = type(fruit)
        self.fruit = fruit

    def is_subtype_of(self, other):
        return type(other) is _FruitType and self.kind is other.kind

    def most_specific_common_supertype(self, others):
        return self if all(self == other for other in others) else None

    def placeholder_value(self, placeholder_context=None):
        return self.fruit

    def __eq__(self, other):
        return type(other) is _FruitType and self.kind is other.kind

    def __hash__(self):
        return hash(self.kind)


class _Typed:
    def __tf_tracing_type__(self, context):
        return _FruitType(self)


class _TypedApple(_Typed):
    flavor = tt.constant([1, 2])


class _TypedMango(_Typed):
    flavor = tt.constant([3, 4])


class _Apple:
    flavor = tt.constant([1, 2])


class _Mango:
    flavor = tt.constant([3, 4])


def test_a_trace_type_of_the_users_keys_the_traces_as_tensorflows_do(capsys):
    @tt.function
    def mixed(a, b):
        print("tracing")
        return a.flavor + b.flavor

    # what TF 2.21 prints for the same calls: one trace per pair of types with a trace type,
    # one per pair of objects without
    for a, b in [
        (_TypedApple, _TypedMango),
        (_TypedApple, _TypedMango),
        (_TypedMango, _TypedApple),
    ]:
        assert mixed(a(), b()).numpy().tolist() == [4, 6]
    assert mixed.experimental_get_tracing_count() == 2
    for _ in range(2):
        assert mixed(_Apple(), _Mango()).numpy().tolist() == [4, 6]
    assert mixed.experimental_get_tracing_count() == 4
    assert capsys.readouterr().out == "tracing\n" * 4


def test_logical_operators_on_bool_tensors():
    """TF: `&`, `|`, `^`, `~` on tf.bool tensors are logical_and/or/xor/not."""
    a, b = tt.constant([True, False, True, False]), tt.constant([True, True, False, False])
    x, y = np.array([True, False, True, False]), np.array([True, True, False, False])
    np.testing.assert_array_equal((a & b).numpy(), x & y)
    np.testing.assert_array_equal((a | b).numpy(), x | y)
    np.testing.assert_array_equal((a ^ b).numpy(), x ^ y)
    np.testing.assert_array_equal((~a).numpy(), ~x)
    np.testing.assert_array_equal((True & a).numpy(), x)
    traced = tt.function(lambda p, q: ~(p > 0) | (q < 0) & (p < q))
    p, q = np.array([1.0, -1.0, -2.0]), np.array([-1.0, 1.0, -1.0])
    np.testing.assert_array_equal(traced(p, q).numpy(), ~(p > 0) | (q < 0) & (p < q))
    with pytest.raises(TypeError, match="logical for tt.bool tensors and bitwise for integer"):
        tt.constant([1.0, 2.0]) & tt.constant([1.0, 3.0])


def test_bitwise_operators_on_integer_tensors():
    """TF 2.21: on integer tensors `&`, `|`, `^`, `~` are tf.bitwise's: a = [1, 2, 12],
    b = [1, 3, 10] give [1, 2, 8], [1, 3, 14], [0, 1, 6] and [-2, -3, -13]."""
    a, b = tt.constant([1, 2, 12]), tt.constant([1, 3, 10])
    for run in (lambda f: f, tt.function):
        results = run(lambda x, y: (x & y, x | y, x ^ y, ~x, x & 4, 6 | x))(a, b)
        want = [[1, 2, 8], [1, 3, 14], [0, 1, 6], [-2, -3, -13], [0, 0, 4], [7, 6, 14]]
        for got, expected in zip(results, want):
            assert got.dtype == tt.int32
            np.testing.assert_array_equal(got.numpy(), expected)


def test_shape_is_a_tensor_shape_that_equals_tuples():
    """TF 2.21: `tf.ones([7, 10]).shape` is `TensorShape([7, 10])`, equal to (7, 10)."""
    x = tt.ones([7, 10])
    assert repr(x.shape) == "TensorShape([7, 10])" and x.shape == (7, 10)
    assert str(x.shape) == "(7, 10)" and x.shape[1:] == (10,) and x.shape.as_list() == [7, 10]
    assert repr(tt.Variable([1.0, 2.0]).shape) == "TensorShape([2])"


def test_shapes_are_compatible_and_merge_as_tensorflows():
    """TF 2.21's TensorShape methods and messages (`ValueError: Shapes (3,) and (2,) are
    incompatible`, printed by the extension_type guide); an int is a shape of one size."""
    shape = tt.TensorShape([None, 3])
    assert shape.is_compatible_with([2, 3]) and not shape.is_compatible_with([2, 4])
    assert not shape.is_compatible_with([3]) and shape.is_compatible_with(tt.TensorShape(None))
    assert shape.merge_with([2, None]) == (2, 3) and shape.merge_with(None) == (None, 3)
    with pytest.raises(ValueError, match=r"^Shapes \(None, 3\) and \(2, 4\) are not compatible$"):
        shape.merge_with([2, 4])
    with pytest.raises(ValueError, match=r"^Shapes \(3,\) and \(2,\) are incompatible$"):
        tt.constant([1, 2, 3]).shape.assert_is_compatible_with(tt.constant([1, 2]).shape)
    assert tt.TensorShape(None).merge_with([1]) == (1,)
    assert tt.TensorShape(2) == (2,) and tt.TensorSpec(2).shape == (2,)


def test_a_tensor_is_on_the_cpu_as_tensorflow_names_it():
    """TF 2.21 on a machine without a GPU: `x.device` of a tensor and of a variable."""
    cpu = "/job:localhost/replica:0/task:0/device:CPU:0"
    assert tt.constant([1.0]).device == cpu and tt.Variable(1.0).device == cpu
    with tt.device("/device:CPU:0"):
        assert (tt.ones([2]) * 2).device == cpu


@pytest.mark.parametrize("backend", ["c", "interpreter"])
def test_shape_in_a_traced_function_is_a_tensor_shape(backend):
    """TF 2.21: inside tf.function `x.shape` is a TensorShape too (`x.shape.as_list()`, its
    rank and slices work); a size known only when the function runs is tracer's symbol
    there (TensorFlow's None), which ops take as a size and the methods count as unknown."""
    seen = []

    def flatten_rows(x):
        shape = x.shape
        seen.append((type(shape), shape.rank, shape.is_fully_defined(), shape.num_elements()))
        rows = shape.as_list()[0]
        return tt.reshape(x, [rows, -1]), tt.zeros(shape[1:].concatenate([2]))

    f = tt.function(flatten_rows, backend=backend)
    for n in (2, 3, 4):  # the third size runs the trace of unknown rows
        flat, zeros = f(np.arange(n * 12.0).reshape(n, 3, 4))
        np.testing.assert_array_equal(flat.numpy(), np.arange(n * 12.0).reshape(n, 12))
        assert zeros.shape == (3, 4, 2)
    assert seen == [(tt.TensorShape, 3, True, 24), (tt.TensorShape, 3, False, None)]


def test_a_tensor_leaked_from_another_function_raises_type_error():
    """TF 2.21: a tensor kept in a global by one tf.function and used by another raises
    TypeError (the guide's `captures_leaked_tensor`)."""
    leaked = []

    @tt.function
    def leaky(a):
        leaked.append(a + 1)
        return a

    @tt.function
    def captures(b):
        return b + leaked[0]

    leaky(tt.constant(1))
    with pytest.raises(TypeError, match="another tt.function's trace"):
        captures(tt.constant(2))


def test_each_instance_gets_its_own_function_and_first_trace_variables():
    """TF 2.21: two tf.Module instances whose tf.function method applies each one's own
    Adam optimizer both run (each creates its slots on its first trace); w is 1.0109999
    after the two steps, and each instance's method traced twice."""
    w, x, y = tt.Variable(1.0), tt.constant(2.0), tt.constant(3.0)

    class TrainStep(tt.Module):
        def __init__(self, optimizer):
            self.optimizer = optimizer

        @tt.function
        def __call__(self, w, x, y):
            with tt.GradientTape() as tape:
                loss = tt.reduce_sum(tt.square(w * x - y))
            self.optimizer.apply_gradients(zip(tape.gradient(loss, [w]), [w]))

    first = TrainStep(tt.keras.optimizers.Adam(learning_rate=1e-2))
    second = TrainStep(tt.keras.optimizers.Adam(learning_rate=1e-3))
    first(w, x, y)
    second(w, x, y)
    assert np.float32(w.numpy()) == np.float32(1.0109999)
    assert first.__call__.experimental_get_tracing_count() == 2
    assert second.__call__.experimental_get_tracing_count() == 2


def test_next_on_a_dataset_iterator_in_a_function_takes_each_element_once(caplog):
    """TF 2.21: three calls of a tf.function printing next(iterator) of [1, 2, 3] print
    1, 2 and 3 (the trace takes no element of its own)."""
    taken = []

    @tt.function
    def consume(iterator):
        taken.append(int(next(iterator)))

    iterator = iter(tt.data.Dataset.from_tensor_slices([1, 2, 3]))
    with caplog.at_level(logging.WARNING, logger="tracer"):
        consume(iterator)
    assert "iterates a tt.data.Dataset" in caplog.records[0].getMessage()
    consume(iterator)
    consume(iterator)
    assert taken == [1, 2, 3]


def test_a_concrete_function_of_unknown_rank():
    """TF 2.21 prints `pow.get_concrete_function(a=tf.TensorSpec(None, tf.float32), b=2)` as
    below (tf. dtypes); it squares tensors of any rank and refuses b=3 with TypeError."""
    square = tt.function(lambda a, b: a**b).get_concrete_function(
        a=tt.TensorSpec(None, tt.float32), b=2
    )
    assert str(square).splitlines() == [
        "ConcreteFunction Input Parameters:",
        "  a (POSITIONAL_OR_KEYWORD): TensorSpec(shape=<unknown>, dtype=tt.float32, name=None)",
        "  b (POSITIONAL_OR_KEYWORD): Literal[2]",
        "Output Type:",
        "  TensorSpec(shape=<unknown>, dtype=tt.float32, name=None)",
        "Captures:",
        "  None",
    ]
    assert square(tt.constant(10.0)).numpy() == 100.0
    assert square(tt.constant([[1.0, 3.0]])).numpy().tolist() == [[1.0, 9.0]]
    with pytest.raises(TypeError):
        square(tt.constant(10.0), b=3)


def test_an_unused_gather_out_of_range_raises_nothing_in_a_function():
    """TF 2.21: a tf.function whose unused tf.gather(x, [1]) is out of range for x of one
    element returns x (`tf.Tensor([0.], ...)`): the op is pruned; used, it raises
    InvalidArgumentError when the function runs, as eagerly."""

    def unused(x):
        tt.gather(x, [1])
        return x

    assert tt.function(unused)(tt.constant([0.0])).numpy().tolist() == [0.0]
    with pytest.raises(tt.errors.InvalidArgumentError, match="out of range"):
        unused(tt.constant([0.0]))
    with pytest.raises(tt.errors.InvalidArgumentError, match="out of range"):
        tt.function(lambda x: tt.gather(x, [1]))(tt.constant([0.0]))


def test_an_eager_assign_returns_tensorflows_unread_variable():
    """TF 2.21 (the basics guide): `v.assign(x)` prints as `<tf.Variable 'UnreadVariable' ...>`
    and reads the variable when it is read; `read_value=False` gives None."""
    v = tt.Variable([1.0, 2.0], name="x")
    unread = v.assign([3.0, 4.0])
    assert repr(unread) == (
        "<tracer.Variable 'UnreadVariable' shape=(2,) dtype=float32, "
        "numpy=array([3., 4.], dtype=float32)>"
    )
    assert isinstance(unread, tt.Variable) and unread.name == "UnreadVariable"
    v.assign([5.0, 6.0])
    assert unread.numpy().tolist() == [5.0, 6.0] and (unread + 1).numpy().tolist() == [6.0, 7.0]
    unread.assign_add([1.0, 1.0])
    assert v.numpy().tolist() == [6.0, 7.0]
    assert v.assign_sub([1.0, 1.0], read_value=False) is None and v.numpy().tolist() == [5.0, 6.0]
    with tt.GradientTape() as tape:
        y = v.assign([1.0, 1.0]) * 2.0
    assert tape.gradient(y, v).numpy().tolist() == [2.0, 2.0]


def test_equality_with_none_is_a_python_bool_eagerly():
    """TF 2.21: eagerly `t == None` is Python's False and `t != None` True; in a tf.function
    both are bool tensors (tracer gave tensors eagerly too)."""
    t = tt.constant([1, 2])
    assert (t == None) is False  # noqa: E711
    assert (t != None) is True  # noqa: E711
    equal, unequal = tt.function(lambda x: (x == None, x != None))(t)  # noqa: E711
    assert isinstance(equal, tt.Tensor) and not bool(equal) and bool(unequal)


def test_composite_tensors_are_tensors():
    """TF 2.21: tf.is_tensor is True for a SparseTensor, a RaggedTensor, IndexedSlices and a
    Variable, False for a numpy array and a TensorArray (tracer said False for the first
    three)."""
    sparse = tt.sparse.from_dense([[1, 0]])
    ragged = tt.ragged.constant([[1], [2, 3]])
    slices = tt.IndexedSlices(tt.constant([1.0]), tt.constant([0]))
    for value in (sparse, ragged, slices, tt.Variable(1.0), tt.constant(1)):
        assert tt.is_tensor(value), value
    for value in (np.ones(2), tt.TensorArray(tt.float32, 2), 1.0):
        assert not tt.is_tensor(value), value


def test_optimizer_options_are_recorded_and_read_back_in_tensorflows_order():
    """TF 2.21 (the graph_optimization guide): get_experimental_options lists the two
    booleans at first, then each option set, merged with earlier ones in its own order,
    ignoring unknown names; get_jit is '' and 'autoclustering' after set_jit(True)."""
    optimizer = tt.config.optimizer
    saved, jit = optimizer.get_experimental_options(), optimizer.get_jit()
    try:
        optimizer.set_experimental_options({"constant_folding": False})
        optimizer.set_experimental_options(
            {"debug_stripper": True, "layout_optimizer": False, "bogus": 1}
        )
        assert list(optimizer.get_experimental_options().items()) == [
            ("layout_optimizer", False),
            ("constant_folding", False),
            ("debug_stripper", True),
            ("disable_model_pruning", False),
            ("disable_meta_optimizer", False),
        ]
        optimizer.set_jit(True)
        assert optimizer.get_jit() == "autoclustering"
    finally:
        optimizer._options = dict(saved)
        optimizer.set_jit(bool(jit))
