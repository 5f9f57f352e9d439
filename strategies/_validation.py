"""Argument checks shared by the public strategies.  Each raises InvalidArgument, never draws."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeGuard, TypeVar

from hypothesis.errors import InvalidArgument
from hypothesis.strategies import SearchStrategy

from ktc.specs import profiles

from ._edges import INT64_MAX, INT64_MIN

T = TypeVar("T")


def is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def check_int64(value: object, name: str) -> None:
    if not is_int(value):
        raise InvalidArgument(f"{name}={value!r} must be an int (milliseconds), not {type(value).__name__}")
    if not INT64_MIN <= value <= INT64_MAX:
        raise InvalidArgument(f"{name}={value!r} is outside the int64 range [{INT64_MIN}, {INT64_MAX}]")


def check_range(value: object, name: str, low: int, high: int) -> None:
    if not is_int(value) or not low <= value <= high:
        raise InvalidArgument(f"{name}={value!r} must be an int in [{low}, {high}]")


def check_order(low: int, low_name: str, high: int, high_name: str) -> None:
    if low > high:
        raise InvalidArgument(f"{low_name}={low!r} must not be greater than {high_name}={high!r}")


def check_bool(value: object, name: str) -> None:
    if not isinstance(value, bool):
        raise InvalidArgument(f"{name}={value!r} must be True or False")


def check_subset(values: object, name: str, allowed: Iterable[T]) -> tuple[T, ...]:
    """``values`` as a non-empty tuple of members of ``allowed``."""
    members = tuple(allowed)
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise InvalidArgument(f"{name}={values!r} must be a sequence drawn from {members!r}")
    chosen = tuple(values)
    unknown = [v for v in chosen if v not in members]
    if unknown or not chosen:
        raise InvalidArgument(f"{name}={values!r} must be a non-empty subset of {members!r}; bad: {unknown!r}")
    return chosen


def check_sequence(values: object, name: str) -> tuple[Any, ...]:
    """``values`` as a tuple; its items are the caller's to check."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise InvalidArgument(f"{name}={values!r} must be a sequence")
    return tuple(values)


def check_strategy(value: object, name: str, optional: bool = True) -> None:
    if value is None and optional:
        return
    if not isinstance(value, SearchStrategy):
        raise InvalidArgument(f"{name}={value!r} must be a SearchStrategy{' or None' if optional else ''}")


def check_profile(name: str) -> profiles.Profile:
    """The profile called ``name``; InvalidArgument listing the valid names otherwise."""
    if name not in profiles.names():
        raise InvalidArgument(f"profile={name!r} is unknown; choose one of: {', '.join(profiles.names())}")
    return profiles.get(name)
