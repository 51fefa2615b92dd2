"""The op registry: every primitive is declared whole, in one place, and a declaration that
lacks a piece fails at import, naming the op and the piece."""

import re

import numpy as np
import pytest

import tracer as tt
from codegen import forms
from codegen.compile import compile_graph
from codegen.forms import C_FORMS
from runtime.interpreter import evaluate
from runtime.kernels import KERNELS
from tracer.ir import Graph, Node
from tracer.ops import seed_ops, shapes
from tracer.ops.registry import OPS, missing_pieces, primitive, unbatchable


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_primitive_has_a_kernel_a_c_form_and_a_batching_rule(name):
    assert missing_pieces(OPS[name]) == [], name


def _declare(name, **record):
    return primitive(name, shapes.unary, **record)


@pytest.mark.parametrize(
    "record, piece",
    [
        ({"c": forms.Expression(lambda t, out, x: x), "fusion": "elementwise"}, "numpy kernel"),
        (
            {"kernel": np.negative, "fusion": "elementwise"},
            "C form (c=forms.Expression or forms.Generator)",
        ),
        (
            {"kernel": np.negative, "c": forms.View(lambda n, m: m), "fusion": "elementwise"},
            "C form",
        ),
        ({"kernel": np.negative, "c": forms.LoopNests(lambda n: ([], []))}, "batching rule"),
        (
            {
                "kernel": np.negative,
                "c": forms.Expression(str),
                "fusion": "elementwise",
                "saves": (0,),
            },
            "gradient rule",
        ),
    ],
)
def test_a_declaration_without_a_piece_fails_naming_the_op_and_the_piece(record, piece):
    with pytest.raises(
        ValueError, match=f"'half_declared' is declared without .*{re.escape(piece)}"
    ):
        _declare("half_declared", **record)
    assert "half_declared" not in OPS and "half_declared" not in KERNELS
    assert "half_declared" not in C_FORMS


def test_an_op_is_declared_once():
    with pytest.raises(ValueError, match="'sin' is declared twice"):
        _declare("sin", kernel=np.sin, c=forms.libm("sin"), fusion="elementwise")


def test_an_infix_symbol_without_an_operator_is_refused_and_leaves_nothing():
    with pytest.raises(ValueError, match=r"'power_like': infix must be one of .*'\*'.*not '\*\*'"):
        _declare("power_like", kernel=np.power, c=forms.Expression(str), infix="**")
    assert "power_like" not in OPS and "power_like" not in KERNELS


def test_an_op_that_cannot_be_batched_says_why_when_a_jacobian_needs_it():
    op = _declare(
        "never_batched",
        kernel=np.negative,
        c=forms.NotCompiled("a test op"),
        batch=unbatchable("is a test op"),
    )
    try:
        with pytest.raises(Exception, match="never_batched is a test op"):
            op.batch(Node("never_batched", (), {}, (), tt.float64), [], [], 2)
    finally:
        for table in (OPS, KERNELS, C_FORMS):
            del table["never_batched"]


@pytest.mark.parametrize("kind, target, start, rows", [
    ("full", (5,), 0, 5), ("full", (2, 3), 2, 3), ("per_example", (3, 4), 0, 4),
    ("per_example", (2, 2, 3), 1, 4),
])  # fmt: skip
def test_the_seeds_of_a_jacobian_are_the_same_rows_of_an_identity_in_every_backend(
    kind, target, start, rows
):
    attrs = seed_ops.seed_attrs(kind, target, tt.float64, start, rows)
    node = Node("one_hot_seeds", (), attrs, attrs["shape"], tt.float64)
    graph = Graph([], [node], [node])
    (interpreted,) = evaluate(graph, [])
    (compiled,) = compile_graph(graph, "seeds")([])
    per_example = int(np.prod(target[1:])) if kind == "per_example" else int(np.prod(target))
    identity = np.eye(per_example)[start : start + rows]
    if kind == "per_example":
        identity = np.broadcast_to(identity[:, None, :], (rows, target[0], per_example))
    np.testing.assert_array_equal(interpreted, identity.reshape(attrs["shape"]))
    np.testing.assert_array_equal(compiled, interpreted)
