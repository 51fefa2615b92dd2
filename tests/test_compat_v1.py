"""TensorFlow 1's graph mode (tt.compat.v1) and tt.gradients: values against numpy, gradients
against analytic derivatives and finite differences, and TensorFlow's errors."""

import numpy as np
import pytest

import tracer as tt
from tracer.python.framework.ops import disable_eager_execution

v1 = tt.compat.v1


def _session_of(build):
    graph = v1.Graph()
    with graph.as_default():
        built = build()
    return v1.Session(graph=graph), built


def test_placeholders_feed_a_graph_and_its_gradients():
    def build():
        x = v1.placeholder(tt.float64, shape=[3])
        weights = tt.convert_to_tensor(np.array([1.0, 2.0, 3.0]))
        y = tt.reduce_sum(tt.sin(x) * weights)
        (dy,) = tt.gradients(y, [x])
        return x, y, dy

    session, (x, y, dy) = _session_of(build)
    value = np.array([0.1, 0.2, 0.3])
    out_y, out_dy = session.run((y, dy), feed_dict={x: value})
    assert out_y == pytest.approx(np.sum(np.sin(value) * [1, 2, 3]), rel=1e-14)
    np.testing.assert_allclose(out_dy, np.cos(value) * [1, 2, 3], rtol=1e-14)
    assert isinstance(out_y, np.float64)  # a 0-d result is a numpy scalar, as TensorFlow 1's


def test_a_tape_inside_a_graph_gives_a_symbolic_jacobian():
    def build():
        x = v1.placeholder(tt.float64, shape=[2])
        with tt.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = tt.stack([x[0] * x[1], tt.exp(x[0])])
        return x, tape.jacobian(y, x, experimental_use_pfor=False)

    session, (x, jacobian) = _session_of(build)
    a, b = 0.5, -1.5
    expected = np.array([[b, a], [np.exp(a), 0.0]])
    np.testing.assert_allclose(session.run(jacobian, {x: [a, b]}), expected, rtol=1e-14)


def test_a_while_loop_in_a_graph_is_differentiated():
    def build():
        x = v1.placeholder(tt.float64, shape=[])

        def body(i, acc, count):
            return i + 1, acc * x + tt.sin(acc), count + 2

        _, acc, count = tt.while_loop(lambda i, acc, count: i < 4, body, [tt.constant(0), x, 0])
        y = acc / tt.dtypes.cast(count, tt.float64)
        return x, y, tt.gradients(y, x)[0]

    session, (x, y, dy) = _session_of(build)

    def reference(value):
        acc = value
        for _ in range(4):
            acc = acc * value + np.sin(acc)
        return acc / 8

    point, step = 0.7, 1e-6
    finite = (reference(point + step) - reference(point - step)) / (2 * step)
    got_y, got_dy = session.run([y, dy], feed_dict={x: point})
    assert got_y == pytest.approx(reference(point), rel=1e-14)
    assert got_dy == pytest.approx(finite, rel=1e-7)


def test_an_unknown_size_is_fed_any_size_by_one_compiled_run():
    def build():
        x = v1.placeholder(tt.float64, shape=[None])
        return x, tt.reduce_sum(x * x)

    session, (x, total) = _session_of(build)
    for size in (2, 5, 9):
        value = np.arange(size, dtype=np.float64)
        assert session.run(total, feed_dict={x: value}) == np.sum(value * value)
    assert len(session._runs) == 1


def test_fetches_keep_their_structure_and_feeds_are_cast():
    def build():
        x = v1.placeholder(tt.float32, shape=[2], name="x")
        return x, {"double": x * 2, "pair": (x + 1, tt.reduce_sum(x))}

    session, (x, fetches) = _session_of(build)
    out = session.run(fetches, feed_dict={x: [1, 2]})  # ints fed to a float32 placeholder
    np.testing.assert_array_equal(out["double"], np.float32([2, 4]))
    assert out["double"].dtype == np.float32
    np.testing.assert_array_equal(out["pair"][0], [2, 3])
    assert out["pair"][1] == 3


def test_gradients_weigh_targets_and_fill_unconnected_ones():
    @tt.function
    def grads(x, z):
        y = x * x
        weighted = tt.gradients([y], [x, z], grad_ys=[tt.constant([1.0, 10.0])])
        zero = tt.gradients(y, [z], unconnected_gradients="zero")
        return weighted[0], weighted[1] is None, zero[0]

    weighted, unconnected, zero = grads(tt.constant([3.0, 4.0]), tt.constant(5.0))
    np.testing.assert_allclose(weighted.numpy(), [6.0, 80.0])
    assert unconnected
    assert zero.numpy() == 0.0


def test_second_order_gradients_in_a_graph():
    def build():
        x = v1.placeholder(tt.float64, shape=[])
        (dy,) = tt.gradients(x**4, x)
        (ddy,) = tt.gradients(dy, x)
        return x, ddy

    session, (x, ddy) = _session_of(build)
    assert session.run(ddy, {x: 1.5}) == pytest.approx(12 * 1.5**2, rel=1e-14)


