"""Where in the user's code a node was created: the first frame outside tracer itself."""

import os
import sys

_LIBRARY_DIRS = tuple(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep + package + os.sep
    for package in ("tracer", "runtime", "codegen")
)


def user_location():
    """(filename, lineno) of the innermost caller that is not tracer's own code, or None."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_LIBRARY_DIRS):
            return (filename, frame.f_lineno)
        frame = frame.f_back
    return None


def format_location(location):
    """`file.py:14` for a location, '' for None."""
    if location is None:
        return ""
    return f"{os.path.basename(location[0])}:{location[1]}"
