"""The eager fast paths give the values of the plain op path.

- A tape's first gradient of its structure runs the rules on its tensors; later ones run its
  gradient graph, with no tape watching as a straight-line program of numpy kernels
  (`runtime/straight_line.py`, in C or its Python loop), with a tape recording op by op
  through `apply`. All three give the same bits, for every op of the catalogue.
- A tape's signature finds its cached gradient graph; tapes that differ in an op, a shape,
  a dtype, the wiring or the sources do not share one.
- Python scalars in `x * 2` are converted once and shared, keeping their sign and dtype.
"""

import operator
import weakref

import numpy as np
import pytest

import tracer as tt
import tracer.backprop
from runtime.interpreter import evaluate
from runtime.straight_line import source, straight_line
from tests.test_gradients import ALL_CASES
from tracer.ops.core import graph_node_of
from tracer.passes.gradient import build_gradient


def _first_order(function, inputs, op_path):
    with tt.GradientTape() as tape:
        tape.watch(inputs)
        value = function(*inputs)
        loss = (
            tt.reduce_sum(tt.math.real(value)) if value.dtype.is_complex else tt.reduce_sum(value)
        )
    if not op_path:
        return tape.gradient(loss, inputs, unconnected_gradients="zero")
    with tt.GradientTape():  # a recording tape sends the gradient through the op path
        return tape.gradient(loss, inputs, unconnected_gradients="zero")


@pytest.mark.parametrize("name", sorted(ALL_CASES))
def test_eager_gradients_give_the_same_bits_by_every_path(name, monkeypatch):
    """A tape's first gradient of its structure runs the rules on its tensors; the second
    builds the gradient graph and runs it as straight-line numpy; with a tape recording, the
    graph runs op by op. All three give the same bits."""
    function, args = ALL_CASES[name]
    inputs = [tt.constant(a, dtype=np.asarray(a).dtype) for a in args]
    tracer.backprop._seen_once.clear()
    tracer.backprop._recording_cache.clear()
    paths = []
    for path in ("eager_gradient", "execute_gradient", "execute_graph"):
        original = getattr(tracer.backprop, path)

        def counting(*arguments, _original=original, _path=path):
            paths.append(_path)
            return _original(*arguments)

        monkeypatch.setattr(tracer.backprop, path, counting)
    swept = _first_order(function, inputs, op_path=False)
    assert paths[0] == "eager_gradient"
    paths.clear()
    fast = _first_order(function, inputs, op_path=False)
    paths_of_fast = list(paths)
    paths.clear()
    slow = _first_order(function, inputs, op_path=True)
    # a custom gradient's function is new at each call, so its tape is new each time too
    if name != "custom_gradient":
        assert paths_of_fast == ["execute_gradient"]
        assert paths == ["execute_gradient", "execute_graph"]
    for got, want, other in zip(fast, slow, swept):
        got, want, other = (tt.convert_to_tensor(t).numpy() for t in (got, want, other))
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(other, want)


