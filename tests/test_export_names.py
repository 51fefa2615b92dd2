"""Exported C under any name Python allows (issue 47, items 5-7): functions and arguments
named after C keywords and the C library's names, non-ASCII and very long names compile
with the strict flags and give the interpreter's values; arrays past what C indexes are
refused, naming the argument; `python -m tracer export` reports every error in one line."""

import keyword
import os
import re
import subprocess
import sys
import unicodedata

import numpy as np
import pytest

import tracer as tt
from codegen.export import C_KEYWORDS, identifier, prefix_name
from codegen.libc import LIBRARY_NAMES, LIBRARY_PATTERN
from tests import exported_c
from tracer.cli import main

hypothesis = pytest.importorskip("hypothesis", reason="hypothesis is in the test extra")
given, settings, st = hypothesis.given, hypothesis.settings, hypothesis.strategies

FUNCTION_NAMES = [
    "sin", "sqrt", "memcpy", "free", "exit", "main", "I", "complex", "NAN", "_Bool",
    "_Complex", "ｆｕｌｌ",
]  # fmt: skip
ARGUMENT_NAMES = [
    "I", "complex", "NAN", "INFINITY", "HUGE_VAL", "NULL", "EXIT_FAILURE", "RAND_MAX",
    "INT64_MAX", "SIZE_MAX", "_Bool", "_Complex", "math_errhandling", "memcpy",
]  # fmt: skip
X = np.array([0.25, -1.5, 2.0])
B = np.array([1.0, 0.5, -2.0])


def _function(source, name, function_name=None):
    """The function `name` that `source` defines (with tt in scope), renamed
    `function_name`: Python source cannot spell every name Python accepts (it normalizes
    ｆｕｌｌ to full)."""
    namespace = {"tt": tt}
    exec(source, namespace)
    function = namespace[name]
    if function_name is not None:
        function.__name__ = function.__qualname__ = function_name
    return function


def _sin_dot(function_name="f", argument="x", echo=True):
    """f(argument, b) = sum(sin(argument) * b), and with `echo` the argument as well (an
    output that is an argument as it is: the C copies it with memcpy)."""
    result = f"tt.reduce_sum(tt.sin({argument}) * b){', ' + argument if echo else ''}"
    source = f"def f({argument}, b):\n    return {result}\n"
    return _function(source, "f", function_name)


def _export_and_call(directory, function, inputs, **options):
    """Export `function` for `inputs`' shapes, compile it and a C main that calls each
    entry point (the vjp's with a cotangent of ones) with the strict flags, and compare
    each output with tracer's eager one. Returns the header's text."""
    signature = [tt.TensorSpec(np.shape(a), tt.float64) for a in inputs]
    paths = tt.export_c(function, signature, str(directory), **options)
    prefix = os.path.basename(paths[0])[: -len(".h")]
    header = (directory / f"{prefix}.h").read_text()
    names = _entry_names(header)
    xs = [tt.constant(a) for a in inputs]
    with tt.GradientTape() as tape:
        tape.watch(xs)
        ys = function(*xs)
    ys = list(ys) if isinstance(ys, tuple) else [ys]
    expected = [[y.numpy() for y in ys]]
    calls = [exported_c.Call(names[0], inputs, expected[0])]
    if options.get("derivatives") == ("vjp",):
        dy = np.ones(ys[0].shape)
        grads = tape.gradient(ys[0], xs, output_gradients=tt.constant(dy))
        expected.append([g.numpy() for g in grads])
        calls.append(exported_c.Call(names[1], [*inputs, dy], expected[1]))
    (directory / "main.c").write_text(exported_c.main_source(prefix, calls))
    program = exported_c.build(
        str(directory), prefix, [*exported_c.STRICT, "-O1"], [str(directory / "main.c")]
    )
    for results, wanted in zip(exported_c.run(program, calls), expected):
        for got, want in zip(results, wanted):
            np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    return header


