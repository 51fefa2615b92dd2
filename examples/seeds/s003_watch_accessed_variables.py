"""Only the variable a tape was told to watch gets a gradient when automatic watching is off
(seed 003, the TF 2.4 `tf.GradientTape` page, `watch_accessed_variables=False`)."""

import tracer as tt

base = tt.Variable(2.0)
other = tt.Variable(5.0)

tape = tt.GradientTape(persistent=True, watch_accessed_variables=False)
with tape:
    tape.watch(base)
    results = [(tt.square(base), base), (other**3, other)]

for target, source in results:
    print(tape.gradient(target, source))  # None for `other`: it is not watched
