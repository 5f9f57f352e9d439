"""Two drivers with a planted fault, on ktc's own wire client: each must fail the clause its fault breaks.

    python -m ktc.implementations.clients.planted lat-delta     # its consumer reads a LogAppendTime batch's
                                                                # records as firstTimestamp + delta
    python -m ktc.implementations.clients.planted max-unset     # its producer leaves MaxTimestamp at -1

Apart from its fault each is an honest client of the contract (implementations/clients/README.md): it sends
one batch per produce (no timestamp: the wall clock), reports the timestamp type of each batch it reads, and
reports "no offset" for a ListOffsets answer of -1.  They are the suite's own test doubles, like the mutants
of suites/selftest: they show the client clauses can fail.
"""

from __future__ import annotations

import json
import sys
import time

from ktc.kafka.client.records import ATTR_TIMESTAMP_TYPE, WireError
from ktc.kafka.client.wire import Client
from ktc.reference.types import Batch, Record

FAULTS = ("lat-delta", "max-unset")
NOT_RETRIABLE = {32, 87}  # INVALID_TIMESTAMP, INVALID_RECORD


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def produce(request: dict, fault: str) -> dict:
    import base64

    sent = now_ms()
    records = tuple(
        Record(
            sent if r["timestamp"] is None else int(r["timestamp"]),
            None if r["key"] is None else base64.b64decode(r["key"]),
            b"" if r["value"] is None else base64.b64decode(r["value"]),
        )
        for r in request["records"]
    )
    batch = Batch(records, codec=request["compression"], max_timestamp=-1 if fault == "max-unset" else None)
    with Client(request["bootstrap"], timeout_s=int(request["timeout_ms"]) / 1000) as client:
        out = client.produce(request["topic"], batch, partition=int(request["partition"]))
    if out.error_code:
        named = out.record_errors[0].batch_index if out.record_errors else None
        return failed(
            "broker",
            out.error_message or f"error {out.error_code}",
            out.error_code,
            out.error_code not in NOT_RETRIABLE,
            named,
        )
    stamps = [out.log_append_time if out.log_append_time != -1 else r.timestamp for r in records]
    return {
        "ok": True,
        "offsets": [str(out.base_offset + i) for i in range(len(records))],
        "timestamps": [str(t) for t in stamps],
        "sent_ms": str(sent),
        "acked_ms": str(now_ms()),
    }


def consume(request: dict, fault: str) -> dict:
    start, out = int(request["offset"]), []
    with Client(request["bootstrap"], timeout_s=int(request["timeout_ms"]) / 1000) as client:
        fetched = client.fetch(request["topic"], partition=int(request["partition"]), offset=start)
    for batch in fetched.batches:
        appended = bool(batch.attributes & ATTR_TIMESTAMP_TYPE)
        for r in batch.records:
            if r.offset >= start:
                shown = r.create_time if fault == "lat-delta" else r.timestamp
                out.append(
                    {
                        "offset": str(r.offset),
                        "timestamp": str(shown),
                        "key": None,
                        "value": None,
                        "timestamp_type": "LogAppendTime" if appended else "CreateTime",
                    }
                )
    return {"ok": True, "records": out[: request["count"]]}


def offsets_for_times(request: dict, fault: str) -> dict:
    with Client(request["bootstrap"], timeout_s=int(request["timeout_ms"]) / 1000) as client:
        answer = client.list_offsets(request["topic"], int(request["timestamp"]), partition=int(request["partition"]))
    if answer.error_code:
        return failed("broker", f"ListOffsets error {answer.error_code}", answer.error_code, None, None)
    if answer.offset == -1:
        return {"ok": True, "found": False}
    return {"ok": True, "found": True, "offset": str(answer.offset), "timestamp": str(answer.timestamp)}


def failed(kind: str, message: str, code: int | None, retriable: bool | None, record: int | None) -> dict:
    return {
        "ok": False,
        "error": {"kind": kind, "code": code, "retriable": retriable, "message": message, "record": record},
    }


OPS = {"produce": produce, "consume": consume, "offsets_for_times": offsets_for_times}


def answer(request: dict, fault: str) -> dict:
    if request.get("op") == "hello":
        return {"ok": True, "library": f"planted-{fault}", "version": "1", "language": "python"}
    op = OPS.get(request.get("op"))
    if op is None:
        return failed("local", f"unknown op {request.get('op')}", None, None, None)
    try:
        return op(request, fault)
    except (WireError, OSError) as error:
        return failed("local", f"{type(error).__name__}: {error}", None, None, None)


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in FAULTS:
        print(f"usage: python -m ktc.implementations.clients.planted {'|'.join(FAULTS)}", file=sys.stderr)
        return 2
    for line in sys.stdin:
        if line.strip():
            sys.stdout.write(json.dumps(answer(json.loads(line), argv[0])) + "\n")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
