"""The C op path (`tracer/ops/fast_apply.c`) records what the Python path records.

For every op of the catalogue, first and second order: the same values bit for bit, the
same recorded IR (lines included), the same tape signatures and the same saved values. And
the C path does take the common case: a recorded eager loop makes no Python call of
`_apply` after its first step.
"""

import contextlib
import copy
import functools
import inspect
import re
import subprocess
import sys
import threading
import types
import warnings
import weakref

import numpy as np
import pytest

import tracer as tt
import tracer.backprop as backprop
from runtime import native
from tests.switching_threads import run_switching
from tests.test_gradients import ALL_CASES
from tracer.dtypes import BY_NUMPY, DType
from tracer.ir.printer import format_graph
from tracer.ops import core
from tracer.passes import gradient as gradient_pass
from tracer.passes.gradient import build_gradient

pytestmark = pytest.mark.skipif(core.fast_apply is None, reason="the C op path was not built here")


@contextlib.contextmanager
def python_path_only():
    was = core.fast_apply.set_enabled(False)
    try:
        yield
    finally:
        core.fast_apply.set_enabled(was)


@pytest.fixture
def python_calls(monkeypatch):
    """The eager ops the C path hands to the Python `_apply`, by name (seen where it looks up
    their shape rule; a wrapper around `_apply` itself would be a frame of user code)."""
    calls = []
    infer = core._infer_eager

    def counting(op, inputs, attrs):
        calls.append(op.name)
        return infer(op, inputs, attrs)

    monkeypatch.setattr(core, "_infer_eager", counting)
    return calls


def _sum(value):
    return tt.reduce_sum(tt.math.real(value)) if value.dtype.is_complex else tt.reduce_sum(value)


def _record_two_orders(function, inputs):
    with tt.GradientTape(persistent=True) as outer:
        outer.watch(inputs)
        with tt.GradientTape(persistent=True) as inner:
            inner.watch(inputs)
            value = function(*inputs)
            loss = _sum(value)
        first = inner.gradient(loss, inputs, unconnected_gradients="zero")
        total = tt.add_n([_sum(g) for g in first])
    second = outer.gradient(total, inputs, unconnected_gradients="zero")
    return value, inner, outer, first, second


def _saved_values(tape):
    rec = tape._recording_state
    return [
        None if rec.saved[k] is None else [None if t is None else t._value for t in rec.saved[k]]
        for k in range(len(rec.order))
    ]


def _assert_same_bits(got, want):
    assert len(got) == len(want)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(
            tt.convert_to_tensor(a).numpy(), tt.convert_to_tensor(b).numpy()
        )


@pytest.mark.parametrize("name", sorted(ALL_CASES))
def test_the_c_path_records_what_the_python_path_records(name):
    function, args = ALL_CASES[name]
    inputs = [tt.constant(a, dtype=np.asarray(a).dtype) for a in args]
    _record_two_orders(function, inputs)  # shape rules are remembered on first sight
    fast = _record_two_orders(function, inputs)
    with python_path_only():
        slow = _record_two_orders(function, inputs)
    _assert_same_bits([fast[0]], [slow[0]])
    _assert_same_bits(fast[3], slow[3])
    _assert_same_bits(fast[4], slow[4])
    for fast_tape, slow_tape in zip(fast[1:3], slow[1:3]):
        assert fast_tape.ir() == slow_tape.ir()
        if name != "custom_gradient":  # whose record holds the call's own gradient function
            assert fast_tape._recording_state.signature == slow_tape._recording_state.signature
        for got, want in zip(_saved_values(fast_tape), _saved_values(slow_tape)):
            assert (got is None) == (want is None)
            if got is not None:  # a value no tracked input needs is None in both (saved_for)
                assert [v is None for v in got] == [v is None for v in want]
                _assert_same_bits(*([v for v in values if v is not None] for values in (got, want)))


def test_a_recorded_eager_loop_makes_no_python_call_after_its_first_step(python_calls):
    x = tt.constant(0.5)

    def step():
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in range(5):
                y = tt.tanh(tt.sin(y) * 1.01 + y)
        return tape.gradient(y, x)

    first = step()
    python_calls.clear()
    second = step()
    assert python_calls == []
    np.testing.assert_array_equal(first.numpy(), second.numpy())


def test_ops_with_attributes_take_the_c_path_after_their_first_sight(python_calls):
    x = tt.constant(np.arange(12.0).reshape(3, 4))

    def step():
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = tt.reduce_sum(tt.transpose(tt.reshape(x, (4, 3)), (1, 0)) ** 2, axis=1)
            z = tt.reduce_sum(y * tt.reduce_sum(x, axis=0, keepdims=True)[0, :3])
        return z, tape.gradient(z, x)

    first = step()
    python_calls.clear()
    second = step()
    assert python_calls == []  # reshape, transpose, reduce_sum, getitem, pow, mul
    with python_path_only():
        slow = step()
    for got in (second, slow):
        _assert_same_bits(list(first), list(got))


