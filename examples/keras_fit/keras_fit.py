"""Train a classifier with Keras's `fit` on a `tt.data` pipeline, then run it from C.

    python3 examples/keras_fit/keras_fit.py [BUILD_DIR]

Three interleaved spirals (examples/train_mlp.py makes them) feed a `tt.data.Dataset` that
shuffles and batches; a `tt.keras.Sequential` model is compiled with Adam, a loss and the
accuracy metric, and `fit` trains it (each step one compiled C call) with callbacks that
stop early and restore the best weights, lower the learning rate on a plateau and log each
epoch to a CSV file. The trained model's forward pass and its gradient are then exported
as standalone C (`tt.export_c`, weights frozen in), built with `make`, and called by
main.c, a C program that classifies points and prints the gradient of each point's winning
logit; the script checks the C program's numbers against tracer's.

BUILD_DIR (default: examples/keras_fit/build) receives the CSV log, the C files and the
program.
"""

import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np

import tracer as tt

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from train_mlp import spirals

keras = tt.keras


def train(build, epochs=60, seed=0):
    """The trained model and its History."""
    tt.random.set_seed(seed)
    np.random.seed(seed)
    features, labels = spirals(points_per_class=300, seed=seed)
    order = np.random.default_rng(seed).permutation(len(features))
    features, labels = features[order], labels[order]
    held_out = len(features) // 5
    training = (
        tt.data.Dataset.from_tensor_slices((features[held_out:], labels[held_out:]))
        .shuffle(1024, seed=seed)
        .batch(80)  # 720 points: 9 whole batches, so one compiled step serves them all
    )
    model = keras.Sequential(
        [
            keras.layers.Dense(64, activation="relu", input_shape=(2,)),
            keras.layers.Dense(64, activation="relu"),
            keras.layers.Dense(3),
        ]
    )
    model.compile(
        optimizer=keras.optimizers.Adam(0.01),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    model.summary()
    callbacks = [
        keras.callbacks.EarlyStopping(
            monitor="val_accuracy", patience=10, restore_best_weights=True
        ),
        keras.callbacks.ReduceLROnPlateau(monitor="val_loss", factor=0.5, patience=4),
        keras.callbacks.CSVLogger(os.path.join(build, "training.csv")),
    ]
    history = model.fit(
        training,
        epochs=epochs,
        validation_data=(features[:held_out], labels[:held_out]),
        validation_batch_size=90,
        callbacks=callbacks,
        verbose=2,
    )
    return model, history


def export_and_run(model, build, points):
    """(logits, gradients of the winning logits) that the C program prints for `points`."""

    def spirals_logits(x):
        return model(x)

    tt.export_c(
        spirals_logits,
        [tt.TensorSpec([None, 2], tt.float32)],
        build,
        prefix="spirals",
        variables="frozen",
        derivatives=("vjp",),
    )
    shutil.copy(pathlib.Path(__file__).with_name("main.c"), build)
    subprocess.run(["make", "-s"], cwd=build, check=True)
    cc = os.environ.get("CC", "cc")
    command = [cc, "-std=c99", "-O2", "main.c", "-L.", "-lspirals", "-lm", "-o", "classify"]
    subprocess.run(command, cwd=build, check=True)
    given = f"{len(points)}\n" + "\n".join(f"{a!r} {b!r}" for a, b in points.tolist())
    printed = subprocess.run(
        ["./classify"], cwd=build, input=given, capture_output=True, text=True, check=True
    ).stdout
    values = np.array([line.split() for line in printed.splitlines()], np.float64)
    return values[:, :3], values[:, 3:]


def tracers_answers(model, points):
    """The same numbers from tracer: the logits and, with a tape, each winning logit's
    gradient with respect to its point."""
    x = tt.constant(points)
    with tt.GradientTape() as tape:
        tape.watch(x)
        logits = model(x)
        winning = tt.reduce_max(logits, axis=1)
    return logits.numpy(), tape.gradient(winning, x).numpy()


def main(build):
    os.makedirs(build, exist_ok=True)
    model, history = train(build)
    accuracy = max(history.history["val_accuracy"])
    print(f"held-out accuracy {accuracy:.3f} after {len(history.epoch)} epochs")
    points = np.random.default_rng(1).uniform(-1, 1, (8, 2)).astype(np.float32)
    c_logits, c_gradients = export_and_run(model, build, points)
    logits, gradients = tracers_answers(model, points)
    np.testing.assert_allclose(c_logits, logits, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(c_gradients, gradients, rtol=1e-4, atol=1e-5)
    print(f"the C program agrees with tracer on {len(points)} points (logits and gradients)")
    return accuracy


if __name__ == "__main__":
    here = pathlib.Path(__file__).resolve().parent
    main(sys.argv[1] if len(sys.argv) > 1 else str(here / "build"))
