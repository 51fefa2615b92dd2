"""Rendering the C templates in `templates/` with jinja2 (strict: an undefined name is an error).

Compiled templates are kept in the tracer cache (`.templates/`): parsing and compiling them
again would cost a process that finds its module in the cache 30 ms before its first result.
jinja2 checks each template's source checksum, so an edited template is compiled afresh.
"""

import functools
import importlib.resources
import os

import jinja2

from codegen import cache


@functools.lru_cache(maxsize=1)
def environment():
    folder = importlib.resources.files("templates")
    compiled = os.path.join(cache.cache_root(), ".templates")
    os.makedirs(compiled, mode=0o700, exist_ok=True)
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(folder)),
        bytecode_cache=jinja2.FileSystemBytecodeCache(compiled),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )


def render(template, **values):
    return environment().get_template(template).render(**values)
