"""A profile as text tables: each compiled function's time by the user's source line, by IR
node and by kernel; eager ops by line and by op. Most time first."""

import linecache
import os

from tracer.profiler import attribution

SOURCE_WIDTH = 44  # characters of a line's source shown beside it


def table(profile, by, top):
    unknown = set(by) - {"line", "node", "kernel"}
    if unknown:
        raise ValueError(f"table(by=...) takes 'line', 'node' and 'kernel', got {sorted(unknown)}")
    if not isinstance(top, int) or top < 1:
        raise ValueError(f"table(top=...) must be an int >= 1, got {top!r}")
    compiled_ns = sum(attribution.call_ns(r) for r in profile.functions)
    eager_ns = sum(end - start for _, _, start, end, _ in profile.eager)
    out = [
        f"tt.profiler: {len(profile.functions)} compiled function(s), "
        f"{_ms(compiled_ns)} ms in their calls; {len(profile.eager)} eager op(s), "
        f"{_ms(eager_ns)} ms"
    ]
    for record in profile.functions:
        out += _function_section(record, by, top)
    if profile.eager:
        out += _eager_section(profile.eager, by, top, eager_ns)
    return "\n".join(out) + "\n"


def _function_section(record, by, top):
    whole = attribution.call_ns(record)
    calls = len(record.calls)
    out = [
        "",
        f"{record.name}: {calls} call(s), {_ms(whole)} ms"
        + (f" ({_ms(whole / calls)} ms a call)" if calls else ""),
    ]
    if not record.probes:
        out.append(
            "  (its module has no probes: the interpreter, or no compiler; calls timed whole)"
        )
        return out
    own, total, counts = attribution.probe_times(record)
    share = (lambda ns: f"{100 * ns / whole:5.1f}%") if whole else (lambda ns: "    -")
    if "line" in by:
        rows = sorted(attribution.lines(record), key=lambda row: -row[1])
        out.append(_header("by source line", "self ms", "total ms", "calls", "%"))
        for key, self_ns, total_ns, n in rows[:top]:
            out.append(_row(_line_text(key), _ms(self_ns), _ms(total_ns), n, share(self_ns)))
        outside = attribution.outside_ns(record)
        out.append(
            _row("(the call: arguments, results, Python)", _ms(outside), "", calls, share(outside))
        )
    if "node" in by:
        out.append(_header("by IR node", "self ms", "total ms", "calls", "%", "bytes/call"))
        order = sorted(record.probes, key=lambda p: -own[p.index])
        for probe in order[:top]:
            k = probe.index
            name = f"{probe.node_name or '?'} {probe.label}"
            out.append(
                _row(
                    name,
                    _ms(own[k]),
                    _ms(total[k]),
                    int(counts[k]),
                    share(own[k]),
                    _bytes(probe.bytes),
                )
            )
    if "kernel" in by:
        out.append(_header("by kernel", "self ms", "total ms", "calls", "%", "bytes"))
        kernels = {}
        for probe in record.probes:
            name = probe.kernel or f"({probe.kind}) {probe.op}"
            row = kernels.setdefault(name, [0.0, 0.0, 0, 0, probe.kind])
            k = probe.index
            row[0] += own[k]
            row[1] += total[k]
            row[2] += int(counts[k])
            row[3] = (
                None
                if row[3] is None or probe.bytes is None
                else row[3] + probe.bytes * int(counts[k])
            )
        for name, (self_ns, total_ns, n, moved, kind) in sorted(
            kernels.items(), key=lambda kv: -kv[1][0]
        )[:top]:
            label = name if kind in ("region", "host") else f"{name} ({kind})"
            out.append(_row(label, _ms(self_ns), _ms(total_ns), n, share(self_ns), _bytes(moved)))
    return out


def _eager_section(eager, by, top, whole):
    out = ["", f"eager ops: {len(eager)} op(s), {_ms(whole)} ms"]
    share = (lambda ns: f"{100 * ns / whole:5.1f}%") if whole else (lambda ns: "    -")
    groups = []
    if "line" in by:
        groups.append(("by source line", lambda op, where: _line_text(attribution.line_key(where))))
    if "node" in by or "kernel" in by:
        groups.append(("by op", lambda op, where: op))
    for title, key_of in groups:
        out.append(_header(title, "ms", "", "calls", "%"))
        rows = {}
        for op, where, start, end, _ in eager:
            row = rows.setdefault(key_of(op, where), [0, 0])
            row[0] += end - start
            row[1] += 1
        for key, (ns, n) in sorted(rows.items(), key=lambda kv: -kv[1][0])[:top]:
            out.append(_row(key, _ms(ns), "", n, share(ns)))
    return out


def _line_text(key):
    if key is None:
        return "(no line of the user's)"
    filename, line = key
    source = linecache.getline(filename, line).strip()
    if len(source) > SOURCE_WIDTH:
        source = source[: SOURCE_WIDTH - 3] + "..."
    return f"{os.path.basename(filename)}:{line}  {source}".rstrip()


NAME_WIDTH = 64


def _header(title, *columns):
    return f"  {title:<{NAME_WIDTH}}" + "".join(f"{c:>11}" for c in columns)


def _row(name, *cells):
    if len(name) > NAME_WIDTH:
        name = name[: NAME_WIDTH - 3] + "..."
    return f"    {name:<{NAME_WIDTH - 2}}" + "".join(f"{c!s:>11}" for c in cells)


def _ms(ns):
    return f"{ns / 1e6:.3f}"


def _bytes(count):
    if count is None:
        return "?"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if count < 1024 or unit == "GiB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1024
