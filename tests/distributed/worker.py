"""What each process of a test job runs: `python -m tests.distributed.worker SCENARIO OUT`.

Each process saves what it computed to OUT/rank<r>.npz (arrays) for tests/test_distribute.py
to compare across processes and against one process; the checks are all made there.
"""

import sys

import numpy as np

import tracer as tt

hvd = graph_ops = None  # tracer.distribute's, imported by a job's processes only (the tests
# import this file without MPI)

STEPS = 4
GLOBAL_BATCH = 12  # divides by 2; not by 3 with the 13 below
FEATURES, CLASSES = 5, 3


def data(batch=GLOBAL_BATCH, seed=7):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(STEPS, batch, FEATURES)).astype(np.float64)
    y = rng.integers(0, CLASSES, size=(STEPS, batch)).astype(np.int32)
    return x, y


def model(seed):
    tt.random.set_seed(seed)
    return tt.keras.Sequential(
        [
            tt.keras.layers.Dense(8, activation="tanh", dtype="float64"),
            tt.keras.layers.Dense(CLASSES, dtype="float64"),
        ]
    )


def loss_of(net, x, y):
    return tt.reduce_mean(tt.nn.sparse_softmax_cross_entropy_with_logits(y, net(x)))


def train(kind, batch=GLOBAL_BATCH, seed=None, distributed=True, items=None):
    """Weights after STEPS steps of Adam on this process's shard of each global batch.

    kind: "tape" (eager DistributedGradientTape), "compiled" (a compiled function returns
    the gradients; DistributedOptimizer reduces and applies them), "aggregated" (two
    backward passes per step, each on half of the shard), "graph" (Horovod's idiom, all of
    the step in one tt.function: DistributedGradientTape inside, compiled to C) and
    "graph_interpreter" (the same on the interpreter), "graph_optimizer" (a plain tape and a
    DistributedOptimizer inside the tt.function). Run as one process
    (`distributed=False`), it trains on the global batch's `items` (all by default)."""
    rank = hvd.rank() if distributed else 0
    net = model(seed if seed is not None else 100 + rank)
    xs, ys = data(batch)
    net(tt.constant(xs[0]))
    optimizer = tt.optimizers.Adam(0.05)
    if distributed:
        hvd.broadcast_variables(net.variables, root_rank=0)
        if kind not in ("tape", "graph", "graph_interpreter"):
            optimizer = hvd.DistributedOptimizer(
                optimizer,
                backward_passes_per_step=2 if kind == "aggregated" else 1,
                average_aggregated_gradients=True,
            )

    @tt.function
    def gradients(x, y):
        with tt.GradientTape() as tape:
            loss = loss_of(net, x, y)
        return tape.gradient(loss, net.trainable_variables)

    @tt.function(backend="interpreter" if kind == "graph_interpreter" else "c")
    def step(x, y):
        with tt.GradientTape() as tape:
            loss = loss_of(net, x, y)
        if kind != "graph_optimizer":
            tape = hvd.DistributedGradientTape(tape)
        grads = tape.gradient(loss, net.trainable_variables)
        optimizer.apply_gradients(zip(grads, net.trainable_variables))
        return loss

    for x, y in zip(xs, ys):
        if distributed:
            x, y = hvd.shard((x, y))
        elif items is not None:
            x, y = x[items], y[items]
        if kind == "tape":
            with tt.GradientTape() as tape:
                loss = loss_of(net, tt.constant(x), tt.constant(y))
            if distributed:
                tape = hvd.DistributedGradientTape(tape)
            grads = tape.gradient(loss, net.trainable_variables)
            optimizer.apply_gradients(zip(grads, net.trainable_variables))
        elif kind.startswith("graph"):
            step(tt.constant(x), tt.constant(y))
        elif kind == "aggregated":
            half = len(x) // 2
            for part in (slice(0, half), slice(half, None)):
                grads = gradients(tt.constant(x[part]), tt.constant(y[part]))
                optimizer.apply_gradients(zip(grads, net.trainable_variables))
        else:
            grads = gradients(tt.constant(x), tt.constant(y))
            optimizer.apply_gradients(zip(grads, net.trainable_variables))
    return {f"w{k}": v.numpy() for k, v in enumerate(net.variables)}


