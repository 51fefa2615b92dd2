"""tt.scan, tt.foldl, tt.foldr, tt.case and tt.switch_case: TensorFlow 2.21's results for
the examples of its API pages, eager = interpreter = C, gradients to second order and
forward-mode derivatives against float64 finite differences, and clear errors."""

import numpy as np
import pytest

import tracer as tt

BACKENDS = ["interpreter", "c"]


def _eager_and_compiled(f):
    """f itself, then f traced for each backend."""
    return [f] + [tt.function(f, backend=backend) for backend in BACKENDS]


def _flat(structure):
    if isinstance(structure, dict):
        return [a for key in sorted(structure) for a in _flat(structure[key])]
    if isinstance(structure, (list, tuple)):
        return [a for item in structure for a in _flat(item)]
    return [np.asarray(structure)]


def _assert_everywhere(f, args, want):
    """f(*args) eagerly and compiled on both backends equals `want` (values and dtypes)."""
    for run in _eager_and_compiled(f):
        got = _flat(run(*args))
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
            assert g.dtype == np.asarray(w).dtype


# --- TensorFlow's examples (values printed by TensorFlow 2.21) --------------------------

SIX = np.array([1, 2, 3, 4, 5, 6])  # int64, as numpy makes it


def test_scan_cumulative_sum_as_in_tensorflows_docs():
    # TF 2.21: tf.scan(lambda a, x: a + x, elems) and with reverse=True
    want = np.array([1, 3, 6, 10, 15, 21], np.int64)
    _assert_everywhere(lambda e: tt.scan(lambda a, x: a + x, e), [SIX], [want])
    want_reversed = np.array([21, 20, 18, 15, 11, 6], np.int64)
    _assert_everywhere(
        lambda e: tt.scan(lambda a, x: a + x, e, reverse=True), [SIX], [want_reversed]
    )


def test_scan_over_a_tuple_of_elems_with_an_initializer_as_in_tensorflows_docs():
    # TF 2.21: tf.scan(lambda a, x: x[0] - x[1] + a, (elems + 1, elems), np.array(0))
    f = lambda e: tt.scan(lambda a, x: x[0] - x[1] + a, (e + 1, e), np.array(0))  # noqa: E731
    _assert_everywhere(f, [SIX], [np.array([1, 2, 3, 4, 5, 6], np.int64)])


def test_scan_fibonacci_with_a_nested_initializer_as_in_tensorflows_docs():
    # TF 2.21: tf.scan(lambda a, _: (a[1], a[0] + a[1]), elems, (np.array(0), np.array(1)))
    def fibonacci(e):
        return tt.scan(lambda a, _: (a[1], a[0] + a[1]), e, (np.array(0), np.array(1)))

    elems = np.array([1, 0, 0, 0, 0, 0])
    want = [np.array([1, 1, 2, 3, 5, 8], np.int64), np.array([1, 2, 3, 5, 8, 13], np.int64)]
    _assert_everywhere(fibonacci, [elems], want)
    assert isinstance(fibonacci(elems), tuple)


def test_scan_of_matrices_and_of_dicts():
    # TF 2.21: tf.scan(lambda a, x: a + x, [[1., 2.], [3., 4.]]) -> [[1, 2], [4, 6]]
    matrix = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    want = np.array([[1.0, 2.0], [4.0, 6.0]], np.float32)
    _assert_everywhere(lambda m: tt.scan(lambda a, x: a + x, m), [matrix], [want])

    # TF 2.21: {'s': [4., 14., 32.]}
    def dot_steps(u, v):
        return tt.scan(
            lambda a, x: {"s": a["s"] + x["u"] * x["v"]},
            {"u": u, "v": v},
            initializer={"s": tt.constant(0.0)},
        )

    u, v = np.array([1.0, 2.0, 3.0], np.float32), np.array([4.0, 5.0, 6.0], np.float32)
    _assert_everywhere(dot_steps, [u, v], [np.array([4.0, 14.0, 32.0], np.float32)])
    assert list(dot_steps(u, v)) == ["s"]