def test_remembered_shape_rules_tell_attributes_apart_by_type():
    """1, 1.0 and True are equal keys in a dict: the remembered answers must not be shared."""
    from runtime.kernels import KERNELS
    from tracer import dtypes
    from tracer.ops.fast_apply_check import _PROBE

    probe = copy.copy(_PROBE)  # the import check's op, its rule reading the attribute's type
    probe.name, probe.saves = "attribute_type_probe", ()
    probe.infer = lambda attrs, x: (x.shape, dtypes.as_dtype(np.asarray(attrs["value"]).dtype))
    probe.grad = lambda node, g, x: (None,)
    KERNELS[probe.name] = lambda x, value: np.full(x.shape, np.ravel(np.asarray(value))[0])
    values = (1, 1.0, True, (1,), (1.0,), (True,), (np.float32(1),), [3], [2.5])
    # a numpy scalar is not remembered, nor a list: their rules run every time
    dtypes_of = [tt.int64, tt.float64, tt.bool] * 2 + [tt.float32, tt.int64, tt.float64]
    try:
        x = tt.constant([1.0, 2.0])
        for _ in range(2):  # the second round reads what the first remembered
            with tt.GradientTape() as tape:
                tape.watch(x)  # what the tape records has the dtype the rule gave
                got = [core.apply(probe, (x,), {"value": v}) for v in values]
            # a non-differentiable dtype is noted as where the gradient's path is cut
            recorded = [g._cut[1] if g._node is None else g._node.dtype for g in got]
            assert recorded == dtypes_of
            assert [g.dtype for g in got] == dtypes_of
    finally:
        del KERNELS[probe.name]


def test_attributes_new_at_every_call_leave_the_remembered_rules_of_other_ops(
    python_calls, monkeypatch
):
    """A NaN attribute is never remembered (no key would equal it); past the table's limit
    the oldest answers go, so a value that changes every step does not stop later ops'
    rules from being remembered."""
    x = tt.constant([1.0, 2.0])
    padded = [tt.pad(x, [[1, 1]], constant_values=np.nan) for _ in range(3)]
    assert np.isnan(padded[-1].numpy()[0])
    assert not [key for key in core._INFERRED if key[0].name == "pad" and "nan" in repr(key)]
    monkeypatch.setattr(core, "_INFERRED_LIMIT", 8)  # the table C reads too: not replaced
    for step in range(20):  # fills the table many times over
        tt.pad(x, [[1, 1]], constant_values=float(step))
    y = tt.constant(np.ones(7))
    z = tt.sin(y) * y  # remembered at first sight ...
    python_calls.clear()
    for _ in range(3):
        z = tt.sin(y) * y
    assert python_calls == []  # ... and found again
    np.testing.assert_array_equal(z.numpy(), np.sin(np.ones(7)))


def test_threads_filling_the_table_of_remembered_rules_raise_nothing(monkeypatch):
    monkeypatch.setattr(core, "_INFERRED_LIMIT", 64)  # full at once: every new rule evicts
    x = tt.constant([1.0, 2.0])
    errors, size = [], len(core._INFERRED)

    def fill(base):
        try:
            for step in range(3000):
                padded = tt.pad(x, [[1, 1]], constant_values=float(base + step))
            assert padded.numpy().tolist() == [base + step, 1.0, 2.0, base + step]
        except Exception as error:  # what a thread raised is the finding
            errors.append(repr(error))

    # threads switch between the table's steps
    run_switching([functools.partial(fill, k * 10**6) for k in range(4)])
    assert errors == [] and len(core._INFERRED) <= max(size, 64)


def test_an_attribute_whose_hash_fails_runs_on_the_python_path():
    """Not a plain value, so never remembered: the C path, which hashes what it is given,
    hands it to Python instead of raising."""

    from runtime.kernels import KERNELS
    from tracer.ops.fast_apply_check import _PROBE

    class Unhashable:
        def __hash__(self):
            raise ValueError("no hash")

    probe = copy.copy(_PROBE)  # the import check's op: -x, whose gradient rule passes g on
    probe.name = "unhashable_attribute_probe"
    KERNELS[probe.name] = lambda x, **attrs: np.negative(x)
    try:
        y = tt.constant([1.0, 2.0, 3.0])
        for _ in range(2):
            with tt.GradientTape() as tape:
                tape.watch(y)
                out = core.apply(probe, (y,), {"note": Unhashable()})
            assert out.numpy().tolist() == [-1.0, -2.0, -3.0]
            assert out._node.op == probe.name and out._node.inputs[0] is y._node
    finally:
        del KERNELS[probe.name]


def test_an_op_no_tape_tracks_takes_the_c_path_and_notes_what_python_notes(python_calls):
    """Under tapes that track none of its inputs an op runs on the C path, which has
    `_note_untracked` note the inputs' first untracked use (tape.explain names it) and pass
    a cut gradient path on, as `_record` does."""
    c = tt.constant(3.0)
    c * c  # the first sight of the shape rule, in Python: remembered
    python_calls.clear()
    explained = []
    for c_path in (True, False):
        with contextlib.nullcontext() if c_path else python_path_only():
            with tt.GradientTape() as tape:
                untracked = c * c  # no tape tracks c
            assert tape.gradient(untracked, c) is None
            explained.append(re.sub(r":\d+", ":N", tape.explain(untracked, [c])))
        if c_path:
            assert python_calls == []
    assert "never watched" in explained[0] and explained[0] == explained[1]
    x = tt.constant([1.5, 2.5])
    with tt.GradientTape() as tape:
        tape.watch(x)
        rounded = tt.cast(x, tt.int32)  # the gradient path is cut here
    assert rounded._cut is not None
    rounded * 2
    python_calls.clear()
    with tt.GradientTape():
        doubled = rounded * 2
    assert python_calls == [] and doubled._cut == rounded._cut
    np.testing.assert_array_equal(doubled.numpy(), [2, 4])


