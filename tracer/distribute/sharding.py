"""Each process's share of in-memory data."""

import numpy as np

from tracer.distribute import structures
from tracer.distribute.process import communicator
from tracer.tensor import Tensor, TensorLike


def shard(data, drop_remainder=False, rank=None, size=None):
    """This process's part of `data`: an array or tensor, or a list, tuple or dict of them
    with the same first axis, split along that axis the same way.

    Process r takes items r, r + size, r + 2 size, ... (as tf.data's `shard`). Where the
    number of items n does not divide by the number of processes, every process still gets
    the same number, so that all take the same number of steps (a process with fewer would
    leave the others waiting in a collective): ceil(n / size) items, the first items used
    again to make up the difference (as PyTorch's DistributedSampler, which Horovod's
    examples use), or floor(n / size), dropping the last n mod size items, with
    `drop_remainder=True`. `rank` and `size` default to this process's.
    """
    if rank is None or size is None:
        comm = communicator()
        rank, size = comm.rank if rank is None else rank, comm.size if size is None else size
    if not 0 <= rank < size:
        raise ValueError(f"shard: rank {rank} is not one of {size} processes")
    lengths = {len(_array(a)) if np.ndim(_array(a)) else None for a in structures.leaves(data)}
    if None in lengths or len(lengths) != 1:
        raise ValueError(
            "shard: the data must be arrays or tensors with one common first axis; their "
            f"first axes: {sorted(lengths, key=str)}"
        )
    (n,) = lengths
    per_process = n // size if drop_remainder or n == 0 else -(-n // size)
    items = np.arange(rank, per_process * size, size) % max(n, 1)
    taken = [_taken(a, items) for a in structures.leaves(data)]
    return structures.rebuilt(data, iter(taken))


def _array(value):
    return value._read()._value if isinstance(value, TensorLike) else np.asarray(value)


def _taken(value, items):
    taken = _array(value)[items]
    return Tensor(taken) if isinstance(value, TensorLike) else taken
