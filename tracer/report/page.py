"""The report's HTML: `page.html.j2` lays out the gathered Contents; the style sheet and the
script (`page.css`, `page.js`) are written into the page, so that the one file is all a
browser needs (no network, nothing beside it)."""

import functools
import os

import jinja2

_HERE = os.path.dirname(os.path.abspath(__file__))


def render(contents):
    """The page's HTML text for `contents` (a tracer.report.contents.Contents)."""
    return (
        _environment()
        .get_template("page.html.j2")
        .render(
            r=contents,
            # written as they are (the template marks them safe): the page's own style sheet
            # and script, and the graph made by svg.py, every text in which is escaped
            style=_read("page.css"),
            script=_read("page.js"),
            svg=contents.svg,
        )
    )


@functools.cache
def _environment():
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(_HERE),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["seconds"] = format_seconds
    environment.filters["bytes"] = format_bytes
    return environment


def _read(name):
    with open(os.path.join(_HERE, name), encoding="utf-8") as handle:
        return handle.read()


def format_seconds(seconds):
    """`1.20 s`, `35.0 ms`, `12.3 µs`; an en dash for a figure not measured."""
    if seconds is None:
        return "–"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def format_bytes(size):
    """`512 B`, `64.0 KiB`, `1.50 MiB`; a size known only at run time as its expression."""
    if not isinstance(size, int):
        return str(size)
    for unit, scale in (("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size} B"
