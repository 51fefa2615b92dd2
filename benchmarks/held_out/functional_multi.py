"""Held-out: a functional Keras model with two named inputs and two named outputs, losses
and loss weights by output name, fit on dicts, evaluate, predict."""

import numpy as np
from engine import tf, which

rng = np.random.default_rng(0)
a = rng.standard_normal((256, 4)).astype(np.float32)
b = rng.standard_normal((256, 6)).astype(np.float32)
reg = (a.sum(1, keepdims=True) - b[:, :1]).astype(np.float32)
cls = (a[:, 0] + b[:, 1] > 0).astype(np.float32)[:, None]
ia = tf.keras.Input((4,), name="a")
ib = tf.keras.Input((6,), name="b")
h = tf.keras.layers.Concatenate()([tf.keras.layers.Dense(16, activation="relu")(ia), ib])
h = tf.keras.layers.Dense(16, activation="relu")(h)
out_r = tf.keras.layers.Dense(1, name="reg")(h)
out_c = tf.keras.layers.Dense(1, activation="sigmoid", name="cls")(h)
model = tf.keras.Model(inputs={"a": ia, "b": ib}, outputs={"reg": out_r, "cls": out_c})
model.compile(
    optimizer="adam",
    loss={"reg": "mse", "cls": "binary_crossentropy"},
    loss_weights={"reg": 1.0, "cls": 0.5},
    metrics={"cls": ["accuracy"]},
)
hist = model.fit({"a": a, "b": b}, {"reg": reg, "cls": cls}, epochs=20, batch_size=32, verbose=0)
ev = model.evaluate({"a": a, "b": b}, {"reg": reg, "cls": cls}, verbose=0, return_dict=True)
pred = model.predict({"a": a[:3], "b": b[:3]}, verbose=0)
print(
    which,
    sorted(hist.history),
    {k: round(float(v), 2) for k, v in sorted(ev.items())},
    sorted(pred),
)