def test_folds_as_in_tensorflows_docs():
    # TF 2.21, elems = tf.constant([1, 2, 3, 4, 5, 6]): foldl/foldr of a + x are 21; of
    # a - x: foldl -19, foldr -9; with initializer=100 both 79
    def folds(e):
        return (
            tt.foldl(lambda a, x: a + x, e),
            tt.foldr(lambda a, x: a + x, e),
            tt.foldl(lambda a, x: a - x, e),
            tt.foldr(lambda a, x: a - x, e),
            tt.foldl(lambda a, x: a - x, e, initializer=100),
            tt.foldr(lambda a, x: a - x, e, initializer=100),
        )

    want = [np.int32(v) for v in (21, 21, -19, -9, 79, 79)]
    _assert_everywhere(folds, [tt.constant([1, 2, 3, 4, 5, 6])], want)
    # TF 2.21: tf.foldl(lambda a, x: a * x, [[1., 2.], [3., 4.]], initializer=tf.ones([2]))
    matrix = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    product = lambda m: tt.foldl(lambda a, x: a * x, m, initializer=tt.ones([2]))  # noqa: E731
    _assert_everywhere(product, [matrix], [np.array([3.0, 8.0], np.float32)])


def test_scan_and_folds_of_no_steps_return_the_start():
    # TF 2.21: tf.scan(f, tf.zeros([0]), initializer=1.0) is [] of shape (0,);
    # tf.foldl(f, tf.zeros([0]), initializer=1.0) is 1.0
    empty = np.zeros([0], np.float32)
    f = lambda a, x: a + x  # noqa: E731
    _assert_everywhere(lambda e: tt.scan(f, e, initializer=1.0), [empty], [empty])
    _assert_everywhere(lambda e: tt.foldl(f, e, initializer=1.0), [empty], [np.float32(1.0)])
    single = np.array([5.0], np.float32)  # no initializer: the one element, and no step
    _assert_everywhere(lambda e: tt.scan(f, e), [single], [single])
    _assert_everywhere(lambda e: tt.foldr(f, e), [single], [np.float32(5.0)])


def f17():
    return tt.constant(17)


def f23():
    return tt.constant(23)


def minus_one():
    return tt.constant(-1)


def test_case_as_in_tensorflows_docs():
    # TF 2.21: 17 for both examples of tf.case's page
    def cases(x, y, z):
        return (
            tt.case([(tt.less(x, y), f17)], default=f23),
            tt.case(
                [(tt.less(x, y), f17), (tt.greater(x, z), f23)], default=minus_one, exclusive=True
            ),
        )

    x, y, z = tt.constant(1.0), tt.constant(2.0), tt.constant(3.0)
    _assert_everywhere(cases, [x, y, z], [np.int32(17), np.int32(17)])
    _assert_everywhere(cases, [z, y, x], [np.int32(23), np.int32(23)])


def test_case_takes_the_first_true_predicate_or_the_default():
    def first(x, y):
        return tt.case([(x > y, f17), (x >= y, f23)], default=minus_one)

    for x, y, want in [(2.0, 1.0, 17), (1.0, 1.0, 23), (0.0, 1.0, -1)]:
        _assert_everywhere(first, [tt.constant(x), tt.constant(y)], [np.int32(want)])


def test_case_without_a_default_runs_the_last_pair_when_the_others_are_false():
    # TF 2.21: tf.case([(x < y, f1), (x < z, f2)]) is 17 (both true: the first wins)
    def no_default(x, y):
        return tt.case([(x > y, f17), (x <= y, f23)])

    _assert_everywhere(no_default, [tt.constant(2.0), tt.constant(1.0)], [np.int32(17)])
    _assert_everywhere(no_default, [tt.constant(1.0), tt.constant(2.0)], [np.int32(23)])


def test_case_takes_a_dict_in_its_order_and_unpacks_singletons_unless_strict():
    # TF 2.21 eagerly: tf.case([(x < y, lambda: [tf.constant(1)])], ...) is the tensor 1,
    # a list of it with strict=True
    assert tt.case({False: f17, True: f23}).numpy() == 23
    x, y = tt.constant(1.0), tt.constant(2.0)
    for run in _eager_and_compiled(
        lambda x, y: tt.case([(x < y, lambda: [tt.constant(1)])], default=lambda: [tt.constant(2)])
    ):
        assert run(x, y).numpy() == 1
    strict = tt.case([(x < y, lambda: [tt.constant(1)])], default=lambda: [f17()], strict=True)
    assert isinstance(strict, list) and strict[0].numpy() == 1


