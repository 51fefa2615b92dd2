"""Where the time of the README's training step goes: the profiler's table by source line,
the one-page compile report, and a TensorBoard log with the step's graph and its nodes' times.

    python examples/profile_and_report.py [OUT_DIR]

writes OUT_DIR/train_step.html (open it in a browser), OUT_DIR/train_step.trace.json (open it
in Perfetto or chrome://tracing) and OUT_DIR/logs (`tensorboard --logdir OUT_DIR/logs`).
"""

import os
import sys
import tempfile

import numpy as np

import tracer as tt

model = tt.layers.Sequential([tt.layers.Dense(512, activation="relu"), tt.layers.Dense(10)])
optimizer = tt.optimizers.Adam(1e-3)


@tt.function(input_signature=[tt.TensorSpec([None, 784]), tt.TensorSpec([None], tt.int32)])
def train_step(x, y):
    with tt.GradientTape() as tape:
        loss = tt.reduce_mean(tt.nn.sparse_softmax_cross_entropy_with_logits(y, model(x)))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss  # (the README's step also prints the loss at each call)


def main(out):
    rng = np.random.default_rng(0)
    x_batch = rng.standard_normal((128, 784)).astype(np.float32)
    y_batch = rng.integers(0, 10, 128).astype(np.int32)
    train_step(x_batch, y_batch)  # traced and compiled before the profile

    with tt.profiler.profile() as prof:
        for _ in range(50):
            train_step(x_batch, y_batch)
    print(prof.table(by="line", top=5))
    prof.export_chrome_trace(os.path.join(out, "train_step.trace.json"))
    report = train_step.report(os.path.join(out, "train_step.html"), profile=prof)
    print(f"the compile report: {report}")

    writer = tt.summary.create_file_writer(os.path.join(out, "logs"))
    tt.summary.trace_on(graph=True, profiler=True)
    with writer.as_default(step=0):
        for step in range(10):
            loss = train_step(x_batch, y_batch)
            tt.summary.scalar("loss", loss, step=step)
        tt.summary.trace_export("train_step", step=0)
    print(f"the TensorBoard log: tensorboard --logdir {os.path.join(out, 'logs')}")


if __name__ == "__main__":
    directory = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="tracer-profile-")
    os.makedirs(directory, exist_ok=True)
    main(directory)
