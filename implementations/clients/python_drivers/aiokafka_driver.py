"""ktc's driver for aiokafka (implementations/clients/README.md), run in its own venv."""

from __future__ import annotations

import asyncio

import aiokafka
import contract
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.errors import KafkaError, KafkaTimeoutError

TYPES = {0: "CreateTime", 1: "LogAppendTime", -1: "NoTimestampType"}


async def produce(request: dict) -> dict:
    client = AIOKafkaProducer(
        bootstrap_servers=request["bootstrap"],
        acks="all",
        linger_ms=200,
        max_batch_size=1 << 20,
        enable_idempotence=False,
        request_timeout_ms=int(request["timeout_ms"]),
        compression_type=None if request["compression"] == "none" else request["compression"],
    )
    await client.start()
    try:
        sent = contract.now_ms()
        futures = [
            await client.send(
                request["topic"],
                value=contract.unb64(r["value"]),
                key=contract.unb64(r["key"]),
                partition=int(request["partition"]),
                timestamp_ms=contract.timestamp_of(r),
            )
            for r in request["records"]
        ]
        outcomes = await asyncio.wait_for(
            asyncio.gather(*futures, return_exceptions=True), int(request["timeout_ms"]) / 1000
        )
        acked = contract.now_ms()
    finally:
        await client.stop()
    errors = [(i, o) for i, o in enumerate(outcomes) if isinstance(o, Exception)]
    if errors:
        return contract.singled_out(errors, error_of)
    metadata = outcomes
    return {
        "ok": True,
        "offsets": [contract.int64(m.offset) for m in metadata],
        "timestamps": [None if m.timestamp is None else contract.int64(m.timestamp) for m in metadata],
        "sent_ms": contract.int64(sent),
        "acked_ms": contract.int64(acked),
    }


def consumer(request: dict) -> AIOKafkaConsumer:
    return AIOKafkaConsumer(bootstrap_servers=request["bootstrap"], group_id=None, enable_auto_commit=False)


async def consume(request: dict) -> dict:
    client, partition = consumer(request), TopicPartition(request["topic"], int(request["partition"]))
    await client.start()
    try:
        client.assign([partition])
        client.seek(partition, int(request["offset"]))
        out, deadline = [], contract.now_ms() + int(request["timeout_ms"])
        while len(out) < request["count"] and contract.now_ms() < deadline:
            for records in (await client.getmany(timeout_ms=500)).values():
                out += [record_of(r) for r in records]
    finally:
        await client.stop()
    return {"ok": True, "records": out[: request["count"]]}


def record_of(record) -> dict:
    return {
        "offset": contract.int64(record.offset),
        "timestamp": contract.int64(record.timestamp),
        "timestamp_type": TYPES.get(record.timestamp_type),
        "key": contract.b64(record.key),
        "value": contract.b64(record.value),
    }


async def offsets_for_times(request: dict) -> dict:
    client, partition = consumer(request), TopicPartition(request["topic"], int(request["partition"]))
    await client.start()
    try:
        found = (await client.offsets_for_times({partition: int(request["timestamp"])})).get(partition)
    finally:
        await client.stop()
    if found is None:
        return {"ok": True, "found": False}
    return {
        "ok": True,
        "found": True,
        "offset": contract.int64(found.offset),
        "timestamp": contract.int64(found.timestamp),
    }


def error_of(exception: Exception) -> dict:
    if isinstance(exception, (KafkaTimeoutError, asyncio.TimeoutError)):
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


def blocking(op):
    return lambda request: asyncio.run(op(request))


if __name__ == "__main__":
    contract.serve(
        "aiokafka",
        aiokafka.__version__,
        {"produce": blocking(produce), "consume": blocking(consume), "offsets_for_times": blocking(offsets_for_times)},
        error_of,
    )
