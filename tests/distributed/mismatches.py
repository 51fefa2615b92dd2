"""Jobs whose processes' collective calls differ: `python -m tests.distributed.mismatches
CASE OUT` on 2 processes (tests/test_distribute_mismatch.py runs them). Each process saves
the error it caught and the result of one more allreduce, which shows that the job can go
on. In most cases rank 1 takes one training step more than rank 0 (uneven data), then both
make a last collective call: rank 0's call meets rank 1's extra step. Apart from the tests,
so that each process imports tracer alone, not pytest."""

import json
import sys

import numpy as np

LAST_CALLS = {  # the last collective call of each process, by name
    "broadcast_object": lambda hvd, tt: hvd.broadcast_object("best epoch: 3", root_rank=0),
    "broadcast_variables": lambda hvd, tt: hvd.broadcast_variables(
        [tt.Variable(np.zeros(49, np.float32))], root_rank=0
    ),
    "allgather_object": lambda hvd, tt: hvd.allgather_object(hvd.rank()),
    "allgather": lambda hvd, tt: hvd.allgather(tt.constant(np.arange(3.0))),
}
STEP = "allreduce(op='Average', tensors=[float32[49]])"  # rank 1's extra step, as shown


def uneven(last, compiled):
    """The case: rank 0 takes 1 step, rank 1 takes 2 (an allreduce of a gradient each), then
    each makes the collective call `last`."""

    def run(hvd, tt):
        grad = tt.constant(np.ones(49, np.float32))
        step = tt.function(lambda g: hvd.allreduce(g)) if compiled else hvd.allreduce
        for _ in range(1 if hvd.rank() == 0 else 2):
            step(grad)
        LAST_CALLS[last](hvd, tt)

    return run


CASES = {
    **{f"{last}_eager": uneven(last, False) for last in LAST_CALLS},
    **{f"{last}_compiled": uneven(last, True) for last in LAST_CALLS},
    "ops": lambda hvd, tt: hvd.allreduce(
        tt.constant(1.0), op=hvd.Sum if hvd.rank() == 0 else hvd.Average
    ),
    "roots": lambda hvd, tt: hvd.broadcast_object("mine", root_rank=hvd.rank()),
}


def main(case, out):
    import tracer as tt
    import tracer.distribute as hvd

    hvd.init()
    try:
        CASES[case](hvd, tt)
        error = "no error"
    except (ValueError, hvd.ProcessLeftError) as caught:
        error = f"{type(caught).__name__}: {caught}"
    after = float(hvd.allreduce(tt.constant(1.0), op=hvd.Sum))
    with open(f"{out}/rank{hvd.rank()}.json", "w") as file:
        json.dump({"error": error, "after": after}, file)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
