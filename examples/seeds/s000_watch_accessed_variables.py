"""Seed 000_d39a0e4e55900ac5.txt (the current `tf.GradientTape` reference page), section on
`watch_accessed_variables=False`.

Seed 000 is cut off in the middle of this example (it ends at `w = tf.Variable(5`); the rest
is taken from the same example in seed 003_787b89f0f120e7e4.txt (TF 2.4 page), which shows
the printed output, with the `with` line that page's scrape dropped put back.
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
