"""The shape of the code base: the public namespace, the layering of DESIGN.md with no import
circles, the pass pipeline's stage names, and formatting."""

import ast
import functools
import os
import shutil
import subprocess
import sys

import pytest

import tracer as tt
from tracer.concrete import IR_STAGES
from tracer.passes import pipeline
from tracer.passes.verify import VerificationError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("tracer", "runtime", "codegen")


def test_the_namespace_is_the_public_api():
    public = set(dir(tt))
    assert {"GradientTape", "function", "reduce_sum", "nn", "math", "random", "Variable"} <= public
    internal = {"backprop", "context", "recording", "tape", "tensor", "ops", "passes", "ir", "nest"}
    assert not public & internal
    assert public == set(tt.__all__) | {"__version__"}
    for name in set(tt.__all__) - {"newaxis"}:  # (tt.newaxis is None, as numpy's)
        assert getattr(tt, name) is not None, name
    assert tt.newaxis is None


def test_internal_modules_stay_importable_by_their_full_path():
    import tracer.backprop
    import tracer.ops.core

    assert tracer.ops.core.apply is not None and tracer.backprop.run_gradient is not None


_LAZY_NAMESPACES = """
import sys
import tracer as tt
from tracer.ops.registry import OPS

lazy = [name for name in tt._IMPORTED_WHEN_USED if f"tracer.{name}" in sys.modules]
registered = set(OPS)
for name in tt._IMPORTED_WHEN_USED:
    getattr(tt, name)
print(lazy, sorted(set(OPS) - registered), sorted(n for n in tt._IMPORTED_WHEN_USED if f"tracer.{n}" not in sys.modules))
"""


def test_namespaces_imported_at_their_first_use_register_no_primitive_late():
    """`import tracer` leaves tt.summary, tt.image, tt.keras and the like to their first use,
    and every primitive is registered without them (a graph read from a file may name
    decode_wav before the program has touched tt.audio)."""
    result = subprocess.run(
        [sys.executable, "-c", _LAZY_NAMESPACES], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[] [] []"


def _modules():
    found = {}
    for package in PACKAGES:
        for folder, _, files in os.walk(os.path.join(ROOT, package)):
            for name in files:
                if name.endswith(".py"):
                    path = os.path.join(folder, name)
                    module = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                    found[module.removesuffix(".__init__")] = path
    return found


@functools.cache
def _imports():
    """module -> the modules of this tree it imports, anywhere in its text (a function-local
    import counts: it is a dependency all the same)."""
    modules = _modules()
    graph = {}
    for module, path in modules.items():
        with open(path) as handle:
            tree = ast.parse(handle.read())
        found = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    found.add(full if full in modules else node.module)
        graph[module] = {m for m in found if m in modules and m != module}
    return graph


# (importer prefix, imported prefixes it must not use): DESIGN.md's layers
FORBIDDEN = [
    ("runtime", ("tracer", "codegen")),
    ("codegen", ("tracer.ops", "tracer.passes", "tracer.tensor", "tracer.tape", "tracer.function")),
    ("tracer.ir", ("tracer.ops", "tracer.passes", "tracer.tensor", "runtime", "codegen")),
    ("tracer.ops", ("tracer.passes", "tracer.control", "tracer.tape", "tracer.backprop",
                    "tracer.function", "tracer.concrete", "tracer.jacobian", "tracer.tracing")),
    ("tracer.passes", ("tracer.control", "tracer.tape", "tracer.backprop", "tracer.function",
                       "tracer.jacobian")),
]  # fmt: skip


def _within(module, prefix):
    return module == prefix or module.startswith(prefix + ".")


def test_no_layer_imports_one_above_it():
    broken = [
        f"{module} imports {target}"
        for module, targets in _imports().items()
        for importer, forbidden in FORBIDDEN
        if _within(module, importer)
        for target in targets
        if any(_within(target, f) for f in forbidden) or target == "tracer"
    ]
    assert broken == []


def test_no_import_circle():
    graph = _imports()
    state, circles = {}, []

    def visit(module, path):
        state[module] = "open"
        for target in sorted(graph[module]):
            if state.get(target) == "open":
                circles.append(path[path.index(target) :] + [target])
            elif target not in state:
                visit(target, path + [target])
        state[module] = "done"

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert circles == []


def test_stage_names_come_from_the_pipeline():
    assert IR_STAGES[0] == pipeline.TRACED and IR_STAGES[-1] == pipeline.PIPELINE[-1][0]
    assert set(pipeline.STAGE_NAMES) <= set(IR_STAGES)
    concrete = tt.function(lambda x: tt.reduce_sum(tt.sin(x) * 2.0)).get_concrete_function(
        tt.constant([1.0, 2.0])
    )
    assert list(concrete.stages) == list(pipeline.STAGE_NAMES)
    assert "fused" not in concrete.ir(pipeline.PIPELINE[-2][0]) and "fused" in concrete.ir()
    with pytest.raises(ValueError, match="the stages are"):
        concrete.ir("lowered")


def test_the_verifier_checks_every_pass_in_the_test_suite(monkeypatch):
    from tracer.ir import Node
    from tracer.ir.rewrite import rebuild

    def broken(graph):  # a pass that gets a shape wrong
        def rewrite(node):
            if node.op == "sin":
                return Node("sin", node.inputs, {}, (7,), node.dtype, node.location)
            return node

        return rebuild(graph, rewrite)

    monkeypatch.setattr(pipeline, "PIPELINE", [("broken", broken), *pipeline.PIPELINE])
    with pytest.raises(VerificationError, match="its rule gives float32\\[2\\]"):
        tt.function(lambda x: tt.sin(x))(tt.constant([1.0, 2.0]))


@pytest.mark.skipif(
    shutil.which("ruff") is None, reason="ruff is in the test extra: pip install -e '.[test]'"
)
@pytest.mark.parametrize("command", [["ruff", "format", "--check", "."], ["ruff", "check", "."]])
def test_the_tree_is_formatted_and_lint_free(command):
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
