"""Run TensorFlow's guide notebooks on TensorFlow and on tracer and count the matching cells.

    python benchmarks/tf_guides/run.py --docs DOCS --peers-python PY --out DIR \
        [--guides autodiff,function] [--no-twice] [--jobs 3] [--compare-only]

DOCS is a checkout of github.com/tensorflow/docs (the notebooks are DOCS/site/en/guide/
*.ipynb), PY a Python with TensorFlow installed. Each guide runs in subprocesses of its own:
twice with TensorFlow (to find the cells TensorFlow itself does not reproduce) and once with
tracer, under this Python with the project root on PYTHONPATH. Prints the matching and
counted cells per guide, the excluded cells with their reasons and one line per mismatch,
and writes DIR/report.json. compare.py states the counting rules; docs/tf_guides.md the
figures.
"""

import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

from compare import compare_guide  # noqa: E402

GUIDES = ("autodiff", "advanced_autodiff", "function", "intro_to_graphs", "basic_training_loops")


def plan(guides, twice):
    """The runs to make: (guide, run name, engine), run names "tf", "tf.run2", "tracer"."""
    runs = []
    for guide in guides:
        runs.append((guide, "tf", "tf"))
        if twice:
            runs.append((guide, "tf.run2", "tf"))
        runs.append((guide, "tracer", "tracer"))
    return runs


def record_name(guide, run):
    """The file name of a run's records: a guide in a subfolder of the guides ("core/mlp_core")
    gets a flat name ("core.mlp_core.tf")."""
    return f"{guide.replace('/', '.')}.{run}"


def run_one(guide, run, engine, args):
    """Run one notebook with one engine in a subprocess (its own working directory, for the
    files the guide writes); its log goes to OUT/logs. Returns the subprocess's exit status,
    or "timeout"."""
    python = args.peers_python if engine == "tf" else sys.executable
    notebook = os.path.join(args.docs, "site", "en", "guide", guide + ".ipynb")
    results = os.path.abspath(os.path.join(args.out, f"{record_name(guide, run)}.json"))
    workdir = os.path.join(args.out, "work", record_name(guide, run))
    os.makedirs(workdir, exist_ok=True)
    os.makedirs(os.path.join(args.out, "logs"), exist_ok=True)
    env = dict(
        os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))
    )
    if engine == "tf":
        env.pop("PYTHONPATH")  # TensorFlow's Python never sees the project
    command = [python, os.path.join(HERE, "execute.py"), os.path.abspath(notebook), engine]
    command += [results, "--cell-timeout", str(args.cell_timeout)]
    with open(os.path.join(args.out, "logs", f"{record_name(guide, run)}.log"), "w") as log:
        try:
            done = subprocess.run(
                command, cwd=workdir, env=env, stdout=log, stderr=subprocess.STDOUT,
                timeout=args.timeout,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            return "timeout"
    return done.returncode


def load(out, guide, run):
    """A run's records, or None when it left none."""
    path = os.path.join(out, f"{record_name(guide, run)}.json")
    if not os.path.exists(path):
        return None
    with open(path) as handle:
        return json.load(handle)


def build_report(out, guides):
    """{guide: compare_guide(...)} for the guides whose TF and tracer runs left records."""
    report = {}
    for guide in guides:
        tf_cells, tt_cells = load(out, guide, "tf"), load(out, guide, "tracer")
        if tf_cells and tt_cells is not None:
            report[guide] = compare_guide(tf_cells, tt_cells, load(out, guide, "tf.run2"))
        else:
            report[guide] = {"match": 0, "counted": 0, "rows": [], "missing": True}
    return report


def print_report(report):
    """The table, the excluded cells, the mismatches and the nonreproducible cells."""
    print(f"{'guide':<22} {'match':>8} {'counted':>8}")
    for guide, result in report.items():
        note = "  (missing outputs)" if result.get("missing") else ""
        print(f"{guide:<22} {result['match']:>8} {result['counted']:>8}{note}")
    print(f"{'TOTAL':<22} {sum(r['match'] for r in report.values()):>8} "
          f"{sum(r['counted'] for r in report.values()):>8}")  # fmt: skip
    sections = (
        ("excluded", "excluded"),
        ("mismatches", "mismatch"),
        ("nonreproducible-in-TF cells counted as match", "match-nonrepro"),
    )
    for title, status in sections:
        print(f"\n{title}:")
        for guide, result in report.items():
            for row in result["rows"]:
                if row["status"] == status:
                    print(
                        f"  {guide}[{row['cell']}]: {row['why'] or 'outputs differ between TF runs'}"
                    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", required=True, help="a checkout of tensorflow/docs")
    parser.add_argument("--peers-python", help="a Python with TensorFlow")
    parser.add_argument("--out", required=True, help="folder for the records and report.json")
    parser.add_argument("--guides", default=",".join(GUIDES))
    parser.add_argument("--twice", action=argparse.BooleanOptionalAction, default=True,
                        help="run TensorFlow twice to find its nonreproducible cells (default)")  # fmt: skip
    parser.add_argument("--jobs", type=int, default=3, help="notebooks run at once")
    parser.add_argument("--cell-timeout", type=int, default=120, help="seconds per cell")
    parser.add_argument("--timeout", type=int, default=1500, help="seconds per notebook")
    parser.add_argument("--compare-only", action="store_true", help="reuse the records in --out")
    args = parser.parse_args(argv)
    guides = [g for g in args.guides.split(",") if g]
    os.makedirs(args.out, exist_ok=True)
    if not args.compare_only:
        if not args.peers_python:
            parser.error("--peers-python is required unless --compare-only")
        with ThreadPoolExecutor(args.jobs) as pool:
            runs = plan(guides, args.twice)
            statuses = pool.map(lambda r: run_one(*r, args), runs)
            for (guide, run, _), status in zip(runs, statuses):
                if status != 0:
                    print(f"{guide}.{run}: exit status {status}", file=sys.stderr)
    report = build_report(args.out, guides)
    with open(os.path.join(args.out, "report.json"), "w") as handle:
        json.dump(report, handle, indent=1)
    print_report(report)


if __name__ == "__main__":
    main()
