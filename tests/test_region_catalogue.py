"""Every construct that holds graphs (a region: loops, branches, recomputation, custom
gradients and what is built on them) works in every backend with the same numbers: values,
first and second derivatives, forward mode, and vectorized jacobians.

Each construct is a function of one float64 vector. Eager mode runs Python's control flow;
`tt.function` on the interpreter and in C runs the region ops, and `tt.export_c`'s C, called
from a C program built with AddressSanitizer, runs them too. Eager, interpreter, C and
exported C must agree to 1e-10 (relative), and the first derivative must match central
differences.
"""

import os

import numpy as np
import pytest

import tracer as tt
from tests import exported_c
from tests.test_backends import derivatives
from tracer.control import loops
from tracer.export_entries import export_concretes
from tracer.ops.registry import OPS

X = np.array([0.3, -0.7, 0.5])
V = np.array([1.0, -0.5, 2.0])
BACKENDS = ("interpreter", "c")


def _while_bounded(x):
    body = lambda i, s: (i + 1, tt.sin(s) * x + 0.1)  # noqa: E731
    return tt.while_loop(lambda i, s: i < 3, body, (0, x), maximum_iterations=3)[1]


def _while_unbounded(x):
    body = lambda i, s: (i + 1, tt.sin(s) * x + 0.1)  # noqa: E731
    return tt.while_loop(lambda i, s: i < 4, body, (0, x))[1]


def _cond(x):
    return tt.cond(tt.reduce_sum(x) < 0.0, lambda: x * x * x, lambda: tt.sin(x) * x)


def _recompute(x):
    return tt.recompute_grad(lambda x: tt.tanh(tt.tanh(x) * x))(x)


@tt.custom_gradient
def _softplus(x):
    def grad(upstream):
        return upstream * tt.sigmoid(x)

    return tt.math.log1p(tt.exp(x)), grad


def _custom(x):
    return _softplus(x * 2.0) * x


def _scan(x):
    return tt.scan(lambda a, e: tt.tanh(a * e) + e, tt.stack([x, x * x]), initializer=x)[-1]


def _foldl(x):
    return tt.foldl(lambda a, e: a * tt.sin(e) + e, tt.stack([x, tt.cos(x), x * x]))


def _foldr(x):
    return tt.foldr(lambda a, e: a * tt.sin(e) + e, tt.stack([x, tt.cos(x), x * x]))


def _map_fn(x):
    rows = tt.stack([x, tt.cos(x), x * x])
    return tt.reduce_sum(tt.map_fn(lambda row: tt.tanh(row * x) * row, rows), axis=0)


def _case(x):
    total = tt.reduce_sum(x)
    return tt.case(
        [(total > 1.0, lambda: x * x), (total < -1.0, lambda: tt.sin(x))], default=lambda: x * 3.0
    )


def _switch_case(x):
    index = tt.cast(tt.reduce_sum(x) > 0.0, tt.int32)
    return tt.switch_case(index, [lambda: tt.exp(x), lambda: x * tt.cos(x)])


CONSTRUCTS = {
    "while_loop": _while_bounded,
    "while_loop_unbounded": _while_unbounded,
    "cond": _cond,
    "recompute_grad": _recompute,
    "custom_gradient": _custom,
    "scan": _scan,
    "foldl": _foldl,
    "foldr": _foldr,
    "map_fn": _map_fn,
    "case": _case,
    "switch_case": _switch_case,
}
# the region op each construct's traced graph holds (those built on others hold theirs)
REGION_OPS = {"while", "cond", "switch", "recompute", "custom_gradient"}


def _compare(got, want, what):
    for g, w in zip(got, want):
        np.testing.assert_allclose(
            np.asarray(g), np.asarray(w), rtol=1e-10, atol=1e-13, err_msg=what
        )