def test_straight_line_code_is_readable_and_drops_values_after_their_last_use():
    def f(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.reduce_sum(tt.sin(x) * tt.exp(x))
        return tape.gradient(y, x)

    x = tt.constant([0.1, 0.2, 0.3], dtype=tt.float64)
    graph = tt.function(f, backend="interpreter").get_concrete_function(x).stages["deduplicated"]
    text = source(graph)
    assert (
        text.startswith("def run(v0):") and "k_sin(" in text and "k_exp(" in text and "del " in text
    )
    np.testing.assert_array_equal(
        straight_line(graph)(x.numpy())[0], evaluate(graph, [x.numpy()])[0]
    )
    expected = np.exp(x.numpy()) * (np.cos(x.numpy()) + np.sin(x.numpy()))
    np.testing.assert_allclose(straight_line(graph)(x.numpy())[0], expected, rtol=1e-14)


def _gradient_of(build, x):
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = build(x)
    return tape.gradient(y, x)


def test_a_tapes_first_gradient_builds_no_graph_and_the_second_builds_the_one_reused(
    monkeypatch,
):
    built = []
    original = tracer.backprop.build_gradient
    monkeypatch.setattr(
        tracer.backprop, "build_gradient", lambda *a, **k: built.append(1) or original(*a, **k)
    )
    tracer.backprop._seen_once.clear()
    tracer.backprop._recording_cache.clear()
    tracer.backprop._gradient_cache.clear()
    for step, (value, expected_builds) in enumerate([(0.3, 0), (0.7, 1), (1.1, 1)]):
        x = tt.constant([value, 2 * value], tt.float64)
        grad = _gradient_of(lambda x: tt.reduce_sum(tt.sin(x) * x), x)
        v = x.numpy()
        np.testing.assert_allclose(grad.numpy(), np.cos(v) * v + np.sin(v), rtol=1e-15)
        assert len(built) == expected_builds, step


def test_an_outer_tape_records_an_eager_first_gradient():
    """The rules run through `apply` on the tape's tensors, so an outer tape records them:
    the second derivative of x sin(x) is 2 cos(x) - x sin(x)."""
    tracer.backprop._seen_once.clear()
    tracer.backprop._recording_cache.clear()
    x = tt.constant([0.4, -1.3, 2.2], tt.float64)
    with tt.GradientTape() as outer:
        outer.watch(x)
        with tt.GradientTape() as inner:
            inner.watch(x)
            y = tt.reduce_sum(x * tt.sin(x))
        first = inner.gradient(y, x)
    second = outer.gradient(first, x)
    v = x.numpy()
    np.testing.assert_allclose(first.numpy(), np.sin(v) + v * np.cos(v), rtol=1e-15)
    np.testing.assert_allclose(second.numpy(), 2 * np.cos(v) - v * np.sin(v), rtol=1e-14)


@pytest.mark.parametrize("dense_too", [False, True])
def test_an_eager_first_gradient_of_gathers_is_the_graphs_indexed_slices(dense_too):
    """Two gathers' rows join (IndexedSlices, as TensorFlow gives them); with a dense use of
    the same variable too, the sum is dense. The first call (eager) and the second (the
    graph) give the same values, indices and bits."""
    tracer.backprop._seen_once.clear()
    tracer.backprop._recording_cache.clear()
    params = tt.Variable(np.arange(12.0).reshape(4, 3))
    results = []
    for _ in range(2):
        with tt.GradientTape() as tape:
            rows = tt.gather(params, [2, 0, 2])
            loss = tt.reduce_sum(rows * rows) + tt.reduce_sum(tt.gather(params, [[1], [2]]))
            if dense_too:
                loss += tt.reduce_sum(params * 3.0)
        results.append(tape.gradient(loss, params))
    p = params.numpy()
    expected = np.zeros_like(p)
    for row in (2, 0, 2):
        expected[row] += 2 * p[row]
    expected[[1, 2]] += 1.0
    if dense_too:
        expected += 3.0
        assert all(isinstance(g, tt.Tensor) for g in results)
        np.testing.assert_array_equal(results[0].numpy(), results[1].numpy())
        np.testing.assert_allclose(results[0].numpy(), expected, rtol=1e-15)
        return
    assert all(isinstance(g, tt.IndexedSlices) for g in results)
    eager, graph = results
    np.testing.assert_array_equal(eager.indices.numpy(), [1, 2, 2, 0, 2])  # the later first
    np.testing.assert_array_equal(eager.indices.numpy(), graph.indices.numpy())
    np.testing.assert_array_equal(eager.values.numpy(), graph.values.numpy())
    assert tuple(eager.dense_shape) == tuple(graph.dense_shape) == (4, 3)
    np.testing.assert_allclose(tt.convert_to_tensor(eager).numpy(), expected, rtol=1e-15)


def test_tapes_of_one_structure_share_a_gradient_graph_and_others_do_not():
    def build(x, op=tt.sin, squared=False):
        return tt.reduce_sum(op(x) * (x if squared else 3.0))  # one line for every variant

    def entries():  # a tape's key, differentiated once (eagerly) or more (its graph cached)
        return len(tracer.backprop._recording_cache) + len(tracer.backprop._seen_once)

    tracer.backprop._recording_cache.clear()
    tracer.backprop._seen_once.clear()
    x = tt.constant([0.5, 1.5])
    # the same structure (ops, wiring, shapes, dtypes and lines), other values: one entry,
    # and each gradient uses its own values
    g1, g2 = _gradient_of(build, x), _gradient_of(build, x + 1.0)
    np.testing.assert_allclose(g1.numpy(), 3 * np.cos([0.5, 1.5]), rtol=1e-6)
    np.testing.assert_allclose(g2.numpy(), 3 * np.cos([1.5, 2.5]), rtol=1e-6)
    assert entries() == 1
    # another op, shape, dtype or wiring at the same line: a new entry, with the right gradient
    variants = [
        (lambda x: build(x, op=tt.cos), x, lambda v: -3 * np.sin(v)),
        (build, tt.constant([0.5, 1.5, 2.5]), lambda v: 3 * np.cos(v)),
        (build, tt.constant([0.5, 1.5], tt.float64), lambda v: 3 * np.cos(v)),
        (lambda x: build(x, squared=True), x, lambda v: np.cos(v) * v + np.sin(v)),
    ]
    for count, (function, value, expected) in enumerate(variants, start=2):
        grad = _gradient_of(function, value)
        np.testing.assert_allclose(grad.numpy(), expected(value.numpy()), rtol=1e-6)
        assert grad.dtype == value.dtype
        assert entries() == count


def test_tapes_that_differ_only_between_the_hashed_entries_keep_their_own_graphs():
    """The cache key hashes a sample of a long tape's entries (SampledKey): two tapes that
    differ in one unsampled op share a hash and must still be told apart."""

    def chain(x, odd_one):
        y = x
        for k in range(60):
            y = (tt.cos if k == odd_one else tt.sin)(y)
        return y

    def recorded(odd_one):
        x = tt.constant(0.3, tt.float64)
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = chain(x, odd_one)
        return tape, x, y

    def key(tape, x, y):
        tracked = tape._recording_state.tracked
        return tracer.backprop.tape_key(
            tape._recording_state.signature, (tracked[y._node],), (tracked[x._node],)
        )

    sampled = set(range(60, -1, -(61 // tracer.backprop.SampledKey.SAMPLED + 1)))
    odd_one = next(k for k in range(60) if k + 1 not in sampled)  # entry 0 is the watched x
    plain, odd = recorded(None), recorded(odd_one)
    assert type(key(*plain)) is tracer.backprop.SampledKey
    assert hash(key(*plain)) == hash(key(*odd)) and key(*plain) != key(*odd)
    tracer.backprop._recording_cache.clear()
    tracer.backprop._seen_once.clear()

    def expected(odd_one):  # the chain rule in numpy
        y, g = 0.3, 1.0
        for k in range(60):
            g *= -np.sin(y) if k == odd_one else np.cos(y)
            y = np.cos(y) if k == odd_one else np.sin(y)
        return g

    for _ in range(3):  # the first time eagerly, the second builds the graph, the third finds it
        for which in (None, odd_one):
            tape, x, y = recorded(which)
            np.testing.assert_allclose(tape.gradient(y, x).numpy(), expected(which), rtol=1e-13)
    assert len(tracer.backprop._recording_cache) == 2


def test_one_tape_with_other_sources_gets_each_its_own_gradient():
    x, y = tt.constant(2.0), tt.constant(3.0)
    with tt.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        z = x * x * y
    assert tape.gradient(z, x).numpy() == pytest.approx(12.0)
    assert tape.gradient(z, y).numpy() == pytest.approx(4.0)
    assert [g.numpy() for g in tape.gradient(z, [y, x])] == pytest.approx([4.0, 12.0])


def test_python_scalars_keep_their_sign_and_take_the_tensors_dtype():
    x = tt.constant([1.0, -2.0], dtype=tt.float64)
    assert np.signbit((x * -0.0).numpy()).tolist() == [True, False]
    assert np.signbit((x * 0.0).numpy()).tolist() == [False, True]
    assert (x * 2).dtype == tt.float64 and (x * 2.5).numpy().tolist() == [2.5, -5.0]
    f32 = tt.constant([1.0, -2.0])
    assert (f32 * 2.5).dtype == tt.float32 and (2.5 * f32).dtype == tt.float32
    i = tt.constant([1, 2])
    assert (i * 2).dtype == tt.int32 and (i * True).numpy().tolist() == [1, 2]
    with pytest.raises(TypeError, match="without losing its value"):
        i * 2.5


@pytest.mark.parametrize("order", ["same first", "constant first"])
def test_a_value_read_before_it_is_watched_is_told_apart_from_an_equal_constant(order):
    """Signatures name inputs by identity: `z = w * other` reads x before x is watched in one
    call and an unrelated constant in the other; the cached graphs must not be confused."""
    w, x = tt.constant(2.0), tt.constant(3.0)
    with tt.GradientTape() as earlier:
        earlier.watch(x)  # x keeps the input node this tape gave it

    def gradient(other):
        with tt.GradientTape() as tape:
            tape.watch(w)
            z = w * other  # one line for both calls
            tape.watch(x)
            t = z * x
        return float(tape.gradient(t, x))

    calls = [(x, 12.0), (tt.constant(3.0), 6.0)]
    for other, expected in calls if order == "same first" else calls[::-1]:
        assert gradient(other) == expected


@pytest.mark.parametrize("path", ["c", "python"])
def test_a_tape_keeps_no_value_only_a_python_numbers_cotangent_needs(path):
    """`x * 0.5`, `x / 3.0`, `x ** 3.0`, `2.0 ** x`: the number gets no cotangent, so the
    tape keeps no value only its cotangent reads (B32's eager step holds half its arrays),
    while `x * c` of a tensor c keeps x (c may be watched after it was read: its cotangent
    then needs x). The gradients, first and second order, by the rules on the tape's tensors
    and by the cached graph, are the analytic ones."""
    x0 = np.array([0.5, 1.5, -2.0])
    c = tt.constant(np.array([2.0, 3.0, 4.0]))

    def run():
        x = tt.constant(x0)
        with tt.GradientTape() as outer:
            outer.watch(x)
            with tt.GradientTape() as tape:
                tape.watch(x)
                y = x * 0.5
                z = x / 3.0
                w = 2.0 / x
                v = x * c
                u = x**3.0
                s = 2.0**x
                loss = tt.reduce_sum(y * z + w + v + u + s)
            recording = tape._recording_state  # (released by the gradient)
            kept = {
                node.op + str(k): [None if t is None else "value" for t in recording.saved[k]]
                for k, node in enumerate(recording.order)
                if node.op in ("mul", "div", "pow") and k <= 6
            }
            first = tape.gradient(loss, x)
            total = tt.reduce_sum(first * first)
        second = outer.gradient(total, x)
        return first.numpy(), second.numpy(), kept

    switch = tt.ops.core.fast_apply
    was = switch.set_enabled(path == "c") if switch is not None else None
    try:
        for _ in range(2):  # the rules on the tensors, then the cached graph
            first, second, kept = run()
            # loss = x^2 / 6 + 2 / x + c x + x^3 + 2^x
            ln2 = np.log(2.0)
            want_first = x0 / 3 - 2 / x0**2 + np.array([2.0, 3.0, 4.0]) + 3 * x0**2 + ln2 * 2.0**x0
            np.testing.assert_allclose(first, want_first, rtol=1e-14)
            curvature = 1 / 3 + 4 / x0**3 + 6 * x0 + ln2**2 * 2.0**x0
            want_second = 2 * want_first * curvature
            np.testing.assert_allclose(second, want_second, rtol=1e-14)
    finally:
        if switch is not None:
            switch.set_enabled(was)
    assert kept == {
        "mul1": [None, "value"],  # x * 0.5: the 0.5's, not x
        "div2": [None, "value"],  # x / 3.0: the 3.0
        "div3": ["value", "value"],  # 2.0 / x: both, for x's cotangent
        "mul4": ["value", "value"],  # x * c: c might be watched later
        "pow5": ["value", "value", None],  # x ** 3.0: not the result, which the 3.0's needs
        "pow6": ["value", None, "value"],  # 2.0 ** x: not x, which only the 2.0's needs
    }


def test_integer_scalars_wrap_on_overflow_without_a_warning(recwarn):
    """0-d results are numpy scalars; their integer arithmetic must wrap quietly, as
    TensorFlow's does and as numpy's ufuncs do, not warn as numpy's scalar arithmetic does."""
    big = tt.constant(2**31 - 1, dtype=tt.int32) * 1  # a numpy scalar, not a 0-d array
    assert not isinstance(big._value, np.ndarray)
    assert (
        (big + 1).numpy() == -(2**31)
        and (big * 2).numpy() == -2
        and (-big - 2).numpy() == 2**31 - 1
    )
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_source_lines_stay_right_for_code_objects_that_come_and_go(monkeypatch):
    """Lines are remembered per code object only while it is kept alive: past the limit,
    a new code object may reuse a freed one's id, and must not get its lines."""
    from tracer.ir import source

    monkeypatch.setattr(source, "_CODES_LIMIT", len(source._CODES))
    x = tt.constant(1.0)
    with tt.GradientTape() as tape:
        tape.watch(x)
        ys = [eval(compile("x * 3.0", f"cell{i}.py", "eval"), {"x": x}) for i in range(50)]
    assert [y._node.location for y in ys] == [(f"cell{i}.py", 1) for i in range(50)]


def test_straight_line_takes_a_graph_that_lists_an_input_twice():
    from tracer.ir import Graph, Node

    x = Node("input", (), {"name": "x"}, (2,), tt.float64)
    y = Node("sin", (x,), {}, (2,), tt.float64)
    graph = Graph([x, x], [x, y], [y, x])
    values = np.array([0.5, 1.0])
    got = straight_line(graph)(values, values)
    np.testing.assert_array_equal(got[0], np.sin(values))
    np.testing.assert_array_equal(got[1], values)


def _programs():
    """The straight-line program's implementations here: C where it was built, and Python."""
    import runtime.straight_line as module

    built = [] if module.Program is module.PythonProgram else [module.Program]
    return [*built, module.PythonProgram]


def _wide_graph():
    def f(x):
        parts = [tt.sin(x) * float(k) for k in range(20)]  # a concat of 20: more than C's stack
        y = tt.concat(parts, 0)
        return tt.reduce_sum(y, axis=0, keepdims=True) + tt.constant(2.0, tt.float64) - x, y

    x = tt.constant([[0.1, 0.2], [0.3, 0.4]], dtype=tt.float64)
    function = tt.function(f, backend="interpreter")
    return function.get_concrete_function(x).stages["deduplicated"], x.numpy()


@pytest.mark.parametrize("program", _programs(), ids=lambda p: p.__name__)
def test_straight_line_programs_give_the_interpreters_bits(program, monkeypatch):
    import runtime.straight_line as module

    monkeypatch.setattr(module, "Program", program)
    graph, x = _wide_graph()
    run = straight_line(graph)
    assert type(run) is program
    for got, want in zip(run(x), evaluate(graph, [x])):
        np.testing.assert_array_equal(got, want)
    assert np.asarray(run(x)[1]).shape == (40, 2)


@pytest.mark.parametrize("program", _programs(), ids=lambda p: p.__name__)
def test_a_kernel_error_in_a_straight_line_program_propagates_and_leaks_nothing(program):
    import sys

    calls = []

    def failing(a):
        calls.append(a)
        if len(calls) == 2:
            raise FloatingPointError("the second call fails")
        return a + 1.0

    value = np.ones(3)
    run = program(
        3,
        (0,),
        (),
        ((failing, (0,), (), None, 1, ()), (np.negative, (1,), (), None, 2, (1,))),
        (2,),
    )
    before = sys.getrefcount(value)
    np.testing.assert_array_equal(run(value)[0], -2.0 * value)
    with pytest.raises(FloatingPointError, match="second call"):
        run(value)
    calls.clear()
    assert sys.getrefcount(value) == before
    np.testing.assert_array_equal(run(value)[0], -2.0 * value)


@pytest.mark.skipif(len(_programs()) == 1, reason="the straight-line program in C was not built")
@pytest.mark.parametrize(
    "arguments, message",
    [
        ((2, (0,), (), ((np.negative, (5,), (), None, 1, ()),), (1,)), "outside"),
        ((2, (0,), (), ((np.negative, (1,), (), None, 1, ()),), (1,)), "holds no value"),
        (
            (
                3,
                (0,),
                (),
                ((np.negative, (0,), (), None, 1, (0,)), (np.exp, (0,), (), None, 2, ())),
                (2,),
            ),
            "holds no value",
        ),
        ((2, (0,), (), ((np.negative, (0,), (), None, 1, (1,)),), (1,)), "at the end"),
        (
            (2, (0,), (), ((np.sum, (0,), (0,), ("axis", "keepdims"), 1, ()),), (1,)),
            "differ in number",
        ),
        ((2, (0,), (), ((np.sum, (0,), (0,), None, 1, ()),), (1,)), "without names"),
        ((2, (0,), (), ((np.negative, (0,), (), None, -1, ()),), (1,)), "outside"),
        ((2, (0,), (), ((3, (0,), (), None, 1, ()),), (1,)), "not callable"),
        ((2, (0,), (), ((np.negative, (0,)),), (1,)), "6 items"),
    ],
)
def test_the_program_in_c_refuses_a_malformed_program(arguments, message):
    with pytest.raises((ValueError, TypeError), match=message):
        _programs()[0](*arguments)


def test_the_program_in_c_is_built_where_this_install_built_the_extensions():
    import tracer.ops.core

    if tracer.ops.core.fast_apply is not None:  # the eager op path in C was built, so was this
        assert len(_programs()) == 2


def _planned_graphs():
    """Graphs whose plans differ in each way a plan can: an input listed twice, an output
    that is an input, constants, a node reading one value twice, a value dying at a step of
    three or more inputs, and a gradient graph."""
    from tracer.ir import Graph, Node

    x = Node("input", (), {"name": "x"}, (2,), tt.float64)
    c = graph_node_of(tt.constant([1.0, 2.0], tt.float64))
    y = Node("mul", (x, x), {}, (2,), tt.float64)
    z = Node("add", (y, c), {}, (2,), tt.float64)
    w = Node("concat", (z, y, z, x), {"axis": 0}, (8,), tt.float64)
    forward = _wide_graph()[0]
    grad = build_gradient(forward, forward.outputs[:1], forward.inputs)
    return [Graph([x, x], [x, c, y, z, w], [w, x]), forward, grad.graph]


def test_the_plan_in_c_is_the_python_plan():
    """runtime/straight_line.c's `plan` gives `_plan_in_python`'s slots, constants, steps and
    dead values, and raises its KeyError for a node that reads a value the graph lacks."""
    import runtime.straight_line as module
    from tracer.ir import Graph, Node

    if module._NATIVE is None:
        pytest.skip("the straight-line extension was not built")
    graphs = _planned_graphs()
    *_, (_, _, reads, dead) = module._plan(graphs[0]).steps  # the concat of z, y, z, x
    assert dead == reads[:2]  # z and y die there, once each; x, an input, stays
    for graph in graphs:
        got, want = module._plan(graph), module._plan_in_python(graph)
        assert (got.n_slots, got.input_slots, got.output_slots) == (
            want.n_slots,
            want.input_slots,
            want.output_slots,
        )
        assert [(s, a.tobytes()) for s, a in got.constants] == [
            (s, a.tobytes()) for s, a in want.constants
        ]
        assert [(s, n, i, d) for s, n, i, d in got.steps] == [
            (s, n, i, d) for s, n, i, d in want.steps
        ]
    x = Node("input", (), {"name": "x"}, (2,), tt.float64)
    stray = Node("input", (), {"name": "stray"}, (2,), tt.float64)
    y = Node("add", (x, stray), {}, (2,), tt.float64)
    for plan in (module._plan, module._plan_in_python):
        with pytest.raises(KeyError):
            plan(Graph([x], [x, y], [y]))


def _random_graph_outputs(rng):
    """The outputs of a random graph of up to 60 nodes: each reads up to three earlier ones
    (a node read twice, by one node or by several), some through a list of inputs."""
    from tracer.ir import Node

    nodes = []
    for k in range(int(rng.integers(1, 60))):
        count = int(rng.integers(0, min(3, k) + 1))
        inputs = tuple(nodes[int(i)] for i in rng.integers(0, max(k, 1), count))
        nodes.append(
            Node("add", list(inputs) if rng.random() < 0.2 else inputs, {}, (), tt.float64)
        )
    return [nodes[int(i)] for i in rng.integers(0, len(nodes), int(rng.integers(1, 5)))]


def test_the_topological_order_in_c_is_the_python_walks():
    """fast_apply.c's `topological_order` gives `_closure_in_python`'s nodes in its order, on
    random graphs, a chain 20,000 nodes deep and a gradient graph; where a node is not a
    Node it gives None, and the Python walk raises its error."""
    from tracer.ir import Node, graph
    from tracer.ops import core

    if core.fast_apply is None or graph._order_in_c is None:
        pytest.skip("the C op path was not built")
    rng = np.random.default_rng(0)
    cases = [_random_graph_outputs(rng) for _ in range(200)]
    chain = [Node("input", (), {"name": "x"}, (), tt.float64)]
    for k in range(20_000):
        chain.append(Node("add", (chain[-1], chain[max(0, k - 6)]), {}, (), tt.float64))
    cases += [[chain[-1], chain[5]], list(_planned_graphs()[-1].outputs)]
    for outputs in cases:
        got, want = graph._order_in_c(outputs), graph._closure_in_python(outputs)
        assert len(got) == len(want) and all(a is b for a, b in zip(got, want))
    assert graph._order_in_c([chain[3], None]) is None
    with pytest.raises(AttributeError, match="inputs"):
        graph.topological_closure([chain[3], None])


def test_a_gradient_graph_of_the_whole_tape_gives_the_pruned_tapes_gradients():
    """Where the sources are the watched values, the gradient graph is built from the whole
    tape (a branch that reaches no target and a source that reaches none included): every
    call gives the first call's gradients, and None for the unused source, as a tape whose
    sources are only some of its watched values (pruned)."""
    x, unused = tt.constant([0.5, -1.5], tt.float64), tt.constant(2.0, tt.float64)

    def gradients(sources):
        with tt.GradientTape() as tape:
            tape.watch([x, unused])
            tt.exp(x) * 3.0  # reaches no target
            y = tt.reduce_sum(tt.sin(x) * x)
        return tape.gradient(y, sources)

    want = np.cos(x.numpy()) * x.numpy() + np.sin(x.numpy())
    for _ in range(3):  # an eager sweep, the graph built, the graph found
        whole, part = gradients([x, unused]), gradients([x])
        np.testing.assert_allclose(whole[0].numpy(), want, rtol=1e-15)
        np.testing.assert_array_equal(whole[0].numpy(), part[0].numpy())
        assert whole[1] is None


@pytest.mark.parametrize("program", _programs(), ids=lambda p: p.__name__)
def test_a_straight_line_program_called_with_the_wrong_number_of_arrays_says_so(program):
    run = program(2, (0,), (), ((np.negative, (0,), (), None, 1, ()),), (1,))
    np.testing.assert_array_equal(run(np.ones(2))[0], -np.ones(2))
    for arrays in ((), (np.ones(2), np.ones(2))):
        with pytest.raises(TypeError, match=r"takes 1 positional arguments \(\d given\)"):
            run(*arrays)


def test_the_text_of_a_program_names_every_argument_position():
    from tracer.ir import Graph, Node

    x = Node("input", (), {"name": "x"}, (2,), tt.float64)
    y = Node("sin", (x,), {}, (2,), tt.float64)
    text = source(Graph([x, x], [x, y], [y, x]))
    assert text.startswith("def run(v0, _1):") and "v1 = k_sin(v0)" in text


def _c_program():
    import runtime.straight_line as module

    if module.Program is module.PythonProgram:
        pytest.skip("the straight-line program in C is not built here")
    return module.Program


def _made(made, make):
    """A step's function returning `make(a)`, remembered by a weak reference (no reference
    that would keep the array from being fresh)."""

    def run(a):
        result = make(a)
        made.append(weakref.ref(result))
        return result

    return run


N = 20_000  # 160 KB of float64: large enough to be written in place


@pytest.mark.parametrize(
    "operator_, first_dead",
    [(operator.add, True), (operator.sub, True), (operator.sub, False), (operator.mul, False)],
)
def test_a_dead_fresh_operand_takes_the_result_in_place_with_the_same_bits(operator_, first_dead):
    import runtime.straight_line as module

    made = []
    fresh = _made(made, np.negative)
    x = np.linspace(-2.0, 3.0, N)
    operands = (1, 0) if first_dead else (0, 1)
    steps = ((fresh, (0,), (), None, 1, ()), (operator_, operands, (), None, 2, (1,)))
    got = _c_program()(3, (0,), (), steps, (2,))(x)[0]
    want = module.PythonProgram(3, (0,), (), steps, (2,))(x)[0]
    assert got is made[0]()  # the negated array, written over
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(x, np.linspace(-2.0, 3.0, N))


def _scalar_like(a):
    return np.asarray(a[0])


@pytest.mark.parametrize(
    "case",
    ["caller's array", "a view", "another dtype", "broadcast to a larger shape", "0-d"],
)
def test_an_operand_that_is_not_fresh_or_does_not_fit_is_never_written(case):
    """Each case runs in C and in Python with the same values, dtype and shape; the dead
    operand's array (or what it views) keeps its values unless it was fresh."""
    import runtime.straight_line as module

    x = np.linspace(-2.0, 3.0, N)
    x_before = x.copy()
    kept = []

    def held(a):  # fresh, but also held by the test
        kept.append(np.negative(a))
        return kept[-1]

    if case == "caller's array":
        n_slots, steps = 2, ((operator.add, (0, 0), (), None, 1, (0,)),)
    elif case == "a view":
        n_slots, steps = (
            4,
            (
                (held, (0,), (), None, 1, ()),
                (lambda a: a[::2], (1,), (), None, 2, ()),
                (operator.mul, (2, 2), (), None, 3, (2,)),
            ),
        )
    else:
        make = {
            "another dtype": lambda a: np.negative(a).astype(np.float32),
            "broadcast to a larger shape": np.negative,
            "0-d": _scalar_like,
        }[case]
        other = {"broadcast to a larger shape": lambda a: np.stack([a, a])}.get(case, np.exp)
        n_slots, steps = (
            4,
            (
                (make, (0,), (), None, 1, ()),
                (other, (0,), (), None, 2, ()),
                (operator.add, (1, 2), (), None, 3, (1,)),
            ),
        )
    for program in (_c_program(), module.PythonProgram):
        kept.clear()
        got = program(n_slots, (0,), (), steps, (n_slots - 1,))(x)[0]
        want = module.PythonProgram(n_slots, (0,), (), steps, (n_slots - 1,))(x)[0]
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(x, x_before)
        if case == "a view":
            np.testing.assert_array_equal(kept[0], -x_before)


def test_a_read_only_fresh_array_is_computed_as_written():
    import runtime.straight_line as module

    def read_only(a):
        result = np.negative(a)
        result.flags.writeable = False
        return result

    x = np.linspace(-2.0, 3.0, N)
    steps = ((read_only, (0,), (), None, 1, ()), (operator.add, (1, 0), (), None, 2, (1,)))
    got = _c_program()(3, (0,), (), steps, (2,))(x)[0]
    np.testing.assert_array_equal(got, module.PythonProgram(3, (0,), (), steps, (2,))(x)[0])


@pytest.mark.parametrize(
    "case", ["Fortran order", "non-native byte order", "strings", "a Fortran-order other"]
)
def test_a_step_in_place_keeps_the_layout_and_dtype_of_the_step_as_written(case):
    """`out=` would keep the dead operand's layout and dtype where `a + b` chooses its own:
    such steps are computed as written, with the Python loop's result exactly."""
    import runtime.straight_line as module

    shape = (200, 100)
    make, other = {
        "Fortran order": (
            lambda a: np.asfortranarray(-a.reshape(shape)),
            lambda a: a.reshape(shape),
        ),
        "non-native byte order": (lambda a: (-a).astype(">f8"), lambda a: a.astype(">f8")),
        "strings": (lambda a: a.astype("U2"), lambda a: a.astype("U2")),
        "a Fortran-order other": (
            lambda a: -a.reshape(shape),
            lambda a: a.reshape(shape).T.copy().T,
        ),
    }[case]
    x = np.arange(float(N)) % 97
    steps = (
        (make, (0,), (), None, 1, ()),
        (other, (0,), (), None, 2, ()),
        (operator.add, (1, 2), (), None, 3, (1,)),
    )
    got = _c_program()(4, (0,), (), steps, (3,))(x)[0]
    want = module.PythonProgram(4, (0,), (), steps, (3,))(x)[0]
    assert got.dtype == want.dtype and got.flags.c_contiguous == want.flags.c_contiguous
    np.testing.assert_array_equal(got, want)


LARGE = 100_000  # elements: LARGE_FLOATING_KERNELS's, on the threads


@pytest.mark.parametrize("op, first_dead", [("add", True), ("sub", False), ("mul", True)])
def test_a_large_step_on_the_threads_takes_a_dead_aligned_operand_in_place(op, first_dead):
    """A large float step's function (LARGE_FLOATING_KERNELS, the loop installed with tracer)
    writes into a dead operand that aligned.empty made (a view of a buffer only it holds):
    numpy's bits, in that array; an operand whose buffer another view also holds is read,
    never written."""
    import runtime.straight_line as module
    from runtime import aligned
    from runtime.kernels import LARGE_FLOATING_KERNELS

    function = LARGE_FLOATING_KERNELS[op]
    ufunc = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op]

    def negated(a):
        result = aligned.empty(a.shape, a.dtype)
        np.negative(a, out=result)
        return result

    x = np.linspace(-2.0, 3.0, LARGE)
    want = ufunc(-x, x) if first_dead else ufunc(x, -x)
    operands = (1, 0) if first_dead else (0, 1)
    made = []
    steps = ((_made(made, negated), (0,), (), None, 1, ()), (function, operands, (), None, 2, (1,)))
    for program in (_c_program(), module.PythonProgram):
        made.clear()
        got = program(3, (0,), (), steps, (2,))(x)[0]
        assert got.tobytes() == want.tobytes()
        if program is not module.PythonProgram:
            assert got is made[0]()  # the negated array, written over
    np.testing.assert_array_equal(x, np.linspace(-2.0, 3.0, LARGE))

    views = []

    def shared(a):  # aligned, and its buffer held by another view too
        result = negated(a)
        views.append(result[::2])
        return result

    steps = ((shared, (0,), (), None, 1, ()), (function, operands, (), None, 2, (1,)))
    got = _c_program()(3, (0,), (), steps, (2,))(x)[0]
    assert got.tobytes() == want.tobytes()
    np.testing.assert_array_equal(views[0], -x[::2])


@pytest.mark.parametrize("dtype", [tt.float32, tt.float64])
def test_an_eager_gradient_of_large_arrays_is_the_op_paths_bits(dtype):
    """The straight-line program runs large +, - and * on the threads, in place where an
    operand dies; the op path (an outer tape makes the gradient run op by op) computes each
    op into a new array: the same bits; both the analytic gradient, the second order too."""
    rng = np.random.default_rng(3)
    x = tt.constant(rng.standard_normal(LARGE), dtype)
    w = tt.constant(rng.standard_normal(LARGE), dtype)

    def loss_of(x):
        y = x * w + 0.5
        z = (y - x) * (y + w) * 3.0
        return tt.reduce_sum(z * z - y)

    def gradient():
        with tt.GradientTape() as tape:
            tape.watch(x)
            loss = loss_of(x)
        return tape.gradient(loss, x)

    straight = gradient().numpy()
    with tt.GradientTape() as outer:
        outer.watch(x)
        by_ops = gradient()
        total = tt.reduce_sum(by_ops * w)
    second = outer.gradient(total, x).numpy()
    assert straight.tobytes() == by_ops.numpy().tobytes()
    x64, w64 = (v.numpy().astype(np.float64) for v in (x, w))
    y = x64 * w64 + 0.5
    a, b = y - x64, y + w64
    # loss = sum(9 a^2 b^2 - y): dy/dx = w, da/dx = w - 1, db/dx = w
    want = 18 * a * b * (b * (w64 - 1) + a * w64) - w64
    close = {"rtol": 1e-3, "atol": 1e-5} if dtype == tt.float32 else {"rtol": 1e-10}
    np.testing.assert_allclose(straight, want, **close)
    # d/dx of sum(first * w)
    want_second = 18 * w64 * (((w64 - 1) * b + a * w64) ** 2 + 2 * a * b * w64 * (w64 - 1))
    np.testing.assert_allclose(second, want_second, **close)


def test_an_overflow_of_a_step_in_place_is_a_result_as_every_steps_is():
    """A program runs with numpy's floating-point errors ignored (runtime/quiet_errors.h),
    whatever the program set: the step that takes its operand's array gives inf, as the
    Python loop does, and the program's modes are as it set them after."""
    import runtime.straight_line as module

    y = np.full(N, 2.0)
    y[0] = 1e200
    steps = (
        (np.negative, (0,), (), None, 1, ()),
        (operator.mul, (1, 0), (), None, 2, (1,)),
    )
    for program in (_c_program(), module.PythonProgram):
        with np.errstate(over="raise"):
            got = program(3, (0,), (), steps, (2,))(y)[0]
            assert np.geterr()["over"] == "raise"
        assert got[0] == -np.inf and np.all(got[1:] == -4.0)


def test_eager_kernels_ignore_the_users_floating_point_settings_and_keep_them():
    """Kernels compute quietly (an overflow is inf, a log of a negative NaN: results, as in
    TensorFlow) whatever numpy's error settings are, and leave those settings, the buffer
    size included, as they found them."""
    big = tt.constant(np.array([1000.0, -1.0, 0.0]))
    old_settings, old_size = np.geterr(), np.getbufsize()
    try:
        np.seterr(all="raise")
        np.setbufsize(16384)
        for _ in range(2):  # the second time, the settings' quiet copy is remembered
            assert np.isinf(tt.exp(big).numpy()[0])
            assert np.isnan(tt.math.log(big).numpy()[1])
            assert tt.sigmoid(-big).numpy()[0] == 0.0
            assert np.geterr() == dict.fromkeys(old_settings, "raise")
            assert np.getbufsize() == 16384
        with pytest.raises(FloatingPointError):
            np.exp(np.array([1000.0]))  # numpy's own call still raises
        with np.errstate(over="warn"):
            assert np.isinf(tt.exp(big).numpy()[0])
            assert np.geterr()["over"] == "warn"
    finally:
        np.seterr(**old_settings)
        np.setbufsize(old_size)
