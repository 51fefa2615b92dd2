"""The compiled templates' files: each holds the code of the Python that jinja2 compiles a
template to (codegen/templates.py), marshalled, after the SHA-256 of the template's text it
was compiled from; and each file starts with the SHA-256 of the rest, checked before Python
unmarshals it (a damaged marshal could crash the process, or load code that renders other
C). codegen/templates.py says where the files are kept."""

import hashlib
import marshal
import os
import tempfile

from codegen import cache

DIGEST_SIZE = 32
TEMPLATE_MAX_BYTES = 1 << 24  # a compiled template holds tens of kB


def load(name, text_digest, directory, read_first=()):
    """The code compiled from the template `name` whose text has the SHA-256 `text_digest`,
    from the first of the folders `read_first`, then `directory`, that holds it; None where
    none does. A damaged file in `directory` is removed (with one log line); one in a folder
    of `read_first` is passed over. A file compiled from another text is not damaged: the
    template was edited, and its new form replaces it."""
    for folder in read_first:
        code = _load(_path(name, folder), text_digest)
        if code is not None and code is not False:
            return code
    path = _path(name, directory)
    code = _load(path, text_digest)
    if code is False:
        cache.log.warning("tracer: removing the damaged compiled template %s", path)
        cache.remove(path)
        return None
    return code


def dump(name, text_digest, code, directory):
    """Keep `code`, compiled from the template `name` whose text has `text_digest`, in
    `directory`; a folder that cannot be written only costs the next process the compile."""
    body = text_digest + marshal.dumps(code)
    path = _path(name, directory)
    try:
        descriptor, staging = tempfile.mkstemp(prefix=".tmp-", dir=directory)
    except OSError:
        return
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(hashlib.sha256(body).digest() + body)
        if os.path.isdir(path):
            cache.remove(path)
        os.replace(staging, path)
    except OSError:
        cache.remove(staging)


def _path(name, directory):
    return os.path.join(directory, f"{name}.cache")


def _load(path, text_digest):
    """The code in the file at `path` where it was compiled from the text of `text_digest`;
    None where there is no such file, or it holds another text's; False where it fails its
    digest's check (or is not a regular file of a sound size)."""
    try:
        data = cache.read_regular(path, TEMPLATE_MAX_BYTES)
    except FileNotFoundError:
        return None
    except (OSError, ValueError):  # a directory, a link or a pipe in its place, ...
        return False
    digest, body = data[:DIGEST_SIZE], data[DIGEST_SIZE:]
    if len(digest) != DIGEST_SIZE or hashlib.sha256(body).digest() != digest:
        return False
    if body[:DIGEST_SIZE] != text_digest:
        return None
    try:
        return marshal.loads(body[DIGEST_SIZE:])
    except (EOFError, ValueError, TypeError):  # sealed, but not this Python's marshal
        return False
