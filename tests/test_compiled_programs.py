"""Compiled training steps: variables as state of the compiled code, optimizers inside
tt.function, arguments as users pass them, and TensorFlow's tf.function surface."""

import functools
import traceback

import numpy as np
import pytest

import tracer as tt

rng = np.random.default_rng(13)

OPTIMIZERS = {
    "sgd": (tt.optimizers.SGD, {"learning_rate": 0.1}),
    "sgd_nesterov": (tt.optimizers.SGD, {"learning_rate": 0.05, "momentum": 0.9, "nesterov": True}),
    "adam": (tt.optimizers.Adam, {"learning_rate": 0.01}),
    "rmsprop_centered": (
        tt.optimizers.RMSprop,
        {"learning_rate": 0.01, "momentum": 0.5, "centered": True},
    ),
    "adagrad": (tt.optimizers.Adagrad, {"learning_rate": 0.1}),
}


def _train(optimizer_name, compiled, dtype, steps=100, batches=((16, 0),), **function_options):
    """Train a Dense model with a step compiled (with `function_options`) or not; its weights,
    the optimizer and the step."""
    tt.random.set_seed(3)
    model = tt.layers.Sequential(
        [tt.layers.Dense(32, activation="relu", dtype=dtype), tt.layers.Dense(3, dtype=dtype)]
    )
    cls, options = OPTIMIZERS[optimizer_name]
    optimizer = cls(**options)

    def train_step(x, y):
        with tt.GradientTape() as tape:
            logits = model(x)
            loss = tt.reduce_mean(tt.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    step = tt.function(train_step, **function_options) if compiled else train_step
    data = np.random.default_rng(0)
    for _ in range(steps):
        for size, _ in batches:
            x = data.standard_normal((size, 5)).astype(dtype)
            y = data.integers(0, 3, size).astype(np.int32)
            step(tt.constant(x), tt.constant(y))
    return [v.numpy() for v in model.trainable_variables], optimizer, step


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_a_compiled_training_step_gives_eagers_weights_after_100_steps(name):
    eager, _, _ = _train(name, compiled=False, dtype=np.float64)
    compiled, optimizer, step = _train(name, compiled=True, dtype=np.float64)
    for want, got in zip(eager, compiled):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
    # the first trace made the model's weights and the optimizer's slots: as TensorFlow, it
    # is made again with no variable made, and that trace serves every later call
    assert step.experimental_get_tracing_count() == 2
    assert int(optimizer.iterations.numpy()) == 100
    source = step.get_concrete_function(
        tt.constant(np.zeros((16, 5))), tt.constant(np.zeros(16, np.int32))
    ).c_source()
    assert "memcpy" not in source  # every variable, slots included, is updated in place


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_an_eager_update_on_arrays_gives_the_bits_of_the_update_in_ops(name, dtype):
    """An eager update nothing records runs on the variables' numpy arrays; under a tape it
    runs as tracer ops. Both give the same bits, of the variables and of every slot."""

    def trained(recorded):
        data = np.random.default_rng(5)
        w = tt.Variable(data.standard_normal((5, 3)).astype(dtype))
        b = tt.Variable(np.zeros(3, dtype))
        cls, options = OPTIMIZERS[name]
        optimizer = cls(**options)
        for _ in range(6):
            grads = [
                tt.constant(data.standard_normal(shape).astype(dtype)) for shape in ((5, 3), (3,))
            ]
            if recorded:
                with tt.GradientTape():
                    optimizer.apply_gradients(zip(grads, [w, b]))
            else:
                optimizer.apply_gradients(zip(grads, [w, b]))
        return [w.numpy(), b.numpy(), *(v.numpy() for v in optimizer.variables())]

    on_arrays, in_ops = trained(False), trained(True)
    assert len(on_arrays) == len(in_ops) >= 3  # (plain SGD has no slots)
    for a, b in zip(on_arrays, in_ops):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


def test_float32_steps_agree_to_float_tolerance():
    eager, _, _ = _train("sgd", compiled=False, dtype=np.float32)
    compiled, _, _ = _train("sgd", compiled=True, dtype=np.float32)
    for want, got in zip(eager, compiled):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_slot_variables_are_made_on_the_first_update_outside_the_trace():
    v = tt.Variable([1.0, 2.0])
    optimizer = tt.optimizers.Adam(0.1)

    @tt.function
    def step(g):
        optimizer.apply_gradients([(g, v)])

    step(tt.constant([0.5, -0.5]))
    m = optimizer.get_slot(v, "m")
    np.testing.assert_allclose(m.numpy(), [0.05, -0.05], rtol=1e-6)
    step(tt.constant([0.5, -0.5]))
    np.testing.assert_allclose(m.numpy(), [0.095, -0.095], rtol=1e-6)


def test_a_returned_variable_is_its_value_after_the_call():
    v = tt.Variable(0.0)

    @tt.function
    def bump():
        v.assign_add(1.0)
        return v

    assert [float(bump()) for _ in range(3)] == [1.0, 2.0, 3.0]
    assert float(v.numpy()) == 3.0


def test_reads_and_assigns_happen_in_program_order():
    v = tt.Variable([1.0, 2.0])

    @tt.function
    def f(x):
        before = v.read_value()
        v.assign(v * x)
        middle = v.read_value() + 0.0
        v.assign_add(x)
        return before, middle, v.read_value()

    before, middle, after = f(tt.constant([3.0, 4.0]))
    np.testing.assert_array_equal(before.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(middle.numpy(), [3.0, 8.0])
    np.testing.assert_array_equal(after.numpy(), [6.0, 12.0])
    np.testing.assert_array_equal(v.numpy(), [6.0, 12.0])


@pytest.mark.parametrize("backend", ["c", "interpreter"])
def test_updates_that_read_other_elements_or_other_variables_are_right(backend):
    a = tt.Variable(np.arange(4.0).reshape(2, 2))
    b = tt.Variable(np.full((2, 2), 10.0))
    w = tt.Variable(np.array([[0.0, 1.0], [1.0, 0.0]]))

    @tt.function(backend=backend)
    def f(x):
        a.assign(tt.transpose(a) + x)  # reads other elements of a
        w.assign(w @ w + 1.0)  # a product of the old value
        old_b = b.read_value()
        b.assign(a)  # another variable's new value
        return old_b, b.read_value()

    old_b, new_b = f(tt.constant(1.0, tt.float64))
    np.testing.assert_array_equal(old_b.numpy(), np.full((2, 2), 10.0))
    np.testing.assert_array_equal(a.numpy(), [[1.0, 3.0], [2.0, 4.0]])
    np.testing.assert_array_equal(new_b.numpy(), a.numpy())
    np.testing.assert_array_equal(w.numpy(), [[2.0, 1.0], [1.0, 2.0]])
    new_b_before = new_b.numpy().copy()
    f(tt.constant(1.0, tt.float64))
    np.testing.assert_array_equal(new_b.numpy(), new_b_before)  # results are not the variables


@pytest.mark.parametrize("backend", ["c", "interpreter"])
def test_variables_swapped_and_assigned_from_arguments(backend):
    a, b = tt.Variable([1.0, 2.0]), tt.Variable([3.0, 4.0])

    @tt.function(backend=backend)
    def swap(x):
        old_a = a.read_value()
        a.assign(b)
        b.assign(old_a)
        return x

    swap(tt.constant(0.0))
    np.testing.assert_array_equal(a.numpy(), [3.0, 4.0])
    np.testing.assert_array_equal(b.numpy(), [1.0, 2.0])

    @tt.function(backend=backend)
    def set_to(x):
        a.assign(x)

    set_to(tt.constant([7.0, 8.0]))
    np.testing.assert_array_equal(a.numpy(), [7.0, 8.0])


def test_a_snapshot_taken_before_a_compiled_update_keeps_its_value():
    v = tt.Variable([1.0, 2.0])
    snapshot = v.value()
    as_numpy = v.numpy()

    @tt.function
    def step():
        v.assign_add([1.0, 1.0])

    step()
    step()
    np.testing.assert_array_equal(snapshot.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(as_numpy, [1.0, 2.0])
    np.testing.assert_array_equal(v.numpy(), [3.0, 4.0])


def test_variables_made_while_tracing_are_lifted_and_only_on_the_first_trace():
    made = []

    @tt.function
    def f(x):
        if not made:
            made.append(tt.Variable(tt.zeros_like(x)))
        made[0].assign_add(x)
        return made[0].read_value()

    np.testing.assert_array_equal(f(tt.constant([1.0, 2.0])).numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(f(tt.constant([1.0, 2.0])).numpy(), [2.0, 4.0])

    @tt.function
    def g(x):
        return tt.Variable(1.0) * x

    # a variable made at every trace: refused at the first call, which traces again (as TF)
    with pytest.raises(
        ValueError, match="only supports singleton tt.Variables created on the first call"
    ):
        g(tt.constant(1.0))

    @tt.function
    def from_argument(x):
        return tt.Variable(x * 2.0)

    with pytest.raises(ValueError, match="initial value known outside"):
        from_argument(tt.constant(1.0))


@pytest.mark.parametrize("compiled", [False, True])
def test_scatter_updates_change_only_their_rows(compiled):
    table = tt.Variable(np.zeros((4, 2)))

    def update(values, indices):
        table.scatter_add(tt.IndexedSlices(values, indices, (4, 2)))
        table.scatter_sub(tt.IndexedSlices(values[:1] * 0.5, indices[:1], (4, 2)))

    run = tt.function(update) if compiled else update
    run(tt.constant([[1.0, 2.0], [3.0, 4.0]], tt.float64), tt.constant([3, 1]))
    np.testing.assert_array_equal(table.numpy(), [[0, 0], [3, 4], [0, 0], [0.5, 1]])
    with pytest.raises(ValueError, match="scatter_add: .* rows"):
        table.scatter_add(
            tt.IndexedSlices(tt.constant([[1.0, 1.0]], tt.float64), tt.constant([0, 1]), (4, 2))
        )
    with pytest.raises(ValueError, match="rows of shape"):
        table.scatter_add(tt.IndexedSlices(tt.constant([1.0], tt.float64), tt.constant([0]), (4,)))


def test_sparse_sgd_inside_a_compiled_step():
    table = tt.Variable(np.ones((5, 3)))
    optimizer = tt.optimizers.SGD(0.5)

    @tt.function
    def step(ids):
        with tt.GradientTape() as tape:
            loss = tt.reduce_sum(tt.gather(table, ids))
        optimizer.apply_gradients([(tape.gradient(loss, table), table)])

    step(tt.constant([0, 2, 2]))
    np.testing.assert_array_equal(table.numpy()[:, 0], [0.5, 1.0, 0.0, 1.0, 1.0])


# --- arguments as users pass them ------------------------------------------------------------


@pytest.mark.parametrize(
    "argument",
    [
        np.arange(6.0).reshape(2, 3),
        np.asfortranarray(np.arange(6.0).reshape(2, 3)),
        np.arange(12.0)[::2],
        np.array(3.0),
        np.float32(2.5),
        np.int64(3),
        np.arange(4, dtype=np.int32),
    ],
    ids=["c-order", "fortran", "strided", "0-d", "numpy float32", "numpy int64", "int32"],
)
@pytest.mark.parametrize("backend", ["c", "interpreter"])
def test_numpy_arrays_and_scalars_are_tensor_arguments(argument, backend):
    f = tt.function(lambda x: x * 2, backend=backend)
    result = f(argument)
    np.testing.assert_array_equal(result.numpy(), np.asarray(argument) * 2)
    assert result.dtype == np.asarray(argument).dtype
    f(np.ones_like(np.asarray(argument)))
    assert f.experimental_get_tracing_count() == 1  # keyed by shape and dtype, not value


def test_arguments_tracer_cannot_take_are_named():
    with pytest.raises(TypeError, match="<lambda>: argument x: tracer has no dtype for datetime64"):
        tt.function(lambda x: x)(np.zeros(3, "datetime64[s]"))
    with pytest.raises(
        TypeError, match="argument options: a set is not a tensor, a variable or a hashable"
    ):
        tt.function(lambda x, options: x)(tt.constant(1.0), {1, 2})


@pytest.mark.parametrize("backend", ["c", "interpreter"])
def test_variables_as_arguments_are_state_by_identity(backend):
    @tt.function(backend=backend)
    def accumulate(total, x):
        total.assign_add(x)
        return total

    a, b = tt.Variable([0.0, 0.0]), tt.Variable([10.0, 10.0])
    accumulate(a, tt.constant([1.0, 2.0]))
    accumulate(b, tt.constant([1.0, 2.0]))
    np.testing.assert_array_equal(accumulate(a, tt.constant([1.0, 2.0])).numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(b.numpy(), [11.0, 12.0])
    assert accumulate.experimental_get_tracing_count() == 2  # one per variable


def test_python_values_and_nested_structures():
    f = tt.function(lambda d: d["a"] * d["scale"] + d["rest"][0])
    args = {"a": np.float32(1.5), "scale": 2.0, "rest": [tt.constant(0.25)]}
    assert float(f(args)) == 3.25
    args["scale"] = 3.0
    assert float(f(args)) == 4.75 and f.experimental_get_tracing_count() == 2


def test_zero_and_negative_zero_trace_apart_and_nan_traces_once():
    f = tt.function(lambda x, s: x / s)
    assert float(f(tt.constant(1.0), 0.0)) == np.inf
    assert float(f(tt.constant(1.0), -0.0)) == -np.inf
    g = tt.function(lambda x, s: x * s)
    for _ in range(3):
        assert np.isnan(float(g(tt.constant(1.0), float("nan"))))
    assert g.experimental_get_tracing_count() == 1


def test_partials_callable_objects_and_bound_methods_compile():
    def scaled(x, factor):
        return x * factor

    class Doubler:
        def __call__(self, x):
            return x * 2.0

    class Model:
        def __init__(self):
            self.w = tt.Variable(3.0)

        def apply(self, x):
            return x * self.w

        @tt.function
        def compiled_apply(self, x):
            return x * self.w

    model = Model()
    x = tt.constant(2.0)
    assert float(tt.function(functools.partial(scaled, factor=5.0))(x)) == 10.0
    assert float(tt.function(Doubler())(x)) == 4.0
    assert float(tt.function(model.apply)(x)) == 6.0
    assert float(model.compiled_apply(x)) == 6.0
    assert tt.function(functools.partial(scaled, factor=1.0)).__name__ == "scaled"


# --- TensorFlow's tf.function surface ------------------------------------------------------


def test_run_functions_eagerly_runs_the_python_function():
    calls = []

    @tt.function
    def f(x):
        calls.append(x._value is not None)  # eager tensors have values
        return x + 1

    tt.config.run_functions_eagerly(True)
    try:
        assert tt.config.functions_run_eagerly()
        f(tt.constant(1.0))
        f(tt.constant(1.0))
    finally:
        tt.config.run_functions_eagerly(False)
    f(tt.constant(1.0))
    f(tt.constant(1.0))
    assert calls == [True, True, False]  # then traced once


@pytest.mark.parametrize("backend", ["c", "interpreter"])
def test_print_prints_at_every_call_in_order(capsys, backend):
    v = tt.Variable([1.0, 2.0])

    @tt.function(backend=backend)
    def f(x):
        tt.print("x:", x)
        v.assign_add(x)
        tt.print("v:", v, "sum:", tt.reduce_sum(v), output_stream=__import__("sys").stdout)
        return x

    assert capsys.readouterr() == ("", "")
    f(tt.constant([1.0, 1.0]))
    f(tt.constant([0.5, 0.5]))
    captured = capsys.readouterr()
    assert captured.err == "x: [1 1]\nx: [0.5 0.5]\n"  # as TensorFlow's tf.print
    assert captured.out == "v: [2 3] sum: 5\nv: [2.5 3.5] sum: 6\n"


def test_print_eagerly_and_summarized(capsys):
    tt.print("values", tt.range(10), [1, tt.constant(2.5)], sep="|")
    assert capsys.readouterr().err == "values|[0 1 2 ... 7 8 9]|[1, 2.5]\n"


def test_a_concrete_function_is_callable():
    f = tt.function(lambda x, scale: x * scale)
    concrete = f.get_concrete_function(tt.TensorSpec((2,), tt.float32), 3.0)
    np.testing.assert_array_equal(concrete(tt.constant([1.0, 2.0])).numpy(), [3.0, 6.0])
    np.testing.assert_array_equal(concrete(tt.constant([1.0, 2.0]), 3.0).numpy(), [3.0, 6.0])
    with pytest.raises(TypeError, match="traced for 3.0"):
        concrete(tt.constant([1.0, 2.0]), 4.0)
    with pytest.raises(TypeError, match="tensor argument 0 is float32\\[3\\]"):
        concrete(tt.constant([1.0, 2.0, 3.0]))
    assert f.experimental_get_tracing_count() == 1


def test_pretty_printed_concrete_signatures():
    @tt.function
    def loss(x, labels, scale=2.0):
        return tt.reduce_sum(x) * scale, labels

    loss(tt.constant(np.ones((2, 3), np.float32)), tt.constant([1, 0]))
    text = loss.pretty_printed_concrete_signatures()
    # TensorFlow 2.21's text, with tracer's dtypes (tt.float32 where TensorFlow has tf.float32)
    assert text.splitlines() == [
        "Input Parameters:",
        "  x (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(2, 3), dtype=tt.float32, name=None)",
        "  labels (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(2,), dtype=tt.int32, name=None)",
        "  scale (POSITIONAL_OR_KEYWORD): Literal[2.0]",
        "Output Type:",
        "  Tuple[TensorSpec(shape=(), dtype=tt.float32, name=None), "
        "TensorSpec(shape=(2,), dtype=tt.int32, name=None)]",
        "Captures:",
        "  None",
    ]


def test_a_tensor_leaked_out_of_a_trace_is_refused_where_it_is_used():
    leaked = []

    @tt.function
    def f(x):
        y = x * 2
        leaked.append(y)
        return y

    f(tt.constant(1.0))
    with pytest.raises(
        TypeError, match="out of scope and cannot be used here.*test_compiled_programs.py"
    ):
        leaked[0] + 1
    with pytest.raises(TypeError, match="out of scope"):
        leaked[0].numpy()


def test_errors_keep_only_the_users_frames_and_name_the_users_line():
    def model(p, i):
        return tt.gather(p, i) * 2.0

    f = tt.function(model)
    with pytest.raises(IndexError) as info:
        f(tt.constant([1.0, 2.0]), tt.constant([0, 5]))  # at call time, in the compiled code
    line = model.__code__.co_firstlineno + 1
    assert f"out of range [0, 2) (at test_compiled_programs.py:{line})" in str(info.value)
    frames = traceback.extract_tb(info.value.__traceback__)
    assert [f.filename for f in frames].count(tt.function.__code__.co_filename) == 1  # the call
    assert all(f.filename in (__file__, tt.function.__code__.co_filename) for f in frames)

    def broken(x):
        return tt.reshape(x, (4,))

    with pytest.raises(ValueError) as info:  # at trace time: the user's line is the last frame
        tt.function(broken)(tt.constant([1.0, 2.0]))
    assert traceback.extract_tb(info.value.__traceback__)[-1].line == "return tt.reshape(x, (4,))"


# --- eager fixes found on the way ----------------------------------------------------------


def test_the_gradient_of_a_variable_with_respect_to_itself_is_one():
    v = tt.Variable([2.0, 3.0])
    with tt.GradientTape() as tape:
        pass
    np.testing.assert_array_equal(tape.gradient(v, v).numpy(), [1.0, 1.0])
    x = tt.constant(2.0)
    with tt.GradientTape(persistent=True) as tape:
        y = x * x
    assert float(tape.gradient(x, x)) == 1.0
    assert tape.gradient(y, x) is None  # not watched: only the source itself has a gradient


@pytest.mark.parametrize("backend", ["eager", "interpreter", "c"])
def test_out_of_range_gather_indices_raise_in_every_backend(backend):
    def f(p, i):
        return tt.gather(p, i)

    run = f if backend == "eager" else tt.function(f, backend=backend)
    for bad in ([0, 2], [-1, 0]):
        with pytest.raises(IndexError, match=r"out of range \[0, 2\)"):
            run(tt.constant([1.0, 2.0]), tt.constant(bad))


@pytest.mark.parametrize("backend", ["eager", "interpreter", "c"])
def test_integer_pow_with_a_negative_exponent_raises_in_every_backend(backend):
    def f(x, y):
        return x**y

    run = f if backend == "eager" else tt.function(f, backend=backend)
    with pytest.raises(ValueError, match="integers to negative integer powers are not allowed"):
        run(tt.constant([2, 3]), tt.constant([1, -1]))
    np.testing.assert_array_equal(run(tt.constant([2, 3]), tt.constant([3, 0])).numpy(), [8, 1])


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.int64])
@pytest.mark.parametrize("reduce", ["reduce_max", "reduce_min", "reduce_sum", "reduce_prod"])
def test_reductions_of_an_empty_axis_agree_in_every_backend(reduce, dtype):
    function = getattr(tt, reduce)
    x = tt.constant(np.zeros((0, 3), dtype))
    eager = function(x, axis=0).numpy()
    for backend in ("interpreter", "c"):
        np.testing.assert_array_equal(
            tt.function(lambda v: function(v, axis=0), backend=backend)(x).numpy(), eager
        )
    if reduce in ("reduce_max", "reduce_min"):  # TensorFlow's identities, not numpy's error
        info = np.iinfo(dtype) if np.issubdtype(dtype, np.integer) else None
        lowest = info.min if info else -np.inf
        highest = info.max if info else np.inf
        np.testing.assert_array_equal(
            eager, [lowest] * 3 if reduce == "reduce_max" else [highest] * 3
        )
    with pytest.raises(ValueError, match="is empty"):
        tt.argmax(x, axis=0)


@pytest.mark.parametrize("backend", ["c", "interpreter"])
def test_argmax_of_an_axis_known_only_at_run_time_refuses_an_empty_one(backend):
    """A trace of argmax over an unknown size assumes it is not 0, so an empty call is traced
    with its size and refused, as eagerly (TensorFlow: InvalidArgumentError), not answered 0
    by code that read no element."""
    signature = [tt.TensorSpec([None], tt.float32)]
    f = tt.function(tt.argmax, input_signature=signature, backend=backend)
    assert f(np.array([1.0, 3.0, 2.0], np.float32)).numpy() == 1
    with pytest.raises(ValueError, match="is empty"):
        f(np.zeros(0, np.float32))


# --- shape-polymorphic compiled code ------------------------------------------------------


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
@pytest.mark.parametrize("backend", ["c", "interpreter"])
def test_one_trace_of_a_training_step_serves_every_batch_size(name, backend):
    sizes = ((1, 0), (7, 0), (128, 0), (7, 0))
    eager, _, _ = _train(name, compiled=False, dtype=np.float64, steps=3, batches=sizes)
    specs = [tt.TensorSpec([None, 5], tt.float64), tt.TensorSpec([None], tt.int32)]
    compiled, _, step = _train(
        name, True, np.float64, steps=3, batches=sizes, input_signature=specs, backend=backend
    )
    assert step.experimental_get_tracing_count() == 2  # the first made variables: traced again
    for want, got in zip(eager, compiled):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-13)


def _polymorphic_program(x, labels, w):
    """Elementwise math, products, reductions over the unknown axis, reshapes that merge it,
    gathers and one-hots of per-example labels, slices of known axes, and shape values."""
    h = tt.nn.relu(x @ w)
    flat = tt.reshape(tt.concat([h, x[:, 1:]], axis=1), [-1])
    rows = tt.reshape(flat, (-1, w.shape[1] + x.shape[1] - 1))
    loss = tt.reduce_mean(tt.nn.sparse_softmax_cross_entropy_with_logits(labels, rows[:, :3]))
    picked = tt.gather(tf_transpose(rows), labels, axis=1)
    scale = tt.cast(tt.size(x), x.dtype) / tt.cast(tt.shape(x)[1], x.dtype)
    return loss + tt.reduce_sum(picked) / scale, tt.reduce_max(rows, axis=0), tt.one_hot(labels, 3)


def tf_transpose(t):
    return tt.transpose(t)


@pytest.mark.parametrize("batch", [0, 1, 5, 33])
def test_polymorphic_code_agrees_with_eager_in_every_backend_at_every_size(batch):
    specs = [
        tt.TensorSpec([None, 4], tt.float64),
        tt.TensorSpec([None], tt.int32),
        tt.TensorSpec([4, 3], tt.float64),
    ]
    data = np.random.default_rng(batch)
    args = [
        tt.constant(data.standard_normal((batch, 4))),
        tt.constant(data.integers(0, 3, batch).astype(np.int32)),
        tt.constant(data.standard_normal((4, 3))),
    ]
    eager = _polymorphic_program(*args)
    for backend in ("c", "interpreter"):
        f = tt.function(_polymorphic_program, input_signature=specs, backend=backend)
        if batch == 0:  # the mean of nothing and the max of nothing, as eager gives them
            np.testing.assert_array_equal(f(*args)[1].numpy(), eager[1].numpy())
            continue
        for got, want in zip(f(*args), eager):
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-14)


def test_gradients_of_polymorphic_code_to_second_order():
    def value_and_grads(x, w):
        with tt.GradientTape() as outer:
            outer.watch(w)
            with tt.GradientTape() as inner:
                inner.watch(w)
                y = tt.reduce_mean(tt.tanh(x @ w) ** 2)
            g = inner.gradient(y, w)
            g_norm = tt.reduce_sum(g * g)
        return y, g, outer.gradient(g_norm, w)

    specs = [tt.TensorSpec([None, 3], tt.float64), tt.TensorSpec([3, 2], tt.float64)]
    compiled = tt.function(value_and_grads, input_signature=specs)
    data = np.random.default_rng(1)
    w = tt.constant(data.standard_normal((3, 2)))
    for batch in (2, 9):
        x = tt.constant(data.standard_normal((batch, 3)))
        for got, want in zip(compiled(x, w), value_and_grads(x, w)):
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-14)
    assert compiled.experimental_get_tracing_count() == 1


