"""Errors where tracer used to go on quietly (issue 47, items 9, 10 and 12), each as
TensorFlow raises it: assigns inside tt.recompute_grad, custom gradients that return the
wrong thing, forward accumulators given Python numbers or entered twice, complex Python
scalars and numpy arrays of another kind converted to real or integer tensors, gather's
sparse gradient with an index out of range, and cache directories that cannot be used."""

import os
import pathlib
import textwrap
import warnings

import numpy as np
import pytest

import tracer as tt
from codegen import cache
from codegen.errors import UnusableCacheDirectory
from runtime import compiled
from tests.processes import run_json

HERE = os.path.basename(__file__)


def line_of(marker):
    """`test_reliability_semantics.py:N` of the line of this file that ends with `marker`."""
    lines = pathlib.Path(__file__).read_text().splitlines()
    (number,) = [k + 1 for k, text in enumerate(lines) if text.endswith(f"# {marker}")]
    return f"{HERE}:{number}"


# --- item 9: recompute_grad, custom_gradient, ForwardAccumulator ---------------------------


def test_an_eager_recompute_grad_function_may_not_assign():
    v = tt.Variable(1.0, name="counter")

    def body(x):
        v.assign_add(x)  # assigns
        return x * 2.0

    block = tt.recompute_grad(body)
    x = tt.constant(3.0)
    with tt.GradientTape() as tape:
        tape.watch(x)
        with pytest.raises(ValueError) as raised:
            block(x)
    message = str(raised.value)
    assert "a function of tt.recompute_grad assigns the variable counter:0" in message
    assert line_of("assigns") in message and "assign outside it" in message
    assert float(v) == 1.0  # refused before the variable changed
    with pytest.raises(ValueError, match="recompute_grad assigns"):
        block(x)  # without a tape too: the function may not assign at all
    assert float(v) == 1.0


def test_recompute_grad_without_assigns_still_differentiates():
    block = tt.recompute_grad(lambda x: tt.tanh(tt.tanh(x)))
    x = tt.constant([0.5, -1.0], tt.float64)
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = block(x)
    inner = np.tanh(x.numpy())
    want = (1 - np.tanh(inner) ** 2) * (1 - inner**2)
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), want, rtol=1e-12)
    v = tt.Variable(1.0)
    v.assign_add(2.0)  # outside it, assigns work as before
    assert float(v) == 3.0


@tt.custom_gradient
def bare(x):
    return x * 2.0


@tt.custom_gradient
def two_tensors(x):
    return x * 2.0, x * 3.0


def test_a_custom_gradient_returning_a_bare_tensor_says_what_it_must_return():
    x = tt.constant(1.0)
    with pytest.raises(TypeError) as raised:
        with tt.GradientTape() as tape:
            tape.watch(x)
            bare(x)  # calls bare
    message = str(raised.value)
    assert "'bare'" in message and "must return a pair (output, grad_fn)" in message
    assert "it returned a Tensor" in message and line_of("calls bare") in message
    with pytest.raises(TypeError, match=r"returned a tuple of 2 \(Tensor, Tensor\)"):
        two_tensors(x)
    with pytest.raises(TypeError, match="'bare'.*must return a pair"):
        tt.function(bare)(x)


@tt.custom_gradient
def single_precision_gradient(x):
    def grad(upstream):
        return tt.ones_like(x, dtype=tt.float32) * 3.0

    return x * 3.0, grad


def test_a_gradient_of_another_dtype_than_its_input_raises():
    x = tt.constant([1.0, 2.0], tt.float64)

    def gradient(x):
        with tt.GradientTape() as tape:
            tape.watch(x)
            y = single_precision_gradient(x)
        return tape.gradient(y, x)

    for run in (gradient, tt.function(gradient, backend="interpreter")):
        with pytest.raises(TypeError) as raised:
            run(x)
        message = str(raised.value)
        assert "custom_gradient(single_precision_gradient)" in message
        assert "gradient of dtype float32 for input 0, of dtype float64" in message


@tt.custom_gradient
def python_number_gradient(x):
    return x * 3.0, lambda upstream: 3.0  # a Python float takes the input's dtype


