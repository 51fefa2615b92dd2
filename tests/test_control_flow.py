"""tt.cond and tt.while_loop: TensorFlow's documented results, gradients against finite
differences in float64 to second order, and eager = interpreter = C."""

import collections
import io
import logging
import re

import numpy as np
import pytest

import tracer as tt

BACKENDS = ["interpreter", "c"]
rng = np.random.default_rng(20261123)


# --- TensorFlow's documented examples --------------------------------------------------


def test_while_loop_counts_to_ten_as_in_tensorflows_docs():
    i = tt.constant(0)
    r = tt.while_loop(lambda i: tt.less(i, 10), lambda i: (tt.add(i, 1),), [i])
    assert r[0].numpy() == 10 and r[0].dtype == tt.int32


Pair = collections.namedtuple("Pair", "j, k")


def pairs():
    """TensorFlow's example of nested loop variables."""
    return tt.while_loop(
        lambda i, p: i < 10,
        lambda i, p: (i + 1, Pair((p.j + p.k), (p.j - p.k))),
        (tt.constant(0), Pair(tt.constant(1), tt.constant(2))),
    )


def test_while_loop_with_a_nested_structure_as_in_tensorflows_docs():
    for i, p in (pairs(), tt.function(pairs)()):
        assert isinstance(p, Pair)
        assert (i.numpy(), p.j.numpy(), p.k.numpy()) == (10, 32, 64)


def test_loop_variables_that_are_a_namedtuple_come_back_as_one():
    """TF 2.21: a while_loop whose loop_vars and body's result are a namedtuple returns the
    namedtuple, eagerly and in tf.function (tracer's eager loop returned a list)."""

    def loop():
        start = Pair(tt.constant(0), tt.constant(1.0))
        return tt.while_loop(lambda j, k: j < 3, lambda j, k: Pair(j + 1, k * 2.0), start)

    for result in (loop(), tt.function(loop)()):
        assert isinstance(result, Pair) and float(result.k) == 8.0 and int(result.j) == 3
    assert isinstance(tt.while_loop(lambda i: i < 3, lambda i: (i + 1,), (0,)), tuple)


def test_cond_as_in_tensorflows_docs():
    x, y = tt.constant(2), tt.constant(5)
    r = tt.cond(tt.less(x, y), lambda: tt.multiply(x, 17), lambda: tt.add(y, 23))
    assert r.numpy() == 34
    f = tt.function(
        lambda x, y: tt.cond(tt.less(x, y), lambda: tt.multiply(x, 17), lambda: tt.add(y, 23))
    )
    assert f(x, y).numpy() == 34 and f(tt.constant(7), y).numpy() == 28


def test_maximum_iterations_stops_the_loop_first():
    for run in (lambda f: f, tt.function):
        loop = run(
            lambda n: tt.while_loop(lambda i: i < n, lambda i: i + 1, [0], maximum_iterations=4)
        )
        assert loop(tt.constant(10))[0].numpy() == 4
        assert loop(tt.constant(2))[0].numpy() == 2


def test_a_single_loop_variable_comes_back_as_it_went_in():
    assert tt.while_loop(lambda x: x < 5.0, lambda x: x * 2.0, 1.0).numpy() == 8.0
    f = tt.function(lambda x: tt.while_loop(lambda x: x < 5.0, lambda x: x * 2.0, x))
    out = f(tt.constant(1.0))
    assert isinstance(out, tt.Tensor) and out.numpy() == 8.0


# --- compiled: values and gradients ---------------------------------------------------


def euler(x, w, steps=6):
    """Explicit Euler on dx/dt = sin(w x) - x^3 / 4, then a quadratic loss."""

    def body(i, s):
        return i + 1, s + 0.1 * (tt.sin(w * s) - s * s * s / 4.0)

    _, s = tt.while_loop(lambda i, s: i < steps, body, (0, x), maximum_iterations=steps)
    return tt.reduce_sum(s * s)


def branchy(x, w):
    def body(i, s):
        grown = tt.cond(tt.reduce_sum(s) > 1.0, lambda: s * w, lambda: tt.exp(s) * w)
        return i + 1, grown + 0.5 * s

    _, s = tt.while_loop(lambda i, s: i < 4, body, (0, x), maximum_iterations=4)
    return tt.reduce_sum(tt.sin(s))


