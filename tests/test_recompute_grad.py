"""tt.recompute_grad: the same values and gradients (to second order) as the function itself,
eagerly and compiled, with less kept for the backward pass."""

import numpy as np
import pytest

import tracer as tt

BACKENDS = ["interpreter", "c"]
rng = np.random.default_rng(7)


def block(x, w):
    return tt.tanh(tt.matmul(x, w)) * x


def loss_of(layer):
    def loss(x, w):
        return tt.reduce_sum(layer(layer(x, w), w) ** 2)

    return loss


def value_and_grads(loss):
    def run(x, w):
        with tt.GradientTape() as tape:
            tape.watch([x, w])
            y = loss(x, w)
        return [y, *tape.gradient(y, [x, w])]

    return run


def arguments():
    return tt.constant(rng.standard_normal((3, 4))), tt.constant(rng.standard_normal((4, 4)) * 0.5)


@pytest.mark.parametrize("backend", [None, *BACKENDS])
def test_values_and_gradients_are_the_functions_own(backend):
    x, w = arguments()
    want = value_and_grads(loss_of(block))(x, w)
    run = value_and_grads(loss_of(tt.recompute_grad(block)))
    run = tt.function(run, backend=backend) if backend else run
    for got, expected in zip(run(x, w), want):
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("backend", [None, *BACKENDS])
def test_second_order_against_finite_differences(backend):
    x, w = arguments()
    loss = loss_of(tt.recompute_grad(block))

    def directional(x, w, v):
        with tt.GradientTape() as outer:
            outer.watch(x)
            with tt.GradientTape() as inner:
                inner.watch(x)
                y = loss(x, w)
            along = tt.reduce_sum(inner.gradient(y, x) * v)
        return along, outer.gradient(along, x)

    v, u = (tt.constant(rng.standard_normal((3, 4))) for _ in range(2))
    run = tt.function(directional, backend=backend) if backend else directional
    _, hessian_v = run(x, w, v)
    eps = 1e-6
    numeric = (run(x + eps * u, w, v)[0].numpy() - run(x - eps * u, w, v)[0].numpy()) / (2 * eps)
    np.testing.assert_allclose(np.sum(hessian_v.numpy() * u.numpy()), numeric, rtol=1e-6)


def test_variables_read_inside_get_their_gradients():
    w = tt.Variable(rng.standard_normal((4, 4)) * 0.5)
    layer = tt.recompute_grad(lambda x: tt.tanh(tt.matmul(x, w)))
    x = tt.constant(rng.standard_normal((2, 4)))

    def run(x):
        with tt.GradientTape() as tape:
            y = tt.reduce_sum(layer(layer(x)))
        return tape.gradient(y, w)

    def plain(x):
        with tt.GradientTape() as tape:
            y = tt.reduce_sum(tt.tanh(tt.matmul(tt.tanh(tt.matmul(x, w)), w)))
        return tape.gradient(y, w)

    want = plain(x).numpy()
    for f in [run] + [tt.function(run, backend=b) for b in BACKENDS]:
        np.testing.assert_allclose(f(x).numpy(), want, rtol=1e-13)


def test_the_eager_tape_keeps_only_the_inputs():
    x, w = arguments()
    with tt.GradientTape() as tape:
        tape.watch([x, w])
        y = tt.recompute_grad(block)(x, w)
    kept = [n.op for n in tape._recording_state.nodes]
    assert "tanh" not in kept and "matmul" not in kept  # f ran with no tape recording
    with tt.GradientTape() as plain:
        plain.watch([x, w])
        z = block(x, w)
    np.testing.assert_allclose(
        tape.gradient(y, x).numpy(), plain.gradient(z, x).numpy(), rtol=1e-14
    )


def test_the_compiled_recomputation_is_not_merged_with_the_forward():
    """The forward's values stay inside the recompute node: the backward has its own."""
    x, w = arguments()
    run = tt.function(value_and_grads(loss_of(tt.recompute_grad(block))))
    ir = run.get_concrete_function(x, w).ir("optimized")
    assert ir.count("= recompute[") == 2
    top_level = [line for line in ir.splitlines() if not line.startswith(" ")]
    assert sum("tanh" in line for line in top_level) >= 1  # recomputed in the backward


def euler(steps, segments):
    def value_and_grads(x0, theta):
        def run(count, x):
            return tt.while_loop(
                lambda i, x: i < count,
                lambda i, x: (i + 1, x + 0.01 * (tt.sin(theta * x) - 0.5 * x * x * x)),
                (0, x),
                maximum_iterations=count,
            )[1]

        with tt.GradientTape() as tape:
            tape.watch([x0, theta])
            if segments is None:
                x = run(steps, x0)
            else:
                segment = tt.recompute_grad(lambda x: run(steps // segments, x))
                x = tt.while_loop(
                    lambda j, x: j < segments,
                    lambda j, x: (j + 1, segment(x)),
                    (0, x0),
                    maximum_iterations=segments,
                )[1]
            loss = tt.reduce_sum(x * x)
        return [loss, *tape.gradient(loss, [x0, theta])]

    return value_and_grads


def test_a_checkpointed_loop_keeps_about_sqrt_steps_states():
    """400 steps of a 64-float state: every state kept, the workspace holds 400 of them;
    20 segments of 20, it holds the 20 segment starts and one segment's 20 states."""
    x0 = tt.constant(rng.uniform(-1, 1, 64))
    theta = tt.constant(rng.uniform(0.5, 1.5, 64))
    state = 64 * 8
    plain = tt.function(euler(400, None))
    checkpointed = tt.function(euler(400, 20))
    for want, got in zip(plain(x0, theta), checkpointed(x0, theta)):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
    eager = euler(400, 20)(x0, theta)
    np.testing.assert_allclose(eager[1].numpy(), plain(x0, theta)[1].numpy(), rtol=1e-12)
    workspace = [
        f.get_concrete_function(x0, theta)._executable.workspace_bytes
        for f in (plain, checkpointed)
    ]
    assert workspace[0] >= 400 * state
    assert workspace[1] <= (20 + 20 + 24) * state


def test_a_print_inside_a_recomputed_function_is_refused_clearly():
    def block(x):
        tt.print("inside", x)
        return tt.sin(x)

    checkpointed = tt.recompute_grad(block)
    f = tt.function(lambda x: checkpointed(x) * 2.0)
    with pytest.raises(
        NotImplementedError, match="tt.print inside a function of tt.recompute_grad"
    ):
        f(tt.constant(1.0))
