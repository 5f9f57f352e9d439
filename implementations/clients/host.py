"""The host side of the driver contract (README.md): start a driver, speak JSON lines to it, always end it.

    with Driver(argv, log=path) as driver:
        driver.ask({"op": "hello"})            # -> {"ok": True, "library": ..., "version": ...}

The driver runs in its own process group with its stderr in ``log`` (a file ktc keeps beside the run); it is
registered with the Kafka toolkit's lifecycle (``keep_stopped``), so it is killed on ``close``, at interpreter
exit and on SIGINT/SIGTERM, and (``PR_SET_PDEATHSIG``) when the Python process dies outright.  A request that
gets no answer within its bound, or a driver that exits or writes something that is not a JSON object, is a
``DriverError`` naming the log: the driver is then killed, never waited on.

Every int64 crosses the pipe as a decimal string (``int64`` / ``from_int64``), bytes as base64.
"""

from __future__ import annotations

import base64
import json
import queue
import subprocess
import threading
from pathlib import Path

from ktc.kafka.processes.lifecycle import child_setup, keep_stopped, kill_group, release, signals_deferred

ANSWER_SLACK_S = 30.0  # beyond a request's own timeout_ms: a driver's start, its library's metadata round trips


class DriverError(RuntimeError):
    """The driver broke the contract (no answer, an exit, a line that is not a JSON object); one line."""


def int64(value: int | None) -> str | None:
    return None if value is None else str(int(value))


def from_int64(text: object) -> int | None:
    """A decimal int64 string of the contract; a JSON number is refused (it loses precision above 2^53)."""
    if text is None:
        return None
    if not isinstance(text, str):
        raise DriverError(f"an int64 came as {type(text).__name__} {text!r}, not as a decimal string")
    return int(text)


def b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


def from_b64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


class Driver:
    def __init__(self, argv: list[str], *, log: Path, env: dict[str, str] | None = None) -> None:
        self.argv, self.log_path, self.env = argv, Path(log), env
        self.process: subprocess.Popen | None = None
        self.lines: queue.Queue[str | None] = queue.Queue()
        self._log = None

    def __enter__(self) -> Driver:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> Driver:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(self.log_path, "ab")
        with signals_deferred():
            keep_stopped(self)
            self.process = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._log,
                env=self.env,
                start_new_session=True,
                preexec_fn=child_setup,
            )
        threading.Thread(target=self._read, name=f"driver-{self.process.pid}", daemon=True).start()
        return self

    def _read(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        for raw in self.process.stdout:
            self.lines.put(raw.decode(errors="replace"))
        self.lines.put(None)

    def ask(self, request: dict, timeout_s: float | None = None) -> dict:
        """Send one request, return its response object; ``DriverError`` (and the driver killed) otherwise."""
        if self.process is None or self.process.poll() is not None:
            raise DriverError(f"the driver is not running ({self.tail()})")
        bound = timeout_s if timeout_s is not None else int(request.get("timeout_ms", 15_000)) / 1000 + ANSWER_SLACK_S
        try:
            self.process.stdin.write((json.dumps(request) + "\n").encode())
            self.process.stdin.flush()
            line = self.lines.get(timeout=bound)
        except (BrokenPipeError, OSError) as error:
            self.stop()
            raise DriverError(f"the driver's stdin closed ({error}; {self.tail()})") from None
        except queue.Empty:
            self.stop()
            raise DriverError(f"no answer to {request['op']} within {bound:g} s ({self.tail()})") from None
        return self.answer(line, request["op"])

    def answer(self, line: str | None, op: str) -> dict:
        if line is None:
            said = f"the driver exited during {op} ({self.tail()})"
            self.stop()
            raise DriverError(said)
        try:
            response = json.loads(line)
        except ValueError:
            response = None
        if not isinstance(response, dict) or not isinstance(response.get("ok"), bool):
            said = f"the driver answered {op} with {line.strip()[:200]!r}, not a response object ({self.tail()})"
            self.stop()
            raise DriverError(said)
        return response

    def tail(self, lines: int = 3) -> str:
        try:
            text = self.log_path.read_text(errors="replace").strip().splitlines()[-lines:]
        except OSError:
            text = []
        return f"its log {self.log_path}: " + (" | ".join(text) if text else "empty")

    def stop(self) -> None:
        """Close stdin (the contract's end), then kill the group: a driver never outlives its host."""
        process, self.process = self.process, None
        if process is not None:
            try:
                process.stdin.close()
            except OSError:
                pass
            kill_group(process)
            if process.stdout is not None:
                process.stdout.close()
        if self._log is not None:
            self._log.close()
            self._log = None
        release(self)
