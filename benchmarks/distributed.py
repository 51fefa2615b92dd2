"""B21: the B2 and B9 steps data-parallel on 1 and 2 processes (tracer.distribute, MPI).

    python3 benchmarks/distributed.py [--quick]      # needs the mpi extra; prints JSON last

The global batch (B2's, 128) is split over the processes. Each step is one compiled
function with Horovod's idiom inside (DistributedGradientTape: one in-graph allreduce of the
four gradients, 407,050 floats); the same step without it (each process's own gradients)
gives the step's cost of the reduction, and `grouped_allreduce` of the same tensors alone
the reduction's own time. On a 2-core machine the point is the overhead, not a speed-up.
"""

import json
import os
import subprocess
import sys
import sysconfig
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROCESSES = (1, 2)


def main():
    quick = "--quick" in sys.argv
    mpiexec = os.path.join(sysconfig.get_path("scripts"), "mpiexec")
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        print(json.dumps({"status": "skipped", "detail": "the mpi extra is not installed"}))
        return
    results = {}
    for processes in PROCESSES:
        command = [mpiexec, "-n", str(processes), sys.executable, __file__, "--worker"]
        done = subprocess.run(
            command + (["--quick"] if quick else []), capture_output=True, text=True, timeout=900
        )
        if done.returncode != 0:
            detail = (done.stderr.strip().splitlines() or ["no output"])[-1][:200]
            results[str(processes)] = {"status": "failed", "detail": detail}
            continue
        results[str(processes)] = json.loads(done.stdout.strip().splitlines()[-1])
    print(json.dumps({"status": "ok", "processes": results}))


def worker(quick):
    sys.path.insert(0, HERE)
    import numpy as np
    from data import ADAM, make

    import tracer as tt
    import tracer.distribute as hvd

    hvd.init()
    comm = hvd.process.communicator()
    d = make("B2", quick)
    x, y = hvd.shard((d["x"], d["y"]))
    x, y = tt.constant(x), tt.constant(y)
    params = [tt.Variable(d[k]) for k in ("w1", "b1", "w2", "b2")]
    w1, b1, w2, b2 = params
    optimizer = tt.optimizers.Adam(**ADAM)

    def gradients(x, y, reduce):
        with tt.GradientTape() as tape:
            logits = tt.matmul(tt.nn.relu(tt.matmul(x, w1) + b1), w2) + b2
            loss = tt.reduce_mean(tt.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
        if reduce:
            tape = hvd.DistributedGradientTape(tape)
        return loss, tape.gradient(loss, params)

    def gradient_step(reduce):
        return tt.function(lambda x, y: gradients(x, y, reduce))

    def training_step(reduce):
        def step(x, y):
            loss, grads = gradients(x, y, reduce)
            optimizer.apply_gradients(zip(grads, params))
            return loss

        return tt.function(step)

    repeats = 5 if quick else 200
    result = {"batch_per_process": int(x.shape[0])}
    for name, make_step in (("B2", gradient_step), ("B9", training_step)):
        for reduce in (True, False):
            step = make_step(reduce)
            result[f"{name}{'' if reduce else ' local'} seconds"] = _median(
                comm, lambda step=step: step(x, y), repeats
            )
    grads = [tt.constant(p.numpy()) for p in params]
    result["allreduce seconds"] = _median(comm, lambda: hvd.grouped_allreduce(grads), repeats)
    result["allreduce floats"] = int(sum(np.prod(g.shape) for g in grads))
    if hvd.rank() == 0:
        print(json.dumps(result))


def _median(comm, function, repeats):
    """The median over `repeats` of the slowest process's time, the processes starting each
    repeat together."""
    for _ in range(3):
        function()
    times = []
    for _ in range(repeats):
        comm.Barrier()
        start = time.perf_counter()
        function()
        times.append(comm.allreduce(time.perf_counter() - start, op=_max()))
    return sorted(times)[len(times) // 2]


def _max():
    from mpi4py import MPI

    return MPI.MAX


if __name__ == "__main__":
    if "--worker" in sys.argv:
        worker("--quick" in sys.argv)
    else:
        main()