def _entry_names(header):
    """The entry points a header declares, in order."""
    return re.findall(r"^int (\w+)\(", header, re.MULTILINE)


@pytest.mark.parametrize("name", FUNCTION_NAMES)
def test_functions_named_after_c_and_its_library_compile_and_match_eager(tmp_path, name):
    function = _sin_dot(name, echo=False)
    header = _export_and_call(tmp_path, function, [X, B], derivatives=("vjp",))
    c_name = identifier(name, file_scope=True)
    assert _entry_names(header) == [c_name, f"{c_name}_vjp"]
    assert os.path.exists(tmp_path / f"{c_name}.c")


@pytest.mark.parametrize("name", ARGUMENT_NAMES)
def test_arguments_named_after_c_and_its_library_compile_and_match_eager(tmp_path, name):
    header = _export_and_call(tmp_path, _sin_dot("f", name), [X, B])
    c_name = identifier(name)
    assert c_name != name and c_name.startswith("py")
    # the header says which argument the C name stands for
    assert re.search(rf"\* +{c_name} +float64\[3\] +input \(named '{name}' in Python\)", header)
    assert f"int f(const double *{c_name}, const double *b, double *out0, double *out1" in header


def test_names_that_collide_after_mangling_or_with_generated_ones_are_made_unique(tmp_path):
    # `a-b` and `a_b` are one C name; dy is also the vjp's cotangent; d0 the unknown size's;
    # work and args the entry point's own; f_run and f_c0 the names of its static function
    # and constant array
    source = (
        "import numpy as np\n"
        "def f(a_b, dy, work, args, f_run, f_c0):\n"
        "    c = tt.constant(np.array([1.0, 2.0, 3.0]))\n"
        "    return tt.reduce_sum((a_b * dy + work * args - f_run) * f_c0 * c)\n"
    )
    function = _function(source, "f")
    inputs = [X, B, X * 2, B * 3, X - 1, B + 1]
    header = _export_and_call(tmp_path / "f", function, inputs, derivatives=("vjp",))
    assert (
        "int f_vjp(const double *a_b, const double *dy, const double *py_work, "
        "const double *py_args, const double *f_run, const double *f_c0, const double *dy_1, "
        in header
    )
    source = "def g(d0, x):\n    return {'a-b': d0 * x, 'a_b': x}\n"
    signature = [tt.TensorSpec([None], tt.float64)] * 2
    tt.export_c(_function(source, "g"), signature, str(tmp_path / "g"))
    header = (tmp_path / "g" / "g.h").read_text()
    assert "int g(const double *d0_1, const double *x, int64_t d0, double *a_b, double *a_b_1" in (
        header
    )
    # the same names give the same C, byte for byte
    tt.export_c(_function(source, "g"), signature, str(tmp_path / "again"))
    assert (tmp_path / "again" / "g.c").read_text() == (tmp_path / "g" / "g.c").read_text()


def test_non_ascii_names_are_spelled_in_ascii(tmp_path):
    source = "def énergie(α, b):\n    return tt.reduce_sum(tt.sin(α) * b)\n"
    header = _export_and_call(tmp_path, _function(source, "énergie"), [X, B])
    assert _entry_names(header) == ["u00e9nergie"]
    assert "int u00e9nergie(const double *u03b1, const double *b" in header
    assert r"input (named '\u03b1' in Python)" in header
    assert header.isascii() and (tmp_path / "u00e9nergie.c").read_text().isascii()


