"""The summary ops: `scalar`, `histogram`, `text` and `image`, eagerly and in compiled code.

Each writes one event to the default writer at `step` (the default step when None), tagged
`name` under the current tt.name_scope ("scope/name"), and returns True, or returns False and writes nothing when there is no default writer or
`record_if`'s condition is false, as tf.summary's. Values are written in TensorFlow 2's forms
(a TensorProto and the plugin that shows it), so TensorBoard reads them as TensorFlow's.

While a `tt.function` is traced, a summary becomes a node that writes when it runs: at every
call, at every iteration of a loop, in the branch taken. It is a `print` node
(tracer/printing.py) whose call object writes an event instead of text: it reads the data,
the step and the condition where they are tensors or variables (so `optimizer.iterations`
is its value at that call), and keeps its place in program order through the print stream.
The writer is the one that was the default when the function was traced, as TensorFlow's.
"""

import functools

import numpy as np

from tracer import printing
from tracer.context import state as trace_state
from tracer.ir import user_location
from tracer.ops.core import apply
from tracer.summary import events, png, wav
from tracer.summary.writer import state
from tracer.tensor import TensorLike

DEFAULT_BUCKET_COUNT = 30
TENSOR = object()  # where a tensor stands in a SummaryCall's parts


class SummaryCall:
    """One summary op: where and how it writes, and its data, step and condition, each
    either a value known when it was called or TENSOR (then an input of the node)."""

    __slots__ = ("writer", "tag", "encode", "description", "parts", "location")

    def __init__(self, writer, tag, encode, description, parts):
        self.writer = writer
        self.tag = tag
        self.encode = encode  # numpy data -> (TensorProto bytes, plugin name[, its content])
        self.description = description
        self.parts = parts  # (data, step, condition)
        self.location = None  # the user's (file, line), when traced

    def write(self, values):
        """Write the event, with `values` (numpy arrays) in place of the tensors."""
        given = iter(values)
        data, step, condition = (next(given) if p is TENSOR else p for p in self.parts)
        if not bool(np.asarray(condition)):
            return
        tensor, plugin, *content = self.encode(np.asarray(data))
        summary = events.summary_value(self.tag, tensor, plugin, self.description, *content)
        self.writer.write(int(np.asarray(step)), summary)


def _summary(name, data, step, description, encode, check):
    """Write (eagerly) or add the node that writes (traced); True if something will be."""
    writer, condition = state.writer, condition_value()
    step = state.step if step is None else step
    if trace_state.trace is None:  # eagerly, every value is known now
        data, step, condition = (_value(p) for p in (data, step, condition))
    if writer is None or (not isinstance(condition, TensorLike) and not condition):
        return False
    if step is None:
        raise ValueError(
            "No step set: pass `step=` to the summary, or set a default one with "
            "tt.summary.experimental.set_step(step) or writer.as_default(step)"
        )
    check(_shape(data))
    parts = (data, step, condition)
    tensors = [p._read() for p in parts if isinstance(p, TensorLike)]
    call = SummaryCall(
        writer,
        trace_state.name_scope + name,  # ("outer/inner/" + name, as TensorFlow's tags)
        encode,
        description,
        tuple(TENSOR if isinstance(p, TensorLike) else p for p in parts),
    )
    if trace_state.trace is None:
        call.write([])
        return True
    call.location = user_location()
    trace_state.trace.check_print(printing.STREAM)
    stream = printing.STREAM
    stream.assign(apply(printing.PRINT, (stream._read(), *tensors), {"call": call}))
    return True


def condition_value():
    """record_if's condition, a callable called: a bool or a tensor."""
    condition = state.condition
    return condition() if callable(condition) else condition


def should_record_summaries():
    """Whether a summary written here now would be written: a default writer, and
    record_if's condition true (a tensor condition counts as true)."""
    condition = condition_value()
    return state.writer is not None and (isinstance(condition, TensorLike) or bool(condition))


def _value(value):
    return value.numpy() if isinstance(value, TensorLike) else value


def _shape(data):
    if isinstance(data, TensorLike):
        return tuple(data.shape)
    return np.shape(data)


# scalar


def scalar(name, data, step=None, description=None):
    """Write a scalar (cast to float32, as TensorFlow's), shown by TensorBoard's scalars
    dashboard.

    >>> import tempfile
    >>> from tracer.summary.writer import create_file_writer
    >>> with create_file_writer(tempfile.mkdtemp()).as_default(step=0):
    ...     scalar("loss", 0.5)
    True
    >>> scalar("loss", 0.5, step=1)  # no default writer
    False
    """
    return _summary(name, data, step, description, _scalar, _check_scalar)


def _check_scalar(shape):
    if tuple(shape) != ():
        raise ValueError(f"tt.summary.scalar takes a scalar, not a tensor of shape {list(shape)}")


def _scalar(data):
    return events.tensor_proto(np.asarray(data, np.float32)), "scalars"


# histogram


def histogram(name, data, step=None, buckets=None, description=None):
    """Write a histogram of `data` (any shape) in `buckets` (30 by default) equal buckets
    between its least and greatest values, as TensorFlow's: a float64 tensor [buckets, 3] of
    (left edge, right edge, count)."""
    count = DEFAULT_BUCKET_COUNT if buckets is None else int(buckets)
    encode = functools.partial(_histogram, bucket_count=count)
    return _summary(name, data, step, description, encode, lambda shape: None)