def nested(x, w):
    def outer(i, s):
        _, t = tt.while_loop(
            lambda j, t: j < i, lambda j, t: (j + 1, tt.tanh(t * w)), (0, s), maximum_iterations=3
        )
        return i + 1, t + s

    _, s = tt.while_loop(lambda i, s: i < 3, outer, (0, x), maximum_iterations=3)
    return tt.reduce_sum(s * x)


FUNCTIONS = {"euler": euler, "branchy": branchy, "nested": nested}


def _value_and_grads(f):
    def run(x, w):
        with tt.GradientTape() as tape:
            tape.watch([x, w])
            y = f(x, w)
        return y, *tape.gradient(y, [x, w])

    return run


def _second(f):
    """d/dw of <d f/dx, 1>: forward, reverse, then reverse again."""

    def run(x, w):
        with tt.GradientTape() as outer:
            outer.watch(w)
            with tt.GradientTape() as inner:
                inner.watch(x)
                y = f(x, w)
            z = tt.reduce_sum(inner.gradient(y, x))
        return z, outer.gradient(z, w)

    return run


def _arguments():
    x = tt.constant(rng.uniform(0.2, 0.9, 5))
    w = tt.constant(rng.uniform(0.5, 1.5, 5))
    return x, w


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_compiled_values_and_gradients_equal_eager_ones(name):
    f = FUNCTIONS[name]
    x, w = _arguments()
    eager = [t.numpy() for t in _value_and_grads(f)(x, w)]
    for backend in BACKENDS:
        compiled = tt.function(_value_and_grads(f), backend=backend)(x, w)
        for want, got in zip(eager, compiled):
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-14, err_msg=backend)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_gradients_match_finite_differences_to_second_order(name):
    f = FUNCTIONS[name]
    x, w = _arguments()
    direction = rng.standard_normal(5)
    eps = 1e-6
    for backend in BACKENDS:
        _, gx, gw = tt.function(_value_and_grads(f), backend=backend)(x, w)
        shifted = [f(x + sign * eps * direction, w).numpy() for sign in (1.0, -1.0)]
        numeric = (shifted[0] - shifted[1]) / (2 * eps)
        np.testing.assert_allclose(np.dot(gx.numpy(), direction), numeric, rtol=1e-6)
        _, hw = tt.function(_second(f), backend=backend)(x, w)
        shifted = [_second(f)(x, w + sign * eps * direction)[0].numpy() for sign in (1.0, -1.0)]
        numeric = (shifted[0] - shifted[1]) / (2 * eps)
        np.testing.assert_allclose(np.dot(hw.numpy(), direction), numeric, rtol=1e-5)


def test_the_compiled_loop_is_a_loop_not_unrolled():
    x, w = _arguments()
    short = tt.function(lambda x, w: euler(x, w, steps=3), backend="c")
    long = tt.function(lambda x, w: euler(x, w, steps=300), backend="c")
    sources = [f.get_concrete_function(x, w).c_source() for f in (short, long)]
    assert all("for (" in s and "break;" in s for s in sources)
    assert sources[0].count("/* fused") == sources[1].count("/* fused")
    np.testing.assert_allclose(long(x, w).numpy(), euler(x, w, steps=300).numpy(), rtol=1e-12)


def test_the_stacked_states_exist_only_when_a_gradient_reads_them():
    x, w = _arguments()
    forward = tt.function(euler).get_concrete_function(x, w)
    assert "stacked=False" in forward.ir("optimized")
    backward = tt.function(_value_and_grads(euler)).get_concrete_function(x, w)
    assert "stacked=True" in backward.ir("optimized")


def test_a_variable_read_in_the_body_gets_its_gradient():
    w = tt.Variable([0.5, 1.5, -0.3], dtype=tt.float64)

    def step(x):
        with tt.GradientTape() as tape:
            _, s = tt.while_loop(
                lambda i, s: i < 3,
                lambda i, s: (i + 1, tt.sin(s * w)),
                (0, x),
                maximum_iterations=3,
            )
            y = tt.reduce_sum(s)
        return tape.gradient(y, w)

    x = tt.constant([0.1, 0.2, 0.3], dtype=tt.float64)
    want = step(x).numpy()
    for backend in BACKENDS:
        np.testing.assert_allclose(tt.function(step, backend=backend)(x).numpy(), want, rtol=1e-13)


