"""The progress line that Keras 3 prints during `fit`, `evaluate` and `predict`, byte for byte
(times aside), so that a script's output reads the same after `import tracer as tt`.

>>> bar = Progbar(target=2, verbose=2)
>>> bar.update(1, [("loss", 0.5)])
>>> bar.add(1, [("loss", 0.25)])  # doctest: +ELLIPSIS
2/2 - 0s - ...s/step - loss: 0.2500

verbose=1 redraws one line in place: a bold `current/target`, a bar of "━" (green for the
part done, grey for the rest, `width` characters), the ETA while running or the elapsed
seconds once finished, the time per step, and ` - name: value` for each metric. verbose=2
prints one plain line when the bar is finished; verbose=0 prints nothing.

Numbers are shown as Keras shows them: `{:.4f}`, or `{:.4e}` when their magnitude is at most
1e-3 (verbose=2 tests the value, not its magnitude, so negative numbers always take the
exponent form there, as in Keras). The time per step ignores the first step (which includes
tracing and compilation) once there is a second; it prints as `Ns`, `Nms` or `Nus`.
"""

import math
import os
import sys
import time

import numpy as np

# the clock the bar reads (a module attribute, so that tests can put a fake clock here)
_now = time.monotonic

_BAR = "━"
_BOLD, _GREEN, _GREY, _RESET = "\x1b[1m", "\x1b[32m", "\x1b[37m", "\x1b[0m"


class Progbar:
    """A progress bar over `target` steps (None when the number is not known beforehand).

    Each metric is averaged over the steps seen since the bar began, weighted by the steps
    each value covers, unless it is named in `stateful_metrics`, in which case its latest
    value is shown as it is. `stateless_metrics` turns this around: only the names in it are
    averaged (`stateless_metrics=()` shows every value as given, which is what
    `ProgbarLogger` wants, since the model's metrics are already running means). At most one
    of the two may be given. With verbose=1 the line is redrawn at most once every
    `interval` seconds, and always when it is finalized.
    """

    def __init__(
        self,
        target,
        width=20,
        verbose=1,
        interval=0.05,
        stateful_metrics=None,
        stateless_metrics=None,
        unit_name="step",
    ):
        if stateful_metrics is not None and stateless_metrics is not None:
            raise ValueError(
                "Progbar takes at most one of `stateful_metrics` (the names shown as given; "
                "the rest are averaged) and `stateless_metrics` (the names averaged; the rest "
                "are shown as given)."
            )
        self.target = target
        self.width = width
        self.verbose = verbose
        self.interval = interval
        self.unit_name = unit_name
        if stateless_metrics is not None:
            self._averaged = set(stateless_metrics).__contains__
        else:
            as_given = set(stateful_metrics or ())
            self._averaged = lambda name: name not in as_given
        self._dynamic_display = _dynamic_display()
        self._seen_so_far = 0
        self._values = {}  # name -> [weighted sum, weight]; insertion order is display order
        self._start = _now()
        self._last_update = -math.inf  # the first update always draws
        self._time_after_first_step = None
        self._prev_total_width = 0

    def update(self, current, values=None, finalize=None):
        """Shows step `current` (1-based, the number of steps done) with `values`, a list of
        (name, value of this step) pairs. `finalize` (default: `current >= target`) ends
        the line; a bar with no target is finalized only when told."""
        if finalize is None:
            finalize = self.target is not None and current >= self.target
        for name, value in values or ():
            if self._averaged(name) and not finalize:
                # the steps since the last update all get this value
                weight = max(current - self._seen_so_far, 1)
                total = self._values.setdefault(name, [0.0, 0])
                total[0] += value * weight
                total[1] += weight
            else:
                # NOTE: the final values replace the average, as in Keras: they are the
                # epoch's results (logs from on_epoch_end / on_test_end), not one more step
                self._values[name] = [value, 1]
        self._seen_so_far = current

        now = _now()
        time_per_unit = self._step_duration(current, now)
        if self.verbose == 1:
            if now - self._last_update < self.interval and not finalize:
                return
            self._write(self._line(current, now, time_per_unit, finalize))
        elif self.verbose == 2 and finalize and self.target:
            self._write(self._summary(current, now, time_per_unit))
        self._last_update = now

    def add(self, n, values=None):
        """update() with `n` more steps done."""
        self.update(self._seen_so_far + n, values)

    def _line(self, current, now, time_per_unit, finalize):
        """verbose=1: the text that redraws the line (it erases the previous one first)."""
        prefix = "\b" * self._prev_total_width + "\r" if self._dynamic_display else "\n"
        if self.target:
            counter = f"{current:{_digits(self.target)}d}/{self.target}"
            done = int(self.width * current / self.target)
            bar = f"{_BOLD}{counter}{_RESET} "
            if done > 0:
                bar += f"{_GREEN}{_BAR * done}{_RESET}"
            bar += f"{_GREY}{_BAR * (self.width - done)}{_RESET}"
        else:
            bar = f"{current:7d}/Unknown"
        if self.target and not finalize:
            clock = _eta(time_per_unit * (self.target - current))
        else:
            clock = f"{now - self._start:.0f}s"
        info = f" {_BOLD}{clock}{_RESET}" + _format_time(time_per_unit, self.unit_name)
        info += "".join(f" - {name}: {_format_value(self._mean(name))}" for name in self._values)

        # the width the terminal shows: without the escape sequences
        total_width = len(_strip_escapes(bar)) + len(_strip_escapes(info))
        padding = " " * max(self._prev_total_width - total_width, 0)
        self._prev_total_width = total_width
        return prefix + bar + info + padding + ("\n" if finalize else "")

    def _summary(self, current, now, time_per_unit):
        """verbose=2: the one line printed when the bar is finished."""
        line = f"{current:{_digits(self.target)}d}/{self.target} - {now - self._start:.0f}s"
        line += " -" + _format_time(time_per_unit, self.unit_name)
        for name in self._values:
            mean = self._mean(name)
            # NOTE: Keras tests `mean > 1e-3` here, not its magnitude
            line += f" - {name}: {mean:.4f}" if mean > 1e-3 else f" - {name}: {mean:.4e}"
        return line + "\n"

    def _mean(self, name):
        total, weight = self._values[name]
        if not isinstance(total, float):
            total = np.mean(total)  # a numpy scalar or array, an int
        return total / max(1, weight)

    def _step_duration(self, current, now):
        """Seconds per step; from the second step on, the first step is left out of it."""
        if not current:
            return 0
        if self._time_after_first_step is not None and current > 1:
            duration = (now - self._time_after_first_step) / (current - 1)
        else:
            duration = (now - self._start) / current
        if current == 1:
            self._time_after_first_step = now
        return duration

    def _write(self, text):
        try:
            sys.stdout.write(text)
        except UnicodeEncodeError:  # a stdout that cannot encode the bar's characters
            encoding = sys.stdout.encoding or "utf-8"
            text = text.replace(_BAR, "=").encode(encoding, errors="ignore").decode(encoding)
            sys.stdout.write(text)
        sys.stdout.flush()


