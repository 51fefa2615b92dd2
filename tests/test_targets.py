"""Targets (codegen/targets.py): the interpreter, the C module and exported C run one graph
to the same values; the pipeline runs for each; a form registered for one target is its
own; `tt.function(backend=...)` strings name a target and a policy."""

import os

import numpy as np
import pytest

import tracer as tt
from codegen import forms
from codegen.export import Entry, ExportError
from codegen.lower import lower
from codegen.targets import C_MODULE, EXPORTED_C, INTERPRETER, TARGETS, Target
from runtime.kernels import KERNELS
from tests import exported_c
from tracer.executables import BACKENDS, Backend, parse_backend
from tracer.passes.pipeline import run_pipeline


def _model(x):
    return tt.reduce_sum(tt.sin(x) * x, axis=1) + tt.exp(x[:, 0])


X = np.linspace(-1.5, 2.0, 12).reshape(4, 3)
EXPECTED = np.sum(np.sin(X) * X, axis=1) + np.exp(X[:, 0])


def _traced():
    concrete = tt.function(_model, backend="interpreter").get_concrete_function(tt.constant(X))
    return concrete.stages["traced"]


def test_the_interpreter_and_the_c_module_run_a_graph_to_numpys_values():
    graph = run_pipeline(_traced()).final
    for target in (INTERPRETER, C_MODULE):
        (got,) = target.emit(graph, "model").run([X])
        np.testing.assert_allclose(got, EXPECTED, rtol=1e-13, err_msg=target.name)


def test_exported_c_runs_the_graph_to_numpys_values(tmp_path):
    graph = run_pipeline(_traced(), target=EXPORTED_C).final
    files = EXPORTED_C.emit("model", [Entry("model", graph, ["x"], ["y"])])
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    main = os.path.join(tmp_path, "main.c")
    calls = [exported_c.Call("model", [X], [EXPECTED])]
    with open(main, "w") as handle:
        handle.write(exported_c.main_source("model", calls))
    program = exported_c.build(str(tmp_path), "model", [*exported_c.STRICT, "-O2"], [main])
    ((got,),) = exported_c.run(program, calls)
    np.testing.assert_allclose(got, EXPECTED, rtol=1e-13)


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.name)
def test_the_pipeline_runs_for_each_target_and_fuses_the_same(target):
    """Every target fuses as the C module does (the interpreter is the oracle of the very
    graph the C module compiles): sin, mul, the sum and exp become fused kernels."""
    stages = run_pipeline(_traced(), target=target)
    assert [n.op for n in stages.final.nodes if n.op not in ("input", "const")] == [
        n.op for n in run_pipeline(_traced()).final.nodes if n.op not in ("input", "const")
    ]
    assert any(n.op == "fused" for n in stages.final.nodes)
    (got,) = INTERPRETER.emit(stages.final, "model").run([X])
    np.testing.assert_allclose(got, EXPECTED, rtol=1e-13)


def test_each_target_takes_its_forms_from_the_op_records():
    assert C_MODULE.form_for("sin") is forms.C_FORMS["sin"]
    assert EXPORTED_C.form_for("sin") is forms.C_FORMS["sin"]
    assert INTERPRETER.form_for("sin") is KERNELS["sin"]
    assert C_MODULE.form_for("no such op") is None
    sin = next(n for n in _traced().nodes if n.op == "sin")
    mul = next(n for n in _traced().nodes if n.op == "mul")
    for target in TARGETS:  # the interpreter asks the C forms: it fuses as the C module does
        assert target.cost_hints.is_costly(sin) and not target.cost_hints.is_costly(mul)


