"""benchmarks/tf_guides: the cell executor on a small notebook with tracer as the engine, and
the comparison's normalization and counting on hand-made records (no TensorFlow needed)."""

import importlib.util
import json
import os
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parent.parent
TOOL = REPO / "benchmarks" / "tf_guides"


def _module(name):
    spec = importlib.util.spec_from_file_location(f"tf_guides_{name}", TOOL / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


compare = _module("compare")
execute = _module("execute")

CELLS = [
    "!pip install -q tensorflow\nimport tensorflow as tf\nprint(tf.constant([1.0, 2.0]))",
    "raise ValueError('boom')",
    "def double(x):\n    return x * 2",
    "print('after', double(21))\ndouble(tf.constant(3))",
]


def _notebook(path, sources):
    cells = [{"cell_type": "markdown", "source": ["# A title"]}]
    cells += [{"cell_type": "code", "source": s.splitlines(True)} for s in sources]
    path.write_text(json.dumps({"cells": cells, "nbformat": 4}))
    return path


def test_the_executor_runs_the_cells_in_one_namespace_with_tracer(tmp_path):
    notebook = _notebook(tmp_path / "guide.ipynb", CELLS)
    out = tmp_path / "guide.tracer.json"
    command = [sys.executable, str(TOOL / "execute.py"), str(notebook), "tracer", str(out)]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))  # fmt: skip
    assert done.returncode == 0, done.stderr
    records = json.loads(out.read_text())
    assert [r["cell"] for r in records] == [0, 1, 2, 3]
    assert records[0]["source"] == CELLS[0]  # as written, the !pip line included
    assert records[0]["error"] is None
    assert "tracer.Tensor([1. 2.], shape=(2,), dtype=float32)" in records[0]["output"]
    assert records[1]["error"] == "ValueError: boom"
    assert (records[2]["output"], records[2]["error"]) == ("", None)
    assert records[3]["error"] is None
    assert records[3]["output"].startswith("after 42\n")  # double, defined in cell 2
    assert records[3]["output"].endswith("<tracer.Tensor: shape=(), dtype=int32, numpy=6>\n")


def test_prepare_drops_shell_lines_and_swaps_the_import():
    source = "!pip install x\n%matplotlib inline\nimport tensorflow as tf"
    assert execute.prepare(source, "tracer") == "import tracer as tf"
    assert execute.prepare(source, "tf") == "import tensorflow as tf"


def test_prepare_swaps_imports_of_modules_in_tensorflow():
    source = (
        "import tensorflow.compat.v1 as tf1\nfrom tensorflow import keras\n"
        "from tensorflow.keras import layers\nimport tensorflow_datasets as tfds\n"
        "x = 'import tensorflow'"
    )
    assert execute.prepare(source, "tracer") == (
        "import tracer.compat.v1 as tf1\nfrom tracer import keras\n"
        "from tracer.keras import layers\nimport tensorflow_datasets as tfds\n"
        "x = 'import tensorflow'"
    )


def test_prepare_swaps_imports_of_keras_for_tracers():
    source = "import keras\nimport keras as k\nfrom keras import layers\nimport keras_cv\n"
    assert execute.prepare(source, "tracer") == (
        "from tracer import keras\nfrom tracer import keras as k\n"
        "from tracer.keras import layers\nimport keras_cv\n"
    )
    assert execute.prepare(source, "tf") == source


def test_normalize_reads_tracer_as_tensorflow_and_drops_noise():
    tracer_text = (
        "tracer.Tensor(1.0, shape=(), dtype=float32) <tracer.variables.Foo object at 0x7f00>\n"
        "tt.float32 <class 'tracer.tensor.Tensor'>\n"
        "Traceback (most recent call last):\n"
        '  File "<cell-3>", line 2, in <module>\n'
        '  File "/site-packages/tracer/ops.py", line 10, in apply\n'
        "    raise InvalidArgumentError(message)\n"
        "tracer.errors.InvalidArgumentError: bad\n"
    )
    tf_text = (
        "2024-01-01 00:00:00.000: I tensorflow/core/util/port.cc] oneDNN custom operations\n"
        "tf.Tensor(1.0, shape=(), dtype=float32) <tensorflow.python.Foo object at 0x55aa>\n"
        "tf.float32 <class 'tensorflow.python.framework.ops.Tensor'>\n"
        "Traceback (most recent call last):\n"
        '  File "<cell-3>", line 2, in <cell line: 2>\n'
        "    ^^^^^^\n"
        "tensorflow.python.framework.errors_impl.InvalidArgumentError: bad\n"
    )
    assert compare.normalize(tracer_text) == compare.normalize(tf_text)
    assert "tf.Tensor(1.0" in compare.normalize(tracer_text)
    assert compare.normalize(None) is None
    assert compare.normalize("tf.Tensor(1)") != compare.normalize("tf.Tensor(2)")


