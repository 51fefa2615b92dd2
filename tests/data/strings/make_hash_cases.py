"""Writes hash_cases.json: TensorFlow 2.21's tf.strings.to_hash_bucket_fast and
to_hash_bucket_strong (keys [1337, 1337] and [12345678901, 42]) of strings of 0 to 257
random bytes and a few words, with 2^63 - 1 buckets (so nearly the whole hash), and Keras
3.15's Hashing layer on the inputs of tests/test_hashing.py. Run where TensorFlow is
installed."""

import json
import os
import sys

import numpy as np

try:
    import tensorflow as tf
except ImportError:
    sys.exit("make_hash_cases.py runs where TensorFlow 2.21 is installed")


def main():
    rng = np.random.default_rng(0)
    lengths = list(range(0, 70)) + [100, 128, 129, 200, 257]
    strings = [bytes(rng.integers(0, 256, n, dtype=np.uint8)) for n in lengths]
    strings += [b"Cat", b"Dog", b"Tabby", b"Poodle", b"3", b"170", b"96000", b"12"]
    big = 2**63 - 1
    layers = tf.keras.layers

    def hashed(layer, values):
        return np.asarray(layer(np.array(values))).tolist()

    cases = {
        "strings": [s.hex() for s in strings],
        "fast": tf.strings.to_hash_bucket_fast(strings, big).numpy().tolist(),
        "strong_1337": tf.strings.to_hash_bucket_strong(strings, big, key=[1337, 1337])
        .numpy()
        .tolist(),
        "strong_other": tf.strings.to_hash_bucket_strong(strings, big, key=[12345678901, 42])
        .numpy()
        .tolist(),
        "layer_int_salt": hashed(
            layers.Hashing(num_bins=64, salt=1337), [[3], [170], [96000], [12]]
        ),
        "layer_str": hashed(layers.Hashing(num_bins=8), [["Cat"], ["Dog"], ["Tabby"], ["Poodle"]]),
        "layer_mask": hashed(layers.Hashing(num_bins=5, mask_value=""), ["A", "B", "", "C", "D"]),
        "layer_int": hashed(layers.Hashing(num_bins=10), [[3], [170], [-5]]),
        "layer_int_mask": hashed(layers.Hashing(num_bins=10, mask_value=0), [[3], [0], [-5]]),
        "layer_onehot": hashed(layers.Hashing(num_bins=4, output_mode="one_hot"), ["A", "B"]),
        "layer_multi": hashed(
            layers.Hashing(num_bins=4, output_mode="multi_hot"), [["A", "B"], ["C", "C"]]
        ),
        "layer_count": hashed(
            layers.Hashing(num_bins=4, output_mode="count"), [["A", "B"], ["C", "C"]]
        ),
        "float_in": hashed(layers.Hashing(num_bins=3), [[1.5]]),
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hash_cases.json")
    with open(path, "w") as file:
        json.dump(cases, file)


if __name__ == "__main__":
    main()
