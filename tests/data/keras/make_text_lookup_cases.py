"""Writes text_lookup_cases.json: what Keras's TextVectorization, StringLookup and
IntegerLookup give on TensorFlow for fixed corpora and inputs, for tests/test_keras_lookup.py;
and text_model.keras, a Sequential of an adapted TextVectorization, an Embedding, pooling and
a Dense layer as Keras saves it (the vocabulary in the file's assets), with its predictions.

Made with TensorFlow 2.21 and Keras 3.15.1 (`python make_text_lookup_cases.py` in an
environment with both); tracer must give every vocabulary and output."""

import json
import os
import sys

import numpy as np

try:
    import tensorflow as tf
except ImportError:
    sys.exit("make_text_lookup_cases.py runs where TensorFlow 2.21 and Keras 3.15 are installed")

CORPUS = [
    "The cat sat on the mat.",
    "The dog ate my homework!",
    "A cat, a dog, and a bird.",
    "Is THE bird on the mat? Yes: the BIRD.",
    "dog eat dog",
]
INPUTS = ["the cat ate the bird", "An unseen word, the end.", "", "dog dog dog cat mat mat"]


def _plain(value):
    if isinstance(value, tf.Tensor):
        value = value.numpy()
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            return [_plain(v) for v in value.tolist()]
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, np.generic):
        return value.item()
    return value


def text_vectorization(name, adapt=True, inputs=INPUTS, **arguments):
    layer = tf.keras.layers.TextVectorization(**arguments)
    if adapt:
        layer.adapt(CORPUS)
    out = layer(tf.constant(inputs))
    return {
        "layer": "TextVectorization",
        "name": name,
        "arguments": arguments,
        "adapt": CORPUS if adapt else None,
        "inputs": inputs,
        "vocabulary": _plain(layer.get_vocabulary()),
        "vocabulary_size": int(layer.vocabulary_size()),
        "output": _plain(out),
        "dtype": out.dtype.name,
    }


def lookup(kind, name, data, inputs, **arguments):
    layer = getattr(tf.keras.layers, kind)(**arguments)
    if data is not None:
        layer.adapt(data)
    out = layer(tf.constant(inputs))
    return {
        "layer": kind,
        "name": name,
        "arguments": arguments,
        "adapt": data,
        "inputs": inputs,
        "vocabulary": _plain(layer.get_vocabulary()),
        "vocabulary_size": int(layer.vocabulary_size()),
        "output": _plain(out),
        "dtype": out.dtype.name,
    }


WORDS = ["b", "a", "c", "a", "b", "d", "a", "e", "e"]
cases = [
    text_vectorization("int, a length", max_tokens=12, output_sequence_length=6),
    text_vectorization("int, padded to the longest"),
    text_vectorization("int, truncated", output_sequence_length=3),
    text_vectorization("multi_hot", max_tokens=10, output_mode="multi_hot"),
    text_vectorization("count", output_mode="count"),
    text_vectorization("tf_idf", max_tokens=8, output_mode="tf_idf"),
    text_vectorization(
        "count, padded to max_tokens", max_tokens=30, output_mode="count", pad_to_max_tokens=True
    ),
    text_vectorization("lower only", standardize="lower", output_sequence_length=5),
    text_vectorization("no standardize", standardize=None, output_sequence_length=5),
    text_vectorization("characters", split="character", output_sequence_length=8, max_tokens=10),
    text_vectorization(
        "a vocabulary",
        adapt=False,
        vocabulary=["the", "cat", "dog", "bird"],
        output_sequence_length=5,
    ),
    text_vectorization(
        "a column of strings", inputs=[["the cat"], ["a dog"]], output_sequence_length=4
    ),
    lookup("StringLookup", "adapted", WORDS, [["a", "z"], ["e", "b"]]),
    lookup("StringLookup", "max_tokens", WORDS, ["a", "b", "c", "d", "e"], max_tokens=4),
    lookup("StringLookup", "a mask", WORDS, ["a", "", "q"], mask_token=""),
    lookup("StringLookup", "a vocabulary", None, ["a", "b", "x"], vocabulary=["b", "a"]),
    lookup(
        "StringLookup",
        "one_hot",
        None,
        ["a", "b", "x"],
        vocabulary=["b", "a"],
        output_mode="one_hot",
    ),
    lookup(
        "StringLookup",
        "multi_hot",
        None,
        [["a", "b"], ["x", "x"]],
        vocabulary=["b", "a"],
        output_mode="multi_hot",
    ),
    lookup(
        "StringLookup", "count", None, [["a", "a", "x"]], vocabulary=["b", "a"], output_mode="count"
    ),
    lookup(
        "StringLookup",
        "inverted",
        None,
        [[1, 2, 0], [3, 2, 1]],
        vocabulary=["b", "a", "c"],
        invert=True,
    ),
    lookup(
        "StringLookup", "no oov indices", None, ["a", "b"], vocabulary=["b", "a"], num_oov_indices=0
    ),
    lookup("IntegerLookup", "adapted", [12, 7, 7, 3, 12, 7, 40], [[7, 5], [12, 40]]),
    lookup("IntegerLookup", "a vocabulary", None, [3, 9, 4], vocabulary=[4, 3]),
    lookup("IntegerLookup", "a mask", None, [3, 0, 9], vocabulary=[4, 3], mask_token=0),
    lookup("IntegerLookup", "inverted", None, [1, 2, 0], vocabulary=[4, 3], invert=True),
    lookup(
        "IntegerLookup",
        "multi_hot",
        None,
        [[3, 4, 9], [4, 4, 4]],
        vocabulary=[4, 3],
        output_mode="multi_hot",
    ),
]

here = os.path.dirname(os.path.abspath(__file__))
vectorize = tf.keras.layers.TextVectorization(max_tokens=12, output_sequence_length=5)
vectorize.adapt(CORPUS)
model = tf.keras.Sequential(
    [
        vectorize,
        tf.keras.layers.Embedding(12, 3),
        tf.keras.layers.GlobalAveragePooling1D(),
        tf.keras.layers.Dense(1),
    ]
)
model.predict(tf.constant(INPUTS), verbose=0)
rng = np.random.default_rng(0)
model.set_weights([rng.normal(0.0, 0.5, w.shape).astype(np.float32) for w in model.weights])
model.save(os.path.join(here, "text_model.keras"))
cases.append(
    {
        "layer": "Sequential",
        "name": "text_model.keras",
        "inputs": INPUTS,
        "output": _plain(model.predict(tf.constant(INPUTS), verbose=0)),
    }
)

path = os.path.join(here, "text_lookup_cases.json")
with open(path, "w") as f:
    json.dump(cases, f, indent=1)
print(f"wrote {len(cases)} cases to {path}")