def test_a_variable_read_outside_any_tape_notes_its_origin_on_the_c_path_as_in_python(
    python_calls,
):
    """`x = v * 1.0` outside a tape makes a Tensor that tape.explain traces back to the
    Variable and the user's line: the C path notes what the Python path does."""
    v = tt.Variable(2.0)
    v * 1.0  # the first sight of the shape rule, in Python: remembered
    python_calls.clear()
    moved = v * 1.0  # the C path
    line = inspect.currentframe().f_lineno - 1
    assert python_calls == [] and moved._origin == (v.name, (__file__, line))
    was = core.fast_apply.set_enabled(False)
    try:
        moved_in_python = v * 1.0
        python_line = inspect.currentframe().f_lineno - 1
    finally:
        core.fast_apply.set_enabled(was)
    assert python_calls == ["mul"]
    assert moved_in_python._origin == (v.name, (__file__, python_line))
    with tt.GradientTape() as tape:
        y = moved * moved
    assert tape.gradient(y, moved) is None
    assert f"Variable {v.name!r} at test_fast_apply.py:{line}" in tape.explain(y, [moved])


@pytest.fixture
def python_reads(monkeypatch):
    """The names of the Variables that Variable._read (Python) reads."""
    reads = []
    read = tt.Variable._read

    def counting(variable):
        reads.append(variable.name)
        return read(variable)

    monkeypatch.setattr(tt.Variable, "_read", counting)
    return reads


def _variable_ops(v, m, y):
    """Op functions given a Variable: binary either side, with a Python scalar, unary, and a
    plain matmul of two Variables."""
    return [tt.add(y, v), tt.subtract(v, y), v * 2.0, 2.0 - v, tt.sin(v), tt.matmul(m, m)]


def test_op_functions_read_a_variable_outside_any_tape_in_c_as_python_reads_it(python_reads):
    v = tt.Variable([1.0, -2.0], name="v")
    m = tt.Variable([[1.0, 2.0], [3.0, 4.0]], name="m")
    y = tt.constant([0.5, 4.0])
    _variable_ops(v, m, y)  # the first sight of each shape rule, in Python: remembered
    python_reads.clear()
    v._shared = m._shared = False
    got = _variable_ops(v, m, y)
    assert python_reads == []
    assert v._shared and m._shared  # handed out: compiled updates in place copy first
    with python_path_only():
        want = _variable_ops(v, m, y)
    assert python_reads == ["v:0", "v:0", "v:0", "v:0", "v:0", "m:0", "m:0"]
    vn, mn = v.numpy(), m.numpy()
    expected = [y.numpy() + vn, vn - y.numpy(), vn * 2, 2 - vn, np.sin(vn), mn @ mn]
    for a, b, value in zip(got, want, expected):
        np.testing.assert_array_equal(a.numpy(), value)
        np.testing.assert_array_equal(b.numpy(), value)
        # the variable's name and the user's line: the helper's line of the op
        assert a._origin == b._origin and a._origin[0] in ("v:0", "m:0")
        assert a._origin[1][0] == __file__


def test_a_variable_assigned_by_a_finalizer_during_the_c_read_gives_a_whole_value():
    """Allocating the read's Tensor may collect garbage, and a finalizer may then assign the
    variable, freeing its old array: the read must hold the value it takes, old or new, never
    freed memory (which new arrays then reuse)."""
    import gc

    v = tt.Variable(np.arange(1000, dtype=np.float32))
    tt.sin(v)  # the shape rule remembered: the next read is in C
    later = []

    class AssignsWhenCollected:
        def __del__(self):
            v.assign(np.full(1000, 7.0, np.float32))
            later.extend(np.full(1000, 123.0, np.float32) for _ in range(10))

    garbage = AssignsWhenCollected()
    garbage.cycle = garbage
    del garbage
    threshold = gc.get_threshold()
    gc.set_threshold(1)  # a collection at the next allocation of a tracked object
    try:
        got = tt.sin(v).numpy()
    finally:
        gc.set_threshold(*threshold)
    gc.collect()
    old, new = np.sin(np.arange(1000, dtype=np.float32)), np.sin(np.full(1000, 7.0, np.float32))
    assert np.array_equal(got, old) or np.array_equal(got, new)
    np.testing.assert_array_equal(v.numpy(), 7.0)


def test_variables_inside_tapes_watchers_accumulators_traces_and_subclasses_are_read_in_python(
    python_reads,
):
    v = tt.Variable([1.0, -2.0], name="v")
    y = tt.constant([0.5, 4.0])
    with tt.GradientTape() as tape:
        added = tt.add(y, v)
    np.testing.assert_array_equal(tape.gradient(added, v).numpy(), [1.0, 1.0])
    from tracer.context import watching

    with watching() as read:
        tt.sin(v)
    assert read == [v]
    with tt.autodiff.ForwardAccumulator(v, tt.constant([1.0, 1.0])) as accumulator:
        product = v * 3.0
    np.testing.assert_array_equal(accumulator.jvp(product).numpy(), [3.0, 3.0])
    shifted = tt.function(lambda: tt.add(y, v))
    np.testing.assert_array_equal(shifted().numpy(), [1.5, 2.0])
    v.assign([2.0, 2.0])
    np.testing.assert_array_equal(shifted().numpy(), [2.5, 6.0])  # read when it runs

    class Named(tt.Variable):
        pass

    named = Named([1.0], name="named")
    np.testing.assert_array_equal(tt.add(named, 1.0).numpy(), [2.0])
    assert python_reads[:3] == ["v:0", "v:0", "v:0"] and python_reads[-1] == "named:0"


