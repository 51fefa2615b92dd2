"""Run GradBench's evals against tracer's tool and the peers' tools; print and write a table.

    python benchmarks/gradbench/run.py --gradbench DIR [--evals gmm lse] [--tools tracer jax]
        [--eval-args "gmm=-d 2 10 -k 5"] [--timeout 600] [--out FILE.md]

DIR is a checkout of github.com/gradbench/gradbench (never part of this project) whose
golden tool is built (`make -C DIR/tools/manual`; its C++ needs nlohmann's json.hpp in
DIR/cpp). The evals validate every answer themselves, against that golden tool; they run
on `--peers-python`, which needs numpy, scipy, pydantic and dataclasses-json (the last
also where GradBench's TensorFlow tool runs on tracer). The tools:

- `tracer`: tracer's own tool (benchmarks/gradbench/tool.py), every function compiled;
- `tensorflow-as-tracer`: GradBench's TensorFlow tool with its import lines changed to
  tracer and nothing else (benchmarks/gradbench/rewrite.py makes that copy, outside the
  project);
- `jax`, `pytorch`, `tensorflow`: GradBench's own tools, run by `--peers-python` where it
  has those frameworks, with GradBench's timing wrapper waiting for JAX's asynchronous
  results before it stops the clock (benchmarks/gradbench/rewrite.py: without it, JAX's
  timings leave out the work).

Each tool runs each function `min_runs` times or for `min_seconds` (the eval's options);
the table gives the first run (a compile included, where the tool compiles at its first
call, as jax.jit and tt.function do) and the median of the others, and whether the eval
found every answer valid.
"""

import argparse
import os
import shlex
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.gradbench.driver import run_session  # noqa: E402
from benchmarks.gradbench.rewrite import tensorflow_as_tracer, timed_to_completion  # noqa: E402

EVALS = ["hello", "lse", "gmm", "lstm", "ht", "ba", "ode", "kmeans", "det", "llsq", "particle", "saddle"]  # fmt: skip
PEERS = ("jax", "pytorch", "tensorflow")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gradbench", required=True, type=Path, help="a GradBench checkout")
    parser.add_argument("--evals", nargs="+", default=EVALS)
    parser.add_argument("--tools", nargs="+", default=["tracer", "tensorflow-as-tracer", *PEERS])
    parser.add_argument(
        "--eval-args",
        action="append",
        default=[],
        help='options for one eval, as "gmm=-d 2 10 -k 5" (repeatable)',
    )
    parser.add_argument("--timeout", type=float, default=600, help="seconds per message")
    parser.add_argument("--python", default=sys.executable, help="runs tracer's tools")
    parser.add_argument(
        "--peers-python", default=sys.executable, help="runs the evals and the peers' tools"
    )
    parser.add_argument("--out", type=Path, help="write the table here (markdown)")
    args = parser.parse_args(argv)
    gradbench = args.gradbench.resolve()
    eval_args = dict(_eval_args(item) for item in args.eval_args)
    work = Path(os.environ.get("TMPDIR", "/tmp")) / "tracer-gradbench"
    rows = []
    for name in args.evals:
        for tool in args.tools:
            command, python_path = _tool(tool, gradbench, work, args)
            eval_command = [
                args.peers_python,
                "-m",
                f"gradbench.evals.{name}.run",
                *shlex.split(eval_args.get(name, "")),
            ]
            package = str(gradbench / "python" / "gradbench")  # the evals'
            env = dict(os.environ, PYTHONPATH=os.pathsep.join([*python_path, package]))
            print(f"# {name} / {tool}", file=sys.stderr, flush=True)
            session = run_session(eval_command, command, gradbench, env, args.timeout)
            rows.append((name, tool, session))
            print(_session_line(name, tool, session), file=sys.stderr, flush=True)
    table = _table(rows, args.tools, gradbench)
    print(table)
    if args.out:
        args.out.write_text(table)


def _eval_args(item):
    name, _, options = item.partition("=")
    return name.strip(), options


