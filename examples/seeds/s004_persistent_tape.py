"""A persistent tape answers two gradient() calls, then is released (seed 004, the older
eager-mode tutorial, "Gradient tapes"). The seed states the values in comments; the script
asserts them."""

import tracer as tt


def powers_on_tape(at):
    point = tt.constant(at)
    tape = tt.GradientTape(persistent=True)
    with tape:
        tape.watch(point)
        squared = point * point
        fourth = squared * squared
    return tape, point, squared, fourth


tape, point, squared, fourth = powers_on_tape(3.0)
grad_fourth, grad_square = (tape.gradient(target, point) for target in (fourth, squared))
del tape  # releases what the persistent tape kept

assert grad_fourth.numpy() == 108.0, grad_fourth
assert grad_square.numpy() == 6.0, grad_square