def test_switch_case_as_in_tensorflows_docs():
    # TF 2.21: index 1 -> 23; 5 with a default -> -1; 5 and -1 without one -> 23 (the last)
    def switches(i):
        return (
            tt.switch_case(i, branch_fns={0: f17, 1: f23}, default=minus_one),
            tt.switch_case(i, [f17, f23]),
            tt.switch_case(i, [(0, f17), (1, f23)], default=minus_one),
        )

    for index, want in [
        (1, (23, 23, 23)),
        (0, (17, 17, 17)),
        (5, (-1, 23, -1)),
        (-1, (-1, 23, -1)),
    ]:
        _assert_everywhere(switches, [tt.constant(index)], [np.int32(w) for w in want])
        _assert_everywhere(switches, [tt.constant(index, tt.int64)], [np.int32(w) for w in want])


def test_a_known_predicate_or_index_runs_only_the_chosen_function():
    traced = []

    def branch(k):
        def run():
            traced.append(k)
            return tt.constant(float(k))

        return run

    @tt.function
    def known(x):
        chosen = tt.switch_case(tt.constant(2), [branch(0), branch(1), branch(2)])
        picked = tt.case([(tt.constant(False), branch(3)), (tt.constant(True), branch(4))])
        return x + chosen + picked

    assert known(tt.constant(1.0)).numpy() == 7.0
    assert traced == [2, 4]
    traced.clear()

    @tt.function
    def unknown(i):
        return tt.switch_case(i, [branch(0), branch(1), branch(2)])

    assert unknown(tt.constant(1)).numpy() == 1.0
    assert sorted(traced) == [0, 1, 2]


# --- gradients, to second order, and forward mode ---------------------------------------

rng = np.random.default_rng(20261129)


def scan_nested(x):
    """A scan over two sequences with a two-tensor accumulator; a reverse scan; a fold."""
    w = tt.constant([0.7, -0.4], tt.float64)

    def step(a, e):
        return (a[0] * e[0] + tt.sin(a[1]), a[1] + e[1] * w * a[0])

    first, second = tt.scan(step, (x, tt.cos(x)), initializer=(w, w * w))
    backwards = tt.scan(lambda a, e: tt.tanh(a * e) + e, x, reverse=True)
    total = tt.foldr(lambda a, e: a * tt.exp(-e * e) + e, x)
    return (
        tt.reduce_sum(first * first)
        + tt.reduce_sum(tt.sin(second))
        + tt.reduce_sum(backwards * x)
        + tt.reduce_sum(total)
        + tt.reduce_sum(tt.foldl(lambda a, e: a * e, x[:, 0], initializer=x[0, 1]))
    )


def case_of_x(x):
    """Three branches chosen by sum(x), each a different function of x."""
    s = tt.reduce_sum(x)
    return tt.reduce_sum(
        tt.case(
            [(s > 2.0, lambda: tt.sin(x) * x), (s > 0.0, lambda: tt.exp(x) * s)],
            default=lambda: x * x * x,
        )
    )


def switch_of_x(x, i):
    return tt.reduce_sum(
        tt.switch_case(
            i, [lambda: tt.sin(x) * x, lambda: tt.exp(x) * tt.reduce_sum(x)], default=lambda: x**3
        )
    )


def _derivatives(f):
    """(f(x), its gradient g, and the gradient of <g, v>: the Hessian times v)."""

    def run(x, v):
        with tt.GradientTape() as outer:
            outer.watch(x)
            with tt.GradientTape() as inner:
                inner.watch(x)
                y = f(x)
            g = inner.gradient(y, x)
            along = tt.reduce_sum(g * v)
        return y, g, outer.gradient(along, x)

    return run


