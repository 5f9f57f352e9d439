"""A bound on each call into an implementation: a hung ``run()`` becomes an error, not a hung CI job.

In the main thread (pytest runs tests there, xdist workers too) a real-time interval timer raises
``TimedOut`` inside the call, as pytest-timeout's signal method does: it interrupts a busy loop and
a blocking read alike.  Elsewhere the call runs unbounded, and says so once.
"""
from __future__ import annotations

import signal
import threading
from collections.abc import Callable


class TimedOut(Exception):
    """The call did not return within its bound."""


def call_with_timeout(fn: Callable, argument, timeout_s: float):
    if timeout_s <= 0 or threading.current_thread() is not threading.main_thread():
        return fn(argument)

    def expire(signum, frame):
        raise TimedOut(f"did not return within {timeout_s:g} s (--impl-timeout); it is not called again in this run")
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, timeout_s)
    try:
        return fn(argument)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
