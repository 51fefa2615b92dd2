"""Rendering the C templates in `templates/` with jinja2 (strict: an undefined name is an error).

Compiled templates are kept in the tracer cache (`.templates/`): parsing and compiling them
again would cost a process that finds its module in the cache 30 ms before its first result.
jinja2 checks each template's source checksum, so an edited template is compiled afresh; and
each file starts with the SHA-256 of the rest, checked before Python unmarshals it (a
damaged marshal could crash the process, or load code that renders other C).
"""

import functools
import hashlib
import importlib.resources
import io
import os
import tempfile

import jinja2

from codegen import cache

DIGEST_SIZE = 32


class CheckedBytecodeCache(jinja2.BytecodeCache):
    """A file per compiled template in `directory`, checked against its digest; a file that
    fails the check is removed (with one log line) and the template compiled again."""

    def __init__(self, directory):
        self.directory = directory

    def _path(self, bucket):
        return os.path.join(self.directory, f"{bucket.key}.cache")

    def load_bytecode(self, bucket):
        path = self._path(bucket)
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except FileNotFoundError:
            return
        except OSError as error:  # a directory in the file's place, ...
            data = f"{type(error).__name__}".encode()
        digest, body = data[:DIGEST_SIZE], data[DIGEST_SIZE:]
        if len(digest) == DIGEST_SIZE and hashlib.sha256(body).digest() == digest:
            bucket.load_bytecode(io.BytesIO(body))
            return
        cache.log.warning("tracer: removing the damaged compiled template %s", path)
        cache.remove(path)

    def dump_bytecode(self, bucket):
        body = io.BytesIO()
        bucket.write_bytecode(body)
        data = body.getvalue()
        path = self._path(bucket)
        descriptor, staging = tempfile.mkstemp(prefix=".tmp-", dir=self.directory)
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(hashlib.sha256(data).digest() + data)
            if os.path.isdir(path):
                cache.remove(path)
            os.replace(staging, path)
        except OSError:  # a cache that cannot be written only costs the next process time
            cache.remove(staging)


@functools.lru_cache(maxsize=1)
def environment():
    folder = importlib.resources.files("templates")
    compiled = os.path.join(cache.cache_root(), ".templates")
    os.makedirs(compiled, mode=0o700, exist_ok=True)
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(folder)),
        bytecode_cache=CheckedBytecodeCache(compiled),
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
