"""What a convolution's kernel applies to each output as it stores it: its epilogue.

tracer/passes/conv_epilogues.py gives a lowered convolution (a patch product, a depthwise
convolution or a depthwise input gradient) the elementwise ops that read its result alone,
so that the result is written once instead of written, read back and written again by a
loop of its own. An epilogue is, in this order, any of:

    bias        an input (the output's channels,) added along the last axis
    activation  the name of a unary elementwise op (the attribute `activation`)
    gate        an input of the output's shape: relu_grad(gate, value), the value where
                the gate is positive and 0 elsewhere (the attribute `gated`): relu's
                gradient, whose cotangent the kernel computes

Each is its op's own kernel in numpy and its op's own C form in a template, so the values are
the ops' bits. The inputs follow the op's operands: the bias, then the gate.
"""

from codegen import forms
from codegen.ctypes import compute
from codegen.forms import C_FORMS
from runtime.kernels import KERNELS


def split(inputs, operands, attrs):
    """(the op's `operands` first inputs, its bias or None, its gate or None)."""
    extra = list(inputs[operands:])
    gate = extra.pop() if attrs.get("gated") else None
    bias = extra.pop() if extra else None
    return list(inputs[:operands]), bias, gate


def check(what, extra, channels, shape, dtype, attrs):
    """Raise where the epilogue's inputs `extra` (after the operands) are not a bias of
    `channels` and a gate of `shape`, each of `dtype`, as `attrs` says."""
    _, bias, gate = split(extra, 0, attrs)
    if len(extra) > 1 + bool(attrs.get("gated")):
        raise ValueError(f"{what} takes at most a bias and a gate, got {len(extra)} more inputs")
    if bias is not None and (tuple(bias.shape) != (channels,) or bias.dtype != dtype):
        raise ValueError(f"the bias must be ({channels},) of {dtype.name}, got {bias.shape}")
    if gate is not None and (tuple(gate.shape) != tuple(shape) or gate.dtype != dtype):
        raise ValueError(f"the gate must be {tuple(shape)} of {dtype.name}, got {gate.shape}")


def apply_numpy(value, bias, gate, activation):
    """The epilogue of numpy array `value`, by each op's own kernel."""
    if bias is not None:
        value = KERNELS["add"](value, bias)
    if activation is not None:
        value = KERNELS[activation](value)
    if gate is not None:
        value = KERNELS["relu_grad"](gate, value)
    return value


def render(node, operands, value, bias, gate):
    """The C expression of an output of `node` (an op of `operands` operands): its sum
    `value`, through the epilogue the node has, `bias` and `gate` the C expressions of the
    bias's and the gate's elements there."""
    dtype, (_, bias_input, gate_input) = node.dtype, split(node.inputs, operands, node.attrs)
    if bias_input is not None:
        value = C_FORMS["add"].render(dtype, dtype, value, bias)
    activation = node.attrs.get("activation")
    if activation is not None:
        value = C_FORMS[activation].render(dtype, dtype, f"({compute(dtype)})({value})")
    if gate_input is not None:
        value = C_FORMS["relu_grad"].render(dtype, dtype, gate, f"({compute(dtype)})({value})")
    return value


class Template(forms.Template):
    """A convolution's template, and the prologue helpers of the activation it applies."""

    def helper_definitions(self, node, vector_math):
        activation = node.attrs.get("activation")
        if activation is None:
            return []
        return C_FORMS[activation].helper_definitions(node, vector_math)
