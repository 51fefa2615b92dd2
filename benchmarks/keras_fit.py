"""B25: Keras's `fit`, seconds per epoch, tracer's `tt.keras` against Keras 3 on TensorFlow
(tf.function, and XLA), on JAX and on torch.

Two models, the same data and initial weights in every system (numpy from a seed, given with
`set_weights`), batch 64, `shuffle=False`, so that every system sees the same batches in the
same order and the losses can be compared:

    mlp  4,096 x 64 -> Dense(128, relu) -> Dense(128, relu) -> Dense(10): 64 steps an epoch
    cnn  2,048 x 28x28x1 -> Conv2D(8, 3, relu) -> MaxPooling2D -> Flatten -> Dense(10): 32 steps

SparseCategoricalCrossentropy(from_logits=True), Adam(1e-3), metrics=["accuracy"], verbose=0.
Each system runs in a process of its own (benchmarks/programs.py), with an empty compile
cache: one `fit(epochs=1)` timed as a whole (the first epoch: tracing and compiling), then
one `fit(epochs=EPOCHS)` whose epochs a callback times one by one (time.perf_counter() at
on_epoch_begin and on_epoch_end, after the epoch's loss is read as a float, so that JAX's
asynchronous dispatch has finished). Reported: the median of those epochs, the first epoch,
and the losses, each checked against tracer's (the mean loss of the first epoch, and of the
last: the same weights and batches, so float32 rounding is the only difference).

A shared machine has slow spells, so every system runs ROUNDS times, round after round, and
keeps its fastest round's median (as benchmarks/run.py does; no round starts once
BUDGET_SECONDS have passed); the JSON keeps every round, and each process's load average.

    python3 benchmarks/keras_fit.py [--quick]      # prints JSON last
"""

import json
import subprocess
import sys
import tempfile
import time

from programs import environment, run_program

EPOCHS, QUICK_EPOCHS = 5, 2
ROUNDS, QUICK_ROUNDS = 3, 1
# no round starts after this many seconds (run.py gives a script 900): Keras on torch takes
# minutes an epoch when other processes keep the cores busy
BUDGET_SECONDS = 540
BATCH = 64
# relative differences from tracer's losses that still count as the same training
TOLERANCE = {"first": 1e-4, "last": 1e-3}

# per system: the code that makes `keras`, the environment, and compile's extra arguments
SYSTEMS = {
    "tracer": ("import tracer as tt\nkeras = tt.keras", {}, {}),
    "tracer-eager": ("import tracer as tt\nkeras = tt.keras", {}, {"run_eagerly": True}),
    "tf-keras": (
        "import tensorflow as tf\nkeras = tf.keras",
        {"KERAS_BACKEND": "tensorflow"},
        {"jit_compile": False},  # tf.function's graph; Keras's "auto" is the same on a CPU
    ),
    "tf-keras-jit": (
        "import tensorflow as tf\nkeras = tf.keras",
        {"KERAS_BACKEND": "tensorflow"},
        {"jit_compile": True},
    ),
    "keras-jax": ("import keras", {"KERAS_BACKEND": "jax"}, {}),  # jax.jit, Keras's default
    "keras-torch": ("import keras", {"KERAS_BACKEND": "torch"}, {}),  # eager, Keras's default
}

MODELS = {
    "mlp": "4096 x 64 -> Dense(128, relu) -> Dense(128, relu) -> Dense(10), 64 steps an epoch",
    "cnn": "2048 x 28x28x1 -> Conv2D(8, 3, relu) -> MaxPooling2D -> Flatten -> Dense(10), "
    "32 steps an epoch",
}