def test_a_matmul_with_flags_or_a_name_takes_the_python_function():
    a = tt.Variable([[1.0, 2.0], [3.0, 4.0]])
    an = a.numpy()
    assert str(inspect.signature(tt.matmul)) == (
        "(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False, "
        "a_is_sparse=False, b_is_sparse=False, output_type=None, grad_a=False, grad_b=False, "
        "name=None)"
    )
    np.testing.assert_array_equal(tt.matmul(a, a, transpose_b=True).numpy(), an @ an.T)
    np.testing.assert_array_equal(tt.matmul(a, a, True).numpy(), an.T @ an)
    np.testing.assert_array_equal(tt.matmul(a, a, name="p").numpy(), an @ an)
    with pytest.raises(ValueError):
        tt.matmul(a, 2.0)  # a scalar has no matrix axes, on either path


def test_shape_errors_on_the_c_path_name_the_users_line():
    x = tt.constant([1.0, 2.0])
    x + x  # the rule for these shapes is remembered; other shapes still reach it
    with pytest.raises(ValueError, match=r"test_fast_apply\.py:\d+"):
        x + tt.constant([1.0, 2.0, 3.0])


def test_a_tape_in_one_thread_records_nothing_another_thread_computes():
    x = tt.constant(2.0)
    results = []
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        worker = threading.Thread(target=lambda: results.append(x * 3.0))
        worker.start()
        worker.join()
    assert len(tape._recording_state.nodes) == 1
    assert results[0]._node is None
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 4.0)


def test_a_refused_configure_keeps_the_configuration_it_had(python_calls):
    class Other:
        __slots__ = ("_value", "_node")

    arguments = core.fast_apply_arguments(core._apply)
    with pytest.raises(TypeError, match="other slots"):
        core.fast_apply.configure(**dict(arguments, Tensor=Other))
    with pytest.raises(TypeError, match="inferred must be a dict"):
        core.fast_apply.configure(**dict(arguments, inferred=[]))
    x = tt.constant(2.0)
    x * x
    assert core.fast_apply.set_enabled(True) is False  # refused: off until turned back on
    python_calls.clear()
    np.testing.assert_allclose((x * x).numpy(), 4.0)
    assert python_calls == []  # the C path, with what it had before


def test_at_import_the_c_path_is_checked_against_the_python_path():
    from tracer.ops import fast_apply_check

    assert fast_apply_check.difference(core.fast_apply, core._apply) == ""


def test_a_python_path_that_records_otherwise_is_noticed(monkeypatch):
    """What a Python change the C file did not follow looks like: here, saved values in
    another order."""
    from tracer.ops import fast_apply_check
    from tracer.recording import Recording

    record = Recording.record
    monkeypatch.setattr(
        Recording, "record", lambda rec, node, saved: record(rec, node, saved[::-1])
    )
    assert "saved values differ" in fast_apply_check.difference(core.fast_apply, core._apply)


def test_a_python_path_that_fills_the_untracked_inputs_table_otherwise_is_noticed(monkeypatch):
    """The C path fills a tape's table of the untracked inputs it reads (`outside`) as the
    Python path does; a C file that did not follow a change of that table is noticed."""
    from tracer.ops import fast_apply_check
    from tracer.recording import Recording

    track = Recording._track

    def shorter_entries(rec, node, watched):
        position = track(rec, node, watched)
        rec.outside.update({k: v[:2] + (None,) + v[3:] for k, v in rec.outside.items()})
        return position

    monkeypatch.setattr(Recording, "_track", shorter_entries)
    difference = fast_apply_check.difference(core.fast_apply, core._apply)
    assert difference.startswith("the ") and "differs" in difference  # the table, or its uses


def _accepted(module):
    """What runtime.native makes of `module` as the eager op path, with core's check."""
    return native.accept("fast_apply", module, core._fast_apply_difference)


def test_a_c_path_whose_check_fails_is_left_unused_with_a_warning(monkeypatch):
    """An extension built for another version may fail inside the check (a table it fills
    otherwise, read back by the Python code): it is left unused, as one that differs."""
    from tracer.ops import fast_apply_check

    def failing(c, python):
        raise TypeError("'int' object is not subscriptable")

    monkeypatch.setattr(fast_apply_check, "difference", failing)
    try:
        with pytest.warns(RuntimeWarning, match="built for another version .*not subscriptable"):
            assert _accepted(core.fast_apply) is None
        assert core.fast_apply.set_enabled(True) is False
    finally:
        core.configure_fast_apply(core.fast_apply, core._apply)


def test_a_c_path_built_for_other_classes_is_left_unused_with_a_warning(monkeypatch):
    from tracer.ops import fast_apply_check

    monkeypatch.setattr(fast_apply_check, "difference", lambda c, python: "the node differs")
    try:
        with pytest.warns(RuntimeWarning, match="built for another version .*the node differs"):
            assert _accepted(core.fast_apply) is None
        assert core.fast_apply.set_enabled(True) is False  # it was left off
    finally:
        core.configure_fast_apply(core.fast_apply, core._apply)