def test_a_gradient_given_as_a_python_number_takes_the_inputs_dtype():
    x = tt.constant(2.0, tt.float64)
    with tt.GradientTape() as tape:
        tape.watch(x)
        y = python_number_gradient(x)
    g = tape.gradient(y, x)
    assert g.dtype == tt.float64 and float(g) == 3.0


@pytest.mark.parametrize("primal", [1.0, np.array([1.0, 2.0])], ids=["float", "ndarray"])
def test_forward_accumulator_takes_tensors_and_variables_only(primal):
    with pytest.raises(TypeError, match="primals must be tensors or variables"):
        tt.autodiff.ForwardAccumulator(primal, np.ones_like(primal))


def test_forward_accumulator_refuses_to_be_entered_twice_but_may_be_reused():
    x = tt.constant(3.0)
    accumulator = tt.autodiff.ForwardAccumulator(x, tt.constant(1.0))
    with accumulator:
        with pytest.raises(ValueError, match="Accumulator is already recording"):
            with accumulator:
                pass
        y = x * x
    assert float(accumulator.jvp(y)) == 6.0
    with accumulator:  # after its block, it may record again (as TensorFlow's)
        z = x * x * x
    assert float(accumulator.jvp(z)) == 27.0


# --- item 10: conversions that lose values ---------------------------------------------------