def test_variables_assigned_in_the_body_are_carried_by_the_loop():
    def run(backend):
        total = tt.Variable(0.0, dtype=tt.float64)
        w = tt.Variable([1.0, 2.0], dtype=tt.float64)

        def body(i):
            total.assign_add(tt.reduce_sum(w))
            w.assign(w * 0.5)
            return i + 1

        loop = lambda: tt.while_loop(lambda i: i < 3, body, [0])  # noqa: E731
        (tt.function(loop, backend=backend) if backend else loop)()
        return total.numpy(), w.numpy()

    want = run(None)
    assert want[0] == 3.0 + 1.5 + 0.75
    for backend in BACKENDS:
        got = run(backend)
        assert got[0] == want[0] and np.array_equal(got[1], want[1])


def test_a_training_loop_inside_one_compiled_function():
    """SGD steps as a while loop over steps in one tt.function, against the eager loop."""

    def train(backend):
        w = tt.Variable([0.0, 0.0], dtype=tt.float64)
        opt = tt.optimizers.SGD(0.1)
        data = tt.constant([[1.0, 2.0], [3.0, -1.0]], dtype=tt.float64)
        target = tt.constant([1.0, 0.5], dtype=tt.float64)

        def step(i):
            with tt.GradientTape() as tape:
                loss = tt.reduce_sum((tt.matmul(data, w[:, None])[:, 0] - target) ** 2)
            opt.apply_gradients([(tape.gradient(loss, w), w)])
            return i + 1

        loop = lambda: tt.while_loop(lambda i: i < 20, step, [0])  # noqa: E731
        (tt.function(loop, backend=backend) if backend else loop)()
        return w.numpy()

    want = train(None)
    for backend in BACKENDS:
        np.testing.assert_allclose(train(backend), want, rtol=1e-13)


def test_cond_with_a_predicate_known_when_tracing_traces_one_branch():
    traced = []

    def branch(name, value):
        traced.append(name)
        return value

    f = tt.function(
        lambda x: tt.cond(tt.constant(True), lambda: branch("true", x), lambda: branch("f", -x))
    )
    assert f(tt.constant(2.0)).numpy() == 2.0 and traced == ["true"]