def test_errors_name_what_is_wrong():
    def build():
        x = v1.placeholder(tt.float64, shape=[3])
        return x, x * 2

    session, (x, y) = _session_of(build)
    with pytest.raises(tt.errors.InvalidArgumentError, match="must feed a value for placeholder"):
        session.run(y)
    with pytest.raises(ValueError, match=r"shape \(2,\).*which has shape \(3,\)"):
        session.run(y, feed_dict={x: [1.0, 2.0]})
    with pytest.raises(TypeError, match="not a placeholder"):
        session.run(y, feed_dict={x: np.ones(3), 3: 1.0})
    with pytest.raises(RuntimeError, match="not compatible with eager execution"):
        v1.placeholder(tt.float32, shape=[1])
    with tt.Graph().as_default():
        for unknown in (None, tt.TensorShape(None)):
            with pytest.raises(ValueError, match="placeholder needs a shape"):
                v1.placeholder(tt.float32, shape=unknown)
    with pytest.raises(RuntimeError, match="eager execution is enabled"):
        tt.gradients(tt.constant(1.0), tt.constant(1.0))
    with pytest.raises(TypeError, match="unhashable"):
        {tt.constant(1.0): 1}
    _, (other_x, other_y) = _session_of(build)
    with pytest.raises(ValueError, match="not an element of this graph"):
        session.run(other_y, feed_dict={x: np.ones(3)})
    session.close()
    with pytest.raises(RuntimeError, match="closed Session"):
        session.run(x, feed_dict={x: np.ones(3)})


def test_disable_eager_execution_builds_into_the_default_graph():
    try:
        disable_eager_execution()
        assert not tt.executing_eagerly()
        x = v1.placeholder(tt.float64, shape=[2])
        y = tt.reduce_prod(x)
        assert v1.get_default_graph() is v1.Session().graph
        with v1.Session() as session:
            assert session.run(y, feed_dict={x: [3.0, 4.0]}) == 12.0
    finally:
        v1.enable_eager_execution()
        v1.reset_default_graph()
    assert tt.executing_eagerly()
    assert tt.constant(2.0).numpy() == 2.0


def test_ref_keys_a_dict_by_identity():
    a, b = tt.constant([1.0, 2.0]), tt.constant([1.0, 2.0])
    variable = tt.Variable(3.0)
    table = {a.ref(): "a", b.ref(): "b", variable.ref(): "v"}
    assert table[a.ref()] == "a" and table[b.ref()] == "b" and len(table) == 3
    assert table[variable.ref()] == "v"
    assert a.ref().deref() is a
    assert a.ref() != b.ref()


def test_tensor_equality_by_identity_when_disabled():
    """TensorFlow 2.21 printed, for two Variable(0.0) x and y: `x == y` a bool tensor
    (True); after disable_tensor_equality() x == y False, x == x True, x != y True, a
    constant == an equal constant False, {x, y, x} two members; enable_tensor_equality()
    gives the tensor again. An eager tensor stays unhashable."""
    x, y = tt.Variable(0.0), tt.Variable(0.0)
    assert repr(x == y) == "<tracer.Tensor: shape=(), dtype=bool, numpy=True>"
    with pytest.raises(TypeError) as raised:
        hash(x)
    assert str(raised.value) == (
        "Variable is unhashable. Instead, use variable.ref() as the key. "
        "(Variable: <tracer.Variable 'Variable:0' shape=() dtype=float32, numpy=0.0>)"
    )
    v1.disable_tensor_equality()
    try:
        assert (x == y) is False and (x == x) is True and (x != y) is True
        assert (tt.constant(1.0) == tt.constant(1.0)) is False
        assert (x == 0.0) is False
        assert len({x, y, x}) == 2
        with pytest.raises(TypeError, match="Tensor is unhashable"):
            hash(tt.constant(2.0))
    finally:
        v1.enable_tensor_equality()
    assert isinstance(x == y, tt.Tensor) and bool(x == y)


def test_graph_and_keras_are_tensorflow_2s_names_too():
    """TensorFlow 2 has tf.Graph (tf.compat.v1.Graph itself) and tf.compat.v1.keras (its
    Keras); a name neither has is an AttributeError naming the module."""
    assert tt.Graph is v1.Graph and v1.keras is tt.keras
    graph = tt.Graph()
    with graph.as_default():
        x = v1.placeholder(tt.float32, [2])
        y = x * 2.0
    with v1.Session(graph=graph) as session:
        np.testing.assert_array_equal(session.run(y, {x: [1.0, 2.0]}), [2.0, 4.0])
    with pytest.raises(AttributeError, match="'tracer.compat.v1' has no attribute 'estimator'"):
        v1.estimator  # noqa: B018


