"""The C templates render without jinja2 (codegen/template_runtime.py runs the code jinja2
compiled them to) and give jinja2's own text: every case of the op catalogue, its first and
second derivatives, loops, strings and an exported module are lowered to C both ways."""

import os
import shutil
import subprocess
import sys
import sysconfig

import jinja2
import numpy as np
import pytest

import tracer as tt
from codegen import compile as compile_module
from codegen import template_cache, templates
from runtime import native
from tests.test_gradients import ALL_CASES
from tests.test_shared_kernels import layer_loss, layer_loss_gradient

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class _Rendered(Exception):
    """Raised in place of building the module: the test wants its C only."""


_STOP_AFTER_LOWERING = []  # not empty: `_lowered`'s lowering, whose module is not built


@pytest.fixture
def jinja2_compared(monkeypatch):
    """Every render in the test also rendered by jinja2 itself, the texts compared; the
    templates rendered, by name, returned."""
    own = templates.render
    theirs = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates._folder()),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    theirs.filters.update(templates._own_filters())
    rendered = set()

    def both(template, **values):
        text = own(template, **values)
        assert text == theirs.get_template(template).render(**values), template
        rendered.add(template)
        return text

    lower = compile_module.lower

    def lowered_only(*args, **kwargs):
        plan = lower(*args, **kwargs)
        if _STOP_AFTER_LOWERING:
            raise _Rendered
        return plan

    monkeypatch.setattr(templates, "render", both)
    monkeypatch.setattr(compile_module, "lower", lowered_only)
    return rendered


def _lowered(function, args):
    """Lower `function` on `args` (and its gradient, and the gradient's) to C, building
    nothing."""
    concrete = tt.function(function, backend="interpreter").get_concrete_function(*args)
    _lowered_graph(concrete.stages.final)


def _lowered_graph(graph):
    """Lower `graph` to C, with the kernels installed with tracer and with its own."""
    _STOP_AFTER_LOWERING.append(True)
    try:
        for own_kernels in (False, True):
            with pytest.raises(_Rendered):
                compile_module.compile_graph(graph, "case", own_kernels=own_kernels)
    finally:
        _STOP_AFTER_LOWERING.clear()


def _with_gradients(function):
    def value_and_gradients(*args):
        with tt.GradientTape() as outer:
            outer.watch(args)
            with tt.GradientTape() as inner:
                inner.watch(args)
                y = tt.reduce_sum(function(*args))
            grads = inner.gradient(y, list(args))  # dense: a gather's is an IndexedSlices
            first = [tt.convert_to_tensor(g) for g in grads if g is not None]
            total = tt.add_n([tt.reduce_sum(g * g) for g in first]) if first else y
        second = [
            tt.convert_to_tensor(g) for g in outer.gradient(total, list(args)) if g is not None
        ]
        return [y, *first, *second]

    return value_and_gradients


def test_every_case_renders_jinja2s_text_and_nearly_every_template_is_rendered(
    jinja2_compared,
):
    for name, (function, args) in sorted(ALL_CASES.items()):
        floats = [np.asarray(a) for a in args]
        differentiable = all(a.dtype.kind == "f" for a in floats)
        _lowered(_with_gradients(function) if differentiable else function, floats)

    def loop(x):
        _, y = tt.while_loop(lambda i, v: i < 10, lambda i, v: (i + 1, tt.sin(v)), (0, x))
        return y

    _lowered(loop, [np.ones(4)])
    unknown_rows = tt.TensorSpec([None, 8], tt.float32)
    concrete = tt.function(
        lambda x: tt.matmul(x, tt.ones((8, 512))), input_signature=[unknown_rows]
    ).get_concrete_function()
    _lowered_graph(concrete.stages.final)
    all_templates = {n for n in os.listdir(templates._folder()) if n.endswith(".j2")}
    # export's own three (test_export_renders_jinja2s_text) and those the CPU decides
    assert len(jinja2_compared) >= 20, sorted(all_templates - jinja2_compared)
    assert jinja2_compared <= all_templates


def test_a_module_that_borrows_kernels_renders_jinja2s_text(jinja2_compared):
    """A gradient after its loss, built: its calls of the loss module's kernels
    (codegen/shared_kernels.py) rendered both ways."""
    rng = np.random.default_rng(3)
    x, w, b = rng.standard_normal((40, 24)), rng.standard_normal((24, 16)), np.ones(16)
    tt.function(layer_loss, backend="c")(x, w, b)
    tt.function(layer_loss_gradient, backend="c")(x, w, b)
    assert {"borrowed_kernel.c.j2", "borrowed_kernels.c.j2"} <= jinja2_compared


def test_an_exported_module_renders_jinja2s_text(jinja2_compared, tmp_path):
    def loss(x, w):
        return tt.reduce_sum(tt.tanh(tt.matmul(x, w)))

    spec = tt.TensorSpec([None, 4], tt.float64)
    concrete = tt.function(loss).get_concrete_function(spec, tt.TensorSpec([4, 3], tt.float64))
    concrete.export_c(str(tmp_path), prefix="loss")
    assert {"export.c.j2", "export.h.j2", "export.mk.j2"} <= jinja2_compared


def test_a_process_that_finds_the_compiled_templates_renders_without_importing_jinja2(tmp_path):
    program = (
        "import sys\nimport numpy as np\nimport tracer as tt\n"
        "f = tt.function(lambda x: tt.reduce_sum(tt.sin(x) * x))\n"
        "print(float(f(tt.constant(np.arange(3.0)))), 'jinja2' in sys.modules)\n"
    )
    environment = dict(os.environ, TRACER_CACHE_DIR=str(tmp_path), PYTHONPATH=REPO)
    runs = [
        subprocess.run(
            [sys.executable, "-c", program], env=environment, capture_output=True, text=True
        )
        for _ in range(2)
    ]
    expected = float(np.sum(np.sin(np.arange(3.0)) * np.arange(3.0)))
    for run in runs:
        assert run.returncode == 0, run.stderr
        value, imported = run.stdout.split()
        assert float(value) == pytest.approx(expected, rel=1e-12)
    assert runs[1].stdout.split()[1] == "False"