def test_cond_gradient_flows_through_the_branch_taken():
    def g(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.cond(x > 0.0, lambda: x * x * x, lambda: tt.sin(x))
        return tape.gradient(y, x)

    for backend in BACKENDS:
        f = tt.function(g, backend=backend)
        assert f(tt.constant(2.0, tt.float64)).numpy() == 12.0
        assert f(tt.constant(-1.0, tt.float64)).numpy() == np.cos(-1.0)


# --- errors ---------------------------------------------------------------------------


def test_a_loop_variable_that_changes_shape_is_named():
    with pytest.raises(ValueError, match=r"loop variable 0 .* shape \(2,\), but has shape \(4,\)"):
        tt.while_loop(lambda x: tt.size(x) < 8, lambda x: tt.concat([x, x], 0), [tt.ones(2)])
    grown = tt.while_loop(
        lambda x: tt.size(x) < 8,
        lambda x: tt.concat([x, x], 0),
        [tt.ones(2)],
        shape_invariants=[[None]],
    )
    assert grown[0].shape == (8,)
    f = tt.function(lambda x: tt.while_loop(lambda x: True, lambda x: tt.concat([x, x], 0), [x]))
    with pytest.raises(ValueError, match=r"loop variable 0 .*test_control_flow.py"):
        f(tt.ones(2))


def test_a_loop_variable_that_changes_dtype_is_named():
    with pytest.raises(TypeError, match="loop variable 1 .* int32 .* float32"):
        tt.while_loop(lambda i, s: i < 2, lambda i, s: (i + 1, tt.cast(s, tt.float32)), (0, 1))


def test_a_condition_that_is_not_a_boolean_scalar_is_refused():
    with pytest.raises(TypeError, match="boolean scalar"):
        tt.while_loop(lambda i: i, lambda i: i + 1, [0])
    with pytest.raises(TypeError, match="boolean scalar"):
        tt.function(lambda x: tt.cond(x, lambda: x, lambda: x))(tt.ones(2) > 0)


def test_branches_of_different_shapes_run_the_function_as_python(caplog):
    """TF 2.21's tf.function takes branches returning different shapes (the result's shape
    is known when it runs): tracer's function runs as Python, with a log line naming the
    line; branches of different dtypes stay an error."""
    f = tt.function(lambda x: tt.cond(x[0] > 0.0, lambda: x, lambda: x[:1] * 5.0))
    with caplog.at_level("WARNING", logger="tracer.function"):
        np.testing.assert_array_equal(f(tt.ones(3)).numpy(), [1.0, 1.0, 1.0])
        np.testing.assert_array_equal(f(-tt.ones(3)).numpy(), [-5.0])
    assert re.search(r"different tensors at position 0: .*test_control_flow", caplog.text)
    g = tt.function(lambda x: tt.cond(x[0] > 0.0, lambda: x, lambda: tt.cast(x, tt.int32)))
    with pytest.raises(ValueError, match="float32.* and int32"):
        g(tt.ones(3))


def test_a_while_loop_whose_shape_invariants_let_a_variable_grow_runs_as_python():
    """TF 2.21: with shape_invariants [], [None], x -> [x, x^2, x^3, x^4] at 1.3 is
    [1.3, 1.69, 2.197, 2.8561], its sum's derivative 17.458; tracer raised when traced."""

    def grow(x):
        start = (tt.constant(1), tt.reshape(x, [1]))
        invariants = (tt.TensorShape([]), tt.TensorShape([None]))
        _, powers = tt.while_loop(
            lambda i, a: i < 4,
            lambda i, a: (i + 1, tt.concat([a, a[-1:] * x], 0)),
            start,
            shape_invariants=invariants,
        )
        return powers

    def derivative(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            total = tt.reduce_sum(grow(x))
        return tape.gradient(total, x)

    x = tt.constant(1.3, tt.float64)
    for backend in BACKENDS:
        np.testing.assert_allclose(
            tt.function(grow, backend=backend)(x).numpy(), [1.3, 1.69, 2.197, 2.8561], rtol=1e-14
        )
        assert float(tt.function(derivative, backend=backend)(x)) == pytest.approx(17.458)


def _printing_program(out):
    """Prints in a while loop, a `for` over tt.range, both branches of an `if` on a tensor
    (one holding a loop), and around them; eagerly, Python's control flow."""

    def program(x, n):
        tt.print("start", x, n, output_stream=out)
        i = tt.constant(0)
        while i < n:
            tt.print("while", i, x, output_stream=out)
            x = x * 2.0
            i += 1
        for k in tt.range(2):
            tt.print("for", k, [tt.reduce_sum(x), "text"], sep="|", output_stream=out)
        k = tt.constant(0)  # bound in both branches
        if tt.reduce_sum(x) > 10.0:
            for k in tt.range(n):
                tt.print("big", k, output_stream=out)
        else:
            tt.print("small", tt.reduce_max(x), output_stream=out)
        tt.print("end", output_stream=out)
        return x

    return program


@pytest.mark.parametrize("backend", BACKENDS)
def test_prints_inside_compiled_loops_and_branches_run_at_each_iteration_in_order(backend):
    eager_out, compiled_out = io.StringIO(), io.StringIO()
    eager = _printing_program(eager_out)
    compiled = tt.function(_printing_program(compiled_out), backend=backend)
    for x, n in (([1.0, 2.0], 3), ([0.1, 0.2], 2), ([0.5, 0.5], 0)):
        want = eager(tt.constant(x), tt.constant(n))
        got = compiled(tt.constant(x), tt.constant(n))
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    concrete = compiled.get_concrete_function(tt.constant([1.0, 2.0]), tt.constant(3))
    assert concrete.backend == backend
    assert compiled_out.getvalue() == eager_out.getvalue()
    assert compiled_out.getvalue().count("while") == 5 and "big 2" in compiled_out.getvalue()


@pytest.mark.parametrize("backend", BACKENDS)
def test_prints_go_to_a_file_or_a_logging_function_as_tensorflows(backend, tmp_path, caplog):
    """TensorFlow's output_stream takes `file://<path>` (appended to at each print: TF 2.21
    wrote "v 1" then "v 2") and a logging function (one message a print); any other string
    is a ValueError naming it."""
    path = tmp_path / "prints.txt"
    logger = logging.getLogger("test.prints")

    def step(x):
        tt.print("v", x, output_stream=f"file://{path}")
        tt.print("logged", x, output_stream=logger.warning)
        return x

    compiled = tt.function(step, backend=backend)
    with caplog.at_level(logging.WARNING, logger="test.prints"):
        compiled(tt.constant(1))
        compiled(tt.constant(2))
    assert path.read_text().splitlines() == ["v 1", "v 2"]
    assert [r.getMessage() for r in caplog.records if r.name == "test.prints"] == [
        "logged 1",
        "logged 2",
    ]
    with pytest.raises(ValueError, match="unsupported output stream 'stdout'"):
        tt.print("x", output_stream="stdout")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_print_in_a_differentiated_loop_prints_once_per_forward_iteration(backend):
    out = io.StringIO()

    @tt.function(backend=backend)
    def g(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = x
            for i in tt.range(4):
                tt.print("step", i, y, output_stream=out)
                y = tt.sin(y) * x
        return y, tape.gradient(y, x)

    x = 0.7
    y, dy = g(tt.constant(x))
    values, derivative = [x], 1.0  # y_{k+1} = sin(y_k) x: its value and derivative by x
    for _ in range(4):
        derivative = np.cos(values[-1]) * derivative * x + np.sin(values[-1])
        values.append(np.sin(values[-1]) * x)
    np.testing.assert_allclose([float(y), float(dy)], [values[-1], derivative], rtol=1e-6)
    lines = out.getvalue().splitlines()
    assert [line.split()[:2] for line in lines] == [["step", str(k)] for k in range(4)]
    np.testing.assert_allclose([float(line.split()[2]) for line in lines], values[:4], rtol=1e-6)


def test_a_print_of_a_size_known_only_at_run_time_inside_a_compiled_loop():
    out = io.StringIO()

    @tt.function(backend="c", input_signature=[tt.TensorSpec([None], tt.float32)])
    def f(x):
        for k in tt.range(2):
            tt.print(k, x, tt.shape(x), output_stream=out)
            x = x + 1.0
        return x

    f(tt.constant([1.0, 2.0, 3.0]))
    f(tt.constant([5.0]))
    assert out.getvalue() == "0 [1 2 3] [3]\n1 [2 3 4] [3]\n0 [5] [1]\n1 [6] [1]\n"


def test_a_print_inside_a_loop_is_refused_by_the_export(tmp_path):
    def f(x):
        return tt.while_loop(lambda x: x < 3.0, lambda x: tt.print(x) or x + 1.0, [x])

    with pytest.raises(tt.ExportError, match="calls tt.print at .*test_control_flow.py"):
        tt.export_c(f, [tt.TensorSpec([], tt.float64)], str(tmp_path), prefix="f")


def _nested_loops(out):
    def f(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = x
            for i in tt.range(2):
                for j in tt.range(2):
                    tt.print("inner", i, j, output_stream=out)
                    y = y * x
                k = tt.constant(0)  # bound in both branches
                if y > 0.0:
                    for k in tt.range(1):
                        tt.print("branch", i, output_stream=out)
                        y = y + x
        return y, tape.gradient(y, x)

    return f


@pytest.mark.parametrize("backend", BACKENDS)
def test_loops_that_the_gradient_runs_again_do_not_print_again(backend):
    """A loop inside a differentiated loop, a branch's loop, and a loop that a function
    called under a tape, or differentiated from an outer function, runs: each prints once
    per forward iteration, as eagerly."""
    eager_out, compiled_out = io.StringIO(), io.StringIO()
    x = tt.constant(0.5)
    want = _nested_loops(eager_out)(x)
    got = tt.function(_nested_loops(compiled_out), backend=backend)(x)
    np.testing.assert_allclose([float(g) for g in got], [float(w) for w in want], rtol=1e-6)
    assert compiled_out.getvalue() == eager_out.getvalue()
    assert compiled_out.getvalue().count("inner") == 4

    out = io.StringIO()

    @tt.function(backend=backend)
    def inner(x):
        y = x
        for i in tt.range(3):
            tt.print("step", i, output_stream=out)
            y = tt.sin(y) * x
        return y

    @tt.function(backend=backend)
    def outer(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = inner(x)
        return tape.gradient(y, x)

    outer(x)
    assert out.getvalue() == "step 0\nstep 1\nstep 2\n"
    with tt.GradientTape() as tape:  # a compiled function on an eager tape: one `call` op
        tape.watch(x)
        y = inner(x)
    assert out.getvalue() == "step 0\nstep 1\nstep 2\n" * 2
    tape.gradient(y, x)
    with tt.autodiff.ForwardAccumulator(x, tt.constant(1.0)) as accumulator:
        y = inner(x)
    accumulator.jvp(y)
    assert out.getvalue() == "step 0\nstep 1\nstep 2\n" * 3


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_looped_jacobian_through_a_loop_reads_the_loop_results_it_captures(backend):
    """The jacobian's loop over rows reads the forward loop's stacked states: it captures
    those results, not the forward loop's whole tuple (which C holds as separate blocks)."""

    @tt.function(backend=backend)
    def f(x):
        with tt.GradientTape(persistent=True) as tape:
            tape.watch(x)
            step = lambda i, y: (i + 1, tt.sin(y) * 2.0)  # noqa: E731
            y = tt.while_loop(lambda i, y: i < 2, step, [0, x], maximum_iterations=2)[1]
        return tape.jacobian(y, x, experimental_use_pfor=False)

    x = np.array([0.1, 0.2, 0.3])
    inner = 2.0 * np.sin(x)
    want = np.diag(2.0 * np.cos(inner) * 2.0 * np.cos(x))
    np.testing.assert_allclose(f(tt.constant(x)).numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_gradient_of_a_looped_jacobian_reaches_the_loop_states_it_read(backend):
    """d/dx sum(J) for J the jacobian of y = sin(x) x (one loop step), rows looped: the rows
    read the loop's stacked states, whose cotangents must reach the loop (2 cos x - x sin x)."""

    def f(x):
        with tt.GradientTape() as outer:
            outer.watch(x)
            with tt.GradientTape(persistent=True) as tape:
                tape.watch(x)
                step = lambda i, y: (i + 1, tt.sin(y) * x)  # noqa: E731
                y = tt.while_loop(lambda i, y: i < 1, step, [0, x], maximum_iterations=1)[1]
            total = tt.reduce_sum(tape.jacobian(y, x, experimental_use_pfor=False))
        return outer.gradient(total, x)

    x = np.array([0.1, 0.2])
    want = 2.0 * np.cos(x) - x * np.sin(x)
    np.testing.assert_allclose(f(tt.constant(x)).numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(
        tt.function(f, backend=backend)(tt.constant(x)).numpy(), want, rtol=1e-12
    )


def test_a_loop_condition_that_prints_or_assigns_is_refused_when_compiled():
    v = tt.Variable(0.0)

    def printing(x):
        def cond(i, y):
            tt.print("cond", i)
            return i < 2

        return tt.while_loop(cond, lambda i, y: (i + 1, y * 2.0), [0, x], maximum_iterations=3)

    def assigning(x):
        def cond(i, y):
            v.assign_add(1.0)
            return i < 2

        return tt.while_loop(cond, lambda i, y: (i + 1, y * 2.0), [0, x], maximum_iterations=3)

    x = tt.constant(1.0)
    assert float(assigning(x)[1]) == 4.0 and float(v.numpy()) == 3.0  # eagerly, Python's loop
    with pytest.raises(NotImplementedError, match="calls tt.print: .*test_control_flow.py"):
        tt.function(printing)(x)
    with pytest.raises(NotImplementedError, match="assigns Variable:0: .*test_control_flow.py"):
        tt.function(assigning)(x)


def test_a_gradient_loop_carries_no_cotangent_nobody_asked_for():
    # the gradient with respect to w of a fold over a sequence: the reverse loop would also
    # sum (and stack, each step) the sequence's cotangent; dead-code elimination drops both
    # from that loop, which reads the forward loop's narrowed results
    sequence = tt.constant(np.linspace(0.0, 1.0, 64))

    @tt.function
    def slope(w, sequence):
        with tt.GradientTape() as tape:
            tape.watch(w)
            total = tt.foldl(lambda acc, x: acc * 0.5 + w * x, sequence, initializer=w * 0.0)
        return tape.gradient(total, w)

    w = tt.constant(2.0, tt.float64)
    expected = sum(x * 0.5 ** (63 - k) for k, x in enumerate(np.linspace(0.0, 1.0, 64)))
    assert slope(w, sequence).numpy() == pytest.approx(expected, rel=1e-12)
    optimized = slope.get_concrete_function(w, sequence).ir("optimized")
    assert "f64[64,64]" not in optimized and "f64[64] = scatter_add" not in optimized


def test_stop_gradient_inside_a_loop_body_stops_the_gradient():
    @tt.function
    def slopes(w, xs):
        with tt.GradientTape() as tape:
            tape.watch([w, xs])
            y = tt.foldl(
                lambda acc, x: acc + w * tt.stop_gradient(x) * x,
                xs,
                initializer=tt.constant(0.0, tt.float64),
            )
        return tape.gradient(y, [w, xs])

    xs = np.arange(4.0)
    dw, dxs = slopes(tt.constant(2.0, tt.float64), tt.constant(xs))
    assert dw.numpy() == pytest.approx(np.sum(xs * xs))
    np.testing.assert_allclose(dxs.numpy(), 2.0 * xs)  # only the factor not stopped


def test_a_loop_body_that_updates_its_state_elementwise_writes_it_in_place():
    """The body's new state is computed straight over the loop variable's storage, so no
    iteration copies the state (2,048 bytes here); where the new state is a matrix product,
    which reads every element of the old one, it is computed aside. Values as numpy's."""
    w = np.linspace(-1.0, 1.0, 256)
    matrix = np.eye(256) * 0.5 + np.eye(256, k=1) * 0.25

    def elementwise(x):
        return tt.while_loop(lambda i, s: i < 10, lambda i, s: (i + 1, tt.tanh(s * w) + s), (0, x))

    def mixing(x):
        body = lambda i, s: (i + 1, tt.linalg.matvec(matrix, tt.sin(s) + s))  # noqa: E731
        return tt.while_loop(lambda i, s: i < 10, body, (0, x))

    x = np.linspace(0.0, 1.0, 256)
    want_elementwise, want_mixing = x.copy(), x.copy()
    for _ in range(10):
        want_elementwise = np.tanh(want_elementwise * w) + want_elementwise
        want_mixing = matrix @ (np.sin(want_mixing) + want_mixing)
    for function, want in ((elementwise, want_elementwise), (mixing, want_mixing)):
        compiled = tt.function(function, backend="c")
        np.testing.assert_allclose(compiled(tt.constant(x))[1].numpy(), want, rtol=1e-13)
    source = tt.function(elementwise, backend="c").get_concrete_function(x).c_source()
    start = source.index("for (;", source.index("int tracer_run"))
    loop = source[start : source.index("*(int64_t *)", start)]  # to the count's store
    assert "k" in loop and ", 2048);" not in loop, loop


@pytest.mark.parametrize("backend", BACKENDS)
def test_case_checks_its_predicates_when_the_function_runs(backend):
    """TF 2.21's tf.function raises InvalidArgumentError where exclusive=True and two
    predicates known only when it runs are true, and where none is true and there is no
    default (tracer ran the first true pair's, or the last pair's, function)."""

    def pick(x, exclusive, default):
        pairs = [(x > 0.0, lambda: x * 2.0), (x > 1.0, lambda: x * 3.0)]
        return tt.case(pairs, default=default, exclusive=exclusive)

    exclusive = tt.function(lambda x: pick(x, True, lambda: -x), backend=backend)
    assert float(exclusive(tt.constant(0.5))) == 1.0 and float(exclusive(tt.constant(-1.0))) == 1.0
    with pytest.raises(tt.errors.InvalidArgumentError, match="exclusive=True, but more than 1"):
        exclusive(tt.constant(2.0))
    no_default = tt.function(lambda x: pick(x, False, None), backend=backend)
    assert float(no_default(tt.constant(2.0))) == 4.0
    with pytest.raises(tt.errors.InvalidArgumentError, match="none of its conditions"):
        no_default(tt.constant(-1.0))
