"""Everything ktc starts goes away: a registry of live processes (and anything else with ``stop()``)
stopped at exit and on SIGINT/SIGTERM, signals held while a child exists but is not yet recorded,
PR_SET_PDEATHSIG for children, and a process-group SIGKILL that waits until the group is dead.

Used by every process module here (broker.py, kfake.py) and by the adapters that must delete what
they created on an external broker (``keep_stopped``).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time

# ---- every live broker of this process, for atexit and signal handlers ---------------------

_LIVE: set = set()
_LOCK = threading.RLock()
_PREVIOUS: dict[int, object] = {}


def stop_all() -> None:
    with _LOCK:
        brokers = list(_LIVE)
    for broker in brokers:
        broker.stop()


def keep_stopped(thing) -> None:
    """Stop ``thing`` (anything with an idempotent ``stop()``) at exit, SIGINT and SIGTERM, like a broker."""
    with _LOCK:
        _LIVE.add(thing)
    _install_handlers()


def release(thing) -> None:
    """Forget ``thing`` (registered by ``keep_stopped``) once it has stopped; unknown things are ignored."""
    with _LOCK:
        _LIVE.discard(thing)


def _on_signal(signum, frame):
    stop_all()
    previous = _PREVIOUS.get(signum, signal.SIG_DFL)
    if callable(previous):
        previous(signum, frame)  # SIGINT's default raises KeyboardInterrupt here
    elif previous == signal.SIG_IGN:
        return
    else:  # SIG_DFL: die of the same signal, as if we had never caught it
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)


def _install_handlers() -> None:
    if threading.current_thread() is not threading.main_thread():
        return  # signal.signal only works there; atexit and PDEATHSIG still cover us
    for signum in (signal.SIGINT, signal.SIGTERM):
        current = signal.getsignal(signum)
        if current is _on_signal or current == signal.SIG_IGN:
            continue  # already ours, or deliberately ignored (e.g. SIGINT of a background job): leave it
        _PREVIOUS[signum] = current
        signal.signal(signum, _on_signal)


atexit.register(stop_all)


_DEFERRED = {signal.SIGINT, signal.SIGTERM}


@contextlib.contextmanager
def signals_deferred():
    """Hold SIGINT/SIGTERM while a child or temp dir exists but is not yet recorded on the broker;
    a signal that arrives meanwhile is delivered (and cleans up) right after."""
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _DEFERRED)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


try:  # loaded now: dlopen between fork and exec can deadlock
    _PRCTL = ctypes.CDLL(None).prctl if sys.platform.startswith("linux") else None
except (OSError, AttributeError):
    _PRCTL = None


def child_setup() -> None:  # runs in the child between fork and exec
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _DEFERRED)  # the JVM must not inherit our deferral
    if _PRCTL is not None:
        # PR_SET_PDEATHSIG: the kernel SIGKILLs the JVM when the thread that started it dies, so a
        # SIGKILLed Python leaves no JVM.  (Start brokers from a thread that outlives them.)
        _PRCTL(1, int(signal.SIGKILL))


# ---- the broker ------------------------------------------------------------------------------


def kill_group(proc: subprocess.Popen, timeout_s: float = 10.0) -> None:
    """SIGKILL the child's process group (start_new_session: pgid == pid) and wait until it is dead.

    Reaps with non-blocking polls; if the poll cannot reap (a signal handler interrupted a ``wait``
    on the same Popen, which holds its lock), death read from /proc (zombie or gone) is enough.
    """
    if proc.returncode is not None:
        return  # reaped: its pid may belong to someone else now
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    deadline = time.monotonic() + timeout_s
    dead_since = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:  # reaped: gone for good
            return
        if dead(proc.pid):  # a zombie we cannot reap here (a wait we interrupted holds the lock)
            dead_since = dead_since or time.monotonic()
            if time.monotonic() - dead_since > 1.0:
                return
        time.sleep(0.01)


def dead(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
        return state in (b"Z", b"X", b"x")
    except FileNotFoundError:
        return True
    except (OSError, IndexError):  # no /proc (not Linux): fall back to a signal-0 probe
        try:
            os.kill(pid, 0)
            return False
        except ProcessLookupError:
            return True
