"""Summary writers: event files in a log directory, and the default writer of each thread.

    writer = tt.summary.create_file_writer("logs/run1")
    with writer.as_default(step=0):
        tt.summary.scalar("loss", 0.25)  # logs/run1/events.out.tfevents.<time>.<host>.<pid>.<n>.v2

A writer keeps up to `max_queue` events in memory and writes them (one record each, see
records.py) when the queue is full, when `flush_millis` have passed since its last flush
(checked at each write), on `flush()`, on leaving `as_default()` and on `close()`. The file
starts with the file-version event. As in TensorFlow, the default writer and step belong to
the thread that set them, and a function compiled while a writer is the default writes to
that writer at each call.
"""

import atexit
import contextlib
import itertools
import os
import socket
import threading
import time
import weakref

from tracer.summary import events, records

_files_made = itertools.count()  # the <n> of the file names, per process as TensorFlow's
_open_writers = weakref.WeakSet()  # flushed when the interpreter exits
MAX_NAMES_TRIED = 1000  # event file names passed over because they exist


class _State(threading.local):
    def __init__(self):
        self.writer = None  # the default writer
        self.step = None  # the default step (an int, a tt.Variable or a tensor)
        self.condition = True  # record_if's condition


state = _State()


class SummaryWriter:
    """Writes summaries somewhere; `create_file_writer` makes the one that writes files."""

    def as_default(self, step=None):
        """A context manager that makes this the default writer (and `step` the default step,
        when given) inside it, and flushes this writer when it ends."""
        return self._as_default(step)

    @contextlib.contextmanager
    def _as_default(self, step):
        saved = state.writer, state.step
        state.writer = self
        if step is not None:
            state.step = step
        try:
            yield self
        finally:
            state.writer, state.step = saved
            self.flush()

    def set_as_default(self, step=None):
        """Make this the default writer of this thread from now on (and `step` the step)."""
        state.writer = self
        if step is not None:
            state.step = step

    def write(self, step, summary):
        """Write a `Summary` (bytes, events.summary_value) at `step`."""
        self.write_event(events.event(time.time(), step, summary))

    def write_event(self, event):
        """Write an `Event` (bytes, events.event)."""

    def flush(self):
        """Write what is queued."""

    def close(self):
        """Flush, and write nothing more."""


class NoopWriter(SummaryWriter):
    """A writer that writes nothing: summaries under it still return True, as TensorFlow's."""


class FileWriter(SummaryWriter):
    """Writes one event file in `logdir` (see the module's docstring)."""

    def __init__(self, logdir, max_queue=None, flush_millis=None, filename_suffix=None):
        suffix = ".v2" if filename_suffix is None else str(filename_suffix)
        if any(sep and sep in suffix for sep in (os.sep, os.altsep, "/")):
            raise ValueError(
                f"filename_suffix {suffix!r} holds a path separator: the event file must be "
                "written inside the log directory"
            )
        self.logdir = os.fspath(logdir)
        self.max_queue = 10 if max_queue is None else int(max_queue)
        self.flush_seconds = (120_000 if flush_millis is None else flush_millis) / 1000
        os.makedirs(self.logdir, exist_ok=True)
        self.path, self._file = _new_event_file(self.logdir, suffix)
        self._lock = threading.Lock()  # compiled functions may write from other threads
        self._queue = [records.frame(events.file_version_event(time.time()))]
        self.flush()
        _open_writers.add(self)

    def write_event(self, event):
        record = records.frame(event)
        with self._lock:
            if self._file is None:
                raise RuntimeError(f"the summary writer of {self.logdir!r} is closed")
            self._queue.append(record)
            due = time.monotonic() - self._flushed >= self.flush_seconds
            if len(self._queue) >= self.max_queue or due:
                self._write_queue()

    def flush(self):
        with self._lock:
            if self._file is not None:
                self._write_queue()

    def _write_queue(self):
        self._file.write(b"".join(self._queue))
        self._file.flush()
        self._queue = []
        self._flushed = time.monotonic()

    def close(self):
        with self._lock:
            if self._file is not None:
                self._write_queue()
                self._file.close()
                self._file = None

    def __del__(self):
        # NOTE: a writer dropped without close() still writes its queue, as TensorFlow's
        if getattr(self, "_file", None) is not None:
            self.close()

    def __repr__(self):
        return f"<tt.summary file writer {self.path!r}>"


def _new_event_file(logdir, suffix):
    """(path, file open for appending) of a new event file in `logdir`, named as TensorFlow
    names them. The name can be guessed, and a log directory may be shared: a link or a pipe
    planted under it must not make the writer append to a file elsewhere or block, so the
    file is made new (never a link followed, nor an existing file opened), and a name that is
    taken is passed over for the next <n> of the process's counter."""
    host = socket.gethostname().replace(os.sep, "_").replace("/", "_")
    prefix = f"events.out.tfevents.{int(time.time())}.{host}.{os.getpid()}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_APPEND
    for _ in range(MAX_NAMES_TRIED):
        path = os.path.join(logdir, f"{prefix}.{next(_files_made)}{suffix}")
        try:
            return path, os.fdopen(os.open(path, flags, 0o644), "ab")
        except FileExistsError:
            continue
    raise FileExistsError(
        f"cannot make an event file in {logdir!r}: the next {MAX_NAMES_TRIED} names of this "
        f"process ({prefix}.<n>{suffix}) are all taken"
    )


@atexit.register
def _close_open_writers():
    for writer in list(_open_writers):
        writer.close()


def create_file_writer(logdir, max_queue=None, flush_millis=None, filename_suffix=None, name=None):
    """A writer of an event file in `logdir` (made if missing), as tf.summary's.

    >>> import tempfile
    >>> writer = create_file_writer(tempfile.mkdtemp())
    >>> os.path.basename(writer.path).startswith("events.out.tfevents.")
    True
    >>> writer.close()
    """
    return FileWriter(logdir, max_queue, flush_millis, filename_suffix)


def create_noop_writer():
    """A writer that writes nothing."""
    return NoopWriter()


def flush(writer=None, name=None):
    """Flush `writer`, or the default writer when there is one."""
    writer = writer if writer is not None else state.writer
    if writer is not None:
        writer.flush()


def set_step(step):
    """Make `step` (an int, or a tt.Variable read when each summary is written) the default
    step of this thread's summaries."""
    state.step = step


def get_step():
    """The default step (None if none was set)."""
    return state.step


@contextlib.contextmanager
def record_if(condition):
    """Write summaries inside only where `condition` holds: a bool, a boolean tensor, or a
    callable returning one, evaluated at each summary (in a compiled function, a tensor's
    value at each call)."""
    saved = state.condition
    state.condition = condition
    try:
        yield
    finally:
        state.condition = saved
