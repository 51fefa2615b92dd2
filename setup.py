"""The optional C extensions, from their table in runtime/native.py (the one place that knows
them); the rest of the build is declared in pyproject.toml.

Each is optional: where it cannot be built (no C compiler), the install goes on and tracer
runs the Python path it repeats. None links an OpenMP library: the ones with parallel loops
define the entry points GCC calls themselves, and hand the loops to tracer's own pool
(runtime/openmp_entries.h).
"""

import importlib.util
import os

from setuptools import Extension, setup

ROOT = os.path.dirname(os.path.abspath(__file__))


def _native_table():
    """runtime/native.py, read alone: it needs only the standard library, while importing
    the package `runtime` would need numpy, which the build may not have."""
    path = os.path.join(ROOT, "runtime", "native.py")
    spec = importlib.util.spec_from_file_location("_tracer_native_table", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.EXTENSIONS


setup(
    ext_modules=[
        Extension(
            extension.module,
            [os.path.relpath(extension.source, ROOT)],
            extra_compile_args=list(extension.flags),
            libraries=list(extension.libraries),
            optional=True,
        )
        for extension in _native_table().values()
    ]
)