def test_dimension():
    """TensorFlow 2.21 printed Dimension(16) 16 16 True True Dimension(None) None True True
    16 for repr, str, value, is_compatible_with(16), with Dimension(None), repr and value
    of Dimension(None), == 16, == Dimension(16), int; and "Dimensions 16 and 8 are not
    compatible" from assert_is_compatible_with(8)."""
    d = v1.Dimension(16)
    assert (repr(d), str(d), d.value) == ("Dimension(16)", "16", 16)
    assert d.is_compatible_with(16) and d.is_compatible_with(v1.Dimension(None))
    assert not d.is_compatible_with(8)
    assert repr(v1.Dimension(None)) == "Dimension(None)" and v1.Dimension(None).value is None
    assert d == 16 and d == v1.Dimension(16) and int(d) == 16
    assert (v1.Dimension(None) == 16) is None
    with pytest.raises(ValueError, match="^Dimensions 16 and 8 are not compatible$"):
        d.assert_is_compatible_with(8)
    assert v1.dimension_value(tt.TensorShape([3])[0]) == 3 and v1.dimension_value(d) == 16
    assert tt.TensorShape([d, v1.Dimension(None)]) == (16, None)


def test_variables_are_read_when_the_session_runs():
    graph = v1.Graph()
    with graph.as_default():
        x = v1.placeholder(tt.float64, [2])
        w = tt.Variable(np.array([1.0, 2.0]))
        y = tt.reduce_sum(w * x)
        (dw,) = tt.gradients(y, [w])
    session = v1.Session(graph=graph)
    value, slope = session.run([y, dw], {x: [3.0, 4.0]})
    assert value == 11.0
    np.testing.assert_array_equal(slope, [3.0, 4.0])
    w.assign([10.0, 20.0])  # eagerly, between runs
    assert session.run(y, {x: [3.0, 4.0]}) == 110.0


def test_an_assign_is_an_op_that_assigns_in_the_runs_that_fetch_it():
    """TensorFlow 1: `v.assign(x)` is an op whose result is the new value; a run that
    fetches it (or a tensor computed from it) assigns, and one that does not leaves the
    variable as it was. A read written after an assign reads its result (the order TF 2's
    automatic control dependencies give); a fetch of the variable is its value."""
    graph = v1.Graph()
    with graph.as_default():
        x = v1.placeholder(tt.float64, [2])
        w = tt.Variable(np.array([1.0, 2.0]))
        y = tt.reduce_sum(w * x)  # before any assign
        doubled = w.assign(w * 2)
        step = w.assign_sub(0.5 * x)  # reads w after `doubled`: a run of it doubles first
        total_after_step = tt.reduce_sum(step)
        reset = w.assign([1.0, 1.0])  # of a constant
    session = v1.Session(graph=graph)
    assert session.run(y, {x: [3.0, 4.0]}) == 11.0
    np.testing.assert_array_equal(session.run(doubled), [2.0, 4.0])
    np.testing.assert_array_equal(w.numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(session.run(doubled), [4.0, 8.0])
    np.testing.assert_array_equal(session.run(w), [4.0, 8.0])  # no assign
    assert session.run(total_after_step, {x: [2.0, 2.0]}) == 22.0  # (8 - 1) + (16 - 1)
    np.testing.assert_array_equal(w.numpy(), [7.0, 15.0])
    assert session.run(y, {x: [1.0, 1.0]}) == 22.0
    np.testing.assert_array_equal(session.run(reset), [1.0, 1.0])
    np.testing.assert_array_equal(w.numpy(), [1.0, 1.0])


def test_an_optimizer_in_a_graph_gives_the_op_that_applies_its_updates():
    """As TensorFlow 1's `minimize`: a run of the op applies one step (None as its value),
    with Adam's slots read after their assigns, as the same steps taken eagerly."""
    target = np.array([1.0, -2.0, 0.5])
    graph = v1.Graph()
    with graph.as_default():
        x = v1.placeholder(tt.float64, [3])
        w = tt.Variable(np.zeros(3))
        loss = tt.reduce_sum((w * w - x) ** 2)
        optimizer = tt.optimizers.Adam(0.1)
        train = optimizer.apply_gradients(zip(tt.gradients(loss, [w]), [w]))
        together = tt.group(train, loss)
    session = v1.Session(graph=graph)
    eager_w, eager_optimizer = tt.Variable(np.zeros(3)), tt.optimizers.Adam(0.1)
    w.assign([0.3, 0.2, 0.1])
    eager_w.assign([0.3, 0.2, 0.1])
    for fetch in (train, train, together):
        assert session.run(fetch, {x: target}) is None
        with tt.GradientTape() as tape:
            eager_loss = tt.reduce_sum((eager_w * eager_w - target) ** 2)
        eager_optimizer.apply_gradients([(tape.gradient(eager_loss, eager_w), eager_w)])
        np.testing.assert_allclose(w.numpy(), eager_w.numpy(), rtol=1e-12)
    assert optimizer.iterations.numpy() == 3
    assert session.run([loss, train], {x: target})[1] is None
    assert tt.group(tt.constant(1.0)) is None  # eagerly: nothing to group


def test_side_effects_that_no_run_would_fetch_are_refused_in_a_graph():
    w = tt.Variable(1.0)

    @tt.function
    def bump():
        w.assign_add(1.0)
        return w * 1.0

    graph = v1.Graph()
    with graph.as_default():
        with pytest.raises(ValueError, match="assigned by a tt.function called in a"):
            bump()
        with pytest.raises(ValueError, match="tt.print, tt.summary and tt.py_function"):
            tt.print("w:", w)
    assert w.numpy() == 1.0
