"""Train the MLP of examples/train_mlp.py on several processes at once, with Horovod's API.

    pip install 'tracer[mpi]'
    mpiexec -n 2 python3 examples/distributed_mlp.py

Each process takes its share of the 600 training points (`hvd.shard`), computes the
gradients of its share, and `DistributedGradientTape` averages them over the processes
inside the compiled step (one allreduce of all gradients per step), so every process
applies the same update and the weights stay identical. Without mpiexec it runs as one
process. Prints the loss (from process 0), the accuracy, and a check that the weights agree.
"""

import time

import numpy as np
from train_mlp import accuracy, spirals

import tracer as tt
import tracer.distribute as hvd


def main(steps=600, learning_rate=0.02, seed=0, log_every=100):
    hvd.init()
    tt.random.set_seed(seed + hvd.rank())  # different starts: the broadcast below unifies them
    features, labels = spirals(seed=seed)
    x, y = (tt.constant(a) for a in hvd.shard((features, labels)))
    model = tt.keras.Sequential(
        [
            tt.keras.layers.Dense(64, activation="relu"),
            tt.keras.layers.Dense(64, activation="relu"),
            tt.keras.layers.Dense(3),
        ]
    )
    model(x)
    hvd.broadcast_variables(model.variables, root_rank=0)
    optimizer = tt.optimizers.Adam(learning_rate)

    @tt.function
    def step(x, y):
        with tt.GradientTape() as tape:
            logits = model(x)
            loss = tt.reduce_mean(tt.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
        tape = hvd.DistributedGradientTape(tape)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return hvd.allreduce(loss)  # the loss of the whole batch, for the log

    start = time.perf_counter()
    for k in range(steps + 1):
        loss = step(x, y)
        if k % log_every == 0 and hvd.rank() == 0:
            print(f"step {k:4d}  loss {float(loss):.4f}")
    seconds = time.perf_counter() - start
    checksums = hvd.allgather_object([float(np.sum(v.numpy())) for v in model.variables])
    held_out = spirals(seed=seed + 1)
    if hvd.rank() == 0:
        print(
            f"{hvd.size()} process(es), {len(x)} points each: accuracy training "
            f"{accuracy(model, features, labels):.1%}, held out {accuracy(model, *held_out):.1%} "
            f"({seconds:.1f} s)"
        )
        print(f"weights identical on every process: {all(c == checksums[0] for c in checksums)}")


if __name__ == "__main__":
    main()
