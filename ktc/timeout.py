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


PER_HISTORIES = 100  # a bulk call of more histories gets one more timeout for each further hundred


def bulk_timeout(timeout_s: float, histories: int) -> float:
    """``--impl-timeout`` bounds a call of up to a hundred histories; a bulk call of more (a whole
    Hypothesis test on a broker, under the ``ci`` profile) gets one timeout per hundred begun, so a
    slow machine is not taken for a hang (seen in CI: 300 s ran out on a loaded 2-core machine)."""
    return timeout_s * max(1, -(-histories // PER_HISTORIES)) if timeout_s > 0 else timeout_s


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
