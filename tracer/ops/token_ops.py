"""Text to token indices, as Keras's TextVectorization and StringLookup compute them: a
string split into tokens, each token's index in a vocabulary, and each string's counts of
the indices.

The ops read and make tt.string values, so they run in Python, as the tt.strings ops do
(eagerly, in the interpreter, and in a compiled module as steps handed back to Python,
codegen/string_handles.py); none has a gradient. Their vocabulary is a `TokenTable`
attribute: hashable by its tokens, printed in the IR by its size and first tokens.
"""

import numpy as np

from tracer import dtypes
from tracer.ops.convert import as_tensor
from tracer.ops.core import apply
from tracer.ops.string_ops import expect_strings, string_op

SPLITS = ("whitespace", "character")


class TokenTable:
    """A vocabulary as an op attribute: `tokens` (bytes, or ints for integer keys) at the
    indices from `first`; `default` for a token it lacks; `mask` (a token, or None) at 0."""

    __slots__ = ("tokens", "first", "default", "mask", "_index", "_key")

    def __init__(self, tokens, first, default, mask=None):
        self.tokens = tuple(tokens)
        self.first, self.default, self.mask = int(first), int(default), mask
        self._index = {token: first + k for k, token in enumerate(self.tokens)}
        if mask is not None:
            self._index[mask] = 0
        self._key = (self.tokens, self.first, self.default, self.mask)

    def index(self, token):
        return self._index.get(token, self.default)

    def __eq__(self, other):
        return isinstance(other, TokenTable) and self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        shown = ", ".join(repr(t) for t in self.tokens[:3])
        more = ", ..." if len(self.tokens) > 3 else ""
        return f"<{len(self.tokens)} tokens from {self.first}: {shown}{more}>"


def tokens_of(value, split, ngrams=None):
    """The tokens of one string (bytes): runs of ASCII whitespace apart, as tf.strings.split
    splits them, or its UTF-8 characters, as tf.strings.unicode_split gives them (bytes that
    are no character are U+FFFD, the replacement character). With `ngrams` (widths), the
    n-grams of each width in turn, their tokens joined by a space, as tf.strings.ngrams
    makes them for Keras."""
    if split == "whitespace":
        tokens = value.split()
    else:
        tokens = [c.encode("utf-8") for c in value.decode("utf-8", errors="replace")]
    if ngrams is None:
        return tokens
    return [b" ".join(tokens[i : i + n]) for n in ngrams for i in range(len(tokens) - n + 1)]


# --- each element's index ---------------------------------------------------------------


def _lookup_kernel(x, table):
    values = np.asarray(x)
    out = np.fromiter((table.index(v) for v in values.reshape(-1).tolist()), np.int64)
    return out.reshape(values.shape)


def _infer_lookup(attrs, x):
    expect_strings(x)
    return x.shape, dtypes.int64


STRING_LOOKUP = string_op("string_lookup", _infer_lookup, _lookup_kernel)


def lookup(strings, table):
    """Each string's index in `table` (a TokenTable), int64."""
    return apply(STRING_LOOKUP, (as_tensor(strings),), {"table": table})


# --- split into a row of tokens ---------------------------------------------------------


def _split_kernel(x, split, length, ngrams=None):
    values = np.asarray(x)
    rows = [tokens_of(v, split, ngrams)[:length] for v in values.reshape(-1).tolist()]
    out = np.full((len(rows), length), b"", dtype=object)
    for r, row in enumerate(rows):
        out[r, : len(row)] = row
    return out.reshape(values.shape + (length,))


def _infer_split(attrs, x):
    expect_strings(x)
    return (*x.shape, attrs["length"]), dtypes.string


SPLIT_TOKENS = string_op("split_tokens", _infer_split, _split_kernel)


def split_tokens(strings, split, length, ngrams=None):
    """Each string's first `length` tokens (`split`: "whitespace" or "character"; with
    `ngrams`, its n-grams) along a new last axis, padded with empty strings."""
    attrs = {"split": split, "length": int(length)}
    if ngrams is not None:
        attrs["ngrams"] = tuple(ngrams)
    return apply(SPLIT_TOKENS, (as_tensor(strings),), attrs)


def longest(strings, split, ngrams=None):
    """The most tokens any string of `strings` (a numpy array of bytes) has."""
    flat = np.asarray(strings).reshape(-1).tolist()
    return max((len(tokens_of(v, split, ngrams)) for v in flat), default=0)


# --- each string's counts of the indices ------------------------------------------------


def _counts_kernel(x, split, table, depth, ngrams=None):
    values = np.asarray(x)
    flat = values.reshape(-1).tolist()
    out = np.zeros((len(flat), depth), np.int64)
    for r, value in enumerate(flat):
        indices = [table.index(t) for t in tokens_of(value, split, ngrams)]
        out[r] = np.bincount(np.asarray(indices, np.int64), minlength=depth)[:depth]
    return out.reshape(values.shape + (depth,))


def _infer_counts(attrs, x):
    expect_strings(x)
    return (*x.shape, attrs["depth"]), dtypes.int64


TOKEN_COUNTS = string_op("token_counts", _infer_counts, _counts_kernel)


def token_counts(strings, split, table, depth, ngrams=None):
    """For each string, how many of its tokens (`split`: "whitespace" or "character"; with
    `ngrams`, its n-grams) have each index of `table`, along a new last axis of `depth`."""
    attrs = {"split": split, "table": table, "depth": int(depth)}
    if ngrams is not None:
        attrs["ngrams"] = tuple(ngrams)
    return apply(TOKEN_COUNTS, (as_tensor(strings),), attrs)
