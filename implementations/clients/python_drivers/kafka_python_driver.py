"""ktc's driver for kafka-python (implementations/clients/README.md), run in its own venv."""

from __future__ import annotations

import contract
import kafka
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import KafkaError, KafkaTimeoutError

TYPES = {0: "CreateTime", 1: "LogAppendTime", -1: "NoTimestampType"}


PRODUCERS: dict = {}  # (bootstrap, codec) -> a producer kept across requests, as an application keeps one
CONSUMERS: dict = {}  # bootstrap -> a consumer kept across requests, reassigned for each


def producer(request: dict) -> KafkaProducer:
    key = (request["bootstrap"], request["compression"])
    if key not in PRODUCERS:
        PRODUCERS[key] = new_producer(request)
    return PRODUCERS[key]


def new_producer(request: dict) -> KafkaProducer:
    options = dict(
        bootstrap_servers=request["bootstrap"],
        acks="all",
        linger_ms=200,
        batch_size=1 << 20,
        compression_type=None if request["compression"] == "none" else request["compression"],
        request_timeout_ms=int(request.get("timeout_ms", 15000)),
        max_block_ms=int(request.get("timeout_ms", 15000)),
    )
    try:
        return KafkaProducer(enable_idempotence=False, **options)
    except Exception as refused:  # releases before 2.1 know no enable_idempotence
        if "enable_idempotence" not in str(refused):
            raise
        return KafkaProducer(**options)


def produce(request: dict) -> dict:
    client = producer(request)
    sent = contract.now_ms()
    futures = [
        client.send(
            request["topic"],
            value=contract.unb64(r["value"]),
            key=contract.unb64(r["key"]),
            partition=int(request["partition"]),
            timestamp_ms=contract.timestamp_of(r),
        )
        for r in request["records"]
    ]
    client.flush(timeout=int(request["timeout_ms"]) / 1000)
    metadata, errors = [], []
    for index, future in enumerate(futures):  # as an application reads each record's outcome
        try:
            metadata.append(future.get(timeout=int(request["timeout_ms"]) / 1000))
        except KafkaError as failed:
            errors.append((index, failed))
    acked = contract.now_ms()
    if errors:
        return contract.singled_out(errors, error_of)
    return {
        "ok": True,
        "offsets": [contract.int64(m.offset) for m in metadata],
        "timestamps": [None if m.timestamp is None else contract.int64(m.timestamp) for m in metadata],
        "sent_ms": contract.int64(sent),
        "acked_ms": contract.int64(acked),
    }


def consumer(request: dict) -> KafkaConsumer:
    if request["bootstrap"] not in CONSUMERS:
        CONSUMERS[request["bootstrap"]] = new_consumer(request)
    return CONSUMERS[request["bootstrap"]]


def new_consumer(request: dict) -> KafkaConsumer:
    return KafkaConsumer(
        bootstrap_servers=request["bootstrap"],
        group_id=None,
        enable_auto_commit=False,
        request_timeout_ms=max(int(request.get("timeout_ms", 15000)), 31000),
    )


def consume(request: dict) -> dict:
    client, partition = consumer(request), TopicPartition(request["topic"], int(request["partition"]))
    client.assign([partition])
    client.seek(partition, int(request["offset"]))
    out, deadline = [], contract.now_ms() + int(request["timeout_ms"])
    while len(out) < request["count"] and contract.now_ms() < deadline:
        for records in client.poll(timeout_ms=500).values():
            out += [record_of(r) for r in records]
    return {"ok": True, "records": out[: request["count"]]}


def record_of(record) -> dict:
    return {
        "offset": contract.int64(record.offset),
        "timestamp": contract.int64(record.timestamp),
        "timestamp_type": TYPES.get(record.timestamp_type),
        "key": contract.b64(record.key),
        "value": contract.b64(record.value),
    }


def offsets_for_times(request: dict) -> dict:
    client, partition = consumer(request), TopicPartition(request["topic"], int(request["partition"]))
    found = client.offsets_for_times({partition: int(request["timestamp"])}).get(partition)
    if found is None:
        return {"ok": True, "found": False}
    return {
        "ok": True,
        "found": True,
        "offset": contract.int64(found.offset),
        "timestamp": contract.int64(found.timestamp),
    }


def error_of(exception: Exception) -> dict:
    if isinstance(exception, KafkaTimeoutError):
        return contract.error("timeout", str(exception) or type(exception).__name__, retriable=True)
    if isinstance(exception, KafkaError):
        code = getattr(exception, "errno", None)
        return contract.error(
            "broker" if code else "local",
            f"{type(exception).__name__}: {exception}",
            code=code,
            retriable=bool(getattr(exception, "retriable", False)),
        )
    return contract.error("local", f"{type(exception).__name__}: {exception}")


if __name__ == "__main__":
    contract.serve(
        "kafka-python",
        kafka.__version__,
        {"produce": produce, "consume": consume, "offsets_for_times": offsets_for_times},
        error_of,
    )
