"""Train a Keras-style classifier with a compiled step, checkpointing as it goes.

    python3 examples/train_keras_style.py --dir /tmp/spirals --steps 300
    python3 examples/train_keras_style.py --dir /tmp/spirals --steps 600   # resumes at 300

A `tt.keras.Sequential` model (Dense, Dropout, Dense, Dense) learns three interleaved
spirals, generated here, with the training loop written out as in TensorFlow's guides: a
`tt.function` step with a tape and Adam, a checkpoint of the model and the optimizer every
`--every` steps, kept by a `tt.train.CheckpointManager`. Run again with the same directory,
it restores the latest checkpoint and carries on, with the numbers an uninterrupted run
gives: each step's batch is drawn from the step number, and the dropout masks and Adam's
moments are in the checkpoint.
"""

import argparse
import pathlib
import sys

import numpy as np

import tracer as tt

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from train_mlp import spirals

BATCH = 128


def build_model():
    return tt.keras.Sequential(
        [
            tt.keras.layers.Dense(64, activation="relu"),
            tt.keras.layers.Dropout(0.1, seed=1),
            tt.keras.layers.Dense(64, activation="relu"),
            tt.keras.layers.Dense(3),
        ]
    )


def train(directory, steps, every=100, seed=0):
    """Train until `steps` steps have run in all, from the latest checkpoint in `directory`;
    returns {step: (loss, accuracy)} of the steps it logged."""
    tt.random.set_seed(seed)
    features, labels = spirals(seed=seed)
    model = build_model()
    optimizer = tt.keras.optimizers.Adam(0.01)
    loss_fn = tt.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    checkpoint = tt.train.Checkpoint(model=model, optimizer=optimizer)
    manager = tt.train.CheckpointManager(checkpoint, directory, max_to_keep=3)
    if manager.restore_or_initialize():
        print(f"resumed from {manager.latest_checkpoint} at step {int(optimizer.iterations)}")

    @tt.function
    def train_step(x, y):
        with tt.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        hits = tt.equal(tt.argmax(logits, axis=1, output_type=tt.int32), y)
        return loss, tt.reduce_mean(tt.cast(hits, tt.float32))

    logged = {}
    for step in range(int(optimizer.iterations) + 1, steps + 1):
        batch = np.random.default_rng([seed, step]).integers(0, len(labels), BATCH)
        loss, accuracy = train_step(features[batch], labels[batch])
        if step % every == 0:
            path = manager.save()
            logged[step] = (float(loss), float(accuracy))
            print(f"step {step:4d}  loss {loss:.4f}  accuracy {accuracy:.1%}  saved {path}")
    predictions = tt.argmax(model(spirals(seed=seed + 1)[0]), axis=1, output_type=tt.int32)
    held_out = np.mean(predictions.numpy() == spirals(seed=seed + 1)[1])
    print(f"held-out accuracy {held_out:.1%}")
    return logged


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default="/tmp/tracer_keras_style", help="checkpoint directory")
    parser.add_argument("--steps", type=int, default=600, help="steps in all, resumed ones too")
    parser.add_argument("--every", type=int, default=100, help="steps between checkpoints")
    arguments = parser.parse_args()
    train(arguments.dir, arguments.steps, arguments.every)