def _check_derivatives(f, x):
    """Eager, interpreter and C agree; gradient and Hessian-vector product match central
    differences in float64."""
    v, u = rng.standard_normal(x.shape), rng.standard_normal(x.shape)
    results = [
        [t.numpy() for t in run(tt.constant(x), tt.constant(v))]
        for run in _eager_and_compiled(_derivatives(f))
    ]
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)
    _, g, hv = results[0]
    eps = 1e-6
    value = lambda x: float(f(tt.constant(x)))  # noqa: E731
    numeric = (value(x + eps * u) - value(x - eps * u)) / (2 * eps)
    np.testing.assert_allclose(np.sum(g * u), numeric, rtol=1e-6, atol=1e-8)
    gradient = lambda x: _derivatives(f)(tt.constant(x), tt.constant(v))[1].numpy()  # noqa: E731
    numeric = (gradient(x + eps * v) - gradient(x - eps * v)) / (2 * eps)
    np.testing.assert_allclose(hv, numeric, rtol=1e-5, atol=1e-7)
    return g


def test_scan_and_folds_have_gradients_of_every_order():
    _check_derivatives(scan_nested, rng.uniform(-0.8, 0.8, (4, 2)))


@pytest.mark.parametrize("shift", [1.5, 0.2, -1.5])  # sums of about 3, 0.4 and -3: each branch
def test_case_has_gradients_of_every_order(shift):
    x = shift + rng.uniform(-0.05, 0.05, 2)
    _check_derivatives(case_of_x, x)


