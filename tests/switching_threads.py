"""Threads that switch as often as Python lets them: a race between two steps of tracer's
bookkeeping shows within a few thousand calls."""

import sys
import threading


def run_switching(targets):
    """Run each of `targets` (callables) on a thread of its own, all at once, with Python's
    switch interval at a microsecond, and wait for them; the interval is restored after."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=target) for target in targets]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
