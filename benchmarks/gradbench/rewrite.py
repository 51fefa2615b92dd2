"""GradBench's TensorFlow tool with its import lines changed to tracer, and nothing else.

`tensorflow_as_tracer(gradbench, work)` copies the checkout's Python package to
`work/overlay/gradbench` and, in its TensorFlow tool only, rewrites the lines that import
TensorFlow (`import tensorflow as tf`, `from tensorflow.python.framework.ops import ...`)
to import tracer instead. Every other line is GradBench's, unchanged: how far that tool
runs on tracer is what a TensorFlow user would see. The copy lives outside the project.
"""

import re
import shutil
from pathlib import Path

_IMPORTS = [
    (re.compile(r"^import tensorflow as tf$", re.M), "import tracer as tf"),
    (re.compile(r"^from tensorflow(\.[\w.]+)? import ", re.M), r"from tracer\1 import "),
]


def tensorflow_as_tracer(gradbench, work):
    """The directory to put first on PYTHONPATH: it holds the rewritten `gradbench` package."""
    overlay = Path(work) / "overlay"
    target = overlay / "gradbench"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(Path(gradbench) / "python" / "gradbench" / "gradbench", target)
    for path in (target / "tools" / "tensorflow").glob("*.py"):
        text = path.read_text()
        for pattern, replacement in _IMPORTS:
            text = pattern.sub(replacement, text)
        path.write_text(text)
    return overlay


def changed_lines(gradbench, work):
    """[(file, original line, rewritten line)] for every line the rewrite changed."""
    overlay = tensorflow_as_tracer(gradbench, work)
    source = Path(gradbench) / "python" / "gradbench" / "gradbench" / "tools" / "tensorflow"
    changes = []
    for path in sorted(source.glob("*.py")):
        before = path.read_text().splitlines()
        after = (overlay / "gradbench" / "tools" / "tensorflow" / path.name).read_text()
        for old, new in zip(before, after.splitlines()):
            if old != new:
                changes.append((path.name, old, new))
    return changes
