"""Where the compile time of one signature went: tracing, each pass, rendering the C, the C
compiler, loading the module.

The Function measures tracing and the whole build (`Function._build_times`), the pipeline
each pass (`Stages.seconds`), and the build of the C module the C compiler's run
(`meta["compile_seconds"]`, as it was when the module was built: a module found in the
cache was not compiled by this process). Where the module says how long lowering to C
and loading took (its `render_seconds` and `load_seconds`), those are shown; else
what the build took besides the passes and the compiler is shown as one remainder. The
compiler's row says how many kernels the module borrowed instead of compiling them.
"""


class Phase:
    """One row of the compile-time table: a phase, its seconds (None: not measured), a note
    that says where the figure comes from or why it is missing, and whether this process
    spent it (a cached module's compile time was an earlier process's)."""

    def __init__(self, name, seconds, note="", spent=True):
        self.name = name
        self.seconds = seconds
        self.note = note
        self.spent = spent


def compile_phases(concrete, build_times, passes_ran_for_report):
    """[Phase] of `concrete`: `build_times` is its Function's BuildTimes (None where the
    report was given the ConcreteFunction alone); `passes_ran_for_report`: its module came
    from a plan stored by an earlier process, so the passes ran only now, for the report."""
    phases = []
    if build_times is not None:
        phases.append(Phase("trace", build_times.trace, "running the Python function"))
    else:
        phases.append(Phase("trace", None, "not known: report the tt.function, not one trace"))
    note = "run now, for this report (the module came from a stored plan)"
    seconds = concrete.stages.seconds
    for name in list(concrete.stages)[1:]:
        phases.append(
            Phase(f"pass: {name}", seconds.get(name), note if passes_ran_for_report else "")
        )
    meta = getattr(concrete._executable, "meta", None) or {}
    cc = meta.get("compile_seconds")
    cached = meta.get("cached", False)
    if not meta:
        phases.append(Phase("C compiler", None, "no C: the function runs on the interpreter"))
        return phases
    render = getattr(concrete._executable, "render_seconds", None)
    load = getattr(concrete._executable, "load_seconds", None)
    if render is not None:
        phases.append(Phase("render (lowering to C)", render))
    if cached:
        note = "when it was built: this process found the module in the cache"
        phases.append(Phase("cc", cc, note, spent=False))
    else:
        phases.append(Phase("cc", cc, _borrowed(getattr(concrete._executable, "plan", None))))
    if load is not None:
        phases.append(Phase("load", load))
    elif build_times is not None and not passes_ran_for_report:
        spent = sum(seconds.get(name, 0.0) for name in list(concrete.stages)[1:])
        rest = build_times.build - spent - (0.0 if cached or cc is None else cc)
        phases.append(
            Phase("render and load", max(rest, 0.0), "the build's time besides passes and cc")
        )
    return phases


def _borrowed(plan):
    """What the compiler did not see: the kernels the module borrowed (codegen/shared_kernels.py),
    or "" where it borrowed none."""
    count = len(getattr(plan, "borrowed", None) or [])
    if not count:
        return ""
    where = " (some from the cache's)" if plan.borrowed_for is not None else ""
    return (
        f"{count} kernels borrowed from modules compiled before{where}, not compiled "
        "again (docs/first-call.md)"
    )


def total(phases):
    """The seconds this process spent in the measured phases."""
    return sum(p.seconds for p in phases if p.seconds is not None and p.spent)
