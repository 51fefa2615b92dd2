"""The compiled templates' files, for jinja2: each starts with the SHA-256 of the rest,
checked before Python unmarshals it (codegen/templates.py says where the files are kept)."""

import hashlib
import io
import os
import tempfile

import jinja2

from codegen import cache

DIGEST_SIZE = 32
TEMPLATE_MAX_BYTES = 1 << 24  # a compiled template holds tens of kB


class CheckedBytecodeCache(jinja2.BytecodeCache):
    """A file per compiled template in `directory`, checked against its digest; a file that
    fails the check is removed (with one log line) and the template compiled again. The
    folders `read_first` are looked in before `directory` and never written: a file there
    that fails the check is passed over."""

    def __init__(self, directory, read_first=()):
        self.directory = directory
        self.read_first = tuple(read_first)

    def _path(self, bucket, directory=None):
        return os.path.join(directory or self.directory, f"{bucket.key}.cache")

    def load_bytecode(self, bucket):
        for directory in self.read_first:
            if _load(bucket, self._path(bucket, directory)) is True:
                return
        path = self._path(bucket)
        if _load(bucket, path) is False:
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


def _load(bucket, path):
    """Load the compiled template at `path` into `bucket`: True, or None where there is none,
    or False where the file fails its digest's check."""
    try:
        data = cache.read_regular(path, TEMPLATE_MAX_BYTES)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:  # a directory, a link or a pipe in its place, ...
        data = f"{type(error).__name__}".encode()
    digest, body = data[:DIGEST_SIZE], data[DIGEST_SIZE:]
    if len(digest) == DIGEST_SIZE and hashlib.sha256(body).digest() == digest:
        bucket.load_bytecode(io.BytesIO(body))
        return True
    return False
