"""A job in which one process may end early: `python -m tests.distributed.exits HOW OUT`.

Every process trains a small model with DistributedGradientTape (one allreduce per step).
Rank 1 leaves after LEAVER_STEPS steps, HOW: "exit0" (sys.exit(0)), "exit1" (sys.exit(1)),
"return" (its program returns), "shutdown" (hvd.shutdown(), then it works on alone),
"compiled" (returns; every step is compiled, the allreduce inside the C code); rank 0 goes
on for STEPS steps; with "caught" rank 0 catches the ProcessLeftError and saves its
message. Just before leaving, rank 1 writes the time to OUT/left (the test measures from
there). With HOW "together" every process takes LEAVER_STEPS steps, and with "checkpoint"
rank 0 then works alone for a while: both must end as usual, exit status 0 and no message.
tests/test_distribute_exit.py runs these.
"""

import sys
import time

import numpy as np

import tracer as tt
import tracer.distribute as hvd

STEPS = 500  # rank 0's steps: many more than a job that works takes to end it
LEAVER_STEPS = 2
ALONE_SECONDS = 1.5  # rank 0's work alone at the end, with "checkpoint"


def train(steps, compiled):
    rng = np.random.default_rng(hvd.rank())
    w = tt.Variable(np.zeros((4, 2)))
    optimizer = tt.optimizers.SGD(0.1)

    def step(x, y):
        with tt.GradientTape() as tape:
            loss = tt.reduce_mean((tt.matmul(x, w) - y) ** 2)
        grads = hvd.DistributedGradientTape(tape).gradient(loss, [w])
        optimizer.apply_gradients(zip(grads, [w]))
        return loss

    run = tt.function(step) if compiled else step
    for _ in range(steps):
        run(tt.constant(rng.normal(size=(8, 4))), tt.constant(rng.normal(size=(8, 2))))


def main(how, out):
    hvd.init()
    together = how in ("together", "checkpoint")
    if together or hvd.rank() != 1:
        try:
            train(LEAVER_STEPS if together else STEPS, compiled=how == "compiled")
        except hvd.ProcessLeftError as error:
            if how != "caught":
                raise
            with open(f"{out}/caught", "w") as file:
                file.write(str(error))
        if how == "checkpoint" and hvd.rank() == 0:
            time.sleep(ALONE_SECONDS)
        return
    train(LEAVER_STEPS, compiled=how == "compiled")
    with open(f"{out}/left", "w") as file:
        file.write(repr(time.time()))
    if how == "shutdown":
        hvd.shutdown()
        time.sleep(ALONE_SECONDS)
    elif how.startswith("exit"):
        sys.exit(int(how[-1]))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
