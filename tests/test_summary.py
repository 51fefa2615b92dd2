"""tt.summary and the Keras TensorBoard callback: event files read back with TensorBoard's own
reader, bytes compared with a file TensorFlow 2.21 wrote for the same inputs
(tests/data/summary/README.md), summaries inside compiled functions written at each call.
TensorBoard (the `tensorboard` package, in the test extra) is the reader; TensorFlow is not
needed."""

import doctest
import gc
import glob
import os
import pathlib
import warnings

import numpy as np
import pytest
from tensorboard.backend.event_processing import event_accumulator, event_file_loader
from tensorboard.util import tensor_util

import tracer as tt
import tracer.summary as summary
from tracer.keras import callbacks as cb
from tracer.keras.callbacks import tensorboard as tensorboard_callback
from tracer.summary import ops, png, protobuf, records, writer

TF_FILE = pathlib.Path(__file__).parent / "data" / "summary" / "tf_summaries.v2"


def _event_file(logdir):
    (path,) = glob.glob(os.path.join(logdir, "events.out.tfevents.*"))
    return path


def _events(logdir):
    """The events of the one event file in `logdir`, as TensorBoard reads them (its CRCs
    checked), after the file-version event."""
    loaded = list(event_file_loader.EventFileLoader(_event_file(logdir)).Load())
    assert loaded[0].file_version == "brain.Event:2"
    return loaded[1:]


def _values(logdir):
    """[(step, tag, plugin, tensor)] of the file in `logdir`."""
    return [
        (e.step, v.tag, v.metadata.plugin_data.plugin_name, v.tensor)
        for e in _events(logdir)
        for v in e.summary.value
    ]


def _array(tensor):
    return tensor_util.make_ndarray(tensor)


# records and the CRC


def test_crc32c_check_value_and_masking():
    assert records.crc32c(b"123456789") == 0xE3069283  # the catalogued check value
    assert records.crc32c(b"") == 0
    masked = records.masked_crc32c(b"123456789")
    assert masked == ((0xE3069283 >> 15 | 0xE3069283 << 17) + 0xA282EAD8) & 0xFFFFFFFF


def test_framing_equals_tensorflow_records():
    """Each record of TensorFlow's file, framed again here, gives its bytes back."""
    raw = TF_FILE.read_bytes()
    data = records.read_records(raw)
    assert len(data) == 13
    assert b"".join(records.frame(d) for d in data) == raw


def test_damaged_record_is_refused():
    raw = bytearray(TF_FILE.read_bytes())
    raw[40] ^= 1
    with pytest.raises(ValueError, match="bad"):
        records.read_records(bytes(raw))


def test_protobuf_leaves_defaults_out():
    assert protobuf.varint(300) == b"\xac\x02"
    assert protobuf.varint(-1) == b"\xff" * 9 + b"\x01"
    assert protobuf.varint_field(2, 0) == b""
    assert protobuf.message_field(2, b"") == b"\x12\x00"


# the same bytes as TensorFlow's


def _write_as_in_tf_file(logdir):
    """What tests/data/summary/make_tf_summaries.py wrote with tf.summary, with tt.summary."""
    with summary.create_file_writer(logdir).as_default(step=3):
        results = [
            summary.scalar("loss", 0.5),
            summary.scalar("loss", np.float64(1.25), step=0, description="at step 0"),
            summary.scalar("count", 4, step=1),
            summary.histogram("h", [1.0, 2.0, 2.0, 3.0, 10.0], step=2),
            summary.histogram("h3", [1.0, 2.0, 2.0, 3.0, 10.0], step=2, buckets=3),
            summary.histogram("empty", np.zeros([0]), step=2, buckets=2),
            summary.histogram("constant", np.ones([4]), step=2, buckets=2),
            summary.histogram("ints", np.array([1, 5, 9]), step=2, buckets=4),
            summary.text("t", "hello", step=4),
            summary.text("t2", ["a", "bc"], step=4),
            summary.image(
                "rgb", np.arange(72, dtype=np.uint8).reshape(2, 3, 4, 3), step=5, max_outputs=1
            ),
            summary.image(
                "gray_alpha", np.linspace(0, 1, 12, dtype=np.float32).reshape(1, 2, 3, 2), step=5
            ),
        ]
    assert results == [True] * 12


