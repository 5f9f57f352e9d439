"""Histories and traces as portable JSON (the counterexample format; not Hypothesis's database).

Every dataclass is written as an object with a ``"type"`` tag; bytes as ``{"hex": ...}``.
Round-trips exactly: ``load_history(dump_history(h)) == h``.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from typing import Any

from ktc.reference import types as T

_TYPES: dict[str, type] = {
    name: obj for name, obj in vars(T).items() if isinstance(obj, type) and dataclasses.is_dataclass(obj)
}


class FormatError(ValueError):
    """JSON that is not a ktc history or trace."""


def to_data(value: Any) -> Any:
    if dataclasses.is_dataclass(value):
        fields = {f.name: to_data(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {"type": type(value).__name__, **fields}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, bytes):
        return {"hex": value.hex()}
    if isinstance(value, (tuple, list)):
        return [to_data(v) for v in value]
    return value


def from_data(data: Any) -> Any:
    if isinstance(data, list):
        return tuple(from_data(v) for v in data)
    if not isinstance(data, dict):
        return data
    if set(data) == {"hex"}:
        return bytes.fromhex(data["hex"])
    tag = data.get("type")
    cls = _TYPES.get(tag) if isinstance(tag, str) else None
    if cls is None:
        raise FormatError(f"unknown object type {data.get('type')!r}")
    kwargs = {k: from_data(v) for k, v in data.items() if k != "type"}
    if "timestamp_type" in kwargs:
        kwargs["timestamp_type"] = T.TimestampType(kwargs["timestamp_type"])
    try:
        return cls(**kwargs)
    except TypeError as error:
        raise FormatError(f"bad fields for {cls.__name__}: {error}") from None


def dump_history(history: T.History) -> str:
    return json.dumps(to_data(history), sort_keys=True)


def load_history(text: str) -> T.History:
    try:
        value = from_data(json.loads(text))
    except json.JSONDecodeError as error:
        raise FormatError(f"not JSON: {error}") from None
    if not isinstance(value, T.History):
        raise FormatError("the JSON is not a History")
    return value
