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
    return {
        "ok": False,
        "error": {"kind": kind, "code": code, "retriable": retriable, "message": message, "record": record},
    }


def singled_out(errors: list, error_of) -> dict:
    """The answer for a send whose records failed: ``errors`` is [(record index, exception)] as the library
    handed them per record.  The error the library gave a broker code is the answer; it names its record when
    the library singled that record out (its error differs from the other records')."""
    coded = [(i, e) for i, e in errors if error_of(e)["error"]["code"]] or errors
    index, chosen = coded[0]
    answer = error_of(chosen)
    alone = [i for i, e in errors if type(e) is type(chosen) and str(e) == str(chosen)] == [index]
    answer["error"]["record"] = index if alone and len(errors) > 1 else None
    return answer


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