@pytest.mark.parametrize("name", sorted(CONSTRUCTS))
def test_values_and_two_orders_of_derivatives_agree_everywhere(name):
    run = derivatives(CONSTRUCTS[name], 1)
    x = tt.constant(X)
    eager = [t.numpy() for t in run(x)]
    for backend in BACKENDS:
        _compare(tt.function(run, backend=backend)(x), eager, f"{name} on {backend}")
    # the first derivative (of <f, w>) against central differences
    weight = np.random.default_rng(1).standard_normal(eager[0].shape)
    eps = 1e-6
    numeric = [
        np.sum(
            (
                CONSTRUCTS[name](tt.constant(X + eps * e)).numpy()
                - CONSTRUCTS[name](tt.constant(X - eps * e)).numpy()
            )
            * weight
        )
        / (2 * eps)
        for e in np.eye(len(X))
    ]
    np.testing.assert_allclose(eager[1], numeric, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", sorted(CONSTRUCTS))
def test_forward_mode_agrees_everywhere(name):
    function = CONSTRUCTS[name]
    run = lambda x, v: tt.jvp(function, [x], [v])[1]  # noqa: E731
    x, v = tt.constant(X), tt.constant(V)
    eps = 1e-6
    numeric = (
        function(tt.constant(X + eps * V)).numpy() - function(tt.constant(X - eps * V)).numpy()
    ) / (2 * eps)
    eager = run(x, v).numpy()
    np.testing.assert_allclose(eager, numeric, rtol=1e-6, atol=1e-8)
    for backend in BACKENDS:
        _compare([tt.function(run, backend=backend)(x, v)], [eager], f"{name} on {backend}")


@pytest.mark.parametrize("name", sorted(CONSTRUCTS))
def test_vectorized_jacobians_agree_with_row_by_row_ones(name):
    function = CONSTRUCTS[name]

    def jacobian(x, vectorized):
        with tt.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = function(x)
        return tape.jacobian(y, x, experimental_use_pfor=vectorized)

    x = tt.constant(X)
    want = jacobian(x, False).numpy()  # eagerly, row by row
    for backend in BACKENDS:
        got = tt.function(lambda x: jacobian(x, True), backend=backend)(x)
        _compare([got], [want], f"{name} on {backend}")


def _jacobian(function):
    def vectorized(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = function(x)
        return tape.jacobian(y, x)

    return vectorized


def test_exported_c_gives_the_values_derivatives_jvps_and_jacobians_of_every_construct(
    tmp_path, monkeypatch
):
    """Each construct's values with two orders of derivatives, its jvp and its vectorized
    jacobian, exported as the entry points of one C file, compiled with AddressSanitizer
    (every read and write of a loop's stacks checked, their rows halved: two rows for a
    loop without a bound) and called from C: the numbers eager mode gives."""
    monkeypatch.setattr(loops, "STACK_ITERATIONS", 2)
    x, v = tt.constant(X), tt.constant(V)
    named, calls, expected = [], [], []
    for name, function in sorted(CONSTRUCTS.items()):
        programs = {
            "values": (derivatives(function, 1), [x]),
            "jvp": (lambda x, v, f=function: tt.jvp(f, [x], [v])[1], [x, v]),
            "jacobian": (_jacobian(function), [x]),
        }
        for kind, (program, inputs) in programs.items():
            want = program(*inputs)
            want = [t.numpy() for t in (want if isinstance(want, (list, tuple)) else [want])]
            concrete = tt.function(program).get_concrete_function(*inputs)
            named.append((f"{name}_{kind}", concrete))
            calls.append(exported_c.Call(f"{name}_{kind}", [t.numpy() for t in inputs], want))
            expected.append(want)
    directory = str(tmp_path)
    export_concretes(directory, "regions", named)
    main = os.path.join(directory, "main.c")
    with open(main, "w") as handle:
        handle.write(exported_c.main_source("regions", calls))
    program = exported_c.build(directory, "regions", exported_c.ADDRESS_SANITIZED, [main])
    for call, got, want in zip(calls, exported_c.run(program, calls), expected):
        _compare(got, want, f"{call.function} in exported C")


def test_the_table_reaches_every_region_op():
    """Each op that holds graphs (its C form is structured) is reached by some construct."""
    from codegen.forms import C_FORMS, Structured

    structured = {name for name, form in C_FORMS.items() if isinstance(form, Structured)}
    assert structured == REGION_OPS
    held = set()
    for function in CONSTRUCTS.values():
        graph = tt.function(function).get_concrete_function(tt.constant(X)).stages["traced"]
        held |= {node.op for node in graph.nodes if node.op in OPS and node.op in structured}
    assert held == REGION_OPS
