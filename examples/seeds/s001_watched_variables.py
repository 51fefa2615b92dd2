"""What a tape watches on its own: trainable variables only, not a non-trainable variable nor a
tensor; `watched_variables()` names them (seed 001, the autodiff guide notebook, cell In [13],
controlling what the tape watches)."""

import tracer as tt

three = tt.constant(3.0)
with tt.GradientTape() as tape:
    tape.watch(three)
    nine = three**2
print(tape.gradient(nine, three).numpy())

candidates = [
    tt.Variable(3.0, name="x0"),  # trainable: watched
    tt.Variable(3.0, name="x1", trainable=False),  # not trainable
    tt.Variable(2.0, name="x2") + 1.0,  # a sum is a plain tensor
    tt.constant(3.0, name="x3"),  # a tensor as well
]
with tt.GradientTape() as tape:
    total = sum(c**2 for c in candidates[:3])  # x3 is only a gradient source

for grad in tape.gradient(total, candidates):
    print(grad)
print([variable.name for variable in tape.watched_variables()])