def test_events_equal_tensorflows_but_for_wall_time(tmp_path):
    _write_as_in_tf_file(tmp_path)
    ours = records.read_records(pathlib.Path(_event_file(tmp_path)).read_bytes())
    theirs = records.read_records(TF_FILE.read_bytes())
    assert len(ours) == len(theirs)
    for k, (a, b) in enumerate(zip(ours[1:], theirs[1:], strict=True), start=1):
        assert a[:1] == b[:1] == b"\x09"  # wall_time, a double, comes first
        assert a[9:] == b[9:], f"event {k}"
    # the first event: the same file version; the writer names tracer, not TensorFlow
    version = protobuf.string_field(3, "brain.Event:2")
    assert ours[0][9:] == version + protobuf.message_field(
        10, protobuf.string_field(1, "tracer.summary")
    )
    assert theirs[0][9:].startswith(version)


def test_png_equals_libpngs_and_decodes_back():
    """The PNGs TensorFlow wrote (libpng) are the ones png.encode writes."""
    theirs = [v for v in _tf_values() if v[2] == "images"]
    pixels = np.arange(72, dtype=np.uint8).reshape(2, 3, 4, 3)[0]
    assert theirs[0][3].string_val[2] == png.encode(pixels)
    assert (png.decode(png.encode(pixels)) == pixels).all()
    rng = np.random.default_rng(0)
    for shape in [(5, 7, 1), (9, 3, 4), (40, 50, 3)]:
        image = rng.integers(0, 256, shape, dtype=np.uint8)
        image[::3] = 7  # some flat rows, where other filters win
        assert (png.decode(png.encode(image)) == image).all()


def _tf_values():
    loaded = list(event_file_loader.EventFileLoader(str(TF_FILE)).Load())
    return [
        (e.step, v.tag, v.metadata.plugin_data.plugin_name, v.tensor)
        for e in loaded[1:]
        for v in e.summary.value
    ]


# read back with TensorBoard's reader


def test_values_read_back(tmp_path):
    _write_as_in_tf_file(tmp_path)
    values = _values(tmp_path)
    assert [(s, t, p) for s, t, p, _ in values] == [
        (3, "loss", "scalars"),
        (0, "loss", "scalars"),
        (1, "count", "scalars"),
        *[(2, tag, "histograms") for tag in ("h", "h3", "empty", "constant", "ints")],
        (4, "t", "text"),
        (4, "t2", "text"),
        (5, "rgb", "images"),
        (5, "gray_alpha", "images"),
    ]
    tensors = {(s, t): tensor for s, t, _, tensor in values}
    assert _array(tensors[3, "loss"]) == np.float32(0.5)
    assert _array(tensors[0, "loss"]) == np.float32(1.25)
    h3 = _array(tensors[2, "h3"])
    assert h3.dtype == np.float64 and h3.shape == (3, 3)
    assert h3[:, 2].tolist() == [4.0, 0.0, 1.0]  # 1, 2, 2, 3 | - | 10
    assert h3[0, 0] == 1.0 and h3[-1, 1] == 10.0
    h = _array(tensors[2, "h"])
    assert h.shape == (30, 3) and h[:, 2].sum() == 5
    assert (h[1:, 0] == h[:-1, 1]).all()  # buckets meet
    assert _array(tensors[2, "empty"]).tolist() == [[0.0] * 3] * 2
    assert _array(tensors[2, "constant"]).tolist() == [[1.0, 1.0, 0.0], [1.0, 1.0, 4.0]]
    assert _array(tensors[4, "t"]) == b"hello"
    assert _array(tensors[4, "t2"]).tolist() == [b"a", b"bc"]
    rgb = tensors[5, "rgb"].string_val
    assert rgb[:2] == [b"4", b"3"] and len(rgb) == 3
    assert (png.decode(rgb[2]) == np.arange(36, dtype=np.uint8).reshape(3, 4, 3)).all()
    gray = png.decode(tensors[5, "gray_alpha"].string_val[2])
    expected = np.linspace(0, 1, 12, dtype=np.float32).reshape(2, 3, 2) * np.float32(255.5)
    assert (gray == expected.astype(np.uint8)).all()


