"""A unary ufunc's loop cut among threads (runtime/ufunc_parts.py), the eager
transcendental ops' way where the loops installed with tracer are missing: numpy's bits, its
errors raised in the caller, small and strided arrays left to the ufunc on one thread."""

import os
import threading

import numpy as np
import pytest

import tracer as tt
from runtime import ufunc_parts

SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e30, -1e30, 1e-40, 1e-310, 88.5, 710.0]


@pytest.fixture
def three_threads(monkeypatch):
    """Two of the module's threads and the caller, whatever the machine's cores; counts the
    arrays cut into parts."""
    monkeypatch.setattr(ufunc_parts, "_threads", lambda: 3)
    cut = []
    in_parts = ufunc_parts._in_parts

    def counted(ufunc, x, threads):
        cut.append(x.size)
        return in_parts(ufunc, x, threads)

    monkeypatch.setattr(ufunc_parts, "_in_parts", counted)
    return cut


def _values(dtype, size):
    rng = np.random.default_rng(11)
    x = (rng.standard_normal(size) * 30).astype(dtype)
    x[:: size // len(SPECIAL)][: len(SPECIAL)] = np.array(SPECIAL).astype(dtype)
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ufunc", [np.sin, np.cos, np.tanh, np.exp, np.log])
def test_parts_give_numpys_bits(three_threads, ufunc, dtype):
    rows = ufunc_parts.PARTS_FROM // 129 + 1  # 129 columns: a last part of no whole vector
    x = _values(dtype, rows * 129).reshape(rows, 129)
    with np.errstate(all="ignore"):
        expected = ufunc(x)
    got = ufunc_parts.on_threads(ufunc)(x)
    assert three_threads == [x.size]
    assert got.shape == x.shape and got.dtype == x.dtype
    assert got.tobytes() == expected.tobytes()


def test_the_eager_ops_cut_large_arrays_where_the_installed_loops_are_missing(
    three_threads, monkeypatch
):
    """Without the installed vector loops (no compiler, no libmvec), the eager
    transcendental ops keep numpy's bits, a large array cut into parts."""
    from codegen import array_math

    monkeypatch.setattr(array_math, "apply", lambda name, *arrays: None)
    x = _values(np.float32, ufunc_parts.PARTS_FROM)
    with np.errstate(all="ignore"):
        for op, ufunc in ((tt.sin, np.sin), (tt.exp, np.exp), (tt.math.log, np.log)):
            assert op(tt.constant(x)).numpy().tobytes() == ufunc(x).tobytes()
    assert len(three_threads) == 3
    small = tt.sin(tt.constant(x[:1000])).numpy()
    np.testing.assert_array_equal(small, np.sin(x[:1000]))
    assert len(three_threads) == 3  # a small array: numpy's ufunc on this thread


def test_small_strided_and_integer_arrays_take_the_ufunc_on_this_thread(three_threads):
    run = ufunc_parts.on_threads(np.sin)
    large = _values(np.float64, 2 * ufunc_parts.PARTS_FROM)
    strided = large[::2]
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(run(strided), np.sin(strided))
        np.testing.assert_array_equal(run(large[:100]), np.sin(large[:100]))
    whole = np.arange(ufunc_parts.PARTS_FROM, dtype=np.int32)
    np.testing.assert_array_equal(run(whole), np.sin(whole))
    assert three_threads == []


def test_an_error_in_a_part_reaches_the_caller_and_nothing_waits(three_threads):
    calls = []

    def failing(part, out):
        calls.append(part.size)
        if len(calls) == 2:
            raise FloatingPointError("part two failed")
        out[...] = part

    run = ufunc_parts.on_threads(failing)
    with pytest.raises(FloatingPointError, match="part two failed"):
        run(_values(np.float32, ufunc_parts.PARTS_FROM))
    assert len(calls) == 3 * ufunc_parts.PARTS_PER_THREAD  # every part ran, none waits
    x = _values(np.float32, ufunc_parts.PARTS_FROM)
    assert ufunc_parts.on_threads(np.negative)(x).tobytes() == np.negative(x).tobytes()


def test_a_forked_child_starts_threads_of_its_own(three_threads):
    x = _values(np.float32, ufunc_parts.PARTS_FROM)
    ufunc_parts.on_threads(np.sin)(x)  # the parent's threads started
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its parts computed, or exit 1
        try:
            same = ufunc_parts.on_threads(np.sin)(x).tobytes() == np.sin(x).tobytes()
            names = [thread.name for thread in threading.enumerate()]
            threads = names.count("tracer ufunc parts")
            os.write(writer, b"1" if same and threads == 2 else b"0")
        finally:
            os._exit(0)
    os.close(writer)
    assert os.read(reader, 1) == b"1"
    os.waitpid(pid, 0)
