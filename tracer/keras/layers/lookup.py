"""Keras's StringLookup and IntegerLookup: tokens to indices in a vocabulary (or back, with
`invert`), given or learnt from data by `adapt`, as integers or encoded per sample.

The indices, as Keras lays them out: with `output_mode="int"` and a `mask_token`, the mask
is 0; then `num_oov_indices` indices (one, or none: tokens outside the vocabulary are
then an error) for every token the vocabulary lacks; then the vocabulary. `adapt` orders
the tokens by their counts, highest first, ties by the tokens themselves from the highest
(Keras's order), and keeps the first `max_tokens` less the special indices.

Strings are looked up by `token_ops.lookup` (in Python, as every tt.strings op runs);
integers by comparisons with the vocabulary, which compile to C. The encodings ("one_hot",
"multi_hot", "count", "tf_idf") are one-hot sums over the last axis, of `depth` the
vocabulary's size, or `max_tokens` with `pad_to_max_tokens`. docs/keras_layers.md says
where tracer differs from Keras.
"""

import collections
import math

import numpy as np

from tracer import dtypes
from tracer.keras.layers.layer import Layer
from tracer.ops import array_ops, index_ops, math_ops, reduction_ops, token_ops
from tracer.ops.broadcast_ops import reduce_sum
from tracer.ops.convert import as_tensor
from tracer.ragged_tensor import RaggedTensor
from tracer.tensor import convert_to_tensor

OUTPUT_MODES = ("int", "one_hot", "multi_hot", "count", "tf_idf")


