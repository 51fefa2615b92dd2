"""tt.TensorArray and tt.while_loop where TensorFlow 2.21 was found to differ: element shapes
in traced arrays, `infer_shape=False` concatenation, `back_prop=False`, loops whose only
state is the variables they assign, `maximum_iterations` as a tensor, `scatter` at tensor
indices and `dynamic_size` in traced loops. Eagerly, and traced for both backends."""

import re

import numpy as np
import pytest

import tracer as tt

BACKENDS = ["interpreter", "c"]


def runners(fn):
    """`fn` eagerly, then as a tt.function for each backend."""
    return [fn] + [tt.function(fn, backend=b) for b in BACKENDS]


def test_a_write_of_another_shape_raises_as_in_tensorflow():
    def stacked():
        ta = tt.TensorArray(tt.float32, size=2)
        ta = ta.write(0, [1.0, 2.0])
        ta = ta.write(1, [3.0])  # TF: ValueError "Inconsistent shapes"
        return ta.stack()

    for run in runners(stacked):
        with pytest.raises(ValueError, match=r"shape \(2,\): cannot write a value of shape \(1,\)"):
            run()


def test_infer_shape_false_concatenates_elements_of_differing_lengths():
    def concatenated(x):
        ta = tt.TensorArray(tt.float32, size=2, infer_shape=False)
        ta = ta.write(0, x[:2] * 2.0)
        ta = ta.write(1, x[2:] * 3.0)
        return ta.concat()  # TF: [2x0, 2x1, 3x2]

    def matrices():
        ta = tt.TensorArray(tt.float32, size=2, infer_shape=False)
        ta = ta.write(0, [[1.0, 2.0]])
        ta = ta.write(1, [[3.0, 4.0], [5.0, 6.0]])
        return ta.concat(), ta.read(1)

    def grad(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.reduce_sum(concatenated(x) * tt.constant([1.0, 10.0, 100.0]))
        return tape.gradient(y, x)

    x = tt.constant([1.0, 2.0, 3.0])
    for run in runners(concatenated):
        np.testing.assert_array_equal(run(x).numpy(), [2.0, 4.0, 9.0])
    for run in runners(grad):
        np.testing.assert_array_equal(run(x).numpy(), [2.0, 20.0, 300.0])
    for run in runners(matrices):
        joined, second = run()
        np.testing.assert_array_equal(joined.numpy(), [[1, 2], [3, 4], [5, 6]])
        np.testing.assert_array_equal(second.numpy(), [[3, 4], [5, 6]])


def test_infer_shape_false_concat_of_rows_written_in_a_loop():
    def rows(n):
        ta = tt.TensorArray(tt.float32, size=3, infer_shape=False)
        ta = ta.write(0, [7.0])

        def body(i, ta):
            return i + 1, ta.write(i, tt.cast(tt.stack([i, 2 * i]), tt.float32)[:1])

        _, ta = tt.while_loop(lambda i, ta: i < n, body, (1, ta))
        return ta.concat()

    for run in runners(rows):
        np.testing.assert_array_equal(run(tt.constant(3)).numpy(), [7.0, 1.0, 2.0])

    def unequal_rows(n):
        ta = tt.TensorArray(tt.float32, size=2, infer_shape=False)
        ta = ta.write(0, [1.0, 2.0])
        return tt.while_loop(
            lambda i, ta: i < n, lambda i, ta: (i + 1, ta.write(i, [3.0])), (1, ta)
        )

    for backend in BACKENDS:  # rows of one tensor cannot differ: an error, never a broadcast
        with pytest.raises(ValueError, match=r"elements are all of shape \(2,\)"):
            tt.function(unequal_rows, backend=backend)(tt.constant(2))


def test_arrays_that_cannot_be_one_tensor_and_scalars_in_concat_raise():
    def stacked():
        ta = tt.TensorArray(tt.float32, size=2, infer_shape=False)
        return ta.write(0, [1.0, 2.0]).write(1, [3.0]).stack()

    def scalars():  # TF: InvalidArgumentError "Concat saw a scalar shape at index 0"
        ta = tt.TensorArray(tt.float32, size=2, infer_shape=False)
        return ta.write(0, 1.0).write(1, 3.0).concat()

    for backend in BACKENDS:
        with pytest.raises(ValueError, match=r"shapes \(1,\), \(2,\) can only be concatenated"):
            tt.function(stacked, backend=backend)()
    for run in runners(scalars):
        with pytest.raises(ValueError, match="element 0 is a scalar"):
            run()


def test_size_after_a_traced_array_grows():
    def grown():
        ta = tt.TensorArray(tt.float32, size=0, dynamic_size=True)
        return ta.write(0, 1.0).write(1, 2.0).size()

    for run in runners(grown):
        assert run().numpy() == 2


def test_back_prop_false_stops_the_gradient():
    x = tt.Variable(2.0)

    def grad():
        with tt.GradientTape() as tape:
            _, y = tt.while_loop(
                lambda i, y: i < 3, lambda i, y: (i + 1, y * x), [0, x * 1.0], back_prop=False
            )
            loss = y + x
        return y, tape.gradient(loss, x)

    for run in runners(grad):  # TF's graphs: 1.0, the `+ x` term alone
        y, g = run()
        assert y.numpy() == 16.0 and g.numpy() == 1.0


def test_a_loop_whose_only_state_is_an_assigned_variable():
    v = tt.Variable(1.0)

    def converted():
        while v < 100.0:
            v.assign(v * 3.0)
        return v.read_value()

    def direct():
        def body():
            v.assign(v * 3.0)
            return []

        result = tt.while_loop(lambda: v < 100.0, body, [])
        return result, v.read_value()

    for backend in BACKENDS:
        v.assign(1.0)
        assert tt.function(converted, backend=backend)().numpy() == 243.0  # TF: 243
    for run in runners(direct):
        v.assign(1.0)
        result, value = run()
        assert result == [] and value.numpy() == 243.0
    for backend in BACKENDS:
        f = tt.function(lambda: tt.while_loop(lambda: v < 100.0, lambda: [], []), backend=backend)
        with pytest.raises(ValueError, match="or the body assign a variable"):
            f()


def test_maximum_iterations_may_be_a_tensor():
    def loop(x, m):
        return tt.while_loop(
            lambda i, x: x < 1000.0, lambda i, x: (i + 1, x * 2.0), [0, x], maximum_iterations=m
        )

    def grad(x, m):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = loop(x, m)[1]
        return tape.gradient(y, x)

    x = tt.constant(1.0)
    for run in runners(loop):
        i, y = run(x, tt.constant(3))  # TF: 8.0
        assert i.numpy() == 3 and y.numpy() == 8.0
        i, y = run(x, tt.constant(20))  # the condition ends it first
        assert i.numpy() == 10 and y.numpy() == 1024.0
    for run in runners(grad):
        assert run(x, tt.constant(3)).numpy() == 8.0


def test_scatter_at_indices_known_only_when_running():
    def scatter(idx, values):
        ta = tt.TensorArray(tt.float32, size=3)
        return ta.scatter(idx, values * 1.0).stack()

    def grad(idx, values):
        with tt.GradientTape() as tape:
            tape.watch(values)
            y = tt.reduce_sum(scatter(idx, values) * tt.constant([1.0, 10.0, 100.0]))
        return tape.gradient(y, values)

    idx, values = tt.constant([2, 0]), tt.constant([10.0, 20.0])
    for run in runners(scatter):
        np.testing.assert_array_equal(run(idx, values).numpy(), [20.0, 0.0, 10.0])  # TF's
    for run in runners(grad):
        np.testing.assert_array_equal(run(idx, values).numpy(), [100.0, 1.0])


def test_a_dynamic_array_written_in_a_data_dependent_loop_runs_as_python(caplog):
    """Its size is known only when the function runs: compiled code cannot hold it, so the
    function runs as Python (TensorFlow's values), with a log line naming the write."""

    def halvings(x):
        ta = tt.TensorArray(tt.float32, size=0, dynamic_size=True)
        i = tt.constant(0)
        while x > 1.0:
            ta = ta.write(i, x)
            x = x / 2.0
            i += 1
        return ta.stack()

    np.testing.assert_array_equal(halvings(tt.constant(10.0)).numpy(), [10.0, 5.0, 2.5, 1.25])
    for backend in BACKENDS:
        f = tt.function(halvings, backend=backend)
        with caplog.at_level("WARNING", logger="tracer.function"):
            result = f(tt.constant(10.0))
        np.testing.assert_array_equal(result.numpy(), [10.0, 5.0, 2.5, 1.25])
        assert f._runs_as_python
        assert re.search(r"dynamic_size=True.*test_tensor_array_and_loops", caplog.text)


def test_scatter_replaces_rows_at_once_and_the_last_repeated_index_wins():
    """scatter at indices known when tracing and at indices known when running: TF 2.21 gave
    [[3, 4], [0, 0], [0, 0], [5, 6], [10, 20]] for indices [3, 0, 3] then [4] (the last of a
    repeated index wins); the gradient reaches the rows written, not the one overwritten. The
    traced array holds one select per scatter, not one per index (integrated gradients
    scatters hundreds of rows; a run of consecutive indices is spliced in by a concat)."""

    def scatter(idx, values):
        ta = tt.TensorArray(tt.float32, size=5)
        ta = ta.scatter(idx, values)
        ta = ta.scatter([4], values[:1] * 10.0)
        return ta.stack()

    def grad(idx, values):
        with tt.GradientTape() as tape:
            tape.watch(values)
            y = tt.reduce_sum(scatter(idx, values) * tt.reshape(tt.range(1.0, 6.0), (5, 1)))
        return tape.gradient(y, values)

    values = tt.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    expected = [[3.0, 4.0], [0.0, 0.0], [0.0, 0.0], [5.0, 6.0], [10.0, 20.0]]
    known = tt.function(lambda values: scatter([3, 0, 3], values))
    np.testing.assert_array_equal(known(values).numpy(), expected)
    for run in runners(scatter):
        np.testing.assert_array_equal(run(tt.constant([3, 0, 3]), values).numpy(), expected)
    for run in runners(grad):
        np.testing.assert_array_equal(
            run(tt.constant([3, 0, 3]), values).numpy(), [[50.0, 50.0], [1.0, 1.0], [4.0, 4.0]]
        )
    traced = known.get_concrete_function(values).ir("traced")
    # [3, 0, 3]: one select of gathered rows; [4], a run of consecutive rows: a concat
    assert traced.count(" = select ") == 1 and traced.count(" = concat") == 1, traced
