"""ktc's driver for confluent-kafka-python, on librdkafka (implementations/clients/README.md), in its own venv."""

from __future__ import annotations

import confluent_kafka
import contract
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

TYPES = {
    confluent_kafka.TIMESTAMP_CREATE_TIME: "CreateTime",
    confluent_kafka.TIMESTAMP_LOG_APPEND_TIME: "LogAppendTime",
    confluent_kafka.TIMESTAMP_NOT_AVAILABLE: "NoTimestampType",
}


class Failed(Exception):
    def __init__(self, error):
        super().__init__(error.str() if hasattr(error, "str") else str(error))
        self.error = error


PRODUCERS: dict = {}  # (bootstrap, codec) -> a producer kept across requests, as an application keeps one
CONSUMERS: dict = {}  # bootstrap -> a consumer kept across requests, reassigned for each


def producer(request: dict) -> Producer:
    key = (request["bootstrap"], request["compression"])
    if key not in PRODUCERS:
        PRODUCERS[key] = new_producer(request)
    return PRODUCERS[key]


def new_producer(request: dict) -> Producer:
    return Producer(
        {
            "bootstrap.servers": request["bootstrap"],
            "acks": "all",
            "linger.ms": 200,
            "enable.idempotence": False,
            "compression.type": request["compression"],
            "message.timeout.ms": int(request["timeout_ms"]),
        }
    )


def produce(request: dict) -> dict:
    client = producer(request)
    results: dict[int, object] = {}
    sent = contract.now_ms()
    for index, r in enumerate(request["records"]):
        extra = {} if r["timestamp"] is None else {"timestamp": int(r["timestamp"])}
        client.produce(
            request["topic"],
            value=contract.unb64(r["value"]),
            key=contract.unb64(r["key"]),
            partition=int(request["partition"]),
            on_delivery=lambda err, msg, i=index: results.__setitem__(i, err or msg),
            **extra,
        )
    client.flush(int(request["timeout_ms"]) / 1000)
    acked = contract.now_ms()
    failed = [(i, r) for i, r in sorted(results.items()) if isinstance(r, KafkaError)]
    if failed:
        raise Failed(failed[0][1])  # librdkafka fails the whole batch with one error, naming no record
    if len(results) < len(request["records"]):
        return contract.error("timeout", f"{len(request['records']) - len(results)} records not delivered")
    messages = [results[i] for i in range(len(request["records"]))]
    return {
        "ok": True,
        "offsets": [contract.int64(m.offset()) for m in messages],
        "timestamps": [contract.int64(m.timestamp()[1]) for m in messages],
        "sent_ms": contract.int64(sent),
        "acked_ms": contract.int64(acked),
    }


def consumer(request: dict) -> Consumer:
    if request["bootstrap"] not in CONSUMERS:
        CONSUMERS[request["bootstrap"]] = Consumer(
            {"bootstrap.servers": request["bootstrap"], "group.id": "ktc-driver", "enable.auto.commit": False}
        )
    return CONSUMERS[request["bootstrap"]]


def consume(request: dict) -> dict:
    client = consumer(request)
    client.assign([TopicPartition(request["topic"], int(request["partition"]), int(request["offset"]))])
    out, deadline = [], contract.now_ms() + int(request["timeout_ms"])
    while len(out) < request["count"] and contract.now_ms() < deadline:
        message = client.poll(0.5)
        if message is None:
            continue
        if message.error():
            raise Failed(message.error())
        out.append(record_of(message))
    return {"ok": True, "records": out[: request["count"]]}


def record_of(message) -> dict:
    kind, timestamp = message.timestamp()
    return {
        "offset": contract.int64(message.offset()),
        "timestamp": contract.int64(timestamp),
        "timestamp_type": TYPES.get(kind),
        "key": contract.b64(message.key()),
        "value": contract.b64(message.value()),
    }


def offsets_for_times(request: dict) -> dict:
    wanted = TopicPartition(request["topic"], int(request["partition"]), int(request["timestamp"]))
    (found,) = consumer(request).offsets_for_times([wanted], int(request["timeout_ms"]) / 1000)
    if found.error is not None:
        raise Failed(found.error)
    return {"ok": True, "found": True, "offset": contract.int64(found.offset), "timestamp": None}


def error_of(exception: Exception) -> dict:
    error = (
        exception.error
        if isinstance(exception, Failed)
        else (exception.args[0] if isinstance(exception, KafkaException) and exception.args else None)
    )
    if not isinstance(error, KafkaError):
        return contract.error("local", f"{type(exception).__name__}: {exception}")
    code = error.code()
    kind = "timeout" if code == KafkaError._MSG_TIMED_OUT else ("local" if code < 0 else "broker")
    return contract.error(kind, error.str(), code=code, retriable=error.retriable(), record=None)


if __name__ == "__main__":
    contract.serve(
        "confluent-kafka",
        f"{confluent_kafka.version()[0]} (librdkafka {confluent_kafka.libversion()[0]})",
        {"produce": produce, "consume": consume, "offsets_for_times": offsets_for_times},
        error_of,
    )
