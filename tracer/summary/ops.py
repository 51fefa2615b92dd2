"""The summary ops: `scalar`, `histogram`, `text` and `image`, eagerly and in compiled code.

Each writes one event to the default writer at `step` (the default step when None), tagged
`name` under the current tt.name_scope ("scope/name"; an empty name is the kind's default,
"scalar_summary", ...), and returns True, or returns False and writes nothing when there is no
default writer or `record_if`'s condition is false, as tf.summary's. Values are written in TensorFlow 2's forms
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
from tracer.tensor import TensorLike, convert_to_tensor

DEFAULT_BUCKET_COUNT = 30
TENSOR = object()  # where a tensor stands in a SummaryCall's parts
INT32_MIN = -(2**31)
INT64_MAX = 2**63 - 1


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
        self.writer.write(int(np.asarray(step).reshape(())), summary)


def _summary(name, data, step, description, encode, check, default_name):
    """Write (eagerly) or add the node that writes (traced). Returns True if something will
    be written, False if nothing will, or (traced, under a tensor `record_if`) that tensor."""
    if step is not None:  # TF converts a given step to int64 even when nothing is written
        _check_step(step)
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
    _check_step(step)
    check(_shape(data))
    parts = (data, step, condition)
    tensors = [p._read() for p in parts if isinstance(p, TensorLike)]
    call = SummaryCall(
        writer,
        # "outer/inner/" + name, as TensorFlow's tags; an empty name is the kind's default
        trace_state.name_scope + (name or default_name),
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
    if isinstance(condition, TensorLike):
        # as tf.summary's cond: a boolean tensor, true at the calls that write
        return _traced_condition(condition)
    return True


def _traced_condition(condition):
    condition = condition._read()
    if not condition.dtype.is_bool:
        raise TypeError(
            f"record_if's condition must be a boolean tensor, not one of dtype "
            f"{condition.dtype.name}"
        )
    return condition


def _check_step(step):
    """Refuse a step TensorFlow cannot convert to an int64 scalar: Python floats (even 7.0)
    and strings raise TypeError, non-integer tensors and sizes other than one ValueError.
    numpy floats pass, and are cut toward zero when written, as TF casts them.

    >>> _check_step(7.9)
    Traceback (most recent call last):
    TypeError: Cannot convert 7.9 to an int64 step: a summary's step is an integer
    """
    if isinstance(step, TensorLike):
        if not step.dtype.is_integer:
            raise ValueError(
                f"a summary's step must be an integer tensor, not one of dtype {step.dtype.name}"
            )
        size = int(np.prod(tuple(step.shape)))
    else:
        array = np.asarray(step)
        numpy_value = isinstance(step, (np.ndarray, np.generic))
        if array.dtype.kind not in ("iub" + ("f" if numpy_value else "")):
            raise TypeError(
                f"Cannot convert {step!r} to an int64 step: a summary's step is an integer"
            )
        if array.dtype.kind == "u" and array.size and array.max() > INT64_MAX:
            raise ValueError(f"the step {step!r} is out of the int64 range")
        size = array.size
    if size != 1:
        raise ValueError(f"a summary's step must be a scalar, got {step!r}")


def condition_value():
    """record_if's condition, a callable called: a bool or a tensor."""
    condition = state.condition
    return condition() if callable(condition) else condition


def should_record_summaries():
    """Whether a summary written here now would be written: a default writer, and
    record_if's condition true. Eagerly a bool; in a traced function, under a tensor
    condition, that boolean tensor (as TensorFlow's, whose result is always a tensor)."""
    condition = condition_value()
    if state.writer is None:
        return False
    if isinstance(condition, TensorLike):
        if trace_state.trace is None:
            return bool(condition.numpy())
        return _traced_condition(condition)
    return bool(condition)


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
    return _summary(name, data, step, description, _scalar, _check_scalar, "scalar_summary")


def _check_scalar(shape):
    if tuple(shape) != ():
        raise ValueError(f"tt.summary.scalar takes a scalar, not a tensor of shape {list(shape)}")


def _scalar(data):
    return events.tensor_proto(np.asarray(data, np.float32)), "scalars"


# histogram


def histogram(name, data, step=None, buckets=None, description=None):
    """Write a histogram of `data` (any shape) in `buckets` (30 by default) equal buckets
    between its least and greatest values, as TensorFlow's: a float64 tensor [buckets, 3] of
    (left edge, right edge, count). Python values are float32 first, as TF converts them."""
    count = DEFAULT_BUCKET_COUNT if buckets is None else int(buckets)
    if not isinstance(data, (TensorLike, np.ndarray, np.generic)):
        data = convert_to_tensor(data)
    encode = functools.partial(_histogram, bucket_count=count)
    return _summary(name, data, step, description, encode, lambda shape: None, "histogram_summary")


