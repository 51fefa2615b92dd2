"""Where in the user's code a node was created: the first frame outside tracer itself."""

import os
import sys

_LIBRARY_DIRS = tuple(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    + os.sep
    + package
    + os.sep
    for package in ("tracer", "runtime", "codegen")
)


def is_library_file(filename):
    """tracer's own code, the code it generates (`<tracer compiled call>`, ...) included."""
    return filename.startswith(_LIBRARY_DIRS) or filename.startswith("<tracer ")


def user_location(frame=None, also_skip=()):
    """(filename, lineno) of the innermost caller that is not tracer's own code (nor in the
    directories `also_skip`), or None. The search starts at `frame`, by default the caller's."""
    frame = frame or sys._getframe(1)
    if also_skip:
        skipped = _LIBRARY_DIRS + tuple(also_skip)
        while frame is not None and frame.f_code.co_filename.startswith(skipped):
            frame = frame.f_back
        return None if frame is None else (frame.f_code.co_filename, frame.f_lineno)
    while frame is not None:
        code = frame.f_code
        known = _CODES.get(id(code))
        if known is None:
            known = (code, code.co_filename.startswith(_LIBRARY_DIRS))
            if len(_CODES) < _CODES_LIMIT:
                _CODES[id(code)] = known
        if not known[1]:
            break
        frame = frame.f_back
    if frame is None:
        return None
    if id(code) not in _CODES:  # not kept alive, so its id may name other code later
        return (code.co_filename, frame.f_lineno)
    key = (id(code), frame.f_lasti)
    location = _LOCATIONS.get(key)
    if location is None:
        location = (code.co_filename, frame.f_lineno)
        if len(_LOCATIONS) < _LOCATIONS_LIMIT:
            _LOCATIONS[key] = location
    return location


# Every recorded op asks for its location, so the answers are remembered: per code object
# whether it is tracer's own (the entry keeps the code alive, so its id stays its own), and
# per instruction its line (computing a frame's line number costs more than the rest).
_CODES = {}  # id(code) -> (code, is library code)
_LOCATIONS = {}  # (id(code), instruction offset) -> (filename, lineno)
_CODES_LIMIT = 10_000  # code objects pinned; a notebook makes new ones with every run of a cell
_LOCATIONS_LIMIT = 100_000


def format_location(location):
    """`file.py:14` for a location, `file.py:14 (grad of log)` for a backward one, '' for None."""
    if location is None:
        return ""
    text = f"{os.path.basename(location[0])}:{location[1]}"
    return f"{text} ({location[2]})" if len(location) > 2 else text


def backward_location(location, op):
    """The location of nodes in the gradient of an `op` node made at `location`."""
    return None if location is None else (location[0], location[1], f"grad of {op}")
