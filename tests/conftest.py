"""Test-wide settings: compiled modules go to a private cache, so tests start cold and leave
the user's cache alone."""

import os
import tempfile

os.environ.setdefault("TRACER_CACHE_DIR", tempfile.mkdtemp(prefix="tracer-test-cache-"))

import tracer.passes.pipeline

tracer.passes.pipeline.VERIFY_EACH_PASS = True  # every pass's result goes through the verifier