def test_event_accumulator_sees_scalars(tmp_path):
    with summary.create_file_writer(tmp_path).as_default():
        for step in range(4):
            summary.scalar("loss", 1.0 / (step + 1), step=step)
    accumulator = event_accumulator.EventAccumulator(str(tmp_path))
    accumulator.Reload()
    assert accumulator.Tags()["tensors"] == ["loss"]
    got = [(e.step, float(_array(e.tensor_proto))) for e in accumulator.Tensors("loss")]
    assert got == [(s, float(np.float32(1.0 / (s + 1)))) for s in range(4)]


def test_histogram_buckets_hold_every_value():
    data = np.random.default_rng(1).normal(size=1000)
    buckets = ops.histogram_buckets(data, 7)
    assert buckets.shape == (7, 3) and buckets[:, 2].sum() == 1000
    assert buckets[0, 0] == data.min() and buckets[-1, 1] == data.max()
    inside = [((data >= lo) & (data < hi)).sum() for lo, hi, _ in buckets[:-1]]
    assert buckets[:-1, 2].tolist() == inside


# compiled functions


@pytest.mark.parametrize("jit_compile", [True, False])
def test_summary_in_compiled_loop_writes_at_each_iteration(tmp_path, jit_compile):
    """A scalar in a `for i in tt.range(n)` loop of a tt.function: n events per call, each
    with the values and the step (a variable) of its iteration, tagged in the loop's name
    scope as TF tags it; none at trace time."""
    step = tt.Variable(np.int64(10), trainable=False)

    @tt.function(jit_compile=jit_compile)
    def run(x, n):
        for i in tt.range(n):
            summary.scalar("x", x * tt.cast(i, tt.float32), step=step)
            step.assign_add(1)
        summary.histogram("hx", x * tt.ones([3]), step=step, buckets=2)
        return x + 1.0

    logdir = tmp_path / "compiled"
    with summary.create_file_writer(logdir).as_default():
        run(tt.constant(2.0), tt.constant(3))
        assert run.experimental_get_tracing_count() == 1
        run(tt.constant(3.0), tt.constant(2))
    got = [(s, t, _array(tensor).tolist()) for s, t, _, tensor in _values(logdir)]
    assert got == [
        (10, "while/x", 0.0),
        (11, "while/x", 2.0),
        (12, "while/x", 4.0),
        (13, "hx", [[2.0, 2.0, 0.0], [2.0, 2.0, 3.0]]),
        (13, "while/x", 0.0),
        (14, "while/x", 3.0),
        (15, "hx", [[3.0, 3.0, 0.0], [3.0, 3.0, 3.0]]),
    ]


def test_default_step_variable_is_read_at_each_call(tmp_path):
    iterations = tt.Variable(np.int64(0), trainable=False)

    @tt.function(jit_compile=True)
    def train_step(x):
        summary.scalar("x", tt.reduce_sum(x))
        iterations.assign_add(1)

    summary.experimental.set_step(iterations)
    try:
        with summary.create_file_writer(tmp_path).as_default():
            for k in range(3):
                train_step(tt.constant([1.0, float(k)]))
    finally:
        summary.experimental.set_step(None)
    assert [(s, float(_array(t))) for s, _, _, t in _values(tmp_path)] == [
        (0, 1.0),
        (1, 2.0),
        (2, 3.0),
    ]


def test_record_if_with_a_tensor_condition_in_a_compiled_function(tmp_path):
    @tt.function(jit_compile=True)
    def run(x, keep):
        with summary.record_if(keep):
            summary.scalar("x", x, step=1)

    with summary.create_file_writer(tmp_path).as_default():
        run(tt.constant(1.0), tt.constant(True))
        run(tt.constant(2.0), tt.constant(False))
        run(tt.constant(3.0), tt.constant(True))
    assert [float(_array(t)) for *_, t in _values(tmp_path)] == [1.0, 3.0]


