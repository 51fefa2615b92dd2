"""tt.strings.to_hash_bucket_fast and to_hash_bucket_strong (FarmHash's Fingerprint64 and
SipHash-2-4) and Keras's Hashing layer against TensorFlow 2.21 (tests/data/strings, made
by the script there): strings of every length class of the two hashes, ints hashed as
text, salts, mask values and the encoded outputs."""

import json
import os

import numpy as np
import pytest

import tracer as tt

CASES = json.load(
    open(os.path.join(os.path.dirname(__file__), "data", "strings", "hash_cases.json"))
)
STRINGS = np.array([bytes.fromhex(h) for h in CASES["strings"]], dtype=object)
BIG = 2**63 - 1


def test_fast_and_strong_buckets_are_tensorflows():
    assert tt.strings.to_hash_bucket_fast(STRINGS, BIG).numpy().tolist() == CASES["fast"]
    strong = tt.strings.to_hash_bucket_strong(STRINGS, BIG, key=[1337, 1337])
    assert strong.numpy().tolist() == CASES["strong_1337"]
    other = tt.strings.to_hash_bucket_strong(STRINGS, BIG, key=[12345678901, 42])
    assert other.numpy().tolist() == CASES["strong_other"]
    compiled = tt.function(lambda s: tt.strings.to_hash_bucket_fast(s, BIG))(STRINGS)
    assert compiled.numpy().tolist() == CASES["fast"] and compiled.dtype == tt.int64


LAYERS = {
    "layer_int_salt": (dict(num_bins=64, salt=1337), [[3], [170], [96000], [12]]),
    "layer_str": (dict(num_bins=8), [["Cat"], ["Dog"], ["Tabby"], ["Poodle"]]),
    "layer_mask": (dict(num_bins=5, mask_value=""), ["A", "B", "", "C", "D"]),
    "layer_int": (dict(num_bins=10), [[3], [170], [-5]]),
    "layer_int_mask": (dict(num_bins=10, mask_value=0), [[3], [0], [-5]]),
    "layer_onehot": (dict(num_bins=4, output_mode="one_hot"), ["A", "B"]),
    "layer_multi": (dict(num_bins=4, output_mode="multi_hot"), [["A", "B"], ["C", "C"]]),
    "layer_count": (dict(num_bins=4, output_mode="count"), [["A", "B"], ["C", "C"]]),
    "float_in": (dict(num_bins=3), [[1.5]]),
}


@pytest.mark.parametrize("case", sorted(LAYERS))
def test_the_hashing_layer_puts_values_in_kerass_buckets(case):
    arguments, values = LAYERS[case]
    layer = tt.keras.layers.Hashing(**arguments)
    out = layer(np.array(values))
    assert out.numpy().tolist() == CASES[case]
    assert out.dtype == (tt.int64 if arguments.get("output_mode", "int") == "int" else tt.float32)
    again = tt.keras.layers.Hashing.from_config(layer.get_config())
    assert again(np.array(values)).numpy().tolist() == CASES[case]


def test_errors():
    with pytest.raises(ValueError, match="num_bins must be a positive integer"):
        tt.keras.layers.Hashing(num_bins=0)
    with pytest.raises(ValueError, match="key must be two 64-bit integers"):
        tt.strings.to_hash_bucket_strong(["a"], 3, key=[1])
