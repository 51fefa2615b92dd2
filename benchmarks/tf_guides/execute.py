"""Run one notebook's code cells in one shared namespace, as Jupyter would, and record each
cell's printed output and error as JSON.

    python execute.py NOTEBOOK ENGINE OUT.json [--cell-timeout SECONDS]

ENGINE is "tf" (the cells as written, for a Python with TensorFlow) or "tracer" (an import
of `tensorflow` or of a module in it becomes tracer's: `import tensorflow as tf` becomes
`import tracer as tf`, `import tensorflow.compat.v1 as tf1` becomes `import
tracer.compat.v1 as tf1`, `from tensorflow.keras import layers` becomes `from tracer.keras
import layers`). Shell and magic lines (`!pip ...`,
`%matplotlib`) are dropped. Output is captured at the file-descriptor level, so C++ log lines
land in it too (compare.py drops them). The results file is rewritten after every cell, so a
notebook killed by the caller's overall timeout still leaves the cells it finished.

This module is the part that runs inside the subprocess; it uses the standard library only, so
the same file runs under TensorFlow's Python and under tracer's.
"""

import argparse
import ast
import contextlib
import ctypes
import io
import json
import linecache
import os
import re
import signal
import sys
import tempfile
import types

ENGINES = ("tf", "tracer")
PLOT_MODULES = ("matplotlib", "matplotlib.pyplot", "matplotlib.cm", "matplotlib.colors")


class CellTimeout(Exception):
    """A cell ran past its time limit."""


class _Stub(types.ModuleType):
    """A module in which every attribute, call and item is another stub: matplotlib stands in
    for itself when it is not installed, so the cells after a plotting cell still see the
    names it defined. compare.py excludes the plotting cells themselves."""

    def __init__(self, name):
        super().__init__(name)
        self.__path__ = []

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Stub(f"{self.__name__}.{name}")

    def __call__(self, *args, **kwargs):
        return _Stub(f"{self.__name__}()")

    def __getitem__(self, key):
        return _Stub(f"{self.__name__}[]")

    def __setitem__(self, key, value):
        pass

    def __iter__(self):
        return iter(())


def install_matplotlib_stub():
    """Put stub matplotlib modules in sys.modules unless the real one imports."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        for name in PLOT_MODULES:
            sys.modules[name] = _Stub(name)
        sys.modules["matplotlib"].pyplot = sys.modules["matplotlib.pyplot"]


def code_cells(notebook_path):
    """The source text of each code cell of an .ipynb file, in order."""
    with open(notebook_path) as handle:
        notebook = json.load(handle)
    sources = []
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            source = cell["source"]
            sources.append("".join(source) if isinstance(source, list) else source)
    return sources


def is_shell_line(line):
    """A `!command` or `%magic` line, which only IPython understands."""
    return line.lstrip().startswith(("!", "%"))


# `import tensorflow...` or `from tensorflow... import` at the start of a line (not
# `tensorflow_datasets`, a package of its own)
TENSORFLOW_IMPORT = re.compile(r"^(\s*(?:import|from)\s+)tensorflow\b(?!_)", re.MULTILINE)
# Keras 3 on its own (`import keras`, `from keras import layers`), which TensorFlow 2.21's
# `tf.keras` is: tracer's is `tracer.keras`
KERAS_IMPORT = re.compile(r"^(\s*)import keras\b(?![_.])", re.MULTILINE)
KERAS_FROM = re.compile(r"^(\s*from\s+)keras\b(?!_)", re.MULTILINE)


def prepare(source, engine):
    """The cell as Python for `engine`: shell and magic lines dropped, and for tracer the
    TensorFlow and Keras imports replaced by tracer's."""
    source = "\n".join(line for line in source.split("\n") if not is_shell_line(line))
    if engine == "tracer":
        source = TENSORFLOW_IMPORT.sub(r"\1tracer", source)
        source = KERAS_IMPORT.sub(r"\1from tracer import keras", source)
        source = KERAS_FROM.sub(r"\1tracer.keras", source)
    return source


def _execute(source, name, namespace):
    """exec the cell; like IPython, print the repr of a last bare expression (unless the cell
    ends in ';') and register the source so inspect.getsource (and AutoGraph) can read it."""
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    tree = ast.parse(source, name)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr) and not source.rstrip().endswith(";"):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, name, "exec"), namespace)
    if last is not None:
        value = eval(compile(last, name, "eval"), namespace)
        if value is not None:
            namespace["_"] = value
            print(repr(value))


@contextlib.contextmanager
def _captured_fds(sink):
    """Send file descriptors 1 and 2, and sys.stdout/sys.stderr, into the file `sink`."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    os.dup2(sink.fileno(), 1)
    os.dup2(sink.fileno(), 2)
    old = sys.stdout, sys.stderr
    raw = os.fdopen(os.dup(1), "wb", buffering=0)
    writer = io.TextIOWrapper(raw, errors="replace", write_through=True)  # in order with C writes
    sys.stdout = sys.stderr = writer
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            writer.flush()
        sys.stdout, sys.stderr = old  # `writer` stays open: logging handlers may hold it
        with contextlib.suppress(Exception):
            ctypes.CDLL(None).fflush(None)  # C stdio buffers (TensorFlow's logging)
        for fd, copy in zip((1, 2), saved):
            os.dup2(copy, fd)
            os.close(copy)


def run_cell(source, index, namespace, timeout):
    """Run one prepared cell in `namespace`: (everything it printed, "Type: message" or None)."""

    def alarm(signum, frame):
        raise CellTimeout(f"cell exceeded {timeout} s")

    error = None
    with tempfile.TemporaryFile(mode="w+b") as sink:
        with _captured_fds(sink):
            previous = signal.signal(signal.SIGALRM, alarm)
            signal.alarm(timeout)
            try:
                _execute(source, f"<cell-{index}>", namespace)
            except Exception as exc:  # a cell's error is its result; SystemExit too below
                error = f"{type(exc).__name__}: {exc}"
            except SystemExit as exc:
                error = f"SystemExit: {exc}"
            finally:
                signal.alarm(0)
                signal.signal(signal.SIGALRM, previous)
        sink.seek(0)
        text = sink.read().decode("utf-8", "replace")
    return text, error


def run_notebook(notebook_path, engine, out_path, cell_timeout=120):
    """Run every code cell of the notebook in one namespace; write and return the records
    [{"cell", "source", "output", "error"}], `source` being the cell as the notebook has it."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, not {engine!r}")
    install_matplotlib_stub()
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    records = []
    for index, raw in enumerate(code_cells(notebook_path)):
        text, error = run_cell(prepare(raw, engine), index, namespace, cell_timeout)
        records.append({"cell": index, "source": raw, "output": text, "error": error})
        with open(out_path, "w") as handle:
            json.dump(records, handle, indent=1)
        status = f" ERROR {error[:100]}" if error else ""
        print(f"cell {index} done{status}", file=sys.stderr, flush=True)
    return records


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebook")
    parser.add_argument("engine", choices=ENGINES)
    parser.add_argument("out")
    parser.add_argument("--cell-timeout", type=int, default=120)
    args = parser.parse_args(argv)
    run_notebook(args.notebook, args.engine, args.out, args.cell_timeout)


if __name__ == "__main__":
    main()
