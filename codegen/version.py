"""A digest of tracer's own files as this process imported them, and of the Python and
numpy it runs on: part of the key of a stored plan (codegen/plans.py), which is what this
code made of a graph.

Taken when tracer is imported, not when the first plan is stored: files changed on disk
while a process runs (an upgrade, an edited checkout) must not label the plans of the code
in memory as the new code's. Each file counts by its path, size and modification time
(a stat each, cheaper than reading every file).
"""

import hashlib
import os
import sys

import numpy as np

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_PACKAGES = ("tracer", "codegen", "runtime", "templates")
_SUFFIXES = (".py", ".j2", ".c", ".h", ".so")


def _code_version():
    digest = hashlib.sha256(f"{sys.version_info[:3]} {np.__version__}".encode())
    for package in _PACKAGES:
        for folder, subfolders, files in os.walk(os.path.join(_ROOT, package)):
            subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
            for name in sorted(files):
                if name.endswith(_SUFFIXES):
                    path = os.path.join(folder, name)
                    info = os.stat(path)
                    entry = f"{path[len(_ROOT) + 1 :]}:{info.st_size}:{info.st_mtime_ns}"
                    digest.update(entry.encode() + b"\0")
    return digest.hexdigest()


CODE_VERSION = _code_version()
