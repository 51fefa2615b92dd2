"""Keras's TextVectorization: strings standardized, split into tokens and looked up in a
vocabulary (a StringLookup with "" as its mask), as indices or counts per string.

- standardize: "lower_and_strip_punctuation" (the default), "lower", "strip_punctuation",
  None, or a function of a string tensor; Keras's own ops (tf.strings.lower, which lowers
  ASCII letters only, and its punctuation class) on tracer's tt.strings.
- split: "whitespace" (runs of ASCII whitespace, as tf.strings.split), "character" (UTF-8
  characters) or None (each string one token).
- output_mode "int": a row of indices per string, `output_sequence_length` long (cut or
  padded with 0); without it, as long as the batch's longest, which only a call that
  knows the strings can count (eagerly; a compiled call needs output_sequence_length).
  "multi_hot", "count" and "tf_idf": each string's counts of the indices, as StringLookup
  encodes a sample.

- ngrams: each string's n-grams of widths 1 to n (or the widths given), their tokens
  joined by a space, one width after another, as tf.strings.ngrams makes them for Keras.

With `ragged=True` ("int" mode), each string's tokens are a row of a RaggedTensor (cut to
`output_sequence_length` where it is given), which only a call that knows the strings can
count (eagerly). A `sparse` output is not supported.
and say so.
"""

import numpy as np

from tracer import dtypes
from tracer.keras.layers.layer import Layer
from tracer.keras.layers.lookup import StringLookup, batches
from tracer.ops import array_ops, layout_ops, string_ops, token_ops
from tracer.ops.convert import known_value
from tracer.ragged_tensor import RaggedTensor
from tracer.tensor import convert_to_tensor

_NO_LENGTH = (
    ": without output_sequence_length a row is as long as the batch's longest string; give "
    "output_sequence_length to call it in a tt.function (or a model's fit)"
)
_NO_RAGGED_LENGTHS = (
    ": with ragged=True each row is as long as its string's tokens; call it eagerly (a "
    "compiled call has shapes known when it is traced)"
)
STANDARDIZE = ("lower_and_strip_punctuation", "lower", "strip_punctuation")
# Keras's punctuation: what "strip_punctuation" removes
PUNCTUATION = r'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']'