def test_a_c_path_built_before_ops_with_attributes_recorded_in_c_is_left_unused(monkeypatch):
    """An extension built from an older fast_apply.c (no `record`) is refused at import."""
    real = core.fast_apply
    older = types.SimpleNamespace(
        **{name: getattr(real, name) for name in dir(real) if name not in ("record", "__dict__")}
    )
    try:
        with pytest.warns(RuntimeWarning, match="built for another version .*record"):
            assert _accepted(older) is None
        assert core._record_in_c is None and real.set_enabled(True) is False
    finally:
        core.configure_fast_apply(real, core._apply)
    with tt.GradientTape() as tape:  # back in use
        x = tt.constant([1.0, 2.0, 3.0])
        tape.watch(x)
        y = tt.reduce_sum(x[1:] * x[1:])
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [0.0, 4.0, 6.0])


@pytest.mark.parametrize("interface", [None, native.INTERFACE + 1])
def test_a_c_path_of_another_interface_is_left_unused(monkeypatch, interface):
    """An extension built before configure took an argument ignores it (the behavioural
    check cannot tell: it does what it did, more slowly); its INTERFACE tells (runtime.native)."""
    real = core.fast_apply
    names = [name for name in dir(real) if name not in ("INTERFACE", "__dict__")]
    other = types.SimpleNamespace(**{name: getattr(real, name) for name in names})
    if interface is not None:
        other.INTERFACE = interface
    with pytest.warns(
        RuntimeWarning, match=f"built for another version .*interface is {interface}"
    ):
        assert _accepted(other) is None  # refused before its configure is called
    np.testing.assert_array_equal((tt.constant([1.5]) * 2.0).numpy(), [3.0])


def test_op_functions_in_c_keep_the_python_functions_signature_and_behaviour():
    import inspect

    x = tt.constant([1.0, 2.0])
    assert tt.multiply.__name__ == "mul" and tt.sin.__name__ == "sin"
    assert str(inspect.signature(tt.multiply)) == "(x, y, name=None)"
    np.testing.assert_array_equal(
        tt.multiply(x, 3.0, name="m").numpy(), [3.0, 6.0]
    )  # through Python
    np.testing.assert_array_equal(tt.sin(x, name="s").numpy(), np.sin(x.numpy()))
    np.testing.assert_array_equal(x.__mul__(2.0).numpy(), [2.0, 4.0])  # bound as a method
    np.testing.assert_array_equal(type(x).__mul__(x, x).numpy(), [1.0, 4.0])
    np.testing.assert_array_equal((2.0 * x).numpy(), [2.0, 4.0])
    np.testing.assert_array_equal(tt.multiply(np.float32(2.0), x).numpy(), [2.0, 4.0])
    with pytest.raises(TypeError):
        tt.sin()
    with pytest.raises(TypeError):
        tt.multiply(x, x, x, x)
    assert copy.deepcopy({"act": tt.nn.relu})["act"] is tt.nn.relu
    assert weakref.ref(tt.sin)() is tt.sin


def test_each_call_site_records_its_own_line_in_new_code_of_the_same_shape():
    """The eager path remembers the lines of recent call sites by code object and
    instruction: code made anew (a notebook cell run again, shifted by a few lines) gets its
    own lines, not the remembered ones of the code it replaces."""
    x = tt.constant(0.5)
    for offset in (0, 5, 2):
        source = "\n" * offset + "def f(x):\n    y = tt.sin(x)\n    return y * 2.0\n"
        scope = {"tt": tt}
        exec(compile(source, "<cell>", "exec"), scope)
        for _ in range(3):  # the later calls find the remembered lines
            with tt.GradientTape() as tape:
                tape.watch(x)
                scope["f"](x)
            lines = tape.ir().splitlines()
            assert lines[1].endswith(f"# <cell>:{offset + 2}"), lines
            assert lines[2].endswith(f"# <cell>:{offset + 3}"), lines


# the numeric dtypes (tt.string has its own tests: tests/test_strings.py)
NUMERIC = [d for d in BY_NUMPY if d.kind != "O"]


@pytest.mark.parametrize("dtype", sorted(NUMERIC, key=str))
def test_numpy_scalars_of_every_type_take_the_c_path_with_their_own_shape_and_dtype(
    python_calls, dtype
):
    """The C path knows a numpy scalar's shape and dtype from its type (`scalar_forms`): a
    wrong entry would give a tensor, or a recorded node, another dtype than its value's."""
    op, reference = (
        (tt.logical_not, np.logical_not) if dtype.kind == "b" else (tt.negative, np.negative)
    )
    x = tt.constant(np.array(3, dtype))
    y = op(x)  # a 0-d result: a numpy scalar (and the op's shape rule remembered)
    assert type(y.numpy()) is dtype.type
    python_calls.clear()
    z = op(y)
    assert python_calls == []  # the C path
    assert z.dtype == tt.as_dtype(dtype) and z.shape == () and z.numpy() == reference(y.numpy())
    if tt.as_dtype(dtype).is_differentiable:
        with tt.GradientTape() as tape:
            tape.watch(y)
            z = op(y)
        assert python_calls == []
        node = tape._recording_state.nodes[-1]
        assert node.dtype == tt.as_dtype(dtype) and node.shape == ()


