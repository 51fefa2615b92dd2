"""The project's examples under examples/seeds/: one script for each behaviour that the seed
documents show in a code example, each checked against the output or values that seed shows.

Every script is run in a subprocess (as a user would run it). Scripts for an example whose seed
shows printed output must print exactly that output (with `tf.Tensor` printed as
`tracer.Tensor`, and `ResourceVariable`/`EagerTensor` as `Variable`/`Tensor`). Scripts for an
example whose seed states its values only in comments or asserts assert those values
themselves, print nothing, and must exit 0; their values are checked again here, in-process.
The error cases the seeds document are tested at the end.
"""

import runpy
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import tracer as tt

REPO = Path(__file__).resolve().parents[1]
SEEDS = REPO / "examples" / "seeds"


def _text(s):
    return textwrap.dedent(s).strip("\n").splitlines()


# script -> the output the seed shows for its example (tf.Tensor -> tracer.Tensor, type names adjusted).
EXPECTED_OUTPUT = {
    # 000: the current tf.GradientTape reference page
    "s000_square_gradient.py": """
        tracer.Tensor(6.0, shape=(), dtype=float32)
    """,
    "s000_nested_tapes.py": """
        tracer.Tensor(10.0, shape=(), dtype=float32)
        tracer.Tensor(2.0, shape=(), dtype=float32)
    """,
    "s000_persistent_tape.py": """
        tracer.Tensor(108.0, shape=(), dtype=float32)
        tracer.Tensor(6.0, shape=(), dtype=float32)
    """,
    # (seed 000 is cut off inside this example; the output is the one seed 003 shows for it)
    "s000_watch_accessed_variables.py": """
        tracer.Tensor(4.0, shape=(), dtype=float32)
        None
    """,
    # 001: the autodiff guide notebook
    "s001_gradient_tape_shapes.py": """
        (3, 2)
        (3, 2)
    """,
    "s001_dense_layer_gradients.py": """
        dense/kernel:0, shape: (3, 2)
        dense/bias:0, shape: (2,)
    """,
    "s001_watched_variables.py": """
        6.0
        tracer.Tensor(6.0, shape=(), dtype=float32)
        None
        None
        None
        ['x0:0']
    """,
    "s001_watch_accessed_variables_false.py": """
        dy/dx0: None
        dy/dx1: 0.9999546
    """,
    "s001_intermediate_results.py": """
        18.0
    """,
    "s001_persistent_tape_vector.py": """
        [  4. 108.]
        [2. 6.]
    """,
    "s001_unconnected_gradient_none.py": """
        None
    """,
    "s001_variable_replaced_by_tensor.py": """
        Variable : tracer.Tensor(1.0, shape=(), dtype=float32)
        Tensor : None
    """,
    "s001_numpy_calculation.py": """
        None
    """,
    "s001_integer_gradient.py": """
        None
    """,
    # 003: the TF 2.4 page
    "s003_square_gradient.py": """
        tracer.Tensor(6.0, shape=(), dtype=float32)
    """,
    "s003_nested_tapes.py": """
        tracer.Tensor(10.0, shape=(), dtype=float32)
        tracer.Tensor(2.0, shape=(), dtype=float32)
    """,
    "s003_persistent_tape.py": """
        tracer.Tensor(108.0, shape=(), dtype=float32)
        tracer.Tensor(6.0, shape=(), dtype=float32)
    """,
    "s003_watch_accessed_variables.py": """
        tracer.Tensor(4.0, shape=(), dtype=float32)
        None
    """,
    "s003_stop_recording.py": """
        None
    """,
}

# Scripts for examples whose seed states the values only in comments or asserts: they assert
# them and print nothing.
ASSERTING_SCRIPTS = [
    "s002_square_gradient.py",
    "s002_nested_tapes.py",
    "s002_persistent_tape.py",
    "s002_reset.py",
    "s002_reset_in_control_flow.py",
    "s002_stop_recording.py",
    "s003_watch_accessed_variables_model.py",
    "s003_batch_jacobian.py",
    "s003_jacobian.py",
    "s003_reset.py",
    "s003_reset_in_control_flow.py",
    "s004_gradient_of_sum.py",
    "s004_intermediate_gradient.py",
    "s004_persistent_tape.py",
    "s004_control_flow.py",
    "s004_higher_order.py",
]

