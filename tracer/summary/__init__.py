"""`tt.summary`: TensorBoard's event files, written by tracer alone, as TF 2's tf.summary.

    writer = tt.summary.create_file_writer("logs")
    with writer.as_default(step=0):
        tt.summary.scalar("loss", 0.5)
        tt.summary.histogram("weights", w)

    @tt.function
    def train_step(x):
        ...
        tt.summary.scalar("loss", loss, step=optimizer.iterations)  # at every call

The pieces, each in its module: records.py (framing and CRC32C), protobuf.py (the wire
format), events.py (the messages), png.py and wav.py (image and audio encoding), writer.py (writers, the default
writer and step), ops.py (the summary ops), graphs.py and tracing.py (trace_on/trace_export:
compiled functions' graphs, with their nodes' times). See docs/summary.md.
"""

from types import SimpleNamespace

from tracer.summary.ops import (
    audio,
    histogram,
    image,
    scalar,
    should_record_summaries,
    text,
)
from tracer.summary.tracing import trace_export, trace_off, trace_on
from tracer.summary.writer import (
    SummaryWriter,
    create_file_writer,
    create_noop_writer,
    flush,
    get_step,
    record_if,
    set_step,
)

experimental = SimpleNamespace(get_step=get_step, set_step=set_step)

__all__ = [
    "SummaryWriter",
    "audio",
    "create_file_writer",
    "create_noop_writer",
    "experimental",
    "flush",
    "histogram",
    "image",
    "record_if",
    "scalar",
    "should_record_summaries",
    "text",
    "trace_export",
    "trace_off",
    "trace_on",
]