def collectives():
    r = hvd.rank()
    out = {}
    base = np.arange(6, dtype=np.float32).reshape(2, 3) + r
    for name, op in [
        ("average", hvd.Average),
        ("sum", hvd.Sum),
        ("min", hvd.Min),
        ("max", hvd.Max),
        ("product", hvd.Product),
    ]:
        out[name] = hvd.allreduce(tt.constant(base), op=op).numpy()
    out["scaled"] = hvd.allreduce(
        tt.constant(base), prescale_factor=2.0, postscale_factor=3.0
    ).numpy()
    out["float16"] = hvd.allreduce(tt.constant(np.float16(r + 0.5))).numpy()
    out["int_sum"] = hvd.allreduce(tt.constant([r, 2 * r], tt.int32), op=hvd.Sum).numpy()
    grouped = hvd.grouped_allreduce(
        [tt.constant(base), tt.constant([float(r)], tt.float64), tt.Variable([r * 1.0, 1.0])]
    )
    out.update({f"grouped{k}": g.numpy() for k, g in enumerate(grouped)})
    out["gathered"] = hvd.allgather(tt.constant(np.full((r + 1, 2), r, np.int64))).numpy()
    out["broadcast"] = hvd.broadcast(tt.constant([r, r + 1.0]), root_rank=hvd.size() - 1).numpy()
    out["object"] = np.array(hvd.broadcast_object({"rank": r}, root_rank=1)["rank"])
    out["objects"] = np.array(hvd.allgather_object(r * 10))
    table = tt.Variable(np.arange(12.0).reshape(6, 2))
    with tt.GradientTape() as tape:
        rows = tt.gather(table, [r, r + 1, 0])
        loss = tt.reduce_sum(rows * rows)
    sparse = hvd.DistributedGradientTape(tape).gradient(loss, table)
    out["sparse_type"] = np.array(type(sparse).__name__)
    out["sparse_values"] = sparse.values.numpy()
    out["sparse_indices"] = sparse.indices.numpy()
    out["sparse_dense"] = tt.convert_to_tensor(sparse).numpy()
    with tt.GradientTape() as tape:
        loss = tt.reduce_sum(tt.gather(table, [r]) ** 2)
    as_dense = hvd.DistributedGradientTape(tape, sparse_as_dense=True).gradient(loss, table)
    out["as_dense"] = as_dense.numpy()
    return out


def op():
    """The allreduce op eagerly, on the interpreter and in C: values, gradients to second
    order, a forward-mode tangent; a failing callback; C export refused."""
    from runtime import host

    r = hvd.rank()
    x0 = np.array([1.0, -2.0, 0.5]) * (r + 1)
    w = np.array([0.5, 1.0, 2.0]) + r

    def derivatives(x):
        with tt.GradientTape() as outer:
            outer.watch(x)
            with tt.GradientTape() as inner:
                inner.watch(x)
                y = hvd.allreduce(x * x, op=hvd.Sum) * w
                loss = tt.reduce_sum(y)
            g = inner.gradient(loss, x)
            along = tt.reduce_sum(g * g)
        return y, g, outer.gradient(along, x)

    out = {}
    x = tt.constant(x0)
    for backend in ("eager", "interpreter", "c"):
        run = derivatives if backend == "eager" else tt.function(derivatives, backend=backend)
        for name, value in zip(("value", "grad", "second"), run(x)):
            out[f"{backend}_{name}"] = value.numpy()
    with tt.autodiff.ForwardAccumulator(x, tt.constant(w)) as accumulator:
        y = hvd.allreduce(x)
    out["tangent"] = accumulator.jvp(y).numpy()

    def failing(source, target, op):
        raise ArithmeticError("failed on purpose in the callback")

    saved, host.HOST_FUNCTIONS[graph_ops.HOST_FUNCTION] = (
        host.HOST_FUNCTIONS[graph_ops.HOST_FUNCTION],
        failing,
    )
    try:
        tt.function(lambda v: hvd.allreduce(v + 1.0), backend="c")(x)
        out["callback_error"] = np.array("no error")
    except ArithmeticError as error:
        out["callback_error"] = np.array(str(error))
    finally:
        host.HOST_FUNCTIONS[graph_ops.HOST_FUNCTION] = saved
    try:
        tt.function(lambda v: hvd.allreduce(v * 2.0)).get_concrete_function(x).export_c(
            f"{sys.argv[2]}/export{r}"
        )
        out["export_error"] = np.array("no error")
    except Exception as error:  # the message is what the test checks
        out["export_error"] = np.array(f"{type(error).__name__}: {error}")
    return out