ALL_SCRIPTS = sorted(EXPECTED_OUTPUT) + sorted(ASSERTING_SCRIPTS)


def _run(name):
    """The script's completed subprocess (each test runs its own: parallel test workers share
    them out)."""
    try:
        return subprocess.run(
            [sys.executable, str(SEEDS / name)],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except subprocess.TimeoutExpired as e:
        return e


def _check_ran(proc):
    assert not isinstance(proc, subprocess.TimeoutExpired), f"timed out after 60 s: {proc.cmd}"
    assert proc.returncode == 0, (
        f"exit status {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    )


def test_every_script_is_checked():
    on_disk = sorted(p.name for p in SEEDS.glob("*.py"))
    assert on_disk == sorted(ALL_SCRIPTS)
    assert not set(EXPECTED_OUTPUT) & set(ASSERTING_SCRIPTS)


@pytest.mark.parametrize("name", sorted(EXPECTED_OUTPUT))
def test_script_prints_the_seed_output(name):
    proc = _run(name)
    _check_ran(proc)
    assert proc.stdout.splitlines() == _text(EXPECTED_OUTPUT[name]), proc.stderr


@pytest.mark.parametrize("name", ASSERTING_SCRIPTS)
def test_asserting_script_passes(name):
    proc = _run(name)
    _check_ran(proc)
    assert proc.stdout == "", "asserting scripts print nothing"


# --- the asserting scripts' values, checked in-process ----------------------------------------


def _namespace(name):
    """Run the script in this process and return its globals."""
    return runpy.run_path(str(SEEDS / name), run_name="__seed__")


@pytest.mark.parametrize("name", ["s002_square_gradient.py"])
def test_square_gradient_value(name):
    np.testing.assert_allclose(_namespace(name)["slope"].numpy(), 6.0)


def test_nested_tapes_outer_not_watching_gives_none():
    ns = _namespace("s002_nested_tapes.py")
    np.testing.assert_allclose(ns["slope"].numpy(), 6.0)
    assert ns["curvature"] is None  # TF 2.x: the outer tape does not watch x


@pytest.mark.parametrize("name", ["s002_persistent_tape.py", "s004_persistent_tape.py"])
def test_persistent_tape_values(name):
    ns = _namespace(name)
    np.testing.assert_allclose(ns["grad_fourth"].numpy(), 108.0)
    np.testing.assert_allclose(ns["grad_square"].numpy(), 6.0)


@pytest.mark.parametrize("name", ["s002_reset.py", "s003_reset.py"])
def test_reset_differentiates_only_the_second_loss(name):
    ns = _namespace(name)
    np.testing.assert_allclose(ns["slope_second_tape"].numpy(), 3.0)
    np.testing.assert_allclose(ns["slope_reset"].numpy(), 3.0)
    np.testing.assert_allclose(ns["total"].numpy(), 4.0 + 6.0)


@pytest.mark.parametrize("name", ["s002_reset_in_control_flow.py", "s003_reset_in_control_flow.py"])
def test_reset_in_control_flow(name):
    ns = _namespace(name)
    assert ns["slope"] is None


def test_stop_recording_gradients():
    ns = _namespace("s002_stop_recording.py")
    kernel, bias = (v.numpy() for v in ns["layer"].variables)
    x = np.array([[1.0, 2.0, 3.0]], dtype=np.float32)
    dl_dy = x @ kernel + bias  # d mean(y**2)/dy = 2y/2 for y of shape (1, 2)
    np.testing.assert_allclose(ns["layer_grads"][0].numpy(), x.T @ dl_dy, rtol=1e-5)
    np.testing.assert_allclose(ns["layer_grads"][1].numpy(), dl_dy[0], rtol=1e-5)
    assert ns["tape"].gradient(ns["layer_grads"], ns["layer"].variables) == [None, None]


def test_unbuilt_model_watch_gives_nones():
    ns = _namespace("s003_watch_accessed_variables_model.py")
    assert [v.shape for v in ns["first"].variables] == [(3, 32), (32,)]
    assert ns["first_grads"] == [None, None]
    assert ns["output"].shape == (1, 32)


def test_batch_jacobian_value():
    ns = _namespace("s003_batch_jacobian.py")
    np.testing.assert_allclose(ns["per_row"].numpy(), [[[2, 0], [0, 4]], [[6, 0], [0, 8]]])
    assert ns["per_row"].dtype == tt.float32


def test_jacobian_value():
    ns = _namespace("s003_jacobian.py")
    np.testing.assert_allclose(ns["jac"].numpy(), [[2.0, 0.0], [0.0, 4.0]])
    assert ns["jac"].dtype == tt.float32


def test_gradient_of_sum_and_intermediate():
    ns = _namespace("s004_gradient_of_sum.py")
    np.testing.assert_array_equal(ns["grad_wrt_ones"].numpy(), np.full((2, 2), 8.0))
    ns = _namespace("s004_intermediate_gradient.py")
    np.testing.assert_array_equal(ns["grad_wrt_total"].numpy(), 8.0)


def test_control_flow_gradients():
    ns = _namespace("s004_control_flow.py")
    grad, x = ns["slope"], ns["two"]
    np.testing.assert_array_equal(grad(x, 6).numpy(), 12.0)  # x**3 -> 3 x**2
    np.testing.assert_array_equal(grad(x, 4).numpy(), 4.0)  # x**2 -> 2 x
    np.testing.assert_array_equal(grad(x, 5).numpy(), 12.0)  # also x**3


def test_higher_order_through_variable():
    ns = _namespace("s004_higher_order.py")
    np.testing.assert_array_equal(ns["first_derivative"].numpy(), 3.0)
    np.testing.assert_array_equal(ns["second_derivative"].numpy(), 6.0)


# --- the errors the seeds document -------------------------------------------------------------


def _square_tape(persistent=False, value=3.0):
    x = tt.constant(value)
    with tt.GradientTape(persistent=persistent) as g:
        g.watch(x)
        y = x * x
    return g, x, y


def test_second_gradient_on_non_persistent_tape_raises_runtime_error():
    g, x, y = _square_tape()
    np.testing.assert_allclose(g.gradient(y, x).numpy(), 6.0)
    with pytest.raises(RuntimeError):
        g.gradient(y, x)


def test_jacobian_and_batch_jacobian_on_used_non_persistent_tape_raise_runtime_error():
    g, x, y = _square_tape(value=[1.0, 2.0])
    g.jacobian(y, x)
    with pytest.raises(RuntimeError):
        g.jacobian(y, x)
    x = tt.constant([[1.0, 2.0]])
    with tt.GradientTape() as g:
        g.watch(x)
        y = x * x
    g.batch_jacobian(y, x)
    with pytest.raises(RuntimeError):
        g.batch_jacobian(y, x)


def test_watch_of_python_float_raises_value_error():
    with tt.GradientTape() as g:
        with pytest.raises(ValueError):
            g.watch(3.0)


def test_batch_jacobian_with_mismatched_first_dimensions_raises_value_error():
    x = tt.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    with tt.GradientTape() as g:
        g.watch(x)
        y = tt.transpose(x)  # shape (3, 2): first dimension 3, source's 2
    with pytest.raises(ValueError):
        g.batch_jacobian(y, x)


def test_jacobian_without_pfor_on_non_persistent_tape_raises_runtime_error():
    g, x, y = _square_tape(value=[1.0, 2.0])
    with pytest.raises(RuntimeError):
        g.jacobian(y, x, experimental_use_pfor=False)
    x = tt.constant([[1.0, 2.0]])
    with tt.GradientTape() as g:
        g.watch(x)
        y = x * x
    with pytest.raises(RuntimeError):
        g.batch_jacobian(y, x, experimental_use_pfor=False)


def test_jacobian_without_pfor_on_persistent_tape_works():
    g, x, y = _square_tape(persistent=True, value=[1.0, 2.0])
    np.testing.assert_allclose(
        g.jacobian(y, x, experimental_use_pfor=False).numpy(), [[2.0, 0.0], [0.0, 4.0]]
    )


def test_unknown_unconnected_gradients_value_raises_value_error():
    g, x, y = _square_tape()
    with pytest.raises(ValueError):
        g.gradient(y, x, unconnected_gradients="bogus")


def test_stop_recording_on_a_tape_that_is_not_recording():
    with pytest.raises(RuntimeError):  # never entered
        with tt.GradientTape().stop_recording():
            pass
    with tt.GradientTape(persistent=True) as g:
        pass
    with pytest.raises(ValueError):  # its context has exited
        with g.stop_recording():
            pass