def test_long_names_are_cut_with_a_hash_for_the_files_and_the_c(tmp_path):
    long_function, long_argument = "f" + "x" * 2999, "a" * 3000
    function = _sin_dot(long_function, long_argument)
    header = _export_and_call(tmp_path / "one", function, [X, B])
    prefix = _entry_names(header)[0]
    assert len(prefix) == 40 and prefix.startswith("fxxx")
    assert os.path.exists(tmp_path / "one" / f"{prefix}.h")
    argument = re.search(r"const double \*(a+_[0-9a-f]{8}),", header).group(1)
    assert len(argument) == 63
    # the same name gives the same C; another as long, another name
    tt.export_c(function, [tt.TensorSpec([3], tt.float64)] * 2, str(tmp_path / "two"))
    assert os.path.exists(tmp_path / "two" / f"{prefix}.h")
    other = _sin_dot("f" + "x" * 2998 + "y")
    paths = tt.export_c(other, [tt.TensorSpec([3], tt.float64)] * 2, str(tmp_path / "three"))
    assert os.path.basename(paths[0]) != f"{prefix}.h"


def test_a_prefix_that_is_a_standard_header_name_is_changed():
    assert prefix_name("math") == "py_math" and prefix_name("String") == "py_String"
    assert prefix_name("stdio_helpers") == "stdio_helpers"


def identity(x):
    return x


def outer(x, y):
    return tt.reduce_sum(x @ y)


def two_products(x, w):
    return tt.reduce_sum((x @ w) * (x @ (w * 2.0)))


def test_arrays_past_what_c_indexes_are_refused_naming_the_argument_and_shape(tmp_path):
    cases = [
        (
            identity,
            [tt.TensorSpec([2**31, 2**31], tt.float64)],
            r"identity: argument x of shape \[2147483648, 2147483648\] \(float64\) holds "
            r"4611686018427387904 elements, 36893488147419103232 bytes: exported C indexes "
            r"arrays of at most 9223372036854775807 bytes",
        ),
        (
            identity,
            [tt.TensorSpec([None, 2**62], tt.float32)],
            r"argument x of shape \[d0, 4611686018427387904\] \(float32\)",
        ),
        (
            identity,  # 2**63 bytes: one past the largest
            [tt.TensorSpec([2**60], tt.float64)],
            r"argument x of shape \[1152921504606846976\] \(float64\)",
        ),
        (
            outer,  # the arguments fit, their product does not
            [tt.TensorSpec([2**31, 2], tt.float64), tt.TensorSpec([2, 2**31], tt.float64)],
            r"outer: \w+ \(at test_export_names.py:\d+\) of shape \[2147483648, 2147483648\]",
        ),
        (
            two_products,  # each product fits, the workspace holding both does not
            [tt.TensorSpec([2**29, 2], tt.float64), tt.TensorSpec([2, 2**30], tt.float64)],
            r"two_products: its workspace needs 9223\d+ bytes",
        ),
    ]
    for function, signature, message in cases:
        with pytest.raises(tt.ExportError, match=message):
            tt.export_c(function, signature, str(tmp_path))
    assert not os.listdir(tmp_path)  # nothing written by a refused export
    # the largest array that fits exports and compiles
    tt.export_c(identity, [tt.TensorSpec([2**60 - 1], tt.float64)], str(tmp_path))
    source, target = str(tmp_path / "identity.c"), str(tmp_path / "identity.o")
    command = [exported_c.compiler(), *exported_c.STRICT, "-c", source, "-o", target]
    compiled = subprocess.run(command, capture_output=True, text=True)
    assert compiled.returncode == 0, compiled.stderr


# --- the command line --------------------------------------------------------------------

SCRIPT = """
import tracer as tt


def loss(x, w):
    return tt.reduce_sum(tt.sin(x) * w)


def vector(x):
    return x * 2.0


value = 3
"""


@pytest.fixture
def scripts(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))  # (the command puts the script's folder)
    (tmp_path / "model.py").write_text(SCRIPT)
    (tmp_path / "broken.py").write_text("import tracer\n\n1 / 0\n")
    (tmp_path / "a_file").write_text("")
    return tmp_path


