"""Reductions over an outer ragged dimension of a RaggedTensor of ragged rank 2 and more, as
TensorFlow's: over the rows (axis 0), element j of the result is the reduction of element j
of every row; within the rows (axis 1), row i's elements are reduced. Those elements are
rows themselves, of different lengths, so they combine elementwise where they are present:
the result's row has the length of the longest it combines.

It is a segment reduction of ragged data (`ragged_segment`): each row of the data goes to
a segment, each of its values to the same position in its segment's row, down to the flat
values, which one segment reduction of tracer's combines (so gradients reach them). The
positions come from the row splits, which must be known: when a traced function is
traced, or it runs as Python (`length_value`).
"""

import numpy as np

from tracer.ragged_tensor import RaggedTensor
from tracer.tensor import convert_to_tensor


def reduce_outer(segment, rt, axis):
    """`rt` (ragged rank 2 or more) reduced over `axis` 0 or 1 by `segment` (data, ids,
    count) -> data reduced by segment: a RaggedTensor of one ragged rank less."""
    splits = rt._splits_when_run("reduce")[0]
    lengths = np.diff(splits)
    if axis == 1:  # row i's elements to segment i
        ids, count = np.repeat(np.arange(len(lengths)), lengths), len(lengths)
    else:  # element j of every row to segment j
        ids = np.arange(splits[-1]) - np.repeat(splits[:-1], lengths)
        count = int(lengths.max()) if len(lengths) else 0
    return ragged_segment(segment, rt.values, ids.astype(np.int64), count)


def ragged_segment(segment, data, ids, count):
    """`data`'s rows reduced by segment `ids` (numpy) into `count` rows: a dense data's by
    `segment`; a ragged data's rows combined elementwise, each result row as long as the
    longest of its segment's (0 for a segment of none)."""
    if not isinstance(data, RaggedTensor):
        return segment(data, convert_to_tensor(ids), count)
    splits = data._splits_when_run("reduce")[0]
    lengths = np.diff(splits)
    longest = np.zeros(count, np.int64)
    np.maximum.at(longest, ids, lengths)
    out_splits = np.concatenate([[0], np.cumsum(longest)]).astype(np.int64)
    owner = np.repeat(np.arange(len(lengths)), lengths)
    column = np.arange(splits[-1]) - splits[:-1][owner]
    inner_ids = (out_splits[:-1][ids[owner]] + column).astype(np.int64)
    values = ragged_segment(segment, data.values, inner_ids, int(out_splits[-1]))
    return RaggedTensor.from_row_splits(values, out_splits, validate=False)
