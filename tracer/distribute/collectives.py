"""Collective operations on tensors: allreduce, allgather and broadcast, as Horovod names them.

A list of tensors is reduced in one MPI call per dtype (Horovod's tensor fusion): the
tensors are copied once into one new flat buffer, reduced in place there (`MPI_IN_PLACE`),
and returned as views of it, without a copy per tensor on the way out. Every process must
make the same calls in the same order, with the same shapes and dtypes; a cheap check that
begins each call (one reduction of three integers, agreement.py) turns a mismatch into a
ValueError on every process, never a wrong sum, a hang or a crash inside MPI.

Inside a `tt.function` being traced, or under a recording tape, allreduce and
grouped_allreduce go through the `allreduce` op instead (graph_ops.py), so that compiled code
runs them and tapes differentiate them; the other collectives run outside compiled code only.
"""

import pickle

import numpy as np

from tracer.context import state
from tracer.distribute import graph_ops
from tracer.distribute.agreement import agree, gather_pickles, shapes_of
from tracer.distribute.departures import wait
from tracer.distribute.process import communicator
from tracer.distribute.reduction import (
    REDUCED_AS_FLOAT32,
    Average,
    ReduceOp,
    Sum,
    reduce_into,
)
from tracer.indexed_slices import IndexedSlices
from tracer.tensor import Tensor, TensorLike, convert_to_tensor


def as_array(tensor, what):
    """The concrete numpy value of a tensor, Variable, array or Python number."""
    if isinstance(tensor, TensorLike):
        value = tensor._read()._value
        if value is None:
            raise TypeError(
                f"{what} takes concrete tensors, not the symbolic {tensor!r} of a tt.function "
                f"being traced: inside compiled code only allreduce runs; call {what} outside "
                "the function, on its results (docs/distribute.md)"
            )
        return value
    return np.asarray(convert_to_tensor(tensor)._value)


def allreduce(tensor, average=None, op=None, prescale_factor=1.0, postscale_factor=1.0, name=None):
    """`tensor` combined over all processes (the average by default). An IndexedSlices is
    gathered instead (its rows and indices from every process; values divided by the number
    of processes for Average), as Horovod does: it is never densified."""
    op = _op(average, op)
    if isinstance(tensor, IndexedSlices):
        if is_symbolic([tensor.values]):  # no allgather in compiled code: densified there
            tensor = convert_to_tensor(tensor)
        else:
            return _allreduce_slices(tensor, op, prescale_factor * postscale_factor)
    return grouped_allreduce(
        [tensor], op=op, prescale_factor=prescale_factor, postscale_factor=postscale_factor
    )[0]


def grouped_allreduce(
    tensors, average=None, op=None, prescale_factor=1.0, postscale_factor=1.0, name=None
):
    """Each tensor of `tensors` combined over all processes, in one reduction per dtype."""
    op = _op(average, op)
    if is_symbolic(tensors) or state.tapes or state.accumulators:  # the op path: recorded
        return graph_ops.grouped_allreduce_traced(
            [convert_to_tensor(t) for t in tensors], op, prescale_factor, postscale_factor
        )
    arrays = [as_array(t, "allreduce") for t in tensors]
    agree("allreduce", (("op", op.name), ("tensors", shapes_of(arrays))))
    results = [None] * len(arrays)
    for dtype, positions in _by_dtype(arrays).items():
        fused = _fused([arrays[k] for k in positions], dtype)
        reduce_into(fused, fused, op, prescale_factor, postscale_factor)
        for k, view in zip(positions, _views(fused, [arrays[k] for k in positions], dtype)):
            results[k] = Tensor(view)
    return results


def is_symbolic(tensors):
    """Whether any of `tensors` belongs to a trace (has no value yet)."""
    return any(isinstance(t, TensorLike) and t._read()._value is None for t in tensors)


def _op(average, op):
    if average is not None and op is not None:
        raise ValueError("allreduce: give `op` or the older `average`, not both")
    if average is not None:
        return Average if average else Sum
    op = Average if op is None else op
    if not isinstance(op, ReduceOp):
        raise ValueError(f"allreduce: `op` is one of Average, Sum, Min, Max, Product, not {op!r}")
    return op


def _by_dtype(arrays):
    groups = {}
    for k, array in enumerate(arrays):
        groups.setdefault(array.dtype, []).append(k)
    return groups


def _fused(arrays, dtype):
    """One new flat buffer holding `arrays` one after another, in the dtype MPI reduces."""
    wire = np.dtype(np.float32) if dtype in REDUCED_AS_FLOAT32 else dtype
    fused = np.empty(sum(a.size for a in arrays), wire)
    if len(arrays) == 1:
        fused[...] = arrays[0].reshape(-1)
    else:
        np.concatenate([a.reshape(-1) for a in arrays], out=fused, casting="same_kind")
    return fused


