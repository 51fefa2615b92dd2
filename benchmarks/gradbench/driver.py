"""One GradBench session: an eval process and a tool process, their JSON lines piped to each
other as GradBench's intermediary does, each response awaited at most `timeout` seconds.

`run_session` returns what the table needs: per evaluate message its function, workload
(the eval's description), the tool's `evaluate` timings, whether it succeeded and whether the
eval judged its output valid; and how the session ended.
"""

import json
import queue
import subprocess
import threading
from dataclasses import dataclass, field


@dataclass
class Evaluation:
    """One `evaluate` message and what became of it."""

    function: str
    workload: str
    success: bool = False
    valid: bool | None = None  # None until (or unless) the eval sends its analysis
    timings_ns: list = field(default_factory=list)  # the tool's "evaluate" timings, in order
    error: str = ""


@dataclass
class Session:
    """What one eval and tool did together."""

    evaluations: list = field(default_factory=list)
    defined: bool | None = None
    ended: str = "ok"  # "ok", "timeout", "tool exited", "eval exited", or the define error


def run_session(eval_command, tool_command, cwd, env, timeout):
    """Run the eval and the tool (argument lists, started in `cwd` with `env`) to the end."""
    session = Session()
    evaluator = _start(eval_command, cwd, env)
    tool = _start(tool_command, cwd, env)
    from_eval, from_tool = _lines(evaluator), _lines(tool)
    pending = {}  # evaluate message id -> Evaluation
    try:
        while True:
            message = _next(from_eval, None)
            if message is None:
                break
            tool.stdin.write(message + "\n")
            tool.stdin.flush()
            parsed = json.loads(message)
            if parsed.get("kind") == "end":
                break
            line = _next(from_tool, timeout)
            if line is None:
                session.ended = "timeout" if tool.poll() is None else "tool exited"
                break
            response = json.loads(line)
            _note(session, pending, parsed, response)
            evaluator.stdin.write(line + "\n")
            evaluator.stdin.flush()
    except BrokenPipeError:
        session.ended = "eval exited" if evaluator.poll() is not None else "tool exited"
    finally:
        _stop(tool, wait=0 if session.ended == "timeout" else 10)
        _stop(evaluator, wait=10)
    return session


def _note(session, pending, message, response):
    kind = message.get("kind")
    if kind == "define":
        session.defined = bool(response.get("success"))
        if not session.defined:
            session.ended = (response.get("error") or "define failed").strip().splitlines()[-1]
    elif kind == "evaluate":
        evaluation = Evaluation(message["function"], message.get("description", ""))
        evaluation.success = bool(response.get("success"))
        evaluation.error = (response.get("error") or "").strip()
        evaluation.timings_ns = [
            t["nanoseconds"] for t in response.get("timings") or () if t["name"] == "evaluate"
        ]
        pending[message["id"]] = evaluation
        session.evaluations.append(evaluation)
    elif kind == "analysis" and message.get("of") in pending:
        evaluation = pending[message["of"]]
        evaluation.valid = bool(message.get("valid"))
        if not evaluation.valid:
            evaluation.error = (message.get("error") or "").strip()


def _start(command, cwd, env):
    return subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=None,  # the tools' warnings go to the runner's stderr
        text=True,
        bufsize=1,
    )


def _lines(process):
    """A queue that receives the process's stdout lines (None at its end)."""
    lines = queue.Queue()

    def pump():
        for line in process.stdout:
            if line.strip():
                lines.put(line.strip())
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return lines


def _next(lines, timeout):
    try:
        return lines.get(timeout=timeout)
    except queue.Empty:
        return None


def _stop(process, wait):
    """Close the process's input, and kill it if it has not ended `wait` seconds later."""
    try:
        process.stdin.close()
    except OSError:
        pass
    try:
        process.wait(timeout=wait)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
