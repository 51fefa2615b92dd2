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
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(folder)),
        bytecode_cache=jinja2.FileSystemBytecodeCache(compiled),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    environment.filters["format_dim"] = lambda name: f"int64_t {name}"
    environment.filters["c_string"] = _c_string
    return environment


def render(template, **values):
    return environment().get_template(template).render(**values)


def _c_string(text):
    """A C string literal of `text` (printable ASCII; other characters as octal escapes)."""
    out = []
    for byte in str(text).encode():
        char = chr(byte)
        if char in '"\\?':
            out.append("\\" + char)
        elif 32 <= byte < 127:
            out.append(char)
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'
