"""The driver side of the contract (implementations/clients/README.md), shared by ktc's Python drivers.

It runs inside the library's own venv (no ktc there): stdlib only.  A driver module defines its ops as
functions ``op(request) -> dict`` and ``error_of(exception) -> dict``, then calls ``serve(library, version,
ops, error_of)``, which answers one JSON line per request line until stdin closes and never lets a library
exception end the process.
"""

from __future__ import annotations

import base64
import json
import sys
import time
import traceback


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def int64(value) -> str | None:
    return None if value is None else str(int(value))


def b64(data) -> str | None:
    return None if data is None else base64.b64encode(bytes(data)).decode()


def unb64(text):
    return None if text is None else base64.b64decode(text)


def timestamp_of(record: dict):
    """The application's timestamp for a record: an int, or None when it gives none."""
    return None if record.get("timestamp") is None else int(record["timestamp"])


def error(kind: str, message: str, code=None, retriable=None, record=None) -> dict:
    return {"ok": False, "error": {"kind": kind, "code": code, "retriable": retriable, "message": message,
                                   "record": record}}


def log(*parts) -> None:
    print(*parts, file=sys.stderr, flush=True)


def serve(library: str, version: str, ops: dict, error_of) -> None:
    hello = {"ok": True, "library": library, "version": version, "language": "python"}
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            op = request.get("op")
            if op == "hello":
                answer = hello
            elif op in ops:
                answer = ops[op](request)
            else:
                answer = error("local", f"unknown op {op}")
        except Exception as exception:  # the library raised: an answer, never a crash
            log(traceback.format_exc())
            answer = error_of(exception)
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