@pytest.mark.parametrize("dtype", [tt.float32, tt.int32, tt.float64])
def test_a_complex_python_scalar_does_not_convert_to_a_real_tensor(dtype):
    x = tt.constant([1, 2], dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning on the way
        with pytest.raises(TypeError) as raised:
            x * (1 + 2j)  # complex scalar
        message = str(raised.value)
        assert f"cannot convert (1+2j) to a tensor of dtype {dtype.name}" in message
        assert line_of("complex scalar") in message
        for backend in ("interpreter", "c"):
            with pytest.raises(TypeError, match=f"dtype {dtype.name}: it is complex"):
                tt.function(lambda a: a * (1 + 2j), backend=backend)(x)
        with pytest.raises(TypeError, match="it is complex"):
            tt.constant(1 + 2j, dtype=dtype)
        with pytest.raises(TypeError, match="it is complex"):
            tt.constant(np.array([1 + 2j]), dtype=dtype)


def test_complex_operands_of_complex_tensors_and_explicit_casts_still_work():
    z = tt.constant([0.3, 1.0], tt.complex64)
    np.testing.assert_allclose((z * (1 + 2j)).numpy(), np.array([0.3, 1.0]) * (1 + 2j), rtol=1e-6)
    compiled = tt.function(lambda a: a * (1 + 2j))(z)
    np.testing.assert_allclose(compiled.numpy(), np.array([0.3, 1.0]) * (1 + 2j), rtol=1e-6)
    with warnings.catch_warnings():
        # NOTE: numpy's ComplexWarning from the cast kernel, which TensorFlow's cast does not give
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        real = tt.cast(tt.constant([1 + 2j]), tt.float32)  # a cast says the imaginary part goes
    assert real.numpy().tolist() == [1.0]


def test_assign_refuses_a_numpy_array_whose_conversion_drops_part_of_each_number():
    v = tt.Variable([1.0, 2.0], name="w")
    for method in ("assign", "assign_add", "assign_sub"):
        with pytest.raises(TypeError) as raised:
            getattr(v, method)(np.array([1 + 0j, 2 + 0j]))
        message = str(raised.value)
        assert f"{method}: w:0 has dtype float32" in message and "dtype complex128" in message
    assert v.numpy().tolist() == [1.0, 2.0]
    counter = tt.Variable(1, name="n")
    with pytest.raises(TypeError, match="n:0 has dtype int32.*dtype float64"):
        counter.assign(np.float64(2.0))
    with pytest.raises(TypeError, match="n:0 has dtype int32.*dtype float32"):
        counter.assign_add(np.array(0.5, np.float32))
    assert int(counter) == 1


def test_assign_converts_numpy_integers_to_a_float_variable_as_tensorflow_does():
    """TensorFlow 2.21: `tf.Variable([1.0, 2.0]).assign(np.array([2, 3], np.int64))` gives
    float32 [2., 3.] (its conversion casts numpy arrays to the variable's dtype)."""
    v = tt.Variable([1.0, 2.0])
    v.assign(np.array([2, 3], dtype=np.int64))
    assert v.dtype == tt.float32 and v.numpy().tolist() == [2.0, 3.0]
    v.assign_add(np.array([2**24 + 1, 1], dtype=np.int64))
    np.testing.assert_array_equal(v.numpy(), np.array([2.0, 3.0]) + np.float32([2**24 + 1, 1]))


def test_assign_converts_values_of_the_same_kind_and_python_numbers():
    v = tt.Variable([1.0, 2.0])
    v.assign(np.array([0.1, 0.2]))  # float64 into float32: converted, as before
    np.testing.assert_array_equal(v.numpy(), np.array([0.1, 0.2], np.float32))
    v.assign([3, 4])  # Python ints: TensorFlow converts them
    assert v.numpy().tolist() == [3.0, 4.0]
    n = tt.Variable(np.int64(1))
    n.assign_add(np.int32(2))  # int32 into int64
    assert n.dtype == tt.int64 and int(n) == 3


def _gather_gradient(params, indices):
    with tt.GradientTape() as tape:
        tape.watch(params)
        y = tt.reduce_sum(tt.gather(params, indices) * 2.0)  # gathers
    return tape.gradient(y, params)


@pytest.mark.parametrize("bad", [[0, 5], [-1, 1]], ids=["past the end", "negative"])
def test_gather_out_of_range_raises_at_the_call(bad):
    params = tt.Variable([1.0, 2.0, 3.0])
    indices = tt.constant(bad)
    with pytest.raises(IndexError, match=r"gather: index -?\d is out of range \[0, 3\)"):
        tt.gather(params, indices)
    with pytest.raises(IndexError, match=r"gather: index"):
        _gather_gradient(params, indices)
    for backend in ("interpreter", "c"):
        forward = tt.function(lambda p, i: tt.gather(p, i), backend=backend)
        with pytest.raises(IndexError, match=r"gather: an index is out of range \[0, 3\)"):
            forward(params, indices)
        # only the gradient is returned: the forward gather is dead code there, and the
        # rows of the gradient are checked instead of an IndexedSlices failing when densified
        gradient = tt.function(_gather_gradient, backend=backend)
        with pytest.raises(IndexError, match=r"gather: an index is out of range \[0, 3\)") as e:
            gradient(params, indices)
        if backend == "c":
            assert f"{line_of('gathers')} (grad of gather)" in str(e.value)


@pytest.mark.parametrize("backend", ["interpreter", "c"])
def test_gather_out_of_range_names_the_call_s_size_where_it_is_unknown_to_the_trace(backend):
    forward = tt.function(
        lambda p, i: tt.gather(p, i) * 2.0,
        backend=backend,
        input_signature=[tt.TensorSpec([None], tt.float32), tt.TensorSpec([None], tt.int32)],
    )
    for size in (3, 8):  # one module for both sizes: its message names the call's
        params = tt.constant(np.arange(size, dtype=np.float32))
        np.testing.assert_array_equal(
            forward(params, tt.constant([size - 1])).numpy(), [2 * size - 2]
        )
        with pytest.raises(IndexError, match=rf"gather: an index is out of range \[0, {size}\)"):
            forward(params, tt.constant([0, size]))
    assert forward.experimental_get_tracing_count() == 1


def test_a_message_s_dims_are_written_as_sizes_in_the_op_s_words_only():
    message = "gather: an index is out of range [0, (784*d0 + d1_2)) (at d0.py:3)"
    assert compiled._with_sizes(message, {"d0": 8, "d1_2": 5}) == (
        "gather: an index is out of range [0, 6277) (at d0.py:3)"
    )
    assert compiled._with_sizes("out of range [0, d0)", {"d0": 2}) == "out of range [0, 2)"
    assert compiled._with_sizes("[0, 3*d0*d1) of 4", {"d0": 2, "d1": 5}) == "[0, 30) of 4"
    assert compiled._with_sizes("[0, (d0 - 1)) in d0.py", {"d0": 9}) == "[0, 8) in d0.py"
    assert compiled._with_sizes("[0, d7)", {"d0": 9}) == "[0, d7)"


def test_gather_gradient_in_range_is_indexed_slices_of_the_right_rows():
    params = tt.constant(np.ones((4, 2), np.float32))
    indices = tt.constant([1, 1, 3])
    want = np.zeros((4, 2), np.float32)
    np.add.at(want, [1, 1, 3], 2.0)
    eager = _gather_gradient(params, indices)
    assert isinstance(eager, tt.IndexedSlices)
    np.testing.assert_array_equal(tt.convert_to_tensor(eager).numpy(), want)
    spec = [tt.TensorSpec([4, 2], tt.float32), tt.TensorSpec([None], tt.int32)]
    for backend in ("interpreter", "c"):
        for signature in (None, spec):
            f = tt.function(_gather_gradient, backend=backend, input_signature=signature)
            got = f(params, indices)
            assert isinstance(got, tt.IndexedSlices)
            assert got.indices.numpy().tolist() == [1, 1, 3]
            np.testing.assert_array_equal(tt.convert_to_tensor(got).numpy(), want)
            with pytest.raises(IndexError, match=r"out of range \[0, 4\)"):
                f(params, tt.constant([4]))


# --- item 12: a cache directory that cannot be used --------------------------------------------

PROGRAM = textwrap.dedent(
    """
    import json, warnings
    import tracer as tt

    out = {}
    x = tt.constant([1.0, 2.0])
    try:
        tt.function(lambda x: x * 2.0, backend="c")(x)
    except Exception as error:
        out["c"] = [type(error).__name__, str(error)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f = tt.function(lambda x: x * 2.0, backend="auto")
        y = f(x)
        y = f(x)
    out["auto"] = {"y": y.numpy().tolist(), "backend": f.get_concrete_function(x).backend,
                   "warnings": [str(w.message) for w in caught]}
    print(json.dumps(out))
    """
)


def _read_only_directory(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root writes to a mode 0500 directory")
    path = tmp_path / "read-only"
    path.mkdir(mode=0o500)
    return path


CACHES = {
    "a file": (lambda tmp_path: tmp_path / "file", "it exists and is not a directory"),
    "under a file": (
        lambda tmp_path: tmp_path / "file" / "cache",
        "a part of its path is a file, not a directory",
    ),
    "read-only": (_read_only_directory, "this user cannot write to it"),
}


@pytest.mark.parametrize("case", sorted(CACHES))
def test_an_unusable_cache_directory_is_one_clear_error_or_the_interpreter(tmp_path, case):
    (tmp_path / "file").write_text("not a directory")
    make, reason = CACHES[case]
    path = make(tmp_path)
    out = run_json(PROGRAM, path)
    kind, message = out["c"]
    assert kind == "UnusableCacheDirectory"
    assert f"cannot use the cache directory {path}: {reason}" in message
    auto = out["auto"]
    assert auto["y"] == [2.0, 4.0] and auto["backend"] == "interpreter"
    (warning,) = auto["warnings"]  # one warning, naming the directory and the interpreter
    assert str(path) in warning and "numpy interpreter" in warning
    assert (tmp_path / "file").read_text() == "not a directory"


def test_a_directory_this_user_cannot_write_is_refused(tmp_path, monkeypatch):
    """What the read-only case checks, where the tests run as root (who writes anyway)."""
    path = tmp_path / "cache"
    monkeypatch.setenv("TRACER_CACHE_DIR", str(path))
    monkeypatch.setattr(cache.os, "access", lambda *args, **kwargs: False)
    with pytest.raises(UnusableCacheDirectory, match="this user cannot write to it"):
        cache.cache_root()
    monkeypatch.undo()
    monkeypatch.setenv("TRACER_CACHE_DIR", str(path))
    assert cache.cache_root() == str(path)  # usable once it can be written
