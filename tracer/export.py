"""A function and its derivatives as standalone C: `tt.export_c`, `ConcreteFunction.export_c`
and `python -m tracer export` (docs/export-c.md).

The function is traced as `tt.function` traces it; each exported entry point is the final
graph of one ConcreteFunction: the function itself, and the vector-Jacobian product,
jacobian or hessian asked for, each traced as a function of the same arguments that
computes it with tapes. `codegen.export` writes the C.
"""

import inspect
import os

from codegen.export import ExportError, prefix_name
from tracer import nest
from tracer.export_entries import entry, write
from tracer.ir import dims
from tracer.ops.broadcast_ops import reduce_sum
from tracer.signature import TensorSpec, spec_of
from tracer.tape import GradientTape
from tracer.tensor import TensorLike

DERIVATIVES = ("vjp", "jacobian", "hessian")


def export_c(
    function,
    input_signature,
    directory,
    prefix=None,
    derivatives=(),
    variables=None,
    native=False,
):
    """Write `prefix`.h, `prefix`.c and a Makefile for `function` traced with
    `input_signature` (TensorSpecs, or tensors and arrays standing for their shape and
    dtype; None in a TensorSpec's shape is a size the C functions take as an argument).

    The entry point `prefix` computes the function (its outputs, which may be gradients
    it computes with tapes); `derivatives` adds `prefix_vjp` (the gradient of <f, dy> for
    a cotangent dy), `prefix_jacobian` (of each output with respect to each argument) and
    `prefix_hessian` (of a scalar function). A function that reads tt.Variables needs
    `variables="frozen"` (their current values built into the C) or `"arguments"` (each
    an argument, read and written in place where the function assigns it).
    Returns the paths written.
    """
    from tracer.function import Function
    from tracer.function import function as to_function

    python = function.python_function if isinstance(function, Function) else function
    name = getattr(python, "__name__", "function")
    prefix = prefix_name(prefix or name)  # the files' names too
    unknown = [d for d in derivatives if d not in DERIVATIVES]
    if unknown:
        raise ValueError(f"export_c: derivatives are {DERIVATIVES}, not {unknown}")
    signature = list(input_signature)
    concrete = to_function(python, backend="interpreter").get_concrete_function(*signature)
    entries = [entry(prefix, concrete, variables)]
    for kind in DERIVATIVES:
        if kind in derivatives:
            wrapper, specs, outputs = _DERIVATIVE_BUILDERS[kind](python, name, signature, concrete)
            derived = to_function(wrapper, backend="interpreter").get_concrete_function(*specs)
            summary = f"the {kind} of {name}"
            entries.append(entry(f"{prefix}_{kind}", derived, variables, summary, outputs))
    return write(directory, prefix, entries, native, _origin(python))


def _one_output(name, concrete, kind):
    """The single tensor a derivative is taken of (a scalar, for a hessian)."""
    flat = [leaf for leaf in nest.flatten(concrete._structure) if isinstance(leaf, TensorLike)]
    if len(flat) != 1:
        raise ExportError(
            f"export_c: the {kind} needs {name} to return one tensor, not {len(flat)}"
        )
    shape = tuple(flat[0].shape)
    if kind == "hessian" and shape != (1,) * len(shape):
        raise ExportError(
            f"export_c: the hessian needs {name} to return a scalar, not shape {shape}"
        )
    return flat[0]


def _parameters(python):
    return [p.name for p in inspect.signature(python).parameters.values()]


def _vjp(python, name, signature, concrete):
    output = _one_output(name, concrete, "vjp")
    shape = [None if isinstance(d, dims.Dim) else d for d in output.shape]
    names = _parameters(python)
    # the cotangent's name: dy, or dy_1, ... where an argument is dy
    dy_name = next(
        n for n in ("dy", *(f"dy_{k}" for k in range(1, len(names) + 1))) if n not in names
    )
    cotangent = TensorSpec(shape, output.dtype, name=dy_name)

    def vjp(*args):
        *xs, dy = args
        with GradientTape() as tape:
            tape.watch(xs)
            y = python(*xs)
        return tape.gradient(y, xs, output_gradients=dy, unconnected_gradients="zero")

    return _named(vjp, [*names, dy_name]), [*signature, cotangent], [f"grad_{n}" for n in names]


def _known_sizes(kind, signature, names):
    """A jacobian's shape is the output's and the argument's together: both known."""
    for name, value in zip(names, signature):
        if None in tuple(spec_of(value).shape):
            raise ExportError(
                f"export_c: the {kind} needs every size known, and argument {name} has shape "
                f"{tuple(spec_of(value).shape)}"
            )


def _jacobian(python, name, signature, concrete):
    _one_output(name, concrete, "jacobian")
    names = _parameters(python)
    _known_sizes("jacobian", signature, names)

    def jacobian(*xs):
        with GradientTape(persistent=True) as tape:
            tape.watch(xs)
            y = python(*xs)
        return [tape.jacobian(y, x, unconnected_gradients="zero") for x in xs]

    return _named(jacobian, names), signature, [f"jacobian_{n}" for n in names]


def _hessian(python, name, signature, concrete):
    _one_output(name, concrete, "hessian")
    names = _parameters(python)
    _known_sizes("hessian", signature, names)

    def hessian(*xs):
        with GradientTape(persistent=True) as outer:
            outer.watch(xs)
            with GradientTape() as inner:
                inner.watch(xs)
                y = reduce_sum(python(*xs))
            grads = inner.gradient(y, xs, unconnected_gradients="zero")
        return [outer.jacobian(g, x, unconnected_gradients="zero") for g in grads for x in xs]

    return _named(hessian, names), signature, [f"hessian_{a}_{b}" for a in names for b in names]


_DERIVATIVE_BUILDERS = {"vjp": _vjp, "jacobian": _jacobian, "hessian": _hessian}


def _named(wrapper, names):
    """`wrapper` (def wrapper(*xs)) with parameters `names`, so that the exported arguments
    are named as the user's."""
    wrapper.__signature__ = inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY) for n in names]
    )
    return wrapper


def _origin(python):
    code = getattr(python, "__code__", None)
    if code is None:
        return ""
    return f"{os.path.basename(code.co_filename)}:{code.co_firstlineno} {python.__name__}"
