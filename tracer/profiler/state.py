"""Which profile runs now, and the compiled functions it routes.

Each ConcreteFunction registers here when it is made; while a profile runs, its calls go to
the profile's runner (the function's module built with timing probes), and back to its own
module when the profile stops. A profile started while another runs takes the calls until
it stops, and the other then takes them again (`TRACER_PROFILE`'s whole-program profile
around a `with tt.profiler.profile()` of the program's own). Switching at the start and the end, instead of asking at each
call, keeps an unprofiled call's path as it is: the one test left on it is the guard of the
call path in C (runtime/fast_call.py), which reads `active`.
"""

import weakref

active = None  # the running tt.profiler Profile, or None
_paused = []  # the profiles an inner one took the calls from, the innermost last
_functions = weakref.WeakSet()  # the ConcreteFunctions alive


def register(concrete):
    """A new ConcreteFunction: routed through the running profile, if one runs."""
    _functions.add(concrete)
    if active is not None:
        concrete._profile_with(active)


def start(profile):
    """Route every compiled function's calls through `profile` (the running one, if any,
    pauses until `profile` stops)."""
    global active
    if profile is active or profile in _paused:
        raise RuntimeError("this tt.profiler profile is running already")
    if active is not None:
        _paused.append(active)
    _route(profile)


def stop(profile):
    """`profile` takes no more calls: the one it paused takes them again, or none does."""
    if profile in _paused:
        _paused.remove(profile)
    elif profile is active:
        _route(_paused.pop() if _paused else None)


def _route(profile):
    global active
    active = profile
    for concrete in list(_functions):
        concrete._profile_with(profile)