def test_normalize_reads_module_names_and_temporary_folders_as_tensorflows():
    pairs = [
        (
            "AttributeError: module 'tracer.compat.v1' has no attribute 'estimator'",
            "AttributeError: module 'tensorflow.compat.v1' has no attribute 'estimator'",
        ),
        (
            "module 'tracer.keras.utils' has no attribute 'X'",
            "module 'keras.utils' has no attribute 'X'",
        ),
        ("module 'tracer' has no attribute 'Y'", "module 'tensorflow' has no attribute 'Y'"),
        ("Received: filepath=/tmp/tmpfiltts0c", "Received: filepath=/tmp/tmpqll7uj3j"),
        (
            "/w/tracer/keras/layers/layer.py:105: UserWarning: Do not pass\n"
            "  _warn_input_shape(self)\nok\n",
            "/lib/keras/src/layers/reshaping/flatten.py:37: UserWarning: Do not pass\n"
            "  super().__init__(**kwargs)\nok\n",
        ),
    ]
    for tracer_text, tf_text in pairs:
        assert compare.normalize(tracer_text) == compare.normalize(tf_text)
    assert compare.normalize("module 'tracer' has") != compare.normalize("module 'keras' has")
    assert compare.normalize("<cell-2>:3: UserWarning: a\n  x = f()\n") != compare.normalize(
        "<cell-2>:3: UserWarning: b\n  x = f()\n"
    )


def _cell(index, source, output="", error=None):
    return {"cell": index, "source": source, "output": output, "error": error}


def test_counting_a_match_a_mismatch_a_nonreproducible_cell_and_exclusions():
    tf_run = [
        _cell(0, "print(tf.constant(1))", "tf.Tensor(1, shape=(), dtype=int32)\n"),
        _cell(1, "print(tf.constant(2))", "tf.Tensor(2, shape=(), dtype=int32)\n"),
        _cell(2, "print(tf.random.normal([]))", "tf.Tensor(0.3, shape=(), dtype=float32)\n"),
        _cell(3, "import matplotlib.pyplot as plt\nplt.plot([1])"),
        _cell(4, "print(g.as_graph_def())", "node { name: 'x' }\n"),
        _cell(5, "# Copyright 2020"),
        _cell(6, "print(1 / x)", "", "ZeroDivisionError: division by zero"),
    ]
    tf_again = [dict(c) for c in tf_run]
    tf_again[2]["output"] = "tf.Tensor(-1.2, shape=(), dtype=float32)\n"
    tracer_run = [
        _cell(0, "", "tracer.Tensor(1, shape=(), dtype=int32)\n"),
        _cell(1, "", "tracer.Tensor(3, shape=(), dtype=int32)\n"),
        _cell(2, "", "tracer.Tensor(0.9, shape=(), dtype=float32)\n"),
        _cell(3, "", "", "AttributeError: stub"),
        _cell(4, "", "something else\n"),
        _cell(5, ""),
    ]  # cell 6 never ran: the notebook timed out
    result = compare.compare_guide(tf_run, tracer_run, tf_again)
    status = {row["cell"]: row["status"] for row in result["rows"]}
    assert status == {
        0: "match",
        1: "mismatch",
        2: "match-nonrepro",
        3: "excluded",
        4: "excluded",
        5: "excluded",
        6: "mismatch",
    }
    assert (result["match"], result["counted"]) == (2, 4)
    why = {row["cell"]: row["why"] for row in result["rows"]}
    assert "tf.Tensor(2" in why[1] and "tf.Tensor(3" in why[1]
    assert why[6].startswith("tracer raised NOT RUN")
    assert "matplotlib" in why[3] and "GraphDef" in why[4] and why[5].startswith("no code")


def test_a_nonreproducible_cell_where_tracer_raises_is_a_mismatch():
    tf_cell = _cell(0, "f()", "1.5\n")
    tracer_cell = _cell(0, "f()", "", "TypeError: nope")
    status, why, reproducible = compare.compare_cell(tf_cell, tracer_cell, _cell(0, "f()", "2.5\n"))
    assert (status, reproducible) == ("mismatch", False)
    assert why == "tracer raised TypeError: nope  [TF nonreproducible]"


def test_functions_defined_in_a_plotting_cell_exclude_the_cells_that_use_them():
    cells = [
        _cell(0, "def show(x):\n    plt.plot(x)"),
        _cell(1, "show([1, 2])"),
        _cell(2, "print(1)", "1\n"),
    ]
    assert compare.exclusions(cells) == {
        0: "plotting (matplotlib stubbed)",
        1: "plotting (matplotlib stubbed)",
    }
