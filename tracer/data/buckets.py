"""`bucket_by_sequence_length`: elements batched with others of similar length, each batch
padded to its longest (or to its bucket's boundary), as TensorFlow's.

An element's length, `element_length_func(element)`, an int32 scalar, puts it in the first
bucket `i` with `lower[i] <= length < upper[i]`, where the lower bounds are (-inf,
*boundaries) and the upper (*boundaries, inf) in the order given. A bucket that holds its
batch size (`bucket_batch_sizes[i]`) becomes a batch at once; at the end, the buckets left
become batches in the order of their indices (or are dropped with `drop_remainder`): the
order of TensorFlow's group_by_window, on which it builds. A batch is padded as
`padded_batch` pads (to `padded_shapes`, with `padding_values`); with
`pad_to_bucket_boundary`, each unknown dimension to its bucket's boundary less one (an
element in the last bucket, which has no boundary above, is an InvalidArgumentError); with
`no_padding`, stacked as `batch` stacks.
"""

import numpy as np

from tracer import nest
from tracer.data.specs import UNKNOWN
from tracer.data.transforms import Batch, PaddedBatch, _batched_spec, _flat_shapes, _TracedOrEager
from tracer.errors import InvalidArgumentError
from tracer.signature import TensorSpec


class BucketBySequenceLength:
    def __init__(self, upstream, element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes, padding_values, pad_to_bucket_boundary, no_padding, drop_remainder):  # fmt: skip
        boundaries = [int(b) for b in bucket_boundaries]
        sizes = [int(s) for s in bucket_batch_sizes]
        if len(sizes) != len(boundaries) + 1:
            raise ValueError(
                "`len(bucket_batch_sizes)` must equal `len(bucket_boundaries) + 1` but "
                f"`len(bucket_batch_sizes)={len(sizes)}` and "
                f"`len(bucket_boundaries)={len(boundaries)}`."
            )
        if any(s < 1 for s in sizes):
            raise ValueError(f"bucket_batch_sizes must be at least 1, not {sizes}")
        self._upstream, self._boundaries, self._sizes = upstream, boundaries, sizes
        self._shapes, self._values = padded_shapes, padding_values
        self._to_boundary, self._no_padding = bool(pad_to_bucket_boundary), bool(no_padding)
        self._drop = bool(drop_remainder)
        self._length = _TracedOrEager(element_length_func)
        self._length.prepare(upstream)
        if self._length._spec is not None:  # (known now: checked now, as TensorFlow does)
            _check_length(self._length._spec)

    def arrays(self):
        groups = {}
        for element in self._upstream.arrays():
            bucket = self._bucket_of(self._length.arrays_of(element))
            group = groups.setdefault(bucket, [])
            group.append(element)
            if len(group) == self._sizes[bucket]:
                del groups[bucket]
                yield from self._batched(bucket, group)
        for bucket in sorted(groups):
            yield from self._batched(bucket, groups[bucket])

    def _bucket_of(self, length):
        _check_length(length)
        length = int(length)
        lower = [None, *self._boundaries]
        upper = [*self._boundaries, None]
        for bucket, (low, high) in enumerate(zip(lower, upper)):
            if (low is None or low <= length) and (high is None or length < high):
                return bucket
        return len(self._boundaries)  # (none fits: boundaries out of order) the last

    def _batched(self, bucket, group):
        """The batch of a bucket's elements: one, or none where a short one is dropped."""
        stage = _Group(group, self._upstream)
        if self._no_padding:
            return Batch(stage, self._sizes[bucket], self._drop).arrays()
        shapes = self._padded_shapes(bucket)
        return PaddedBatch(stage, self._sizes[bucket], shapes, self._values, self._drop).arrays()

    def _padded_shapes(self, bucket):
        """The padded shapes of a bucket's batch (PaddedBatch's `padded_shapes`)."""
        if not self._to_boundary:
            return self._shapes
        if bucket == len(self._boundaries):
            raise InvalidArgumentError(
                None,
                None,
                "When pad_to_bucket_boundary=True, elements must have length < "
                "max(bucket_boundaries).",
            )
        fill = self._boundaries[bucket] - 1
        spec = self._upstream.spec()
        specs = nest.flatten(spec)
        given = (
            [list(s.shape) for s in specs]
            if self._shapes is None
            else _flat_shapes(spec, self._shapes)
        )
        flat = [tuple(fill if d is None or d == -1 else d for d in shape) for shape in given]
        return nest.pack_sequence_as(spec, flat)

    def cardinality(self):
        return UNKNOWN

    def spec(self):
        spec = self._upstream.spec()
        if self._no_padding:
            return _batched_spec(spec, None)
        padded = PaddedBatch(self._upstream, 1, self._shapes, self._values, False).spec()
        return nest.pack_sequence_as(
            padded, [TensorSpec((None, *s.shape[1:]), s.dtype) for s in nest.flatten(padded)]
        )


def _check_length(length):
    """A TypeError where an element's length (an array, or its spec) is not an int32
    scalar: TensorFlow compares it with int32 bounds."""
    shape, dtype = tuple(length.shape or ()), np.dtype(getattr(length.dtype, "name", length.dtype))
    if dtype != np.int32 or shape != ():
        raise TypeError(
            "bucket_by_sequence_length: element_length_func must return an int32 scalar "
            f"(as tt.shape(x)[0]), not a {dtype.name} tensor of shape {list(shape)}"
        )


class _Group:
    """A bucket's elements, as a stage of the upstream's spec."""

    def __init__(self, elements, upstream):
        self._elements, self._upstream = elements, upstream

    def arrays(self):
        yield from self._elements

    def cardinality(self):
        return len(self._elements)

    def spec(self):
        return self._upstream.spec()
