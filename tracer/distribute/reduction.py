"""Reducing one flat buffer in place over the processes: what the eager collectives and the
allreduce op share. Every call is started non-blocking and waited for in departures.wait,
which raises where a process has left the job instead of waiting for it forever; the
callers first check that every process makes the same call (agreement.py)."""

import numpy as np

from tracer.distribute.departures import wait
from tracer.distribute.process import communicator, mpi


class ReduceOp:
    """How values from every process combine."""

    def __init__(self, name, mpi_name):
        self.name = name
        self.mpi_name = mpi_name

    def __repr__(self):
        return f"tracer.distribute.{self.name}"


Average = ReduceOp("Average", "SUM")  # the sum, divided by the number of processes
Sum = ReduceOp("Sum", "SUM")
Min = ReduceOp("Min", "MIN")
Max = ReduceOp("Max", "MAX")
Product = ReduceOp("Product", "PROD")
REDUCED_AS_FLOAT32 = {np.dtype(np.float16)}  # MPI has no float16 type: reduced in float32


def check_reducible(dtype, op):
    """TypeError unless `op` combines values of the numpy `dtype` into that dtype."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_ or dtype.kind not in "iufc":
        raise TypeError(f"allreduce combines numbers, not {dtype} values; cast them first")
    if op is Average and dtype.kind not in "fc":
        raise TypeError(
            f"allreduce: the Average of {dtype} tensors is not a {dtype}; use op=Sum and "
            "divide where you need to"
        )


def reduce_into(source, target, op, prescale_factor=1.0, postscale_factor=1.0):
    """`source` combined over the processes, written to `target` (a flat array of its
    size and dtype, or `source` itself: in place). MPI reads one and writes the other, so a
    reduction into another buffer costs no copy of its own."""
    MPI = mpi()
    comm = communicator()
    check_reducible(target.dtype, op)
    if prescale_factor != 1.0:
        np.multiply(source, prescale_factor, out=target, casting="same_kind")
        source = target
    if comm.size > 1 and target.size:
        sent = MPI.IN_PLACE if source is target else source
        wait(comm.Iallreduce(sent, target, op=getattr(MPI, op.mpi_name)), "allreduce")
    elif source is not target:
        target[...] = source
    scale = postscale_factor / comm.size if op is Average else postscale_factor
    if scale != 1.0:
        target *= scale
