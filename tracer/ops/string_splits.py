"""TensorFlow's functions that cut strings into parts: `tf.strings.split`, `bytes_split`
and `tf.io.decode_raw` (the unicode ones, tracer/ops/unicode_strings.py, build on
`each_string`).

How many parts a string has is known only from its value, so the strings must be known:
always eagerly, and in a traced function where they are constants (as `boolean_mask`'s
mask, tracer/ops/mask_composites.py); the parts are then a constant. As TensorFlow's, the
parts of one string are a tensor, those of a vector of strings a RaggedTensor of one row a
string, and those of strings of rank k a RaggedTensor of ragged rank k, the dimensions of
the strings uniform (`shape` [2, 2, None] for a 2 x 2 matrix of strings), and those of a
RaggedTensor of strings one ragged dimension more; `decode_raw`'s rows all have one length
when the strings do.
"""

import numpy as np

from tracer import dtypes
from tracer.ops.convert import as_tensor, length_value


def each_string(input, what, cut):
    """`cut` (bytes -> a tensor of parts) of a string, or of each of a tensor of strings as
    the rows of a RaggedTensor of a ragged dimension more (its own dimensions uniform), or
    of each flat value of a RaggedTensor of strings."""
    from tracer.ragged_tensor import RaggedTensor

    if isinstance(input, RaggedTensor):
        return input.with_flat_values(each_string(input.flat_values, what, cut))
    value = np.asarray(length_value(as_tensor(input), f"{what}'s input"))
    if value.dtype != object or not all(isinstance(v, bytes) for v in value.reshape(-1)):
        raise TypeError(f"{what}: input must be a tt.string tensor")
    if value.ndim == 0:
        return cut(value[()])
    rows = [cut(v).numpy() for v in value.reshape(-1)]
    flat = np.concatenate(rows) if rows else cut(b"").numpy()
    lengths = np.array([len(r) for r in rows], np.int64)
    result = RaggedTensor.from_row_lengths(as_tensor(flat), lengths, validate=False)
    for depth in range(value.ndim - 1, 0, -1):  # the strings' own dimensions, uniform
        count = int(np.prod(value.shape[:depth]))
        result = RaggedTensor.from_uniform_row_length(result, value.shape[depth], nrows=count)
    return result


def string_vector(parts):
    return as_tensor(np.array(parts, dtype=object).reshape(len(parts)))


def split(input, sep=None, maxsplit=-1, name=None):
    """The parts of a string between the separator `sep` (each one, so two in a row give an
    empty part), or, without `sep`, between runs of ASCII whitespace; at most `maxsplit`
    cuts where it is not -1.

    >>> tt.strings.split("a,b,,c", sep=",").numpy().tolist()
    [b'a', b'b', b'', b'c']
    """
    if sep is not None:
        sep = sep.encode() if isinstance(sep, str) else sep
        if not sep:
            raise ValueError("tt.strings.split: sep must not be empty (None splits on whitespace)")
    return each_string(
        input, "tt.strings.split", lambda value: string_vector(value.split(sep, int(maxsplit)))
    )


def bytes_split(input, name=None):
    """A string's bytes, each a string of one byte."""
    return each_string(
        input,
        "tt.strings.bytes_split",
        lambda value: string_vector([value[k : k + 1] for k in range(len(value))]),
    )


def decode_raw(input_bytes, out_type, little_endian=True, fixed_length=None, name=None):
    """The bytes of each string read as numbers of `out_type`: a new last axis of
    len(string) / out_type's size numbers; every string must have one length, a multiple
    of that size.

    >>> tt.io.decode_raw(tt.constant("Duck"), tt.uint8).numpy()
    array([ 68, 117,  99, 107], dtype=uint8)
    """
    values = np.asarray(length_value(as_tensor(input_bytes), "tt.io.decode_raw's input_bytes"))
    out_type = dtypes.as_dtype(out_type)
    if out_type.is_string or out_type.is_bool:
        raise TypeError(f"tt.io.decode_raw: out_type must be a number type, not {out_type.name}")
    numbers = np.dtype(out_type.as_numpy_dtype).newbyteorder("<" if little_endian else ">")
    flat = values.reshape(-1).tolist()
    if fixed_length is not None:
        flat = [v[: int(fixed_length)].ljust(int(fixed_length), b"\0") for v in flat]
    lengths = {len(v) for v in flat}
    if len(lengths) > 1 or any(n % numbers.itemsize for n in lengths):
        raise ValueError(
            f"tt.io.decode_raw: every string must have one length, a multiple of "
            f"{numbers.itemsize} bytes ({out_type.name}); they have {sorted(lengths)}"
        )
    width = lengths.pop() // numbers.itemsize if lengths else 0
    rows = [np.frombuffer(v, dtype=numbers) for v in flat]
    out = np.array(rows, dtype=numbers).reshape(values.shape + (width,))
    return as_tensor(out.astype(out_type.as_numpy_dtype))