def mismatch():
    """Shapes that differ between processes: every process gets the ValueError."""
    r = hvd.rank()
    out = {}
    for name, call in [
        ("allreduce", lambda: hvd.allreduce(tt.zeros([r + 1]))),
        ("allgather", lambda: hvd.allgather(tt.zeros([2, r + 1]))),
        ("broadcast", lambda: hvd.broadcast(tt.zeros([r + 2]), 0)),
    ]:
        try:
            call()
            out[name] = np.array("no error")
        except ValueError as error:
            out[name] = np.array(str(error))
    out["after"] = hvd.allreduce(tt.constant(1.0), op=hvd.Sum).numpy()  # the job goes on
    return out


def failure():
    """Process 1 raises; process 0 goes on into a collective that process 1 never joins."""
    if hvd.rank() == 1:
        raise RuntimeError("process 1 failed on purpose")
    hvd.allreduce(tt.constant(1.0))
    return {}


def shards():
    """hvd.shard of a dict of an array and a tensor, for 3 processes (rank and size given)."""
    out = {}
    for n in (12, 13, 2, 0):
        data = {"x": np.arange(n) * 10, "y": tt.constant(np.arange(n, dtype=np.int32))}
        for drop in (False, True):
            for r in range(3):
                part = hvd.shard(data, drop_remainder=drop, rank=r, size=3)
                assert isinstance(part["y"], tt.Tensor)
                out[f"{n}_{drop}_{r}_x"] = part["x"]
                out[f"{n}_{drop}_{r}_y"] = part["y"].numpy()
    try:
        hvd.shard((np.zeros(3), np.zeros(4)), rank=0, size=2)
        out["error"] = np.array("no error")
    except ValueError as error:
        out["error"] = np.array(str(error))
    return out


def errors():
    """The message of each misuse, in one process."""
    v = tt.Variable([1.0, 2.0])
    aggregating = hvd.DistributedOptimizer(tt.optimizers.SGD(0.1), backward_passes_per_step=2)

    def step():
        with tt.GradientTape() as tape:
            loss = tt.reduce_sum(v * v)
        aggregating.apply_gradients(zip(tape.gradient(loss, [v]), [v]))

    cases = {
        "aggregated_in_trace": tt.function(step),
        "broadcast_in_trace": tt.function(lambda: hvd.broadcast_variables([v])),
        "average_of_ints": lambda: hvd.allreduce(tt.constant([1, 2])),
        "bools": lambda: hvd.allreduce(tt.constant([True]), op=hvd.Sum),
        "root_rank": lambda: hvd.broadcast(tt.constant(1.0), root_rank=3),
        "scalar_gather": lambda: hvd.allgather(tt.constant(1.0)),
        "min_of_slices": lambda: hvd.allreduce(
            tt.IndexedSlices(tt.constant([[1.0]]), tt.constant([0]), (2, 1)), op=hvd.Min
        ),
        "bad_op": lambda: hvd.allreduce(tt.constant(1.0), op="sum"),
    }
    out = {}
    for name, call in cases.items():
        try:
            call()
            out[name] = np.array("no error")
        except (TypeError, ValueError) as error:
            out[name] = np.array(f"{type(error).__name__}: {error}")
    return out


SCENARIOS = {
    "tape": lambda: train("tape"),
    "compiled": lambda: train("compiled"),
    "aggregated": lambda: train("aggregated"),
    "graph": lambda: train("graph"),
    "graph_interpreter": lambda: train("graph_interpreter"),
    "graph_optimizer": lambda: train("graph_optimizer"),
    "uneven": lambda: train("compiled", batch=13),
    "collectives": collectives,
    "op": op,
    "mismatch": mismatch,
    "failure": failure,
    "shards": shards,
    "errors": errors,
    "size": lambda: {"size": np.array(hvd.size()), "rank": np.array(hvd.rank())},
}

if __name__ == "__main__":
    import tracer.distribute as hvd
    from tracer.distribute import graph_ops

    scenario, out = sys.argv[1], sys.argv[2]
    hvd.init()
    np.savez(f"{out}/rank{hvd.rank()}.npz", **SCENARIOS[scenario]())
