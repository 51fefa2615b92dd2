"""B8: memory of the B2 training step on an eager tape, non-persistent and persistent: the
peak while recording and differentiating, and what the tape still holds after the step.
B11: peak memory of the B10 gradient (1,000 Euler steps of 256 floats), compiled and eager,
with every state kept for the reverse, and checkpointed: an outer loop over 40 segments of
25 steps, each segment under tt.recompute_grad (its states are recomputed in the backward).

    python3 benchmarks/memory.py [--quick]
"""

import json
import os
import sys
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from data import make

import tracer as tt


def held_by(tape):
    """Bytes of the values the tape still keeps for gradients."""
    rec = tape._recording_state
    if rec is None:
        return 0
    arrays = {
        id(t._value): t._value
        for saved in rec.saved
        if saved is not None  # a watched node's
        for t in saved
        if t is not None and t._value is not None  # (None: kept for no cotangent)
    }
    return sum(np.asarray(a).nbytes for a in arrays.values())


def step(d, persistent):
    x, y = tt.constant(d["x"]), tt.constant(d["y"])
    params = [tt.Variable(d[k]) for k in ("w1", "b1", "w2", "b2")]
    tracemalloc.start()
    with tt.GradientTape(persistent=persistent) as tape:
        logits = tt.matmul(tt.nn.relu(tt.matmul(x, params[0]) + params[1]), params[2]) + params[3]
        loss = tt.reduce_mean(tt.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
    recorded = held_by(tape)
    grads = tape.gradient(loss, params)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del logits, loss, grads
    return {"peak_bytes": peak, "held_while_recorded": recorded, "held_after_step": held_by(tape)}


def euler_gradient(d, segments):
    """The B10 value and gradients; with `segments`, the loop split into that many
    recomputed segments."""
    steps, dt = d["steps"], d["dt"]

    def run(first, count, x, theta):
        _, x = tt.while_loop(
            lambda i, x: i < count,
            lambda i, x: (i + 1, x + dt * (tt.sin(theta * x) - 0.5 * x * x * x)),
            (first, x),
            maximum_iterations=count,
        )
        return x

    def value_and_grads(x0, theta):
        with tt.GradientTape() as tape:
            tape.watch([x0, theta])
            if segments is None:
                x = run(0, steps, x0, theta)
            else:
                size = steps // segments
                segment = tt.recompute_grad(lambda x, theta: run(0, size, x, theta))
                _, x = tt.while_loop(
                    lambda j, x: j < segments,
                    lambda j, x: (j + 1, segment(x, theta)),
                    (0, x0),
                    maximum_iterations=segments,
                )
            loss = 0.5 * tt.reduce_sum(x * x)
        return [loss, *tape.gradient(loss, [x0, theta])]

    return value_and_grads


def peak_bytes(run, *args):
    """The peak bytes Python's allocator sees in a call after the first, and for a compiled
    function the workspace its module keeps between calls (allocated once, in C on the C
    call path: tracemalloc sees neither), which every call holds throughout."""
    run(*args)  # compiled (or warmed up) before measuring
    tracemalloc.start()
    run(*args)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    if hasattr(run, "get_concrete_function"):
        peak += run.get_concrete_function(*args)._executable.workspace_bytes
    return peak


def loop_memory(quick):
    """B11: peak bytes of the B10 gradient, plain and checkpointed, compiled and eager."""
    d = make("B10", quick)
    segments = 4 if quick else 40
    x0, theta = tt.constant(d["x0"]), tt.constant(d["theta"])
    state = d["x0"].nbytes
    report = {"steps": d["steps"], "segments": segments, "state_bytes": state}
    for kind in ("compiled", "eager"):
        for name, split in (("every state", None), ("checkpointed", segments)):
            run = euler_gradient(d, split)
            run = tt.function(run) if kind == "compiled" else run
            report[f"{kind}, {name}"] = peak_bytes(run, x0, theta)
    return report


def main():
    quick = "--quick" in sys.argv
    d = make("B2", quick)
    results = {"non-persistent": step(d, False), "persistent": step(d, True)}
    print(json.dumps({"B8": results, "B11": loop_memory(quick)}))


if __name__ == "__main__":
    main()
