"""Seed 003_787b89f0f120e7e4.txt (TF 2.4 `tf.GradientTape` page), the note on models with
`watch_accessed_variables=False`: watching `a.variables` before the layer is built watches
nothing, so the gradients are a list of Nones.

The page's scrape dropped the `with` line (put back as in TensorFlow's page), and the seed
leaves `inputs` undefined (here a (1, 3) constant). The script asserts the stated result.
"""

import tracer as tf

inputs = tf.constant([[1.0, 2.0, 3.0]])

a = tf.keras.layers.Dense(32)
b = tf.keras.layers.Dense(32)

with tf.GradientTape(watch_accessed_variables=False) as tape:
    tape.watch(a.variables)  # Since `a.build` has not been called at this point
    # `a.variables` will return an empty list and the
    # tape will not be watching anything.
    result = b(a(inputs))
    grads = tape.gradient(result, a.variables)  # The result of this computation will be
    # a list of `None`s since a's variables
    # are not being watched.

assert len(a.variables) == 2, a.variables
assert grads == [None, None], grads