def test_ops_without_attributes_share_one_empty_dict_that_stays_empty():
    """The C path gives every attribute-less node one shared dict (nothing changes a node's
    attributes after it is made); the gradients, higher orders and a compiled function
    built from such nodes leave it empty."""
    x = tt.constant(np.linspace(0.1, 1.0, 4))
    tt.sin(x) * x  # the shape rules remembered: the C path takes the ops below
    with tt.GradientTape() as outer:
        outer.watch(x)
        with tt.GradientTape() as inner:
            inner.watch(x)
            y = tt.reduce_sum(tt.sin(x) * x)
        g = inner.gradient(y, x)
    outer.gradient(g, x)
    nodes = [n for n in inner._released.nodes if n.op in ("sin", "mul")]
    assert len(nodes) == 2 and nodes[0].attrs is nodes[1].attrs
    with tt.GradientTape() as tape:
        tape.watch(x)
        z = tt.sin(x * 2.0)
    assert z._node.attrs is nodes[0].attrs
    tt.function(lambda v: tt.sin(v) * v)(x)
    assert nodes[0].attrs == {}


@pytest.mark.parametrize("dtype", sorted((d for d in NUMERIC if d.kind != "b"), key=str))
@pytest.mark.parametrize("op", [tt.add, tt.subtract, tt.multiply])
def test_arithmetic_on_the_c_path_gives_the_python_paths_values_for_every_dtype(op, dtype):
    """The C path calls an arithmetic op's Python operator itself on floating and complex
    values (FLOATING_KERNELS) and the op's kernel otherwise: the same values, numpy types
    and quiet integer overflow as the Python path, on 0-d values and arrays."""
    info = np.iinfo(dtype) if dtype.kind in "iu" else None
    big = info.max if info is not None else 3.25
    for shape in [(), (3,)]:
        x = tt.constant(np.full(shape, big, dtype))
        y = tt.constant(np.full(shape, 2, dtype))
        op(x, y)  # the shape rule remembered: the C path takes the next call
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            fast = op(x, y).numpy()
            with python_path_only():
                slow = op(x, y).numpy()
        assert type(fast) is type(slow) and fast.dtype == slow.dtype == dtype
        np.testing.assert_array_equal(fast, slow)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex128], ids=str)
@pytest.mark.parametrize("name", ["exp", "log", "sin", "cos", "tanh"])
def test_unary_ufuncs_on_the_c_path_give_the_python_paths_values_quietly(name, dtype):
    """The C path and straight-line programs call exp's, log's, sin's, cos's and tanh's ufunc
    itself on floating and complex values (FLOATING_KERNELS): their values and numpy types
    are the Python path's, and overflow, log(0) and log(-1) give inf, -inf and NaN without a
    warning."""
    from runtime.straight_line import straight_line
    from tracer.ir import Graph, Node

    op = getattr(tt.math, name)
    values = np.array([1000.0, 0.0, -1.0, 0.5])
    if dtype is np.complex128:
        values = values + np.array([1j, 0, 0, 0.5j])
    for array in (values.astype(dtype), values[2].astype(dtype)):
        x = tt.constant(array)
        op(x)  # the shape rule remembered: the C path takes the next call
        node = Node("input", (), {"name": "x"}, array.shape, x.dtype)
        result = Node(name, (node,), {}, array.shape, x.dtype)
        program = straight_line(Graph([node], [node, result], [result]))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            fast, (straight,) = op(x).numpy(), program(array)
            with python_path_only():
                slow = op(x).numpy()
        for got in (fast, straight):
            assert type(got) is type(slow) and got.dtype == slow.dtype == dtype
            np.testing.assert_array_equal(got, slow)


def test_the_c_path_calls_the_floating_kernel_on_floating_values_only(monkeypatch):
    from runtime.kernels import FLOATING_KERNELS

    calls = []

    def counting(x, y):
        calls.append(type(x))
        return x * y

    monkeypatch.setitem(FLOATING_KERNELS, "mul", counting)
    for dtype in (np.float32, np.complex128, np.int32):
        x = tt.constant(np.array([1.5, 2.0]).astype(dtype))
        x * x  # the shape rule remembered
        calls.clear()
        np.testing.assert_array_equal((x * x).numpy(), x.numpy() * x.numpy())
        assert calls == ([] if dtype is np.int32 else [np.ndarray])


def test_ops_of_several_inputs_take_the_c_path_up_to_its_limit(python_calls):
    """concat of up to MAX_INPUTS parts takes the C path after its first sight (an LSTM's
    gates join four parts a step); more parts go to Python; both record the same."""
    limit = core.fast_apply.MAX_INPUTS
    assert limit == core._REMEMBERED_INPUTS  # the C path reads what _infer_eager remembers
    parts = [tt.constant(np.arange(3.0) + k) for k in range(limit + 1)]

    def step(count):
        with tt.GradientTape() as tape:
            tape.watch(parts[:count])
            y = tt.reduce_sum(tt.concat(parts[:count], 0) ** 2)
        return [y, *tape.gradient(y, parts[:count])], tape.ir()

    for count, expected in ((4, []), (limit, []), (limit + 1, ["concat"])):
        first, _ = step(count)
        python_calls.clear()
        second, ir = step(count)
        assert python_calls == expected
        with python_path_only():
            slow, slow_ir = step(count)
        assert ir == slow_ir
        _assert_same_bits(second, slow)
        _assert_same_bits(second[1:], [2 * p.numpy() for p in parts[:count]])


