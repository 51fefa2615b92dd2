"""Writes batchnorm.keras and batchnorm.npz for tests/test_keras_normalization.py.

Run with TensorFlow 2.21 / Keras 3.15.1 (not by the tests, which never import TensorFlow):

    cd tests/data/keras_normalization && python make_files.py

The model is a Sequential Input(5) -> Dense(4, relu) -> BatchNormalization() ->
LayerNormalization() -> Dense(2), fitted for two epochs on fixed data so that the moving
statistics and the normalization weights are not their initial values. batchnorm.npz holds
`x`, a fixed input, and `y`, `model(x, training=False)`.
"""

import keras
import numpy as np

keras.utils.set_random_seed(1234)
model = keras.Sequential(
    [
        keras.Input((5,)),
        keras.layers.Dense(4, activation="relu"),
        keras.layers.BatchNormalization(),
        keras.layers.LayerNormalization(),
        keras.layers.Dense(2),
    ]
)
model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
rng = np.random.default_rng(0)
data = rng.normal(size=(32, 5)).astype("float32") * 2 + 1
model.fit(data, data[:, :2] * 3, batch_size=8, epochs=2, verbose=0)
x = rng.normal(size=(6, 5)).astype("float32")
model.save("batchnorm.keras")
np.savez("batchnorm.npz", x=x, y=model(x, training=False).numpy())