class IndexLookup(Layer):
    """What StringLookup and IntegerLookup share; `_key_dtype` is the tokens' dtype."""

    _key_dtype = dtypes.string

    def __init__(
        self,
        max_tokens=None,
        num_oov_indices=1,
        mask_token=None,
        oov_token=None,
        vocabulary=None,
        idf_weights=None,
        invert=False,
        output_mode="int",
        pad_to_max_tokens=False,
        sparse=False,
        **kwargs,
    ):
        kwargs.pop("vocabulary_dtype", None)
        kwargs.pop("vocabulary_size", None)  # a Keras file's record of what `vocabulary` gives
        kwargs.pop("has_input_vocabulary", None)
        super().__init__(**kwargs)
        what = type(self).__name__
        if output_mode not in OUTPUT_MODES:
            raise ValueError(
                f"{what}: output_mode must be one of {OUTPUT_MODES}, not {output_mode!r}"
            )
        if num_oov_indices not in (0, 1):
            raise NotImplementedError(
                f"{what}: num_oov_indices={num_oov_indices}: tracer gives every token outside "
                "the vocabulary one index (1) or none (0); Keras hashes them into several"
            )
        if sparse:
            raise NotImplementedError(f"{what}: sparse outputs (tracer has no tt.sparse)")
        if invert and output_mode != "int":
            raise ValueError(f"{what}: invert=True needs output_mode='int', not {output_mode!r}")
        if max_tokens is not None and max_tokens <= 1:
            raise ValueError(f"{what}: max_tokens must be greater than 1, not {max_tokens}")
        if pad_to_max_tokens and max_tokens is None:
            raise ValueError(f"{what}: pad_to_max_tokens=True needs max_tokens")
        self.max_tokens = max_tokens
        self.num_oov_indices = int(num_oov_indices)
        self.mask_token = mask_token
        self.oov_token = oov_token
        self.invert = bool(invert)
        self.output_mode = output_mode
        self.pad_to_max_tokens = bool(pad_to_max_tokens)
        self.sparse = False
        self.input_vocabulary = vocabulary
        self.input_idf_weights = idf_weights
        self.dtype = self._key_dtype  # what it takes (Keras's `dtype` of the layer too)
        self._tokens = []  # the learnt or given vocabulary, without the special tokens
        self._idf = None  # tf_idf's weight of each index
        if vocabulary is not None:
            self.set_vocabulary(vocabulary, idf_weights)

    # --- the vocabulary -----------------------------------------------------------------

    def _oov_start(self):
        return 1 if self.mask_token is not None and self.output_mode == "int" else 0

    def _token_start(self):
        return self._oov_start() + self.num_oov_indices

    def vocabulary_size(self):
        """The number of indices: the vocabulary's tokens and the special ones."""
        return len(self._tokens) + self._token_start()

    def get_vocabulary(self, include_special_tokens=True):
        """The token at each index (with `include_special_tokens=False`, the vocabulary's
        own tokens only, from index `num_oov_indices` and the mask's on). As Keras 3 lists
        them, the vocabulary's own tokens are numpy scalars (`np.str_`, `np.int64`) and the
        special tokens Python's."""
        tokens = [self._shown(t) for t in self._tokens]
        if not include_special_tokens:
            return tokens
        special = [self.oov_token] * self.num_oov_indices
        if self._oov_start():
            special = [self.mask_token, *special]
        return special + tokens

    def set_vocabulary(self, vocabulary, idf_weights=None):
        """Use `vocabulary` (a list, an array or a tensor of tokens, which may start with
        the special tokens in their places) instead of one `adapt` learns."""
        what = type(self).__name__
        tokens = [self._key(t) for t in _values(vocabulary).reshape(-1).tolist()]
        special = [self._key(t) for t in self.get_vocabulary()[: self._token_start()]]
        if tokens[: len(special)] == special:
            tokens = tokens[len(special) :]
        for token in (self.mask_token, self.oov_token):
            if token is not None and self._key(token) in tokens:
                raise ValueError(
                    f"{what}: the vocabulary holds the special token {token!r} at another "
                    "place than its own"
                )
        repeated = [t for t, n in collections.Counter(tokens).items() if n > 1]
        if repeated:
            raise ValueError(f"{what}: the vocabulary repeats {_plain(repeated[0])!r}")
        if self.max_tokens is not None and len(tokens) + self._token_start() > self.max_tokens:
            raise ValueError(
                f"{what}: the vocabulary's {len(tokens) + self._token_start()} indices (special "
                f"tokens included) are more than max_tokens={self.max_tokens}"
            )
        if self.output_mode == "tf_idf":
            if idf_weights is None:
                raise ValueError(
                    f"{what}: output_mode='tf_idf' needs idf_weights beside a vocabulary"
                )
            weights = np.asarray(idf_weights, np.float64).reshape(-1)
            if len(weights) == len(tokens):
                weights = np.concatenate([[weights.mean()] * self._token_start(), weights])
            self._idf = self._padded_idf(weights)
        elif idf_weights is not None:
            raise ValueError(f"{what}: idf_weights are for output_mode='tf_idf' only")
        self._tokens = tokens

    def adapt(self, data, batch_size=None, steps=None):
        """Learn the vocabulary from `data`: an array, a list or a tensor of tokens, a
        `tt.data.Dataset` or an iterable of batches (at most `steps` of them)."""
        if self.input_vocabulary is not None:
            raise ValueError(
                f"{type(self).__name__}.adapt: the layer was given its vocabulary; adapt learns "
                "one only for a layer given none"
            )
        self.learn(row for batch in batches(data, steps) for row in self._documents(batch))

    def learn(self, documents):
        """The vocabulary (and tf_idf's weights) from `documents`, lists of tokens as the
        layer keeps them (TextVectorization's `adapt` hands its token rows here)."""
        counts, documents_with, rows = collections.Counter(), collections.Counter(), 0
        for row in documents:
            counts.update(row)
            documents_with.update(set(row))
            rows += 1
        for token in (self.mask_token, self.oov_token):
            if token is not None:
                counts.pop(self._key(token), None)
        ordered = sorted(counts, key=lambda t: (counts[t], t), reverse=True)
        if self.max_tokens is not None:
            ordered = ordered[: self.max_tokens - self._token_start()]
        self._tokens = ordered
        if self.output_mode == "tf_idf":
            weights = [math.log(1.0 + rows / (1.0 + documents_with[t])) for t in ordered]
            mean = float(np.mean(np.asarray(weights, np.float32))) if weights else 0.0
            self._idf = self._padded_idf(np.asarray([mean] * self._token_start() + weights))

    def _documents(self, batch):
        """The token lists of a batch, one per document (a row of its last axis; a vector
        is one document), as `adapt` counts them."""
        values = _values(batch)
        if values.ndim <= 1:
            return [[self._key(t) for t in values.reshape(-1).tolist()]]
        return [
            [self._key(t) for t in row] for row in values.reshape(-1, values.shape[-1]).tolist()
        ]

    def _padded_idf(self, weights):
        if self.pad_to_max_tokens:
            weights = np.concatenate([weights, np.zeros(self.max_tokens - len(weights))])
        return weights.astype(np.float32)

    def _key(self, token):
        """A token as the layer keeps it (bytes for strings)."""
        return token.encode() if isinstance(token, str) else token

    def _shown(self, token):
        """A token as get_vocabulary lists it: np.str_ for strings, np.int64 for integers."""
        return np.str_(token.decode()) if isinstance(token, bytes) else np.int64(token)

    # --- the call -----------------------------------------------------------------------

    def build(self, input_shape):
        self.built = True

    def _depth(self):
        return self.max_tokens if self.pad_to_max_tokens else self.vocabulary_size()

    def call(self, inputs):
        if isinstance(inputs, RaggedTensor) and self.output_mode == "int":
            return inputs.with_flat_values(self.call(inputs.flat_values))  # each token's
        inputs = as_tensor(inputs)
        if self.invert:
            return self._tokens_at(inputs)
        if inputs.dtype != self._key_dtype and not (
            self._key_dtype.is_integer and inputs.dtype.is_integer
        ):
            raise TypeError(
                f"{type(self).__name__}: inputs must be {self._key_dtype.name}, not "
                f"{inputs.dtype.name}"
            )
        indices = self._indices(inputs)
        if self.output_mode == "int":
            return indices
        return self._encoded(indices)

    def _indices(self, inputs):
        """Each token's index (int64)."""
        return token_ops.lookup(inputs, self._table())

    def _table(self):
        mask = self._key(self.mask_token) if self._oov_start() else None
        default = self._oov_start() if self.num_oov_indices else -1
        return token_ops.TokenTable(self._tokens, self._token_start(), default, mask)

    def _tokens_at(self, indices):
        """invert: the token at each index; the OOV token for an index outside them."""
        every = [self._key(t) for t in self.get_vocabulary()]
        table = convert_to_tensor(
            np.array(every, dtype=object if self._key_dtype.is_string else np.int64)
        )
        indices = array_ops.cast(indices, dtypes.int64)
        inside = math_ops.logical_and(indices >= 0, indices < len(every))
        at = index_ops.gather(table, math_ops.clip_by_value(indices, 0, max(len(every) - 1, 0)))
        oov = convert_to_tensor(
            np.array(self._key(self.oov_token), dtype=table.dtype.as_numpy_dtype)
        )
        return math_ops.where(inside, at, oov)

    def _encoded(self, indices):
        """one_hot, multi_hot, count or tf_idf of the indices (the last axis a sample's)."""
        depth = self._depth()
        if self.output_mode == "one_hot":
            if indices.ndim > 1 and indices.shape[-1] == 1:
                indices = array_ops.squeeze(indices, -1)
            return index_ops.one_hot(indices, depth, dtype=dtypes.int64)
        if indices.ndim == 0:
            indices = array_ops.expand_dims(indices, -1)
        counts = reduce_sum(index_ops.one_hot(indices, depth, dtype=dtypes.int64), axis=-2)
        return self._from_counts(counts)

    def _from_counts(self, counts):
        if self.output_mode == "multi_hot":
            return math_ops.minimum(counts, 1)
        if self.output_mode == "tf_idf":
            return array_ops.cast(counts, dtypes.float32) * convert_to_tensor(self._idf)
        return counts

    def get_config(self):
        """Keras's config, with the vocabulary learnt by `adapt` as if it had been given
        (Keras keeps that one in the file's assets), and Keras's dtype policy, float32."""
        learnt = self.input_vocabulary is None and self._tokens
        vocabulary = [_plain(t) for t in self._tokens] if learnt else _listed(self.input_vocabulary)
        weights = self.input_idf_weights
        if learnt and self._idf is not None:
            weights = self._idf[self._token_start() : self.vocabulary_size()].tolist()
        return {
            **self._base_config(),
            "dtype": "float32",
            "invert": self.invert,
            "max_tokens": self.max_tokens,
            "num_oov_indices": self.num_oov_indices,
            "oov_token": self.oov_token,
            "mask_token": self.mask_token,
            "output_mode": self.output_mode,
            "sparse": self.sparse,
            "pad_to_max_tokens": self.pad_to_max_tokens,
            "vocabulary": vocabulary,
            "idf_weights": _listed(weights),
        }