def test_shape_errors_against_the_spec_name_the_argument_and_both_shapes():
    f = tt.function(
        lambda x, y: x * y[:, None],
        input_signature=[tt.TensorSpec([None, 3]), tt.TensorSpec([None])],
    )
    with pytest.raises(
        ValueError,
        match=r"argument x is float32\[4, 2\], the input_signature says float32\[None, 3\]",
    ):
        f(tt.ones((4, 2)), tt.ones((4,)))
    with pytest.raises(ValueError, match=r"mul: shapes \(4, 3\) and \(5, 1\) cannot be broadcast"):
        f(tt.ones((4, 3)), tt.ones((5,)))  # the unknown batch sizes of x and y differ
    with pytest.raises(
        TypeError, match=r"argument y is 2.0, the input_signature says float32\[None\]"
    ):
        f(tt.ones((4, 3)), 2.0)


def test_what_cannot_be_done_with_an_unknown_dimension_is_traced_with_each_calls_sizes():
    """A step-2 slice of an axis of unknown size, or its size as a Python int, cannot be
    traced from the input_signature: each call is traced with its own sizes instead."""

    def every_other_row(x):
        return x[::2]  # (x[1:] keeps d0 unknown: tests/test_shape_values.py)

    rows = tt.function(every_other_row, input_signature=[tt.TensorSpec([None, 3])])
    x = np.arange(15.0, dtype=np.float32).reshape(5, 3)
    np.testing.assert_array_equal(rows(x).numpy(), x[::2])
    np.testing.assert_array_equal(rows(x[:2]).numpy(), x[:2][::2])

    def python_int(x):
        return tt.zeros((int(x.shape[0]),))

    sized = tt.function(python_int, input_signature=[tt.TensorSpec([None])])
    assert sized(tt.ones((2,))).numpy().tolist() == [0.0, 0.0]
    assert sized(tt.ones((3,))).shape == (3,)


