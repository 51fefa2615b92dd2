"""Where in the user's code a node was created: the first frame outside tracer itself."""

import os
import sys

_LIBRARY_DIRS = tuple(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep + package + os.sep
    for package in ("tracer", "runtime", "codegen")
)


def is_library_file(filename):
    return filename.startswith(_LIBRARY_DIRS)


def user_location(also_skip=()):
    """(filename, lineno) of the innermost caller that is not tracer's own code (nor in the
    directories `also_skip`), or None."""
    skipped = _LIBRARY_DIRS + tuple(also_skip)
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(skipped):
            return (filename, frame.f_lineno)
        frame = frame.f_back
    return None


def format_location(location):
    """`file.py:14` for a location, `file.py:14 (grad of log)` for a backward one, '' for None."""
    if location is None:
        return ""
    text = f"{os.path.basename(location[0])}:{location[1]}"
    return f"{text} ({location[2]})" if len(location) > 2 else text


def backward_location(location, op):
    """The location of nodes in the gradient of an `op` node made at `location`."""
    return None if location is None else (location[0], location[1], f"grad of {op}")