@pytest.mark.parametrize("name", sorted(ALL_CASES))
def test_gradient_graphs_built_through_the_c_path_are_the_python_paths(name):
    """Building a tape's gradient graph applies an op per cotangent; with both inputs
    symbolic and the shape rule remembered, the C path makes the node: the same graph, ops,
    attributes, shapes and lines, as the Python path builds, and the same values."""

    function, args = ALL_CASES[name]
    inputs = [tt.constant(a, dtype=np.asarray(a).dtype) for a in args]
    with tt.GradientTape() as tape:
        tape.watch(inputs)
        loss = _sum(function(*inputs))
    forward = tape._recording_state.graph()
    targets, sources = [loss._node], [t._node for t in inputs]
    built = []  # the Python path's (which remembers the shape rules), then the C path's
    for path in (python_path_only, contextlib.nullcontext):
        with path():
            built.append(build_gradient(forward, targets, sources))  # one line for both
    slow, fast = built
    assert format_graph(fast.graph) == format_graph(slow.graph)
    assert [n.location for n in fast.graph.nodes] == [n.location for n in slow.graph.nodes]
    assert fast.source_outputs == slow.source_outputs
    assert [r[1:] for r in fast.residuals] == [r[1:] for r in slow.residuals]


def test_a_gradient_graph_of_remembered_ops_is_built_without_python_applies(monkeypatch):
    """A tape's gradient graph built again (the caches emptied) after its ops' shape rules
    were remembered: every op of the build takes the C path, and the graph gives the first,
    eager gradient's bits."""
    x = tt.constant(np.linspace(-1.0, 1.0, 6).reshape(2, 3))

    def step():
        with tt.GradientTape() as tape:
            tape.watch(x)
            loss = tt.reduce_sum(tt.sigmoid(x) * tt.tanh(x)[:, 1:2] * x)
        return tape.gradient(loss, x).numpy()

    eager = step()  # the rules on the tape's tensors
    step()  # the graph built: its shape rules remembered
    for cache in ("_recording_cache", "_gradient_cache", "_seen_once"):
        monkeypatch.setattr(backprop, cache, {})
    np.testing.assert_array_equal(step(), eager)
    applied = []
    symbolic = core.apply_symbolic
    monkeypatch.setattr(
        core, "apply_symbolic", lambda *a: applied.append(a[0].name) or symbolic(*a)
    )
    np.testing.assert_array_equal(step(), eager)  # built again, through the C path
    assert applied == []
    assert len(backprop._gradient_cache) == 1


def test_remembered_symbolic_rules_are_keyed_by_plain_tuples(monkeypatch):
    """The symbolic rules a gradient graph's build remembers are keyed by the nodes' plain
    shape tuples, as fast_apply.c looks them up: a TensorShape in a key made each of the C
    path's lookups compare it through TensorShape.__eq__, which converts the tuple."""
    x = tt.constant(np.linspace(-1.0, 1.0, 6).reshape(2, 3))
    for cache in ("_recording_cache", "_gradient_cache", "_seen_once"):
        monkeypatch.setattr(backprop, cache, {})
    for _ in range(2):  # the second builds the graph
        with tt.GradientTape() as tape:
            tape.watch(x)
            loss = tt.reduce_sum(tt.sigmoid(x) * x)
        tape.gradient(loss, x)
    forms = [form for key in core._INFERRED_SYMBOLIC for form in key[1:]]
    shapes = [form[0] for form in forms if len(form) == 2 and isinstance(form[1], DType)]
    assert shapes and {type(shape) for shape in shapes} == {tuple}


@pytest.fixture
def swept_in_c(monkeypatch):
    """What each reverse sweep's C loop answered (True: it swept; None: it raised), in order."""
    answers = []
    sweep = gradient_pass.sweep_in_c

    def answering(*arguments):
        answers.append(None)
        answers[-1] = sweep(*arguments)
        return answers[-1]

    monkeypatch.setattr(gradient_pass, "sweep_in_c", answering)
    return answers


@pytest.mark.parametrize("name", sorted(ALL_CASES))
def test_eager_gradients_swept_in_c_are_the_python_loops(name, monkeypatch, swept_in_c):
    """A tape's first gradient runs the rules on its tensors (backprop.eager_gradient), first
    and second order: the sweep's loop in C gives the Python loop's bits, and an outer tape
    records the same ops at the same lines."""
    function, args = ALL_CASES[name]
    inputs = [tt.constant(a, dtype=np.asarray(a).dtype) for a in args]
    _record_two_orders(function, inputs)  # shape rules remembered on first sight
    runs = []
    for path in (python_path_only, contextlib.nullcontext):
        for cache in ("_recording_cache", "_gradient_cache", "_seen_once"):
            monkeypatch.setattr(backprop, cache, {})  # every tape a first sight: eager
        swept_in_c.clear()
        with path():
            runs.append(_record_two_orders(function, inputs))
        assert set(swept_in_c) == {path is contextlib.nullcontext}
    slow, fast = runs
    _assert_same_bits(fast[3], slow[3])
    _assert_same_bits(fast[4], slow[4])
    assert fast[2].ir() == slow[2].ir()


