"""The GradBench runner without GradBench: the driver pipes a small eval and tool written
here (answers, analyses, a tool that hangs), and the rewrite changes only import lines and
GradBench's two timed calls."""

import sys
import textwrap

from benchmarks.gradbench.driver import run_session
from benchmarks.gradbench.rewrite import tensorflow_as_tracer

EVAL = """
import json, sys
def send(message):
    print(json.dumps(message), flush=True)
    return json.loads(sys.stdin.readline())
send({"id": 0, "kind": "start"})
send({"id": 1, "kind": "define", "module": "square"})
for k, x in enumerate([2.0, 3.0]):
    reply = send({"id": 2 + 2 * k, "kind": "evaluate", "module": "square",
                  "function": "f", "input": x, "description": f"x={x}"})
    ok = reply["output"] == x * x
    send({"id": 3 + 2 * k, "kind": "analysis", "of": 2 + 2 * k, "valid": ok,
          **({} if ok else {"error": "wrong square"})})
"""

TOOL = """
import json, sys, time
for line in sys.stdin:
    m = json.loads(line)
    r = {{"id": m["id"]}}
    if m["kind"] == "define":
        r["success"] = True
    if m["kind"] == "evaluate":
        if {hang} and m["input"] == 3.0:
            time.sleep(60)
        r.update(success=True, output=m["input"] ** 2 + {error},
                 timings=[{{"name": "evaluate", "nanoseconds": 5}}] * 2)
    print(json.dumps(r), flush=True)
"""


def _session(tmp_path, hang=False, error=0):
    (tmp_path / "eval.py").write_text(textwrap.dedent(EVAL))
    (tmp_path / "tool.py").write_text(TOOL.format(hang=hang, error=error))
    return run_session(
        [sys.executable, "eval.py"], [sys.executable, "tool.py"], tmp_path, None, timeout=5
    )


def test_the_driver_records_answers_timings_and_analyses(tmp_path):
    session = _session(tmp_path)
    assert session.defined and session.ended == "ok"
    assert [(e.function, e.workload) for e in session.evaluations] == [
        ("f", "x=2.0"),
        ("f", "x=3.0"),
    ]
    assert all(e.valid and e.success and e.timings_ns == [5, 5] for e in session.evaluations)


def test_the_eval_judges_wrong_answers(tmp_path):
    session = _session(tmp_path, error=1)
    assert [e.valid for e in session.evaluations] == [False, False]
    assert session.evaluations[0].error == "wrong square"


def test_a_tool_that_does_not_answer_ends_the_session_at_the_timeout(tmp_path):
    (tmp_path / "eval.py").write_text(textwrap.dedent(EVAL))
    (tmp_path / "tool.py").write_text(TOOL.format(hang=True, error=0))
    session = run_session(
        [sys.executable, "eval.py"], [sys.executable, "tool.py"], tmp_path, None, timeout=1
    )
    assert session.ended == "timeout"
    assert [e.valid for e in session.evaluations] == [True]


def test_the_rewrite_changes_import_lines_and_the_timed_calls_only(tmp_path):
    package = tmp_path / "gradbench" / "python" / "gradbench" / "gradbench"
    tool = package / "tools" / "tensorflow"
    tool.mkdir(parents=True)
    body = "x = tf.constant(1.0)\n# import tensorflow as tf in a comment stays\n"
    (tool / "lstm.py").write_text(
        "import numpy as np\nimport tensorflow as tf\n"
        "from tensorflow.python.framework.ops import disable_eager_execution\n" + body
    )
    (package / "wrap.py").write_text(
        "def a(function, input):\n    output = function(input)\n    return output\n"
        "def b(function, input):\n        output = function(input)\n        return output\n"
    )
    overlay = tensorflow_as_tracer(tmp_path / "gradbench", tmp_path / "work")
    rewritten = (overlay / "gradbench" / "tools" / "tensorflow" / "lstm.py").read_text()
    assert rewritten == (
        "import numpy as np\nimport tracer as tf\n"
        "from tracer.python.framework.ops import disable_eager_execution\n" + body
    )
    wrap = (overlay / "gradbench" / "wrap.py").read_text()
    assert wrap.count("output = _completed(function(input))") == 2
    assert "def _completed(output):" in wrap