@pytest.mark.parametrize("index", [0, 1, 7])
def test_switch_case_has_gradients_of_every_order(index):
    x = rng.uniform(-0.8, 0.8, 3)
    g = _check_derivatives(lambda x: switch_of_x(x, tt.constant(index)), x)
    analytic = {0: np.cos(x) * x + np.sin(x), 1: np.exp(x) * np.sum(x) + np.sum(np.exp(x))}
    np.testing.assert_allclose(g, analytic.get(index, 3 * x**2), rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_switch_case_index_known_only_when_the_function_runs(backend):
    x = rng.uniform(-0.8, 0.8, 3)

    @tt.function(backend=backend)
    def gradient(x, i):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = switch_of_x(x, i)
        return tape.gradient(y, x)

    for index in (0, 1, 2, -3):
        eager = _derivatives(lambda x: switch_of_x(x, tt.constant(index)))(
            tt.constant(x), tt.constant(x)
        )[1]
        np.testing.assert_allclose(
            gradient(tt.constant(x), tt.constant(index)).numpy(), eager.numpy(), rtol=1e-12
        )


def test_a_recurrent_scan_differentiates_the_variable_it_reads():
    """h_t = tanh(W h_(t-1) + x_t): d sum(h^2) / dW, eager = interpreter = C = differences."""
    w = tt.Variable(rng.standard_normal((3, 3)) * 0.5)
    xs = tt.constant(rng.standard_normal((5, 3)))

    def loss():
        step = lambda h, x: tt.tanh(tt.linalg.matvec(w, h) + x)  # noqa: E731
        hs = tt.scan(step, xs, initializer=tt.zeros([3], tt.float64))
        return tt.reduce_sum(hs * hs)

    def gradient():
        with tt.GradientTape() as tape:
            y = loss()
        return tape.gradient(y, w)

    got = [run().numpy() for run in _eager_and_compiled(gradient)]
    for other in got[1:]:
        np.testing.assert_allclose(other, got[0], rtol=1e-12)
    start, eps, direction = w.numpy(), 1e-6, rng.standard_normal((3, 3))
    w.assign(start + eps * direction)
    plus = float(loss())
    w.assign(start - eps * direction)
    minus = float(loss())
    w.assign(start)
    np.testing.assert_allclose(np.sum(got[0] * direction), (plus - minus) / (2 * eps), rtol=1e-6)


def test_back_prop_false_stops_the_gradient():
    x = tt.constant([0.5, 1.5])
    with tt.GradientTape(persistent=True) as tape:
        tape.watch(x)
        stacked = tt.scan(lambda a, e: a * e, x, back_prop=False)
        folded = tt.foldl(lambda a, e: a * e, x, back_prop=False)
    assert tape.gradient(stacked, x) is None and tape.gradient(folded, x) is None
    np.testing.assert_allclose(stacked.numpy(), [0.5, 0.75])


@pytest.mark.parametrize("f", [scan_nested, case_of_x, lambda x: switch_of_x(x, tt.constant(1))])
def test_forward_mode_equals_the_gradient(f):
    x = rng.uniform(-0.8, 0.8, (4, 2))
    u = rng.standard_normal(x.shape)
    _, g, _ = _derivatives(f)(tt.constant(x), tt.constant(u))
    for run in _eager_and_compiled(f):
        primal = tt.constant(x)
        with tt.autodiff.ForwardAccumulator(primal, tt.constant(u)) as accumulator:
            y = run(primal)
        np.testing.assert_allclose(accumulator.jvp(y).numpy(), np.sum(g.numpy() * u), rtol=1e-10)


def test_scan_values_match_numpy():
    x = rng.uniform(-1.0, 1.0, (5, 3))
    a, want = np.full(3, 0.5), []
    for row in x:
        a = np.tanh(a * row) + row
        want.append(a)

    def f(x):
        return tt.scan(
            lambda a, e: tt.tanh(a * e) + e, x, initializer=tt.fill([3], np.float64(0.5))
        )

    for run in _eager_and_compiled(f):
        np.testing.assert_allclose(run(tt.constant(x)).numpy(), np.array(want), rtol=1e-6)


# --- errors -----------------------------------------------------------------------------

HERE = "test_scan_fold_case.py:"


def test_scan_and_folds_refuse_bad_arguments_clearly():
    with pytest.raises(TypeError, match=f"tt.scan: fn must be callable, not int.*{HERE}"):
        tt.scan(3, tt.constant([1.0, 2.0]))
    with pytest.raises(ValueError, match=f"different lengths along axis 0: 2, 3.*{HERE}"):
        tt.foldl(lambda a, x: a, (tt.constant([1.0, 2.0]), tt.constant([1.0, 2.0, 3.0])))
    with pytest.raises(tt.errors.OutOfRangeError, match=f"tt.foldr: elems are empty.*{HERE}"):
        tt.foldr(lambda a, x: a + x, tt.zeros([0]))
    with pytest.raises(ValueError, match="tensor 0 of elems is a scalar"):
        tt.scan(lambda a, x: a + x, [1.0, 2.0])
    with pytest.raises(ValueError, match=r"fn returned float32\[2\] for tensor 0 of the acc"):
        tt.scan(lambda a, x: tt.stack([a, a]), tt.constant([1.0, 2.0]))
    with pytest.raises(TypeError, match="the accumulator's structure"):
        tt.scan(lambda a, x: (a, a), tt.constant([1.0, 2.0]))

    any_length = tt.function(
        lambda x: tt.scan(lambda a, e: a + e, x), input_signature=[tt.TensorSpec([None])]
    )
    # the signature's trace needs the length: each call is traced with its own
    assert any_length(tt.constant([1.0, 2.0])).numpy().tolist() == [1.0, 3.0]

    @tt.function
    def traced(x):
        return tt.scan(lambda a, x: tt.cast(a, tt.float64), x)

    with pytest.raises(ValueError, match=f"fn returned float64.*{HERE}"):
        traced(tt.constant([1.0, 2.0]))


def test_case_and_switch_case_refuse_bad_arguments_clearly():
    x, y = tt.constant(1.0), tt.constant(2.0)
    # TF 2.21 raises InvalidArgumentError for both (its runtime Assert)
    with pytest.raises(tt.errors.InvalidArgumentError, match=f"exclusive=True.*{HERE}"):
        tt.case([(x < y, f17), (x <= y, f23)], exclusive=True)
    with pytest.raises(tt.errors.InvalidArgumentError, match=f"none of its conditions.*{HERE}"):
        tt.case([(x > y, f17), (x >= y, f23)])
    with pytest.raises(tt.errors.InvalidArgumentError, match="exclusive=True"):
        both = [(tt.constant(True), f17), (tt.constant(True), f23)]
        tt.function(lambda: tt.case(both, exclusive=True))()
    with pytest.raises(TypeError, match=f"predicate 0 must be a boolean scalar.*{HERE}"):
        tt.case([(x, f17)])
    with pytest.raises(TypeError, match="the function of predicate 0 must be callable"):
        tt.case([(x < y, 3)])
    with pytest.raises(TypeError, match="pred_fn_pairs must be a list"):
        tt.case(f17)
    with pytest.raises(TypeError, match=f"branch_index must be an int32 or int64 scalar.*{HERE}"):
        tt.switch_case(tt.constant(1.0), [f17, f23])
    with pytest.raises(TypeError, match=r"not int32\[1\]"):
        tt.switch_case(tt.constant([1]), [f17, f23])
    with pytest.raises(TypeError, match="not bool"):
        tt.switch_case(True, [f17, f23])
    with pytest.raises(ValueError, match=r"branch indices must be 0 to 1, not \[0, 2\]"):
        tt.switch_case(tt.constant(0), {0: f17, 2: f23})
    with pytest.raises(ValueError, match="branch_fns holds no branch"):
        tt.switch_case(tt.constant(0), [])


def test_a_multi_way_branch_is_one_switch_node_and_a_c_switch():
    """tt.case and tt.switch_case with run-time predicates make one `switch` node holding
    every branch (not a chain of conds); the C module branches with a C `switch`."""

    def both(x, i):
        total = tt.reduce_sum(x)
        chosen = tt.case(
            [(total > 2.0, lambda: x * 2.0), (total > 0.0, lambda: tt.sin(x))],
            default=lambda: tt.exp(x),
        )
        alone = tt.switch_case(i, [lambda: x * 0.5])  # one branch: it runs, whatever i is
        return chosen + alone + tt.switch_case(i, [lambda: x, lambda: x * x, lambda: tt.cos(x)])

    run = tt.function(both, backend="c")
    concrete = run.get_concrete_function(tt.constant(np.ones(3)), tt.constant(0))
    ops = [node.op for node in concrete.stages["traced"].nodes]
    assert ops.count("switch") == 2 and "cond" not in ops
    assert concrete.c_source().count("switch (*") == 2
    x = rng.uniform(-1.0, 1.0, 3)
    for scale, index in ((3.0, 0), (1.0, 1), (-1.0, 2), (1.0, 7), (-5.0, -1)):
        total = np.sum(scale + x * 0.1)
        value = scale + x * 0.1
        first = value * 2.0 if total > 2.0 else np.sin(value) if total > 0.0 else np.exp(value)
        second = [value, value * value, np.cos(value)][index if 0 <= index < 3 else 2]
        for backend in BACKENDS:
            got = tt.function(both, backend=backend)(tt.constant(value), tt.constant(index))
            np.testing.assert_allclose(got.numpy(), first + value * 0.5 + second, rtol=1e-14)


def test_a_branch_node_drops_the_results_and_operands_nothing_reads():
    """Dead code inside branches: a result no one reads leaves every branch, and with it
    the operand only that result read (cond, switch and recompute alike)."""
    y = tt.constant(rng.uniform(size=3))

    def f(x, z):
        first, unused = tt.cond(
            tt.reduce_sum(x) > 0.0, lambda: (x * 2.0, tt.exp(z)), lambda: (x, tt.sin(z))
        )
        kept, dropped = tt.recompute_grad(lambda a, b: (tt.tanh(a), tt.cos(b)))(x, z)
        return first + kept

    concrete = tt.function(f).get_concrete_function(y, y)
    optimized = concrete.stages["optimized"]
    for node in optimized.nodes:
        if node.op in ("cond", "recompute"):
            assert len(node.dtype.parts) == 1 and len(node.inputs) <= 2
    ir = concrete.ir("optimized")
    assert "exp" not in ir and "sin" not in ir and "cos" not in ir
    for backend in BACKENDS:
        got = tt.function(f, backend=backend)(y, y).numpy()
        np.testing.assert_allclose(got, y.numpy() * 2.0 + np.tanh(y.numpy()), rtol=1e-14)
