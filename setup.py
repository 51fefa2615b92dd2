"""The optional C extensions, from their table in runtime/native.py (the one place that knows
them); the rest of the build is declared in pyproject.toml.

Each is optional: where it cannot be built (no C compiler), the install goes on and tracer
runs the Python path it repeats. None links an OpenMP library: the ones with parallel loops
define the entry points GCC calls themselves, and hand the loops to tracer's own pool
(runtime/openmp_entries.h). Those entry points are also built alone, as an object that
each compiled module links (runtime/openmp_entries.c): a module's translation units then do
not compile them again each.
"""

import importlib.util
import os
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import BaseError, CCompilerError

ENTRIES_SOURCE = os.path.join("runtime", "openmp_entries.c")
ENTRIES_HEADER = os.path.join("runtime", "openmp_entries.h")

ROOT = os.path.dirname(os.path.abspath(__file__))


def _native_table():
    """runtime/native.py, read alone: it needs only the standard library, while importing
    the package `runtime` would need numpy, which the build may not have."""
    path = os.path.join(ROOT, "runtime", "native.py")
    spec = importlib.util.spec_from_file_location("_tracer_native_table", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.EXTENSIONS


class BuildExtensions(build_ext):
    """The extensions, then the OpenMP entry points' object beside them (in the source tree
    where they are built in place, as an editable install builds them). Optional as they
    are: where it cannot be built, each module compiles the entry points itself."""

    def finalize_options(self):
        """The extensions built at once, one per usable core (the convolution kernels alone
        take most of a serial build), unless `--parallel` says otherwise."""
        super().finalize_options()
        if self.parallel is None:
            self.parallel = (
                len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else True
            )

    def run(self):
        super().run()
        self._entries_object()
        self._compiled_templates()

    def get_outputs(self):
        built = [self._entries_target()] if os.path.isfile(self._entries_target()) else []
        return [*super().get_outputs(), *built]

    def _entries_target(self):
        folder = os.path.dirname(self.get_ext_fullpath("runtime._thread_pool"))
        return os.path.join(folder, "openmp_entries.o")

    def _entries_object(self):
        try:
            # no LTO: modules link it without the compiler's plugin
            (built,) = self.compiler.compile(
                [ENTRIES_SOURCE],
                output_dir=self.build_temp,
                extra_postargs=["-fno-lto"],
                depends=[ENTRIES_HEADER],
            )
            self.mkpath(os.path.dirname(self._entries_target()))
            # stamped now: modules use it only while it is newer than the header
            self.copy_file(built, self._entries_target(), preserve_times=False)
        except (BaseError, CCompilerError, OSError) as error:  # as an optional extension's
            self.warn(f"the OpenMP entry points' object was not built: {error}")

    def _compiled_templates(self):
        """The C templates compiled to Python beside them (codegen/templates.py,
        `compile_beside`), in the source tree where the build is in place, as pip compiles
        a package's bytecode at install: the first process then renders without jinja2.
        Optional too: a template not compiled here is compiled by the first process that
        renders it."""
        folder = os.path.join(ROOT if self.inplace else self.build_lib, "templates")
        sys.path.insert(0, ROOT)
        try:
            from codegen import templates

            count = templates.compile_beside(folder)
        except Exception as error:  # no jinja2, a template it refuses, ...: optional
            self.warn(f"the C templates were not compiled: {type(error).__name__}: {error}")
        else:
            self.announce(f"compiled {count} C templates beside {folder}", level=2)
        finally:
            sys.path.remove(ROOT)


setup(
    cmdclass={"build_ext": BuildExtensions},
    ext_modules=[
        Extension(
            extension.module,
            [os.path.relpath(extension.source, ROOT)],
            extra_compile_args=list(extension.flags),
            libraries=list(extension.libraries),
            optional=True,
        )
        for extension in _native_table().values()
    ],
)