# no writer, record_if, writers


def test_no_default_writer_writes_nothing(tmp_path):
    made = summary.create_file_writer(tmp_path)
    assert summary.scalar("x", 1.0, step=0) is False
    assert summary.histogram("h", [1.0], step=0) is False
    assert summary.get_step() is None

    @tt.function
    def run(x):
        summary.scalar("x", x, step=0)
        return x

    run(tt.constant(1.0))
    made.close()
    assert _events(tmp_path) == []


def test_record_if_false_and_noop_writer(tmp_path):
    with summary.create_file_writer(tmp_path).as_default(step=1):
        with summary.record_if(False):
            assert summary.scalar("hidden", 1.0) is False
            assert summary.should_record_summaries() is False
        with summary.record_if(lambda: True):
            assert summary.scalar("shown", 2.0) is True
        with summary.record_if(tt.constant(False)):
            assert summary.scalar("hidden", 3.0) is False
    assert [t for _, t, _, _ in _values(tmp_path)] == ["shown"]
    with summary.create_noop_writer().as_default(step=0):
        assert summary.scalar("x", 1.0) is True


def test_step_is_required():
    with summary.create_noop_writer().as_default():
        with pytest.raises(ValueError, match="No step set"):
            summary.scalar("x", 1.0)


def test_tags_take_the_name_scope(tmp_path):
    @tt.function
    def run(x):
        with tt.name_scope("inner"):
            summary.scalar("y", x, step=1)

    with summary.create_file_writer(tmp_path).as_default(step=0):
        with tt.name_scope("outer"):
            summary.scalar("x", 1.0)
        run(tt.constant(2.0))
    assert [t for _, t, _, _ in _values(tmp_path)] == ["outer/x", "inner/y"]


def test_as_default_nests_and_restores(tmp_path):
    first = summary.create_file_writer(tmp_path / "a")
    second = summary.create_file_writer(tmp_path / "b")
    with first.as_default(step=1):
        with second.as_default(step=2):
            summary.scalar("inner", 1.0)
        summary.scalar("outer", 1.0)
    assert writer.state.writer is None and summary.experimental.get_step() is None
    assert [(s, t) for s, t, _, _ in _values(tmp_path / "a")] == [(1, "outer")]
    assert [(s, t) for s, t, _, _ in _values(tmp_path / "b")] == [(2, "inner")]


def test_queue_is_written_on_flush_and_close(tmp_path):
    made = summary.create_file_writer(tmp_path, max_queue=100, filename_suffix=".mine")
    assert made.path.endswith(".mine")
    made.set_as_default(step=0)
    try:
        summary.scalar("x", 1.0)
        assert _events(tmp_path) == []  # queued
        summary.flush()
        assert len(_events(tmp_path)) == 1
        summary.scalar("x", 2.0)
        made.close()
        assert len(_events(tmp_path)) == 2
        with pytest.raises(RuntimeError, match="closed"):
            summary.scalar("x", 3.0)
    finally:
        writer.state.writer = None
        writer.state.step = None


def test_dropped_writer_writes_its_queue(tmp_path):
    made = summary.create_file_writer(tmp_path, max_queue=100)
    made.write(7, b"")  # an event with an empty summary
    assert _events(tmp_path) == []
    del made
    gc.collect()
    assert [e.step for e in _events(tmp_path)] == [7]


def test_file_name_and_logdir_escape(tmp_path):
    made = summary.create_file_writer(tmp_path / "run")
    made.close()
    name = os.path.basename(made.path).split(".")
    assert name[:3] == ["events", "out", "tfevents"] and name[-1] == "v2"
    assert name[3].isdigit() and name[-3] == str(os.getpid()) and name[-2].isdigit()
    for suffix in ["/../../escaped", "x/y", os.sep + "z"]:
        with pytest.raises(ValueError, match="path separator"):
            summary.create_file_writer(tmp_path / "other", filename_suffix=suffix)
    assert sorted(os.listdir(tmp_path)) == ["run"]


