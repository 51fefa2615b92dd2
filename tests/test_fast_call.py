"""A compiled function's call path in C (`runtime/fast_call.c`) gives what the Python call
path gives, bit for bit, takes the common case, and steps aside for everything else."""

import os
import threading

import numpy as np
import pytest

import tracer as tt
from runtime import fast_call

pytestmark = pytest.mark.skipif(not fast_call.available(), reason="runtime/fast_call.c not built")

RNG = np.random.default_rng(7)
W = RNG.standard_normal((6, 5)).astype(np.float32)  # a constant of the module


def _mlp(x):
    h = tt.tanh(tt.matmul(x, W))
    return tt.reduce_sum(tt.square(tt.matmul(h, tt.transpose(tt.constant(W)))) * x)


def _value_and_grad_sum(x):
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = _mlp(x)
    return tape.gradient(y, x)


CASES = {
    "scalar gradient": (tt.grad(lambda x: x * x), [np.float32(3.0)]),
    "matrix gradient, constants and a workspace": (
        _value_and_grad_sum,
        [RNG.standard_normal((4, 6)).astype(np.float32)],
    ),
    "two arguments, float64": (
        lambda a, b: tt.matmul(a, b) + tt.sin(a[:, :1]),
        [RNG.standard_normal((3, 4)), RNG.standard_normal((4, 2))],
    ),
    "integers and a boolean result": (
        lambda a, b: tt.greater(a * 2, b),
        [np.arange(6, dtype=np.int32), np.full(6, 5, np.int32)],
    ),
    "complex": (
        lambda z: z * tt.math.conj(z) + 1j,
        [(RNG.standard_normal(5) + 1j * RNG.standard_normal(5)).astype(np.complex64)],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_entry_gives_the_python_path_s_values(name):
    python_function, arrays = CASES[name]
    f = tt.function(python_function)
    args = [tt.constant(a) for a in arrays]
    reference = f.get_concrete_function(*args)(*args).numpy()  # the generated Python call
    first = f(*args)
    assert f._fast is not None
    hits = f._fast.hits
    second = f(*args)
    assert f._fast.hits == hits + 1  # the entry ran it
    for result in (first, second):
        assert type(result) is tt.Tensor and result.dtype == tt.as_dtype(reference.dtype)
        np.testing.assert_array_equal(result.numpy(), reference)
    assert result.numpy() is not first.numpy()  # a new array each call


def test_a_workspace_and_constants_are_what_the_entry_passes():
    f = tt.function(_value_and_grad_sum)
    x = tt.constant(CASES["matrix gradient, constants and a workspace"][1][0])
    plan = f.get_concrete_function(x)._executable.plan
    assert plan.workspace_bytes > 0 and len(plan.constants) > 0


def _resident_bytes():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs Linux's /proc")
def test_the_entry_takes_over_the_workspace_of_the_python_path_s_calls():
    @tt.function
    def f(a):
        c = tt.matmul(a, a)  # held in the workspace while the next product reads it
        return tt.reduce_sum(tt.matmul(c, c), axis=0)

    a = tt.constant(RNG.standard_normal((1024, 1024)) / 32)
    first = f(a)  # the Python path's call, which keeps its workspace
    workspace_bytes = f.get_concrete_function(a)._executable.plan.workspace_bytes
    assert workspace_bytes >= 1024 * 1024 * 8
    resident = _resident_bytes()
    hits = f._fast.hits
    later = [f(a) for _ in range(3)]
    assert f._fast.hits == hits + 3
    # the entry's calls wrote no second workspace: the process grew by much less than one
    assert _resident_bytes() - resident < workspace_bytes // 2
    expected = np.sum((a.numpy() @ a.numpy()) @ (a.numpy() @ a.numpy()), axis=0)
    for result in (first, *later):
        np.testing.assert_allclose(result.numpy(), expected, rtol=1e-9, atol=1e-9)


def test_other_shapes_dtypes_and_layouts_take_the_python_path():
    f = tt.function(lambda x: tt.reduce_sum(x * tt.range(x.shape[-1], dtype=x.dtype), axis=-1))
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    b = RNG.standard_normal((2, 5)).astype(np.float32)

    def expected(v):
        return np.sum(v * np.arange(v.shape[-1], dtype=v.dtype), axis=-1)

    close = {"rtol": 1e-6, "atol": 1e-6}  # float32 sums of signed terms, in two orders
    for value in (a, b, a, b, a.astype(np.float64)):
        np.testing.assert_allclose(f(tt.constant(value)).numpy(), expected(value), **close)
    transposed = tt.transpose(tt.constant(np.ascontiguousarray(a.T)))  # equal to a, maybe a view
    np.testing.assert_allclose(f(transposed).numpy(), expected(a), **close)
    np.testing.assert_allclose(f(a).numpy(), expected(a), **close)  # a numpy array, not a Tensor
    assert f.experimental_get_tracing_count() == 3  # (3, 4) and (2, 5) float32, (3, 4) float64


def test_under_a_tape_the_call_is_recorded():
    f = tt.function(lambda x: tt.reduce_sum(tt.sin(x) * x))
    x = tt.constant(np.linspace(-1.0, 1.0, 5))
    f(x), f(x)  # the entry is in place
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    g = tape.gradient(y, x)
    v = np.linspace(-1.0, 1.0, 5)
    np.testing.assert_allclose(g.numpy(), np.cos(v) * v + np.sin(v), rtol=1e-12)


def test_inside_another_trace_and_with_check_numerics():
    inner = tt.function(lambda x: tt.math.log(x))
    x = tt.constant(np.array([1.0, 2.0]))
    inner(x), inner(x)
    outer = tt.function(lambda x: inner(x) * 2)
    np.testing.assert_allclose(outer(x).numpy(), 2 * np.log([1.0, 2.0]))
    tt.debugging.enable_check_numerics()
    try:
        with pytest.raises(tt.debugging.NumericsError, match="log made NaN"):
            inner(tt.constant(np.array([-1.0, 2.0])))
    finally:
        tt.debugging.disable_check_numerics()
    assert np.isnan(inner(tt.constant(np.array([-1.0, 2.0]))).numpy()[0])


def test_variables_are_read_at_each_call():
    v = tt.Variable(np.array([1.0, 2.0], np.float32))
    f = tt.function(lambda x: x * v)
    x = tt.constant(np.array([3.0, 4.0], np.float32))
    np.testing.assert_array_equal(f(x).numpy(), [3.0, 8.0])
    np.testing.assert_array_equal(f(x).numpy(), [3.0, 8.0])
    assert f._fast is not None
    v.assign([10.0, -1.0])
    np.testing.assert_array_equal(f(x).numpy(), [30.0, -4.0])
    v.assign_add([1.0, 1.0])
    np.testing.assert_array_equal(f(x).numpy(), [33.0, 0.0])


def test_a_module_s_error_is_the_python_path_s_error():
    f = tt.function(lambda params, indices: tt.gather_nd(params, indices))
    params = tt.constant(np.arange(5.0))
    good, bad = tt.constant(np.array([[4], [0]])), tt.constant(np.array([[1], [7]]))
    np.testing.assert_array_equal(f(params, good).numpy(), [4.0, 0.0])
    np.testing.assert_array_equal(f(params, good).numpy(), [4.0, 0.0])
    assert f._fast is not None
    with pytest.raises(IndexError) as fast_error:
        f(params, bad)
    concrete = f.get_concrete_function(params, bad)
    with pytest.raises(IndexError) as python_error:
        concrete(params, bad)
    assert str(fast_error.value) == str(python_error.value)
    assert str(fast_error.value).startswith("gather_nd: an index in indices is out of range")
    np.testing.assert_array_equal(f(params, good).numpy(), [4.0, 0.0])  # and it runs on


def test_threads_calling_one_function_get_their_own_results():
    f = tt.function(_value_and_grad_sum)
    inputs = [RNG.standard_normal((4, 6)).astype(np.float32) for _ in range(8)]
    expected = [f.get_concrete_function(tt.constant(a))(tt.constant(a)).numpy() for a in inputs]
    failures = []

    def work(k):
        x = tt.constant(inputs[k])
        for _ in range(300):
            if not np.array_equal(f(x).numpy(), expected[k]):
                failures.append(k)
                return

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert f.cache_info().hits >= 8 * 300 - 8


def test_cache_info_counts_the_entry_s_calls():
    f = tt.function(lambda x: x + 1)
    x = tt.constant(np.float32(1.0))
    for _ in range(5):
        f(x)
    info = f.cache_info()
    assert (info.hits, info.misses) == (4, 1)


def test_without_the_extension_calls_take_the_python_path(monkeypatch):
    monkeypatch.setattr(fast_call, "_extension", None)
    f = tt.function(lambda x: tt.exp(x))
    x = tt.constant(np.array([0.0, 1.0]))
    np.testing.assert_allclose(f(x).numpy(), np.exp([0.0, 1.0]))
    np.testing.assert_allclose(f(x).numpy(), np.exp([0.0, 1.0]))
    assert f._fast is None


def test_the_tiered_backend_switches_to_the_entry_once_built():
    f = tt.function(lambda x: tt.tanh(x) * 3, backend="tiered")
    x = tt.constant(np.linspace(-2, 2, 7))
    np.testing.assert_allclose(f(x).numpy(), np.tanh(np.linspace(-2, 2, 7)) * 3, rtol=1e-12)
    f.get_concrete_function(x)._executable.wait()
    f(x)
    assert f._fast is not None
    np.testing.assert_allclose(f(x).numpy(), np.tanh(np.linspace(-2, 2, 7)) * 3, rtol=1e-12)


def test_an_entry_refuses_what_it_cannot_call():
    f = tt.function(lambda x: x * 2)
    x = tt.constant(np.float32(2.0))
    f(x), f(x)
    with pytest.raises(TypeError, match="one tuple"):
        f._fast(x)


def _training_step(with_extension, monkeypatch):
    """A compiled Adam step on two variables, returning its loss, made with or without the
    extension; returns (step, variables)."""
    if not with_extension:
        monkeypatch.setattr(fast_call, "_extension", None)
    w = tt.Variable(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3))
    b = tt.Variable(np.zeros(3, np.float32))
    optimizer = tt.keras.optimizers.Adam(0.05)

    @tt.function
    def step(x, y):
        with tt.GradientTape() as tape:
            loss = tt.reduce_mean(tt.square(tt.tanh(tt.matmul(x, w) + b) - y))
        optimizer.apply_gradients(zip(tape.gradient(loss, [w, b]), [w, b]))
        return loss

    step(tt.constant(np.zeros((5, 4), np.float32)), tt.constant(np.zeros((5, 3), np.float32)))
    monkeypatch.undo()
    return step, (w, b)


def test_a_training_step_writes_its_variables_as_the_python_path_does(monkeypatch):
    x = tt.constant(RNG.standard_normal((5, 4)).astype(np.float32))
    y = tt.constant(RNG.standard_normal((5, 3)).astype(np.float32))
    fast, fast_variables = _training_step(True, monkeypatch)
    slow, slow_variables = _training_step(False, monkeypatch)
    assert fast._fast is not None and slow._fast is None
    for _ in range(5):
        assert float(fast(x, y)) == float(slow(x, y))
    assert fast._fast.hits >= 5
    for v, u in zip(fast_variables, slow_variables):
        np.testing.assert_array_equal(v.numpy(), u.numpy())


def test_a_snapshot_of_a_variable_keeps_its_value(monkeypatch):
    x = tt.constant(RNG.standard_normal((5, 4)).astype(np.float32))
    y = tt.constant(RNG.standard_normal((5, 3)).astype(np.float32))
    step, (w, _) = _training_step(True, monkeypatch)
    step(x, y)
    snapshot = w.value()  # shares w's array until w is written: the Python path copies it
    before = snapshot.numpy().copy()
    hits = step._fast.hits
    step(x, y)
    assert step._fast.hits == hits  # the Python path took that call
    np.testing.assert_array_equal(snapshot.numpy(), before)
    step(x, y)
    assert step._fast.hits == hits + 1  # w's array is its own again
    np.testing.assert_array_equal(snapshot.numpy(), before)
    assert not np.array_equal(w.numpy(), before)  # (.numpy() shares it: the next call copies)


@pytest.mark.parametrize("kind", [list, tuple])
def test_flat_lists_and_tuples_of_tensors(kind):
    f = tt.function(lambda a, b: kind([a * b, tt.reduce_sum(a), tt.cast(b > 0, tt.int32)]))
    a = tt.constant(RNG.standard_normal(4))
    b = tt.constant(RNG.standard_normal(4))
    reference = f.get_concrete_function(a, b)(a, b)
    for _ in range(2):
        result = f(a, b)
        assert type(result) is kind and len(result) == 3
        for got, want in zip(result, reference):
            assert type(got) is tt.Tensor
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert f._fast is not None and f._fast.hits == 1  # the first call found the signature


def test_other_structures_take_the_python_path():
    nested = tt.function(lambda a: [a * 2, [a + 1]])
    named = tt.function(lambda a: {"double": a * 2})
    a = tt.constant(np.arange(3.0))
    for _ in range(2):
        first, (second,) = nested(a)
        np.testing.assert_array_equal(first.numpy(), [0.0, 2.0, 4.0])
        np.testing.assert_array_equal(second.numpy(), [1.0, 2.0, 3.0])
        np.testing.assert_array_equal(named(a)["double"].numpy(), [0.0, 2.0, 4.0])
    assert nested._fast is None and named._fast is None


def test_a_returned_variable_is_not_its_array():
    v = tt.Variable(np.array([1.0, 2.0]))

    @tt.function
    def bump(x):
        v.assign_add(x)
        return v

    x = tt.constant(np.array([1.0, 1.0]))
    first = bump(x)
    second = bump(x)
    np.testing.assert_array_equal(first.numpy(), [2.0, 3.0])  # not changed by the second call
    np.testing.assert_array_equal(second.numpy(), [3.0, 4.0])
    np.testing.assert_array_equal(v.numpy(), [3.0, 4.0])


def test_a_step_of_many_variables_passes_them_all():
    variables = [tt.Variable(np.full(3, float(k))) for k in range(80)]  # 80 inputs, 80 written

    @tt.function
    def step(x):
        for v in variables:
            v.assign_add(x)
        return tt.add_n([tt.reduce_sum(v) for v in variables])

    x = tt.constant(np.ones(3))
    totals = [float(step(x)) for _ in range(3)]
    assert step._fast is not None and step._fast.hits == 2
    assert totals == [3 * sum(range(80)) + 3 * 80 * n for n in (1, 2, 3)]
    for k, v in enumerate(variables):
        np.testing.assert_array_equal(v.numpy(), np.full(3, k + 3.0))


def test_run_functions_eagerly_bypasses_the_entry():
    calls = []

    def double(x):
        calls.append(1)  # runs when traced, and at every call when run eagerly
        return x * 2

    f = tt.function(double)
    x = tt.constant(np.array([1.0, 2.0]))
    f(x), f(x)
    assert f._fast is not None and len(calls) == 1
    tt.config.run_functions_eagerly(True)
    try:
        np.testing.assert_array_equal(f(x).numpy(), [2.0, 4.0])
    finally:
        tt.config.run_functions_eagerly(False)
    assert len(calls) == 2


def test_python_values_among_the_arguments_must_be_the_traced_ones():
    def scaled(x, scale, flip):
        y = x * scale
        return -y if flip else y

    f = tt.function(scaled)
    x = tt.constant(np.array([1.0, -2.0]))
    calls = [(2.0, False), (2.0, False), (3.0, False), (2.0, True), (2, False), (2.0, False)]
    for scale, flip in calls:
        expected = x.numpy() * scale * (-1 if flip else 1)
        np.testing.assert_array_equal(f(x, scale, flip).numpy(), expected)
    # 2.0 and 2 are one trace: TensorFlow 2.21 keys Python numbers by value (`==`), 3 traces
    assert f.experimental_get_tracing_count() == 3
    # the second call and the last (the call with 2 ran the trace of 2.0 and switched to it)
    assert f._fast is not None and f._fast.hits == 2
    np.testing.assert_array_equal(f(x, 2.0, False).numpy(), [2.0, -4.0])
    assert f._fast.hits == 3
    np.testing.assert_array_equal(f(x, scale=2.0, flip=False).numpy(), [2.0, -4.0])  # keywords


def test_a_float_argument_is_matched_by_its_bits():
    f = tt.function(lambda x, s: x / s)
    one = tt.constant(1.0)
    for _ in range(2):
        assert float(f(one, 0.0)) == np.inf
        assert float(f(one, -0.0)) == -np.inf  # equal to 0.0 in Python, traced apart
    g = tt.function(lambda x, s: x * s)
    for _ in range(3):
        assert np.isnan(float(g(one, float("nan"))))
    assert g.experimental_get_tracing_count() == 1 and g._fast.hits >= 1


def test_a_method_of_a_module_runs_through_the_entry():
    class Scale(tt.Module):
        def __init__(self, factor):
            super().__init__()
            self.factor = tt.Variable(factor)

        @tt.function
        def __call__(self, x):
            return x * self.factor

    first, second = Scale(2.0), Scale(-3.0)
    x = tt.constant(np.array([1.0, 2.0], np.float32))
    for _ in range(2):
        np.testing.assert_array_equal(first(x).numpy(), [2.0, 4.0])
        np.testing.assert_array_equal(second(x).numpy(), [-3.0, -6.0])  # another self
    np.testing.assert_array_equal(first(x).numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(first(x).numpy(), [2.0, 4.0])
    # each instance's method is a Function of its own (TensorFlow's), each with its entry
    assert first.__call__._fast is not None and first.__call__._fast.hits >= 1
    assert second.__call__._fast is not None and first.__call__.func is not second.__call__.func


def test_many_inputs_and_outputs_alike_are_passed_in_loops():
    """The call function takes a stretch of inputs of one dtype and shape, and makes a
    stretch of output buffers alike, in one `for` each (its text, compiled when the module
    loads, stays a few lines long); an input it copies to a C-ordered array stays alive
    through the run."""
    ws = [RNG.standard_normal((4, 4)).astype(np.float32) for _ in range(20)]
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    f = tt.function(lambda x, ws: [tt.tanh(tt.matmul(x, w)) for w in ws])
    got = f(tt.constant(x), [tt.constant(w) for w in ws])
    source = f.get_concrete_function(tt.constant(x), [tt.constant(w) for w in ws])
    text = source._executable.call_source
    assert "    for k in range(" in text and "for k, b in enumerate(bs" in text, text
    assert len(text.splitlines()) < 40
    for want, value in zip((np.tanh(x @ w) for w in ws), got):
        np.testing.assert_allclose(value.numpy(), want, rtol=1e-5)
    fortran = [np.asfortranarray(w) for w in ws]  # not C-ordered: copied by the call function
    for want, value in zip((np.tanh(x @ w) for w in ws), f(x, fortran)):
        np.testing.assert_allclose(value.numpy(), want, rtol=1e-5)
