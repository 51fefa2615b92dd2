"""The one-page compile report: a traced function's source, IR at every stage, fused
kernels, C, buffer plan, compile times, retraces and graph, in one HTML file (docs/report.md).

    import tracer.report
    tracer.report.write_report(step, "step.html")
"""

from tracer.report.writer import write_report

__all__ = ["write_report"]