def test_bad_inputs_are_refused():
    with summary.create_noop_writer().as_default(step=0):
        with pytest.raises(ValueError, match="scalar"):
            summary.scalar("x", [1.0, 2.0])
        with pytest.raises(ValueError, match="channels"):
            summary.image("x", np.zeros((2, 2, 3), np.uint8))
        with pytest.raises(TypeError, match="Python strings"):
            summary.text("x", tt.constant(1.0))


# the Keras callback


def _fit(logdir, **options):
    keras = tt.keras
    model = keras.Sequential(
        [
            keras.Input((3,)),
            keras.layers.Dense(4, activation="relu", name="d1"),
            keras.layers.Dense(1, name="d2"),
        ],
        name="net",
    )
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse", metrics=["mae"])
    x = np.random.default_rng(0).random((10, 3), np.float32)
    y = np.random.default_rng(1).random((10, 1), np.float32)
    history = model.fit(
        x, y, batch_size=4, epochs=2, validation_data=(x[:4], y[:4]), verbose=0,
        callbacks=[cb.TensorBoard(logdir, **options)],
    )  # fmt: skip
    return history.history


def test_tensorboard_callback_writes_kerass_layout(tmp_path):
    """Tags and steps as Keras 3.15's TensorBoard callback writes them for the same fit."""
    history = _fit(tmp_path, histogram_freq=1)
    assert sorted(os.listdir(tmp_path)) == ["train", "validation"]
    weights = [f"net/{w}/histogram" for w in ("d1/kernel", "d1/bias", "d2/kernel", "d2/bias")]
    train = [(s, t) for s, t, _, _ in _values(tmp_path / "train")]
    assert train == [(0, "keras")] + [  # write_graph=True by default, as in Keras
        (epoch, tag)
        for epoch in (0, 1)
        for tag in ["epoch_loss", "epoch_mae", "epoch_learning_rate", *weights]
    ]
    validation = [(s, t) for s, t, _, _ in _values(tmp_path / "validation")]
    assert validation == [
        (3, "evaluation_loss_vs_iterations"),
        (3, "evaluation_mae_vs_iterations"),
        (0, "epoch_loss"),
        (0, "epoch_mae"),
        (6, "evaluation_loss_vs_iterations"),
        (6, "evaluation_mae_vs_iterations"),
        (1, "epoch_loss"),
        (1, "epoch_mae"),
    ]
    values = {(s, t): _array(tensor) for s, t, _, tensor in _values(tmp_path / "train")}
    assert values[1, "epoch_loss"] == np.float32(history["loss"][1])
    assert values[0, "epoch_learning_rate"] == np.float32(0.1)
    assert values[0, weights[0]][:, 2].sum() == 12  # a 3x4 kernel
    val = {(s, t): _array(tensor) for s, t, _, tensor in _values(tmp_path / "validation")}
    assert val[1, "epoch_mae"] == np.float32(history["val_mae"][1])


def test_tensorboard_callback_batch_updates(tmp_path):
    """update_freq=2: batch summaries at global batches 2, 4, 6; as in Keras, the first
    epoch's results (3 batches in) and its validation (1 batch) are held back."""
    _fit(tmp_path, update_freq=2)
    train = [(s, t) for s, t, _, _ in _values(tmp_path / "train")]
    assert train == [
        (0, "keras"),
        (2, "batch_loss"),
        (2, "batch_mae"),
        (4, "batch_loss"),
        (4, "batch_mae"),
        (6, "batch_loss"),
        (6, "batch_mae"),
        (1, "epoch_loss"),
        (1, "epoch_mae"),
        (1, "epoch_learning_rate"),
    ]
    validation = [(s, t) for s, t, _, _ in _values(tmp_path / "validation")]
    assert validation == [
        (6, "evaluation_loss_vs_iterations"),
        (6, "evaluation_mae_vs_iterations"),
        (1, "epoch_loss"),
        (1, "epoch_mae"),
    ]
    assert writer.state.writer is None  # the callback's writers are no longer the default