def test_a_compiled_template_is_read_for_its_own_text_only_and_a_damaged_one_removed(tmp_path):
    code = compile("root = 1", "t.c.j2", "exec")
    text, edited = b"\x01" * 32, b"\x02" * 32
    template_cache.dump("t.c.j2", text, code, str(tmp_path))
    assert template_cache.load("t.c.j2", text, str(tmp_path)) == code
    assert template_cache.load("t.c.j2", edited, str(tmp_path)) is None  # compiled afresh
    path = tmp_path / "t.c.j2.cache"
    assert path.exists()
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))
    assert template_cache.load("t.c.j2", text, str(tmp_path)) is None
    assert not path.exists()
    elsewhere = tmp_path / "read_first"
    elsewhere.mkdir()
    template_cache.dump("t.c.j2", text, code, str(elsewhere))
    (elsewhere / "t.c.j2.cache").write_bytes(b"damaged")
    assert template_cache.load("t.c.j2", text, str(tmp_path), [str(elsewhere)]) is None
    assert (elsewhere / "t.c.j2.cache").read_bytes() == b"damaged"  # passed over, left


def test_compile_beside_compiles_every_template_as_its_first_render_would(tmp_path):
    folder = tmp_path / "templates"
    folder.mkdir()
    names = sorted(name for name in os.listdir(templates._folder()) if name.endswith(".j2"))
    for name in names:
        shutil.copy(os.path.join(templates._folder(), name), folder / name)
    assert templates.compile_beside(str(folder)) == len(names) > 30
    beside = templates._beside(str(folder), make=False)
    assert beside is not None
    assert sorted(os.listdir(beside)) == sorted(f"{name}.cache" for name in names)
    for name in names:
        text, digest = templates._read(str(folder / name))
        code = template_cache.load(name, digest, beside)
        assert code == templates._compiled(name, text, str(folder / name))
    (folder / names[0]).write_text("{{ edited }}")  # an edited template is not read as compiled
    assert template_cache.load(names[0], templates._read(str(folder / names[0]))[1], beside) is None


def _seed_extensions(lib):
    """The extensions this checkout's install built in place, copied (stamped now, so newer
    than the copied sources) where the build puts them: setuptools passes over an extension
    whose library is newer than its sources, and this test is about the templates, not the
    C compiler's half minute on the extensions (tests/test_native.py builds those)."""
    for extension in native.EXTENSIONS.values():
        name = extension.module.replace(".", os.sep) + (sysconfig.get_config_var("EXT_SUFFIX"))
        if os.path.isfile(os.path.join(REPO, name)):
            os.makedirs(os.path.dirname(lib / name), exist_ok=True)
            shutil.copyfile(os.path.join(REPO, name), lib / name)


@pytest.mark.slow
def test_the_build_compiles_the_templates_so_a_new_installations_first_process_needs_no_jinja2(
    tmp_path,
):
    """setup.py's build (a wheel's, then an editable install's in place) leaves every template
    compiled beside it; a first process on the wheel's files (what `pip install .` copies: the
    runtime's headers included, which modules compile with), that may write nothing beside
    them (PYTHONDONTWRITEBYTECODE), compiles a function without importing jinja2."""
    source = tmp_path / "source"
    for part in ("tracer", "codegen", "runtime", "templates"):
        shutil.copytree(
            os.path.join(REPO, part),
            source / part,
            ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.o", "build"),
        )
    for part in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copy(os.path.join(REPO, part), source / part)
    build = tmp_path / "build"
    _seed_extensions(build / "lib")
    environment = dict(os.environ, TRACER_CACHE_DIR=str(tmp_path / "cache"))
    environment.pop("PYTHONPATH", None)
    folders = ["--build-lib", str(build / "lib"), "--build-temp", str(build / "temp")]
    steps = (
        ["build", *folders],
        ["build_ext", "--inplace", *folders],
    )  # the second compiles nothing
    for step in steps:
        built = subprocess.run(
            [sys.executable, "setup.py", "-q", *step],
            cwd=source,
            env=environment,
            capture_output=True,
            text=True,
        )
        assert built.returncode == 0, built.stderr
    names = {name for name in os.listdir(source / "templates") if name.endswith(".j2")}
    for installed in (build / "lib", source):
        beside = templates._beside(str(installed / "templates"), make=False)
        assert beside is not None, installed
        assert {name.removesuffix(".cache") for name in os.listdir(beside)} == names
    program = (
        "import sys\nimport numpy as np\nimport tracer as tt\n"
        "f = tt.function(lambda x: tt.reduce_sum(tt.tanh(x) @ x))\n"
        "print(float(f(tt.constant(np.eye(3) + 1.0))), 'jinja2' in sys.modules, tt.__file__)\n"
    )
    first = subprocess.run(
        [sys.executable, "-c", program],
        env=dict(environment, PYTHONPATH=str(build / "lib"), PYTHONDONTWRITEBYTECODE="1"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert first.returncode == 0, first.stderr
    value, imported, module = first.stdout.split()
    x = np.eye(3) + 1.0
    assert float(value) == pytest.approx(float(np.sum(np.tanh(x) @ x)), rel=1e-6)
    assert module.startswith(str(build / "lib"))
    assert imported == "False"