PROGRAM = """
import json, os, time
t0 = time.perf_counter()
{prelude}
import numpy as np
t1 = time.perf_counter()
QUICK, MODEL, EPOCHS, BATCH = {quick}, {model!r}, {epochs}, {batch}
rng = np.random.default_rng(0)
layers = keras.layers
if MODEL == "mlp":
    samples = 256 if QUICK else 4096
    x = rng.standard_normal((samples, 64)).astype(np.float32)
    model = keras.Sequential([layers.Dense(128, activation="relu"),
                              layers.Dense(128, activation="relu"), layers.Dense(10)])
    shapes = [(64, 128), (128,), (128, 128), (128,), (128, 10), (10,)]
else:
    samples = 256 if QUICK else 2048
    x = rng.standard_normal((samples, 28, 28, 1)).astype(np.float32)
    model = keras.Sequential([layers.Conv2D(8, 3, activation="relu"), layers.MaxPooling2D(),
                              layers.Flatten(), layers.Dense(10)])
    shapes = [(3, 3, 1, 8), (8,), (1352, 10), (10,)]
# labels a random linear teacher gives, so that the loss falls and accuracy means something
y = np.argmax(x.reshape(samples, -1) @ rng.standard_normal((x[0].size, 10)), axis=1)
y = y.astype(np.int32)

def initial(shape):
    \"\"\"Glorot-uniform kernels (as Keras's), small uniform biases.\"\"\"
    if len(shape) == 1:
        return rng.uniform(-0.1, 0.1, shape).astype(np.float32)
    field = int(np.prod(shape[:-2]))
    limit = np.sqrt(6 / (field * (shape[-2] + shape[-1])))
    return rng.uniform(-limit, limit, shape).astype(np.float32)

weights = [initial(shape) for shape in shapes]
model(x[:1])  # builds the model in every system (tracer's Sequential.build does not)
assert [tuple(w.shape) for w in model.get_weights()] == shapes, model.get_weights()
model.set_weights(weights)
model.compile(optimizer=keras.optimizers.Adam(1e-3),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"], **{compile_options})

class Clock(keras.callbacks.Callback):
    \"\"\"Each epoch's seconds, and its loss (read before the clock stops: JAX dispatches
    asynchronously).\"\"\"
    def __init__(self):
        super().__init__()
        self.seconds, self.losses, self.accuracies = [], [], []
    def on_epoch_begin(self, epoch, logs=None):
        self.start = time.perf_counter()
    def on_epoch_end(self, epoch, logs=None):
        self.losses.append(float(logs["loss"]))
        self.seconds.append(time.perf_counter() - self.start)
        self.accuracies.append(float(logs["accuracy"]))

first, later = Clock(), Clock()
t2 = time.perf_counter()
model.fit(x, y, batch_size=BATCH, epochs=1, shuffle=False, verbose=0, callbacks=[first])
t3 = time.perf_counter()
model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, shuffle=False, verbose=0, callbacks=[later])
print(json.dumps({{"import_seconds": t1 - t0, "first_epoch_seconds": t3 - t2,
    "epochs_seconds": later.seconds,
    "epoch_seconds": sorted(later.seconds)[len(later.seconds) // 2],
    "losses": first.losses + later.losses, "accuracy": later.accuracies[-1],
    "steps": samples // BATCH, "load_average": os.getloadavg()[0]}}))
"""


def program(system, model, quick):
    prelude, _, options = SYSTEMS[system]
    return PROGRAM.format(
        prelude=prelude,
        quick=quick,
        model=model,
        epochs=QUICK_EPOCHS if quick else EPOCHS,
        batch=BATCH,
        compile_options=repr(options),
    )


def measure(system, model, quick):
    """One process: the system's fit on the model, with a compile cache of its own."""
    _, extra, _ = SYSTEMS[system]
    with tempfile.TemporaryDirectory(prefix="tracer-bench-cache-") as cache:
        env = environment(TRACER_CACHE_DIR=cache, TF_CPP_MIN_LOG_LEVEL="3", **extra)
        try:
            return run_program(program(system, model, quick), env, timeout=600)
        except subprocess.TimeoutExpired:
            return {"status": "failed", "detail": "timed out after 600 s"}


def fastest(measured):
    """The round with the fastest median epoch, with every round's median and first epoch;
    the last round when one was not ok (as run.py's `fastest`)."""
    if measured[-1]["status"] != "ok":
        return dict(measured[-1])
    kept = dict(min(measured, key=lambda r: r["epoch_seconds"]))
    kept["round_epoch_seconds"] = [r["epoch_seconds"] for r in measured]
    kept["round_first_epoch_seconds"] = [r["first_epoch_seconds"] for r in measured]
    return kept


def checked(row):
    """Each system's losses against tracer's: the first epoch's mean loss and the last's,
    relative differences; 'wrong' past TOLERANCE."""
    tracer = row["tracer"]
    if tracer["status"] != "ok":
        return row
    for system, result in row.items():
        if result["status"] != "ok" or system == "tracer":
            continue
        ours, theirs = tracer["losses"], result["losses"]
        differences = {
            "first": abs(theirs[0] - ours[0]) / abs(ours[0]),
            "last": abs(theirs[-1] - ours[-1]) / abs(ours[-1]),
        }
        result["loss_difference"] = differences
        if any(differences[k] > TOLERANCE[k] for k in TOLERANCE):
            result["status"] = "wrong"
            result["detail"] = (
                f"losses differ from tracer's by {differences['first']:.2g} (first epoch), "
                f"{differences['last']:.2g} (last)"
            )
    return row


def main():
    quick = "--quick" in sys.argv
    every_round = {model: {system: [] for system in SYSTEMS} for model in MODELS}
    start, rounds = time.perf_counter(), 0
    for number in range(1, (QUICK_ROUNDS if quick else ROUNDS) + 1):
        if time.perf_counter() - start > BUDGET_SECONDS:
            break
        print(f"B25 round {number} ...", file=sys.stderr, flush=True)
        rounds = number
        for model, row in every_round.items():
            for system, measured in row.items():
                if measured and measured[-1]["status"] != "ok":  # skipped or failed: once
                    continue
                measured.append(measure(system, model, quick))
    report = {
        model: checked({system: fastest(measured) for system, measured in row.items()})
        for model, row in every_round.items()
    }
    report["epochs"] = QUICK_EPOCHS if quick else EPOCHS
    report["rounds"] = rounds
    print(json.dumps(report))


if __name__ == "__main__":
    main()
