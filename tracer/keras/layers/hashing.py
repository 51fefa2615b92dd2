"""Keras's Hashing layer: values into `num_bins` buckets by TensorFlow's string hashes
(tracer/ops/string_hashes.py), so that a value falls in the bucket Keras puts it in.

Numbers are hashed as their text (`tt.strings.as_string`); without a salt the hash is
FarmHash's Fingerprint64 (`to_hash_bucket_fast`), with one SipHash-2-4 keyed by it (an int
is both keys). With `mask_value`, that value is bucket 0 and the others share the
`num_bins - 1` after it. Buckets are int64, or encoded as CategoryEncoding encodes them.
"""

from tracer.keras.layers.category_encoding import encoded
from tracer.keras.layers.layer import Layer
from tracer.ops import array_ops, math_ops, string_hashes
from tracer.strings import as_string
from tracer.tensor import convert_to_tensor

_MODES = ("int", "one_hot", "multi_hot", "count")


class Hashing(Layer):
    def __init__(self, num_bins, mask_value=None, salt=None, output_mode="int", sparse=False, **kwargs):  # fmt: skip
        kwargs.setdefault("dtype", "int64" if output_mode == "int" else "float32")
        super().__init__(**kwargs)
        if num_bins is None or int(num_bins) <= 0:
            raise ValueError(f"Hashing: num_bins must be a positive integer, not {num_bins!r}")
        if output_mode not in _MODES:
            raise ValueError(f"Hashing: output_mode must be one of {_MODES}, not {output_mode!r}")
        if sparse:
            raise NotImplementedError(
                "Hashing: sparse=True gives a SparseTensor, which tracer does not have"
            )
        if isinstance(salt, (list, tuple)) and len(salt) != 2:
            raise ValueError(f"Hashing: salt must be an int or a pair of them, not {salt!r}")
        self.num_bins, self.mask_value, self.output_mode, self.sparse = (
            int(num_bins),
            mask_value,
            output_mode,
            False,
        )
        self.salt = salt
        self._key = (
            None
            if salt is None
            else (tuple(salt) if isinstance(salt, (list, tuple)) else (salt, salt))
        )

    def call(self, inputs):
        x = convert_to_tensor(inputs)
        text = x if x.dtype.is_string else as_string(x)
        bins = self.num_bins - (self.mask_value is not None)
        if self._key is None:
            buckets = string_hashes.to_hash_bucket_fast(text, bins)
        else:
            buckets = string_hashes.to_hash_bucket_strong(text, bins, self._key)
        if self.mask_value is not None:
            masked = math_ops.equal(x, convert_to_tensor(self.mask_value, dtype=x.dtype))
            buckets = math_ops.where(masked, array_ops.zeros_like(buckets), buckets + 1)
        if self.output_mode == "int":
            return buckets
        return encoded(buckets, self.output_mode, self.num_bins, self.dtype, what="Hashing")

    def get_config(self):
        return {
            **self._base_config(),
            "num_bins": self.num_bins,
            "salt": self.salt,
            "mask_value": self.mask_value,
            "output_mode": self.output_mode,
            "sparse": self.sparse,
        }
