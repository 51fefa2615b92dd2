"""Rebinding a variable's name to `variable + 1` leaves a plain tensor, which later tapes do
not watch (seed 001, the autodiff guide notebook, cell In [17], the first cause of a None
gradient).

tracer's type names are `Variable` and `Tensor` where TensorFlow prints `ResourceVariable` and
`EagerTensor`.
"""

import tracer as tt

counter = tt.Variable(2.0)

for _ in range(2):
    with tt.GradientTape() as tape:
        bumped = counter + 1.0
    print(type(counter).__name__, ":", tape.gradient(bumped, counter))
    counter = bumped  # from here on a Tensor; `counter.assign_add(1.0)` would keep the Variable
