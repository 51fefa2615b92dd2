"""Seed 003_787b89f0f120e7e4.txt (TF 2.4 `tf.GradientTape` page), method `stop_recording`:
what is computed inside `stop_recording()` is not recorded, so its gradient is None.

The page's scrape dropped the `with tf.GradientTape() as tape:` line and the `gradient`
call; they are put back as in TensorFlow's page.
"""

import tracer as tf

x = tf.constant(4.0)
with tf.GradientTape() as tape:
    with tape.stop_recording():
        y = x**2
dy_dx = tape.gradient(y, x)
print(dy_dx)