def test_reduce_retracing_traces_a_generalized_signature_after_a_changed_dimension(caplog):
    f = tt.function(lambda x, s: tt.reduce_sum(x * s, axis=1), reduce_retracing=True)
    with caplog.at_level("INFO", logger="tracer.function"):
        for batch in (2, 3, 4, 5):
            np.testing.assert_array_equal(
                f(tt.constant(np.ones((batch, 3))), 2.0).numpy(), [6.0] * batch
            )
    assert f.experimental_get_tracing_count() == 2
    assert "float64[2, 3] -> float64[None, 3]" in caplog.text and "reduce_retracing" in caplog.text
    f(tt.constant(np.ones((4, 5))), 2.0)
    assert f.experimental_get_tracing_count() == 3  # the other axis generalized too
    f(tt.constant(np.ones((7, 9))), 2.0)
    assert f.experimental_get_tracing_count() == 3
    assert "shape=(None, None)" in f.pretty_printed_concrete_signatures()


def test_polymorphic_code_on_a_tape_inside_another_trace_and_checking_numerics():
    inner = tt.function(
        lambda x: tt.reduce_mean(tt.sin(x) * x, axis=0),
        input_signature=[tt.TensorSpec([None, 3], tt.float64)],
    )
    x = tt.constant(np.random.default_rng(2).random((4, 3)))
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = tt.reduce_sum(inner(x))
    expected = (np.cos(x.numpy()) * x.numpy() + np.sin(x.numpy())) / 4
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), expected, rtol=1e-12)
    outer = tt.function(lambda x: inner(x) * 2.0)
    np.testing.assert_allclose(outer(x).numpy(), 2 * np.mean(np.sin(x.numpy()) * x.numpy(), axis=0))
    tt.debugging.enable_check_numerics()
    try:
        np.testing.assert_allclose(inner(x).numpy(), np.mean(np.sin(x.numpy()) * x.numpy(), axis=0))
    finally:
        tt.debugging.disable_check_numerics()


