"""Catalogue cases by op group, one module per group, merged into tests/test_gradients.py's
tables (and so into every test that walks the catalogue: backends, forward mode, batching,
the eager fast path, C export).

A group module defines any of `CASES` (primitives: name -> (function, argument arrays)),
`COMPOSITES` (functions built of primitives, same form), `NO_GRADIENT` (primitives through
which no gradient flows: name -> function of one float64 argument) and `CREATION`
(primitives with no inputs: a set of names).
"""

import importlib
import pkgutil


def groups():
    """The group modules, by name."""
    return [
        importlib.import_module(f"{__name__}.{info.name}")
        for info in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name)
    ]
