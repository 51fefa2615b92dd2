"""Copies of GradBench's Python package, changed in the few lines the runner needs, outside
the project (`work/<name>/gradbench`, put first on PYTHONPATH).

- `tensorflow_as_tracer`: its TensorFlow tool with the lines that import TensorFlow
  (`import tensorflow as tf`, `from tensorflow.python.framework.ops import ...`) importing
  tracer instead, and nothing else: how far that tool runs on tracer is what a TensorFlow
  user would see.
- `timed_to_completion`: GradBench's timing wrapper (`gradbench/wrap.py`) waits for a
  JAX result before it stops the clock. JAX dispatches asynchronously, so its tool's timed
  call otherwise returns before the work is done and the timing leaves the work out; every
  other tool computes its result before returning, and is unchanged by this.

Both copies carry the `timed_to_completion` change.
"""

import re
import shutil
from pathlib import Path

_IMPORTS = [
    (re.compile(r"^import tensorflow as tf$", re.M), "import tracer as tf"),
    (re.compile(r"^from tensorflow(\.[\w.]+)? import ", re.M), r"from tracer\1 import "),
]
_TIMED_CALL = re.compile(r"^(\s+)output = function\(input\)$", re.M)
_WAIT = '''

def _completed(output):
    """`output`, once computed (JAX's arrays are computed asynchronously)."""
    import sys

    jax = sys.modules.get("jax")
    return output if jax is None else jax.block_until_ready(output)
'''


def tensorflow_as_tracer(gradbench, work):
    """The directory to put first on PYTHONPATH for GradBench's TensorFlow tool on tracer."""
    overlay = timed_to_completion(gradbench, work, "as-tracer")
    for path in (overlay / "gradbench" / "tools" / "tensorflow").glob("*.py"):
        text = path.read_text()
        for pattern, replacement in _IMPORTS:
            text = pattern.sub(replacement, text)
        path.write_text(text)
    return overlay


def timed_to_completion(gradbench, work, name="peers"):
    """The directory to put first on PYTHONPATH for GradBench's tools timed to completion."""
    overlay = Path(work) / name
    target = overlay / "gradbench"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(Path(gradbench) / "python" / "gradbench" / "gradbench", target)
    wrap = target / "wrap.py"
    text, count = _TIMED_CALL.subn(r"\1output = _completed(function(input))", wrap.read_text())
    if count != 2:
        raise RuntimeError(f"{wrap}: expected GradBench's two timed calls, found {count}")
    wrap.write_text(text + _WAIT)
    return overlay