class TextVectorization(Layer):
    """Strings to rows of token indices (or counts), with a vocabulary given or learnt by
    `adapt`.

    >>> layer = tt.keras.layers.TextVectorization(output_sequence_length=4)
    >>> layer.adapt(["the cat sat", "the dog"])
    >>> layer(tt.constant(["The dog sat!"])).numpy()
    array([[2, 4, 3, 0]])
    """

    def __init__(self, max_tokens=None, standardize="lower_and_strip_punctuation",
                 split="whitespace", ngrams=None, output_mode="int", output_sequence_length=None,
                 pad_to_max_tokens=False, vocabulary=None, idf_weights=None, sparse=False,
                 ragged=False, encoding="utf-8", **kwargs):  # fmt: skip
        kwargs.pop("vocabulary_size", None)
        kwargs.pop("has_input_vocabulary", None)
        super().__init__(**kwargs)
        if standardize is not None and not callable(standardize) and standardize not in STANDARDIZE:
            raise ValueError(
                f"TextVectorization: standardize must be one of {STANDARDIZE}, None or a "
                f"function, not {standardize!r}"
            )
        if split is not None and split not in token_ops.SPLITS:
            raise NotImplementedError(
                f"TextVectorization: split must be one of {token_ops.SPLITS} or None, not "
                f"{split!r} (a function of the strings would return ragged tokens, which "
                "tracer does not have)"
            )
        if ngrams is not None and split is None:
            raise ValueError("TextVectorization: ngrams needs split (the tokens to join)")
        if sparse:
            raise NotImplementedError("TextVectorization: sparse=True is not supported")
        if ragged and output_mode != "int":
            raise ValueError(
                f"TextVectorization: ragged=True is for output_mode='int' only, not {output_mode!r}"
            )
        self.ragged = bool(ragged)
        if output_sequence_length is not None and output_mode != "int":
            raise ValueError(
                "TextVectorization: output_sequence_length is for output_mode='int' only"
            )
        self.standardize = standardize
        self.split = split
        self.ngrams = ngrams  # as given: n for the widths 1 to n, or the widths
        self._widths = _widths(ngrams)
        self.output_sequence_length = output_sequence_length
        self.output_mode = output_mode
        self.encoding = encoding
        self._lookup_layer = StringLookup(
            max_tokens=max_tokens,
            mask_token="",
            vocabulary=vocabulary,
            idf_weights=idf_weights,
            output_mode=output_mode,
            pad_to_max_tokens=pad_to_max_tokens,
            name=f"{self.name}_lookup",
        )
        self.dtype = dtypes.string  # what it takes (Keras's `dtype` of the layer too)

    def adapt(self, data, batch_size=None, steps=None):
        """Learn the vocabulary from the tokens of `data` (strings: an array, a list, a
        tensor, a `tt.data.Dataset` or an iterable of batches)."""
        lookup = self._lookup_layer
        if lookup.input_vocabulary is not None:
            raise ValueError(
                "TextVectorization.adapt: the layer was given its vocabulary; adapt learns one "
                "only for a layer given none"
            )
        lookup.learn(row for batch in batches(data, steps) for row in self._token_rows(batch))

    def _token_rows(self, batch):
        """The tokens of each string of a batch (bytes), after standardizing."""
        strings = self._standardized(self._rank_one(convert_to_tensor(batch, dtypes.string)))
        values = np.asarray(strings.numpy()).reshape(-1).tolist()
        if self.split is None:
            return [[v] for v in values]
        return [token_ops.tokens_of(v, self.split, self._widths) for v in values]

    def _rank_one(self, strings):
        """Strings of shape [batch] (a column [batch, 1] squeezed) where they are split."""
        if self.split is None or strings.ndim <= 1:
            return strings
        if strings.ndim == 2 and strings.shape[-1] == 1:
            return array_ops.squeeze(strings, -1)
        raise ValueError(
            "TextVectorization: strings to split must have rank 1 or a last dimension of 1, "
            f"not shape {tuple(strings.shape)}"
        )

    def _standardized(self, strings):
        if self.standardize in ("lower", "lower_and_strip_punctuation"):
            strings = string_ops.lower(strings)
        if self.standardize in ("strip_punctuation", "lower_and_strip_punctuation"):
            strings = string_ops.regex_replace(strings, PUNCTUATION, "")
        if callable(self.standardize):
            strings = self.standardize(strings)
        return strings

    def build(self, input_shape):
        self.built = True

    def call(self, inputs):
        strings = self._standardized(self._rank_one(convert_to_tensor(inputs, dtypes.string)))
        lookup = self._lookup_layer
        if self.output_mode != "int":
            if self.split is None:
                return lookup(strings)
            counts = token_ops.token_counts(
                strings, self.split, lookup._table(), lookup._depth(), self._widths
            )
            return lookup._from_counts(counts)
        if self.split is not None and self.ragged:
            return self._ragged_indices(strings)
        if self.split is not None:
            length = self.output_sequence_length
            if length is None:
                known = known_value(strings, "TextVectorization: the strings", _NO_LENGTH)
                length = token_ops.longest(known, self.split, self._widths)
            strings = token_ops.split_tokens(strings, self.split, length, self._widths)
            return lookup(strings)
        indices = lookup(strings)
        if self.output_sequence_length is None:
            return indices
        if self.ragged:  # (cut, not padded)
            return indices[..., : self.output_sequence_length]
        return _fitted(indices, self.output_sequence_length)

    def _ragged_indices(self, strings):
        """Each string's token indices as a row of a RaggedTensor."""
        known = known_value(strings, "TextVectorization: the strings", _NO_RAGGED_LENGTHS)
        counts = [
            len(token_ops.tokens_of(v, self.split, self._widths))
            for v in np.asarray(known).reshape(-1).tolist()
        ]
        if self.output_sequence_length is not None:
            counts = [min(n, self.output_sequence_length) for n in counts]
        width = max(counts, default=0)
        tokens = token_ops.split_tokens(strings, self.split, width, self._widths)
        return RaggedTensor.from_tensor(self._lookup_layer(tokens), lengths=counts)

    def get_vocabulary(self, include_special_tokens=True):
        return self._lookup_layer.get_vocabulary(include_special_tokens)

    def vocabulary_size(self):
        return self._lookup_layer.vocabulary_size()

    def set_vocabulary(self, vocabulary, idf_weights=None):
        self._lookup_layer.set_vocabulary(vocabulary, idf_weights)

    def get_config(self):
        lookup = self._lookup_layer.get_config()
        return {
            **self._base_config(),
            "dtype": "float32",  # Keras's dtype policy (its vocabulary is learnt or given)
            "max_tokens": lookup["max_tokens"],
            "standardize": self.standardize if not callable(self.standardize) else None,
            "split": self.split,
            "ngrams": self.ngrams,
            "output_mode": self.output_mode,
            "output_sequence_length": self.output_sequence_length,
            "pad_to_max_tokens": lookup["pad_to_max_tokens"],
            "sparse": False,
            "ragged": self.ragged,
            "vocabulary": lookup["vocabulary"],
            "idf_weights": lookup["idf_weights"],
            "encoding": self.encoding,
        }


def _widths(ngrams):
    """The n-gram widths of Keras's `ngrams` argument: n for 1 to n, or the given widths."""
    if ngrams is None:
        return None
    if isinstance(ngrams, int):
        if ngrams < 1:
            raise ValueError(f"TextVectorization: ngrams must be at least 1, not {ngrams}")
        return tuple(range(1, ngrams + 1))
    widths = tuple(int(n) for n in ngrams)
    if not widths or min(widths) < 1:
        raise ValueError(f"TextVectorization: ngrams must be positive widths, not {ngrams!r}")
    return widths


def _fitted(indices, length):
    """The last axis cut to `length` or padded with 0 to it."""
    have = indices.shape[-1]
    if have >= length:
        return indices[..., :length]
    padding = [[0, 0]] * (indices.ndim - 1) + [[0, length - have]]
    return layout_ops.pad(indices, padding)