def _views(fused, arrays, dtype):
    """`arrays`' shapes as views of the reduced buffer (copied back to float16 where it was
    reduced in float32)."""
    if fused.dtype != dtype:
        fused = fused.astype(dtype)
    start = 0
    for array in arrays:
        yield fused[start : start + array.size].reshape(array.shape)
        start += array.size


def _allreduce_slices(slices, op, scale):
    if op not in (Average, Sum):
        raise ValueError(f"allreduce: an IndexedSlices is summed or averaged, not {op.name}")
    values = allgather(slices.values)
    indices = allgather(slices.indices)
    factor = scale / communicator().size if op is Average else scale
    if factor != 1.0:
        values = Tensor(values._value * np.asarray(factor, values._value.dtype))
    return IndexedSlices(values, indices, slices._dense_shape)


def allgather(tensor, name=None):
    """The tensors of every process, concatenated along their first axis in rank order; the
    first axis may differ between processes, the others may not."""
    comm = communicator()
    array = as_array(tensor, "allgather")
    if array.ndim == 0:
        raise ValueError("allgather: the tensor must have at least one axis, to gather along")
    array = np.ascontiguousarray(array)
    row = array.shape[1:]
    agree("allgather", (("shape_past_the_first_axis", row), ("dtype", array.dtype.str)))
    if comm.size == 1:
        return Tensor(array.copy())
    rows = np.empty(comm.size, np.int64)
    wait(comm.Iallgather(np.array([len(array)], np.int64), rows), "allgather")
    result = np.empty((int(rows.sum()), *row), array.dtype)
    counts = rows * (int(np.prod(row)) * array.itemsize)
    # as bytes: every dtype, float16 and bool included, goes through unchanged
    sent, received = array.view(np.uint8).reshape(-1), result.view(np.uint8).reshape(-1)
    wait(comm.Iallgatherv(sent, [received, counts]), "allgather")
    return Tensor(result)


def broadcast(tensor, root_rank, name=None):
    """The tensor of process `root_rank`, on every process."""
    return Tensor(_broadcast_arrays([as_array(tensor, "broadcast")], root_rank, "broadcast")[0])


def broadcast_variables(variables, root_rank=0):
    """Give every process process `root_rank`'s values of `variables` (one broadcast per
    dtype)."""
    variables = list(variables)
    arrays = [as_array(v, "broadcast_variables") for v in variables]
    for variable, value in zip(
        variables, _broadcast_arrays(arrays, root_rank, "broadcast_variables")
    ):
        variable.assign(value)


def _broadcast_arrays(arrays, root_rank, what):
    comm = communicator()
    agree(what, (("root_rank", int(root_rank)), ("tensors", shapes_of(arrays))))
    _check_root(root_rank, what)
    results = [None] * len(arrays)
    for dtype, positions in _by_dtype(arrays).items():
        fused = np.concatenate([arrays[k].reshape(-1) for k in positions]).astype(dtype)
        if comm.size > 1 and fused.size:
            wait(comm.Ibcast(fused.view(np.uint8), root=root_rank), what)
        start = 0
        for k in positions:
            results[k] = fused[start : start + arrays[k].size].reshape(arrays[k].shape)
            start += arrays[k].size
    return results


def _check_root(root_rank, what):
    """After `agree`, so that every process raises where one does."""
    size = communicator().size
    if not 0 <= root_rank < size:
        raise ValueError(f"{what}: root_rank {root_rank} is not a rank of a job of {size}")


def broadcast_object(obj, root_rank=0, name=None):
    """Any picklable Python object of process `root_rank`, on every process."""
    comm = communicator()
    root = comm.rank == root_rank
    data = np.frombuffer(bytearray(pickle.dumps(obj)), np.uint8) if root else None
    size = agree("broadcast_object", (("root_rank", int(root_rank)),), data.size if root else 0)
    _check_root(root_rank, "broadcast_object")
    if not root:
        data = np.empty(size, np.uint8)
    wait(comm.Ibcast(data, root=root_rank), "broadcast_object")
    return pickle.loads(data)


def allgather_object(obj, name=None):
    """The list of every process's `obj` (picklable), in rank order."""
    data = pickle.dumps(obj)  # first: a process that cannot pickle its object fails alone
    agree("allgather_object", ())
    return [pickle.loads(d) for d in gather_pickles(data, "allgather_object")]