def _cli_error(capsys, scripts, *argv):
    """The one line `python -m tracer export ...` writes to stderr, and its exit status 2."""
    argv = [a.replace("DIR", str(scripts)) for a in argv]
    with pytest.raises(SystemExit) as exit_:
        main(["export", *argv])
    stderr = capsys.readouterr().err
    assert exit_.value.code == 2, stderr
    assert stderr.endswith("\n") and stderr.count("\n") == 1, stderr
    assert stderr.startswith("python -m tracer export: error: ")
    assert "Traceback" not in stderr
    return stderr


CLI_ERRORS = [
    (["DIR/model.py:loss", "--args", "f64[3 4], f64[3 4]"], "argument --args: .*'f64\\[3 4\\]'"),
    (["DIR/model.py:loss", "--args", "f64[3], junk f64[3]"], "argument --args: .*'junk f64"),
    (["DIR/model.py:loss", "--args", "f64[3] f64[3]"], "argument --args: .*'f64\\[3\\] f64"),
    (["DIR/model.py:loss", "--args", "f64[3];f64[3]"], "argument --args: .*'f64\\[3\\];f64"),
    (["DIR/model.py:loss", "--args", "f64[3?], f64[3]"], "argument --args: .*'f64\\[3\\?\\]'"),
    (["DIR/model.py:loss", "--args", "f64[-1], f64[3]"], "argument --args: .*'f64\\[-1\\]'"),
    (["DIR/model.py:loss", "--args", "f64[3], f64[3],"], "argument --args: an empty argument"),
    (["DIR/model.py:loss", "--args", "float[3], f64[3]"], "argument --args: .*dtype is one of"),
    (["DIR/model.py:loss", "--args", "f64[3], f64[[3]]"], "argument --args: unbalanced"),
    (["DIR/model.py:loss", "--args", "f64[3]"], "argument --args: 1 spec for loss\\(x, w\\)"),
    (
        ["DIR/model.py:loss", "--args", "f64[3], f64[3], f64[3]"],
        "argument --args: 3 specs for loss\\(x, w\\): too many",
    ),
    (["DIR/missing.py:loss", "--args", "f64[3]"], "argument target: no script '.*missing.py'"),
    (["DIR/model.py", "--args", "f64[3]"], "argument target: write SCRIPT.py:FUNCTION"),
    (["DIR/model.py:nothing", "--args", "f64[3]"], "argument target: .* no function 'nothing'"),
    (["DIR/model.py:value", "--args", "f64[3]"], "argument target: .* a value, named 'value'"),
    (
        ["DIR/broken.py:f", "--args", "f64[3]"],
        "argument target: running .*broken.py raised ZeroDivisionError: .*\\(broken.py:3\\)",
    ),
    (["DIR/model.py:vector", "--args", "f64[3]", "--out", "DIR/a_file"], "argument --out: .*"),
    (
        ["DIR/model.py:vector", "--args", "f64[3]", "--out", "DIR/a_file/under"],
        "argument --out: cannot write",
    ),
    (
        ["DIR/model.py:vector", "--args", "f64[3]", "--out", "DIR/out", "--hessian"],
        "export_c: the hessian needs vector to return a scalar, not shape \\(3,\\)",
    ),
    (
        ["DIR/model.py:vector", "--args", "f64[2147483648, 2147483648]", "--out", "DIR/out"],
        "vector: argument x of shape \\[2147483648, 2147483648\\]",
    ),
    (["DIR/model.py:vector", "--args", "f64[3]"], "the following arguments are required: --out"),
]


@pytest.mark.parametrize("argv, message", CLI_ERRORS, ids=[" ".join(a[1:]) for a, _ in CLI_ERRORS])
def test_each_command_line_error_is_one_line_naming_the_problem(capsys, scripts, argv, message):
    if "--out" not in argv and "required" not in message:
        argv = [*argv, "--out", "DIR/out"]
    stderr = _cli_error(capsys, scripts, *argv)
    assert re.search(message, stderr), stderr
    assert not os.path.exists(scripts / "out")


