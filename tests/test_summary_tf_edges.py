"""tt.summary at TensorFlow's edges: histograms of NaN, inf and ranges that overflow, the
steps and text data TF refuses, the default tags of empty names, and what a summary returns
under a tensor `record_if` in a compiled function. Expected values are what TensorFlow 2.21
(with TensorBoard 2.21) writes or raises for the same calls."""

import glob
import os

import numpy as np
import pytest
from tensorboard.backend.event_processing import event_file_loader
from tensorboard.util import tensor_util

import tracer as tt
import tracer.summary as summary
from tracer.summary import ops

nan, inf = np.nan, np.inf


def _values(logdir):
    """[(step, tag, array)] of the one event file in `logdir`, as TensorBoard reads it."""
    (path,) = glob.glob(os.path.join(logdir, "events.out.tfevents.*"))
    events = list(event_file_loader.EventFileLoader(path).Load())[1:]
    return [
        (e.step, v.tag, tensor_util.make_ndarray(v.tensor)) for e in events for v in e.summary.value
    ]


def _rows(*rows, repeat=()):
    """A [k, 3] histogram from rows, `repeat` = (row, times) inserted after the first."""
    first, *rest = rows
    middle = [repeat[0]] * repeat[1] if repeat else []
    return np.array([first, *middle, *rest], np.float64)


# histograms: TF 2.21's event files for these data and bucket counts
TF_HISTOGRAMS = [
    # NaN: the least and greatest values are NaN, so every edge is, and nothing is counted
    ([1.0, nan], 30, _rows([nan, nan, 0], repeat=([nan, nan, 0], 29))),
    ([nan, 1.0], 2, _rows([nan, nan, 0], [nan, nan, 0])),
    # inf: the width is inf, inf / inf is NaN, and the inf itself is not counted
    ([1.0, inf], 30, _rows([1, inf, 1], repeat=([inf, inf, 0], 29))),
    ([1.0, 2.0, inf, 3.0], 4, _rows([1, inf, 3], repeat=([inf, inf, 0], 3))),
    ([-inf, 1.0], 4, _rows([-inf, nan, 0], [nan, 1, 0], repeat=([nan, nan, 0], 2))),
    ([inf, inf], 3, _rows([inf, nan, 0], [nan, inf, 0], repeat=([nan, nan, 0], 1))),
    # 1e308 - (-1e308) overflows to inf: the greatest value falls out, the last edge is 1e308
    ([-1e308, 1e308], 30, _rows([-1e308, inf, 1], [inf, 1e308, 0], repeat=([inf, inf, 0], 28))),
    # subnormal numbers are zero (TF's kernels flush them): one value, counted last
    ([0.0, 5e-324], 3, _rows([0, 0, 0], [0, 0, 2], repeat=([0, 0, 0], 1))),
]


@pytest.mark.parametrize("data, buckets, expected", TF_HISTOGRAMS)
def test_histogram_of_values_that_are_not_finite_as_tensorflow(data, buckets, expected):
    """TF 2.21 writes these buckets for NaN, inf and overflowing ranges (it raises nothing)."""
    got = ops.histogram_buckets(np.array(data, np.float64), buckets)
    np.testing.assert_array_equal(got, expected)


def test_histogram_nan_edges_carry_tensorflows_sign():
    """TF writes the input's NaN (positive) for data holding NaN, and x86's default NaN
    (negative) where the edges come from inf - inf."""
    assert not np.signbit(ops.histogram_buckets(np.array([1.0, nan]), 2)[:, :2]).any()
    from_inf = ops.histogram_buckets(np.array([inf, inf]), 3)
    assert np.signbit(from_inf[1, :2]).all() and np.isnan(from_inf[1, :2]).all()


def test_histogram_writes_nonfinite_events_and_python_floats_as_float32(tmp_path):
    """Eagerly each histogram is written (TF returns True); a Python list of floats is
    float32 first, as TF converts it: [0.1, 0.7, 0.3] gives edges 0.10000000149011612 ..."""
    with summary.create_file_writer(tmp_path).as_default(step=0):
        assert summary.histogram("a", np.array([1.0, nan])) is True
        assert summary.histogram("c", np.array([-1e308, 1e308])) is True
        assert summary.histogram("f", [0.1, 0.7, 0.3], buckets=3) is True
    values = {tag: array for _, tag, array in _values(tmp_path)}
    assert np.isnan(values["a"][:, :2]).all() and (values["a"][:, 2] == 0).all()
    assert values["c"][0].tolist() == [-1e308, inf, 1.0]
    f32 = [float(np.float32(v)) for v in (0.1, 0.3, 0.5, 0.7)]
    assert values["f"][:, 0].tolist() == [
        0.10000000149011612,
        0.29999999701976776,
        0.4999999925494194,
    ]
    assert values["f"][-1, 1] == f32[3] and values["f"][:, 2].tolist() == [1.0, 1.0, 1.0]


def test_histogram_of_nan_in_compiled_step_lets_the_step_finish(tmp_path):
    """A tt.function that writes a scalar, a histogram of data holding NaN, then increments
    its step: TF writes both events (loss nan; the histogram's edges NaN, counts 0) and the
    step becomes 1."""
    step = tt.Variable(np.int64(0), trainable=False)

    @tt.function
    def train_step(x):
        summary.scalar("loss", tt.reduce_sum(x), step=step)
        summary.histogram("x", x, step=step)
        step.assign_add(1)
        return tt.reduce_sum(x)

    with summary.create_file_writer(tmp_path).as_default(step=0):
        assert np.isnan(train_step(tt.constant([nan, 1.0])).numpy())
    assert int(step.numpy()) == 1
    (loss_step, loss_tag, loss), (x_step, x_tag, x) = _values(tmp_path)
    assert (loss_step, loss_tag, x_step, x_tag) == (0, "loss", 0, "x")
    assert np.isnan(loss) and x.shape == (30, 3)
    assert np.isnan(x[:, :2]).all() and (x[:, 2] == 0).all()


