"""One persistent tape, two gradient() calls: x**4 and x**2 at 3.0 (seed 003, the TF 2.4
`tf.GradientTape` page, persistent tapes)."""

import tracer as tt


def record_powers(at):
    point = tt.constant(at)
    tape = tt.GradientTape(persistent=True)
    with tape:
        tape.watch(point)
        square = point * point
        powers = {"fourth": square * square, "second": square}
    return tape, point, powers


tape, point, powers = record_powers(3.0)
print(tape.gradient(powers["fourth"], point))
print(tape.gradient(powers["second"], point))
