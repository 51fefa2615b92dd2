"""With automatic watching off, watching a layer's variables before its first call watches
nothing, as the layer has none yet; its gradients are all None (seed 003, the TF 2.4
`tf.GradientTape` page, the note on models and `watch_accessed_variables=False`).

The seed leaves the input abstract; here it is a (1, 3) constant.
"""

import tracer as tt

features = tt.constant([[1.0, 2.0, 3.0]])
first = tt.keras.layers.Dense(32)
second = tt.keras.layers.Dense(32)

with tt.GradientTape(watch_accessed_variables=False) as tape:
    tape.watch(first.variables)  # an empty list: `first` is built by the call below
    output = second(first(features))

first_grads = tape.gradient(output, first.variables)

assert len(first.variables) == 2, first.variables
assert first_grads == [None, None], first_grads