# steps


@pytest.mark.parametrize("bad", [7.9, 7.0, "7"])
def test_python_float_or_string_step_raises_type_error(tmp_path, bad):
    """TF converts the step to int64: 'Cannot convert 7.9 to EagerTensor of dtype int64'
    (TypeError), with or without a default writer, and under record_if(False)."""
    with pytest.raises(TypeError):
        summary.scalar("e", 1.0, step=bad)
    with summary.create_file_writer(tmp_path).as_default(step=1):
        with pytest.raises(TypeError):
            summary.scalar("e", 1.0, step=bad)
        with summary.record_if(False), pytest.raises(TypeError):
            summary.histogram("e", [1.0], step=bad)
    assert _values(tmp_path) == []


def test_step_conversions_tensorflow_accepts_or_refuses(tmp_path):
    """TF writes numpy float steps cut toward zero (np.float64(7.9) at 7, -3.5 at -3) and
    True as 1; it raises ValueError for a float tensor and for a step of two values."""
    with summary.create_file_writer(tmp_path).as_default(step=1):
        assert summary.scalar("a", 1.0, step=np.float64(7.9)) is True
        assert summary.scalar("b", 1.0, step=np.float64(-3.5)) is True
        assert summary.scalar("c", 1.0, step=True) is True
        with pytest.raises(ValueError):
            summary.scalar("d", 1.0, step=tt.constant(7.0))
        with pytest.raises(ValueError):
            summary.scalar("d", 1.0, step=np.array([7, 8]))
    assert [(s, tag) for s, tag, _ in _values(tmp_path)] == [(7, "a"), (-3, "b"), (1, "c")]


def test_float_step_in_compiled_function_raises_when_traced(tmp_path):
    """In a tf.function, step=7.9 raises TypeError ('in user code') when traced."""

    @tt.function
    def g():
        return summary.scalar("z", 1.0, step=7.9)

    with summary.create_file_writer(tmp_path).as_default(step=1), pytest.raises(TypeError):
        g()


# text


@pytest.mark.parametrize("bad", [5, 5.0, True, [1, 2], []])
def test_text_of_values_that_are_not_strings_raises_type_error(tmp_path, bad):
    """TF asserts a string tensor before writing ('tensor must be of type tf.string; got
    tf.int32'): TypeError, even with no default writer."""
    with pytest.raises(TypeError):
        summary.text("t", bad)
    with summary.create_file_writer(tmp_path).as_default(step=1), pytest.raises(TypeError):
        summary.text("t", bad)
    assert _values(tmp_path) == []


def test_text_of_strings_and_mixed_lists(tmp_path):
    """TF writes str, bytes, numpy string arrays and nested lists of them, and raises
    ValueError ('mixed types') for ['a', 3]."""
    with summary.create_file_writer(tmp_path).as_default(step=1):
        with pytest.raises(ValueError):
            summary.text("t", ["a", 3])
        assert summary.text("b", b"x") is True
        assert summary.text("u", np.array(["a", "b"])) is True
        assert summary.text("m", ["a", b"b"]) is True
        assert summary.text("n", [["a"], ["b"]]) is True
    got = {tag: array.tolist() for _, tag, array in _values(tmp_path)}
    assert got == {"b": b"x", "u": [b"a", b"b"], "m": [b"a", b"b"], "n": [[b"a"], [b"b"]]}


# default tags


def test_empty_name_takes_each_kinds_default_tag(tmp_path):
    """TF tags a summary named '' (or None) '<kind>_summary', under the name scope."""
    calls = {
        "scalar": lambda n: summary.scalar(n, 1.0),
        "histogram": lambda n: summary.histogram(n, [1.0]),
        "text": lambda n: summary.text(n, "x"),
        "image": lambda n: summary.image(n, np.zeros((1, 2, 2, 1), np.uint8)),
        "audio": lambda n: summary.audio(n, np.zeros((1, 4, 1), np.float32), 8000),
    }
    with summary.create_file_writer(tmp_path).as_default(step=1):
        for call in calls.values():
            call("")
            call(None)
            with tt.name_scope("outer"):
                call("")
    tags = [tag for _, tag, _ in _values(tmp_path)]
    expected = [f"{p}{k}_summary" for k in calls for p in ("", "", "outer/")]
    assert tags == expected


# record_if in compiled functions


def test_tensor_record_if_in_compiled_function_returns_the_condition(tmp_path):
    """In a tf.function under record_if(tensor), summary ops and should_record_summaries
    return TF's cond: False where the condition is false, True where true; a condition that
    is not boolean raises TypeError."""

    @tt.function
    def g(c):
        with summary.record_if(c):
            return summary.scalar("z", 1.0), summary.should_record_summaries()

    @tt.function
    def g2(c):
        with summary.record_if(lambda: c > 0):
            return summary.scalar("z2", 1.0)

    @tt.function
    def g3(c):
        with summary.record_if(c):
            return summary.scalar("z3", 1.0)

    with summary.create_file_writer(tmp_path).as_default(step=1):
        assert [bool(r) for r in g(tt.constant(False))] == [False, False]
        assert [bool(r) for r in g(tt.constant(True))] == [True, True]
        assert bool(g2(tt.constant(0))) is False
        assert bool(g2(tt.constant(1))) is True
        with pytest.raises(TypeError):
            g3(tt.constant(0))
    assert [tag for _, tag, _ in _values(tmp_path)] == ["z", "z2"]
