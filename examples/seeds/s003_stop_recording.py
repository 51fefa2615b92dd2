"""What runs inside `stop_recording()` is left off the tape, so it has no gradient (seed 003,
the TF 2.4 `tf.GradientTape` page, method `stop_recording`)."""

import tracer as tt

four = tt.constant(4.0)
with tt.GradientTape() as tape:
    tape.watch(four)
    with tape.stop_recording():
        sixteen = four**2

print(tape.gradient(sixteen, four))
