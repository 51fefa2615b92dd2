"""Eager convolutions of many multiply-adds by modules built for their own geometry.

An eager convolution and its two gradients run the direct kernels installed with tracer
(runtime/conv_kernels.c), which read the geometry at run time. A compiled module's own
kernels, specialised to its channels, taps and sizes, give the same bits
(tests/test_installed_kernels.py) in a half to a third of the time on a CNN step's layers.
So the second eager call of a convolution op of at least `FROM_MACS` multiply-adds with the
same operands' shapes, dtype and attributes asks for the module of that one op, as
tt.function would build it (the compile cache keeps it for later processes); one thread at a
time builds the modules asked for, and the calls after an op's is built run it. Until then,
and where it cannot be built (no compiler, an unusable cache), the installed kernels answer,
so no eager call waits for the compiler and no value changes when the module arrives.

Not at the first call: a training step's first call would share the cores and the
interpreter's lock with the builds of all its convolutions (benchmarks/RESULTS.md), and an op
called once would be built for nothing. Nor for a smaller convolution,
whose build would cost more than it saves.

tracer/ops/convolution_ops.py's kernels ask `run` first, where the installed kernels would
compute the op (`use`): the pass pipeline that turns the op into the direct kernels is above
that package's layer.
"""

import logging
import math
import threading

import numpy as np

from tracer import dtypes
from tracer.ops import convolution_ops
from tracer.ops.core import apply
from tracer.tracing import Trace, tracing

log = logging.getLogger(__name__)

FROM_MACS = 1 << 22  # multiply-adds from which a convolution op gets a module of its own
_PRIMITIVES = {
    p.name: p
    for p in (
        convolution_ops.CONV2D,
        convolution_ops.CONV2D_BACKPROP_INPUT,
        convolution_ops.CONV2D_BACKPROP_FILTER,
    )
}
# key -> _SEEN after the op's first call; None once asked for, while it builds or where it
# cannot; then the module's run function
_modules = {}
_SEEN, _UNSEEN = object(), object()
_asked = []  # (key, op) of the modules asked for that no thread has taken yet
_builder = [None]  # the thread that builds them, one after another, while there are some
_asking = threading.Lock()


def use():
    """Have tracer/ops/convolution_ops.py's kernels ask `run` first."""
    convolution_ops.use_own_modules(run)


def run(name, a, b, attrs):
    """The result of the convolution op `name` on the arrays `a` and `b` by its own module,
    or None where the installed kernels answer (a small op, the op's first call, a module
    not built yet, or one that cannot be built; the second call asks for its build)."""
    if _multiply_adds(name, a, b, attrs) < FROM_MACS:
        return None
    key = (name, a.shape, b.shape, a.dtype.str, tuple(sorted(attrs.items())))
    module = _modules.get(key, _UNSEEN)
    if module is _UNSEEN:
        _modules[key] = _SEEN
    elif module is _SEEN:
        _ask(key, (name, a.shape, b.shape, a.dtype, attrs))
    elif module is not None:
        return module([np.ascontiguousarray(a), np.ascontiguousarray(b)])[0]
    return None


def wait():
    """Wait for the modules asked for (what tests compare with)."""
    while True:
        with _asking:
            builder = _builder[0]
        if builder is None:
            return
        builder.join()


def _ask(key, op):
    """Ask for the module of `op` under `key`: a thread builds it, after those asked before."""
    with _asking:
        if _modules.get(key) is not _SEEN:
            return  # asked for already
        _modules[key] = None
        _asked.append((key, op))
        if _builder[0] is not None:
            return  # the running thread takes it
        _builder[0] = threading.Thread(
            target=_build_asked, name="tracer build of eager convolutions", daemon=True
        )
        _builder[0].start()


def _build_asked():
    """Build the modules asked for, one after another, until none is left."""
    while True:
        with _asking:
            if not _asked:
                _builder[0] = None
                return
            key, op = _asked.pop(0)
        _modules[key] = _build(*op)


def _multiply_adds(name, a, b, attrs):
    """The op's multiply-adds: each output position of the convolution, times its taps,
    input channels and output channels (the same count for each of the three ops)."""
    filters = b.shape if name != "conv2d_backprop_filter" else (a.shape[3], b.shape[3])
    return a.shape[0] * math.prod(attrs["out"]) * math.prod(attrs["kernel"]) * math.prod(filters)


def _build(name, a_shape, b_shape, dtype, attrs):
    """The run function of the module of the op `name` alone, for operands of `a_shape` and
    `b_shape` and `dtype`, with its own kernels; None where it cannot be built."""
    from codegen.errors import BuildFailure
    from tracer.executables import BACKENDS, executable
    from tracer.passes.pipeline import run_pipeline

    backend = BACKENDS["c"]
    try:
        trace = Trace(may_create_variables=False)
        with tracing(trace):
            operands = [
                trace.input(label, shape, dtypes.as_dtype(dtype))
                for label, shape in (("a", a_shape), ("b", b_shape))
            ]
            result = apply(_PRIMITIVES[name], tuple(operands), attrs)
        graph = run_pipeline(trace.graph([result]), target=backend.target).final
        return executable(graph, backend, f"eager_{name}", own_kernels=True).run
    except (BuildFailure, OSError):
        return None
    except Exception as error:  # the installed kernels keep answering
        if threading.main_thread().is_alive():  # (not the program's exit, which ends a build)
            log.warning("tracer: no module of its own for the eager %s: %r", name, error)
        return None