def test_a_form_registered_for_one_target_is_found_for_it_and_the_default_elsewhere(
    monkeypatch,
):
    monkeypatch.setattr(EXPORTED_C, "forms", {})
    assert EXPORTED_C.form_for("matmul") is forms.C_FORMS["matmul"]  # the default
    in_module = C_MODULE.form_for("matmul")
    refused = forms.NotCompiled("this test keeps matmul out of exported C")
    EXPORTED_C.register_form("matmul", refused)
    assert EXPORTED_C.form_for("matmul") is refused
    assert C_MODULE.form_for("matmul") is in_module
    with pytest.raises(ValueError, match="'matmul' has a form for target 'exported C'"):
        EXPORTED_C.register_form("matmul", refused)

    def product(a, b):
        return tt.reduce_sum(a @ b)

    a, b = np.eye(2), np.arange(4.0).reshape(2, 2)
    assert float(tt.function(product, backend="c")(a, b)) == 6.0  # the C module's own form
    with pytest.raises(ExportError, match="matmul.*this test keeps matmul out of exported C"):
        tt.export_c(product, [a, b], "/nonexistent/never/written")


@pytest.mark.parametrize(
    "name, target, fallback, background",
    [
        ("auto", C_MODULE, True, False),
        ("c", C_MODULE, False, False),
        ("interpreter", INTERPRETER, False, False),
        ("tiered", C_MODULE, True, True),
    ],
)
def test_backend_strings_name_a_target_and_a_policy(name, target, fallback, background):
    backend = parse_backend(name)
    assert backend == Backend(target, fallback, background) == BACKENDS[name]
    assert backend.name == name and parse_backend(backend) is backend
    assert backend.built_now().background_build is False


def test_a_tiered_build_is_the_auto_backend_built_now():
    assert BACKENDS["tiered"].built_now() is not BACKENDS["auto"]
    assert BACKENDS["tiered"].built_now() == BACKENDS["auto"]


@pytest.mark.parametrize("bad", ["gpu", "C", None, ["c"]])
def test_a_bad_backend_string_is_refused_naming_the_choices(bad):
    with pytest.raises(ValueError, match=r"backend must be one of \('auto', 'c', 'interpreter', "):
        tt.function(_model, backend=bad)


def test_jit_compile_picks_its_backend_and_refuses_a_contrary_one():
    x = tt.constant(X)
    assert tt.function(_model, jit_compile=False).get_concrete_function(x).backend == "interpreter"
    assert tt.function(_model, jit_compile=True).get_concrete_function(x).backend == "c"
    with pytest.raises(ValueError, match="jit_compile=False asks for backend 'interpreter'"):
        tt.function(_model, backend="c", jit_compile=False)


def _product_graph():
    def product(a, b):
        return tt.exp(a @ b) @ b

    a, b = np.eye(3), np.arange(9.0).reshape(3, 3) / 9
    concrete = tt.function(product, backend="interpreter").get_concrete_function(a, b)
    return concrete.stages.final


def test_lowering_writes_the_forms_its_target_gives():
    graph = _product_graph()
    probe = Target("probe", forms.C_FORMS, home="codegen.compile")
    probe.register_form("matmul", forms.NotCompiled("the probe target has no matmul"))
    assert "scipy_cblas_dgemm" in lower(graph, "product", blas=True).source
    with pytest.raises(TypeError, match="matmul has no C code: the probe target has no matmul"):
        lower(graph, "product", target=probe)


def test_fused_loops_write_the_expressions_their_target_gives():
    """exp inside the fused loop of exp(a @ b): the probe target's own expression for it."""
    graph = _product_graph()
    assert any(n.op == "fused" for n in graph.nodes)
    probe = Target("probe", forms.C_FORMS, home="codegen.compile")
    probe.register_form("exp", forms.Expression(lambda t, out, x: f"probe_exp({x})"))
    assert "probe_exp(" in lower(graph, "product", target=probe).source
    assert "probe_exp(" not in lower(graph, "product").source


def test_buffer_planning_is_what_lowering_renders():
    """exp(a @ b) @ b: the product's result is freed once exp has read it, so exp's result
    could reuse its block were no step to write a block one of its own inputs occupies; one
    output buffer; two workspace blocks of 9 doubles (aligned to 64 bytes): 128 bytes each."""
    graph = _product_graph()
    assert INTERPRETER.plan_buffers(graph) is None
    for target in (C_MODULE, EXPORTED_C):
        placed = target.plan_buffers(graph)
        assert placed.buffers == [((3, 3), np.float64)]
        assert placed.outputs == [("buffer", 0)]
        assert placed.layout.blocks == [128, 128]
        assert lower(graph, "product").workspace_bytes == placed.layout.size == 256
