"""Makes the Keras files that tests/test_keras_saving.py loads into tracer.

Run by hand with TensorFlow's Keras 3 (not by the tests, which never import TensorFlow):

    cd tests/data/keras && python make_files.py

Each model NAME gives NAME.keras (model.save), NAME.weights.h5 (model.save_weights) and NAME.npz
(`x`: a fixed input, `y`: Keras's output for it, in inference mode).
"""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras
import numpy as np

layers = keras.layers


def mlp():
    return keras.Sequential(
        [
            keras.Input((4,)),
            layers.Dense(8, activation="relu"),
            layers.Dropout(0.25),
            layers.Dense(3, activation="tanh"),
            layers.Dense(2),
        ]
    ), np.random.default_rng(1).normal(size=(5, 4)).astype("float32")


def cnn():
    return keras.Sequential(
        [
            keras.Input((8, 8, 2)),
            layers.Conv2D(4, 3, padding="same", activation="relu"),
            layers.MaxPooling2D(),
            layers.Conv2D(3, (2, 2), padding="valid", use_bias=False),
            layers.Flatten(),
            layers.Dense(2, activation="softmax"),
        ]
    ), np.random.default_rng(2).normal(size=(3, 8, 8, 2)).astype("float32")


def embedding():
    return keras.Sequential(
        [
            keras.Input((5,), dtype="int32"),
            layers.Embedding(10, 4),
            layers.Flatten(),
            layers.Dense(1, activation="sigmoid"),
        ]
    ), np.random.default_rng(3).integers(0, 10, size=(4, 5)).astype("int32")


def functional():
    """A chain: Input -> Dense -> Dropout -> Dense."""
    x = keras.Input((4,), name="features")
    h = layers.Dense(6, activation="relu", name="hidden")(x)
    h = layers.Dropout(0.5)(h)
    y = layers.Dense(2, name="out")(h)
    return keras.Model(x, y, name="chain"), np.random.default_rng(4).normal(size=(3, 4)).astype(
        "float32"
    )


def functional_add():
    """Two Dense branches joined by Add (for a tracer with merge layers)."""
    x = keras.Input((4,), name="features")
    a = layers.Dense(3, activation="tanh", name="a")(x)
    b = layers.Dense(3, name="b")(x)
    y = layers.Dense(2, name="out")(layers.Add()([a, b]))
    return keras.Model(x, y, name="branches"), np.random.default_rng(5).normal(size=(3, 4)).astype(
        "float32"
    )


def mlp_compiled():
    """The MLP compiled with Adam and fitted one step, so the file holds optimizer variables."""
    model, x = mlp()
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse", metrics=["mae"])
    model.fit(x, np.ones((len(x), 2), "float32"), epochs=1, verbose=0)
    return model, x


def main():
    keras.utils.set_random_seed(1234)
    for make in (mlp, cnn, embedding, functional, functional_add, mlp_compiled):
        model, x = make()
        name = make.__name__
        model.save(f"{name}.keras")
        model.save_weights(f"{name}.weights.h5")
        y = np.asarray(model(x, training=False))
        np.savez(f"{name}.npz", x=x, y=y)
        print(name, x.shape, "->", y.shape)
    print("keras", keras.__version__)


if __name__ == "__main__":
    main()
