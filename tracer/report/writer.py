"""`write_report`: the one-page compile report of a tt.function, or of one of its traces."""

from tracer.report.contents import gather
from tracer.report.page import render


def write_report(function, path, profile=None, args=None):
    """Write the compile report of `function` to `path`, one self-contained HTML file, and
    return `path`.

    `function` is a `tt.function` (its signature for `args`, a list of arguments or
    TensorSpecs, else the latest traced one) or one of its ConcreteFunctions. `profile`
    (optional) gives the times: `line_seconds(concrete)` -> {(filename, lineno): seconds}
    and `node_seconds(concrete)` -> {'%k': seconds} (the final IR's names).

        step(x, w)
        tracer.report.write_report(step, "step.html")
    """
    concrete, origin = _traced(function, args)
    page = render(gather(concrete, origin, profile))
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(page)
    return path


def _traced(function, args):
    """(the ConcreteFunction to report, the tt.function that traced it or None)."""
    if not hasattr(function, "get_concrete_function"):  # a ConcreteFunction
        if args is not None:
            raise TypeError("args select a signature of a tt.function: a trace has one already")
        origin = getattr(function, "_function", None)  # its tt.function, where it keeps one
        return function, origin() if callable(origin) else origin
    if args is not None:
        return function.get_concrete_function(*args), function
    traced = list(function._concrete.values())
    if traced:
        return traced[-1], function
    if function._input_signature is not None:
        return function.get_concrete_function(), function
    raise ValueError(
        f"{function.__name__} has not been traced yet: call it first, or pass args= (the "
        "arguments, or TensorSpecs, of the signature to report)"
    )