@pytest.mark.parametrize("name", sorted(ALL_CASES))
def test_gradient_graphs_built_by_the_c_sweep_are_the_python_loops(name, monkeypatch, swept_in_c):
    """A tape's gradient graph (built the second time its structure asks) from the sweep's
    loop in C is the Python loop's, node for node, lines and residuals included."""
    function, args = ALL_CASES[name]
    inputs = [tt.constant(a, dtype=np.asarray(a).dtype) for a in args]
    _record_two_orders(function, inputs)  # shape rules remembered on first sight
    graphs = []
    for path in (python_path_only, contextlib.nullcontext):
        with tt.GradientTape() as tape:
            tape.watch(inputs)
            loss = _sum(function(*inputs))
        recording = tape._recording_state
        sources = [recording.tracked_node(t) for t in inputs]
        for cache in ("_recording_cache", "_gradient_cache", "_seen_once"):
            monkeypatch.setattr(backprop, cache, {})  # every structure new: built
        swept_in_c.clear()
        with path():
            built = backprop.gradient_graph(recording, [recording.tracked_node(loss)], sources)
        assert set(swept_in_c) == {path is contextlib.nullcontext}
        graphs.append((format_graph(built.grad.graph), built.residual_sources))
    assert graphs[1] == graphs[0]


def test_a_rule_whose_cotangent_does_not_fit_its_input_is_named_by_either_sweep(monkeypatch):
    """A gradient rule that gives a cotangent of another shape than its input's: the check
    names the op, the C sweep as the Python loop, and state.location is back as it was."""
    from tracer.context import state
    from tracer.ops.registry import OPS

    x = tt.constant([1.0, 2.0])
    monkeypatch.setattr(OPS["sin"], "grad", lambda node, g, x: (tt.ones((3,), tt.float32),))
    for path in (python_path_only, contextlib.nullcontext):
        for cache in ("_recording_cache", "_gradient_cache", "_seen_once"):
            monkeypatch.setattr(backprop, cache, {})
        with path():
            with tt.GradientTape() as tape:
                tape.watch(x)
                loss = tt.reduce_sum(tt.sin(x))
            with pytest.raises(RuntimeError, match=r"gradient rule of sin gave a float32\[3\]"):
                tape.gradient(loss, x)
        assert state.location is None


def test_an_error_in_a_rule_leaves_the_location_as_it_was_in_the_c_sweep(swept_in_c):
    x = tt.constant([1.0, 2.0])

    @tt.custom_gradient
    def failing(v):
        def grad(dy):
            raise ValueError("the rule failed")

        return v * 2, grad

    from tracer.context import state

    with tt.GradientTape() as tape:
        tape.watch(x)
        loss = tt.reduce_sum(tt.sin(failing(x)))
    with pytest.raises(ValueError, match="the rule failed"):
        tape.gradient(loss, x)
    assert swept_in_c == [None]  # the C loop ran the rule, and its error came through
    assert state.location is None


def test_tapes_added_while_the_c_path_reads_them_send_the_op_to_python():
    """A tape's `_recording_state`, read in C, may run Python code that opens more tapes than
    the C path holds: the op goes to the Python path (it wrote past its array of tapes)."""
    from tracer.context import state

    x = tt.constant([1.0, 2.0])
    tt.sin(x)

    class AddsTapes(tt.GradientTape):
        armed = False

        def __getattribute__(self, name):
            if name == "_recording_state" and AddsTapes.armed:
                AddsTapes.armed = False
                state.tapes.extend([self] * 40)
            return object.__getattribute__(self, name)

    with AddsTapes(persistent=True) as tape:
        tape.watch(x)
        AddsTapes.armed = True
        try:
            y = tt.sin(x)
            added = len(state.tapes)
        finally:
            del state.tapes[1:]
        np.testing.assert_array_equal(y.numpy(), np.sin(x.numpy()))
    assert added == 41
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), np.cos(x.numpy()))


def test_a_location_whose_truth_replaces_it_is_held_while_read():
    """state.location is read in C, and its truth may run Python code that replaces it: the
    op notes the location it read, as the Python path does."""
    from tracer.context import state

    v = tt.Variable([1.0, 2.0], name="v")
    tt.sin(v)

    class ReplacedWhenAsked(tuple):
        __slots__ = ()

        def __bool__(self):
            state.location = None
            return True

    origins = []
    for path in (contextlib.nullcontext, python_path_only):
        state.location = ReplacedWhenAsked(("f.py", 1))
        try:
            with path():
                y = tt.sin(v)
        finally:
            state.location = None
        other = ReplacedWhenAsked(("other.py", 99))  # would take a freed location's memory
        origins.append(y._origin)
        del other
    assert origins[0] == origins[1] == ("v:0", ("f.py", 1))


def test_a_graph_building_count_past_a_c_long_is_building():
    """state.building, read in C as a count, may exceed a C long: the op is built, with no
    error left set for the Python code after it (a fresh process: the first symbolic op)."""
    code = """
import tracer as tt
from tracer.context import state
from tracer.ir import Node
from tracer.tensor import Tensor
x = Tensor(None, Node("input", (), {}, (2,), tt.float32, None))
state.building = 1 << 70
y = tt.sin(x)
print(y._node.op, y._node.inputs == (x._node,))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["sin", "True"]
