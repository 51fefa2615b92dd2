"""TensorFlow's `tf.strings.ngrams`: the n-grams of sequences of strings, each n tokens
joined by a separator.

A sequence is a row of a RaggedTensor of strings (the result of `tt.strings.split`) or the
last axis of a dense tensor of strings. Its n-grams of each width come one width after
another; `pad_values` (one string for both ends, or a (left, right) pair) pads each end by
`padding_width` tokens (width - 1 where None, and never more than that), and
`preserve_short_sequences` makes a sequence too short for any n-gram of a width one n-gram
of all its tokens (where there is no padding). As the parts of `tt.strings.split`, how many
n-grams a row has is known only from its tokens, so the tokens must be known: always
eagerly, and in a traced function where they are constants (else it runs as Python).
"""

import numpy as np

from tracer.ops.convert import as_tensor, length_value


def ngrams(data, ngram_width, separator=" ", pad_values=None, padding_width=None, preserve_short_sequences=False, name=None):  # fmt: skip
    """The n-grams of `data`'s sequences (its ragged rows, or its dense last axis): a
    RaggedTensor for ragged data, a tensor of the same rank for dense data.

    >>> tt.strings.ngrams(tt.constant(["a", "b", "c"]), 2).numpy().tolist()
    [b'a b', b'b c']
    """
    from tracer.ragged_tensor import RaggedTensor

    widths = [int(w) for w in np.asarray(ngram_width).reshape(-1)]
    if any(w <= 0 for w in widths):
        raise ValueError(f"All ngram_widths must be greater than 0. Got {ngram_width}")
    join = _joiner(widths, _text(separator), _pads(pad_values), padding_width)
    if isinstance(data, RaggedTensor):
        if isinstance(data.values, RaggedTensor):
            return data.with_values(ngrams(data.values, ngram_width, separator, pad_values, padding_width, preserve_short_sequences))  # fmt: skip
        tokens = list(_known_strings(data.values))
        splits = np.asarray(length_value(data.row_splits, "tt.strings.ngrams's row splits"))
        rows = [
            join(tokens[a:b], preserve_short_sequences) for a, b in zip(splits[:-1], splits[1:])
        ]
        flat = [gram for row in rows for gram in row]
        lengths = np.array([len(row) for row in rows], np.int64)
        return RaggedTensor.from_row_lengths(_strings(flat, (len(flat),)), lengths, validate=False)
    value = _known_strings(data)
    if value.ndim == 0:
        raise ValueError("tt.strings.ngrams: data must have rank 1 or more (a sequence)")
    lines = value.reshape(-1, value.shape[-1])
    rows = [join(list(line), preserve_short_sequences) for line in lines]
    count = len(rows[0]) if rows else len(join([b""] * value.shape[-1], False))
    flat = [gram for row in rows for gram in row]
    return _strings(flat, value.shape[:-1] + (count,))


def _joiner(widths, separator, pads, padding_width):
    """A function of a row's tokens (and preserve_short_sequences) to its n-grams."""
    left, right = pads

    def join(tokens, preserve_short):
        grams = []
        for width in widths:
            pad = 0 if left is None else min(width - 1, width - 1 if padding_width is None else int(padding_width))  # fmt: skip
            padded = [left] * pad + tokens + [right] * pad if pad else tokens
            count = len(padded) - width + 1
            if count <= 0 and preserve_short and pad == 0 and tokens:
                grams.append(separator.join(tokens))
                continue
            grams.extend(separator.join(padded[k : k + width]) for k in range(max(count, 0)))
        return grams

    return join


def _pads(pad_values):
    """(left, right) pad strings, or (None, None) for no padding."""
    if pad_values is None:
        return None, None
    if isinstance(pad_values, (tuple, list)):
        if len(pad_values) != 2:
            raise ValueError("pad_values must be a string, tuple or list of length 2.")
        return _text(pad_values[0]), _text(pad_values[1])
    return _text(pad_values), _text(pad_values)


def _text(value):
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, bytes):
        return value
    raise TypeError(f"tt.strings.ngrams: expected a string, not {value!r}")


def _known_strings(data):
    value = np.asarray(length_value(as_tensor(data), "tt.strings.ngrams's data"))
    if value.dtype != object or not all(isinstance(v, bytes) for v in value.reshape(-1)):
        raise TypeError("tt.strings.ngrams: data must be a tt.string tensor")
    return value


def _strings(parts, shape):
    array = np.empty(len(parts), dtype=object)
    array[:] = parts
    return as_tensor(array.reshape(shape))
