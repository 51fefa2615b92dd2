"""`ignore_errors()`: the upstream's elements, those whose making raised an error left out, as
TensorFlow's `tf.data.Dataset.ignore_errors` (also `tf.data.experimental.ignore_errors()`).

In TensorFlow an error is a status that each stage passes up while it stays ready for its
next element. tracer's stages are Python generators, which end when an error passes through
them, so an error is caught where the element is made instead: while `ignore_errors` pulls an
element from its upstream, a `map` or `filter` whose function raises on an element passes
over it (and counts it, `Dropped.count`), and a batch that was being filled when an element
failed is dropped, as TensorFlow's batch fails then. An error raised by any other stage (a
generator's own) ends the pass, as that stage cannot go on.

    dataset.map(parse).ignore_errors()
"""

import contextvars
import logging

from tracer.data.specs import UNKNOWN

log = logging.getLogger("tracer.data")

_RECORD = contextvars.ContextVar("data_errors_dropped", default=None)
FAILED = object()  # what `attempt` gives for an element whose making raised


class Dropped:
    """The errors passed over while `ignore_errors` pulls its upstream's elements."""

    def __init__(self, log_warning):
        self.count = 0
        self._log = log_warning

    def dropped(self, error):
        self.count += 1
        if self._log:
            log.warning("ignore_errors: an element left out: %s: %s", type(error).__name__, error)

    def attempt(self, compute, element):
        """`compute(element)`, or FAILED (the error counted) where it raises."""
        try:
            return compute(element)
        except Exception as error:  # (TensorFlow ignores every error status)
            self.dropped(error)
            return FAILED


def active():
    """The Dropped record of the `ignore_errors` pulling elements now, or None."""
    return _RECORD.get()


class IgnoreErrors:
    """The stage of `ignore_errors(log_warning)`."""

    def __init__(self, upstream, log_warning):
        self._upstream, self._log = upstream, bool(log_warning)

    def arrays(self):
        record = Dropped(self._log)
        elements = self._upstream.arrays()
        while True:
            token = _RECORD.set(record)
            try:
                element = next(elements)
            except StopIteration:
                return
            except Exception as error:  # (a stage that cannot go on: the end)
                record.dropped(error)
                return
            finally:
                _RECORD.reset(token)
            yield element

    def cardinality(self):
        return UNKNOWN

    def spec(self):
        return self._upstream.spec()