def _dynamic_display():
    """Whether the line is redrawn in place (backspaces, then a carriage return) rather than
    printed anew after a newline.

    NOTE: Keras 3 says yes on every POSIX system, whatever stdout is (a terminal, a pipe, a
    file: it tests whether the `posix` module is loaded), and elsewhere for a terminal,
    IPython or PyCharm. The same rule here gives the same bytes.
    """
    return (
        (hasattr(sys.stdout, "isatty") and sys.stdout.isatty())
        or os.name == "posix"
        or "ipykernel" in sys.modules
        or "PYCHARM_HOSTED" in os.environ
    )


def _digits(target):
    return int(math.log10(target)) + 1


def _eta(seconds):
    """'5s', '4:57' or '1:54:20' (whole seconds, rounded down)."""
    whole = int(seconds)
    if seconds > 3600:
        return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"
    if seconds > 60:
        return f"{whole // 60}:{whole % 60:02d}"
    return f"{whole}s"


def _format_time(seconds, unit_name):
    """' 2s/step', ' 35ms/step' or ' 120us/step'."""
    if seconds >= 1 or seconds == 0:
        return f" {seconds:.0f}s/{unit_name}"
    if seconds >= 1e-3:
        return f" {seconds * 1e3:.0f}ms/{unit_name}"
    return f" {seconds * 1e6:.0f}us/{unit_name}"


def _format_value(value):
    return f"{value:.4f}" if abs(value) > 1e-3 else f"{value:.4e}"


def _strip_escapes(text):
    """`text` without its colour and weight escape sequences."""
    for code in (_BOLD, _GREEN, _GREY, _RESET):
        text = text.replace(code, "")
    return text
