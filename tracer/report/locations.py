"""The user's source lines the report links everything to, and each line's short key.

Every node carries the line that made it (`(filename, lineno)`, or with a third part,
`"grad of sin"`, for a node of a gradient). The page gives each such line a key (`L0`,
`L1`, ...) and every element made from that line (a source row, an IR line, a C line, a
kernel, a drawn node) lists the keys in a `data-locs` attribute, so that the page's script
finds them all with one selector when the line is clicked.
"""

import inspect
import linecache
import os
import re

from tracer.ir import format_location


class Locations:
    """The key of each source line seen, given in order of first sight."""

    def __init__(self):
        self._keys = {}  # (filename, lineno) -> key

    def key(self, location):
        """The key of the line of `location` (a node's), or None for a node of no line."""
        if location is None:
            return None
        line = (location[0], location[1])
        if line not in self._keys:
            self._keys[line] = f"L{len(self._keys)}"
        return self._keys[line]

    def keys_of(self, nodes):
        """The keys of the lines of `nodes`, as a `data-locs` attribute value ("L0 L3")."""
        return join_keys(self.key(node.location) for node in nodes)

    def lines(self):
        """{(filename, lineno): key} of every line seen so far."""
        return dict(self._keys)

    def pattern(self):
        """A regex that finds these lines as the C's comments write them (`model.py:9`), and
        {text: [keys]} of what it matches (two files of one base name share a text)."""
        texts = {}
        for line, key in self._keys.items():
            texts.setdefault(format_location(line), []).append(key)
        if not texts:
            return None, {}
        alternatives = sorted(texts, key=len, reverse=True)  # the longest text that matches
        return re.compile("|".join(rf"(?<![\w.]){re.escape(t)}(?!\d)" for t in alternatives)), texts


def join_keys(keys):
    """Keys (None among them ignored) as one `data-locs` value: each once, in order."""
    return " ".join(sorted({k for k in keys if k is not None}, key=lambda k: int(k[1:])))


class SourceRow:
    """One row of the source listing: a line of the user's file and what it made."""

    def __init__(self, filename, lineno, text, key):
        self.filename = filename
        self.lineno = lineno
        self.text = text
        self.key = key  # None for a line that made no node
        self.counts = {}  # stage name -> the nodes of that stage made by this line
        self.gradient = False  # whether some of them are a gradient's
        self.seconds = None  # the profile's time of the line, where one was given
        self.elsewhere = False  # a line outside the function (a helper's, a layer's call)


def function_source(python_function):
    """(filename, first line number, lines) of `python_function`'s source, or None where
    Python cannot find it (a function typed at the prompt, a builtin)."""
    function = inspect.unwrap(getattr(python_function, "func", python_function))
    try:
        lines, first = inspect.getsourcelines(function)
        filename = inspect.getsourcefile(function)
    except (OSError, TypeError):
        return None
    if filename is None:
        return None
    return os.path.abspath(filename), max(first, 1), [line.rstrip("\n") for line in lines]


def source_rows(source, locations):
    """The rows of the function's source (`function_source`'s result, or None), then one
    row for each other line that made nodes (a helper's line, a layer's call), in file and
    line order."""
    rows, shown = [], set()
    by_line = locations.lines()
    if source is not None:
        filename, first, lines = source
        for offset, text in enumerate(lines):
            line = (filename, first + offset)
            rows.append(SourceRow(filename, first + offset, text, _key_of(line, by_line)))
            shown.add(line)
    others = sorted(line for line in by_line if _absolute(line) not in shown)
    for filename, lineno in others:
        text = linecache.getline(filename, lineno).rstrip("\n")
        rows.append(SourceRow(filename, lineno, text, by_line[(filename, lineno)]))
        rows[-1].elsewhere = True
    return rows


def _absolute(line):
    return (os.path.abspath(line[0]), line[1])


def _key_of(line, by_line):
    """The key of `line` (an absolute path) among the lines seen, which may name its file
    relative to the working directory."""
    found = by_line.get(line)
    if found is not None:
        return found
    return next((key for seen, key in by_line.items() if _absolute(seen) == line), None)
