"""Seed 003_787b89f0f120e7e4.txt (TF 2.4 `tf.GradientTape` page), `watch_accessed_variables=False`:
only the explicitly watched variable gets a gradient.

The page's scrape dropped the first line of the `with` statement and the two `gradient`
calls; they are put back as in TensorFlow's page (the result for `w` is named `dz_dy` there).
"""

import tracer as tf

x = tf.Variable(2.0)
w = tf.Variable(5.0)
with tf.GradientTape(watch_accessed_variables=False, persistent=True) as tape:
    tape.watch(x)
    y = x**2  # Gradients will be available for `x`.
    z = w**3  # No gradients will be available as `w` isn't being watched.
dy_dx = tape.gradient(y, x)
print(dy_dx)
# No gradients will be available as `w` isn't being watched.
dz_dy = tape.gradient(z, w)
print(dz_dy)
