"""tracer's GradBench tool: speaks GradBench's protocol on stdin and stdout.

    python benchmarks/gradbench/tool.py [--multithreaded]   (started by run.py)

Without `--multithreaded` (GradBench's default) it runs on one core, as GradBench's JAX
tool does: the process keeps the first core of its affinity mask before tracer loads, and
tracer sizes its threads by that mask (docs/threads.md).

Each eval is a module of `tracer_tool/` named as the eval's module (`gmm`, `lse`, ...)
whose functions take the eval's input (decoded JSON) and return `(output, timings)`:
the JSON answer and one nanosecond count per run (`tracer_tool.runs.repeated`). A define
of a module tracer's tool lacks answers `success: false`, as GradBench's protocol asks.
"""

import importlib
import json
import os
import sys
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))


def respond(message):
    kind = message["kind"]
    if kind == "start":
        return {"tool": "tracer"}
    if kind == "define":
        try:
            _module(message["module"])
        except Exception as error:
            return {"success": False, "error": "".join(traceback.format_exception(error))}
        return {"success": True}
    if kind == "evaluate":
        function = getattr(_module(message["module"]), message["function"])
        try:
            output, timings = function(message["input"])
        except Exception as error:
            return {"success": False, "error": "".join(traceback.format_exception(error))}
        return {
            "success": True,
            "output": output,
            "timings": [{"name": "evaluate", "nanoseconds": t} for t in timings],
        }
    return {}


def _module(name):
    if not name.isidentifier():
        raise ValueError(f"no eval module named {name!r}")
    return importlib.import_module(f"benchmarks.gradbench.tracer_tool.{name}")


def main():
    if "--multithreaded" not in sys.argv[1:]:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    for line in sys.stdin:
        message = json.loads(line)
        print(json.dumps({"id": message["id"]} | respond(message)), flush=True)


if __name__ == "__main__":
    main()
