"""What ``ktc run`` shows while the pytest child runs: one line per target, tests done of total and time.

The child's controller writes events to a pipe (ktc/plugin/progress.py).  On a terminal the lines are
redrawn in place at most twice a second; when the output is not a terminal, or under CI (``CI`` set),
a plain line is printed when a target finishes, and a heartbeat after a minute of silence (then ever
more seldom).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from dataclasses import dataclass, field

HEARTBEAT_S = 60.0
REDRAW_S = 0.5


@dataclass
class Target:
    total: int = 0
    done: int = 0
    seconds: float = 0.0
    started: float | None = None
    finished: float | None = None

    def line(self, name: str, width: int, now: float) -> str:
        end = self.finished or now
        wall = clock(end - self.started) if self.started else "waiting"
        state = "done" if self.finished else ("running" if self.started else "queued")
        return f"  {name:<{width}}  {self.done:>5}/{self.total:<5} {state:<8} {wall}"


def clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


@dataclass
class Board:
    """The state of every target, fed by events; rendered by ``Live`` or ``Plain``."""

    targets: dict[str, Target] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)

    def apply(self, event: dict, now: float) -> str | None:
        """Apply one event; the name of a target it finished, if any."""
        if "collected" in event:
            for name, total in event["collected"].items():
                self.targets.setdefault(name, Target()).total = total
            return None
        target = self.targets.setdefault(event.get("target", "?"), Target())
        target.started = target.started or now
        target.seconds += event.get("seconds", 0.0)
        target.done += bool(event.get("done"))
        if target.total and target.done >= target.total and target.finished is None:
            target.finished = now
            return event.get("target")
        return None

    def totals(self) -> tuple[int, int]:
        return sum(t.done for t in self.targets.values()), sum(t.total for t in self.targets.values())


class Plain:
    """Lines for a log: a target's line when it finishes, a heartbeat while nothing else was said."""

    def __init__(self, board: Board, out):
        self.board, self.out, self.said, self.lines = board, out, board.started, 0

    def finished(self, name: str, now: float) -> None:
        width = max(map(len, self.board.targets), default=8)
        self.say(self.board.targets[name].line(name, width, now), now)

    def tick(self, now: float) -> None:
        """A heartbeat after a minute of silence, then ever more seldom (half the time run so far), so a
        long run on a slow machine still fits a screen."""
        if now - self.said >= max(HEARTBEAT_S, (now - self.board.started) / 2):
            done, total = self.board.totals()
            self.say(f"  ... {done}/{total} tests, {clock(now - self.board.started)}", now)

    def say(self, text: str, now: float) -> None:
        print(text, file=self.out, flush=True)
        self.said, self.lines = now, self.lines + 1

    def close(self, now: float) -> None:
        pass


class Live:
    """One line per target, redrawn in place (ANSI: cursor up, clear line)."""

    def __init__(self, board: Board, out):
        self.board, self.out, self.drawn, self.last = board, out, 0, 0.0

    def finished(self, name: str, now: float) -> None:
        self.draw(now)

    def tick(self, now: float) -> None:
        if now - self.last >= REDRAW_S:
            self.draw(now)

    def draw(self, now: float) -> None:
        width = max(map(len, self.board.targets), default=8)
        lines = [t.line(n, width, now) for n, t in self.board.targets.items()]
        up = f"\x1b[{self.drawn}F" if self.drawn else ""
        self.out.write(up + "".join(f"\x1b[2K{line}\n" for line in lines))
        self.out.flush()
        self.drawn, self.last = len(lines), now

    def close(self, now: float) -> None:
        self.draw(now)

    @property
    def lines(self) -> int:
        return self.drawn


def live_output(out) -> bool:
    """Redraw in place only on a terminal, and never under CI."""
    return out.isatty() and not os.environ.get("CI") and os.environ.get("TERM") != "dumb"


class Watcher:
    """Reads the child's events from a pipe in a thread and shows them until the pipe closes."""

    def __init__(self, out=None):
        self.out = out or sys.stderr
        self.read_fd, self.write_fd = os.pipe()
        self.board = Board()
        self.view = (Live if live_output(self.out) else Plain)(self.board, self.out)
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.ticker = threading.Thread(target=self.tick, daemon=True)
        self.stopped = threading.Event()

    def start(self) -> None:
        """After the child was started with ``write_fd``: ours is closed, so the pipe ends with the child."""
        os.close(self.write_fd)
        self.thread.start()
        self.ticker.start()

    def read(self) -> None:
        with os.fdopen(self.read_fd, "r") as events:
            for line in events:
                self.handle(line)

    def handle(self, line: str) -> None:
        try:
            event = json.loads(line)
        except ValueError:
            return
        with self.lock:
            now = time.monotonic()
            name = self.board.apply(event, now)
            if name is not None:
                self.view.finished(name, now)

    def tick(self) -> None:
        while not self.stopped.wait(REDRAW_S):
            with self.lock:
                if self.board.targets:
                    self.view.tick(time.monotonic())

    @property
    def lines(self) -> int:
        """How many lines the progress left on the screen."""
        return self.view.lines

    def stop(self) -> None:
        self.thread.join(timeout=5)
        self.stopped.set()
        self.ticker.join(timeout=5)
        with self.lock:
            if self.board.targets:
                self.view.close(time.monotonic())
