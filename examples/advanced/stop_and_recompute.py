"""Keeping parts of a computation out of the gradient, and recomputing instead of storing.

Three ways to hide a term from the tape, each leaving that term's variable with no gradient
(None) while the other variable's gradient is unchanged, as TensorFlow's advanced-autodiff
guide documents: a tape.stop_recording() block, tape.reset() to drop what was recorded so
far, and tt.stop_gradient on a value. Then tt.recompute_grad: a block whose activations are
computed again in the backward pass gives the same gradient as the plain block.
"""

import numpy as np

import tracer as tt


def hidden_by_stop_recording(tape, a, b):
    a_part = a * a
    with tape.stop_recording():
        b_part = b * b
    return a_part + b_part


def hidden_by_reset(tape, a, b):
    b_part = b * b
    tape.reset()  # everything so far, b_part included, is forgotten
    return a * a + b_part


def hidden_by_stop_gradient(tape, a, b):
    return a**2 + tt.stop_gradient(b**2)


for build in [hidden_by_stop_recording, hidden_by_reset, hidden_by_stop_gradient]:
    for a0, b0 in [(2.0, 3.0), (-0.5, 7.0)]:
        a, b = tt.Variable(a0), tt.Variable(b0)
        with tt.GradientTape() as tape:
            total = build(tape, a, b)
        assert total.numpy() == a0 * a0 + b0 * b0  # the forward value is untouched
        grads = tape.gradient(total, {"a": a, "b": b})
        assert grads["a"].numpy() == 2 * a0, build.__name__  # 4.0 at a = 2
        assert grads["b"] is None, build.__name__


# tt.recompute_grad: the tape keeps only the block's input, and its backward pass runs the
# block again to get the activations it needs.
weights = tt.Variable(tt.random.normal([12, 12], seed=7) * 0.4)


def tanh_stack(h):
    for _ in range(3):
        h = tt.tanh(tt.matmul(h, weights))
    return h


def loss_and_grad(block, batch):
    with tt.GradientTape() as tape:
        loss = tt.reduce_sum(block(block(batch)) ** 2)
    return loss.numpy(), tape.gradient(loss, weights).numpy()


batch = tt.random.normal([5, 12], seed=11)
plain_loss, plain_grad = loss_and_grad(tanh_stack, batch)
recomputed_loss, recomputed_grad = loss_and_grad(tt.recompute_grad(tanh_stack), batch)
np.testing.assert_allclose(recomputed_loss, plain_loss, rtol=1e-6)
np.testing.assert_allclose(recomputed_grad, plain_grad, rtol=1e-5, atol=1e-6)
assert np.abs(plain_grad).max() > 1e-3  # the comparison is not between two zeros
print("stop_recording, reset, stop_gradient, recompute_grad: ok")
