"""The examples under examples/advanced/ are the project's own programs for the behaviours
TensorFlow's advanced-autodiff guide documents (custom gradients, controlling what the tape
records, forward mode, higher-order gradients, jacobians, control flow; modules.py follows
its modules guide), each asserting the documented values; here each runs in a subprocess,
as a user would run it."""

import subprocess
import sys
from pathlib import Path

import pytest

ADVANCED = Path(__file__).resolve().parents[1] / "examples" / "advanced"
SCRIPTS = sorted(p.name for p in ADVANCED.glob("*.py"))


def test_the_examples_are_there():
    assert {
        "custom_gradient.py",
        "forward_mode.py",
        "jacobians.py",
        "stop_and_recompute.py",
    } <= set(SCRIPTS)


@pytest.mark.parametrize("script", SCRIPTS)
def test_example_runs_and_its_asserts_hold(script):
    result = subprocess.run(
        [sys.executable, str(ADVANCED / script)], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "import tensorflow" not in (ADVANCED / script).read_text()
