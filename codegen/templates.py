"""Rendering the C templates in `templates/` with jinja2 (strict: an undefined name is an error).

Compiled templates are kept as Python keeps a package's bytecode: beside the templates, in
`templates/__pycache__/` (or under `sys.pycache_prefix`, PYTHONPYCACHEPREFIX), compiled by the
first process that renders C and read by every later one, whatever its module cache holds.
Parsing and compiling the templates would otherwise delay every process's first compiled
result. Where that folder cannot be written, or someone other than its owner could write to
it, they are kept in the private tracer cache (`.templates/`) instead. Where Python writes
no bytecode (PYTHONDONTWRITEBYTECODE), they are written to the private cache too, and those
already beside the templates are still read first, as Python reads bytecode it may not
write. jinja2 checks each template's source checksum, so an edited template
is compiled afresh; and each file starts with the SHA-256 of the rest, checked before Python
unmarshals it (a damaged marshal could crash the process, or load code that renders other C).
"""

import contextlib
import functools
import os
import stat
import sys

from codegen import cache


@functools.lru_cache(maxsize=1)
def environment():
    """The jinja2 environment of the templates (jinja2 is imported here, at the first C a
    process renders, not when tracer is imported)."""
    import jinja2

    import templates  # its folder (importlib.resources.files would import its readers first)
    from codegen.template_cache import CheckedBytecodeCache

    folder = os.path.dirname(os.path.abspath(templates.__file__))
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(folder),
        bytecode_cache=CheckedBytecodeCache(*compiled_directories(folder)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    environment.filters["format_dim"] = lambda name: f"int64_t {name}"
    environment.filters["c_string"] = _c_string
    return environment


def compiled_directories(folder):
    """(where the compiled forms of the templates in `folder` are written, and folders only
    read before it): beside them (see `_beside`) where Python may write bytecode; otherwise
    the private cache's `.templates/`, after the folder beside them if it is there."""
    if not sys.dont_write_bytecode:
        beside = _beside(folder)
        if beside is not None:
            return beside, ()
    private = os.path.join(cache.cache_root(), ".templates")
    os.makedirs(private, mode=0o700, exist_ok=True)
    read_only = _beside(folder, make=False) if sys.dont_write_bytecode else None
    return private, () if read_only is None else (read_only,)


def _beside(folder, make=True):
    """The folder beside the templates (under `sys.pycache_prefix` if set), made if missing
    (with `make`), when it belongs to this user or the templates' owner with no one else
    allowed to write to it (then it is as trusted as the templates) and, with `make`, can be
    written; else None."""
    import jinja2

    tag = f"jinja2-{jinja2.__version__}.{sys.implementation.cache_tag}"
    if sys.pycache_prefix:
        beside = os.path.join(sys.pycache_prefix, os.path.abspath(folder).lstrip(os.sep), tag)
    else:
        beside = os.path.join(folder, "__pycache__", tag)
    try:
        if make and not os.path.isdir(beside):
            os.makedirs(os.path.dirname(beside), exist_ok=True)
            with contextlib.suppress(FileExistsError):  # made by another process meanwhile
                os.mkdir(beside)
                os.chmod(beside, 0o755)  # whatever the umask: group or others writing is refused
        info, owner = os.stat(beside), os.stat(folder).st_uid
    except OSError:  # a read-only installation, ...
        return None
    trusted = (
        stat.S_ISDIR(info.st_mode)
        and info.st_uid in (owner, os.getuid())
        and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    )
    return beside if trusted and (not make or os.access(beside, os.W_OK)) else None


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
