"""The dependency lists are honest: every third-party module that the library, the tests,
the benchmarks or the examples import is one that pyproject.toml installs for them, or a peer
imported where its absence is handled.

What may be imported where:
- the library (tracer/, runtime/, codegen/) and the examples: the `dependencies`;
- the tests and the benchmarks: the `dependencies` and the `test` extra (the README's test
  command installs both);
- anywhere, a module of another extra or a peer (TensorFlow, JAX, PyTorch, CasADi) inside a
  `try` whose handler catches ImportError, so that its absence is handled;
- a peer in the benchmark module that `benchmarks/systems` names for it (its worker reports
  the system as skipped when the import fails).

A module is named by its import name; where the distribution's name differs, the table below
says which it is.
"""

import ast
import pathlib
import sys

import pytest

tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from 3.11")

ROOT = pathlib.Path(__file__).resolve().parent.parent
TREES = ("tracer", "runtime", "codegen", "tests", "benchmarks", "examples")
THE_TEST_EXTRA_MAY_IMPORT = ("tests", "benchmarks")
DISTRIBUTION_OF = {"_cffi_backend": "cffi", "scipy_openblas32": "scipy-openblas32"}
PEERS = {"tensorflow", "jax", "torch", "casadi"}
IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError"}


def _requirement_name(requirement):
    name = requirement
    for stop in "<>=!~;[ ":
        name = name.split(stop)[0]
    return name.strip().lower().replace("_", "-")


def _project():
    with open(ROOT / "pyproject.toml", "rb") as file:
        return tomllib.load(file)["project"]


def _local_modules():
    """Module names the project's own files provide (benchmarks and examples put their own
    folder on sys.path: `data`, `systems`, `train_mlp`, ...)."""
    names = set(TREES) | {"templates"}
    for tree in TREES:
        for path in (ROOT / tree).rglob("*.py"):
            names.add(path.stem)
            names.update(part for part in path.relative_to(ROOT).parts[:-1])
    return names


def _handles_import_error(handler):
    caught = handler.type
    if caught is None:
        return True
    names = caught.elts if isinstance(caught, ast.Tuple) else [caught]
    return any(isinstance(n, ast.Name) and n.id in IMPORT_ERRORS for n in names)


def _statements(body):
    """Every statement in `body` and in the bodies nested in it (an import is a statement:
    the expressions, most of a tree's nodes, need no visit)."""
    for statement in body:
        yield statement
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            for inner in getattr(statement, field, ()):
                if isinstance(inner, (ast.excepthandler, ast.match_case)):
                    yield from _statements(inner.body)
                else:
                    yield from _statements([inner])


def _imports(path):
    """[(top-level module name, line, guarded)] of the absolute imports in `path`, in line
    order; guarded when one import of that module in the file sits in the body of a `try` that
    catches ImportError (a file handles the absence once, where it first needs the module)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    statements = list(_statements(tree.body))
    guarded_lines = set()
    for node in statements:
        if isinstance(node, ast.Try) and any(_handles_import_error(h) for h in node.handlers):
            for statement in node.body:
                guarded_lines.update(range(statement.lineno, statement.end_lineno + 1))
    found = []
    for node in statements:
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module]
        else:
            continue
        found += [(n.split(".")[0], node.lineno, node.lineno in guarded_lines) for n in names]
    handled = {module for module, _, guarded in found if guarded}
    return sorted(
        ((module, line, module in handled) for module, line, _ in found), key=lambda e: e[1]
    )


def _peer_modules():
    """The benchmark files that `benchmarks/systems` loads for a peer system."""
    source = (ROOT / "benchmarks" / "systems" / "__init__.py").read_text(encoding="utf-8")
    namespace = {}
    exec(compile(source, "benchmarks/systems/__init__.py", "exec"), namespace)
    return {
        ROOT / "benchmarks" / (namespace["MODULES"][peer].replace(".", "/") + ".py")
        for peer in namespace["PEERS"]
    }


def _third_party_imports():
    local = _local_modules()
    for tree in TREES:
        for path in sorted((ROOT / tree).rglob("*.py")):
            for module, line, guarded in _imports(path):
                if module in sys.stdlib_module_names or module in local:
                    continue
                yield tree, path, module, line, guarded


def test_every_third_party_import_is_installed_for_the_code_that_imports_it():
    project = _project()
    base = {_requirement_name(r) for r in project["dependencies"]}
    extras = {
        extra: {_requirement_name(r) for r in requirements}
        for extra, requirements in project["optional-dependencies"].items()
    }
    peer_modules = _peer_modules()
    problems = []
    for tree, path, module, line, guarded in _third_party_imports():
        distribution = DISTRIBUTION_OF.get(module, module).lower().replace("_", "-")
        allowed = set(base)
        if tree in THE_TEST_EXTRA_MAY_IMPORT:
            allowed |= extras["test"]
        if distribution in allowed or guarded or (module in PEERS and path in peer_modules):
            continue
        where = f"{path.relative_to(ROOT)}:{line}"
        if module in PEERS:
            problems.append(f"{where}: the peer {module} is imported without handling its absence")
        elif any(distribution in names for names in extras.values()):
            problems.append(f"{where}: {module} is only in an extra; guard it with ImportError")
        else:
            problems.append(f"{where}: {module} is installed by nothing in pyproject.toml")
    assert not problems, "\n".join(problems)


def test_the_scan_finds_imports_and_what_guards_them(tmp_path):
    """The checker itself: a plain import, one guarded by ImportError (and a later import of
    the same module), and one guarded by another exception are told apart."""
    source = tmp_path / "sample.py"
    source.write_text(
        "import numpy as np\n"
        "try:\n    import jax.numpy\nexcept (ValueError, ImportError):\n    pass\n"
        "try:\n    import torch\nexcept KeyError:\n    pass\n"
        "from scipy.linalg import solve\n"
        "def later():\n    import jax\n"
    )
    assert _imports(source) == [
        ("numpy", 1, False),
        ("jax", 3, True),
        ("torch", 7, False),
        ("scipy", 10, False),
        ("jax", 12, True),
    ]


def test_every_dependency_of_the_tests_is_in_the_test_extra():
    """What the README's test command relies on, named: scipy for the LAPACK comparisons,
    pytest-xdist for the parallel workers, hypothesis for the fuzzer."""
    test_extra = {_requirement_name(r) for r in _project()["optional-dependencies"]["test"]}
    assert {"pytest", "pytest-xdist", "scipy", "hypothesis", "ruff"} <= test_extra
