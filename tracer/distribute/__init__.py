"""Data-parallel training across processes on MPI, with Horovod's TensorFlow API.

    import tracer.distribute as hvd

    hvd.init()
    tape = hvd.DistributedGradientTape(tape)     # gradient() averages over the processes
    hvd.broadcast_variables(model.variables, root_rank=0)

Run with `mpiexec -n 2 python3 train.py`; without mpiexec it runs as one process
(`size() == 1`). Needs the `mpi` extra: `pip install 'tracer[mpi]'` (mpi4py and mpich).
docs/distribute.md has the design: one fused buffer per dtype per step, reduced in place.
"""

from tracer.distribute.collectives import (
    allgather,
    allgather_object,
    allreduce,
    broadcast,
    broadcast_object,
    broadcast_variables,
    grouped_allreduce,
)
from tracer.distribute.departures import ProcessLeftError
from tracer.distribute.gradients import DistributedGradientTape, DistributedOptimizer
from tracer.distribute.process import (
    cross_rank,
    cross_size,
    init,
    is_initialized,
    local_rank,
    local_size,
    rank,
    shutdown,
    size,
)
from tracer.distribute.reduction import Average, Max, Min, Product, ReduceOp, Sum
from tracer.distribute.sharding import shard

__all__ = [
    "Average",
    "DistributedGradientTape",
    "DistributedOptimizer",
    "Max",
    "Min",
    "ProcessLeftError",
    "Product",
    "ReduceOp",
    "Sum",
    "allgather",
    "allgather_object",
    "allreduce",
    "broadcast",
    "broadcast_object",
    "broadcast_variables",
    "cross_rank",
    "cross_size",
    "grouped_allreduce",
    "init",
    "is_initialized",
    "local_rank",
    "local_size",
    "rank",
    "shard",
    "shutdown",
    "size",
]
