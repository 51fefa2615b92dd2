"""A persistent tape answers more than one gradient() call over the same recording (seed 000,
the section on persistent tapes)."""

import tracer as tt

point = tt.constant(3.0)
with tt.GradientTape(persistent=True) as tape:
    tape.watch(point)
    second_power = point * point
    fourth_power = second_power * second_power

for target in (fourth_power, second_power):
    print(tape.gradient(target, point))