def histogram_buckets(data, bucket_count=DEFAULT_BUCKET_COUNT):
    """The [bucket_count, 3] float64 array of (left, right, count) of `data`'s values.

    Buckets split [min, max] in equal widths; a value goes to floor((x - min) / width), the
    maximum to the last bucket. No values (or no buckets): zeros. One distinct value: every
    bucket is [value, value], and the last holds the count.

    >>> histogram_buckets([0.0, 1.0, 1.0, 3.0], 3)[:, 2]
    array([1., 2., 1.])
    """
    data = np.asarray(data, np.float64).reshape(-1)
    bucket_count = max(0, bucket_count)
    if data.size == 0 or bucket_count == 0:
        return np.zeros((bucket_count, 3))
    if not np.isfinite(data).all():
        raise ValueError("tt.summary.histogram of values that are not all finite")
    low, high = data.min(), data.max()
    counts = np.zeros(bucket_count)
    if low == high:
        counts[-1] = data.size
        return np.stack([np.full(bucket_count, low), np.full(bucket_count, high), counts], 1)
    width = (high - low) / bucket_count
    index = np.minimum(np.floor((data - low) / width).astype(np.int64), bucket_count - 1)
    counts += np.bincount(index, minlength=bucket_count)
    edges = np.linspace(low, high, bucket_count + 1)
    edges[-1] = high
    return np.stack([edges[:-1], edges[1:], counts], 1)


def _histogram(data, bucket_count):
    return events.tensor_proto(histogram_buckets(data, bucket_count)), "histograms"


# text


def text(name, data, step=None, description=None):
    """Write a string, or an array of strings (Python values: tracer has no string tensors),
    shown by TensorBoard's text dashboard (as Markdown)."""
    if isinstance(data, TensorLike):
        raise TypeError("tt.summary.text takes Python strings (or lists of them), not tensors")
    return _summary(name, data, step, description, _text, lambda shape: None)


def _text(data):
    strings = [
        s if isinstance(s, bytes) else str(s).encode("utf-8") for s in data.reshape(-1).tolist()
    ]
    return events.string_tensor_proto(strings, data.shape), "text"


# image


def image(name, data, step=None, max_outputs=3, description=None):
    """Write up to `max_outputs` images of `data` [k, height, width, channels] (channels 1 to
    4: gray, gray and alpha, RGB, RGBA), uint8 or floats in [0, 1], encoded as PNG by
    tracer.summary.png; shown by TensorBoard's images dashboard."""
    encode = functools.partial(_image, max_outputs=max(0, int(max_outputs)))
    return _summary(name, data, step, description, encode, _check_image)


def _check_image(shape):
    if len(shape) != 4 or shape[3] not in (1, 2, 3, 4):
        raise ValueError(
            "tt.summary.image takes images [k, height, width, channels] with 1 to 4 channels, "
            f"not a tensor of shape {list(shape)}"
        )


def _image(data, max_outputs):
    images = data[:max_outputs]
    if images.dtype.kind == "f":
        # as TensorFlow's convert_image_dtype (saturating): scaled by 255.5, cut to [0, 255]
        scaled = np.asarray(images * images.dtype.type(255.5), images.dtype)
        images = np.clip(scaled, 0, 255).astype(np.uint8)
    elif images.dtype != np.uint8:
        raise TypeError(f"tt.summary.image takes uint8 or float images, not {images.dtype}")
    height, width = data.shape[1:3]
    strings = [str(width).encode(), str(height).encode(), *(png.encode(i) for i in images)]
    return events.string_tensor_proto(strings, (len(strings),)), "images"


# audio


def audio(name, data, sample_rate, step=None, max_outputs=3, encoding=None, description=None):
    """Write up to `max_outputs` clips of `data` [k, frames, channels], floats in [-1, 1],
    at `sample_rate` Hz (a number), encoded as 16-bit WAV as TensorFlow's encode_wav
    encodes them; shown by TensorBoard's audio dashboard."""
    if encoding not in (None, "wav"):
        raise ValueError(f"Unknown encoding: {encoding!r} (tt.summary.audio writes 'wav')")
    rate = _value(sample_rate)
    if isinstance(rate, TensorLike) or np.ndim(rate) != 0 or not float(rate) > 0:
        raise ValueError(
            f"tt.summary.audio: sample_rate must be a positive number known when the function "
            f"is traced, got {sample_rate!r}"
        )
    encode = functools.partial(_audio, sample_rate=int(rate), max_outputs=max(0, int(max_outputs)))
    return _summary(name, data, step, description, encode, _check_audio)


# the audio plugin's content: AudioPluginData with encoding WAV (11)
AUDIO_PLUGIN_CONTENT = b"\x10\x0b"


def _check_audio(shape):
    if len(shape) != 3:
        raise ValueError(
            "tt.summary.audio takes clips [k, frames, channels], not a tensor of shape "
            f"{list(shape)}"
        )


def _audio(data, sample_rate, max_outputs):
    clips = [wav.encode(clip, sample_rate) for clip in data[:max_outputs]]
    strings = [part for clip in clips for part in (clip, b"")]  # each clip, and its label
    return events.string_tensor_proto(strings, (len(clips), 2)), "audio", AUDIO_PLUGIN_CONTENT


def keras_model(name, config, step=None):
    """Write a Keras model's config (a JSON string) as Keras's TensorBoard callback does with
    write_graph, for TensorBoard's graph dashboard (eagerly only)."""
    encode = functools.partial(_keras_model, config=config.encode("utf-8"))
    return _summary(name, 0, step, None, encode, lambda shape: None)


def _keras_model(data, config):
    return events.string_tensor_proto([config], ()), "graph_keras_model", b"1"