def _tool(tool, gradbench, work, args):
    """The command that runs `tool`, and the PYTHONPATH it needs."""
    if tool == "tracer":
        return [args.python, str(HERE / "tool.py")], [str(ROOT)]
    if tool == "tensorflow-as-tracer":
        overlay = tensorflow_as_tracer(gradbench, work)
        script = overlay / "gradbench" / "tools" / "tensorflow" / "run.py"
        return [args.python, str(script)], [str(overlay), str(ROOT)]
    if tool in PEERS:  # run as a script: the eval's module names resolve in its directory
        overlay = timed_to_completion(gradbench, work)
        script = overlay / "gradbench" / "tools" / tool / "run.py"
        return [args.peers_python, str(script)], [str(overlay)]
    raise SystemExit(f"unknown tool {tool!r}: tracer, tensorflow-as-tracer, {', '.join(PEERS)}")


def _session_line(name, tool, session):
    valid = sum(e.valid is True for e in session.evaluations)
    return f"  {name}/{tool}: {valid}/{len(session.evaluations)} valid, {session.ended}"


def _table(rows, tools, gradbench):
    """Markdown: per eval, function and workload, each tool's first and median run (ms)
    and validity; then per eval and tool, valid/evaluated and how the session ended."""
    commit = _commit(gradbench)
    lines = [
        f"GradBench {commit}: first run / median of the other runs, in ms; "
        "✓ valid, ✗ invalid or failed, ? not validated",
        "",
        "| eval | function | workload | " + " | ".join(tools) + " |",
        "|---|---|---|" + "---|" * len(tools),
    ]
    by_eval = {}
    for name, tool, session in rows:
        for evaluation in session.evaluations:
            key = (name, evaluation.function, evaluation.workload)
            by_eval.setdefault(key, {})[tool] = evaluation
    for (name, function, workload), results in by_eval.items():
        cells = [_cell(results.get(tool)) for tool in tools]
        lines.append(f"| {name} | {function} | {workload} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Per eval: answers valid / evaluated; then the sums over its workloads of the medians "
        "and of the first runs (ms), where every answer was valid.",
        "",
        "| eval | " + " | ".join(tools) + " |",
        "|---|" + "---|" * len(tools),
    ]
    summary = {}
    for name, tool, session in rows:
        valid = sum(e.valid is True for e in session.evaluations)
        text = f"{valid}/{len(session.evaluations)}"
        if session.ended != "ok":
            text += f" ({session.ended[:60]})"
        elif valid and valid == len(session.evaluations):
            medians, firsts = _sums(session.evaluations)
            text += f": {medians:.4g} / {firsts:.4g}"
        summary.setdefault(name, {})[tool] = text
    for name, cells in summary.items():
        lines.append(f"| {name} | " + " | ".join(cells.get(t, "") for t in tools) + " |")
    return "\n".join(lines) + "\n"


def _sums(evaluations):
    """(sum of the medians of the runs after the first, sum of the first runs), in ms."""
    medians = firsts = 0.0
    for evaluation in evaluations:
        runs = [t / 1e6 for t in evaluation.timings_ns]
        if runs:
            firsts += runs[0]
            medians += statistics.median(runs[1:]) if len(runs) > 1 else runs[0]
    return medians, firsts


def _cell(evaluation):
    if evaluation is None:
        return ""
    mark = {True: "✓", False: "✗", None: "?"}[evaluation.valid]
    if not evaluation.success:
        return "✗ failed"
    runs = [t / 1e6 for t in evaluation.timings_ns]
    if not runs:
        return mark
    rest = statistics.median(runs[1:]) if len(runs) > 1 else runs[0]
    return f"{mark} {runs[0]:.3g} / {rest:.3g}"


def _commit(gradbench):
    head = gradbench / ".git" / "HEAD"
    try:
        ref = head.read_text().strip()
        if ref.startswith("ref: "):
            ref = (gradbench / ".git" / ref[5:]).read_text().strip()
        return ref[:12]
    except OSError:
        return "(unknown commit)"


if __name__ == "__main__":
    main()
