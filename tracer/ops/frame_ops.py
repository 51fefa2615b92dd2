"""`tt.signal.frame` and `overlap_and_add`: a signal cut into overlapping frames, and frames
added back where they overlap.

frame is a gather of a constant index table, so its gradient adds each frame back where it
came from. overlap_and_add is TensorFlow's sum: each frame padded to whole hops of
`frame_step` samples, and the hops summed along the diagonals where frame f's hop q lands
on output hop f + q, by pads and adds (one per hop a frame spans), so that its gradient is
slices. The lengths of the axes framed (and of the frames added) must be known when a
function is traced.
"""

import numpy as np

from tracer.ops import array_ops, index_ops, layout_ops, structure_ops
from tracer.ops.convert import as_tensor, static_int


def _positive(value, what):
    value = static_int(value)
    if value <= 0:
        raise ValueError(f"{what} must be positive, not {value}")
    return value


def frame(signal, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1, name=None):
    """The frames of `signal` along `axis`: frame_length samples every frame_step, a new axis
    of frames before an axis of their samples. With `pad_end`, the end is padded with
    `pad_value` so that every sample starts or lies in a frame (ceil(length / frame_step)
    frames); without, only whole frames are kept."""
    signal = as_tensor(signal)
    frame_length = _positive(frame_length, "tt.signal.frame: frame_length")
    frame_step = _positive(frame_step, "tt.signal.frame: frame_step")
    rank = signal.shape.rank
    if rank == 0:
        raise ValueError("tt.signal.frame: the signal must have rank 1 or more, not be a scalar")
    axis = static_int(axis)
    if not -rank <= axis < rank:
        raise ValueError(f"tt.signal.frame: axis {axis} is out of range for rank {rank}")
    axis %= rank
    length = signal.shape[axis]
    if not isinstance(length, int):  # None, or a dimension known only when the function runs
        raise ValueError(
            "tt.signal.frame: the length of the axis framed must be known when the function is "
            f"traced (the signal's shape is {signal.shape})"
        )
    if pad_end:
        frames = -(-length // frame_step)
        padding = max(0, frame_step * (frames - 1) + frame_length - length)
        paddings = [[0, 0]] * rank
        paddings[axis] = [0, padding]
        signal = layout_ops.pad(signal, paddings, constant_values=pad_value)
    else:
        frames = max(0, 1 + (length - frame_length) // frame_step)
    starts = np.arange(frames, dtype=np.int32)[:, None] * frame_step
    table = starts + np.arange(frame_length, dtype=np.int32)[None, :]
    return index_ops.gather(signal, table.reshape(frames, frame_length), axis=axis)


def overlap_and_add(signal, frame_step, name=None):
    """The frames on `signal`'s last two axes [frames, frame_length] added at every
    frame_step samples: (frames - 1) * frame_step + frame_length samples."""
    signal = as_tensor(signal)
    frame_step = _positive(frame_step, "tt.signal.overlap_and_add: frame_step")
    rank = signal.shape.rank
    if rank is None or rank < 2:
        raise ValueError(
            f"tt.signal.overlap_and_add: the signal must have rank 2 or more, not {signal.shape}"
        )
    frames, frame_length = signal.shape[-2:]
    if not (isinstance(frames, int) and isinstance(frame_length, int)):
        raise ValueError(
            "tt.signal.overlap_and_add: the number of frames and their length must be known "
            f"when the function is traced (the signal's shape is {signal.shape})"
        )
    hops = -(-frame_length // frame_step)
    padded = layout_ops.pad(signal, [[0, 0]] * (rank - 1) + [[0, hops * frame_step - frame_length]])
    batch = [d if isinstance(d, int) else -1 for d in signal.shape[:-2]]
    if batch.count(-1) > 1:
        batch = array_ops.shape(signal)[:-2]
    pieces = array_ops.reshape(padded, _joined(batch, [frames, hops, frame_step]))
    total = None
    for hop in range(hops):
        paddings = [[0, 0]] * (rank - 2) + [[hop, hops - 1 - hop], [0, 0]]
        placed = layout_ops.pad(pieces[..., hop, :], paddings)
        total = placed if total is None else total + placed
    flat = array_ops.reshape(total, _joined(batch, [(frames + hops - 1) * frame_step]))
    return flat[..., : max(0, (frames - 1) * frame_step + frame_length)]


def _joined(batch, tail):
    """A shape of `batch` dimensions (a list, or a shape tensor) then `tail`."""
    if isinstance(batch, list):
        return batch + tail
    return structure_ops.concat([batch, np.asarray(tail, np.int32)], 0)