class StringLookup(IndexLookup):
    """Strings to indices in a vocabulary of strings (Keras's StringLookup; the OOV token
    "[UNK]").

    >>> layer = tt.keras.layers.StringLookup(vocabulary=["a", "b"])
    >>> layer(tt.constant(["b", "z", "a"])).numpy()
    array([2, 0, 1])
    """

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token="[UNK]",
                 vocabulary=None, idf_weights=None, invert=False, output_mode="int",
                 pad_to_max_tokens=False, sparse=False, encoding="utf-8", **kwargs):  # fmt: skip
        self.encoding = encoding
        super().__init__(
            max_tokens, num_oov_indices, mask_token, oov_token, vocabulary, idf_weights,
            invert, output_mode, pad_to_max_tokens, sparse, **kwargs,
        )  # fmt: skip

    def get_config(self):
        return {**super().get_config(), "encoding": self.encoding, "vocabulary_dtype": "string"}


class IntegerLookup(IndexLookup):
    """Integers to indices in a vocabulary of integers (Keras's IntegerLookup; the OOV
    token -1).

    >>> layer = tt.keras.layers.IntegerLookup(vocabulary=[12, 7])
    >>> layer(tt.constant([7, 3, 12])).numpy()
    array([2, 0, 1])
    """

    _key_dtype = dtypes.int64

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token=-1,
                 vocabulary=None, vocabulary_dtype="int64", idf_weights=None, invert=False,
                 output_mode="int", sparse=False, pad_to_max_tokens=False, **kwargs):  # fmt: skip
        super().__init__(
            max_tokens, num_oov_indices, mask_token, oov_token, vocabulary, idf_weights,
            invert, output_mode, pad_to_max_tokens, sparse, **kwargs,
        )  # fmt: skip

    def _key(self, token):
        return None if token is None else int(token)

    def _indices(self, inputs):
        """Comparisons with the vocabulary (C compiles them): the first equal token's
        index, the mask's 0, or the OOV index."""
        inputs = array_ops.cast(inputs, dtypes.int64)
        table = self._table()
        keys = convert_to_tensor(np.asarray(table.tokens, np.int64).reshape(-1))
        equal = math_ops.equal(array_ops.expand_dims(inputs, -1), keys)
        found = reduction_ops.reduce_max(array_ops.cast(equal, dtypes.int64), axis=-1)
        position = array_ops.cast(index_ops.argmax(equal, axis=-1), dtypes.int64)
        indices = math_ops.where(found > 0, position + table.first, table.default)
        if table.mask is not None:
            indices = math_ops.where(math_ops.equal(inputs, table.mask), 0, indices)
        return indices

    def get_config(self):
        return {**super().get_config(), "vocabulary_dtype": "int64"}


def _values(data):
    """A numpy array of `data`'s tokens (bytes for strings)."""
    if hasattr(data, "numpy"):
        data = data.numpy()
    values = np.asarray(data)
    if values.dtype.kind == "U":
        values = np.vectorize(str.encode, otypes=[object])(values)
    return values


def batches(data, steps=None):
    """The batches `adapt` reads, as Keras reads them: `data` itself where it is an array,
    a list or a tensor (a vector as a column, one token a document), else each element it
    yields (a Dataset's, a generator's; an (x, y) pair's x)."""
    if isinstance(data, (np.ndarray, list, tuple)) or hasattr(data, "numpy"):
        values = _values(data)
        yield values[:, None] if values.ndim == 1 else values
        return
    for k, element in enumerate(data):
        if steps is not None and k >= steps:
            return
        yield element[0] if isinstance(element, tuple) else element


def _listed(value):
    if value is None:
        return None
    values = _values(value).reshape(-1).tolist()
    return [v.decode() if isinstance(v, bytes) else v for v in values]


def _plain(token):
    """A stored token as Python's str or int (a config's JSON, a message)."""
    return token.decode() if isinstance(token, bytes) else int(token)