def test_the_command_line_fails_in_one_line_without_a_traceback(scripts):
    command = [sys.executable, "-m", "tracer", "export", f"{scripts}/model.py:loss"]
    environment = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(__file__)))
    result = subprocess.run(
        [*command, "--args", "f64[3 4], f64[3 4]", "--out", str(scripts / "out")],
        capture_output=True,
        text=True,
        env=environment,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.splitlines() == [
        "python -m tracer export: error: argument --args: cannot read the argument spec "
        "'f64[3 4]': its sizes are integers or ?, separated by commas"
    ]


def test_the_command_line_reads_specs_with_spaces_and_unknown_sizes(capsys, scripts):
    out = scripts / "out"
    code = main(
        [
            "export",
            f"{scripts}/model.py:loss",
            "--args",
            " f64[ ?, 3 ] ,f64[?,3]",
            "--out",
            str(out),
        ]
    )
    assert code == 0 and f"wrote {out / 'loss.h'}" in capsys.readouterr().out
    header = (out / "loss.h").read_text()
    assert "int loss(const double *x, const double *w, int64_t d0, double *out" in header


# --- any name ----------------------------------------------------------------------------


def _python_names():
    """Identifiers Python accepts: C's keywords and library names, unicode ones, long ones."""
    c_names = sorted(C_KEYWORDS | LIBRARY_NAMES | {"main", "_Exit", "__x", "TR_PART", "dy"})
    unicode = st.text(
        st.characters(categories=("Lu", "Ll", "Lo", "Nd", "Pc")), min_size=1, max_size=12
    )
    long = st.text(st.sampled_from("aZ_9é"), min_size=60, max_size=400)
    names = st.one_of(st.sampled_from(c_names), unicode, long)
    return names.filter(lambda n: n.isidentifier() and not keyword.iskeyword(n))


@settings(max_examples=25, deadline=None)
@given(function_name=_python_names(), argument=_python_names())
def test_any_python_name_exports_c_that_compiles_and_agrees_or_is_refused_clearly(
    tmp_path_factory, function_name, argument
):
    if unicodedata.normalize("NFKC", argument) in ("b", "tt"):  # (as Python reads it)
        argument += "_"
    directory = tmp_path_factory.mktemp("name")
    try:
        _export_and_call(directory, _sin_dot(function_name, argument), [X, B])
    except ValueError as error:  # a refusal says what and why, in one line
        assert str(error) and "\n" not in str(error)


def test_the_reserved_names_cover_what_the_c_library_headers_declare(tmp_path):
    """Every name glibc's headers declare (in C99 and in gcc's default gnu17) is reserved:
    the macros, and the functions gcc lists with -aux-info."""
    cc = exported_c.compiler()
    version = subprocess.run([cc, "--version"], capture_output=True, text=True).stdout
    if "Free Software Foundation" not in version or not os.path.exists("/usr/include/features.h"):
        pytest.skip("the check reads gcc's -aux-info and glibc's headers")
    headers = "math complex string stdlib stdint stddef stdio limits float errno stdbool"
    source = tmp_path / "all.c"
    source.write_text("".join(f"#include <{h}.h>\n" for h in headers.split()))
    declared = set()
    for standard in ("c99", "gnu17"):
        macros = subprocess.run(
            [cc, f"-std={standard}", "-dM", "-E", str(source)], capture_output=True, text=True
        ).stdout
        declared.update(re.findall(r"^#define (\w+)", macros, re.MULTILINE))
        aux = tmp_path / f"{standard}.txt"
        subprocess.run(
            [cc, f"-std={standard}", "-aux-info", str(aux), "-c", str(source), "-o", os.devnull],
            check=True,
        )
        declared.update(re.findall(r"\b([A-Za-z]\w*) \(", aux.read_text()))
    missing = sorted(
        name
        for name in declared - {"void"}
        if name not in LIBRARY_NAMES and not LIBRARY_PATTERN.match(name)
    )
    assert not missing
