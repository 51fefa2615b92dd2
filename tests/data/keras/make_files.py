"""Makes the Keras files that tests/test_keras_saving.py loads into tracer.

Run by hand with TensorFlow's Keras 3 (not by the tests, which never import TensorFlow):

    cd tests/data/keras && python make_files.py [NAME ...]

Each model NAME gives NAME.keras (model.save), NAME.weights.h5 (model.save_weights) and NAME.npz
(`x`: a fixed input, `y`: Keras's output for it, in inference mode).
"""

import os
import sys

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


def recurrent():
    """Padded token ids whose Embedding mask reaches a Bidirectional LSTM, a GRU without
    reset_after and a SimpleRNN (Keras saves the mask as a NotEqual operation)."""
    ids = keras.Input((6,), dtype="int32", name="ids")
    h = layers.Embedding(12, 4, mask_zero=True)(ids)
    h = layers.Bidirectional(layers.LSTM(3, return_sequences=True))(h)
    h = layers.GRU(3, return_sequences=True, reset_after=False, go_backwards=True)(h)
    h = layers.SimpleRNN(2)(h)
    x = np.random.default_rng(6).integers(1, 12, size=(4, 6)).astype("int32")
    x[0, 4:] = 0
    x[2, 1:] = 0
    return keras.Model(ids, layers.Dense(2)(h), name="recurrent"), x


def masking():
    """Float steps of zeros masked by Masking before an LSTM and a GRU."""
    model = keras.Sequential(
        [
            keras.Input((5, 3)),
            layers.Masking(0.0),
            layers.LSTM(4, return_sequences=True),
            layers.GRU(2),
        ]
    )
    x = np.random.default_rng(7).normal(size=(3, 5, 3)).astype("float32")
    x[1, 3:] = 0.0
    return model, x


def attention():
    """A transformer encoder block on padded ids: masked self-attention, a residual Add and
    LayerNormalization, a causal MultiHeadAttention with its own value_dim, then masked
    GlobalAveragePooling1D (the masks are NotEqual and LogicalOr operations in the config)."""
    ids = keras.Input((6,), dtype="int32", name="ids")
    h = layers.Embedding(12, 8, mask_zero=True)(ids)
    a = layers.MultiHeadAttention(2, 4)(h, h)
    h = layers.LayerNormalization()(layers.Add()([h, a]))
    h = layers.MultiHeadAttention(2, 3, value_dim=5)(h, h, use_causal_mask=True)
    h = layers.GlobalAveragePooling1D()(h)
    x = np.random.default_rng(8).integers(1, 12, size=(3, 6)).astype("int32")
    x[0, 4:] = 0
    x[2, 2:] = 0
    return keras.Model(ids, layers.Dense(2)(h), name="attention"), x


def main(names):
    """Save the models named (all when none is), each made in the order below, after one
    seed, so that making only some gives the same files as making all."""
    keras.utils.set_random_seed(1234)
    for make in (
        mlp,
        cnn,
        embedding,
        functional,
        functional_add,
        mlp_compiled,
        recurrent,
        masking,
        attention,
    ):
        model, x = make()
        name = make.__name__
        if names and name not in names:
            continue
        model.save(f"{name}.keras")
        model.save_weights(f"{name}.weights.h5")
        y = np.asarray(model(x, training=False))
        np.savez(f"{name}.npz", x=x, y=y)
        print(name, x.shape, "->", y.shape)
    print("keras", keras.__version__)


if __name__ == "__main__":
    main(sys.argv[1:])