def test_threads_calling_one_compiled_function_each_get_their_own_results():
    """Each thread has its own argument array and workspace (kept between its calls)."""
    import threading

    @tt.function(input_signature=[tt.TensorSpec([None, 64], tt.float64)], backend="c")
    def f(x):
        h = tt.tanh(x @ tt.transpose(x) + 1.0)
        return tt.reduce_sum(h * h, axis=1) + tt.reduce_max(x, axis=1)

    def want(x):
        h = np.tanh(x @ x.T + 1.0)
        return np.sum(h * h, axis=1) + np.max(x, axis=1)

    failures = []

    def work(seed):
        rng = np.random.default_rng(seed)
        for k in range(40):
            x = rng.normal(size=(1 + (seed * 7 + k * 13) % 90, 64))  # workspaces grow and shrink
            got = f(tt.constant(x)).numpy()
            if not np.allclose(got, want(x), rtol=1e-12, atol=1e-12):
                failures.append((seed, k))

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


def test_workspace_offsets_of_run_time_sizes_are_short_and_exact():
    """A workspace block's offset, where sizes are known only at run time, is the known
    sizes' sum plus each run-time size times its count: its C text does not grow with the
    blocks before it (an unrolled loop's thousands made the module's C quadratic), and its
    value is the sum of the aligned blocks before it."""
    from codegen.lower import _packed
    from tracer.ir.dims import Dim

    d0 = Dim.symbol("d0")
    blocks = [(128 * d0, 256, 12288 * d0 + 5)[k % 3] for k in range(3000)]
    offsets, _ = _packed(blocks)
    assert max(len(text) for text in offsets) < 80

    def align(n):
        return (n + 63) // 64 * 64

    for size in (1, 7, 32):
        expected = 0
        for k, block in enumerate(blocks[:40]):
            value = eval(offsets[k].replace("TR_ALIGN", "align"), {"align": align, "d0": size})
            assert value == expected
            expected += align(block if isinstance(block, int) else eval(str(block), {"d0": size}))


def test_a_kernel_of_a_dimension_made_unknown_is_light_at_the_sizes_seen():
    """Traced again with the batch unknown after calls of 8 and 4 rows, an elementwise
    kernel of [batch, 16] is compiled as the light kernel it is at those sizes (-O1,
    codegen/lower.py); traced for any batch from the start, nothing tells its size."""

    def model(x):
        return tt.tanh(x * 2.0 + 1.0)

    adapted = tt.function(model)
    adapted(np.ones((8, 16), np.float32))
    adapted(np.ones((4, 16), np.float32))
    general = adapted.get_concrete_function(tt.TensorSpec([None, 16], tt.float32))
    assert "TR_LIGHT\n" in general.c_source()
    np.testing.assert_allclose(
        general(np.ones((1000, 16), np.float32)).numpy(),
        np.tanh(np.full((1000, 16), 3.0)),
        rtol=1e-6,
    )
    declared = tt.function(model, input_signature=[tt.TensorSpec([None, 16], tt.float32)])
    assert "TR_LIGHT\n" not in declared.get_concrete_function().c_source()
