"""tt.experimental.numpy: numpy's names and dtypes on tracer's ops, values against numpy's;
and `experimental_enable_numpy_behavior` (in a process of its own: it changes every tensor
of the process) giving tensors numpy's promotion, indexing and methods."""

import numpy as np

import tracer as tt
import tracer.experimental.numpy as tnp
from tests.processes import run_json


def test_dtypes_are_numpys():
    assert tnp.ones([2, 3]).dtype == tt.float64
    assert tnp.asarray(1).dtype == tt.int64 and tnp.asarray(1.0).dtype == tt.float64
    assert tnp.arange(24).dtype == tt.int64 and tnp.arange(0.5, 3).dtype == tt.float64
    assert tnp.sqrt(4).dtype == tt.float64 and float(tnp.sqrt(4)) == 2.0
    x, y = tt.constant([1, 2], tt.int32), tt.constant([3, 4], tt.int64)
    assert tnp.add(x, y).dtype == tt.int64
    assert tnp.add(x, tt.constant(1.5, tt.float32)).dtype == tt.float64  # numpy's promotion
    assert tnp.add(tt.constant([1.0], tt.float32), 2.0).dtype == tt.float32  # a weak float
    assert tnp.sum(tt.constant([1, 2], tt.int32)).dtype == tt.int64


def test_values_are_numpys():
    a = np.arange(12.0).reshape(3, 4) - 5
    checks = {
        "sum": (tnp.sum(a, axis=1), np.sum(a, axis=1)),
        "mean": (tnp.mean(a), np.mean(a)),
        "max": (tnp.max(a, axis=0), np.max(a, axis=0)),
        "matmul": (tnp.matmul(a, a.T), a @ a.T),
        "dot": (tnp.dot(a[0], a[1]), np.dot(a[0], a[1])),
        "maximum": (tnp.maximum(a, 0), np.maximum(a, 0)),
        "square": (tnp.square(a), np.square(a)),
        "exp": (tnp.exp(a), np.exp(a)),
        "clip": (tnp.clip(a, -1, 2), np.clip(a, -1, 2)),
        "concatenate": (tnp.concatenate([a, a], axis=1), np.concatenate([a, a], axis=1)),
        "where": (tnp.where(a > 0, a, -a), np.where(a > 0, a, -a)),
        "argmax": (tnp.argmax(a), np.argmax(a)),
        "expand_dims": (tnp.expand_dims(a, 0), np.expand_dims(a, 0)),
    }
    for name, (got, expected) in checks.items():
        np.testing.assert_allclose(np.asarray(got), expected, err_msg=name)


def test_eye_off_the_diagonal_and_linspace_without_its_end_are_numpys():
    for args in ((3, None, 1), (3, 5, -2), (4, 2, 1), (2, 3, 5)):
        got = tnp.eye(*args, dtype=np.float32)
        assert got.dtype == tt.float32
        np.testing.assert_array_equal(got.numpy(), np.eye(*args))
    for num in (0, 1, 5):
        got = tnp.linspace(0.5, 2.0, num, endpoint=False)
        np.testing.assert_allclose(got.numpy(), np.linspace(0.5, 2.0, num, endpoint=False))
    start = tt.constant(1.0, tt.float64)
    with tt.GradientTape() as tape:
        tape.watch(start)
        total = tt.reduce_sum(tnp.linspace(start, 3.0, 4, endpoint=False))
    assert float(total) == np.sum(np.linspace(1.0, 3.0, 4, endpoint=False))
    assert float(tape.gradient(total, start)) == 2.5  # 1 - i/4 for i < 4


def test_gradients_flow_through_tnp():
    w = tnp.asarray([[1.0, 2.0], [3.0, 4.0]])
    with tt.GradientTape() as tape:
        tape.watch(w)
        loss = tnp.sum(tnp.square(tnp.matmul(tnp.ones([1, 2]), w)))
    np.testing.assert_allclose(tape.gradient(loss, w).numpy(), [[8.0, 12.0], [8.0, 12.0]])
    assert isinstance(w, tnp.ndarray)  # tnp.ndarray is tt.Tensor


NUMPY_BEHAVIOR = """
import json
import numpy as np
import tracer as tf
import tracer.experimental.numpy as tnp

tnp.experimental_enable_numpy_behavior()
out = {}
values = [tnp.asarray(1, dtype=d) for d in (tnp.int32, tnp.int64, tnp.float32, tnp.float64)]
out["promoted"] = [(a + b).dtype.name for i, a in enumerate(values) for b in values[i + 1:]]
x = tnp.arange(24).reshape(2, 3, 4)
out["basic"] = x[1, tnp.newaxis, 1:3, ...].numpy().tolist()
out["boolean"] = x[:, (True, False, True)].numpy().tolist()
out["advanced"] = x[1, (0, 0, 1), tnp.asarray([0, 1, 1])].numpy().tolist()
ones = tnp.ones([5, 3], dtype=tnp.float32)
out["methods"] = [list(ones.T.shape), list(ones.reshape(-1).shape), ones.astype(tnp.int32).dtype.name]
w = tf.constant(np.arange(6.0).reshape(2, 3))
with tf.GradientTape() as tape:
    tape.watch(w)
    y = tf.reduce_sum(w[:, [0, 2, 2]] * tf.constant([1.0, 10.0, 100.0], tf.float64))
out["gradient"] = tape.gradient(y, w).numpy().tolist()
tnp.experimental_enable_numpy_behavior(prefer_float32=True)
out["prefer_float32"] = [tnp.asarray(1.0).dtype.name, tnp.add(1.0, 2.0).dtype.name]
print(json.dumps(out))
"""


def test_numpy_behavior(tmp_path):
    out = run_json(NUMPY_BEHAVIOR, tmp_path)
    kinds = [np.int32, np.int64, np.float32, np.float64]
    expected = [np.result_type(a, b).name for i, a in enumerate(kinds) for b in kinds[i + 1 :]]
    assert out["promoted"] == expected  # int32 + int64 => int64, int32 + float32 => float64, ...
    x = np.arange(24).reshape(2, 3, 4)
    assert out["basic"] == x[1, np.newaxis, 1:3, ...].tolist()
    assert out["boolean"] == x[:, np.array([True, False, True])].tolist()
    assert out["advanced"] == x[1, [0, 0, 1], np.array([0, 1, 1])].tolist()
    assert out["methods"] == [[3, 5], [15], "int32"]
    assert out["gradient"] == [[1.0, 0.0, 110.0], [1.0, 0.0, 110.0]]
    assert out["prefer_float32"] == ["float32", "float32"]
