"""With `watch_accessed_variables=False` a tape differentiates only the variables it was told to
watch; another variable it reads gets None (seed 000, the section on
`watch_accessed_variables`).

Seed 000 breaks off inside this example; the printed results are the ones seed 003 (TF 2.4
page) shows for it.
"""

import tracer as tt

chosen = tt.Variable(2.0)
skipped = tt.Variable(5.0)

with tt.GradientTape(watch_accessed_variables=False, persistent=True) as tape:
    tape.watch(chosen)
    squared = chosen**2
    cubed = skipped**3  # read on the tape, but never watched

print(tape.gradient(squared, chosen))
print(tape.gradient(cubed, skipped))