def test_tensorboard_callback_graph_and_images(tmp_path):
    _fit(tmp_path, histogram_freq=2, write_graph=True, write_images=True)
    values = _values(tmp_path / "train")
    graph = [(s, p, _array(t)) for s, tag, p, t in values if tag == "keras"]
    assert len(graph) == 1 and graph[0][:2] == (0, "graph_keras_model")
    assert b'"class_name": "Sequential"' in graph[0][2].item()
    images = {tag: t.string_val for s, tag, _, t in values if tag.endswith("/image")}
    assert sorted(images) == [f"net/{w}/image" for w in ("d1/bias", "d1/kernel", "d2/kernel")]
    assert images["net/d1/kernel/image"][:2] == [b"4", b"3"]


def test_tensorboard_callback_writes_no_config_of_a_subclassed_model(tmp_path):
    # Keras 3.15 writes the config (write_graph) of Sequential and Functional models only,
    # and passes other models over without a warning
    class Doubled(tt.keras.Model):
        def __init__(self):
            super().__init__()
            self.dense = tt.keras.layers.Dense(1)

        def call(self, x):
            return self.dense(x) * 2.0

    model = Doubled()
    model.compile(optimizer="sgd", loss="mse")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.fit(np.ones((4, 3)), np.ones((4, 1)), verbose=0, callbacks=[cb.TensorBoard(tmp_path)])
    assert [t for _, t, _, _ in _values(tmp_path / "train")] == [
        "epoch_loss",
        "epoch_learning_rate",
    ]


