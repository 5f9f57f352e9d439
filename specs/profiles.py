"""Profiles as data: load ``profiles.toml`` into frozen, validated switch sets.

A profile names the semantics an implementation is judged by (``kip``, ``kafka-3.5``,
``kafka-3.6`` ... ``kafka-4``).  Code reads switches (``profile.arithmetic == "wrapping"``), never
profile names, so a new Kafka version is a new table in the TOML file, not new code.  A table may
``extends`` another and list only what differs; ``lineage`` is the profile and its ancestors, which
is where a clause listed for an ancestor also holds.
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

PROFILES_FILE = Path(__file__).with_name("profiles.toml")

CHOICES = {
    "arithmetic": {"exact", "wrapping"},
    "validation": {"before-after", "abs-difference"},
    "lat_batch_check": {"when-exempt", "after-range-check", "never"},
    "log_append_time": {"now", "max-last-appended"},
    "negative_timestamps": {"accepted", "rebuild-fails"},
    "sentinel": {"parameter", "minus-one"},
    "batch_max_floor": {"none", "minus-one"},
    "roll_basis": {"first-record", "first-batch-max"},
    "retention_basis": {"last-record", "segment-max"},
    "list_offsets_scope": {"all-segments", "first-segment"},
    "max_timestamp_offset": {"first-record-with-max", "record-level-in-place", "batch-last"},
    "unknown_negative_target": {"search", "unsupported-version"},
}


class ProfileError(ValueError):
    """A profile name or profile file that cannot be used."""


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    arithmetic: str
    validation: str
    configs: frozenset[str]
    long_max_fallback: bool
    default_before_max_ms: int
    default_after_max_ms: int
    lat_batch_check: str
    log_append_time: str
    future_warning: bool
    negative_timestamps: str
    sentinel: str
    batch_max_floor: str
    dual_timestamps: bool
    roll_basis: str
    retention_basis: str
    list_offsets_scope: str
    event_time_retention: bool
    max_timestamp_offset: str
    list_offsets_max_version: int
    list_offsets_targets: tuple[tuple[int, int], ...]  # (special target, lowest request version)
    unknown_negative_target: str
    lineage: tuple[str, ...] = ()  # this profile, then what it extends, nearest first
    differs_on: tuple[str, ...] = ()  # clause id prefixes where its answers can differ from its root's

    @property
    def wrapping(self) -> bool:
        return self.arithmetic == "wrapping"

    def repeats_root_on(self, clause_ids: Iterable[str]) -> bool:
        """Whether a test citing ``clause_ids`` would give the same answers under this profile's root."""
        return len(self.lineage) > 1 and not any(c.startswith(p) for c in clause_ids for p in self.differs_on)

    def target_version(self, target: int) -> int | None:
        """The lowest ListOffsets version at which this profile knows ``target``, or None."""
        return dict(self.list_offsets_targets).get(target)


def _build(name: str, table: dict[str, Any], lineage: tuple[str, ...]) -> Profile:
    expected = {f.name for f in fields(Profile)} - {"name", "lineage", "differs_on"}
    missing, extra = expected - table.keys(), table.keys() - expected - {"differs_on"}
    if missing or extra:
        raise ProfileError(f"profile {name!r}: missing {sorted(missing)}, unknown {sorted(extra)}")
    for key, allowed in CHOICES.items():
        if table[key] not in allowed:
            raise ProfileError(f"profile {name!r}: {key} = {table[key]!r}, expected one of {sorted(allowed)}")
    targets = tuple(sorted(((int(k), int(v)) for k, v in table["list_offsets_targets"].items()), reverse=True))
    return Profile(
        name=name,
        lineage=lineage,
        **{
            **table,
            "configs": frozenset(table["configs"]),
            "list_offsets_targets": targets,
            "differs_on": tuple(table.get("differs_on", ())),
        },
    )


def resolved(name: str, data: dict[str, Any], seen: tuple[str, ...] = ()) -> tuple[dict[str, Any], tuple[str, ...]]:
    """A table with what it ``extends`` filled in, and its lineage (itself first)."""
    if name not in data:
        raise ProfileError(f"profile {seen[-1]!r} extends unknown profile {name!r}")
    if name in seen:
        raise ProfileError(f"profiles extend each other in a circle: {' -> '.join((*seen, name))}")
    table = dict(data[name])
    parent = table.pop("extends", None)
    if parent is None:
        return table, (name,)
    base, lineage = resolved(parent, data, (*seen, name))
    return {**base, "differs_on": (), **table}, (name, *lineage)


@functools.cache
def all_profiles() -> dict[str, Profile]:
    """Every profile, by name, in file order."""
    data = tomllib.loads(PROFILES_FILE.read_text())
    return {name: _build(name, *resolved(name, data)) for name in data}


def get(name: str) -> Profile:
    """The profile called ``name``; ``ProfileError`` (listing the valid names) otherwise."""
    profiles = all_profiles()
    if name not in profiles:
        raise ProfileError(f"unknown profile {name!r}; choose one of: {', '.join(profiles)}")
    return profiles[name]


def names() -> tuple[str, ...]:
    return tuple(all_profiles())
