"""B8: memory of the B2 training step on an eager tape, non-persistent and persistent: the
peak while recording and differentiating, and what the tape still holds after the step.

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
        for saved in rec.saved.values()
        for t in saved
        if t._value is not None
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


def main():
    d = make("B2", "--quick" in sys.argv)
    print(json.dumps({"non-persistent": step(d, False), "persistent": step(d, True)}))


if __name__ == "__main__":
    main()