def test_doctests():
    for module in [records, protobuf, png, ops, writer, tensorboard_callback]:
        result = doctest.testmod(module, extraglobs={"tt": tt}, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0 and result.attempted > 0, module.__name__


def test_tensorboard_callback_functional_model_and_speed(tmp_path):
    keras = tt.keras
    inputs = keras.Input((3,))
    model = keras.Model(inputs, keras.layers.Dense(1, name="d")(inputs))
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    callback = cb.TensorBoard(
        tmp_path, histogram_freq=1, update_freq="batch", write_steps_per_second=True
    )
    model.fit(
        np.ones((4, 3)), np.ones((4, 1)), batch_size=2, epochs=1, verbose=0, callbacks=[callback]
    )
    train = [(s, t) for s, t, _, _ in _values(tmp_path / "train")]
    assert train == [
        (0, "keras"),
        (1, "batch_steps_per_second"),
        (1, "batch_loss"),
        (2, "batch_steps_per_second"),
        (2, "batch_loss"),
        (0, "epoch_loss"),
        (0, "epoch_learning_rate"),
        (0, "epoch_steps_per_second"),
        (0, "d/kernel/histogram"),
        (0, "d/bias/histogram"),
    ]
    speeds = [_array(t) for _, tag, _, t in _values(tmp_path / "train") if "per_second" in tag]
    assert all(speed > 0 for speed in speeds)


def test_trace_export_writes_the_graph_and_each_nodes_time_for_tensorboard(tmp_path):
    w = tt.Variable(np.linspace(-1, 1, 32).reshape(8, 4))

    @tt.function
    def traced_step(x):
        h = tt.matmul(x, w)
        return tt.reduce_sum(tt.tanh(h) * h)

    x = np.ones((16, 8))
    expected = float(traced_step(x))
    writer = tt.summary.create_file_writer(str(tmp_path))
    tt.summary.trace_on(graph=True, profiler=True)
    assert [float(traced_step(x)) for _ in range(3)] == [expected] * 3
    with writer.as_default():
        tt.summary.trace_export("step_trace", step=7, profiler_outdir=str(tmp_path / "profile"))
    accumulator = event_accumulator.EventAccumulator(str(tmp_path))
    accumulator.Reload()
    assert accumulator.Tags()["graph"] and accumulator.Tags()["run_metadata"] == ["step_trace"]
    graph = accumulator.Graph()
    final = traced_step.get_concrete_function(x).stages.final
    assert [n.op for n in graph.node] == [n.op for n in final.nodes if n.op != "const"]
    by_name = {n.name: n for n in graph.node}
    (product,) = [n for n in graph.node if n.op == "matmul"]
    assert [by_name[i].op for i in product.input] == ["input", "variable"]
    assert product.name.startswith("traced_step/test_summary.py_line")
    assert [d.size for d in product.attr["_output_shapes"].list.shape[0].dim] == [16, 4]
    stats = accumulator.RunMetadata("step_trace").step_stats.dev_stats[0].node_stats
    assert {s.node_name for s in stats} == {
        n.name for n in graph.node if n.op in ("matmul", "fused")
    }
    assert all(s.all_end_rel_micros >= 0 for s in stats)
    assert (tmp_path / "profile" / "step_trace.trace.json").exists()
    # a graph alone, without times; and an export without trace_on writes nothing
    tt.summary.trace_on(graph=True)
    traced_step(x)
    with writer.as_default(step=8):
        tt.summary.trace_export("graph_only")
        with pytest.warns(UserWarning, match="trace_on first"):
            tt.summary.trace_export("nothing")
    accumulator.Reload()
    assert accumulator.Tags()["run_metadata"] == ["step_trace"]


TF_AUDIO_FILE = pathlib.Path(__file__).parent / "data" / "summary" / "tf_audio_and_scopes.v2"


def _tf_events():
    return list(event_file_loader.EventFileLoader(str(TF_AUDIO_FILE)).Load())[1:]


def test_audio_events_are_tensorflows_bytes_but_the_wall_time(tmp_path):
    clips = np.stack([np.sin(np.linspace(0, 20, 50)).reshape(25, 2) * s for s in (0.5, 1.0, 1.5)])
    halves = (np.arange(-4, 5) + 0.5).reshape(1, 9, 1) / 2**15
    with summary.create_file_writer(str(tmp_path)).as_default(step=6):
        assert summary.audio("clips", clips.astype(np.float32), 8000, max_outputs=2)
        summary.audio("halves", halves.astype(np.float32), 44100, step=7, description="halves")
    ours = _events(str(tmp_path))
    theirs = _tf_events()[:2]
    for mine, tfs in zip(ours, theirs):
        mine.wall_time = tfs.wall_time = 0
        assert mine.SerializeToString() == tfs.SerializeToString()
    clip = theirs[1].summary.value[0].tensor.string_val[0]
    samples = np.frombuffer(clip[44:], "<i2")  # rounded half away from zero, as TF rounds
    assert samples.tolist() == [-4, -3, -2, -1, 1, 2, 3, 4, 5]
    with summary.create_file_writer(str(tmp_path / "bad")).as_default(step=0):
        with pytest.raises(ValueError, match="clips \\[k, frames, channels\\]"):
            summary.audio("bad", np.zeros((3, 4)), 8000)
        with pytest.raises(ValueError, match="sample_rate"):
            summary.audio("bad", np.zeros((1, 3, 1)), 0)
        with pytest.raises(ValueError, match="Unknown encoding"):
            summary.audio("bad", np.zeros((1, 3, 1)), 8000, encoding="mp3")


def test_summaries_in_compiled_loops_and_branches_are_tagged_as_tensorflow_tags_them(tmp_path):
    @tt.function
    def scopes(n, x):
        summary.scalar("top", 1.0)
        for i in tt.range(n):
            summary.scalar("l1", 1.0)
            for j in tt.range(n):
                summary.scalar("l2", 1.0)
        if x > 0:
            summary.scalar("in_cond", 1.0)
        with tt.name_scope("s"):
            for i in tt.range(n):
                summary.scalar("scoped", 1.0)
        tt.while_loop(lambda i: i < 1, lambda i: (summary.scalar("wl", 1.0), i + 1)[1], [0])
        tt.while_loop(
            lambda i: i < 1, lambda i: (summary.scalar("named", 1.0), i + 1)[1], [0], name="mine"
        )

    with summary.create_file_writer(str(tmp_path)).as_default(step=6):
        scopes(tt.constant(1), tt.constant(1.0))
    tags = [v.tag for e in _events(str(tmp_path)) for v in e.summary.value]
    assert tags == [v.tag for e in _tf_events()[2:] for v in e.summary.value]
    assert tags[1:3] == ["while/l1", "while/while/l2"]
