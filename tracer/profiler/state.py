"""Which profile runs now, and the compiled functions it routes.

Each ConcreteFunction registers here when it is made; while a profile runs, its calls go to
the profile's runner (the function's module built with timing probes), and back to its own
module when the profile stops. Switching at the start and the end, instead of asking at each
call, keeps an unprofiled call's path as it is: the one test left on it is the guard of the
call path in C (runtime/fast_call.py), which reads `active`.
"""

import weakref

active = None  # the running tt.profiler Profile, or None
_functions = weakref.WeakSet()  # the ConcreteFunctions alive


def register(concrete):
    """A new ConcreteFunction: routed through the running profile, if one runs."""
    _functions.add(concrete)
    if active is not None:
        concrete._profile_with(active)


def start(profile):
    """Route every compiled function's calls through `profile`."""
    global active
    if active is not None:
        raise RuntimeError("a tt.profiler profile is running already; profiles do not nest")
    active = profile
    for concrete in list(_functions):
        concrete._profile_with(profile)


def stop():
    """Route the calls back to the functions' own modules."""
    global active
    active = None
    for concrete in list(_functions):
        concrete._profile_with(None)