def histogram_buckets(data, bucket_count=DEFAULT_BUCKET_COUNT):
    """The [bucket_count, 3] float64 array of (left, right, count) of `data`'s values, as
    TensorBoard's histogram computes it with TensorFlow's CPU kernels.

    Buckets split [min, max] in equal widths; a value goes to floor((x - min) / width), the
    maximum to the last bucket. No values (or no buckets): zeros. One distinct value: every
    bucket is [value, value], and the last holds the count.

    Values that are not finite are taken as TensorFlow takes them, not refused. The least and
    greatest values are NaN when one is, and then every edge is NaN and every count 0. A
    value whose bucket is not a number or overflows int32 (TF's cast makes it INT32_MIN, and
    its one-hot row is zeros) is not counted: with an infinite value, or a range that
    overflows to inf (-1e308 and 1e308), the width is inf, so the values at the top of the
    range (inf / inf) are left out. Subnormal numbers are zero, as TF's kernels run with
    denormals flushed to zero.

    >>> histogram_buckets([0.0, 1.0, 1.0, 3.0], 3)[:, 2]
    array([1., 2., 1.])
    >>> histogram_buckets([1.0, np.inf], 2).tolist()
    [[1.0, inf, 1.0], [inf, inf, 0.0]]
    """
    data = np.asarray(data, np.float64).reshape(-1)
    bucket_count = max(0, bucket_count)
    if data.size == 0 or bucket_count == 0:
        return np.zeros((bucket_count, 3))
    with np.errstate(all="ignore"):  # inf - inf, inf / inf: NaN, as in TF
        data = _flush(data)
        low, high = data.min(), data.max()  # NaN when one is, as tf.reduce_min/max
        width = _flush(_flush(high - low) / bucket_count)
        counts = np.zeros(bucket_count)
        if _flush(high - low) == 0:
            counts[-1] = data.size
            return np.stack([np.full(bucket_count, high), np.full(bucket_count, high), counts], 1)
        index = np.minimum(_int32(np.floor(_flush(_flush(data - low) / width))), bucket_count - 1)
        counts += np.bincount(index[index >= 0], minlength=bucket_count)
        # tf.linspace(low, high, bucket_count + 1), its last edge set to high
        steps = _flush(width * np.arange(1, bucket_count, dtype=np.float64))
        edges = np.concatenate([[low], _flush(low + steps), [high]])
    return np.stack([edges[:-1], edges[1:], counts], 1)


def _flush(x):
    """`x` with subnormal numbers zero (sign kept): TF's CPU kernels run with denormals
    flushed to zero, so its histograms see them as zero."""
    return np.where(np.abs(x) < np.finfo(np.float64).tiny, np.copysign(0.0, x), x)


def _int32(x):
    """float64 to int32 as TensorFlow's CPU cast does (x86's conversion): NaN and values out
    of the int32 range become INT32_MIN."""
    inside = (x >= INT32_MIN) & (x < 2**31)  # false for NaN
    return np.where(inside, x, INT32_MIN).astype(np.int64)


def _histogram(data, bucket_count):
    return events.tensor_proto(histogram_buckets(data, bucket_count)), "histograms"


# text


def text(name, data, step=None, description=None):
    """Write a string, or an array of strings (Python values: tracer has no string tensors),
    shown by TensorBoard's text dashboard (as Markdown)."""
    if isinstance(data, TensorLike):
        raise TypeError("tt.summary.text takes Python strings (or lists of them), not tensors")
    _check_text(data)
    return _summary(name, data, step, description, _text, lambda shape: None, "text_summary")


def _check_text(data):
    """Refuse what TensorFlow's text refuses, written or not: values that are not strings
    (TypeError, as its assert_type: `5`, `[1, 2]`, `[]`), and strings mixed with other values
    (ValueError, as its conversion)."""
    if isinstance(data, np.ndarray) and data.dtype.kind in "US":
        return
    leaves = data.reshape(-1).tolist() if isinstance(data, np.ndarray) else list(_leaves(data))
    strings = [isinstance(leaf, (str, bytes)) for leaf in leaves]
    if leaves and all(strings):
        return
    if any(strings):
        raise ValueError(f"tt.summary.text: {data!r} mixes strings with other values")
    raise TypeError(
        f"tt.summary.text takes strings (str or bytes, or nested lists of them), not {data!r}"
    )


def _leaves(value):
    if not isinstance(value, (list, tuple)):
        yield value
        return
    for item in value:
        yield from _leaves(item)


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
    return _summary(name, data, step, description, encode, _check_image, "image_summary")


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
    return _summary(name, data, step, description, encode, _check_audio, "audio_summary")


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
    return _summary(name, 0, step, None, encode, lambda shape: None, "keras")


def _keras_model(data, config):
    return events.string_tensor_proto([config], ()), "graph_keras_model", b"1"
